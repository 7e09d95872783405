// The envelope of one running operation: what it may reach, and since which
// generation. Owns the generations (with the network record), the policy
// handover, operator leases (add, revoke), the expiry sweep, the adoption of
// leases added to the kernel map out of band, the nft mirror's changes,
// the control request handler, and at start-up the reconciliation of the
// kernel map with the record (reconcileLeases, removeUnanswered: before the
// envelope opens). With the resolver's lease install
// (backends/network.ts, reported through installs.ts) it is the only
// TypeScript writer of the kernel lease map; `gensee lease` without a
// supervisor (cli/lease.ts) is the one other, and the sweep below adopts
// what it leaves. Counting is the recorder's (recorder.ts: reads only).
//
// Calls go down only: envelope → network backend, recorder, nft mirror,
// lease scan. The network backend reports its installs to the install
// ledger (installs.ts), which the envelope reads; it is never handed the
// envelope.
//
// A reading (periodic, and at a lease's expiry: schedule.ts):
//   1. compare the kernel lease map with the record (lease-scan.ts), in
//      slices of ~2 ms with a turn of the event loop between two, so a
//      fault is not held up behind 15,000 leases' comparison; the resolver
//      may install, replace or top up leases between the slices
//   2. in one synchronous step: re-check each candidate the comparison
//      found (settle: neither its kernel entry nor its record lease moved
//      since; expired entries leave the kernel only by compare-and-delete),
//      then remove expired and used-up leases, record those removed out of
//      band and adopt those added out of band, each change as a
//      generation. A candidate that moved is left for the next reading.
//   3. harvest the counters, record what ended, retire generations no
//      lease tags any more
//   4. nft counters when due, then persist totals (recorder.ts)
//
// An envelope change under traffic (policy apply, lease revocation), one
// sequence for both (changeUnderTraffic):
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
import { Tuple, formatTuple } from '../addr';
import { DataPlane, bootNs } from '../dataplane';
import { leaseExpired } from '../abi';
import { GenseeError } from '../errors';
import { LogFields } from '../evidence/chain';
import type { NetworkBackend, LeaseIntent } from '../backends/network';
import type { NftBackend } from '../backends/nft';
import type { Policy } from '../protocol/types';
import { LeaseRecord, NetworkRecord, findLease, leaseKey, leaseRecordOf, withoutLease } from '../state/network';
import { updateOperation } from '../state/operation';
import { ControlServer, CONTROL_SOCKET } from './control';
import type { LogHub } from '../events/hub';
import type { Resolver } from '../resolver/resolver';
import type { ControlHandler, ControlPeer, ControlRoutes, EnvelopeCommand, SupervisorCommand } from './control-types';
import { compact, editLeases, findGeneration, isPolicyReason, markRevoked, needsCompaction, planHandover } from './generations';
import { InstallLedger } from './installs';
import { LeaseScan, ScanResult } from './lease-scan';
import { NftMirror } from './nft-mirror';
import { CounterRecorder, Ended, dest, tupleOf } from '../counters/recorder';
import { ReadingSchedule } from './schedule';

export const SAMPLE_INTERVAL_MS = 1000;
export const HANDOVER_GRACE_MS = 20;

export interface EnvelopeOptions {
  /** the state disk is below its reserve (src/state/space.ts) */
  low?: () => boolean;
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
  /** where control.sock's refusals are recorded (faults.jsonl), like any refused peer */
  refusals?: Pick<Resolver, 'refuseTicket' | 'log'>;
  /** told of every counters.jsonl line (the live stream) */
  hub?: LogHub;
  /** the operator's policy with what gensee itself serves the workload (its DNS stub) granted: src/protocol/ip.ts withServedGrants */
  servedPolicy?: (p: Policy) => Policy;
  /** the commands that are not the envelope's: attention (events.jsonl) and the executor's records */
  /** control.sock's other commands (attention, the executor's records): control.ts dispatches them by name */
  routes?: ControlRoutes;
}

