// `gensee run --json-out FILE`: where gensee's own lines go when a machine
// reads them. The workload shares gensee's stdout and stderr, so anything
// printed there can be forged by it; FILE is opened by gensee before the
// workload exists, close-on-exec (libuv opens every file O_CLOEXEC, and
// gensee-exec closes every fd from 3 up before CMD runs), 0600 and owned by
// gensee's uid: the workload holds no descriptor for it and cannot open it.
import * as fs from 'node:fs';
import { GenseeError } from '../errors';

const { O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/**
 * Open FILE for gensee's lines: created 0600 (or emptied), never through
 * a symlink (O_NOFOLLOW, so /dev/stdout and /proc/self/fd/N are refused),
 * a regular file owned by gensee's uid that no group or other may write,
 * and not the file gensee's own stdout or stderr already is.
 */
export function openJsonOut(file: string): number {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO with no reader fails now (ENXIO) instead of hanging the open
    fd = fs.openSync(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new GenseeError('E_SYMLINK', `--json-out ${file}: is a symlink; gensee writes its lines only to a file it opens itself`);
    throw new GenseeError('E_USAGE', `--json-out ${file}: ${code ?? (e as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new GenseeError('E_NOT_FILE', `--json-out ${file}: not a regular file`);
    const uid = process.geteuid ? process.geteuid() : 0;
    if (st.uid !== uid) throw new GenseeError('E_BAD_MODE', `--json-out ${file}: owned by uid ${st.uid}, not by gensee's uid ${uid}`);
    if (st.mode & 0o022) throw new GenseeError('E_BAD_MODE', `--json-out ${file}: mode ${(st.mode & 0o777).toString(8)} lets others write it`);
    for (const [name, std] of [['stdout', 1], ['stderr', 2]] as const) {
      let s: fs.Stats;
      try {
        s = fs.fstatSync(std);
      } catch {
        continue; // closed
      }
      if (s.dev === st.dev && s.ino === st.ino) throw new GenseeError('E_USAGE', `--json-out ${file}: is gensee's ${name}, which the workload shares`);
    }
    // emptied only once it is known to be gensee's to write
    fs.ftruncateSync(fd, 0);
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
  return fd;
}

/** Write all of text to fd (a regular file: one write in practice). */
export function writeAll(fd: number, text: string): void {
  const b = Buffer.from(text);
  for (let off = 0; off < b.length; ) off += fs.writeSync(fd, b, off, b.length - off);
}
