// Counter evidence costs, in-process supervisor on a real cgroup:
// - lease install latency: eBPF map (put + read back) vs nftables, one
//   batched `nft -f -` for all elements vs one exec per element
// - sampler CPU per second with N live leases (default 10,000): idle (no
//   counter changes) and busy (every lease's counter changes every second,
//   i.e. N counters.jsonl lines per second), without and with the nft layer
//   (its `nft -j list table` reads run in a child process: measured apart,
//   per read, and spread over the adaptive nft reading period)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile, ChildProcess, spawn } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { findCgroup2Mount, removeCgroup } from '../src/cgroup';
import { attachHooks, detachHooks, DataPlane, bootNs } from '../src/dataplane';
import { Supervisor } from '../src/supervisor';
import { parsePolicy, policyHash } from '../src/protocol/json';
import { NftBackend, nftReadTable, nftRemoveTable, nftUnavailable } from '../src/backends/nft';
import { editLeases } from '../src/envelope/generations';
import type { LeaseRecord } from '../src/state/network';
import type { Tuple } from '../src/addr';
import { median, print } from './util';

const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
const BASE_PORT = 20000;

/** CPU time of waited-for children (cutime + cstime), ms */
function childrenCpuMs(): number {
  const f = fs.readFileSync('/proc/self/stat', 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[13]) + Number(rest[14])) * 1000) / 100; // fields 16, 17 at USER_HZ = 100
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function tuple(i: number): Tuple {
  return { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: BASE_PORT + i };
}

/** connect to every leased port, over and over, until stopped (each lease's counter moves every pass) */
function trafficLoop(cg: string, n: number): { stop: () => Promise<void>; passes: () => number } {
  let stopped = false;
  let passes = 0;
  let child: ChildProcess | null = null;
  const loop = (async () => {
    while (!stopped) {
      await new Promise<void>((resolve) => {
        child = execFile(PROBE, ['--cgroup', cg, '--repeat', String(n), 'bench-ports', 'tcp', '127.0.0.1', String(BASE_PORT)], () => resolve());
      });
      passes++;
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      child?.kill();
      await loop;
    },
    passes: () => passes,
  };
}

async function samplerCost(o: { n: number; seconds: number; nft: boolean; busy: boolean }): Promise<string[]> {
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const op = `gs-bench-ct-${tag}`;
  const cg = path.join(findCgroup2Mount(), op);
  const st = fs.mkdtempSync('/tmp/gs-bc-');
  fs.mkdirSync(cg);
  const wl = spawn('sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec sleep 600`], { stdio: 'ignore' });
  const p = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '1-65535' }, ttl_s: 3600 }], delegate: [] };
  let sup: Supervisor | null = null;
  try {
    sup = await Supervisor.start({ stateDir: st, op, cgroup: cg, policy: { policy: parsePolicy(p), hash: policyHash(JSON.stringify(p)) }, nft: o.nft, onError: (e) => process.stderr.write(`bench: ${e.message}\n`) });
    const ev = sup.envelope!;
    const network = sup.resolver.network;
    const gen = ev.policyGeneration;
    const exp = bootNs() + 3600n * 1_000_000_000n;
    const at = new Date().toISOString();
    const recs: LeaseRecord[] = [];
    for (let i = 0; i < o.n; i++) {
      const l = sup.dp.putLease({ tuple: tuple(i), generation: BigInt(gen), expiresBootNs: exp });
      recs.push({ generation: gen, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: l.tuple.port, expires_at_boot_ns: String(exp), max_uses: 0, installed_at: at });
    }
    network.setRecord(editLeases(network.record, new Set(), recs));
    if (ev.nft) await ev.nft.put(recs.map((r) => ({ tuple: tuple(r.port - BASE_PORT), expiresBootNs: exp })), bootNs());
    // every lease gets a counter: one pass of traffic, then let readings settle
    const first = trafficLoop(cg, o.n);
    while (first.passes() < 1) await sleep(50);
    await first.stop();
    await sleep(2500);
    const traffic = o.busy ? trafficLoop(cg, o.n) : null;
    if (traffic) {
      while (traffic.passes() < 1) await sleep(50);
    }
    const t0 = cpuMs();
    const k0 = ev.stats.tickMs;
    const n0 = ev.stats.ticks;
    const l0 = ev.recorder.log.seq;
    const w0 = Date.now();
    await sleep(o.seconds * 1000);
    const wall = (Date.now() - w0) / 1000;
    const cpu = (cpuMs() - t0) / wall;
    const ticks = ev.stats.ticks - n0;
    const tick = (ev.stats.tickMs - k0) / Math.max(1, ticks);
    const lines = (ev.recorder.log.seq - l0) / wall;
    await traffic?.stop();
    return [
      `${o.n} leases, ${o.busy ? 'busy' : 'idle'}${o.nft ? ', nft' : ''}`,
      cpu.toFixed(1),
      (cpu / 10).toFixed(2) + '%',
      tick.toFixed(2),
      lines.toFixed(0),
      ev.nft ? ev.nft.stats.lastReadMs.toFixed(0) : '-',
    ];
  } finally {
    if (sup) await sup.stop({ close: true });
    wl.kill('SIGKILL');
    try {
      detachHooks(op);
    } catch {
      /* gone */
    }
    await sleep(50);
    removeCgroup(cg);
    fs.rmSync(st, { recursive: true, force: true });
  }
}

