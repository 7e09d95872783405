// The operation record and its directory (DESIGN.md "State directory"):
//   <state>/network-operations/<OP>/   0700, no symlinks on the path
//     operation.json  0600, replaced atomically
//     key             0600, 32 random bytes, created once, never overwritten
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { GenseeError, isErrno } from '../errors';
import {
  assertNoSymlinks,
  assertPrivate,
  createFileExclusive,
  ensureDir0700,
  readFileNoFollowStat,
  trustedUids,
  withFileLock,
  writeFileAtomic,
} from './fsutil';
import { CounterTotals, arr, bad, isObject, isoTime, obj, oneOf, parseTotals, readRecordJson, recordText, str, uint, zeroTotals } from './record';
import { buildIdentity, type BuildIdentity } from '../version';
import { CGROUP_LAYOUTS, LIMIT_CONTROLLERS, LIMIT_SOURCES, type LimitRecord, type ResourcesRecord } from '../resources';

export type { CounterTotals } from './record';

export const DEFAULT_STATE_DIR = '/var/lib/gensee';
export const STATE_DIR_ENV = 'GENSEE_STATE_DIR';
export const OPERATIONS_DIR = 'network-operations';
export const OPERATION_FILE = 'operation.json';
export const KEY_FILE = 'key';
export const KEY_BYTES = 32;
export const OP_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** records are small; anything bigger is not ours */
export const MAX_RECORD_BYTES = 1 << 20;
const MAX_UID = 0xfffffffe;

export interface ResolverIdentity {
  pid: number;
  /** field 22 of /proc/PID/stat */
  start_time_ticks: number;
}

/**
 * active: being served or failing closed; closed: ended on its own (the
 * workload finished); stopped: ended by an operator (`gensee stop`), see
 * `stopped`.
 */
export type OperationState = 'active' | 'closed' | 'stopped';
export const OPERATION_STATES = ['active', 'closed', 'stopped'] as const;

/**
 * Who the workload's processes are on the host (DESIGN.md "The workload's
 * view"): mapped root of a user namespace, an operator-given --user, or host
 * uid 0 (--host-root). uid/gid are host ids. null when gensee did not start
 * the workload (supervise, OCI).
 */
export interface WorkloadIdentity {
  identity: 'userns' | 'user' | 'host_root';
  uid: number;
  gid: number;
}
export const WORKLOAD_IDENTITIES = ['userns', 'user', 'host_root'] as const;

/** What `gensee stop` found when it stopped the operation. */
export const STOP_FOUND = ['resolver_running', 'resolver_gone', 'no_resolver', 'closed'] as const;
export type StopFound = (typeof STOP_FOUND)[number];
export const STOP_BY = ['gensee_stop'] as const;

/** The record of a stop: set together with state 'stopped', and only then. */
export interface StopRecord {
  at: string;
  by: (typeof STOP_BY)[number];
  /**
   * resolver_running: a live resolver was stopped with it; resolver_gone: the
   * recorded resolver had died (hooks failing closed, nobody serving);
   * no_resolver: none was recorded (a supervisor that exited cleanly);
   * closed: the operation had closed, its leftovers were removed.
   */
  found: StopFound;
}

/** operation.json, schema 1. Keys are written in this order. */
export interface OperationRecord {
  schema: 1;
  id: string;
  owner_uid: number;
  cgroup: string;
  policy_hash: string;
  resolver: ResolverIdentity | null;
  /** absent in records written before it existed: read as null */
  workload: WorkloadIdentity | null;
  /** the cgroup's pids and memory limits as applied (src/resources.ts); null until set, and in records written before it existed */
  resources: ResourcesRecord | null;
  state: OperationState;
  /** absent in records written before it existed: read as null */
  stopped: StopRecord | null;
  created_at: string;
  updated_at: string;
  /** exact peer addresses (isolated netns) that belong to this operation */
  peers: string[];
  totals: CounterTotals;
  /** enforce, or audit (`gensee run --audit`: what the policy would deny gets a short lease, recorded audit_allowed); absent in records written before it existed: read as enforce */
  mode: OperationMode;
  /** the gensee that created the operation (or last reopened it): version and build commit; absent in records written before it existed: read as null */
  gensee: BuildIdentity | null;
}

