// The comparison of the kernel lease map with the record (network.json's
// leases), for the envelope's periodic sweep (envelope.ts), and the
// expiry's compare-and-delete.
//
// A reading compares in slices (scanSliced): at 15,000 live leases the
// comparison costs 25-40 ms, which in one piece is as long a pause for a
// fault arriving during it. Each slice runs until SLICE_MS has passed, then
// yields a turn of the event loop (setImmediate: I/O, so faults, runs in
// between); the dump itself is taken in parts (gs_lease_list_part), the
// record's index built and the entries compared in slices too.
//
// Between two slices the resolver runs: it installs, replaces and tops up
// leases (kernel entry and record both), and the hooks spend uses. So what
// a scan reports is a set of candidates, each with what was compared (Seen:
// the kernel key, the kernel value as dumped, the record's lease object as
// indexed), and nothing acts on a candidate without settle() confirming, in
// the one synchronous step that acts, that neither side changed:
//   - expired: the record still holds the same lease object for the key (or
//     still none), and the kernel entry is removed only by compare-and-delete
//     (gs_lease_del_if: same generation, expiry and flags as dumped, and
//     dead on the value read now — a top-up makes it live again, a
//     replacement changes its expiry or generation);
//   - adopt: the same record lease (or none), and the kernel entry read now
//     has the dumped generation, expiry and flags and is live; it is adopted
//     with the uses it has now;
//   - gone: the same record lease, and no kernel entry now.
// A key whose grant is being put by the commit path in C (the network
// backend's inFlight: put on the syncer thread, recorded once its outcome
// reaches the event loop) is neither adopted nor gone: the kernel may hold
// it before the record does.
// A candidate that changed is left alone and the next reading compares
// again (recordChanged). The parts of a dump are no snapshot (an entry
// added or removed meanwhile may be missed; none is seen twice), and the
// record's index may be older than the kernel parts: either way a scan can
// only miss a change, or report one that settle() then finds stale — it
// never acts on a comparison whose two sides moved apart. The one-piece
// scan (scan()) stays for the bench's comparison; its results settle alike.
import { NativeDataPlane } from '../addon';
import { Tuple } from '../addr';
import { Lease } from '../dataplane';
import { LEASE_KEY_SIZE, LEASE_LIMITED, LEASE_VALUE_SIZE, decodeLeaseKey, decodeLeaseValue, encodeLeaseKey, leaseExpired, leaseSpent } from '../abi';
import { LeaseRecord, leaseKey } from '../state/network';

/** compare the lease map with the record at least every this many readings, changed or not */
const FULL_SCAN_EVERY = 10;
/** a sliced scan yields the event loop once a slice has run this long */
export const SLICE_MS = 2;
/** entries asked for per part of a sliced dump (~0.2 ms each) */
const PART_ENTRIES = 1024;
/** entries between two looks at the clock */
const CLOCK_EVERY = 128;

/** gs_lease_del_if's outcomes (addon/dataplane.h GS_DEL_IF_*) */
const DEL_IF_REMOVED = 1;
const DEL_IF_FAILED = 3;

/** one batched dump of the kernel lease map: count entries, keys and values back to back */
interface LeaseDump {
  count: number;
  keys: Buffer;
  values: Buffer;
}

/**
 * A lease record as the kernel map holds it: its key bytes as a latin1
 * string (the index's key), its generation and expiry as 32-bit halves, so
 * an entry is compared with no BigInt made (at 15,000 entries a reading's
 * allocations were scavenges of several ms, inside a slice)
 */
interface KernelForm {
  key: string;
  expires: bigint;
  genLo: number;
  genHi: number;
  expLo: number;
  expHi: number;
}


export type EndWhy = 'expired' | 'exhausted';

