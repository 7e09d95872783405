// TCP socket+connect+close per operation, made by a real process in a cgroup:
// no hook (baseline) vs the hook with a lease hit among 10,000 leases vs a
// hook miss (EPERM). Rounds are interleaved so drift hits all configs alike.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../src/addon';
import { findCgroup2Mount, removeCgroup } from '../src/cgroup';
import { attachHooks, detachHooks, DataPlane } from '../src/dataplane';
import { parseDestination } from '../src/addr';
import { execJson, median, print } from './util';

const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');

export async function benchDataplane(opts: { n: number; rounds: number }): Promise<void> {
  const srv = net.createServer((s) => {
    s.on('error', () => undefined);
    s.destroy();
  });
  await new Promise<void>((r) => srv.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const mount = findCgroup2Mount();
  const cgBase = path.join(mount, `gs-bench-base-${tag}`);
  const cgHit = path.join(mount, `gs-bench-hit-${tag}`);
  const cgMiss = path.join(mount, `gs-bench-miss-${tag}`);
  const opHit = `gs-bench-hit-${tag}`;
  const opMiss = `gs-bench-miss-${tag}`;
  for (const c of [cgBase, cgHit, cgMiss]) fs.mkdirSync(c);
  try {
    attachHooks(opHit, cgHit, {});
    attachHooks(opMiss, cgMiss, {});
    const dp = DataPlane.open(opHit);
    // 10,000 other leases: distinct addresses and ports
    for (let i = 0; i < 10_000; i++) {
      const a = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      dp.putLease({ tuple: parseDestination('tcp', `${a}:${1000 + (i % 50000)}`), generation: 1n });
    }
    dp.putLease({ tuple: parseDestination('tcp', `127.0.0.1:${port}`), generation: 1n });
    const leases = dp.listLeases().length;
    dp.close();
    // the miss op's ring buffer would fill up: nobody reads it in the bench.
    // Events that cannot be reserved are counted (lost-events), which is the
    // production behaviour under overload too.
    const res: Record<string, number[]> = { base: [], hit: [], miss: [] };
    const run = async (cg: string) =>
      (await execJson(PROBE, ['--cgroup', cg, '--repeat', String(opts.n), 'bench-connect', 'tcp', '127.0.0.1', String(port)]))[1];
    await run(cgBase); // warm-up
    for (let r = 0; r < opts.rounds; r++) {
      const b = await run(cgBase);
      const h = await run(cgHit);
      const m = await run(cgMiss);
      if (b.err || h.err || m.ok) throw new Error(`unexpected outcomes: base ${JSON.stringify(b)} hit ${JSON.stringify(h)} miss ${JSON.stringify(m)}`);
      res.base.push(b.ns_per_op);
      res.hit.push(h.ns_per_op);
      res.miss.push(m.ns_per_op);
    }
    const base = median(res.base);
    const fmt = (x: number) => (x / 1000).toFixed(2);
    print(
      `data plane: TCP socket+connect+close per op (n=${opts.n} x ${opts.rounds} rounds, median; ${leases} leases in the map)`,
      ['config', 'us/op', 'ratio vs no hook', 'target'],
      [
        ['no hook', fmt(base), '1.00x', ''],
        ['hook, lease hit (10k leases)', fmt(median(res.hit)), (median(res.hit) / base).toFixed(2) + 'x', '<= 1.10x'],
        ['hook, miss (EPERM)', fmt(median(res.miss)), (median(res.miss) / base).toFixed(2) + 'x', ''],
      ],
    );
  } finally {
    await new Promise<void>((r) => srv.close(() => r()));
    for (const op of [opHit, opMiss]) {
      try {
        detachHooks(op);
      } catch {
        /* best effort */
      }
    }
    for (const c of [cgBase, cgHit, cgMiss]) removeCgroup(c);
  }
}
