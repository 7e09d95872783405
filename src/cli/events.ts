// gensee events --op ID [--follow] [--json]: the operation's events.jsonl
// (boundary events, suppressed counts, attention and its clearing), one line
// each for a person, or the line objects (--json). --follow then subscribes
// to the live stream (events.sock) from the last line printed, so nothing is
// missed or printed twice, until the operation stops or SIGINT.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, requireOp, out } from './args';
import { GenseeError, isErrno } from '../errors';
import { resolveStateDir, checkOpDir } from '../state/operation';
import { assertNoSymlinks, readLines } from '../state/fsutil';
import { readToken } from '../events/token';
import { EVENTS_SOCKET } from '../events/stream';
import { EventClient, EventStreamError } from '../events/client';

export const usage = 'usage: gensee events --op ID [--follow] [--json]';

export const EVENTS_FILE = 'events.jsonl';
const C = fs.constants;
const CHUNK = 1 << 16;
/** a line longer than this is not an events.jsonl line (the writer caps details at 300 characters) */
const MAX_LINE = 1 << 20;

/**
 * Every complete line of a JSONL file (no symlinks, regular file), in order.
 * A last line without its newline (being written, or torn) is not passed on;
 * the result says whether there was one. A missing file is no lines.
 */
export async function forEachLine(file: string, fn: (text: string) => void): Promise<{ lines: number; partial: boolean; missing: boolean }> {
  let lines = 0;
  let partial = false;
  const found = await readLines(
    file,
    (line, complete) => {
      if (!complete) {
        partial = true;
        return;
      }
      lines++;
      fn(line.toString('utf8'));
    },
    { chunk: CHUNK, maxLine: MAX_LINE, missingOk: true },
  );
  return found ? { lines, partial, missing: false } : { lines: 0, partial: false, missing: true };
}

