// The capability handle (DESIGN.md "Delegated executor and keyed
// capabilities"): a tool's only write path. The tool process (inside the
// operation's boundary) holds fd 3, a unix stream socket to its executor, and
// GENSEE_HANDLE = {"call_id", "key", "token"}; the token is
//
//   hex HMAC-SHA256( operation key, "gensee-handle-v1\0" + call_id + "\0" + (key ?? "") )
//
// so the tool holds a credential bound to (call id, key) but never the
// operation key, and cannot make one for another key or call.
//
// Wire (both ways): one JSON object per line, UTF-8, at most MAX_FRAME bytes,
// one request at a time (the executor answers each before reading the next).
//   tool → executor  {"v":1, "handle":{call_id,key,token}, "key":<the key the write carries>|null,
//                     "request":{method?, url, headers?, body?}}
//   executor → tool  {"status":N, "body":"…", "truncated"?:true}   the write was performed
//                  | {"denied":"write_key_missing|write_key_mismatch|handle_forged|policy_denied", "detail":"…"}
//                  | {"error":"…"}                                  not performed (bad frame) or failed in transit
// The honest client (openHandle) sends the handle's own key as "key"; a tool
// that writes the frame itself can send anything, which is what the executor
// checks (src/executor/server.ts).
import * as net from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WriteHandle, WriteRequest, WriteResult } from './tool';
import type { WriteDenialReason } from './report';

export const HANDLE_ENV = 'GENSEE_HANDLE';
/** the tool's arguments (JSON), as journaled */
export const TOOL_ARGS_ENV = 'GENSEE_TOOL_ARGS';
/** the request id a Queryable tool's lookup is asked about (tool-main lookup) */
export const REQUEST_ID_ENV = 'GENSEE_REQUEST_ID';
/** where the tool finds its end of the handle socket (gensee-exec --handle-fd) */
export const HANDLE_FD = 3;
/** a frame (one line, either way) is at most this long, newline excluded */
export const MAX_FRAME = 1 << 20;
/** a response body handed back to the tool is at most this long (bytes, then truncated) */
export const MAX_RESPONSE_BODY = 256 << 10;

const TOKEN_LABEL = 'gensee-handle-v1';

export interface HandleCredentials {
  call_id: string;
  key: string | null;
  token: string;
}

export interface HandleFrame {
  v: 1;
  handle: HandleCredentials;
  key: string | null;
  request: WriteRequest;
}

export type HandleAnswer = { status: number; body: string; truncated?: boolean } | { denied: WriteDenialReason | 'policy_denied'; detail: string } | { error: string };

/** The handle token of (callId, key) under the operation key. */
export function handleToken(opKey: Buffer, callId: string, key: string | null): string {
  return createHmac('sha256', opKey).update(`${TOKEN_LABEL}\0${callId}\0${key ?? ''}`, 'utf8').digest('hex');
}

/** Does token authenticate (callId, key) under the operation key? Constant time in the token. */
export function tokenValid(opKey: Buffer, callId: string, key: string | null, token: unknown): boolean {
  if (typeof token !== 'string' || !/^[0-9a-f]{64}$/.test(token)) return false;
  return timingSafeEqual(Buffer.from(handleToken(opKey, callId, key), 'hex'), Buffer.from(token, 'hex'));
}

/** A write the executor refused; `reason` is the deny reason it recorded against the tool. */
export class HandleDenied extends Error {
  readonly reason: WriteDenialReason | 'policy_denied';
  constructor(reason: WriteDenialReason | 'policy_denied', detail: string) {
    super(`write denied: ${reason}${detail ? `: ${detail}` : ''}`);
    this.name = 'HandleDenied';
    this.reason = reason;
  }
}

/** Splits a byte stream into lines of at most MAX_FRAME bytes; calls onLine for each. */
export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOversize: () => void,
  ) {}

  push(chunk: Buffer): void {
    let rest = chunk;
    for (let i = rest.indexOf(0x0a); i >= 0; i = rest.indexOf(0x0a)) {
      const head = rest.subarray(0, i);
      if (this.size + head.length > MAX_FRAME) return this.onOversize();
      this.parts.push(head);
      const line = Buffer.concat(this.parts).toString('utf8');
      this.parts = [];
      this.size = 0;
      rest = rest.subarray(i + 1);
      this.onLine(line);
    }
    if (this.size + rest.length > MAX_FRAME) return this.onOversize();
    if (rest.length > 0) {
      this.parts.push(Buffer.from(rest));
      this.size += rest.length;
    }
  }
}

