// The sockets whose I/O runs in the addon (supervisor.sock, control.sock):
// opened as private sockets (src/privsock.ts), served by the supervisor
// socket's I/O thread (addon/sup_server.c).
import * as fs from 'node:fs';
import * as net from 'node:net';
import { loadAddon } from '../addon';
import type { NativeRequest, NativeSupervisorServer } from '../addon';
import { cgroupRelPath } from '../cgroup';
import { openPrivateSocket } from '../privsock';

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
  async open(ownerUid: number, cgroup: string, serve: (req: NativeRequest) => Promise<void>): Promise<NativeSupervisorServer> {
    const addon = loadAddon();
    // only this operation's resolver serves these paths (it holds the operation's lock): a socket there is stale
    const fd = await openPrivateSocket(this.socketPath, { owner: ownerUid });
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