async function installLatency(n: number, withNft: boolean): Promise<void> {
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const op = `gs-bench-li-${tag}`;
  const cg = path.join(findCgroup2Mount(), op);
  fs.mkdirSync(cg);
  let nft: NftBackend | null = null;
  try {
    attachHooks(op, cg);
    const dp = DataPlane.open(op);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) dp.putLease({ tuple: tuple(i), generation: 1n, ttlMs: 600_000 });
    const ebpfUs = Number(process.hrtime.bigint() - t0) / 1e3 / n;
    dp.close();
    const rows: (string | number)[][] = [['eBPF map, put + read back', n, ebpfUs.toFixed(2), '1.00x']];
    if (withNft) {
      nft = (await NftBackend.create({ op, cgroup: cg, elements: [], nowBootNs: bootNs() })).nft;
      const now = bootNs();
      const els = Array.from({ length: n }, (_, i) => ({ tuple: tuple(i), expiresBootNs: now + 600_000_000_000n }));
      const b0 = process.hrtime.bigint();
      await nft.put(els, now);
      const batchUs = Number(process.hrtime.bigint() - b0) / 1e3 / n;
      const b100 = process.hrtime.bigint();
      await nft.put(els.slice(0, 100), now);
      const batch100Us = Number(process.hrtime.bigint() - b100) / 1e3 / 100;
      const single: number[] = [];
      for (let i = 0; i < 30; i++) {
        const s0 = process.hrtime.bigint();
        await nft.put([{ tuple: { ...tuple(i), port: 40000 + i }, expiresBootNs: now + 600_000_000_000n }], now);
        single.push(Number(process.hrtime.bigint() - s0) / 1e3);
      }
      const one = median(single);
      rows.push(['nft, one batch of all', n, batchUs.toFixed(2), (batchUs / ebpfUs).toFixed(1) + 'x']);
      rows.push(['nft, one batch of 100', 100, batch100Us.toFixed(2), (batch100Us / ebpfUs).toFixed(1) + 'x']);
      rows.push(['nft, one exec per element', 30, one.toFixed(0), (one / ebpfUs).toFixed(0) + 'x']);
      // the sampler's nft read: child CPU per `nft -j list table`
      const c0 = childrenCpuMs();
      const w0 = process.hrtime.bigint();
      for (let i = 0; i < 5; i++) await nftReadTable(nft.table);
      const readCpu = (childrenCpuMs() - c0) / 5;
      const readWall = Number(process.hrtime.bigint() - w0) / 1e6 / 5;
      const period = Math.min(5000, Math.max(1000, Math.ceil(readWall / 0.05)));
      print(
        `counters: lease install latency (per element) and nft reads (${n} elements)`,
        ['method', 'elements', 'us/element', 'vs eBPF'],
        rows,
      );
      print('counters: nft counter read (child process)', ['elements', 'wall ms/read', 'cpu ms/read', 'reading period ms', 'cpu ms/s'], [
        [n, readWall.toFixed(0), readCpu.toFixed(0), period, (readCpu / (period / 1000)).toFixed(1)],
      ]);
      return;
    }
    print(`counters: lease install latency (per element, ${n})`, ['method', 'elements', 'us/element', 'vs eBPF'], rows);
  } finally {
    if (nft) await nftRemoveTable(nft.table).catch(() => undefined);
    try {
      detachHooks(op);
    } catch {
      /* gone */
    }
    removeCgroup(cg);
  }
}

export async function benchCounters(opts: { leases: number; seconds: number }): Promise<void> {
  // traffic needs no listener: connects to closed loopback ports are allowed
  // (and counted) by the hook, then refused by the stack — cheap traffic
  const withNft = (await nftUnavailable()) === null;
  await installLatency(opts.leases, withNft);
  const rows: string[][] = [];
  for (const busy of [false, true]) rows.push(await samplerCost({ n: opts.leases, seconds: opts.seconds, nft: false, busy }));
  if (withNft) for (const busy of [false, true]) rows.push(await samplerCost({ n: opts.leases, seconds: opts.seconds, nft: true, busy }));
  print(
    `counters: sampler cost per second (readings every 1000 ms, ${opts.seconds} s each; cpu = this process, nft child reads above)`,
    ['config', 'cpu ms/s', '% of a core', 'sync ms/reading', 'lines/s', 'nft read ms'],
    rows,
  );
}
