// A running supervisor for one operation: records, pinned hooks, network
// backend, resolver, authenticated socket and reject-mode loop. Used by
// `gensee supervise` and `gensee run`.
import { mark } from './startup-trace';
import * as path from 'node:path';
import { resolveCgroupPath, killCgroupAndWait } from './cgroup';
import { attachHooksAsync, detachHooks, hooksAttached, DataPlane, describeDestination } from './dataplane';
import { pinDirFor } from './bpffs';
import * as fs from 'node:fs';
import { GenseeError } from './errors';
import { createOperation, openOperation, opDir, readKey, updateOperation, OperationRecord } from './state/operation';
import { readNetwork, writeNetwork, beginGeneration, leaseKey, LeaseRecord } from './state/network';
import { ChainedLog } from './evidence/chain';
import { StateSpace } from './state/space';
import { writeFailedMarker, clearFailedMarker } from './state/failed';
import { closeOpenFaults, intentsOf } from './evidence/abandon';
import { Takeover, openFaultsOf, type CarriedFault } from './resolver/takeover';
import { NetworkBackend } from './backends/network';
import { Envelope, reconcileLeases, removeUnanswered } from './envelope/envelope';
import * as os from 'node:os';
import { loadAddon } from './addon';
import { Resolver } from './resolver/resolver';
import { SupervisorServer, AnswerLatency } from './resolver/server';
import { startRejectLoop, RejectLoop } from './resolver/rejectloop';
import { warmResolver } from './resolver/warm';
import { readStartTimeTicks } from './resolver/subject';
import { LogHub } from './events/hub';
import { EventLog } from './events/log';
import { reportResolver, ToolCgroups } from './events/reporter';
import { ensureToken } from './events/token';
import { startEventStream, EventStream, StreamListen } from './events/stream';
import { operatorSurface } from './metrics/surface';
import type { MetricsServer } from './metrics/http';
import { operationCommands } from './envelope/commands';
import { OpenStack } from './lifecycle';
import { withServedGrants } from './protocol/ip';
// the DNS stub's code: loaded when the operation serves DNS (startOperationDns)
import type { DnsService } from './dns/service';
import type { Upstream } from './dns/stub';
import type { CounterRecorder } from './counters/recorder';

export { POLICY_MAX_BYTES, loadPolicyFile, type LoadedPolicy } from './policy-file';
import type { LoadedPolicy } from './policy-file';

/**
 * GENSEE_ON_EVIDENCE_FAILURE=exit: a supervisor whose evidence cannot be
 * written exits with EXIT_EVIDENCE_FAILED (EX_TEMPFAIL) instead of waiting
 * in the failed state; its hooks stay pinned, failing closed.
 */
export const EVIDENCE_FAILURE_ENV = 'GENSEE_ON_EVIDENCE_FAILURE';
export const EXIT_EVIDENCE_FAILED = 75;
/**
 * faults.jsonl's group commit holds a requested fdatasync at most this long
 * (µs) while other socket requests are being decided and not yet waiting,
 * so that one fdatasync covers them (addon/synclog.c gs_synclog_siblings);
 * a lone request is never held.
 */
export const FAULT_SYNC_SIBLING_DELAY_US = 1000;

/** FAULT_SYNC_SIBLING_DELAY_US, or GENSEE_SYNC_SIBLING_US (0..100000; 0 turns the hold off: the bench's A/B) */
function siblingDelayUs(): number {
  const v = process.env.GENSEE_SYNC_SIBLING_US;
  if (v === undefined || v === '') return FAULT_SYNC_SIBLING_DELAY_US;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 100000) throw new GenseeError('E_USAGE', `GENSEE_SYNC_SIBLING_US must be an integer 0..100000 (µs), not ${JSON.stringify(v)}`);
  return n;
}

export interface OperationSummary {
  faults: number;
  leases_installed: number;
  continued: number;
  delegated: number;
  denied: number;
  refused: number;
  /** paused calls answered from C (lease present) */
  fast_path: number;
  /** paused calls raised as faults */
  paused: number;
  /** calls of threads other than a process's leader, read through the leader's pidfd (kernels before 6.9); absent when 0 */
  via_leader?: number;
  destinations: { destination: string; verdict: string; count: number }[];
  evidence: string;
}

