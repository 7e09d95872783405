// Faults per second through the supervisor socket, and p50/p99 of
// retry_after_lease (fault in → lease in the kernel → answer out), for 1 and
// 8 concurrent clients. The resolver runs as its own process (gensee
// supervise), as in production; every fault is a new destination, so each
// one installs and reads back a lease and writes its evidence durably.
// GENSEE_BENCH_NODE_ARGS passes node flags to the supervisor (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { removeCgroup } from '../src/cgroup';
import { detachHooks } from '../src/dataplane';
import { readStartTimeTicks } from '../src/resolver/subject';
import { openOperation, readKey } from '../src/state/operation';
import type { Fault } from '../src/protocol/types';
import { benchFault, benchNodeArgs, benchOperation, encodeFaults, execJson, percentile, print, submitTimed } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
const FLOOR = path.join(PACKAGE_ROOT, 'obj', 'gs-floor');
/** USER_HZ: /proc/PID/stat counts CPU time in these */
const TICKS_PER_S = 100;

/** utime + stime of a process (all its threads), in clock ticks */
function cpuTicks(pid: number): number {
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

interface PhaseResult {
  n: number;
  fps: number;
  p50: number;
  p99: number;
  supCpu: number;
  cliCpu: number;
  /** accept → answer sent, as the resolver measured it (its `stopped` line) */
  server: { p50: number; p99: number; count: number } | null;
}

export async function benchResolver(opts: { n1: number; n8: number; steadyWarm: number }): Promise<void> {
  const leaseAll = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '1-65535' }, ttl_s: 300 }], delegate: [] };
  const { name: cgName, cg, st, policy, wl } = benchOperation('gs-bench-rs', '/tmp/gs-bench-', 'policy.json', leaseAll);
  const ops: string[] = [];
  let seq = 0;

  // One supervisor per phase (its own operation on the same cgroup), so the
  // latency it prints when it stops covers that phase alone.
  const phase = async (clients: number, total: number, warm: number): Promise<PhaseResult> => {
    const op = `${cgName}-${clients}`;
    ops.push(op);
    const sup = spawn(
      process.execPath,
      [...benchNodeArgs(), GENSEE, 'supervise', '--op', op, '--cgroup', cg, '--policy', policy, '--state-dir', st, '--detach-on-exit'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let tail = '';
    const exited = new Promise<void>((r) => sup.once('exit', () => r()));
    try {
      await new Promise<void>((resolve, reject) => {
        sup.stdout!.on('data', (d: Buffer) => {
          // per-fault lines are not kept: only the end, for the `stopped` line
          tail = (tail + d.toString()).slice(-16384);
          if (tail.includes('gensee: supervising')) resolve();
        });
        sup.once('exit', () => reject(new Error(`supervise exited: ${tail}`)));
      });
      const rec = await openOperation(st, op);
      const key = await readKey(st, op);
      const sock = path.join(st, 'network-operations', op, 'supervisor.sock');
      const pid = wl.pid!;
      const start = readStartTimeTicks(pid)!;
      const fault = (): Fault => {
        const i = seq++;
        return benchFault(op, pid, start, `b-${i}`, `127.${(i >> 16) & 255}.${(i >> 8) & 255}.1`, 1000 + (i & 255));
      };
      const run = async (n: number) => {
        // what is timed is the authenticated round trip
        const bodies = encodeFaults(clients, Math.ceil(n / clients), fault);
        const supCpu0 = cpuTicks(sup.pid!);
        const cli0 = process.cpuUsage();
        const { lat, secs, wrong } = await submitTimed(bodies, { socketPath: sock, key, resolver: rec.resolver }, 'retry_after_lease');
        const cli = process.cpuUsage(cli0);
        const supUs = ((cpuTicks(sup.pid!) - supCpu0) * 1e6) / TICKS_PER_S;
        if (wrong) throw new Error(`${wrong} faults did not get retry_after_lease`);
        return { lat, secs, supUs, cliUs: cli.user + cli.system };
      };
      if (warm) await run(warm);
      const m = await run(total);
      sup.kill('SIGTERM');
      await exited;
      // "gensee: stopped; N answered on the socket (accept → answer sent: p50 X us, p99 Y us, max Z us); …"
      const sm = /stopped; (\d+) answered on the socket \(accept → answer sent: p50 (\d+) us, p99 (\d+) us/.exec(tail);
      const stopped = sm ? { answered: Number(sm[1]), answer_us: { p50: Number(sm[2]), p99: Number(sm[3]) } } : null;
      return {
        n: m.lat.length,
        fps: m.lat.length / m.secs,
        p50: percentile(m.lat, 50),
        p99: percentile(m.lat, 99),
        // CPU per fault, all threads: the resolver process, and this client process
        supCpu: m.supUs / m.lat.length,
        cliCpu: m.cliUs / m.lat.length,
        server: stopped?.answer_us ? { ...stopped.answer_us, count: stopped.answered } : null,
      };
    } finally {
      if (sup.exitCode === null && sup.signalCode === null) {
        sup.kill('SIGTERM');
        await exited;
      }
    }
  };

  // the floor: the same socket exchange and durable write in C, nothing else
  const floor = async (clients: number, total: number) => {
    const [r] = await execJson(FLOOR, [st, String(clients), String(total)]);
    return { fps: r.fps, p50: r.p50_ns / 1000, p99: r.p99_ns / 1000 };
  };

  try {
    const f1 = await floor(1, opts.n1);
    const f8 = await floor(8, opts.n8);
    // a fresh resolver (its first faults: code not yet optimised by V8, as
    // for the first faults of every `gensee run`), then one in steady state
    const one = await phase(1, opts.n1, 200);
    const oneWarm = await phase(1, opts.n1, opts.steadyWarm);
    const eight = await phase(8, opts.n8, 200);
    const eightWarm = await phase(8, opts.n8, opts.steadyWarm);
    const srv = (r: PhaseResult) => (r.server ? `${r.server.p50} / ${r.server.p99}` : '-');
    const row = (label: string, clients: number, r: PhaseResult, fl: { fps: number }, target: string) => [
      label,
      String(clients),
      r.n,
      r.fps.toFixed(0),
      `${((100 * r.fps) / fl.fps).toFixed(0)}%`,
      r.p50.toFixed(0),
      r.p99.toFixed(0),
      srv(r),
      r.supCpu.toFixed(0),
      r.cliCpu.toFixed(0),
      target,
    ];
    const floorRow = (clients: number, n: number, r: { fps: number; p50: number; p99: number }) =>
      ['C floor (socket + fdatasync only)', String(clients), n, r.fps.toFixed(0), '100%', r.p50.toFixed(0), r.p99.toFixed(0), '-', '-', '-', ''];
    print(
      'resolver: retry_after_lease through the authenticated socket (new destination each fault; lease installed + read back; evidence durable)',
      ['', 'clients', 'faults', 'faults/s', 'of floor', 'p50 us', 'p99 us', 'resolver p50/p99 us', 'resolver CPU us/fault', 'client CPU us/fault', 'targets'],
      [
        floorRow(1, opts.n1, f1),
        row('gensee, fresh resolver', 1, one, f1, '>= 5000/s, p99 <= 2000 us'),
        row(`gensee, after ${opts.steadyWarm} faults`, 1, oneWarm, f1, '>= 5000/s, p99 <= 2000 us'),
        floorRow(8, opts.n8, f8),
        row('gensee, fresh resolver', 8, eight, f8, '>= 5000/s, p99 <= 2000 us'),
        row(`gensee, after ${opts.steadyWarm} faults`, 8, eightWarm, f8, '>= 5000/s, p99 <= 2000 us'),
      ],
    );
    process.stdout.write(
      '  p50/p99: the client round trip (submitFault called → authenticated Resolution in hand);\n' +
        '  resolver p50/p99: accept → answer sent, as the resolver measures it (10 us resolution, warm-up included);\n' +
        '  C floor (bench/floor.c): the same connect/frame/answer exchange with two evidence-sized lines\n' +
        '  and a group-committed fdatasync per batch, nothing else: no resolver can be faster while\n' +
        '  the resolution must be durable before the answer. "of floor" is faults/s against it.\n',
    );
  } finally {
    wl.kill('SIGKILL');
    for (const op of ops) {
      try {
        detachHooks(op);
      } catch {
        /* best effort: --detach-on-exit did it */
      }
    }
    removeCgroup(cg);
    fs.rmSync(st, { recursive: true, force: true });
  }
}
