// Typed surface of the addon's pause-mode half (addon/notify_glue.cc): the
// seccomp Notifier, fd passing and FdWatcher, plus the errnos a paused call
// is refused with.
import * as os from 'node:os';
import * as path from 'node:path';
import { loadAddon } from '../addon';
import type { Family, Protocol } from '../addr';

export type NotifySyscall = 'connect' | 'sendto' | 'sendmsg' | 'sendmmsg';

/** A paused call raised as a fault (the lease fast path never gets here). */
export interface PausedCall {
  /** seccomp notification id: pass it back to respond() */
  id: bigint;
  /** thread id of the caller (what the kernel paused) */
  pid: number;
  /** its process, when /proc said */
  tgid?: number;
  syscall: NotifySyscall;
  family: Family;
  protocol: Protocol;
  /** textual; ::ffff:a.b.c.d is reported as IPv4, as the hook keys it */
  address: string;
  port: number;
  /** field 22 of /proc/PID/stat, read while the call was paused */
  startTimeTicks: bigint;
  /** CLOCK_BOOTTIME when received */
  observedAtBootNs: bigint;
  /** kernel cgroup id of the caller, 0n if unknown */
  cgroupId: bigint;
  /** sn-<pid>-<seq>, also inside `fault` */
  faultId: string;
  /** protobuf gensee.v2.CapabilityFault (schema 2, source SECCOMP_NOTIFY); absent in a channel report */
  fault?: Buffer;
  /** the 24-byte gs_lease_key the eBPF hook will look up */
  leaseKey: Buffer;
}

export interface NotifierStats {
  /** exact lease present: answered CONTINUE in C, no JavaScript hop */
  fastPath: number;
  /** raised to onFault */
  slowPath: number;
  /** nothing for the boundary (AF_UNIX, NULL address, connected TCP send...) */
  passthrough: number;
  /** could not be read; answered CONTINUE, the eBPF hook decides */
  uninspectable: number;
  /** caller died or was interrupted before its answer */
  gone: number;
  continued: number;
  refused: number;
  pending: number;
  polling: boolean;
}

/** 'continue' lets the call run into the eBPF hook; a number is the errno the caller sees. */
export type PauseVerdict = 'continue' | number;

export interface NotifierOptions {
  /** copied into each fault's operation_id */
  operationId?: string;
  /** the notifier stopped on its own: every task using the filter is gone (no err), or the fd failed */
  onStop?: (err?: NodeJS.ErrnoException) => void;
}

/** How a paused call submitted through the channel was answered (in C). */
export interface ChannelAnswer {
  /** ok: an authenticated Resolution; unauthenticated: the resolver or its answer failed authentication; timeout; error: no resolver */
  status: 'ok' | 'unauthenticated' | 'timeout' | 'error';
  /** proto Action number when ok (1 continue, 2 retry, 3 delegate, 4 deny) */
  action: number;
  reason: string;
  detail: string;
  verdict: PauseVerdict;
  /** false: the caller was gone before the answer */
  delivered: boolean;
  micros: number;
}

export interface ChannelOptions {
  socketPath: string;
  key: Buffer;
  /** resolver identity from operation.json (0 skips the check: tests only) */
  resolverPid: number;
  resolverStart: number;
  deadlineMs: number;
  errnos: { deny: number; delegate: number; timeout: number };
}

export interface Notifier {
  /**
   * From now on, paused calls without a lease are submitted to the resolver
   * from C (addon/rcli.c) and answered there; onAnswered reports each one
   * afterwards (the call without its fault buffer).
   */
  setChannel(o: ChannelOptions, onAnswered: (call: PausedCall, a: ChannelAnswer) => void): void;
  /** calls submitted through the channel and not yet reported */
  channelInflight(): number;
  /** SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP is on (Linux 6.6+) */
  readonly syncWakeUp: boolean;
  readonly fd: number;
  /** Answer a pending fault. true = answered; false = the caller is gone (ENOENT) or the notifier is closed. */
  respond(id: bigint, verdict: PauseVerdict): boolean;
  stats(): NotifierStats;
  /** Refuse every pending call with errno (default EACCES), stop polling, close the listener. Returns how many were refused. */
  close(errno?: number): number;
  ref(): void;
  unref(): void;
}

export interface FdWatcher {
  stop(): void;
  unref(): void;
}

export interface PauseAddon {
  /** Takes ownership of listenerFd on success (closed by close()); on a throw the fd is still the caller's. */
  Notifier: new (
    listenerFd: number,
    leasesPinPath: string,
    onFault: (f: PausedCall) => void,
    opts?: NotifierOptions,
  ) => Notifier;
  /** level-triggered readiness of any fd; consume or stop() in the callback */
  FdWatcher: new (fd: number, cb: (err: NodeJS.ErrnoException | null, ev?: { readable: boolean; hangup: boolean }) => void) => FdWatcher;
  /** AF_UNIX SOCK_SEQPACKET pair, close-on-exec */
  socketpair(): [number, number];
  /** One message (or, untilEof, everything until the peer closes) with at most one fd; null = peer closed having sent nothing; fd -1 = none came. */
  recvFd(fd: number, timeoutMs: number, opts?: { untilEof?: boolean; maxBytes?: number }): { fd: number; data: Buffer } | null;
  sendFd(sock: number, fds: number[], data?: Buffer): number;
  /** non-blocking, close-on-exec SOCK_STREAM listener; path must not exist */
  unixListen(path: string, backlog?: number): number;
  /** non-blocking, close-on-exec; null when nobody is waiting */
  accept(fd: number): number | null;
  closeFd(fd: number): void;
}

export function pauseAddon(): PauseAddon {
  return loadAddon() as unknown as PauseAddon;
}

const E = os.constants.errno;

/**
 * What a paused call sees when it is not let through. Distinct from the
 * eBPF hook's EPERM, so an application (and a person reading strace) can
 * tell "the resolver said no" from "no lease when the call ran".
 */
export const REFUSAL_ERRNO = {
  /** resolution `deny` */
  deny: E.EACCES,
  /** resolution `delegate`: another executor performs it; this path is closed */
  delegate: E.ECONNREFUSED,
  /** no authenticated answer within fault_deadline_ms */
  timeout: E.ETIMEDOUT,
  /** the notifier was closed with the call still paused */
  shutdown: E.EACCES,
} as const;

/** The kernel's own answer when the listener is gone with a call paused. */
export const LISTENER_GONE_ERRNO = E.ENOSYS;

export function leasesPinPath(pinDir: string): string {
  return path.join(pinDir, 'gs_leases_v1');
}

export function createNotifier(
  listenerFd: number,
  pinDir: string,
  onFault: (f: PausedCall) => void,
  opts: NotifierOptions = {},
): Notifier {
  const { Notifier } = pauseAddon();
  return new Notifier(listenerFd, leasesPinPath(pinDir), onFault, opts);
}