/** what one candidate was compared from: checked again right before it is acted on (settle) */
export interface Seen {
  /** the kernel key (LEASE_KEY_SIZE bytes) */
  key: Buffer;
  /** the record's lease for the key as the scan indexed it (undefined: none) */
  rec: LeaseRecord | undefined;
  /** the kernel entry's value as dumped (LEASE_VALUE_SIZE bytes); null: no entry */
  value: Buffer | null;
}

export interface ScanResult {
  /**
   * kernel entries that expired or ran out of uses, in map order: the
   * record's lease, or the kernel entry when it is not as recorded
   */
  expired: { lease: LeaseRecord | Lease; why: EndWhy; seen: Seen }[];
  /** live kernel entries not in the record, or not as recorded: added out of band */
  adopt: { lease: Lease; seen: Seen }[];
  /** record leases with no kernel entry: removed out of band */
  gone: { lease: LeaseRecord; seen: Seen }[];
  /** the earliest live expiry in the map (0: none) */
  next: bigint;
}

/** what still holds of a scan's result right now; the expired entries are out of the kernel map already */
export interface Settled {
  expired: { lease: LeaseRecord | Lease; why: EndWhy }[];
  /** as the kernel holds them now */
  adopt: Lease[];
  gone: LeaseRecord[];
  /** candidates left alone: one side changed since the comparison */
  stale: number;
  /** compare-and-deletes that failed (left alone too) */
  failed: number;
}

export interface ScanStats {
  /** slices of the last sliced scan */
  slices: number;
  /** its longest slice, ms of the event loop */
  longestSliceMs: number;
  /** its slices together, ms */
  busyMs: number;
  /**
   * its longest slice in CPU time of the process, ms: on a loaded machine a
   * slice's wall time also holds the time the kernel ran something else
   */
  longestSliceCpuMs: number;
  /** candidates settle() left alone, since the start */
  stale: number;
}

/** a CLOCK_BOOTTIME instant as 32-bit halves */
interface Clock {
  hi: number;
  lo: number;
}

const clockOf = (t: bigint): Clock => ({ hi: Number(BigInt.asUintN(64, t) >> 32n), lo: Number(t & 0xffffffffn) });

/** a scan's findings while it compares: the earliest live expiry as halves (nextHi -1: none yet) */
interface Compared {
  expired: ScanResult['expired'];
  adopt: ScanResult['adopt'];
  gone: ScanResult['gone'];
  nextHi: number;
  nextLo: number;
}

const compared = (): Compared => ({ expired: [], adopt: [], gone: [], nextHi: -1, nextLo: 0 });

const turn = () => new Promise<void>((r) => setImmediate(r));
const clock = () => performance.now();

export class LeaseScan {
  private readonly native: NativeDataPlane;
  /** the last dump, as its parts (the one-piece scan's: one part) */
  private lastDump: LeaseDump[] | null = null;
  private scansSinceFull = 0;
  /** the record's leases changed since the last scan */
  private dirty = true;
  private readonly tupleCache = new Map<string, Tuple>();
  private readonly kernelForms = new WeakMap<LeaseRecord, KernelForm>();
  readonly stats: ScanStats = { slices: 0, longestSliceMs: 0, busyMs: 0, longestSliceCpuMs: 0, stale: 0 };

  constructor(native: NativeDataPlane) {
    this.native = native;
  }

  /** The record's leases changed: the next scan compares, whatever the dump says. */
  recordChanged(): void {
    this.dirty = true;
  }

  /**
   * Compare the map with the record's leases (read only when compared), in
   * one piece; null when neither the map (byte for byte: every install,
   * removal, re-tag and use changes it) nor the record (every change calls
   * recordChanged) changed since the last scan and no expiry is due
   * (`nextExpiry`, as the last scan reported it): then their comparison
   * cannot have changed either. Every FULL_SCAN_EVERY scans the comparison
   * runs anyway. The sweep uses scanSliced; this stays for the bench.
   */
  scan(leases: () => readonly LeaseRecord[], now: bigint, nextExpiry: bigint): ScanResult | null {
    const dirty = this.dirty;
    this.dirty = false;
    const kernel = this.native.leaseList();
    const last = this.lastDump;
    this.lastDump = [kernel];
    if (this.unchanged(last !== null && last.length === 1 && samePart(kernel, last[0]), dirty, now, nextExpiry, kernel.count)) return null;
    const byKey = new Map<string, LeaseRecord>();
    for (const l of leases()) byKey.set(this.kernelForm(l).key, l);
    const at = clockOf(now);
    const res = compared();
    for (let i = 0; i < kernel.count; i++) this.compare(kernel, i, byKey, at, res);
    return this.goneFrom(byKey, res);
  }

