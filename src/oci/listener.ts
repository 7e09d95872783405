// The OCI seccomp listener: runc/crun connect to `linux.seccomp.listenerPath`
// and send the container process state with the seccomp notify fd. For each
// connection: validate, name the operation (`op=NAME` in listenerMetadata,
// else from the container id), pick its policy, find the container's cgroup
// v2 directory from its pid, start (or join) the operation's session on it.
// Everything is non-blocking: a slow, malformed or hostile connection is
// refused on its own, with every fd it brought closed, and never holds up
// another. close() (SIGTERM) refuses paused calls, never lets them through.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GenseeError } from '../errors';
import { loadAddon } from '../addon';
import { findCgroup2Mount, cgroupOfPid, resolveCgroupPath, pidInCgroupTree } from '../cgroup';
import { LoadedPolicy, loadPolicyFile } from '../supervisor';
import { parsePolicy, policyHash } from '../protocol/json';
import { FdWatcher, pauseAddon } from '../pause/notifier';
import { ReceiveHandle, ReceivedState, receiveState, STATE_TIMEOUT_MS } from './receive';
import { operationIdFor } from './state';
import { OciSession, SessionSummary } from './session';
import { openPrivateSocket, SUN_PATH_MAX } from '../privsock';

export interface OciListenerOptions {
  socketPath: string;
  stateDir: string;
  /** <dir>/<op>.json is the policy of operation <op> when present */
  policyDir?: string;
  /** the policy of operations without one in policyDir; deny-all when absent */
  policyFile?: string;
  json?: boolean;
  say?: (line: string) => void;
  stateTimeoutMs?: number;
}

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [] };

export function denyAllPolicy(): LoadedPolicy {
  return { policy: parsePolicy(DENY_ALL), hash: policyHash(JSON.stringify(DENY_ALL)) };
}

/**
 * Bind the listener socket 0600 (src/privsock.ts). A stale socket (nobody
 * accepting) is replaced; a live one, a symlink or anything else at the
 * path is refused.
 */
export async function listenSocket(p: string): Promise<number> {
  if (Buffer.byteLength(p) <= SUN_PATH_MAX) fs.mkdirSync(path.dirname(p), { recursive: true, mode: 0o700 });
  return openPrivateSocket(p, { probeLive: true, backlog: 64 });
}

/** The container's cgroup v2 directory from its pid; refuses what would put the boundary on the host. */
export function containerCgroup(pid: number): string {
  const rel = cgroupOfPid(pid);
  if (rel === null) throw new GenseeError('E_NOT_CGROUP2', `pid ${pid} has no cgroup v2 entry ("0::") in /proc/${pid}/cgroup (gone, or no unified hierarchy)`);
  if (rel === '/' || rel === '') {
    throw new GenseeError('E_NOT_CGROUP2', `pid ${pid} is in the root cgroup v2: the runtime did not give the container its own cgroup; attaching there would cover the whole host`);
  }
  const cgroup = resolveCgroupPath(path.join(findCgroup2Mount(), rel));
  if (pidInCgroupTree(process.pid, cgroup)) {
    throw new GenseeError('E_NOT_CGROUP2', `cgroup ${cgroup} of pid ${pid} contains this listener (pid ${process.pid}): not a container cgroup`);
  }
  return cgroup;
}

interface Entry {
  ready: Promise<OciSession>;
  session: OciSession | null;
}

export class OciListener {
  readonly socketPath: string;
  private readonly o: OciListenerOptions;
  private readonly say: (line: string) => void;
  private readonly lfd: number;
  private readonly lino: number;
  private readonly watcher: FdWatcher;
  private readonly sessions = new Map<string, Entry>();
  private readonly receiving = new Set<ReceiveHandle>();
  private readonly handling = new Set<Promise<void>>();
  private readonly ending = new Set<Promise<SessionSummary>>();
  private closing: Promise<void> | null = null;
  readonly stats = { connections: 0, attached: 0, refused: 0 };

