// A generation that was harvested for the last time and retired can never
// count again: its counters leave the kernel map (which would otherwise fill
// up over a long run, every lease install being a generation of its own),
// and their disappearance is not recorded as a reset.
import t from 'tap';
import { requireKernel, probe, tcpServer, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault } from '../helpers/supervisor';
import { counterLines } from './lib';

t.test('retired generations leave the counter map', async (t) => {
  if (!requireKernel(t)) return;
  const policy = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '1024-65535' }, ttl_s: 1 }], delegate: [] };
  const s = await startTestSupervisor(t, policy, 'gs-ret');
  const w = await workload(t, s.cgroup);
  const srv = await tcpServer(t);
  const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port));
  t.equal(r.resolution.action, 'retry_after_lease');
  const gen = r.resolution.lease!.generation;
  const p = await probe(['--cgroup', s.cgroup, '--repeat', '3', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(p.summary?.ok, 3, 'three allowed connects under the lease');
  const allowKeys = () => s.sup.dp.readCounters().filter((c) => c.verdict === 'allow' && Number(c.generation) === gen);
  t.equal(allowKeys().length, 1, 'its allow counter is in the kernel map');
  // expiry (1 s), final harvest, retirement
  await waitFor(() => counterLines(s.stateDir, s.op).some((l) => l.kind === 'generation_revoked' && l.generation === gen), 6000).catch(() => undefined);
  const lines = counterLines(s.stateDir, s.op);
  t.match(lines.find((l) => l.kind === 'generation_revoked' && l.generation === gen), { final_allow: 3 }, 'retired with its final count');
  t.same(allowKeys(), [], 'the retired generation\'s counter was deleted from the kernel map');
  // two more readings: the first after the retirement sees the counter gone
  const ticks = s.sup.envelope!.stats.ticks;
  await waitFor(() => s.sup.envelope!.stats.ticks >= ticks + 2, 10_000).catch(() => t.fail('no further readings'));
  const after = counterLines(s.stateDir, s.op);
  t.notOk(after.some((l) => l.kind === 'reset'), 'its disappearance is not recorded as a reset');
  const sum = after.filter((l) => l.kind === 'allow' && l.source === 'ebpf' && l.generation === gen).reduce((a, l) => a + (l.delta as number), 0);
  t.equal(sum, 3, 'allow deltas still sum to the calls made');
});
