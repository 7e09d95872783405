// gensee lease add|rm|ls --op ID [tcp|udp ADDR:PORT] [--ttl 30s] [--uses N]
import { parse, requireOp, out, parseDuration, parseCount, table } from './args';
import { parseDestination, formatTuple } from '../addr';
import { DataPlane, Lease, bootNs } from '../dataplane';
import { GenseeError } from '../errors';
import * as path from 'node:path';
import { openOperation, opDir, readKey, resolveStateDir } from '../state/operation';
import { readStartTimeTicks } from '../resolver/subject';
import { CONTROL_SOCKET, controlRequest } from '../counters/control';
import type { Tuple } from '../addr';

/**
 * When a supervisor runs the operation, a lease change goes through it (its
 * control socket), so it becomes a generation with its counters harvested;
 * without one, the kernel map is edited directly (a bare data plane).
 */
async function viaSupervisor(
  stateDirFlag: string | undefined,
  op: string,
  t: Tuple,
  add: { ttl_ms: number; max_uses: number } | null,
  generation: bigint | null,
): Promise<Record<string, unknown> | null> {
  const stateDir = resolveStateDir(stateDirFlag);
  let rec;
  try {
    rec = await openOperation(stateDir, op);
  } catch (e) {
    if (e instanceof GenseeError && e.code === 'E_UNKNOWN_OP') return null;
    throw e;
  }
  if (rec.state !== 'active' || !rec.resolver || readStartTimeTicks(rec.resolver.pid) !== rec.resolver.start_time_ticks) return null;
  if (generation !== null) {
    throw new GenseeError('E_USAGE', `--generation: operation ${op} has a running supervisor, which numbers its own generations; leave it out`);
  }
  const key = await readKey(stateDir, op);
  return controlRequest({
    socketPath: path.join(opDir(stateDir, op), CONTROL_SOCKET),
    key,
    resolver: rec.resolver,
    request: add
      ? { schema: 1, command: 'lease_add', protocol: t.protocol, address: t.address, port: t.port, ...add }
      : { schema: 1, command: 'lease_rm', protocol: t.protocol, address: t.address, port: t.port },
  });
}

export const usage = `usage: gensee lease add --op ID tcp|udp ADDR:PORT [--ttl 30s] [--uses N] [--generation N]
       gensee lease rm  --op ID tcp|udp ADDR:PORT
       gensee lease ls  --op ID [--json]
  IPv6 as [::1]:8080`;

export function leaseJson(l: Lease) {
  return {
    generation: Number(l.generation),
    family: l.tuple.family,
    protocol: l.tuple.protocol,
    address: l.tuple.address,
    port: l.tuple.port,
    expires_at_boot_ns: String(l.expiresBootNs),
    uses_left: l.usesLeft === null ? null : Number(l.usesLeft),
  };
}

function describe(l: Lease, now: bigint): string[] {
  const left = l.expiresBootNs === 0n ? 'never' : l.expiresBootNs <= now ? 'expired' : `${((Number(l.expiresBootNs - now)) / 1e9).toFixed(1)}s`;
  return [formatTuple(l.tuple), String(l.generation), left, l.usesLeft === null ? 'unlimited' : String(l.usesLeft)];
}

export async function run(argv: string[]): Promise<number> {
  const sub = argv[0];
  const { values, positionals } = parse(argv.slice(1), {
    op: { type: 'string' },
    ttl: { type: 'string' },
    uses: { type: 'string' },
    generation: { type: 'string' },
    json: { type: 'boolean' },
  });
  const op = requireOp(values.op);
  if (sub === 'add' || sub === 'rm') {
    if (positionals.length !== 2) throw new GenseeError('E_USAGE', usage);
    const tuple = parseDestination(positionals[0], positionals[1]);
    const ttlMs = values.ttl !== undefined ? parseDuration(values.ttl) : null;
    const uses = values.uses !== undefined ? parseCount(values.uses, '--uses') : 0;
    const gen = values.generation !== undefined ? BigInt(parseCount(values.generation, '--generation')) : null;
    const dp = DataPlane.open(op);
    const sup = await viaSupervisor(values['state-dir'], op, tuple, sub === 'add' ? { ttl_ms: ttlMs ?? 0, max_uses: uses } : null, gen).catch((e) => {
      dp.close();
      throw e;
    });
    if (sup) {
      dp.close();
      if (values.flags.has('json')) out(JSON.stringify(sup));
      else if (sub === 'add') out(`lease ${formatTuple(tuple)} installed by the supervisor of ${op} as generation ${String(sup.generation)}`);
      else out(`removed ${formatTuple(tuple)}: generation ${String(sup.revoked_generation)} revoked with ${String(sup.final_allow)} allowed calls`);
      return 0;
    }
    try {
      if (sub === 'rm') {
        if (!dp.removeLease(tuple)) throw new GenseeError('E_USAGE', `no lease for ${formatTuple(tuple)} in operation ${op}`);
        out(`removed ${formatTuple(tuple)}`);
        return 0;
      }
      // An operator lease is its own generation: one past the newest installed.
      const generation = gen ?? dp.listLeases().reduce((m, l) => (l.generation > m ? l.generation : m), 0n) + 1n;
      const l = dp.putLease({ tuple, generation, ttlMs, maxUses: uses });
      out(values.flags.has('json') ? JSON.stringify(leaseJson(l)) : `lease ${describe(l, bootNs()).join('  ')}`);
      return 0;
    } finally {
      dp.close();
    }
  }
  if (sub === 'ls') {
    const dp = DataPlane.open(op);
    try {
      const leases = dp.listLeases();
      if (values.flags.has('json')) {
        out(JSON.stringify(leases.map(leaseJson)));
      } else {
        const now = bootNs();
        out(table([['DESTINATION', 'GEN', 'EXPIRES IN', 'USES LEFT'], ...leases.map((l) => describe(l, now))]));
      }
      return 0;
    } finally {
      dp.close();
    }
  }
  throw new GenseeError('E_USAGE', usage);
}
