// The control socket: how operator tools reach a running supervisor to
// change its envelope (a policy apply, an operator lease added or revoked),
// so the change becomes a generation with its counters harvested, instead
// of an edit of the kernel map behind the resolver's back.
//
//   <state>/network-operations/<OP>/control.sock     (0600, beside supervisor.sock)
//
// Authentication, both ways, as on supervisor.sock:
// - the supervisor checks the client with SO_PEERCRED: uid root or the
//   operation owner, and never a process inside the operation's cgroup;
// - the client checks that the socket's SO_PEERCRED pid and its start time
//   are the resolver identity in operation.json, and that the reply's `mac`
//   (HMAC-SHA256 under the operation key, over the reply's JSON without
//   `mac`) verifies.
//
// Wire: the framing of every gensee socket (4-byte big-endian length, body
// ≤ 64 KiB, whole frame within 2 s, nothing after it), one request and one
// reply per connection. The body is JSON (not the fault protobuf: the fault
// wire protocol is unchanged):
//   request  {"schema":1,"command":"policy_apply","policy_text":"<the policy file>"}
//            {"schema":1,"command":"lease_add","protocol":"tcp","address":"127.0.0.1","port":8080,"ttl_ms":30000,"max_uses":0}
//            {"schema":1,"command":"lease_rm","protocol":"tcp","address":"127.0.0.1","port":8080}
//   reply    {"ok":true,"command":...,"generation":N,...,"mac":"<64 hex>"}
//            {"ok":false,"code":"E_...","error":"...","mac":"<64 hex>"}
import { listenPrivate, closePrivate, fdOf } from '../resolver/unixsock';
import * as net from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { loadAddon } from '../addon';
import { pidInCgroupTree } from '../cgroup';
import { GenseeError, ErrorCode } from '../errors';
import { readFrame, writeFrame } from '../protocol/framing';
import type { ResolverIdentity } from '../state/operation';
import { readStartTimeTicks } from '../resolver/subject';

export const CONTROL_SOCKET = 'control.sock';

export interface ControlPeer {
  pid: number;
  uid: number;
}

export type ControlRequest =
  | { schema: 1; command: 'policy_apply'; policy_text: string }
  | { schema: 1; command: 'lease_add'; protocol: string; address: string; port: number; ttl_ms: number; max_uses: number }
  | { schema: 1; command: 'lease_rm'; protocol: string; address: string; port: number };

export type ControlReply = { ok: true; command: string; [k: string]: unknown } | { ok: false; code: string; error: string };

export type ControlHandler = (req: ControlRequest, peer: ControlPeer) => Promise<Record<string, unknown>>;


export function replyMac(key: Uint8Array, reply: object): string {
  return createHmac('sha256', key).update(JSON.stringify(reply)).digest('hex');
}

function parseRequest(body: Buffer): ControlRequest {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new GenseeError('E_BAD_JSON', `control request is not JSON: ${(e as Error).message}`);
  }
  const o = v as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || Array.isArray(o) || o.schema !== 1) {
    throw new GenseeError('E_SCHEMA', 'control request: expected an object with schema 1');
  }
  const allowed: Record<string, string[]> = {
    policy_apply: ['schema', 'command', 'policy_text'],
    lease_add: ['schema', 'command', 'protocol', 'address', 'port', 'ttl_ms', 'max_uses'],
    lease_rm: ['schema', 'command', 'protocol', 'address', 'port'],
  };
  const keys = allowed[String(o.command)];
  if (!keys) throw new GenseeError('E_SCHEMA', `control request: unknown command ${JSON.stringify(o.command)}`);
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new GenseeError('E_SCHEMA', `control request: unknown field "${k}"`);
  for (const k of keys) if (!(k in o)) throw new GenseeError('E_SCHEMA', `control request: missing field "${k}"`);
  return o as ControlRequest;
}

export class ControlServer {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();

  constructor(
    private readonly o: {
      socketPath: string;
      ownerUid: number;
      cgroup: string;
      key: Buffer;
      handler: ControlHandler;
      /** a request refused before it reached the handler (peer, frame, schema) */
      onRefused?: (reason: string, detail: string, peer: ControlPeer | null) => void;
    },
  ) {}

  async listen(): Promise<void> {
    this.server = await listenPrivate(this.o.socketPath, this.o.ownerUid, (s) => this.onConnection(s));
  }

  async close(): Promise<void> {
    const srv = this.server;
    this.server = null;
    if (srv) await closePrivate(srv, this.sockets, this.o.socketPath);
  }

  private onConnection(sock: net.Socket): void {
    this.sockets.add(sock);
    sock.on('close', () => this.sockets.delete(sock));
    sock.on('error', () => undefined);
    const frameP = readFrame(sock);
    frameP.catch(() => undefined);
    void this.serve(sock, frameP).catch(() => sock.destroy());
  }

