// Counter evidence for one running operation: the 1-second sampler, the
// generation handovers, lease expiry, the nftables layer and the control
// socket. Created by the Supervisor after reconcile; hooks itself into the
// network backend (which generation a new kernel entry gets, the nft mirror
// of each install).
//
// counters.jsonl (hash-chained, see evidence/chain.ts; `seq`, `at`, `prev`
// are added by the chain). Lines of one reading share `at`. Kinds:
//   allow            {source:"ebpf"|"nft", generation, family, protocol, address, port, delta, total}
//   deny             {source:"ebpf", reason:"no_lease"|"expired"|"exhausted", family, protocol, address, port, delta, total}
//                    {source:"nft", reason:"nft_default_deny", delta, total}
//   lost_events      {delta, total}          ring-buffer events the kernel could not deliver
//   counter_full     {delta, total}          counts the kernel could not key (counter map full)
//   reset            {source, ..., previous, current}   a counter went backwards: recorded, never a negative delta
//   generation       {generation, reason, policy_generation, ...}   a new generation (baseline: its counters start at 0)
//   generation_revoked {generation, reason, final_allow}   harvested, then retired
//   lease_expired    {generation, family, protocol, address, port, why:"expired"|"exhausted", final_allow, in_generation}
//   lease_revoked    {generation, ..., by:"operator"|"policy"|"external", final_allow, in_generation}
//   lease_replaced   {generation, ..., final_allow, by_generation}
//   lease_retagged   {generation (old), ..., final_allow, to_generation}
//   nft_table        {table, replaced}       the nftables table was (re)created
//   sampler          {event:"start"|"stop", resumed}
// `total` is the counter's cumulative value in the kernel: the sampler
// resumes from the last totals after a restart (snapshot.ts).
//
// Totals (network.json and operation.json `totals`) are the running sums of
// the deltas: allow = eBPF allows; deny[reason] = eBPF denies per reason and
// nft_default_deny (packets that bypassed the socket hooks: never the same
// event as an eBPF deny); lost_events. nft allows are the same traffic as
// eBPF allows, seen at packet level: they are in counters.jsonl (source nft)
// but not added to the totals again.
//
// Handover (policy apply, lease revocation), in this order:
//   1. read all counters: everything up to now is harvested; the new
//      generation's counters do not exist yet, so its baseline is 0 — the
//      `generation` line is written here, before anything is removed
//   2. swap the kernel entries (a lease map update is atomic per tuple:
//      each call meets the old or the new entry, never neither) and remove
//      what the new envelope does not allow — one synchronous step of the
//      event loop, so no fault is resolved against a half-applied policy;
//      during it the kernel allows at most old ∪ new (fail closed)
//   3. wait HANDOVER_GRACE_MS for hook runs already past their lookup
//   4. read again: the final harvest of the old generations, then the
//      `generation_revoked` lines. Each call was counted under exactly one
//      (tuple, generation) key, so nothing is counted twice or lost.
import * as path from 'node:path';
import { NativeDataPlane } from '../addon';
import { Tuple, formatTuple, parseAddress, parsePort, parseProtocol } from '../addr';
import { DataPlane, Lease, bootNs } from '../dataplane';
import { LEASE_KEY_SIZE, LEASE_VALUE_SIZE, decodeLeaseKey, decodeLeaseValue, encodeLeaseKey, leaseExpired, leaseSpent } from '../abi';
import { GenseeError } from '../errors';
import { ChainedLog, LogFields } from '../evidence/chain';
import type { NetworkBackend } from '../backends/network';
import { NftBackend, NftCounters } from '../backends/nft';
import { parsePolicy, policyHash } from '../protocol/json';
import type { Policy } from '../protocol/types';
import { LeaseRecord, NetworkRecord, findLease, leaseKey, setNetworkTotals } from '../state/network';
import { opDir, updateOperation } from '../state/operation';
import { ControlPeer, ControlRequest, ControlServer, CONTROL_SOCKET } from './control';
import { compact, editLeases, isPolicyReason, markRevoked, needsCompaction, planHandover } from './generations';
import { CounterSource, Sampler } from './sampler';
import { COUNTERS_FILE, SNAPSHOT_EVERY_MS, resume, writeSnapshot } from './snapshot';

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

