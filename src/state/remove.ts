// Freeing an operation id (`gensee rm`, `gensee prune`): an operation that
// has ended (closed or stopped, nothing left in the kernel, nobody in its
// cgroup) leaves network-operations/, so its id can be used again. Its
// evidence is kept, archived or deleted, as the operator says:
//   keep     <state>/archived-operations/<ID>@<created_at>/   (the default)
//   archive  DIR/<ID>@<created_at>/                            (--archive DIR)
//   delete   removed                                           (--delete-evidence)
// A kept or archived directory gets removed.json (when, by whom, from where).
// Every removal and every refusal is one line in <state>/housekeeping.jsonl.
//
// The order makes a race lose safely: the record is checked, the directory
// is renamed out of network-operations/ in one step (the id is free from
// here), and the moved record is checked again; one that changed meanwhile
// (a resolver reopened it) is put back and the removal refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GenseeError, isErrno } from '../errors';
import { assertNoSymlinks, assertPrivate, createFileExclusive, ensureDir0700, fsyncDirSync } from './fsutil';
import { readRecordJson, recordText } from './record';
import { MAX_RECORD_BYTES, OPERATIONS_DIR, OPERATION_FILE, OperationRecord, assertOpId, openOperation, opDir, parseOperationRecord } from './operation';
import { identityAlive } from '../resolver/subject';
import { buildIdentity } from '../version';

export const ARCHIVE_DIR = 'archived-operations';
export const HOUSEKEEPING_LOG = 'housekeeping.jsonl';
export const REMOVED_FILE = 'removed.json';

export type EvidenceFate = 'keep' | 'archive' | 'delete';

export interface RemoveRequest {
  evidence: EvidenceFate;
  /** with evidence 'archive': where the directory goes (absolute, no symlinks; created 0700 if missing) */
  archiveTo?: string;
  /** check everything, change nothing */
  dryRun?: boolean;
  /** the command, for the record */
  by: 'gensee rm' | 'gensee prune';
  /** can the caller tell whether the hooks are attached? null: cannot (not root) */
  hooksAttached?: (op: string) => boolean | null;
}

export interface Removed {
  op: string;
  owner_uid: number;
  state: OperationRecord['state'];
  /** when it ended: stopped.at, else updated_at */
  ended_at: string;
  evidence: EvidenceFate;
  /** where the evidence now is (null: deleted) */
  to: string | null;
  dry_run: boolean;
}

function euid(): number {
  return process.geteuid ? process.geteuid() : 0;
}

/** When an operation ended: its stop, else its last update. */
export function endedAt(rec: OperationRecord): string {
  return rec.stopped?.at ?? rec.updated_at;
}

function cgroupHasProcesses(cgroup: string): boolean {
  if (!path.isAbsolute(cgroup)) return false;
  try {
    return fs.readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8').trim() !== '';
  } catch {
    return false; // gone (or not a cgroup): nothing runs in it
  }
}

/**
 * Why this operation may not be removed now (null: it may). Live means:
 * recorded active (served, or failing closed with nobody serving), a
 * resolver recorded and still that very process, hooks still attached, or
 * processes still in its cgroup.
 */
export function liveReason(rec: OperationRecord, hooks: boolean | null, stateDirHint: string): string | null {
  const stop = `gensee stop --op ${rec.id}${stateDirHint}`;
  if (rec.state === 'active') {
    if (rec.resolver && identityAlive(rec.resolver)) return `operation ${rec.id} is live: served by pid ${rec.resolver.pid}; end it first: ${stop}`;
    return `operation ${rec.id} is recorded active (its hooks fail closed and nobody serves it); end it first: ${stop}`;
  }
  if (rec.resolver && identityAlive(rec.resolver)) return `operation ${rec.id} is ${rec.state} but its resolver, pid ${rec.resolver.pid}, still runs; end it first: ${stop}`;
  if (hooks === true) return `operation ${rec.id} is ${rec.state} but its hooks are still attached; remove them first: ${stop}`;
  if (cgroupHasProcesses(rec.cgroup)) return `operation ${rec.id} is ${rec.state} but processes remain in its cgroup ${rec.cgroup}; end them first: ${stop}`;
  return null;
}

/** "2026-12-02T17:51:26.123Z" → "20261202T175126.123Z": a directory name without colons */
function stamp(iso: string): string {
  return iso.replace(/[-:]/g, '');
}

/** a name in dir not taken yet: base, base.1, base.2, … */
function freeName(dir: string, base: string): string {
  for (let i = 0; ; i++) {
    const p = path.join(dir, i === 0 ? base : `${base}.${i}`);
    try {
      fs.lstatSync(p);
    } catch (e) {
      if (isErrno(e) && e.code === 'ENOENT') return p;
      throw e;
    }
  }
}

/** The archive directory an operator named: absolute, no symlinks, not inside the state's operations. */
export function checkArchiveDir(stateDir: string, dir: string): string {
  if (dir === '') throw new GenseeError('E_USAGE', '--archive DIR must not be empty');
  const abs = path.resolve(dir);
  assertNoSymlinks(abs);
  const ops = path.join(path.resolve(stateDir), OPERATIONS_DIR);
  if (abs === ops || abs.startsWith(ops + path.sep)) {
    throw new GenseeError('E_USAGE', `--archive ${abs} is inside ${ops}: the evidence must leave the operations directory`);
  }
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return abs; // created 0700 when the first operation is archived
    throw e;
  }
  if (!st.isDirectory()) throw new GenseeError('E_NOT_FILE', `--archive ${abs} is not a directory`);
  return abs;
}

async function readMoved(dir: string): Promise<OperationRecord | null> {
  const got = await readRecordJson(path.join(dir, OPERATION_FILE), MAX_RECORD_BYTES);
  return got ? parseOperationRecord(got.json, path.join(dir, OPERATION_FILE)) : null;
}

