// Every action end to end through the authenticated socket, with the kernel
// lease map and a real process in the operation's cgroup.
import t from 'tap';
import { requireKernel, probe, tcpServer, freePort, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, faultLines } from '../helpers/supervisor';
import type { Fault } from '../../src/protocol/types';
import { parseDestination } from '../../src/addr';

t.test('actions through the socket', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t);
  const w = await workload(t, s.cgroup);
  const srv = await tcpServer(t);

  // retry_after_lease → a real connect from the cgroup succeeds
  // (no probe before: its EPERM would go through the reject-mode loop and lease it)
  t.equal(s.sup.dp.getLease(parseDestination('tcp', `127.0.0.1:${srv.port}`)), null, 'no lease yet');
  const f1 = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port);
  const r1 = await s.submit(f1);
  t.ok(r1.authenticated, 'resolver identity and MAC verified');
  t.match(r1.resolution, { fault_id: f1.fault_id, action: 'retry_after_lease', reason: 'lease_installed', lease: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: srv.port, max_uses: 0 } });
  const inKernel = s.sup.dp.getLease(parseDestination('tcp', `127.0.0.1:${srv.port}`));
  t.ok(inKernel, 'the exact lease is in the kernel map');
  t.equal(inKernel?.expiresBootNs, r1.resolution.lease?.expires_at_boot_ns, 'kernel expiry equals the answered one');
  const after = await probe(['--cgroup', s.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(after.results.map((r) => r.result), ['ok'], 'after retry_after_lease the connect succeeds');

  // continue_already_authorized: live lease, and a static grant
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port))).resolution, { action: 'continue_already_authorized', reason: 'lease_active' });
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'udp', '127.0.0.53', 53))).resolution, { action: 'continue_already_authorized', reason: 'grant' });
  t.ok(s.sup.dp.getLease(parseDestination('udp', '127.0.0.53:53')), 'the grant is held in the kernel map');

  // delegate, policy_denied
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '192.0.2.7', 443))).resolution, { action: 'delegate', delegate_to: 'egress-proxy' });
  const denied = await s.submit(networkFault(s.op, w.pid, w.start, 'udp', '127.0.0.1', 9));
  t.match(denied.resolution, { action: 'deny', reason: 'policy_denied' });
  t.notOk(s.sup.dp.getLease(parseDestination('udp', '127.0.0.1:9')), 'a deny installs nothing');

  // subject checks
  t.match((await s.submit(networkFault(s.op, w.pid, w.start + 1, 'tcp', '127.0.0.1', 8001))).resolution, { action: 'deny', reason: 'invalid_subject' }, 'wrong start_time');
  const me = networkFault(s.op, process.pid, 0, 'tcp', '127.0.0.1', 8001);
  const { readStartTimeTicks } = await import('../../src/resolver/subject');
  me.subject = { process: { pid: process.pid, start_time_ticks: readStartTimeTicks(process.pid)! } };
  t.match((await s.submit(me)).resolution, { action: 'deny', reason: 'subject_not_in_operation' }, 'a pid outside the cgroup');
  t.match((await s.submit(networkFault(s.op, 999999, 1, 'tcp', '127.0.0.1', 8001))).resolution, { action: 'deny', reason: 'invalid_subject' }, 'a pid that does not exist');
  const other = networkFault('no-such-operation', w.pid, w.start, 'tcp', '127.0.0.1', 8001);
  t.match((await s.submit(other)).resolution, { action: 'deny', reason: 'unknown_operation' }, 'an unknown operation');
  t.notOk(s.sup.dp.getLease(parseDestination('tcp', '127.0.0.1:8001')), 'no subject failure installed a lease');

  // the seven effect types without a backend
  const effects: Fault['effect'][] = [
    { file: { path: '/etc/shadow', access: 'read' } },
    { syscall: { name: 'socket', number: 41, capability: 'CAP_NET_RAW' } },
    { secret: { name: 'db-password', scope: 'prod' } },
    { cloud_iam: { provider: 'aws', action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/key' } },
    { application: { name: 'github', action: 'merge', target: 'main' } },
    { database: { engine: 'postgres', database: 'app', statement_class: 'ddl', table: 'users' } },
    { promotion: { artifact: 'image@sha256:abc', from_stage: 'staging', to_stage: 'prod' } },
  ];
  for (const effect of effects) {
    const f = { ...networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 1), effect };
    const r = await s.submit(f);
    t.match(r.resolution, { action: 'deny', reason: 'capability_fault_backend_unavailable' }, `${Object.keys(effect)[0]} → backend unavailable`);
  }

  // evidence: every fault has exactly one resolution, in order
  const lines = faultLines(s.stateDir, s.op);
  const faults = lines.filter((l) => l.kind === 'fault' && l.via === 'socket');
  const res = lines.filter((l) => l.kind === 'resolution');
  t.equal(faults.length, res.length, 'each fault line has its resolution line');
  t.equal(faults.length, 16, 'all 16 socket faults recorded');
  for (const f of faults) {
    const fi = lines.indexOf(f);
    const ri = lines.findIndex((l) => l.kind === 'resolution' && l.fault_id === f.fault_id);
    t.ok(ri > fi, `resolution after fault ${String(f.fault_id)}`);
  }
});