/** the last complete line of a file (read from its end), or null */
export function lastLine(file: string): string | null {
  assertNoSymlinks(file);
  let fd: number;
  try {
    fd = fs.openSync(file, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return null;
    if (isErrno(e) && e.code === 'ELOOP') throw new GenseeError('E_SYMLINK', `refusing symlink at ${file}`);
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new GenseeError('E_NOT_FILE', `not a regular file: ${file}`);
    const len = Math.min(st.size, 64 << 10);
    const buf = Buffer.alloc(len);
    let n = 0;
    while (n < len) {
      const r = fs.readSync(fd, buf, n, len - n, st.size - len + n);
      if (r === 0) break;
      n += r;
    }
    const text = buf.toString('utf8', 0, n);
    const end = text.lastIndexOf('\n');
    if (end < 0) return null;
    const start = text.lastIndexOf('\n', end - 1) + 1;
    if (start === 0 && len < st.size) return null; // longer than the window: not an events line
    return text.slice(start, end);
  } finally {
    fs.closeSync(fd);
  }
}

/** what `ls` shows of an operation's last event */
export interface LastEvent {
  seq: number;
  /** the boundary kind, or the line type (suppressed, attention, attention_cleared) */
  kind: string;
  /** when the control decided (boundary) or the line was written */
  at: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const s = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** the last line of <dir>/events.jsonl, summarized; null when there is none */
export function lastEvent(dir: string): LastEvent | null {
  const text = lastLine(path.join(dir, EVENTS_FILE));
  if (text === null) return null;
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return { seq: 0, kind: 'unreadable', at: '-' };
  }
  if (!isObj(o)) return { seq: 0, kind: 'unreadable', at: '-' };
  const ev = isObj(o.event) ? o.event : null;
  return {
    seq: typeof o.seq === 'number' ? o.seq : 0,
    kind: (o.type === 'boundary' && ev ? s(ev.kind) : undefined) ?? s(o.type) ?? s(o.kind) ?? '?',
    at: (ev ? s(ev.at) : undefined) ?? s(o.at) ?? '-',
  };
}

/** one line for a terminal: control characters shown as '?' */
const clean = (v: unknown): string => String(v).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');

/** An events.jsonl line object as one human line: time, kind, control, target, detail. */
export function formatEvent(o: Obj): string {
  const ev = isObj(o.event) ? o.event : {};
  let at = s(o.at) ?? '-';
  let kind: string;
  let control = '-';
  let target = '-';
  let detail: string;
  switch (o.type) {
    case 'boundary': {
      at = s(ev.at) ?? at;
      kind = s(ev.kind) ?? 'boundary';
      control = s(ev.control) ?? '-';
      target = s(ev.target) ?? '-';
      const ids = [o.tool_id !== undefined ? `tool ${clean(o.tool_id)}` : '', o.fault_id !== undefined ? `fault ${clean(o.fault_id)}` : ''].filter(Boolean);
      detail = `${s(ev.detail) ?? ''}${ids.length ? ` (${ids.join(', ')})` : ''}`;
      break;
    }
    case 'suppressed':
      kind = 'suppressed';
      detail = `${clean(o.count)} more boundary events${o.second !== undefined ? ` in ${clean(o.second)}` : ''} not logged one by one (counted in counters.jsonl)`;
      if (o.tools && typeof o.tools === 'object') detail += `; from tools: ${Object.entries(o.tools as Obj).map(([k, v]) => `${k} ${clean(v)}`).join(', ')}`;
      break;
    case 'attention':
      kind = 'attention';
      control = s(o.signature) ?? '-';
      detail = `${s(o.detail) ?? ''}${Array.isArray(o.evidence) && o.evidence.length ? ` (evidence: lines ${o.evidence.map(clean).join(', ')})` : ''}`;
      break;
    case 'attention_cleared':
      kind = 'attention_cleared';
      detail = `by ${clean(o.by)}${o.person !== undefined ? ` ${clean(o.person)}` : ''}${o.note ? `: ${clean(o.note)}` : ''}`;
      break;
    default:
      // a line of another kind (torn_line after a crash, ...): shown whole
      kind = s(o.type) ?? s(o.kind) ?? '?';
      {
        const { seq: _seq, at: _at, prev: _prev, log: _log, ...rest } = o;
        detail = JSON.stringify(rest);
      }
  }
  return [at, kind, control, target, detail].map(clean).join('  ');
}

/** `log` is the stream's addition: --json prints the events.jsonl line object */
function withoutLog(o: Obj): Obj {
  const { log: _log, ...rest } = o;
  return rest;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, follow: { type: 'boolean', short: 'f' }, json: { type: 'boolean' } }, false);
  const op = requireOp(values.op);
  const json = values.flags.has('json');
  const follow = values.flags.has('follow');
  const stateDir = resolveStateDir(values['state-dir']);
  const dir = checkOpDir(stateDir, op); // unknown op → E_UNKNOWN_OP, exit 2
  const note = (m: string) => process.stderr.write(`gensee events: ${m}\n`);

  let lastSeq = 0;
  const print = (text: string, o: Obj | null) => {
    if (o && typeof o.seq === 'number') lastSeq = Math.max(lastSeq, o.seq);
    if (json) {
      if (o) out(text);
      else note(`skipped a line that is not JSON: ${clean(text.slice(0, 80))}`);
    } else out(o ? formatEvent(o) : `?  unreadable line: ${clean(text.slice(0, 200))}`);
  };
  const file = path.join(dir, EVENTS_FILE);
  const got = await forEachLine(file, (text) => {
    let o: unknown = null;
    try {
      o = JSON.parse(text);
    } catch {
      /* printed as unreadable */
    }
    print(text, isObj(o) ? o : null);
  });
  if (!follow) {
    if (got.lines === 0 && !json) note(`no events for ${op}${got.missing ? ` (no ${EVENTS_FILE} yet)` : ''}`);
    if (got.partial) note(`the last line of ${EVENTS_FILE} is incomplete (being written, or torn); not printed`);
    return 0;
  }

  let token: string;
  try {
    token = await readToken(dir);
  } catch (e) {
    if (e instanceof GenseeError && e.code === 'E_STATE' && /no live stream token/.test(e.message)) {
      note(`no supervisor is serving ${op} (no live stream token): printed the file`);
      return 0;
    }
    throw e;
  }
  let client: EventClient;
  try {
    client = await EventClient.connect({ socketPath: path.join(dir, EVENTS_SOCKET), token, logs: ['events'], since: { events: lastSeq }, reconnect: { retries: 5, delayMs: 200, afterDrop: true } });
  } catch (e) {
    if (e instanceof EventStreamError && e.reason === 'unavailable') {
      note(`no supervisor is serving ${op} (nothing listens on ${EVENTS_SOCKET}): printed the file`);
      return 0;
    }
    throw e;
  }
  let interrupted = false;
  const stop = () => {
    interrupted = true;
    client.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    for await (const m of client) print(JSON.stringify(withoutLog(m)), json ? withoutLog(m) : m);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  const end = client.ended;
  if (interrupted) return 0;
  if (end?.error) note(`live stream lost: ${end.error.message}`);
  else if (end && end.code !== 1000) note(`live stream closed: ${end.reason || `code ${end.code}`}`);
  return 0;
}
