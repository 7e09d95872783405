// The watchdog's signatures (src/watch/signatures.ts), from fixtures: a pure
// module, every time given on the receive clock, so each case says exactly
// when things happen.
import t from 'tap';
import { Watchdog, Output, Attention, targetKey } from '../../src/watch/signatures';
import type { AgentEvent } from '../../src/watch/agent-event';
import { parseAgentEvent } from '../../src/watch/agent-event';

const S = 1000;
const AT = '2026-12-01T10:00:00.000Z';
const A = '127.0.0.1:9';
const B = '[::1]:8443';

function deny(cls = 'network', hint = 'ask the operator for a lease to 127.0.0.1:9', target?: string): AgentEvent {
  return { type: 'tool_result', tool_id: 'fetch-page', errored: true, denial: { class: cls, hint, ...(target ? { target } : {}) }, at: AT };
}
function ok(target?: string): AgentEvent {
  return { type: 'tool_result', tool_id: 'fetch-page', errored: false, ...(target ? { target } : {}), at: AT };
}
const failed: AgentEvent = { type: 'tool_result', tool_id: 'fetch-page', errored: true, at: AT };
const progress: AgentEvent = { type: 'progress', at: AT };
const person: AgentEvent = { type: 'message', from: 'person', at: AT };
const agentSays: AgentEvent = { type: 'message', from: 'agent', at: AT };
const question: AgentEvent = { type: 'question', at: AT };
const turnEnd: AgentEvent = { type: 'turn_end', at: AT };
const egress = (target: string) => ({ kind: 'egress_denied' as const, target });

const nudges = (o: Output[]) => o.filter((x) => x.type === 'nudge');
const flags = (o: Output[]) => o.filter((x) => x.type === 'flag');
const attentions = (o: Output[]) => o.filter((x): x is Attention => x.type === 'attention');

t.test('hint_loop: two denials in a row nudge, naming the class and the hint', async (t) => {
  const w = new Watchdog(0);
  t.same(w.agent(deny('network', 'use the egress proxy', A), 1 * S), [], 'one denial is not a loop');
  const out = w.agent(deny('network', 'use the egress proxy', A), 2 * S, 'agent:2');
  t.equal(out.length, 1);
  t.match(out[0], { type: 'nudge', signature: 'hint_loop', class: 'network', hint: 'use the egress proxy', target: A, tool_id: 'fetch-page', nudge: 1, max_nudges: 3, denials: 2 });
  t.match((out[0] as { message: string }).message, /network.*use the egress proxy/);
  t.ok(w.looping);

  // the nudge names the newest denial's class and hint
  const w2 = new Watchdog(0);
  w2.agent(deny('file', 'write under /tmp'), 1 * S);
  t.match(w2.agent(deny('write', 'use the executor'), 2 * S), [{ signature: 'hint_loop', class: 'write', hint: 'use the executor' }]);

  // a success between two denials: no loop
  const w3 = new Watchdog(0);
  w3.agent(deny(), 1 * S);
  w3.agent(ok(), 2 * S);
  t.same(w3.agent(deny(), 3 * S), [], 'a success between: not consecutive');
  t.notOk(w3.looping);
});

t.test('hint_loop: the loop cannot reset (or hurry) the nudge clock', async (t) => {
  // progress at 5 s; the loop's nudges fall due at 5 + 60k s, whatever the loop does
  const w = new Watchdog(0, { nudgeEveryMs: 60 * S });
  w.agent(progress, 5 * S);
  w.agent(deny(), 10 * S);
  t.equal(nudges(w.agent(deny(), 20 * S)).length, 1, 'nudge 1 at detection');
  // churn: progress lines, the agent's own messages, plain errors, more denials
  for (let s = 21; s < 65; s += 2) {
    const ev = [progress, agentSays, failed, deny()][s % 4];
    t.same(w.agent(ev, s * S), [], `churn at ${s} s spends nothing`);
  }
  t.same(w.tick(64.999 * S), [], 'not due before the progress clock says so');
  t.match(w.tick(65 * S), [{ type: 'nudge', signature: 'hint_loop', nudge: 2 }], 'due 60 s after the progress, not after the churn');
  t.same(w.tick(66 * S), [], 'one nudge per period');
  // churn after nudge 2 (a progress at 100 s) does not push nudge 3 to 160 s
  w.agent(progress, 100 * S);
  w.agent(deny(), 110 * S);
  t.same(w.tick(124.9 * S), []);
  t.match(w.agent(deny(), 125 * S), [{ type: 'nudge', nudge: 3, denials: 2 + 11 + 2 }]);
});

