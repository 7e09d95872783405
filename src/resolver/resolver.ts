// The resolver: validate → write-ahead fault line → subject check → route by
// effect → backend → resolution line (durable) → lease into the kernel →
// signed answer. Every fault and every refusal lands in faults.jsonl;
// nothing is answered, and no granted lease is usable, before its
// resolution line is durable.
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import type { DenyReason } from '../errors';
import type { Fault, Lease, Resolution } from '../protocol/types';
import { effectType } from '../protocol/types';
import { faultToJson, resolutionToJson } from '../protocol/json';
import { MacKey } from '../protocol/mac';
import type { ChainedLog } from '../evidence/chain';
import type { NetworkBackend, LeaseIntent, DirectPut } from '../backends/network';
import type { NativeGrantDone } from '../addon';
import { checkSubject } from './subject';
import { ExecutorBackend } from '../backends/executor';
import type { StateSpace } from '../state/space';
import { RefusalBudget, REFUSALS_PER_SECOND } from './budget';
import type { Takeover, TakeoverMatch } from './takeover';

/**
 * A grant whose commit (the lease's put, its read-back, the answer) the
 * socket server runs in C on the syncer thread, right after the fdatasync
 * that makes its lease_intent and resolution lines durable (addon/sup_server.h
 * gs_sup_server_answer_grant): no turn of the event loop between the durable
 * line and the answer. Its outcome comes back to done(); a caller that
 * could not hand it over calls fallback() instead, which commits in
 * JavaScript as before (the promise: the answer may go).
 */
export interface GrantHandoff {
  key: Buffer;
  value: Buffer;
  done(d: NativeGrantDone): void;
  fallback(): Promise<void>;
}

export interface PeerInfo {
  pid: number;
  uid: number;
  gid: number;
}

export interface FaultContext {
  /** how the fault reached us */
  via: 'socket' | 'cgroup_hook' | 'inproc';
  peer?: PeerInfo;
  /** which gensee socket, when via is socket (default supervisor.sock) */
  socket?: 'supervisor.sock' | 'control.sock' | 'events.sock';
  /** the executor tool call whose cgroup raised the fault (a hook refusal): named on the fault line */
  tool?: { tool_id: string; call_id: string };
  /**
   * a hook refusal: the ring (map id) and position its record was read
   * from, written on its line as ring_map/ring_pos so a successor replaying
   * records nobody acked knows which are already in the log
   */
  ring?: { map: number; pos: number };
}

/** the ring_map/ring_pos fields of a line for a hook record (none otherwise) */
function ringFields(ctx: FaultContext): { ring_map?: number; ring_pos?: number } {
  return ctx.ring ? { ring_map: ctx.ring.map, ring_pos: ctx.ring.pos } : {};
}

export interface ResolverScope {
  id: string;
  cgroup: string;
  peers: readonly string[];
  /** false once the operation is closed */
  active: () => boolean;
}

export interface ResolverOptions {
  scope: ResolverScope;
  key: Buffer;
  faults: ChainedLog;
  network: NetworkBackend;
  /** the state filesystem's free space and reserve (src/state/space.ts); without it, only the rate is limited */
  space?: StateSpace;
  /** refused faults written in full per second (default REFUSALS_PER_SECOND) */
  refusalsPerSecond?: number;
  /**
   * audit mode (`gensee run --audit`): a network fault of this operation the
   * policy would deny gets a short lease instead, recorded audit_allowed
   * with the reason it would have been denied. Nothing else changes: a
   * fault of another operation, of a process outside it, a non-network
   * effect, a malformed frame is refused as in enforcing mode.
   */
  audit?: boolean;
}

export interface ResolvedEvent {
  fault: Fault;
  resolution: Resolution;
  /** for a delegation to an executor: the tool that takes the effect over */
  delegateTool?: string;
  ctx: FaultContext;
  micros: number;
  /** a refusal counted into a suppressed line instead of written (src/resolver/budget.ts) */
  suppressed?: boolean;
}

/** a DNS question the stub answered (a host rule's, or under audit one no rule covers: would_deny) */
export interface DnsAnsweredEvent {
  name: string;
  qtype: string;
  rcode: string;
  addresses: string[];
  leases: number;
  would_deny: string | null;
}

