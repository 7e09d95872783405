// The executor's side of a tool's capability handle (src/executor/handle.ts
// has the wire). For each frame, in this order:
//   1. the handle's token authenticates its (call_id, key) under the
//      operation key                                   else handle_forged
//   2. the handle's call_id is THIS call's (a valid handle of another call,
//      replayed here, is not)                          else handle_forged
//   3. Idempotent tools only: the write carries a key  else write_key_missing
//   4. that key is the journaled one, and no Idempotency-Key header the tool
//      set says otherwise                              else write_key_mismatch
// A refused write is answered {denied} at once and reported to the supervisor
// (faults.jsonl: an application-effect fault denied; events.jsonl:
// write_denied naming the tool). An accepted write is performed here, outside
// the boundary, by undici, with the key set by the executor: Idempotency-Key
// for Idempotent tools, X-Request-Id for Queryable ones, nothing for Unsafe.
import type { Duplex } from 'node:stream';
import { request } from 'undici';
import { GenseeError } from '../errors';
import type { LookupIO, WriteRequest } from './tool';
import type { CallClass } from './journal';
import { reportWriteDenied, WriteDenialReason } from './report';
import { HandleAnswer, LineReader, MAX_RESPONSE_BODY, tokenValid } from './handle';

export interface ServedCall {
  callId: string;
  toolId: string;
  cls: CallClass;
  key: string | null;
  requestId: string | null;
}

export interface HandleServerOptions {
  stateDir: string;
  op: string;
  opKey: Buffer;
  call: ServedCall;
  /** the tool's host pid, for the denial record (0 when not known) */
  pid: () => number;
  /** per write: headers and body (default 30 s each) */
  timeoutMs?: number;
  /** told of each write performed or refused */
  onWrite?: (w: ServedWrite) => void;
  /**
   * Before a write is performed: may this tool write there? The supervisor
   * decides (src/backends/executor.ts: a delegate rule naming the tool) and
   * records it; null = allowed, else the deny reason.
   */
  authorize?: (url: URL) => Promise<string | null>;
}

export type ServedWrite =
  | { outcome: 'performed'; method: string; target: string; status: number }
  | { outcome: 'denied'; reason: WriteDenialReason | 'policy_denied'; target: string; detail: string; fault_id?: string }
  | { outcome: 'error'; target: string; detail: string };

const METHOD_RE = /^[A-Z]{1,16}$/;
const REFUSED_METHODS = new Set(['CONNECT', 'TRACE']);
/** the executor sets these, or the transport does: a tool's own are dropped */
const DROPPED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'proxy-connection', 'te', 'trailer', 'expect']);
const MAX_HEADERS = 64;
/** a tool refused this often has its handle closed: each refusal is a record, and a tool flooding them is done writing */
export const MAX_DENIALS_PER_CALL = 8;

