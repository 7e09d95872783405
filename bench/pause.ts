// Pause mode (issue 15's first two rows), every figure against a floor
// measured in the same run, rounds interleaved (order rotated each round):
// - fast path: TCP socket+connect+close per call, one client binary
//   (obj/gs-probe) for every configuration: no gensee; the C floor
//   (bench/notify-floor.c: a minimal seccomp notify supervisor, the probe in
//   a cgroup with gensee's hooks and the lease); `gensee run` with the lease
//   present (C fast path). Target: gensee <= 1.15x the floor.
// - first connect to a new allowed destination (slow path: pause → fault →
//   resolver → lease → CONTINUE), p50/p99 of a fresh `gensee run` from its
//   first fault, against the floor: the same notify supervisor, whose missed
//   lease costs the resolver's socket exchange + a durable lease_intent
//   (group-committed fdatasync) + the evidence bytes and a second fdatasync
//   + the lease put and read-back. Targets: p50 <= 1.5x, p99 <= 2.5x the
//   floor's.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../src/addon';
import { findCgroup2Mount, removeCgroup } from '../src/cgroup';
import { attachHooks, detachHooks, DataPlane } from '../src/dataplane';
import { parseDestination } from '../src/addr';
import { pinDirFor } from '../src/bpffs';
import { execJson, median, print, spread, startNodeFloor, verdict } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
const NOTIFY_FLOOR = path.join(PACKAGE_ROOT, 'obj', 'gs-notify-floor');

/**
 * The C notify floor's first connects (gs-probe PROBE_ARGS in a fresh floor
 * cgroup, tag unique in this process) with the exchange served by the Node
 * floor (bench/floor-node.ts, mode: the --intent exchange or 'one-sync') in
 * each design, or by gensee's plumbing (bench/floor-plumbing.ts): the
 * probe's line of the design with the faster p50.
 */
export async function servedByFloor(st: string, tag: string, designs: readonly ('pool' | 'loop' | 'plumbing')[], mode: true | 'one-sync', probeArgs: string[]): Promise<Record<string, number>> {
  let best: Record<string, number> | null = null;
  for (const design of designs) {
    const f = floorOp(`${tag}-${design}`, null);
    const sock = path.join(st, `node-${design}.sock`);
    const srv = await startNodeFloor(sock, path.join(st, `node-${design}.jsonl`), design, mode);
    try {
      const x = (await execJson(NOTIFY_FLOOR, [f.pin, '--slow', st, '--connect', sock, '--', PROBE, '--cgroup', f.cg, ...probeArgs])).find((l) => 'p50_ns' in l);
      if (!x) throw new Error(`bench: the notify floor served by ${design} printed no probe line`);
      if (!best || x.p50_ns < best.p50_ns) best = x;
    } finally {
      await srv.stop();
      f.close();
    }
  }
  return best!;
}

/** A cgroup with gensee's hooks attached (and optionally one lease), for the notify floor; close() removes both */
export function floorOp(tag: string, lease: string | null): { cg: string; pin: string; close: () => void } {
  const op = `gs-bench-nf-${process.pid}-${tag}`;
  const cg = path.join(findCgroup2Mount(), op);
  fs.mkdirSync(cg);
  const close = () => {
    try {
      detachHooks(op);
    } catch {
      /* not attached */
    }
    removeCgroup(cg);
  };
  try {
    attachHooks(op, cg, {});
    if (lease) {
      const dp = DataPlane.open(op);
      dp.putLease({ tuple: parseDestination('tcp', lease), generation: 1n });
      dp.close();
    }
  } catch (e) {
    close();
    throw e;
  }
  return { cg, pin: path.join(pinDirFor(op), 'gs_leases_v1'), close };
}

