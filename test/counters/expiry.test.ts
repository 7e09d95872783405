// Acceptance: an expired lease is refused from the instant of expiry, leaves
// the kernel map at the next reading (`make bench` measures how soon against
// the one-period promise) and is recorded with its final count; a lease whose
// uses ran out goes the same way.
import t from 'tap';
import { requireKernel, probe, tcpServer, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault } from '../helpers/supervisor';
import { parseDestination } from '../../src/addr';
import { bootNs } from '../../src/dataplane';
import { counterLines, readJson, sumDelta, leasePolicy } from './lib';

const POLICY = leasePolicy(
  { network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '1024-65535' }, ttl_s: 2, max_uses: 0 },
  { network: { protocol: 'tcp', cidr: '127.0.0.2/32', ports: '1024-65535' }, ttl_s: 60, max_uses: 3 },
);

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
  // keep the reject loop from leasing it again after it expires
  s.sup.dp.stopEvents();
  await waitFor(() => bootNs() >= expires, 5000, 5);
  // the promise: refused from the instant of expiry, whether or not a reading removed it yet
  const after = await probe(['--cgroup', s.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(after.results.map((x) => x.result), ['EPERM'], 'refused after expiry');
  // ...and removed by a reading; how soon after expiry is `make bench` (deadlines)
  const gone = await waitFor(() => s.sup.dp.getLease(tuple) === null, 10_000, 5).catch(() => false);
  t.ok(gone, `gone from the kernel map ${(Number(bootNs() - expires) / 1e6).toFixed(0)} ms after expiry (period 1000 ms)`);
  const line = await waitFor(() => counterLines(s.stateDir, s.op).find((l) => l.kind === 'lease_expired' && l.port === srv.port), 10_000, 20);
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
  const exhausted = () => sumDelta(counterLines(s.stateDir, s.op), { kind: 'deny', port: srv.port, reason: 'exhausted' });
  await waitFor(() => exhausted() >= 2, 5000, 20).catch(() => undefined);
  t.equal(exhausted(), 2, 'the two refusals counted as exhausted');
});