  private constructor(o: OciListenerOptions, lfd: number) {
    this.o = o;
    this.socketPath = o.socketPath;
    this.say = o.say ?? ((l) => process.stdout.write(l + '\n'));
    this.lfd = lfd;
    this.lino = fs.statSync(o.socketPath).ino;
    this.watcher = new (pauseAddon().FdWatcher)(lfd, (err) => {
      if (err) {
        this.say(this.o.json ? JSON.stringify({ event: 'error', message: `listener socket: ${err.message}` }) : `gensee: listener socket: ${err.message}`);
        return;
      }
      this.acceptAll();
    });
  }

  static async open(o: OciListenerOptions): Promise<OciListener> {
    if (o.policyDir !== undefined && !fs.statSync(o.policyDir).isDirectory()) throw new GenseeError('E_USAGE', `--policy-dir ${o.policyDir} is not a directory`);
    // a bad default policy is an operator error now, not a refusal per container later
    if (o.policyFile !== undefined) await loadPolicyFile(o.policyFile);
    const lfd = await listenSocket(o.socketPath);
    return new OciListener(o, lfd);
  }

  /** live sessions (for tests and status) */
  operations(): string[] {
    return [...this.sessions.keys()];
  }

  private acceptAll(): void {
    const addon = pauseAddon();
    for (;;) {
      let conn: number | null;
      try {
        conn = addon.accept(this.lfd);
      } catch (e) {
        // EMFILE and friends: this connection waits in the backlog; others are unaffected
        this.say(this.o.json ? JSON.stringify({ event: 'error', message: `accept: ${(e as Error).message}` }) : `gensee: accept: ${(e as Error).message}`);
        return;
      }
      if (conn === null) return;
      this.onConnection(conn);
    }
  }

  private onConnection(conn: number): void {
    this.stats.connections++;
    let peer: { pid: number; uid: number } | null = null;
    try {
      peer = loadAddon().peerCred(conn);
    } catch {
      peer = null;
    }
    const me = process.getuid ? process.getuid() : 0;
    if (this.closing || !peer || (peer.uid !== 0 && peer.uid !== me)) {
      pauseAddon().closeFd(conn);
      this.refuse(peer, null, new GenseeError('E_NOT_ROOT', this.closing ? 'listener is shutting down' : `runtime peer uid ${peer?.uid ?? '?'} is not root`));
      return;
    }
    const h = receiveState(conn, { timeoutMs: this.o.stateTimeoutMs ?? STATE_TIMEOUT_MS });
    this.receiving.add(h);
    const p = h.done
      .then(
        (r) => {
          this.receiving.delete(h);
          return this.attach(r).catch((e: Error) => this.refuse(peer, r, e));
        },
        (e: Error) => {
          this.receiving.delete(h);
          this.refuse(peer, null, e);
        },
      )
      .finally(() => this.handling.delete(p));
    this.handling.add(p);
  }

