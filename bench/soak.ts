// Memory and tail under a long run (issue 15's last row; `make soak-bench`,
// not part of `make bench`: it takes ~11 minutes). One `gensee supervise`
// process, as in production, serves 8 concurrent clients for
// GENSEE_SOAK_SECONDS (default 600); half of the faults are new loopback
// destinations the policy leases (retry_after_lease: lease put + evidence),
// half destinations it denies. Leases live 10 s, so the kernel map holds the
// last ~10 s of them and never fills.
// Before it, the same mix on a fresh operation for GENSEE_SOAK_SHORT_SECONDS
// (default 30): the short run whose p99 the soak's is held to.
// Sampled every 10 s: the supervisor's RSS, its CPU per fault (work per
// fault must not grow with history), network.json's size and generations,
// and the window's p50/p99/max of the client round trip.
// Targets: RSS flat (within ±10% of its value at 60 s from then on); the
// soak's p99 within 2x the short run's; CPU per fault and network.json not
// growing (last minute within 1.25x of the second minute).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readStartTimeTicks } from '../src/resolver/subject';
import { openOperation, readKey } from '../src/state/operation';
import { encodeFault } from '../src/protocol/codec';
import { submitFault } from '../src/resolver/client';
import { BenchSupervisor, TICKS_PER_S, benchFault, cpuTicks, benchOperation, disposeBenchOperation, percentile, print, startBenchSupervisor, verdict, workloadJoined } from './util';

const CLIENTS = 8;
const WINDOW_S = 10;
const POLICY = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '1-65535' }, ttl_s: 10 }], delegate: [] };

function procStat(pid: number): { rss: number; cpuUs: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  return { rss, cpuUs: (cpuTicks(`/proc/${pid}/stat`) * 1e6) / TICKS_PER_S };
}

interface Window {
  t: number;
  faults: number;
  p50: number;
  p99: number;
  max: number;
  rss: number;
  cpuPerFault: number;
  netBytes: number;
  generations: number;
  leases: number;
}

let seq = 0;

