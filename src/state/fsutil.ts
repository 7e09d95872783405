// Filesystem primitives for the state directory (DESIGN.md "State directory"):
// no symlinks anywhere on a path, private modes, atomic record replacement
// (temp, fsync, rename, fsync dir), bounded no-follow reads.
//
// Mode policy, decided here once:
// - ensureDir0700 *fixes* an existing directory whose mode grants group or
//   other bits (chmod 0700). Tightening never grants anyone anything, and an
//   operator who made the tree 0755 by hand should not be locked out of
//   recreating an operation. It refuses (E_BAD_MODE) a directory owned by a
//   uid it was not told to trust.
// - Readers (openOperation, readKey, ...) never fix: a loose mode found on a
//   read path is refused with E_BAD_MODE, because reading must not change
//   state and a loose mode there means someone else may have written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GenseeError, isErrno } from '../errors';

const C = fs.constants;
const NOFOLLOW_READ = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;
const EXCL_WRITE = C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW;

/** uids whose files we trust by default: root and whoever we run as. */
export function trustedUids(extra: readonly number[] = []): number[] {
  const euid = process.geteuid ? process.geteuid() : 0;
  return [...new Set([0, euid, ...extra])];
}

function requireAbsolute(p: string): void {
  if (typeof p !== 'string' || p === '' || p.includes('\0')) {
    throw new GenseeError('E_USAGE', `bad path: ${JSON.stringify(p)}`);
  }
  if (!path.isAbsolute(p)) throw new GenseeError('E_USAGE', `path must be absolute: ${p}`);
}

/**
 * lstat every existing component of an absolute path, root first; a symlink
 * anywhere is refused with E_SYMLINK naming the component. Components that do
 * not exist yet are fine (they will be created by us). The raw components are
 * checked, not a normalized path, so `a/link/..` cannot hide `link`.
 */
export function assertNoSymlinks(p: string): void {
  requireAbsolute(p);
  const parts = p.split('/').filter((s) => s !== '' && s !== '.');
  let cur = '';
  for (const part of parts) {
    cur += '/' + part;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(cur);
    } catch (e) {
      if (isErrno(e) && (e.code === 'ENOENT' || e.code === 'ENOTDIR')) return;
      throw e;
    }
    if (st.isSymbolicLink()) {
      throw new GenseeError('E_SYMLINK', `refusing symlink at ${cur} (in ${p})`);
    }
  }
}

