// `gensee watch` end to end over files (no kernel, no supervisor): it follows
// the operation's logs and the agent's stream as they grow, prints nudges on
// stdout, attention on stderr, and ends once the operation has ended for
// good (closed or stopped), not when its supervisor merely stops serving.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { createOperation, opDir, updateOperation } from '../../src/state/operation';
import { appendOrder, destination, LogFeed } from '../../src/watch/feed';
import { Watchdog } from '../../src/watch/signatures';

const ROOT = path.resolve(__dirname, '../../..');
const GENSEE = path.join(ROOT, 'bin/gensee');
const AT = '2026-12-01T10:00:00.000Z';

function waitFor(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (cond()) return resolve();
      if (Date.now() > until) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(check, 50);
    };
    check();
  });
}

t.test('feed: log lines to watchdog calls; an adopted lease covers nothing', async (t) => {
  t.equal(destination({ family: 'ipv6', address: '::1', port: 9 }), '[::1]:9');
  t.equal(destination({ family: 'ipv4', address: '127.0.0.1', port: 9 }), '127.0.0.1:9');
  const deny = { log: 'events' as const, v: { seq: 3, at: AT, type: 'boundary', event: { kind: 'egress_denied', control: 'ebpf/connect4', detail: 'x', target: '127.0.0.1:9', at: AT } } };
  const allow = (seq: number, generation: number) => ({ log: 'counters' as const, v: { seq, at: AT, kind: 'allow', source: 'ebpf', generation, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9, delta: 1, total: 1 } });
  const gen = (by: unknown, generation: number) => ({ log: 'counters' as const, v: { seq: 1, at: AT, kind: 'generation', generation, reason: 'operator_lease', by, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9 } });

  // adopted from the kernel map (by: external): the reach is a defeat, naming both lines
  let f = new LogFeed(new Watchdog(0));
  f.line(deny, 1);
  t.same(f.line(gen('external', 5), 2), []);
  t.match(f.line(allow(12, 5), 3), [{ type: 'attention', signature: 'control_defeat', evidence: [3], refs: ['events:3', 'counters:12'] }]);
  // an operator's lease through the control socket covers it
  f = new LogFeed(new Watchdog(0));
  f.line(deny, 1);
  f.line(gen({ pid: 1, uid: 0 }, 5), 2);
  t.same(f.line(allow(12, 5), 3), []);
  // so does a resolution's lease, and a continue for a fault naming it
  for (const action of ['retry_after_lease', 'continue_already_authorized']) {
    f = new LogFeed(new Watchdog(0));
    f.line(deny, 1);
    f.line({ log: 'faults', v: { seq: 1, at: AT, kind: 'fault', fault_id: 'f1', fault: { effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9 } } } } }, 2);
    const lease = action === 'retry_after_lease' ? { lease: { generation: 6, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9 } } : {};
    f.line({ log: 'faults', v: { seq: 2, at: AT, kind: 'resolution', fault_id: 'f1', resolution: { fault_id: 'f1', action, reason: 'r', ...lease } } }, 3);
    t.same(f.line(allow(13, 6), 4), [], action);
  }
  // a hook's refusal the resolver answered with a delegation is not a refusal: the executor reaches the target
  f = new LogFeed(new Watchdog(0));
  f.line(deny, 1);
  f.line({ log: 'faults', v: { seq: 1, at: AT, kind: 'fault', fault_id: 'f2', fault: { effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9 } } } } }, 2);
  f.line({ log: 'faults', v: { seq: 2, at: AT, kind: 'resolution', fault_id: 'f2', resolution: { fault_id: 'f2', action: 'delegate', reason: 'policy_delegate', delegate_to: 'egress-proxy' } } }, 3);
  t.same(f.line(allow(14, 5), 4), [], 'delegated, then reached: nothing');
  // one poll's lines in the order they were appended, a refusal before a lease at the same instant
  const later = { log: 'faults' as const, v: { at: '2026-12-01T10:00:01.000Z' } };
  const same = { log: 'faults' as const, v: { at: AT } };
  t.same(appendOrder([later, same, deny]), [deny, same, later]);
});

