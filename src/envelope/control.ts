// The control socket: how operator tools reach a running supervisor to
// change its envelope (a policy apply, an operator lease added or revoked),
// so the change becomes a generation with its counters harvested, instead
// of an edit of the kernel map behind the resolver's back.
//
//   <state>/network-operations/<OP>/control.sock     (0600, beside supervisor.sock)
//
// It is served by the supervisor socket's own I/O thread code (addon/sup_server.c):
// the same framing (4-byte big-endian length, body ≤ 64 KiB, whole frame
// within 2 s, a sequence of request/answer pairs, nothing sent before an
// answer, idle-closed after 30 s) and the same peer admission (uid root or
// the operation owner, never a process inside the operation's cgroup, only
// gensee's own user and mount namespaces). Refusals are recorded in
// faults.jsonl like those of supervisor.sock.
//
// Bodies are proto/gensee/v2/control.proto: a ControlRequest in, a
// SignedControlReply out, whose MAC (HMAC-SHA256 under the operation key)
// covers the whole encoded ControlReply. The client checks that the socket's
// SO_PEERCRED pid and its start time are the resolver identity in
// operation.json, and the MAC, before believing a reply.
import * as net from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { loadAddon } from '../addon';
import type { NativeSupervisorServer, NativeRequest } from '../addon';
import { GenseeError, ErrorCode, type DenyReason } from '../errors';
import { readFrame, writeFrame, encodeFrame } from '../protocol/framing';
import { policyHash } from '../protocol/json';
import type { gensee } from '../gen/control';
import type { Resolver, PeerInfo } from '../resolver/resolver';
import { ServedSocket, fdOf } from '../resolver/unixsock';
import { openOperation, opDir, readKey, type OperationRecord, type ResolverIdentity } from '../state/operation';
import * as path from 'node:path';
import { readStartTimeTicks } from '../resolver/subject';
import type { ControlHandler, ControlPeer, ControlRequest, ControlRoutes, EnvelopeCommand, SupervisorCommand } from './control-types';
import { Tuple, parseAddress, parsePort, parseProtocol } from '../addr';
import { parsePolicy } from '../protocol/json';

export type { ControlHandler, ControlPeer, ControlRequest, ControlRoutes, EnvelopeCommand, SupervisorCommand } from './control-types';

function tupleArg(protocol: unknown, address: unknown, port: unknown): Tuple {
  const a = parseAddress(String(address));
  return { family: a.family, protocol: parseProtocol(String(protocol)), address: a.address, port: parsePort(String(port)) };
}

/**
 * A decoded request's arguments, parsed and checked: the envelope's
 * commands get a policy, a destination, a duration and a count; the
 * supervisor's own (attention, executor) go on as they came, checked where
 * they are carried out. Throws GenseeError, the reply's code.
 */
export function parseCommand(req: ControlRequest): EnvelopeCommand | SupervisorCommand {
  switch (req.command) {
    case 'policy_apply': {
      if (typeof req.policy_text !== 'string') throw new GenseeError('E_SCHEMA', 'policy_text must be a string');
      let json: unknown;
      try {
        json = JSON.parse(req.policy_text);
      } catch (e) {
        throw new GenseeError('E_BAD_JSON', `policy: not JSON: ${(e as Error).message}`);
      }
      return { command: 'policy_apply', policy: parsePolicy(json), hash: policyHash(req.policy_text) };
    }
    case 'lease_add': {
      const tuple = tupleArg(req.protocol, req.address, req.port);
      const ttl = Number(req.ttl_ms);
      const uses = Number(req.max_uses);
      if (!Number.isSafeInteger(ttl) || ttl < 0) throw new GenseeError('E_BAD_DURATION', `bad ttl_ms ${JSON.stringify(req.ttl_ms)}`);
      if (!Number.isSafeInteger(uses) || uses < 0 || uses > 0xffffffff) throw new GenseeError('E_BAD_COUNT', `bad max_uses ${JSON.stringify(req.max_uses)}`);
      return { command: 'lease_add', tuple, ttlMs: ttl, maxUses: uses };
    }
    case 'lease_rm':
      return { command: 'lease_rm', tuple: tupleArg(req.protocol, req.address, req.port) };
    case 'attention_raise':
    case 'attention_clear':
    case 'executor_tool':
    case 'executor_denial':
      return req;
    default:
      throw new GenseeError('E_SCHEMA', 'unknown command');
  }
}

export const CONTROL_SOCKET = 'control.sock';
export const CONTROL_SCHEMA = 2;

