// The adversarial suite's harness: run obj/adv/attack AS the workload
// through the real CLI (`bin/gensee run`), with loopback listeners the
// policy denies counting every byte, and leave nothing behind.
//
// A run's policy allows exactly one TCP port (`allowed`) and one UDP port
// (`allowedUdp`), so the same listeners also prove that counting works: a
// control attack aimed at the allowed ports must be counted.
import type { Test } from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as dgram from 'node:dgram';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { findCgroup2Mount, removeCgroup, cgroupPids } from '../../src/cgroup';
import { detachHooks } from '../../src/dataplane';
import { decodeResolution } from '../../src/protocol/codec';
import { GENSEE_BIN, uniqueName, sleep, requireKernel } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';

export const ATTACK = path.join(PACKAGE_ROOT, 'obj', 'adv', 'attack');
export const IDENTITIES = [
  { name: 'default identity', flags: [] as string[] },
  { name: '--user nobody', flags: ['--user', 'nobody'] },
];

interface T {
  teardown(fn: () => unknown): void;
  comment(...m: unknown[]): void;
}

export interface Counter {
  port: number;
  conns: number;
  bytes: number;
}

/** A TCP listener on 127.0.0.1 counting connections and bytes. */
export async function tcpCounter(t: T): Promise<Counter> {
  const c: Counter = { port: 0, conns: 0, bytes: 0 };
  const socks = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    c.conns++;
    socks.add(s);
    s.on('data', (d: Buffer) => (c.bytes += d.length));
    s.on('error', () => undefined);
    s.on('close', () => socks.delete(s));
  });
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', () => res()));
  c.port = (srv.address() as net.AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((res) => {
        for (const s of socks) s.destroy();
        srv.close(() => res());
      }),
  );
  return c;
}

/** A UDP socket on 127.0.0.1 counting datagrams (conns) and bytes. */
export async function udpCounter(t: T): Promise<Counter> {
  const c: Counter = { port: 0, conns: 0, bytes: 0 };
  const sock = dgram.createSocket('udp4');
  sock.on('message', (m) => {
    c.conns++;
    c.bytes += m.length;
  });
  await new Promise<void>((res) => sock.bind(0, '127.0.0.1', () => res()));
  c.port = sock.address().port;
  t.teardown(() => new Promise<void>((res) => sock.close(() => res())));
  return c;
}

export interface Report {
  attack: string;
  pid: number;
  attempts: Record<string, string>;
  info: Record<string, unknown>;
}

export interface Env {
  st: string;
  op: string;
  opDir: string;
  denied: Counter;
  deniedUdp: Counter;
  allowed: Counter;
  allowedUdp: Counter;
  policy: string;
}

/** State dir, listeners and policy for one attack run; unique op name. */
export async function attackEnv(t: T, prefix: string): Promise<Env> {
  const st = shortStateDir(t as never);
  const op = uniqueName(prefix);
  const [denied, deniedUdp, allowed, allowedUdp] = [await tcpCounter(t), await udpCounter(t), await tcpCounter(t), await udpCounter(t)];
  const policy = path.join(st, 'policy.json');
  fs.writeFileSync(
    policy,
    JSON.stringify({
      schema: 1,
      grants: [{ network: { protocol: 'udp', address: '127.0.0.1', port: allowedUdp.port } }],
      leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(allowed.port) }, ttl_s: 60, max_uses: 0 }],
      delegate: [],
      // the attacks here drive io_uring at the hooks; without this it is refused outright (boundary.test.ts)
      io_uring: true,
    }),
  );
  t.teardown(() => cleanupOp(st, op));
  return { st, op, opDir: path.join(st, 'network-operations', op), denied, deniedUdp, allowed, allowedUdp, policy };
}