  /**
   * scan(), in slices of about SLICE_MS each, a turn of the event loop
   * between two (the header). Its result is candidates: settle() them, in
   * the synchronous step that acts on them.
   */
  async scanSliced(leases: () => readonly LeaseRecord[], now: bigint, nextExpiry: bigint): Promise<ScanResult | null> {
    const dirty = this.dirty;
    this.dirty = false;
    let slices = 1;
    let longest = 0;
    let busy = 0;
    let longestCpu = 0;
    let t0 = clock();
    let c0 = process.cpuUsage();
    const sliceEnds = (ms: number) => {
      const c = process.cpuUsage(c0);
      longest = Math.max(longest, ms);
      longestCpu = Math.max(longestCpu, (c.user + c.system) / 1000);
      busy += ms;
    };
    const yieldIfDue = async (): Promise<void> => {
      const ms = clock() - t0;
      if (ms < SLICE_MS) return;
      sliceEnds(ms);
      await turn();
      slices++;
      t0 = clock();
      c0 = process.cpuUsage();
    };
    try {
      // the dump, in parts, each compared with the last dump's part of the
      // same rank as it comes (an unchanged map is cut at the same buckets)
      const parts: LeaseDump[] = [];
      const last = this.lastDump;
      let same = last !== null;
      let count = 0;
      for (let cursor = -1; ; ) {
        const p = this.native.leaseListPart(cursor, PART_ENTRIES);
        same &&= parts.length < last!.length && samePart(p, last![parts.length]);
        parts.push(p);
        count += p.count;
        if (p.next === -1) break;
        cursor = p.next;
        await yieldIfDue();
      }
      this.lastDump = parts;
      if (this.unchanged(same && parts.length === last!.length, dirty, now, nextExpiry, count)) return null;
      // the record's index: the array as it is now (never edited in place: an edit makes a new one)
      const recs = leases();
      const byKey = new Map<string, LeaseRecord>();
      for (let i = 0; i < recs.length; i++) {
        byKey.set(this.kernelForm(recs[i]).key, recs[i]);
        if (i % CLOCK_EVERY === CLOCK_EVERY - 1) await yieldIfDue();
      }
      const at = clockOf(now);
      const res = compared();
      for (const part of parts) {
        for (let i = 0; i < part.count; i++) {
          this.compare(part, i, byKey, at, res);
          if (i % CLOCK_EVERY === CLOCK_EVERY - 1) await yieldIfDue();
        }
      }
      return this.goneFrom(byKey, res);
    } finally {
      sliceEnds(clock() - t0);
      this.stats.slices = slices;
      this.stats.longestSliceMs = longest;
      this.stats.longestSliceCpuMs = longestCpu;
      this.stats.busyMs = busy;
    }
  }