/** a DNS question the stub refused or failed (its control: dns/no_rule, dns/budget, dns/qtype, …) */
export interface DnsRefusedEvent {
  name: string | null;
  qtype: string | null;
  rcode: string;
  control: string;
  detail: string;
}

/**
 * Emits 'dns_answered' (DnsAnsweredEvent) and 'dns_refused' (DnsRefusedEvent) for the DNS stub's questions,
 * 'resolved' (ResolvedEvent) and 'refused' ({reason, detail, ctx}) for
 * live output; the evidence is in faults.jsonl either way.
 */
/** the process's name (/proc/PID/comm) while it waits for its answer; nothing when it is gone */
function commField(f: Fault): { comm?: string } {
  const pid = f.subject.process?.pid;
  if (!pid) return {};
  try {
    return { comm: fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim().slice(0, 16) };
  } catch {
    return {};
  }
}

/** which stats counter a resolution counts in: an audit lease apart from the policy's leases */
function statKey(r: Resolution): 'continue' | 'retry' | 'delegate' | 'deny' | 'audit' {
  if (r.reason === 'audit_allowed') return 'audit';
  return r.action === 'continue_already_authorized' ? 'continue' : r.action === 'retry_after_lease' ? 'retry' : r.action;
}

export class Resolver extends EventEmitter {
  readonly scope: ResolverScope;
  /** the operation's key, its HMAC pads computed once (src/protocol/mac.ts) */
  private readonly macKey: MacKey;
  private readonly faults: ChainedLog;
  readonly network: NetworkBackend;
  private readonly executor: ExecutorBackend;
  readonly stats = { faults: 0, continue: 0, retry: 0, delegate: 0, deny: 0, refused: 0, suppressed: 0, audit: 0 };
  /** grants' installs so far: put by the commit path in C (GrantHandoff), or by JavaScript */
  readonly commits = { inC: 0, inJs: 0 };
  /** audit mode (ResolverOptions.audit) */
  readonly audit: boolean;
  private readonly space: StateSpace | undefined;
  private readonly budget: RefusalBudget;
  /** faults between their fault line and their decision */
  private deciding = 0;
  /**
   * The evidence cannot be written (src/supervisor.ts, failed state): every
   * request is denied at once, unrecorded, and counted here (the count is
   * written when the disk takes writes again).
   */
  private failedMode: { denied: number } | null = null;
  /** leases whose resolution could not be made durable: never put in the kernel, to be recorded on resume */
  readonly undurable: { fault_id: string; lease: Record<string, unknown>; at: string; installed: false; error: string }[] = [];
  /** writes the held suppressed count once its second is over (a quiet spell after a flood) */
  private readonly budgetTimer: NodeJS.Timeout;
  /**
   * hook records counted into the held suppressed count: the last one's
   * ring position goes on the suppressed line (a successor replaying the
   * ring skips what a line already counts), and each waiter (a ring record
   * acked only once its count is on disk) is told when that line is durable
   */
  private heldRing: { map: number; pos: number } | null = null;
  private heldWaiters: (() => void)[] = [];
  /** calls drained from before a takeover (src/resolver/takeover.ts); null: none */
  takeover: Takeover | null = null;
  /** tests only (GENSEE_TEST_STALL_FAULT_MS, read nowhere else): stall after the fault line is written, before deciding */
  private readonly testStallMs = Number(process.env.GENSEE_TEST_STALL_FAULT_MS ?? '') || 0;

  constructor(o: ResolverOptions) {
    super();
    this.scope = o.scope;
    this.macKey = new MacKey(o.key);
    this.faults = o.faults;
    this.network = o.network;
    this.executor = new ExecutorBackend(() => o.network.currentPolicy);
    this.space = o.space;
    this.audit = o.audit === true;
    this.budget = new RefusalBudget(o.refusalsPerSecond ?? REFUSALS_PER_SECOND);
    this.budgetTimer = setInterval(() => this.flushSuppressed(Date.now()), 1000);
    this.budgetTimer.unref();
  }

  /** enter (true) or leave the failed state; leaving returns the requests denied meanwhile */
  setFailed(on: boolean): number {
    const n = this.failedMode?.denied ?? 0;
    this.failedMode = on ? (this.failedMode ?? { denied: 0 }) : null;
    return n;
  }

  private countFailed(): void {
    if (this.failedMode) this.failedMode.denied++;
  }

