// The live stream (DESIGN.md "Live stream"): a WebSocket server (the `ws`
// package) on <OP>/events.sock (unix socket, 0600) and, when asked, on a
// loopback TCP port. It carries every line appended to faults.jsonl,
// counters.jsonl and events.jsonl, as announced by the LogHub.
//
// Upgrade: `Authorization: Bearer <token>` (the operation token, compared in
// constant time). Wrong or missing → HTTP 401, no upgrade, onRefused.
// Query: `?logs=events,faults` picks logs (default all three);
// `?since=LOG:SEQ` (once per log) first replays that log's lines with
// seq > SEQ from its file, then goes live. Live lines that arrive during the
// replay are held and deduplicated by seq, so the switch neither misses nor
// repeats a line.
//
// Message: the file line's object plus "log" — the exact line text with
// `,"log":"<name>"` inserted before its final `}`.
//
// The writer never waits for a subscriber: the hub listener formats a line
// once and appends it to each subscriber's queue; a pump (on a later turn of
// the event loop) hands queued lines to the socket while its kernel-side
// buffer keeps up. A subscriber that has made no send progress for stallMs
// while it has something to send, or whose queue exceeds maxBufferedBytes,
// is dropped (close 1008, then the socket is destroyed) and reported through
// onDropped. Per subscriber, memory is at most maxBufferedBytes queued plus
// one socket high-water mark.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import { createHash, timingSafeEqual } from 'node:crypto';
// `ws` is loaded at the first upgrade (wsServer()): a `gensee run` nobody
// subscribes to does not pay for its module graph at start-up
import type { WebSocketServer, WebSocket } from 'ws';
import { GenseeError, isErrno } from '../errors';
import { assertNoSymlinks } from '../state/fsutil';
import { loadAddon } from '../addon';
import { fdOf } from '../resolver/unixsock';
import { openPrivateSocket } from '../privsock';
import { STREAM_LOGS, type LogName } from './types';
import type { HubLine, LogHub } from './hub';

export const EVENTS_SOCKET = 'events.sock';
export const DEFAULT_STALL_MS = 10_000;
/** per subscriber: characters queued beyond what the socket holds */
export const DEFAULT_MAX_BUFFERED_BYTES = 16 << 20;
export const DEFAULT_MAX_SUBSCRIBERS = 64;
/** hand the socket at most this much before waiting for it to drain */
const SOCKET_HIGH_WATER = 256 << 10;
/** replay reads the file in chunks this size, pausing while the queue is over half the bound */
const REPLAY_CHUNK = 256 << 10;
/** a file line longer than this is skipped by the replay (no writer makes one) */
const MAX_REPLAY_LINE = 4 << 20;
/** a dropped subscriber that does not finish the close handshake in this time is destroyed */
const CLOSE_GRACE_MS = 1000;
const SEQ_PREFIX = /^\{"seq":([0-9]{1,15})[,}]/;

/** a refused upgrade (or plain HTTP request): the caller records it as a peer_refused boundary event */
export interface StreamRefusal {
  /** "uid U pid P" on the unix socket (SO_PEERCRED), "ADDR:PORT" on TCP */
  peer: string;
  reason: string;
  /** the HTTP status sent: 401 bad token, 400 bad query, 503 full or closing, 426 not an upgrade */
  status: number;
}

/** a subscriber dropped by the server (stalled or over its bound) */
export interface StreamDrop {
  peer: string;
  reason: string;
  /** characters queued for it when it was dropped (then freed) */
  queued_bytes: number;
  /** messages it had been handed */
  sent: number;
}

export interface StreamListen {
  host: string;
  port: number;
}

