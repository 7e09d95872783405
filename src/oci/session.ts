// One operation served for OCI containers: the Supervisor on the container's
// cgroup (hooks, resolver, records), and one Notifier + PauseAdapter per
// seccomp fd the runtime handed over (the container's init, and each
// `runc exec` process that carries the same profile). When the last of them
// reports that every task using its filter is gone, the session ends: the
// evidence stays, whatever is left in the cgroup is killed and seen gone,
// and only then are the hooks detached. A listener shut down under a running
// container kills nothing: its hooks stay pinned, failing closed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { GenseeError } from '../errors';
import { cgroupId, cgroupPids, cgroupPopulated, killCgroupAndWait } from '../cgroup';
import { pinDirFor } from '../bpffs';
import { detachHooks, hookLinkNames } from '../dataplane';
import { Supervisor, LoadedPolicy, OperationSummary } from '../supervisor';
import { openOperation, readKey, OperationRecord } from '../state/operation';
import { identityAlive } from '../resolver/subject';
import { PauseAdapter, PauseOutcome } from '../pause/adapter';
import { Notifier, REFUSAL_ERRNO, leasesPinPath, pauseAddon } from '../pause/notifier';
import { formatResolved, formatRefused } from '../cli/live';
import type { ContainerProcessState } from './state';

export interface SessionOptions {
  stateDir: string;
  op: string;
  /** absolute cgroup v2 directory of the container */
  cgroup: string;
  policy: LoadedPolicy;
  /** where the policy came from, for the live line */
  policySource: string;
  json: boolean;
  say: (line: string) => void;
  /** resuming after a restart: carry the open faults over (SupervisorOptions.carryOpenFaults) */
  carryOpenFaults?: boolean;
}

export interface SessionSummary extends OperationSummary {
  op: string;
  why: 'tasks_gone' | 'shutdown' | 'unused';
  containers: string[];
  hooks: 'detached' | 'pinned';
  /** processes still in the cgroup when it ended (why the hooks stayed) */
  cgroup_pids: number[];
  /** faults.jsonl's last line for `gensee verify --anchor` (null: nothing recorded) */
  anchor: string | null;
}

interface Member {
  /** its name in the fd holder (null: not kept) */
  tag: string | null;
  notifier: Notifier;
  adapter: PauseAdapter;
  containerId: string;
  pid: number;
}


/**
 * The cgroup ids the pinned links of an operation are attached to (0 when
 * the cgroup is gone), via bpftool; null when that cannot be told.
 */
export function pinnedLinkCgroupIds(op: string): bigint[] | null {
  const ids: bigint[] = [];
  for (const name of hookLinkNames()) {
    try {
      const out = execFileSync('bpftool', ['-j', 'link', 'show', 'pinned', path.join(pinDirFor(op), name)], { stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 });
      const m = /"cgroup_id"\s*:\s*([0-9]+)/.exec(out.toString());
      if (!m) return null;
      ids.push(BigInt(m[1]));
    } catch {
      return null;
    }
  }
  return ids;
}

function liveResolver(rec: OperationRecord | null): number | null {
  const r = rec?.resolver;
  if (!r || r.pid === process.pid) return null;
  // a zombie predecessor (left, not yet reaped by its parent) serves nothing
  return identityAlive(r) ? r.pid : null;
}

export class OciSession {
  readonly op: string;
  readonly cgroup: string;
  readonly sup: Supervisor;
  private readonly key: Buffer;
  private readonly o: SessionOptions;
  private readonly members = new Set<Member>();
  private readonly containers = new Set<string>();
  private readonly finished = { fastPath: 0, slowPath: 0 };
  private ending: Promise<SessionSummary> | null = null;
  /** called once, when the last member stopped on its own */
  onEmpty: () => void = () => undefined;
  /** a member kept in the fd holder is done: drop it there */
  onRetired: (tag: string) => void = () => undefined;

