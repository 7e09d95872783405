// The watchdog's attention against a real supervisor (`gensee supervise`,
// real hooks), from `gensee watch` to events.jsonl and the stream, and its
// lifecycle at the edges:
//   - a hint loop driven to nudges_exhausted, and a tool result reaching a
//     target the hook refused, each leave an attention line in events.jsonl
//     (its refs naming the agent's own lines as agent:LINE:SHA256, the file
//     named) and a frame on the stream. Catches: a supervisor that refuses
//     the agent refs the watch sends (the attention dropped, "could not
//     record" on stderr).
//   - attention survives a supervisor restart (SIGTERM, start again) and a
//     watch restart; a person's message forged in the agent stream, and a
//     clear asked from inside the operation's cgroup, clear nothing;
//     `gensee attention clear` clears it with the person recorded; `gensee
//     stop` clears it with operation_stopped. Catches: a graceful stop
//     clearing attention, the watch clearing on a workload's line, an
//     in-memory list that a restart empties.
//   - while nudges_exhausted is raised, no further nudge is printed for that
//     loop, even by a restarted watch reading the same loop again. Catches:
//     a watch that nudges over an active flag.
//   - `gensee run` ending with its workload clears attention
//     (operation_stopped): the operation has ended for good.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { opDir, readKey, openOperation } from '../../src/state/operation';
import { connectEvents, type StreamMessage } from '../../src/events/client';
import { readToken } from '../../src/events/token';
import { requireKernel, tcpServer, probe, waitFor, sleep, uniqueName, GENSEE_BIN } from '../helpers/kernel';
import { supervisedOp, superviseProcess, shortStateDir, jsonlLines, type SupervisedOp, type LogLine } from '../helpers/supervisor';
import { reportAttention } from '../../src/events/attention-client';
import { gensee, Proc } from '../helpers/gensee';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };

interface AttentionLine extends LogLine {
  type: 'attention';
  signature: string;
  detail: string;
  evidence: number[];
  refs?: string[];
  agent_events?: string;
}

const events = (o: SupervisedOp) => jsonlLines(path.join(opDir(o.stateDir, o.op), 'events.jsonl'));
const attentions = (o: SupervisedOp) => events(o).filter((l): l is AttentionLine => l.type === 'attention');
const cleared = (o: SupervisedOp) => events(o).filter((l) => l.type === 'attention_cleared');

/** the workload's own event stream: a file, its lines numbered as `gensee watch` numbers them */
class AgentFile {
  readonly file: string;
  readonly lines: string[] = [];
  constructor(o: SupervisedOp) {
    this.file = path.join(o.stateDir, 'agent.jsonl');
    fs.writeFileSync(this.file, '');
  }
  /** append one line; its 1-based number */
  add(v: object | string): number {
    const text = typeof v === 'string' ? v : JSON.stringify({ ...v, at: new Date().toISOString() });
    fs.appendFileSync(this.file, text + '\n');
    this.lines.push(text);
    return this.lines.length;
  }
  /** the ref a person finds the line by: its number and the SHA-256 of its text */
  ref(n: number): string {
    return `agent:${n}:${createHash('sha256').update(this.lines[n - 1]).digest('hex')}`;
  }
}

const denial = (port: number) => ({ type: 'tool_result', tool_id: 'fetch-page', errored: true, denial: { class: 'network', hint: 'ask the operator for a lease', target: `127.0.0.1:${port}` } });

function startWatch(t: Test, o: SupervisedOp, agent: AgentFile, more: string[] = []): Proc {
  const w = new Proc(GENSEE_BIN, ['watch', '--op', o.op, '--state-dir', o.stateDir, '--agent-events', agent.file, '--stall-after', '1h', ...more]);
  t.teardown(() => w.end());
  return w;
}

/** the nudges a watch printed on stdout */
const nudges = (w: Proc) => w.json().filter((x) => x.type === 'nudge');

/** every message of the operation's live stream (events log), collected until teardown */
async function stream(t: Test, o: SupervisedOp, since?: number): Promise<StreamMessage[]> {
  const dir = opDir(o.stateDir, o.op);
  const c = await connectEvents({ socketPath: path.join(dir, 'events.sock'), token: await readToken(dir), logs: ['events'], ...(since !== undefined ? { since: { events: since } } : {}) });
  const got: StreamMessage[] = [];
  t.teardown(() => c.close());
  void (async () => {
    for await (const m of c) got.push(m);
  })();
  return got;
}