export type OperationMode = 'enforce' | 'audit';

export interface OperationInit {
  id: string;
  owner_uid: number;
  cgroup: string;
  policy_hash: string;
  resolver?: ResolverIdentity | null;
  peers?: string[];
  /** default enforce */
  mode?: OperationMode;
}

export interface CreateOptions {
  /**
   * Reuse an existing operation (resolver restart): the new init values
   * replace cgroup, policy_hash, resolver and peers, state becomes 'active'
   * (a recorded stop is cleared), created_at and totals are kept, the key is
   * kept, and so is workload unless the operation was stopped (a stop kills
   * the processes it describes). The owner must match.
   */
  reopen?: boolean;
}

/** fields updateOperation may change; the rest are fixed at creation */
export type OperationPatch = Partial<Pick<OperationRecord, 'cgroup' | 'policy_hash' | 'resolver' | 'workload' | 'resources' | 'state' | 'stopped' | 'peers' | 'totals'>>;
const PATCHABLE = ['cgroup', 'policy_hash', 'resolver', 'workload', 'resources', 'state', 'stopped', 'peers', 'totals'] as const;

/** --state-dir flag > $GENSEE_STATE_DIR > /var/lib/gensee, made absolute. */
export function resolveStateDir(flag?: string): string {
  if (flag !== undefined) {
    if (flag === '') throw new GenseeError('E_USAGE', '--state-dir must not be empty');
    return path.resolve(flag);
  }
  const env = process.env[STATE_DIR_ENV];
  if (env) return path.resolve(env);
  return DEFAULT_STATE_DIR;
}

export function isValidOpId(id: unknown): id is string {
  return typeof id === 'string' && OP_ID_RE.test(id);
}

export function assertOpId(id: unknown): asserts id is string {
  if (!isValidOpId(id)) {
    throw new GenseeError('E_BAD_OP_ID', `bad operation id ${JSON.stringify(id)}: expected ${OP_ID_RE.source}`);
  }
}

/** <state>/network-operations/<id> (absolute; id validated) */
export function opDir(stateDir: string, id: string): string {
  assertOpId(id);
  return path.join(path.resolve(stateDir), OPERATIONS_DIR, id);
}

function resolverIdentity(v: unknown, where: string): ResolverIdentity | null {
  if (v === null) return null;
  const o = obj(v, where, ['pid', 'start_time_ticks']);
  return { pid: uint(o.pid, `${where}.pid`, 0x3fffffff), start_time_ticks: uint(o.start_time_ticks, `${where}.start_time_ticks`) };
}

const MAX_ID = 0xffffffff - 1;

function workloadIdentity(v: unknown, where: string): WorkloadIdentity | null {
  if (v === undefined || v === null) return null;
  const o = obj(v, where, ['identity', 'uid', 'gid']);
  return {
    identity: oneOf(o.identity, `${where}.identity`, WORKLOAD_IDENTITIES),
    uid: uint(o.uid, `${where}.uid`, MAX_ID),
    gid: uint(o.gid, `${where}.gid`, MAX_ID),
  };
}

function nullable<T>(v: unknown, f: (x: unknown) => T): T | null {
  return v === null ? null : f(v);
}

function limitRecord(v: unknown, where: string): LimitRecord {
  const o = obj(v, where, ['requested', 'source', 'applied', 'controller', 'cgroup', 'value', 'swap', 'reason']);
  if (typeof o.applied !== 'boolean') throw bad(`${where}.applied`, 'expected a boolean');
  return {
    requested: uint(o.requested, `${where}.requested`),
    source: oneOf(o.source, `${where}.source`, LIMIT_SOURCES),
    applied: o.applied,
    controller: nullable(o.controller, (x) => oneOf(x, `${where}.controller`, LIMIT_CONTROLLERS)),
    cgroup: nullable(o.cgroup, (x) => str(x, `${where}.cgroup`)),
    value: nullable(o.value, (x) => str(x, `${where}.value`, 64)),
    swap: nullable(o.swap, (x) => str(x, `${where}.swap`, 128)),
    reason: nullable(o.reason, (x) => str(x, `${where}.reason`)),
  };
}

