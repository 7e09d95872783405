// Follow a growing JSONL file by polling: each poll() returns the complete
// lines appended since the last one. A file that does not exist yet is
// waited for; a symlink is refused (O_NOFOLLOW); a line longer than the limit
// is skipped whole and reported, never buffered without bound.
import * as fs from 'node:fs';
import { GenseeError, isErrno } from '../errors';

export interface TailLine {
  /** 1-based line number in the file (counted from where the tail started when it started mid-file) */
  n: number;
  text: string;
}

export interface TailOptions {
  /** start at the file's first line; otherwise after its last complete line, if the file exists at the first poll */
  fromStart: boolean;
  /** longest line kept (bytes, without the newline) */
  maxLine: number;
}

const CHUNK = 1 << 20;

export class LineTail {
  readonly file: string;
  private readonly o: TailOptions;
  private fd: number | null = null;
  private offset = 0;
  private n = 0;
  private partial: Buffer[] = [];
  private partialLen = 0;
  private skipping = false;
  /** lines skipped for their length since the last call to takeSkipped() */
  private skipped: number[] = [];
  /** start after the last complete line: only if the file exists at the first poll (one created later is read whole) */
  private atEnd: boolean;

  constructor(file: string, o: TailOptions) {
    this.file = file;
    this.o = o;
    this.atEnd = !o.fromStart;
  }

  /** lines skipped as too long (their numbers), since the last call */
  takeSkipped(): number[] {
    return this.skipped.splice(0);
  }

  private open(): boolean {
    if (this.fd !== null) return true;
    let fd: number;
    try {
      fd = fs.openSync(this.file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch (e) {
      if (isErrno(e) && e.code === 'ENOENT') {
        this.atEnd = false;
        return false;
      }
      if (isErrno(e) && e.code === 'ELOOP') throw new GenseeError('E_SYMLINK', `refusing symlink at ${this.file}`);
      throw e;
    }
    const st = fs.fstatSync(fd);
    if (!st.isFile()) {
      fs.closeSync(fd);
      throw new GenseeError('E_NOT_FILE', `not a regular file: ${this.file}`);
    }
    this.fd = fd;
    if (this.atEnd) this.offset = lastLineEnd(fd, st.size);
    return true;
  }

  /** the complete lines appended since the last poll */
  poll(): TailLine[] {
    if (!this.open()) return [];
    const fd = this.fd!;
    const size = fs.fstatSync(fd).size;
    if (size < this.offset) {
      // an append-only log does not shrink: start over at its end
      this.offset = size;
      this.partial = [];
      this.partialLen = 0;
      return [];
    }
    const out: TailLine[] = [];
    const buf = Buffer.allocUnsafe(CHUNK);
    while (this.offset < size) {
      const got = fs.readSync(fd, buf, 0, Math.min(CHUNK, size - this.offset), this.offset);
      if (got <= 0) break;
      this.offset += got;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(0x0a, start);
        if (nl < 0 || nl >= got) break;
        this.take(buf.subarray(start, nl), true, out);
        start = nl + 1;
      }
      if (start < got) this.take(buf.subarray(start, got), false, out);
    }
    return out;
  }

  private take(piece: Buffer, ends: boolean, out: TailLine[]): void {
    if (!this.skipping) {
      if (this.partialLen + piece.length > this.o.maxLine) {
        this.skipping = true;
        this.partial = [];
        this.partialLen = 0;
      } else {
        this.partial.push(Buffer.from(piece));
        this.partialLen += piece.length;
      }
    }
    if (!ends) return;
    this.n++;
    if (this.skipping) {
      this.skipped.push(this.n);
      this.skipping = false;
      return;
    }
    const text = Buffer.concat(this.partial).toString('utf8');
    this.partial = [];
    this.partialLen = 0;
    out.push({ n: this.n, text });
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

/** the offset just after the last newline at or before `size` (0 if none) */
function lastLineEnd(fd: number, size: number): number {
  const buf = Buffer.allocUnsafe(64 * 1024);
  let end = size;
  while (end > 0) {
    const from = Math.max(0, end - buf.length);
    const got = fs.readSync(fd, buf, 0, end - from, from);
    const nl = buf.subarray(0, got).lastIndexOf(0x0a);
    if (nl >= 0) return from + nl + 1;
    end = from;
  }
  return 0;
}
