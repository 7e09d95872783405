// The pause adapter keeps one connection to the resolver open: successive
// paused calls are successive request/answer pairs on it, and the resolver
// admits one connection for all of them.
import t from 'tap';
import * as os from 'node:os';
import { requireKernel, tcpServer, PROBE } from '../helpers/kernel';
import { startTestSupervisor, faultLines } from '../helpers/supervisor';
import { launchUnderBoundary } from '../../src/pause/launch';
import { PauseAdapter, type PauseOutcome } from '../../src/pause/adapter';
import { pinDirFor } from '../../src/bpffs';

const N = 12;

t.test(`${N} paused calls, one after another, share one connection`, async (t) => {
  if (!requireKernel(t)) return;
  // no rule covers the port: every call pauses and is denied by the resolver
  const s = await startTestSupervisor(t, { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 }, 'gs-as');
  const srv = await tcpServer(t);
  const before = s.sup.answerLatency()!.accepted;
  const l = await launchUnderBoundary({
    cgroupPath: s.cgroup,
    pinDir: pinDirFor(s.op),
    argv: [PROBE, '--repeat', String(N), 'connect', 'tcp', '127.0.0.1', String(srv.port)],
    stdio: ['ignore', 'pipe', 'inherit'],
    operationId: s.op,
  });
  let out = '';
  l.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const outcomes: PauseOutcome[] = [];
  const adapter = new PauseAdapter({ notifier: l.notifier!, socketPath: s.sup.socketPath, operationId: s.op, key: s.key, resolver: s.sup.record.resolver, deadlineMs: 5000, onAnswer: (_c, o) => outcomes.push(o) });
  l.setFaultHandler(adapter.handle);
  await l.exited;
  await adapter.idle();
  l.notifier!.close();
  const results = out.trim().split('\n').map((x) => JSON.parse(x) as { result?: string; errno?: number }).filter((x) => 'result' in x);
  t.equal(results.length, N, `${N} calls made`);
  t.ok(results.every((r) => r.errno === os.constants.errno.EACCES), 'each refused by the resolver (EACCES)');
  t.equal(outcomes.length, N, `${N} paused calls answered`);
  t.ok(outcomes.every((o) => o.how === 'answered'), 'each with an authenticated resolution');
  const lines = faultLines(s.stateDir, s.op);
  t.equal(lines.filter((x) => x.kind === 'resolution').length, N, `${N} resolutions recorded`);
  t.equal(lines.filter((x) => x.kind === 'refusal').length, 0, 'nothing refused');
  t.equal(s.sup.answerLatency()!.accepted - before, 1, 'the resolver admitted one connection for all of them');
  t.equal(srv.accepted(), 0, 'nothing reached the server');
});
