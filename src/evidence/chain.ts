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
// fdatasync'ed. Appends arriving together share one fdatasync (group commit):
// the first line of a batch waits at most `groupWindowMs` (2 ms) for company,
// a batch is flushed at once when it reaches `groupMaxLines` (64), and lines
// reach the file in call order because seq and prev are assigned at call
// time and batches are written one after another.
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
import { createHash } from 'node:crypto';
import { GenseeError, isErrno } from '../errors';
import { assertNoSymlinks, fsyncDirectorySync, trustedUids, writeAllSync } from '../state/fsutil';

export const ZERO_HASH = '0'.repeat(64);
const NL = 0x0a;
const C = fs.constants;
/** a last line longer than this is not parsed for its seq on open (lines are counted instead) */
const MAX_PARSE_LINE = 1 << 20;

export interface ChainedLogOptions {
  /** longest wait of a batch's first line before its fdatasync; 0 = next turn of the event loop */
  groupWindowMs?: number;
  /** flush as soon as this many lines are queued; also the most lines one fdatasync covers */
  groupMaxLines?: number;
  /**
   * fdatasync on the event-loop thread instead of libuv's pool. Measured on
   * the 2-core CI VM: ~150 us inline vs ~350 us through the pool (the hop
   * dominates). Requests that arrive during the blocking sync simply form the
   * next batch, so throughput does not suffer; latency halves.
   */
  inlineSync?: boolean;
  /**
   * Group commit without a fixed window: while this returns true (more
   * writers are known to be on their way, e.g. requests being resolved), the
   * flush is put off turn by turn of the event loop, up to batchMaxUs.
   */
  batchWhile?: () => boolean;
  batchMaxUs?: number;
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

interface Pending {
  buf: Buffer;
  /** already in the file (appendLazy): only its fdatasync is pending */
  done?: boolean;
  /** appendLazy: never worth an fdatasync of its own (the next append brings one) */
  lazy?: boolean;
  resolve?: () => void;
  reject?: (e: unknown) => void;
}

export function sha256Hex(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

function readAt(fd: number, start: number, end: number): Buffer {
  const buf = Buffer.alloc(end - start);
  let n = 0;
  while (n < buf.length) {
    const r = fs.readSync(fd, buf, n, buf.length - n, start + n);
    if (r === 0) throw new GenseeError('E_STATE', 'log shrank while being read', 1);
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
  private readonly windowMs: number;
  private readonly maxLines: number;
  private readonly inlineSync: boolean;
  private readonly batchWhile: (() => boolean) | undefined;
  private readonly batchMaxNs: bigint;
  private pending: Pending[] = [];
  /** written to the file already, durable with the next fdatasync */
  private written: Pending[] = [];
  private lazyTimer: NodeJS.Timeout | null = null;
  /** fdatasync calls and lines made durable by them (group-commit efficiency) */
  readonly syncStats = { syncs: 0, lines: 0, syncNs: 0n };
  private cancelTimer: (() => void) | null = null;
  private syncing = false;
  private failed: unknown = null;
  private closing = false;
  private closeFdWhenIdle = false;
  private idleWaiters: Array<() => void> = [];

  private constructor(file: string, fd: number, opts: ChainedLogOptions) {
    this.path = file;
    this.fd = fd;
    this.windowMs = opts.groupWindowMs ?? 2;
    this.maxLines = Math.max(1, opts.groupMaxLines ?? 64);
    this.inlineSync = opts.inlineSync === true;
    this.batchWhile = opts.batchWhile;
    this.batchMaxNs = BigInt(Math.round((opts.batchMaxUs ?? 300) * 1000));
  }

  /** set when open() found a torn last line and recorded it (log it) */
  get torn(): TornRecovery | null {
    return this.tornInfo;
  }

  /** seq of the last line appended (queued lines included) */
  get seq(): number {
    return this.seqNo;
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
      if (created) fsyncDirectorySync(path.dirname(abs));
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

  /** Build the next line and advance the chain. Throws before advancing on bad input. */
  private encode(fields: LogFields): Buffer {
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      throw new GenseeError('E_USAGE', 'log record must be a plain object');
    }
    if ('seq' in fields || 'prev' in fields) throw new GenseeError('E_USAGE', 'log record must not carry "seq" or "prev": the chain sets them');
    const { at: callerAt, ...rest } = fields;
    if (callerAt !== undefined && typeof callerAt !== 'string') throw new GenseeError('E_USAGE', 'log record "at" must be a string');
    const at = callerAt ?? new Date().toISOString();
    const body = JSON.stringify(rest).slice(1, -1);
    const seq = this.seqNo + 1;
    const text = `{"seq":${seq},"at":${JSON.stringify(at)}${body ? ',' + body : ''},"prev":"${this.prevHash}"}`;
    const line = Buffer.from(text, 'utf8');
    this.seqNo = seq;
    this.prevHash = sha256Hex(line);
    return Buffer.concat([line, Buffer.from('\n')]);
  }

  private usable(): void {
    if (this.failed) throw this.failed;
    if (this.closing) throw new GenseeError('E_STATE', `log is closed: ${this.path}`, 1);
  }

  /** Append one record; resolves when it is durable (fdatasync). */
  append(fields: LogFields): Promise<void> {
    let buf: Buffer;
    try {
      this.usable();
      buf = this.encode(fields);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ buf, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Write-ahead append: the line is written to the file now (it survives the
   * process being killed) but made durable by the NEXT fdatasync — typically
   * that of the append() that follows (a fault line, then its resolution
   * line: one fdatasync for both). Resolves once durable; if no append
   * follows, a sync is forced after 5 ms.
   */
  appendLazy(fields: LogFields): Promise<void> {
    let buf: Buffer;
    try {
      this.usable();
      buf = this.encode(fields);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => {
      if (!this.syncing && this.pending.length === 0) {
        try {
          writeAllSync(this.fd, buf);
        } catch (e) {
          this.fail(e, [{ buf, resolve, reject }]);
          return;
        }
        this.written.push({ buf, resolve, reject, done: true });
      } else {
        this.pending.push({ buf, resolve, reject, lazy: true });
      }
      if (!this.lazyTimer) {
        this.lazyTimer = setTimeout(() => {
          this.lazyTimer = null;
          if (this.written.length || this.pending.length) this.schedule(true);
        }, 5);
        this.lazyTimer.unref();
      }
    });
  }

  /**
   * Append one record synchronously (shutdown paths): writes everything still
   * queued, then this line, then fdatasync, before returning.
   */
  appendSync(fields: LogFields): void {
    this.usable();
    this.pending.push({ buf: this.encode(fields) });
    this.flushAllSync();
  }

  private flushAllSync(): void {
    this.clearTimer();
    const batch = this.pending.splice(0);
    const written = this.written.splice(0);
    if (batch.length === 0 && written.length === 0) return;
    try {
      if (batch.length) writeAllSync(this.fd, Buffer.concat(batch.map((p) => p.buf)));
      fs.fdatasyncSync(this.fd);
    } catch (e) {
      this.fail(e, [...written, ...batch]);
      throw e;
    }
    for (const p of [...written, ...batch]) p.resolve?.();
  }

  private clearTimer(): void {
    if (this.cancelTimer) {
      this.cancelTimer();
      this.cancelTimer = null;
    }
  }

  private schedule(force = false): void {
    if (this.syncing) return; // the running fdatasync picks the queue up when it ends
    if (force || this.pending.length >= this.maxLines) {
      this.clearTimer();
      this.flush();
      return;
    }
    if (this.cancelTimer) return;
    const fire = (): void => {
      this.cancelTimer = null;
      this.flush();
    };
    if (this.windowMs <= 0) {
      const since = process.hrtime.bigint();
      let h: NodeJS.Immediate;
      const turn = (): void => {
        if (this.batchWhile && this.pending.length < this.maxLines && process.hrtime.bigint() - since < this.batchMaxNs && this.batchWhile()) {
          h = setImmediate(turn);
          return;
        }
        fire();
      };
      h = setImmediate(turn);
      this.cancelTimer = () => clearImmediate(h);
    } else {
      const h = setTimeout(fire, this.windowMs);
      this.cancelTimer = () => clearTimeout(h);
    }
  }

  private flush(): void {
    if (this.syncing) return;
    if (this.failed || (this.pending.length === 0 && this.written.length === 0)) {
      this.notifyIdle();
      return;
    }
    this.clearTimer();
    const batch = [...this.written.splice(0), ...this.pending.splice(0, this.maxLines)];
    const toWrite = batch.filter((p) => !p.done);
    try {
      if (toWrite.length) writeAllSync(this.fd, toWrite.length === 1 ? toWrite[0].buf : Buffer.concat(toWrite.map((p) => p.buf)));
    } catch (e) {
      this.fail(e, batch);
      return;
    }
    // inline only when nobody else is on the way: then nothing could overlap
    // with the sync anyway; under load the pool's fdatasync lets the event
    // loop decide the next batch meanwhile
    this.syncStats.syncs++;
    this.syncStats.lines += batch.length;
    if (this.inlineSync && !(this.batchWhile && this.batchWhile())) {
      try {
        const t0 = process.hrtime.bigint();
        fs.fdatasyncSync(this.fd);
        this.syncStats.syncNs += process.hrtime.bigint() - t0;
      } catch (e) {
        this.fail(e, batch);
        return;
      }
      for (const p of batch) p.resolve?.();
      this.afterSync();
      return;
    }
    this.syncing = true;
    const t0 = process.hrtime.bigint();
    fs.fdatasync(this.fd, (err) => {
      this.syncing = false;
      this.syncStats.syncNs += process.hrtime.bigint() - t0;
      if (err) {
        this.fail(err, batch);
        return;
      }
      for (const p of batch) p.resolve?.();
      this.afterSync();
    });
  }

  /**
   * Lines queued during a sync have already waited through a whole fdatasync:
   * sync them now — unless they are all write-ahead (lazy) lines, which are
   * only written now and ride on the next append's fdatasync (or the lazy
   * timer's), so a fault line never costs an fdatasync of its own.
   */
  private afterSync(): void {
    if (this.pending.some((p) => !p.lazy)) {
      // through schedule(): with batchWhile, wait (bounded) for writers still on their way
      this.schedule();
      return;
    }
    if (this.pending.length > 0) {
      const lazy = this.pending.splice(0);
      try {
        writeAllSync(this.fd, lazy.length === 1 ? lazy[0].buf : Buffer.concat(lazy.map((p) => p.buf)));
      } catch (e) {
        this.fail(e, lazy);
        return;
      }
      for (const p of lazy) p.done = true;
      this.written.push(...lazy);
    }
    this.notifyIdle();
  }

  /**
   * A failed write or fdatasync poisons the log: the chain state in memory may
   * no longer match the file, and a caller that cannot record must not go on
   * as if it had (write-ahead). Reopen to recover from what is on disk.
   */
  private fail(err: unknown, batch: Pending[]): void {
    this.failed = err;
    this.clearTimer();
    const all = [...batch, ...this.written.splice(0), ...this.pending.splice(0)];
    for (const p of all) p.reject?.(err);
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.syncing || ((this.pending.length > 0 || this.written.length > 0) && !this.failed)) return;
    if (this.closeFdWhenIdle) this.closeFd();
    const w = this.idleWaiters.splice(0);
    for (const f of w) f();
  }

  private closeFd(): void {
    if (this.fd >= 0) {
      fs.closeSync(this.fd);
      this.fd = -1;
    }
    this.closeFdWhenIdle = false;
  }

  /** Everything queued so far is durable when this resolves (nothing is added). */
  async flushNow(): Promise<void> {
    if (this.fd < 0 || (this.pending.length === 0 && this.written.length === 0 && !this.syncing)) return;
    this.clearTimer();
    await new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.flush(); // no-op while syncing: the running fdatasync continues the queue
    });
  }

  /** Wait for everything queued to be durable, then close. */
  async close(): Promise<void> {
    if (this.fd < 0) return;
    this.closing = true;
    this.clearTimer();
    await new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.flush(); // no-op while syncing: the running fdatasync continues the queue
    });
    if (this.fd >= 0 && !this.syncing) this.closeFd();
  }

  /**
   * Write and fdatasync everything queued, synchronously, then close (the fd
   * is closed as soon as an fdatasync already running returns).
   */
  closeSync(): void {
    if (this.fd < 0) return;
    this.closing = true;
    if (!this.failed) this.flushAllSync();
    if (this.syncing) this.closeFdWhenIdle = true;
    else this.closeFd();
  }
}