  private constructor(o: SessionOptions, sup: Supervisor, key: Buffer) {
    this.o = o;
    this.op = o.op;
    this.cgroup = o.cgroup;
    this.sup = sup;
    this.key = key;
    const prefix = o.json ? '' : `${o.op}: `;
    sup.resolver.on('resolved', (e) => o.say(prefix + formatResolved(e, o.json)));
    sup.resolver.on('refused', (e) => o.say(prefix + formatRefused(e, o.json)));
  }

  get ended(): boolean {
    return this.ending !== null;
  }

  get size(): number {
    return this.members.size;
  }

  /** Attach the boundary to the container's cgroup and serve the operation. */
  static async start(o: SessionOptions): Promise<OciSession> {
    let rec: OperationRecord | null = null;
    try {
      rec = await openOperation(o.stateDir, o.op);
    } catch (e) {
      if (!(e instanceof GenseeError && e.code === 'E_UNKNOWN_OP')) throw e;
    }
    const other = liveResolver(rec);
    if (other !== null) throw new GenseeError('E_OP_EXISTS', `operation ${o.op} is being served by pid ${other} (its resolver is alive)`);
    if (fs.existsSync(pinDirFor(o.op))) {
      // hooks left pinned by an earlier run are kept only if they sit on this
      // very cgroup; links on a removed (or other) cgroup would leave this one
      // without its boundary. Unknown (no bpftool): attach afresh.
      const want = cgroupId(o.cgroup);
      const ids = pinnedLinkCgroupIds(o.op);
      if (ids === null || ids.some((id) => id !== want)) {
        detachHooks(o.op);
        o.say(o.json ? JSON.stringify({ event: 'stale_hooks_replaced', op: o.op, cgroup_ids: ids?.map(String) ?? null }) : `${o.op}: hooks pinned by an earlier run were not on ${o.cgroup}; re-attached`);
      }
    }
    const sup = await Supervisor.start({
      stateDir: o.stateDir,
      op: o.op,
      cgroup: o.cgroup,
      policy: o.policy,
      carryOpenFaults: o.carryOpenFaults === true,
      onError: (e) => o.say(o.json ? JSON.stringify({ event: 'error', op: o.op, message: e.message }) : `${o.op}: error: ${e.message}`),
    });
    try {
      return new OciSession(o, sup, await readKey(o.stateDir, o.op));
    } catch (e) {
      await sup.stop({ close: true }).catch(() => undefined);
      throw e;
    }
  }

  /**
   * Serve one seccomp listener fd. Takes ownership of fd: on a throw it is
   * closed (the container's paused calls then fail with ENOSYS, never run).
   */
  addProcess(fd: number, st: ContainerProcessState, tag: string | null = null): void {
    if (this.ending) {
      pauseAddon().closeFd(fd);
      throw new GenseeError('E_STATE', `operation ${this.op} is ending`);
    }
    const o = this.o;
    let member: Member | null = null;
    const onStop = (err?: NodeJS.ErrnoException) => {
      if (!member || !this.members.has(member)) return;
      if (err) o.say(o.json ? JSON.stringify({ event: 'notifier_error', op: this.op, container: st.state.id, pid: st.pid, message: err.message }) : `${this.op}: seccomp listener of pid ${st.pid} failed: ${err.message}`);
      void this.retire(member).then(() => {
        if (this.members.size === 0 && !this.ending) this.onEmpty();
      });
    };
    let notifier: Notifier;
    try {
      notifier = new (pauseAddon().Notifier)(fd, leasesPinPath(pinDirFor(this.op)), (call) => member?.adapter.handle(call), { operationId: this.op, onStop });
    } catch (e) {
      pauseAddon().closeFd(fd); // on a throw the fd is still ours
      throw e;
    }
    const adapter = new PauseAdapter({
      notifier,
      socketPath: this.sup.socketPath,
      operationId: this.op,
      key: this.key,
      resolver: this.sup.record.resolver,
      deadlineMs: o.policy.policy.fault_deadline_ms,
      onAnswer: (call, out: PauseOutcome) => {
        if (out.how === 'answered') return;
        o.say(
          o.json
            ? JSON.stringify({ event: 'pause', op: this.op, fault_id: call.faultId, how: out.how, verdict: out.verdict, detail: out.detail ?? null })
            : `${this.op}: paused ${call.faultId}: ${out.how}${out.detail ? ` (${out.detail})` : ''} → ${out.verdict === 'continue' ? 'continue' : `errno ${out.verdict}`}`,
        );
      },
    });
    member = { tag, notifier, adapter, containerId: st.state.id, pid: st.pid };
    this.members.add(member);
    const first = !this.containers.has(st.state.id) && this.containers.size === 0;
    this.containers.add(st.state.id);
    o.say(
      o.json
        ? JSON.stringify({ event: first ? 'attached' : 'joined', op: this.op, container: st.state.id, status: st.state.status, pid: st.pid, cgroup: this.cgroup, policy: o.policySource, evidence: this.sup.dir, sync_wake_up: notifier.syncWakeUp })
        : first
          ? `gensee: container ${st.state.id} (pid ${st.pid}) → operation ${this.op}: cgroup ${this.cgroup}, policy ${o.policySource}, evidence ${this.sup.dir}`
          : `gensee: container ${st.state.id} (pid ${st.pid}) joins operation ${this.op}`,
    );
  }