/** A URL as a record may name it: no query, fragment or credentials. */
export function targetOf(url: unknown): string {
  if (typeof url !== 'string') return '';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`.slice(0, 200);
  } catch {
    return '';
  }
}

function oneLine(s: string, max = 240): string {
  const t = s.replace(/[\r\n\t]+/g, ' ');
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

class BadFrame extends Error {}

/** the request part of a frame, checked: a bad one is refused as an error, never performed */
function checkRequest(v: unknown): { method: string; url: URL; headers: Record<string, string>; body: string | undefined } {
  if (!isObject(v)) throw new BadFrame('"request" must be an object {method?, url, headers?, body?}');
  const method = v.method === undefined ? 'POST' : v.method;
  if (typeof method !== 'string' || !METHOD_RE.test(method) || REFUSED_METHODS.has(method)) throw new BadFrame(`method ${JSON.stringify(method)} is not allowed`);
  if (typeof v.url !== 'string') throw new BadFrame('"url" must be a string');
  let url: URL;
  try {
    url = new URL(v.url);
  } catch {
    throw new BadFrame('"url" is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadFrame(`only http: and https: URLs can be written to, not ${url.protocol}`);
  if (url.username || url.password) throw new BadFrame('credentials in the URL are not allowed');
  const headers: Record<string, string> = {};
  if (v.headers !== undefined) {
    if (!isObject(v.headers)) throw new BadFrame('"headers" must be an object of strings');
    const entries = Object.entries(v.headers);
    if (entries.length > MAX_HEADERS) throw new BadFrame(`at most ${MAX_HEADERS} headers`);
    for (const [k, val] of entries) {
      if (typeof val !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/.test(k) || /[\r\n\0]/.test(val)) throw new BadFrame(`header ${JSON.stringify(k)} is not a valid header`);
      const name = k.toLowerCase();
      if (DROPPED_HEADERS.has(name)) continue;
      headers[name] = val;
    }
  }
  if (v.body !== undefined && typeof v.body !== 'string') throw new BadFrame('"body" must be a string');
  return { method, url, headers, body: v.body as string | undefined };
}

/**
 * Serves one tool's handle socket for one call. Frames are handled one at a
 * time, in order. drain() ends it.
 */
export class HandleServer {
  readonly writes: ServedWrite[] = [];
  private chain: Promise<void> = Promise.resolve();
  private reports: Promise<unknown>[] = [];
  private readonly ended: Promise<void>;

  constructor(
    private readonly sock: Duplex,
    private readonly o: HandleServerOptions,
  ) {
    const reader = new LineReader(
      (line) => {
        this.chain = this.chain.then(() => this.serve(line));
      },
      () => {
        this.answer({ error: 'oversize frame' });
        sock.destroy();
      },
    );
    sock.on('data', (b: Buffer) => reader.push(b));
    this.ended = new Promise<void>((resolve) => {
      sock.once('close', () => resolve());
      sock.once('end', () => resolve());
      sock.on('error', () => undefined);
    });
  }

  /**
   * Once the tool is gone: give the socket up to ms to deliver what is in
   * flight, close it, wait for every frame to be answered and every denial to
   * be reported. Rejects when a denial could not be recorded (a refusal
   * nobody can see is an error of the call).
   */
  async drain(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.ended, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    this.sock.destroy();
    await this.chain;
    const r = await Promise.allSettled(this.reports);
    const bad = r.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (bad) throw new GenseeError('E_STATE', `a refused write could not be recorded: ${(bad.reason as Error)?.message ?? String(bad.reason)}`);
  }

  close(): void {
    this.sock.destroy();
  }

  private answer(a: HandleAnswer): void {
    if (!this.sock.destroyed) this.sock.write(JSON.stringify(a) + '\n');
  }

  private record(w: ServedWrite): void {
    this.writes.push(w);
    this.o.onWrite?.(w);
  }

  private denials = 0;

  private deny(reason: WriteDenialReason, target: string, detail: string): void {
    const d = oneLine(detail);
    this.answer({ denied: reason, detail: d });
    if (++this.denials >= MAX_DENIALS_PER_CALL) this.sock.end();
    const w: ServedWrite = { outcome: 'denied', reason, target, detail: d };
    this.record(w);
    const c = this.o.call;
    this.reports.push(
      reportWriteDenied(this.o.stateDir, this.o.op, { toolId: c.toolId, callId: c.callId, reason, target, detail: d, pid: this.o.pid() }).then((id) => {
        w.fault_id = id;
      }),
    );
  }

  private async serve(line: string): Promise<void> {
    // the handle was closed on the tool (too many refusals): nothing more is served or recorded
    if (this.denials >= MAX_DENIALS_PER_CALL) return;
    let frame: Record<string, unknown>;
    try {
      const v = JSON.parse(line) as unknown;
      if (!isObject(v)) throw new Error();
      frame = v;
    } catch {
      this.answer({ error: 'a frame must be one JSON object' });
      this.record({ outcome: 'error', target: '', detail: 'a frame that is not a JSON object' });
      return;
    }
    const c = this.o.call;
    const req = isObject(frame.request) ? (frame.request as unknown as WriteRequest) : null;
    const target = targetOf(req?.url);
    const h = frame.handle;
    // 1. the handle authenticates its own (call id, key)
    const hCall = isObject(h) && typeof h.call_id === 'string' ? h.call_id : null;
    const hKey = isObject(h) && (h.key === null || typeof h.key === 'string') ? (h.key as string | null) : undefined;
    if (hCall === null || hKey === undefined || !tokenValid(this.o.opKey, hCall, hKey, isObject(h) ? h.token : undefined)) {
      return this.deny('handle_forged', target, `a handle whose token does not authenticate it under the operation key (call ${hCall === null ? '?' : oneLine(hCall, 64)})`);
    }
    // 2. and it is this call's
    if (hCall !== c.callId) return this.deny('handle_forged', target, `the handle of call ${oneLine(hCall, 64)} replayed in call ${c.callId}`);
    let checked: ReturnType<typeof checkRequest>;
    try {
      checked = checkRequest(frame.request);
    } catch (e) {
      if (!(e instanceof BadFrame)) throw e;
      this.answer({ error: e.message });
      this.record({ outcome: 'error', target, detail: e.message });
      return;
    }
    const headers = checked.headers;
    if (c.cls === 'idempotent') {
      // 3. a key, 4. the journaled one, and no header of the tool's own saying otherwise
      const k = frame.key;
      if (k === undefined || k === null || k === '') return this.deny('write_key_missing', target, 'a write to an idempotent tool without the gensee-supplied key');
      if (k !== c.key) return this.deny('write_key_mismatch', target, `a write carrying key ${typeof k === 'string' ? oneLine(k, 16) : typeof k}…, not the call's key`);
      const own = headers['idempotency-key'];
      if (own !== undefined && own !== c.key) return this.deny('write_key_mismatch', target, `an Idempotency-Key header the tool made up (${oneLine(own, 16)}…), not the call's key`);
      headers['idempotency-key'] = c.key!;
    } else if (c.cls === 'queryable') {
      headers['x-request-id'] = c.requestId!;
    }
    if (this.o.authorize) {
      let why: string | null;
      try {
        why = await this.o.authorize(checked.url);
      } catch (e) {
        why = `backend_error: ${oneLine((e as Error).message ?? String(e))}`;
      }
      if (why !== null) {
        // the supervisor recorded it (faults.jsonl, write_denied): answered here, counted as a refusal
        const detail = `no delegate rule lets tool ${c.toolId} write to ${target} (${why})`;
        this.answer({ denied: 'policy_denied', detail });
        if (++this.denials >= MAX_DENIALS_PER_CALL) this.sock.end();
        this.record({ outcome: 'denied', reason: 'policy_denied', target, detail });
        return;
      }
    }
    await this.perform(checked.method, checked.url, headers, checked.body, target);
  }

  private async perform(method: string, url: URL, headers: Record<string, string>, body: string | undefined, target: string): Promise<void> {
    const timeout = this.o.timeoutMs ?? 30_000;
    try {
      const res = await request(url, { method: method as 'POST', headers, body, headersTimeout: timeout, bodyTimeout: timeout });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body) {
        const b = chunk as Buffer;
        if (size + b.length > MAX_RESPONSE_BODY) {
          chunks.push(b.subarray(0, MAX_RESPONSE_BODY - size));
          truncated = true;
          res.body.destroy();
          break;
        }
        chunks.push(b);
        size += b.length;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      this.answer(truncated ? { status: res.statusCode, body: text, truncated } : { status: res.statusCode, body: text });
      this.record({ outcome: 'performed', method, target, status: res.statusCode });
    } catch (e) {
      const msg = oneLine((e as Error).message ?? String(e));
      this.answer({ error: msg });
      this.record({ outcome: 'error', target, detail: msg });
    }
  }
}

