// Benchmark helpers: numbers and ratios against a baseline measured in the same run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile, spawn, ChildProcess } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { findCgroup2Mount, removeCgroup } from '../src/cgroup';
import { detachHooks } from '../src/dataplane';
import { encodeFault } from '../src/protocol/codec';
import { submitFault, SubmitOptions } from '../src/resolver/client';
import type { Fault, Resolution } from '../src/protocol/types';

export function execJson(cmd: string, args: string[]): Promise<Record<string, number>[]> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message} ${stderr}`));
      resolve(stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>));
    });
  });
}

/**
 * The Node floor's server (bench/floor-node.ts) on SOCK, logging to LOG,
 * once it listens; `design` picks where its fdatasync runs: libuv's thread
 * pool ("pool") or the event loop itself at the end of a turn ("loop").
 * Design "plumbing" is bench/floor-plumbing.ts instead: gensee's addon
 * path with a decision that does nothing (always with the intent).
 */
/** intent: true, the --intent exchange (two dependent fdatasyncs); 'one-sync', the same lines made durable by one */
export async function startNodeFloor(sock: string, log: string, design: 'pool' | 'loop' | 'plumbing', intent: boolean | 'one-sync'): Promise<{ stop: () => Promise<void> }> {
  const script = design === 'plumbing' ? 'floor-plumbing.js' : 'floor-node.js';
  const flag = design === 'plumbing' || !intent ? [] : intent === 'one-sync' ? ['--one-sync'] : ['--intent'];
  const args = [path.join(PACKAGE_ROOT, 'dist', 'bench', script), sock, log, ...flag];
  const { proc, exited } = await spawnReady(args, { FLOOR_NODE_SYNC: design }, 'ready\n', 'node floor');
  return {
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
      fs.rmSync(sock, { force: true });
      fs.rmSync(log, { force: true });
    },
  };
}

/**
 * node ARGS (env added to ours), once its stdout has said `ready`; its
 * stdout's tail stays readable. Rejects with that tail if it exits first.
 */
function spawnReady(args: string[], env: NodeJS.ProcessEnv, ready: string, what: string): Promise<{ proc: ChildProcess; tail: () => string; errTail: () => string; exited: Promise<void> }> {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let tail = '';
  // stderr still reaches ours; its end is kept too (GENSEE_DEBUG's figures)
  let errTail = '';
  proc.stderr!.on('data', (d: Buffer) => {
    process.stderr.write(d);
    errTail = (errTail + d.toString()).slice(-16384);
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      tail = (tail + d.toString()).slice(-16384);
      if (tail.includes(ready)) resolve({ proc, tail: () => tail, errTail: () => errTail, exited });
    });
    proc.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready: ${tail}`)));
  });
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** A new cgroup `${prefix}-<pid>-<time>` (its name is returned) holding one
 * sleeping process, the workload a bench's faults name; a new state
 * directory (mkdtemp of stPrefix) with policy written to policyFile in it. */
let benchOps = 0;
export function benchOperation(prefix: string, stPrefix: string, policyFile: string, policy: object, sleepS = 600): { name: string; cg: string; st: string; policy: string; wl: ChildProcess } {
  const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${benchOps++}`;
  const cg = path.join(findCgroup2Mount(), name);
  const st = fs.mkdtempSync(stPrefix);
  fs.mkdirSync(cg);
  const file = path.join(st, policyFile);
  fs.writeFileSync(file, JSON.stringify(policy));
  const wl = spawn('sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec sleep ${sleepS}`], { stdio: 'ignore' });
  return { name, cg, st, policy: file, wl };
}

/**
 * Undo benchOperation once its supervisor is gone: the workload killed,
 * the hooks detached (if a --detach-on-exit supervisor did not), the cgroup
 * and the state directory removed.
 */
export function disposeBenchOperation(o: { name: string; cg: string; st: string; wl: ChildProcess }): void {
  o.wl.kill('SIGKILL');
  try {
    detachHooks(o.name);
  } catch {
    /* the supervisor detached them on stop */
  }
  removeCgroup(o.cg);
  fs.rmSync(o.st, { recursive: true, force: true });
}

/** until the workload of benchOperation is in its cgroup (a fault must name a process that is there) */
export async function workloadJoined(cg: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (fs.readFileSync(path.join(cg, 'cgroup.procs'), 'utf8').trim()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`bench: the workload never joined ${cg}`);
}

