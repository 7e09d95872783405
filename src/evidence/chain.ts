// Hash-chained JSONL (faults.jsonl, counters.jsonl, events.jsonl).
//
// Line format, keys in this fixed order, one object per line, `}\n`:
//   {"seq":N,"at":"<ISO time>",<caller's fields in their order>,"prev":"<64 hex>"}
// seq  — 1-based line number in the file
// at   — time the line was appended (the caller may supply its own `at`)
// prev — hex SHA-256 of the previous line's exact bytes without its newline;
//        64 zeros on line 1
//
// Durability: append() resolves only after the line is written and
// fdatasync'ed. A syncer thread in the addon (addon/synclog.c) runs
// fdatasync whenever somebody waits, and one fdatasync covers every line
// written before it began: group commit with no window, and the event loop
// never blocks on the disk. Who calls write(2) depends on the log:
//   - by default the caller's thread, in the call that appends the line (so
//     the line survives the process being killed) — or, when the caller
//     defers it (a write-ahead line nothing acts on yet), together with the
//     next line that is not deferred, at the latest before the event loop's
//     next turn and always before any fdatasync is asked for or waited on:
//     one write(2) for the lines of a fault instead of one each;
//     counters.jsonl and events.jsonl are written so;
//   - with syncerWrites (faults.jsonl), the syncer thread, right before each
//     fdatasync: the line is handed over in the same way, but reaches the
//     file only once a sync covering it has begun (see OpenOptions).
// Lines reach the file in call order because seq and prev are assigned in
// call order and written in that order.
//
// One writer per file: the chain state lives in this object. A second
// process appending to the same file would break the chain (and verify
// would say so).
//
// Crash recovery on open: a last line without its newline (torn write) is
// kept, not dropped: it is terminated with "\n" and followed by
//   {"seq":N+1,"at":...,"kind":"torn_line","line":N,"bytes":<length>,"prev":<sha256 of the torn bytes>}
// so the chain continues over exactly what is on disk, and `torn` tells the
// caller so it can log it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import { GenseeError, isErrno } from '../errors';
import { loadAddon } from '../addon';
import type { NativeSyncLog } from '../addon';
import { assertNoSymlinks, fsyncDirSync, trustedUids, writeAllSync } from '../state/fsutil';

export const ZERO_HASH = '0'.repeat(64);
const NL = 0x0a;
const C = fs.constants;
/** a last line longer than this is not parsed for its seq on open (lines are counted instead) */
const MAX_PARSE_LINE = 1 << 20;

export interface ChainedLogOptions {
  /**
   * Hold a requested fdatasync this long for company (ms). 0 (the default)
   * syncs at once; lines written meanwhile ride on the next one anyway.
   * The counters log uses a window: nobody waits on it.
   */
  groupWindowMs?: number;
  /**
   * Told of every line once it is written (not yet durable): its seq and
   * its exact text without the newline. The live stream's source
   * (src/events/hub.ts); it must not throw or block.
   */
  onLine?: (seq: number, text: string) => void;
  /**
   * The syncer thread writes the lines, in order, right before each
   * fdatasync (addon/synclog.c GS_SYNCLOG_SYNCER_WRITES): appending never
   * waits for the file — a write(2) while the journal commits can block
   * for as long as the commit. A line is then in the file only once a sync
   * covering it has begun (or after drain()), so this is for a log whose
   * lines are acted on only once durable: faults.jsonl, whose answers and
   * lease installs all wait for durability. A process killed meanwhile
   * loses only lines nobody had acted on.
   */
  syncerWrites?: boolean;
  /**
   * Group commit that waits for its siblings (faults.jsonl): while requests
   * on the supervisor socket are being decided and are neither answered nor
   * waiting for durability, a requested fdatasync is held up to this long
   * (µs) so that it covers their lines too; a lone request never waits
   * (addon/synclog.c gs_synclog_siblings). 0 or absent: off.
   */
  siblingDelayUs?: number;
  /**
   * Told once when the log fails (a write or fdatasync error poisons it):
   * the supervisor's failed state (src/supervisor.ts). Must not throw.
   */
  onFail?: (err: unknown) => void;
}