export interface SupervisorOptions {
  stateDir: string;
  op: string;
  cgroup: string;
  policy: LoadedPolicy;
  ownerUid?: number;
  peers?: string[];
  detachOnExit?: boolean;
  /** the caller wrote the operation's record just before (a start intent, src/cli/run.ts): a new operation all the same */
  startIntent?: boolean;
  /** report non-fatal errors (ring buffer, backend) */
  onError?: (e: Error) => void;
  /** also enforce and count at packet level with an nftables table (src/backends/nft.ts) */
  nft?: boolean;
  /** counter sampling period (default 1000 ms) */
  sampleIntervalMs?: number;
  /** also serve the live stream on loopback TCP (events.sock is always served) */
  listen?: StreamListen;
  /** also serve /metrics without a token on this loopback address (src/metrics/surface.ts) */
  metrics?: StreamListen;
  /**
   * serve DNS for the workload (src/dns/service.ts): forward to upstream;
   * listen on listen, or on an address of the operation's own (127.53.X.Y:53)
   */
  dns?: { upstream: Upstream; listen?: { host: string; port: number } };
  /** the parent cgroup whose guard covers this operation (`gensee run`: <cgroup2>/gensee); see AttachOptions */
  guardParent?: string;
  /** audit mode (src/resolver/resolver.ts ResolverOptions.audit; the DNS stub answers names no rule covers); recorded in operation.json */
  audit?: boolean;
  /**
   * a resolver taking over from one that died or left (src/oci/listener.ts
   * resume): the network faults it left open are carried over, resolved
   * under their own fault id when their call comes again, instead of closed
   * as abandoned at once (src/resolver/takeover.ts; settleTakeover())
   */
  carryOpenFaults?: boolean;
  /**
   * the hooks' attach, already started by the caller (attachHooksAsync for
   * this op and cgroup, on a worker thread) while it loaded the rest of its
   * code (src/cli/run.ts): awaited here as this call's own attach would be,
   * and detached again if a later step fails (should this call fail before
   * it awaits it, the caller's clean-up detaches it: run.ts's does, after
   * the attach has settled). The caller starts it only for
   * an op with no pin dir (the native attach's mkdir of the pin dir fails
   * otherwise), so it stands for "hooks not pinned before".
   */
  attaching?: Promise<string>;
}

export class Supervisor {
  readonly op: string;
  readonly stateDir: string;
  readonly dir: string;
  readonly socketPath: string;
  readonly record: OperationRecord;
  readonly resolver: Resolver;
  readonly dp: DataPlane;
  readonly reconciled: { removed: string[]; reinstalled: string[]; dropped: string[] };
  readonly tornFaultLine: boolean;
  private readonly server: SupervisorServer;

  /** accept → answer sent on supervisor.sock so far (null once stopped) */
  answerLatency(): AnswerLatency | null {
    return this.server.latency();
  }
  private readonly loop: RejectLoop;
  private readonly faults: ChainedLog;
  /** events.jsonl: boundary events and attention (src/events/log.ts) */
  readonly events: EventLog;
  /** the live stream on events.sock (and --listen) */
  readonly stream: EventStream;
  /** the DNS stub, when serving DNS */
  dns: DnsService | null = null;
  /** --metrics: /metrics without a token */
  metrics: MetricsServer | null = null;
  private readonly detachOnExit: boolean;
  private stopped = false;
  /** the resolver answers operation_not_active once this is false */
  private readonly live: { active: boolean };
  /** the operation's envelope: generations, handover, operator leases, control.sock, counter recording (src/envelope/envelope.ts) */
  envelope: Envelope | null = null;

  private constructor(x: {
    o: SupervisorOptions;
    record: OperationRecord;
    resolver: Resolver;
    dp: DataPlane;
    server: SupervisorServer;
    loop: RejectLoop;
    faults: ChainedLog;
    events: EventLog;
    stream: EventStream;
    reconciled: Supervisor['reconciled'];
    live: { active: boolean };
  }) {
    this.events = x.events;
    this.stream = x.stream;
    this.live = x.live;
    this.op = x.o.op;
    this.stateDir = x.o.stateDir;
    this.dir = opDir(x.o.stateDir, x.o.op);
    this.socketPath = path.join(this.dir, 'supervisor.sock');
    this.record = x.record;
    this.resolver = x.resolver;
    this.dp = x.dp;
    this.server = x.server;
    this.loop = x.loop;
    this.faults = x.faults;
    this.detachOnExit = !!x.o.detachOnExit;
    this.reconciled = x.reconciled;
    this.tornFaultLine = !!x.faults.torn;
  }