// the generated control.proto code, loaded at the first control request or
// reply: an operation nobody sends a command to does not load it at start-up
let pbLoaded: typeof gensee.v2 | null = null;
function pbOf(): typeof gensee.v2 {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at first use, see above
  return (pbLoaded ??= (require('../gen/control') as typeof import('../gen/control')).gensee.v2);
}
const MAC_TAG = Buffer.from('gensee-control-reply-v1\0', 'utf8');

export function replyMac(key: Uint8Array, reply: Uint8Array): Buffer {
  return createHmac('sha256', key).update(MAC_TAG).update(reply).digest();
}

type Reply = { ok: true; command: string; fields: Record<string, unknown> } | { ok: false; code: string; error: string };

/** A SignedControlReply body. */
export function encodeReply(key: Uint8Array, r: Reply): Buffer {
  const reply = pbOf().ControlReply.encode(
    r.ok
      ? { schema: CONTROL_SCHEMA, ok: { command: r.command, fields_json: JSON.stringify(r.fields) } }
      : { schema: CONTROL_SCHEMA, error: { code: r.code, message: r.error } },
  ).finish();
  return Buffer.from(pbOf().SignedControlReply.encode({ reply, mac: replyMac(key, reply) }).finish());
}

/**
 * Strict decode: protobufjs skips unknown fields, so a message is accepted
 * only if it encodes back to exactly its bytes (which also refuses unknown
 * fields at every level, and non-canonical encodings).
 */
function strictDecode<M>(codec: { decode(b: Uint8Array): M; encode(m: M): { finish(): Uint8Array } }, body: Uint8Array, what: string): M {
  let m: M;
  try {
    m = codec.decode(body);
  } catch (e) {
    throw new GenseeError('E_SCHEMA', `${what}: not a protobuf message: ${(e as Error).message}`);
  }
  if (!Buffer.from(codec.encode(m).finish()).equals(Buffer.from(body))) throw new GenseeError('E_SCHEMA', `${what}: unknown fields or a non-canonical encoding`);
  return m;
}

function tupleOf(t: gensee.v2.ILeaseTuple | null | undefined): { protocol: string; address: string; port: number } {
  if (!t) throw new GenseeError('E_SCHEMA', 'control request: missing field "tuple"');
  return { protocol: t.protocol ?? '', address: t.address ?? '', port: t.port ?? 0 };
}

export function decodeRequest(body: Uint8Array): ControlRequest {
  const m = strictDecode<gensee.v2.ControlRequest>(pbOf().ControlRequest, body, 'control request');
  if (m.schema !== CONTROL_SCHEMA) throw new GenseeError('E_SCHEMA', `control request: schema ${m.schema}, expected ${CONTROL_SCHEMA}`);
  if (m.policy_apply) {
    const text = m.policy_apply.policy_text ?? '';
    const hash = m.policy_apply.policy_hash ?? '';
    if (hash && hash !== policyHash(text)) throw new GenseeError('E_SCHEMA', 'control request: policy_hash is not the hash of policy_text');
    return { schema: 1, command: 'policy_apply', policy_text: text };
  }
  if (m.lease_add) {
    const ttl = m.lease_add.ttl_ms;
    return { schema: 1, command: 'lease_add', ...tupleOf(m.lease_add.tuple), ttl_ms: typeof ttl === 'number' ? ttl : Number(ttl ?? 0), max_uses: m.lease_add.max_uses ?? 0 };
  }
  if (m.lease_rm) return { schema: 1, command: 'lease_rm', ...tupleOf(m.lease_rm.tuple) };
  if (m.attention_raise) {
    const a = m.attention_raise;
    return {
      schema: 1,
      command: 'attention_raise',
      signature: a.signature ?? '',
      detail: a.detail ?? '',
      evidence: (a.evidence ?? []).map((n) => Number(n)),
      refs: a.refs ?? [],
      agent_events: a.agent_events ?? '',
    };
  }
  if (m.attention_clear) {
    const c = m.attention_clear;
    return { schema: 1, command: 'attention_clear', by: c.by ?? '', person: c.person ?? '', note: c.note ?? '' };
  }
  if (m.executor_tool) {
    const x = m.executor_tool;
    return { schema: 1, command: 'executor_tool', cgroup_id: String(x.cgroup_id ?? 0), tool_id: x.tool_id ?? '', call_id: x.call_id ?? '' };
  }
  if (m.executor_denial) {
    const x = m.executor_denial;
    return {
      schema: 1,
      command: 'executor_denial',
      tool_id: x.tool_id ?? '',
      call_id: x.call_id ?? '',
      reason: x.reason ?? '',
      target: x.target ?? '',
      detail: x.detail ?? '',
      pid: x.pid ?? 0,
    };
  }
  throw new GenseeError('E_SCHEMA', 'control request: no command');
}

