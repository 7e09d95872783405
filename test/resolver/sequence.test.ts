// A supervisor.sock connection carries a sequence of request/answer pairs:
// several faults on one connection, bytes sent before an answer refused and
// recorded (the sequence ends), an idle connection closed after 30 s.
import t from 'tap';
import * as net from 'node:net';
import { requireKernel, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, faultLines } from '../helpers/supervisor';
import { encodeFault, decodeResolution } from '../../src/protocol/codec';
import type { Resolution } from '../../src/protocol/types';

function frame(body: Uint8Array): Buffer {
  const h = Buffer.alloc(4);
  h.writeUInt32BE(body.length);
  return Buffer.concat([h, body]);
}

/** A raw client: send bytes, read answers one frame at a time, see the server close. */
async function rawClient(sockPath: string) {
  const s = net.createConnection(sockPath);
  s.on('error', () => undefined);
  await new Promise<void>((r) => s.once('connect', () => r()));
  let buf = Buffer.alloc(0);
  const answers: Resolution[] = [];
  let ended = false;
  s.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const n = buf.readUInt32BE(0);
      const r = decodeResolution(buf.subarray(4, 4 + n));
      if (r.ok) answers.push(r.resolution);
      buf = buf.subarray(4 + n);
    }
  });
  s.on('close', () => (ended = true));
  return {
    send: (b: Buffer) => s.write(b),
    answers,
    ended: () => ended,
    next: (k: number) => waitFor(() => answers.length >= k && answers[k - 1], 5000),
    destroy: () => s.destroy(),
  };
}

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
  t.notOk(d.answers.some((r) => r.fault_id === b.fault_id && r.action !== 'deny'), 'the early frame was not served');
  t.ok(d.answers.some((r) => r.action === 'deny' && r.reason === 'malformed_fault'), 'a deny for the early bytes');
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
  t.same(silent.answers.map((r) => r.reason), ['malformed_fault'], 'the silent one is told why');
});
