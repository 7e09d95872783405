// Shared helpers for real-kernel tests: capability check (fail, never skip,
// under GENSEE_REQUIRE_KERNEL=1), unique names, cgroups and pinned ops that
// are cleaned up in teardown even when a test fails, loopback servers, and
// the gs-probe process that makes the real calls.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as dgram from 'node:dgram';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { PACKAGE_ROOT } from '../../src/addon';
import { findCgroup2Mount, removeCgroup } from '../../src/cgroup';
import { attachHooks, detachHooks, DataPlane } from '../../src/dataplane';
import { ensureBpffs } from '../../src/bpffs';
import { timeScale, timeScaled } from './time';

export { timeScale, timeScaled };

// tap's Test type, structurally (keeps helpers independent of tap internals)
export interface T {
  teardown(fn: () => unknown): void;
  fail(msg: string): void;
  end(): void;
}

export const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
export const GENSEE_BIN = path.join(PACKAGE_ROOT, 'bin', 'gensee');
/** the parent cgroup `gensee run` makes operations in (GENSEE_CGROUP_PARENT, as src/cli/run.ts reads it) */
export const CGROUP_PARENT = process.env.GENSEE_CGROUP_PARENT ?? 'gensee';

/** Why the kernel tests cannot run here, or null when they can. */
export function kernelUnavailable(): string | null {
  if (process.getuid && process.getuid() !== 0) return 'not root';
  try {
    findCgroup2Mount();
  } catch {
    return 'no cgroup2 mount';
  }
  if (!fs.existsSync('/sys/kernel/btf/vmlinux')) return 'no BTF';
  if (!fs.existsSync(PROBE)) return `probe not built: ${PROBE}`;
  try {
    ensureBpffs();
  } catch (e) {
    return `bpffs: ${(e as Error).message}`;
  }
  return null;
}

/**
 * Returns true when the caller may proceed. Under GENSEE_REQUIRE_KERNEL=1 a
 * missing capability is a test failure; otherwise the test is skipped.
 */
export function requireKernel(t: { fail(msg: string): unknown; plan(n: number, comment?: string): unknown; name?: string }): boolean {
  const why = kernelUnavailable();
  tally(why ? 'skipped' : 'ran', t.name ?? '?', why);
  if (!why) return true;
  if (process.env.GENSEE_REQUIRE_KERNEL === '1') t.fail(`kernel test cannot run: ${why} (GENSEE_REQUIRE_KERNEL=1)`);
  else t.plan(0, `kernel test skipped: ${why}`);
  return false;
}

/** make test counts kernel tests run/skipped across all test processes */
function tally(kind: 'ran' | 'skipped', name: string, why: string | null): void {
  const f = process.env.GENSEE_KERNEL_TALLY;
  if (!f) return;
  fs.appendFileSync(f, `${kind}\t${path.basename(process.argv[1] ?? '?')}\t${name}${why ? `\t${why}` : ''}\n`);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** A fresh cgroup under the cgroup2 mount, removed at teardown. */
export function testCgroup(t: T, prefix = 'gs-test'): string {
  const p = path.join(findCgroup2Mount(), uniqueName(prefix));
  fs.mkdirSync(p);
  t.teardown(() => removeCgroup(p));
  return p;
}

/** Detach op's hooks at teardown, if they are still there (the test may have detached them, or never attached). */
export function detachAtTeardown(t: T, op: string): void {
  t.teardown(() => {
    try {
      detachHooks(op);
    } catch {
      /* never attached, or already gone */
    }
  });
}

/** A fresh cgroup with the hooks attached and pinned; detached at teardown. */
export function testOp(t: T, prefix = 'gs-test'): { op: string; cgroup: string; dp: DataPlane } {
  const cgroup = testCgroup(t, prefix);
  const op = uniqueName(prefix);
  attachHooks(op, cgroup);
  const dp = DataPlane.open(op);
  t.teardown(() => {
    dp.close();
    detachHooks(op);
  });
  return { op, cgroup, dp };
}

export interface ProbeResult {
  pid: number;
  results: { result: string; errno: number }[];
  summary?: Record<string, number>;
  raw: string;
}

export function probe(args: string[], opts: { timeoutMs?: number } = {}): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    execFile(PROBE, args, { timeout: timeScaled(opts.timeoutMs ?? 30_000) }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`gs-probe ${args.join(' ')} failed: ${err.message} ${stderr}`));
      const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const head = lines.shift() as { pid: number };
      const res: ProbeResult = { pid: head.pid, results: [], raw: stdout };
      for (const l of lines) {
        if ('result' in l) res.results.push(l as { result: string; errno: number });
        else res.summary = l as Record<string, number>;
      }
      resolve(res);
    });
  });
}

