// The executor end to end: `gensee executor call` and `gensee executor
// recover` as real processes, against a real `gensee supervise` whose policy
// denies everything on the operation's cgroup, the tools run inside the
// boundary through gensee-exec, writing to a loopback ledger that stores by
// Idempotency-Key only (test/executor/ledger.ts). Crashes are real: the test
// kill -9s the executor process it started, at chosen points.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { requireKernel, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { supervisedOp, superviseProcess, SupervisedOp } from '../helpers/supervisor';
import { gensee, Proc, CliResult } from '../helpers/gensee';
import { opDir, readKey } from '../../src/state/operation';
import { deriveKey } from '../../src/executor/key';
import { handleToken } from '../../src/executor/handle';
import { MAX_DENIALS_PER_CALL } from '../../src/executor/server';
import { startLedger, Ledger } from './ledger';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };
const TOOLS = path.join(__dirname, 'fixtures', 'ledger-tools.js');
const PUT_KEY_FIELDS = ['account', 'amount', 'memo'];

type Line = Record<string, unknown>;

// The executor runs without tap's NODE_OPTIONS (its process-info loader):
// loaded in the executor, the loader's spawn hook would put itself into the
// tool's environment, and the tool (an unprivileged uid, gensee's tree
// read-only) cannot write tap's .tap/ directory. `env -u` execs bin/gensee in
// the same process, so a Proc's pid is the executor's.
const EXECUTOR = ['/usr/bin/env', '-u', 'NODE_OPTIONS', GENSEE_BIN];

function executor(args: string[], timeoutMs = 60_000, env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(EXECUTOR[0], [...EXECUTOR.slice(1), ...args], { timeout: timeoutMs, maxBuffer: 64 << 20, env }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, signal: e?.signal ?? null, stdout, stderr });
    });
  });
}

function lines(file: string): Line[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => JSON.parse(l) as Line);
}

interface Outcome {
  call_id: string;
  tool_id: string;
  class: string;
  key: string | null;
  request_id: string | null;
  state: string;
  result: { status: number; entry: { id: string; key: string | null; duplicate?: boolean } } | null;
  error: string | null;
  writes: { outcome: string; reason?: string; target?: string; fault_id?: string; status?: number }[];
}

interface Setup {
  o: SupervisedOp;
  dir: string;
  ledger: Ledger;
  call(tool: string, args: Record<string, unknown>, extra?: string[]): Promise<CliResult & { outcome: Outcome | null }>;
  start(tool: string, args: Record<string, unknown>, callId: string): Proc;
  recover(): Promise<CliResult & { report: { ok: boolean; calls: { call_id: string; state: string; detail: string | null }[] } | null }>;
  journal(): Line[];
  verify(): Promise<CliResult>;
}

/** the operator's policy: each example tool may write to the ledger (delegate rules naming it), nothing else */
function executorPolicy(port: number, tools = ['ledger-put', 'ledger-query', 'ledger-append']): object {
  return { ...DENY_ALL, delegate: tools.map((tool) => ({ network: { protocol: 'tcp', address: '127.0.0.1', port }, to: 'gensee-executor', tool })) };
}

async function setup(t: Test, prefix: string, tools?: string[]): Promise<Setup> {
  const ledger = await startLedger(t);
  const o = supervisedOp(t, prefix, executorPolicy(ledger.port, tools));
  await superviseProcess(t, o.args);
  const dir = opDir(o.stateDir, o.op);
  const base = ['--op', o.op, '--state-dir', o.stateDir, '--tools', TOOLS, '--json'];
  const parseJson = <X>(s: string): X | null => {
    try {
      return JSON.parse(s.trim().split('\n').pop() ?? '') as X;
    } catch {
      return null;
    }
  };
  return {
    o,
    dir,
    ledger,
    async call(tool, args, extra = []) {
      const r = await executor(['executor', 'call', ...base, tool, '--args', JSON.stringify(args), ...extra]);
      return { ...r, outcome: parseJson<Outcome>(r.stdout) };
    },
    start(tool, args, callId) {
      const p = new Proc(EXECUTOR[0], [...EXECUTOR.slice(1), 'executor', 'call', ...base, tool, '--args', JSON.stringify(args), '--call-id', callId]);
      t.teardown(() => p.end());
      return p;
    },
    async recover() {
      const r = await executor(['executor', 'recover', ...base]);
      return { ...r, report: parseJson(r.stdout) };
    },
    journal: () => lines(path.join(dir, 'calls.jsonl')),
    verify: () => gensee(['verify', '--op', o.op, '--state-dir', o.stateDir]),
  };
}