t.test('hint_loop: max_nudges, then nudges_exhausted once', async (t) => {
  const w = new Watchdog(0, { nudgeEveryMs: 60 * S, stallAfterMs: 3600 * S });
  w.agent(deny(), 1 * S);
  const seen: Output[] = [...w.agent(deny(), 2 * S)];
  w.boundary(41, egress(A), 3 * S);
  for (let s = 10; s <= 600; s += 10) seen.push(...w.tick(s * S), ...w.agent(deny(), s * S + 1));
  t.same(nudges(seen).map((n) => (n as { nudge: number }).nudge), [1, 2, 3], 'three nudges');
  t.same(flags(seen), [{ type: 'flag', flag: 'nudges_exhausted', signature: 'hint_loop' }], 'one flag');
  const a = attentions(seen);
  t.equal(a.length, 1, 'exhaustion raises attention');
  t.match(a[0], { signature: 'hint_loop', evidence: [41] });
  t.match(a[0].detail, /network/);
  // the flag came when a fourth nudge would have been due (180 s), not before
  const w2 = new Watchdog(0, { nudgeEveryMs: 60 * S });
  w2.agent(deny(), 1 * S);
  w2.agent(deny(), 2 * S);
  w2.tick(60 * S);
  w2.tick(120 * S);
  t.same(w2.tick(179 * S), []);
  t.match(w2.tick(180 * S), [{ type: 'flag', flag: 'nudges_exhausted' }, { type: 'attention', signature: 'hint_loop' }]);

  const w3 = new Watchdog(0, { maxNudges: 1, nudgeEveryMs: 60 * S });
  w3.agent(deny(), 1 * S);
  t.equal(nudges(w3.agent(deny(), 2 * S)).length, 1);
  t.match(w3.tick(60 * S), [{ type: 'flag', flag: 'nudges_exhausted' }], '--max-nudges 1');
});

t.test('hint_loop: each kind of break ends the loop', async (t) => {
  const breaks: [string, AgentEvent][] = [
    ['a success', ok()],
    ["a person's message", person],
    ['a question', question],
    ['a turn end', turnEnd],
  ];
  for (const [name, ev] of breaks) {
    const w = new Watchdog(0, { nudgeEveryMs: 60 * S });
    w.agent(deny(), 1 * S);
    w.agent(deny(), 2 * S);
    t.ok(w.looping, `${name}: looping`);
    w.agent(ev, 30 * S);
    t.notOk(w.looping, `${name} ends the loop`);
    t.same(w.tick(60 * S), [], `${name}: no nudge falls due after it`);
    t.same(w.agent(deny(), 70 * S), [], `${name}: one denial after it is not a loop`);
    // a new loop: its own budget, on the clock of the break (30 s)
    t.match(w.agent(deny(), 80 * S), [{ type: 'nudge', nudge: 1 }], `${name}: a new loop nudges from 1`);
    t.same(w.tick(89 * S), []);
    t.match(w.tick(90 * S), [{ type: 'nudge', nudge: 2 }], `${name}: timed on the break`);
  }
  // not breaks: the agent's own message, a progress line, an error without a denial
  for (const [name, ev] of [['an agent message', agentSays], ['a progress line', progress], ['an error without a denial', failed]] as const) {
    const w = new Watchdog(0);
    w.agent(deny(), 1 * S);
    w.agent(deny(), 2 * S);
    w.agent(ev, 3 * S);
    t.ok(w.looping, `${name} does not end the loop`);
  }
});