  /**
   * Leave without answering anything: the process is about to exit and a
   * successor takes the fds over from the holder. Only the records are
   * made durable; the kernel keeps every paused call waiting.
   */
  async leave(): Promise<void> {
    if (this.ending) return;
    await this.sup.faultsAnchor();
  }

  /**
   * The fd holder is gone: a restart of the listener would now leave this
   * operation's container failing closed (ENOSYS). Said in the evidence and
   * in the operation dir (fdkeep.json, which `gensee ls` reads).
   */
  holderLost(why: string): void {
    if (this.ending) return;
    try {
      fs.writeFileSync(path.join(this.sup.dir, 'fdkeep.json'), JSON.stringify({ holder: 'lost', why, at: new Date().toISOString(), resolver_pid: process.pid }) + '\n', { mode: 0o600 });
    } catch {
      /* the record below still says it */
    }
    void this.sup.recordFault({ kind: 'fdkeep_lost', why, resolver_pid: process.pid }).catch(() => undefined);
  }

  /** the fds of this operation are kept by the holder at p (fdkeep.json, for `gensee ls`) */
  holderKept(p: string): void {
    try {
      fs.writeFileSync(path.join(this.sup.dir, 'fdkeep.json'), JSON.stringify({ holder: 'kept', path: p, resolver_pid: process.pid }) + '\n', { mode: 0o600 });
    } catch {
      /* best effort: the holder itself is the truth */
    }
  }

  /** the policy's fault_deadline_ms */
  get deadlineMs(): number {
    return this.o.policy.policy.fault_deadline_ms;
  }

  private settleTimer: NodeJS.Timeout | null = null;

  /** after ms, the takeover's carried faults whose call never came again are closed as abandoned */
  settleTakeoverAfter(ms: number): void {
    if (this.settleTimer || this.sup.carriedFaults.length === 0) return;
    this.settleTimer = setTimeout(() => void this.settleTakeover(), ms);
    this.settleTimer.unref();
  }

  private async settleTakeover(): Promise<void> {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    try {
      const left = await this.sup.settleTakeover();
      if (left.length) {
        const o = this.o;
        o.say(o.json ? JSON.stringify({ event: 'carried_abandoned', op: this.op, faults: left }) : `${this.op}: ${left.length} carried fault(s) never came again (thread gone): closed as abandoned`);
      }
    } catch (e) {
      this.o.say(this.o.json ? JSON.stringify({ event: 'error', op: this.op, message: `takeover: ${(e as Error).message}` }) : `${this.op}: takeover: ${(e as Error).message}`);
    }
  }

  /** one adapter record in faults.jsonl, durable when this resolves */
  record(fields: Record<string, unknown>): Promise<void> {
    return this.sup.recordFault(fields);
  }

