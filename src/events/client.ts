// A live-stream subscriber (src/events/stream.ts): WebSocket over the
// operation's events.sock (`ws+unix://PATH:/?query`) or a loopback URL, with
// the operation token as `Authorization: Bearer`. Messages come out of an
// async iterator, parsed, in order, each log's seq strictly increasing.
//
// Reconnect: after an abnormal close (the connection broke, not the server
// saying "operation stopped"), the client connects again with
// `since=LOG:<last seq seen>` for every log it has a position in, so nothing
// is missed and nothing repeats (lines at or below the last seq are dropped
// on arrival). A log with neither a `since` nor a line seen yet resumes live.
// A subscriber the server dropped for reading too slowly (1008) is resumed
// only with reconnect.afterDrop.
import { WebSocket } from 'ws';
import type { IncomingMessage } from 'node:http';
import { GenseeError } from '../errors';
import { STREAM_LOGS, type LogName } from './types';

/** one stream message: the log line's object plus the log it came from */
export interface StreamMessage {
  log: LogName;
  seq: number;
  [k: string]: unknown;
}

export type StreamErrorReason = 'unavailable' | 'unauthorized' | 'refused';

/** the stream could not be reached (no supervisor: unavailable), or refused us (401: unauthorized; else refused) */
export class EventStreamError extends GenseeError {
  readonly reason: StreamErrorReason;
  readonly status: number | null;
  constructor(reason: StreamErrorReason, message: string, status: number | null = null) {
    super('E_STATE', message);
    this.reason = reason;
    this.status = status;
  }
}

export interface EventClientOptions {
  /** the operation's events.sock */
  socketPath?: string;
  /** instead of socketPath: ws://127.0.0.1:PORT/ (a --listen port) */
  url?: string;
  token: string;
  /** logs to receive (default all three) */
  logs?: LogName[];
  /** replay each of these logs from the file after this seq, then live */
  since?: Partial<Record<LogName, number>>;
  /**
   * reconnect after an abnormal close (default: no); afterDrop: also after
   * the server dropped us for reading too slowly (1008), resuming from the
   * files, which catch us up
   */
  reconnect?: boolean | { retries?: number; delayMs?: number; afterDrop?: boolean };
  /** stop reading from the socket while this many messages wait for the consumer (default 1024) */
  highWater?: number;
  /** the upgrade must complete within this (default 10 s) */
  handshakeTimeoutMs?: number;
}

/** how the stream ended */
export interface StreamEnd {
  code: number;
  reason: string;
  /** the connection broke and could not be resumed */
  error: Error | null;
}

/** the query string for a subscription */
export function streamQuery(logs: readonly LogName[] | undefined, since: Partial<Record<LogName, number>> | undefined): string {
  const p = new URLSearchParams();
  if (logs && logs.length) p.set('logs', logs.join(','));
  for (const l of STREAM_LOGS) {
    const s = since?.[l];
    if (s !== undefined && (!logs || logs.includes(l))) p.append('since', `${l}:${s}`);
  }
  const q = p.toString();
  return q ? `?${q}` : '';
}

function target(o: EventClientOptions, query: string): string {
  if (o.url) return o.url.replace(/\?.*$/, '').replace(/\/?$/, '/') + query;
  if (!o.socketPath) throw new GenseeError('E_USAGE', 'the event client needs socketPath or url');
  return `ws+unix://${o.socketPath}:/${query}`;
}

/**
 * An open subscription and the messages that arrived before its client
 * took it: the server replays at once, and frames that came with the
 * upgrade's response are emitted before an awaiting caller runs (they were
 * lost: a subscriber with since= missed the first ~200 lines under load).
 */
interface Opened {
  ws: WebSocket;
  early: { data: Buffer; isBinary: boolean }[];
  collect: (data: Buffer, isBinary: boolean) => void;
}

function openSocket(o: EventClientOptions, since: Partial<Record<LogName, number>>): Promise<Opened> {
  return new Promise((resolve, reject) => {
    let ws: WebSocket;
    try {
      ws = new WebSocket(target(o, streamQuery(o.logs, since)), {
        headers: { Authorization: `Bearer ${o.token}` },
        perMessageDeflate: false,
        handshakeTimeout: o.handshakeTimeoutMs ?? 10_000,
        maxPayload: 16 << 20,
        followRedirects: false,
      });
    } catch (e) {
      reject(e);
      return;
    }
    const early: Opened['early'] = [];
    const collect = (data: Buffer, isBinary: boolean) => void early.push({ data, isBinary });
    ws.on('message', collect);
    const where = o.url ?? o.socketPath;
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.terminate();
      reject(e);
    };
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body.length < 300 ? (body += d) : undefined));
      res.on('end', () => {
        const why = body.trim().split('\n')[0] || (res.statusMessage ?? '');
        const status = res.statusCode ?? 0;
        fail(new EventStreamError(status === 401 ? 'unauthorized' : 'refused', `live stream ${where} refused the subscription: ${status} ${why}`, status));
      });
      res.on('error', () => fail(new EventStreamError('refused', `live stream ${where} refused the subscription: ${res.statusCode}`, res.statusCode ?? null)));
    });
    ws.once('error', (e: NodeJS.ErrnoException) => {
      const gone = e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET' || e.code === 'EPIPE';
      fail(gone ? new EventStreamError('unavailable', `no live stream at ${where} (${e.code}): no supervisor is serving the operation`) : e);
    });
    ws.once('open', () => {
      if (settled) return;
      settled = true;
      ws.removeAllListeners('error');
      ws.removeAllListeners('unexpected-response');
      resolve({ ws, early, collect });
    });
  });
}

