// The live stream (src/events/stream.ts) over real ChainedLog files and a
// real LogHub: token auth (401 + onRefused), live lines with "log", since=
// replay with no gap or duplicate while lines are appended during the
// replay, a client killed mid-stream that reconnects with since, a stalled
// client under a flood (dropped with a reason; the writer never waits;
// memory bounded), loopback-only --listen, the socket file's safety.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import { ChainedLog } from '../../src/evidence/chain';
import { LogHub } from '../../src/events/hub';
import type { LogName } from '../../src/events/types';
import { ensureToken, readToken, TOKEN_FILE } from '../../src/events/token';
import { startEventStream, parseListen, checkListen, EventStream, EventStreamOptions, StreamDrop, StreamRefusal, EVENTS_SOCKET } from '../../src/events/stream';
import { EventClient, EventStreamError, StreamMessage } from '../../src/events/client';

type T = Test;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tick = () => new Promise((r) => setImmediate(r));

/** a private operation-like directory of its own, removed in teardown */
function opDirFor(t: T): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gs-ev-${process.pid}-`));
  fs.chmodSync(dir, 0o700);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Rig {
  dir: string;
  hub: LogHub;
  token: string;
  logs: Record<LogName, ChainedLog>;
  stream: EventStream;
  refusals: StreamRefusal[];
  drops: StreamDrop[];
  sock: string;
}

async function rig(t: T, opts: Partial<EventStreamOptions> = {}): Promise<Rig> {
  const dir = opDirFor(t);
  const hub = new LogHub();
  const logs = {} as Record<LogName, ChainedLog>;
  for (const l of ['faults', 'counters', 'events'] as const) {
    logs[l] = await ChainedLog.open(path.join(dir, `${l}.jsonl`), { onLine: (seq, text) => hub.publish(l, seq, text) });
  }
  const token = await ensureToken(dir);
  const refusals: StreamRefusal[] = [];
  const drops: StreamDrop[] = [];
  const stream = await startEventStream({ dir, hub, token, onRefused: (r) => refusals.push(r), onDropped: (d) => drops.push(d), ...opts });
  t.teardown(async () => {
    await stream.close();
    for (const l of Object.values(logs)) await l.close();
  });
  return { dir, hub, token, logs, stream, refusals, drops, sock: path.join(dir, EVENTS_SOCKET) };
}

const boundary = (i: number) => ({ type: 'boundary', event: { kind: 'egress_denied', control: 'ebpf/connect4', detail: `tcp connect to 127.0.0.1:${i % 65536} without a lease`, target: `127.0.0.1:${i % 65536}`, at: new Date().toISOString() } });

/** append n lines to a log without waiting for fdatasync, yielding to the event loop every `every` lines */
async function appendMany(log: ChainedLog, n: number, every = 100, fields: (i: number) => Record<string, unknown> = boundary): Promise<void> {
  for (let i = 0; i < n; i++) {
    log.appendTicket(fields(i), { sync: false });
    if ((i + 1) % every === 0) await tick();
  }
}

/** a raw HTTP upgrade on the unix socket (or TCP port); the status line and the open socket */
function rawUpgrade(where: string | number, headers: string[], url = '/'): Promise<{ status: number; head: string; sock: net.Socket }> {
  return new Promise((resolve, reject) => {
    const sock = typeof where === 'number' ? net.connect(where, '127.0.0.1') : net.connect(where);
    let buf = '';
    sock.on('error', reject);
    sock.on('connect', () => {
      sock.write(
        [`GET ${url} HTTP/1.1`, 'Host: gensee', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', ...headers, '', ''].join('\r\n'),
      );
    });
    const onData = (d: Buffer) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      resolve({ status: Number(buf.split(' ')[1]), head: buf.slice(0, end), sock });
    };
    sock.on('data', onData);
  });
}

/** collect messages from a client until pred says done (or the stream ends) */
async function collect(c: EventClient, done: (m: StreamMessage, all: StreamMessage[]) => boolean, timeoutMs = 20_000): Promise<StreamMessage[]> {
  const got: StreamMessage[] = [];
  const timer = setTimeout(() => c.close(), timeoutMs);
  try {
    for await (const m of c) {
      got.push(m);
      if (done(m, got)) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return got;
}

const fileLines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

t.test('token: created once 0600, read back; symlink, loose mode and junk refused', async (t) => {
  const dir = opDirFor(t);
  const tok = await ensureToken(dir);
  t.match(tok, /^[0-9a-f]{64}$/);
  const file = path.join(dir, TOKEN_FILE);
  t.equal(fs.statSync(file).mode & 0o777, 0o600);
  t.equal(await ensureToken(dir), tok, 'an existing token is kept');
  t.equal(await readToken(dir), tok);
  fs.chmodSync(file, 0o640);
  await t.rejects(readToken(dir), { code: 'E_BAD_MODE' });
  await t.rejects(ensureToken(dir), { code: 'E_BAD_MODE' }, 'ensureToken does not paper over a loose mode');
  fs.chmodSync(file, 0o600);
  fs.writeFileSync(file, 'not-a-token');
  await t.rejects(readToken(dir), { code: 'E_STATE' });
  fs.rmSync(file);
  const other = path.join(dir, 'elsewhere');
  fs.writeFileSync(other, 'a'.repeat(64), { mode: 0o600 });
  fs.symlinkSync(other, file);
  await t.rejects(readToken(dir), { code: 'E_SYMLINK' });
  await t.rejects(ensureToken(dir), { code: 'E_SYMLINK' });
  fs.rmSync(file);
  await t.rejects(readToken(dir), { code: 'E_STATE', message: /no live stream token/ });
});

t.test('upgrade: wrong or missing token is 401, no upgrade, and reported', async (t) => {
  const r = await rig(t);
  t.equal(fs.lstatSync(r.sock).mode & 0o777, 0o600, 'events.sock is 0600');
  t.ok(fs.lstatSync(r.sock).isSocket());

  const wrong = await rawUpgrade(r.sock, [`Authorization: Bearer ${'0'.repeat(64)}`]);
  t.equal(wrong.status, 401, 'wrong token: 401');
  t.match(wrong.head, /WWW-Authenticate: Bearer/);
  wrong.sock.destroy();
  const none = await rawUpgrade(r.sock, []);
  t.equal(none.status, 401, 'missing token: 401');
  none.sock.destroy();
  const prefix = await rawUpgrade(r.sock, [`Authorization: Bearer ${r.token.slice(0, 32)}`]);
  t.equal(prefix.status, 401, 'a prefix of the token: 401');
  prefix.sock.destroy();
  const basic = await rawUpgrade(r.sock, [`Authorization: Basic ${r.token}`]);
  t.equal(basic.status, 401, 'not a bearer token: 401');
  basic.sock.destroy();

  t.equal(r.refusals.length, 4, 'every refusal reported');
  t.same(r.refusals.map((x) => x.status), [401, 401, 401, 401]);
  t.equal(r.refusals[0].reason, 'wrong bearer token');
  t.equal(r.refusals[1].reason, 'no bearer token');
  t.match(r.refusals[0].peer, /^uid \d+ pid \d+$/, 'the unix peer is named by SO_PEERCRED');
  t.equal(r.stream.subscribers(), 0);

  const unauth = await EventClient.connect({ socketPath: r.sock, token: 'f'.repeat(64) }).catch((e: unknown) => e);
  t.ok(unauth instanceof EventStreamError && unauth.reason === 'unauthorized' && unauth.status === 401, 'the client says unauthorized');
  t.equal(r.refusals.length, 5);

  const badQuery = await rawUpgrade(r.sock, [`Authorization: Bearer ${r.token}`], '/?since=events:x');
  t.equal(badQuery.status, 400, 'a malformed since: 400');
  badQuery.sock.destroy();
  const badLog = await rawUpgrade(r.sock, [`Authorization: Bearer ${r.token}`], '/?logs=secrets');
  t.equal(badLog.status, 400, 'an unknown log: 400');
  badLog.sock.destroy();
  t.same(r.refusals.slice(5).map((x) => x.status), [400, 400]);

  const ok = await rawUpgrade(r.sock, [`Authorization: Bearer ${r.token}`]);
  t.equal(ok.status, 101, 'the right token upgrades');
  ok.sock.destroy();
});

t.test('right token: every live line of every log, with "log", exact text', async (t) => {
  const r = await rig(t);
  const raw: string[] = [];
  const ws = new WebSocket(`ws+unix://${r.sock}:/`, { headers: { Authorization: `Bearer ${r.token}` } });
  await new Promise((res, rej) => (ws.once('open', res), ws.once('error', rej)));
  ws.on('message', (d: Buffer) => raw.push(d.toString('utf8')));
  await r.logs.events.append(boundary(1));
  await r.logs.faults.append({ kind: 'fault', fault_id: 'f-1' });
  await r.logs.counters.append({ kind: 'delta', allow: 3 });
  await r.logs.events.append({ type: 'attention', signature: 'control_defeat', detail: 'deny then reach "x"', evidence: [1] });
  while (raw.length < 4) await sleep(10);
  const expected = [
    ...fileLines(path.join(r.dir, 'events.jsonl')).slice(0, 1).map((l) => ({ l, log: 'events' })),
    ...fileLines(path.join(r.dir, 'faults.jsonl')).map((l) => ({ l, log: 'faults' })),
    ...fileLines(path.join(r.dir, 'counters.jsonl')).map((l) => ({ l, log: 'counters' })),
    ...fileLines(path.join(r.dir, 'events.jsonl')).slice(1).map((l) => ({ l, log: 'events' })),
  ];
  t.same(
    raw,
    expected.map(({ l, log }) => `${l.slice(0, -1)},"log":"${log}"}`),
    'each message is the file line with "log" added before its final }',
  );
  for (const [i, m] of raw.entries()) t.same(JSON.parse(m), { ...JSON.parse(expected[i].l), log: expected[i].log });
  t.equal(r.stream.subscribers(), 1);
  ws.close();
  await new Promise((res) => ws.once('close', res));
  while (r.stream.subscribers() !== 0) await sleep(10);

  // logs= selects
  const c = await EventClient.connect({ socketPath: r.sock, token: r.token, logs: ['faults'] });
  await r.logs.events.append(boundary(2));
  await r.logs.faults.append({ kind: 'fault', fault_id: 'f-2' });
  const got = await collect(c, () => true);
  t.same(got.map((m) => [m.log, m.seq, m.fault_id]), [['faults', 2, 'f-2']], 'only the selected log');
  c.close();
});

