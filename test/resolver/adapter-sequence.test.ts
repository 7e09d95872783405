// The pause adapter keeps one connection to the resolver open: successive
// paused calls are successive request/answer pairs on it, and the resolver
// admits one connection for all of them. When the resolver closes it, the
// next call opens a new one.
import t from 'tap';
import * as os from 'node:os';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { requireKernel, tcpServer, testOp, PROBE } from '../helpers/kernel';
import { startTestSupervisor, faultLines, shortStateDir } from '../helpers/supervisor';
import { decodeFault, encodeResolution } from '../../src/protocol/codec';
import { computeMac } from '../../src/protocol/mac';
import type { Resolution } from '../../src/protocol/types';
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

t.test('a connection the resolver closed is replaced by a new one', async (t) => {
  if (!requireKernel(t)) return;
  const key = randomBytes(32);
  const sock = path.join(shortStateDir(t), 'r.sock');
  // a resolver that denies every fault and closes the connection after every
  // third answer; the calls are 100 ms apart so that its close is seen
  // before the next call (a close racing a request fails that request)
  let conns = 0;
  let answered = 0;
  const srv = net.createServer((c) => {
    conns++;
    let buf = Buffer.alloc(0);
    let onThis = 0;
    c.on('error', () => undefined);
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        const f = decodeFault(buf.subarray(4, 4 + buf.readUInt32BE(0)));
        buf = buf.subarray(4 + buf.readUInt32BE(0));
        const r: Resolution = { fault_id: f.ok ? f.fault.fault_id : 'x', action: 'deny', reason: 'policy_denied' };
        const body = encodeResolution(r, computeMac(key, r));
        const h = Buffer.alloc(4);
        h.writeUInt32BE(body.length);
        c.write(Buffer.concat([h, body]));
        answered++;
        if (++onThis === 3) c.end();
      }
    });
  });
  await new Promise<void>((r) => srv.listen(sock, () => r()));
  t.teardown(() => srv.close());
  const target = await tcpServer(t);
  const { op, cgroup } = testOp(t, 'gs-ar');
  const l = await launchUnderBoundary({ cgroupPath: cgroup, pinDir: pinDirFor(op), argv: [PROBE, '--repeat', '9', '--interval', '100', 'connect', 'tcp', '127.0.0.1', String(target.port)], stdio: ['ignore', 'pipe', 'inherit'], operationId: op });
  let out = '';
  l.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const outcomes: PauseOutcome[] = [];
  const adapter = new PauseAdapter({ notifier: l.notifier!, socketPath: sock, operationId: op, key, resolver: null, deadlineMs: 5000, onAnswer: (_c, o) => outcomes.push(o) });
  l.setFaultHandler(adapter.handle);
  await l.exited;
  await adapter.idle();
  l.notifier!.close();
  const results = out.trim().split('\n').map((x) => JSON.parse(x) as { result?: string; errno?: number }).filter((x) => 'result' in x);
  t.equal(results.length, 9, '9 calls made');
  t.ok(results.every((r) => r.errno === os.constants.errno.EACCES), 'each denied by the resolver\'s answer (EACCES), none failed');
  t.same(outcomes.map((o) => o.how), Array(9).fill('answered'), 'each with an authenticated answer');
  t.equal(answered, 9);
  t.equal(conns, 3, 'three connections: a new one each time the resolver closed the last');
  t.equal(target.accepted(), 0, 'nothing reached the target');
});