const now = () => new Date().toISOString();

/** the journal's `call` line of callId, once it is on disk */
function startedLine(s: Setup, callId: string): Line | undefined {
  return s.journal().find((l) => l.kind === 'call' && l.call_id === callId);
}

function lastState(s: Setup, callId: string): string | undefined {
  return s.journal().filter((l) => l.call_id === callId).pop()?.state as string | undefined;
}

/** kill -9 the executor (a process this test started) and wait for it to be gone */
async function crash(p: Proc): Promise<void> {
  p.kill('SIGKILL');
  const ex = await p.exited;
  if (ex.signal !== 'SIGKILL') throw new Error(`the executor ended on its own before the kill: ${ex.code} ${p.stdout}${p.stderr}`);
}

t.test('a call completes its write under the journaled key; the same call again leaves one entry', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-exc');
  const args = { ledger: s.ledger.url, account: 'acct-1', amount: 42, memo: 'rent', sent_at: now() };
  const r = await s.call('ledger-put', args);
  t.equal(r.code, 0, `the call completes ${r.stderr}${r.stdout}`);
  const o = r.outcome!;
  t.equal(o.state, 'completed');
  const started = startedLine(s, o.call_id);
  t.match(started, { kind: 'call', tool_id: 'ledger-put', class: 'idempotent', args, request_id: null, state: 'started' }, 'the journal holds the call, its recorded arguments and its key');
  const key = started!.key as string;
  t.match(key, /^[0-9a-f]{64}$/);
  t.equal(key, deriveKey('ledger-put', PUT_KEY_FIELDS, args), "the journaled key is the contract's derivation of the recorded arguments");
  t.equal(lastState(s, o.call_id), 'completed', 'and then its completion');
  const entries = s.ledger.entries();
  t.equal(entries.length, 1, 'the ledger holds one entry');
  t.equal(entries[0].key, key, 'stored under the gensee-supplied key');
  t.equal(o.result?.status, 201, 'the tool saw the write performed');
  t.notOk(fs.existsSync(path.join(s.o.cgroup, `exec-${o.call_id}`)), "the tool's cgroup is gone");

  // the same arguments again, a new timestamp (not in the key)
  const again = await s.call('ledger-put', { ...args, sent_at: new Date(Date.now() + 60_000).toISOString() });
  t.equal(again.code, 0, again.stderr);
  t.equal(again.outcome?.key, key, 'the derived key is identical');
  t.not(again.outcome?.call_id, o.call_id, 'another call');
  t.equal(again.outcome?.result?.status, 200, 'the ledger answered the retry as a duplicate');
  t.equal(s.ledger.received(), 2, 'the ledger received both writes');
  t.equal(s.ledger.entries().length, 1, 'and still holds exactly one entry');
  const v = await s.verify();
  t.equal(v.code, 0, `gensee verify passes, calls.jsonl included ${v.stdout}${v.stderr}`);
  t.match(v.stdout, /calls\.jsonl/, 'verify checked calls.jsonl');
});

t.test('a tool writes only where a delegate rule naming it allows: anywhere else is denied and recorded', async (t) => {
  if (!requireKernel(t)) return;
  // the policy delegates the ledger to ledger-query and ledger-append, not to ledger-put
  const s = await setup(t, 'gs-exp', ['ledger-query', 'ledger-append']);
  const r = await s.call('ledger-put', { ledger: s.ledger.url, account: 'acct-p', amount: 3, sent_at: now() });
  t.equal(r.code, 1, 'the call fails');
  const denied = r.outcome?.writes.find((w) => w.outcome === 'denied');
  t.equal(denied?.reason, 'policy_denied', 'the write is denied policy_denied');
  t.equal(s.ledger.received(), 0, 'nothing reached the ledger');
  const f = lines(path.join(s.dir, 'faults.jsonl'));
  const fault = f.find((l) => l.kind === 'fault' && (l.fault as { source?: string }).source === 'executor');
  t.match(fault?.fault, { effect: { application: { name: 'ledger-put', action: 'write', target: `${s.ledger.url}/entries` } } }, 'faults.jsonl: the write, naming the tool');
  t.match(f.find((l) => l.kind === 'resolution' && l.fault_id === fault?.fault_id)?.resolution, { action: 'deny', reason: 'policy_denied' }, 'denied by the policy');
  const ev = await waitFor(() => lines(path.join(s.dir, 'events.jsonl')).find((l) => l.type === 'boundary' && l.fault_id === fault?.fault_id), 10_000);
  t.match(ev, { tool_id: 'ledger-put', event: { kind: 'write_denied', control: 'executor/policy_denied' } }, 'events.jsonl: write_denied naming the tool');
});