function resourcesRecord(v: unknown, where: string): ResourcesRecord | null {
  if (v === undefined || v === null) return null;
  const o = obj(v, where, ['layout', 'pids', 'memory']);
  return { layout: oneOf(o.layout, `${where}.layout`, CGROUP_LAYOUTS), pids: limitRecord(o.pids, `${where}.pids`), memory: limitRecord(o.memory, `${where}.memory`) };
}

function stopRecord(v: unknown, where: string): StopRecord | null {
  if (v === undefined || v === null) return null;
  const o = obj(v, where, ['at', 'by', 'found']);
  return { at: isoTime(o.at, `${where}.at`), by: oneOf(o.by, `${where}.by`, STOP_BY), found: oneOf(o.found, `${where}.found`, STOP_FOUND) };
}

function buildRecord(v: unknown, where: string): BuildIdentity | null {
  if (v === undefined || v === null) return null;
  const o = obj(v, where, ['version', 'commit']);
  const commit = nullable(o.commit, (x) => str(x, `${where}.commit`, 64));
  if (commit !== null && !/^[0-9a-f]{7,64}$/.test(commit)) throw bad(`${where}.commit`, `not a git commit: ${JSON.stringify(commit)}`);
  return { version: str(o.version, `${where}.version`, 64), commit };
}

function peerList(v: unknown, where: string): string[] {
  return arr(v, where).map((p, i) => {
    if (typeof p !== 'string' || net.isIP(p) === 0) throw bad(`${where}[${i}]`, `not an IP address: ${JSON.stringify(p)}`);
    return p;
  });
}

/** Validate a parsed operation.json and return it with keys in record order. */
export function parseOperationRecord(v: unknown, where = OPERATION_FILE): OperationRecord {
  // workload, resources and stopped came later: a record without them is read as null
  const o = obj(v, where, ['schema', 'id', 'owner_uid', 'cgroup', 'policy_hash', 'resolver', 'state', 'created_at', 'updated_at', 'peers', 'totals'], ['workload', 'resources', 'stopped', 'mode', 'gensee']);
  if (o.schema !== 1) throw bad(`${where}.schema`, `unsupported schema ${JSON.stringify(o.schema)}`);
  if (!isValidOpId(o.id)) throw bad(`${where}.id`, `bad operation id ${JSON.stringify(o.id)}`);
  const state = oneOf(o.state, `${where}.state`, OPERATION_STATES);
  const stopped = stopRecord(o.stopped, `${where}.stopped`);
  // a stop is recorded with its state, in one write: one without the other is damage
  if ((state === 'stopped') !== (stopped !== null)) {
    throw bad(`${where}.stopped`, state === 'stopped' ? 'state is "stopped" but no stop is recorded' : `a stop is recorded but state is "${state}"`);
  }
  return {
    schema: 1,
    id: o.id,
    owner_uid: uint(o.owner_uid, `${where}.owner_uid`, MAX_UID),
    cgroup: str(o.cgroup, `${where}.cgroup`),
    policy_hash: str(o.policy_hash, `${where}.policy_hash`, 256),
    resolver: resolverIdentity(o.resolver, `${where}.resolver`),
    workload: workloadIdentity(o.workload, `${where}.workload`),
    resources: resourcesRecord(o.resources, `${where}.resources`),
    state,
    stopped,
    created_at: isoTime(o.created_at, `${where}.created_at`),
    updated_at: isoTime(o.updated_at, `${where}.updated_at`),
    peers: peerList(o.peers, `${where}.peers`),
    totals: parseTotals(o.totals, `${where}.totals`),
    mode: o.mode === undefined || o.mode === null ? 'enforce' : oneOf(o.mode, `${where}.mode`, ['enforce', 'audit'] as const),
    gensee: buildRecord(o.gensee, `${where}.gensee`),
  };
}

