// The cost of boundary events on the deny path (issue 12, "Measured"):
// faults/s and p50/p99 of the answer (submitFault called → authenticated deny
// in hand) for faults a DENY_ALL policy refuses, submitted over
// supervisor.sock by concurrent clients, with events OFF, ON, and ON with a
// STALLED live-stream subscriber (connected with the token, never reading).
// Target: ON costs at most 10% of OFF's throughput, and the answer never
// waits for a subscriber.
//
// One supervisor, in its own process (as in production), serves every
// configuration; the rounds interleave them (order rotated each round), so
// drift, page cache and V8 state fall on all three alike. The switch is made
// in that process, without a product flag: "off" makes the operation's
// EventLog.boundary() a no-op, so no boundary line is gated, redacted,
// written, group-committed or published to the stream. Everything else is
// as in production and the same in all three: faults.jsonl durable before
// every answer, the per-destination refusal counts, the live stream server.
// (Off still builds the reporter's detail string, a few template literals:
// the cost measured is, if anything, a hair low.)
//
// The flood gate (200 boundary lines a second, then one suppressed line) is
// the production behaviour and is kept: on a deny flood almost every event is
// only counted. The written/suppressed counts are printed.
//
// Standalone: node dist/bench/events.js (GENSEE_BENCH_QUICK=1 for a short run).
import { Progress } from '../src/progress';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { spawn, ChildProcess } from 'node:child_process';
import { readStartTimeTicks } from '../src/resolver/subject';
import { openOperation, opDir, readKey } from '../src/state/operation';
import { connectEvents, EventClient } from '../src/events/client';
import { readToken } from '../src/events/token';
import type { Fault } from '../src/protocol/types';
import { benchFault, benchNodeArgs, benchOperation, disposeBenchOperation, encodeFaults, median, percentile, print, submitTimed } from './util';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [] };
/** target: events on keep at least this share of the deny path's throughput */
const MIN_ON_RATIO = 0.9;

type Config = 'off' | 'on' | 'stalled';
const CONFIGS: Config[] = ['off', 'on', 'stalled'];

interface ChildStats {
  written: number;
  suppressed: number;
  subscribers: number;
  /** the stalled subscriber as the stream server sees it */
  sub: { queued_bytes: number; max_queued_bytes: number; socket_buffered: number; sent: number } | null;
  rss: number;
  /** the supervisor process's CPU so far (all threads), us */
  cpuUs: number;
}

// ---- the supervisor's process ---------------------------------------------

/** Run in the child: serve the operation, take commands (one JSON line each) on stdin. */
export async function serveForBench(): Promise<void> {
  // loaded here: the parent never opens a supervisor itself
  const { Supervisor, loadPolicyFile } = await import('../src/supervisor');
  const a = JSON.parse(process.env.GENSEE_BENCH_EVENTS_ARGS!) as { stateDir: string; op: string; cgroup: string; policy: string };
  const sup = await Supervisor.start({
    stateDir: a.stateDir,
    op: a.op,
    cgroup: a.cgroup,
    policy: await loadPolicyFile(a.policy),
    detachOnExit: true,
    onError: (e) => process.stderr.write(`bench supervisor: ${e.message}\n`),
  });
  const events = sup.events as { boundary: (typeof sup.events)['boundary'] };
  const reply = (v: unknown) => process.stdout.write(JSON.stringify(v) + '\n');
  reply({ ready: true });
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const m = JSON.parse(line) as { cmd: 'events'; on: boolean } | { cmd: 'stats' } | { cmd: 'stop' };
    if (m.cmd === 'events') {
      if (m.on) delete (events as { boundary?: unknown }).boundary; // the class's own method again
      else events.boundary = () => 0;
      reply({ ok: true });
    } else if (m.cmd === 'stats') {
      const s = sup.stream.stats()[0];
      const st: ChildStats = {
        written: sup.events.stats.written,
        suppressed: sup.events.stats.suppressed,
        subscribers: sup.stream.subscribers(),
        sub: s ? { queued_bytes: s.queued_bytes, max_queued_bytes: s.max_queued_bytes, socket_buffered: s.socket_buffered, sent: s.sent } : null,
        rss: process.memoryUsage().rss,
        cpuUs: ((u) => u.user + u.system)(process.cpuUsage()),
      };
      reply(st);
    } else {
      delete (events as { boundary?: unknown }).boundary;
      await sup.stop();
      reply({ stopped: true });
      break;
    }
  }
  rl.close();
}

class Child {
  private readonly lines: AsyncIterator<string>;
  constructor(readonly proc: ChildProcess) {
    this.lines = readline.createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  }
  async read<T>(): Promise<T> {
    const r = await this.lines.next();
    if (r.done) throw new Error('bench supervisor exited');
    return JSON.parse(r.value) as T;
  }
  async ask<T>(m: object): Promise<T> {
    this.proc.stdin!.write(JSON.stringify(m) + '\n');
    return this.read<T>();
  }
}