t.test('writes around the gensee-supplied key are denied at call time and recorded against the tool', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-exa');
  const args = { ledger: s.ledger.url, account: 'acct-2', amount: 7, sent_at: now() };
  const first = await s.call('ledger-put', args);
  t.equal(first.code, 0, first.stderr);
  const other = first.outcome!;
  // a handle of that call, as a tool that got hold of it would present it
  const opKey = await readKey(s.o.stateDir, s.o.op);
  const otherHandle = { call_id: other.call_id, key: other.key, token: handleToken(opKey, other.call_id, other.key) };
  const faults = () => lines(path.join(s.dir, 'faults.jsonl'));
  const events = () => lines(path.join(s.dir, 'events.jsonl'));

  const cases: [string, string, Record<string, unknown>][] = [
    ['mint_key', 'write_key_mismatch', {}],
    ['mint_header', 'write_key_mismatch', {}],
    ['omit_key', 'write_key_missing', {}],
    ['replay_handle', 'handle_forged', { other_handle: otherHandle }],
    ['forge_handle', 'handle_forged', {}],
  ];
  for (const [attack, reason, more] of cases) {
    const r = await s.call('ledger-put', { ...args, account: `acct-${attack}`, attack, ...more });
    t.equal(r.code, 1, `${attack}: the call fails`);
    const o = r.outcome!;
    t.equal(o.state, 'failed', `${attack}: journaled failed`);
    t.equal(lastState(s, o.call_id), 'failed');
    const denied = o.writes.find((w) => w.outcome === 'denied');
    t.equal(denied?.reason, reason, `${attack}: denied ${reason}`);
    t.match(o.error, new RegExp(reason), `${attack}: the tool was told why`);
    const fid = denied?.fault_id;
    t.match(fid, /^ex-/, `${attack}: a fault id`);
    // read the audit records back
    const f = faults().find((l) => l.kind === 'fault' && l.fault_id === fid);
    t.match(f?.fault, { source: 'executor', effect: { application: { name: 'ledger-put', action: 'write', target: `${s.ledger.url}/entries` } } }, `${attack}: faults.jsonl names the tool`);
    t.match(faults().find((l) => l.kind === 'resolution' && l.fault_id === fid)?.resolution, { action: 'deny', reason }, `${attack}: and the deny reason`);
    const ev = await waitFor(() => events().find((l) => l.type === 'boundary' && l.fault_id === fid), 10_000);
    t.match(ev, { tool_id: 'ledger-put', event: { kind: 'write_denied', control: `executor/${reason}`, target: `${s.ledger.url}/entries` } }, `${attack}: events.jsonl write_denied names the tool`);
  }

  const r = await s.call('ledger-put', { ...args, account: 'acct-direct', attack: 'direct_connect' });
  t.equal(r.code, 1, 'direct connect: the call fails');
  t.match(r.outcome?.error, /direct connect: EPERM/, 'the hook refused the connection (EPERM)');
  t.same(r.outcome?.writes, [], 'no write went through the handle');
  const ev = await waitFor(() => events().find((l) => l.type === 'boundary' && (l.event as { target?: string }).target === `127.0.0.1:${s.ledger.port}`), 10_000);
  t.match(ev, { tool_id: 'ledger-put', event: { kind: 'egress_denied', control: 'ebpf/connect4' } }, 'egress_denied names the tool');

  // a tool flooding refusals loses its handle after a few: each one is a record
  const flood = await s.call('ledger-put', { ...args, account: 'acct-flood', attack: 'flood' });
  t.equal(flood.code, 0, flood.stderr);
  t.match(flood.outcome?.result, { answered: MAX_DENIALS_PER_CALL, then: /closed/ }, `the handle closes after ${MAX_DENIALS_PER_CALL} refusals`);
  t.equal(flood.outcome?.writes.filter((w) => w.outcome === 'denied' && w.reason === 'write_key_missing' && w.fault_id).length, MAX_DENIALS_PER_CALL, 'each of them recorded');

  // the state directory has no name in the tool's view: no key to forge a handle with
  const peek = await s.call('ledger-put', { ...args, account: 'acct-peek', attack: 'read_key', path: path.join(s.dir, 'key') });
  t.equal(peek.code, 0, peek.stderr);
  t.match(peek.outcome?.result, { read: 'ENOENT' }, "the tool cannot read the operation key");

  t.equal(s.ledger.received(), 1, 'nothing but the first call reached the ledger');
  t.equal(s.ledger.entries().length, 1);
  const v = await s.verify();
  t.equal(v.code, 0, `gensee verify passes ${v.stdout}${v.stderr}`);
});