/** step 2 of a change under traffic: what it ended, and what follows the final harvest */
interface Change {
  ended: Ended[];
  /** every earlier policy generation is superseded too */
  supersedesPolicy?: boolean;
  /** leases to (re)put into the nft mirror after the final harvest */
  mirror?: LeaseRecord[];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Envelope {
  readonly recorder: CounterRecorder;
  /** what the network backend's installs report (the supervisor hands it over) */
  readonly installs: InstallLedger;
  private readonly mirror: NftMirror;
  private readonly scan: LeaseScan;
  private readonly schedule: ReadingSchedule;
  private readonly o: EnvelopeOptions;
  private readonly native: NativeDataPlane;
  private control: ControlServer | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private tickPending = false;
  private stopped = false;
  private stopping = false;
  private nextExpiry = 0n;
  readonly stats = { ticks: 0, tickMs: 0, lastTickMs: 0 };

  private constructor(o: EnvelopeOptions, recorder: CounterRecorder) {
    this.o = o;
    this.recorder = recorder;
    // the supervisor's own handle: its maps, no second set of fds (closed with it)
    this.native = o.dp.raw;
    this.mirror = new NftMirror(o.onError);
    this.scan = new LeaseScan(this.native);
    this.schedule = new ReadingSchedule(this.interval, () => this.tick(), o.onError);
    this.installs = new InstallLedger({ recorder, mirror: this.mirror, scan: this.scan, schedule: this.schedule, policyGeneration: o.network.record.generation });
  }

  get policyGeneration(): number {
    return this.installs.policyGeneration;
  }

  /** the nftables table of the mirror, when nft is on */
  get nft(): NftBackend | null {
    return this.mirror.nft;
  }

  get interval(): number {
    return this.o.intervalMs ?? SAMPLE_INTERVAL_MS;
  }

  static async open(o: EnvelopeOptions): Promise<Envelope> {
    const recorder = await CounterRecorder.open({ stateDir: o.stateDir, op: o.op, dp: o.dp, network: o.network, intervalMs: o.intervalMs ?? SAMPLE_INTERVAL_MS, onError: o.onError, hub: o.hub, low: o.low });
    const env = new Envelope(o, recorder);
    try {
      await env.init();
      // the start of the evidence is on disk before anything is served; at
      // once: the log's 250 ms window is for the fault path, and nothing
      // else is written yet to share its fdatasync
      recorder.log.flushSync();
    } catch (e) {
      await env.abort();
      throw e;
    }
    return env;
  }

  private async init(): Promise<void> {
    const o = this.o;
    const at = new Date().toISOString();
    const { from, replayed } = this.recorder.resumed;
    this.recorder.append([{ kind: 'sampler', event: 'start', resumed: from, replayed, interval_ms: this.interval }], at);
    const g = o.network.record.generations[o.network.record.generations.length - 1];
    // the start generation: counts made while no resolver ran are harvested
    // by the first reading below, against the resumed totals
    this.installs.generationStarted(this.policyGeneration, g?.reason ?? o.startReason, { policy_hash: o.policyHash }, at);
    if (o.startReason === 'policy_change') {
      await this.locked(() => this.handover(o.network.currentPolicy, o.policyHash, this.policyGeneration, { pid: process.pid, uid: process.getuid?.() ?? 0 }));
    }
    if (o.nft) await this.startNft();
    this.control = new ControlServer({
      socketPath: path.join(this.recorder.dir, CONTROL_SOCKET),
      ownerUid: o.ownerUid,
      cgroup: o.cgroup,
      key: o.key,
      handler: (req, peer) => this.handle(req, peer),
      routes: o.routes && this.durableRoutes(o.routes),
      stopping: () => this.stopping,
      onRefused: (reason, detail, peer) => this.refused(reason, detail, peer),
      refusals: o.refusals,
    });
    await this.control.listen();
    await this.tick();
    this.schedule.start();
  }

  private async abort(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    this.schedule.stop();
    this.installs.close();
    await this.control?.close().catch(() => undefined);
    await this.recorder.log.close().catch(() => undefined);
  }

  /** Run exclusive of other readings, handovers and control requests. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Start generation N+1 in the record and log it (synchronous: number and
   * line seq are taken together). Its counters do not exist yet: baseline 0.
   * O(1) on the fault path; compaction runs in the periodic reading.
   */
  private newGeneration(reason: string, extra: LogFields = {}, at = new Date().toISOString()): number {
    const g = this.o.network.addGeneration(reason, new Date(at));
    this.installs.generationStarted(g, reason, extra, at);
    return g;
  }

  private async startNft(): Promise<void> {
    const now = bootNs();
    const { table, leftover } = await this.mirror.start({
      op: this.o.op,
      cgroup: this.o.cgroup,
      elements: this.o.network.record.leases.map((l) => ({ tuple: tupleOf(l), expiresBootNs: BigInt(l.expires_at_boot_ns) })),
      nowBootNs: now,
    });
    const at = new Date().toISOString();
    // a table left by a killed run: its counts since our last reading are
    // harvested before it was replaced (against the resumed nft totals)
    if (leftover) this.recorder.harvestNft(leftover, at);
    this.recorder.sampler.resetNft();
    this.recorder.append([{ kind: 'nft_table', table, replaced: leftover !== null }], at);
  }

  // ---- the periodic reading ----

  /** One reading: sweep expired, used-up and out-of-band changes, harvest, record, persist. */
  tick(): Promise<void> {
    if (this.tickPending) return this.chain.then(() => undefined);
    this.tickPending = true;
    return this.locked(async () => {
      this.tickPending = false;
      const net = this.o.network;
      // step 1, in slices (no lock is needed against the resolver: step 2 re-checks)
      const found = await this.scan.scanSliced(() => net.record.leases, bootNs(), this.nextExpiry);
      const t0 = process.hrtime.bigint();
      const at = new Date().toISOString();
      const changed = this.sweepAndSample(at, found);
      this.stats.lastTickMs = Number(process.hrtime.bigint() - t0) / 1e6 + this.scan.stats.busyMs;
      this.stats.tickMs += this.stats.lastTickMs;
      this.stats.ticks++;
      await this.nftSample(false);
      await this.recorder.persist(changed, this.stopped);
      this.schedule.expiry(this.nextExpiry);
    });
  }

  /**
   * The synchronous part of a reading (step 2 on): acts on what the scan
   * found once settle() confirmed it. Returns true when the record's leases
   * or generations changed.
   */
  private sweepAndSample(at: string, scanned: ScanResult | null): boolean {
    const net = this.o.network;
    const dp = this.o.dp;
    const now = bootNs();
    if (scanned === null) {
      // nothing moved in the lease map: harvest only
      const ended = this.installs.takeReplaced();
      const s = this.recorder.sample();
      let changed = false;
      let lines = [...s.lines, ...this.recorder.endedLines(ended)];
      if (ended.length) {
        const r = this.retire(net.record, ended.map((e) => e.lease.generation), at);
        if (r.lines.length) {
          net.setRecord(r.rec);
          changed = true;
        }
        lines = [...lines, ...r.lines];
      }
      this.recorder.append(lines, at);
      return changed;
    }
    // what still holds; the expired kernel entries are out (compare-and-delete)
    const found = this.scan.settle(scanned, (k) => net.recordedLease(k), now, (k) => net.inFlight(k));
    if (found.failed) this.o.onError(new Error(`lease sweep: ${found.failed} expired lease(s) could not be removed; left for the next reading`));
    const expired = found.expired.map((e) => ({ lease: 'tuple' in e.lease ? leaseRecordOf(e.lease) : e.lease, why: e.why }));
    const gone = found.gone;
    const ended: Ended[] = this.installs.takeReplaced();
    const remove = new Set<string>();
    const put: LeaseRecord[] = [];
    if (gone.length) {
      // leases removed behind our back (e.g. `gensee lease rm` run without a
      // supervisor to talk to): their counters are still in the map, harvested below
      const g = this.newGeneration('lease_revoked', { by: 'external', leases: gone.length }, at);
      for (const l of gone) {
        remove.add(leaseKey(l));
        ended.push({ lease: l, kind: 'lease_revoked', extra: { by: 'external', in_generation: g } });
        this.mirror.retire(leaseKey(l), tupleOf(l));
      }
    }
    if (expired.length) {
      const g = this.newGeneration('lease_expired', { leases: expired.length }, at);
      for (const e of expired) {
        remove.add(leaseKey(e.lease));
        ended.push({ lease: e.lease, kind: 'lease_expired', extra: { why: e.why, expires_at_boot_ns: e.lease.expires_at_boot_ns, in_generation: g } });
        this.mirror.retire(leaseKey(e.lease), tupleOf(e.lease));
      }
    }
    for (const k of found.adopt) {
      // an operator lease added behind our back: adopted as an operator
      // generation, re-tagged so its counts are attributed to it
      const g = this.newGeneration('operator_lease', { by: 'external', ...dest(k.tuple) }, at);
      const uses = k.usesLeft === null ? 0 : Number(k.usesLeft);
      const l = dp.putLease({ tuple: k.tuple, generation: BigInt(g), expiresBootNs: k.expiresBootNs, maxUses: uses });
      put.push(leaseRecordOf(l, uses));
      if (this.mirror.nft) void this.mirror.put([{ tuple: k.tuple, expiresBootNs: k.expiresBootNs }], now).catch((e: Error) => this.o.onError(e));
    }
    const changed = remove.size > 0 || put.length > 0;
    if (changed) {
      if (put.length) {
        const old = new Map(net.record.leases.map((l) => [leaseKey(l), l]));
        for (const l of put) {
          const prev = old.get(leaseKey(l));
          if (prev) ended.push({ lease: prev, kind: 'lease_replaced', extra: { by_generation: l.generation } });
        }
      }
      // in place: the backend's lease map stays (a new array would make the
      // next fault rebuild it, O(live leases) on the answer path)
      net.editLeases(remove, put);
    }
    const base = net.record;
    let rec = base;
    this.nextExpiry = scanned.next;
    const s = this.recorder.sample();
    const r = this.retire(rec, ended.map((e) => e.lease.generation), at);
    rec = r.rec;
    if (needsCompaction(rec)) rec = compact(rec, [this.policyGeneration]);
    if (rec !== base) net.setRecord(rec);
    if (changed) this.scan.recordChanged();
    this.recorder.append([...s.lines, ...this.recorder.endedLines(ended), ...r.lines], at);
    return changed || r.lines.length > 0;
  }

  /** Retire generations of `rec` that no longer tag any lease (after their final harvest). */
  private retire(rec: NetworkRecord, candidates: number[], at: string): { rec: NetworkRecord; lines: LogFields[] } {
    if (candidates.length === 0) return { rec, lines: [] };
    const sampler = this.recorder.sampler;
    // the candidates a live lease still tags: one pass, a set no larger than the candidates
    const cands = new Set(candidates);
    const inUse = new Set<number>();
    for (const l of rec.leases) if (cands.has(l.generation)) inUse.add(l.generation);
    const done = new Set<number>();
    const lines: LogFields[] = [];
    for (const g of candidates) {
      if (done.has(g) || inUse.has(g) || g === this.policyGeneration) continue;
      const gr = findGeneration(rec.generations, g);
      if (!gr || gr.revoked_at) continue; // compacted away long ago, or already retired
      done.add(g);
      lines.push({ kind: 'generation_revoked', generation: g, reason: gr.reason, final_allow: sampler.generationAllow(g) });
    }
    // its counters are final: take them out of the kernel map
    const keys = [...done].flatMap((g) => sampler.retireGeneration(g));
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
    const nft = this.mirror.nft;
    if (!nft) return;
    const live = await this.recorder.sampleNft(nft, force);
    if (live) await this.mirror.removeHarvested(live);
  }

  // ---- envelope changes (control socket, restart with another policy) ----

  /**
   * A control request (control.sock), answered once its change is in
   * counters.jsonl, durably: an operator's change is recorded before it is
   * acknowledged.
   */
  readonly handle: ControlHandler = async (req, peer) => {
    const r = await this.dispatch(req, peer);
    await this.recorder.log.flushNow();
    return r;
  };

  /** each route answered, as the envelope's own commands are, once counters.jsonl is durable too */
  private durableRoutes(routes: ControlRoutes): ControlRoutes {
    const out: Record<string, unknown> = {};
    for (const [name, route] of Object.entries(routes) as [string, (c: never, p: ControlPeer) => Promise<Record<string, unknown>>][]) {
      out[name] = async (cmd: never, peer: ControlPeer) => {
        const r = await route(cmd, peer);
        await this.recorder.log.flushNow();
        return r;
      };
    }
    return out as ControlRoutes;
  }

  /** an attempt to change the envelope that was refused is evidence too */
  refused(reason: string, detail: string, peer: unknown): void {
    this.recorder.append([{ kind: 'control_refused', reason, detail: detail.slice(0, 300), peer }], new Date().toISOString());
  }

  private async dispatch(cmd: EnvelopeCommand | SupervisorCommand, peer: ControlPeer): Promise<Record<string, unknown>> {
    if (this.stopping) throw new GenseeError('E_STATE', 'the supervisor is stopping');
    switch (cmd.command) {
      case 'policy_apply':
        return this.applyPolicy(cmd.policy, cmd.hash, peer);
      case 'lease_add':
        return this.addLease(cmd.tuple, cmd.ttlMs, cmd.maxUses, peer);
      case 'lease_rm':
        return this.revokeLease(cmd.tuple, peer);
      default:
        // a command with a route never gets here (control.ts dispatches it)
        throw new GenseeError('E_STATE', `this supervisor does not take ${cmd.command}`);
    }
  }

  /**
   * Steps 1–4 of a change under traffic (the header): harvest, the new
   * generation (`newGeneration`), the synchronous swap (`change`), grace,
   * the final harvest and the retirement of what the swap ended.
   */
  private async changeUnderTraffic(newGeneration: (at: string) => number, change: (generation: number, now: bigint, at: string) => Change): Promise<{ generation: number; ended: LogFields[] }> {
    const net = this.o.network;
    const at = new Date().toISOString();
    // ---- one synchronous step: harvest, baseline, swap, remove ----
    const now = bootNs();
    this.recorder.append(this.recorder.sample().lines, at);
    const G = newGeneration(at);
    const c = change(G, now, at);
    this.scan.recordChanged();
    // ---- the final harvest of what the swap retired ----
    await sleep(HANDOVER_GRACE_MS);
    const post = this.recorder.sample();
    const at2 = new Date().toISOString();
    const cands = c.ended.map((e) => e.lease.generation);
    // every earlier policy generation is superseded now (also the previous
    // run's, at a restart with another policy)
    if (c.supersedesPolicy) for (const g of net.record.generations) if (g.generation !== G && g.revoked_at === undefined && isPolicyReason(g.reason)) cands.push(g.generation);
    const ended = this.recorder.endedLines(c.ended);
    const r = this.retire(net.record, cands, at2);
    net.setRecord(r.rec);
    this.recorder.append([...post.lines, ...ended, ...r.lines], at2);
    if (c.mirror && this.mirror.nft) await this.mirror.put(c.mirror.map((l) => ({ tuple: tupleOf(l), expiresBootNs: BigInt(l.expires_at_boot_ns) })), bootNs());
    await this.nftSample(true);
    await this.recorder.persist(true, this.stopped);
    return { generation: G, ended };
  }

  /** `gensee policy apply`: a new policy generation, handed over under traffic. */
  applyPolicy(policy: Policy, hash: string, by: ControlPeer): Promise<Record<string, unknown>> {
    const p = this.o.servedPolicy ? this.o.servedPolicy(policy) : policy;
    return this.locked(() => this.handover(p, hash, null, by));
  }

  private async handover(policy: Policy, hash: string, existing: number | null, by: ControlPeer): Promise<Record<string, unknown>> {
    const net = this.o.network;
    const dp = this.o.dp;
    const retagged: LeaseRecord[] = [];
    let carried = 0;
    let revoked = 0;
    // planned once; what it revokes leaves the record durably first (see revokeLease)
    const plan = planHandover(net.record, policy, bootNs());
    await this.forgetDurably(plan.filter((a) => a.action === 'revoke').map((a) => leaseKey(tupleOf(a.lease))));
    const { generation } = await this.changeUnderTraffic(
      (at) => existing ?? this.newGeneration('policy_apply', { policy_hash: hash, by }, at),
      (G, _now, at) => {
        this.installs.policyGeneration = G;
        net.setPolicy(policy);
        dp.setRules(policy.listen, policy.unix);
        const ended: Ended[] = [];
        const remove = new Set<string>();
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
            this.mirror.retire(leaseKey(t), t);
            revoked++;
          } else carried++;
        }
        net.setRecord(editLeases(net.record, remove, retagged));
        return { ended, supersedesPolicy: true, mirror: retagged };
      },
    );
    await updateOperation(this.o.stateDir, this.o.op, { policy_hash: hash });
    return { generation, retagged: retagged.length, carried, revoked };
  }

  /** An operator lease (control socket): its own generation. */
  addLease(t: Tuple, ttlMs: number, maxUses: number, by: ControlPeer): Promise<Record<string, unknown>> {
    return this.locked(async () => {
      const net = this.o.network;
      const G = this.newGeneration('operator_lease', { by, ...dest(t), ttl_ms: ttlMs, max_uses: maxUses });
      const l = this.o.dp.putLease({ tuple: t, generation: BigInt(G), ttlMs: ttlMs || null, maxUses });
      const rec = leaseRecordOf(l, maxUses);
      const replaced = findLease(net.record, t);
      net.setRecord(editLeases(net.record, new Set(), [rec]));
      await this.installs.installed(rec, replaced);
      await this.recorder.persist(true, this.stopped);
      return { generation: G, lease: { ...dest(t), expires_at_boot_ns: String(l.expiresBootNs), max_uses: maxUses } };
    });
  }

  /** Leases out of network.json, durably, before the kernel removes them (a restart never restores a revoked lease). */
  private async forgetDurably(keys: string[]): Promise<void> {
    if (!keys.length) return;
    const net = this.o.network;
    net.setRecord(editLeases(net.record, new Set(keys)));
    await net.persist();
  }

  /** `gensee lease rm` through the control socket: harvested, then revoked, as its own generation. */
  revokeLease(t: Tuple, by: ControlPeer): Promise<Record<string, unknown>> {
    return this.locked(async () => {
      const net = this.o.network;
      const dp = this.o.dp;
      const r = findLease(net.record, t);
      const k = dp.getLease(t);
      if (!r && !k) throw new GenseeError('E_USAGE', `no lease for ${formatTuple(t)} in operation ${this.o.op}`);
      const lease = r ?? leaseRecordOf(k!);
      // the revocation is durable before the kernel lets go of the lease:
      // a crash in between leaves a kernel lease with no record, which the
      // restart removes; never a record that would restore it
      await this.forgetDurably([leaseKey(t)]);
      const { generation, ended } = await this.changeUnderTraffic(
        (at) => this.newGeneration('lease_revoked', { by, ...dest(t) }, at),
        (G) => {
          dp.removeLease(t);
          net.setRecord(editLeases(net.record, new Set([leaseKey(t)])));
          this.mirror.retire(leaseKey(t), t);
          return { ended: [{ lease, kind: 'lease_revoked', extra: { by: 'operator', in_generation: G } }] };
        },
      );
      return { generation, revoked_generation: lease.generation, final_allow: ended[0].final_allow };
    });
  }

  // ---- shutdown ----

  /** Final harvest, snapshot, close. removeNft: delete the nftables table (close / detach). */
  async stop(opts: { removeNft?: boolean } = {}): Promise<void> {
    if (this.stopped || this.stopping) return;
    this.stopping = true;
    this.schedule.stop();
    await this.control?.close().catch((e: Error) => this.o.onError(e));
    this.recorder.nftNow();
    await this.tick().catch((e: Error) => this.o.onError(e));
    this.stopped = true;
    await this.locked(async () => {
      this.recorder.append([{ kind: 'sampler', event: 'stop', nft_removed: !!(this.mirror.nft && opts.removeNft) }], new Date().toISOString());
      this.installs.close();
      if (this.mirror.nft && opts.removeNft) await this.mirror.destroy().catch((e: Error) => this.o.onError(e));
      await this.recorder.close();
    });
  }
}

