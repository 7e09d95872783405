// gensee ls [--json]: every operation in the state directory, its condition
// (an active one whose resolver is gone shows as resolver_gone, with the
// command that ends it), its hooks, its workload identity and its last
// event (the last line of events.jsonl: kind and time), and the watchdog's
// attention in force. The caller's own operations (owner_uid) by default;
// --all for every owner's. A state directory the caller may not read (a
// non-root user and root's /var/lib/gensee) is said, not an error.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, out, table } from './args';
import { GenseeError } from '../errors';
import { resolveStateDir, openOperation, isValidOpId, opDir, OPERATIONS_DIR, OperationRecord } from '../state/operation';
import { assertNoSymlinks } from '../state/fsutil';
import { hooksAttached } from '../dataplane';
import { Condition, operationCondition, conditionHint, resolverAlive, openAttentionOf, failedState } from './status';
import type { OpenAttention } from '../events/log';
import { LastEvent, lastEvent } from './events';
import { fdHolderState, type FdHolderState } from '../oci/fdkeep';

export const usage = 'usage: gensee ls [--all] [--json]';


interface Row {
  id: string;
  /** the record's owner (null: the record could not be read) */
  owner_uid: number | null;
  /** the record could not be read: its error code and message, and nothing else is known */
  error: { code: string; message: string } | null;
  condition: Condition | null;
  /** enforce or audit (null: the record could not be read) */
  mode: OperationRecord['mode'] | null;
  state: OperationRecord['state'] | null;
  resolver: OperationRecord['resolver'];
  resolver_alive: boolean;
  hooks_attached: boolean | null;
  workload: OperationRecord['workload'];
  cgroup: string | null;
  updated_at: string | null;
  stopped: OperationRecord['stopped'];
  hint: string | null;
  /** the last line of events.jsonl (null: none, or it could not be read) */
  last_event: LastEvent | null;
  /** the watchdog's attention lines in force (events.jsonl), oldest first */
  attention: OpenAttention[];
  /** an OCI operation's fds kept for a listener restart: 'kept' (the holder answers), 'lost' (a restart fails closed, ENOSYS); null: not kept */
  fd_holder: FdHolderState;
}

function attached(op: string): boolean | null {
  try {
    return hooksAttached(op);
  } catch {
    return null; // cannot tell (not root, no bpffs)
  }
}

function lastEventOf(stateDir: string, id: string): LastEvent | null {
  try {
    return lastEvent(opDir(stateDir, id));
  } catch {
    return null; // unreadable: the record's own error, if any, says why
  }
}

async function row(stateDir: string, id: string): Promise<Row> {
  let rec: OperationRecord;
  try {
    rec = await openOperation(stateDir, id);
  } catch (e) {
    const code = e instanceof GenseeError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'E_STATE');
    return { id, owner_uid: null, error: { code, message: (e as Error).message }, condition: null, mode: null, state: null, resolver: null, resolver_alive: false, hooks_attached: attached(id), workload: null, cgroup: null, updated_at: null, stopped: null, hint: null, last_event: lastEventOf(stateDir, id), attention: await openAttentionOf(stateDir, id), fd_holder: null };
  }
  const condition: Condition = failedState(stateDir, rec) ? 'failed' : operationCondition(rec);
  return {
    id,
    owner_uid: rec.owner_uid,
    error: null,
    condition,
    mode: rec.mode,
    state: rec.state,
    resolver: rec.resolver,
    resolver_alive: resolverAlive(rec),
    hooks_attached: attached(id),
    workload: rec.workload,
    cgroup: rec.cgroup,
    updated_at: rec.updated_at,
    stopped: rec.stopped,
    hint: conditionHint(condition, id, stateDir),
    last_event: lastEventOf(stateDir, id),
    attention: await openAttentionOf(stateDir, id),
    fd_holder: rec.state === 'active' ? fdHolderState(opDir(stateDir, id)) : null,
  };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { all: { type: 'boolean' }, json: { type: 'boolean' } }, false);
  const stateDir = resolveStateDir(values['state-dir']);
  const all = values.flags.has('all');
  const me = process.geteuid ? process.geteuid() : 0;
  const dir = path.join(stateDir, OPERATIONS_DIR);
  let names: string[] = [];
  /** the operations directory could not be read by this uid (EACCES): nothing of anyone's is visible */
  let unreadable: string | null = null;
  try {
    assertNoSymlinks(dir);
    names = fs.readdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ENOENT: no operation was ever created here
    if (code === 'EACCES' || code === 'EPERM') unreadable = `${dir} is not readable by uid ${me} (${code}): operations there are root's or another user's; yours are under the --state-dir you gave them`;
    else if (code !== 'ENOENT') throw e;
  }
  const every: Row[] = [];
  for (const name of names.filter(isValidOpId).sort()) every.push(await row(stateDir, name));
  // own: the owner is the caller; a record nobody could read is root's to see
  const own = (r: Row) => (r.owner_uid === null ? me === 0 && r.error?.code !== 'EACCES' : r.owner_uid === me);
  const rows = all ? every : every.filter(own);
  const others = every.length - rows.length;
  if (values.flags.has('json')) {
    out(JSON.stringify({ state_dir: stateDir, uid: me, all, other_owners: others, unreadable, operations: rows }));
    return 0;
  }
  if (unreadable) out(`note: ${unreadable}`);
  if (rows.length === 0) {
    out(`no operations${all ? '' : ` of uid ${me}`} in ${stateDir}${others ? ` (${others} of other owners: gensee ls --all)` : ''}`);
    return 0;
  }
  const hooks = (h: boolean | null) => (h === null ? '?' : h ? 'attached' : '-');
  const last = (e: LastEvent | null) => (e ? `${e.kind} ${e.at}` : '-');
  const att = (a: OpenAttention[]) => (a.length ? a.map((x) => `${x.signature}@events:${x.seq}`).join(',') : '-');
  out(table([
    ['OP', 'CONDITION', 'RESOLVER', 'HOOKS', 'FD HOLDER', 'WORKLOAD', 'UPDATED', 'LAST EVENT', 'ATTENTION', 'CGROUP'],
    ...rows.map((r) =>
      r.error
        ? [r.id, 'unreadable', '-', hooks(r.hooks_attached), '-', '-', '-', last(r.last_event), att(r.attention), `${r.error.code}: ${r.error.message}`]
        : [
            r.id,
            r.mode === 'audit' ? `${r.condition!} (audit)` : r.condition!,
            r.resolver ? `${r.resolver.pid} ${r.resolver_alive ? 'running' : 'gone'}` : '-',
            hooks(r.hooks_attached),
            r.fd_holder === 'lost' ? 'LOST (restart: ENOSYS)' : (r.fd_holder ?? '-'),
            r.workload ? `${r.workload.identity} ${r.workload.uid}:${r.workload.gid}` : '-',
            r.updated_at!,
            last(r.last_event),
            att(r.attention),
            r.cgroup!,
          ],
    ),
  ]));
  if (others) out(`${others} more operation${others === 1 ? '' : 's'} of other owners: gensee ls --all`);
  for (const r of rows) if (r.hint) out(`${r.id}: ${r.condition}; to end it: ${r.hint}`);
  for (const r of rows) if (r.fd_holder === 'lost') out(`${r.id}: its fd holder is gone: a restart of its listener leaves the container failing closed (ENOSYS)`);
  for (const r of rows) if (r.attention.length) out(`${r.id}: attention in force (${att(r.attention)}); a person clears it: gensee attention clear --op ${r.id}`);
  return 0;
}