  /** Create or reopen the operation, attach (or re-open) the hooks, serve. */
  static async start(o: SupervisorOptions): Promise<Supervisor> {
    const cgroup = resolveCgroupPath(o.cgroup);
    const sock = path.join(opDir(o.stateDir, o.op), 'supervisor.sock');
    if (Buffer.byteLength(sock) > 107) {
      throw new GenseeError('E_USAGE', `socket path ${sock} is ${Buffer.byteLength(sock)} bytes; unix sockets allow 107: use a shorter --state-dir`);
    }
    const ownerUid = o.ownerUid ?? 0;
    const me = { pid: process.pid, start_time_ticks: readStartTimeTicks(process.pid) ?? 0 };
    let existing: OperationRecord | null = null;
    try {
      existing = await openOperation(o.stateDir, o.op);
    } catch (e) {
      if (!(e instanceof GenseeError && e.code === 'E_UNKNOWN_OP')) throw e;
    }
    if (o.startIntent && existing && existing.totals.allow === 0 && Object.keys(existing.totals.deny).length === 0) existing = null;
    if (existing && existing.cgroup !== cgroup) {
      throw new GenseeError('E_OP_EXISTS', `operation ${o.op} exists for cgroup ${existing.cgroup}, not ${cgroup}`);
    }
    // a pin dir without its hooks is a partial one: refused, nothing created
    // (an attach the caller started made the pin dir: not pinned before)
    const pinned = !o.attaching && fs.existsSync(pinDirFor(o.op));
    if (pinned && !hooksAttached(o.op)) {
      throw new GenseeError('E_STATE', `operation ${o.op} has a partial pin dir ${pinDirFor(o.op)}; run 'gensee hooks detach --op ${o.op}'`);
    }
    // each resource opened through the stack is undone, newest first, if a later step fails
    const stack = new OpenStack();
    const servedGrants: { protocol: 'udp' | 'tcp'; address: string; port: number }[] = [];
    // faults.jsonl failing before the supervisor exists: told once it does
    const failHook: { fn: (e: unknown) => void; early: unknown } = { fn: (e) => (failHook.early ??= e), early: null };
    try {
      // hooks first: if they cannot be attached nothing else is created;
      // hooks this call attached come off again, pre-existing pins stay (failing closed)
      if (!pinned) {
        // the load and the verifier on a worker thread; this one warms the
        // resolver meanwhile (issue 15: before any fault, off the workload's calls)
        const attaching = o.attaching ?? attachHooksAsync(o.op, cgroup, { guardParent: o.guardParent });
        try {
          warmResolver();
          mark('sup: resolver warmed (the attach still running)');
        } finally {
          await stack.open('hooks', () => attaching, () => detachHooks(o.op));
        }
      }
      warmResolver(); // with hooks pinned already: here, still before any fault
      mark('sup: hooks attached, resolver warmed');
      const record = await createOperation(
        o.stateDir,
        { id: o.op, owner_uid: ownerUid, cgroup, policy_hash: o.policy.hash, resolver: me, peers: o.peers ?? existing?.peers ?? [], mode: o.audit ? 'audit' : 'enforce' },
        { reopen: true },
      );
      const key = await readKey(o.stateDir, o.op);
      mark('sup: key read');
      const dp = await stack.open('data plane', () => DataPlane.open(o.op), (x) => x.close());
      // bind/listen and AF_UNIX rules: the kernel holds exactly the policy's
      dp.setRules(o.policy.policy.listen, o.policy.policy.unix);
      // leases recorded in another boot expire on a clock that has started again: left out
      mark('sup: data plane open');
      const otherBoot: LeaseRecord[] = [];
      let net = await readNetwork(o.stateDir, o.op, { dropped: otherBoot });
      net = beginGeneration(net, existing ? (existing.policy_hash === o.policy.hash ? 'restart' : 'policy_change') : 'start');
      net = await writeNetwork(o.stateDir, o.op, net);
      const network = new NetworkBackend({ stateDir: o.stateDir, op: o.op, dp, policy: o.policy.policy, record: net });
      const reconciled = await reconcileLeases(network, dp);
      reconciled.dropped.push(...otherBoot.map(leaseKey));
      mark('sup: leases reconciled');
      const dir = opDir(o.stateDir, o.op);
      // group commit without a window: a batch forms while the previous fdatasync runs
      const hub = new LogHub();
      // the syncer thread writes its lines: every answer and lease install waits for durability anyway
      const faults = await stack.open(
        'faults.jsonl',
        () =>
          ChainedLog.open(path.join(dir, 'faults.jsonl'), {
            onLine: (seq, text) => hub.publish('faults', seq, text),
            syncerWrites: true,
            // one fdatasync for the faults being decided together (gensee_fdatasync_seconds)
            siblingDelayUs: siblingDelayUs(),
            onFail: (e) => failHook.fn(e),
          }),
        (x) => x.close(),
      );
      hub.setDrain('faults', () => faults.drain());
      // a resolver that died left its open faults unanswered: say so, first
      mark('sup: faults.jsonl open');
      const onError = quiet(o.onError ?? ((e: Error) => process.stderr.write(`gensee: ${e.message}\n`)));
      // the filesystem every operation of this state dir shares: below its
      // reserve what the workload causes is counted, not written; below half
      // of it no new lease is granted (src/state/space.ts)
      const space = new StateSpace(dir);
      space.onChange((r, was) => {
        const kib = (n: number) => `${Math.floor(n / 1024)} KiB`;
        onError(
          new Error(
            r.level === 'ok'
              ? `operation ${o.op}: state filesystem has ${kib(r.free)} free again (reserve ${kib(r.reserve)}): refusals are written again`
              : r.level === 'low'
                ? `operation ${o.op}: state filesystem of ${dir} has ${kib(r.free)} free, at or below its reserve of ${kib(r.reserve)}: refusals are counted, not written, until space returns`
                : `operation ${o.op}: state filesystem of ${dir} has ${kib(r.free)} free, below half its reserve of ${kib(r.reserve)}: new leases are refused (fail closed) until space returns`,
          ),
        );
        try {
          faults.appendTicket({ kind: 'state_disk', level: r.level, was, free: r.free, reserve: r.reserve }, { sync: true, defer: true });
        } catch (e) {
          onError(e as Error);
        }
      });
      const events = await stack.open('events.jsonl', () => EventLog.open(dir, { hub, onError, low: () => space.low }), (x) => x.close());
      mark('sup: events.jsonl open');
      let carry: CarriedFault[] | null = null;
      if (existing) {
        // carried faults are decided afresh: a lease their old resolver may
        // have put in the kernel without a resolution line goes, as for any
        const open = o.carryOpenFaults ? await openFaultsOf(faults.path) : { carried: [], other: [] };
        const carriedIds = new Set(open.carried.map((c) => c.faultId));
        const abandoned = await closeOpenFaults(faults, 'resolver_died', { except: carriedIds });
        const intents = [...abandoned.intents, ...(carriedIds.size ? await intentsOf(faults.path, carriedIds) : [])];
        const removed = await removeUnanswered(network, dp, intents);
        reconciled.removed.push(...removed);
        if (abandoned.faults.length) {
          onError(new Error(`${abandoned.faults.length} fault(s) left open by a resolver that died are closed as abandoned; ${removed.length} unanswered lease(s) removed`));
        }
        if (o.carryOpenFaults) carry = open.carried;
      }
      const live = { active: true };
      const resolver = new Resolver({
        scope: { id: o.op, cgroup, peers: record.peers, active: () => live.active },
        key,
        faults,
        network,
        space,
        audit: o.audit === true,
      });
      resolver.on('backend_error', onError);
      if (carry) resolver.takeover = new Takeover({ carried: carry, deadlineMs: o.policy.policy.fault_deadline_ms, now: () => loadAddon().bootNs() });
      const ev = events;
      const tools = new ToolCgroups();
      // the sampler's last reading, its control socket; the nft table goes with hooks this call attached
      const envelope = await stack.open('envelope', () => Envelope.open({
        low: () => space.low,
        stateDir: o.stateDir,
        op: o.op,
        cgroup,
        dp,
        network,
        policyHash: o.policy.hash,
        startReason: net.generations[net.generations.length - 1].reason,
        ownerUid,
        key,
        nft: o.nft,
        intervalMs: o.sampleIntervalMs,
        onError,
        refusals: resolver,
        hub,
        servedPolicy: (p) => withServedGrants(p, servedGrants),
        routes: operationCommands({ events: ev, tools, resolver, op: o.op, faults }),
      }), (x) => x.stop({ removeNft: !pinned }));
      mark('sup: envelope open');
      const recorder = envelope.recorder;
      reportResolver(resolver, { events: ev, countRefusal: (t, reason) => recorder.countRefusal(t, reason), countAudit: (t, reason) => recorder.countRefusal(t, reason, 'audit_allowed') });
      // the resolver's installs are reported to the envelope's ledger (src/envelope/installs.ts)
      network.reportTo(envelope.installs);
      mark('sup: resolver ready');
      const server = await stack.open(
        'supervisor.sock',
        async () => {
          const x = new SupervisorServer(resolver, { socketPath: path.join(dir, 'supervisor.sock'), ownerUid, leasesFd: dp.raw.leasesFd() });
          await x.listen();
          return x;
        },
        (x) => x.close(),
      );
      mark('sup: supervisor.sock listening');
      const token = await ensureToken(dir);
      let dropSeq = 0;
      // gensee_fdatasync_seconds: the fault log's syncer, live (a failed or closed log: none)
      const surface = operatorSurface({ stateDir: o.stateDir, op: o.op, dir, fdatasync: () => (faults.failure ? null : faults.syncStats) });
      const stream = await stack.open('events.sock', () => startEventStream({
        dir,
        hub,
        token,
        listen: o.listen,
        routes: surface.routes,
        ownerUid,
        // a wrong or missing token is a refused peer like any other: faults.jsonl and a peer_refused event
        onRefused: (r) => void resolver.refuse('unauthenticated_peer', `events.sock: HTTP ${r.status}: ${r.reason} (${r.peer})`, { via: 'socket', socket: 'events.sock' }).catch(onError),
        onDropped: (d) => {
          try {
            faults.appendTicket({ kind: 'subscriber_dropped', fault_id: `stream-drop-${process.pid}-${++dropSeq}`, peer: d.peer, reason: d.reason, queued_bytes: d.queued_bytes, sent: d.sent }, { sync: true });
          } catch (e) {
            onError(e as Error);
          }
        },
      }), (x) => x.close());
      mark('sup: events.sock listening');
      let dns: DnsService | null = null;
      if (o.dns) {
        const d = o.dns;
        dns = await stack.open('dns stub', () => startOperationDns(o.op, d, { cgroup, resolver, network, events: ev, recorder, onError }), (x) => x.close());
        // the stub's address is the workload's to reach: a standing grant beside the policy's
        const served = [
          { protocol: 'udp' as const, address: dns.host, port: dns.port },
          { protocol: 'tcp' as const, address: dns.host, port: dns.port },
        ];
        servedGrants.push(...served);
        network.setPolicy(withServedGrants(network.currentPolicy, served));
        // in the kernel before anyone is told the stub serves (issue 25): a
        // first query must not meet EPERM while its grant waits for a fault
        const family = dns.host.includes(':') ? ('ipv6' as const) : ('ipv4' as const);
        for (const g of served) await network.ensureGrant({ family, ...g });
      }
      mark('sup: dns');
      const m = o.metrics;
      const metrics = m ? await stack.open('metrics', () => surface.listenMetrics(m), (x) => x.close()) : null;
      const loop = startRejectLoop(dp, resolver, onError, ev, tools);
      const sup = new Supervisor({ o, record, resolver, dp, server, loop, faults, events: ev, stream, reconciled, live });
      sup.envelope = envelope;
      sup.dns = dns;
      sup.metrics = metrics;
      sup.onError = onError;
      sup.space = space;
      failHook.fn = (e) => sup.enterFailed('faults.jsonl', e);
      if (failHook.early) sup.enterFailed('faults.jsonl', failHook.early);
      // events.jsonl and counters.jsonl fail without waking anyone: looked at twice a second
      sup.health = setInterval(() => {
        if (sup.events.chain.failure) sup.enterFailed('events.jsonl', sup.events.chain.failure);
        else if (sup.envelope?.recorder.log.failure) sup.enterFailed('counters.jsonl', sup.envelope.recorder.log.failure);
      }, 500);
      sup.health.unref();
      mark('sup: ready');
      stack.release(); // the supervisor owns them now: stop() closes them
      return sup;
    } catch (e) {
      await stack.disposeAll();
      throw e;
    }
  }