/** pids of every process whose argv carries token (the attack's --token) */
export function processesWith(token: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (argv[0] === ATTACK && argv.includes(token)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

function opCgroup(st: string, op: string): string {
  try {
    const rec = JSON.parse(fs.readFileSync(path.join(st, 'network-operations', op, 'operation.json'), 'utf8')) as { cgroup?: string };
    if (rec.cgroup) return rec.cgroup;
  } catch {
    /* no record */
  }
  return path.join(findCgroup2Mount(), 'gensee', op);
}

/** Leave nothing behind, even when the attack won or the run was killed. */
export async function cleanupOp(st: string, op: string): Promise<void> {
  for (const pid of processesWith(op)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* exited */
    }
  }
  const cg = opCgroup(st, op);
  try {
    if (fs.existsSync(cg)) {
      if (cgroupPids(cg).length) fs.writeFileSync(path.join(cg, 'cgroup.kill'), '1');
      for (let i = 0; i < 100 && cgroupPids(cg).length; i++) await sleep(10);
      removeCgroup(cg);
    }
  } catch {
    /* tolerated: a killed test may leave it to the next cleanup */
  }
  try {
    detachHooks(op);
  } catch {
    /* never attached, or already detached */
  }
}

let runs = 0;

export interface RunOut {
  code: number | null;
  signal: NodeJS.Signals | null;
  reports: Report[];
  /** the attack's lines that are not reports (e.g. signal-kill-all) */
  other: Record<string, unknown>[];
  /** gensee's own lines (--json-out) */
  events: Record<string, unknown>[];
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

/**
 * `gensee run --json-out FILE [identity flags] -- attack MODE …`: the
 * attack's lines are its stdout, gensee's own are FILE (the workload cannot
 * write there). onReady answers each {"phase":"ready"} line the attack
 * prints (the line written back to its stdin).
 */
export function runAttack(
  env: Env,
  mode: string,
  o: {
    identity: string[];
    args?: string[];
    onReady?: (phase: string, pid: number) => Promise<string> | string;
    timeoutMs?: number;
  },
): Promise<RunOut> {
  const jsonOut = path.join(env.st, `gensee-${++runs}.jsonl`);
  const args = [
    'run', '--state-dir', env.st, '--op', env.op, '--policy', env.policy, '--json-out', jsonOut, ...o.identity, '--',
    ATTACK, mode,
    '--port', String(env.denied.port), '--uport', String(env.deniedUdp.port), '--aport', String(env.allowed.port),
    '--state', env.st, '--op', env.op, '--token', env.op, ...(o.args ?? []),
  ];
  const t0 = Date.now();
  return new Promise((resolve) => {
    const c = spawn(GENSEE_BIN, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let buf = '';
    let timedOut = false;
    c.stdin.on('error', () => undefined);
    const timer = setTimeout(() => {
      timedOut = true;
      c.kill('SIGKILL');
    }, o.timeoutMs ?? 60_000);
    c.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        let j: Record<string, unknown>;
        try {
          j = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (j.phase === 'ready') {
          const reply = o.onReady ? Promise.resolve(o.onReady(String(j.attack), Number(j.pid))) : Promise.resolve('');
          reply.then(
            (r) => c.stdin.write(`${r}\n`),
            (e: Error) => {
              err += `onReady: ${e.message}\n`;
              c.stdin.write('\n');
            },
          );
        }
      }
    });
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code, signal) => {
      clearTimeout(timer);
      const all = out
        .split('\n')
        .filter((l) => l.trim().startsWith('{'))
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            return {};
          }
        });
      resolve({
        code,
        signal,
        reports: all.filter((l) => 'attempts' in l) as unknown as Report[],
        other: all.filter((l) => 'attack' in l && !('attempts' in l) && l.phase !== 'ready'),
        events: jsonLines(jsonOut),
        stdout: out,
        stderr: err,
        timedOut,
        ms: Date.now() - t0,
      });
    });
  });
}