t.test('stall: a nudge, then the stalled flag after another period', async (t) => {
  const w = new Watchdog(0, { stallAfterMs: 300 * S });
  t.same(w.tick(299.999 * S), []);
  t.match(w.tick(300 * S), [{ type: 'nudge', signature: 'stall', idle_ms: 300 * S }]);
  t.same(w.tick(301 * S), [], 'one nudge');
  t.same(w.tick(599 * S), []);
  const out = w.tick(600 * S);
  t.match(out, [{ type: 'flag', flag: 'stalled', signature: 'stall' }, { type: 'attention', signature: 'stall', evidence: [] }]);
  t.same(w.tick(1200 * S), [], 'flagged once');

  // any event starts it over: an agent line, a boundary event, a reach
  for (const [name, feed] of [
    ['an agent line', (w: Watchdog, n: number) => w.agent(progress, n)],
    ['a boundary event', (w: Watchdog, n: number) => w.boundary(1, egress(A), n)],
    ['a reach', (w: Watchdog, n: number) => w.reached(B, 'counters:1', n)],
  ] as const) {
    const v = new Watchdog(0, { stallAfterMs: 300 * S });
    v.tick(300 * S);
    feed(v, 400 * S);
    t.same(v.tick(600 * S), [], `${name}: no flag after it`);
    t.match(v.tick(700 * S), [{ type: 'nudge', signature: 'stall' }], `${name}: nudged again ${300} s after it`);
  }
  // an operator's lease is not the workload's event
  const u = new Watchdog(0, { stallAfterMs: 300 * S });
  u.leaseIssued(A, 200 * S);
  t.match(u.tick(300 * S), [{ type: 'nudge', signature: 'stall' }]);
});

t.test('control_defeat: denied, then a successful tool result naming the target', async (t) => {
  const w = new Watchdog(0);
  t.same(w.boundary(3, egress(A), 1 * S), []);
  const out = w.agent(ok(A), 5 * S, 'agent:17');
  t.equal(out.length, 1);
  const a = out[0] as Attention;
  t.match(a, { type: 'attention', signature: 'control_defeat', evidence: [3], refs: ['events:3', 'agent:17'] });
  t.match(a.detail, /127\.0\.0\.1:9/);
  t.notMatch(a.detail, /\n/);
  t.ok(a.detail.length <= 300);
  t.same(w.activeAttention, [a]);

  // the target as a URL is the same target; another target is not
  const w2 = new Watchdog(0);
  w2.boundary(4, { kind: 'fault_denied', target: 'api.example.com:443' }, 1 * S);
  t.same(w2.agent(ok('api.example.com:80'), 2 * S), [], 'another port');
  t.match(w2.agent(ok('https://API.example.com/v1?q=1'), 3 * S), [{ signature: 'control_defeat', evidence: [4] }]);
  t.equal(targetKey('http://[::1]:8080/x'), '[::1]:8080');

  // a failed tool result is no reach; a refusal that names no target, or a refused peer, is not in the trail
  const w3 = new Watchdog(0);
  w3.boundary(5, egress(A), 1 * S);
  t.same(w3.agent(deny('network', 'no', A), 2 * S), []);
  w3.boundary(6, { kind: 'peer_refused', target: B }, 3 * S);
  w3.boundary(7, { kind: 'egress_denied' }, 3 * S);
  t.same(w3.reached(B, 'counters:2', 4 * S), [], 'a refused peer is not a refused destination');
  t.match(w3.reached(A, 'counters:3', 4 * S), [{ signature: 'control_defeat', evidence: [5], refs: ['events:5', 'counters:3'] }]);
});

