// Loads the native addon (build/Release/gensee.node). Its whole TypeScript
// surface is typed here, in one place: every native function, class and
// object the glue (addon/*.cc) exports, and nothing it does not.
import * as path from 'node:path';
import type { SyncStats } from './evidence/chain';
import * as fs from 'node:fs';
import { GenseeError } from './errors';
import type { Family, Protocol } from './addr';
import type { ResolutionFields } from './protocol/codec';
import type { FrameErrorCode } from './protocol/framing';

export interface AddonAbi {
  version: number;
  leaseKeySize: number;
  leaseValueSize: number;
  counterKeySize: number;
  faultEventSize: number;
  leaseValueUsesLeftOffset: number;
  counterKeyAddrOffset: number;
  faultEventAddrOffset: number;
  faultRlKeySize: number;
  faultRlWindowNs: number;
  eventsBytes: number;
  /** the largest frame body on a gensee socket (sup_server.h GS_FRAME_MAX) */
  frameMaxBytes: number;
  /** a whole frame within this many ms of its first byte (GS_FRAME_TIMEOUT_MS) */
  frameTimeoutMs: number;
}

/** where a ring consumer stands (positions are bytes of the map's own, monotonic) */
export interface RingState {
  mapId: number;
  consumed: number;
  produced: number;
  read: number;
}

export interface NativeDataPlane {
  /** put (insert or replace) and read back under the lease lock: the entry right after the put */
  leasePut(key: Buffer, value: Buffer): Buffer;
  leaseGet(key: Buffer): Buffer | null;
  /** the lease map's fd, owned by this handle (a SupervisorServer's leaseMap() keeps a dup) */
  leasesFd(): number;
  leaseDel(key: Buffer): boolean;
  /** run the lease top-up program on a gs_topup_args (rewritten in place); its gs_topup_status */
  leaseTopUp(args: Buffer): number;
  leaseList(): { count: number; keys: Buffer; values: Buffer };
  /**
   * One part of a dump of the lease map, from `cursor` (-1: the start), of
   * about `max` entries (whole hash buckets); `next` is -1 after the last part
   * (addon/dataplane.h gs_lease_list_part: parts are no snapshot together)
   */
  leaseListPart(cursor: number, max: number): { count: number; keys: Buffer; values: Buffer; next: number };
  /**
   * Compare-and-delete (gs_lease_del_if): remove each key whose entry still
   * has the expected value's generation, expiry and flags and is dead at
   * `nowBootNs`. One byte per key: 0 absent, 1 removed, 2 kept, 3 failed.
   */
  leaseDelIf(keys: Buffer, values: Buffer, nowBootNs: bigint): Buffer;
  countersRead(): { count: number; keys: Buffer; sums: Buffer };
  statsRead(): { lostEvents: bigint; counterFull: bigint; socketRefused: bigint; unixRefused: bigint };
  /** add (present) or remove one listen (kind 0, gs_listen_key) or unix (kind 1, gs_unix_key) rule */
  ruleSet(kind: 0 | 1, key: Buffer, present: boolean): void;
  /** remove every rule of a kind */
  ruleClear(kind: 0 | 1): void;
  /** delete counters (N packed gs_counter_key); returns how many existed */
  countersDelete(keys: Buffer): number;
  /**
   * cb(err, buf, pos) with buf = N packed gs_fault_event records and pos =
   * N pairs of u64 (the record's ring position, the position after it); ref
   * keeps the loop alive. Nothing is released to the kernel before ackEvents.
   */
  startEvents(cb: (err: NodeJS.ErrnoException | null, buf?: Buffer, pos?: Buffer) => void, ref?: boolean): void;
  stopEvents(): void;
  /** what the ring holds now, handed to startEvents' callback before it returns */
  drainEvents(): void;
  /** release the ring up to `end` (the end of a record read); delivers what came meanwhile before returning */
  ackEvents(end: number): void;
  /** the ring's map id and positions (consumed = acked, read by this consumer) */
  eventsState(): RingState;
  close(): void;
}

// ---- pause mode: the seccomp Notifier and fd passing (addon/notify_glue.cc) ----

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
  /** protobuf gensee.v2.CapabilityFault (schema 2, source SECCOMP_NOTIFY); absent in a supervisor-client report */
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
  /** refused by the filter's own rule (another socket family, io_uring, listen): see takeRefusals */
  filtered: number;
  /** of those, the ones the notifier could not keep for the record (counted only) */
  filteredLost: number;
  /** calls of non-leader threads read through the leader's pidfd (no PIDFD_THREAD: before 6.9, or GENSEE_NO_PIDFD_THREAD=1) */
  viaLeader: number;
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

