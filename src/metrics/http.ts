// Serving /metrics: on the --listen server behind the operation token (a
// route handed to the live stream's HTTP server), or on its own loopback
// address (--metrics 127.0.0.1:PORT) without one, for a Prometheus that
// cannot hold the token. That address serves /metrics and nothing else.
import * as http from 'node:http';
import type * as net from 'node:net';
import { bootNs } from '../dataplane';
import { GenseeError, isErrno } from '../errors';
import { checkListen, type StreamListen } from '../events/stream';
import { EvidenceTail } from './evidence';
import type { EvidenceMetrics } from './registry';
import { fdatasyncText, type FdatasyncSource } from './fdatasync';

export type Scrape = () => Promise<{ contentType: string; body: string }>;

/**
 * one operation's scrape; concurrent scrapes run one after another (the
 * registry is set, then rendered). Each reads only what the logs gained
 * since the last (EvidenceTail); the live fdatasync histogram
 * (src/metrics/fdatasync.ts) follows the evidence's figures.
 */
export function evidenceScraper(stateDir: string, op: string, dir: string, fdatasync?: FdatasyncSource): Scrape {
  // prom-client is loaded at the first scrape: an operation nobody scrapes
  // does not pay for it at start
  let m: EvidenceMetrics | null = null;
  const tail = new EvidenceTail(stateDir, op, dir);
  let chain: Promise<unknown> = Promise.resolve();
  return () => {
    const next = chain.then(async () => {
      m ??= new (await import('./registry')).EvidenceMetrics();
      m.set(await tail.read(bootNs()));
      return { contentType: m.contentType, body: (await m.text()) + fdatasyncText(op, fdatasync?.() ?? null) };
    });
    chain = next.catch(() => undefined);
    return next;
  };
}

function answer(res: http.ServerResponse, scrape: Scrape): void {
  scrape().then(
    (r) => {
      res.writeHead(200, { 'Content-Type': r.contentType, 'Cache-Control': 'no-store' });
      res.end(r.body);
    },
    (e: Error) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`gensee: metrics: ${e.message}\n`);
    },
  );
}

const pathOf = (req: http.IncomingMessage): string => new URL(req.url ?? '/', 'http://x').pathname;

/** GET /metrics for an authorized request; false leaves the request to the stream (401 and its record) */
export function metricsRoute(scrape: Scrape): (req: http.IncomingMessage, res: http.ServerResponse, authorized: boolean) => boolean {
  return (req, res, authorized) => {
    if (!authorized || pathOf(req) !== '/metrics') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' });
      res.end('method not allowed\n');
      return true;
    }
    answer(res, scrape);
    return true;
  };
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** /metrics without a token on a loopback address of its own */
export async function startMetricsServer(listen: StreamListen, scrape: Scrape): Promise<MetricsServer> {
  const l = checkListen(listen);
  const srv = http.createServer({ headersTimeout: 10_000, requestTimeout: 15_000, maxHeaderSize: 16 << 10 }, (req, res) => {
    if (pathOf(req) !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('only GET /metrics is served here\n');
      return;
    }
    answer(res, scrape);
  });
  srv.on('clientError', (_e, sock) => sock.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen({ host: l.host, port: l.port, exclusive: true }, () => {
        srv.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    if (isErrno(e) && e.code === 'EADDRINUSE') throw new GenseeError('E_SOCKET_IN_USE', `metrics: ${l.host}:${l.port} is in use`);
    throw e;
  }
  return {
    port: (srv.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        srv.close(() => r());
        srv.closeAllConnections();
      }),
  };
}
