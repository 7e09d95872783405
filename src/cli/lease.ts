// gensee lease add|rm|ls --op ID [tcp|udp ADDR:PORT] [--ttl 30s] [--uses N]
import { parse, requireOp, out, parseDuration, parseCount, table } from './args';
import { parseDestination, formatTuple } from '../addr';
import { DataPlane, Lease, bootNs, leaseDestination } from '../dataplane';
import { leaseExpired } from '../abi';
import { GenseeError } from '../errors';
import * as path from 'node:path';
import { openOperation, opDir, resolveStateDir, OperationRecord } from '../state/operation';
import { LeaseRecord, findLease, withLease, readNetwork, withoutLease, updateNetwork, withGeneration } from '../state/network';
import { ChainedLog } from '../evidence/chain';
import { readStartTimeTicks } from '../resolver/subject';
import { controlRequestTo } from '../envelope/control';
import type { Tuple } from '../addr';

/**
 * Who keeps the record of an operation's leases:
 * - its running supervisor: the change goes through its control socket and
 *   becomes a generation with its counters harvested;
 * - its state directory, when no supervisor runs: the next supervisor
 *   reconciles the kernel against network.json, so a change is written there
 *   and to faults.jsonl before the kernel map sees it (a revocation made in
 *   the kernel alone would be re-installed by that reconcile);
 * - nobody (hooks attached with `gensee hooks attach`, no operation record):
 *   the kernel map is all there is, and a supervisor started later for the
 *   same pins removes every lease it has no record of.
 */
type Keeper = { kind: 'supervisor'; stateDir: string; rec: OperationRecord } | { kind: 'state'; stateDir: string } | { kind: 'bare' };

async function keeperOf(stateDirFlag: string | undefined, op: string): Promise<Keeper> {
  const stateDir = resolveStateDir(stateDirFlag);
  let rec;
  try {
    rec = await openOperation(stateDir, op);
  } catch (e) {
    if (e instanceof GenseeError && e.code === 'E_UNKNOWN_OP') return { kind: 'bare' };
    throw e;
  }
  if (rec.state !== 'active' || !rec.resolver || readStartTimeTicks(rec.resolver.pid) !== rec.resolver.start_time_ticks) return { kind: 'state', stateDir };
  return { kind: 'supervisor', stateDir, rec };
}

async function viaSupervisor(
  k: Extract<Keeper, { kind: 'supervisor' }>,
  op: string,
  t: Tuple,
  add: { ttl_ms: number; max_uses: number } | null,
  generation: bigint | null,
): Promise<Record<string, unknown>> {
  if (generation !== null) {
    throw new GenseeError('E_USAGE', `--generation: operation ${op} has a running supervisor, which numbers its own generations; leave it out`);
  }
  return controlRequestTo(
    k.stateDir,
    op,
    add
      ? { schema: 1, command: 'lease_add', protocol: t.protocol, address: t.address, port: t.port, ...add }
      : { schema: 1, command: 'lease_rm', protocol: t.protocol, address: t.address, port: t.port },
    k.rec,
  );
}

/** the lease as a faults.jsonl line names it */
function lineLease(l: LeaseRecord) {
  return { generation: l.generation, family: l.family, protocol: l.protocol, address: l.address, port: l.port, expires_at_boot_ns: l.expires_at_boot_ns, max_uses: l.max_uses };
}

async function appendFaultsLine(stateDir: string, op: string, fields: Record<string, unknown>): Promise<void> {
  const log = await ChainedLog.open(path.join(opDir(stateDir, op), 'faults.jsonl'));
  try {
    await log.append(fields);
  } finally {
    await log.close();
  }
}

/**
 * `lease rm` with no supervisor running. In this order, so that no crash
 * can leave a revocation the next supervisor undoes:
 *   1. network.json without the lease: from here no reconcile re-installs it
 *      (a lease still in the kernel then is unknown to the record, and the
 *      next supervisor removes it)
 *   2. {kind:"lease_revoked", by:"operator"} in faults.jsonl, through the
 *      chain: `gensee verify` covers it
 *   3. the kernel map
 */
async function revokeRecorded(stateDir: string, op: string, dp: DataPlane, t: Tuple): Promise<LeaseRecord> {
  const k = dp.getLease(t);
  let recorded: LeaseRecord | undefined = findLease(await readNetwork(stateDir, op), t);
  if (!recorded && !k) throw new GenseeError('E_USAGE', `no lease for ${formatTuple(t)} in operation ${op}`);
  await updateNetwork(stateDir, op, (rec) => {
    recorded = findLease(rec, t) ?? recorded;
    return withoutLease(rec, t);
  });
  const lease: LeaseRecord = recorded ?? {
    generation: Number(k!.generation),
    family: t.family,
    protocol: t.protocol,
    address: t.address,
    port: t.port,
    expires_at_boot_ns: String(k!.expiresBootNs),
    max_uses: 0,
    installed_at: new Date().toISOString(),
  };
  await appendFaultsLine(stateDir, op, { kind: 'lease_revoked', by: 'operator', lease: lineLease(lease), in_kernel: k !== null, in_record: recorded !== undefined });
  dp.removeLease(t);
  return lease;
}