  private onError: (e: Error) => void = () => undefined;
  private space: StateSpace | null = null;
  private health: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  /** the failed state: set while an evidence log cannot be written */
  failure: { since: string; log: string; error: string; retries: number } | null = null;

  /**
   * An evidence log failed (ENOSPC, EROFS, EIO): fail closed. Hooks stay;
   * every request is denied at once, unrecorded and counted; one stderr
   * line; the marker `status` and `ls` read; the disk retried with backoff
   * (250 ms doubling to 5 s) until every log takes writes again.
   */
  enterFailed(log: string, e: unknown): void {
    if (this.stopped || this.failure) return;
    const err = e as NodeJS.ErrnoException & { errno?: number };
    const errno = typeof err?.errno === 'number' ? Math.abs(err.errno) : 0;
    const name = err?.code ?? (Object.entries(os.constants.errno).find(([, v]) => v === errno)?.[0] || 'EIO');
    this.failure = { since: new Date().toISOString(), log, error: `${name}: ${err?.message ?? String(e)}`.slice(0, 300), retries: 0 };
    this.resolver.setFailed(true);
    writeFailedMarker(this.stateDir, this.op, {
      pid: process.pid,
      start_time_ticks: this.record.resolver?.start_time_ticks,
      cgroup: this.record.cgroup,
      since: this.failure.since,
      log,
      error: this.failure.error,
    });
    this.onError(
      new Error(
        `operation ${this.op}: evidence log ${log} cannot be written (${name}): FAILED, failing closed — hooks stay attached, every request is denied and counted, nothing new is allowed; retrying the disk, resuming by itself when writes succeed`,
      ),
    );
    if (process.env[EVIDENCE_FAILURE_ENV] === 'exit') {
      process.stderr.write(`gensee: ${EVIDENCE_FAILURE_ENV}=exit: exiting ${EXIT_EVIDENCE_FAILED}; the hooks stay pinned, failing closed (gensee stop ends the operation)\n`);
      process.exit(EXIT_EVIDENCE_FAILED);
    }
    this.scheduleRetry(250);
  }

