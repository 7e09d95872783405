// Framing against real unix sockets: good frame, oversize, truncated, empty,
// trickle (cut ~2 s after the first byte), trailing bytes, concurrency.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { encodeFrame, FrameError, readFrame, writeFrame, FRAME_TIMEOUT_MS, type Frame, type FrameOptions } from '../../src/protocol/framing';

// Deadlines are asserted as promises: never before the limit, and within a
// bound generous enough for a loaded machine (the message names the limit
// that was applied). How close to the limit they fire is `make bench`'s
// deadlines section.
const GENEROUS_MS = 10_000;
// a timer may fire a millisecond early against Date.now()
const CLOCK_SLACK_MS = 5;

type Outcome = { frame?: Frame; err?: FrameError; elapsed: number; socket: net.Socket };

/** A server whose every connection is read with readFrame; outcomes arrive in order. */
async function serve(t: Test, opts?: FrameOptions, onFrame?: (s: net.Socket, f: Frame) => Promise<void>) {
  // sun_path holds 108 bytes and tap's fixture paths are long: reach the
  // testdir through a short symlink so the socket itself lives in the testdir
  const dir = t.testdir({});
  const link = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-'));
  fs.rmdirSync(link);
  fs.symlinkSync(dir, link);
  t.teardown(() => fs.unlinkSync(link));
  const sock = path.join(link, 's.sock');
  const waiting: ((o: Outcome) => void)[] = [];
  const ready: Outcome[] = [];
  const open = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    open.add(socket);
    socket.on('error', () => {});
    const start = Date.now();
    readFrame(socket, opts).then(
      async (frame) => {
        if (onFrame) await onFrame(socket, frame);
        deliver({ frame, elapsed: Date.now() - start, socket });
      },
      (err: FrameError) => {
        deliver({ err, elapsed: Date.now() - start, socket });
        socket.destroy();
      },
    );
  });
  const deliver = (o: Outcome) => {
    const w = waiting.shift();
    if (w) w(o);
    else ready.push(o);
  };
  await new Promise<void>((resolve) => server.listen(sock, resolve));
  t.teardown(() => {
    for (const s of open) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const clients: net.Socket[] = [];
  t.teardown(() => {
    for (const c of clients) c.destroy();
  });
  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const c = net.connect(sock, () => resolve(c));
      c.on('error', reject);
      clients.push(c);
    });
  const next = () => new Promise<Outcome>((resolve) => {
    const o = ready.shift();
    if (o) resolve(o);
    else waiting.push(resolve);
  });
  return { connect, next };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('good frame, and a reply frame back', async (t) => {
  const s = await serve(t, undefined, async (socket, frame) => {
    await writeFrame(socket, Buffer.concat([Buffer.from('re:'), frame]));
  });
  const c = await s.connect();
  c.write(encodeFrame(Buffer.from('hello')));
  const reply = await readFrame(c);
  t.equal(reply.toString(), 're:hello');
  const o = await s.next();
  t.equal(o.frame?.toString(), 'hello');
  t.equal(o.frame?.hasTrailing(), false);
});

t.test('frame split across many writes is reassembled', async (t) => {
  const s = await serve(t);
  const c = await s.connect();
  const frame = encodeFrame(Buffer.alloc(1000, 'x'));
  for (let i = 0; i < frame.length; i += 97) {
    c.write(frame.subarray(i, i + 97));
    await sleep(2);
  }
  const o = await s.next();
  t.equal(o.frame?.length, 1000);
});

t.test('largest allowed body is accepted, one more byte is not', async (t) => {
  const s = await serve(t);
  (await s.connect()).write(encodeFrame(Buffer.alloc(65536, 1)));
  t.equal((await s.next()).frame?.length, 65536);
  const big = Buffer.alloc(4);
  big.writeUInt32BE(65537);
  (await s.connect()).write(big);
  const o = await s.next();
  t.equal(o.err?.code, 'frame_oversize');
});

t.test('oversize is refused on the header, without waiting for the body', async (t) => {
  const s = await serve(t);
  const c = await s.connect();
  const h = Buffer.alloc(4);
  h.writeUInt32BE(0x7fffffff);
  c.write(h);
  const o = await s.next();
  t.equal(o.err?.code, 'frame_oversize');
  t.ok(o.elapsed < FRAME_TIMEOUT_MS, `refused after ${o.elapsed} ms, before the frame deadline could have ended the wait`);
  t.match(o.err?.message, /declared length 2147483647 exceeds 65536/);
});

t.test('maxBytes option', async (t) => {
  const s = await serve(t, { maxBytes: 16 });
  (await s.connect()).write(encodeFrame(Buffer.alloc(17)));
  t.equal((await s.next()).err?.code, 'frame_oversize');
});