  /** One member is done: let its last answers out, keep its counts, close it. */
  private async retire(m: Member): Promise<void> {
    if (!this.members.delete(m)) return;
    const s = m.notifier.stats();
    // refuses anything still paused: nothing is let through on the way out
    m.notifier.close(REFUSAL_ERRNO.shutdown);
    await m.adapter.idle();
    if (m.tag) this.onRetired(m.tag);
    this.finished.fastPath += s.fastPath;
    this.finished.slowPath += s.slowPath;
  }

  /**
   * End the operation: refuse what is paused, stop the supervisor (records
   * and evidence stay), and detach the hooks only once the cgroup is killed
   * and seen empty. Idempotent.
   */
  finish(why: SessionSummary['why']): Promise<SessionSummary> {
    if (!this.ending) this.ending = this.doFinish(why);
    return this.ending;
  }

  private async doFinish(why: SessionSummary['why']): Promise<SessionSummary> {
    // Kill, then detach. Once the container's tasks are gone, whatever is
    // still in its cgroup (a process the filter never covered, the last task
    // on its way out) is killed while still bounded and served. A listener
    // shut down, or a session unused, under a running container kills
    // nothing: it stays busy, its hooks pinned, failing closed.
    const o = this.o;
    let busy = why !== 'tasks_gone' && cgroupPopulated(this.cgroup);
    let notEmptied: Error | null = null;
    if (!busy) {
      try {
        await killCgroupAndWait(this.cgroup);
      } catch (e) {
        notEmptied = e as Error;
        busy = true;
      }
    }
    await Promise.all([...this.members].map((m) => this.retire(m)));
    await this.settleTakeover();
    const counted = this.sup.summary(this.finished); // before stop: it reads the kernel counters
    const anchor = await this.sup.faultsAnchor();
    let left = busy ? cgroupPids(this.cgroup) : [];
    // the operation is closed when its container is gone; a busy cgroup
    // leaves it open, hooks failing closed
    await this.sup.stop({ close: !busy });
    let hooks: SessionSummary['hooks'] = 'pinned';
    if (!busy) {
      try {
        // again, right before the hooks come off: a process that entered
        // the cgroup while the supervisor stopped dies too
        await killCgroupAndWait(this.cgroup);
        detachHooks(this.op);
        hooks = 'detached';
      } catch (e) {
        notEmptied = e as Error;
        left = cgroupPids(this.cgroup);
      }
    }
    if (notEmptied) {
      o.say(o.json ? JSON.stringify({ event: 'error', op: this.op, message: `hooks left pinned: ${notEmptied.message}` }) : `${this.op}: hooks left pinned, failing closed: ${notEmptied.message}`);
    }
    const summary: SessionSummary = {
      op: this.op,
      why,
      containers: [...this.containers],
      ...counted,
      hooks,
      cgroup_pids: left,
      anchor,
    };
    if (o.json) o.say(JSON.stringify({ event: 'stopped', ...summary }));
    else {
      o.say(
        `gensee: operation ${this.op} stopped (${why === 'tasks_gone' ? 'container tasks gone' : why}): ${summary.faults} faults, ${summary.leases_installed} leases installed, ` +
          `${summary.continued} already authorized, ${summary.delegated} delegated, ${summary.denied} denied, ${summary.refused} refused; fast path ${summary.fast_path}, paused ${summary.paused}; ` +
          `hooks ${hooks === 'detached' ? 'detached' : `left pinned (cgroup still has pids ${left.slice(0, 8).join(' ')}${left.length > 8 ? ' …' : ''}), failing closed`}`,
      );
      for (const d of summary.destinations) o.say(`  ${d.destination}  ${d.verdict}  ${d.count}`);
      o.say(`  evidence: ${this.sup.dir}`);
      if (anchor) o.say(`  anchor: ${anchor} (keep it elsewhere: gensee verify --anchor shows any line cut off after it)`);
    }
    return summary;
  }
}