/** the JSON lines of a file; none when it is missing (gensee run refused to start), a torn last line left out */
function jsonLines(file: string): Record<string, unknown>[] {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((l) => {
    try {
      return l ? [JSON.parse(l) as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

export function verify(env: Env): { code: number | null; out: string } {
  const r = spawnSync(GENSEE_BIN, ['verify', '--op', env.op, '--state-dir', env.st], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** the attempts of a report that worked */
export function worked(r: Report | undefined): string[] {
  if (!r) return [];
  return Object.entries(r.attempts)
    .filter(([, v]) => v === 'ok')
    .map(([k]) => k);
}

type A = Test;

/**
 * The suite's assertion: the attack reported, nothing it tried worked, no
 * byte (and no connection or datagram) reached a denied listener, and the
 * evidence verifies.
 */
export async function assertHeld(t: A, env: Env, r: RunOut, mode: string, o: { verify?: boolean } = {}): Promise<Report | undefined> {
  const rep = r.reports.find((x) => x.attack === mode);
  t.ok(rep, `${mode}: the attack ran and reported (gensee run exit ${r.code ?? r.signal}${r.timedOut ? ', timed out' : ''})`, {
    stderr: r.stderr.slice(-2000),
  });
  // a mode's child reports (e.g. nested-userns-kid) are held to the same rule
  const all = r.reports.filter((x) => x.attack === mode || x.attack.startsWith(`${mode}-`));
  t.same(all.flatMap((x) => worked(x).map((k) => `${x.attack}: ${k}`)), [], `${mode}: every attempt was refused`, { reports: all });
  await sleep(150); // anything in flight on loopback lands
  t.equal(env.denied.bytes, 0, `${mode}: no byte reached the denied TCP listener`);
  t.equal(env.denied.conns, 0, `${mode}: no connection reached the denied TCP listener`);
  t.equal(env.deniedUdp.conns, 0, `${mode}: no datagram reached the denied UDP listener`);
  if (o.verify !== false) {
    const v = verify(env);
    t.equal(v.code, 0, `${mode}: gensee verify holds afterwards`, { verify: v.out.slice(-2000) });
  }
  return rep;
}

/** the resolver's pid from operation.json (the supervisor of this run) */
export function supervisorPid(env: Env): number {
  const rec = JSON.parse(fs.readFileSync(path.join(env.opDir, 'operation.json'), 'utf8')) as { resolver?: { pid: number } };
  return rec.resolver?.pid ?? 0;
}

/** state letter of /proc/PID/stat ('' when the process is gone) */
export function procState(pid: number): string {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3);
  } catch {
    return '';
  }
}

/** decode a supervisor.sock reply (hex of the whole frame) */
export function decodeReply(hex: string): { action: string; reason: string } | null {
  const b = Buffer.from(hex, 'hex');
  if (b.length < 4) return null;
  const d = decodeResolution(b.subarray(4, 4 + b.readUInt32BE(0)));
  return d.ok ? { action: d.resolution.action, reason: d.resolution.reason } : { action: 'undecodable', reason: d.detail };
}

export function faultLines(env: Env): Record<string, unknown>[] {
  try {
    return fs
      .readFileSync(path.join(env.opDir, 'faults.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
}

/**
 * One attack for each identity: run it as the workload, assert it held.
 * check (optional) adds assertions of its own on the report.
 */
export function attackTest(
  tap: Test,
  mode: string,
  title: string,
  o: {
    args?: (env: Env) => string[];
    onReady?: (env: Env) => (phase: string, pid: number) => Promise<string> | string;
    check?: (t: Test, env: Env, r: RunOut, rep: Report | undefined) => unknown;
  } = {},
): void {
  for (const id of IDENTITIES) {
    tap.test(`${mode}, ${id.name}: ${title}`, async (t) => {
      if (!requireKernel(t)) return;
      const env = await attackEnv(t, `adv-${mode}`.slice(0, 20));
      const r = await runAttack(env, mode, { identity: id.flags, args: o.args?.(env), onReady: o.onReady?.(env) });
      const rep = await assertHeld(t, env, r, mode);
      await o.check?.(t, env, r, rep);
    });
  }
}

/** diskflood's progress line (obj/adv/diskflood): connects tried, and how each ended */
export interface FloodProgress {
  t: number;
  attempts: number;
  ok: number;
  EACCES: number;
  ECONNREFUSED: number;
  other: number;
}

/** a JSONL log's lines as objects; a line that does not parse (a torn one) is {} */
export function logLines(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}