export async function benchPause(opts: { n: number; rounds: number; newDest: number; slowWarm: number }): Promise<void> {
  const srv = net.createServer((s) => {
    s.on('error', () => undefined);
    s.destroy();
  });
  await new Promise<void>((r) => srv.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  const st = fs.mkdtempSync('/tmp/gs-bench-p-');
  const fastFloor = floorOp('fast', `127.0.0.1:${port}`);
  try {
    const fast = path.join(st, 'fast.json');
    fs.writeFileSync(fast, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(port) }, ttl_s: 600 }], delegate: [] }));
    const slow = path.join(st, 'slow.json');
    fs.writeFileSync(slow, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '20000-60000' }, ttl_s: 600 }], delegate: [] }));
    const probeLine = (lines: Record<string, number>[]) => {
      const l = lines.find((x) => 'ns_per_op' in x);
      if (!l) throw new Error(`pause bench: no probe line in ${JSON.stringify(lines)}`);
      return l;
    };
    let op = 0;
    /** the probes' JSON lines under `gensee run --json -- CMD…` (gensee's own lines go to its stderr) */
    const genseeRun = (policy: string, cmd: string[]) =>
      execJson(GENSEE, ['run', '--state-dir', st, '--op', `gs-bench-p-${process.pid}-${op++}`, '--policy', policy, '--json', '--', ...cmd]);
    const connect = ['--repeat', String(opts.n), 'bench-connect', 'tcp', '127.0.0.1', String(port)];
    const ports = ['--repeat', String(opts.newDest), 'bench-ports', 'tcp', '127.0.0.1', '20000'];
    type Fast = 'bare' | 'floor' | 'gensee';
    const fastRun: Record<Fast, () => Promise<Record<string, number>>> = {
      bare: async () => probeLine(await execJson(PROBE, connect)),
      floor: async () => probeLine(await execJson(NOTIFY_FLOOR, [fastFloor.pin, '--', PROBE, '--cgroup', fastFloor.cg, ...connect])),
      gensee: async () => probeLine(await genseeRun(fast, [PROBE, ...connect])),
    };
    type Slow = 'plain' | 'floor' | 'node' | 'node1' | 'plumbing' | 'gensee';
    const slowRun: Record<Slow, () => Promise<Record<string, number>>> = {
      plain: async () => probeLine(await execJson(PROBE, ports)),
      floor: async () => {
        // a fresh op each round: none of its ports is leased yet
        const f = floorOp(`slow-${op++}`, null);
        try {
          return probeLine(await execJson(NOTIFY_FLOOR, [f.pin, '--slow', st, '--', PROBE, '--cgroup', f.cg, ...ports]));
        } finally {
          f.close();
        }
      },
      node: () => servedByFloor(st, `slow-${op++}`, ['pool', 'loop'], true, ports),
      node1: () => servedByFloor(st, `slow-${op++}`, ['pool', 'loop'], 'one-sync', ports),
      plumbing: () => servedByFloor(st, `slow-${op++}`, ['plumbing'], true, ports),
      gensee: async () => probeLine(await genseeRun(slow, [PROBE, ...ports])),
    };
    // per round: the call's p50 (the figure: robust to other load on the machine) and its mean
    const fastR: Record<Fast, number[]> = { bare: [], floor: [], gensee: [] };
    const fastMean: Record<Fast, number[]> = { bare: [], floor: [], gensee: [] };
    const slowR: Record<Slow, { p50: number; p99: number }[]> = { plain: [], floor: [], node: [], node1: [], plumbing: [], gensee: [] };
    await fastRun.bare(); // warm-up: page cache, the listener
    for (let r = 0; r < opts.rounds; r++) {
      const fk: Fast[] = ['bare', 'floor', 'gensee'];
      const sk: Slow[] = ['plain', 'floor', 'node', 'node1', 'plumbing', 'gensee'];
      for (let k = 0; k < 3; k++) {
        const x = await fastRun[fk[(r + k) % 3]]();
        fastR[fk[(r + k) % 3]].push(x.p50_ns);
        fastMean[fk[(r + k) % 3]].push(x.ns_per_op);
      }
      for (let k = 0; k < sk.length; k++) {
        const x = await slowRun[sk[(r + k) % sk.length]]();
        slowR[sk[(r + k) % sk.length]].push({ p50: x.p50_ns, p99: x.p99_ns });
      }
    }
    const us = (ns: number) => (ns / 1000).toFixed(1);
    const paired = (a: number[], b: number[]) => a.map((x, i) => x / b[i]);
    const fRatio = paired(fastR.gensee, fastR.floor);
    print(
      `pause mode, fast path (paused call with a live lease): TCP socket+connect+close, one client binary (gs-probe), n=${opts.n} x ${opts.rounds} interleaved rounds, median`,
      ['config', 'p50 us/op', 'of floor', 'spread (per round)', 'mean us/op', 'mean of floor', 'target', 'met'],
      [
        ['no gensee (gs-probe alone)', us(median(fastR.bare)), median(paired(fastR.bare, fastR.floor)).toFixed(2) + 'x', spread(paired(fastR.bare, fastR.floor)), us(median(fastMean.bare)), median(paired(fastMean.bare, fastMean.floor)).toFixed(2) + 'x', '', ''],
        ['C floor (bench/notify-floor.c, hooks + lease)', us(median(fastR.floor)), '1.00x', `${us(Math.min(...fastR.floor))}-${us(Math.max(...fastR.floor))} us`, us(median(fastMean.floor)), '1.00x', '', ''],
        ['gensee run, lease present (C fast path)', us(median(fastR.gensee)), median(fRatio).toFixed(2) + 'x', spread(fRatio), us(median(fastMean.gensee)), median(paired(fastMean.gensee, fastMean.floor)).toFixed(2) + 'x', '<= 1.15x', verdict(median(fRatio) <= 1.15)],
      ],
    );
    process.stdout.write(`  gensee against no gensee: ${median(paired(fastR.gensee, fastR.bare)).toFixed(2)}x (median of rounds), spread ${spread(paired(fastR.gensee, fastR.bare))}\n`);
    const p = (k: Slow, q: 'p50' | 'p99') => slowR[k].map((x) => x[q]);
    const r50 = paired(p('gensee', 'p50'), p('floor', 'p50'));
    const r99 = paired(p('gensee', 'p99'), p('floor', 'p99'));
    // the same, warm (informational): one `gensee run` whose resolver first
    // serves opts.slowWarm new destinations, then the measured ones
    const warmRun = await genseeRun(slow, [
      '/bin/sh', '-c', `"$0" --repeat ${opts.slowWarm} bench-ports tcp 127.0.0.1 20000 && "$0" --repeat ${opts.newDest} bench-ports tcp 127.0.0.1 ${20000 + opts.slowWarm}`, PROBE,
    ]);
    const slw = warmRun.filter((l) => 'ns_per_op' in l)[1];
    if (!slw) throw new Error('pause bench: the warm slow-path run printed no second probe line');
    print(
      `pause mode, first connect to a new allowed destination (slow path, retry_after_lease), p50 / p99 of each fresh run (n=${opts.newDest}), median of ${opts.rounds} interleaved rounds`,
      ['config', 'p50 us', 'p99 us', 'p50 of floor', 'p50 spread', 'p99 of floor', 'p99 spread', 'target', 'met'],
      [
        ['no gensee (new port, refused)', us(median(p('plain', 'p50'))), us(median(p('plain', 'p99'))), '', '', '', '', '', ''],
        ['C floor: fast path + exchange + intent fdatasync + fdatasync + lease put', us(median(p('floor', 'p50'))), us(median(p('floor', 'p99'))), '1.00x', '', '1.00x', '', '', ''],
        ...(['node', 'node1', 'plumbing'] as const).map((k) => [
          k === 'node'
            ? 'Node floor: the same, its exchange served in Node (less work)'
            : k === 'node1'
              ? 'Node floor, its lines under one fdatasync (what gensee makes durable now)'
              : "the same, served by gensee's plumbing (a decision that does nothing)",
          us(median(p(k, 'p50'))),
          us(median(p(k, 'p99'))),
          median(paired(p(k, 'p50'), p('floor', 'p50'))).toFixed(2) + 'x',
          spread(paired(p(k, 'p50'), p('floor', 'p50'))),
          median(paired(p(k, 'p99'), p('floor', 'p99'))).toFixed(2) + 'x',
          spread(paired(p(k, 'p99'), p('floor', 'p99'))),
          '',
          '',
        ]),
        [
          'gensee run (fresh), slow path',
          us(median(p('gensee', 'p50'))),
          us(median(p('gensee', 'p99'))),
          median(r50).toFixed(2) + 'x',
          spread(r50),
          median(r99).toFixed(2) + 'x',
          spread(r99),
          'p50 <= 1.5x, p99 <= 2.5x',
          `${verdict(median(r50) <= 1.5)} / ${verdict(median(r99) <= 2.5)}`,
        ],
        [`gensee run, after ${opts.slowWarm} faults (1 run, informational)`, us(slw.p50_ns), us(slw.p99_ns), (slw.p50_ns / median(p('floor', 'p50'))).toFixed(2) + 'x', '', (slw.p99_ns / median(p('floor', 'p99'))).toFixed(2) + 'x', '', '', ''],
      ],
    );
    for (const k of ['node', 'node1'] as const) {
      const g50 = paired(p('gensee', 'p50'), p(k, 'p50'));
      const g99 = paired(p('gensee', 'p99'), p(k, 'p99'));
      process.stdout.write(
        `  gensee (fresh) over the ${k === 'node' ? 'Node floor' : 'Node floor under one fdatasync'}: p50 ${median(g50).toFixed(2)}x (${g50.map((x) => x.toFixed(2)).join(' ')}), p99 ${median(g99).toFixed(2)}x (${g99.map((x) => x.toFixed(2)).join(' ')})\n`,
      );
    }
    process.stdout.write(
      '  ratios: gensee over the floor of the same round, median of rounds; spread: min-max of those per-round ratios;\n' +
        '  fast path: the figure is each round\'s per-call p50 (the mean, beside it, takes every stall of a loaded machine);\n' +
        '  floors (bench/notify-floor.c): RECV, ID_VALID, process_vm_readv of the sockaddr, pidfd_getfd + SO_PROTOCOL\n' +
        '  + SO_DOMAIN (the lease key needs the protocol, and other socket types report 6 or 17 too; added to the issue\'s\n' +
        '  list), ID_VALID, one lease-map lookup, SEND CONTINUE, with\n' +
        '  SYNC_WAKE_UP; the probe in a cgroup with gensee\'s hooks. First connect adds, on the miss, one frame over a kept\n' +
        '  connection to a resolver thread that makes a ~300-byte lease_intent line durable (fdatasync, group commit),\n' +
        '  appends ~920 evidence bytes and fdatasyncs again before it answers, then the lease put into the kernel map and\n' +
        '  its read-back. Added to the issue\'s list because gensee must do them: the lease put and read-back, and the\n' +
        '  intent durable before the lease enters the kernel (issue "crash consistency"): two dependent fdatasyncs.\n' +
        '  gensee now makes its intent and resolution durable with one (docs/design.md, "The commit path"): the row\n' +
        '  "Node floor, its lines under one fdatasync" is the Node floor doing that.\n' +
        '  The Node floor is the C floor with its resolver thread replaced by bench/floor-node.ts over the same kept\n' +
        '  connection (no decoding, policy, MAC or hash chain; the C side still puts the lease): the most a resolver\n' +
        '  written for Node can reach here; the faster of its two designs (fdatasync on the thread pool or on the event\n' +
        '  loop) by p50, each round. The row below it is the same C floor served by gensee\'s own plumbing\n' +
        '  (bench/floor-plumbing.ts: the addon\'s socket path and syncer, a JavaScript decision that does nothing).\n',
    );
  } finally {
    fastFloor.close();
    await new Promise<void>((r) => srv.close(() => r()));
    fs.rmSync(st, { recursive: true, force: true });
  }
}
