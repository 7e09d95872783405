// StreamServer's paths one at a time, without listening: option checks,
// admission of a plain request and of an upgrade (each refusal reported
// with its status and reason), the extra routes, and close() on a server
// that never listened. The end-to-end stream is test/events/stream.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as http from 'node:http';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { StreamServer, type EventStreamOptions, type StreamRefusal } from '../../src/events/stream';
import { LogHub } from '../../src/events/hub';

const TOKEN = 'a'.repeat(32);

function server(t: Test, extra: Partial<EventStreamOptions> = {}): { s: StreamServer; refused: StreamRefusal[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-streamserver-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const refused: StreamRefusal[] = [];
  const s = new StreamServer({ dir, hub: new LogHub(), token: TOKEN, onRefused: (r) => refused.push(r), ...extra });
  return { s, refused };
}


function req(headers: Record<string, string>, url = '/'): http.IncomingMessage {
  return { headers, url, socket: { remoteAddress: '127.0.0.1', remotePort: 40000 } } as unknown as http.IncomingMessage;
}

function res(): http.ServerResponse & { status?: number; body: string } {
  const r = {
    body: '',
    headersSent: false,
    status: undefined as number | undefined,
    writeHead(status: number) {
      r.status = status;
      r.headersSent = true;
      return r;
    },
    end(b?: string) {
      r.body += b ?? '';
      return r;
    },
  };
  return r as unknown as http.ServerResponse & { status?: number; body: string };
}

/** an upgrade's refusal as the client reads it: the status line */
async function refusedUpgrade(s: StreamServer, r: http.IncomingMessage): Promise<string> {
  const sock = new PassThrough();
  let text = '';
  sock.on('data', (d: Buffer) => (text += d.toString()));
  Object.assign(sock, { remoteAddress: '127.0.0.1', remotePort: 40001 });
  s.upgrade(false, r, sock, Buffer.alloc(0));
  await new Promise((resolve) => setImmediate(resolve));
  sock.destroy();
  return text.split('\r\n')[0];
}

t.test('the options are checked before anything listens', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-streamserver-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  t.throws(() => new StreamServer({ dir, hub: new LogHub(), token: 'short' }), { code: 'E_USAGE' }, 'a short token');
  t.throws(() => new StreamServer({ dir, hub: new LogHub(), token: TOKEN, stallMs: 0 }), { code: 'E_USAGE' }, 'a zero stall limit');
  t.throws(() => new StreamServer({ dir, hub: new LogHub(), token: TOKEN, listen: { host: '10.0.0.1', port: 0 } }), 'a listen address off loopback');
});

t.test('authorized: the operation token, as a header or a browser subprotocol', async (t) => {
  const { s } = server(t);
  t.ok(s.authorized(req({ authorization: `Bearer ${TOKEN}` })), 'Bearer header');
  t.ok(s.authorized(req({ 'sec-websocket-protocol': `gensee.v1, bearer.${TOKEN}` })), 'subprotocols');
  t.notOk(s.authorized(req({ authorization: `Bearer ${'b'.repeat(32)}` })), 'a wrong token');
  t.notOk(s.authorized(req({})), 'no token');
  t.notOk(s.authorized(req({ 'sec-websocket-protocol': `bearer.${TOKEN}` })), 'the token without gensee.v1 first');
});

t.test('a plain request: 401 without the token, 426 with it, both reported', async (t) => {
  const { s, refused } = server(t);
  const a = res();
  s.request(false, req({}), a);
  t.equal(a.status, 401, 'no token: 401');
  t.match(a.body, /no bearer token/);
  const b = res();
  s.request(false, req({ authorization: `Bearer ${TOKEN}` }), b);
  t.equal(b.status, 426, 'with the token: 426, not a WebSocket upgrade');
  t.match(refused, [
    { status: 401, reason: 'no bearer token', peer: '127.0.0.1:40000' },
    { status: 426, reason: 'not a WebSocket upgrade' },
  ]);
});

t.test('the extra routes answer first, and see whether the token was given', async (t) => {
  const seen: boolean[] = [];
  const { s, refused } = server(t, {
    routes: (rq, rs, ok) => {
      seen.push(ok);
      if (rq.url !== '/metrics') return false;
      rs.writeHead(200);
      rs.end('ok');
      return true;
    },
  });
  const a = res();
  s.request(false, req({ authorization: `Bearer ${TOKEN}` }, '/metrics'), a);
  t.equal(a.status, 200, 'the route answered');
  const b = res();
  s.request(false, req({}, '/other'), b);
  t.equal(b.status, 401, 'a path no route takes is refused');
  t.same(seen, [true, false]);
  t.equal(refused.length, 1, 'only the refusal is reported');
  const { s: s2 } = server(t, {
    routes: () => {
      throw new Error('route bug');
    },
  });
  const c = res();
  s2.request(false, req({}), c);
  t.equal(c.status, 500, "a route that throws answers 500 and keeps the server up");
});

t.test('an upgrade: 401, 400 for a bad query, 503 when closing; each reported', async (t) => {
  const { s, refused } = server(t);
  t.equal(await refusedUpgrade(s, req({ authorization: 'Bearer nope' })), 'HTTP/1.1 401 Unauthorized');
  t.equal(await refusedUpgrade(s, req({ authorization: `Bearer ${TOKEN}` }, '/?logs=nosuchlog')), 'HTTP/1.1 400 Bad Request');
  await s.close();
  t.equal(await refusedUpgrade(s, req({ authorization: `Bearer ${TOKEN}` })), 'HTTP/1.1 503 Service Unavailable');
  t.match(
    refused.map((r) => r.status),
    [401, 400, 503],
  );
  t.equal(s.subscribers(), 0, 'no subscriber was made');
});

t.test('close() before listen() is safe and idempotent; sweep on no subscribers is a no-op', async (t) => {
  const { s } = server(t);
  s.sweep(Date.now() + 3_600_000);
  const a = s.close();
  t.equal(s.close(), a, 'one close');
  await a;
  t.same(s.stats(), []);
});
