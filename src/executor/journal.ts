// The executor's journal, <OP>/calls.jsonl (DESIGN.md "Delegated executor
// and keyed capabilities"): hash-chained like the other logs (ChainedLog),
// every line durable (fdatasync) before append() resolves, so a call's
// `started` line is on disk before its tool runs. Lines:
//   {"kind":"call","call_id","tool_id","class","args","key","request_id","state":"started"}
//   {"kind":"call_state","call_id","state":"completed|failed|indeterminate|recovered|not_found","detail"?}
// A call's state is its last line's. One writer at a time: <OP>/calls.lock
// (created O_EXCL, 0600) holds {"pid","start_time_ticks"} of the executor
// that has the journal open; a lock whose holder is gone (or whose pid now
// is another process) is stale and taken over.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GenseeError, isErrno } from '../errors';
import { ChainedLog } from '../evidence/chain';
import { opDir, checkOpDir } from '../state/operation';
import { identityAlive, readStartTimeTicks } from '../resolver/subject';

export const CALLS_FILE = 'calls.jsonl';
export const CALLS_LOCK = 'calls.lock';
/** how long open() waits for another executor to let go of the journal */
export const LOCK_WAIT_MS = 30_000;
/** an unreadable lock file this old is a holder that died while writing it */
const LOCK_WRITE_GRACE_MS = 5_000;
const LOCK_POLL_MS = 50;

export type CallClass = 'idempotent' | 'queryable' | 'unsafe';
export type CallState = 'started' | 'completed' | 'failed' | 'indeterminate' | 'recovered' | 'not_found';
export const CALL_STATES: readonly CallState[] = ['started', 'completed', 'failed', 'indeterminate', 'recovered', 'not_found'];
export const CALL_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$/;

export interface CallEntry {
  kind: 'call';
  call_id: string;
  tool_id: string;
  class: CallClass;
  args: Record<string, unknown>;
  key: string | null;
  request_id: string | null;
  state: 'started';
}

export interface CallRecord {
  entry: CallEntry;
  /** the state of the call's last line */
  state: CallState;
  detail: string | null;
}

interface LockHolder {
  pid: number;
  start_time_ticks: number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** the lock's holder, null when the file is not (yet) a holder record; throws ENOENT through */
function readHolder(file: string): { holder: LockHolder | null; text: string; mtimeMs: number } {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new GenseeError('E_NOT_FILE', `${file} is not a regular file`);
    const buf = Buffer.alloc(Math.min(st.size, 4096));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8');
    try {
      const v = JSON.parse(text) as unknown;
      if (isObject(v) && Number.isSafeInteger(v.pid) && Number.isSafeInteger(v.start_time_ticks)) {
        return { holder: { pid: v.pid as number, start_time_ticks: v.start_time_ticks as number }, text, mtimeMs: st.mtimeMs };
      }
    } catch {
      /* being written, or junk */
    }
    return { holder: null, text, mtimeMs: st.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

function tryCreateLock(file: string, me: LockHolder): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    if (isErrno(e) && e.code === 'EEXIST') return false;
    throw e;
  }
  try {
    fs.writeSync(fd, JSON.stringify({ ...me, at: new Date().toISOString() }));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Take a stale lock away: rename it aside (atomic: of two executors breaking
 * it at once, one moves it), and if what was moved is not the stale holder
 * read before (somebody took over meanwhile), put it back.
 */
function breakStale(file: string, staleText: string): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(file, aside);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return;
    throw e;
  }
  let moved = '';
  try {
    moved = fs.readFileSync(aside, 'utf8');
  } catch {
    /* gone: nothing to put back */
  }
  if (moved !== staleText) {
    try {
      fs.linkSync(aside, file);
    } catch {
      /* another one holds it now; theirs stands */
    }
  }
  fs.rmSync(aside, { force: true });
}

async function acquireLock(file: string, op: string, waitMs: number): Promise<LockHolder> {
  const start = readStartTimeTicks(process.pid);
  if (start === null) throw new GenseeError('E_STATE', 'cannot read this process start time from /proc');
  const me = { pid: process.pid, start_time_ticks: start };
  const deadline = Date.now() + waitMs;
  let last: LockHolder | null = null;
  for (;;) {
    if (tryCreateLock(file, me)) return me;
    try {
      const h = readHolder(file);
      last = h.holder;
      if (h.holder && h.holder.pid === me.pid && h.holder.start_time_ticks === me.start_time_ticks) {
        throw new GenseeError('E_STATE', `this process already holds the executor journal of ${op}`);
      }
      const stale = h.holder ? !identityAlive(h.holder) : Date.now() - h.mtimeMs > LOCK_WRITE_GRACE_MS;
      if (stale) {
        breakStale(file, h.text);
        continue;
      }
    } catch (e) {
      if (!(isErrno(e) && e.code === 'ENOENT')) throw e;
      continue; // released meanwhile
    }
    if (Date.now() >= deadline) {
      const who = last ? `pid ${last.pid}` : 'a process that is still writing it';
      throw new GenseeError('E_STATE', `the executor journal of operation ${op} is held by ${who} (${file}) for ${Math.round(waitMs / 1000)} s: another executor is running a call; try again when it ends`);
    }
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
}

function releaseLock(file: string, me: LockHolder): void {
  try {
    const h = readHolder(file);
    if (h.holder?.pid === me.pid && h.holder.start_time_ticks === me.start_time_ticks) fs.unlinkSync(file);
  } catch {
    /* gone already */
  }
}

function parseEntry(l: Record<string, unknown>): CallEntry | null {
  if (typeof l.call_id !== 'string' || typeof l.tool_id !== 'string' || !['idempotent', 'queryable', 'unsafe'].includes(l.class as string)) return null;
  if (!isObject(l.args)) return null;
  if (!(l.key === null || typeof l.key === 'string') || !(l.request_id === null || typeof l.request_id === 'string')) return null;
  return { kind: 'call', call_id: l.call_id, tool_id: l.tool_id, class: l.class as CallClass, args: l.args, key: l.key, request_id: l.request_id, state: 'started' };
}

/** The calls in a journal file, by call id, in journal order (a line that does not parse is skipped: `gensee verify` reports it). */
export function readCallsFile(file: string): Map<string, CallRecord> {
  const calls = new Map<string, CallRecord>();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return calls;
    throw e;
  }
  for (const raw of text.split('\n')) {
    if (!raw) continue;
    let l: unknown;
    try {
      l = JSON.parse(raw);
    } catch {
      continue;
    }
    if (!isObject(l)) continue;
    if (l.kind === 'call') {
      const e = parseEntry(l);
      if (e && !calls.has(e.call_id)) calls.set(e.call_id, { entry: e, state: 'started', detail: null });
    } else if (l.kind === 'call_state' && typeof l.call_id === 'string' && CALL_STATES.includes(l.state as CallState)) {
      const c = calls.get(l.call_id);
      if (c) {
        c.state = l.state as CallState;
        c.detail = typeof l.detail === 'string' ? l.detail : null;
      }
    }
  }
  return calls;
}

/** The operation's calls (read only; no lock). */
export function readCalls(stateDir: string, op: string): Map<string, CallRecord> {
  return readCallsFile(path.join(checkOpDir(stateDir, op), CALLS_FILE));
}

/** calls.jsonl open for appending, under calls.lock. */
export class CallJournal {
  private closed = false;
  private constructor(
    readonly op: string,
    private readonly log: ChainedLog,
    private readonly lockFile: string,
    private readonly me: LockHolder,
    private readonly byId: Map<string, CallRecord>,
  ) {}