  get failed(): boolean {
    return this.failedMode !== null;
  }

  /**
   * A resolution that granted a lease could not be made durable: the lease
   * never enters the kernel (it is put there only after its resolution line
   * is durable), the call is not answered (its client denies it), and the
   * grant is remembered for the record written on resume.
   */
  private leaseUndurable(r: Resolution, e: unknown): void {
    const l = r.lease;
    if (!l) return;
    this.undurable.push({
      fault_id: r.fault_id,
      lease: { ...l, expires_at_boot_ns: String(l.expires_at_boot_ns) },
      at: new Date().toISOString(),
      installed: false,
      error: (e as Error)?.message ?? String(e),
    });
  }

  /**
   * After the resolution line that grants a lease is durable: put the lease
   * in the kernel. An install that fails then is recorded (the durable line
   * says retry_after_lease; this one says the lease never got there) and
   * rejects: the call is not answered, and its client denies it.
   */
  private async commitLease(r: Resolution, commit: () => Promise<void>): Promise<void> {
    try {
      await commit();
      this.commits.inJs++;
    } catch (e) {
      const t = this.notInstalled(r, e);
      if (t !== null) await this.faults.whenDurable(t).catch(() => undefined);
      throw e;
    }
  }

  /**
   * A granted lease that did not get into the kernel after its durable
   * resolution line: reported, and recorded (lease_not_installed). The
   * line's ticket, or null when the log failed too (the failed state
   * records what it can).
   */
  private notInstalled(r: Resolution, e: unknown): number | null {
    this.emit('backend_error', e);
    try {
      return this.faults.appendTicket({ kind: 'lease_not_installed', fault_id: r.fault_id, error: ((e as Error)?.message ?? String(e)).slice(0, 300) }, { sync: true });
    } catch {
      return null;
    }
  }

  /**
   * Write the suppressed count still held (the operation stops; the closing
   * line uses the disk's reserve) and stop the timer. Later refusals are
   * still counted and written.
   */
  closeBudget(): void {
    clearInterval(this.budgetTimer);
    this.flushSuppressed(Date.now(), true);
  }

  /** a held suppressed count, as one line, when it is due (or now, with force) */
  private flushSuppressed(now: number, force = false): void {
    const h = this.budget.take(now, this.space?.low ?? false, force);
    if (!h) return;
    const ring = this.heldRing ? { ring_map: this.heldRing.map, ring_pos: this.heldRing.pos } : {};
    const waiters = this.heldWaiters;
    this.heldRing = null;
    this.heldWaiters = [];
    const release = () => waiters.forEach((w) => w());
    try {
      const t = this.faults.appendTicket({ kind: 'suppressed', ...h, ...ring }, { sync: true, defer: true });
      this.faults.whenDurable(t).then(release, release);
    } catch (e) {
      release();
      this.emit('backend_error', e);
    }
  }

  /**
   * Resolves once the suppressed count held now (if any) is in a durable
   * `suppressed` line: a hook record counted into it may be released from
   * the ring then (src/resolver/rejectloop.ts). With the state disk low the
   * count is held until space returns: it resolves at once (the ring must
   * not fill behind a held count; a resolver killed meanwhile loses that
   * count, as it did before rings were acked).
   */
  whenHeldWritten(): Promise<void> {
    if (!this.holdsCountToWrite()) return Promise.resolve();
    return new Promise((res) => this.heldWaiters.push(res));
  }

  /** a suppressed count is held that will be written when due (not held for space, not failed) */
  private holdsCountToWrite(): boolean {
    return this.budget.pending > 0 && !(this.space?.low ?? false) && !this.failedMode;
  }

  /**
   * Write the held suppressed count now, not when its second is over: the
   * ring records counted into it wait for that line before their room is
   * given back (a flood must not fill the ring behind it). Not with the
   * state disk low (the count is held for space).
   */
  releaseHeld(): void {
    if (this.holdsCountToWrite()) this.flushSuppressed(Date.now(), true);
  }

  /** a hook record counted into the held count: its ring position goes on the suppressed line */
  private noteHeld(ctx: FaultContext): void {
    if (ctx.ring && (!this.heldRing || this.heldRing.map !== ctx.ring.map || ctx.ring.pos > this.heldRing.pos)) this.heldRing = { ...ctx.ring };
  }