export interface EventStreamOptions {
  /** the operation directory (opDir()): the logs are read from here on replay */
  dir: string;
  hub: LogHub;
  /** the operation token (ensureToken()) */
  token: string;
  /** default <dir>/events.sock */
  socketPath?: string;
  /** also listen on loopback TCP (127.0.0.0/8 or ::1 only); port 0 picks one */
  listen?: StreamListen;
  /** uid to own the socket file when it is not root (the operation owner) */
  ownerUid?: number;
  onRefused?: (r: StreamRefusal) => void;
  onDropped?: (d: StreamDrop) => void;
  /** a subscriber with something to send and no send progress for this long is dropped (default 10 s) */
  stallMs?: number;
  /** a subscriber whose queue exceeds this many characters is dropped (default 16 MiB) */
  maxBufferedBytes?: number;
  /** more concurrent subscribers are refused with 503 (default 64) */
  maxSubscribers?: number;
  /**
   * Plain HTTP requests other than the stream's (/metrics, the cockpit
   * page): given each request and whether it carries the operation token;
   * true when it answered. A request it leaves is refused (401/426) and
   * reported as before.
   */
  routes?: (req: http.IncomingMessage, res: http.ServerResponse, authorized: boolean) => boolean;
}

export interface SubscriberStats {
  peer: string;
  logs: LogName[];
  phase: 'replay' | 'live';
  /** characters in its queue now (not yet handed to the socket) */
  queued_bytes: number;
  /** the most it ever had queued */
  max_queued_bytes: number;
  /** bytes the socket holds in user space (handed, not yet written to the kernel) */
  socket_buffered: number;
  sent: number;
}

export interface EventStream {
  readonly socketPath: string;
  /** the TCP port when listen was given */
  readonly port?: number;
  subscribers(): number;
  stats(): SubscriberStats[];
  /** stop listening, close every subscriber (1001 "operation stopped"), remove the socket file */
  close(): Promise<void>;
}

/** what `?logs=` and `?since=` ask for */
export interface StreamQuery {
  logs: LogName[];
  since: Partial<Record<LogName, number>>;
}

const isLogName = (s: string): s is LogName => (STREAM_LOGS as readonly string[]).includes(s);

/** Parse the query of an upgrade URL; throws a one-line message on anything malformed. */
export function parseStreamQuery(search: URLSearchParams): StreamQuery {
  for (const k of search.keys()) if (k !== 'logs' && k !== 'since') throw new Error(`unknown query parameter "${k}"`);
  const logsArg = search.getAll('logs');
  if (logsArg.length > 1) throw new Error('logs given more than once');
  let logs: LogName[] = [...STREAM_LOGS];
  if (logsArg.length === 1) {
    const names = logsArg[0].split(',');
    logs = [];
    for (const n of names) {
      if (!isLogName(n)) throw new Error(`unknown log "${n.slice(0, 32)}" (expected ${STREAM_LOGS.join(', ')})`);
      if (!logs.includes(n)) logs.push(n);
    }
  }
  const since: Partial<Record<LogName, number>> = {};
  for (const s of search.getAll('since')) {
    const m = /^([a-z]+):([0-9]{1,15})$/.exec(s);
    if (!m || !isLogName(m[1])) throw new Error(`bad since "${s.slice(0, 48)}" (expected LOG:SEQ, LOG one of ${STREAM_LOGS.join(', ')})`);
    const log = m[1];
    if (since[log] !== undefined) throw new Error(`since given twice for ${log}`);
    if (!logs.includes(log)) throw new Error(`since names ${log}, which is not among the selected logs`);
    since[log] = Number(m[2]);
  }
  return { logs, since };
}

/** a listen address for the stream: loopback only (127.0.0.0/8, ::1), a port 0-65535 */
export function checkListen(l: StreamListen): StreamListen {
  const host = typeof l?.host === 'string' ? l.host.replace(/^\[(.*)\]$/, '$1') : '';
  const loopback = (net.isIPv4(host) && host.split('.')[0] === '127') || (net.isIPv6(host) && new URL(`http://[${host}]/`).hostname === '[::1]');
  if (!loopback) throw new GenseeError('E_USAGE', `the live stream listens on loopback only (127.0.0.1 or ::1), not ${JSON.stringify(l?.host)}`);
  if (!Number.isInteger(l.port) || l.port < 0 || l.port > 65535) throw new GenseeError('E_BAD_PORT', `bad port ${JSON.stringify(l.port)} for the live stream`);
  return { host, port: l.port };
}