/**
 * At start-up, before the envelope opens: leases in the kernel and in the
 * record agree. Unknown or expired kernel entries are removed, missing live
 * ones re-installed. Only network.json is re-installed from, so a
 * revocation must take the lease out of network.json before out of the
 * kernel map (`gensee lease rm` without a supervisor does: src/cli/lease.ts);
 * the other order, interrupted between the two, is undone here.
 */
export async function reconcileLeases(network: NetworkBackend, dp: DataPlane): Promise<{ removed: string[]; reinstalled: string[]; dropped: string[] }> {
  const now = bootNs();
  const removed: string[] = [];
  const reinstalled: string[] = [];
  const dropped: string[] = [];
  let rec = network.record;
  const known = new Map(rec.leases.map((l) => [leaseKey(l), l]));
  for (const k of dp.listLeases()) {
    const rk = leaseKey(k.tuple);
    const r = known.get(rk);
    if (!r || leaseExpired(k, now) || BigInt(r.expires_at_boot_ns) !== k.expiresBootNs) {
      dp.removeLease(k.tuple);
      removed.push(rk);
    }
  }
  for (const r of rec.leases) {
    const exp = BigInt(r.expires_at_boot_ns);
    const t = tupleOf(r);
    if (leaseExpired({ expiresBootNs: exp }, now)) {
      rec = withoutLease(rec, t);
      dropped.push(leaseKey(r));
      continue;
    }
    if (!dp.getLease(t)) {
      if (r.max_uses > 0) {
        // the record cannot know how many uses were spent: fail closed
        rec = withoutLease(rec, t);
        dropped.push(leaseKey(r));
        continue;
      }
      // the record says it was granted and it has not expired: restore it
      dp.putLease({ tuple: t, generation: BigInt(r.generation), expiresBootNs: exp, maxUses: r.max_uses });
      reinstalled.push(leaseKey(r));
    }
  }
  network.setRecord(rec);
  await network.persist();
  return { removed, reinstalled, dropped };
}

/**
 * Leases whose install a dead resolver never answered (an intent line with
 * no resolution): out of the kernel and out of the record, whatever they
 * replaced. Fail closed: the workload faults again. Returns what was removed.
 */
export async function removeUnanswered(network: NetworkBackend, dp: DataPlane, intents: readonly LeaseIntent[]): Promise<string[]> {
  const removed: string[] = [];
  let rec = network.record;
  for (const i of intents) {
    const t = tupleOf(i);
    const inKernel = dp.getLease(t) !== null;
    if (inKernel) dp.removeLease(t);
    if (inKernel || findLease(rec, t)) removed.push(leaseKey(t));
    rec = withoutLease(rec, t);
  }
  if (removed.length) {
    network.setRecord(rec);
    await network.persist();
  }
  return removed;
}
