// gensee upgrade --socket PATH [--json]: replace the running `gensee
// oci-listener` on PATH with a new one (the installed binary, its own
// command line) without breaking a container. SIGHUP to the pid in
// PATH.pid: it starts its successor, which takes every fd from the holder
// (or systemd's fd store), tells the old one to leave and serves; this
// waits until the old pid is gone and the new one is listening.
// gensee upgrade --op ID [--state-dir DIR]: the same for `gensee supervise`
// (hooks only): SIGHUP to the operation's resolver (operation.json); its
// successor reopens the operation once it has left; this waits until the
// operation names a new, live resolver.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, out } from './args';
import { GenseeError } from '../errors';
import { listenerPidFile } from './oci';
import { processAlive } from '../oci/listener';
import { openOperation, resolveStateDir } from '../state/operation';
import { readStartTimeTicks } from '../resolver/subject';
import { requireOp } from './args';

export const usage = 'usage: gensee upgrade (--socket PATH | --op ID [--state-dir DIR]) [--timeout-ms N] [--json]';

function readPid(file: string): number | null {
  try {
    const n = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 1 ? n : null;
  } catch {
    return null;
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { socket: { type: 'string' }, op: { type: 'string' }, json: { type: 'boolean' }, 'timeout-ms': { type: 'string' } }, false);
  if (values.flags.has('help')) {
    out(usage);
    return 0;
  }
  if (values.socket !== undefined && values.op !== undefined) throw new GenseeError('E_USAGE', `--socket (an oci-listener) and --op (a supervise) name different things: give one; ${usage}`);
  if (!values.socket && values.op === undefined) throw new GenseeError('E_USAGE', `--socket PATH or --op ID is required; ${usage}`);
  const timeoutMs = values['timeout-ms'] !== undefined ? Number(values['timeout-ms']) : 60_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new GenseeError('E_USAGE', `--timeout-ms takes a positive integer, got ${values['timeout-ms']}`);
  if (values.op !== undefined) return upgradeSupervise(requireOp(values.op), resolveStateDir(values['state-dir']), timeoutMs, values.flags.has('json'));
  if (!values.socket) throw new GenseeError('E_USAGE', `--socket PATH is required; ${usage}`);
  const file = listenerPidFile(path.resolve(values.socket));
  const old = readPid(file);
  if (old === null || !processAlive(old)) throw new GenseeError('E_STATE', `no oci-listener runs on ${values.socket} (${file} ${old === null ? 'is missing' : `names pid ${old}, which is gone`})`);
  const t0 = Date.now();
  process.kill(old, 'SIGHUP');
  let now: number | null = null;
  for (;;) {
    now = readPid(file);
    if (now !== null && now !== old && processAlive(now) && !processAlive(old)) break;
    if (Date.now() - t0 > timeoutMs) {
      throw new GenseeError('E_STATE', `upgrade of pid ${old} did not finish within ${timeoutMs} ms (now ${now ?? 'none'} in ${file}); the fds stay with the holder`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = Date.now() - t0;
  out(values.flags.has('json') ? JSON.stringify({ event: 'upgraded', old_pid: old, new_pid: now, ms }) : `gensee: oci-listener pid ${old} replaced by pid ${now} in ${ms} ms`);
  return 0;
}

/** the operation's live resolver (pid and start time), or null */
async function liveResolverOf(stateDir: string, op: string): Promise<{ pid: number; start: number } | null> {
  const r = (await openOperation(stateDir, op)).resolver;
  if (!r) return null;
  return readStartTimeTicks(r.pid) === r.start_time_ticks ? { pid: r.pid, start: r.start_time_ticks } : null;
}

async function upgradeSupervise(op: string, stateDir: string, timeoutMs: number, json: boolean): Promise<number> {
  const old = await liveResolverOf(stateDir, op);
  if (!old) throw new GenseeError('E_STATE', `operation ${op} has no live resolver to upgrade (gensee status --op ${op})`);
  const t0 = Date.now();
  process.kill(old.pid, 'SIGHUP');
  let now: { pid: number } | null = null;
  for (;;) {
    now = await liveResolverOf(stateDir, op).catch(() => null);
    if (now && now.pid !== old.pid && (!processAlive(old.pid) || readStartTimeTicks(old.pid) !== old.start)) break;
    if (Date.now() - t0 > timeoutMs) throw new GenseeError('E_STATE', `upgrade of operation ${op}'s resolver pid ${old.pid} did not finish within ${timeoutMs} ms (now ${now?.pid ?? 'none'}); its hooks stay pinned, failing closed`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = Date.now() - t0;
  out(json ? JSON.stringify({ event: 'upgraded', op, old_pid: old.pid, new_pid: now.pid, ms }) : `gensee: operation ${op}: resolver pid ${old.pid} replaced by pid ${now.pid} in ${ms} ms`);
  return 0;
}