/** One operation and supervisor, 8 clients for `seconds`; a Window every WINDOW_S */
async function soak(seconds: number, label: string): Promise<{ windows: Window[]; lat: number[]; wrong: number }> {
  // the workload outlives the run: a fault naming an exited process is denied (invalid_subject)
  const { name: op, cg, st, policy, wl } = benchOperation('gs-bench-soak', '/tmp/gs-bench-soak-', 'policy.json', POLICY, seconds + 300);
  let sup: BenchSupervisor | null = null;
  try {
    await workloadJoined(cg);
    sup = await startBenchSupervisor({ name: op, cg, st, policy });
    const supPid = sup.proc.pid!;
    const rec = await openOperation(st, op);
    const key = await readKey(st, op);
    const sock = path.join(st, 'network-operations', op, 'supervisor.sock');
    const netFile = path.join(st, 'network-operations', op, 'network.json');
    const pid = wl.pid!;
    const start = readStartTimeTicks(pid)!;
    const all: number[] = [];
    let cur: number[] = [];
    let wrong = 0;
    const unexpected = new Map<string, number>();
    const t0 = Date.now();
    const end = t0 + seconds * 1000;
    const windows: Window[] = [];
    let last = procStat(supPid);
    const sample = () => {
      const now = procStat(supPid);
      let netBytes = 0;
      let generations = 0;
      let leases = 0;
      try {
        const text = fs.readFileSync(netFile, 'utf8');
        const n = JSON.parse(text) as { generations: unknown[]; leases: unknown[] };
        netBytes = text.length;
        generations = n.generations.length;
        leases = n.leases.length;
      } catch {
        /* being replaced: the next sample */
      }
      const w = cur;
      cur = [];
      windows.push({
        t: Math.round((Date.now() - t0) / 1000),
        faults: w.length,
        p50: percentile(w, 50),
        p99: percentile(w, 99),
        max: w.reduce((a, b) => Math.max(a, b), 0),
        rss: now.rss,
        cpuPerFault: (now.cpuUs - last.cpuUs) / Math.max(1, w.length),
        netBytes,
        generations,
        leases,
      });
      last = now;
    };
    const timer = setInterval(sample, WINDOW_S * 1000);
    try {
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (Date.now() < end) {
            const i = seq++;
            const lease = (i & 1) === 0;
            const j = i >> 1;
            const addr = lease ? `127.${(j >> 16) & 255}.${(j >> 8) & 255}.${(j & 255) | 1}` : `10.${(j >> 16) & 255}.${(j >> 8) & 255}.${j & 255}`;
            const f = benchFault(op, pid, start, `s-${i}`, addr, lease ? 1000 + (j & 1023) : 443);
            const body = encodeFault(f);
            const a = process.hrtime.bigint();
            const r = await submitFault({ socketPath: sock, key, resolver: rec.resolver, body, faultId: f.fault_id });
            const us = Number(process.hrtime.bigint() - a) / 1000;
            all.push(us);
            cur.push(us);
            if (!r.authenticated || r.resolution.action !== (lease ? 'retry_after_lease' : 'deny')) {
              wrong++;
              const k = `${lease ? 'lease' : 'deny'} fault → ${r.authenticated ? `${r.resolution.action} (${r.resolution.reason})` : 'unauthenticated'}`;
              unexpected.set(k, (unexpected.get(k) ?? 0) + 1);
            }
          }
        }),
      );
    } finally {
      clearInterval(timer);
    }
    if (wrong) process.stdout.write(`soak ${label}: ${wrong} faults got an unexpected answer: ${JSON.stringify(Object.fromEntries(unexpected))}\n`);
    return { windows, lat: all, wrong };
  } finally {
    await sup?.stop();
    disposeBenchOperation({ name: op, cg, st, wl });
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.env.GENSEE_SOAK_SECONDS ?? 600);
  const shortSeconds = Number(process.env.GENSEE_SOAK_SHORT_SECONDS ?? 30);
  const short = await soak(shortSeconds, 'short');
  const long = await soak(seconds, 'long');
  const mib = (b: number) => (b / (1 << 20)).toFixed(1);
  const w = long.windows;
  print(
    `soak: ${CLIENTS} clients, ${seconds} s, half leases (ttl 10 s) half denies; every ${WINDOW_S} s`,
    ['t s', 'faults/s', 'p50 us', 'p99 us', 'max us', 'RSS MiB', 'CPU us/fault', 'network.json KiB', 'generations', 'leases'],
    w.map((x) => [x.t, (x.faults / WINDOW_S).toFixed(0), x.p50.toFixed(0), x.p99.toFixed(0), x.max.toFixed(0), mib(x.rss), x.cpuPerFault.toFixed(0), (x.netBytes / 1024).toFixed(1), x.generations, x.leases]),
  );
  const perMin = Math.round(60 / WINDOW_S);
  const at60 = w.find((x) => x.t >= 60) ?? w[0];
  const later = w.filter((x) => x.t >= 60);
  const after = later.length ? later : w;
  const rssDev = Math.max(...after.map((x) => Math.abs(x.rss - at60.rss) / at60.rss));
  const p99Short = percentile(short.lat, 99);
  const p99Long = percentile(long.lat, 99);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const second = w.length >= 2 * perMin ? w.slice(perMin, 2 * perMin) : w.slice(0, 1);
  const lastMin = w.slice(-perMin);
  const cpuGrowth = avg(lastMin.map((x) => x.cpuPerFault)) / avg(second.map((x) => x.cpuPerFault));
  const netGrowth = avg(lastMin.map((x) => x.netBytes)) / Math.max(1, avg(second.map((x) => x.netBytes)));
  print(
    'soak: against its targets',
    ['figure', 'measured', 'reference', 'ratio', 'target', 'met'],
    [
      ['RSS after the first minute', `${mib(Math.min(...after.map((x) => x.rss)))}-${mib(Math.max(...after.map((x) => x.rss)))} MiB`, `${mib(at60.rss)} MiB at ${at60.t} s`, `±${(100 * rssDev).toFixed(1)}%`, '±10%', verdict(rssDev <= 0.1)],
      ['p99, whole soak', `${p99Long.toFixed(0)} us`, `${p99Short.toFixed(0)} us (${shortSeconds} s run)`, `${(p99Long / p99Short).toFixed(2)}x`, '<= 2x', verdict(p99Long <= 2 * p99Short)],
      ['supervisor CPU per fault, last minute', `${avg(lastMin.map((x) => x.cpuPerFault)).toFixed(0)} us`, `${avg(second.map((x) => x.cpuPerFault)).toFixed(0)} us (2nd minute)`, `${cpuGrowth.toFixed(2)}x`, '<= 1.25x', verdict(cpuGrowth <= 1.25)],
      ['unexpected answers (soak / short)', `${long.wrong}`, `${short.wrong}`, '', '0', verdict(long.wrong === 0 && short.wrong === 0)],
      ['network.json size, last minute', `${(avg(lastMin.map((x) => x.netBytes)) / 1024).toFixed(1)} KiB`, `${(avg(second.map((x) => x.netBytes)) / 1024).toFixed(1)} KiB (2nd minute)`, `${netGrowth.toFixed(2)}x`, '<= 1.25x', verdict(netGrowth <= 1.25)],
    ],
  );
  process.stdout.write(
    `  ${long.lat.length} faults in the soak (${(long.lat.length / seconds).toFixed(0)}/s), ${short.lat.length} in the short run; max ${long.lat.reduce((a, b) => Math.max(a, b), 0).toFixed(0)} us;\n` +
      '  p50/p99/max: the client round trip (submitFault called → authenticated Resolution in hand); CPU: the supervisor process, all threads\n',
  );
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`soak bench: ${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
  });
}