export type { NativeSyncLog } from '../addon';

/** upper bounds (µs) of the fdatasync latency histogram's buckets (addon/synclog.h GS_SYNC_HIST_BOUNDS); one more bucket holds the rest */
export const SYNC_HIST_BOUNDS_US = [100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000] as const;

export interface SyncStats {
  syncs: number;
  lines: number;
  syncUs: number;
  maxSyncUs: number;
  slowSyncs: number;
  /** syncs held for siblings, and the time they were held (µs) */
  siblingWaits: number;
  siblingWaitUs: number;
  /** fdatasync calls by latency: SYNC_HIST_BOUNDS_US, then the rest */
  hist: number[];
}

/** how appendTicket hands a line on */
export interface AppendOptions {
  /** ask for an fdatasync covering the line (whenDurable waits for one) */
  sync: boolean;
  /**
   * hold the line to share the next write (and its fdatasync, with sync):
   * for a line nothing acts on until a later line, or a wait for
   * durability, writes it first; at the latest before the event loop's
   * next turn. Without defer the line is written now, after any held ones.
   */
  defer?: boolean;
}

/** what open() found and repaired at the end of the file */
export interface TornRecovery {
  /** line number of the torn line (kept, now newline-terminated) */
  line: number;
  /** its length in bytes */
  bytes: number;
  /** seq of the torn_line record appended after it */
  record_seq: number;
}

export type LogFields = Record<string, unknown>;

interface Waiter {
  ticket: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

const oneShot = (crypto as unknown as { hash?: (alg: string, data: Uint8Array | string, enc: 'hex') => string }).hash;

export function sha256Hex(b: Uint8Array | string): string {
  // crypto.hash (Node >= 20.12) skips the Hash object: this is on every line
  return oneShot ? oneShot('sha256', b, 'hex') : createHash('sha256').update(b).digest('hex');
}

/** the last generated "at", as its JSON string, and the millisecond it is of */
let atMs = -1;
let atJson = '';

/** JSON.stringify(new Date().toISOString()): one Date and one string per millisecond, not per line (4 lines a fault) */
function nowAtJson(): string {
  const ms = Date.now();
  if (ms !== atMs) {
    atMs = ms;
    atJson = JSON.stringify(new Date(ms).toISOString());
  }
  return atJson;
}

function readAt(fd: number, start: number, end: number): Buffer {
  const buf = Buffer.alloc(end - start);
  let n = 0;
  while (n < buf.length) {
    const r = fs.readSync(fd, buf, n, buf.length - n, start + n);
    if (r === 0) throw new GenseeError('E_STATE', 'log shrank while being read');
    n += r;
  }
  return buf;
}

/** offset just after the last '\n' in [0, end), or 0 */
function lineStartBefore(fd: number, end: number): number {
  const CH = 1 << 16;
  let pos = end;
  while (pos > 0) {
    const start = Math.max(0, pos - CH);
    const i = readAt(fd, start, pos).lastIndexOf(NL);
    if (i >= 0) return start + i + 1;
    pos = start;
  }
  return 0;
}

function hashRange(fd: number, start: number, end: number): string {
  const h = createHash('sha256');
  const CH = 1 << 20;
  for (let pos = start; pos < end; pos += CH) h.update(readAt(fd, pos, Math.min(end, pos + CH)));
  return h.digest('hex');
}

function countNewlines(fd: number, end: number): number {
  const CH = 1 << 20;
  let n = 0;
  for (let pos = 0; pos < end; pos += CH) {
    const b = readAt(fd, pos, Math.min(end, pos + CH));
    for (let i = b.indexOf(NL); i >= 0; i = b.indexOf(NL, i + 1)) n++;
  }
  return n;
}

/** seq of the line in [start, end), or null when it is not a parseable line with a valid seq */
function seqOfLine(fd: number, start: number, end: number): number | null {
  if (end - start > MAX_PARSE_LINE) return null;
  try {
    const v = JSON.parse(readAt(fd, start, end).toString('utf8'));
    if (typeof v === 'object' && v !== null && Number.isSafeInteger(v.seq) && v.seq >= 1) return v.seq;
  } catch {
    /* fall through */
  }
  return null;
}

export class ChainedLog {
  readonly path: string;
  private tornInfo: TornRecovery | null = null;
  private fd: number;
  private seqNo = 0;
  private prevHash = ZERO_HASH;
  private native: NativeSyncLog | null;
  /** append() callers waiting for durability, in ticket order */
  private waiters: Waiter[] = [];
  private refd = false;
  private failed: unknown = null;
  private closing = false;
  private readonly onLine: ((seq: number, text: string) => void) | undefined;
  private readonly opts: ChainedLogOptions;
  /**
   * Tests only (GENSEE_TEST_FAIL_RESOLUTION_SYNC=MS, read nowhere else):
   * the first fdatasync that covers the first resolution line granting a
   * lease is held MS by the syncer once it returned, then counts as failed
   * (EIO), as if fdatasync had returned it (addon/synclog.c
   * gs_synclog_test_fail): whatever waits for it, in JavaScript or on the
   * syncer thread (a grant's put and answer), sees the failure. Ordinary
   * runs never set it; the real-disk tests (test/resolver/diskerror.test.ts,
   * test/adversarial/disk*.test.ts) use real filesystems instead.
   */
  private inject: { ms: number } | null = null;

