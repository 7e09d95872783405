// The counter recorder of one running operation: counters.jsonl, the
// running totals (operation.json and network.json `totals`),
// counters.state.json snapshots. It only reads the kernel (the counter map
// and stats through the Sampler, nft counters through NftBackend.read);
// what changes the kernel is the envelope's (envelope.ts).
//
// counters.jsonl (hash-chained, see evidence/chain.ts; `seq`, `at`, `prev`
// are added by the chain). Lines of one reading share `at`. Kinds:
//   allow            {source:"ebpf"|"nft", generation, family, protocol, address, port, delta, total}
//   deny             {source:"ebpf", reason:"no_lease"|"expired"|"exhausted", family, protocol, address, port, delta, total}
//                    {source:"resolver", reason:<deny reason>, family, protocol, address, port, delta}
//                    a paused call the resolver denied never reaches the hook: counted
//                    here (no kernel counter, so no total; not in the totals either)
//   dns_names        {delta, total}          distinct names the workload queried (the DNS budget's count)
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
import * as path from 'node:path';
import { Tuple } from '../addr';
import { DataPlane } from '../dataplane';
import type { LogHub } from '../events/hub';
import { ChainedLog, LogFields } from '../evidence/chain';
import type { NetworkBackend } from '../backends/network';
import { NftBackend, NftCounters } from '../backends/nft';
import { LeaseRecord, leaseKey, setNetworkTotals } from '../state/network';
import { opDir, updateOperation } from '../state/operation';
import { CounterSource, SampleResult, Sampler } from './sampler';
import { COUNTERS_FILE, SNAPSHOT_EVERY_MS, resume, writeSnapshot } from './snapshot';

/** per-destination lines for the pause layer's denials in one reading; the rest are folded per reason */
export const REFUSAL_LINES = 100;
/**
 * Per-destination lines of the hooks' counters (kind allow or deny, source
 * ebpf) written per second. A workload chooses how many destinations it
 * dials, and each distinct one is a counter key of its own (up to
 * GS_COUNTERS_MAX): past this many lines in a second, the rest of a
 * reading's lines are folded, one per kind and reason (allow: per kind),
 * with the exact delta and how many destinations it folds
 * ({kind, source:"ebpf", reason?, folded:true, delta, destinations}). The
 * counter's cumulative `total` is on its next unfolded line. With the state
 * disk below its reserve every such line is folded.
 * $GENSEE_COUNTER_LINES_PER_SECOND overrides it (tests).
 */
export const COUNTER_LINES_PER_SECOND = 1000;

function counterLineBudget(): number {
  const e = process.env.GENSEE_COUNTER_LINES_PER_SECOND;
  if (e === undefined || !/^[0-9]{1,9}$/.test(e)) return COUNTER_LINES_PER_SECOND;
  return Number(e);
}
/** share of the time network.json rewrites for totals alone may take */
const NETWORK_WRITE_BUDGET = 0.05;
/** nft reads may use this share of one core; the period grows with the set */
const NFT_READ_BUDGET = 0.05;
/** never sample nft less often than this (elements outlive their lease by NFT_EXPIRY_GRACE_MS = 10 s) */
const NFT_MAX_PERIOD_MS = 5000;

/** a lease that left the kernel map or its generation, recorded with its final count */
export interface Ended {
  lease: LeaseRecord;
  kind: 'lease_expired' | 'lease_revoked' | 'lease_replaced' | 'lease_retagged';
  extra: LogFields;
}

export interface RecorderOptions {
  stateDir: string;
  op: string;
  dp: DataPlane;
  network: NetworkBackend;
  intervalMs: number;
  onError: (e: Error) => void;
  hub?: LogHub;
  /** the state disk is below its reserve (src/state/space.ts): every refusal line is folded */
  low?: () => boolean;
}

export function tupleOf(l: { family: Tuple['family']; protocol: Tuple['protocol']; address: string; port: number }): Tuple {
  return { family: l.family, protocol: l.protocol, address: l.address, port: l.port };
}

export function dest(t: Tuple): LogFields {
  return { family: t.family, protocol: t.protocol, address: t.address, port: t.port };
}

export class CounterRecorder {
  readonly log: ChainedLog;
  readonly sampler: Sampler;
  readonly dir: string;
  private readonly o: RecorderOptions;
  private nftDue = 0;
  private lastSnapshot = Date.now();
  private snapshotDirty = false;
  private totalsText = '';
  private networkBehind = false;
  private networkDue = 0;
  /** denials decided at the pause layer since the last reading, by destination and reason */
  private refusals = new Map<string, { t: Tuple; reason: string; n: number; kind: 'deny' | 'audit_allowed' }>();
  /** distinct names queried through the DNS stub: since the last reading, and in all */
  private dnsNames = { delta: 0, total: 0 };
  /** per-destination counter lines written in the current second (COUNTER_LINES_PER_SECOND) */
  private lineBudget = { second: 0, used: 0, max: counterLineBudget() };
  /** lines folded by the budget so far (readers: stats) */
  readonly folding = { lines: 0, readings: 0 };

