// The supervisor socket: <op dir>/supervisor.sock (0600). A connection
// carries a sequence of fault frames, each answered by one signed Resolution
// (a trusted adapter keeps one open). Peers are authenticated with
// SO_PEERCRED: uid root or the operation owner, and never a process inside
// the operation's cgroup (a workload cannot submit or approve its own
// faults, even as root in its container).
//
// The bytes move on the addon's I/O thread (addon/sup_server.c): accept, peer
// credentials, the framing rules and their deadlines, and the answer, which
// it sends straight after the fdatasync that makes its resolution line
// durable (addon/synclog.c). Each frame reaches this file as one request, and
// so does each refusal with its code (a bad peer, a bad frame, bytes sent
// before the previous answer); every request is recorded in faults.jsonl
// and answered, and a refusal ends its connection's sequence. A slow
// client only ever holds its own connection; this thread never waits on a
// socket or the disk.
import type { NativeSupervisorServer, NativeRequest, AnswerLatency } from '../addon';
import type { DenyReason } from '../errors';
import { encodeFrame } from '../protocol/framing';
import { decodeFault, encodeResolution } from '../protocol/codec';
import type { Resolution } from '../protocol/types';
import type { Resolver, PeerInfo, GrantHandoff } from './resolver';
import { ServedSocket } from './unixsock';

export interface ServerOptions {
  socketPath: string;
  ownerUid: number;
  /**
   * The operation's lease map (DataPlane leasesFd; the server keeps a dup):
   * with it, a plain grant's commit runs in C (GrantHandoff), unless
   * GENSEE_COMMIT_IN_C=0 (the bench's comparison)
   */
  leasesFd?: number;
}

export type { AnswerLatency } from '../addon';

export class SupervisorServer {
  private readonly resolver: Resolver;
  private readonly opts: ServerOptions;
  private native: NativeSupervisorServer | null = null;
  private readonly sock: ServedSocket;
  private refusalSeq = 0;
  /** grants handed to C by token, until their outcome comes back */
  private readonly grants = new Map<number, GrantHandoff>();
  private grantSeq = 0;
  private direct = false;

  constructor(resolver: Resolver, opts: ServerOptions) {
    this.resolver = resolver;
    this.opts = opts;
    this.sock = new ServedSocket(opts.socketPath);
  }

  async listen(): Promise<void> {
    this.native = await this.sock.open(this.opts.ownerUid, this.resolver.scope.cgroup, (req) =>
      this.serve(req).catch(() => {
        // no answer that cannot be stood behind: the client denies the call
        try {
          this.native?.drop(req.id);
        } catch {
          /* already answered or gone */
        }
      }),
    );
    if (this.opts.leasesFd !== undefined && process.env.GENSEE_COMMIT_IN_C !== '0') {
      this.native.leaseMap(this.opts.leasesFd);
      this.direct = true;
      // a reader of the record takes the outcomes that are in already
      this.resolver.network.takeOutcomesFrom(() => this.takeDone());
    }
  }

  /**
   * Take the outcomes of grants committed in C so far and hand each to its
   * resolver step (the record, or the failure's line). Polled while grants
   * are in flight (every DONE_POLL_MS), not signalled: a wake-up of the
   * event loop per answer would compete with the answer itself
   * (addon/sup_server.c grant_durable).
   */
  private takeDone(): void {
    const n = this.native;
    if (!n) return;
    for (const d of n.takeDone()) {
      const h = this.grants.get(d.token);
      if (!h) continue;
      this.grants.delete(d.token);
      h.done(d);
    }
  }

  private doneTimer: NodeJS.Timeout | null = null;
  static readonly DONE_POLL_MS = 10;

  private pollDone(): void {
    if (this.doneTimer) return;
    this.doneTimer = setTimeout(() => {
      this.doneTimer = null;
      this.takeDone();
      if (this.grants.size) this.pollDone();
    }, SupervisorServer.DONE_POLL_MS);
  }

  /** first byte (accept, for a connection's first frame) → answer sent, so far (reset: start counting again) */
  latency(reset = false): AnswerLatency | null {
    return this.native?.latency(reset) ?? null;
  }

