// Peer subjects at the resolver, through supervisor.sock: a fault whose
// subject is {peer: {address}} validates only when that address is one of
// the operation's own isolated peers (operation.json `peers`); any other
// address is denied subject_not_in_operation (src/resolver/subject.ts) and
// the decision is recorded.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel } from '../helpers/kernel';
import { startTestSupervisor, faultLines, POLICY } from '../helpers/supervisor';
import * as net from 'node:net';
import { encodeFault, decodeResolution } from '../../src/protocol/codec';
import { encodeFrame, readFrame } from '../../src/protocol/framing';
import type { Fault } from '../../src/protocol/types';

const PEERS = ['10.77.0.2', 'fd00::2'];

/** one frame over supervisor.sock, the answer decoded (no MAC check: only action and reason are read) */
async function raw(sock: string, body: Buffer): Promise<{ action?: string; reason?: string }> {
  const c = net.createConnection(sock);
  c.on('error', () => undefined);
  await new Promise<void>((r) => c.once('connect', () => r()));
  const reply = readFrame(c, { idleTimeoutMs: 10_000 });
  c.write(encodeFrame(body));
  const d = decodeResolution(await reply);
  c.destroy();
  return d.ok ? { action: d.resolution.action, reason: d.resolution.reason } : {};
}

let n = 0;
function peerFault(op: string, address: string, port: number): Fault {
  return {
    schema: 2,
    operation_id: op,
    fault_id: `peer-${process.pid}-${++n}`,
    subject: { peer: { address } },
    // inside the policy's lease rule (tcp 127.0.0.0/8, 1024-65535): only the subject decides
    effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port } },
    source: 'manual',
    observed_at_boot_ns: 0n,
    cgroup_id: 0n,
  };
}

t.test('peer subjects: exactly an owned peer address proceeds, anything else is denied', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-peer', { peers: PEERS });
  const rec = JSON.parse(fs.readFileSync(path.join(s.stateDir, 'network-operations', s.op, 'operation.json'), 'utf8')) as { peers: string[] };
  t.same(rec.peers, PEERS, 'operation.json lists the peers the resolver checks against');

  let port = 9100;
  for (const address of PEERS) {
    const f = peerFault(s.op, address, ++port);
    const r = await s.submit(f);
    t.ok(r.authenticated, 'answer authenticated');
    t.match(r.resolution, { action: 'retry_after_lease', reason: 'lease_installed', lease: { address: '127.0.0.1', port } }, `peer ${address} (owned) proceeds to the policy: lease`);
  }

  // the comparison is on the parsed address, not the text: the same address spelled otherwise is the same peer
  for (const address of ['fd00:0::2', 'FD00::2', '::ffff:10.77.0.2']) {
    const r = await s.submit(peerFault(s.op, address, ++port));
    t.match(r.resolution, { action: 'retry_after_lease' }, `peer ${address} is an owned address in another spelling: proceeds`);
  }
  // no address at all: the client library would refuse to encode it, so the
  // bytes are made by hand (a valid fault, its peer address overwritten)
  let unparsed = 0;
  for (const bad of ['not-an-ip', '010.077.0', '10.77.0.2']) {
    const f = peerFault(s.op, '10.77.0.9', ++port);
    const body = encodeFault(f);
    const at = body.indexOf(Buffer.from('10.77.0.9'));
    Buffer.from(bad).copy(body, at);
    const r = await raw(s.sup.socketPath, body);
    if (bad === '10.77.0.2') {
      t.match(r, { action: 'retry_after_lease' }, 'control: the hand-made frame with an owned address proceeds');
      continue;
    }
    unparsed++;
    t.match(r, { action: 'deny', reason: 'malformed_fault' }, `peer ${JSON.stringify(bad)}: deny malformed_fault`);
    t.ok(faultLines(s.stateDir, s.op).some((l) => l.kind === 'refusal' && l.reason === 'malformed_fault' && /address/.test(String(l.detail))), '  recorded as a refusal naming the address');
  }

  const owned = port;
  const notOurs = [
    ['10.77.0.3', 'a neighbour of an owned peer'],
    ['10.77.0.20', 'an owned address as a text prefix'],
    ['10.77.0.0', 'the owned peer\'s network address'],
    ['fd00::3', 'a neighbour of an owned IPv6 peer'],
    ['127.0.0.1', 'the host itself'],
    ['0.0.0.0', 'the unspecified address'],
  ];
  for (const [address, what] of notOurs) {
    const f = peerFault(s.op, address, ++port);
    const r = await s.submit(f);
    t.match(r.resolution, { action: 'deny', reason: 'subject_not_in_operation' }, `peer ${address} (${what}): deny subject_not_in_operation`);
    t.notOk(r.resolution.lease, 'no lease');
  }

  // the decisions are in faults.jsonl, subject and all
  const lines = faultLines(s.stateDir, s.op);
  const byId = new Map<string, Record<string, unknown>>();
  for (const l of lines) if (l.kind === 'resolution') byId.set(l.fault_id as string, l.resolution as Record<string, unknown>);
  const faults = lines.filter((l) => l.kind === 'fault' && (l.fault as { subject: { peer?: unknown } }).subject.peer);
  t.equal(faults.length, port - 9100 - unparsed, 'every peer fault that parsed has its fault line');
  const denied = faults.filter((l) => byId.get(l.fault_id as string)?.reason === 'subject_not_in_operation');
  t.same(denied.map((l) => (l.fault as { subject: { peer: { address: string } } }).subject.peer.address), notOurs.map((x) => x[0]), 'and each denial its resolution line');
  t.equal(s.sup.dp.listLeases().filter((l) => l.tuple.port > owned).length, 0, 'no lease entered the kernel for a refused peer');
});

t.test('an operation with no peers accepts no peer subject', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-peer', { peers: [] });
  const f = peerFault(s.op, PEERS[0], 9200);
  const r = await s.submit(f);
  t.match(r.resolution, { action: 'deny', reason: 'subject_not_in_operation' }, 'deny subject_not_in_operation');
});