t.test('since= replays from the file, then live: no gap, no duplicate while lines are appended during the replay', async (t) => {
  const r = await rig(t);
  await appendMany(r.logs.events, 3000, 1000);
  await appendMany(r.logs.faults, 50, 50, (i) => ({ kind: 'fault', fault_id: `f-${i}` }));
  await r.logs.events.flushNow();
  const total = 6000;
  const c = await EventClient.connect({ socketPath: r.sock, token: r.token, logs: ['events', 'faults'], since: { events: 1000, faults: 40 } });
  // the replay runs while more lines are appended, in small batches between its reads
  const writer = (async () => {
    for (let i = 0; i < 3000; i += 10) {
      await appendMany(r.logs.events, 10, 10);
      if (i === 1500) await r.logs.faults.append({ kind: 'fault', fault_id: 'late' });
    }
  })();
  const got = await collect(c, (_m, all) => all.filter((x) => x.log === 'events').length >= total - 1000 && all.some((x) => x.fault_id === 'late'));
  await writer;
  const ev = got.filter((m) => m.log === 'events').map((m) => m.seq);
  t.equal(ev.length, total - 1000, 'every events line after seq 1000');
  t.same(ev, Array.from({ length: total - 1000 }, (_, i) => 1001 + i), 'in order, none missing, none twice');
  const fa = got.filter((m) => m.log === 'faults').map((m) => m.seq);
  t.same(fa, [41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51], 'faults after 40, then the live one');
  t.notOk(got.some((m) => m.log === 'counters'), 'counters not selected');
  // replayed lines are the file's lines
  const lines = fileLines(path.join(r.dir, 'events.jsonl'));
  t.same(got.find((m) => m.log === 'events' && m.seq === 1001), { ...JSON.parse(lines[1000]), log: 'events' });
  c.close();
});