  private constructor(file: string, fd: number, opts: ChainedLogOptions) {
    this.path = file;
    this.fd = fd;
    this.opts = opts;
    this.onLine = opts.onLine;
    this.native = this.syncer(fd);
    const ms = Number(process.env.GENSEE_TEST_FAIL_RESOLUTION_SYNC ?? '');
    if (ms > 0 && path.basename(file) === 'faults.jsonl') this.inject = { ms };
  }

  private syncer(fd: number): NativeSyncLog {
    const o = this.opts;
    const n = new (loadAddon().SyncLog)(fd, Math.max(0, Math.round((o.groupWindowMs ?? 0) * 1000)), () => this.onDurable(), o.syncerWrites === true);
    if (o.siblingDelayUs) n.siblings(Math.round(o.siblingDelayUs));
    return n;
  }

  /** the error that poisoned the log, or null */
  get failure(): unknown {
    return this.failed;
  }

  /**
   * After a failure: open the file again and go on from what is on disk
   * (a torn last line is kept and recorded, as on open), with a new syncer.
   * Lines appended but never written are gone: nothing acted on them
   * (every answer and install waits for durability). Throws, and the log
   * stays failed, while the disk still refuses.
   */
  reopen(): void {
    if (!this.failed || this.closing) return;
    const err = this.failed;
    const fd = fs.openSync(this.path, C.O_RDWR | C.O_APPEND | C.O_NOFOLLOW);
    const old = { fd: this.fd, native: this.native };
    this.fd = fd;
    this.native = this.syncer(fd);
    this.failed = null;
    this.pending = [];
    this.pendingSync = false;
    this.tickets = 0;
    this.seqNo = 0;
    this.prevHash = ZERO_HASH;
    this.tornInfo = null;
    try {
      this.recover(fs.fstatSync(fd).size);
    } catch (e) {
      this.native.close();
      fs.closeSync(fd);
      this.fd = old.fd;
      this.native = old.native;
      this.failed = e ?? err;
      throw e;
    }
    old.native?.close();
    if (old.fd >= 0) fs.closeSync(old.fd);
  }

  /** fdatasync calls and lines made durable by them (group-commit efficiency) */
  get syncStats(): SyncStats {
    const s = this.native?.state();
    return s
      ? { syncs: s.syncs, lines: s.lines, syncUs: s.syncUs, maxSyncUs: s.maxSyncUs, slowSyncs: s.slowSyncs, siblingWaits: s.siblingWaits, siblingWaitUs: s.siblingWaitUs, hist: s.hist }
      : { syncs: 0, lines: 0, syncUs: 0, maxSyncUs: 0, slowSyncs: 0, siblingWaits: 0, siblingWaitUs: 0, hist: new Array<number>(SYNC_HIST_BOUNDS_US.length + 1).fill(0) };
  }

