// A private unix socket for a trusted control path (supervisor.sock,
// control.sock): a stale socket from a killed process is replaced, anything
// else at the path is refused; created under umask 0177 so it is never
// briefly connectable by others, then 0600 and owned by the operation owner.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { GenseeError } from '../errors';
import { loadAddon } from '../addon';
import type { NativeRequest, NativeSupervisorServer } from '../addon';
import { cgroupRelPath } from '../cgroup';

/** Remove a stale socket from a killed process; refuse anything else at the path. */
function clearStale(socketPath: string): void {
  try {
    const st = fs.lstatSync(socketPath);
    if (!st.isSocket()) throw new GenseeError('E_NOT_FILE', `${socketPath} exists and is not a socket; refusing to replace it`);
    fs.unlinkSync(socketPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

function makePrivate(socketPath: string, ownerUid: number): void {
  fs.chmodSync(socketPath, 0o600);
  if (ownerUid !== 0) fs.chownSync(socketPath, ownerUid, -1);
}

/**
 * The same private socket as a bare non-blocking listening fd, for a server
 * whose I/O runs in the addon (src/resolver/server.ts). The caller closes it.
 */
export function listenPrivateFd(socketPath: string, ownerUid: number, backlog = 1024): number {
  clearStale(socketPath);
  const addon = loadAddon();
  const old = process.umask(0o177);
  let fd: number;
  try {
    fd = addon.unixListen(socketPath, backlog);
  } finally {
    process.umask(old);
  }
  try {
    makePrivate(socketPath, ownerUid);
  } catch (e) {
    addon.closeFd(fd);
    throw e;
  }
  return fd;
}

/** The fd of a connected socket (for SO_PEERCRED), -1 if it has none. */
export function fdOf(sock: net.Socket): number {
  const h = (sock as unknown as { _handle?: { fd?: number } })._handle;
  return typeof h?.fd === 'number' ? h.fd : -1;
}

/**
 * A gensee socket served by the supervisor socket's I/O thread
 * (addon/sup_server.c): the listening fd and its native server, opened and
 * closed one way for supervisor.sock and control.sock.
 */
export class ServedSocket {
  private native: NativeSupervisorServer | null = null;
  private listenFd = -1;

  constructor(private readonly socketPath: string) {}

  /**
   * Listen (0600, owned by ownerUid); each request (a frame or a refusal)
   * goes to serve, in arrival order. A request serve could not finish
   * (nothing could be recorded: the log failed) is dropped: its connection
   * is closed with nothing said.
   */
  open(ownerUid: number, cgroup: string, serve: (req: NativeRequest) => Promise<void>): NativeSupervisorServer {
    const addon = loadAddon();
    const fd = listenPrivateFd(this.socketPath, ownerUid);
    const onReady = () => {
      const n = this.native;
      if (!n) return;
      for (const req of n.take()) serve(req).catch(() => this.native?.drop(req.id));
    };
    try {
      this.native = new addon.SupervisorServer(fd, ownerUid, cgroupRelPath(cgroup), onReady);
    } catch (e) {
      addon.closeFd(fd);
      throw e;
    }
    this.listenFd = fd;
    return this.native;
  }

  /** the native server while open */
  get server(): NativeSupervisorServer | null {
    return this.native;
  }

  /** Stop the I/O thread, close the fd, remove the socket file. */
  close(): void {
    const n = this.native;
    this.native = null;
    if (!n) return;
    n.stop();
    loadAddon().closeFd(this.listenFd);
    this.listenFd = -1;
    try {
      fs.unlinkSync(this.socketPath);
    } catch {
      /* already gone */
    }
  }
}