t.test('kill -9 the executor mid-call; recover retries under the same key and the ledger holds one entry', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-exk');
  // 1. after the journal line, before the tool writes
  const a1 = { ledger: s.ledger.url, account: 'acct-k1', amount: 11, sent_at: now(), delay_ms: 3000 };
  const p1 = s.start('ledger-put', a1, 'k1');
  await waitFor(() => startedLine(s, 'k1'), 20_000);
  await crash(p1);
  t.equal(s.ledger.received(), 0, 'killed before the tool wrote');

  // 2. after the ledger stored the write, before the executor could record it
  const a2 = { ledger: s.ledger.url, account: 'acct-k2', amount: 12, sent_at: now() };
  const held = s.ledger.hold();
  const p2 = s.start('ledger-put', a2, 'k2');
  const stored = await held.stored;
  await crash(p2);
  held.release();
  t.equal(s.ledger.entries().length, 1, 'the ledger got the second write');
  t.equal(stored.key, startedLine(s, 'k2')?.key, 'under the journaled key');

  t.equal(lastState(s, 'k1'), 'started', 'k1 is left started');
  t.equal(lastState(s, 'k2'), 'started', 'k2 is left started');
  t.ok(fs.existsSync(path.join(s.dir, 'calls.lock')), "the dead executor's lock is still there");

  const r = await s.recover();
  t.equal(r.code, 0, `recover succeeds ${r.stderr}`);
  t.same(r.report?.calls.map((c) => [c.call_id, c.state]), [['k1', 'recovered'], ['k2', 'recovered']], 'both retried and recovered');
  t.equal(lastState(s, 'k1'), 'recovered');
  t.equal(lastState(s, 'k2'), 'recovered');
  const entries = s.ledger.entries();
  const k1 = startedLine(s, 'k1')?.key;
  const k2 = startedLine(s, 'k2')?.key;
  t.equal(k1, deriveKey('ledger-put', PUT_KEY_FIELDS, a1), 'k1: the journaled key re-derives from the recorded arguments');
  t.same(entries.map((e) => e.key).sort(), [k1, k2].sort(), 'exactly one entry per call, under its key');
  t.equal(s.ledger.received(), 3, 'k2 was written twice (the retry), stored once');
  t.notOk(fs.existsSync(path.join(s.dir, 'calls.lock')), 'the lock is released');
  t.notOk(fs.readdirSync(s.o.cgroup).some((n) => n.startsWith('exec-')), 'no tool cgroup is left');

  const again = await s.recover();
  t.equal(again.code, 0);
  t.same(again.report?.calls, [], 'a second recover finds nothing started');
  t.equal(s.ledger.received(), 3, 'and writes nothing');
  const v = await s.verify();
  t.equal(v.code, 0, `gensee verify passes ${v.stdout}${v.stderr}`);
});

t.test('recover waits for a running executor and never retries its live call', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-exl');
  const p = s.start('ledger-put', { ledger: s.ledger.url, account: 'acct-live', amount: 9, sent_at: now(), delay_ms: 1500 }, 'live1');
  await waitFor(() => startedLine(s, 'live1'), 20_000);
  const r = await s.recover();
  t.equal(r.code, 0, r.stderr);
  t.same(r.report?.calls, [], 'by the time recover had the journal, the call had completed: nothing to recover');
  const ex = await p.exited;
  t.equal(ex.code, 0, `the live call completed ${p.stderr}`);
  t.equal(lastState(s, 'live1'), 'completed');
  t.equal(s.ledger.received(), 1, 'written once: recover did not retry a live call');
  const v = await s.verify();
  t.equal(v.code, 0, `gensee verify passes ${v.stdout}${v.stderr}`);
});

