// gensee status --op ID [--json]: the operation, its condition (is anyone
// serving it?), its generation, live leases (from the kernel map when the
// hooks are pinned), totals, and the watchdog's attention in force.
import { buildIdentity, describeBuild } from '../version';
import { parse, requireOp, out, table } from './args';
import { resolveStateDir, openOperation, OperationRecord } from '../state/operation';
import { readNetwork } from '../state/network';
import { hooksAttached, DataPlane, bootNs } from '../dataplane';
import { leaseJson, leaseRow } from './lease';
import { identityAlive } from '../resolver/subject';
import { describeLimits } from '../resources';
import * as path from 'node:path';
import { opDir } from '../state/operation';
import { readOpenAttention, OpenAttention, EVENTS_FILE } from '../events/log';
import { fdHolderState } from '../oci/fdkeep';
import { readFailedMarker, readLiveFailedMarker, FailedMarker } from '../state/failed';

export const usage = 'usage: gensee status --op ID [--json]';

/**
 * What an operation is now, from its record and the process table:
 * - active: its recorded resolver (pid + start time) is running;
 * - resolver_gone: state active, but that resolver is no longer running
 *   (killed, crashed): hooks fail closed, nobody serves, nothing ends it;
 * - unserved: state active with no resolver recorded (a supervisor that
 *   exited cleanly and left the hooks pinned, failing closed);
 * - closed / stopped: as recorded.
 */
export type Condition = 'active' | 'failed' | 'resolver_gone' | 'unserved' | 'closed' | 'stopped';

/**
 * An active operation whose live resolver cannot write its evidence (the
 * failed state, src/supervisor.ts): what it says, or null.
 */
export function failedState(stateDir: string, rec: OperationRecord): FailedMarker | null {
  if (rec.state !== 'active' || !rec.resolver || !resolverAlive(rec)) return null;
  return readFailedMarker(stateDir, rec.id, rec.resolver.pid);
}

/** Is the recorded resolver that very process, still running? */
export function resolverAlive(rec: OperationRecord): boolean {
  return rec.resolver !== null && identityAlive(rec.resolver);
}

export function operationCondition(rec: OperationRecord): Condition {
  if (rec.state !== 'active') return rec.state;
  if (rec.resolver === null) return 'unserved';
  return resolverAlive(rec) ? 'active' : 'resolver_gone';
}

/** The command that ends an operation nobody serves (null for the others), --state-dir spelled out unless implied. */
export function conditionHint(c: Condition, op: string, stateDir: string): string | null {
  if (c !== 'resolver_gone' && c !== 'unserved') return null;
  return `gensee stop --op ${op}${stateDir === resolveStateDir() ? '' : ` --state-dir ${stateDir}`}`;
}

/** One line saying why an operation needs its hint. */
export function conditionWhy(c: Condition): string {
  if (c === 'resolver_gone') return 'its resolver is gone: the hooks fail closed, and nobody serves or ends the operation';
  if (c === 'unserved') return 'nobody serves it: the hooks fail closed (gensee supervise serves it again)';
  return '';
}

/** the attention lines in force (events.jsonl), oldest first; none when the file cannot be read */
export async function openAttentionOf(stateDir: string, op: string): Promise<OpenAttention[]> {
  try {
    return await readOpenAttention(path.join(opDir(stateDir, op), EVENTS_FILE));
  } catch {
    return []; // unreadable: gensee verify says why
  }
}