// ---- the bench -------------------------------------------------------------

interface Round {
  fps: number;
  lat: number[];
  /** supervisor CPU per fault, us (less sensitive than faults/s to other load on the machine) */
  cpu: number;
}

export async function benchEvents(opts: { clients: number; n: number; rounds: number; warm: number }): Promise<void> {
  const { name: op, cg, st, policy, wl } = benchOperation('gs-bench-ev', '/tmp/gs-bench-ev-', 'deny-all.json', DENY_ALL);
  let child: Child | null = null;
  let stalled: EventClient | null = null;
  try {
    // the workload must be in the cgroup before a fault names it
    for (let i = 0; i < 200 && !fs.readFileSync(path.join(cg, 'cgroup.procs'), 'utf8').trim(); i++) await new Promise((r) => setTimeout(r, 5));
    const proc = spawn(process.execPath, [...benchNodeArgs(), '-e', `require(${JSON.stringify(__filename)}).serveForBench().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\\n'); process.exit(1); })`], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, GENSEE_BENCH_EVENTS_ARGS: JSON.stringify({ stateDir: st, op, cgroup: cg, policy }) },
    });
    child = new Child(proc);
    await child.read<{ ready: true }>();
    const c = child;
    const rec = await openOperation(st, op);
    const key = await readKey(st, op);
    const dir = opDir(st, op);
    const sock = path.join(dir, 'supervisor.sock');
    const token = await readToken(dir);
    const pid = wl.pid!;
    const start = readStartTimeTicks(pid)!;
    let seq = 0;
    const fault = (): Fault => {
      const i = seq++;
      return benchFault(op, pid, start, `e-${i}`, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 443);
    };
    const run = async (n: number): Promise<Round> => {
      const bodies = encodeFaults(opts.clients, Math.ceil(n / opts.clients), fault);
      const { lat, secs, wrong } = await submitTimed(bodies, { socketPath: sock, key, resolver: rec.resolver }, 'deny');
      if (wrong) throw new Error(`${wrong} faults were not answered with an authenticated deny`);
      return { fps: lat.length / secs, lat, cpu: 0 };
    };
    const setEvents = (on: boolean) => c.ask<{ ok: true }>({ cmd: 'events', on });
    const stats = () => c.ask<ChildStats>({ cmd: 'stats' });

    // warm both paths (V8, page cache) before anything is measured
    for (const on of [true, false]) {
      await setEvents(on);
      await run(opts.warm);
    }
    const rounds: Record<Config, Round[]> = { off: [], on: [], stalled: [] };
    const lines: Record<Config, { written: number; suppressed: number }> = { off: { written: 0, suppressed: 0 }, on: { written: 0, suppressed: 0 }, stalled: { written: 0, suppressed: 0 } };
    const stall = { rounds: 0, stalledAtEnd: 0, dropped: 0, maxQueued: 0, sentMax: 0 };
    for (let r = 0; r < opts.rounds; r++) {
      for (let k = 0; k < CONFIGS.length; k++) {
        const cfg = CONFIGS[(r + k) % CONFIGS.length];
        await setEvents(cfg !== 'off');
        if (cfg === 'stalled') {
          // the product's client, never iterated: it stops reading from the socket
          // after one message, so the server's queue for it only grows
          stalled = await connectEvents({ socketPath: path.join(dir, 'events.sock'), token, highWater: 1 });
        }
        const s0 = await stats();
        const m = await run(opts.n);
        const s1 = await stats();
        m.cpu = (s1.cpuUs - s0.cpuUs) / m.lat.length;
        rounds[cfg].push(m);
        lines[cfg].written += s1.written - s0.written;
        lines[cfg].suppressed += s1.suppressed - s0.suppressed;
        if (cfg === 'stalled') {
          stall.rounds++;
          // the server drops a subscriber that makes no progress for 10 s or is over 16 MiB
          if (s1.subscribers === 0) stall.dropped++;
          if (s1.sub && s1.sub.queued_bytes + s1.sub.socket_buffered > 0) stall.stalledAtEnd++;
          stall.maxQueued = Math.max(stall.maxQueued, s1.sub?.max_queued_bytes ?? 0);
          stall.sentMax = Math.max(stall.sentMax, s1.sub?.sent ?? 0);
          stalled!.terminate();
          stalled = null;
          // the server notices the close before the next round
          for (let i = 0; i < 100 && (await stats()).subscribers > 0; i++) await new Promise((res) => setTimeout(res, 10));
        }
      }
    }
    const end = await stats();
    await setEvents(true);

    const agg = (cfg: Config) => {
      const all = rounds[cfg].flatMap((x) => x.lat);
      return { fps: median(rounds[cfg].map((x) => x.fps)), p50: percentile(all, 50), p99: percentile(all, 99), n: all.length, cpu: median(rounds[cfg].map((x) => x.cpu)) };
    };
    const off = agg('off');
    const on = agg('on');
    const stl = agg('stalled');
    // per round, each configuration against the same round's off
    const paired = (cfg: Config) => median(rounds[cfg].map((x, i) => x.fps / rounds.off[i].fps));
    const pairedCpu = (cfg: Config) => median(rounds[cfg].map((x, i) => x.cpu / rounds.off[i].cpu));
    const onRatio = paired('on');
    const stlRatio = paired('stalled');
    const onPass = onRatio >= MIN_ON_RATIO;
    const stlPass = stlRatio >= MIN_ON_RATIO;
    // the subscriber really was stalled: the server held lines for it at the end of every stalled round
    const reallyStalled = stall.stalledAtEnd === stall.rounds;
    const row = (label: string, r: { fps: number; p50: number; p99: number; n: number; cpu: number }, ratio: string, p99x: string, cpux: string, l: { written: number; suppressed: number }, target: string) => [
      label,
      r.n,
      r.fps.toFixed(0),
      ratio,
      r.p50.toFixed(0),
      r.p99.toFixed(0),
      p99x,
      r.cpu.toFixed(0),
      cpux,
      `${l.written} / ${l.suppressed}`,
      target,
    ];
    print(
      `events on the deny path: DENY_ALL faults through the authenticated socket, ${opts.clients} clients, ${opts.rounds} interleaved rounds x ${opts.n} faults per configuration`,
      ['events', 'faults', 'faults/s', 'of off', 'p50 us', 'p99 us', 'p99 of off', 'supervisor CPU us/fault', 'CPU of off', 'lines written / suppressed', 'target'],
      [
        row('off (boundary() a no-op)', off, '1.00x', '1.00x', '1.00x', lines.off, ''),
        row('on (flood gate 200/s)', on, `${onRatio.toFixed(2)}x`, `${(on.p99 / off.p99).toFixed(2)}x`, `${pairedCpu('on').toFixed(2)}x`, lines.on, `>= ${MIN_ON_RATIO.toFixed(2)}x: ${onPass ? 'PASS' : 'FAIL'}`),
        row('on + stalled subscriber', stl, `${stlRatio.toFixed(2)}x`, `${(stl.p99 / off.p99).toFixed(2)}x`, `${pairedCpu('stalled').toFixed(2)}x`, lines.stalled, `>= ${MIN_ON_RATIO.toFixed(2)}x, never waits: ${stlPass && reallyStalled ? 'PASS' : 'FAIL'}`),
      ],
    );
    const mib = (b: number) => (b / (1 << 20)).toFixed(1);
    process.stdout.write(
      '  faults/s: median over rounds; "of off": median of each round against the same round\'s off;\n' +
        '  p50/p99: the client round trip (submitFault called → authenticated deny in hand), all rounds pooled;\n' +
        '  supervisor CPU: its process, all threads, per fault (median over rounds; "CPU of off" paired per round like "of off");\n' +
        '  lines: boundary lines written to events.jsonl / events counted into suppressed lines by the flood gate\n' +
        '  (a suppressed line itself, written by the gate\'s 1 s timer, counts as written in whichever round is running).\n' +
        `  stalled subscriber (connectEvents, never read): held lines at the end of ${stall.stalledAtEnd} of ${stall.rounds} rounds, ` +
        `at most ${mib(stall.maxQueued)} MiB queued for it, ${stall.sentMax} messages handed to its socket; ` +
        `dropped by the server in ${stall.dropped} rounds; supervisor RSS ${mib(end.rss)} MiB\n`,
    );
    if (!onPass || !stlPass || !reallyStalled) process.exitCode = 1;
  } finally {
    stalled?.terminate();
    if (child) {
      const exited = new Promise<void>((r) => (child!.proc.exitCode !== null ? r() : child!.proc.once('exit', () => r())));
      try {
        await Promise.race([child.ask({ cmd: 'stop' }), new Promise((r) => setTimeout(r, 15000))]);
      } catch {
        /* it died: cleaned up below */
      }
      child.proc.stdin!.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.proc.exitCode === null) {
        child.proc.kill('SIGKILL');
        await exited;
      }
    }
    disposeBenchOperation({ name: op, cg, st, wl });
  }
}

function quick(): boolean {
  return process.env.GENSEE_BENCH_QUICK === '1';
}

if (require.main === module) {
  const p = new Progress('bench', null);
  p.next('events');
  benchEvents({ clients: 8, n: quick() ? 1500 : 5000, rounds: quick() ? 3 : 9, warm: quick() ? 1000 : 5000 }).then(
    () => p.done('events'),
    (e) => {
      p.done('events failed');
      process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
      process.exitCode = 1;
    },
  );
}
