// The lease scan as the sweep ran it before issue 31 (src/envelope/
// lease-scan.ts at df3bd44), verbatim but for its imports and name: one
// piece, BigInt reads and a hex key per entry. Kept only so that
// bench/leasescan.ts measures "before" in the same run as "after".
// The comparison of the kernel lease map with the record (network.json's
// leases), for the envelope's periodic sweep (envelope.ts). Read-only: one
// batched dump of the map, values decoded through abi.ts. It changes
// nothing; the envelope acts on what it reports (expired and used-up
// leases, leases added or removed out of band).
import { NativeDataPlane } from '../src/addon';
import { Tuple } from '../src/addr';
import { Lease } from '../src/dataplane';
import { LEASE_KEY_SIZE, LEASE_LIMITED, LEASE_VALUE_SIZE, decodeLeaseKey, decodeLeaseValue, encodeLeaseKey, leaseExpired, leaseSpent } from '../src/abi';
import { LeaseRecord } from '../src/state/network';

/** compare the lease map with the record at least every this many readings, changed or not */
const FULL_SCAN_EVERY = 10;

/** one batched dump of the kernel lease map: count entries, keys and values back to back */
interface LeaseDump {
  count: number;
  keys: Buffer;
  values: Buffer;
}

/** a lease record as the kernel map holds it */
interface KernelForm {
  hex: string;
  generation: bigint;
  expires: bigint;
}

export type EndWhy = 'expired' | 'exhausted';

export interface ScanResult {
  /**
   * kernel entries that expired or ran out of uses, in map order: the
   * record's lease, or the kernel entry when it is not as recorded
   */
  expired: { lease: LeaseRecord | Lease; why: EndWhy }[];
  /** live kernel entries not in the record, or not as recorded: added out of band */
  adopt: Lease[];
  /** record leases with no kernel entry: removed out of band */
  gone: LeaseRecord[];
  /** the earliest live expiry in the map (0: none) */
  next: bigint;
}

export class LeaseScanV0 {
  private readonly native: NativeDataPlane;
  private lastDump: LeaseDump | null = null;
  private scansSinceFull = 0;
  /** the record's leases changed since the last scan */
  private dirty = true;
  private readonly tupleCache = new Map<string, Tuple>();
  private readonly kernelForms = new WeakMap<LeaseRecord, KernelForm>();

  constructor(native: NativeDataPlane) {
    this.native = native;
  }

  /** The record's leases changed: the next scan compares, whatever the dump says. */
  recordChanged(): void {
    this.dirty = true;
  }

  /**
   * Compare the map with the record's leases (read only when compared); null when neither the map (byte for byte:
   * every install, removal, re-tag and use changes it) nor the record
   * (every change calls recordChanged) changed since the last scan and no
   * expiry is due (`nextExpiry`, as the last scan reported it): then their
   * comparison cannot have changed either. Every FULL_SCAN_EVERY scans the
   * comparison runs anyway.
   */
  scan(leases: () => readonly LeaseRecord[], now: bigint, nextExpiry: bigint): ScanResult | null {
    const kernel = this.dump(now, nextExpiry);
    if (kernel === null) return null;
    // record and kernel compared by raw key bytes; next: the earliest live expiry
    const byKey = new Map<string, LeaseRecord>();
    for (const l of leases()) byKey.set(this.kernelForm(l).hex, l);
    const res: ScanResult = { expired: [], adopt: [], gone: [], next: 0n };
    const { keys, values } = kernel;
    for (let i = 0; i < kernel.count; i++) {
      const kh = keys.toString('hex', i * LEASE_KEY_SIZE, (i + 1) * LEASE_KEY_SIZE);
      const r = byKey.get(kh);
      byKey.delete(kh);
      // the fields compared, read in place (no decoded value per entry per reading)
      const off = i * LEASE_VALUE_SIZE;
      const expires = values.readBigUInt64LE(off + 8);
      const expiredNow = leaseExpired({ expiresBootNs: expires }, now);
      const dead = expiredNow || ((values.readUInt32LE(off + 24) & LEASE_LIMITED) !== 0 && leaseSpent(decodeLeaseValue(values, off)));
      if (expires > now && (res.next === 0n || expires < res.next)) res.next = expires;
      const why: EndWhy = expiredNow ? 'expired' : 'exhausted';
      if (r) {
        const f = this.kernelForm(r);
        if (f.expires === expires && f.generation === values.readBigUInt64LE(off)) {
          if (dead) res.expired.push({ lease: r, why });
          continue;
        }
      }
      // not what we installed: somebody edited the map out of band
      const k = this.leaseAt(kernel, i);
      if (dead) res.expired.push({ lease: k, why });
      else res.adopt.push(k);
    }
    res.gone = [...byKey.values()];
    return res;
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

  private kernelForm(l: LeaseRecord): KernelForm {
    let f = this.kernelForms.get(l);
    if (!f) {
      f = { hex: encodeLeaseKey(l).toString('hex'), generation: BigInt(l.generation), expires: BigInt(l.expires_at_boot_ns) };
      this.kernelForms.set(l, f);
    }
    return f;
  }

  private dump(now: bigint, nextExpiry: bigint): LeaseDump | null {
    const raw = this.native.leaseList();
    const last = this.lastDump;
    const dirty = this.dirty;
    this.lastDump = raw;
    this.dirty = false;
    if (
      last !== null &&
      !dirty &&
      ++this.scansSinceFull < FULL_SCAN_EVERY &&
      (nextExpiry === 0n || nextExpiry > now) &&
      raw.count === last.count &&
      raw.keys.equals(last.keys) &&
      raw.values.equals(last.values)
    ) {
      return null;
    }
    this.scansSinceFull = 0;
    if (this.tupleCache.size > 2 * raw.count + 1024) this.tupleCache.clear();
    return raw;
  }

  /** Entry i of a dump, decoded (only for entries that are not what the record says). */
  private leaseAt(raw: LeaseDump, i: number): Lease {
    const kh = raw.keys.toString('hex', i * LEASE_KEY_SIZE, (i + 1) * LEASE_KEY_SIZE);
    let tuple = this.tupleCache.get(kh);
    if (!tuple) this.tupleCache.set(kh, (tuple = decodeLeaseKey(raw.keys, i * LEASE_KEY_SIZE)));
    return { tuple, ...decodeLeaseValue(raw.values, i * LEASE_VALUE_SIZE) };
  }
}
