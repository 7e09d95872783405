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

// tap's Test type, structurally (keeps helpers independent of tap internals)
export interface T {
  teardown(fn: () => unknown): void;
  fail(msg: string): void;
  end(): void;
}

export const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
export const GENSEE_BIN = path.join(PACKAGE_ROOT, 'bin', 'gensee');

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
    execFile(PROBE, args, { timeout: opts.timeoutMs ?? 30_000 }, (err, stdout, stderr) => {
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

export async function tcpServer(t: T, host = '127.0.0.1'): Promise<{ port: number; accepted: () => number }> {
  let accepted = 0;
  const srv = net.createServer((s) => {
    accepted++;
    s.on('error', () => undefined);
    s.end();
  });
  await new Promise<void>((res) => srv.listen(0, host, () => res()));
  t.teardown(() => new Promise<void>((res) => srv.close(() => res())));
  return { port: (srv.address() as net.AddressInfo).port, accepted: () => accepted };
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

export async function waitFor<X>(fn: () => X | undefined | null | false, timeoutMs = 3000, stepMs = 10): Promise<X> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms`);
    await sleep(stepMs);
  }
}