/** "127.0.0.1:PORT" or "[::1]:PORT" (the --listen argument) → StreamListen, loopback only */
export function parseListen(s: string): StreamListen {
  const m = /^(\[[^\]]+\]|[^:]+):([0-9]{1,5})$/.exec(s);
  if (!m) throw new GenseeError('E_USAGE', `bad --listen "${s}": expected 127.0.0.1:PORT or [::1]:PORT`);
  return checkListen({ host: m[1], port: Number(m[2]) });
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** a browser's WebSocket cannot set Authorization: it offers the token as a subprotocol after this one */
export const BROWSER_PROTOCOL = 'gensee.v1';
const BEARER_PROTOCOL = /^bearer\.([A-Za-z0-9_-]{16,512})$/;

/** the bearer token presented (Authorization, or a browser's "gensee.v1, bearer.TOKEN" subprotocols), or null */
function bearer(req: http.IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (typeof h === 'string') {
    const m = /^Bearer +(\S+) *$/i.exec(h);
    return m ? m[1] : null;
  }
  const p = req.headers['sec-websocket-protocol'];
  if (typeof p !== 'string') return null;
  const offered = p.split(',').map((x) => x.trim());
  if (offered[0] !== BROWSER_PROTOCOL) return null;
  const m = offered.length === 2 ? BEARER_PROTOCOL.exec(offered[1]) : null;
  return m ? m[1] : null;
}

/** what a refusal says: a token that was offered and is wrong, or none at all */
function missingOrWrong(req: http.IncomingMessage): string {
  return req.headers.authorization === undefined && req.headers['sec-websocket-protocol'] === undefined ? 'no bearer token' : 'wrong bearer token';
}

function peerOf(sock: net.Socket, unix: boolean): string {
  if (!unix) return `${sock.remoteAddress?.includes(':') ? `[${sock.remoteAddress}]` : sock.remoteAddress}:${sock.remotePort}`;
  try {
    const c = loadAddon().peerCred(fdOf(sock));
    return `uid ${c.uid} pid ${c.pid}`;
  } catch {
    return 'unix';
  }
}

/** the line as a stream message: `,"log":"NAME"` before its final `}` */
function message(text: string, log: LogName): string {
  return `${text.slice(0, -1)},"log":"${log}"}`;
}