/** How a paused call submitted through the supervisor client was answered (in C). */
export interface SupervisorAnswer {
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

export interface SupervisorClientOptions {
  socketPath: string;
  key: Buffer;
  /** resolver identity from operation.json (0 skips the check: tests only) */
  resolverPid: number;
  resolverStart: number;
  deadlineMs: number;
  errnos: { deny: number; delegate: number; timeout: number };
}

/** A call gensee-exec's filter sent only to be refused (addon/notify.h gs_refusal). */
export interface FilterRefusal {
  pid: number;
  syscall: 'socket' | 'socketpair' | 'io_uring_setup' | 'listen';
  /** the errno it was answered with */
  errno: number;
  /** its first three arguments */
  args: bigint[];
  /** how many times the same thread made the same call in a row */
  count: number;
  /** CLOCK_BOOTTIME of the first */
  bootNs: bigint;
}

export interface Notifier {
  /**
   * From now on, paused calls without a lease are submitted to the resolver
   * from C (addon/sup_client.c) and answered there; onAnswered reports each one
   * afterwards (the call without its fault buffer).
   */
  setSupervisorClient(o: SupervisorClientOptions, onAnswered: (call: PausedCall, a: SupervisorAnswer) => void): void;
  /** calls submitted through the supervisor client and not yet reported */
  supervisorInflight(): number;
  /** SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP is on (Linux 6.6+) */
  readonly syncWakeUp: boolean;
  /** pidfds of non-leader threads (PIDFD_THREAD, 6.9+); false: through the leader's pidfd */
  readonly pidfdThread: boolean;
  readonly fd: number;
  /** Answer a pending fault. true = answered; false = the caller is gone (ENOENT) or the notifier is closed. */
  respond(id: bigint, verdict: PauseVerdict): boolean;
  stats(): NotifierStats;
  /** the calls the filter sent only to be refused, answered in C, oldest first (then forgotten) */
  takeRefusals(): FilterRefusal[];
  /** Refuse every pending call with errno (default EACCES), stop polling, close the listener. Returns how many were refused. */
  close(errno?: number): number;
  ref(): void;
  unref(): void;
}

export interface FdWatcher {
  stop(): void;
  unref(): void;
}

// ---- the supervisor socket and client (addon/sup_glue.cc, sup_server.c, sup_client.c) ----

/** One request (a frame, or a refusal) as the I/O thread hands it over. */
export interface NativeRequest {
  id: number;
  /** a whole frame, or why there is none */
  status: 'frame' | 'unauthenticated_peer' | FrameErrorCode;
  pid?: number;
  uid?: number;
  gid?: number;
  /** bytes arrived after the frame before it was handed over */
  trailing: boolean;
  detail: string;
  body?: Buffer;
}

export interface NativeSupervisorServer {
  take(): NativeRequest[];
  answer(id: number, frame: Buffer, log: NativeSyncLog | null, ticket: number, request?: boolean): void;
  /** the lease map answerGrant puts into (a dup of fd is kept) */
  leaseMap(fd: number): void;
  /**
   * Once ticket is durable, on the syncer thread: put (key, value) in the
   * lease map, read it back, and only if it is there as put send frame;
   * the outcome comes back through takeDone() under token (addon/sup_server.h)
   */
  answerGrant(id: number, frame: Buffer, log: NativeSyncLog, ticket: number, key: Buffer, value: Buffer, token: number): void;
  /** the outcomes of answerGrant calls so far, oldest first */
  takeDone(): NativeGrantDone[];
  drop(id: number): void;
  latency(reset?: boolean): AnswerLatency;
  stop(): void;
}

/** what became of a grant handed to answerGrant */
export interface NativeGrantDone {
  token: number;
  /** installed: put, read back as put, answered; else nothing was answered */
  outcome: 'installed' | 'not_durable' | 'not_installed' | 'stopped';
  errno: number;
  detail: string;
  /** installed: the entry as read back right after the put */
  back?: Buffer;
}

/** a frame's first byte (accept, for a connection's first) → answer sent, as the resolver sees it (us, 10 us resolution) */
export interface AnswerLatency {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  /** connections admitted so far (past the peer checks; not reset) */
  accepted: number;
}

export interface NativeSubmitResult {
  status: 'ok' | 'unauthenticated' | 'timeout' | 'error';
  errno: number;
  detail: string;
  micros: number;
  /** the Resolution, decoded and authenticated in C, when status is ok */
  resolution?: ResolutionFields;
}

export type NativeSubmit = (
  o: { socketPath: string; body: Uint8Array; faultId: string; key: Uint8Array; expectPid: number; expectStart: number; timeoutMs: number },
  cb: (r: NativeSubmitResult) => void,
) => void;

/** The addon's syncer (addon/synclog.c, glue in addon/sup_glue.cc). */
export interface NativeSyncLog {
  /** write whole lines now (or queue them for the syncer: syncerWrites); returns the ticket of the last one */
  write(buf: Buffer, nLines: number, wantSync: boolean): number;
  /** write what is queued now, without an fdatasync */
  drain(): void;
  /** tests only: the first fdatasync covering ticket is held ms, then fails with EIO (gs_synclog_test_fail) */
  testFail(ticket: number, ms: number): void;
  request(): void;
  /** the durable ticket, or -errno once the log failed: state()'s two figures a waiter needs, under one lock */
  progress(): number;
  /** somebody in JS waits for this ticket: counted as waiting (siblings) until a sync covers it; a no-op on a failed or closing log */
  expect(ticket: number): void;
  /** hold a requested sync up to delayUs while socket requests are being decided and not waiting (0: off) */
  siblings(delayUs: number): void;
  /** hist: fdatasync calls by latency, buckets of SYNC_HIST_BOUNDS_US (src/evidence/chain.ts) and one for the rest */
  state(): { written: number; durable: number; failed: number } & SyncStats;
  syncNow(): void;
  close(): void;
  ref(): void;
  unref(): void;
}

export interface Addon {
  abi: AddonAbi;
  attach(
    pinDir: string,
    cgroupPath: string,
    opts?: { emitEvents?: boolean; countAllows?: boolean; opLevel?: number; guardDir?: string; guardCgroup?: string },
  ): void;
  /** attach on a libuv worker thread; cb(err) on the event loop's */
  attachAsync(
    pinDir: string,
    cgroupPath: string,
    opts: { emitEvents?: boolean; countAllows?: boolean; opLevel?: number; guardDir?: string; guardCgroup?: string },
    cb: (err: NodeJS.ErrnoException | null) => void,
  ): void;
  detach(pinDir: string): void;
  linksPresent(pinDir: string): boolean;
  /** pin names of the links an attached operation holds under its pin dir (addon/dataplane.c) */
  linkNames: readonly string[];
  bootNs(): bigint;
  /** the kernel has cgroup/connect_unix and sendmsg_unix (6.7; GENSEE_NO_UNIX_HOOKS=1 says no) */
  unixHooks(): boolean;
  /** each kernel feature gensee uses, tried: 0 present, else the errno (addon/features.c; src/doctor.ts) */
  kernelFeatures(): import('./doctor').KernelFeatures;
  peerCred(fd: number): { pid: number; uid: number; gid: number };
  DataPlane: new (pinDir: string) => NativeDataPlane;