function initError(e: unknown): never {
  // caller input, not a damaged record: exit 2 and a usage-class code
  if (e instanceof GenseeError && e.code === 'E_STATE') throw new GenseeError('E_USAGE', e.message);
  throw e;
}

function checkOpDirStat(dir: string, id: string): fs.Stats {
  assertNoSymlinks(dir);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') throw new GenseeError('E_UNKNOWN_OP', `unknown operation ${id}: no ${dir}`);
    throw e;
  }
  if (!st.isDirectory()) throw new GenseeError('E_NOT_FILE', `not a directory: ${dir}`);
  if ((st.mode & 0o077) !== 0) {
    throw new GenseeError('E_BAD_MODE', `${dir} has mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}, expected 0700`);
  }
  return st;
}

/**
 * The operation directory, checked: no symlinks on the path, a directory,
 * no group/other bits. Missing → E_UNKNOWN_OP. For modules that keep files
 * beside operation.json (network.json, the JSONL logs).
 */
export function checkOpDir(stateDir: string, id: string): string {
  const dir = opDir(stateDir, id);
  checkOpDirStat(dir, id);
  return dir;
}

async function readKeyAt(file: string): Promise<Buffer> {
  assertNoSymlinks(file);
  const { data, stat } = await readFileNoFollowStat(file, 4096);
  assertPrivate(stat, file);
  if (data.length !== KEY_BYTES) throw bad(file, `key is ${data.length} bytes, expected ${KEY_BYTES}`);
  return data;
}

/** the key is created once and never overwritten: an existing key is only validated */
async function ensureKey(dir: string): Promise<void> {
  const file = path.join(dir, KEY_FILE);
  if (!(await createFileExclusive(file, randomBytes(KEY_BYTES), 0o600))) await readKeyAt(file);
}

async function readRecordIn(dir: string, id: string): Promise<OperationRecord> {
  const file = path.join(dir, OPERATION_FILE);
  const got = await readRecordJson(file, MAX_RECORD_BYTES);
  if (!got) throw new GenseeError('E_UNKNOWN_OP', `unknown operation ${id}: no ${file}`);
  const rec = parseOperationRecord(got.json, file);
  if (rec.id !== id) throw bad(file, `record is for operation "${rec.id}", not "${id}"`);
  return rec;
}

/**
 * Create an operation: directory 0700, key (once), operation.json 0600.
 * An existing operation.json → E_OP_EXISTS unless opts.reopen.
 */
export async function createOperation(stateDir: string, init: OperationInit, opts: CreateOptions = {}): Promise<OperationRecord> {
  assertOpId(init?.id);
  const now = new Date().toISOString();
  let fresh: OperationRecord;
  try {
    fresh = parseOperationRecord(
      {
        schema: 1,
        id: init.id,
        owner_uid: init.owner_uid,
        cgroup: init.cgroup,
        policy_hash: init.policy_hash,
        resolver: init.resolver ?? null,
        workload: null,
        resources: null,
        state: 'active',
        stopped: null,
        created_at: now,
        updated_at: now,
        peers: init.peers ?? [],
        totals: zeroTotals(),
        mode: init.mode ?? 'enforce',
        gensee: buildIdentity(),
      },
      'operation',
    );
  } catch (e) {
    initError(e);
  }
  const dir = opDir(stateDir, init.id);
  const file = path.join(dir, OPERATION_FILE);
  return withFileLock(file, async () => {
    ensureDir0700(path.dirname(dir));
    ensureDir0700(dir, { allowUids: [fresh.owner_uid] });
    let existing: OperationRecord | null = null;
    try {
      existing = await readRecordIn(dir, init.id);
    } catch (e) {
      if (!(e instanceof GenseeError && e.code === 'E_UNKNOWN_OP')) throw e;
    }
    if (existing && !opts.reopen) throw new GenseeError('E_OP_EXISTS', `operation ${init.id} already exists in ${dir}`);
    if (existing && existing.owner_uid !== fresh.owner_uid) {
      throw new GenseeError('E_OP_EXISTS', `operation ${init.id} exists and belongs to uid ${existing.owner_uid}, not ${fresh.owner_uid}`);
    }
    // key before record: a record on disk always has its key
    await ensureKey(dir);
    if (existing) {
      const rec: OperationRecord = {
        ...fresh,
        created_at: existing.created_at,
        workload: existing.state === 'stopped' ? null : existing.workload,
        resources: existing.state === 'stopped' ? null : existing.resources,
        totals: existing.totals,
      };
      // nothing but updated_at would change (gensee run's supervisor reopens
      // the record run made a moment before): the durable record stands, and
      // the rewrite's two fdatasyncs are not paid on the way to the workload
      if (isDeepStrictEqual({ ...rec, updated_at: existing.updated_at }, existing)) return existing;
      await writeFileAtomic(file, recordText(rec));
      return rec;
    }
    if (!(await createFileExclusive(file, recordText(fresh)))) {
      throw new GenseeError('E_OP_EXISTS', `operation ${init.id} was created concurrently in ${dir}`);
    }
    return fresh;
  });
}

