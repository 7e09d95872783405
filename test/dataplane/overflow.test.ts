// A full counter map (e.g. a scan over every port) must not lose counts:
// what cannot be keyed by destination lands in the per-verdict aggregate,
// and the overflow itself is counted (counter_full).
import t from 'tap';
import { requireKernel, testOp, probe } from '../helpers/kernel';
import { VERDICTS } from '../../src/abi';

t.test('counter map full: per-reason totals stay exact', async (t) => {
  if (!requireKernel(t)) return;
  const { dp, cgroup } = testOp(t, 'gs-ovf');
  // 65,535 distinct ports on one address: the map holds 65,536 keys, one
  // aggregate per verdict among them, so the last (verdicts - 1) overflow;
  // 100 more on another address all overflow
  const aggregates = VERDICTS.length;
  const overflow = aggregates - 1 + 100;
  const a = await probe(['--cgroup', cgroup, '--repeat', '65535', 'bench-ports', 'tcp', '127.0.0.1', '1'], { timeoutMs: 120_000 });
  const b = await probe(['--cgroup', cgroup, '--repeat', '100', 'bench-ports', 'tcp', '127.0.0.2', '1000'], { timeoutMs: 60_000 });
  const ra = JSON.parse(a.raw.trim().split('\n')[1]) as { n: number; ok: number; refused: number; err: number };
  const rb = JSON.parse(b.raw.trim().split('\n')[1]) as { n: number; err: number };
  t.equal(ra.err, 65535, 'every call was refused (EPERM)');
  t.equal(rb.err, 100);
  const rows = dp.readCounters().filter((r) => r.verdict === 'no_lease');
  const total = rows.reduce((s, r) => s + Number(r.count), 0);
  t.equal(total, 65635, 'no_lease counts sum to the calls made, map full or not');
  const agg = rows.find((r) => r.aggregate);
  t.equal(Number(agg?.count ?? 0), overflow, 'the overflow landed in the no_lease aggregate');
  t.equal(dp.stats().counterFull, BigInt(overflow), 'and was counted as counter_full');
  t.equal(rows.filter((r) => !r.aggregate).length, 65536 - aggregates, 'the rest keyed by destination');
});