t.test('control_defeat: evidence is spent, never flags twice', async (t) => {
  const w = new Watchdog(0);
  w.boundary(3, egress(A), 1 * S);
  w.boundary(7, egress(A), 2 * S);
  const first = w.reached(A, 'counters:12', 3 * S);
  t.match(first, [{ signature: 'control_defeat', evidence: [3, 7], refs: ['events:3', 'events:7', 'counters:12'] }], 'both refusals, one attention');
  t.same(w.reached(A, 'counters:13', 4 * S), [], 'the same refusals again: nothing');
  t.same(w.agent(ok(A), 5 * S, 'agent:3'), [], 'nor from a tool result');
  w.boundary(9, egress(A), 6 * S);
  t.match(w.reached(A, 'counters:14', 7 * S), [{ signature: 'control_defeat', evidence: [9] }], 'a new refusal is new evidence');
  t.equal(w.activeAttention.length, 2);
});

t.test('control_defeat: evidence spent before a restart does not flag again', async (t) => {
  // a watch reading the logs from their start: seq 3 is named by an attention line already
  const w = new Watchdog(0);
  w.spend([3]);
  w.boundary(3, egress(A), 1 * S);
  t.same(w.reached(A, 'counters:12', 2 * S), [], 'spent: nothing');
  w.boundary(9, egress(A), 3 * S);
  t.match(w.reached(A, 'counters:14', 4 * S), [{ signature: 'control_defeat', evidence: [9] }], 'a refusal not yet named is new evidence');
});

t.test('control_defeat: the trail holds 64 refusals; the oldest is forgotten', async (t) => {
  const run = (others: number) => {
    const w = new Watchdog(0);
    w.boundary(1, egress(A), 1 * S);
    for (let i = 0; i < others; i++) w.boundary(2 + i, egress(`10.0.0.${i % 250}:${1000 + i}`), 2 * S);
    t.ok(w.trailLength <= 64, 'bounded');
    return w.reached(A, 'counters:1', 3 * S);
  };
  t.match(run(63), [{ signature: 'control_defeat', evidence: [1] }], '64 in the trail: still held');
  t.same(run(64), [], '65th refusal: the first is forgotten');
  t.same(run(1000), [], 'and stays bounded');
  const w = new Watchdog(0, { trailCap: 2 });
  w.boundary(1, egress(A), 1 * S);
  w.boundary(2, egress(B), 1 * S);
  w.boundary(3, egress('10.0.0.1:1'), 1 * S);
  t.same(w.reached(A, 'counters:1', 2 * S), []);
  t.match(w.reached(B, 'counters:2', 2 * S), [{ evidence: [2] }]);
});

t.test('attention survives more events; no nudge over it; only a person (the log) or the stop clears it', async (t) => {
  const w = new Watchdog(0, { nudgeEveryMs: 60 * S, stallAfterMs: 300 * S });
  w.boundary(3, egress(A), 1 * S);
  const [a] = attentions(w.reached(A, 'counters:9', 2 * S));
  t.ok(a);
  // the workload carries on: a loop, a stall, a person's message on its own stream
  const seen: Output[] = [];
  seen.push(...w.agent(ok(), 3 * S), ...w.agent(progress, 4 * S), ...w.agent(agentSays, 5 * S), ...w.agent(question, 6 * S), ...w.agent(turnEnd, 7 * S));
  seen.push(...w.agent(deny(), 8 * S), ...w.agent(deny(), 9 * S));
  t.ok(w.looping, 'a loop runs');
  for (let s = 60; s <= 1200; s += 60) seen.push(...w.tick(s * S));
  seen.push(...w.agent(person, 1250 * S), ...w.agent(deny(), 1260 * S), ...w.agent(deny(), 1270 * S));
  seen.push(...w.boundary(10, egress(B), 1300 * S), ...w.leaseIssued(B, 1301 * S));
  for (let s = 1320; s <= 3000; s += 60) seen.push(...w.tick(s * S));
  t.same(nudges(seen), [], 'no nudge over open attention (hint loop or stall)');
  t.same(flags(seen), [], 'no flag replaces it (stalled, nudges_exhausted)');
  t.notOk(seen.some((o) => o.type === 'attention_cleared'), 'none of it cleared attention, a person\'s message in the agent stream included');
  t.equal(w.activeAttention[0], a, 'still there, first');
  t.ok(w.attentionOpen);

  // its line in events.jsonl is matched to it, not counted twice
  w.attentionLogged(11, 'control_defeat');
  t.equal(w.activeAttention.length, 1);
  t.equal(w.activeAttention[0].seq, 11);
  // a person, through the operator path: the attention_cleared line of events.jsonl
  const out = w.clearedInLog('person', { person: 'ana', note: 'lease was mine' });
  t.same(out, [{ type: 'attention_cleared', by: 'person', person: 'ana', note: 'lease was mine' }]);
  t.same(w.activeAttention, []);
  t.same(w.clearedInLog('person', { person: 'ana' }), [], 'nothing left to clear');
  // the loop still running nudges again once nothing is open
  t.match(w.tick(3060 * S), [{ type: 'nudge', signature: 'hint_loop' }], 'nudges resume after the clearing');

  // an attention the record refused holds nothing back
  const u = new Watchdog(0);
  u.boundary(3, egress(A), 1 * S);
  const [lost] = attentions(u.reached(A, 'counters:9', 2 * S));
  u.notRecorded(lost);
  t.notOk(u.attentionOpen, 'not recorded: not open');

  const v = new Watchdog(0);
  v.boundary(3, egress(A), 1 * S);
  v.reached(A, 'counters:9', 2 * S);
  t.same(v.operationStopped(), [{ type: 'attention_cleared', by: 'operation_stopped' }]);
  t.same(v.activeAttention, []);
});