/**
 * Read an operation, checking the path has no symlinks, the directory is 0700
 * and owned by root/us/the operation owner, operation.json and key are 0600
 * and owned by root/us. Unknown → E_UNKNOWN_OP. Loose modes are refused
 * (E_BAD_MODE), never fixed, on this read path.
 */
export async function openOperation(stateDir: string, id: string): Promise<OperationRecord> {
  const dir = opDir(stateDir, id);
  const st = checkOpDirStat(dir, id);
  const rec = await readRecordIn(dir, id);
  const uids = trustedUids([rec.owner_uid]);
  if (!uids.includes(st.uid)) throw new GenseeError('E_BAD_MODE', `${dir} is owned by uid ${st.uid}, expected one of ${uids.join(', ')}`);
  const keyFile = path.join(dir, KEY_FILE);
  let kst: fs.Stats;
  try {
    kst = fs.lstatSync(keyFile);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') throw bad(keyFile, 'missing');
    throw e;
  }
  if (kst.isSymbolicLink()) throw new GenseeError('E_SYMLINK', `refusing symlink at ${keyFile}`);
  if (!kst.isFile()) throw new GenseeError('E_NOT_FILE', `not a regular file: ${keyFile}`);
  assertPrivate(kst, keyFile);
  return rec;
}

/**
 * Apply a patch (or a function of the current record returning one) and
 * replace operation.json atomically. Read-modify-write is serialized per
 * operation in this process, so a function patch (e.g. adding to totals)
 * never loses an update. updated_at is set here.
 */
export async function updateOperation(
  stateDir: string,
  id: string,
  patch: OperationPatch | ((rec: OperationRecord) => OperationPatch),
): Promise<OperationRecord> {
  const dir = opDir(stateDir, id);
  const file = path.join(dir, OPERATION_FILE);
  return withFileLock(file, async () => {
    const cur = await openOperation(stateDir, id);
    const p = typeof patch === 'function' ? patch(cur) : patch;
    if (!isObject(p)) throw new GenseeError('E_USAGE', 'operation patch must be an object');
    for (const k of Object.keys(p)) {
      if (!(PATCHABLE as readonly string[]).includes(k)) throw new GenseeError('E_USAGE', `operation field "${k}" cannot be changed`);
    }
    let next: OperationRecord;
    try {
      next = parseOperationRecord({ ...cur, ...p, updated_at: new Date().toISOString() }, 'operation patch');
    } catch (e) {
      initError(e);
    }
    await writeFileAtomic(file, recordText(next));
    return next;
  });
}

/** Mark an operation closed (idempotent). */
export async function closeOperation(stateDir: string, id: string): Promise<OperationRecord> {
  return updateOperation(stateDir, id, { state: 'closed' });
}

/** The operation's 32-byte HMAC key (no symlinks, 0600, exact size). */
export async function readKey(stateDir: string, id: string): Promise<Buffer> {
  const dir = opDir(stateDir, id);
  checkOpDirStat(dir, id);
  try {
    return await readKeyAt(path.join(dir, KEY_FILE));
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') throw new GenseeError('E_UNKNOWN_OP', `unknown operation ${id}: no key in ${dir}`);
    throw e;
  }
}