export function encodeRequest(r: ControlRequest): Buffer {
  let m: gensee.v2.IControlRequest;
  switch (r.command) {
    case 'policy_apply':
      m = { schema: CONTROL_SCHEMA, policy_apply: { policy_text: r.policy_text, policy_hash: policyHash(r.policy_text) } };
      break;
    case 'lease_add':
      m = { schema: CONTROL_SCHEMA, lease_add: { tuple: { protocol: r.protocol, address: r.address, port: r.port }, ttl_ms: r.ttl_ms, max_uses: r.max_uses } };
      break;
    case 'lease_rm':
      m = { schema: CONTROL_SCHEMA, lease_rm: { tuple: { protocol: r.protocol, address: r.address, port: r.port } } };
      break;
    case 'attention_raise':
      m = { schema: CONTROL_SCHEMA, attention_raise: { signature: r.signature, detail: r.detail, evidence: r.evidence, refs: r.refs, agent_events: r.agent_events } };
      break;
    case 'attention_clear':
      m = { schema: CONTROL_SCHEMA, attention_clear: { by: r.by, person: r.person, note: r.note } };
      break;
    case 'executor_tool':
      m = { schema: CONTROL_SCHEMA, executor_tool: { cgroup_id: Number(r.cgroup_id), tool_id: r.tool_id, call_id: r.call_id } };
      break;
    case 'executor_denial':
      m = {
        schema: CONTROL_SCHEMA,
        executor_denial: { tool_id: r.tool_id, call_id: r.call_id, reason: r.reason, target: r.target, detail: r.detail, pid: r.pid },
      };
      break;
  }
  return Buffer.from(pbOf().ControlRequest.encode(m).finish());
}

export class ControlServer {
  private native: NativeSupervisorServer | null = null;
  private readonly sock: ServedSocket;
  private refusalSeq = 0;

  constructor(
    private readonly o: {
      socketPath: string;
      ownerUid: number;
      cgroup: string;
      key: Buffer;
      /** the envelope's commands (and any command without a route) */
      handler: ControlHandler;
      /** the operation's other commands, by name: dispatched here, never through the envelope */
      routes?: ControlRoutes;
      /** true while the supervisor stops: a routed command is refused E_STATE, as the envelope's are */
      stopping?: () => boolean;
      /** a request refused before it reached the handler (peer, frame, schema) */
      onRefused?: (reason: string, detail: string, peer: ControlPeer | null) => void;
      /** where refusals are recorded (faults.jsonl); the answer leaves once its line is durable */
      refusals?: Pick<Resolver, 'refuseTicket' | 'log'>;
    },
  ) {
    this.sock = new ServedSocket(o.socketPath);
  }

  async listen(): Promise<void> {
    this.native = await this.sock.open(this.o.ownerUid, this.o.cgroup, (req) => this.serve(req));
  }

  async close(): Promise<void> {
    this.native = null;
    this.sock.close();
  }

  private answer(id: number, r: Reply, ticket?: number): void {
    const log = ticket !== undefined && this.o.refusals ? this.o.refusals.log.handle : null;
    this.native?.answer(id, encodeFrame(encodeReply(this.o.key, r)), log, ticket ?? 0, true);
  }

  private refuse(id: number, code: string, reason: DenyReason, detail: string, peer: ControlPeer | null, gid?: number): void {
    this.o.onRefused?.(code, detail, peer);
    let ticket: number | undefined;
    if (this.o.refusals) {
      const who: PeerInfo | undefined = peer ? { pid: peer.pid, uid: peer.uid, gid: gid ?? 0 } : undefined;
      ticket = this.o.refusals.refuseTicket(reason, `control.sock: ${code}: ${detail}`, { via: 'socket', socket: 'control.sock', peer: who }, `control-refused-${process.pid}-${++this.refusalSeq}`).ticket;
    }
    this.answer(id, { ok: false, code, error: detail }, ticket);
  }

  /** a command to its route (attention, executor records) or to the envelope's handler */
  private dispatch(cmd: EnvelopeCommand | SupervisorCommand, peer: ControlPeer): Promise<Record<string, unknown>> {
    const route = (this.o.routes as Record<string, ((c: typeof cmd, p: ControlPeer) => Promise<Record<string, unknown>>) | undefined> | undefined)?.[cmd.command];
    if (!route) return this.o.handler(cmd, peer);
    if (this.o.stopping?.()) return Promise.reject(new GenseeError('E_STATE', 'the supervisor is stopping'));
    return route(cmd, peer);
  }