/** One line per attention in force, and how a person clears it. */
export function attentionLines(op: string, stateDir: string, open: readonly OpenAttention[]): string[] {
  if (!open.length) return [];
  const sd = stateDir === resolveStateDir() ? '' : ` --state-dir ${stateDir}`;
  return [
    ...open.map((a) => `attention in force: events:${a.seq} ${a.signature} (since ${a.at}): ${a.detail}`),
    `to clear it, a person runs: gensee attention clear --op ${op}${sd} [--by NAME] [--note TEXT]`,
  ];
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, json: { type: 'boolean' } }, false);
  const op = requireOp(values.op);
  const stateDir = resolveStateDir(values['state-dir']);
  let rec: OperationRecord;
  try {
    rec = await openOperation(stateDir, op);
  } catch (e) {
    // a disk that fails reads too: the failed state is still known (its marker is off the disk)
    const m = readLiveFailedMarker(stateDir, op);
    if (!m) throw e;
    if (values.flags.has('json')) out(JSON.stringify({ condition: 'failed', failed: m, record_error: (e as Error).message }));
    else out(`operation ${op}: failed (record unreadable: ${(e as Error).message})\nFAILED since ${m.since}: ${m.log}: ${m.error}; failing closed, resolver pid ${m.pid}`);
    return 1;
  }
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
  const alive = resolverAlive(rec);
  const failed = failedState(stateDir, rec);
  const condition: Condition = failed ? 'failed' : operationCondition(rec);
  const hint = conditionHint(condition, op, stateDir);
  const attention = await openAttentionOf(stateDir, op);
  // an OCI operation's seccomp fds: kept for a listener restart, or not any more (fails closed)
  const holder = rec.state === 'active' ? fdHolderState(opDir(stateDir, op)) : null;
  if (values.flags.has('json')) {
    out(JSON.stringify({ operation: rec, condition, ...(failed ? { failed } : {}), hint, generation: net.generation, hooks_attached: attached, resolver_alive: alive, fd_holder: holder, kernel_leases: leases.map(leaseJson), totals: rec.totals, attention }));
    return 0;
  }
  const now = bootNs();
  out(`operation ${rec.id}${rec.mode === 'audit' ? ' (AUDIT mode: what the policy denies is allowed and recorded audit_allowed)' : ''}: ${condition}${condition !== rec.state ? ` (recorded ${rec.state})` : ''}, owner uid ${rec.owner_uid}, cgroup ${rec.cgroup}`);
  out(`policy ${rec.policy_hash.slice(0, 16)}…, generation ${net.generation}, hooks ${attached ? 'attached' : 'NOT attached'}, resolver ${rec.resolver ? `pid ${rec.resolver.pid} ${alive ? 'running' : 'gone'}` : 'none'}`);
  if (holder === 'lost') out('fd holder LOST: a restart of its OCI listener leaves the container failing closed (ENOSYS); the running listener still serves it');
  else if (holder === 'kept') out('fd holder: kept (a restart of its OCI listener keeps the container\'s calls waiting, then serves them)');
  if (failed) out(`FAILED since ${failed.since}: ${failed.log}: ${failed.error}; failing closed (hooks attached, every request denied), the resolver retries the disk and resumes by itself`);
  out(`gensee ${rec.gensee ? describeBuild(rec.gensee) : 'version not recorded (an operation created before gensee recorded it)'}${rec.gensee && rec.gensee.version !== buildIdentity().version ? `; this is gensee ${buildIdentity().version}` : ''}`);
  if (rec.workload) out(`workload: ${rec.workload.identity}, host uid ${rec.workload.uid} gid ${rec.workload.gid}`);
  if (rec.resources) out(`limits (${rec.resources.layout} layout): ${describeLimits(rec.resources)}`);
  if (rec.stopped) out(`stopped at ${rec.stopped.at} by ${rec.stopped.by} (found ${rec.stopped.found})`);
  out(`totals: allow ${rec.totals.allow}, deny ${JSON.stringify(rec.totals.deny)}, lost events ${rec.totals.lost_events}`);
  out(table([['LEASE', 'GEN', 'EXPIRES IN', 'USES LEFT'], ...leases.map((l) => leaseRow(l, now))]));
  if (hint) out(`${condition}: ${conditionWhy(condition)}; to end it: ${hint}`);
  for (const l of attentionLines(op, stateDir, attention)) out(l);
  return 0;
}
