// Faults per second through the supervisor socket, and p50/p99 of
// retry_after_lease (fault in → lease in the kernel → answer out), for 1 and
// 8 concurrent clients (issue 15's resolver rows), against bench/floor.c run
// in the same round; rounds interleaved (order rotated each round). The
// resolver runs as its own process (gensee supervise), as in production;
// every fault is a new destination, so each one installs and reads back a
// lease and writes its evidence durably. Each phase is a fresh operation (its
// own cgroup, workload and state dir): `supervise --detach-on-exit` kills the
// operation's cgroup when it stops, so a workload cannot outlive its phase.
// GENSEE_BENCH_NODE_ARGS passes node flags to the supervisor (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../src/addon';
import { readStartTimeTicks } from '../src/resolver/subject';
import { openOperation, readKey } from '../src/state/operation';
import type { Fault } from '../src/protocol/types';
import { BenchSupervisor, TICKS_PER_S, benchFault, startNodeFloor, cpuTicks, benchNodeArgs, benchOperation, disposeBenchOperation, encodeFaults, execJson, median, percentile, print, spread, startBenchSupervisor, submitTimed, verdict, workloadJoined } from './util';

const FLOOR = path.join(PACKAGE_ROOT, 'obj', 'gs-floor');
/** utime + stime per thread name (comm: "node" is the main thread, gs-* the addon's), in clock ticks */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const file = `/proc/${pid}/task/${tid}/stat`;
      const st = fs.readFileSync(file, 'utf8');
      const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const name = tid === String(pid) ? 'main' : comm;
      out.set(name, (out.get(name) ?? 0) + cpuTicks(file, st));
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

interface PhaseResult {
  /** CPU per fault by thread name, us (main: the JavaScript thread) */
  threads: Record<string, number>;
  n: number;
  fps: number;
  p50: number;
  p99: number;
  supCpu: number;
  cliCpu: number;
  /** accept → answer sent, as the resolver measured it (its `stopped` line) */
  server: { p50: number; p99: number; count: number } | null;
  /** faults.jsonl fdatasyncs per fault over the supervisor's life (its GENSEE_DEBUG line), and the syncs held for siblings */
  syncs: { perFault: number; held: number } | null;
}

