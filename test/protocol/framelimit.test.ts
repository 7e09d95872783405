// The body limit of the C supervisor socket (addon/sup_server.c, GS_FRAME_MAX) at
// its exact edge, against a real supervisor: a body of exactly 65,536 bytes
// is read whole and decoded; 65,537 is refused from its header, for size.
// Both are answered and recorded in faults.jsonl.
//
// No valid fault is 64 KiB (the schema caps every string far below that),
// so the 65,536-byte body is a valid fault whose operation_id is replaced by
// one long enough to pad it to the byte, placed FIRST: the decoder reaches
// the fault's other fields only past all of it. The refusal then names
// operation_id's length: the body was read whole and parsed, not refused
// for its size.
import t from 'tap';
import * as net from 'node:net';
import { requireKernel, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, faultLines } from '../helpers/supervisor';
import { encodeFault, decodeResolution } from '../../src/protocol/codec';
import { readFrame } from '../../src/protocol/framing';

const LIMIT = 65536;

/**
 * A body of exactly `size` bytes: field 2 (operation_id, wire type 2, a
 * 3-byte varint length) first, then base without its own operation_id.
 */
function padded(base: Buffer, op: string, size: number): Buffer {
  // encodeFault writes fields in number order: schema (08 02), then operation_id (12 LEN op)
  const own = Buffer.concat([Buffer.from([0x12, op.length]), Buffer.from(op)]);
  if (op.length > 127 || !base.subarray(2, 2 + own.length).equals(own)) throw new Error('unexpected fault encoding');
  const rest = Buffer.concat([base.subarray(0, 2), base.subarray(2 + own.length)]);
  const n = size - rest.length - 4;
  if (n < 1 << 14 || n >= 1 << 21) throw new Error(`padding ${n} does not take a 3-byte varint`);
  const head = Buffer.from([0x12, (n & 0x7f) | 0x80, ((n >> 7) & 0x7f) | 0x80, n >> 14]);
  const body = Buffer.concat([head, Buffer.alloc(n, 'a'), rest]);
  if (body.length !== size) throw new Error(`built ${body.length} bytes, wanted ${size}`);
  return body;
}

/** header + whole body in one write; the answer decoded */
async function send(sock: string, body: Buffer): Promise<{ action?: string; reason?: string; fault_id?: string }> {
  const c = net.createConnection(sock);
  c.on('error', () => undefined);
  await new Promise<void>((r) => c.once('connect', () => r()));
  const reply = readFrame(c, { idleTimeoutMs: 10_000 }).then(
    (f) => decodeResolution(f),
    () => null,
  );
  const h = Buffer.alloc(4);
  h.writeUInt32BE(body.length);
  c.write(Buffer.concat([h, body]));
  const d = await reply;
  c.destroy();
  return d && d.ok ? { action: d.resolution.action, reason: d.resolution.reason, fault_id: d.resolution.fault_id } : {};
}

t.test('supervisor.sock: a 65,536-byte body is read and decoded, 65,537 is refused for size', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-flim');
  const w = await workload(t, s.cgroup);
  const base = encodeFault(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8080));
  const refusals = () => faultLines(s.stateDir, s.op).filter((l) => l.kind === 'refusal');

  // control: the base fault on its own is served
  t.match(await send(s.sup.socketPath, base), { action: 'retry_after_lease' }, 'the unpadded fault is resolved');

  const atLimit = padded(base, s.op, LIMIT);
  const a = await send(s.sup.socketPath, atLimit);
  t.match(a, { action: 'deny', reason: 'malformed_fault' }, `${LIMIT} bytes: answered (the padded field makes it malformed)`);
  await waitFor(() => refusals().length === 1, 4000).catch(() => undefined);
  const ra = refusals()[0];
  t.ok(ra, 'recorded');
  t.notMatch(String(ra?.detail), /frame_oversize|exceeds/, `${LIMIT} bytes: not refused for size (${String(ra?.detail).slice(0, 120)})`);
  t.match(String(ra?.detail), /operation_id/, 'refused for what its whole body decoded to: the padded operation_id');

  const over = padded(base, s.op, LIMIT + 1);
  const b = await send(s.sup.socketPath, over);
  t.match(b, { action: 'deny', reason: 'malformed_fault' }, `${LIMIT + 1} bytes: answered deny malformed_fault`);
  await waitFor(() => refusals().length === 2, 4000).catch(() => undefined);
  const rb = refusals()[1];
  t.match(rb, { reason: 'malformed_fault', via: 'socket', fault_id: b.fault_id }, 'recorded in faults.jsonl under the answer\'s fault id');
  t.match(String(rb?.detail), /^frame_oversize: declared length 65537 exceeds 65536 bytes/, 'refused for size, from the header');

  // the socket keeps serving
  t.match(await send(s.sup.socketPath, encodeFault(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8081))), { action: 'retry_after_lease' }, 'the next client is served');
});