t.test('queryable and unsafe writes go through without a key; recovery never retries them', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-exq');
  const q = await s.call('ledger-query', { ledger: s.ledger.url, account: 'acct-q', amount: 3, sent_at: now(), ref: 'q0' });
  t.equal(q.code, 0, q.stderr);
  t.match(q.outcome, { class: 'queryable', key: null, request_id: 'req-q0', state: 'completed' });
  const u = await s.call('ledger-append', { ledger: s.ledger.url, account: 'acct-u', amount: 4, sent_at: now() });
  t.equal(u.code, 0, u.stderr);
  t.match(u.outcome, { class: 'unsafe', key: null, request_id: null, state: 'completed' });
  const e0 = s.ledger.entries();
  t.equal(e0.length, 2, 'both writes stored');
  t.same(e0.map((e) => [e.key, e.request_id]), [[null, 'req-q0'], [null, null]], 'no Idempotency-Key on either; the queryable one carries its request id');
  t.match(startedLine(s, q.outcome!.call_id), { class: 'queryable', key: null, request_id: 'req-q0' });
  t.match(startedLine(s, u.outcome!.call_id), { class: 'unsafe', key: null, request_id: null });

  // crashes: a queryable call before and after its write, an unsafe one before and after
  const qa = s.start('ledger-query', { ledger: s.ledger.url, account: 'acct-q1', amount: 5, sent_at: now(), ref: 'q1', delay_ms: 3000 }, 'q1');
  await waitFor(() => startedLine(s, 'q1'), 20_000);
  await crash(qa);
  let held = s.ledger.hold();
  const qb = s.start('ledger-query', { ledger: s.ledger.url, account: 'acct-q2', amount: 6, sent_at: now(), ref: 'q2' }, 'q2');
  await held.stored;
  await crash(qb);
  held.release();
  const ua = s.start('ledger-append', { ledger: s.ledger.url, account: 'acct-u1', amount: 7, sent_at: now(), delay_ms: 3000 }, 'u1');
  await waitFor(() => startedLine(s, 'u1'), 20_000);
  await crash(ua);
  held = s.ledger.hold();
  const ub = s.start('ledger-append', { ledger: s.ledger.url, account: 'acct-u2', amount: 8, sent_at: now() }, 'u2');
  await held.stored;
  await crash(ub);
  held.release();
  const before = s.ledger.received();
  t.equal(before, 4, 'the two writes before the kills reached the ledger');

  const r = await s.recover();
  t.equal(r.code, 0, `recover ${r.stderr}`);
  t.same(
    r.report?.calls.map((c) => [c.call_id, c.state]),
    [
      ['q1', 'not_found'],
      ['q2', 'recovered'],
      ['u1', 'indeterminate'],
      ['u2', 'indeterminate'],
    ],
    'queryable: looked up (not_found / found); unsafe: indeterminate for a person',
  );
  t.equal(s.ledger.received(), before, 'nothing was retried: the ledger received no write during recovery');
  t.equal(s.ledger.entries().length, 4);
  for (const [id, st] of [['q1', 'not_found'], ['q2', 'recovered'], ['u1', 'indeterminate'], ['u2', 'indeterminate']]) t.equal(lastState(s, id), st, `${id} journaled ${st}`);
  t.match(s.journal().find((l) => l.call_id === 'u1' && l.kind === 'call_state')?.detail, /person/, 'the unsafe detail asks for a person');
  const v = await s.verify();
  t.equal(v.code, 0, `gensee verify passes ${v.stdout}${v.stderr}`);
});

t.test('executor refusals before anything runs', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-exu');
  const bad = await s.call('ledger-put', { ledger: s.ledger.url, account: 'a', amount: 0, sent_at: now() });
  t.equal(bad.code, 2, 'invalid arguments: bad usage');
  t.match(bad.stderr, /amount/, 'names the field');
  const unknown = await s.call('no-such-tool', {});
  t.equal(unknown.code, 2, 'unknown tool');
  const usage = await executor(['executor', 'call', '--op', s.o.op, '--state-dir', s.o.stateDir, '--tools', TOOLS, 'ledger-put']);
  t.equal(usage.code, 2, '--args missing');
  t.same(s.journal(), [], 'nothing journaled');
  t.equal(s.ledger.received(), 0);
});

t.test('no running supervisor: a clear error, nothing journaled', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-exn', DENY_ALL);
  const sup = await superviseProcess(t, o.args);
  await sup.end();
  const r = await executor(['executor', 'call', '--op', o.op, '--state-dir', o.stateDir, '--tools', TOOLS, 'ledger-append', '--args', JSON.stringify({ ledger: 'http://127.0.0.1:9', account: 'a', amount: 1, sent_at: now() })]);
  t.equal(r.code, 1, r.stderr);
  t.match(r.stderr, /no running supervisor/);
  t.notOk(fs.existsSync(path.join(opDir(o.stateDir, o.op), 'calls.jsonl')), 'nothing journaled');
});