/** node flags for a supervisor a bench starts (GENSEE_BENCH_NODE_ARGS, e.g. "--cpu-prof") */
export function benchNodeArgs(): string[] {
  return process.env.GENSEE_BENCH_NODE_ARGS ? process.env.GENSEE_BENCH_NODE_ARGS.split(' ') : [];
}

/** USER_HZ: /proc/PID/stat counts CPU time in these */
export const TICKS_PER_S = 100;

/** utime + stime of a /proc/.../stat file (a process's, or one thread's under task/), in clock ticks; text: its content, when read already */
export function cpuTicks(statFile: string, text = fs.readFileSync(statFile, 'utf8')): number {
  // fields after the last ')': comm may hold spaces and parentheses
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/** A `gensee supervise --detach-on-exit` a bench started, serving (see startBenchSupervisor). */
export interface BenchSupervisor {
  proc: ChildProcess;
  /** the end of its stdout so far (per-fault lines are not kept) */
  tail(): string;
  /** the end of its stderr so far */
  errTail(): string;
  /** SIGTERM if it still runs; resolves once it has exited */
  stop(): Promise<void>;
}

/**
 * Start `gensee supervise --detach-on-exit` for the operation of
 * benchOperation and resolve once it says it is supervising. node: node
 * flags (default benchNodeArgs()); env: added to the environment. If it
 * exits first, rejects with the end of its output.
 */
export async function startBenchSupervisor(
  o: { name: string; cg: string; st: string; policy: string },
  opts: { node?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<BenchSupervisor> {
  const gensee = path.join(PACKAGE_ROOT, 'bin', 'gensee');
  const args = [...(opts.node ?? benchNodeArgs()), gensee, 'supervise', '--op', o.name, '--cgroup', o.cg, '--policy', o.policy, '--state-dir', o.st, '--detach-on-exit'];
  const { proc, tail, errTail, exited } = await spawnReady(args, opts.env ?? {}, 'gensee: supervising', 'supervise');
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  return { proc, tail, errTail, stop };
}

/** A manual fault of process pid (started at start ticks) to address:port over TCP/IPv4 */
export function benchFault(op: string, pid: number, start: number, faultId: string, address: string, port: number): Fault {
  return {
    schema: 2,
    operation_id: op,
    fault_id: faultId,
    subject: { process: { pid, start_time_ticks: start } },
    effect: { network: { family: 'ipv4', protocol: 'tcp', address, port } },
    source: 'manual',
    observed_at_boot_ns: 0n,
    cgroup_id: 0n,
  };
}

export interface EncodedFault {
  id: string;
  body: Uint8Array;
}

/** per faults for each of clients, encoded: the pause adapter receives them
 * encoded (from C), so a bench encodes them before its clock starts */
export function encodeFaults(clients: number, per: number, fault: () => Fault): EncodedFault[][] {
  return Array.from({ length: clients }, () =>
    Array.from({ length: per }, () => {
      const f = fault();
      return { id: f.fault_id, body: encodeFault(f) };
    }),
  );
}

/** Submits each client's faults in turn, the clients concurrently, and times
 * each authenticated round trip (us) and the whole (s); `wrong` counts the
 * answers that are unauthenticated or not `action`. */
export async function submitTimed(
  clients: EncodedFault[][],
  to: Pick<SubmitOptions, 'socketPath' | 'key' | 'resolver'>,
  action: Resolution['action'],
): Promise<{ lat: number[]; secs: number; wrong: number }> {
  const lat: number[] = [];
  let wrong = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (mine) => {
      for (const { id, body } of mine) {
        const a = process.hrtime.bigint();
        const r = await submitFault({ ...to, body, faultId: id });
        lat.push(Number(process.hrtime.bigint() - a) / 1000);
        if (!r.authenticated || r.resolution.action !== action) wrong++;
      }
    }),
  );
  return { lat, secs: Number(process.hrtime.bigint() - t0) / 1e9, wrong };
}

export function row(cells: (string | number)[], widths: number[]): string {
  return cells.map((c, i) => String(c).padEnd(widths[i] ?? 12)).join(' ');
}

export function print(title: string, header: string[], rows: (string | number)[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)) + 2);
  process.stdout.write(`\n== ${title}\n${row(header, widths)}\n`);
  for (const r of rows) process.stdout.write(row(r, widths) + '\n');
}

/** min-max of per-round ratios, e.g. "1.21-1.40x" */
export function spread(ratios: number[]): string {
  return `${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x`;
}

export function verdict(met: boolean): string {
  return met ? 'MET' : 'NOT MET';
}