t.test('attention read back from events.jsonl (a watch restart) holds the nudges and the stall', async (t) => {
  const w = new Watchdog(0, { nudgeEveryMs: 60 * S, stallAfterMs: 300 * S });
  t.same(w.attentionLogged(7, 'hint_loop'), []);
  t.ok(w.attentionOpen);
  const seen: Output[] = [...w.agent(deny(), 1 * S), ...w.agent(deny(), 2 * S)];
  for (let s = 60; s <= 2000; s += 60) seen.push(...w.tick(s * S), ...w.agent(deny(), s * S + 1));
  for (let s = 2100; s <= 4000; s += 100) seen.push(...w.tick(s * S));
  t.same(nudges(seen), [], 'the loop that exhausted its nudges before the restart gets none');
  t.same(flags(seen), [], 'and no stall flag');
  t.same(attentions(seen), [], 'nor a second attention');
  // a new finding is still raised: control_defeat is evidence, not a nudge
  w.boundary(20, egress(A), 4001 * S);
  t.match(w.reached(A, 'counters:30', 4002 * S), [{ type: 'attention', signature: 'control_defeat' }]);
  // the operation ending clears it
  t.same(w.clearedInLog('operation_stopped'), [{ type: 'attention_cleared', by: 'operation_stopped' }]);
  t.notOk(w.attentionOpen);
});

t.test('control_defeat: a delegation or an executor\'s refused write is not a refusal', async (t) => {
  // the executor performs a delegated effect, and a tool's write through its
  // handle, on the workload's behalf: the success that follows is the
  // delegation working, not the boundary defeated
  for (const kind of ['fault_delegated', 'write_denied'] as const) {
    const w = new Watchdog(0);
    w.boundary(3, { kind, target: A }, 1 * S);
    t.same(w.agent(ok(A), 2 * S, 'agent:2:x'), [], `${kind}, then a successful tool result: nothing`);
    t.same(w.reached(A, 'counters:4', 3 * S), [], `${kind}, then an allow delta: nothing`);
    t.equal(w.trailLength, 0);
  }
  for (const kind of ['egress_denied', 'fault_denied', 'dns_denied'] as const) {
    const w = new Watchdog(0);
    w.boundary(3, { kind, target: A }, 1 * S);
    t.match(w.agent(ok(A), 2 * S, 'agent:2:x'), [{ signature: 'control_defeat' }], `${kind} is a refusal`);
  }
});