export class EventClient implements AsyncIterable<StreamMessage> {
  /** the last seq received per log (the position a reconnect resumes from) */
  readonly last: Partial<Record<LogName, number>>;
  /** set once the stream has ended */
  ended: StreamEnd | null = null;
  /** reconnects made */
  reconnects = 0;
  private ws: WebSocket;
  private readonly queue: StreamMessage[] = [];
  private qHead = 0;
  private waiter: (() => void) | null = null;
  private paused = false;
  private closedByUs = false;
  private readonly highWater: number;

  private constructor(
    private readonly opts: EventClientOptions,
    opened: Opened,
  ) {
    this.last = { ...(opts.since ?? {}) };
    this.highWater = opts.highWater ?? 1024;
    this.ws = opened.ws;
    this.attach(opened);
  }

  /** Connect (the upgrade is done when this resolves). Throws EventStreamError when there is no stream or it refuses us. */
  static async connect(opts: EventClientOptions): Promise<EventClient> {
    if (typeof opts.token !== 'string' || opts.token === '') throw new GenseeError('E_USAGE', 'the event client needs the operation token');
    return new EventClient(opts, await openSocket(opts, opts.since ?? {}));
  }

  /** Take the messages from now on, after those that came before (in order: nothing runs in between). */
  private attach({ ws, early, collect }: Opened): void {
    ws.off('message', collect);
    const onMessage = (data: Buffer, isBinary: boolean) => {
      if (isBinary) return;
      let m: StreamMessage;
      try {
        m = JSON.parse(data.toString('utf8')) as StreamMessage;
      } catch {
        return;
      }
      if (typeof m !== 'object' || m === null || !(STREAM_LOGS as readonly string[]).includes(m.log) || !Number.isSafeInteger(m.seq)) return;
      const prev = this.last[m.log] ?? 0;
      if (m.seq <= prev) return; // already seen (a replay overlapping what we had)
      this.last[m.log] = m.seq;
      this.queue.push(m);
      if (!this.paused && this.queue.length - this.qHead >= this.highWater) {
        this.paused = true;
        ws.pause();
      }
      this.wake();
    };
    ws.on('message', onMessage);
    for (const m of early.splice(0)) onMessage(m.data, m.isBinary);
    ws.on('error', () => undefined); // 'close' follows
    ws.on('close', (code: number, reason: Buffer) => void this.onClose(ws, code, reason.toString('utf8')));
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private async onClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    if (ws !== this.ws) return;
    const r = this.opts.reconnect;
    // 1000 normal, 1001 going away (operation stopped): not resumed; 1008 (dropped as too slow) only when asked
    const broken = code !== 1000 && code !== 1001 && (code !== 1008 || (typeof r === 'object' && r.afterDrop === true));
    if (!this.closedByUs && r && broken) {
      const retries = typeof r === 'object' ? (r.retries ?? 5) : 5;
      const delay = typeof r === 'object' ? (r.delayMs ?? 200) : 200;
      let lastErr: Error | null = null;
      for (let i = 0; i < retries && !this.closedByUs; i++) {
        await new Promise((res) => setTimeout(res, delay * Math.min(8, 2 ** i)));
        if (this.closedByUs) break;
        try {
          const next = await openSocket(this.opts, this.last);
          if (this.closedByUs) {
            next.ws.terminate();
            break;
          }
          this.ws = next.ws;
          this.paused = false;
          this.reconnects++;
          this.attach(next);
          if (this.queue.length - this.qHead >= this.highWater && !this.paused) {
            this.paused = true;
            next.ws.pause();
          }
          return;
        } catch (e) {
          lastErr = e as Error;
          if (e instanceof EventStreamError && e.reason !== 'unavailable') break;
        }
      }
      this.ended = { code, reason, error: lastErr ?? new Error(`connection lost (${code})`) };
    } else {
      this.ended = { code, reason, error: null };
    }
    this.wake();
  }

  /** Close the subscription; the iterator ends after what is already queued. */
  close(): void {
    this.closedByUs = true;
    try {
      this.ws.close(1000, 'client closed');
    } catch {
      /* gone */
    }
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  /** Drop the connection abruptly (no close handshake): what a killed client looks like to the server. */
  terminate(): void {
    this.ws.terminate();
  }

  async next(): Promise<IteratorResult<StreamMessage>> {
    for (;;) {
      if (this.qHead < this.queue.length) {
        const m = this.queue[this.qHead++];
        if (this.qHead > 4096 && this.qHead * 2 > this.queue.length) {
          this.queue.splice(0, this.qHead);
          this.qHead = 0;
        }
        if (this.paused && this.queue.length - this.qHead <= this.highWater / 2) {
          this.paused = false;
          this.ws.resume();
        }
        return { value: m, done: false };
      }
      if (this.ended) return { value: undefined, done: true };
      await new Promise<void>((r) => (this.waiter = r));
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamMessage> {
    return {
      next: () => this.next(),
      return: async () => {
        this.close();
        return { value: undefined, done: true };
      },
    };
  }
}

/** Connect to a live stream; see EventClient. */
export function connectEvents(opts: EventClientOptions): Promise<EventClient> {
  return EventClient.connect(opts);
}