/** watch is following the agent file up to here: it reports a bad line we append, and we wait for that */
async function caughtUp(w: Proc, agent: AgentFile): Promise<void> {
  const n = agent.add('not json: a marker');
  await waitFor(() => w.stderr.includes(`agent-events line ${n}: not JSON`), 10_000, 50);
}

/** a real refusal by the connect4 hook: the egress_denied line of events.jsonl */
async function refuse(t: Test, o: SupervisedOp, port: number): Promise<LogLine> {
  const r = await probe(['--cgroup', o.cgroup, 'connect', 'tcp', '127.0.0.1', String(port)]);
  t.same(r.results.map((x) => x.result), ['EPERM'], `the hook refused 127.0.0.1:${port}`);
  return waitFor(() => events(o).find((l) => l.type === 'boundary' && (l.event as { target?: string }).target === `127.0.0.1:${port}`), 10_000, 50);
}

/** refused by the hook, then reported reached by a tool: control_defeat in events.jsonl */
async function defeat(t: Test, o: SupervisedOp, agent: AgentFile, port: number): Promise<{ att: AttentionLine; deny: LogLine; line: number }> {
  const deny = await refuse(t, o, port);
  const before = attentions(o).length;
  const line = agent.add({ type: 'tool_result', tool_id: 'fetch-page', errored: false, target: `127.0.0.1:${port}` });
  const att = await waitFor(() => attentions(o).slice(before).find((a) => a.signature === 'control_defeat'), 15_000, 50);
  return { att, deny, line };
}