t.test('truncated: EOF inside the header or the body', async (t) => {
  const s = await serve(t);
  const a = await s.connect();
  a.end(Buffer.from([0, 0]));
  const oa = await s.next();
  t.equal(oa.err?.code, 'frame_truncated');
  const b = await s.connect();
  b.end(Buffer.concat([Buffer.from([0, 0, 0, 10]), Buffer.from('abc')]));
  const ob = await s.next();
  t.equal(ob.err?.code, 'frame_truncated');
  t.match(ob.err?.message, /after 7 bytes of 14/);
  const c = await s.connect();
  c.end();
  t.equal((await s.next()).err?.code, 'frame_truncated', 'EOF before any byte');
});

t.test('zero-length frame is malformed', async (t) => {
  const s = await serve(t);
  (await s.connect()).write(Buffer.alloc(4));
  t.equal((await s.next()).err?.code, 'frame_empty');
  t.throws(() => encodeFrame(Buffer.alloc(0)), { code: 'frame_empty' });
  t.throws(() => encodeFrame(Buffer.alloc(65537)), { code: 'frame_oversize' });
});

t.test('1 byte/s trickle is cut 2 s after the first byte', async (t) => {
  const s = await serve(t);
  const c = await s.connect();
  const frame = encodeFrame(Buffer.from('slowloris'));
  let i = 0;
  const timer = setInterval(() => {
    if (i < frame.length && !c.destroyed) c.write(frame.subarray(i, ++i));
  }, 1000);
  c.write(frame.subarray(0, ++i));
  t.teardown(() => clearInterval(timer));
  const o = await s.next();
  clearInterval(timer);
  t.equal(o.err?.code, 'frame_timeout');
  t.match(o.err?.message, new RegExp(`within ${FRAME_TIMEOUT_MS} ms of its first byte`), 'cut by the 2 s frame limit');
  t.ok(o.elapsed >= FRAME_TIMEOUT_MS - CLOCK_SLACK_MS, `not before 2 s (${o.elapsed} ms)`);
  // without the limit the trickle would complete the frame at ~12 s
  t.ok(o.elapsed < GENEROUS_MS, `within ${GENEROUS_MS} ms (${o.elapsed} ms)`);
});

t.test('timeoutMs / idleTimeoutMs options', async (t) => {
  const s = await serve(t, { timeoutMs: 300, idleTimeoutMs: 200 });
  await s.connect(); // sends nothing
  const idle = await s.next();
  t.equal(idle.err?.code, 'frame_timeout');
  t.match(idle.err?.message, /no frame within 200 ms/, 'the idle option, not the 5 s default');
  t.ok(idle.elapsed >= 200 - CLOCK_SLACK_MS && idle.elapsed < GENEROUS_MS, `idle cut after ${idle.elapsed} ms`);
  const c = await s.connect();
  c.write(Buffer.from([0, 0, 0, 5, 1]));
  const slow = await s.next();
  t.equal(slow.err?.code, 'frame_timeout');
  t.match(slow.err?.message, /within 300 ms of its first byte/, 'the timeout option, not the 2 s default');
  t.ok(slow.elapsed >= 300 - CLOCK_SLACK_MS && slow.elapsed < GENEROUS_MS, `cut after ${slow.elapsed} ms`);
});

t.test('trailing bytes in the same read are refused', async (t) => {
  const s = await serve(t);
  (await s.connect()).write(Buffer.concat([encodeFrame(Buffer.from('ok')), Buffer.from('junk')]));
  const o = await s.next();
  t.equal(o.err?.code, 'frame_trailing');
  t.match(o.err?.message, /4 bytes after the frame/);
});

t.test('trailing bytes arriving later are reported by hasTrailing()', async (t) => {
  const s = await serve(t, undefined, async () => {
    await sleep(200); // "deciding"
  });
  const c = await s.connect();
  c.write(encodeFrame(Buffer.from('ok')));
  await sleep(50);
  c.write(Buffer.from('x'));
  const o = await s.next();
  t.equal(o.frame?.toString(), 'ok');
  t.equal(o.frame?.hasTrailing(), true);
});

t.test('many concurrent sockets keep their own state', async (t) => {
  const s = await serve(t, undefined, async (socket, frame) => {
    await writeFrame(socket, frame);
  });
  const bodies = Array.from({ length: 32 }, (_, i) => Buffer.alloc(100 + i * 50, i));
  const replies = await Promise.all(
    bodies.map(async (b, i) => {
      const c = await s.connect();
      const f = encodeFrame(b);
      // interleave: half now, half later
      c.write(f.subarray(0, 3 + (i % 7)));
      await sleep(5 + (i % 5));
      c.write(f.subarray(3 + (i % 7)));
      return readFrame(c);
    }),
  );
  replies.forEach((r, i) => t.ok(r.equals(bodies[i]), `socket ${i}`));
  for (let i = 0; i < bodies.length; i++) await s.next();
});