/** fsync a directory by path (after creating or renaming entries in it). */
export function fsyncDirSync(dir: string): void {
  const fd = fs.openSync(dir, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.promises.open(dir, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export interface EnsureDirOptions {
  /** uids besides root and our euid that may own the final directory */
  allowUids?: readonly number[];
}

/**
 * mkdir -p with private modes. Every directory this call creates is 0700
 * (chmod'ed explicitly, so the umask cannot loosen or break it) and its
 * parent is fsynced. The final directory, if it already existed with group or
 * other bits, is tightened to 0700 (see the policy at the top of the file).
 * Existing ancestors we did not create are left as they are. Returns true when
 * the final directory was created by this call.
 */
export function ensureDir0700(dir: string, opts: EnsureDirOptions = {}): boolean {
  requireAbsolute(dir);
  const target = path.resolve(dir);
  assertNoSymlinks(target);
  // walk down, creating what is missing (mkdir -p by hand, so we know exactly
  // which directories are ours)
  const parts = target.split('/').filter(Boolean);
  let cur = '';
  let createdFinal = false;
  for (let i = 0; i < parts.length; i++) {
    cur += '/' + parts[i];
    try {
      fs.mkdirSync(cur, 0o700);
    } catch (e) {
      if (isErrno(e) && e.code === 'EEXIST') continue;
      throw e;
    }
    fs.chmodSync(cur, 0o700);
    fsyncDirSync(path.dirname(cur));
    if (i === parts.length - 1) createdFinal = true;
  }
  assertNoSymlinks(target); // a component swapped while we worked
  const st = fs.lstatSync(target);
  if (!st.isDirectory()) throw new GenseeError('E_NOT_FILE', `not a directory: ${target}`);
  const uids = trustedUids(opts.allowUids);
  if (!uids.includes(st.uid)) {
    throw new GenseeError('E_BAD_MODE', `${target} is owned by uid ${st.uid}, expected one of ${uids.join(', ')}`);
  }
  if ((st.mode & 0o7777) !== 0o700) fs.chmodSync(target, 0o700);
  return createdFinal;
}

/**
 * Check that a stat result is private: no group/other bits and owned by a
 * trusted uid. `what` names the file in the error.
 */
export function assertPrivate(st: fs.Stats, what: string, allowUids: readonly number[] = []): void {
  if ((st.mode & 0o077) !== 0) {
    throw new GenseeError('E_BAD_MODE', `${what} has mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}, expected no group/other access`);
  }
  const uids = trustedUids(allowUids);
  if (!uids.includes(st.uid)) {
    throw new GenseeError('E_BAD_MODE', `${what} is owned by uid ${st.uid}, expected one of ${uids.join(', ')}`);
  }
}

/** files whose directory this process has cleared of stale temporaries */
const swept = new Set<string>();

/**
 * A writer killed between its temp file and the rename leaves
 * `.NAME.PID.RAND.tmp` behind (issue 25): the next writer of NAME in this
 * process removes those of a PID that no longer runs (a live PID, even a
 * reused one, is left alone). Once per file per process; best effort.
 */
function sweepStaleTemps(file: string): void {
  if (swept.has(file)) return;
  swept.add(file);
  const dir = path.dirname(file);
  const prefix = `.${path.basename(file)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!n.startsWith(prefix) || !n.endsWith('.tmp')) continue;
    const m = /^([0-9]{1,10})\.[0-9a-f]{12}\.tmp$/.exec(n.slice(prefix.length));
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue; // alive (or not ours to signal): not stale
    } catch (e) {
      if (!(isErrno(e) && e.code === 'ESRCH')) continue;
    }
    try {
      const st = fs.lstatSync(path.join(dir, n));
      if (st.isFile()) fs.unlinkSync(path.join(dir, n));
    } catch {
      /* gone already */
    }
  }
}

function tempNameFor(file: string): string {
  sweepStaleTemps(file);
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

function symlinkError(e: unknown, file: string): unknown {
  if (isErrno(e) && e.code === 'ELOOP') return new GenseeError('E_SYMLINK', `refusing symlink at ${file}`);
  return e;
}

async function writeTemp(file: string, data: string | Uint8Array, mode: number): Promise<string> {
  const tmp = tempNameFor(file);
  const fh = await fs.promises.open(tmp, EXCL_WRITE, mode);
  try {
    await fh.chmod(mode); // the umask must not decide the mode
    await fh.writeFile(data);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await fs.promises.unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  return tmp;
}

function writeTempSync(file: string, data: string | Uint8Array, mode: number): string {
  const tmp = tempNameFor(file);
  const fd = fs.openSync(tmp, EXCL_WRITE, mode);
  try {
    fs.fchmodSync(fd, mode);
    writeAllSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fs.fsyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    try {
      fs.unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw e;
  }
  fs.closeSync(fd);
  return tmp;
}

/**
 * Replace `file` atomically: write a temp file in the same directory
 * (O_CREAT|O_EXCL|O_NOFOLLOW, explicit mode), fsync it, rename it over
 * `file`, fsync the directory. Readers see the old or the new content, never
 * a mix; a crash leaves at most a `.NAME.PID.RAND.tmp` file behind.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  requireAbsolute(file);
  const tmp = await writeTemp(file, data, mode);
  try {
    await fs.promises.rename(tmp, file);
  } catch (e) {
    await fs.promises.unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fsyncDir(path.dirname(file));
}

/** Synchronous writeFileAtomic, for shutdown paths. */
export function writeFileAtomicSync(file: string, data: string | Uint8Array, mode = 0o600): void {
  requireAbsolute(file);
  const tmp = writeTempSync(file, data, mode);
  try {
    fs.renameSync(tmp, file);
  } catch (e) {
    try {
      fs.unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw e;
  }
  fsyncDirSync(path.dirname(file));
}

/**
 * Create `file` with `data` only if nothing (not even a dangling symlink) is
 * there: temp + fsync + link(2), which fails with EEXIST instead of replacing.
 * Returns false, leaving the existing file untouched, when it already exists.
 */
export async function createFileExclusive(file: string, data: string | Uint8Array, mode = 0o600): Promise<boolean> {
  requireAbsolute(file);
  const tmp = await writeTemp(file, data, mode);
  let created = true;
  try {
    await fs.promises.link(tmp, file);
  } catch (e) {
    if (!(isErrno(e) && e.code === 'EEXIST')) {
      await fs.promises.unlink(tmp).catch(() => undefined);
      throw e;
    }
    created = false;
  }
  await fs.promises.unlink(tmp);
  await fsyncDir(path.dirname(file));
  return created;
}

export interface NoFollowRead {
  data: Buffer;
  stat: fs.Stats;
}

function checkOpened(st: fs.Stats, file: string, maxBytes: number): void {
  if (!st.isFile()) throw new GenseeError('E_NOT_FILE', `not a regular file: ${file}`);
  if (st.size > maxBytes) {
    throw new GenseeError('E_TOO_LARGE', `${file} is ${st.size} bytes, limit is ${maxBytes}`);
  }
}

/** next read size: the rest of the file plus one byte (to see EOF or growth), within the limit + 1 */
function chunkSize(size: number, have: number, maxBytes: number): number {
  return Math.max(1, Math.min(Math.max(size - have + 1, 65536), maxBytes + 1 - have));
}

/**
 * What a no-follow read has read so far, for the async and the sync reader
 * alike: read into next() at offset n, hand the count to took(), until it
 * says EOF. Reads to EOF (not just st.size: the file may be growing) and
 * stops past the limit.
 */
class NoFollowChunks {
  private readonly chunks: Buffer[] = [];
  n = 0;

  constructor(
    private readonly stat: fs.Stats,
    private readonly file: string,
    private readonly maxBytes: number,
  ) {
    checkOpened(stat, file, maxBytes);
  }

  next(): Buffer {
    return Buffer.alloc(chunkSize(this.stat.size, this.n, this.maxBytes));
  }

  /** keep the first bytesRead bytes of chunk: false at EOF; E_TOO_LARGE past the limit */
  took(chunk: Buffer, bytesRead: number): boolean {
    if (bytesRead === 0) return false;
    this.chunks.push(chunk.subarray(0, bytesRead));
    this.n += bytesRead;
    if (this.n > this.maxBytes) throw new GenseeError('E_TOO_LARGE', `${this.file} grew past the limit of ${this.maxBytes} bytes while being read`);
    return true;
  }

  result(): NoFollowRead {
    return { data: Buffer.concat(this.chunks, this.n), stat: this.stat };
  }
}

/**
 * Read a regular file opened with O_NOFOLLOW (final component only; use
 * assertNoSymlinks for the rest of the path). A symlink → E_SYMLINK, a FIFO or
 * device → E_NOT_FILE (O_NONBLOCK keeps a FIFO from hanging the open), more
 * than maxBytes → E_TOO_LARGE. ENOENT and other errno errors pass through.
 * Returns the bytes and the fstat of the opened file (for mode checks).
 */
export async function readFileNoFollowStat(file: string, maxBytes: number): Promise<NoFollowRead> {
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, NOFOLLOW_READ);
  } catch (e) {
    throw symlinkError(e, file);
  }
  try {
    const got = new NoFollowChunks(await fh.stat(), file, maxBytes);
    for (let chunk = got.next(); got.took(chunk, (await fh.read(chunk, 0, chunk.length, got.n)).bytesRead); chunk = got.next());
    return got.result();
  } finally {
    await fh.close();
  }
}

export async function readFileNoFollow(file: string, maxBytes: number): Promise<Buffer> {
  return (await readFileNoFollowStat(file, maxBytes)).data;
}

export interface ReadLinesOptions {
  /** bytes read at a time */
  chunk: number;
  /** E_TOO_LARGE once the unfinished line held between reads is longer */
  maxLine?: number;
  /** a missing file is no lines (readLines returns false); otherwise ENOENT passes through */
  missingOk?: boolean;
}

/**
 * Stream a regular file line by line, with no symlink on its path
 * (assertNoSymlinks, then O_NOFOLLOW: E_SYMLINK) and not a FIFO or device
 * (E_NOT_FILE), so its size is not limited by memory. onLine gets each
 * line's bytes without the newline (valid only during the call) and
 * complete = false for a last line without one (being written, or torn).
 * Returns false only for a missing file with missingOk.
 */
export async function readLines(file: string, onLine: (line: Buffer, complete: boolean) => void, opts: ReadLinesOptions): Promise<boolean> {
  assertNoSymlinks(file);
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, NOFOLLOW_READ);
  } catch (e) {
    if (opts.missingOk && isErrno(e) && e.code === 'ENOENT') return false;
    throw symlinkError(e, file);
  }
  try {
    if (!(await fh.stat()).isFile()) throw new GenseeError('E_NOT_FILE', `not a regular file: ${file}`);
    const buf = Buffer.alloc(opts.chunk);
    let carry: Buffer[] = [];
    let carried = 0;
    let pos = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const b = buf.subarray(0, bytesRead);
      let start = 0;
      for (let nl = b.indexOf(0x0a); nl >= 0; nl = b.indexOf(0x0a, start)) {
        const piece = b.subarray(start, nl);
        onLine(carry.length ? Buffer.concat([...carry, piece]) : piece, true);
        carry = [];
        carried = 0;
        start = nl + 1;
      }
      if (start < b.length) {
        carried += b.length - start;
        if (opts.maxLine !== undefined && carried > opts.maxLine) throw new GenseeError('E_TOO_LARGE', `${file}: a line of more than ${opts.maxLine} bytes`);
        carry.push(Buffer.from(b.subarray(start)));
      }
    }
    if (carry.length) onLine(Buffer.concat(carry), false);
  } finally {
    await fh.close();
  }
  return true;
}

/** Synchronous readFileNoFollowStat. */
export function readFileNoFollowStatSync(file: string, maxBytes: number): NoFollowRead {
  let fd: number;
  try {
    fd = fs.openSync(file, NOFOLLOW_READ);
  } catch (e) {
    throw symlinkError(e, file);
  }
  try {
    const got = new NoFollowChunks(fs.fstatSync(fd), file, maxBytes);
    for (let chunk = got.next(); got.took(chunk, fs.readSync(fd, chunk, 0, chunk.length, got.n)); chunk = got.next());
    return got.result();
  } finally {
    fs.closeSync(fd);
  }
}

export function readFileNoFollowSync(file: string, maxBytes: number): Buffer {
  return readFileNoFollowStatSync(file, maxBytes).data;
}

/** write(2) until every byte is out (short writes are legal on any fd). */
export function writeAllSync(fd: number, data: Uint8Array): void {
  let off = 0;
  while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
}

const locks = new Map<string, Promise<void>>();

/**
 * Serialize read-modify-write cycles on one record inside this process.
 * (Cross-process: the resolver is the single writer of an operation's records
 * and logs; other tools read, or go through the resolver.)
 */
export async function withFileLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const tail = prev.then(() => mine);
  locks.set(key, tail);
  await prev;
  try {
    return await fn();
  } finally {
    release();
    if (locks.get(key) === tail) locks.delete(key);
  }
}
