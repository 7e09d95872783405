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
import { operationIdFor, policyFromMetadata } from './state';
import { hostRules } from '../protocol/ip';
import { OciSession, SessionSummary } from './session';
import { FdKeep, KeptFd, KeepMeta, HolderListing } from './fdkeep';
import { nudgeWaiting } from './resume';
import { FdStore } from './fdstore';
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
  /** the fd holder's socket (launcher/gensee-fdkeep.c); null: none, a restart leaves containers with ENOSYS */
  fdkeep?: string | null;
  /** fds handed back by systemd (LISTEN_FDS), tried before the holder's */
  inherited?: KeptFd[];
  /** a predecessor to take over from: it is told to leave once the fds are ours */
  takeoverFrom?: number;
  /** the pid of the listener that ran before this one (its pid file), for the resolver_takeover line */
  previousPid?: number | null;
  /** the listener's version, for the resolver_takeover line */
  version?: string;
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

/**
 * A policy with host rules is refused where it is loaded: the listener runs
 * no DNS stub for a container (it cannot make the container's resolver ask
 * one), so a host rule could never match and every name would be denied
 * without a word. `gensee run` serves host rules.
 */
export function refuseHostRules(loaded: LoadedPolicy, source: string): void {
  const named = hostRules(loaded.policy);
  if (named.length === 0) return;
  const first = named[0];
  throw new GenseeError(
    'E_HOST_RULES',
    `policy ${source}: ${named.length} host rule(s), first at /${first.list}/${first.index}/network/host (${JSON.stringify(first.rule.host)}): ` +
      'the OCI listener serves no DNS stub for containers, so a host rule would never match; name addresses or CIDRs instead (`gensee run` serves host rules)',
  );
}

/** Every policy file in dir that loads is checked for host rules; one that does not load is refused per container, as before. */
async function checkPolicyDir(dir: string): Promise<void> {
  for (const f of fs.readdirSync(dir).sort()) {
    if (!f.endsWith('.json')) continue;
    let loaded: LoadedPolicy;
    try {
      loaded = await loadPolicyFile(path.join(dir, f));
    } catch {
      continue;
    }
    refuseHostRules(loaded, path.join(dir, f));
  }
}

/** refusals the listener decides from what it was given, whatever became of the container */
const DECIDED = new Set<string>(['E_HOST_RULES', 'E_NOT_FILE', 'E_SYMLINK', 'E_SCHEMA', 'E_BAD_JSON', 'E_TOO_LARGE', 'E_BAD_OP_ID', 'E_OP_EXISTS', 'E_USAGE', 'E_NOT_ROOT']);