  private async serve(req: NativeRequest): Promise<void> {
    const peer: ControlPeer | null = req.pid !== undefined ? { pid: req.pid, uid: req.uid! } : null;
    if (req.status === 'unauthenticated_peer') return this.refuse(req.id, 'unauthenticated_peer', 'unauthenticated_peer', req.detail, peer, req.gid);
    if (req.status !== 'frame' || !req.body) return this.refuse(req.id, 'malformed_request', 'malformed_fault', `${req.status}: ${req.detail}`, peer, req.gid);
    if (req.trailing) return this.refuse(req.id, 'malformed_request', 'malformed_fault', 'frame_trailing: bytes after the frame', peer, req.gid);
    let r: ControlRequest;
    try {
      r = decodeRequest(req.body);
    } catch (e) {
      return this.refuse(req.id, (e as GenseeError).code ?? 'malformed_request', 'malformed_fault', (e as Error).message, peer, req.gid);
    }
    try {
      const fields = await this.dispatch(parseCommand(r), peer!);
      this.answer(req.id, { ok: true, command: r.command, fields });
    } catch (e) {
      // the handler's own refusal (bad policy, no such lease): answered, not a refused peer
      const code = e instanceof GenseeError ? e.code : 'backend_error';
      this.answer(req.id, { ok: false, code, error: (e as Error).message });
    }
  }
}

/**
 * controlRequest to the running supervisor of operation `op` in stateDir:
 * its socket, key and resolver identity (rec: the record already read).
 */
export async function controlRequestTo(stateDir: string, op: string, request: ControlRequest, rec?: OperationRecord): Promise<Record<string, unknown>> {
  const r = rec ?? (await openOperation(stateDir, op));
  return controlRequest({ socketPath: path.join(opDir(stateDir, op), CONTROL_SOCKET), key: await readKey(stateDir, op), resolver: r.resolver, request });
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
  if (!o.resolver) throw new GenseeError('E_STATE', 'no resolver is running for this operation (operation.json has none)');
  const sock = net.createConnection(o.socketPath);
  sock.on('error', () => undefined);
  const timeoutMs = o.timeoutMs ?? 30_000;
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new GenseeError('E_STATE', `connect ${o.socketPath}: timed out`)), 5000);
      sock.once('connect', () => {
        clearTimeout(t);
        resolve();
      });
      sock.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(t);
        reject(new GenseeError('E_STATE', `no supervisor is listening on ${o.socketPath} (${e.code ?? e.message})`));
      });
    });
    const cred = loadAddon().peerCred(fdOf(sock));
    if (cred.pid !== o.resolver.pid || readStartTimeTicks(cred.pid) !== o.resolver.start_time_ticks) {
      throw new GenseeError('E_STATE', `control socket peer pid ${cred.pid} is not the resolver of operation.json (pid ${o.resolver.pid})`);
    }
    const reply = readFrame(sock, { idleTimeoutMs: timeoutMs, timeoutMs });
    reply.catch(() => undefined);
    await writeFrame(sock, encodeRequest(o.request));
    const frame = await reply;
    let signed: gensee.v2.SignedControlReply;
    let r: gensee.v2.ControlReply;
    try {
      signed = strictDecode<gensee.v2.SignedControlReply>(pbOf().SignedControlReply, frame, 'control reply');
      const got = Buffer.from(signed.mac);
      const want = replyMac(o.key, signed.reply);
      if (got.length !== want.length || !timingSafeEqual(got, want)) throw new GenseeError('E_STATE', 'control reply MAC does not verify under the operation key');
      r = strictDecode<gensee.v2.ControlReply>(pbOf().ControlReply, signed.reply, 'control reply');
    } catch (e) {
      if (e instanceof GenseeError && e.code === 'E_STATE') throw e;
      throw new GenseeError('E_STATE', (e as Error).message);
    }
    if (r.schema !== CONTROL_SCHEMA) throw new GenseeError('E_STATE', `control reply: schema ${r.schema}, expected ${CONTROL_SCHEMA}`);
    if (r.ok) {
      let fields: Record<string, unknown>;
      try {
        fields = JSON.parse(r.ok.fields_json ?? '') as Record<string, unknown>;
      } catch {
        throw new GenseeError('E_STATE', 'control reply: fields_json is not JSON');
      }
      return { ok: true, command: r.ok.command ?? '', ...fields };
    }
    const code = r.error?.code ?? '';
    const ecode = /^E_[A-Z_]+$/.test(code) ? (code as ErrorCode) : 'E_STATE';
    throw new GenseeError(ecode, `supervisor refused: ${r.error?.message || code}`);
  } finally {
    sock.destroy();
  }
}