  // ---- pause mode (addon/notify_glue.cc) ----

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
  /** connect to a unix socket (blocking, close-on-exec); '@name': the abstract namespace */
  unixConnect(path: string, type?: 'stream' | 'seqpacket' | 'dgram'): number;
  /** non-blocking, close-on-exec; null when nobody is waiting */
  accept(fd: number): number | null;
  closeFd(fd: number): void;
  /** the C fast path's verdict for an answered call with this proto action (notify_glue.cc VerdictOf): 0 = continue, else the errno */
  verdictForAction(action: number, errnos: { deny: number; delegate: number; timeout: number }): number;

  // ---- the evidence logs and the supervisor socket (addon/sup_glue.cc) ----
  /** fdatasync thread for one log fd (addon/synclog.c) */
  SyncLog: new (fd: number, delayUs: number, onDurable: () => void, syncerWrites?: boolean) => NativeSyncLog;
  /** the supervisor socket's I/O thread (addon/sup_server.c) on a listening fd */
  SupervisorServer: new (fd: number, ownerUid: number, cgroupRel: string, onReady: () => void) => NativeSupervisorServer;
  /** submit one fault to a resolver and authenticate its answer (addon/sup_client.c) */
  submit: NativeSubmit;
  /** field 22 of /proc/PID/stat; null when the process is gone */
  procStartTime(pid: number): number | null;
  /** the cgroup2 path of a pid ("0::" line of /proc/PID/cgroup); null when unreadable */
  procCgroup(pid: number): string | null;
  /** start time and cgroup of a pid, read once behind a pidfd (addon/subject.c); null when gone */
  subject(pid: number): { start: number; cgroup: string } | null;
  /** the cgroup2 mount point a mountinfo file names (addon/proc.c gs_find_cgroup2); null when none */
  findCgroup2Mount(mountinfo: string): string | null;
  /** is the /proc/PID/cgroup path `have` `want` or below it (addon/subject.c); src/cgroup.ts's twin */
  cgroupWithin(have: string, want: string): boolean;
}

/** The package root (holds package.json), from dist/src or src. */
export const PACKAGE_ROOT = (() => {
  let d = __dirname;
  for (let i = 0; i < 4; i++) {
    if (fs.existsSync(path.join(d, 'package.json'))) return d;
    d = path.dirname(d);
  }
  return path.resolve(__dirname, '..', '..');
})();

let cached: Addon | null = null;

export function loadAddon(): Addon {
  if (cached) return cached;
  const tried: string[] = [];
  const candidates = [
    process.env.GENSEE_ADDON,
    path.join(PACKAGE_ROOT, 'build', 'Release', 'gensee.node'),
    path.join(PACKAGE_ROOT, 'build', 'Debug', 'gensee.node'),
  ].filter((x): x is string => !!x);
  for (const c of candidates) {
    tried.push(c);
    if (!fs.existsSync(c)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the .node binary's path is known only at run time; import cannot load it
    cached = require(c) as Addon;
    return cached;
  }
  throw new GenseeError(
    'E_ADDON_MISSING',
    `native addon not built; run 'make build'. Tried:\n  ${tried.join('\n  ')}`,
  );
}