t.test('gensee watch follows the files and ends with the operation', async (t) => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'gensee-watch-'));
  t.teardown(() => fs.rmSync(state, { recursive: true, force: true }));
  await createOperation(state, { id: 'w1', owner_uid: process.getuid!(), cgroup: '/sys/fs/cgroup/none', policy_hash: 'h', resolver: { pid: process.pid, start_time_ticks: 1 } });
  const dir = opDir(state, 'w1');
  const agent = path.join(state, 'agent.jsonl');
  fs.writeFileSync(agent, '');
  // an old refusal: before the watch started, so not in its trail
  fs.writeFileSync(path.join(dir, 'events.jsonl'), JSON.stringify({ seq: 1, at: AT, type: 'boundary', event: { kind: 'egress_denied', control: 'ebpf/connect4', detail: 'x', target: '10.9.9.9:1', at: AT } }) + '\n');

  const p = spawn(process.execPath, [GENSEE, 'watch', '--op', 'w1', '--state-dir', state, '--agent-events', agent, '--stall-after', '1h'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((r) => p.on('exit', (c) => r(c)));
  await new Promise((r) => setTimeout(r, 700));

  const deny = JSON.stringify({ type: 'tool_result', tool_id: 'fetch', errored: true, denial: { class: 'network', hint: 'use the proxy' }, at: AT });
  fs.appendFileSync(agent, deny + '\n' + 'not json\n' + deny.slice(0, 20));
  fs.appendFileSync(agent, deny.slice(20) + '\n');
  await waitFor('a nudge', () => stdout.includes('"nudge"'));
  const nudge = JSON.parse(stdout.trim().split('\n')[0]) as Record<string, unknown>;
  t.match(nudge, { type: 'nudge', signature: 'hint_loop', class: 'network', hint: 'use the proxy', nudge: 1 });
  t.match(stderr, /agent-events line 2: not JSON/);

  fs.appendFileSync(path.join(dir, 'events.jsonl'), JSON.stringify({ seq: 2, at: AT, type: 'boundary', event: { kind: 'egress_denied', control: 'ebpf/connect4', detail: 'x', target: '127.0.0.1:9', at: AT } }) + '\n');
  await new Promise((r) => setTimeout(r, 400));
  fs.appendFileSync(path.join(dir, 'counters.jsonl'), [1, 2].map((seq) => JSON.stringify({ seq, at: AT, kind: 'allow', source: 'ebpf', generation: 4, family: 'ipv4', protocol: 'tcp', address: seq === 1 ? '10.9.9.9' : '127.0.0.1', port: seq === 1 ? 1 : 9, delta: 3, total: 3 })).join('\n') + '\n');
  await waitFor('attention', () => /E_ATTENTION/.test(stderr));
  t.match(stderr, /E_ATTENTION: control_defeat: 127\.0\.0\.1:9 .*evidence events 2; refs events:2 counters:2/);
  t.notMatch(stderr, /10\.9\.9\.9/, 'the refusal from before the watch is not evidence');
  t.notMatch(stdout, /attention/, 'attention is not a nudge');

  // no supervisor serving (a restart): the watch carries on, attention open
  await updateOperation(state, 'w1', { resolver: null });
  await new Promise((r) => setTimeout(r, 2500));
  t.equal(p.exitCode, null, 'a supervisor gone is not the operation ending: still watching');
  t.notMatch(stderr, /attention cleared/, 'and nothing cleared the attention');
  await updateOperation(state, 'w1', { state: 'closed' });
  const code = await exited;
  t.equal(code, 0, 'ends once the operation has ended for good');
  t.match(stderr, /attention cleared \(operation_stopped\)/);
});

t.test('gensee watch: bad usage', async (t) => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [GENSEE, 'watch', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      p.on('exit', (code) => resolve({ code, stderr }));
    });
  const r = await run(['--op', 'w1']);
  t.equal(r.code, 2);
  t.match(r.stderr, /--agent-events/);
  t.equal((await run(['--op', 'w1', '--agent-events', '-', '--max-nudges', 'x'])).code, 2);
});

