// make vmtest's smoke file: the least that shows gensee works on a kernel.
// The hooks load and attach to a fresh cgroup (verifier, links, pins), a
// connect from that cgroup to a loopback port with no lease is refused
// with EPERM and never reaches the listener, and once a lease for the port
// is in the kernel map the same connect goes through.
import t from 'tap';
import { requireKernel, testOp, tcpServer, probe, waitFor, timeScaled } from '../helpers/kernel';
import { parseDestination } from '../../src/addr';

t.test('hooks load; an unleased connect is refused, a leased one goes through', async (t) => {
  if (!requireKernel(t)) return;
  const o = testOp(t, 'gs-smoke');
  const srv = await tcpServer(t);

  const denied = await probe(['--cgroup', o.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(denied.results[0]?.result, 'EPERM', `no lease: connect refused by the hook (${denied.raw.trim()})`);

  o.dp.putLease({ tuple: parseDestination('tcp', `127.0.0.1:${srv.port}`), generation: 1n, ttlMs: 60_000 });
  const leased = await probe(['--cgroup', o.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(leased.results[0]?.result, 'ok', `leased: connect went through (${leased.raw.trim()})`);

  await waitFor(() => srv.accepted() >= 1, timeScaled(2000)).catch(() => undefined);
  t.equal(srv.accepted(), 1, 'the listener saw exactly the leased connect');
});
