// A misbehaving executor tool is attributable from the durable record alone:
// a tool call's cgroup (registered by the executor before the tool runs)
// makes direct connects around its handle while the workload floods 10,000
// other denied destinations. faults.jsonl, which the flood gate never
// touches, names the tool and the call on every one of the tool's refusals
// and maps the cgroup to the tool; events.jsonl, whose boundary lines the
// gate suppresses past 200 a second, counts the tool's suppressed lines
// apart, so tool lines + tool suppressed counts = the tool's refusals.
// Catches: a fault line with a cgroup id only (the cgroup → tool map lived
// in memory), and suppressed counts that lose which tool they came from.
// Real supervisor, real hooks, io_uring connects (tests/adversarial/flood.c).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { requireKernel, tcpServer, waitFor } from '../helpers/kernel';
import { startTestSupervisor } from '../helpers/supervisor';
import { opDir } from '../../src/state/operation';
import { registerToolCgroup } from '../../src/executor/report';
import { cgroupId } from '../../src/cgroup';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'flood');
const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };
const OTHERS = 10_000;
const TOOL = 50;

function flood(cgroup: string, base: string, port: number, count: number): Promise<{ EPERM: number }> {
  return new Promise((resolve, reject) =>
    execFile(FLOOD, ['--cgroup', cgroup, '--base', base, '--port', String(port), '--count', String(count)], { timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`flood: ${err.message} ${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n')[1]) as { EPERM: number });
    }),
  );
}

/** the complete lines of a log, parsed; only those containing `has` */
function lines(file: string, has: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .slice(0, -1)
    .filter((l) => l.includes(has))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

t.test("a tool's direct connects under a flood of 10,000 other refusals: faults.jsonl alone names the tool", async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(FLOOD)) return t.fail(`flood workload not built: ${FLOOD} (make build)`);
  const s = await startTestSupervisor(t, DENY_ALL, 'gs-exa');
  const dir = opDir(s.stateDir, s.op);
  const faults = path.join(dir, 'faults.jsonl');
  const events = path.join(dir, 'events.jsonl');
  const sub = path.join(s.cgroup, 'exec-c-flood');
  fs.mkdirSync(sub);
  t.teardown(() => fs.rmdirSync(sub));
  const cg = cgroupId(sub);
  await registerToolCgroup(s.stateDir, s.op, { cgroupId: cg, toolId: 'fetch-page', callId: 'c-flood' });
  const srv = await tcpServer(t, '0.0.0.0');
  // destinations unique to this process: 127.<x>.0.1… for the flood, 127.<x>.200.1… for the tool
  const x = 200 + (process.pid % 50);
  const toolBase = `127.${x}.200.1`;

  const [others, tool] = await Promise.all([flood(s.cgroup, `127.${x}.0.1`, srv.port, OTHERS), flood(sub, toolBase, srv.port, TOOL)]);
  t.equal(others.EPERM, OTHERS, 'the workload: every connect refused by the hook');
  t.equal(tool.EPERM, TOOL, 'the tool: every direct connect refused by the hook');

  // faults.jsonl: a fault line for each refused destination, or (past the
  // refusal budget, src/resolver/budget.ts) a count in a suppressed line,
  // which counts a tool's own apart
  const hook = () => lines(faults, '"kind":"fault"').filter((l) => l.via === 'cgroup_hook');
  const suppressed = () => lines(faults, '"kind":"suppressed"');
  const supCount = (key?: string) => suppressed().reduce((n, l) => n + (key ? ((l.tools as Record<string, number> | undefined)?.[key] ?? 0) : (l.count as number)), 0);
  const all = await waitFor(() => {
    const h = hook();
    return h.length + supCount() >= OTHERS + TOOL ? h : null;
  }, 120_000, 200).catch(() => hook());
  t.equal(all.length + supCount(), OTHERS + TOOL, `faults.jsonl: a fault line or a suppressed count for every refused destination (${all.length} + ${supCount()})`);
  const prefix = `127.${x}.200.`;
  const addr = (l: Record<string, unknown>) => (l.fault as { effect: { network: { address: string } } }).effect.network.address;
  const fromTool = all.filter((l) => addr(l).startsWith(prefix));
  t.equal(fromTool.length + supCount('fetch-page'), TOOL, `the tool's refusals are all there: ${fromTool.length} lines + ${supCount('fetch-page')} counted under its name`);
  t.ok(
    fromTool.every((l) => l.tool_id === 'fetch-page' && l.call_id === 'c-flood' && (l.fault as { cgroup_id: string }).cgroup_id === String(cg)),
    "every one of the tool's fault lines names the tool and the call (and its cgroup)",
  );
  t.notOk(
    all.some((l) => !addr(l).startsWith(prefix) && l.tool_id !== undefined),
    "none of the workload's refusals is put on the tool",
  );
  t.match(lines(faults, '"kind":"tool_cgroup"'), [{ kind: 'tool_cgroup', cgroup_id: String(cg), tool_id: 'fetch-page', call_id: 'c-flood' }], 'faults.jsonl maps the cgroup to the tool, written before the tool ran');

  // events.jsonl: the flood was suppressed, and the tool's share counted apart
  const account = () => {
    const written = lines(events, '"type":"boundary"').filter((l) => l.tool_id === 'fetch-page').length;
    const sup = lines(events, '"type":"suppressed"');
    const suppressed = sup.reduce((n, l) => n + ((l.tools as Record<string, number> | undefined)?.['fetch-page'] ?? 0), 0);
    const total = sup.reduce((n, l) => n + (l.count as number), 0);
    return { written, suppressed, total };
  };
  const a = await waitFor(() => {
    const r = account();
    return r.written + r.suppressed >= TOOL ? r : null;
  }, 30_000, 200).catch(account);
  t.ok(a.total > 0, `the flood was suppressed in events.jsonl (${a.total} lines)`);
  t.equal(a.written + a.suppressed, TOOL, `the tool's lines (${a.written}) and its suppressed count (${a.suppressed}) add up to its refusals`);
  t.equal(srv.bytes(), 0, 'no byte reached the listener');
  t.equal(srv.accepted(), 0, 'no connection was accepted');
  t.comment(`tool refusals: ${a.written} in events.jsonl, ${a.suppressed} counted in suppressed lines; ${a.total} suppressed in all`);
});