  /** the addon's syncer, for answers that must wait for a ticket in C (src/resolver/server.ts) */
  get handle(): NativeSyncLog {
    this.usable();
    return this.native!;
  }

  /** set when open() found a torn last line and recorded it (log it) */
  get torn(): TornRecovery | null {
    return this.tornInfo;
  }

  /** seq of the last line appended (queued lines included) */
  get seq(): number {
    return this.seqNo;
  }

  /** ticket of the last line appended (0: none in this process) */
  get lastTicket(): number {
    return this.tickets;
  }

  /** hash of the last line appended (what the next line's prev will be) */
  get lastHash(): string {
    return this.prevHash;
  }

  static async open(file: string, opts: ChainedLogOptions = {}): Promise<ChainedLog> {
    return ChainedLog.openSync(file, opts);
  }

  /**
   * Open (creating 0600) with O_APPEND|O_NOFOLLOW, recover seq and the last
   * line's hash from the tail of the file, and record a torn last line.
   */
  static openSync(file: string, opts: ChainedLogOptions = {}): ChainedLog {
    const abs = path.resolve(file);
    assertNoSymlinks(abs);
    let fd: number;
    let created = false;
    try {
      try {
        fd = fs.openSync(abs, C.O_RDWR | C.O_APPEND | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
        created = true;
      } catch (e) {
        if (!(isErrno(e) && e.code === 'EEXIST')) throw e;
        fd = fs.openSync(abs, C.O_RDWR | C.O_APPEND | C.O_NOFOLLOW);
      }
    } catch (e) {
      if (isErrno(e) && e.code === 'ELOOP') throw new GenseeError('E_SYMLINK', `refusing symlink at ${abs}`);
      if (isErrno(e) && e.code === 'EISDIR') throw new GenseeError('E_NOT_FILE', `not a regular file: ${abs}`);
      throw e;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new GenseeError('E_NOT_FILE', `not a regular file: ${abs}`);
      const uids = trustedUids();
      if (!uids.includes(st.uid)) throw new GenseeError('E_BAD_MODE', `${abs} is owned by uid ${st.uid}, expected one of ${uids.join(', ')}`);
      // new: beat the umask; existing and looser: tighten (never grants anything)
      if ((st.mode & 0o777) !== 0o600) fs.fchmodSync(fd, 0o600);
      if (created) fsyncDirSync(path.dirname(abs));
      const log = new ChainedLog(abs, fd, opts);
      log.recover(st.size);
      return log;
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  private recover(size: number): void {
    const fd = this.fd;
    if (size === 0) return;
    const last = readAt(fd, size - 1, size)[0];
    if (last === NL) {
      const start = lineStartBefore(fd, size - 1);
      this.prevHash = hashRange(fd, start, size - 1);
      this.seqNo = seqOfLine(fd, start, size - 1) ?? countNewlines(fd, size);
      return;
    }
    // torn: [tornStart, size) has no newline
    const tornStart = lineStartBefore(fd, size);
    const bytes = size - tornStart;
    const tornHash = hashRange(fd, tornStart, size);
    let before = 0;
    if (tornStart > 0) {
      const ps = lineStartBefore(fd, tornStart - 1);
      before = seqOfLine(fd, ps, tornStart - 1) ?? countNewlines(fd, tornStart);
    }
    const line = before + 1;
    writeAllSync(fd, Buffer.from('\n'));
    this.seqNo = line;
    this.prevHash = tornHash;
    this.appendSync({ kind: 'torn_line', line, bytes });
    this.tornInfo = { line, bytes, record_seq: line + 1 };
  }

  /** lines encoded but not yet written (texts with their newline), oldest first */
  private pending: string[] = [];
  /** seq of the first pending line */
  private pendingFirstSeq = 0;
  /** tickets issued in this process: the addon's count of lines written, plus the pending ones */
  private tickets = 0;
  private flushQueued = false;
  /** a deferred line asked for an fdatasync: the queued flush asks for it */
  private pendingSync = false;

  /** Build the next line (its text, newline included) and advance the chain. Throws before advancing on bad input. */
  private encode(fields: LogFields): string {
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      throw new GenseeError('E_USAGE', 'log record must be a plain object');
    }
    if ('seq' in fields || 'prev' in fields) throw new GenseeError('E_USAGE', 'log record must not carry "seq" or "prev": the chain sets them');
    const callerAt = fields.at;
    if (callerAt !== undefined && typeof callerAt !== 'string') throw new GenseeError('E_USAGE', 'log record "at" must be a string');
    const at = callerAt === undefined ? nowAtJson() : JSON.stringify(callerAt);
    let rest = fields;
    if ('at' in fields) {
      const { at: _at, ...others } = fields;
      rest = others;
    }
    const body = JSON.stringify(rest).slice(1, -1);
    const seq = this.seqNo + 1;
    const line = `{"seq":${seq},"at":${at}${body ? ',' + body : ''},"prev":"${this.prevHash}"}`;
    this.seqNo = seq;
    this.prevHash = sha256Hex(line);
    return line + '\n';
  }

  /**
   * Write every pending line with one write(2) (sync: and ask for an
   * fdatasync covering them). A failed write poisons the log and throws.
   */
  private flush(sync: boolean): void {
    sync ||= this.pendingSync;
    this.pendingSync = false;
    const n = this.pending.length;
    if (n === 0) {
      if (sync) this.native?.request();
      return;
    }
    const texts = this.pending;
    const first = this.pendingFirstSeq;
    this.pending = [];
    const buf = Buffer.from(n === 1 ? texts[0] : texts.join(''), 'utf8');
    try {
      this.native!.write(buf, n, sync);
    } catch (e) {
      this.fail(e);
      throw e;
    }
    if (this.onLine) for (let i = 0; i < n; i++) this.onLine(first + i, texts[i].slice(0, -1));
  }

  /** write deferred lines before the event loop's next turn (nobody waits on them yet) */
  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      if ((this.pending.length === 0 && !this.pendingSync) || this.failed || !this.native) return;
      try {
        this.flush(false);
      } catch {
        /* poisoned: the next append or waiter is told */
      }
    });
  }