  async close(): Promise<void> {
    this.takeDone();
    if (this.direct) this.resolver.network.takeOutcomesFrom(null);
    if (this.doneTimer) clearTimeout(this.doneTimer);
    this.doneTimer = null;
    this.native = null;
    this.sock.close();
    // grants whose outcome will not come back now (the server stopped first: nothing put)
    for (const [, h] of this.grants) h.done({ token: 0, outcome: 'stopped', errno: 0, detail: '' });
    this.grants.clear();
  }

  /**
   * Send r once evidence line `ticket` is durable (the addon does the
   * waiting). Its fdatasync is asked for by the log once per turn of the
   * event loop, after every request that arrived together has its line
   * (resolveTicket's deferSync; a refusal asks at once): one sync for the
   * batch instead of one started by the first of them.
   */
  private answer(id: number, r: Resolution, ticket: number): void {
    const native = this.native;
    if (!native) return;
    // ticket 0: a deny with no line of its own (a suppressed refusal, the
    // failed state): answered at once
    if (ticket === 0) {
      native.answer(id, encodeFrame(encodeResolution(r, this.resolver.mac(r))), null, 0, false);
      return;
    }
    if (this.resolver.log.failure) {
      // its line will never be durable: a deny may still go (it grants
      // nothing); anything else is not answered and its client denies the call
      if (r.action === 'deny') native.answer(id, encodeFrame(encodeResolution(r, this.resolver.mac(r))), null, 0, false);
      else native.drop(id);
      return;
    }
    native.answer(id, encodeFrame(encodeResolution(r, this.resolver.mac(r))), this.resolver.log.handle, ticket, false);
  }

  private deny(id: number, reason: DenyReason, detail: string, peer: PeerInfo | undefined, faultId?: string): void {
    // a frame that never parsed has no fault id of its own: name the refusal
    if (!faultId) faultId = `refused-${process.pid}-${++this.refusalSeq}`;
    const { ticket } = this.resolver.refuseTicket(reason, detail, { via: 'socket', peer }, faultId);
    this.answer(id, { fault_id: faultId, action: 'deny', reason }, ticket);
  }

  private async serve(req: NativeRequest): Promise<void> {
    const peer: PeerInfo | undefined = req.pid !== undefined ? { pid: req.pid, uid: req.uid!, gid: req.gid! } : undefined;
    if (req.status === 'unauthenticated_peer') return this.deny(req.id, 'unauthenticated_peer', req.detail, peer);
    if (req.status !== 'frame' || !req.body) return this.deny(req.id, 'malformed_fault', `${req.status}: ${req.detail}`, peer);
    const d = decodeFault(req.body);
    if (!d.ok) return this.deny(req.id, 'malformed_fault', d.detail, peer);
    if (req.trailing) return this.deny(req.id, 'malformed_fault', 'frame_trailing: bytes after the frame', peer, d.fault.fault_id);
    const { resolution, ticket, ready, handoff } = await this.resolver.resolveTicket(d.fault, { via: 'socket', peer }, { deferSync: true, handoff: this.direct });
    if (handoff) {
      // a plain grant: put, read back and answered by the addon on the
      // syncer thread once its lines are durable (its frame built now,
      // while their fdatasync runs); the outcome comes back to grantDone
      let frame: Buffer | null = null;
      const native = this.native;
      const token = ++this.grantSeq;
      try {
        frame = encodeFrame(encodeResolution(resolution, this.resolver.mac(resolution)));
        if (!native) throw new Error('server closed');
        native.answerGrant(req.id, frame, this.resolver.log.handle, ticket, handoff.key, handoff.value, token);
        this.grants.set(token, handoff);
        this.pollDone();
      } catch (e) {
        // not handed over (the request is gone, the log failed): committed
        // in JavaScript as before, answered only once that is done (and
        // never without its frame)
        await handoff.fallback();
        if (!frame) throw e;
        this.native?.answer(req.id, frame, null, 0, false);
      }
      return;
    }
    if (ready) {
      // a grant: answered once its line is durable and its lease is in the
      // kernel; never, if either fails (its client denies the call). Its
      // frame (MAC, encoding) is built now, while the line's fdatasync runs,
      // not after it: held here, it leaves only once ready settles.
      const frame = encodeFrame(encodeResolution(resolution, this.resolver.mac(resolution)));
      await ready;
      const native = this.native;
      if (native) native.answer(req.id, frame, null, 0, false);
      return;
    }
    this.answer(req.id, resolution, ticket);
  }
}