export const SAMPLE_INTERVAL_MS = 1000;
export const HANDOVER_GRACE_MS = 20;
/** compare the lease map with the record at least every this many readings, changed or not */
const FULL_SCAN_EVERY = 10;
/** share of the time network.json rewrites for totals alone may take */
const NETWORK_WRITE_BUDGET = 0.05;
/** nft reads may use this share of one core; the period grows with the set */
const NFT_READ_BUDGET = 0.05;
/** never sample nft less often than this (elements outlive their lease by NFT_EXPIRY_GRACE_MS = 10 s) */
const NFT_MAX_PERIOD_MS = 5000;

export interface EvidenceOptions {
  stateDir: string;
  op: string;
  /** absolute cgroup path */
  cgroup: string;
  dp: DataPlane;
  network: NetworkBackend;
  policyHash: string;
  /** reason of the generation Supervisor.start began (start | restart | policy_change) */
  startReason: string;
  ownerUid: number;
  key: Buffer;
  nft?: boolean;
  intervalMs?: number;
  onError: (e: Error) => void;
}

interface Ended {
  lease: LeaseRecord;
  kind: 'lease_expired' | 'lease_revoked' | 'lease_replaced' | 'lease_retagged';
  extra: LogFields;
}

function tupleOf(l: { family: Tuple['family']; protocol: Tuple['protocol']; address: string; port: number }): Tuple {
  return { family: l.family, protocol: l.protocol, address: l.address, port: l.port };
}