  /** may a refusal of this reason be written now? (else it is counted) */
  private admitRefusal(reason: string): boolean {
    const now = Date.now();
    const low = this.space?.low ?? false;
    this.flushSuppressed(now);
    return this.budget.admit(now, reason, low);
  }

  /**
   * What decide() would deny this fault for, without doing anything (no
   * line, no install); null when it might be allowed.
   */
  private preview(f: Fault): DenyReason | null {
    if (f.operation_id !== this.scope.id) return 'unknown_operation';
    if (!this.scope.active()) return 'operation_not_active';
    const bad = checkSubject(f.subject, this.scope);
    if (bad) return bad;
    switch (effectType(f.effect)) {
      case 'network':
        // under audit a policy denial is answered with a lease: not a refusal
        return !this.audit && this.network.wouldDeny(f.effect.network!) ? 'policy_denied' : null;
      case 'application':
        return null;
      default:
        return 'capability_fault_backend_unavailable';
    }
  }

  mac(r: Resolution): Buffer {
    return this.macKey.mac(r);
  }

  /** the fault log (the socket server answers once a line of it is durable) */
  get log(): ChainedLog {
    return this.faults;
  }

  /** Resolve and return once the resolution line is durable. */
  async resolve(fault: Fault, ctx: FaultContext): Promise<Resolution> {
    const r = await this.resolveTicket(fault, ctx);
    await r.durable;
    return r.resolution;
  }

  /**
   * Resolve up to the resolution line being written; `ticket` is that line's
   * ticket in the fault log, `durable` settles once it is on stable storage
   * (absent with deferSync). No answer may leave before then: the socket
   * server hands the ticket to the addon, which sends the answer right after
   * the covering fdatasync. The 'resolved' event (live output) is emitted
   * as the line is written.
   * deferSync: the line (and the request for its fdatasync) waits until
   * every request that arrived together has its line: before the event
   * loop's next turn, one write and one sync for all of them.
   */
  async resolveTicket(
    fault: Fault,
    ctx: FaultContext,
    opts: { deferSync?: boolean; handoff?: boolean } = {},
  ): Promise<{ resolution: Resolution; ticket: number; durable?: Promise<void>; ready?: Promise<void>; handoff?: GrantHandoff }> {
    const t0 = process.hrtime.bigint();
    this.stats.faults++;
    if (this.failedMode) {
      this.failedMode.denied++;
      return this.suppress(fault, ctx, 'backend_error', t0, opts.deferSync === true);
    }
    // a call drained from before a takeover: recorded under the fault the
    // old resolver opened for it (if any), denied if it waited too long
    const carried: TakeoverMatch | null = this.takeover?.match(fault) ?? null;
    if (carried) return this.resolveCarried(fault, ctx, carried, t0, opts);
    // the refusal budget: past this second's allowance, or with the state
    // disk below its reserve, a fault that would be denied is only counted
    // (no line; one suppressed line carries the count); below half the
    // reserve a fault that would be allowed is denied too (fail closed:
    // no new lease without room for its durable answer)
    const now = Date.now();
    const space = this.space?.read();
    const low = space !== undefined && space.level !== 'ok';
    let counted = false;
    // faults still being decided count against the allowance: a batch of
    // ring events arrives in one turn, before any of them has its answer
    if (low || this.budget.full(now, this.deciding)) {
      let reason = this.preview(fault);
      if (reason === null && space?.level === 'critical') reason = 'backend_error';
      if (reason !== null) {
        this.flushSuppressed(now);
        if (!this.budget.admit(now, reason, low, ctx.tool?.tool_id)) {
          this.noteHeld(ctx);
          return this.suppress(fault, ctx, reason, t0, opts.deferSync === true);
        }
        counted = true;
      }
    } else {
      this.flushSuppressed(now);
    }
    // write-ahead: the fault line precedes everything decided about it; it
    // shares the write(2) of the next line (a lease_intent or the
    // resolution) and becomes durable with its fdatasync (one for both)
    this.faults.appendTicket(
      {
        kind: 'fault',
        fault_id: fault.fault_id,
        via: ctx.via,
        peer: ctx.peer ?? null,
        ...(ctx.tool ? { tool_id: ctx.tool.tool_id, call_id: ctx.tool.call_id } : {}),
        ...ringFields(ctx),
        fault: faultToJson(fault),
      },
      { sync: false, defer: true },
    );
    if (this.testStallMs > 0) {
      // tests only: the fault line on disk, no answer yet (a resolver killed here leaves the fault open)
      await this.faults.flushNow();
      await new Promise((res) => setTimeout(res, this.testStallMs));
    }
    const { resolution: r, delegateTool, commit, direct } = await this.decideOrDeny(fault);
    let ticket: number;
    try {
      ticket = this.faults.appendTicket(
        {
          kind: 'resolution',
          fault_id: fault.fault_id,
          resolution: resolutionToJson(r),
          ...(delegateTool ? { delegate_tool: delegateTool } : {}),
          ...(r.action === 'deny' && r.reason === 'backend_error' ? { detail: 'backend failed; see supervisor log' } : {}),
          // who asked, for the report and `policy suggest` (an audit lease or a denial: not on the lease path's hot loop)
          ...(r.reason === 'audit_allowed' || r.action === 'deny' ? commField(fault) : {}),
        },
        // with deferSync it is written, and its fdatasync asked for, once
        // every request that arrived together has its line: before the event
        // loop's next turn (one write and one sync for the batch)
        { sync: true, defer: opts.deferSync === true },
      );
    } catch (e) {
      // the log failed under us: no lease without its durable answer
      this.leaseUndurable(r, e);
      this.countFailed();
      return this.suppress(fault, ctx, 'backend_error', t0, opts.deferSync === true);
    }
    // a plain grant for a caller that can answer from C: put and answered
    // on the syncer thread right after the covering fdatasync (GrantHandoff)
    const handoff = opts.handoff && commit && direct ? this.handoff(ticket, r, commit, direct) : undefined;
    const ready = handoff ? undefined : this.installWhenDurable(ticket, r, commit);
    // counted and announced as the line is written (a summary taken right
    // after the answer must include it; the live output needs no wake-up of
    // its own per fdatasync); the answer itself waits for durability
    this.stats[statKey(r)]++;
    if (r.action === 'deny' && !counted) this.budget.note(now);
    this.emit('resolved', { fault, resolution: r, ctx, delegateTool, micros: Number(process.hrtime.bigint() - t0) / 1000 } satisfies ResolvedEvent);
    // socket requests (deferSync) are answered by the addon once durable: no
    // JS waiter, except for a grant, answered once its lease is in the kernel
    if (handoff) return { resolution: r, ticket, handoff };
    if (ready) return { resolution: r, ticket, durable: ready, ready };
    const durable = opts.deferSync ? undefined : this.faults.whenDurable(ticket);
    return { resolution: r, ticket, durable };
  }