  private constructor(o: RecorderOptions, log: ChainedLog, sampler: Sampler) {
    this.o = o;
    this.dir = opDir(o.stateDir, o.op);
    this.log = log;
    this.sampler = sampler;
  }

  static async open(o: RecorderOptions): Promise<CounterRecorder> {
    const dir = opDir(o.stateDir, o.op);
    // Nobody waits on a counters line (a lease's durable record is its resolution
    // line in faults.jsonl): batch them for up to 250 ms so they never add an
    // fdatasync per fault on the answer path.
    const log = await ChainedLog.open(path.join(dir, COUNTERS_FILE), { groupWindowMs: 250, onLine: o.hub ? (seq, text) => o.hub!.publish('counters', seq, text) : undefined });
    const res = await resume(dir, log.seq, log.lastHash);
    if (res.from === 'none') {
      const t = o.network.record.totals;
      res.state.totals = { allow: t.allow, deny: { ...t.deny }, lost_events: t.lost_events };
    }
    // the supervisor's own handle: its maps, no second set of fds (closed with it)
    const native = o.dp.raw;
    const src: CounterSource = { countersRaw: () => native.countersRead(), stats: () => native.statsRead() };
    const r = new CounterRecorder(o, log, new Sampler(src, res.state));
    r.resumed = { from: res.from, replayed: res.replayed };
    return r;
  }

  /** where the sampler's state came from at open (snapshot.ts) */
  resumed: { from: string; replayed: number } = { from: 'none', replayed: 0 };

  append(lines: LogFields[], at: string): void {
    for (const l of lines) {
      // nobody waits on a counters line: written with the others of this
      // turn of the event loop (one write(2) for them), synced by the log's window
      if (this.log.failure) break; // said once; the supervisor's failed state retries the disk
      try {
        this.log.appendTicket({ at, ...l }, { sync: true, defer: true });
      } catch (e) {
        this.o.onError(e as Error);
        break;
      }
    }
    if (lines.length) this.snapshotDirty = true;
  }

  /**
   * Read the eBPF counters and stats: the lines of the deltas since the last
   * reading, with the pause layer's denials since then.
   */
  sample(): SampleResult {
    const s = this.bound(this.sampler.sample());
    if (this.refusals.size === 0 && this.dnsNames.delta === 0) return s;
    const lines = [...s.lines];
    let n = 0;
    if (this.dnsNames.delta) {
      lines.push({ kind: 'dns_names', delta: this.dnsNames.delta, total: this.dnsNames.total });
      n += this.dnsNames.delta;
      this.dnsNames.delta = 0;
    }
    // a workload chooses how many destinations it is refused for: past
    // REFUSAL_LINES of them in one reading, the rest are one line per reason
    // (delta exact, `destinations` how many it folds)
    const folded = new Map<string, { kind: string; reason: string; delta: number; destinations: number }>();
    let k = this.o.low?.() ? REFUSAL_LINES : 0;
    for (const r of this.refusals.values()) {
      // an audit lease (kind audit_allowed, reason: what it would be denied for) is counted apart from a denial
      if (k++ < REFUSAL_LINES) lines.push({ kind: r.kind, source: 'resolver', reason: r.reason, ...dest(r.t), delta: r.n });
      else {
        const fk = `${r.kind}|${r.reason}`;
        const f = folded.get(fk) ?? { kind: r.kind, reason: r.reason, delta: 0, destinations: 0 };
        f.delta += r.n;
        f.destinations++;
        folded.set(fk, f);
      }
      n += r.n;
    }
    for (const f of folded.values()) lines.push({ kind: f.kind, source: 'resolver', reason: f.reason, folded: true, delta: f.delta, destinations: f.destinations });
    this.refusals.clear();
    this.snapshotDirty = true;
    return { lines, changed: s.changed + n };
  }

  /**
   * The per-second budget of the hooks' per-destination lines: what is over
   * it is folded per kind and reason, deltas exact (COUNTER_LINES_PER_SECOND).
   */
  private bound(s: SampleResult): SampleResult {
    const b = this.lineBudget;
    const second = Math.floor(Date.now() / 1000);
    if (second !== b.second) {
      b.second = second;
      b.used = 0;
    }
    const max = this.o.low?.() ? 0 : b.max;
    if (b.used + s.lines.length <= max) {
      b.used += s.lines.length;
      return s;
    }
    const lines: LogFields[] = [];
    const folded = new Map<string, LogFields & { delta: number; destinations: number }>();
    let n = 0;
    for (const l of s.lines) {
      const perDest = (l.kind === 'allow' || l.kind === 'deny') && l.source === 'ebpf' && l.address !== undefined;
      if (!perDest || b.used < max) {
        if (perDest) b.used++;
        lines.push(l);
        continue;
      }
      const key = l.kind === 'deny' ? `deny|${String(l.reason)}` : 'allow';
      const f = folded.get(key) ?? { kind: l.kind, source: 'ebpf', ...(l.kind === 'deny' ? { reason: l.reason } : {}), folded: true, delta: 0, destinations: 0 };
      f.delta += Number(l.delta);
      f.destinations++;
      folded.set(key, f);
      n++;
    }
    if (n === 0) return s;
    this.folding.lines += n;
    this.folding.readings++;
    return { lines: [...lines, ...folded.values()], changed: s.changed };
  }