  private refuse(peer: { pid: number } | null, r: ReceivedState | null, e: Error): void {
    this.stats.refused++;
    const code = e instanceof GenseeError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'E_STATE');
    const container = r?.state.state.id ?? null;
    this.say(
      this.o.json
        ? JSON.stringify({ event: 'connection_refused', runtime_pid: peer?.pid ?? null, container, pid: r?.state.pid ?? null, code, message: e.message })
        : `gensee: refused ${container ? `container ${container} (pid ${r!.state.pid})` : 'connection'}${peer ? ` from runtime pid ${peer.pid}` : ''}: ${code}: ${e.message}` +
            (r ? '; its seccomp fd is closed: the container\'s connect/sendto/sendmsg fail (ENOSYS)' : ''),
    );
  }

  /** Received a valid state with its seccomp fd (ours until a session takes it). */
  private async attach(r: ReceivedState): Promise<void> {
    let fd = r.fd;
    try {
      if (this.closing) throw new GenseeError('E_STATE', 'listener is shutting down');
      const op = operationIdFor(r.state);
      const cgroup = containerCgroup(r.state.pid);
      const s = await this.sessionFor(op, cgroup);
      if (this.closing || s.ended) throw new GenseeError('E_STATE', this.closing ? 'listener is shutting down' : `operation ${op} is ending`);
      fd = -1; // addProcess owns it from here, on success and on a throw
      try {
        s.addProcess(r.fd, r.state);
      } catch (e) {
        if (s.size === 0) this.end(s, 'unused');
        throw e;
      }
      this.stats.attached++;
    } finally {
      if (fd >= 0) pauseAddon().closeFd(fd);
    }
  }

  private async policyFor(op: string): Promise<{ loaded: LoadedPolicy; source: string }> {
    if (this.o.policyDir !== undefined) {
      const file = path.join(this.o.policyDir, `${op}.json`);
      let present = false;
      try {
        fs.lstatSync(file);
        present = true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      // present but bad (symlink, invalid): refused, never a silent fallback
      if (present) return { loaded: await loadPolicyFile(file), source: file };
    }
    if (this.o.policyFile !== undefined) return { loaded: await loadPolicyFile(this.o.policyFile), source: this.o.policyFile };
    return { loaded: denyAllPolicy(), source: 'deny-all (default)' };
  }

  /** The running session of op (joined when it is on the same cgroup), or a new one. */
  private async sessionFor(op: string, cgroup: string): Promise<OciSession> {
    for (;;) {
      const cur = this.sessions.get(op);
      if (!cur) break;
      const s = await cur.ready.catch(() => null);
      if (this.sessions.get(op) !== cur) continue; // replaced meanwhile: look again
      if (!s) {
        // failed to start (its starter reports that): start afresh
        this.sessions.delete(op);
        continue;
      }
      if (s.ended) {
        // the container's tasks just went: let it finish, then start afresh
        await s.finish('unused').catch(() => undefined);
        if (this.sessions.get(op) === cur) this.sessions.delete(op);
        continue;
      }
      if (s.cgroup !== cgroup) throw new GenseeError('E_OP_EXISTS', `operation ${op} is serving cgroup ${s.cgroup}, not ${cgroup}: one operation, one cgroup`);
      return s;
    }
    const entry: Entry = { ready: null as unknown as Promise<OciSession>, session: null };
    entry.ready = (async () => {
      const pol = await this.policyFor(op);
      const s = await OciSession.start({ stateDir: this.o.stateDir, op, cgroup, policy: pol.loaded, policySource: pol.source, json: !!this.o.json, say: this.say });
      s.onEmpty = () => this.end(s, 'tasks_gone');
      entry.session = s;
      return s;
    })();
    this.sessions.set(op, entry);
    try {
      return await entry.ready;
    } catch (e) {
      if (this.sessions.get(op) === entry) this.sessions.delete(op);
      throw e;
    }
  }

  private end(s: OciSession, why: SessionSummary['why']): Promise<SessionSummary> {
    const p = s
      .finish(why)
      .catch((e: Error) => {
        this.say(this.o.json ? JSON.stringify({ event: 'error', op: s.op, message: `stop: ${e.message}` }) : `gensee: ${s.op}: stop: ${e.message}`);
        return null as unknown as SessionSummary;
      })
      .finally(() => {
        const cur = this.sessions.get(s.op);
        if (cur && cur.session === s) this.sessions.delete(s.op);
        this.ending.delete(p);
      });
    this.ending.add(p);
    return p;
  }

  /** Stop accepting, refuse what is paused, stop every operation. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) this.closing = this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.watcher.stop();
    pauseAddon().closeFd(this.lfd);
    try {
      // only our own socket: a successor may already have replaced it
      if (fs.lstatSync(this.socketPath).ino === this.lino) fs.unlinkSync(this.socketPath);
    } catch {
      /* gone */
    }
    for (const h of this.receiving) h.abort('listener is shutting down');
    while (this.handling.size) await Promise.allSettled([...this.handling]);
    const sessions = await Promise.all([...this.sessions.values()].map((e) => e.ready.catch(() => null)));
    for (const s of sessions) if (s) void this.end(s, 'shutdown');
    while (this.ending.size) await Promise.allSettled([...this.ending]);
  }
}