  private scheduleRetry(ms: number): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => void this.retryDisk(ms), ms);
    this.retryTimer.unref();
  }

  /** one try of the disk: reopen every failed log, record the failure and what it cost, resume */
  private async retryDisk(ms: number): Promise<void> {
    this.retryTimer = null;
    const was = this.failure;
    if (!was || this.stopped) return;
    try {
      // room first: on a filesystem with a page's slack a probe line can
      // fit where the next lease's lines would not (no flapping)
      if (this.space && this.space.read(true).level === 'critical') throw new Error('still below half the reserve');
      this.faults.reopen();
      this.events.reopen();
      this.envelope?.recorder.log.reopen();
    } catch {
      was.retries++;
      this.scheduleRetry(Math.min(ms * 2, 5000));
      return;
    }
    // a write must succeed, durably, before anything is served again: the
    // failure's own record first (opening a file needs no space; writing does)
    try {
      this.faults.appendTicket({ kind: 'evidence_failed', failed_at: was.since, log: was.log, error: was.error, retries: was.retries }, { sync: true });
      await this.faults.flushNow();
    } catch {
      was.retries++;
      this.scheduleRetry(Math.min(ms * 2, 5000));
      return;
    }
    // served from here; the record says how many requests were denied
    // meanwhile (exactly: counted up to this very turn) and which leases
    // left the kernel because their answer could not be made durable
    this.failure = null;
    const denied = this.resolver.setFailed(false);
    const undurable = this.resolver.undurable.splice(0);
    try {
      this.faults.appendTicket({ kind: 'evidence_resumed', failed_at: was.since, log: was.log, denied, undurable_leases: undurable }, { sync: true });
      const abandoned = await closeOpenFaults(this.faults, 'evidence_failed');
      await removeUnanswered(this.resolver.network, this.dp, abandoned.intents).catch(() => undefined);
    } catch (e) {
      this.resolver.undurable.unshift(...undurable);
      this.enterFailed(was.log, e);
      return;
    }
    clearFailedMarker(this.stateDir, this.op);
    this.onError(new Error(`operation ${this.op}: evidence logs take writes again after ${was.retries + 1} tries: serving again (${denied} request(s) were denied while failed)`));
  }

  /** the faults carried over from the resolver this one took over from (carryOpenFaults), not yet matched */
  get carriedFaults(): string[] {
    return this.resolver.takeover?.carriedIds ?? [];
  }

  /**
   * The takeover is over (its drained calls came, or never will): stop
   * matching; the carried faults whose call never came again are closed as
   * abandoned (resolver_died). Returns their ids.
   */
  async settleTakeover(): Promise<string[]> {
    const t = this.resolver.takeover;
    if (!t) return [];
    const left = t.settle();
    this.resolver.takeover = null;
    if (left.length === 0) return [];
    const abandoned = await closeOpenFaults(this.faults, 'resolver_died', { only: new Set(left) });
    await removeUnanswered(this.resolver.network, this.dp, abandoned.intents).catch(() => undefined);
    return abandoned.faults;
  }

  /**
   * Hooks only (gensee supervise): once the ring's unreleased records have
   * been read again, a carried hook fault whose record was not among them
   * will not come: settle the takeover (those are closed as abandoned).
   */
  async settleAfterReplay(): Promise<string[]> {
    await this.loop.replayed;
    return this.settleTakeover();
  }

  /** One adapter record in faults.jsonl (resolver_takeover, fdkeep_refused); resolves once durable. */
  recordFault(fields: Record<string, unknown>): Promise<void> {
    return this.faults.append(fields);
  }

  /** What this operation did, for the summary `gensee run` and the OCI listener print. */
  /**
   * faults.jsonl's last line as `gensee verify --anchor` takes it
   * (FILE:LINE:HASH), once everything written so far is durable; null while
   * the log is empty or has failed. Kept elsewhere, it shows any later cut
   * off the end.
   */
  async faultsAnchor(): Promise<string | null> {
    const line = this.faults.seq;
    const hash = this.faults.lastHash;
    if (line === 0) return null;
    try {
      await this.faults.flushNow();
    } catch {
      return null; // a log that failed has no line to vouch for; stop() reports the failure
    }
    return `faults.jsonl:${line}:${hash}`;
  }

  summary(notifier: { fastPath: number; slowPath: number; viaLeader?: number }): OperationSummary {
    const st = this.resolver.stats;
    return {
      faults: st.faults,
      leases_installed: st.retry,
      continued: st.continue,
      delegated: st.delegate,
      denied: st.deny,
      refused: st.refused,
      fast_path: notifier.fastPath,
      paused: notifier.slowPath,
      ...(notifier.viaLeader ? { via_leader: notifier.viaLeader } : {}),
      destinations: this.dp.readCounters().map((c) => ({ destination: describeDestination(c), verdict: c.verdict, count: Number(c.count) })),
      evidence: this.dir,
    };
  }

  /**
   * The workload has ended (its cgroup killed and seen empty, so no hook
   * can add an event): every hook event it caused is handed to the reject
   * loop now, not when the ring's poll comes round, and its resolution
   * line is written when this resolves.
   */
  async drainHookEvents(): Promise<void> {
    this.dp.drainEvents();
    await this.loop.idle();
  }

  /**
   * Stop serving. Hooks stay pinned and failing closed unless detachOnExit:
   * then the whole cgroup is killed and seen empty first, while it is still
   * bounded and served, and the hooks come off last. If it does not empty,
   * the hooks stay and stop() throws once the rest is stopped.
   */
  async stop(opts: { close?: boolean; leave?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // leave: a successor takes over (gensee upgrade / SIGHUP): nothing is killed or detached, whatever detachOnExit says
    const detach = this.detachOnExit && !opts.leave;
    if (this.health) clearInterval(this.health);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    // a log that failed (the failed state, or just now): the disk may take
    // writes again, and reopening records a torn last line and lets the
    // closing lines in; if it still refuses, the next opener (gensee stop,
    // a restart) records them
    const faultsFailed = this.failure !== null || this.faults.failure !== null;
    if (this.failure) clearFailedMarker(this.stateDir, this.op);
    for (const reopen of [() => this.faults.reopen(), () => this.events.reopen(), () => this.envelope?.recorder.log.reopen()]) {
      try {
        reopen();
      } catch {
        /* still failing */
      }
    }
    if (faultsFailed && !this.faults.failure) await closeOpenFaults(this.faults, 'evidence_failed').catch(() => undefined);
    let notEmptied: Error | null = null;
    if (detach) {
      try {
        await killCgroupAndWait(this.record.cgroup);
      } catch (e) {
        notEmptied = e as Error;
      }
    }
    mark('stop: begin');
    this.loop.stop();
    await this.server.close();
    await this.loop.idle();
    await this.dns?.close();
    await this.metrics?.close();
    await this.stream.close();
    // a full or read-only disk must not keep the hooks and the cgroup: the
    // records are written if they can be, and their failure reported after the rest
    mark('stop: servers closed');
    let unrecorded: Error | null = null;
    // final harvest; the nft table goes with the hooks (close or detach)
    await this.envelope?.stop({ removeNft: !!opts.close || (detach && !notEmptied) }).catch((e: Error) => (unrecorded ??= e));
    mark('stop: envelope stopped');
    await this.resolver.network.flush().catch((e: Error) => (unrecorded ??= e));
    // the suppressed count still held: a closing line, in the reserve
    this.resolver.closeBudget();
    if (process.env.GENSEE_DEBUG) {
      const s = this.faults.syncStats;
      process.stderr.write(
        `gensee: faults.jsonl group commit: ${s.syncs} fdatasync for ${s.lines} lines, mean ${s.syncs ? (s.syncUs / s.syncs).toFixed(0) : 0} us, max ${s.maxSyncUs.toFixed(0)} us, ${s.slowSyncs} over 1 ms; ` +
          `${s.siblingWaits} held for siblings, mean ${s.siblingWaits ? (s.siblingWaitUs / s.siblingWaits).toFixed(0) : 0} us\n`,
      );
    }
    mark('stop: network flushed');
    await this.faults.close();
    // only the operation ending for good (close: `gensee run` ending with its
    // workload, an OCI container gone) clears attention in force; a restart
    // or a supervise leaving its workload running does not
    await this.events.close({ stopping: !!opts.close });
    mark('stop: logs closed');
    this.dp.close();
    try {
      if (opts.close) {
        this.live.active = false;
        await updateOperation(this.stateDir, this.op, { state: 'closed', resolver: null });
      } else {
        await updateOperation(this.stateDir, this.op, { resolver: null });
      }
    } catch (e) {
      unrecorded ??= e as Error;
    }
    if (detach) {
      try {
        // again, right before the hooks come off: a process moved in while
        // the supervisor stopped dies too (an empty cgroup is not written)
        if (!notEmptied) await killCgroupAndWait(this.record.cgroup);
      } catch (e) {
        notEmptied = e as Error;
      }
      if (notEmptied) throw new GenseeError('E_KERNEL', `hooks left pinned, failing closed: the cgroup did not empty: ${notEmptied.message}`);
      detachHooks(this.op);
    }
    if (unrecorded) throw new GenseeError('E_STATE', `operation ${this.op} stopped, but operation.json could not be updated: ${unrecorded.message}`);
  }
}

