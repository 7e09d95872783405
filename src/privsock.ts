// The one way gensee opens a private unix socket (supervisor.sock,
// control.sock, events.sock, the OCI listener's socket): the path checked
// against sun_path, anything at the path that is not a socket refused, a
// stale socket from a killed process replaced — unless, with probeLive,
// something still accepts on it — then bound under umask 0177 so the socket
// is never briefly connectable by others, made 0600 and handed to its
// owner. The caller gets the listening fd (non-blocking, close-on-exec) and
// closes it; a net.Server can serve it with listen({ fd }).
import * as fs from 'node:fs';
import * as net from 'node:net';
import { GenseeError } from './errors';
import { loadAddon } from './addon';

/** sun_path holds 108 bytes, the last of them the terminating NUL */
export const SUN_PATH_MAX = 107;

export interface PrivateSocketOptions {
  /** uid to own the socket; root and this process's own uid need no chown */
  owner?: number;
  /**
   * connect to a socket already at the path and refuse (E_SOCKET_IN_USE)
   * when something accepts; without it a socket there is taken as stale,
   * for a path only this process may serve (its operation's lock is held)
   */
  probeLive?: boolean;
  backlog?: number;
}

/** Open the private socket at p; see the header for the rules. */
export async function openPrivateSocket(p: string, opts: PrivateSocketOptions = {}): Promise<number> {
  const bytes = Buffer.byteLength(p);
  if (bytes > SUN_PATH_MAX) throw new GenseeError('E_USAGE', `socket path ${p} is ${bytes} bytes; a unix socket path holds at most ${SUN_PATH_MAX}`);
  let st: fs.Stats | null = null;
  try {
    st = fs.lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (st) {
    if (!st.isSocket()) throw new GenseeError('E_NOT_FILE', `${p} exists and is not a socket; refusing to replace it`);
    if (opts.probeLive && (await accepting(p))) throw new GenseeError('E_SOCKET_IN_USE', `${p} is served by another process; not replacing it`);
    try {
      fs.unlinkSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  const addon = loadAddon();
  const old = process.umask(0o177);
  let fd: number;
  try {
    fd = addon.unixListen(p, opts.backlog ?? 1024);
  } finally {
    process.umask(old);
  }
  try {
    fs.chmodSync(p, 0o600);
    const owner = opts.owner;
    if (owner !== undefined && owner !== 0 && owner !== process.geteuid?.()) fs.chownSync(p, owner, -1);
  } catch (e) {
    addon.closeFd(fd);
    throw e;
  }
  return fd;
}

/** does anything accept on the socket at p (within a second) */
function accepting(p: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(p);
    const done = (v: boolean) => {
      c.destroy();
      resolve(v);
    };
    c.once('connect', () => done(true));
    c.once('error', () => done(false));
    c.setTimeout(1000, () => done(false));
  });
}