/** A TCP listener on host counting the connections it accepts and the bytes they send; closed at teardown. */
export async function tcpServer(t: T, host = '127.0.0.1'): Promise<{ port: number; accepted: () => number; bytes: () => number }> {
  let accepted = 0;
  let bytes = 0;
  const srv = net.createServer((s) => {
    accepted++;
    s.on('data', (d: Buffer) => (bytes += d.length));
    s.on('error', () => undefined);
    s.end();
  });
  await new Promise<void>((res) => srv.listen(0, host, () => res()));
  t.teardown(() => new Promise<void>((res) => srv.close(() => res())));
  return { port: (srv.address() as net.AddressInfo).port, accepted: () => accepted, bytes: () => bytes };
}

export async function udpServer(t: T, host = '127.0.0.1'): Promise<{ port: number; received: () => number }> {
  let received = 0;
  const sock = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  sock.on('message', () => received++);
  await new Promise<void>((res) => sock.bind(0, host, () => res()));
  t.teardown(() => new Promise<void>((res) => sock.close(() => res())));
  return { port: sock.address().port, received: () => received };
}

/** A port on host that nothing listens on (bound then released). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((res) => srv.listen(0, host, () => res()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((res) => srv.close(() => res()));
  return port;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Poll fn until it returns a truthy value; timeoutMs is a normal host's deadline, scaled by timeScaled(). */
export async function waitFor<X>(fn: () => X | undefined | null | false, timeoutMs = 3000, stepMs = 10): Promise<X> {
  const limit = timeScaled(timeoutMs);
  const end = Date.now() + limit;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${limit} ms${limit === timeoutMs ? '' : ` (${timeoutMs} ms × GENSEE_TIME_SCALE ${timeScale()})`}`);
    await sleep(stepMs);
  }
}

/** the state letter of /proc/PID/stat (R, S, D, T, t, Z, …), or null once the process is gone */
export function procState(pid: number): string | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** syscall numbers the tests wait on, for this machine's architecture */
export const SYSCALL_NR: Record<'connect', number> =
  process.arch === 'arm64' ? { connect: 203 } : process.arch === 'x64' ? { connect: 42 } : { connect: -1 };

/**
 * The syscall number PID's main thread is blocked in (/proc/PID/syscall),
 * or null when it is running, in user space, or gone.
 */
export function blockedInSyscall(pid: number): number | null {
  try {
    const f = fs.readFileSync(`/proc/${pid}/syscall`, 'utf8').trim().split(' ')[0];
    return /^\d+$/.test(f) ? Number(f) : null;
  } catch {
    return null;
  }
}

/** pids in a cgroup whose /proc/PID/comm is comm */
export function pidsByComm(cgroup: string, comm: string): number[] {
  let procs: string[];
  try {
    procs = fs.readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
  return procs.map(Number).filter((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === comm;
    } catch {
      return false;
    }
  });
}

/**
 * A barrier on the ring buffer: one denied connect from `cgroup` to a fresh
 * unleased port, then wait until its event arrives in `events`. The ring is
 * one FIFO, so every event the calls made before this one could produce has
 * been delivered by then. Returns the events before the marker and removes
 * the marker from `events`.
 */
export async function ringBarrier(events: { tuple: { port: number } }[], cgroup: string, timeoutMs = 5000): Promise<typeof events> {
  const port = await freePort();
  const r = await probe(['--cgroup', cgroup, 'connect', 'tcp', '127.0.0.1', String(port)]);
  if (r.results[0]?.result !== 'EPERM') throw new Error(`ring marker to :${port} was not refused: ${r.raw}`);
  const i = await waitFor(() => {
    const k = events.findIndex((e) => e.tuple.port === port);
    return k >= 0 ? k + 1 : null;
  }, timeoutMs);
  events.splice(i - 1, 1);
  return events.slice(0, i - 1);
}