  /**
   * A call drained from before a takeover (src/resolver/takeover.ts). Its
   * lines are under the original fault id when the old resolver wrote a
   * fault line for it (no second fault line); the answer on the wire keeps
   * the id it was raised with (answered_as). Past fault_deadline_ms since
   * it arrived it is denied, reason resolver_restarted; else decided by
   * policy as any fault. Never suppressed: it closes an open fault.
   */
  private async resolveCarried(
    fault: Fault,
    ctx: FaultContext,
    m: TakeoverMatch,
    t0: bigint,
    opts: { deferSync?: boolean },
  ): Promise<{ resolution: Resolution; ticket: number; durable?: Promise<void>; ready?: Promise<void> }> {
    const logged: Fault = m.originalId ? { ...fault, fault_id: m.originalId } : fault;
    const takeover = { answered_as: fault.fault_id, arrived_at_boot_ns: String(m.arrivedNs), waited_ms: m.waitedMs, ...(m.originalId ? { carried: true } : {}) };
    if (!m.originalId) {
      this.faults.appendTicket({ kind: 'fault', fault_id: fault.fault_id, via: ctx.via, peer: ctx.peer ?? null, ...ringFields(ctx), fault: faultToJson(fault) }, { sync: false, defer: true });
    }
    let r: Resolution;
    let commit: (() => Promise<void>) | undefined;
    if (m.late) {
      r = { fault_id: logged.fault_id, action: 'deny', reason: 'resolver_restarted' };
    } else {
      ({ resolution: r, commit } = await this.decideOrDeny(logged));
    }
    let ticket: number;
    try {
      ticket = this.faults.appendTicket(
        {
          kind: 'resolution',
          fault_id: logged.fault_id,
          resolution: resolutionToJson(r),
          takeover,
          ...(m.late ? { detail: `waited ${m.waitedMs} ms for a resolver (restarted), past fault_deadline_ms` } : {}),
          ...(r.action === 'deny' ? commField(logged) : {}),
        },
        { sync: true, defer: opts.deferSync === true },
      );
    } catch (e) {
      this.leaseUndurable(r, e);
      this.countFailed();
      return this.suppress(fault, ctx, 'backend_error', t0, opts.deferSync === true);
    }
    const ready = this.installWhenDurable(ticket, r, commit);
    this.stats[statKey(r)]++;
    if (r.action === 'deny') this.budget.note(Date.now());
    this.emit('resolved', { fault: logged, resolution: r, ctx, micros: Number(process.hrtime.bigint() - t0) / 1000 } satisfies ResolvedEvent);
    // the wire answer names the id the call was raised with
    const wire: Resolution = { ...r, fault_id: fault.fault_id };
    if (ready) return { resolution: wire, ticket, durable: ready, ready };
    return { resolution: wire, ticket, durable: opts.deferSync ? undefined : this.faults.whenDurable(ticket) };
  }