  /** A name queried for the first time through the DNS stub (total: the stub's count so far). */
  countDnsName(total: number): void {
    this.dnsNames.delta++;
    this.dnsNames.total = total;
  }

  /** A paused call to t that the resolver denied (it never reaches the hook's counters). */
  countRefusal(t: Tuple, reason: string, kind: 'deny' | 'audit_allowed' = 'deny'): void {
    const k = `${kind}|${reason}|${t.family}|${t.protocol}|${t.address}|${t.port}`;
    const e = this.refusals.get(k);
    if (e) e.n++;
    else this.refusals.set(k, { t, reason, n: 1, kind });
  }

  endedLines(ended: Ended[]): LogFields[] {
    return ended.map((e) => ({
      kind: e.kind,
      generation: e.lease.generation,
      ...dest(tupleOf(e.lease)),
      ...e.extra,
      final_allow: this.sampler.leaseAllow(tupleOf(e.lease), e.lease.generation),
    }));
  }

  /** Harvest an nft table's counters (a table left by a killed run, before it is replaced). */
  harvestNft(c: NftCounters, at: string): void {
    const gens = new Map(this.o.network.record.leases.map((l) => [leaseKey(l), l.generation]));
    this.append(this.sampler.sampleNft(c, (k) => gens.get(k) ?? null).lines, at);
  }

  /**
   * Read nft counters when due (or now). Returns the live leases' keys when
   * a reading was recorded (elements no lease holds are then harvested),
   * null when none was taken.
   */
  async sampleNft(nft: NftBackend, force: boolean): Promise<Map<string, number> | null> {
    if (!force && Date.now() < this.nftDue) return null;
    let c: NftCounters;
    try {
      c = await nft.read();
    } catch (e) {
      this.o.onError(e as Error);
      this.nftDue = Date.now() + this.o.intervalMs;
      return null;
    }
    const at = new Date().toISOString();
    const gens = new Map(this.o.network.record.leases.map((l) => [leaseKey(l), l.generation]));
    const s = this.sampler.sampleNft(c, (k) => gens.get(k) ?? null);
    this.append(s.lines, at);
    const period = Math.min(NFT_MAX_PERIOD_MS, Math.max(this.o.intervalMs, Math.ceil(nft.stats.lastReadMs / NFT_READ_BUDGET)));
    this.nftDue = Date.now() + period - 50;
    return gens;
  }

  /** the next nft reading is taken whenever asked (the final one at stop) */
  nftNow(): void {
    this.nftDue = 0;
  }

  /**
   * Totals into operation.json (small) at every reading that changed them,
   * and into network.json with them — except that network.json grows with
   * the live leases, so rewriting it for totals alone is spaced to keep
   * those writes under NETWORK_WRITE_BUDGET of the time (with 10,000 leases
   * a rewrite takes tens of ms: then every few seconds; a small record is
   * rewritten at every reading). A lease change, a handover and the final
   * write always write it.
   */
  async persist(leasesChanged: boolean, final = false): Promise<void> {
    const net = this.o.network;
    const totals = this.sampler.totals;
    const text = JSON.stringify(totals);
    const writes: Promise<unknown>[] = [];
    if (text !== this.totalsText) {
      this.totalsText = text;
      this.networkBehind = true;
      writes.push(updateOperation(this.o.stateDir, this.o.op, { totals: { allow: totals.allow, deny: { ...totals.deny }, lost_events: totals.lost_events } }));
    }
    if (leasesChanged || final || (this.networkBehind && Date.now() >= this.networkDue)) {
      net.setRecord(setNetworkTotals(net.record, totals));
      this.networkBehind = false;
      const t0 = Date.now();
      writes.push(
        net.persist().then(() => {
          this.networkDue = Date.now() + (Date.now() - t0) / NETWORK_WRITE_BUDGET - this.o.intervalMs;
        }),
      );
    }
    await Promise.all(writes);
    if (this.snapshotDirty && (final || Date.now() - this.lastSnapshot >= SNAPSHOT_EVERY_MS)) await this.snapshot();
  }

  /** counters.jsonl (its failure, for the supervisor's failed state) */
  get chain(): ChainedLog {
    return this.log;
  }

  /** the final write: totals, network.json and a snapshot, then the log closes */
  async close(): Promise<void> {
    this.snapshotDirty = true;
    await this.persist(false, true);
    // the last lines durable at once, not after the 250 ms window: the
    // operation is ending and nothing else will share that fdatasync
    this.log.closeSync();
  }

  private async snapshot(): Promise<void> {
    const state = this.sampler.state();
    const seq = this.log.seq;
    const hash = this.log.lastHash;
    this.snapshotDirty = false;
    this.lastSnapshot = Date.now();
    await writeSnapshot(this.dir, state, seq, hash);
  }
}
