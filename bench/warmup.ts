// The fresh process's tail (issue 15): latency of faults 1..3000 of a fresh
// `gensee run` (pause mode, every connect a new allowed destination: the
// slow path) and of a fresh `gensee supervise` (faults over the socket), in
// buckets of fault number, for several start-up variants against the
// baseline (no warm-up, no node flags) measured in the same run, rounds
// interleaved (order rotated each round). Also the wall time of
// `gensee run -- true` per variant: what a variant costs at start.
//
//   node dist/bench/warmup.js [NAME…]   (variants whose name contains NAME,
//                                        and the baseline; default: all)
//
// Variants: node flags before bin/gensee, a V8 code cache for the package's
// modules (a preload that compiles them with vm.Script cachedData, trained
// by one run), and the supervisor's warm-up (src/resolver/warm.ts, before
// the first fault: GENSEE_WARMUP=N rounds, 0 for the baseline).
// GENSEE_BENCH_ROUNDS=N sets the rounds (GENSEE_BENCH_QUICK=1: 2, else 5);
// GENSEE_BENCH_KINDS=run,supervise,start (the default) picks the tables.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { readStartTimeTicks } from '../src/resolver/subject';
import { openOperation, readKey } from '../src/state/operation';
import { BenchSupervisor, benchFault, benchOperation, disposeBenchOperation, encodeFaults, median, percentile, print, startBenchSupervisor, submitTimed, workloadJoined } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
/** fault-number buckets: [first, last] */
const BUCKETS: [number, number][] = [
  [1, 100],
  [101, 500],
  [501, 1000],
  [1001, 3000],
];

interface Variant {
  name: string;
  node: string[];
  env: Record<string, string>;
}

/** A preload that compiles the package's CommonJS modules through vm.Script with a code cache (GS_CC_DIR; GS_CC_PRODUCE=1 writes it at exit). */
const CODE_CACHE_PRELOAD = `'use strict';
const Module = require('module'), vm = require('vm'), fs = require('fs'), path = require('path'), crypto = require('crypto');
const dir = process.env.GS_CC_DIR, produce = process.env.GS_CC_PRODUCE === '1', root = process.env.GS_CC_ROOT;
const made = [];
let hits = 0, misses = 0;
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  if (!filename.startsWith(root) || !filename.endsWith('.js')) return compile.call(this, content, filename);
  const file = path.join(dir, crypto.createHash('sha256').update(filename).digest('hex').slice(0, 32));
  let cachedData;
  if (!produce) try { cachedData = fs.readFileSync(file); } catch { /* none */ }
  const script = new vm.Script(Module.wrap(content), { filename, cachedData });
  if (cachedData) script.cachedDataRejected ? misses++ : hits++;
  if (produce) made.push([file, script]);
  const mod = this;
  const req = (id) => mod.require(id);
  req.resolve = (r, o) => Module._resolveFilename(r, mod, false, o);
  req.main = process.mainModule;
  req.extensions = Module._extensions;
  req.cache = Module._cache;
  return script.runInThisContext({ displayErrors: true }).call(mod.exports, mod.exports, req, mod, filename, path.dirname(filename));
};
process.on('exit', () => {
  for (const [file, s] of made) fs.writeFileSync(file, s.createCachedData());
  if (process.env.GS_CC_REPORT) fs.writeFileSync(process.env.GS_CC_REPORT, JSON.stringify({ hits, misses, made: made.length }));
});
`;

function quick(): boolean {
  return process.env.GENSEE_BENCH_QUICK === '1';
}

