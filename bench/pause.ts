// TCP socket+connect+close per operation: no gensee; under `gensee run` with
// the lease present (C fast path); and the first connect to a new
// destination (slow path: pause → fault → resolver → lease → CONTINUE), with
// p50/p99. The slow path's added latency is against the same new-port
// connect without gensee.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../src/addon';
import { execJson, median, print } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
const FLOOR = path.join(PACKAGE_ROOT, 'obj', 'gs-floor');

export async function benchPause(opts: { n: number; rounds: number; newDest: number; slowWarm: number }): Promise<void> {
  const srv = net.createServer((s) => {
    s.on('error', () => undefined);
    s.destroy();
  });
  await new Promise<void>((r) => srv.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  const st = fs.mkdtempSync('/tmp/gs-bench-p-');
  try {
    const fast = path.join(st, 'fast.json');
    fs.writeFileSync(fast, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(port) }, ttl_s: 600 }], delegate: [] }));
    const slow = path.join(st, 'slow.json');
    fs.writeFileSync(slow, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '20000-60000' }, ttl_s: 600 }], delegate: [] }));
    const probeLine = (lines: Record<string, number>[]) => lines.find((l) => 'ns_per_op' in l)!;
    const base: number[] = [];
    const under: number[] = [];
    let op = 0;
    /** every JSON line of `gensee run --json -- CMD…` (its events and the probes' results) */
    const genseeRun = (policy: string, cmd: string[]) =>
      execJson(GENSEE, ['run', '--state-dir', st, '--op', `gs-bench-p-${process.pid}-${op++}`, '--policy', policy, '--json', '--', ...cmd]);
    const gensee = async (policy: string, probeArgs: string[]) => probeLine(await genseeRun(policy, [PROBE, ...probeArgs]));
    for (let r = 0; r < opts.rounds; r++) {
      base.push(probeLine(await execJson(PROBE, ['--repeat', String(opts.n), 'bench-connect', 'tcp', '127.0.0.1', String(port)])).ns_per_op);
      under.push((await gensee(fast, ['--repeat', String(opts.n), 'bench-connect', 'tcp', '127.0.0.1', String(port)])).ns_per_op);
    }
    const b = median(base);
    const u = median(under);
    // slow path: every call a new destination (ports with nothing listening: ECONNREFUSED after the lease)
    const plain = probeLine(await execJson(PROBE, ['--repeat', String(opts.newDest), 'bench-ports', 'tcp', '127.0.0.1', '20000']));
    const sl = await gensee(slow, ['--repeat', String(opts.newDest), 'bench-ports', 'tcp', '127.0.0.1', '20000']);
    // the same, warm: one `gensee run` whose resolver first serves opts.slowWarm
    // new destinations, then the measured ones (the second probe's line)
    const warmRun = await genseeRun(slow, [
      '/bin/sh', '-c', `"$0" --repeat ${opts.slowWarm} bench-ports tcp 127.0.0.1 20000 && "$0" --repeat ${opts.newDest} bench-ports tcp 127.0.0.1 ${20000 + opts.slowWarm}`, PROBE,
    ]);
    const slw = warmRun.filter((l) => 'ns_per_op' in l)[1];
    if (!slw) throw new Error('pause bench: the warm slow-path run printed no second probe line');
    // what any answer costs before a resolver does anything: the socket
    // exchange and the fdatasync of its evidence (bench/floor.c)
    const [fl] = await execJson(FLOOR, [st, '1', String(opts.newDest)]);
    const us = (ns: number) => (ns / 1000).toFixed(1);
    print(
      `pause mode: TCP socket+connect+close (n=${opts.n} x ${opts.rounds} rounds, median)`,
      ['config', 'us/op', 'ratio', 'target'],
      [
        ['no gensee', us(b), '1.00x', ''],
        ['gensee run, lease present (C fast path)', us(u), (u / b).toFixed(2) + 'x', '<= 1.6x'],
      ],
    );
    print(
      `pause mode: first connect to a new destination (slow path, retry_after_lease), n=${opts.newDest}`,
      ['config', 'p50 us', 'p99 us', 'added p50 us', 'added p99 us', 'target'],
      [
        ['no gensee (new port, refused)', us(plain.p50_ns), us(plain.p99_ns), '', '', ''],
        ['gensee run, slow path', us(sl.p50_ns), us(sl.p99_ns), us(sl.p50_ns - plain.p50_ns), us(sl.p99_ns - plain.p99_ns), '<= 300 us p50, <= 2000 us p99'],
        [`gensee run, slow path, after ${opts.slowWarm} faults`, us(slw.p50_ns), us(slw.p99_ns), us(slw.p50_ns - plain.p50_ns), us(slw.p99_ns - plain.p99_ns), '<= 300 us p50, <= 2000 us p99'],
        ['C floor: socket exchange + fdatasync only', us(fl.p50_ns), us(fl.p99_ns), '', '', ''],
      ],
    );
    process.stdout.write(
      '  "slow path": one fresh `gensee run`, its resolver\'s first faults (V8 not yet warm); "after N": the same\n' +
        '  resolver once it has served N new destinations;\n' +
        '  the C floor is the part of every answer that no resolver can avoid while the resolution must be durable first\n',
    );
  } finally {
    await new Promise<void>((r) => srv.close(() => r()));
    fs.rmSync(st, { recursive: true, force: true });
  }
}