/**
 * `lease add` with no supervisor running: recorded before the kernel holds it.
 *   1. {kind:"lease_added", by:"operator"} in faults.jsonl: the evidence
 *      never shows less than the kernel may hold
 *   2. network.json, with the lease's generation: the next supervisor
 *      keeps the lease (its reconcile matches the exact expiry)
 *   3. the kernel map, with that same expiry
 */
async function addRecorded(stateDir: string, op: string, dp: DataPlane, t: Tuple, ttlMs: number | null, maxUses: number, gen: bigint | null): Promise<Lease> {
  const net = await readNetwork(stateDir, op);
  const kernelGen = dp.listLeases().reduce((m, l) => (l.generation > m ? l.generation : m), 0n);
  const newest = kernelGen > BigInt(net.generation) ? kernelGen : BigInt(net.generation);
  const generation = Number(gen ?? newest + 1n);
  const expires = ttlMs ? bootNs() + BigInt(Math.round(ttlMs * 1e6)) : 0n;
  const rec: LeaseRecord = { generation, family: t.family, protocol: t.protocol, address: t.address, port: t.port, expires_at_boot_ns: String(expires), max_uses: maxUses, installed_at: new Date().toISOString() };
  withGeneration(net, generation, 'operator_lease'); // refused (E_USAGE) before anything is written
  await appendFaultsLine(stateDir, op, { kind: 'lease_added', by: 'operator', lease: lineLease(rec) });
  await updateNetwork(stateDir, op, (r) => withLease(withGeneration(r, generation, 'operator_lease'), rec));
  return dp.putLease({ tuple: t, generation: BigInt(generation), expiresBootNs: expires, maxUses });
}

export const usage = `usage: gensee lease add --op ID tcp|udp ADDR:PORT [--ttl 30s] [--uses N] [--generation N]
       gensee lease rm  --op ID tcp|udp ADDR:PORT
       gensee lease ls  --op ID [--json]
  IPv6 as [::1]:8080`;

export function leaseJson(l: Lease) {
  return { ...leaseDestination(l), expires_at_boot_ns: String(l.expiresBootNs), uses_left: l.usesLeft === null ? null : Number(l.usesLeft) };
}

/** a kernel lease as a table row: destination, generation, expires in, uses left (lease ls, status) */
export function leaseRow(l: Lease, now: bigint): string[] {
  const left = l.expiresBootNs === 0n ? 'never' : leaseExpired(l, now) ? 'expired' : `${(Number(l.expiresBootNs - now) / 1e9).toFixed(1)}s`;
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
    try {
      const keeper = await keeperOf(values['state-dir'], op);
      if (keeper.kind === 'supervisor') {
        const sup = await viaSupervisor(keeper, op, tuple, sub === 'add' ? { ttl_ms: ttlMs ?? 0, max_uses: uses } : null, gen);
        if (values.flags.has('json')) out(JSON.stringify(sup));
        else if (sub === 'add') out(`lease ${formatTuple(tuple)} installed by the supervisor of ${op} as generation ${String(sup.generation)}`);
        else out(`removed ${formatTuple(tuple)}: generation ${String(sup.revoked_generation)} revoked with ${String(sup.final_allow)} allowed calls`);
        return 0;
      }
      if (sub === 'rm') {
        if (keeper.kind === 'state') {
          await revokeRecorded(keeper.stateDir, op, dp, tuple);
          out(`removed ${formatTuple(tuple)}; recorded in network.json and faults.jsonl (no supervisor is running)`);
          return 0;
        }
        if (!dp.removeLease(tuple)) throw new GenseeError('E_USAGE', `no lease for ${formatTuple(tuple)} in operation ${op}`);
        out(`removed ${formatTuple(tuple)}`);
        return 0;
      }
      // An operator lease is its own generation: one past the newest installed.
      const l = keeper.kind === 'state'
        ? await addRecorded(keeper.stateDir, op, dp, tuple, ttlMs, uses, gen)
        : dp.putLease({ tuple, generation: gen ?? dp.listLeases().reduce((m, l) => (l.generation > m ? l.generation : m), 0n) + 1n, ttlMs, maxUses: uses });
      out(values.flags.has('json') ? JSON.stringify(leaseJson(l)) : `lease ${leaseRow(l, bootNs()).join('  ')}`);
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
        out(table([['DESTINATION', 'GEN', 'EXPIRES IN', 'USES LEFT'], ...leases.map((l) => leaseRow(l, now))]));
      }
      return 0;
    } finally {
      dp.close();
    }
  }
  throw new GenseeError('E_USAGE', usage);
}