function variants(tmp: string): Variant[] {
  const cc = path.join(tmp, 'cc-preload.js');
  fs.writeFileSync(cc, CODE_CACHE_PRELOAD);
  const ccDir = path.join(tmp, 'cc');
  fs.mkdirSync(ccDir);
  const off = { GENSEE_WARMUP: '0' };
  const warm = (rounds: number) => ({ GENSEE_WARMUP: String(rounds) });
  return [
    { name: 'baseline (today: no flags, no warm-up)', node: [], env: off },
    { name: 'warm-up at supervisor start (src/resolver/warm.ts, default 300 rounds)', node: [], env: {} },
    { name: 'warm-up, 1500 rounds', node: [], env: warm(1500) },
    { name: 'warm-up, 4000 rounds', node: [], env: warm(4000) },
    { name: 'code cache (vm.Script cachedData, trained)', node: ['-r', cc], env: { ...off, GS_CC_DIR: ccDir, GS_CC_ROOT: PACKAGE_ROOT } },
    { name: '--no-lazy-feedback-allocation', node: ['--no-lazy-feedback-allocation'], env: off },
    { name: '--always-sparkplug', node: ['--always-sparkplug'], env: off },
    { name: '--max-lazy', node: ['--max-lazy'], env: off },
    { name: '--min-semi-space-size=16', node: ['--min-semi-space-size=16'], env: off },
    { name: '--interrupt-budget=16384 (earlier tier-up)', node: ['--interrupt-budget=16384'], env: off },
    { name: '--no-opt (no TurboFan)', node: ['--no-opt'], env: off },
    { name: 'warm-up + --no-lazy-feedback-allocation', node: ['--no-lazy-feedback-allocation'], env: {} },
    { name: 'warm-up + --min-semi-space-size=16', node: ['--min-semi-space-size=16'], env: {} },
  ];
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 256 << 20, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message} ${stderr}`));
      resolve(stdout);
    });
  });
}

/** p50/p99 (us) per bucket */
type Buckets = { p50: number; p99: number }[];

export async function benchWarmup(opts: { rounds: number; only: string[] }): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-bench-w-'));
  const st = path.join(tmp, 'st');
  fs.mkdirSync(st);
  const slow = path.join(tmp, 'slow.json');
  const leaseAll = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '1-65535' }, ttl_s: 600 }], delegate: [] };
  fs.writeFileSync(slow, JSON.stringify(leaseAll));
  let all = variants(tmp);
  if (opts.only.length) all = all.filter((v, i) => i === 0 || opts.only.some((o) => v.name.includes(o)));
  let op = 0;
  const inner = new Map<string, Buckets[]>(all.map((v) => [v.name, []]));
  const genseeArgs = (v: Variant) => [...v.node, GENSEE];

  /** `gensee run` (pause mode): one probe per bucket, one after the other, each connect a new port */
  const pauseRun = async (v: Variant): Promise<Buckets> => {
    const chain = BUCKETS.map(([a, b]) => `"$0" --repeat ${b - a + 1} bench-ports tcp 127.0.0.1 ${20000 + a - 1}`).join(' && ');
    const jsonOut = path.join(tmp, `run-${op}.jsonl`);
    const out = await run(process.execPath, [...genseeArgs(v), 'run', '--state-dir', st, '--op', `gs-bench-w-${process.pid}-${op++}`, '--policy', slow, '--json-out', jsonOut, '--', '/bin/sh', '-c', chain, PROBE], v.env);
    const lines = out.trim().split('\n').filter((l) => l.includes('ns_per_op')).map((l) => JSON.parse(l) as Record<string, number>);
    if (lines.length !== BUCKETS.length) throw new Error(`warmup bench: ${lines.length} probe lines from ${v.name}`);
    // the resolver's own time per fault (fault in → resolution line written; the live line's micros), in fault order
    const micros = fs.readFileSync(jsonOut, 'utf8').split('\n').filter((l) => l.startsWith('{"event":"resolved"')).map((l) => (JSON.parse(l) as { micros: number }).micros);
    fs.rmSync(jsonOut, { force: true });
    if (micros.length !== BUCKETS[BUCKETS.length - 1][1]) throw new Error(`warmup bench: ${micros.length} resolved lines from ${v.name}`);
    inner.get(v.name)!.push(BUCKETS.map(([a, b]) => ({ p50: percentile(micros.slice(a - 1, b), 50), p99: percentile(micros.slice(a - 1, b), 99) })));
    return lines.map((l) => ({ p50: l.p50_ns / 1000, p99: l.p99_ns / 1000 }));
  };

  /** `gensee supervise`: 3000 faults over the socket, one client, each a new destination */
  const superviseRun = async (v: Variant): Promise<Buckets> => {
    const { name, cg, st: sst, policy, wl } = benchOperation('gs-bench-w', path.join(tmp, 'sv-'), 'policy.json', leaseAll);
    let sup: BenchSupervisor | null = null;
    try {
      await workloadJoined(cg);
      sup = await startBenchSupervisor({ name, cg, st: sst, policy }, { node: v.node, env: v.env });
      const rec = await openOperation(sst, name);
      const key = await readKey(sst, name);
      const pid = wl.pid!;
      const start = readStartTimeTicks(pid);
      if (start === null || start === undefined) throw new Error('warmup bench: workload gone');
      let i = 0;
      const bodies = encodeFaults(1, BUCKETS[BUCKETS.length - 1][1], () => {
        i++;
        return benchFault(name, pid, start, `w-${i}`, `127.${(i >> 16) & 255}.${(i >> 8) & 255}.1`, 1000 + (i & 255));
      });
      const { lat, wrong } = await submitTimed(bodies, { socketPath: path.join(sst, 'network-operations', name, 'supervisor.sock'), key, resolver: rec.resolver }, 'retry_after_lease');
      if (wrong) throw new Error(`warmup bench: ${wrong} faults not retry_after_lease`);
      return BUCKETS.map(([a, b]) => {
        const xs = lat.slice(a - 1, b);
        return { p50: percentile(xs, 50), p99: percentile(xs, 99) };
      });
    } finally {
      await sup?.stop();
      disposeBenchOperation({ name, cg, st: sst, wl });
    }
  };

  /** wall time of `gensee run -- true` (ms) */
  const startRun = async (v: Variant): Promise<number> => {
    const t0 = process.hrtime.bigint();
    await run(process.execPath, [...genseeArgs(v), 'run', '--state-dir', st, '--op', `gs-bench-w-${process.pid}-${op++}`, '--policy', slow, '--', '/bin/true'], v.env);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };

  const kinds = (process.env.GENSEE_BENCH_KINDS ?? 'run,supervise,start').split(',');
  try {
    // the submitting client (this process) warms up before any timed run,
    // so its own first calls are not charged to the first variant measured
    await superviseRun(all[0]);
    // train the code cache: one run of each kind writes it at exit
    const cc = all.find((v) => v.env.GS_CC_DIR);
    if (cc) {
      await pauseRun({ ...cc, env: { ...cc.env, GS_CC_PRODUCE: '1' } });
      const report = path.join(tmp, 'cc-report.json');
      await startRun({ ...cc, env: { ...cc.env, GS_CC_REPORT: report } });
      process.stdout.write(`  code cache: ${fs.readFileSync(report, 'utf8')} (a start with it: modules whose cache was accepted / rejected)\n`);
    }
    for (const b of inner.values()) b.length = 0; // the training run's
    const res = { run: all.map(() => [] as Buckets[]), resolver: all.map(() => [] as Buckets[]), supervise: all.map(() => [] as Buckets[]), start: all.map(() => [] as number[]) };
    const startN = 3;
    for (let r = 0; r < opts.rounds; r++) {
      for (let k = 0; k < all.length; k++) {
        const i = (r + k) % all.length;
        if (kinds.includes('run')) res.run[i].push(await pauseRun(all[i]));
        if (kinds.includes('supervise')) res.supervise[i].push(await superviseRun(all[i]));
        if (kinds.includes('start')) for (let j = 0; j < startN; j++) res.start[i].push(await startRun(all[i]));
      }
    }
    const f = (x: number) => x.toFixed(0);
    all.forEach((v, i) => (res.resolver[i] = inner.get(v.name)!));
    for (const kind of ['run', 'resolver', 'supervise'] as const) {
      if (!kinds.includes(kind === 'resolver' ? 'run' : kind)) continue;
      const base = res[kind][0];
      const cell = (i: number, b: number, q: 'p50' | 'p99') => median(res[kind][i].map((x) => x[b][q]));
      const rows = all.map((v, i) => [
        v.name,
        ...BUCKETS.flatMap((_, b) => {
          const x = cell(i, b, 'p99');
          return [`${f(cell(i, b, 'p50'))} / ${f(x)}`, i === 0 ? '' : (x / cell(0, b, 'p99')).toFixed(2) + 'x'];
        }),
        ...(kind === 'run' && kinds.includes('start') ? [f(median(res.start[i])), i === 0 ? '' : (median(res.start[i]) / median(res.start[0])).toFixed(2) + 'x'] : []),
      ]);
      void base;
      print(
        kind === 'resolver'
          ? `the same runs, the resolver's own time per fault (resolveTicket: fault in → resolution line written, the --json-out line's micros), us p50 / p99 per bucket`
          : kind === 'run'
          ? `fresh \`gensee run\` (pause mode, slow path: each connect a new allowed destination), faults 1..3000, us p50 / p99 per bucket, median of ${opts.rounds} interleaved rounds`
          : `fresh \`gensee supervise\` (faults over supervisor.sock, 1 client, each a new destination), faults 1..3000, us p50 / p99 per bucket, median of ${opts.rounds} interleaved rounds`,
        ['variant', ...BUCKETS.flatMap(([a, b]) => [`${a}-${b}`, 'p99 of base']), ...(kind === 'run' && kinds.includes('start') ? ['`run true` ms', 'of base'] : [])],
        rows,
      );
    }
    process.stdout.write(
      '  run: each bucket is one gs-probe process (bench-ports: every connect a new port, refused by the kernel after CONTINUE),\n' +
        '  the probes one after the other under one fresh `gensee run --json-out FILE`; p99 of 1-100 is its 99th of 100 calls.\n' +
        '  supervise: the round trip as the bench\'s client times it (encode done before the clock).\n' +
        '  `run true` ms: wall time of `gensee run -- /bin/true` (median of the rounds\' starts).\n',
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchWarmup({ rounds: Number(process.env.GENSEE_BENCH_ROUNDS) || (quick() ? 2 : 5), only: process.argv.slice(2) }).catch((e) => {
    process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
  });
}
