// Issue 31: a plain grant's commit (the lease's put, its read-back, the
// answer) runs in C on the fault log's syncer thread right after the
// fdatasync that makes its lines durable (addon/sup_server.c
// gs_sup_server_answer_grant); JavaScript records the outcome afterwards.
// What must hold whichever thread does it:
//   - an answer in hand means the lease is in the kernel, as granted;
//   - the record (network.json's leases) gets the lease once the outcome
//     is back, with the generation the kernel holds;
//   - a put that fails is never answered (the client has no grant), and a
//     lease_not_installed line says why;
//   - a limited grant (max_uses) stays on the JavaScript path (a top-up
//     adds to a live entry).
import t from 'tap';
import { requireKernel, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, faultLines } from '../helpers/supervisor';
import { leaseKey } from '../../src/state/network';
import type { Tuple } from '../../src/addr';

const tcp = (port: number, address = '127.0.0.1'): Tuple => ({ family: 'ipv4', protocol: 'tcp', address, port });

t.test('a plain grant is in the kernel when its answer arrives, and recorded after', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-cc');
  const w = await workload(t, s.cgroup);
  const n = 20;
  for (let i = 0; i < n; i++) {
    const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8300 + i));
    t.ok(r.authenticated, `fault ${i} answered`);
    const res = r.resolution;
    t.equal(res?.action, 'retry_after_lease', `fault ${i} granted`);
    // read at once, before anything else runs on this side: the answer left only after the put and its read-back
    const l = s.sup.dp.getLease(tcp(8300 + i));
    t.ok(l, `lease ${i} is in the kernel as the answer arrives`);
    t.equal(l?.generation, BigInt(res?.lease?.generation ?? -1), `with the granted generation (${i})`);
    t.equal(l?.expiresBootNs, BigInt(res?.lease?.expires_at_boot_ns ?? -1), `and the granted expiry (${i})`);
  }
  await waitFor(() => s.sup.resolver.commits.inC >= n, 5000);
  t.same(s.sup.resolver.commits, { inC: n, inJs: 0 }, 'every plain grant was committed in C');
  for (let i = 0; i < n; i++) {
    const rec = await waitFor(() => s.sup.resolver.network.recordedLease(leaseKey(tcp(8300 + i))), 5000);
    const l = s.sup.dp.getLease(tcp(8300 + i));
    t.equal(BigInt(rec.generation), l?.generation, `record ${i} has the kernel's generation`);
    t.equal(rec.max_uses, 0, `record ${i} is a plain lease`);
  }
  const lines = faultLines(s.stateDir, s.op);
  t.equal(lines.filter((l) => l.kind === 'lease_not_installed').length, 0, 'no lease_not_installed line');
});

t.test('a limited grant stays on the JavaScript path (top-ups)', async (t) => {
  if (!requireKernel(t)) return;
  const policy = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '8400-8409' }, ttl_s: 30, max_uses: 2 }], delegate: [] };
  const s = await startTestSupervisor(t, policy, 'gs-cl');
  const w = await workload(t, s.cgroup);
  const r1 = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8400));
  t.equal(r1.resolution?.action, 'retry_after_lease');
  const r2 = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8400));
  t.equal(r2.resolution?.action, 'retry_after_lease', 'a second grant of limited uses adds to the first');
  t.equal(s.sup.dp.getLease(tcp(8400))?.usesLeft, 4n, 'both grants uses on one entry (a top-up, not a put over it)');
  t.same(s.sup.resolver.commits, { inC: 0, inJs: 2 }, 'both committed in JavaScript');
});

t.test('a grant whose put fails is never answered, and the log says why', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-cf');
  const w = await workload(t, s.cgroup);
  // fill the lease map (65,536 entries) with leases of another address: the next put fails (E2BIG)
  const far = 10n * 365n * 86400n * 1_000_000_000n;
  let filled = 0;
  for (let i = 0; filled < 65536 && i < 70000; i++) {
    try {
      s.sup.dp.putLease({ tuple: tcp(1024 + (i % 60000), `127.9.${Math.floor(i / 60000)}.1`), generation: 1n, expiresBootNs: far, maxUses: 0 });
      filled++;
    } catch {
      break;
    }
  }
  t.equal(filled, 65536, 'the lease map is full');
  const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8500)).then(
    (x) => `answered ${x.resolution.action}`,
    (e: Error) => `no answer: ${e.message}`,
  );
  t.match(r, /^no answer: .*without an answer/, `no answer for a grant whose lease could not be put (${r})`);
  t.equal(s.sup.dp.getLease(tcp(8500)), null, 'and no lease in the kernel');
  const lines = await waitFor(() => {
    const ls = faultLines(s.stateDir, s.op).filter((l) => l.kind === 'lease_not_installed');
    return ls.length ? ls : null;
  }, 5000);
  t.match(String(lines[0].error), /E2BIG|Argument list too long|bpf_map_update_elem/, `lease_not_installed says why: ${String(lines[0].error)}`);
  t.equal(s.sup.resolver.commits.inC, 0, 'nothing counted as committed');
  t.equal(s.sup.resolver.network.recordedLease(leaseKey(tcp(8500))), undefined, 'nothing recorded');
});
