// gensee stop --op ID [--json]: end an operation for good, whatever became of
// its resolver (killed, crashed, still serving). In order:
//   1. read the record: unknown → E_UNKNOWN_OP; already stopped → say so, exit 0
//   2. kill the operation's cgroup and see it empty (killCgroupAndWait): the
//      workload dies while the hooks still bound it
//   3. end the recorded resolver if that very process (pid and start time) is
//      still alive: first give it a moment to let go on its own (a `gensee
//      run` or OCI session ends when its workload does), then SIGTERM, then
//      SIGKILL
//   4. close every fault the resolver left open (deny/abandoned, through the
//      chain: src/evidence/abandon.ts), so verify passes and says how many;
//      clear the watchdog's attention in force (attention_cleared by
//      operation_stopped): the operation ends for good
//   5. remove the cgroup directory: from here nothing can join it; then its
//      cgroup v1 limit cgroups, if any (src/resources.ts)
//   6. detach and unpin the hooks and maps; remove the nftables table
//   7. record the stop in operation.json: state "stopped", stopped {at, by, found}
// A step that fails leaves the later ones undone (hooks attached, failing
// closed, nothing recorded) and exits non-zero; running stop again resumes.
// Except writing: on a full or read-only disk the records that cannot be
// written (step 4's lines, step 7) are named on stderr, steps 5 and 6 still
// run, and the exit code is 3 (STOP_UNRECORDED); running stop again once
// the disk takes writes records them (a stopped record is not needed to
// re-run it: the operation is still recorded active).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, requireOp, out } from './args';
import { GenseeError } from '../errors';
import { killCgroupAndWait, removeEmptyCgroup } from '../cgroup';
import { limitCgroupsOf, removeLimitCgroups } from '../resources';
import { detachHooks } from '../dataplane';
import { pinDirFor } from '../bpffs';
import { nftTableName, nftTableExists, nftRemoveTable } from '../backends/nft';
import { resolveStateDir, openOperation, updateOperation, opDir, OperationRecord, ResolverIdentity, StopFound } from '../state/operation';
import { ChainedLog } from '../evidence/chain';
import { closeOpenFaults } from '../evidence/abandon';
import { EventLog, EVENTS_FILE } from '../events/log';
import { operationCondition } from './status';
import { identityAlive } from '../resolver/subject';
import { readAnyFailedMarker, clearFailedMarker, FailedMarker } from '../state/failed';

export const usage = 'usage: gensee stop --op ID [--json]';

/** exit code: everything stopped and removed, but the record could not be (fully) written (a full or read-only disk) */
export const STOP_UNRECORDED = 3;

/** how long a live resolver gets to let go of the operation by itself once its workload is dead */
const LET_GO_MS = 2000;
/** how long it gets after SIGTERM, then after SIGKILL */
const TERM_MS = 5000;
const KILL_MS = 2000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Step 1's verdict on the resolver, recorded in step 6. */
function found(rec: OperationRecord): StopFound {
  const c = operationCondition(rec);
  if (c === 'closed') return 'closed';
  if (c === 'active') return 'resolver_running';
  if (c === 'resolver_gone') return 'resolver_gone';
  return 'no_resolver';
}

/** Does the operation record still name r as its resolver? (A resolver that stops clears it.) */
async function stillHeldBy(stateDir: string, op: string, r: ResolverIdentity): Promise<boolean> {
  const rec = await openOperation(stateDir, op);
  return rec.resolver !== null && rec.resolver.pid === r.pid && rec.resolver.start_time_ticks === r.start_time_ticks;
}

async function waitGone(r: ResolverIdentity, ms: number, holds: () => Promise<boolean> = async () => true): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (!identityAlive(r) || !(await holds())) return true;
    if (Date.now() >= end) return false;
    await sleep(20);
  }
}

/** Step 3. Signals only the recorded process, re-checked (pid and start time) right before each signal. */
async function endResolver(stateDir: string, op: string, r: ResolverIdentity): Promise<'let_go' | 'terminated' | 'killed' | 'gone'> {
  if (!identityAlive(r)) return 'gone';
  // a resolver that clears itself from the record has made its last write to
  // it; an OCI listener goes on serving other containers and is left alone
  if (await waitGone(r, LET_GO_MS, () => stillHeldBy(stateDir, op, r))) return 'let_go';
  if (!identityAlive(r)) return 'gone';
  process.kill(r.pid, 'SIGTERM');
  if (await waitGone(r, TERM_MS)) return 'terminated';
  if (identityAlive(r)) process.kill(r.pid, 'SIGKILL');
  if (await waitGone(r, KILL_MS)) return 'killed';
  throw new GenseeError('E_KERNEL', `resolver pid ${r.pid} of operation ${op} is still alive after SIGKILL; its cgroup is empty and its hooks still attached`);
}

