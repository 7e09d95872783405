// gensee status --op ID [--json]: the operation, its generation, live leases
// (from the kernel map when the hooks are pinned) and totals.
import { parse, requireOp, out, table } from './args';
import { resolveStateDir, openOperation } from '../state/operation';
import { readNetwork } from '../state/network';
import { hooksAttached, DataPlane, bootNs } from '../dataplane';
import { formatTuple } from '../addr';
import { leaseJson } from './lease';
import { readStartTimeTicks } from '../resolver/subject';

export const usage = 'usage: gensee status --op ID [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, json: { type: 'boolean' } }, false);
  const op = requireOp(values.op);
  const stateDir = resolveStateDir(values['state-dir']);
  const rec = await openOperation(stateDir, op);
  const net = await readNetwork(stateDir, op);
  const attached = hooksAttached(op);
  let leases: ReturnType<DataPlane['listLeases']> = [];
  if (attached) {
    const dp = DataPlane.open(op);
    try {
      leases = dp.listLeases();
    } finally {
      dp.close();
    }
  }
  const resolverAlive =
    rec.resolver !== null && readStartTimeTicks(rec.resolver.pid) === rec.resolver.start_time_ticks;
  if (values.flags.has('json')) {
    out(JSON.stringify({ operation: rec, generation: net.generation, hooks_attached: attached, resolver_alive: resolverAlive, kernel_leases: leases.map(leaseJson), totals: rec.totals }));
    return 0;
  }
  const now = bootNs();
  out(`operation ${rec.id}: ${rec.state}, owner uid ${rec.owner_uid}, cgroup ${rec.cgroup}`);
  out(`policy ${rec.policy_hash.slice(0, 16)}…, generation ${net.generation}, hooks ${attached ? 'attached' : 'NOT attached'}, resolver ${rec.resolver ? `pid ${rec.resolver.pid} ${resolverAlive ? 'running' : 'gone'}` : 'none'}`);
  out(`totals: allow ${rec.totals.allow}, deny ${JSON.stringify(rec.totals.deny)}, lost events ${rec.totals.lost_events}`);
  out(table([['LEASE', 'GEN', 'EXPIRES IN', 'USES LEFT'], ...leases.map((l) => [
    formatTuple(l.tuple),
    String(l.generation),
    l.expiresBootNs === 0n ? 'never' : l.expiresBootNs <= now ? 'expired' : `${(Number(l.expiresBootNs - now) / 1e9).toFixed(1)}s`,
    l.usesLeft === null ? 'unlimited' : String(l.usesLeft),
  ])]));
  return 0;
}