t.test('a client killed mid-stream reconnects with since: every seq exactly once', async (t) => {
  const r = await rig(t);
  const N = 20_000;
  await appendMany(r.logs.events, 2000, 500);
  const sub = path.join(__dirname, 'subscriber.js');
  const child = spawn(process.execPath, [sub, r.sock, r.token, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((res) => child.once('exit', (_c, s) => res(s)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const deadline = Date.now() + 20_000;
  const until = async (what: string, cond: () => boolean) => {
    while (!cond()) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`subscriber: waiting for ${what}; exit ${child.exitCode}; stderr: ${err}; stdout: ${out.slice(-200)}`);
      await sleep(5);
    }
  };
  await until('connected', () => out.includes('connected'));
  // the flood goes on; kill the subscriber once it has printed part of it
  const writer = appendMany(r.logs.events, N - 2000, 200);
  await until('6000 lines', () => out.split('\n').length >= 6000);
  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL');
  const printed = out
    .split('\n')
    .slice(0, -1) // a line cut by the kill
    .filter((l) => /^\d+$/.test(l))
    .map(Number);
  t.ok(printed.length >= 5000 && printed[printed.length - 1] < N, `killed mid-stream, after ${printed.length} lines`);
  while (r.stream.subscribers() !== 0) await sleep(10);
  const last = printed[printed.length - 1];
  const c = await EventClient.connect({ socketPath: r.sock, token: r.token, logs: ['events'], since: { events: last } });
  const rest = (await collect(c, (m) => m.seq >= N)).map((m) => m.seq);
  await writer;
  const all = [...printed, ...rest];
  t.equal(all.length, N, 'as many as were written');
  t.same(all, Array.from({ length: N }, (_, i) => i + 1), 'every seq exactly once, in order');
  c.close();

  // the same in process: an abrupt disconnect, and the client's own reconnect
  const base = r.logs.events.seq;
  const c2 = await EventClient.connect({ socketPath: r.sock, token: r.token, logs: ['events'], since: { events: base }, reconnect: { retries: 5, delayMs: 50 } });
  const w2 = appendMany(r.logs.events, 5000, 100);
  let cut = false;
  const got = await collect(c2, (m) => {
    if (!cut && m.seq >= base + 1500) {
      cut = true;
      c2.terminate();
    }
    return m.seq >= base + 5000;
  });
  await w2;
  t.ok(c2.reconnects >= 1, 'it reconnected');
  t.same(
    got.map((m) => m.seq),
    Array.from({ length: 5000 }, (_, i) => base + 1 + i),
    'across the cut: every seq exactly once',
  );
  c2.close();
});

t.test('a client dropped for reading too slowly resumes from the files with reconnect.afterDrop', async (t) => {
  const r = await rig(t, { stallMs: 300 });
  const N = 30_000;
  const c = await EventClient.connect({ socketPath: r.sock, token: r.token, logs: ['events'], since: { events: 0 }, highWater: 16, reconnect: { retries: 5, delayMs: 50, afterDrop: true } });
  const writer = appendMany(r.logs.events, N, 500);
  const seqs: number[] = [];
  const timer = setTimeout(() => c.close(), 30_000);
  for await (const m of c) {
    seqs.push(m.seq);
    if (seqs.length === 100) await sleep(1500); // stop reading: the server's stall clock runs out
    if (m.seq >= N) break;
  }
  clearTimeout(timer);
  await writer;
  t.ok(r.drops.length >= 1, `dropped as stalled: ${r.drops.map((d) => d.reason).join('; ')}`);
  t.ok(c.reconnects >= 1, 'and resumed');
  t.same(seqs, Array.from({ length: N }, (_, i) => i + 1), 'every seq exactly once');
  c.close();
});

/** a subscriber that upgrades and then never reads */
async function stalledSubscriber(r: Rig): Promise<net.Socket> {
  const s = await rawUpgrade(r.sock, [`Authorization: Bearer ${r.token}`]);
  if (s.status !== 101) throw new Error(`upgrade: ${s.status}`);
  s.sock.pause();
  s.sock.on('error', () => undefined);
  while (r.stream.subscribers() === 0) await sleep(5);
  return s.sock;
}

t.test('a stalled client under a flood is dropped after 10 s; the writer never waits; memory stays bounded', async (t) => {
  const BOUND = 64 << 20;
  const r = await rig(t, { maxBufferedBytes: BOUND }); // a bound the flood stays under: the stall clock decides
  const LINES = 150_000;
  // the writer alone first (the same lines, to another log), for comparison
  let t0 = performance.now();
  await appendMany(r.logs.faults, LINES, 1000);
  const alone = performance.now() - t0;
  await r.logs.faults.flushNow();

  const sock = await stalledSubscriber(r);
  t.teardown(() => sock.destroy());
  let maxQueued = 0;
  const sampler = setInterval(() => {
    for (const s of r.stream.stats()) maxQueued = Math.max(maxQueued, s.queued_bytes + s.socket_buffered);
  }, 50);
  t.teardown(() => clearInterval(sampler));
  const floodStart = Date.now();
  t0 = performance.now();
  await appendMany(r.logs.events, LINES, 1000);
  const withStalled = performance.now() - t0;
  await r.logs.events.flushNow();
  const floodEnd = Date.now();
  t.equal(r.logs.events.seq, LINES, 'every line written');
  t.ok(floodEnd - floodStart < 10_000, `the flood finished (${floodEnd - floodStart} ms) without waiting for the stalled client`);
  t.ok(withStalled < alone * 2 + 500, `appends with a stalled subscriber ${withStalled.toFixed(0)} ms vs alone ${alone.toFixed(0)} ms`);
  t.equal(r.drops.length, 0, 'not dropped yet: it is the stall clock that decides');
  const st = r.stream.stats()[0];
  t.ok(st.queued_bytes > 1 << 20, `its lines are queued (${st.queued_bytes} bytes), not written into a full socket`);
  while (r.drops.length === 0 && Date.now() - floodStart < 16_000) await sleep(50);
  const droppedAfter = Date.now() - floodStart;
  t.equal(r.drops.length, 1, 'dropped');
  t.match(r.drops[0].reason, /^stalled: no send progress/, `reason: ${r.drops[0].reason}`);
  t.ok(droppedAfter >= 9_000 && droppedAfter <= 13_000, `dropped ${droppedAfter} ms after the flood began (10 s + slack)`);
  t.equal(r.stream.subscribers(), 0, 'no longer a subscriber');
  t.ok(maxQueued <= BOUND + (512 << 10), `queued for it at most ${maxQueued} bytes (bound ${BOUND})`);
  t.same(r.stream.stats(), [], 'its queue is freed');
  // the drop does not disturb anyone else
  const c = await EventClient.connect({ socketPath: r.sock, token: r.token, logs: ['events'] });
  await r.logs.events.append(boundary(7));
  t.same((await collect(c, () => true)).map((m) => m.seq), [LINES + 1]);
  c.close();
});

t.test('a stalled client is dropped as soon as its queue passes the bound', async (t) => {
  const BOUND = 2 << 20;
  const r = await rig(t, { maxBufferedBytes: BOUND });
  const sock = await stalledSubscriber(r);
  t.teardown(() => sock.destroy());
  let maxQueued = 0;
  r.hub.subscribe(() => {
    for (const s of r.stream.stats()) maxQueued = Math.max(maxQueued, s.queued_bytes);
  });
  const t0 = Date.now();
  await appendMany(r.logs.events, 100_000, 1000);
  await r.logs.events.flushNow();
  t.equal(r.drops.length, 1, 'dropped during the flood');
  t.match(r.drops[0].reason, /^queue over \d+ bytes/);
  t.ok(Date.now() - t0 < 10_000, 'long before the stall clock');
  t.ok(maxQueued <= BOUND, `its queue never passed the bound (max ${maxQueued})`);
  t.ok(r.drops[0].queued_bytes <= BOUND + 1000);
  t.equal(r.stream.subscribers(), 0);
  // the server closed it: the socket ends (1008 and/or a destroy)
  await new Promise<void>((res) => {
    sock.resume();
    sock.on('close', () => res());
    sock.on('end', () => res());
  });
});

t.test('--listen: loopback only; a TCP subscriber authenticates the same way', async (t) => {
  for (const host of ['0.0.0.0', '::', '192.168.1.1', 'localhost', '10.0.0.1', '::ffff:127.0.0.1', '']) {
    t.throws(() => checkListen({ host, port: 0 }), { code: 'E_USAGE' }, `refused: ${JSON.stringify(host)}`);
  }
  t.throws(() => parseListen('0.0.0.0:8080'), { code: 'E_USAGE', message: /loopback only/ });
  t.throws(() => parseListen('127.0.0.1'), { code: 'E_USAGE' });
  t.throws(() => parseListen('127.0.0.1:70000'), { code: 'E_BAD_PORT' });
  t.same(parseListen('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
  t.same(parseListen('[::1]:9'), { host: '::1', port: 9 });
  const dir = opDirFor(t);
  await t.rejects(startEventStream({ dir, hub: new LogHub(), token: await ensureToken(dir), listen: { host: '0.0.0.0', port: 0 } }), { code: 'E_USAGE', message: /loopback only/ });
  t.notOk(fs.existsSync(path.join(dir, EVENTS_SOCKET)), 'nothing left listening');

  const r = await rig(t, { listen: { host: '127.0.0.1', port: 0 } });
  t.ok(r.stream.port && r.stream.port > 0, `port ${r.stream.port}`);
  const bad = await rawUpgrade(r.stream.port!, ['Authorization: Bearer nope']);
  t.equal(bad.status, 401);
  bad.sock.destroy();
  t.match(r.refusals[0].peer, /^127\.0\.0\.1:\d+$/);
  const c = await EventClient.connect({ url: `ws://127.0.0.1:${r.stream.port}/`, token: r.token, logs: ['events'] });
  await r.logs.events.append(boundary(1));
  t.same((await collect(c, () => true)).map((m) => [m.log, m.seq]), [['events', 1]]);
  c.close();
});

t.test('socket file: a stale socket is replaced, anything else refused; close removes it and says 1001', async (t) => {
  const dir = opDirFor(t);
  const hub = new LogHub();
  const token = await ensureToken(dir);
  const sock = path.join(dir, EVENTS_SOCKET);
  fs.writeFileSync(sock, 'x');
  await t.rejects(startEventStream({ dir, hub, token }), { code: 'E_NOT_FILE' });
  t.equal(fs.readFileSync(sock, 'utf8'), 'x', 'a regular file is left alone');
  fs.rmSync(sock);
  fs.symlinkSync('/tmp', sock);
  await t.rejects(startEventStream({ dir, hub, token }), { code: 'E_SYMLINK' });
  fs.rmSync(sock);
  // a stale socket: its server was killed without removing it
  try {
    execFileSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`], { stdio: 'ignore' });
  } catch {
    /* it killed itself, as meant */
  }
  t.ok(fs.lstatSync(sock).isSocket(), 'stale socket present');
  const s = await startEventStream({ dir, hub, token });
  t.equal(fs.lstatSync(sock).mode & 0o777, 0o600);
  // a live one is not taken over
  await t.rejects(startEventStream({ dir, hub, token }), { code: 'E_SOCKET_IN_USE', message: /served by another process/ });
  const c = await EventClient.connect({ socketPath: sock, token });
  const ended = collect(c, () => false);
  await s.close();
  await ended;
  t.equal(c.ended?.code, 1001, 'subscribers are told the operation stopped');
  t.equal(c.ended?.reason, 'operation stopped');
  t.notOk(fs.existsSync(sock), 'socket removed');
  t.equal(hub.subscribers, 0, 'off the hub');
  const gone = await EventClient.connect({ socketPath: sock, token }).catch((e: unknown) => e);
  t.ok(gone instanceof EventStreamError && gone.reason === 'unavailable', 'then there is no stream');
});