t.test('gensee attention: bad usage is refused before anything is sent', async (t) => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [GENSEE, 'attention', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      p.on('exit', (code) => resolve({ code, stderr }));
    });
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'gensee-att-'));
  t.teardown(() => fs.rmSync(state, { recursive: true, force: true }));
  await createOperation(state, { id: 'a1', owner_uid: process.getuid!(), cgroup: '/sys/fs/cgroup/none', policy_hash: 'h' });
  const sd = ['--state-dir', state];
  t.match(await run([]), { code: 2, stderr: /usage: gensee attention clear/ });
  t.match(await run(['lift', '--op', 'a1', ...sd]), { code: 2, stderr: /unknown subcommand "lift"/ });
  t.match(await run(['clear', ...sd]), { code: 2, stderr: /--op ID is required/ });
  t.match(await run(['clear', '--op', 'a1', '--note', 'two\nlines', ...sd]), { code: 2, stderr: /--note: one line/ });
  t.match(await run(['clear', '--op', 'a1', '--by', '', ...sd]), { code: 2, stderr: /--by: 1-100 printable/ });
  t.match(await run(['clear', '--op', 'nope', ...sd]), { code: 2, stderr: /E_UNKNOWN_OP/ });
  t.match(await run(['clear', '--op', 'a1', ...sd]), { code: 1, stderr: /no resolver is running.*through a running supervisor/ }, 'no supervisor: nothing can record it, and it says what can');
  await updateOperation(state, 'a1', { state: 'closed' });
  t.match(await run(['clear', '--op', 'a1', ...sd]), { code: 1, stderr: /is closed: its attention was cleared when it ended/ });
});

t.test('gensee watch --from-start: evidence an attention line already names does not flag again', async (t) => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'gensee-watch-'));
  t.teardown(() => fs.rmSync(state, { recursive: true, force: true }));
  await createOperation(state, { id: 'w2', owner_uid: process.getuid!(), cgroup: '/sys/fs/cgroup/none', policy_hash: 'h', resolver: { pid: process.pid, start_time_ticks: 1 } });
  const dir = opDir(state, 'w2');
  const agent = path.join(state, 'agent.jsonl');
  fs.writeFileSync(agent, '');
  const boundary = (seq: number, port: number) => JSON.stringify({ seq, at: AT, type: 'boundary', event: { kind: 'egress_denied', control: 'ebpf/connect4', detail: 'x', target: `127.0.0.1:${port}`, at: AT } });
  // an earlier watch found deny-then-reach of :9 (seq 1); :10 (seq 3) was refused and never reported
  fs.writeFileSync(
    path.join(dir, 'events.jsonl'),
    [boundary(1, 9), JSON.stringify({ seq: 2, at: AT, type: 'attention', signature: 'control_defeat', detail: 'x', evidence: [1], refs: ['events:1', 'counters:1'] }), boundary(3, 10)].join('\n') + '\n',
  );
  const allow = (seq: number, port: number) => JSON.stringify({ seq, at: AT, kind: 'allow', source: 'ebpf', generation: 4, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port, delta: 1, total: 1 });
  fs.writeFileSync(path.join(dir, 'counters.jsonl'), [allow(1, 9), allow(2, 10)].join('\n') + '\n');
  const p = spawn(process.execPath, [GENSEE, 'watch', '--op', 'w2', '--state-dir', state, '--agent-events', agent, '--stall-after', '1h', '--from-start'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((r) => p.on('exit', (c) => r(c)));
  await waitFor('the unreported defeat', () => /E_ATTENTION: control_defeat: 127\.0\.0\.1:10 /.test(stderr));
  await updateOperation(state, 'w2', { state: 'closed', resolver: null });
  t.equal(await exited, 0);
  t.notMatch(stderr, /E_ATTENTION: control_defeat: 127\.0\.0\.1:9 /, 'the spent evidence (events:1) does not flag twice');
  t.match(stderr, /attention in force since events:2 \(control_defeat\)/, 'the open attention is read back');
});
