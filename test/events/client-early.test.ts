// The event client keeps what a stream sends at once: a server replays as
// soon as the upgrade is done, and frames that arrive with the upgrade's
// response are emitted before the code awaiting EventClient.connect runs.
// They were lost (a subscriber with since= missed its first ~200 lines
// under load in a CI run); here a server sends its frames in the same
// write as its handshake, every time.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocketServer } from 'ws';
import { EventClient, StreamMessage } from '../../src/events/client';

t.test('messages sent with the upgrade reach the iterator, in order', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-ec-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sock = path.join(dir, 'events.sock');
  const N = 300;
  const wss = new WebSocketServer({ noServer: true });
  const http = await import('node:http');
  const server = http.createServer();
  server.on('upgrade', (req, socket, head) => {
    // hold the socket's writes so that the 101 response and the frames leave in one piece
    socket.cork();
    wss.handleUpgrade(req, socket, head, (ws) => {
      for (let i = 1; i <= N; i++) ws.send(JSON.stringify({ log: 'events', seq: i, kind: 'boundary' }));
      process.nextTick(() => socket.uncork());
    });
  });
  await new Promise<void>((r) => server.listen(sock, () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));

  const c = await EventClient.connect({ socketPath: sock, token: 't', logs: ['events'], since: { events: 0 } });
  // whatever else the caller awaits first
  await new Promise((r) => setTimeout(r, 50));
  const got: StreamMessage[] = [];
  const timer = setTimeout(() => c.close(), 5000);
  for await (const m of c) {
    got.push(m);
    if (m.seq >= N) break;
  }
  clearTimeout(timer);
  c.close();
  t.same(
    got.map((m) => m.seq),
    Array.from({ length: N }, (_, i) => i + 1),
    `all ${N} messages, in order`,
  );
  for (const ws of wss.clients) ws.terminate();
});