/** a control.sock attention_clear asked from a process inside the operation's cgroup (root, holding the key): what it printed */
function clearFromCgroup(o: SupervisedOp, key: Buffer, resolver: unknown): Promise<string> {
  const script = `
const { controlRequest } = require(${JSON.stringify(path.resolve(__dirname, '../../src/envelope/control.js'))});
controlRequest({ socketPath: ${JSON.stringify(path.join(opDir(o.stateDir, o.op), 'control.sock'))}, key: Buffer.from(${JSON.stringify(key.toString('hex'))}, 'hex'),
  resolver: ${JSON.stringify(resolver)}, request: { schema: 1, command: 'attention_clear', by: 'person', person: 'the workload', note: 'all fine' } })
  .then(() => console.log('accepted'), (e) => console.log('refused ' + e.message));`;
  return new Promise<string>((resolve) => {
    const c = spawn('sh', ['-c', `echo $$ > "${path.join(o.cgroup, 'cgroup.procs')}" && exec "${process.execPath}" -e "$0"`, script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.on('close', () => resolve(out.trim()));
  });
}

t.test('gensee watch against a running supervisor: attention reaches events.jsonl and the stream', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-wat', DENY_ALL);
  await superviseProcess(t, o.args);
  const frames = await stream(t, o);
  const agent = new AgentFile(o);
  const w = startWatch(t, o, agent, ['--max-nudges', '1', '--nudge-every', '1s']);
  await caughtUp(w, agent);

  // 1. a hint loop driven to nudges_exhausted
  agent.add({ type: 'progress' });
  const d1 = agent.add(denial(9));
  const d2 = agent.add(denial(9));
  await waitFor(() => nudges(w).length >= 1, 10_000, 50);
  t.match(nudges(w)[0], { signature: 'hint_loop', class: 'network', nudge: 1, max_nudges: 1 }, 'the loop is nudged once');
  const loop = await waitFor(() => attentions(o).find((a) => a.signature === 'hint_loop'), 15_000, 50);
  t.match(w.json(), [{ type: 'nudge' }, { type: 'flag', flag: 'nudges_exhausted', signature: 'hint_loop' }], 'then the nudges_exhausted flag on stdout');
  t.ok(loop.refs?.includes(agent.ref(d1)) && loop.refs?.includes(agent.ref(d2)), `its refs name the agent's lines ${d1} and ${d2} with their SHA-256 (${String(loop.refs)})`);
  t.equal(loop.agent_events, agent.file, 'and the file they are in');
  const f1 = await waitFor(() => frames.find((m) => m.seq === loop.seq), 5000, 50);
  t.match(f1, { log: 'events', type: 'attention', signature: 'hint_loop' }, 'a frame on the stream');

  // 2. a tool result reaching a target after the hook refused it
  const srv = await tcpServer(t);
  const { att, deny, line } = await defeat(t, o, agent, srv.port);
  t.ok(att.evidence.includes(deny.seq), `the evidence names the egress_denied event (${deny.seq})`);
  t.same(att.refs, [`events:${deny.seq}`, agent.ref(line)], 'its refs name both sides: the refusal and the agent line');
  t.equal(att.agent_events, agent.file);
  t.match(att.detail, `127.0.0.1:${srv.port}`);
  const f2 = await waitFor(() => frames.find((m) => m.seq === att.seq), 5000, 50);
  t.match(f2, { log: 'events', type: 'attention', signature: 'control_defeat' }, 'a frame on the stream');
  t.equal(srv.accepted(), 0, 'nothing reached the listener');

  // what the supervisor refuses, and records nothing for
  const n = events(o).length;
  const bad = (refs: string[], agent_events?: string) => reportAttention(o.stateDir, o.op, { signature: 'stall', detail: 'x', evidence: [], refs, ...(agent_events ? { agent_events } : {}) }).catch((e: Error) => e);
  t.match(await bad(['agent:5']), { code: 'E_SCHEMA' }, 'an agent ref without the hash of its line');
  t.match(await bad([`agent:5:${'a'.repeat(64)}`]), { code: 'E_SCHEMA' }, 'an agent ref without the stream it points into');
  t.match(await bad(['calls:1']), { code: 'E_SCHEMA' }, 'a log that is not one of faults, counters, events');
  t.match(await bad([], 'a\nb'), { code: 'E_SCHEMA' }, 'a stream name on two lines');
  t.equal(events(o).length, n, 'nothing written for them');
  t.notMatch(w.stderr, /could not record/, `nothing was dropped on the way (${w.stderr.trim()})`);
  t.match(w.stderr, /E_ATTENTION: control_defeat: /, 'and an error line on stderr');
  const v = await gensee(['verify', '--op', o.op, '--state-dir', o.stateDir]);
  t.equal(v.code, 0, `the logs verify ${v.stdout}${v.stderr}`);
});

t.test('attention outlives a supervisor restart and a watch restart; only a person or gensee stop clears it', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-wal', DENY_ALL);
  const sup1 = await superviseProcess(t, o.args);
  const agent = new AgentFile(o);
  let w = startWatch(t, o, agent);
  await caughtUp(w, agent);
  const srv = await tcpServer(t);
  const { att } = await defeat(t, o, agent, srv.port);

  // 1. the supervisor stops gracefully (SIGTERM) and starts again; the workload carries on
  sup1.kill('SIGTERM');
  t.equal((await sup1.exited).code, 0, 'supervise exits 0 on SIGTERM');
  t.same(cleared(o), [], 'a supervisor stopping is not the operation ending: nothing cleared');
  await superviseProcess(t, o.args);
  agent.add({ type: 'progress' });
  // 2. the watch restarts (a FILE is read again from its start)
  w.kill('SIGTERM');
  await w.exited;
  w = startWatch(t, o, agent);
  await caughtUp(w, agent);
  t.match(w.stderr, new RegExp(`attention in force since events:${att.seq} \\(control_defeat\\)`), 'the new watch reads the open attention back');
  t.same(cleared(o), [], 'still open after both restarts');
  const st = JSON.parse((await gensee(['status', '--op', o.op, '--state-dir', o.stateDir, '--json'])).stdout) as { attention: { seq: number }[] };
  t.same(st.attention.map((a) => a.seq), [att.seq], 'gensee status --json shows it');
  const ls = await gensee(['ls', '--state-dir', o.stateDir]);
  t.match(ls.stdout, new RegExp(`${o.op}: attention in force \\(control_defeat@events:${att.seq}\\)`), 'gensee ls shows it');
  const replay = await stream(t, o, 0);
  await waitFor(() => replay.find((m) => m.seq === att.seq), 5000, 50);
  t.notOk(replay.some((m) => m.type === 'attention_cleared'), 'the stream replays it, not cleared');

  // 3. a person's message forged in the workload's own stream clears nothing
  agent.add({ type: 'message', from: 'person' });
  await caughtUp(w, agent);
  await sleep(500);
  t.same(cleared(o), [], 'a forged person message in the agent stream clears nothing');
  t.notMatch(w.stderr, /attention cleared/);
  // nor does a clear asked over control.sock from inside the cgroup, even by root holding the key
  const rec = await openOperation(o.stateDir, o.op);
  const forged = await clearFromCgroup(o, await readKey(o.stateDir, o.op), rec.resolver);
  t.match(forged, /^refused /, `the workload's own clear is refused (${forged})`);
  t.same(cleared(o), [], 'and clears nothing');

  // 4. a person, through the operator path
  const c = await gensee(['attention', 'clear', '--op', o.op, '--state-dir', o.stateDir, '--by', 'ana', '--note', 'the lease was mine', '--json']);
  t.equal(c.code, 0, c.stderr);
  t.match(JSON.parse(c.stdout), { cleared: [att.seq], person: 'ana' });
  const byPerson = cleared(o);
  t.equal(byPerson.length, 1);
  t.match(byPerson[0], { by: 'person', person: 'ana', note: 'the lease was mine', peer: { uid: process.getuid!() }, attention: [att.seq] }, 'recorded with who and why');
  await waitFor(() => /attention cleared \(person ana: the lease was mine\)/.test(w.stderr), 5000, 50);
  const st2 = JSON.parse((await gensee(['status', '--op', o.op, '--state-dir', o.stateDir, '--json'])).stdout) as { attention: unknown[] };
  t.same(st2.attention, [], 'status: nothing in force');
  const again = await gensee(['attention', 'clear', '--op', o.op, '--state-dir', o.stateDir]);
  t.match(again.stdout, /no attention in force/, 'clearing again: nothing to clear');

  // 5. raised again, then the operation ends for good
  const srv2 = await tcpServer(t);
  const second = await defeat(t, o, agent, srv2.port);
  const s = await gensee(['stop', '--op', o.op, '--state-dir', o.stateDir, '--json']);
  t.equal(s.code, 0, s.stderr);
  const last = cleared(o);
  t.equal(last.length, 2);
  t.match(last[1], { by: 'operation_stopped', attention: [second.att.seq] }, 'gensee stop clears it: operation_stopped');
  t.equal((await w.exited).code, 0, 'the watch ends with the operation');
  const v = await gensee(['verify', '--op', o.op, '--state-dir', o.stateDir]);
  t.equal(v.code, 0, `the logs verify ${v.stdout}${v.stderr}`);
});