  /**
   * What still holds of `found` now, for the step that acts on it (call it
   * in that same synchronous step; the header): each candidate's record
   * lease is still `current(leaseKey)`'s, and its kernel entry is what was
   * compared. The expired entries are removed here, by compare-and-delete;
   * what changed is left alone and the next reading compares again.
   */
  settle(found: ScanResult, current: (key: string) => LeaseRecord | undefined, now: bigint, inFlight: (kernelKey: Buffer) => boolean = () => false): Settled {
    const out: Settled = { expired: [], adopt: [], gone: [], stale: 0, failed: 0 };
    // keyed by the record lease compared, when there was one (its address as recorded)
    const same = (l: LeaseRecord | Lease, s: Seen) => current(leaseKey(s.rec ?? ('tuple' in l ? l.tuple : l))) === s.rec;
    const ask = found.expired.filter((e) => e.seen.value !== null && same(e.lease, e.seen));
    out.stale += found.expired.length - ask.length;
    if (ask.length) {
      const got = this.native.leaseDelIf(Buffer.concat(ask.map((e) => e.seen.key)), Buffer.concat(ask.map((e) => e.seen.value as Buffer)), now);
      for (let i = 0; i < ask.length; i++) {
        if (got[i] === DEL_IF_REMOVED) out.expired.push({ lease: ask[i].lease, why: ask[i].why });
        else if (got[i] === DEL_IF_FAILED) out.failed++;
        else out.stale++;
      }
    }
    for (const a of found.adopt) {
      // a grant's put in flight (committed in C, not recorded yet): its record comes
      const v = same(a.lease, a.seen) && !inFlight(a.seen.key) ? this.native.leaseGet(a.seen.key) : null;
      if (v === null || a.seen.value === null || !sameEntry(v, a.seen.value)) {
        out.stale++;
        continue;
      }
      const now_ = decodeLeaseValue(v);
      if (leaseExpired(now_, now) || leaseSpent(now_)) out.stale++;
      else out.adopt.push({ tuple: a.lease.tuple, ...now_ });
    }
    for (const g of found.gone) {
      if (same(g.lease, g.seen) && !inFlight(g.seen.key) && this.native.leaseGet(g.seen.key) === null) out.gone.push(g.lease);
      else out.stale++;
    }
    this.stats.stale += out.stale;
    if (out.stale || out.failed) this.dirty = true;
    return out;
  }

  /**
   * A record lease's expiry as the kernel map holds it, computed once per
   * lease record (with its key bytes), so a scan compares raw dump bytes and
   * decodes only what differs (at 16,000 leases the decoding was ~50 ms a
   * reading, all of it on the event loop that answers faults).
   */
  expiryOf(l: LeaseRecord): bigint {
    return this.kernelForm(l).expires;
  }

  /** Entry i of the dump against the record's index (taking its match out of it), into res. */
  private compare(kernel: LeaseDump, i: number, byKey: Map<string, LeaseRecord>, now: Clock, res: Compared): void {
    const { keys, values } = kernel;
    const kk = keys.toString('latin1', i * LEASE_KEY_SIZE, (i + 1) * LEASE_KEY_SIZE);
    const r = byKey.get(kk);
    byKey.delete(kk);
    // the fields compared, read in place as 32-bit halves (no decoded value, no BigInt per entry per reading)
    const off = i * LEASE_VALUE_SIZE;
    const expLo = values.readUInt32LE(off + 8);
    const expHi = values.readUInt32LE(off + 12);
    // gs_lease_expired: an expiry (0: never) at or before now
    const expiredNow = (expLo !== 0 || expHi !== 0) && (now.hi > expHi || (now.hi === expHi && now.lo >= expLo));
    // gs_lease_spent: limited, uses_left <= 0 (a signed 64-bit value)
    const usesHi = values.readInt32LE(off + 20);
    const dead = expiredNow || ((values.readUInt32LE(off + 24) & LEASE_LIMITED) !== 0 && (usesHi < 0 || (usesHi === 0 && values.readUInt32LE(off + 16) === 0)));
    if ((expLo !== 0 || expHi !== 0) && !expiredNow && (res.nextHi < 0 || expHi < res.nextHi || (expHi === res.nextHi && expLo < res.nextLo))) {
      res.nextHi = expHi;
      res.nextLo = expLo;
    }
    const why: EndWhy = expiredNow ? 'expired' : 'exhausted';
    if (r) {
      const f = this.kernelForm(r);
      if (f.expLo === expLo && f.expHi === expHi && f.genLo === values.readUInt32LE(off) && f.genHi === values.readUInt32LE(off + 4)) {
        if (dead) res.expired.push({ lease: r, why, seen: this.seen(kernel, i, r) });
        return;
      }
    }
    // not what we installed: somebody edited the map out of band
    const k = this.leaseAt(kernel, i);
    if (dead) res.expired.push({ lease: k, why, seen: this.seen(kernel, i, r) });
    else res.adopt.push({ lease: k, seen: this.seen(kernel, i, r) });
  }