  /** Take the journal's lock (waiting up to waitMs for another executor) and open it. */
  static async open(stateDir: string, op: string, opts: { waitMs?: number } = {}): Promise<CallJournal> {
    const dir = checkOpDir(stateDir, op);
    const lockFile = path.join(dir, CALLS_LOCK);
    const me = await acquireLock(lockFile, op, opts.waitMs ?? LOCK_WAIT_MS);
    try {
      const file = path.join(opDir(stateDir, op), CALLS_FILE);
      const log = await ChainedLog.open(file);
      if (log.torn) process.stderr.write(`gensee: ${file}: torn last line ${log.torn.line} (${log.torn.bytes} bytes) kept and recorded\n`);
      return new CallJournal(op, log, lockFile, me, readCallsFile(file));
    } catch (e) {
      releaseLock(lockFile, me);
      throw e;
    }
  }

  /** every call, by id, as of now */
  get calls(): ReadonlyMap<string, CallRecord> {
    return this.byId;
  }

  /** Journal a call as started; resolves once the line is durable. */
  async started(e: Omit<CallEntry, 'kind' | 'state'>): Promise<CallEntry> {
    if (this.byId.has(e.call_id)) throw new GenseeError('E_USAGE', `call ${e.call_id} is already in the journal of ${this.op}`);
    const entry: CallEntry = { kind: 'call', call_id: e.call_id, tool_id: e.tool_id, class: e.class, args: e.args, key: e.key, request_id: e.request_id, state: 'started' };
    await this.log.append({ ...entry });
    this.byId.set(entry.call_id, { entry, state: 'started', detail: null });
    return entry;
  }

  /** Journal a call's new state; resolves once the line is durable. */
  async setState(callId: string, state: Exclude<CallState, 'started'>, detail?: string): Promise<void> {
    const c = this.byId.get(callId);
    if (!c) throw new GenseeError('E_STATE', `call ${callId} is not in the journal of ${this.op}`);
    await this.log.append(detail !== undefined ? { kind: 'call_state', call_id: callId, state, detail } : { kind: 'call_state', call_id: callId, state });
    c.state = state;
    c.detail = detail ?? null;
  }

  /** Make everything durable, close the log, let go of the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.log.close();
    } finally {
      releaseLock(this.lockFile, this.me);
    }
  }
}