  private usable(): void {
    if (this.failed) throw this.failed;
    if (this.closing || !this.native) throw new GenseeError('E_STATE', `log is closed: ${this.path}`);
  }

  /**
   * Append one record and return its ticket. Throws (and poisons the log)
   * if the write fails: a caller that cannot record must not go on as if it
   * had.
   */
  appendTicket(fields: LogFields, how: AppendOptions): number {
    const { sync, defer = false } = how;
    this.usable();
    const line = this.encode(fields);
    if (this.pending.length === 0) this.pendingFirstSeq = this.seqNo;
    this.pending.push(line);
    const ticket = ++this.tickets;
    if (this.inject && fields.kind === 'resolution' && (fields.resolution as { lease?: unknown } | undefined)?.lease) {
      this.native?.testFail(ticket, this.inject.ms);
      this.inject = null; // the test hook fails once
    }
    if (defer) {
      this.pendingSync ||= sync;
      this.queueFlush();
    } else {
      this.flush(sync);
    }
    return ticket;
  }

  /** Resolves once the line with this ticket is durable (the fdatasync is asked for). */
  whenDurable(ticket: number): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    const n = this.native;
    if (!n) return Promise.reject(new GenseeError('E_STATE', `log is closed: ${this.path}`));
    // counted as waiting before its sync is asked for: a lone request is never
    // held (a failed log counts nothing; the failure is met below, as ever)
    if (this.opts.siblingDelayUs && ticket > 0) n.expect(ticket);
    let request = true;
    if (this.pending.length) {
      try {
        // one call: the pending lines written (or queued) and the sync asked for
        this.flush(true);
        request = false;
      } catch (e) {
        return Promise.reject(e);
      }
    }
    // progress(): one lock; a failed log (negative) is asked again in full
    const p = n.progress();
    if (ticket <= (p >= 0 ? p : n.state().durable)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w = { ticket, resolve, reject };
      const last = this.waiters[this.waiters.length - 1];
      if (!last || last.ticket <= ticket) this.waiters.push(w);
      else this.waiters.splice(this.waiters.findIndex((x) => x.ticket > ticket), 0, w);
      if (!this.refd) {
        this.refd = true;
        n.ref(); // from here on the syncer wakes us after each fdatasync
        // one may have ended between the check above and ref(): look again
        this.onDurable();
      }
      if (request) n.request();
    });
  }

  /**
   * Put every line appended so far into the file now (no fdatasync): for a
   * reader that must find them there (the live stream's replay).
   */
  drain(): void {
    if (!this.native || this.failed) return;
    this.flush(false);
    try {
      this.native.drain();
    } catch (e) {
      this.fail(e);
      throw e;
    }
  }

  /** Append one record; resolves when it is durable (fdatasync). */
  append(fields: LogFields): Promise<void> {
    let t: number;
    try {
      t = this.appendTicket(fields, { sync: true });
    } catch (e) {
      return Promise.reject(e);
    }
    return this.whenDurable(t);
  }

  /** Append one record synchronously (shutdown paths): written and fdatasync'ed before returning. */
  appendSync(fields: LogFields): void {
    this.appendTicket(fields, { sync: false });
    try {
      this.native!.syncNow();
    } catch (e) {
      this.fail(e);
      throw e;
    }
    this.onDurable();
  }

  /** the syncer finished an fdatasync (or failed): settle the waiters it covers */
  private onDurable(): void {
    const n = this.native;
    if (!n) return;
    // one lock: the durable ticket, or -errno once the syncer failed
    const p = n.progress();
    if (p < 0) {
      if (!this.failed) this.fail(Object.assign(new Error(`evidence log ${this.path}: fdatasync/write failed: errno ${-p}`), { errno: -p }));
      return;
    }
    const durable = p;
    let i = 0;
    while (i < this.waiters.length && this.waiters[i].ticket <= durable) i++;
    if (i > 0) for (const w of this.waiters.splice(0, i)) w.resolve();
    if (this.waiters.length === 0 && this.refd) {
      this.refd = false;
      n.unref();
    }
  }

  /**
   * A failed write or fdatasync poisons the log: the chain state in memory may
   * no longer match the file, and a caller that cannot record must not go on
   * as if it had (write-ahead). Reopen to recover from what is on disk.
   */
  private fail(err: unknown): void {
    if (!this.failed) {
      this.failed = err;
      try {
        this.opts.onFail?.(err);
      } catch {
        /* told, once */
      }
    }
    for (const w of this.waiters.splice(0)) w.reject(err);
    if (this.refd && this.native) {
      this.refd = false;
      this.native.unref();
    }
  }

  /** Everything appended so far is durable when this resolves (nothing is added). */
  async flushNow(): Promise<void> {
    if (!this.native) return;
    if (this.failed) throw this.failed;
    await this.whenDurable(this.tickets);
  }

  /**
   * Everything appended so far written and fdatasync'ed now, on this thread,
   * without waiting out the group window (groupWindowMs): for a start or an
   * end that must be on disk before going on, where no other line would
   * share the window's fdatasync anyway.
   */
  flushSync(): void {
    this.usable();
    try {
      this.flush(false);
      this.native!.syncNow();
    } catch (e) {
      this.fail(e);
      throw e;
    }
    this.onDurable();
  }

  private shut(): void {
    this.native?.close();
    this.native = null;
    if (this.fd >= 0) {
      fs.closeSync(this.fd);
      this.fd = -1;
    }
  }

  /** Wait for everything appended to be durable, then close. */
  async close(): Promise<void> {
    if (!this.native) return;
    this.closing = true;
    try {
      if (!this.failed) await this.whenDurable(this.tickets);
    } catch {
      /* failed: nothing more can become durable */
    }
    this.shut();
  }

  /** fdatasync everything appended, synchronously, then close. */
  closeSync(): void {
    if (!this.native) return;
    this.closing = true;
    if (!this.failed) {
      try {
        this.flush(false);
        this.native.syncNow();
        this.onDurable();
      } catch (e) {
        this.fail(e);
      }
    }
    this.shut();
  }
}
