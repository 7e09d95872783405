// `gensee events` and the LAST EVENT of `gensee ls`, on a prepared
// operation: --json prints the events.jsonl line objects, the human form one
// line each; --follow without a supervisor prints the file and says so;
// --follow with a live stream prints what is appended until the stream
// closes, or until SIGINT.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gensee, Proc } from '../helpers/gensee';
import { GENSEE_BIN } from '../helpers/kernel';
import { ChainedLog } from '../../src/evidence/chain';
import { LogHub } from '../../src/events/hub';
import { ensureToken } from '../../src/events/token';
import { startEventStream } from '../../src/events/stream';
import { createOperation, opDir } from '../../src/state/operation';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const EVENTS = [
  {
    type: 'boundary',
    event: { kind: 'egress_denied', control: 'ebpf/connect4', detail: 'tcp connect to 127.0.0.1:9 without a lease', target: '127.0.0.1:9', at: '2026-12-01T10:00:00.123Z' },
    tool_id: 'fetch-page',
    fault_id: 'sn-41-7',
  },
  { type: 'boundary', event: { kind: 'fault_denied', control: 'resolver/policy_denied', detail: 'tcp 10.0.0.1:443 denied by policy', at: '2026-12-01T10:00:01.000Z' } },
  { type: 'suppressed', count: 12, second: '2026-12-01T10:00:01Z' },
  { type: 'attention', signature: 'control_defeat', detail: 'deny then reach\u001b[31m red', evidence: [1, 2] },
  { type: 'attention_cleared', by: 'person', person: 'ana', note: 'looked at it', peer: { pid: 1, uid: 0 }, attention: [4] },
];

async function prepared(t: Test, events = EVENTS): Promise<{ st: string; op: string; dir: string; file: string }> {
  const st = fs.mkdtempSync(path.join(os.tmpdir(), `gs-evcli-${process.pid}-`));
  t.teardown(() => fs.rmSync(st, { recursive: true, force: true }));
  const op = 'ev-op';
  await createOperation(st, { id: op, owner_uid: process.getuid!(), cgroup: '/sys/fs/cgroup/gs-evcli-none', policy_hash: 'h' });
  const dir = opDir(st, op);
  const file = path.join(dir, 'events.jsonl');
  if (events.length) {
    const log = await ChainedLog.open(file);
    for (const e of events) await log.append(e);
    await log.close();
  }
  return { st, op, dir, file };
}

const fileLines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

t.test('gensee events --json prints the events.jsonl line objects', async (t) => {
  const { st, op, file } = await prepared(t);
  const r = await gensee(['events', '--op', op, '--state-dir', st, '--json']);
  t.equal(r.code, 0, r.stderr);
  t.same(r.stdout.split('\n').filter(Boolean), fileLines(file), 'the lines, exactly');
  t.equal(r.stderr, '');
});

t.test('gensee events: one line each for a person; control characters defused', async (t) => {
  const { st, op } = await prepared(t);
  const r = await gensee(['events', '--op', op, '--state-dir', st]);
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n').filter(Boolean);
  t.equal(lines.length, EVENTS.length);
  t.equal(lines[0], '2026-12-01T10:00:00.123Z  egress_denied  ebpf/connect4  127.0.0.1:9  tcp connect to 127.0.0.1:9 without a lease (tool fetch-page, fault sn-41-7)');
  t.match(lines[1], /^2026-12-01T10:00:01\.000Z {2}fault_denied {2}resolver\/policy_denied {2}- {2}tcp 10\.0\.0\.1:443 denied by policy$/);
  t.match(lines[2], /suppressed {2}- {2}- {2}12 more boundary events/);
  t.match(lines[3], /attention {2}control_defeat {2}- {2}deny then reach\?\[31m red \(evidence: lines 1, 2\)$/);
  t.notOk(r.stdout.includes('\u001b'), 'no escape reaches the terminal');
  t.match(lines[4], /attention_cleared {2}- {2}- {2}by person ana: looked at it$/);

  const none = await prepared(t, []);
  const e = await gensee(['events', '--op', none.op, '--state-dir', none.st]);
  t.equal(e.code, 0);
  t.equal(e.stdout, '');
  t.match(e.stderr, /no events for ev-op/);
  const unknown = await gensee(['events', '--op', 'no-such-op', '--state-dir', none.st]);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /E_UNKNOWN_OP/);
  const usage = await gensee(['events', '--state-dir', none.st]);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /--op ID is required/);
});