/**
 * The same error again within a minute is not said again (a full disk
 * fails every write the same way: one line, not one per second or per
 * request); the next time it is said, with how many were not.
 */
function quiet(say: (e: Error) => void, windowMs = 60_000): (e: Error) => void {
  const seen = new Map<string, { at: number; skipped: number }>();
  return (e: Error) => {
    const key = String(e?.message ?? e).replace(/[0-9]+/g, '#').slice(0, 120);
    const now = Date.now();
    const s = seen.get(key);
    if (s && now - s.at < windowMs) {
      s.skipped++;
      return;
    }
    if (seen.size > 256) seen.clear();
    seen.set(key, { at: now, skipped: 0 });
    say(s?.skipped ? Object.assign(new Error(`${e.message} (and ${s.skipped} more like it in the last minute)`), { code: (e as NodeJS.ErrnoException).code }) : e);
  };
}

/**
 * The operation's DNS stub: on the address asked for, or on one of the
 * operation's own loopback addresses (the next one when one is taken).
 */
async function startOperationDns(
  op: string,
  d: { upstream: Upstream; listen?: { host: string; port: number } },
  x: { cgroup: string; resolver: Resolver; network: NetworkBackend; events: EventLog; recorder: CounterRecorder; onError: (e: Error) => void },
): Promise<DnsService> {
  const { startDnsService, stubAddressFor } = await import('./dns/service');
  for (let attempt = 0; ; attempt++) {
    const listen = d.listen ?? { host: stubAddressFor(op, attempt), port: 53 };
    try {
      return await startDnsService({ listen, upstream: d.upstream, policy: () => x.network.currentPolicy, audit: x.resolver.audit, ...x });
    } catch (e) {
      if (d.listen || attempt >= 7 || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    }
  }
}