/** Move a directory to dest: a rename, or across filesystems a copy and then a removal. */
function moveDir(from: string, dest: string): void {
  try {
    fs.renameSync(from, dest);
    return;
  } catch (e) {
    if (!(isErrno(e) && e.code === 'EXDEV')) throw e;
  }
  fs.cpSync(from, dest, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true, preserveTimestamps: true });
  fs.rmSync(from, { recursive: true });
}

/**
 * Remove an ended operation from network-operations/ (see the top of the
 * file). Throws E_OP_LIVE for a live one, E_NOT_OWNER for another user's
 * (unless root), E_UNKNOWN_OP / E_BAD_OP_ID / E_SYMLINK / E_STATE as
 * openOperation does; nothing is changed then.
 */
export async function removeOperation(stateDir: string, id: string, req: RemoveRequest): Promise<Removed> {
  assertOpId(id);
  const state = path.resolve(stateDir);
  const me = euid();
  let rec: OperationRecord;
  try {
    rec = await openOperation(state, id);
  } catch (e) {
    if (isErrno(e) && (e.code === 'EACCES' || e.code === 'EPERM') && !(e instanceof GenseeError)) {
      throw new GenseeError('E_NOT_OWNER', `operation ${id} in ${state} is not readable by uid ${me} (${e.code}): only its owner or root removes it`);
    }
    throw e;
  }
  if (me !== 0 && rec.owner_uid !== me) {
    throw new GenseeError('E_NOT_OWNER', `operation ${id} belongs to uid ${rec.owner_uid}, not to you (uid ${me}); only its owner or root removes it`);
  }
  const hint = state === '/var/lib/gensee' ? '' : ` --state-dir ${state}`;
  const hooks = req.hooksAttached ? req.hooksAttached(id) : null;
  const why = liveReason(rec, hooks, hint);
  if (why) throw new GenseeError('E_OP_LIVE', why);
  const archiveTo = req.evidence === 'archive' ? checkArchiveDir(state, req.archiveTo ?? '') : null;
  const base = `${id}@${stamp(rec.created_at)}`;
  const result: Removed = { op: id, owner_uid: rec.owner_uid, state: rec.state, ended_at: endedAt(rec), evidence: req.evidence, to: null, dry_run: !!req.dryRun };
  if (req.dryRun) {
    result.to = req.evidence === 'delete' ? null : path.join(archiveTo ?? path.join(state, ARCHIVE_DIR), base);
    return result;
  }

  // 1. out of network-operations/ in one rename: the id is free from here
  const src = opDir(state, id);
  const kept = path.join(state, ARCHIVE_DIR);
  ensureDir0700(kept);
  const staged = freeName(kept, base);
  fs.renameSync(src, staged);
  fsyncDirSync(path.dirname(src));
  // 2. the record as moved: one changed since the check (reopened, restarted) goes back
  let moved: OperationRecord | null = null;
  try {
    moved = await readMoved(staged);
  } catch {
    moved = null;
  }
  if (!moved || moved.updated_at !== rec.updated_at || moved.state !== rec.state) {
    let back = false;
    try {
      fs.lstatSync(src);
    } catch (e) {
      if (isErrno(e) && e.code === 'ENOENT') {
        fs.renameSync(staged, src);
        back = true;
      }
    }
    throw new GenseeError(
      'E_OP_LIVE',
      `operation ${id} changed while it was being removed (${moved ? `now ${moved.state}, updated ${moved.updated_at}` : 'its record is gone'}); ${back ? 'it was put back' : `its directory is kept at ${staged}`}`,
    );
  }
  // 3. the evidence's fate
  if (req.evidence === 'delete') {
    fs.rmSync(staged, { recursive: true });
    fsyncDirSync(kept);
    return result;
  }
  const note = { op: id, removed_at: new Date().toISOString(), by: req.by, by_uid: me, from: src, owner_uid: rec.owner_uid, state: rec.state, ended_at: result.ended_at, gensee: buildIdentity() };
  await createFileExclusive(path.join(staged, REMOVED_FILE), recordText(note));
  if (archiveTo) {
    ensureDir0700(archiveTo);
    const dest = freeName(archiveTo, path.basename(staged));
    moveDir(staged, dest);
    fsyncDirSync(archiveTo);
    result.to = dest;
  } else {
    result.to = staged;
  }
  return result;
}

export interface HousekeepingLine {
  action: 'rm' | 'prune';
  op: string | null;
  /** removed, or refused with a code */
  outcome: 'removed' | 'refused' | 'dry_run';
  evidence?: EvidenceFate;
  to?: string | null;
  code?: string;
  message?: string;
}

/**
 * One line in <state>/housekeeping.jsonl (0600, appended, synced). Best
 * effort: returns why it could not be written (the state directory missing
 * or not ours), null when it was.
 */
export function recordHousekeeping(stateDir: string, line: HousekeepingLine): string | null {
  const state = path.resolve(stateDir);
  const file = path.join(state, HOUSEKEEPING_LOG);
  let fd: number;
  try {
    assertNoSymlinks(file);
    fs.lstatSync(state); // a refusal never creates a state directory
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    return isErrno(e) ? `${e.code ?? 'error'}: ${file}` : (e as Error).message;
  }
  try {
    assertPrivate(fs.fstatSync(fd), file);
    fs.writeSync(fd, JSON.stringify({ at: new Date().toISOString(), by_uid: euid(), ...line }) + '\n');
    fs.fdatasyncSync(fd);
    return null;
  } catch (e) {
    return isErrno(e) ? `${e.code ?? 'error'}: ${file}` : (e as Error).message;
  } finally {
    fs.closeSync(fd);
  }
}
