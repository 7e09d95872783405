// Start CMD under the boundary: obj/gensee-exec joins the operation's cgroup,
// drops everything, installs the seccomp pause and hands its listener back
// over a socketpair; we wrap the listener in a Notifier and let CMD run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, ChildProcess, StdioNull, StdioPipe } from 'node:child_process';
import { createHash } from 'node:crypto';
import { PACKAGE_ROOT } from '../addon';
import { GenseeError } from '../errors';
import { Notifier, PausedCall, leasesPinPath, pauseAddon } from './notifier';

/** the byte gensee-exec waits for before it closes its fds and execs */
const ACK_GO = 0x01;
/** where gensee-exec finds the notify socket (stdio 0-2, then this) */
const CHILD_NOTIFY_FD = 3;

type StdioEntry = StdioNull | StdioPipe | number;

/**
 * A tool's capability handle for gensee-exec --handle-fd: an fd of this
 * process holding an AF_UNIX SOCK_STREAM or SOCK_SEQPACKET socket (still the
 * caller's to close once spawned), or 'pipe' for a unix stream socketpair
 * Node makes (its end is child.stdio[handleChildFd(...)]). CMD finds it at
 * fd 3; gensee-exec refuses anything but a unix socket (exit 126).
 */
export type HandleFdOption = number | 'pipe';

/** The fd gensee-exec's own process gets the handle on: after the notify socket, if any. */
export function handleChildFd(pause: boolean): number {
  return pause ? CHILD_NOTIFY_FD + 1 : CHILD_NOTIFY_FD;
}

/** stdio for gensee-exec: CMD's 0-2, then the notify socket and the handle, each at the number its flag names */
function launcherStdio(stdio: [StdioEntry, StdioEntry, StdioEntry], notifyFd: number | null, handleFd: HandleFdOption | undefined): StdioEntry[] {
  const all: StdioEntry[] = [...stdio];
  if (notifyFd !== null) all[CHILD_NOTIFY_FD] = notifyFd;
  if (handleFd !== undefined) all[handleChildFd(notifyFd !== null)] = handleFd;
  return all;
}

export interface LaunchOptions {
  /** the operation's cgroup (cgroup2 directory) */
  cgroupPath: string;
  /** cgroup v1 directories CMD joins right after cgroupPath (the operation's pids/memory cgroups on a hybrid layout: src/resources.ts) */
  joinCgroups?: string[];
  /** the operation's pin dir (holds gs_leases_v1) */
  pinDir: string;
  argv: string[];
  /** who CMD is on the host (default: root in a user namespace mapped to an unprivileged uid) */
  identity?: WorkloadIdentityOption;
  /** shorthand for identity {kind: 'user', user} */
  user?: string;
  env?: NodeJS.ProcessEnv;
  /** CMD's stdin, stdout, stderr (default inherit) */
  stdio?: [StdioEntry, StdioEntry, StdioEntry];
  /** extra paths made read-only for CMD */
  readOnly?: string[];
  /** paths CMD must not see at all (covered by an empty read-only directory), e.g. the state directory */
  hide?: string[];
  /** copied into each fault */
  operationId?: string;
  /** paused calls without a lease; may also be set later with setFaultHandler() */
  onFault?: (f: PausedCall) => void;
  /** the notifier stopped on its own (every task gone, or the fd failed) */
  onStop?: (err?: NodeJS.ErrnoException) => void;
  /** false: no seccomp pause, CMD runs in reject mode (hooks only) */
  pause?: boolean;
  /** how long gensee-exec may take to hand the listener over (default 5000) */
  handoverTimeoutMs?: number;
  /** the tool's capability handle, CMD's fd 3 (see HandleFdOption) */
  handleFd?: HandleFdOption;
  /** a file bound read-only over CMD's /etc/resolv.conf (gensee's DNS stub) */
  resolvConf?: string;
  /** let CMD use io_uring (refused by default: its IORING_OP_SOCKET makes sockets of any family without socket()) */
  allowIoUring?: boolean;
  /** let CMD call listen() (refused by default; the policy's listen rules say on which ports, at bind) */
  allowListen?: boolean;
  /** refuse socket(AF_UNIX) (a kernel without the AF_UNIX hooks: nothing else would police its connects) */
  noUnix?: boolean;
}

export interface Launched {
  child: ChildProcess;
  pid: number;
  /** null in reject mode */
  notifier: Notifier | null;
  /** SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV was accepted: once received, only a fatal signal interrupts a paused call */
  waitKillable: boolean;
  /** the host uid/gid CMD runs as, as gensee-exec reported it at the hand-over; null in reject mode */
  hostIds: { uid: number; gid: number } | null;
  /** route faults (queued ones first) to h */
  setFaultHandler(h: (f: PausedCall) => void): void;
  /** resolves when CMD exits */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** CMD's host pid (pid is gensee-exec's; CMD is its grandchild, pid 2 of its pid namespace); null before it starts or once it is gone */
  cmdPid(): number | null;
}