function dest(t: Tuple): LogFields {
  return { family: t.family, protocol: t.protocol, address: t.address, port: t.port };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class CounterEvidence {
  readonly log: ChainedLog;
  readonly sampler: Sampler;
  readonly dir: string;
  nft: NftBackend | null = null;
  private readonly o: EvidenceOptions;
  private readonly native: NativeDataPlane;
  private control: ControlServer | null = null;
  private policyGen: number;
  private timer: NodeJS.Timeout | null = null;
  /** an extra reading at the next lease expiry, when it comes before the next periodic one */
  private expiryTimer: NodeJS.Timeout | null = null;
  private expiryAt = 0n;
  private nextTickAt = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private tickPending = false;
  private stopped = false;
  private stopping = false;
  /** leases whose kernel entry was replaced by an install (recorded at the next reading) */
  private ended: Ended[] = [];
  /** nft elements to delete after their final harvest */
  private readonly nftDelete = new Map<string, Tuple>();
  private nftDue = 0;
  private lastSnapshot = Date.now();
  private nextExpiry = 0n;
  private lastLeaseDump: LeaseDump | null = null;
  private scansSinceFull = 0;
  /** the record's leases changed since the last scan */
  private leasesDirty = true;
  private readonly tupleCache = new Map<string, Tuple>();
  private readonly kernelForms = new WeakMap<LeaseRecord, KernelForm>();
  private snapshotDirty = false;
  private totalsText = '';
  private networkBehind = false;
  private networkDue = 0;
  readonly stats = { ticks: 0, tickMs: 0, lastTickMs: 0 };

  private constructor(o: EvidenceOptions, log: ChainedLog, sampler: Sampler, native: NativeDataPlane) {
    this.o = o;
    this.dir = opDir(o.stateDir, o.op);
    this.log = log;
    this.sampler = sampler;
    this.native = native;
    this.policyGen = o.network.record.generation;
  }

  get policyGeneration(): number {
    return this.policyGen;
  }

  static async open(o: EvidenceOptions): Promise<CounterEvidence> {
    const dir = opDir(o.stateDir, o.op);
    // Nobody waits on a counters line (a lease's durable record is its resolution
    // line in faults.jsonl): batch them for up to 250 ms so they never add an
    // fdatasync per fault on the answer path.
    const log = await ChainedLog.open(path.join(dir, COUNTERS_FILE), { groupWindowMs: 250 });
    const res = await resume(dir, log.seq, log.lastHash);
    if (res.from === 'none') {
      const t = o.network.record.totals;
      res.state.totals = { allow: t.allow, deny: { ...t.deny }, lost_events: t.lost_events };
    }
    // the supervisor's own handle: its maps, no second set of fds (closed with it)
    const native = o.dp.raw;
    const src: CounterSource = { countersRaw: () => native.countersRead(), stats: () => native.statsRead() };
    const ev = new CounterEvidence(o, log, new Sampler(src, res.state), native);
    try {
      await ev.init(res.from, res.replayed);
      await log.flushNow(); // the start of the evidence is on disk before anything is served
    } catch (e) {
      await ev.abort();
      throw e;
    }
    return ev;
  }

  private async init(resumed: string, replayed: number): Promise<void> {
    const o = this.o;
    const at = new Date().toISOString();
    this.append([{ kind: 'sampler', event: 'start', resumed, replayed, interval_ms: this.interval }], at);
    const g = o.network.record.generations[o.network.record.generations.length - 1];
    // the start generation: counts made while no resolver ran are harvested
    // by the first reading below, against the resumed totals
    this.append([{ kind: 'generation', generation: this.policyGen, reason: g?.reason ?? o.startReason, policy_generation: this.policyGen, policy_hash: o.policyHash, baseline_allow: 0 }], at);
    o.network.hooks = {
      generationFor: (kind, t) => (kind === 'grant' ? this.policyGen : this.newGeneration('lease_added', { ...dest(t) })),
      installed: (l, replaced) => this.installed(l, replaced),
    };
    if (o.startReason === 'policy_change') {
      await this.locked(() => this.handover(o.network.currentPolicy, o.policyHash, this.policyGen, { pid: process.pid, uid: process.getuid?.() ?? 0 }));
    }
    if (o.nft) await this.startNft();
    this.control = new ControlServer({
      socketPath: path.join(this.dir, CONTROL_SOCKET),
      ownerUid: o.ownerUid,
      cgroup: o.cgroup,
      key: o.key,
      // an operator's change is in counters.jsonl, durably, before it is acknowledged
      handler: async (req, peer) => {
        const r = await this.handle(req, peer);
        await this.log.flushNow();
        return r;
      },
      // an attempt to change the envelope that was refused is evidence too
      onRefused: (reason, detail, peer) => this.append([{ kind: 'control_refused', reason, detail: detail.slice(0, 300), peer }], new Date().toISOString()),
    });
    await this.control.listen();
    await this.tick();
    this.schedule();
  }

  private async abort(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    this.o.network.hooks = {};
    await this.control?.close().catch(() => undefined);
    await this.log.close().catch(() => undefined);
  }

  get interval(): number {
    return this.o.intervalMs ?? SAMPLE_INTERVAL_MS;
  }

  private schedule(): void {
    if (this.stopping) return;
    this.nextTickAt = Date.now() + this.interval;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.nextTickAt = Date.now() + this.interval;
      this.tick()
        .catch((e: Error) => this.o.onError(e))
        .finally(() => this.schedule());
    }, this.interval);
    this.timer.unref();
  }

  /**
   * Expired leases are refused by the hook at the exact instant; removing and
   * recording them waits for a reading. When a lease expires before the next
   * periodic reading, read at its expiry instead, so removal never lags by a
   * whole period.
   */
  private armExpiry(expiresBootNs: bigint): void {
    if (this.stopping || expiresBootNs === 0n) return;
    if (this.expiryTimer && this.expiryAt <= expiresBootNs) return;
    const ms = Number(expiresBootNs - bootNs()) / 1e6 + 1;
    if (Date.now() + ms >= this.nextTickAt - 20) return; // the periodic reading comes first
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryAt = expiresBootNs;
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      this.expiryAt = 0n;
      this.tick().catch((e: Error) => this.o.onError(e));
    }, Math.max(0, ms));
    this.expiryTimer.unref();
  }

  /** Run exclusive of other readings, handovers and control requests. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private append(lines: LogFields[], at: string): void {
    for (const l of lines) {
      // nobody waits on a counters line: written now, synced by the log's window
      try {
        this.log.appendTicket({ at, ...l }, true);
      } catch (e) {
        this.o.onError(e as Error);
      }
    }
    if (lines.length) this.snapshotDirty = true;
  }

  /**
   * Start generation N+1 in the record and log it (synchronous: number and
   * line seq are taken together). Its counters do not exist yet: baseline 0.
   * O(1) on the fault path; compaction runs in the periodic reading.
   */
  private newGeneration(reason: string, extra: LogFields = {}, at = new Date().toISOString()): number {
    const g = this.o.network.addGeneration(reason, new Date(at));
    this.append([{ kind: 'generation', generation: g, reason, policy_generation: this.policyGen, ...extra, baseline_allow: 0 }], at);
    return g;
  }

  /** network backend hook: a lease was installed and recorded; mirror it into nft before the answer. */
  private installed(l: LeaseRecord, replaced: LeaseRecord | undefined): Promise<void> {
    this.leasesDirty = true;
    // its kernel form now (a few us), not for thousands at once in the next reading
    this.armExpiry(this.kernelForm(l).expires);
    if (replaced && replaced.generation !== l.generation) {
      this.ended.push({ lease: replaced, kind: 'lease_replaced', extra: { by_generation: l.generation } });
    }
    if (!this.nft) return Promise.resolve();
    this.nftDelete.delete(leaseKey(l));
    return this.nft.put([{ tuple: tupleOf(l), expiresBootNs: BigInt(l.expires_at_boot_ns) }], bootNs());
  }

  private async startNft(): Promise<void> {
    const now = bootNs();
    const { nft, leftover } = await NftBackend.create({
      op: this.o.op,
      cgroup: this.o.cgroup,
      elements: this.o.network.record.leases.map((l) => ({ tuple: tupleOf(l), expiresBootNs: BigInt(l.expires_at_boot_ns) })),
      nowBootNs: now,
    });
    const at = new Date().toISOString();
    if (leftover) {
      // a table left by a killed run: its counts since our last reading are
      // harvested before it was replaced (against the resumed nft totals)
      const gens = new Map(this.o.network.record.leases.map((l) => [leaseKey(l), l.generation]));
      this.append(this.sampler.sampleNft(leftover, (k) => gens.get(k) ?? null).lines, at);
    }
    this.sampler.resetNft();
    this.append([{ kind: 'nft_table', table: nft.table, replaced: leftover !== null }], at);
    this.nft = nft;
  }

  // ---- the periodic reading ----

  /** One reading: sweep expired, used-up and out-of-band changes, harvest, record, persist. */
  tick(): Promise<void> {
    if (this.tickPending) return this.chain.then(() => undefined);
    this.tickPending = true;
    return this.locked(async () => {
      this.tickPending = false;
      const t0 = process.hrtime.bigint();
      const at = new Date().toISOString();
      const changed = this.sweepAndSample(at);
      this.stats.lastTickMs = Number(process.hrtime.bigint() - t0) / 1e6;
      this.stats.tickMs += this.stats.lastTickMs;
      this.stats.ticks++;
      await this.nftSample(false);
      await this.persist(changed);
      this.armExpiry(this.nextExpiry);
    });
  }

  /**
   * The kernel lease map as dumped (raw keys and values) — or null when
   * neither the map (byte for byte: every install, removal, re-tag and use
   * changes it) nor the record (every install passes the `installed` hook)
   * changed since the last scan and no expiry is due: then their comparison
   * cannot have changed either. Every FULL_SCAN_EVERY readings the
   * comparison runs anyway.
   */
  private kernelDump(now: bigint): LeaseDump | null {
    const raw = this.native.leaseList();
    const last = this.lastLeaseDump;
    const dirty = this.leasesDirty;
    this.lastLeaseDump = raw;
    this.leasesDirty = false;
    if (
      last !== null &&
      !dirty &&
      ++this.scansSinceFull < FULL_SCAN_EVERY &&
      (this.nextExpiry === 0n || this.nextExpiry > now) &&
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

  /**
   * A record lease as the kernel map holds it: its key bytes (hex) and its
   * generation and expiry as the map's value encodes them — computed once
   * per lease record, so the reading compares raw dump bytes and decodes
   * only what differs (at 16,000 leases the decoding was ~50 ms a reading,
   * all of it on the event loop that answers faults).
   */
  private kernelForm(l: LeaseRecord): KernelForm {
    let f = this.kernelForms.get(l);
    if (!f) {
      f = { hex: encodeLeaseKey(l).toString('hex'), generation: BigInt(l.generation), expires: BigInt(l.expires_at_boot_ns) };
      this.kernelForms.set(l, f);
    }
    return f;
  }

  /** The synchronous part of a reading. Returns true when the record's leases or generations changed. */
  private sweepAndSample(at: string): boolean {
    const net = this.o.network;
    const dp = this.o.dp;
    const now = bootNs();
    const kernel = this.kernelDump(now);
    if (kernel === null) {
      // nothing moved in the lease map: harvest only
      const ended = this.ended.splice(0);
      const s = this.sampler.sample();
      let changed = false;
      let lines = [...s.lines, ...this.endedLines(ended)];
      if (ended.length) {
        const r = this.retire(net.record, ended.map((e) => e.lease.generation), at);
        if (r.lines.length) {
          net.setRecord(r.rec);
          changed = true;
        }
        lines = [...lines, ...r.lines];
      }
      this.append(lines, at);
      return changed;
    }
    // record and kernel compared by raw key bytes; next: the earliest live expiry
    const byKey = new Map<string, LeaseRecord>();
    for (const l of net.record.leases) byKey.set(this.kernelForm(l).hex, l);
    const expired: { lease: LeaseRecord; why: string }[] = [];
    const adopt: Lease[] = [];
    const { keys, values } = kernel;
    let next = 0n;
    for (let i = 0; i < kernel.count; i++) {
      const kh = keys.toString('hex', i * LEASE_KEY_SIZE, (i + 1) * LEASE_KEY_SIZE);
      const r = byKey.get(kh);
      byKey.delete(kh);
      const v = decodeLeaseValue(values, i * LEASE_VALUE_SIZE);
      const expires = v.expiresBootNs;
      const expiredNow = leaseExpired(v, now);
      const dead = expiredNow || leaseSpent(v);
      if (expires > now && (next === 0n || expires < next)) next = expires;
      const why = expiredNow ? 'expired' : 'exhausted';
      if (r) {
        const f = this.kernelForm(r);
        if (f.generation === v.generation && f.expires === expires) {
          if (dead) expired.push({ lease: r, why });
          continue;
        }
      }
      // not what we installed: somebody edited the map out of band
      const k = this.leaseAt(kernel, i);
      if (dead) {
        expired.push({ lease: this.recordOf(k, undefined), why });
        continue;
      }
      adopt.push(k);
    }
    const gone = [...byKey.values()];
    const ended: Ended[] = this.ended.splice(0);
    const remove = new Set<string>();
    const put: LeaseRecord[] = [];
    if (gone.length) {
      // leases removed behind our back (e.g. `gensee lease rm` run without a
      // supervisor to talk to): their counters are still in the map, harvested below
      const g = this.newGeneration('lease_revoked', { by: 'external', leases: gone.length }, at);
      for (const l of gone) {
        remove.add(leaseKey(l));
        ended.push({ lease: l, kind: 'lease_revoked', extra: { by: 'external', in_generation: g } });
        this.nftDelete.set(leaseKey(l), tupleOf(l));
      }
    }
    if (expired.length) {
      const g = this.newGeneration('lease_expired', { leases: expired.length }, at);
      for (const e of expired) {
        dp.removeLease(tupleOf(e.lease));
        remove.add(leaseKey(e.lease));
        ended.push({ lease: e.lease, kind: 'lease_expired', extra: { why: e.why, expires_at_boot_ns: e.lease.expires_at_boot_ns, in_generation: g } });
        this.nftDelete.set(leaseKey(e.lease), tupleOf(e.lease));
      }
    }
    for (const k of adopt) {
      // an operator lease added behind our back: adopted as an operator
      // generation, re-tagged so its counts are attributed to it
      const g = this.newGeneration('operator_lease', { by: 'external', ...dest(k.tuple) }, at);
      const uses = k.usesLeft === null ? 0 : Number(k.usesLeft);
      const l = dp.putLease({ tuple: k.tuple, generation: BigInt(g), expiresBootNs: k.expiresBootNs, maxUses: uses });
      put.push(this.recordOf(l, undefined, uses));
      if (this.nft) void this.nft.put([{ tuple: k.tuple, expiresBootNs: k.expiresBootNs }], now).catch((e: Error) => this.o.onError(e));
    }
    const base = net.record;
    let rec = base;
    const changed = remove.size > 0 || put.length > 0;
    if (changed) {
      const old = new Map(rec.leases.map((l) => [leaseKey(l), l]));
      for (const l of put) {
        const prev = old.get(leaseKey(l));
        if (prev) ended.push({ lease: prev, kind: 'lease_replaced', extra: { by_generation: l.generation } });
      }
      rec = editLeases(rec, remove, put);
    }
    this.nextExpiry = next;
    const s = this.sampler.sample();
    const r = this.retire(rec, ended.map((e) => e.lease.generation), at);
    rec = r.rec;
    if (needsCompaction(rec)) rec = compact(rec, [this.policyGen]);
    if (rec !== base) net.setRecord(rec);
    if (changed) this.leasesDirty = true;
    this.append([...s.lines, ...this.endedLines(ended), ...r.lines], at);
    return changed || r.lines.length > 0;
  }

  private recordOf(k: Lease, r: LeaseRecord | undefined, maxUses = 0): LeaseRecord {
    return (
      r ?? {
        generation: Number(k.generation),
        family: k.tuple.family,
        protocol: k.tuple.protocol,
        address: k.tuple.address,
        port: k.tuple.port,
        expires_at_boot_ns: String(k.expiresBootNs),
        max_uses: maxUses,
        installed_at: new Date().toISOString(),
      }
    );
  }

  private endedLines(ended: Ended[]): LogFields[] {
    return ended.map((e) => ({
      kind: e.kind,
      generation: e.lease.generation,
      ...dest(tupleOf(e.lease)),
      ...e.extra,
      final_allow: this.sampler.leaseAllow(tupleOf(e.lease), e.lease.generation),
    }));
  }

  /** Retire generations of `rec` that no longer tag any lease (after their final harvest). */
  private retire(rec: NetworkRecord, candidates: number[], at: string): { rec: NetworkRecord; lines: LogFields[] } {
    if (candidates.length === 0) return { rec, lines: [] };
    const inUse = new Set(rec.leases.map((l) => l.generation));
    const byNumber = new Map(rec.generations.map((g) => [g.generation, g]));
    const done = new Set<number>();
    const lines: LogFields[] = [];
    for (const g of candidates) {
      if (done.has(g) || inUse.has(g) || g === this.policyGen) continue;
      const gr = byNumber.get(g);
      if (!gr || gr.revoked_at) continue; // compacted away long ago, or already retired
      done.add(g);
      lines.push({ kind: 'generation_revoked', generation: g, reason: gr.reason, final_allow: this.sampler.generationAllow(g) });
    }
    // its counters are final: take them out of the kernel map
    const keys = [...done].flatMap((g) => this.sampler.retireGeneration(g));
    if (keys.length) {
      try {
        this.native.countersDelete(Buffer.concat(keys.map((h) => Buffer.from(h, 'hex'))));
      } catch (e) {
        this.o.onError(e as Error);
      }
    }
    return { rec: markRevoked(rec, done, new Date(at)), lines };
  }

  /** Read nft counters when due (or now), then delete harvested elements. */
  private async nftSample(force: boolean): Promise<void> {
    const nft = this.nft;
    if (!nft) return;
    if (!force && Date.now() < this.nftDue) return;
    let c: NftCounters;
    try {
      c = await nft.read();
    } catch (e) {
      this.o.onError(e as Error);
      this.nftDue = Date.now() + this.interval;
      return;
    }
    const at = new Date().toISOString();
    const gens = new Map(this.o.network.record.leases.map((l) => [leaseKey(l), l.generation]));
    const s = this.sampler.sampleNft(c, (k) => gens.get(k) ?? null);
    this.append(s.lines, at);
    const period = Math.min(NFT_MAX_PERIOD_MS, Math.max(this.interval, Math.ceil(nft.stats.lastReadMs / NFT_READ_BUDGET)));
    this.nftDue = Date.now() + period - 50;
    // harvested: now delete the elements no lease holds any more
    const del = [...this.nftDelete.entries()].filter(([k]) => !gens.has(k));
    this.nftDelete.clear();
    if (del.length) await nft.remove(del.map(([, t]) => t)).catch((e: Error) => this.o.onError(e));
  }

  /**
   * Totals into operation.json (small) at every reading that changed them,
   * and into network.json with them — except that network.json grows with
   * the live leases, so rewriting it for totals alone is spaced to keep
   * those writes under NETWORK_WRITE_BUDGET of the time (with 10,000 leases
   * a rewrite takes tens of ms: then every few seconds; a small record is
   * rewritten at every reading). A lease change, a handover and stop always
   * write it.
   */
  private async persist(leasesChanged: boolean): Promise<void> {
    const net = this.o.network;
    const totals = this.sampler.totals;
    const text = JSON.stringify(totals);
    const writes: Promise<unknown>[] = [];
    if (text !== this.totalsText) {
      this.totalsText = text;
      this.networkBehind = true;
      writes.push(updateOperation(this.o.stateDir, this.o.op, { totals: { allow: totals.allow, deny: { ...totals.deny }, lost_events: totals.lost_events } }));
    }
    if (leasesChanged || this.stopped || (this.networkBehind && Date.now() >= this.networkDue)) {
      net.setRecord(setNetworkTotals(net.record, totals));
      this.networkBehind = false;
      const t0 = Date.now();
      writes.push(
        net.persist().then(() => {
          this.networkDue = Date.now() + (Date.now() - t0) / NETWORK_WRITE_BUDGET - this.interval;
        }),
      );
    }
    await Promise.all(writes);
    if (this.snapshotDirty && (this.stopped || Date.now() - this.lastSnapshot >= SNAPSHOT_EVERY_MS)) await this.snapshot();
  }

  private async snapshot(): Promise<void> {
    const state = this.sampler.state();
    const seq = this.log.seq;
    const hash = this.log.lastHash;
    this.snapshotDirty = false;
    this.lastSnapshot = Date.now();
    await writeSnapshot(this.dir, state, seq, hash);
  }

  // ---- envelope changes (control socket, restart with another policy) ----

  private async handle(req: ControlRequest, peer: ControlPeer): Promise<Record<string, unknown>> {
    if (this.stopping) throw new GenseeError('E_STATE', 'the supervisor is stopping', 1);
    switch (req.command) {
      case 'policy_apply': {
        if (typeof req.policy_text !== 'string') throw new GenseeError('E_SCHEMA', 'policy_text must be a string');
        let json: unknown;
        try {
          json = JSON.parse(req.policy_text);
        } catch (e) {
          throw new GenseeError('E_BAD_JSON', `policy: not JSON: ${(e as Error).message}`);
        }
        const policy = parsePolicy(json);
        return this.applyPolicy(policy, policyHash(req.policy_text), peer);
      }
      case 'lease_add': {
        const t = this.tupleArg(req.protocol, req.address, req.port);
        const ttl = Number(req.ttl_ms);
        const uses = Number(req.max_uses);
        if (!Number.isSafeInteger(ttl) || ttl < 0) throw new GenseeError('E_BAD_DURATION', `bad ttl_ms ${JSON.stringify(req.ttl_ms)}`);
        if (!Number.isSafeInteger(uses) || uses < 0 || uses > 0xffffffff) throw new GenseeError('E_BAD_COUNT', `bad max_uses ${JSON.stringify(req.max_uses)}`);
        return this.addLease(t, ttl, uses, peer);
      }
      case 'lease_rm':
        return this.revokeLease(this.tupleArg(req.protocol, req.address, req.port), peer);
      default:
        throw new GenseeError('E_SCHEMA', 'unknown command');
    }
  }

  private tupleArg(protocol: unknown, address: unknown, port: unknown): Tuple {
    const a = parseAddress(String(address));
    return { family: a.family, protocol: parseProtocol(String(protocol)), address: a.address, port: parsePort(String(port)) };
  }

  /** `gensee policy apply`: a new policy generation, handed over under traffic. */
  applyPolicy(policy: Policy, hash: string, by: ControlPeer): Promise<Record<string, unknown>> {
    return this.locked(() => this.handover(policy, hash, null, by));
  }

  private async handover(policy: Policy, hash: string, existing: number | null, by: ControlPeer): Promise<Record<string, unknown>> {
    const net = this.o.network;
    const dp = this.o.dp;
    const at = new Date().toISOString();
    // ---- one synchronous step: harvest, baseline, swap, remove ----
    const now = bootNs();
    const pre = this.sampler.sample();
    this.append(pre.lines, at);
    const G = existing ?? this.newGeneration('policy_apply', { policy_hash: hash, by }, at);
    this.policyGen = G;
    net.setPolicy(policy);
    const plan = planHandover(net.record, policy, now);
    const ended: Ended[] = [];
    const retagged: LeaseRecord[] = [];
    const remove = new Set<string>();
    let carried = 0;
    for (const a of plan) {
      const t = tupleOf(a.lease);
      if (a.action === 'retag') {
        const l = dp.putLease({ tuple: t, generation: BigInt(G), expiresBootNs: a.expiresBootNs, maxUses: a.maxUses });
        retagged.push({ ...a.lease, generation: G, expires_at_boot_ns: String(l.expiresBootNs), max_uses: a.maxUses, installed_at: at });
        ended.push({ lease: a.lease, kind: 'lease_retagged', extra: { to_generation: G } });
      } else if (a.action === 'revoke') {
        dp.removeLease(t);
        remove.add(leaseKey(t));
        ended.push({ lease: a.lease, kind: 'lease_revoked', extra: { by: 'policy', why: a.why, in_generation: G } });
        this.nftDelete.set(leaseKey(t), t);
      } else carried++;
    }
    net.setRecord(editLeases(net.record, remove, retagged));
    this.leasesDirty = true;
    // ---- the final harvest of what the swap retired ----
    await sleep(HANDOVER_GRACE_MS);
    const post = this.sampler.sample();
    const at2 = new Date().toISOString();
    const cands = ended.map((e) => e.lease.generation);
    // every earlier policy generation is superseded now (also the previous
    // run's, at a restart with another policy)
    for (const g of net.record.generations) if (g.generation !== G && g.revoked_at === undefined && isPolicyReason(g.reason)) cands.push(g.generation);
    const r = this.retire(net.record, cands, at2);
    net.setRecord(r.rec);
    this.append([...post.lines, ...this.endedLines(ended), ...r.lines], at2);
    if (this.nft) {
      await this.nft.put(retagged.map((l) => ({ tuple: tupleOf(l), expiresBootNs: BigInt(l.expires_at_boot_ns) })), bootNs());
      await this.nftSample(true);
    }
    await this.persist(true);
    await updateOperation(this.o.stateDir, this.o.op, { policy_hash: hash });
    const revoked = ended.filter((e) => e.kind === 'lease_revoked').length;
    return { generation: G, retagged: retagged.length, carried, revoked };
  }

  /** An operator lease (control socket): its own generation. */
  addLease(t: Tuple, ttlMs: number, maxUses: number, by: ControlPeer): Promise<Record<string, unknown>> {
    return this.locked(async () => {
      const net = this.o.network;
      const G = this.newGeneration('operator_lease', { by, ...dest(t), ttl_ms: ttlMs, max_uses: maxUses });
      const l = this.o.dp.putLease({ tuple: t, generation: BigInt(G), ttlMs: ttlMs || null, maxUses });
      const rec: LeaseRecord = { ...this.recordOf(l, undefined, maxUses) };
      const replaced = findLease(net.record, t);
      net.setRecord(editLeases(net.record, new Set(), [rec]));
      await this.installed(rec, replaced);
      await this.persist(true);
      return { generation: G, lease: { ...dest(t), expires_at_boot_ns: String(l.expiresBootNs), max_uses: maxUses } };
    });
  }

  /** `gensee lease rm` through the control socket: harvested, then revoked, as its own generation. */
  revokeLease(t: Tuple, by: ControlPeer): Promise<Record<string, unknown>> {
    return this.locked(async () => {
      const net = this.o.network;
      const dp = this.o.dp;
      const r = findLease(net.record, t);
      const k = dp.getLease(t);
      if (!r && !k) throw new GenseeError('E_USAGE', `no lease for ${formatTuple(t)} in operation ${this.o.op}`);
      const lease = r ?? this.recordOf(k!, undefined);
      const at = new Date().toISOString();
      this.append(this.sampler.sample().lines, at);
      const G = this.newGeneration('lease_revoked', { by, ...dest(t) }, at);
      dp.removeLease(t);
      net.setRecord(editLeases(net.record, new Set([leaseKey(t)])));
      this.leasesDirty = true;
      this.nftDelete.set(leaseKey(t), t);
      await sleep(HANDOVER_GRACE_MS);
      const post = this.sampler.sample();
      const at2 = new Date().toISOString();
      const ended: Ended[] = [{ lease, kind: 'lease_revoked', extra: { by: 'operator', in_generation: G } }];
      const lines = this.endedLines(ended);
      const ret = this.retire(net.record, [lease.generation], at2);
      net.setRecord(ret.rec);
      this.append([...post.lines, ...lines, ...ret.lines], at2);
      await this.nftSample(true);
      await this.persist(true);
      return { generation: G, revoked_generation: lease.generation, final_allow: lines[0].final_allow };
    });
  }

  // ---- shutdown ----

  /** Final harvest, snapshot, close. removeNft: delete the nftables table (close / detach). */
  async stop(opts: { removeNft?: boolean } = {}): Promise<void> {
    if (this.stopped || this.stopping) return;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.timer = null;
    this.expiryTimer = null;
    await this.control?.close().catch((e: Error) => this.o.onError(e));
    this.nftDue = 0;
    await this.tick().catch((e: Error) => this.o.onError(e));
    this.stopped = true;
    await this.locked(async () => {
      this.append([{ kind: 'sampler', event: 'stop', nft_removed: !!(this.nft && opts.removeNft) }], new Date().toISOString());
      this.o.network.hooks = {};
      if (this.nft && opts.removeNft) await this.nft.destroy().catch((e: Error) => this.o.onError(e));
      this.snapshotDirty = true;
      await this.persist(false);
      await this.log.close();
    });
  }
}