  /** policy's decision on fault, counted in `deciding` while it runs; a backend that throws is a deny (backend_error) */
  private async decideOrDeny(fault: Fault): Promise<{ resolution: Resolution; delegateTool?: string; commit?: () => Promise<void>; direct?: DirectPut }> {
    this.deciding++;
    try {
      const { delegate_tool, commit, direct, ...d } = await this.decide(fault);
      return { resolution: { fault_id: fault.fault_id, ...d }, delegateTool: delegate_tool, commit, direct };
    } catch (e) {
      this.emit('backend_error', e);
      return { resolution: { fault_id: fault.fault_id, action: 'deny', reason: 'backend_error' } };
    } finally {
      this.deciding--;
    }
  }

  /**
   * A granted lease enters the kernel only once its resolution line
   * (ticket) is durable, and the answer goes only after that (the promise
   * returned); a line that never becomes durable grants nothing. undefined
   * when there is nothing to install.
   */
  private installWhenDurable(ticket: number, r: Resolution, commit: (() => Promise<void>) | undefined): Promise<void> | undefined {
    if (!commit) return undefined;
    const ready = this.faults.whenDurable(ticket).then(
      () => this.commitLease(r, commit),
      (e) => {
        this.leaseUndurable(r, e);
        throw e;
      },
    );
    // a caller that drops the answer still must not leave this unhandled
    ready.catch(() => undefined);
    return ready;
  }

  /**
   * The grant's commit handed to the caller's C side (GrantHandoff): the
   * tuple is in flight from here until the outcome comes back. What each
   * outcome leaves in the record is what the JavaScript path leaves:
   * installed: the lease recorded; not durable: the failed state's
   * undurable list; not installed: a lease_not_installed line.
   */
  private handoff(ticket: number, r: Resolution, commit: () => Promise<void>, direct: DirectPut): GrantHandoff {
    direct.begin();
    return {
      key: direct.key,
      value: direct.value,
      done: (d) => {
        if (d.outcome === 'installed' && d.back) {
          this.commits.inC++;
          return direct.installed(d.back);
        }
        direct.abandoned();
        if (d.outcome === 'not_durable') {
          this.leaseUndurable(r, Object.assign(new Error(`evidence log: ${d.detail}`), { errno: d.errno }));
        } else if (d.outcome === 'not_installed') {
          this.notInstalled(r, Object.assign(new Error(`lease not installed: ${d.detail}`), { errno: d.errno }));
        }
      },
      fallback: () => {
        direct.abandoned();
        return this.installWhenDurable(ticket, r, commit)!;
      },
    };
  }

  /** a refusal counted, not written: answered deny at once (a deny needs no durable line to be safe) */
  private suppress(fault: Fault, ctx: FaultContext, reason: DenyReason, t0: bigint, deferSync: boolean): { resolution: Resolution; ticket: number; durable?: Promise<void> } {
    const r: Resolution = { fault_id: fault.fault_id, action: 'deny', reason };
    this.stats.deny++;
    this.stats.suppressed++;
    this.emit('resolved', { fault, resolution: r, ctx, micros: Number(process.hrtime.bigint() - t0) / 1000, suppressed: true } satisfies ResolvedEvent);
    // ticket 0 is durable from the start: the addon answers at once
    return { resolution: r, ticket: 0, durable: deferSync ? undefined : Promise.resolve() };
  }