function childrenOf(pid: number): number[] {
  return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** gensee-exec's outer process → its init (pid 1 of the workload's pid namespace) → CMD */
function cmdPidOf(outer: number): number | null {
  try {
    const [init] = childrenOf(outer);
    if (!init) return null;
    const [cmd] = childrenOf(init);
    return cmd ?? null;
  } catch {
    return null;
  }
}

/**
 * Who the workload is on the host:
 * - userns: root inside a user namespace, the unprivileged host uid:gid outside;
 * - user: a host user (name or UID[:GID]), no user namespace;
 * - host_root: host uid 0 (no capabilities, but every root-owned file is its own).
 */
export type WorkloadIdentityOption =
  | { kind: 'userns'; uid: number; gid: number }
  | { kind: 'user'; user: string }
  | { kind: 'host_root' };

/** the first host uid (and gid) of the range operations' user namespaces map to */
export const WORKLOAD_UID_BASE = 1_600_000_000;
/** how many uids the range holds; an operation's is picked by a hash of its id */
export const WORKLOAD_UID_RANGE = 1_000_000;

/** The unprivileged host uid/gid an operation's workload root maps to: stable per id. */
export function workloadIdFor(key: string): { uid: number; gid: number } {
  const h = createHash('sha256').update(key).digest().readUInt32BE(0);
  const id = WORKLOAD_UID_BASE + (h % WORKLOAD_UID_RANGE);
  return { uid: id, gid: id };
}

