// The example ledger: stores writes by Idempotency-Key only (a write without
// one is its own entry), so a repeated keyed write leaves one entry.
//   node examples/executor/ledger.js PORT
const http = require('node:http');
const byKey = new Map();
const byRequest = new Map();
let n = 0;
http
  .createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const reply = (status, v) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (req.method === 'GET' && req.url === '/entries') return reply(200, [...byKey.values()]);
      if (req.method === 'GET' && req.url.startsWith('/by-request/')) {
        const e = byRequest.get(decodeURIComponent(req.url.slice(12)));
        return e ? reply(200, e) : reply(404, { error: 'not found' });
      }
      const key = req.headers['idempotency-key'] ?? `unkeyed-${++n}`;
      if (byKey.has(key)) return reply(200, byKey.get(key));
      const e = { key, request_id: req.headers['x-request-id'] ?? null, body };
      byKey.set(key, e);
      if (e.request_id) byRequest.set(e.request_id, e);
      reply(201, e);
    });
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