/** a lookup may ask for this many GETs; then its socket is closed */
export const MAX_LOOKUP_GETS = 16;

/**
 * Serves a Queryable tool's lookup process (tool-main lookup, inside the
 * boundary): each frame {"v":1, "get":{url, headers?}} is a GET the executor
 * performs with `io` (bounded, http(s) only, the request checked like a
 * write's), answered {status, body} or {error}. Nothing else is served.
 */
export class LookupServer {
  private chain: Promise<void> = Promise.resolve();
  private gets = 0;
  private readonly ended: Promise<void>;

  constructor(
    private readonly sock: Duplex,
    private readonly io: LookupIO,
  ) {
    const reader = new LineReader(
      (line) => {
        this.chain = this.chain.then(() => this.serve(line));
      },
      () => {
        this.answer({ error: 'oversize frame' });
        sock.destroy();
      },
    );
    sock.on('data', (b: Buffer) => reader.push(b));
    this.ended = new Promise<void>((resolve) => {
      sock.once('close', () => resolve());
      sock.once('end', () => resolve());
      sock.on('error', () => undefined);
    });
  }

  async drain(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.ended, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    this.sock.destroy();
    await this.chain;
  }

  private answer(a: HandleAnswer): void {
    if (!this.sock.destroyed) this.sock.write(JSON.stringify(a) + '\n');
  }

  private async serve(line: string): Promise<void> {
    if (this.sock.destroyed) return;
    if (++this.gets > MAX_LOOKUP_GETS) {
      this.answer({ error: `a lookup makes at most ${MAX_LOOKUP_GETS} GETs` });
      this.sock.end();
      return;
    }
    let get: ReturnType<typeof checkRequest>;
    try {
      const v = JSON.parse(line) as unknown;
      if (!isObject(v) || v.v !== 1 || !isObject(v.get)) throw new BadFrame('a lookup frame is {"v":1,"get":{url, headers?}}');
      get = checkRequest({ method: 'GET', url: v.get.url, headers: v.get.headers });
    } catch (e) {
      this.answer({ error: e instanceof BadFrame ? e.message : 'a frame must be one JSON object' });
      return;
    }
    try {
      const r = await this.io.get(get.url.href, get.headers);
      this.answer({ status: r.status, body: r.body });
    } catch (e) {
      this.answer({ error: oneLine((e as Error).message ?? String(e)) });
    }
  }
}
