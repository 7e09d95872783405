// Acceptance: expired leases disappear from the kernel map within one
// sampling period and are recorded with their final counts; a lease whose
// uses ran out goes the same way.
import t from 'tap';
import { requireKernel, probe, tcpServer, waitFor, sleep } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault } from '../helpers/supervisor';
import { parseDestination } from '../../src/addr';
import { bootNs } from '../../src/dataplane';
import { counterLines, readJson, sumDelta } from './lib';

const POLICY = {
  schema: 1,
  grants: [],
  leases: [
    { network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '1024-65535' }, ttl_s: 2, max_uses: 0 },
    { network: { protocol: 'tcp', cidr: '127.0.0.2/32', ports: '1024-65535' }, ttl_s: 60, max_uses: 3 },
  ],
  delegate: [],
  fault_deadline_ms: 5000,
};

t.test('an expired lease is removed within one period, recorded with its final count', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-ex');
  const w = await workload(t, s.cgroup);
  const srv = await tcpServer(t);
  const tuple = parseDestination('tcp', `127.0.0.1:${srv.port}`);
  const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port));
  t.equal(r.resolution.action, 'retry_after_lease');
  const gen = r.resolution.lease!.generation;
  const expires = r.resolution.lease!.expires_at_boot_ns;
  const p = await probe(['--cgroup', s.cgroup, '--repeat', '20', '--interval', '10', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(p.summary?.ok, 20, '20 calls while leased');
  // no calls after expiry: the reject loop would lease it again
  await waitFor(() => bootNs() >= expires, 5000, 5);
  await waitFor(() => s.sup.dp.getLease(tuple) === null, 3000, 5);
  const late = Number(bootNs() - expires) / 1e6;
  t.ok(late <= 1000, `gone from the kernel map ${late.toFixed(0)} ms after expiry (period 1000 ms)`);
  const line = await waitFor(() => counterLines(s.stateDir, s.op).find((l) => l.kind === 'lease_expired' && l.port === srv.port), 2000, 20);
  t.match(line, { generation: gen, why: 'expired', final_allow: 20, expires_at_boot_ns: String(expires) }, 'lease_expired with the final count');
  const lines = counterLines(s.stateDir, s.op);
  t.equal(sumDelta(lines, { kind: 'allow', port: srv.port, generation: gen }), 20, 'its allow deltas sum to the same 20');
  t.ok(lines.some((l) => l.kind === 'generation' && l.reason === 'lease_expired' && l.generation === line.in_generation), 'the expiry is a generation');
  t.ok(lines.some((l) => l.kind === 'generation_revoked' && l.generation === gen && l.final_allow === 20), 'its generation retired after the harvest');
  await waitFor(() => !(readJson(s.stateDir, s.op, 'network.json') as unknown as { leases: { port: number }[] }).leases.some((l) => l.port === srv.port), 3000, 50);
  t.pass('network.json no longer lists it');
});

t.test('a used-up lease is removed and recorded as exhausted', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-eu');
  const w = await workload(t, s.cgroup);
  const srv = await tcpServer(t, '127.0.0.2');
  const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.2', srv.port));
  t.match(r.resolution, { action: 'retry_after_lease', lease: { max_uses: 3 } });
  s.sup.dp.stopEvents(); // keep the reject loop from leasing it again after it is used up
  const p = await probe(['--cgroup', s.cgroup, '--repeat', '5', '--summary', 'connect', 'tcp', '127.0.0.2', String(srv.port)]);
  t.equal(p.summary?.ok, 3, 'three uses');
  t.equal(p.summary?.EPERM, 2, 'then refused');
  const line = await waitFor(() => counterLines(s.stateDir, s.op).find((l) => l.kind === 'lease_expired' && l.port === srv.port), 2500, 20);
  t.match(line, { why: 'exhausted', final_allow: 3 });
  t.equal(s.sup.dp.getLease(parseDestination('tcp', `127.0.0.2:${srv.port}`)), null, 'removed from the kernel map');
  await sleep(50);
  t.equal(sumDelta(counterLines(s.stateDir, s.op), { kind: 'deny', port: srv.port, reason: 'exhausted' }), 2, 'the two refusals counted as exhausted');
});