  /** the record leases no kernel entry matched: gone */
  private goneFrom(byKey: Map<string, LeaseRecord>, res: Compared): ScanResult {
    for (const [k, l] of byKey) res.gone.push({ lease: l, seen: { key: Buffer.from(k, 'latin1'), rec: l, value: null } });
    return { expired: res.expired, adopt: res.adopt, gone: res.gone, next: res.nextHi < 0 ? 0n : (BigInt(res.nextHi) << 32n) | BigInt(res.nextLo) };
  }

  private seen(kernel: LeaseDump, i: number, rec: LeaseRecord | undefined): Seen {
    return {
      key: kernel.keys.subarray(i * LEASE_KEY_SIZE, (i + 1) * LEASE_KEY_SIZE),
      rec,
      value: kernel.values.subarray(i * LEASE_VALUE_SIZE, (i + 1) * LEASE_VALUE_SIZE),
    };
  }

  private kernelForm(l: LeaseRecord): KernelForm {
    let f = this.kernelForms.get(l);
    if (!f) {
      const expires = BigInt.asUintN(64, BigInt(l.expires_at_boot_ns));
      const gen = BigInt.asUintN(64, BigInt(l.generation));
      f = { key: encodeLeaseKey(l).toString('latin1'), expires, genLo: Number(gen & 0xffffffffn), genHi: Number(gen >> 32n), expLo: Number(expires & 0xffffffffn), expHi: Number(expires >> 32n) };
      this.kernelForms.set(l, f);
    }
    return f;
  }

  /**
   * true: this dump cannot change the comparison (scan()'s null): it is byte
   * for byte the last one (`sameDump`), the record did not change, no expiry
   * is due, and the last full comparison is recent
   */
  private unchanged(sameDump: boolean, dirty: boolean, now: bigint, nextExpiry: bigint, count: number): boolean {
    if (sameDump && !dirty && ++this.scansSinceFull < FULL_SCAN_EVERY && (nextExpiry === 0n || nextExpiry > now)) return true;
    this.scansSinceFull = 0;
    if (this.tupleCache.size > 2 * count + 1024) this.tupleCache.clear();
    return false;
  }

  /** Entry i of a dump, decoded (only for entries that are not what the record says). */
  private leaseAt(raw: LeaseDump, i: number): Lease {
    const kk = raw.keys.toString('latin1', i * LEASE_KEY_SIZE, (i + 1) * LEASE_KEY_SIZE);
    let tuple = this.tupleCache.get(kk);
    if (!tuple) this.tupleCache.set(kk, (tuple = decodeLeaseKey(raw.keys, i * LEASE_KEY_SIZE)));
    return { tuple, ...decodeLeaseValue(raw.values, i * LEASE_VALUE_SIZE) };
  }
}

/** two dump parts byte for byte the same */
function samePart(a: LeaseDump, b: LeaseDump): boolean {
  return a.count === b.count && a.keys.equals(b.keys) && a.values.equals(b.values);
}

/** the same kernel entry: generation, expiry and flags as compared (uses_left moves with every use) */
function sameEntry(now: Buffer, seen: Buffer): boolean {
  return now.readBigUInt64LE(0) === seen.readBigUInt64LE(0) && now.readBigUInt64LE(8) === seen.readBigUInt64LE(8) && now.readUInt32LE(24) === seen.readUInt32LE(24);
}