  private async answer(sock: net.Socket, reply: ControlReply): Promise<void> {
    const body = Buffer.from(JSON.stringify({ ...reply, mac: replyMac(this.o.key, reply) }), 'utf8');
    try {
      await writeFrame(sock, body);
    } catch {
      /* client gone */
    }
    sock.end();
    const t = setTimeout(() => sock.destroy(), 2000);
    t.unref();
    sock.once('close', () => clearTimeout(t));
  }

  private async serve(sock: net.Socket, frameP: ReturnType<typeof readFrame>): Promise<void> {
    let peer: ControlPeer | null = null;
    const fail = (code: string, error: string) => {
      this.o.onRefused?.(code, error, peer);
      return this.answer(sock, { ok: false, code, error });
    };
    try {
      const c = loadAddon().peerCred(fdOf(sock));
      peer = { pid: c.pid, uid: c.uid };
    } catch (e) {
      return fail('unauthenticated_peer', `SO_PEERCRED failed: ${(e as Error).message}`);
    }
    if (peer.uid !== 0 && peer.uid !== this.o.ownerUid) return fail('unauthenticated_peer', `uid ${peer.uid} is neither root nor the operation owner`);
    if (pidInCgroupTree(peer.pid, this.o.cgroup)) return fail('unauthenticated_peer', `pid ${peer.pid} is inside the operation's cgroup`);
    const refusal = loadAddon().peerRefusal(fdOf(sock), peer.pid);
    if (refusal !== null) return fail('unauthenticated_peer', refusal);
    const who = peer;
    let frame;
    try {
      frame = await frameP;
    } catch (e) {
      return fail('malformed_request', (e as Error).message);
    }
    if (frame.hasTrailing()) return fail('malformed_request', 'bytes after the frame');
    let req: ControlRequest;
    try {
      req = parseRequest(frame);
    } catch (e) {
      return fail((e as GenseeError).code ?? 'malformed_request', (e as Error).message);
    }
    try {
      const r = await this.o.handler(req, who);
      return this.answer(sock, { ok: true, command: req.command, ...r });
    } catch (e) {
      // the handler's own refusal (bad policy, no such lease): answered, not a refused peer
      const code = e instanceof GenseeError ? e.code : 'backend_error';
      return this.answer(sock, { ok: false, code, error: (e as Error).message });
    }
  }
}

/**
 * Send one control request to the supervisor of an operation, authenticate
 * it and its reply. Throws GenseeError: E_STATE when no supervisor answers,
 * the reply's own code when it refused.
 */
export async function controlRequest(o: {
  socketPath: string;
  key: Uint8Array;
  resolver: ResolverIdentity | null;
  request: ControlRequest;
  timeoutMs?: number;
}): Promise<Record<string, unknown>> {
  if (!o.resolver) throw new GenseeError('E_STATE', 'no resolver is running for this operation (operation.json has none)', 1);
  const sock = net.createConnection(o.socketPath);
  sock.on('error', () => undefined);
  const timeoutMs = o.timeoutMs ?? 30_000;
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new GenseeError('E_STATE', `connect ${o.socketPath}: timed out`, 1)), 5000);
      sock.once('connect', () => {
        clearTimeout(t);
        resolve();
      });
      sock.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(t);
        reject(new GenseeError('E_STATE', `no supervisor is listening on ${o.socketPath} (${e.code ?? e.message})`, 1));
      });
    });
    const cred = loadAddon().peerCred(fdOf(sock));
    if (cred.pid !== o.resolver.pid || readStartTimeTicks(cred.pid) !== o.resolver.start_time_ticks) {
      throw new GenseeError('E_STATE', `control socket peer pid ${cred.pid} is not the resolver of operation.json (pid ${o.resolver.pid})`, 1);
    }
    const reply = readFrame(sock, { idleTimeoutMs: timeoutMs, timeoutMs });
    reply.catch(() => undefined);
    await writeFrame(sock, Buffer.from(JSON.stringify(o.request), 'utf8'));
    const frame = await reply;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(frame.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new GenseeError('E_STATE', 'control reply is not JSON', 1);
    }
    const { mac, ...rest } = r;
    const want = Buffer.from(replyMac(o.key, rest), 'hex');
    const got = typeof mac === 'string' && /^[0-9a-f]{64}$/.test(mac) ? Buffer.from(mac, 'hex') : Buffer.alloc(0);
    if (got.length !== want.length || !timingSafeEqual(got, want)) throw new GenseeError('E_STATE', 'control reply MAC does not verify under the operation key', 1);
    if (rest.ok !== true) {
      const code = typeof rest.code === 'string' && /^E_[A-Z_]+$/.test(rest.code) ? (rest.code as ErrorCode) : 'E_STATE';
      throw new GenseeError(code, `supervisor refused: ${String(rest.error ?? rest.code)}`, 1);
    }
    return rest;
  } finally {
    sock.destroy();
  }
}