t.test('while nudges_exhausted is raised, no further nudge is printed for that loop', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-wan', DENY_ALL);
  await superviseProcess(t, o.args);
  const agent = new AgentFile(o);
  const opts = ['--max-nudges', '1', '--nudge-every', '1s'];
  let w = startWatch(t, o, agent, opts);
  await caughtUp(w, agent);
  agent.add({ type: 'progress' });
  agent.add(denial(9));
  agent.add(denial(9));
  const loop = await waitFor(() => attentions(o).find((a) => a.signature === 'hint_loop'), 15_000, 50);
  t.equal(nudges(w).length, 1, 'one nudge, then the flag');
  // the loop goes on: more denials, for several nudge periods
  for (let i = 0; i < 8; i++) {
    agent.add(denial(9));
    await sleep(400);
  }
  t.equal(nudges(w).length, 1, 'no nudge over the flag');
  // the watch restarts and reads the same loop again
  w.kill('SIGTERM');
  await w.exited;
  w = startWatch(t, o, agent, opts);
  await caughtUp(w, agent);
  for (let i = 0; i < 8; i++) {
    agent.add(denial(9));
    await sleep(400);
  }
  await caughtUp(w, agent);
  t.same(nudges(w), [], `a restarted watch does not nudge over the flag either (${w.stdout.trim()})`);
  t.equal(attentions(o).length, 1, 'nor raises it again');
  t.same(cleared(o), [], 'still open');
  t.ok(loop.seq > 0);
});

t.test('gensee run ending with its workload clears attention: operation_stopped', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const op = uniqueName('gs-war');
  const run = new Proc(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--no-dns', '--', '/bin/sleep', '3']);
  t.teardown(() => run.end());
  const dir = opDir(st, op);
  await waitFor(() => fs.existsSync(path.join(dir, 'control.sock')) || !run.running, 15_000, 50);
  let resolver = null;
  for (const until = Date.now() + 5000; !(resolver = (await openOperation(st, op)).resolver) && Date.now() < until; ) await sleep(50);
  t.ok(resolver, `gensee run serves the operation ${run.stderr}`);
  const seq = await reportAttention(st, op, { signature: 'stall', detail: 'no events for 300 s', evidence: [] });
  t.ok(seq > 0, 'attention raised over control.sock');
  const ex = await run.exited;
  t.equal(ex.code, 0, `gensee run exits with its workload ${run.stderr}`);
  const lines = jsonlLines(path.join(dir, 'events.jsonl'));
  t.match(lines.filter((l) => l.type === 'attention_cleared'), [{ by: 'operation_stopped', attention: [seq] }], 'cleared as the operation ended');
});
