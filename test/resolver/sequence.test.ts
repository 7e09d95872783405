// A supervisor.sock connection carries a sequence of request/answer pairs:
// several faults on one connection, bytes sent before an answer refused and
// recorded (the sequence ends), an idle connection closed after 30 s.
import t from 'tap';
import { requireKernel, waitFor } from '../helpers/kernel';
import { rawFrameClient, frame } from '../helpers/rawframes';
import { startTestSupervisor, workload, networkFault, faultLines } from '../helpers/supervisor';
import { encodeFault, decodeResolution } from '../../src/protocol/codec';
import type { Resolution } from '../../src/protocol/types';

/** answers as decoded Resolutions (an undecodable frame is skipped) */
const rawClient = (sockPath: string) => rawFrameClient(sockPath, (body): Resolution | null => {
  const r = decodeResolution(body);
  return r.ok ? r.resolution : null;
});

t.test('several faults on one connection, bytes before an answer refused', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-sq');
  const w = await workload(t, s.cgroup);
  const before = s.sup.answerLatency()!.accepted;

  const c = await rawClient(s.sup.socketPath);
  t.teardown(() => c.destroy());
  for (let i = 1; i <= 4; i++) {
    const f = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 9100 + i);
    c.send(frame(encodeFault(f)));
    const r = await c.next(i);
    t.equal(r.fault_id, f.fault_id, `answer ${i} is for fault ${i}`);
    t.equal(r.action, 'retry_after_lease', `fault ${i} leased`);
  }
  t.notOk(c.ended(), 'the connection stays open between requests');
  t.equal(s.sup.answerLatency()!.accepted - before, 1, 'one connection for the four faults');

  // a next frame sent before the answer to the previous one: refused,
  // recorded, and the sequence ends
  const a = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 9201);
  const b = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 9202);
  const d = await rawClient(s.sup.socketPath);
  t.teardown(() => d.destroy());
  d.send(frame(encodeFault(a)));
  await new Promise((r) => setImmediate(r));
  d.send(frame(encodeFault(b)));
  await waitFor(() => d.ended(), 5000);
  t.ok(d.ended(), 'the server closed the connection');
  t.notOk(d.got.some((r) => r.fault_id === b.fault_id && r.action !== 'deny'), 'the early frame was not served');
  t.ok(d.got.some((r) => r.action === 'deny' && r.reason === 'malformed_fault'), 'a deny for the early bytes');
  const refusals = () => faultLines(s.stateDir, s.op).filter((l) => l.kind === 'refusal' && /frame_trailing/.test(String(l.detail)));
  await waitFor(() => refusals().length > 0, 4000).catch(() => undefined);
  t.ok(refusals().length > 0, 'the refusal is recorded in faults.jsonl');
  t.equal(s.sup.dp.getLease({ family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9202 }), null, 'nothing installed for the early frame');

  // the first connection still serves
  const f = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 9105);
  c.send(frame(encodeFault(f)));
  t.equal((await c.next(5)).action, 'retry_after_lease', 'the well-behaved sequence goes on');
});

t.test('an idle connection is closed after 30 s', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-sqi');
  const w = await workload(t, s.cgroup);
  const served = await rawClient(s.sup.socketPath);
  const silent = await rawClient(s.sup.socketPath);
  t.teardown(() => {
    served.destroy();
    silent.destroy();
  });
  served.send(frame(encodeFault(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 9301))));
  t.equal((await served.next(1)).action, 'retry_after_lease');
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, 25_000));
  t.notOk(served.ended() || silent.ended(), 'still open after 25 s');
  await waitFor(() => served.ended() && silent.ended(), 10_000);
  const ms = Date.now() - t0;
  t.ok(ms >= 29_000 && ms < 35_000, `both closed at about 30 s (${ms} ms)`);
  const lines = faultLines(s.stateDir, s.op).filter((l) => l.kind === 'refusal');
  t.equal(lines.filter((l) => /no frame within 30000 ms/.test(String(l.detail))).length, 1, 'the connection that never sent a frame is a recorded refusal');
  t.equal(lines.length, 1, 'an idle sequence after its answers is closed, not refused');
  t.same(silent.got.map((r) => r.reason), ['malformed_fault'], 'the silent one is told why');
});
