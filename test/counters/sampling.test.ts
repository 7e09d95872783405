// Acceptance: traffic to three leased and two unleased destinations for
// 5 seconds. counters.jsonl holds per-second deltas whose sums equal the
// calls made, per destination and per deny reason; the totals in
// network.json and operation.json equal those sums; the chain verifies.
import t from 'tap';
import * as path from 'node:path';
import { requireKernel, probe, tcpServer, udpServer, freePort, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault } from '../helpers/supervisor';
import { verifyLog } from '../../src/evidence/verify';
import { counterLines, readJson, sumDelta, matching, calls, type Line, tcpLeasePolicy } from './lib';

const POLICY = tcpLeasePolicy('1024-65535');

/** ms between the reading that wrote `l` and the one before it (readings are told apart by `at`) */
function sinceReading(lines: Line[], l: Line): number {
  const at = Date.parse(l.at);
  const prev = lines.filter((x) => x.seq < l.seq && Date.parse(x.at) < at).map((x) => Date.parse(x.at));
  return prev.length ? at - Math.max(...prev) : Infinity;
}

t.test('3 leased + 2 unleased destinations for 5 s: deltas sum to the calls made', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-cs');
  const w = await workload(t, s.cgroup);
  const servers = [await tcpServer(t), await tcpServer(t), await tcpServer(t)];
  for (const srv of servers) {
    const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port));
    t.equal(r.resolution.action, 'retry_after_lease', `leased tcp 127.0.0.1:${srv.port}`);
  }
  // unleased: outside the policy, so the reject loop answers policy_denied and they stay EPERM
  const deniedTcp = { proto: 'tcp', address: '127.0.0.2', port: await freePort() };
  const deniedUdp = { proto: 'udp', address: '127.0.0.1', port: (await udpServer(t)).port };

  const N = 250;
  const run = (op: string, proto: string, addr: string, port: number) =>
    probe(['--cgroup', s.cgroup, '--repeat', String(N), '--interval', '20', '--summary', op, proto, addr, String(port)], { timeoutMs: 60_000 });
  const started = Date.now();
  const [a, b, c, d, e] = await Promise.all([
    ...servers.map((srv) => run('connect', 'tcp', '127.0.0.1', srv.port)),
    run('connect', deniedTcp.proto, deniedTcp.address, deniedTcp.port),
    run('sendto', deniedUdp.proto, deniedUdp.address, deniedUdp.port),
  ]);
  t.ok(Date.now() - started >= 5000, `traffic ran ${Date.now() - started} ms`);
  for (const [i, r] of [a, b, c].entries()) t.same(r.summary, { ok: N, EPERM: 0, ECONNREFUSED: 0, EACCES: 0, ENOSYS: 0, ETIMEDOUT: 0, EINVAL: 0, other: 0 }, `leased #${i} all ok`);
  t.equal(d.summary?.EPERM, N, 'unleased tcp all EPERM');
  t.equal(e.summary?.EPERM, N, 'unleased udp all EPERM');

  // within about one period the last deltas are in the log
  const want = (lines: ReturnType<typeof counterLines>) =>
    servers.every((srv) => sumDelta(lines, { kind: 'allow', source: 'ebpf', address: '127.0.0.1', port: srv.port }) === N) &&
    sumDelta(lines, { kind: 'deny', source: 'ebpf', address: deniedTcp.address, port: deniedTcp.port, reason: 'no_lease' }) === N &&
    sumDelta(lines, { kind: 'deny', source: 'ebpf', protocol: 'udp', port: deniedUdp.port, reason: 'no_lease' }) === N;
  const lines = await waitFor(() => {
    const l = counterLines(s.stateDir, s.op);
    return want(l) ? l : null;
  }, 4000, 100).catch(() => counterLines(s.stateDir, s.op));

  for (const [i, srv] of servers.entries()) {
    const m = { kind: 'allow', source: 'ebpf', protocol: 'tcp', address: '127.0.0.1', port: srv.port };
    t.equal(sumDelta(lines, m), calls(([a, b, c][i]).summary), `leased #${i}: allow deltas sum to the ${N} calls`);
    const ls = matching(lines, m);
    const seconds = new Set(ls.map((l) => l.at));
    t.ok(seconds.size >= 4, `leased #${i}: ${ls.length} per-second lines over ${seconds.size} readings`);
    // a delta is what was counted since the previous reading: at one call
    // per ≥ 20 ms no more than that interval allows (however late the
    // reading ran), never a running total
    const over = ls.filter((l) => (l.delta as number) <= 0 || (l.delta as number) > Math.floor(sinceReading(lines, l) / 20) + 2);
    t.same(over.map((l) => `${l.delta} in ${sinceReading(lines, l)} ms`), [], 'each line holds the calls made since the previous reading (≤ 1 per 20 ms)');
    t.ok(ls.every((l) => typeof l.generation === 'number' && (l.generation as number) > 0), 'allow lines name their generation');
  }
  t.equal(sumDelta(lines, { kind: 'deny', address: deniedTcp.address, port: deniedTcp.port, reason: 'no_lease' }), N, 'unleased tcp: no_lease deltas sum to the calls');
  t.equal(sumDelta(lines, { kind: 'deny', protocol: 'udp', port: deniedUdp.port, reason: 'no_lease' }), N, 'unleased udp: no_lease deltas sum to the calls');
  t.equal(matching(lines, { kind: 'allow', address: deniedTcp.address }).length, 0, 'nothing unleased was allowed');
  t.equal(matching(lines, { kind: 'allow', protocol: 'udp' }).length, 0, 'nothing unleased was allowed (udp)');
  t.same(matching(lines, { kind: 'reset' }), [], 'no counter went backwards');

  // totals = sums of the deltas, in both records
  const allowSum = sumDelta(lines, { kind: 'allow', source: 'ebpf' });
  const noLease = sumDelta(lines, { kind: 'deny', source: 'ebpf', reason: 'no_lease' });
  t.equal(allowSum, 3 * N, 'all allows are ours');
  await waitFor(() => readJson(s.stateDir, s.op, 'operation.json').totals.allow === allowSum && readJson(s.stateDir, s.op, 'network.json').totals.allow === allowSum, 4000, 50).catch(() => undefined);
  for (const f of ['network.json', 'operation.json']) {
    const rec = readJson(s.stateDir, s.op, f);
    t.equal(rec.totals.allow, allowSum, `${f} totals.allow = Σ allow deltas`);
    t.equal(rec.totals.deny.no_lease, noLease, `${f} totals.deny.no_lease = Σ no_lease deltas`);
    t.equal(rec.totals.lost_events, sumDelta(lines, { kind: 'lost_events' }), `${f} totals.lost_events = Σ lost deltas`);
  }
  const gens = matching(lines, { kind: 'generation' });
  t.ok(gens.length >= 4, 'a start generation and one per lease');
  const rep = await verifyLog(path.join(s.stateDir, 'network-operations', s.op, 'counters.jsonl'));
  t.ok(rep.ok, `counters.jsonl chain verifies (${rep.lines} lines)`);
});