/**
 * The record cannot be read (a disk that fails reads too): end what the
 * failed state's marker names — kill the cgroup and see it empty, end its
 * resolver, remove the cgroup, detach and unpin — and say that nothing
 * could be recorded (exit 3; run stop again once the disk is back).
 */
async function stopBlind(op: string, m: FailedMarker, why: string, json: boolean): Promise<number> {
  if (process.getuid && process.getuid() !== 0) throw new GenseeError('E_NOT_ROOT', 'gensee stop needs root (cgroup.kill, BPF pins)');
  await killCgroupAndWait(m.cgroup!);
  const r = { pid: m.pid, start_time_ticks: m.start_time_ticks ?? -1 };
  if (m.start_time_ticks !== undefined && identityAlive(r)) {
    process.kill(r.pid, 'SIGTERM');
    if (!(await waitGone(r, TERM_MS))) {
      if (identityAlive(r)) process.kill(r.pid, 'SIGKILL');
      await waitGone(r, KILL_MS);
    }
  }
  try {
    removeEmptyCgroup(m.cgroup!);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const hadPins = fs.existsSync(pinDirFor(op));
  try {
    detachHooks(op);
  } catch (e) {
    if (fs.existsSync(pinDirFor(op))) throw e;
  }
  const at = new Date().toISOString();
  process.stderr.write(`gensee: stopped operation ${op} (cgroup ${m.cgroup} killed and removed, ${hadPins ? 'hooks detached and unpinned' : 'no hooks were pinned'}), but its record cannot be read or written: ${why}\ngensee: run gensee stop again once the state disk is back\n`);
  if (json) out(JSON.stringify({ event: 'stopped_unrecorded', op, cgroup: m.cgroup, hooks_detached: hadPins, unrecorded: [`operation.json: ${why}`], at }));
  return STOP_UNRECORDED;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, json: { type: 'boolean' } }, false);
  const op = requireOp(values.op);
  const json = values.flags.has('json');
  const stateDir = resolveStateDir(values['state-dir']);

  // 1. the record
  let rec: OperationRecord;
  try {
    rec = await openOperation(stateDir, op);
  } catch (e) {
    // a disk that fails reads: the failed state's marker (off the disk) names the cgroup
    const m = e instanceof GenseeError && e.code === 'E_UNKNOWN_OP' ? null : readAnyFailedMarker(stateDir, op);
    if (!m) throw e;
    return stopBlind(op, m, (e as Error).message, json);
  }
  if (rec.state === 'stopped') {
    out(json ? JSON.stringify({ event: 'already_stopped', op, stopped: rec.stopped }) : `gensee: operation ${op} is already stopped (at ${rec.stopped!.at} by ${rec.stopped!.by}); nothing to do`);
    return 0;
  }
  if (process.getuid && process.getuid() !== 0) throw new GenseeError('E_NOT_ROOT', 'gensee stop needs root (cgroup.kill, BPF pins)');
  if (!path.isAbsolute(rec.cgroup)) throw new GenseeError('E_STATE', `operation ${op}: cgroup ${JSON.stringify(rec.cgroup)} in operation.json is not an absolute path`);
  const why = found(rec);

  // 2. kill, and see it empty
  const hadCgroup = fs.existsSync(rec.cgroup);
  await killCgroupAndWait(rec.cgroup);

  // 3. the resolver
  const resolver = rec.resolver ? await endResolver(stateDir, op, rec.resolver) : 'gone';

  // 4. faults nobody will answer now; the maps go in step 6, with any lease
  // an open fault's intent put there. Every log is opened, so a torn last
  // line (a crash, a full disk) is recorded in each. On a full or read-only
  // disk what cannot be recorded is said, and the stop goes on: killing,
  // detaching and unpinning need no space.
  let abandoned = 0;
  const unrecorded: string[] = [];
  const dir = opDir(stateDir, op);
  for (const file of ['faults.jsonl', 'counters.jsonl', 'events.jsonl', 'calls.jsonl']) {
    const p = path.join(dir, file);
    if (!fs.existsSync(p)) continue;
    let log: ChainedLog | null = null;
    try {
      log = await ChainedLog.open(p);
      if (file === 'faults.jsonl') abandoned = (await closeOpenFaults(log, resolver === 'killed' || resolver === 'terminated' ? 'operation_stopped' : 'resolver_died')).faults.length;
    } catch (e) {
      unrecorded.push(`${file}: ${(e as Error).message}`);
    } finally {
      await log?.close().catch(() => undefined);
    }
  }
  // the resolver is gone: nobody else writes events.jsonl now
  let attentionCleared = 0;
  if (fs.existsSync(path.join(opDir(stateDir, op), EVENTS_FILE))) {
    // a read-only disk refuses even the open: said, and the stop goes on
    try {
      const events = await EventLog.open(opDir(stateDir, op));
      try {
        attentionCleared = events.openAttentionSeqs.length;
        events.clearAttention('operation_stopped');
      } finally {
        await events.close();
      }
    } catch (e) {
      attentionCleared = 0;
      unrecorded.push(`${EVENTS_FILE} (attention cleared): ${(e as Error).message}`);
    }
  }

  // 5. the cgroup directory; a process moved in since step 2 is killed first
  try {
    removeEmptyCgroup(rec.cgroup);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EBUSY') throw e;
    await killCgroupAndWait(rec.cgroup);
    removeEmptyCgroup(rec.cgroup);
  }
  // and its cgroup v1 limit cgroups, which held only processes of the cgroup above
  await removeLimitCgroups(limitCgroupsOf(rec.resources));

  // 6. hooks, pins, nftables
  const hadPins = fs.existsSync(pinDirFor(op));
  try {
    detachHooks(op);
  } catch (e) {
    // a resolver that let go may be detaching the same pins right now
    if (fs.existsSync(pinDirFor(op))) throw e;
  }
  let nft = false;
  try {
    const table = nftTableName(op);
    if (await nftTableExists(table)) {
      await nftRemoveTable(table);
      nft = true;
    }
  } catch {
    /* no nft on this host: there is no table either */
  }

  // 7. the record, in one atomic write
  const at = new Date().toISOString();
  try {
    await updateOperation(stateDir, op, { state: 'stopped', resolver: null, stopped: { at, by: 'gensee_stop', found: why } });
  } catch (e) {
    unrecorded.push(`operation.json: ${(e as Error).message}`);
  }
  if (unrecorded.length === 0) clearFailedMarker(stateDir, op);
  if (unrecorded.length) {
    // killed, removed, detached and unpinned: only the record is short
    process.stderr.write(`gensee: stopped operation ${op} (cgroup killed and removed, hooks detached and unpinned), but could not record:\n${unrecorded.map((u) => `  ${u}\n`).join('')}gensee: run gensee stop again once the state disk takes writes\n`);
    if (json) out(JSON.stringify({ event: 'stopped_unrecorded', op, found: why, cgroup: rec.cgroup, hooks_detached: hadPins, faults_abandoned: abandoned, unrecorded, at }));
    return STOP_UNRECORDED;
  }

  if (json) {
    out(JSON.stringify({ event: 'stopped', op, found: why, cgroup: rec.cgroup, cgroup_removed: hadCgroup, resolver: rec.resolver ? { pid: rec.resolver.pid, ended: resolver } : null, faults_abandoned: abandoned, attention_cleared: attentionCleared, hooks_detached: hadPins, nft_removed: nft, at }));
  } else {
    const res = !rec.resolver ? 'no resolver recorded' : resolver === 'gone' ? `resolver pid ${rec.resolver.pid} was already gone` : resolver === 'let_go' ? `resolver pid ${rec.resolver.pid} let go with its workload` : `resolver pid ${rec.resolver.pid} ${resolver}`;
    out(`gensee: stopped operation ${op}: ${hadCgroup ? `cgroup ${rec.cgroup} killed and removed` : `cgroup ${rec.cgroup} was already gone`}; ${res}; ${abandoned ? `${abandoned} open fault(s) closed as abandoned; ` : ''}${attentionCleared ? `${attentionCleared} attention line(s) cleared; ` : ''}${hadPins ? 'hooks detached and unpinned' : 'no hooks were pinned'}${nft ? '; nftables table removed' : ''}; recorded in operation.json`);
  }
  return 0;
}