function parseCredentials(text: string | undefined): HandleCredentials {
  if (!text) throw new Error(`${HANDLE_ENV} is not set: this process was not started by a gensee executor`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`${HANDLE_ENV} is not JSON`);
  }
  const o = v as Partial<HandleCredentials>;
  if (typeof o !== 'object' || o === null || typeof o.call_id !== 'string' || typeof o.token !== 'string' || !(o.key === null || typeof o.key === 'string')) {
    throw new Error(`${HANDLE_ENV} must be {"call_id","key","token"}`);
  }
  return { call_id: o.call_id, key: o.key, token: o.token };
}

/**
 * The tool's side of the handle socket. write() is the honest path; send()
 * puts any frame on the wire (what a misbehaving tool could do with fd 3
 * anyway: the executor's checks are the boundary, not this class).
 */
export class HandleClient implements WriteHandle {
  readonly credentials: HandleCredentials;
  private sock: net.Socket | null = null;
  private readonly fd: number;
  private queue: Promise<unknown> = Promise.resolve();
  private pending: { resolve: (a: HandleAnswer) => void; reject: (e: Error) => void } | null = null;
  private closedWith: Error | null = null;

  constructor(credentials: HandleCredentials, fd = HANDLE_FD) {
    this.credentials = credentials;
    this.fd = fd;
  }

  private socket(): net.Socket {
    if (this.sock) return this.sock;
    const s = new net.Socket({ fd: this.fd, readable: true, writable: true });
    const reader = new LineReader(
      (line) => {
        const p = this.pending;
        this.pending = null;
        if (!p) return;
        try {
          p.resolve(JSON.parse(line) as HandleAnswer);
        } catch {
          p.reject(new Error('the executor sent a frame that is not JSON'));
        }
      },
      () => this.fail(new Error('the executor sent an oversize frame')),
    );
    s.on('data', (b: Buffer) => reader.push(b));
    s.on('error', (e) => this.fail(new Error(`capability handle: ${e.message}`)));
    s.on('close', () => this.fail(new Error('capability handle closed: the executor is gone')));
    s.unref();
    this.sock = s;
    return s;
  }

  private fail(e: Error): void {
    if (!this.closedWith) this.closedWith = e;
    const p = this.pending;
    this.pending = null;
    p?.reject(e);
    this.sock?.destroy();
  }

  /** Send one frame (any JSON value) and wait for its answer; one at a time. */
  send(frame: unknown): Promise<HandleAnswer> {
    const run = async (): Promise<HandleAnswer> => {
      if (this.closedWith) throw this.closedWith;
      const text = JSON.stringify(frame);
      if (Buffer.byteLength(text) > MAX_FRAME) throw new Error(`a handle frame is at most ${MAX_FRAME} bytes`);
      const s = this.socket();
      s.ref();
      try {
        return await new Promise<HandleAnswer>((resolve, reject) => {
          this.pending = { resolve, reject };
          s.write(text + '\n');
        });
      } finally {
        s.unref();
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** A write through the executor, carrying the handle's key. */
  async write(req: WriteRequest): Promise<WriteResult> {
    const a = await this.send({ v: 1, handle: this.credentials, key: this.credentials.key, request: req } satisfies HandleFrame);
    return answerToResult(a);
  }

  close(): void {
    this.sock?.destroy();
  }
}

/** A performed write's result, or the refusal / error as an exception. */
export function answerToResult(a: HandleAnswer): WriteResult {
  if ('denied' in a) throw new HandleDenied(a.denied, a.detail);
  if ('error' in a) throw new Error(`write failed: ${a.error}`);
  if (typeof a.status !== 'number' || typeof a.body !== 'string') throw new Error('the executor sent a malformed answer');
  return { status: a.status, body: a.body };
}

/** The capability handle of this tool process (GENSEE_HANDLE, fd 3). */
export function openHandle(env: NodeJS.ProcessEnv = process.env, fd = HANDLE_FD): HandleClient {
  return new HandleClient(parseCredentials(env[HANDLE_ENV]), fd);
}
