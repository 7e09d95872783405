// The envelope's lease scan at N live leases (default 15,000) in a real
// operation's kernel map (issue 31): how long one turn of the event loop is
// held, and the scan's total time, for
//   before  the one-piece scan as the sweep ran it until now
//           (bench/lease-scan-v0.ts, a verbatim copy),
//   whole   today's comparison, still in one piece (LeaseScan.scan: no
//           BigInt and a shorter key string per entry),
//   after   what the sweep runs now (LeaseScan.scanSliced),
// interleaved round by round in the same run (the order rotates). Every
// round compares: the record is marked changed first (the "nothing moved"
// shortcut is not what is measured).
//
// "longest turn": for a one-piece scan its whole time; for the sliced scan
// its longest slice (timestamps around each), and that slice's CPU time
// (on a loaded machine the wall time also holds preemption). "loop delay
// max": what perf_hooks' monitorEventLoopDelay saw while the scan ran (a
// 1 ms timer: the longest block plus up to ~1 ms), i.e. how late a fault
// arriving during the scan is picked up. The sliced scan's total is its
// slices' time together (its wall time also holds the turns it let run).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { findCgroup2Mount, removeCgroup } from '../src/cgroup';
import { attachHooks, detachHooks, DataPlane, bootNs } from '../src/dataplane';
import { LeaseScan } from '../src/envelope/lease-scan';
import { LeaseScanV0 } from './lease-scan-v0';
import type { LeaseRecord } from '../src/state/network';
import type { Tuple } from '../src/addr';
import { Progress } from '../src/progress';
import { median, print } from './util';

interface Sample {
  totalMs: number;
  longestMs: number;
  /** the longest slice's CPU time (a one-piece scan: its total's) */
  longestCpuMs: number;
  delayMaxMs: number;
  slices: number;
}

type Variant = 'before' | 'whole' | 'after';
const VARIANTS: Variant[] = ['before', 'whole', 'after'];

function tuple(i: number): Tuple {
  return { family: 'ipv4', protocol: 'tcp', address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 443 };
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const sleep = (n: number) => new Promise<void>((r) => setTimeout(r, n));

async function measure(run: () => Promise<Omit<Sample, 'delayMaxMs'>>): Promise<Sample> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  // the monitor's timer is armed a turn before the scan starts
  h.enable();
  await sleep(5);
  const r = await run();
  await sleep(2);
  h.disable();
  return { ...r, delayMaxMs: h.max / 1e6 };
}

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

export async function benchLeaseScan(o: { leases: number; rounds: number }): Promise<void> {
  const op = `gs-bench-ls-${process.pid}-${Date.now().toString(36)}`;
  const cg = path.join(findCgroup2Mount(), op);
  fs.mkdirSync(cg);
  let dp: DataPlane | null = null;
  try {
    attachHooks(op, cg);
    dp = DataPlane.open(op);
    const exp = bootNs() + 3600n * 1_000_000_000n;
    const at = new Date().toISOString();
    const recs: LeaseRecord[] = [];
    for (let i = 0; i < o.leases; i++) {
      const t = tuple(i);
      dp.putLease({ tuple: t, generation: 7n, expiresBootNs: exp });
      recs.push({ generation: 7, ...t, expires_at_boot_ns: String(exp), max_uses: 0, installed_at: at });
    }
    const scan = new LeaseScan(dp.raw);
    const v0 = new LeaseScanV0(dp.raw);
    const leases = () => recs;
    const none = (res: { expired: unknown[]; adopt: unknown[]; gone: unknown[] } | null, what: string) => {
      if (!res || res.expired.length + res.adopt.length + res.gone.length) throw new Error(`bench: the ${what} scan found changes in an unchanged map`);
    };
    const onePiece = (fn: () => void) => async () => {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      fn();
      const total = ms(t0);
      return { longestMs: total, longestCpuMs: cpuMs(process.cpuUsage(c0)), slices: 1, totalMs: total };
    };
    const run: Record<Variant, () => Promise<Omit<Sample, 'delayMaxMs'>>> = {
      before: onePiece(() => {
        v0.recordChanged();
        none(v0.scan(leases, bootNs(), 0n), 'before');
      }),
      whole: onePiece(() => {
        scan.recordChanged();
        none(scan.scan(leases, bootNs(), 0n), 'whole');
      }),
      after: async () => {
        scan.recordChanged();
        none(await scan.scanSliced(leases, bootNs(), 0n), 'sliced');
        return { longestMs: scan.stats.longestSliceMs, longestCpuMs: scan.stats.longestSliceCpuMs, slices: scan.stats.slices, totalMs: scan.stats.busyMs };
      },
    };
    // warm: kernel forms cached, code optimized (not measured)
    for (const v of VARIANTS) await run[v]();
    const got: Record<Variant, Sample[]> = { before: [], whole: [], after: [] };
    for (let r = 0; r < o.rounds; r++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const v = VARIANTS[(r + k) % VARIANTS.length];
        got[v].push(await measure(run[v]));
      }
    }
    const f = (x: number) => x.toFixed(2);
    const ratio = (a: number, b: number) => (a / b).toFixed(3) + 'x';
    const rows = got.before.map((b, i) => {
      const w = got.whole[i];
      const a = got.after[i];
      return [String(i + 1), f(b.longestMs), f(w.longestMs), f(a.longestMs), f(a.longestCpuMs), ratio(a.longestMs, b.longestMs), f(b.delayMaxMs), f(a.delayMaxMs), f(b.totalMs), f(w.totalMs), f(a.totalMs), ratio(a.totalMs, b.totalMs), String(a.slices)];
    });
    const med = (v: Variant, k: keyof Sample) => f(median(got[v].map((s) => s[k])));
    const medRatio = (k: keyof Sample) => median(got.after.map((a, i) => a[k] / got.before[i][k])).toFixed(3) + 'x';
    rows.push(['median', med('before', 'longestMs'), med('whole', 'longestMs'), med('after', 'longestMs'), med('after', 'longestCpuMs'), medRatio('longestMs'), med('before', 'delayMaxMs'), med('after', 'delayMaxMs'), med('before', 'totalMs'), med('whole', 'totalMs'), med('after', 'totalMs'), medRatio('totalMs'), med('after', 'slices')]);
    print(
      `lease scan, ${o.leases} live leases in a real operation's map, ${o.rounds} interleaved rounds, ms (before: one piece as until now; whole: today's comparison in one piece; after: sliced)`,
      ['round', 'longest turn before', 'whole', 'after', 'after cpu', 'after/before', 'loop delay max before', 'after', 'total before', 'whole', 'after', 'after/before', 'slices'],
      rows,
    );
    const worst = Math.max(...got.after.map((a) => a.longestMs));
    const worstCpu = Math.max(...got.after.map((a) => a.longestCpuMs));
    process.stdout.write(`longest sliced turn in any round: ${f(worst)} ms wall, ${f(worstCpu)} ms CPU (goal ~5 ms)\n`);
  } finally {
    dp?.close();
    try {
      detachHooks(op);
    } catch {
      /* gone */
    }
    removeCgroup(cg);
  }
}

function quick(): boolean {
  return process.env.GENSEE_BENCH_QUICK === '1';
}

if (require.main === module) {
  const p = new Progress('bench', null);
  p.next('leasescan');
  benchLeaseScan({ leases: Number(process.env.GENSEE_BENCH_LEASES) || 15000, rounds: quick() ? 3 : 7 }).then(
    () => p.done('leasescan'),
    (e) => {
      p.done('leasescan failed');
      process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
      process.exitCode = 1;
    },
  );
}