t.test('a lease or grant issued between the refusal and the reach fires nothing', async (t) => {
  const w = new Watchdog(0);
  w.boundary(3, egress(A), 1 * S);
  t.same(w.leaseIssued(A, 2 * S, 7), []);
  t.same(w.reached(A, 'counters:5', 3 * S, 7), [], 'counter evidence');
  t.same(w.agent(ok(A), 4 * S), [], 'a tool result');

  // a lease for another target covers nothing here
  const w2 = new Watchdog(0);
  w2.boundary(3, egress(A), 1 * S);
  w2.leaseIssued(B, 2 * S, 7);
  t.match(w2.reached(A, 'counters:5', 3 * S), [{ signature: 'control_defeat' }]);

  // a lease issued BEFORE the refusal is not in between: the reach fires,
  // unless the allow was counted under that lease's own generation (the
  // sampler reads per second: the traffic may predate the refusal)
  const w3 = new Watchdog(0);
  w3.leaseIssued(A, 1 * S, 7);
  w3.boundary(3, egress(A), 2 * S);
  t.same(w3.reached(A, 'counters:5', 3 * S, 7), [], 'counted under the covering generation');
  t.match(w3.reached(A, 'counters:6', 4 * S, 9), [{ signature: 'control_defeat', evidence: [3] }], 'under a generation nobody issued');

  // a policy the operator applied may grant anything: it covers earlier refusals
  const w4 = new Watchdog(0);
  w4.boundary(3, egress(A), 1 * S);
  w4.policyChanged(2 * S, 12);
  t.same(w4.reached(A, 'counters:5', 3 * S, 12), []);
  w4.boundary(4, egress(A), 4 * S);
  t.same(w4.reached(A, 'counters:6', 5 * S, 12), [], 'a grant entry is tagged with the policy generation');
  t.match(w4.reached(A, 'counters:7', 5 * S, 13), [{ evidence: [4] }]);
});

t.test('agent event lines: schema/agent-event.schema.json', async (t) => {
  const good = [
    '{"type":"tool_result","tool_id":"fetch","errored":true,"denial":{"class":"network","hint":"ask","target":"127.0.0.1:9"},"at":"2026-12-01T10:00:00Z"}',
    '{"type":"tool_result","tool_id":"fetch","errored":false,"target":"127.0.0.1:9","at":"2026-12-01T10:00:00.5+01:00"}',
    '{"type":"message","from":"person","at":"2026-12-01T10:00:00Z"}',
    '{"type":"question","at":"2026-12-01T10:00:00Z"}',
    '{"type":"turn_end","at":"2026-12-01T10:00:00Z"}',
    '{"type":"progress","at":"2026-12-01T10:00:00.123456Z"}',
  ];
  for (const l of good) t.ok('event' in parseAgentEvent(l), l);
  const bad: [string, RegExp][] = [
    ['{"type":"progress","at":"2026-12-01T10:00:00Z","x":1}', /unknown field "x"/],
    ['{"type":"message","from":"bot","at":"2026-12-01T10:00:00Z"}', /^\/from: must be one of "person"\|"agent"/],
    ['{"type":"tool_result","errored":true,"at":"2026-12-01T10:00:00Z"}', /\/tool_id: required/],
    ['{"type":"tool_result","tool_id":"f","errored":"yes","at":"2026-12-01T10:00:00Z"}', /\/errored/],
    ['{"type":"tool_result","tool_id":"f","errored":true,"denial":{"class":"n"},"at":"2026-12-01T10:00:00Z"}', /\/denial\/hint: required/],
    ['{"type":"progress","at":"yesterday"}', /\/at/],
    ['{"type":"progress"}', /\/at: required/],
    ['{"type":"nap","at":"2026-12-01T10:00:00Z"}', /^\/type: must be one of/],
    ['[1]', /must be an object/],
    ['{"type":', /not JSON/],
  ];
  for (const [l, re] of bad) {
    const r = parseAgentEvent(l);
    t.ok('error' in r && re.test(r.error), `${l} → ${'error' in r ? r.error : 'accepted'}`);
  }
});
