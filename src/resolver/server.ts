// The supervisor socket: <op dir>/supervisor.sock (0600). One request frame
// per connection, one signed Resolution back. Peers are authenticated with
// SO_PEERCRED: uid root or the operation owner, and never a process inside
// the operation's cgroup (a workload cannot submit or approve its own
// faults, even as root in its container). Each connection is handled on its
// own; a slow client only ever holds its own socket.
import * as net from 'node:net';
import { loadAddon } from '../addon';
import { pidInCgroupTree } from '../cgroup';
import type { DenyReason } from '../errors';
import { readFrame, writeFrame, FrameError } from '../protocol/framing';
import { decodeFault, encodeResolution } from '../protocol/codec';
import type { Resolution } from '../protocol/types';
import type { Resolver, PeerInfo } from './resolver';
import { listenPrivate, closePrivate, fdOf } from './unixsock';

export interface ServerOptions {
  socketPath: string;
  ownerUid: number;
}

export class SupervisorServer {
  private readonly resolver: Resolver;
  private readonly opts: ServerOptions;
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  /** connections whose request has not reached the evidence log yet */
  private unlogged = 0;

  /** more requests are on their way to the log: worth holding a group commit */
  get busy(): boolean {
    return this.unlogged > 0;
  }

  constructor(resolver: Resolver, opts: ServerOptions) {
    this.resolver = resolver;
    this.opts = opts;
  }

  async listen(): Promise<void> {
    this.server = await listenPrivate(this.opts.socketPath, this.opts.ownerUid, (s) => this.onConnection(s));
  }

  async close(): Promise<void> {
    const srv = this.server;
    this.server = null;
    if (srv) await closePrivate(srv, this.sockets, this.opts.socketPath);
  }

  private async answer(sock: net.Socket, r: Resolution): Promise<void> {
    try {
      await writeFrame(sock, encodeResolution(r, this.resolver.mac(r)));
    } catch {
      /* the client went away; the evidence is already written */
    }
    // Discard whatever the client still sends: closing a unix socket with
    // unread input resets the peer (ECONNRESET) and it would lose our answer.
    // Half-close, then give it a moment to read and close its end.
    sock.removeAllListeners('data');
    sock.on('data', () => undefined);
    sock.resume();
    sock.end();
    const t = setTimeout(() => sock.destroy(), 2000);
    t.unref();
    sock.once('close', () => clearTimeout(t));
    sock.once('end', () => sock.destroy());
  }

  private refusalSeq = 0;

  private async deny(sock: net.Socket, reason: DenyReason, detail: string, peer: PeerInfo | undefined, faultId?: string): Promise<void> {
    // a frame that never parsed has no fault id of its own: name the refusal
    if (!faultId) faultId = `refused-${process.pid}-${++this.refusalSeq}`;
    (sock as net.Socket & { gsLogged?: () => void }).gsLogged?.();
    await this.resolver.refuse(reason, detail, { via: 'socket', peer }, faultId);
    await this.answer(sock, { fault_id: faultId, action: 'deny', reason });
  }

  private onConnection(sock: net.Socket): void {
    this.sockets.add(sock);
    this.unlogged++;
    let counted = true;
    const logged = () => {
      if (counted) {
        counted = false;
        this.unlogged--;
      }
    };
    sock.once('close', logged);
    (sock as net.Socket & { gsLogged?: () => void }).gsLogged = logged;
    sock.on('close', () => this.sockets.delete(sock));
    sock.on('error', () => undefined);
    // start reading at once so no byte is missed; the frame clock runs from the first byte
    const frameP = readFrame(sock);
    frameP.catch(() => undefined);
    void this.serve(sock, frameP).catch(() => sock.destroy());
  }

  private async serve(sock: net.Socket, frameP: ReturnType<typeof readFrame>): Promise<void> {
    let peer: PeerInfo;
    try {
      peer = loadAddon().peerCred(fdOf(sock));
    } catch (e) {
      return this.deny(sock, 'unauthenticated_peer', `SO_PEERCRED failed: ${(e as Error).message}`, undefined);
    }
    if (peer.uid !== 0 && peer.uid !== this.opts.ownerUid) {
      return this.deny(sock, 'unauthenticated_peer', `uid ${peer.uid} is neither root nor the operation owner`, peer);
    }
    if (pidInCgroupTree(peer.pid, this.resolver.scope.cgroup)) {
      return this.deny(sock, 'unauthenticated_peer', `pid ${peer.pid} is inside the operation's cgroup`, peer);
    }
    let frame;
    try {
      frame = await frameP;
    } catch (e) {
      const code = e instanceof FrameError ? e.code : 'frame_error';
      return this.deny(sock, 'malformed_fault', `${code}: ${(e as Error).message}`, peer);
    }
    const d = decodeFault(frame);
    if (!d.ok) return this.deny(sock, 'malformed_fault', d.detail, peer);
    if (frame.hasTrailing()) return this.deny(sock, 'malformed_fault', 'frame_trailing: bytes after the frame', peer, d.fault.fault_id);
    const r = await this.resolver.resolve(d.fault, { via: 'socket', peer }, () => (sock as net.Socket & { gsLogged?: () => void }).gsLogged?.());
    await this.answer(sock, r);
  }
}