function refuse(sock: Duplex, status: number, reason: string): void {
  const text = { 400: 'Bad Request', 401: 'Unauthorized', 426: 'Upgrade Required', 503: 'Service Unavailable' }[status] ?? 'Error';
  const body = reason + '\n';
  const extra = status === 401 ? 'WWW-Authenticate: Bearer\r\n' : '';
  try {
    sock.end(`HTTP/1.1 ${status} ${text}\r\n${extra}Connection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  } catch {
    /* already gone */
  }
  setTimeout(() => sock.destroy(), CLOSE_GRACE_MS).unref();
}

interface Pending {
  log: LogName;
  seq: number;
  msg: string;
}

class Subscriber {
  phase: 'replay' | 'live' = 'replay';
  readonly last: Record<LogName, number> = { faults: 0, counters: 0, events: 0 };
  private q: string[] = [];
  private head = 0;
  queued = 0;
  maxQueued = 0;
  sent = 0;
  lastProgress = Date.now();
  dropped = false;
  /** live lines held while the replay runs */
  held: Pending[] | null = [];
  private heldBytes = 0;
  private pumpScheduled = false;
  private roomWaiters: (() => void)[] = [];
  private readonly sock: net.Socket;

  constructor(
    readonly ws: WebSocket,
    readonly peer: string,
    readonly logs: LogName[],
    readonly since: Partial<Record<LogName, number>>,
    private readonly maxBytes: number,
    private readonly onDrop: (s: Subscriber, reason: string) => void,
  ) {
    this.sock = (ws as unknown as { _socket: net.Socket })._socket;
    for (const l of logs) this.last[l] = since[l] ?? 0;
    this.sock.on('drain', () => {
      this.lastProgress = Date.now();
      this.pump();
    });
  }

  get socketBuffered(): number {
    return this.sock.writableLength;
  }

  /** something waits to be written: the stall clock runs */
  get busy(): boolean {
    return this.head < this.q.length || this.sock.writableLength > 0;
  }

  /** a live line from the hub (already formatted) */
  live(log: LogName, seq: number, msg: string): void {
    if (this.dropped || !this.logs.includes(log)) return;
    if (this.held) {
      this.held.push({ log, seq, msg });
      this.heldBytes += msg.length;
      if (this.heldBytes + this.queued > this.maxBytes) this.onDrop(this, `fell behind during replay: over ${this.maxBytes} bytes held`);
      return;
    }
    this.enqueue(log, seq, msg);
  }

  /** queue one message unless that log already passed this seq (dedupe at the replay→live switch) */
  enqueue(log: LogName, seq: number, msg: string): void {
    if (this.dropped || seq <= this.last[log]) return;
    this.last[log] = seq;
    this.q.push(msg);
    this.queued += msg.length;
    if (this.queued > this.maxQueued) this.maxQueued = this.queued;
    if (this.queued > this.maxBytes) {
      this.onDrop(this, `queue over ${this.maxBytes} bytes: not reading fast enough`);
      return;
    }
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(() => this.pump());
    }
  }

  /** the replay is done: release the held live lines, go live */
  goLive(): void {
    const held = this.held ?? [];
    this.held = null;
    this.heldBytes = 0;
    this.phase = 'live';
    for (const h of held) this.enqueue(h.log, h.seq, h.msg);
  }

  /** resolves when the queue is under half the bound (or the subscriber is gone) */
  room(): Promise<void> {
    if (this.dropped || this.queued <= this.maxBytes / 2) return Promise.resolve();
    return new Promise((r) => this.roomWaiters.push(r));
  }

  pump(): void {
    this.pumpScheduled = false;
    if (this.dropped || this.ws.readyState !== this.ws.OPEN) return;
    const sock = this.sock;
    if (this.head >= this.q.length || sock.writableLength >= SOCKET_HIGH_WATER) return;
    // take a batch that fits under the high-water mark, then write it as one writev
    const batch: string[] = [];
    let room = SOCKET_HIGH_WATER - sock.writableLength;
    while (this.head < this.q.length && room > 0) {
      const m = this.q[this.head];
      this.q[this.head++] = '';
      this.queued -= m.length;
      room -= m.length;
      batch.push(m);
    }
    const n = batch.length;
    sock.cork();
    // progress is a write the kernel took: one callback, on the batch's last message
    for (let i = 0; i < n - 1; i++) this.ws.send(batch[i]);
    this.ws.send(batch[n - 1], (err) => {
      if (!err) this.lastProgress = Date.now();
    });
    this.sent += n;
    sock.uncork();
    if (this.head >= this.q.length) {
      this.q = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.q.length) {
      this.q = this.q.slice(this.head);
      this.head = 0;
    }
    if (this.roomWaiters.length && this.queued <= this.maxBytes / 2) for (const r of this.roomWaiters.splice(0)) r();
  }

  /** free the queue and release anything waiting on it */
  release(): void {
    this.dropped = true;
    this.q = [];
    this.head = 0;
    this.held = null;
    this.queued = 0;
    for (const r of this.roomWaiters.splice(0)) r();
  }

  stats(): SubscriberStats {
    return {
      peer: this.peer,
      logs: [...this.logs],
      phase: this.phase,
      queued_bytes: this.queued,
      max_queued_bytes: this.maxQueued,
      socket_buffered: this.sock.writableLength,
      sent: this.sent,
    };
  }
}

/** Replay one log's file: lines with seq > the subscriber's last for it, pausing while its queue is full. */
async function replayLog(file: string, log: LogName, sub: Subscriber): Promise<void> {
  assertNoSymlinks(file);
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return; // nothing written yet
    throw e;
  }
  try {
    if (!(await fh.stat()).isFile()) throw new GenseeError('E_NOT_FILE', `not a regular file: ${file}`);
    const buf = Buffer.alloc(REPLAY_CHUNK);
    let carry: Buffer | null = null;
    let skipping = false; // inside an over-long line
    let prevSeq = 0;
    let pos = 0;
    const line = (b: Buffer): void => {
      const text = b.toString('utf8');
      const m = SEQ_PREFIX.exec(text);
      // a line without a seq (a torn line kept by recovery) counts but is not sent
      const seq = m ? Number(m[1]) : prevSeq + 1;
      prevSeq = seq;
      if (m && text.endsWith('}') && seq > sub.last[log]) sub.enqueue(log, seq, message(text, log));
    };
    for (;;) {
      if (sub.dropped) return;
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break; // EOF: a trailing partial line arrives live
      pos += bytesRead;
      let start = 0;
      for (let i = buf.indexOf(0x0a, 0); i >= 0 && i < bytesRead; i = buf.indexOf(0x0a, i + 1)) {
        if (skipping) {
          skipping = false;
          prevSeq++;
        } else if (carry) {
          const whole = Buffer.concat([carry, buf.subarray(start, i)]);
          carry = null;
          line(whole);
        } else {
          line(buf.subarray(start, i));
        }
        start = i + 1;
      }
      if (start < bytesRead && !skipping) {
        const rest = Buffer.from(buf.subarray(start, bytesRead));
        carry = carry ? Buffer.concat([carry, rest]) : rest;
        if (carry.length > MAX_REPLAY_LINE) {
          carry = null;
          skipping = true;
        }
      }
      await sub.room();
    }
  } finally {
    await fh.close();
  }
}

/**
 * The live stream's server for one operation: the subscribers, the hub
 * listener that feeds them, the stall sweep, and the HTTP servers (the
 * unix socket, and loopback TCP when asked). Each path is a method:
 * admission (authorized, upgrade), a connection (accept, replay), a
 * plain request (request), the sweep (sweep), a drop (drop) and close.
 */
export class StreamServer implements EventStream {
  readonly socketPath: string;
  port?: number;
  private readonly dir: string;
  private readonly opts: EventStreamOptions;
  private readonly listenOn: StreamListen | undefined;
  private readonly stallMs: number;
  private readonly maxBytes: number;
  private readonly maxSubs: number;
  private readonly tokenDigest: Buffer;
  private readonly subs = new Set<Subscriber>();
  private readonly servers: http.Server[] = [];
  private wss: WebSocketServer | null = null;
  private closing = false;
  private closed: Promise<void> | null = null;
  private socketIno = -1;
  private unsubscribe: (() => void) | null = null;
  private stallTimer: NodeJS.Timeout | null = null;

  /** checks the options; listens on nothing until listen() */
  constructor(opts: EventStreamOptions) {
    this.opts = opts;
    this.dir = path.resolve(opts.dir);
    assertNoSymlinks(this.dir);
    if (typeof opts.token !== 'string' || opts.token.length < 16) throw new GenseeError('E_USAGE', 'the live stream needs the operation token');
    this.socketPath = path.resolve(opts.socketPath ?? path.join(this.dir, EVENTS_SOCKET));
    this.listenOn = opts.listen ? checkListen(opts.listen) : undefined;
    this.stallMs = opts.stallMs ?? DEFAULT_STALL_MS;
    this.maxBytes = opts.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.maxSubs = opts.maxSubscribers ?? DEFAULT_MAX_SUBSCRIBERS;
    if (!(this.stallMs > 0) || !(this.maxBytes > 0) || !(this.maxSubs > 0)) throw new GenseeError('E_USAGE', 'stallMs, maxBufferedBytes and maxSubscribers must be positive');
    this.tokenDigest = digest(opts.token);
  }

  /** the WebSocket server, made at the first upgrade */
  private wsServer(): WebSocketServer {
    if (this.wss === null) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at first use, see the import above
      const { WebSocketServer: Server } = require('ws') as typeof import('ws');
      // the subprotocol answered is never the token: a browser gets gensee.v1 back
      this.wss = new Server({ noServer: true, perMessageDeflate: false, maxPayload: 64 << 10, clientTracking: false, handleProtocols: (p) => (p.has(BROWSER_PROTOCOL) ? BROWSER_PROTOCOL : false) });
    }
    return this.wss;
  }

  subscribers(): number {
    return this.subs.size;
  }

  stats(): SubscriberStats[] {
    return [...this.subs].map((s) => s.stats());
  }

  /** the caller's recorder failing must not take the stream down */
  private report<T>(fn: ((x: T) => void) | undefined, x: T): void {
    try {
      fn?.(x);
    } catch {
      /* ignored: see above */
    }
  }

  /** drop a subscriber: close 1008 with the reason, destroy after a grace period, report it */
  drop(s: Subscriber, reason: string): void {
    if (s.dropped) return;
    const queued = s.queued;
    s.release();
    this.subs.delete(s);
    this.report(this.opts.onDropped, { peer: s.peer, reason, queued_bytes: queued, sent: s.sent });
    try {
      s.ws.close(1008, reason.slice(0, 120));
    } catch {
      /* socket already gone */
    }
    setTimeout(() => s.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** one hub line to every subscriber: formatted once, enqueued only */
  private broadcast(l: HubLine): void {
    if (this.subs.size === 0) return;
    const msg = message(l.text, l.log);
    for (const s of this.subs) s.live(l.log, l.seq, msg);
  }

  /** drop each subscriber that has had something to send and no send progress for stallMs */
  sweep(now = Date.now()): void {
    for (const s of this.subs) {
      if (!s.busy) s.lastProgress = now;
      else if (now - s.lastProgress > this.stallMs) this.drop(s, `stalled: no send progress for ${Math.round((now - s.lastProgress) / 1000)} s`);
    }
  }

  /** the request carries the operation token (compared in constant time) */
  authorized(req: http.IncomingMessage): boolean {
    const t = bearer(req);
    return t !== null && timingSafeEqual(digest(t), this.tokenDigest);
  }

  /** an upgraded connection becomes a subscriber: replay what it asked for, then live */
  private accept(ws: WebSocket, peer: string, q: StreamQuery): void {
    const sub = new Subscriber(ws, peer, q.logs, q.since, this.maxBytes, (x, reason) => this.drop(x, reason));
    this.subs.add(sub);
    ws.on('error', () => undefined);
    ws.on('close', () => {
      sub.release();
      this.subs.delete(sub);
    });
    // the client only listens: whatever it sends is ignored (ws answers pings)
    void this.replay(sub, q);
  }

  private async replay(sub: Subscriber, q: StreamQuery): Promise<void> {
    const replayed = (Object.keys(q.since) as LogName[]).filter((l) => q.logs.includes(l));
    try {
      for (const log of STREAM_LOGS) {
        if (!replayed.includes(log)) continue;
        // subscribed above: a line announced before that is in the file after this
        this.opts.hub.drain(log);
        await replayLog(path.join(this.dir, `${log}.jsonl`), log, sub);
      }
      if (!sub.dropped) sub.goLive();
    } catch (e) {
      this.drop(sub, `replay failed: ${(e as Error).message}`);
    }
  }

  /** an upgrade request: refused (400/401/503, reported) or handed to accept() */
  upgrade(unix: boolean, req: http.IncomingMessage, sock: Duplex, head: Buffer): void {
    sock.on('error', () => undefined);
    const peer = peerOf(sock as net.Socket, unix);
    const no = (status: number, reason: string) => {
      this.report(this.opts.onRefused, { peer, reason, status });
      refuse(sock, status, reason);
    };
    if (this.closing) return no(503, 'the live stream is closing');
    if (!this.authorized(req)) return no(401, missingOrWrong(req));
    let q: StreamQuery;
    try {
      q = parseStreamQuery(new URL(req.url ?? '/', 'http://stream').searchParams);
    } catch (e) {
      return no(400, (e as Error).message);
    }
    if (this.subs.size >= this.maxSubs) return no(503, `too many subscribers (${this.maxSubs})`);
    this.wsServer().handleUpgrade(req, sock, head, (ws) => this.accept(ws, peer, q));
  }

  /** a plain HTTP request: the extra routes, else 426 (with the token) or 401, reported */
  request(unix: boolean, req: http.IncomingMessage, res: http.ServerResponse): void {
    const peer = peerOf(req.socket, unix);
    const ok = this.authorized(req);
    try {
      if (!this.closing && this.opts.routes?.(req, res, ok)) return;
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.end();
      return;
    }
    const status = ok ? 426 : 401;
    const reason = ok ? 'not a WebSocket upgrade' : missingOrWrong(req);
    this.report(this.opts.onRefused, { peer, reason, status });
    res.writeHead(status, { 'Content-Type': 'text/plain', Connection: 'close', ...(status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {}) });
    res.end(reason + '\n');
  }

  private makeServer(unix: boolean): http.Server {
    const s = http.createServer({ headersTimeout: 10_000, requestTimeout: 15_000, maxHeaderSize: 16 << 10 });
    s.on('upgrade', (req: http.IncomingMessage, sock: Duplex, head: Buffer) => this.upgrade(unix, req, sock, head));
    s.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => this.request(unix, req, res));
    s.on('clientError', (_e, sock) => sock.destroy());
    return s;
  }

  /** listen on a TCP address, or on an fd already bound and listening ({fd}: a handle) */
  private static serve(srv: http.Server, how: net.ListenOptions | { fd: number }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen('fd' in how ? (how as object) : how, () => {
        srv.off('error', reject);
        resolve();
      });
    });
  }

  /** subscribe to the hub, start the sweep, listen on the socket (and TCP); on failure, close */
  async listen(): Promise<void> {
    this.unsubscribe = this.opts.hub.subscribe((l: HubLine) => this.broadcast(l));
    this.stallTimer = setInterval(() => this.sweep(), Math.max(20, Math.min(1000, Math.floor(this.stallMs / 4))));
    this.stallTimer.unref();
    try {
      assertNoSymlinks(this.socketPath);
      const fd = await openPrivateSocket(this.socketPath, { owner: this.opts.ownerUid, probeLive: true });
      const us = this.makeServer(true);
      this.servers.push(us);
      await StreamServer.serve(us, { fd });
      this.socketIno = fs.lstatSync(this.socketPath).ino;
      if (this.listenOn) {
        const ts = this.makeServer(false);
        this.servers.push(ts);
        await StreamServer.serve(ts, { host: this.listenOn.host, port: this.listenOn.port, exclusive: true });
        this.port = (ts.address() as net.AddressInfo).port;
      }
    } catch (e) {
      await this.close();
      const l = this.listenOn;
      if (isErrno(e) && e.code === 'EADDRINUSE') throw new GenseeError('E_STATE', `live stream: ${l ? `${l.host}:${l.port}` : this.socketPath} is in use`);
      throw e;
    }
  }

  /** stop listening, close every subscriber (1001 "operation stopped"), remove the socket file */
  close(): Promise<void> {
    return (this.closed ??= this.cleanup());
  }

  private async cleanup(): Promise<void> {
    this.closing = true;
    if (this.stallTimer) clearInterval(this.stallTimer);
    this.unsubscribe?.();
    for (const s of [...this.subs]) {
      s.release();
      this.subs.delete(s);
      try {
        s.ws.close(1001, 'operation stopped');
      } catch {
        /* gone */
      }
      setTimeout(() => s.ws.terminate(), CLOSE_GRACE_MS).unref();
    }
    await Promise.all(
      this.servers.map(
        (srv) =>
          new Promise<void>((r) => {
            if (!srv.listening) return r();
            srv.close(() => r());
            srv.closeIdleConnections();
          }),
      ),
    );
    if (this.socketIno >= 0) {
      try {
        const st = fs.lstatSync(this.socketPath);
        if (st.isSocket() && st.ino === this.socketIno) fs.unlinkSync(this.socketPath);
      } catch {
        /* already gone */
      }
      this.socketIno = -1;
    }
  }
}

/** Start the live stream for one operation. Resolves once every listener is ready. */
export async function startEventStream(opts: EventStreamOptions): Promise<EventStream> {
  const s = new StreamServer(opts);
  await s.listen();
  return s;
}