  /**
   * Record a fault another trusted component already decided (the
   * executor refusing a tool's write at call time): its fault line and its
   * resolution line, durable, announced like any resolution. Nothing is
   * answered: the component that decided has answered already.
   */
  async recordDecided(fault: Fault, r: Resolution, ctx: FaultContext): Promise<void> {
    this.stats.faults++;
    this.faults.appendTicket({ kind: 'fault', fault_id: fault.fault_id, via: ctx.via, peer: ctx.peer ?? null, fault: faultToJson(fault) }, { sync: false, defer: true });
    const ticket = this.faults.appendTicket({ kind: 'resolution', fault_id: fault.fault_id, resolution: resolutionToJson(r) }, { sync: true });
    this.stats[statKey(r)]++;
    this.emit('resolved', { fault, resolution: r, ctx, micros: 0 } satisfies ResolvedEvent);
    await this.faults.whenDurable(ticket);
  }

  private async decide(f: Fault): Promise<Omit<Resolution, 'fault_id'> & { delegate_tool?: string; commit?: () => Promise<void>; direct?: DirectPut }> {
    const deny = (reason: DenyReason) => ({ action: 'deny' as const, reason });
    if (f.operation_id !== this.scope.id) return deny('unknown_operation');
    if (!this.scope.active()) return deny('operation_not_active');
    const bad = checkSubject(f.subject, this.scope);
    if (bad) return deny(bad);
    switch (effectType(f.effect)) {
      case 'network':
        return this.network.resolve(f.effect.network!, { intent: (l) => this.intend(f.fault_id, l), audit: this.audit });
      case 'application':
        // a tool's write the executor is about to perform (src/backends/executor.ts)
        return this.executor.resolve(f);
      default:
        // No backend is connected for this effect type: never network
        // authority, never implicitly allowed.
        return deny('capability_fault_backend_unavailable');
    }
  }

  /**
   * The lease_intent line, appended before the resolution line that grants
   * the lease. It needs no fdatasync of its own: the lease enters the
   * kernel only once that resolution line is durable (installWhenDurable),
   * and the fdatasync that makes a line durable makes every line before it
   * in the file durable too, so the intent is on stable storage before the
   * kernel holds its lease, as ever, without a second wait. A resolver that
   * dies before the resolution line leaves the intent (if it reached the
   * disk) with an open fault; whoever takes over closes the fault as
   * abandoned and removes any lease on its tuple (src/evidence/abandon.ts).
   */
  private intend(faultId: string, lease: LeaseIntent): Promise<void> {
    return this.intendAll(faultId, [lease]);
  }

  /**
   * lease_intent lines for several leases, made durable with the line that
   * grants them (see intend). A failed log rejects: the decision becomes a
   * deny (backend_error), nothing is installed.
   */
  private async intendAll(faultId: string, leases: LeaseIntent[]): Promise<void> {
    for (const lease of leases) this.faults.appendTicket({ kind: 'lease_intent', fault_id: faultId, lease }, { sync: false, defer: true });
  }

