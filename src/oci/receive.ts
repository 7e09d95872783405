// One runtime connection on the listener socket: read the container process
// state (possibly several sendmsg() calls; the fd comes with the first) and
// the seccomp notify fd, without ever blocking the event loop, within a size
// and time bound. The document is complete when it parses: runc 1.1 keeps
// its end open until it exits (it closes only a dup of the connection), so
// EOF cannot be the signal. Any fd received is closed on every error path.
import * as fs from 'node:fs';
import { GenseeError, isErrno } from '../errors';
import { pauseAddon, FdWatcher } from '../pause/notifier';
import { ContainerProcessState, STATE_MAX_BYTES, parseContainerProcessState } from './state';

/** whole document within this many ms of the accept (DESIGN: frames within 2 s) */
export const STATE_TIMEOUT_MS = 2000;

export interface ReceivedState {
  /** the seccomp notify fd: the caller owns it */
  fd: number;
  state: ContainerProcessState;
  bytes: number;
}

/** What /proc/self/fd/N links to for a seccomp user-notification listener. */
const SECCOMP_NOTIFY_LINK = 'anon_inode:seccomp notify';

export function isSeccompNotifyFd(fd: number): boolean {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`) === SECCOMP_NOTIFY_LINK;
  } catch {
    return false;
  }
}

export interface ReceiveHandle {
  done: Promise<ReceivedState>;
  /** stop reading: closes the connection and any fd received; done rejects */
  abort(why: string): void;
}

/** Read from conn (non-blocking, ours: closed when this settles). */
export function receiveState(conn: number, opts: { timeoutMs?: number; maxBytes?: number } = {}): ReceiveHandle {
  const addon = pauseAddon();
  const maxBytes = opts.maxBytes ?? STATE_MAX_BYTES;
  const chunks: Buffer[] = [];
  let size = 0;
  let fd = -1;
  let settled = false;
  let watcher: FdWatcher | null = null;
  let timer: NodeJS.Timeout | null = null;
  let resolveP!: (r: ReceivedState) => void;
  let rejectP!: (e: Error) => void;
  const done = new Promise<ReceivedState>((res, rej) => {
    resolveP = res;
    rejectP = rej;
  });

  const finish = (err: Error | null, state?: ContainerProcessState) => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    watcher?.stop();
    try {
      addon.closeFd(conn);
    } catch {
      /* already closed */
    }
    if (err) {
      if (fd >= 0) addon.closeFd(fd);
      fd = -1;
      rejectP(err);
    } else {
      resolveP({ fd, state: state!, bytes: size });
    }
  };

  /** one document is complete once it parses (a prefix of a JSON object never does) */
  const tryComplete = (eof: boolean): boolean => {
    const buf = Buffer.concat(chunks, size);
    let state: ContainerProcessState;
    try {
      JSON.parse(buf.toString('utf8'));
    } catch {
      if (!eof) return false;
      finish(new GenseeError('E_BAD_JSON', size === 0 ? 'runtime closed the connection without sending a state' : `runtime closed the connection after ${size} bytes that are not one JSON document`));
      return true;
    }
    try {
      state = parseContainerProcessState(buf);
    } catch (e) {
      finish(e as Error);
      return true;
    }
    if (fd < 0) {
      finish(new GenseeError('E_SCHEMA', `container process state names fds ${JSON.stringify(state.fds)} but no fd came with it (SCM_RIGHTS)`));
      return true;
    }
    if (!isSeccompNotifyFd(fd)) {
      finish(new GenseeError('E_SCHEMA', `the fd passed as ${state.fds[0]} is not a seccomp notify fd`));
      return true;
    }
    finish(null, state);
    return true;
  };

  const onReadable = () => {
    for (;;) {
      let got: { fd: number; data: Buffer } | null;
      try {
        got = addon.recvFd(conn, 0, { maxBytes: maxBytes + 1 - size });
      } catch (e) {
        if (isErrno(e) && e.code === 'EAGAIN') return;
        if (isErrno(e) && e.code === 'EMSGSIZE') return finish(new GenseeError('E_TOO_LARGE', `container process state is larger than ${maxBytes} bytes`));
        return finish(e as Error);
      }
      if (got === null) {
        tryComplete(true);
        return;
      }
      if (got.fd >= 0) {
        if (fd >= 0 || size > 0) {
          // the spec: fds only with the first sendmsg()
          addon.closeFd(got.fd);
          return finish(new GenseeError('E_SCHEMA', 'an fd arrived after the first message of the state (the spec sends fds only with the first)'));
        }
        fd = got.fd;
      }
      chunks.push(got.data);
      size += got.data.length;
      if (size > maxBytes) return finish(new GenseeError('E_TOO_LARGE', `container process state is larger than ${maxBytes} bytes`));
      if (got.data.length > 0 && tryComplete(false)) return;
    }
  };

  timer = setTimeout(
    () => finish(new GenseeError('E_BAD_JSON', `no complete container process state within ${opts.timeoutMs ?? STATE_TIMEOUT_MS} ms (${size} bytes so far)`)),
    opts.timeoutMs ?? STATE_TIMEOUT_MS,
  );
  try {
    watcher = new addon.FdWatcher(conn, (err) => {
      if (err) return finish(err);
      onReadable();
    });
  } catch (e) {
    finish(e as Error);
  }
  return { done, abort: (why) => finish(new GenseeError('E_STATE', why)) };
}
