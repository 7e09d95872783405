// The executor tests' write target: a loopback HTTP ledger that stores by
// Idempotency-Key ONLY. It never dedupes on content: a write without the
// header is a new entry under a fresh id, however alike two bodies are, so a
// retry is harmless only because it carries the same key.
//   POST|PUT any path   a write: with Idempotency-Key K, stored once under K
//                       (201; the same K again: 200, nothing stored); without
//                       it, a new entry (201); X-Request-Id is kept on the entry
//   GET /entries        every entry, in arrival order
//   GET /by-request/ID  200 with the entry whose X-Request-Id is ID, else 404
// hold(): the next write is stored, then its response is held until the test
// releases it (to kill the executor after the ledger got the write, before
// the executor could record it).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface LedgerEntry {
  id: string;
  key: string | null;
  request_id: string | null;
  method: string;
  path: string;
  body: string;
}

export interface Held {
  /** resolves when the held write has been stored */
  stored: Promise<LedgerEntry>;
  /** answer it now (a no-op if its connection is gone) */
  release(): void;
}

export interface Ledger {
  url: string;
  port: number;
  entries(): LedgerEntry[];
  /** writes received, stored or not (a duplicate key is received, not stored) */
  received(): number;
  hold(): Held;
  close(): Promise<void>;
}

interface TapLike {
  teardown(fn: () => unknown): void;
}

export async function startLedger(t: TapLike): Promise<Ledger> {
  const entries: LedgerEntry[] = [];
  const byKey = new Map<string, LedgerEntry>();
  let received = 0;
  let holdNext: { resolveStored: (e: LedgerEntry) => void; released: Promise<void> } | null = null;
  const open = new Set<http.ServerResponse>();

  const send = (res: http.ServerResponse, status: number, v: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(v));
  };

  const srv = http.createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      const url = req.url ?? '/';
      if (req.method === 'GET') {
        if (url === '/entries') return send(res, 200, entries);
        const m = /^\/by-request\/([^/?]+)$/.exec(url);
        if (m) {
          const e = entries.find((x) => x.request_id === decodeURIComponent(m[1]));
          return e ? send(res, 200, e) : send(res, 404, { error: 'no such request' });
        }
        return send(res, 404, { error: 'not found' });
      }
      received++;
      const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
      const rid = typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : null;
      let status = 201;
      let entry: LedgerEntry;
      const known = key !== null ? byKey.get(key) : undefined;
      if (known) {
        status = 200;
        entry = known;
      } else {
        entry = { id: key ?? `e-${randomBytes(6).toString('hex')}`, key, request_id: rid, method: req.method ?? '?', path: url, body: Buffer.concat(chunks).toString('utf8') };
        entries.push(entry);
        if (key !== null) byKey.set(key, entry);
      }
      const h = holdNext;
      holdNext = null;
      if (!h) return send(res, status, { ...entry, duplicate: status === 200 });
      h.resolveStored(entry);
      void h.released.then(() => {
        if (!res.destroyed) send(res, status, { ...entry, duplicate: status === 200 });
      });
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const r of open) r.destroy();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  };
  t.teardown(close);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    entries: () => entries.map((e) => ({ ...e })),
    received: () => received,
    hold() {
      let resolveStored!: (e: LedgerEntry) => void;
      let release!: () => void;
      const stored = new Promise<LedgerEntry>((r) => (resolveStored = r));
      const released = new Promise<void>((r) => (release = r));
      holdNext = { resolveStored, released };
      return { stored, release };
    },
    close,
  };
}