t.test('gensee events --follow without a supervisor prints the file, says so, exits 0', async (t) => {
  const { st, op, dir, file } = await prepared(t);
  const r = await gensee(['events', '--op', op, '--state-dir', st, '--follow', '--json']);
  t.equal(r.code, 0, r.stderr);
  t.same(r.stdout.split('\n').filter(Boolean), fileLines(file));
  t.match(r.stderr, /no supervisor is serving ev-op/);
  await ensureToken(dir); // a token left by a supervisor that has gone
  const r2 = await gensee(['events', '--op', op, '--state-dir', st, '--follow']);
  t.equal(r2.code, 0, r2.stderr);
  t.equal(r2.stdout.split('\n').filter(Boolean).length, EVENTS.length);
  t.match(r2.stderr, /no supervisor is serving ev-op \(nothing listens on events\.sock\)/);
});

t.test('gensee events --follow prints appended lines until the stream closes, or SIGINT', async (t) => {
  const { st, op, dir, file } = await prepared(t);
  const hub = new LogHub();
  const log = await ChainedLog.open(file, { onLine: (seq, text) => hub.publish('events', seq, text) });
  const token = await ensureToken(dir);
  const stream = await startEventStream({ dir, hub, token });
  t.teardown(async () => {
    await stream.close();
    await log.close();
  });
  const lines = () => p.stdout.split('\n').filter(Boolean);
  const waitFor = async (n: number) => {
    const end = Date.now() + 15_000;
    while (lines().length < n) {
      if (!p.running || Date.now() > end) throw new Error(`waiting for ${n} lines: ${p.stdout} ${p.stderr}`);
      await sleep(20);
    }
  };
  const p = new Proc(GENSEE_BIN, ['events', '--op', op, '--state-dir', st, '--follow', '--json']);
  t.teardown(() => p.end());
  await waitFor(EVENTS.length);
  while (stream.subscribers() === 0) await sleep(20);
  for (let i = 0; i < 50; i++) await log.append({ type: 'boundary', event: { kind: 'dns_denied', control: 'dns/budget', detail: `name ${i}`, at: new Date().toISOString() } });
  await log.append({ type: 'attention', signature: 'stall', detail: 'no progress', evidence: [] });
  await waitFor(EVENTS.length + 51);
  await stream.close();
  const ex = await p.exited;
  t.equal(ex.code, 0, `exit 0 when the stream closes: ${p.stderr}`);
  t.match(p.stderr, /live stream closed: operation stopped/);
  t.same(
    lines().map((l) => JSON.parse(l)),
    fileLines(file).map((l) => JSON.parse(l)),
    'the file, then every appended line once, as line objects (no "log")',
  );

  // SIGINT ends a follow quietly, exit 0
  const stream2 = await startEventStream({ dir, hub, token });
  t.teardown(() => stream2.close());
  const q = new Proc(GENSEE_BIN, ['events', '--op', op, '--state-dir', st, '--follow']);
  t.teardown(() => q.end());
  while (stream2.subscribers() === 0) {
    if (!q.running) throw new Error(q.stderr);
    await sleep(20);
  }
  q.kill('SIGINT');
  const ex2 = await q.exited;
  t.equal(ex2.code, 0, q.stderr);
  t.equal(q.stdout.split('\n').filter(Boolean).length, EVENTS.length + 51);
});

t.test('gensee ls shows the last event of each operation', async (t) => {
  const { st, op } = await prepared(t);
  const none = 'ev-quiet';
  await createOperation(st, { id: none, owner_uid: process.getuid!(), cgroup: '/sys/fs/cgroup/gs-evcli-none', policy_hash: 'h' });
  const j = await gensee(['ls', '--state-dir', st, '--json']);
  t.equal(j.code, 0, j.stderr);
  const rows = (JSON.parse(j.stdout) as { operations: { id: string; last_event: unknown }[] }).operations;
  const by = Object.fromEntries(rows.map((r) => [r.id, r.last_event]));
  t.match(by[op], { seq: EVENTS.length, kind: 'attention_cleared' });
  t.equal(by[none], null);
  const h = await gensee(['ls', '--state-dir', st]);
  t.equal(h.code, 0, h.stderr);
  const [head, ...body] = h.stdout.split('\n');
  t.match(head, /UPDATED +LAST EVENT +ATTENTION +CGROUP/);
  t.match(body.find((l) => l.startsWith(op + ' ')), /attention_cleared 20\d\d-\d\d-\d\dT[\d:.]+Z/);
  const quiet = body.find((l) => l.startsWith(none + ' '))!;
  const col = head.indexOf('LAST EVENT');
  t.equal(quiet.slice(col, col + 2), '- ', 'no event: "-"');
});