export async function benchResolver(opts: { n1: number; n8: number; steadyWarm: number; rounds: number }): Promise<void> {
  const leaseAll = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '1-65535' }, ttl_s: 300 }], delegate: [] };
  let seq = 0;

  /** One fresh operation and supervisor per phase: `fresh` is its first n
   * faults (V8 not yet warm, as for the first faults of every `gensee run`),
   * `steady` the n after opts.steadyWarm more. */
  const phase = async (clients: number, n: number, label: string, siblingUs?: number): Promise<{ fresh: PhaseResult; steady: PhaseResult }> => {
    const { name: op, cg, st, policy, wl } = benchOperation('gs-bench-rs', '/tmp/gs-bench-', 'policy.json', leaseAll);
    let sup: BenchSupervisor | null = null;
    try {
      await workloadJoined(cg);
      sup = await startBenchSupervisor({ name: op, cg, st, policy }, { env: { GENSEE_DEBUG: '1', ...(siblingUs !== undefined ? { GENSEE_SYNC_SIBLING_US: String(siblingUs) } : {}) } });
      const s = sup.proc;
      if (benchNodeArgs().length) process.stdout.write(`  resolver bench: supervisor pid ${s.pid} serves ${label}\n`);
      const rec = await openOperation(st, op);
      const key = await readKey(st, op);
      const sock = path.join(st, 'network-operations', op, 'supervisor.sock');
      const pid = wl.pid!;
      const start = readStartTimeTicks(pid);
      if (start === null || start === undefined) throw new Error(`resolver bench: workload ${pid} is gone`);
      const fault = (): Fault => {
        const i = seq++;
        return benchFault(op, pid, start, `b-${i}`, `127.${(i >> 16) & 255}.${(i >> 8) & 255}.1`, 1000 + (i & 255));
      };
      const run = async (count: number): Promise<PhaseResult> => {
        // what is timed is the authenticated round trip
        const bodies = encodeFaults(clients, Math.ceil(count / clients), fault);
        const supCpu0 = cpuTicks(`/proc/${s.pid}/stat`);
        const thr0 = threadTicks(s.pid!);
        const cli0 = process.cpuUsage();
        const { lat, secs, wrong } = await submitTimed(bodies, { socketPath: sock, key, resolver: rec.resolver }, 'retry_after_lease');
        const cli = process.cpuUsage(cli0);
        const supUs = ((cpuTicks(`/proc/${s.pid}/stat`) - supCpu0) * 1e6) / TICKS_PER_S;
        const threads: Record<string, number> = {};
        for (const [name, t] of threadTicks(s.pid!)) {
          const d = t - (thr0.get(name) ?? 0);
          if (d > 0) threads[name] = (d * 1e6) / TICKS_PER_S / lat.length;
        }
        if (wrong) throw new Error(`${wrong} faults did not get retry_after_lease`);
        return {
          n: lat.length,
          fps: lat.length / secs,
          p50: percentile(lat, 50),
          p99: percentile(lat, 99),
          // CPU per fault, all threads: the resolver process, and this client process
          supCpu: supUs / lat.length,
          cliCpu: (cli.user + cli.system) / lat.length,
          server: null,
          syncs: null,
          threads,
        };
      };
      const fresh = await run(n);
      await run(opts.steadyWarm);
      const steady = await run(n);
      await sup.stop();
      // "gensee: stopped; N answered on the socket (accept → answer sent: p50 X us, p99 Y us, max Z us); …"
      const sm = /stopped; (\d+) answered on the socket \(accept → answer sent: p50 (\d+) us, p99 (\d+) us/.exec(sup.tail());
      steady.server = sm ? { count: Number(sm[1]), p50: Number(sm[2]), p99: Number(sm[3]) } : null;
      // "gensee: faults.jsonl group commit: N fdatasync for M lines, …; H held for siblings"
      const gm = /faults\.jsonl group commit: (\d+) fdatasync for \d+ lines.*?; (\d+) held for siblings/.exec(sup.errTail());
      steady.syncs = gm ? { perFault: Number(gm[1]) / (2 * n + opts.steadyWarm), held: Number(gm[2]) } : null;
      return { fresh, steady };
    } finally {
      await sup?.stop();
      disposeBenchOperation({ name: op, cg, st, wl });
    }
  };

  // the floor: the same socket exchange and durable write in C, nothing else
  const floorDir = fs.mkdtempSync('/tmp/gs-bench-fl-');
  const floor = async (clients: number, total: number, intent = false) => {
    const [r] = await execJson(FLOOR, [floorDir, String(clients), String(total), ...(intent ? ['--intent'] : [])]);
    return { n: r.n, fps: r.fps, p50: r.p50_ns / 1000, p99: r.p99_ns / 1000 };
  };

  type Floor = Awaited<ReturnType<typeof floor>>;
  /** the Node floor: the same clients against bench/floor-node.ts --intent,
   * each design once; the faster one (an upper bound for a Node resolver) */
  const nodeFloor = async (clients: number, total: number, designs: readonly ('pool' | 'loop' | 'plumbing')[] = ['pool', 'loop'], mode: true | 'one-sync' = true): Promise<Floor & { design: string }> => {
    let best: (Floor & { design: string }) | null = null;
    for (const design of designs) {
      const sockPath = path.join(floorDir, `node-${design}.sock`);
      const srv = await startNodeFloor(sockPath, path.join(floorDir, `node-${design}.jsonl`), design, mode);
      try {
        const [r] = await execJson(FLOOR, [floorDir, String(clients), String(total), '--connect', sockPath]);
        if (!best || r.fps > best.fps) best = { n: r.n, fps: r.fps, p50: r.p50_ns / 1000, p99: r.p99_ns / 1000, design };
      } finally {
        await srv.stop();
      }
    }
    return best!;
  };
  // GENSEE_BENCH_SIBLINGS_AB=1: each round also runs gensee with the
  // sibling hold off (GENSEE_SYNC_SIBLING_US=0), interleaved, for the A/B
  const ab = process.env.GENSEE_BENCH_SIBLINGS_AB === '1';
  const res: Record<1 | 8, { floor: Floor[]; intent: Floor[]; node: (Floor & { design: string })[]; node1: (Floor & { design: string })[]; plumbing: Floor[]; fresh: PhaseResult[]; steady: PhaseResult[]; off: PhaseResult[] }> = {
    1: { floor: [], intent: [], node: [], node1: [], plumbing: [], fresh: [], steady: [], off: [] },
    8: { floor: [], intent: [], node: [], node1: [], plumbing: [], fresh: [], steady: [], off: [] },
  };
  try {
    for (let r = 0; r < opts.rounds; r++) {
      // interleaved: floor and gensee, 1 and 8 clients, order rotated each round
      const steps: (() => Promise<void>)[] = [];
      for (const c of [1, 8] as const) {
        const n = c === 1 ? opts.n1 : opts.n8;
        steps.push(async () => void res[c].floor.push(await floor(c, n)));
        steps.push(async () => void res[c].intent.push(await floor(c, n, true)));
        steps.push(async () => void res[c].node.push(await nodeFloor(c, n)));
        steps.push(async () => void res[c].node1.push(await nodeFloor(c, n, ['pool', 'loop'], 'one-sync')));
        steps.push(async () => void res[c].plumbing.push(await nodeFloor(c, n, ['plumbing'])));
        steps.push(async () => {
          const p = await phase(c, n, `${c} client(s), round ${r + 1}`);
          res[c].fresh.push(p.fresh);
          res[c].steady.push(p.steady);
        });
        if (ab) steps.push(async () => void res[c].off.push((await phase(c, n, `${c} client(s), round ${r + 1}, sibling hold off`, 0)).steady));
      }
      for (let k = 0; k < steps.length; k++) await steps[(r + k) % steps.length]();
    }
  } finally {
    fs.rmSync(floorDir, { recursive: true, force: true });
  }

  const rows: (string | number)[][] = [];
  const target = { 1: 0.6, 8: 0.5 } as const;
  for (const c of [1, 8] as const) {
    // the targets' floor: bench/floor.c --intent, the work gensee must do (see the note below)
    const fi = res[c].intent;
    const fl = res[c].floor;
    /** a floor's row: its figures, and its ratio cells against the --intent floor */
    const floorRow = (label: string, f: Floor[], ratio: string, spreadCell: string) =>
      [label, c, f[0].n, median(f.map((x) => x.fps)).toFixed(0), ratio, spreadCell, median(f.map((x) => x.p50)).toFixed(0), median(f.map((x) => x.p99)).toFixed(0), '-', '-', '-', '', ''];
    rows.push(floorRow('C floor --intent (the work gensee must do)', fi, '1.00x', `${Math.min(...fi.map((x) => x.fps)).toFixed(0)}-${Math.max(...fi.map((x) => x.fps)).toFixed(0)}/s`));
    const pl = fl.map((x, i) => x.fps / fi[i].fps);
    rows.push(floorRow('C floor without the intent (one fdatasync)', fl, `${median(pl).toFixed(2)}x`, spread(pl)));
    const nf = res[c].node;
    const nr = nf.map((x, i) => x.fps / fi[i].fps);
    rows.push(floorRow('Node floor (the --intent exchange in Node, less work)', nf, `${median(nr).toFixed(2)}x`, spread(nr)));
    const n1 = res[c].node1;
    const n1r = n1.map((x, i) => x.fps / fi[i].fps);
    rows.push(floorRow('Node floor, the same lines under one fdatasync', n1, `${median(n1r).toFixed(2)}x`, spread(n1r)));
    const pf = res[c].plumbing;
    const pr = pf.map((x, i) => x.fps / fi[i].fps);
    rows.push(floorRow("gensee's plumbing, a decision that does nothing", pf, `${median(pr).toFixed(2)}x`, spread(pr)));
    for (const kind of ['fresh', 'steady'] as const) {
      const g = res[c][kind];
      const ratios = g.map((x, i) => x.fps / fi[i].fps);
      const m = median(ratios);
      const srv = kind === 'steady' ? g.map((x) => (x.server ? `${x.server.p50}/${x.server.p99}` : '-'))[g.length >> 1] : '-';
      rows.push([
        kind === 'fresh' ? 'gensee, fresh resolver (first faults)' : `gensee, after ${opts.steadyWarm + (c === 1 ? opts.n1 : opts.n8)} faults`,
        c,
        g[0].n,
        median(g.map((x) => x.fps)).toFixed(0),
        `${m.toFixed(2)}x`,
        spread(ratios),
        median(g.map((x) => x.p50)).toFixed(0),
        median(g.map((x) => x.p99)).toFixed(0),
        srv,
        median(g.map((x) => x.supCpu)).toFixed(0),
        median(g.map((x) => x.cliCpu)).toFixed(0),
        `>= ${target[c]}x`,
        verdict(m >= target[c]),
      ]);
    }
  }
  print(
    `resolver: retry_after_lease through the authenticated socket (new destination each fault; lease installed + read back; evidence durable), ${opts.rounds} interleaved rounds, median`,
    ['', 'clients', 'faults', 'faults/s', 'of floor', 'spread (per round)', 'p50 us', 'p99 us', 'resolver p50/p99 us', 'resolver CPU us/fault', 'client CPU us/fault', 'target', 'met'],
    rows,
  );
  for (const c of [1, 8] as const) {
    // the median round's breakdown (by total): where the resolver's CPU per fault goes
    const g = [...res[c].steady].sort((a, b) => a.supCpu - b.supCpu)[res[c].steady.length >> 1];
    const parts = Object.entries(g.threads)
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => `${name} ${us.toFixed(0)}`)
      .join(', ');
    process.stdout.write(`  resolver CPU us/fault by thread, ${c} client(s), steady, median round: ${parts}\n`);
  }
  for (const c of [1, 8] as const) {
    // what gensee's own work costs over the fastest Node server doing the exchange, round by round
    const nr = res[c].steady.map((x, i) => x.fps / res[c].node[i].fps);
    const designs = res[c].node.map((x) => x.design).join('/');
    process.stdout.write(`  gensee (steady) over the Node floor, ${c} client(s): ${median(nr).toFixed(2)}x (${spread(nr)}); the Node floor's faster design per round: ${designs}\n`);
    process.stdout.write(`    per round: ${nr.map((x) => x.toFixed(2)).join(' ')}\n`);
    // the floor of the durable work gensee does now: its lease_intent line
    // shares the resolution line's fdatasync (one per fault, not two)
    const n1r = res[c].steady.map((x, i) => x.fps / res[c].node1[i].fps);
    process.stdout.write(`  gensee (steady) over the Node floor under one fdatasync, ${c} client(s): ${median(n1r).toFixed(2)}x (${spread(n1r)}); per round: ${n1r.map((x) => x.toFixed(2)).join(' ')}\n`);
  }
  for (const c of [1, 8] as const) {
    // faults.jsonl fdatasyncs per fault (each fault: fault, lease_intent and resolution lines), every round
    const row = (g: PhaseResult[]) => g.map((x) => (x.syncs ? `${x.syncs.perFault.toFixed(2)} (${x.syncs.held} held)` : '-')).join(', ');
    const med = (g: PhaseResult[]) => {
      const v = g.filter((x) => x.syncs).map((x) => x.syncs!.perFault);
      return v.length ? median(v).toFixed(2) : '-';
    };
    process.stdout.write(`  fdatasync per fault, ${c} client(s): median ${med(res[c].steady)}; per round ${row(res[c].steady)}\n`);
    if (ab) {
      const on = res[c].steady;
      const off = res[c].off;
      const fr = on.map((x, i) => x.fps / off[i].fps);
      const pr = on.map((x, i) => x.p50 / off[i].p50);
      process.stdout.write(
        `  sibling hold off, ${c} client(s): fdatasync per fault median ${med(off)}; per round ${row(off)}; ` +
          `faults/s on/off ${median(fr).toFixed(2)}x (${fr.map((x) => x.toFixed(2)).join(' ')}), p50 on/off ${median(pr).toFixed(2)}x (${pr.map((x) => x.toFixed(2)).join(' ')})\n`,
      );
    }
  }
  process.stdout.write(
    '  of floor: faults/s over the --intent floor\'s in the same round, median of rounds; spread: min-max of those\n' +
      '  ratios (floor row: min-max faults/s); p50/p99: the client round trip (submitFault called → authenticated\n' +
      '  Resolution in hand); resolver p50/p99: accept → answer sent, as the resolver measures it over its whole life\n' +
      '  (median round); each round is a fresh operation and supervisor: "fresh" is its first faults, the next row\n' +
      '  the same supervisor after more. The floor (bench/floor.c --intent) is the same connect/frame/answer exchange\n' +
      '  with the work gensee must do per retry_after_lease and nothing else: a look-up that misses in a BPF hash map\n' +
      '  of the lease map\'s shape, a lease_intent-sized line made durable (group-committed fdatasync) before the\n' +
      '  lease is put into the map and read back, then the two evidence lines and a second fdatasync before the answer.\n' +
      '  Issue 15 named bench/floor.c without the intent; the intent and the lease put were added to the floor because\n' +
      '  gensee must do them (issue "crash consistency": no kernel lease without a durable record before it): two\n' +
      '  dependent fdatasyncs per fault. The one-fdatasync floor is shown beside it, its ratio to the --intent floor.\n' +
      '  The Node floor (bench/floor-node.ts) serves the same C clients and makes the same lines durable in the same\n' +
      '  order, in Node, with no BPF map, decoding, policy, MAC or hash chain: the most a resolver written for Node\n' +
      '  can reach on this machine. Two designs run each round, fdatasync on libuv\'s thread pool ("pool") or on the\n' +
      '  event loop at the end of a turn ("loop"); the faster one is shown. A target above the Node floor\'s ratio\n' +
      '  cannot be met by a Node resolver, whatever it cuts of its own work. "gensee\'s plumbing" (bench/floor-plumbing.ts)\n' +
      '  is gensee\'s own addon path (the socket\'s I/O thread and peer checks, the syncer that writes, fdatasyncs and\n' +
      '  answers, the wake-ups of the event loop) serving the same clients with a JavaScript decision that does nothing:\n' +
      '  what the architecture costs before gensee decodes, decides, checks, signs or chains anything.\n',
  );
}