t.test('reject mode: EPERM from the hook becomes a fault; the retry succeeds', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-rj');
  const srv = await tcpServer(t);
  const unleasable = await freePort();
  const r = await probe(['--cgroup', s.cgroup, '--repeat', '40', '--interval', '25', '--until-ok', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(r.results[0].result, 'EPERM', 'first attempt meets the hook without a lease');
  t.equal(r.results[r.results.length - 1].result, 'ok', `a retry succeeds (after ${r.results.length} attempts)`);
  t.equal(srv.accepted() >= 1, true, 'the server saw the connection');
  // a destination the policy does not lease stays refused: the first refusal
  // is a recorded fault, the retries inside the hook's rate-limit window are counted
  const port53 = await probe(['--cgroup', s.cgroup, '--repeat', '3', '--interval', '20', 'connect', 'udp', '127.0.0.1', '9']);
  t.same(port53.results.map((x) => x.result), ['EPERM', 'EPERM', 'EPERM'], 'policy_denied destination stays EPERM');
  // a marker refusal after them: the ring is one FIFO and the loop records
  // in its order, so once the marker's resolution is in, any further fault
  // for udp :9 would be too
  const marker = await probe(['--cgroup', s.cgroup, 'connect', 'udp', '127.0.0.1', '10']);
  t.same(marker.results.map((x) => x.result), ['EPERM'], 'the marker, udp :10, is refused too');
  const portOf = (l: Record<string, unknown>) => (l.fault as { effect: { network: { port: number } } }).effect.network.port;
  await waitFor(() => {
    const ls = faultLines(s.stateDir, s.op);
    const resolved = (port: number) => {
      const f = ls.find((l) => l.kind === 'fault' && l.via === 'cgroup_hook' && portOf(l) === port);
      return f && ls.some((l) => l.kind === 'resolution' && l.fault_id === f.fault_id);
    };
    return resolved(9) && resolved(10);
  }, 10_000).catch(() => t.fail('the faults for udp :9 and the marker were never resolved'));
  const lines = faultLines(s.stateDir, s.op);
  const hook = lines.filter((l) => l.kind === 'fault' && l.via === 'cgroup_hook');
  const udp9 = hook.filter((l) => portOf(l) === 9);
  t.equal(udp9.length, 1, 'one hook fault for udp :9, whose three refusals fell in one window');
  t.ok(hook.filter((l) => portOf(l) !== 10).length >= 2, `hook faults recorded besides the marker's (${hook.length - 1})`);
  const resolved = lines.filter((l) => l.kind === 'resolution');
  t.ok(resolved.some((l) => (l.resolution as { action: string }).action === 'retry_after_lease'), 'a retry_after_lease was recorded');
  t.ok(resolved.some((l) => l.fault_id === udp9[0]?.fault_id && (l.resolution as { reason: string }).reason === 'policy_denied'), 'policy_denied recorded for udp :9');
  void unleasable;
});

t.test('reject mode: a process already gone is recorded as invalid_subject', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-rg');
  // probe exits right after its single connect; by the time the resolver reads
  // /proc it may or may not be gone — force it by pausing the loop's event delivery
  s.sup.dp.stopEvents();
  const r = await probe(['--cgroup', s.cgroup, 'connect', 'tcp', '127.0.0.1', '8123']);
  t.same(r.results.map((x) => x.result), ['EPERM']);
  // restart delivery: the event is still on the ring buffer; the process is gone
  const { startRejectLoop } = await import('../../src/resolver/rejectloop');
  const loop = startRejectLoop(s.sup.dp, s.sup.resolver, () => undefined);
  t.teardown(() => loop.stop());
  await waitFor(() => faultLines(s.stateDir, s.op).some((l) => l.kind === 'resolution'), 3000);
  await loop.idle();
  const res = faultLines(s.stateDir, s.op).filter((l) => l.kind === 'resolution');
  t.match(res[0], { resolution: { action: 'deny', reason: 'invalid_subject' } }, 'recorded deny invalid_subject');
});