  /**
   * A DNS answer for a name a host rule covers (src/dns/service.ts; every
   * forwarded question, NXDOMAIN and empty answers included): the
   * question (dns_query, written ahead), a lease_intent per lease, then the
   * answer line (dns_answer: the name, the CNAME chain, the addresses, the
   * leases), durable with the lines before it; only then each lease installed and
   * read back, before the answer reaches the workload. A resolver that dies in between leaves
   * the question open: whoever takes over closes it as abandoned and
   * removes its leases (src/evidence/abandon.ts).
   */
  async resolveName(
    q: { name: string; qtype: string; rcode?: string; truncated?: boolean; chain: string[]; addresses: { family: string; address: string; ttl: number }[]; rule: string; peer: string; would_deny?: string },
    install: (intents: (ls: LeaseIntent[]) => Promise<void>) => Promise<{ leases: Lease[]; commit?: () => Promise<void> }>,
  ): Promise<Lease[]> {
    const faultId = `dns-${process.pid}-${++this.dnsSeq}`;
    // audit: a name no rule covers, forwarded all the same; would_deny names the control that would have refused it
    const audit = q.would_deny !== undefined ? { audit_allowed: true, would_deny: q.would_deny } : {};
    this.faults.appendTicket({ kind: 'dns_query', fault_id: faultId, name: q.name, qtype: q.qtype, rule: q.rule, peer: q.peer, ...audit }, { sync: false, defer: true });
    let leases: Lease[] = [];
    let commit: (() => Promise<void>) | undefined;
    let error: string | null = null;
    try {
      ({ leases, commit } = await install((ls) => this.intendAll(faultId, ls)));
    } catch (e) {
      error = (e as Error).message;
      this.emit('backend_error', e);
    }
    const t = this.faults.appendTicket(
      {
        kind: 'dns_answer',
        fault_id: faultId,
        name: q.name,
        ...(q.rcode !== undefined ? { rcode: q.rcode } : {}),
        ...(q.truncated ? { truncated: true } : {}),
        chain: q.chain,
        addresses: q.addresses,
        ...audit,
        leases: leases.map((l) => ({ ...l, expires_at_boot_ns: String(l.expires_at_boot_ns) })),
        ...(error ? { error } : {}),
      },
      { sync: true },
    );
    await this.faults.whenDurable(t);
    this.emit('dns_answered', { name: q.name, qtype: q.qtype, rcode: q.rcode ?? 'NOERROR', addresses: q.addresses.map((a) => a.address), leases: leases.length, would_deny: q.would_deny ?? null } satisfies DnsAnsweredEvent);
    if (error) throw new Error(`DNS answer for ${q.name}: leases not installed: ${error}`);
    // the leases enter the kernel only now that the answer line is durable
    if (commit) await this.commitLease({ fault_id: faultId, action: 'retry_after_lease', reason: 'lease_installed' }, commit);
    return leases;
  }

  private dnsSeq = 0;

  /** A DNS question the stub refused or failed (REFUSED, SERVFAIL, FORMERR): recorded, durable. */
  recordDnsRefusal(r: { name: string | null; qtype: string | null; rcode: string; control: string; detail: string; peer: string }): Promise<void> {
    // live output sees every one (also those the budget only counts)
    this.emit('dns_refused', { name: r.name, qtype: r.qtype, rcode: r.rcode, control: r.control, detail: r.detail } satisfies DnsRefusedEvent);
    if (this.failedMode) {
      this.failedMode.denied++;
      return Promise.resolve();
    }
    // the workload asks as often as it likes: under the refusal budget
    if (!this.admitRefusal(r.control)) return Promise.resolve(); // counted by its control, e.g. dns/budget
    const t = this.faults.appendTicket({ kind: 'dns_refused', fault_id: `dnsr-${process.pid}-${++this.dnsSeq}`, ...r, detail: r.detail.slice(0, 300) }, { sync: true });
    return this.faults.whenDurable(t);
  }

  /** Record something refused before it became a fault (bad frame, bad peer). */
  async refuse(reason: DenyReason, detail: string, ctx: FaultContext, faultId = ''): Promise<void> {
    await this.refuseTicket(reason, detail, ctx, faultId).durable;
  }

  /** refuse(), returning the refusal line's ticket at once (see resolveTicket). */
  refuseTicket(reason: DenyReason, detail: string, ctx: FaultContext, faultId = ''): { ticket: number; durable: Promise<void> } {
    this.stats.refused++;
    if (this.failedMode) {
      this.failedMode.denied++;
      return { ticket: 0, durable: Promise.resolve() };
    }
    // a hook event gensee cannot turn into a fault is the workload's doing: under the refusal budget
    if (ctx.via === 'cgroup_hook' && !this.admitRefusal(reason)) {
      this.noteHeld(ctx);
      this.emit('refused', { reason, detail, ctx, faultId });
      return { ticket: 0, durable: Promise.resolve() };
    }
    const ticket = this.faults.appendTicket({ kind: 'refusal', fault_id: faultId, reason, detail: detail.slice(0, 300), via: ctx.via, peer: ctx.peer ?? null, ...ringFields(ctx) }, { sync: true });
    const durable = this.faults.whenDurable(ticket).then(() => {
      this.emit('refused', { reason, detail, ctx, faultId });
    });
    return { ticket, durable };
  }
}
