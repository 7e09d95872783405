// Start-up and the first connect (issue 31): what an agent that wraps each
// tool call in `gensee run`, or a CI step per command, pays every time.
// Every round, its parts interleaved (the order rotates), each against a
// floor measured in the same round:
// - wall time of `node -e 0` (the floor: any Node program pays it) and of
//   `gensee run --no-dns -- /bin/true`; target <= 0.3 s;
// - the first connects of a fresh `gensee run` (pause mode, each a new
//   allowed destination: the slow path), p50 / p99 of the first N and the
//   very first alone, against the Node floor (bench/notify-floor.c with its
//   exchange served by bench/floor-node.ts, the faster of its two designs);
//   targets p50 <= 1.5x, p99 <= 2x;
// - where the `gensee run -- true` time goes: the GENSEE_TRACE_STARTUP
//   marks of one traced run per round, as steps (median of rounds).
//
//   node dist/bench/startup.js        (make bench runs it as a section)
// GENSEE_BENCH_ROUNDS=N sets the rounds (default 7; GENSEE_BENCH_QUICK=1: 3).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { servedByFloor } from './pause';
import { execJson, median, print, spread, verdict } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');

/** wall ms of cmd args, and its stderr; rejects if it fails */
function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ ms: number; stderr: string; stdout: string }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 64 << 20, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (err) return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message} ${stderr}`));
      resolve({ ms, stderr, stdout });
    });
  });
}

/** the GENSEE_TRACE_STARTUP lines of one run: [ms since process start, step] in order */
function traceOf(stderr: string): [number, string][] {
  return stderr
    .split('\n')
    .map((l) => /^gensee-trace: ([0-9.]+) ms (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[1]), m[2]]);
}

interface Connects {
  p50: number;
  p99: number;
  first: number;
}

export async function benchStartup(opts: { rounds: number; newDest: number }): Promise<void> {
  const st = fs.mkdtempSync('/tmp/gs-bench-s-');
  const policy = path.join(st, 'slow.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '20000-60000' }, ttl_s: 600 }], delegate: [] }));
  let op = 0;
  const opName = () => `gs-bench-s-${process.pid}-${op++}`;
  const ports = ['--repeat', String(opts.newDest), 'bench-ports', 'tcp', '127.0.0.1', '20000'];
  const probeLine = (lines: Record<string, number>[]): Connects => {
    const l = lines.find((x) => 'first_ns' in x);
    if (!l) throw new Error(`startup bench: no probe line in ${JSON.stringify(lines)}`);
    return { p50: l.p50_ns / 1000, p99: l.p99_ns / 1000, first: l.first_ns / 1000 };
  };
  type Kind = 'node' | 'run' | 'connect' | 'floor' | 'floor1';
  // floor1: the Node floor with its lines under one fdatasync (the durable work gensee does per grant now)
  const res = { node: [] as number[], run: [] as number[], connect: [] as Connects[], floor: [] as Connects[], floor1: [] as Connects[] };
  const traces: [number, string][][] = [];
  const parts: Record<Kind, () => Promise<void>> = {
    node: async () => void res.node.push((await timed(process.execPath, ['-e', '0'])).ms),
    run: async () => void res.run.push((await timed(GENSEE, ['run', '--state-dir', st, '--op', opName(), '--no-dns', '--', '/bin/true'])).ms),
    connect: async () => void res.connect.push(probeLine(await execJson(GENSEE, ['run', '--state-dir', st, '--op', opName(), '--policy', policy, '--no-dns', '--json', '--', PROBE, ...ports]))),
    // the faster of the Node floor's two designs by p50, as bench/pause.ts takes it
    floor: async () => void res.floor.push(probeLine([await servedByFloor(st, `s-${op++}`, ['pool', 'loop'], true, ports)])),
    floor1: async () => void res.floor1.push(probeLine([await servedByFloor(st, `s-${op++}`, ['pool', 'loop'], 'one-sync', ports)])),
  };
  const kinds: Kind[] = ['node', 'run', 'connect', 'floor', 'floor1'];
  try {
    // page cache, the addon, the state dir: not charged to the first round
    await parts.node();
    await parts.run();
    res.node.length = 0;
    res.run.length = 0;
    const f = (x: number) => x.toFixed(0);
    const f1 = (x: number) => x.toFixed(1);
    process.stdout.write(`\n== start-up and first connect, per round (wall ms; connects us; the order of the parts rotates each round)\n`);
    for (let r = 0; r < opts.rounds; r++) {
      for (let k = 0; k < kinds.length; k++) await parts[kinds[(r + k) % kinds.length]]();
      const t = await timed(GENSEE, ['run', '--state-dir', st, '--op', opName(), '--no-dns', '--', '/bin/true'], { GENSEE_TRACE_STARTUP: '1' });
      traces.push(traceOf(t.stderr));
      const c = res.connect[r];
      const fl = res.floor[r];
      process.stdout.write(
        `  round ${r + 1}: node -e 0 ${f(res.node[r])} ms, gensee run -- true ${f(res.run[r])} ms (${(res.run[r] / res.node[r]).toFixed(1)}x); ` +
          `first connects p50 ${f1(c.p50)} us / floor ${f1(fl.p50)} (${(c.p50 / fl.p50).toFixed(2)}x), p99 ${f1(c.p99)} / ${f1(fl.p99)} (${(c.p99 / fl.p99).toFixed(2)}x), ` +
          `1st ${f1(c.first)} / ${f1(fl.first)} (${(c.first / fl.first).toFixed(2)}x)\n`,
      );
    }
    const paired = (a: number[], b: number[]) => a.map((x, i) => x / b[i]);
    const q = (xs: Connects[], k: keyof Connects) => xs.map((x) => x[k]);
    const runS = median(res.run) / 1000;
    const r50 = paired(q(res.connect, 'p50'), q(res.floor, 'p50'));
    const r99 = paired(q(res.connect, 'p99'), q(res.floor, 'p99'));
    const r1 = paired(q(res.connect, 'first'), q(res.floor, 'first'));
    print(
      `start-up and first connect, median of ${opts.rounds} interleaved rounds (first connects: n=${opts.newDest} new destinations per fresh run)`,
      ['row', 'gensee', 'floor', 'ratio (median of rounds)', 'spread', 'target', 'met'],
      [
        ['`gensee run --no-dns -- true`, wall ms / `node -e 0`', f(median(res.run)), f(median(res.node)), median(paired(res.run, res.node)).toFixed(1) + 'x', spread(paired(res.run, res.node)), '<= 300 ms', verdict(runS <= 0.3)],
        ['first connects p50 us / Node floor', f1(median(q(res.connect, 'p50'))), f1(median(q(res.floor, 'p50'))), median(r50).toFixed(2) + 'x', spread(r50), '<= 1.5x', verdict(median(r50) <= 1.5)],
        ['first connects p99 us / Node floor p99', f1(median(q(res.connect, 'p99'))), f1(median(q(res.floor, 'p99'))), median(r99).toFixed(2) + 'x', spread(r99), '<= 2x', verdict(median(r99) <= 2)],
        ['the very first connect us / Node floor\'s', f1(median(q(res.connect, 'first'))), f1(median(q(res.floor, 'first'))), median(r1).toFixed(2) + 'x', spread(r1), '', ''],
        ...(['p50', 'p99'] as const).map((k) => {
          const r = paired(q(res.connect, k), q(res.floor1, k));
          return [`first connects ${k} us / Node floor under one fdatasync`, f1(median(q(res.connect, k))), f1(median(q(res.floor1, k))), median(r).toFixed(2) + 'x', spread(r), '', ''];
        }),
      ],
    );
    process.stdout.write(`    per round, p50 over the Node floor: ${r50.map((x) => x.toFixed(2)).join(' ')}; over it under one fdatasync: ${paired(q(res.connect, 'p50'), q(res.floor1, 'p50')).map((x) => x.toFixed(2)).join(' ')}\n`);
    // where a run's time goes: each step's duration (from the previous mark), median of the rounds
    const steps = new Map<string, number[]>();
    for (const tr of traces) {
      let prev = 0;
      for (const [ms, step] of tr) {
        (steps.get(step) ?? steps.set(step, []).get(step)!).push(ms - prev);
        prev = ms;
      }
    }
    print(
      '`gensee run --no-dns -- true` step by step (GENSEE_TRACE_STARTUP=1, one traced run per round): ms since the previous mark, median of rounds',
      ['step (ends at)', 'ms', 'min-max'],
      [...steps].map(([step, xs]) => [step, f1(median(xs)), `${f1(Math.min(...xs))}-${f1(Math.max(...xs))}`]),
    );
    process.stdout.write(
      '  node -e 0 is the floor of the wall time: a Node process that does nothing. The Node floor of the connects is\n' +
        '  bench/notify-floor.c (seccomp notify + hooks) whose first-connect exchange bench/floor-node.ts serves (see make\n' +
        '  bench\'s pause section). "main: entered" is node\'s own start plus bin/gensee and the CLI\'s entry module.\n',
    );
  } finally {
    fs.rmSync(st, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const quick = process.env.GENSEE_BENCH_QUICK === '1';
  benchStartup({ rounds: Number(process.env.GENSEE_BENCH_ROUNDS) || (quick ? 3 : 7), newDest: quick ? 100 : 300 }).catch((e) => {
    process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
  });
}