/** gensee-exec's path; the error lists what was tried. */
export function launcherPath(): string {
  const tried = [process.env.GENSEE_EXEC, path.join(PACKAGE_ROOT, 'obj', 'gensee-exec')].filter((x): x is string => !!x);
  for (const p of tried) {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  throw new GenseeError('E_ADDON_MISSING', `launcher gensee-exec not built; run 'make build'. Tried:\n  ${tried.join('\n  ')}`);
}

/** The identity LaunchOptions ask for (the default: a user namespace keyed by the operation or cgroup). */
export function identityOf(o: LaunchOptions): WorkloadIdentityOption {
  if (o.identity) return o.identity;
  if (o.user !== undefined) return { kind: 'user', user: o.user };
  return { kind: 'userns', ...workloadIdFor(o.operationId ?? o.cgroupPath) };
}

/** gensee-exec's argv; with o.handleFd, --handle-fd names handleChildFd(notifyFd !== null). */
export function launcherArgs(o: LaunchOptions, notifyFd: number | null): string[] {
  const args = ['--cgroup', o.cgroupPath];
  for (const d of o.joinCgroups ?? []) args.push('--join-cgroup', d);
  const id = identityOf(o);
  if (id.kind === 'userns') args.push('--map-root', `${id.uid}:${id.gid}`);
  else if (id.kind === 'user') args.push('--user', id.user);
  else args.push('--host-root');
  if (notifyFd !== null) args.push('--notify-fd', String(notifyFd));
  if (o.handleFd !== undefined) args.push('--handle-fd', String(handleChildFd(notifyFd !== null)));
  if (o.resolvConf !== undefined) args.push('--resolv-conf', o.resolvConf);
  if (o.allowIoUring) args.push('--allow-io-uring');
  if (o.allowListen) args.push('--allow-listen');
  if (o.noUnix) args.push('--no-unix');
  for (const p of o.readOnly ?? []) args.push('--ro', p);
  for (const p of o.hide ?? []) args.push('--hide', p);
  return [...args, '--', ...o.argv];
}

interface Handover {
  fd: number;
  data: Buffer;
}

/** Wait for the listener on sock, or for the launcher to die, or the deadline. */
function awaitHandover(sock: number, child: ChildProcess, timeoutMs: number): Promise<Handover | null> {
  const addon = pauseAddon();
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: Error | null, v?: Handover | null) => {
      if (done) return;
      done = true;
      watcher.stop();
      clearTimeout(timer);
      child.removeListener('error', onError);
      if (err) reject(err);
      else resolve(v ?? null);
    };
    const onError = (e: Error) => finish(e);
    const watcher = new addon.FdWatcher(sock, (err) => {
      if (err) return finish(err);
      try {
        // the child end is closed in this process, so a dead launcher reads as EOF
        finish(null, addon.recvFd(sock, 0));
      } catch (e) {
        finish(e as Error);
      }
    });
    const timer = setTimeout(
      () => finish(new GenseeError('E_KERNEL', `gensee-exec did not hand over the seccomp listener within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.once('error', onError);
  });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

export async function launchUnderBoundary(o: LaunchOptions): Promise<Launched> {
  const exe = launcherPath();
  const pause = o.pause !== false;
  const leases = leasesPinPath(o.pinDir);
  if (pause && !fs.existsSync(leases)) {
    throw new GenseeError('E_UNKNOWN_OP', `no lease map pinned at ${leases}: attach the hooks first`);
  }
  const stdio = o.stdio ?? ['inherit', 'inherit', 'inherit'];
  const addon = pauseAddon();

  let handler = o.onFault;
  const queued: PausedCall[] = [];
  const dispatch = (f: PausedCall) => (handler ? handler(f) : queued.push(f));
  const setFaultHandler = (h: (f: PausedCall) => void) => {
    handler = h;
    for (const f of queued.splice(0)) h(f);
  };

  if (!pause) {
    const child = spawn(exe, launcherArgs(o, null), { stdio: launcherStdio(stdio, null, o.handleFd), env: o.env ?? process.env });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    return { child, pid: child.pid!, notifier: null, waitKillable: false, hostIds: null, setFaultHandler, exited: exitOf(child), cmdPid: () => cmdPidOf(child.pid!) };
  }

  const [mine, theirs] = addon.socketpair();
  let child: ChildProcess;
  try {
    child = spawn(exe, launcherArgs(o, CHILD_NOTIFY_FD), {
      stdio: launcherStdio(stdio, theirs, o.handleFd),
      env: o.env ?? process.env,
    });
  } catch (e) {
    addon.closeFd(mine);
    throw e;
  } finally {
    // the launcher holds its own copy; with ours closed, its death is EOF here
    addon.closeFd(theirs);
  }
  const exited = exitOf(child);
  let hand: Handover | null;
  try {
    hand = await awaitHandover(mine, child, o.handoverTimeoutMs ?? 5000);
  } catch (e) {
    addon.closeFd(mine);
    child.kill('SIGKILL');
    throw e;
  }
  if (!hand || hand.fd < 0) {
    addon.closeFd(mine);
    child.kill('SIGKILL');
    const { code, signal } = await exited;
    throw new GenseeError(
      'E_KERNEL',
      `gensee-exec ended before handing over the seccomp listener (exit ${code ?? signal}); its stderr says why`,
    );
  }
  let info: { pid?: number; wait_killable?: boolean; host_uid?: number; host_gid?: number } = {};
  try {
    info = JSON.parse(hand.data.toString('utf8')) as typeof info;
  } catch {
    /* informational only */
  }
  let notifier: Notifier;
  try {
    notifier = new addon.Notifier(hand.fd, leases, dispatch, { operationId: o.operationId, onStop: o.onStop });
  } catch (e) {
    addon.closeFd(hand.fd);
    addon.closeFd(mine);
    child.kill('SIGKILL');
    throw e;
  }
  try {
    // the Notifier is polling before CMD's first instruction runs
    fs.writeSync(mine, Buffer.from([ACK_GO]));
  } catch (e) {
    notifier.close();
    child.kill('SIGKILL');
    throw e;
  } finally {
    addon.closeFd(mine);
  }
  const hostIds = typeof info.host_uid === 'number' && typeof info.host_gid === 'number' ? { uid: info.host_uid, gid: info.host_gid } : null;
  return { child, pid: child.pid!, notifier, waitKillable: info.wait_killable === true, hostIds, setFaultHandler, exited, cmdPid: () => cmdPidOf(child.pid!) };
}

export interface SpawnInBoundaryOptions {
  /** the tool's cgroup (cgroup2 directory, the hooks attached to it or an ancestor) */
  cgroup: string;
  /** the operation's cgroup v1 limit cgroups (LaunchOptions.joinCgroups) */
  joinCgroups?: string[];
  argv: string[];
  /** CMD's fd 3 (see HandleFdOption) */
  handleFd?: HandleFdOption;
  /** default: root in a user namespace mapped to the unprivileged uid workloadIdFor(cgroup) */
  identity?: WorkloadIdentityOption;
  /** paths CMD must not see at all, e.g. the state directory */
  hide?: string[];
  /** extra paths made read-only for CMD */
  ro?: string[];
  env?: NodeJS.ProcessEnv;
  /** CMD's stdin, stdout, stderr (default inherit) */
  stdio?: [StdioEntry, StdioEntry, StdioEntry];
  cwd?: string;
  /** a file bound read-only over CMD's /etc/resolv.conf */
  resolvConf?: string;
}

/**
 * gensee-exec in reject mode (no seccomp pause: the hooks deny unleased
 * destinations), e.g. the executor's tool with its handle on fd 3. With
 * handleFd 'pipe', child.stdio[3] is the executor's end. CMD's exit status is
 * the child's (126: gensee-exec failed, its stderr says why; 127: CMD not found).
 */
export function spawnInBoundary(o: SpawnInBoundaryOptions): ChildProcess {
  const lo: LaunchOptions = { cgroupPath: o.cgroup, joinCgroups: o.joinCgroups, pinDir: '', argv: o.argv, identity: o.identity, hide: o.hide, readOnly: o.ro, pause: false, handleFd: o.handleFd, resolvConf: o.resolvConf };
  return spawn(launcherPath(), launcherArgs(lo, null), {
    stdio: launcherStdio(o.stdio ?? ['inherit', 'inherit', 'inherit'], null, o.handleFd),
    env: o.env ?? process.env,
    cwd: o.cwd,
  });
}