/** the container's process is gone (a zombie too): its hand-off cannot finish */
export function containerGone(pid: number): boolean {
  return !processAlive(pid);
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
  private keeper: FdKeep | null;
  /** systemd's fd store (NOTIFY_SOCKET), beside the holder */
  private store: FdStore | null = null;
  private keepSeq = 0;
  /** holder refusals not yet in any operation's evidence */
  private unrecordedRefusals: HolderListing['refused'] = [];
  readonly stats = { connections: 0, attached: 0, refused: 0, resumed: 0, gone: 0 };

  private constructor(o: OciListenerOptions, lfd: number, keeper: FdKeep | null) {
    this.keeper = keeper;
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
    if (o.policyFile !== undefined) refuseHostRules(await loadPolicyFile(o.policyFile), o.policyFile);
    if (o.policyDir !== undefined) await checkPolicyDir(o.policyDir);
    const say = o.say ?? ((l: string) => process.stdout.write(l + '\n'));
    const keeper = o.fdkeep ? await FdKeep.ensure(o.fdkeep) : null;
    const listing: HolderListing = keeper ? keeper.list() : { fds: [], calls: [], callsLost: 0, refused: [], refusedLost: 0 };
    const kept = [...(o.inherited ?? []), ...listing.fds];
    // the listening socket itself is kept too: runc connecting while no
    // resolver runs waits in its backlog instead of failing the container
    let lfd = -1;
    for (const k of kept) {
      if (k.meta.kind !== 'socket') continue;
      let ino = -1;
      try {
        ino = fs.lstatSync(o.socketPath).ino;
      } catch {
        /* gone */
      }
      if (lfd < 0 && k.meta.path === o.socketPath && k.meta.ino === ino) lfd = k.fd;
      else {
        pauseAddon().closeFd(k.fd);
        if (keeper && listing.fds.includes(k)) keeper.drop(k.tag);
      }
    }
    const reused = lfd >= 0;
    try {
      if (!reused) lfd = await listenSocket(o.socketPath);
      if (keeper && !reused) keeper.keep(`socket.${fs.lstatSync(o.socketPath).ino}`, lfd, { kind: 'socket', path: o.socketPath, ino: fs.lstatSync(o.socketPath).ino, kept_boot_ns: String(pauseAddon().bootNs()), resolver_pid: process.pid });
    } catch (e) {
      for (const k of kept) if (k.meta.kind === 'listener') pauseAddon().closeFd(k.fd);
      keeper?.close();
      throw e;
    }
    if (o.takeoverFrom) await waitPredecessorGone(o.takeoverFrom, say, !!o.json);
    const l = new OciListener(o, lfd, keeper);
    l.store = FdStore.open(o.stateDir);
    if (l.store && !reused) l.store.keep(`socket.${l.lino}`, lfd, { kind: 'socket', path: o.socketPath, ino: l.lino, kept_boot_ns: String(pauseAddon().bootNs()), resolver_pid: process.pid });
    l.unrecordedRefusals = listing.refused;
    if (listing.refused.length || listing.refusedLost) {
      for (const r of listing.refused) {
        say(o.json ? JSON.stringify({ event: 'fdkeep_refused', pid: r.pid, uid: r.uid, why: r.why, at_boot_ns: r.bootNs }) : `gensee: the fd holder refused pid ${r.pid} (uid ${r.uid}): ${r.why}`);
      }
    }
    keeper?.onLost((why) => l.holderLost(why));
    await l.resume(kept.filter((k) => k.meta.kind === 'listener'), reused || kept.length > 0, listing);
    return l;
  }

  /** the holder is gone: what it kept is closed; a restart now fails closed (ENOSYS) */
  private holderLost(why: string): void {
    this.say(this.o.json ? JSON.stringify({ event: 'fdkeep_lost', holder: this.keeper?.path ?? null, message: why }) : `gensee: fd holder ${this.keeper?.path ?? ''} is gone (${why}): a restart of this listener would leave its containers failing with ENOSYS`);
    for (const e of this.sessions.values()) e.session?.holderLost(why);
  }

  /** the holder and the fd store let go of tag */
  private unstash(tag: string): void {
    try {
      if (this.keeper && !this.keeper.lost) this.keeper.drop(tag);
    } catch (e) {
      this.say(this.o.json ? JSON.stringify({ event: 'error', message: `fd holder: ${(e as Error).message}` }) : `gensee: fd holder: ${(e as Error).message}`);
    }
    try {
      this.store?.drop(tag);
    } catch {
      /* systemd gone: nothing to hand back */
    }
  }

  private keepTag(op: string): string {
    return `${op}/${process.pid}.${++this.keepSeq}`;
  }

  /** the fds a predecessor left with the holder (or systemd): serve them again, operation by operation */
  private async resume(kept: KeptFd[], restarted: boolean, listing: HolderListing): Promise<void> {
    const byOp = new Map<string, KeptFd[]>();
    for (const k of kept) {
      const op = k.meta.op ?? '';
      if (!byOp.has(op)) byOp.set(op, []);
      byOp.get(op)!.push(k);
    }
    for (const [op, fds] of byOp) {
      const cgroup = fds[0].meta.cgroup ?? '';
      const drop = (why: string) => {
        for (const k of fds) {
          pauseAddon().closeFd(k.fd);
          this.unstash(k.tag);
        }
        this.say(this.o.json ? JSON.stringify({ event: 'resume_dropped', op, fds: fds.length, message: why }) : `gensee: ${op}: ${fds.length} kept seccomp fd(s) not resumed: ${why}`);
      };
      if (!op || !cgroup || !fs.existsSync(path.join(cgroup, 'cgroup.procs'))) {
        drop(`its cgroup ${cgroup || '(none)'} is gone`);
        continue;
      }
      // calls an earlier resolver received and never answered wait for
      // ever: restart them, before any notifier reads, so they come again
      const nudged = nudgeWaiting(cgroup);
      let s: OciSession;
      try {
        // the faults the dead resolver left open are carried over: resolved
        // under their own id when their (restarted) call comes again
        s = await this.sessionForResume(op, cgroup, fds[0].meta.policy ?? null);
      } catch (e) {
        drop((e as Error).message);
        continue;
      }
      const tags = new Set(fds.map((k) => k.tag));
      const held = listing.calls.filter((c) => tags.has(c.tag));
      s.sup.resolver.takeover?.addArrivals(held);
      const now = pauseAddon().bootNs();
      let waitedMs = 0;
      for (const k of fds) if (k.pendingSinceNs > 0n) waitedMs = Math.max(waitedMs, Number((now - k.pendingSinceNs) / 1_000_000n));
      const oldPid = this.o.takeoverFrom ?? this.o.previousPid ?? fds.map((k) => k.meta.resolver_pid).find((p) => p !== process.pid) ?? null;
      // before any drained call is served: the carried faults' resolutions follow this line
      await s
        .record({
          kind: 'resolver_takeover',
          old_pid: oldPid,
          new_pid: process.pid,
          version: this.o.version ?? null,
          how: this.o.takeoverFrom ? 'takeover' : restarted ? 'restart' : 'inherited',
          kept_fds: fds.length,
          waited_ms: waitedMs,
          restarted_calls: nudged,
          carried_faults: s.sup.carriedFaults,
          held_calls: held.length,
          ...(listing.callsLost ? { held_calls_lost: listing.callsLost } : {}),
          fault_deadline_ms: s.deadlineMs,
        })
        .catch(() => undefined);
      s.settleTakeoverAfter(Math.max(2000, s.deadlineMs));
      for (const k of fds) {
        const st = {
          ociVersion: k.meta.oci_version ?? '1.0.2',
          fds: ['seccompFd'],
          pid: k.meta.pid ?? 0,
          state: { ociVersion: k.meta.oci_version ?? '1.0.2', id: k.meta.container ?? '?', status: 'running' },
        };
        try {
          s.addProcess(k.fd, st, k.tag);
          this.stats.resumed++;
        } catch (e) {
          this.unstash(k.tag);
          this.say(this.o.json ? JSON.stringify({ event: 'error', op, message: `resume: ${(e as Error).message}` }) : `gensee: ${op}: resume: ${(e as Error).message}`);
        }
      }
      await this.recordRefusals(s);
      this.say(
        this.o.json
          ? JSON.stringify({ event: 'resumed', op, fds: fds.length, old_pid: oldPid, restarted_calls: nudged, waited_ms: waitedMs, carried_faults: s.sup.carriedFaults.length, held_calls: held.length })
          : `gensee: ${op}: resumed ${fds.length} kept seccomp fd(s) from pid ${oldPid ?? '?'}; ${nudged} call(s) restarted; longest wait ${waitedMs} ms; ${s.sup.carriedFaults.length} open fault(s) carried over`,
      );
    }
  }

  /**
   * The session a resumed fd is served by. A predecessor that is still on
   * its way out (its operation names it, alive) is waited for, bounded:
   * dropping the fds would leave the container failing (ENOSYS) for good.
   */
  private async sessionForResume(op: string, cgroup: string, policy: string | null): Promise<OciSession> {
    const t0 = Date.now();
    for (;;) {
      try {
        return await this.sessionFor(op, cgroup, policy, true);
      } catch (e) {
        if (!(e instanceof GenseeError && e.code === 'E_OP_EXISTS' && /resolver is alive/.test(e.message)) || Date.now() - t0 > 30_000) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** the holder's refused peers go into the evidence of the first operation there is */
  private async recordRefusals(s: OciSession): Promise<void> {
    const rs = this.unrecordedRefusals.splice(0);
    for (const r of rs) await s.record({ kind: 'fdkeep_refused', pid: r.pid, uid: r.uid, why: r.why, at_boot_ns: r.bootNs, holder: this.keeper?.path ?? null }).catch(() => undefined);
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
    // a decision (policy, metadata, operation) is a refusal even when the
    // container, refused, is gone by now; only a failure its exit can cause is not
    if (r && !(e instanceof GenseeError && DECIDED.has(e.code)) && containerGone(r.state.pid)) return this.gone(peer, r, e);
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

  /**
   * The container exited while it was being taken over (its cgroup, its
   * operation or its notifier not yet set up): whatever failed on the way
   * failed because it is gone, not because it was refused. Said as such.
   */
  private gone(peer: { pid: number } | null, r: ReceivedState, e: Error): void {
    this.stats.gone++;
    const id = r.state.state.id;
    let op: string | null = null;
    try {
      op = operationIdFor(r.state);
    } catch {
      op = null;
    }
    const detail = `${e instanceof GenseeError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'E_STATE')}: ${e.message}`;
    this.say(
      this.o.json
        ? JSON.stringify({ event: 'container_gone', runtime_pid: peer?.pid ?? null, container: id, pid: r.state.pid, op, code: 'E_CONTAINER_GONE', message: `pid ${r.state.pid} exited before its hand-off finished`, detail })
        : `gensee: container ${id} (pid ${r.state.pid}) exited before its hand-off finished${op ? ` (operation ${op})` : ''}: nothing to serve (on the way: ${detail})`,
    );
  }

  /** Received a valid state with its seccomp fd (ours until a session takes it). */
  private async attach(r: ReceivedState): Promise<void> {
    let fd = r.fd;
    let tag: string | null = null;
    try {
      if (this.closing) throw new GenseeError('E_STATE', 'listener is shutting down');
      const op = operationIdFor(r.state);
      const policy = policyFromMetadata(r.state.metadata);
      const cgroup = containerCgroup(r.state.pid);
      if ((this.keeper && !this.keeper.lost) || this.store) {
        // into the holder first: from here a restart of this process leaves the container's calls waiting, not failing
        tag = this.keepTag(op);
        try {
          const meta: KeepMeta = { kind: 'listener', op, container: r.state.state.id, pid: r.state.pid, cgroup, status: r.state.state.status, oci_version: r.state.ociVersion, ...(policy !== null ? { policy } : {}), kept_boot_ns: String(pauseAddon().bootNs()), resolver_pid: process.pid };
          if (this.keeper && !this.keeper.lost) this.keeper.keep(tag, r.fd, meta);
          this.store?.keep(tag, r.fd, meta);
        } catch (e) {
          tag = null;
          this.say(this.o.json ? JSON.stringify({ event: 'error', op, message: `fd holder: ${(e as Error).message}` }) : `gensee: ${op}: fd holder: ${(e as Error).message}`);
        }
      }
      const s = await this.sessionFor(op, cgroup, policy);
      if (this.closing || s.ended) throw new GenseeError('E_STATE', this.closing ? 'listener is shutting down' : `operation ${op} is ending`);
      fd = -1; // addProcess owns it from here, on success and on a throw
      try {
        s.addProcess(r.fd, r.state, tag);
      } catch (e) {
        if (s.size === 0) this.end(s, 'unused');
        throw e;
      }
      tag = null;
      this.stats.attached++;
      if (this.unrecordedRefusals.length) await this.recordRefusals(s);
    } finally {
      if (fd >= 0) pauseAddon().closeFd(fd);
      // refused: the holder must not keep what we closed
      if (tag) this.unstash(tag);
    }
  }

  /**
   * `policy=NAME` in the metadata: --policy-dir's NAME.json, which must be
   * there (never a fallback to a broader default). Else <op>.json there,
   * else --policy, else deny-all. Host rules are refused (refuseHostRules).
   */
  private async policyFor(op: string, name: string | null): Promise<{ loaded: LoadedPolicy; source: string }> {
    const pol = await this.findPolicy(op, name);
    refuseHostRules(pol.loaded, pol.source);
    return pol;
  }

  private async findPolicy(op: string, name: string | null): Promise<{ loaded: LoadedPolicy; source: string }> {
    if (name !== null) {
      if (this.o.policyDir === undefined) throw new GenseeError('E_USAGE', `the container names policy "${name}" (listenerMetadata policy=${name}) but this listener has no --policy-dir`);
      const file = path.join(this.o.policyDir, `${name}.json`);
      if (!fs.existsSync(file) && !isSymlink(file)) throw new GenseeError('E_NOT_FILE', `the container names policy "${name}" but ${file} does not exist`);
      return { loaded: await loadPolicyFile(file), source: file };
    }
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
  private async sessionFor(op: string, cgroup: string, policy: string | null, carryOpenFaults = false): Promise<OciSession> {
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
      const pol = await this.policyFor(op, policy);
      const s = await OciSession.start({ stateDir: this.o.stateDir, op, cgroup, policy: pol.loaded, policySource: pol.source, json: !!this.o.json, say: this.say, carryOpenFaults });
      s.onEmpty = () => this.end(s, 'tasks_gone');
      if (this.keeper && !this.keeper.lost) s.holderKept(this.keeper.path);
      s.onRetired = (tag) => {
        if (!this.leaving) this.unstash(tag);
      };
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

  private leaving = false;

  /**
   * Leave for a successor (SIGTERM or SIGHUP with a holder): stop
   * accepting, let connections being read finish, make the records durable,
   * and answer nothing: the holder keeps every fd, the kernel keeps every
   * paused call waiting for the next listener. The caller exits after.
   */
  async leave(): Promise<void> {
    if ((!this.keeper || this.keeper.lost) && !this.store) return this.close();
    this.leaving = true;
    this.closing = Promise.resolve();
    this.watcher.stop();
    pauseAddon().closeFd(this.lfd); // the holder keeps the socket; its path stays
    while (this.handling.size) await Promise.allSettled([...this.handling]);
    const sessions = await Promise.all([...this.sessions.values()].map((e) => e.ready.catch(() => null)));
    await Promise.all(sessions.map((s) => s?.leave().catch(() => undefined)));
  }

  /** the holder this listener keeps its fds with (null: none) */
  get holder(): FdKeep | null {
    return this.keeper;
  }

  /** Stop accepting, refuse what is paused, stop every operation. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) this.closing = this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.watcher.stop();
    pauseAddon().closeFd(this.lfd);
    // a listener shut down for good: the holder lets go of its socket too
    this.unstash(`socket.${this.lino}`);
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

/** wait (scaled, bounded) until a predecessor told to leave has exited */
async function waitPredecessorGone(pid: number, say: (l: string) => void, json: boolean): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  const t0 = Date.now();
  for (;;) {
    if (!processAlive(pid)) return;
    if (Date.now() - t0 > 60_000) {
      say(json ? JSON.stringify({ event: 'error', message: `predecessor pid ${pid} did not leave within 60 s` }) : `gensee: predecessor pid ${pid} did not leave within 60 s`);
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** pid runs (a zombie does not: it serves nothing, whoever reaps it) */
export function processAlive(pid: number): boolean {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
