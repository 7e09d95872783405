// The failed state's marker (docs/design.md, "The shared state disk"): while
// an operation's evidence cannot be written, its supervisor says so where
// `gensee status` and `gensee ls` can read it without the state disk — a
// small file under /run/gensee/failed/ (GENSEE_RUN_DIR overrides /run/gensee),
// named by the state dir and the operation, removed when writes succeed
// again. A marker whose pid is not the operation's live resolver is stale.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';

export const RUN_DIR_ENV = 'GENSEE_RUN_DIR';

export interface FailedMarker {
  pid: number;
  /** the resolver's start time (field 22 of /proc/PID/stat) */
  start_time_ticks?: number;
  /** the operation's cgroup: `gensee stop` can end it when the record cannot be read */
  cgroup?: string;
  since: string;
  /** the log that failed, e.g. faults.jsonl */
  log: string;
  error: string;
}

function markerPath(stateDir: string, op: string): string {
  const base = process.env[RUN_DIR_ENV] || '/run/gensee';
  const tag = createHash('sha256').update(path.resolve(stateDir)).digest('hex').slice(0, 16);
  return path.join(base, 'failed', `${tag}-${op}.json`);
}

/** best effort: a host without a writable /run still has the stderr line */
export function writeFailedMarker(stateDir: string, op: string, m: FailedMarker): void {
  const file = markerPath(stateDir, op);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, JSON.stringify(m) + '\n', { mode: 0o600 });
  } catch {
    /* no marker: status shows the operation as active */
  }
}

export function clearFailedMarker(stateDir: string, op: string): void {
  try {
    fs.unlinkSync(markerPath(stateDir, op));
  } catch {
    /* none */
  }
}

/** the marker for this operation whose writer still runs, or null (the record itself may be unreadable) */
export function readLiveFailedMarker(stateDir: string, op: string): FailedMarker | null {
  try {
    const m = JSON.parse(fs.readFileSync(markerPath(stateDir, op), 'utf8')) as FailedMarker;
    if (!m || !Number.isSafeInteger(m.pid) || m.pid <= 0) return null;
    process.kill(m.pid, 0);
    return readFailedMarker(stateDir, op, m.pid);
  } catch {
    return null;
  }
}

/** the marker for this operation written by pid, or null */
export function readFailedMarker(stateDir: string, op: string, pid: number): FailedMarker | null {
  try {
    const file = markerPath(stateDir, op);
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.uid !== 0 && st.uid !== process.getuid?.()) return null;
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as FailedMarker;
    return m && m.pid === pid && typeof m.since === 'string' ? m : null;
  } catch {
    return null;
  }
}

/** the marker, whoever wrote it and whether it still runs (gensee stop on a disk that fails reads), or null */
export function readAnyFailedMarker(stateDir: string, op: string): FailedMarker | null {
  try {
    const file = markerPath(stateDir, op);
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.uid !== 0) return null;
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as FailedMarker;
    return m && Number.isSafeInteger(m.pid) && typeof m.cgroup === 'string' && path.isAbsolute(m.cgroup) ? m : null;
  } catch {
    return null;
  }
}
