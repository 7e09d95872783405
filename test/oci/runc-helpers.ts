// Real runc for the OCI listener tests: a busybox-static bundle whose
// seccomp profile sends connect/sendto/sendmsg/sendmmsg to the listener, the
// listener as a child process, and cleanup of everything even on failure.
// (The same helpers as runc.test.ts, shared with fdkeep.test.ts.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, execFile, execFileSync, ChildProcess } from 'node:child_process';
import { requireKernel, uniqueName, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { findCgroup2Mount } from '../../src/cgroup';
import { pinDirFor } from '../../src/bpffs';
import { detachHooks } from '../../src/dataplane';

export const BUSYBOX = '/bin/busybox';

export interface TapT {
  teardown(fn: () => unknown): void;
  fail(msg: string): unknown;
  plan(n: number, comment?: string): unknown;
}

export function onPath(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** requireKernel, plus runc and a static busybox; fails (never skips) under GENSEE_REQUIRE_KERNEL=1 */
export function requireRunc(t: TapT): boolean {
  if (!requireKernel(t)) return false;
  const why = !onPath('runc') ? 'runc not installed' : !fs.existsSync(BUSYBOX) ? `${BUSYBOX} missing (busybox-static)` : null;
  if (!why) return true;
  if (process.env.GENSEE_REQUIRE_KERNEL === '1') t.fail(`runc test cannot run: ${why} (GENSEE_REQUIRE_KERNEL=1)`);
  else t.plan(0, `runc test skipped: ${why}`);
  return false;
}

/** a short temp dir (unix socket paths hold 107 bytes), removed at teardown */
export function tempRoot(t: TapT): string {
  const d = fs.mkdtempSync('/tmp/gs-runc-');
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** every mounted cgroup hierarchy (v1 controllers and the unified one) */
export function cgroupMounts(): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => / - cgroup2? /.test(l))
    .map((l) => l.split(' ')[4]);
}

/** remove what runc may have left of cgroupsPath in any hierarchy */
export async function removeContainerCgroups(rel: string): Promise<void> {
  const v2 = path.join(findCgroup2Mount(), rel);
  try {
    if (fs.readFileSync(path.join(v2, 'cgroup.procs'), 'utf8').trim()) fs.writeFileSync(path.join(v2, 'cgroup.kill'), '1');
  } catch {
    /* gone */
  }
  for (const m of cgroupMounts()) {
    const d = path.join(m, rel);
    for (let i = 0; i < 50 && fs.existsSync(d); i++) {
      try {
        fs.rmdirSync(d);
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}

export interface Listener {
  child: ChildProcess;
  events: Record<string, unknown>[];
  stderr: () => string;
  waitEvent(pred: (e: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<number | null>;
}

/** bin/gensee oci-listener --json as a child; stopped by pid at teardown */
export async function startListener(t: TapT, args: string[]): Promise<Listener> {
  // the holder is on by default; a test that does not ask for one gets none (SIGTERM stops, as it expects)
  const keep = args.includes('--fdkeep') || args.includes('--no-fdkeep') ? [] : ['--no-fdkeep'];
  const child = spawn(process.execPath, [GENSEE_BIN, 'oci-listener', '--json', ...keep, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const events: Record<string, unknown>[] = [];
  let err = '';
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        events.push({ event: 'unparsed', line });
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  t.teardown(stop);
  const l: Listener = {
    child,
    events,
    stderr: () => err,
    waitEvent: (pred, timeoutMs = 30_000) =>
      waitFor(() => events.find(pred) ?? (child.exitCode !== null ? (() => { throw new Error(`listener exited ${child.exitCode}: ${err}`); })() : undefined), timeoutMs),
    stop,
  };
  await l.waitEvent((e) => e.event === 'listening');
  return l;
}

export interface Bundle {
  dir: string;
  id: string;
  /** linux.cgroupsPath, relative to every hierarchy's root */
  cgroupRel: string;
}

/**
 * A busybox-static bundle from `runc spec`, edited: args, no terminal, host
 * network namespace, a unique cgroupsPath, the seccomp listener profile.
 */
export function makeBundle(t: TapT, root: string, name: string, o: { script: string; listenerPath: string; metadata?: string }): Bundle {
  const dir = path.join(root, name);
  const bin = path.join(dir, 'rootfs', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(path.join(dir, 'rootfs', 'tmp'));
  fs.copyFileSync(BUSYBOX, path.join(bin, 'busybox'));
  fs.chmodSync(path.join(bin, 'busybox'), 0o755);
  for (const a of ['sh', 'nc', 'sleep', 'echo', 'test', '[']) fs.symlinkSync('busybox', path.join(bin, a));
  execFileSync('runc', ['spec', '--bundle', dir]);
  const cfgPath = path.join(dir, 'config.json');
  const cfg = JSON.parse(fs.readFileSync(cfgPath, 'utf8')) as {
    process: { terminal: boolean; args: string[] };
    root: { readonly?: boolean };
    linux: { namespaces: { type: string }[]; cgroupsPath?: string; seccomp?: unknown };
  };
  const id = uniqueName(`gs-c${name}`);
  cfg.process.terminal = false;
  cfg.process.args = ['sh', '-c', o.script];
  cfg.root.readonly = false; // the script keeps nc's messages in /tmp
  // share the host network namespace: the loopback servers are this test's
  cfg.linux.namespaces = cfg.linux.namespaces.filter((n) => n.type !== 'network');
  // absolute, one level: runc creates it in every hierarchy (and, in hybrid mode, the unified one)
  cfg.linux.cgroupsPath = `/${id}`;
  cfg.linux.seccomp = {
    defaultAction: 'SCMP_ACT_ALLOW',
    listenerPath: o.listenerPath,
    ...(o.metadata !== undefined ? { listenerMetadata: o.metadata } : {}),
    syscalls: [{ names: ['connect', 'sendto', 'sendmsg', 'sendmmsg'], action: 'SCMP_ACT_NOTIFY' }],
  };
  fs.writeFileSync(cfgPath, JSON.stringify(cfg, null, 1));
  const b = { dir, id, cgroupRel: id };
  t.teardown(async () => {
    try {
      execFileSync('runc', ['delete', '-f', id], { stdio: 'ignore' });
    } catch {
      /* never created, or already deleted */
    }
    await removeContainerCgroups(b.cgroupRel);
  });
  return b;
}

export interface RunResult {
  code: number | null;
  out: string;
}

export function runcRun(b: Bundle, timeoutMs = 30_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile('runc', ['run', '--bundle', b.dir, b.id], { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? null) : 0;
      resolve({ code: typeof code === 'number' ? code : null, out: stdout + stderr });
    });
  });
}

export function writePolicy(dir: string, op: string, leasedPort: number): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const policy = {
    schema: 1,
    grants: [],
    leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(leasedPort) }, ttl_s: 30, max_uses: 0 }],
    delegate: [],
    fault_deadline_ms: 5000,
  };
  fs.writeFileSync(path.join(dir, `${op}.json`), JSON.stringify(policy), { mode: 0o600 });
}

export function cleanupOp(t: TapT, op: string): void {
  t.teardown(() => {
    if (fs.existsSync(pinDirFor(op))) detachHooks(op);
  });
}

/** the container reports each nc's exit status and message as key=status lines */
export const ncScript = (pairs: [string, number][]) =>
  pairs.map(([k, port]) => `busybox nc 127.0.0.1 ${port} </dev/null >/dev/null 2>/tmp/${k}.err; echo "${k}=$? $(cat /tmp/${k}.err)"`).join('; ');

/**
 * The listener serving on a fresh temp root (state in root/st), and a fresh
 * op id cleaned up at teardown; given leasedPort, root/pol holds the op's
 * policy leasing it and the listener reads policies from there.
 */
export async function serveOp(t: TapT, leasedPort?: number) {
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const op = uniqueName('gs-oci');
  cleanupOp(t, op);
  const args = ['--socket', sock, '--state-dir', stateDir];
  if (leasedPort !== undefined) {
    writePolicy(policyDir, op, leasedPort);
    args.push('--policy-dir', policyDir);
  }
  const l = await startListener(t, args);
  return { root, stateDir, policyDir, sock, op, l };
}

