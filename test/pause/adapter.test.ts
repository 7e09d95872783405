// The pause adapter answers only on an authenticated resolution: a resolver
// that never answers → ETIMEDOUT at the deadline; an impostor whose MAC does
// not verify → the call is refused, never retried.
import t from 'tap';
import * as net from 'node:net';
import * as path from 'node:path';
import * as os from 'node:os';
import { randomBytes } from 'node:crypto';
import { requireKernel, testOp, tcpServer, PROBE } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';
import { launchUnderBoundary } from '../../src/pause/launch';
import { PauseAdapter, type PauseOutcome } from '../../src/pause/adapter';
import { pinDirFor } from '../../src/bpffs';
import { readFrame, writeFrame } from '../../src/protocol/framing';
import { encodeResolution } from '../../src/protocol/codec';
import { computeMac } from '../../src/protocol/mac';
import type { Resolution } from '../../src/protocol/types';

async function fakeResolver(t: { teardown(f: () => unknown): void }, dir: string, answer: ((faultId: string) => Resolution) | null): Promise<string> {
  const p = path.join(dir, `fake-${randomBytes(3).toString('hex')}.sock`);
  const srv = net.createServer({ allowHalfOpen: true }, (c) => {
    c.on('error', () => undefined);
    // never answers: hold the connection open and read nothing (a framing
    // rule of our own here would close it, which is an error, not a timeout)
    if (!answer) return;
    readFrame(c).then(
      async () => {
        const r = answer('x');
        await writeFrame(c, encodeResolution(r, computeMac(randomBytes(32), r)));
        c.end();
      },
      () => c.destroy(),
    );
  });
  await new Promise<void>((r) => srv.listen(p, () => r()));
  t.teardown(() => srv.close());
  return p;
}

async function runProbe(t: Parameters<typeof testOp>[0], socketPath: string, port: number, deadlineMs: number) {
  const { op, cgroup } = testOp(t, 'gs-ad');
  const l = await launchUnderBoundary({ cgroupPath: cgroup, pinDir: pinDirFor(op), argv: [PROBE, 'connect', 'tcp', '127.0.0.1', String(port)], stdio: ['ignore', 'pipe', 'inherit'], operationId: op });
  let out = '';
  l.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const outcomes: PauseOutcome[] = [];
  const adapter = new PauseAdapter({ notifier: l.notifier!, socketPath, operationId: op, key: randomBytes(32), resolver: null, deadlineMs, onAnswer: (_c, o) => outcomes.push(o) });
  l.setFaultHandler(adapter.handle);
  await l.exited;
  await adapter.idle();
  l.notifier!.close();
  const res = out.trim().split('\n').map((x) => JSON.parse(x) as { result?: string; errno?: number }).find((x) => 'result' in x);
  return { res, outcomes, adapter };
}

t.test('no authenticated answer within the deadline → ETIMEDOUT', async (t) => {
  if (!requireKernel(t)) return;
  const dir = shortStateDir(t);
  const srv = await tcpServer(t);
  const sock = await fakeResolver(t, dir, null);
  const { res, outcomes, adapter } = await runProbe(t, sock, srv.port, 300);
  t.equal(res?.errno, os.constants.errno.ETIMEDOUT, 'the paused call is refused with ETIMEDOUT');
  // the promise, from submission to answer on one clock: never before the
  // deadline, and within a generous bound (the tight figure: make bench)
  t.match(outcomes, [{ how: 'timeout' }], 'answered once, as a timeout');
  const ms = (outcomes[0]?.micros ?? 0) / 1000;
  t.ok(ms >= 300 && ms < 10_000, `at the 300 ms deadline, not before (${ms.toFixed(1)} ms)`);
  t.equal(adapter.stats.timeouts, 1);
  t.equal(srv.accepted(), 0, 'nothing reached the server');
});

t.test('a resolution whose MAC does not verify is a deny, never a retry', async (t) => {
  if (!requireKernel(t)) return;
  const dir = shortStateDir(t);
  const srv = await tcpServer(t);
  const sock = await fakeResolver(t, dir, () => ({ fault_id: 'x', action: 'continue_already_authorized', reason: 'grant' }));
  const { res, adapter } = await runProbe(t, sock, srv.port, 3000);
  t.equal(res?.errno, os.constants.errno.EACCES, 'refused (EACCES), not continued');
  t.equal(adapter.stats.unauthenticated, 1, 'counted as unauthenticated');
  t.equal(srv.accepted(), 0, 'nothing reached the server');
});
