// The outside floor (../shared/floors/kbench, or KBENCH_DIR) beside gensee's
// own, interleaved in one run, so that both ratios can be read together:
//
// - kbench's row `notif realistic + SYNC_WAKE_UP` / `TCP socket+connect+close`
//   is a C seccomp supervisor that reads the sockaddr, checks NOTIF_ID_VALID
//   twice and answers CONTINUE. It has no BPF program on the cgroup, does not
//   ask the socket for its protocol, and looks up no lease. Its figure is the
//   mean per call (total time / calls).
// - gensee's own floor (bench/notify-floor.c, the `make bench` pause rows)
//   does what gensee's fast path must: the same checks plus pidfd_getfd +
//   SO_PROTOCOL/SO_DOMAIN and one lease lookup, with gensee's cgroup programs
//   attached and the lease present. `make bench` reports the per-call p50.
//
// Per round, in rotated order: kbench (all its configurations, one rep),
// gensee's floor, and `gensee run` with the lease present, each timing the
// same TCP socket+connect+close to a loopback listener. Printed: every round,
// then the medians of gensee / kbench (mean against mean, kbench's own
// statistic) and gensee / its own floor (p50 and mean).
//
//   node dist/bench/kbench.js            KBENCH_ROUNDS (default 3), KBENCH_N (10000)
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync, execFile } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { findCgroup2Mount } from '../src/cgroup';
import { floorOp } from './pause';
import { execJson, median, print } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
const NOTIFY_FLOOR = path.join(PACKAGE_ROOT, 'obj', 'gs-notify-floor');
const ROW_CFG = 'notif realistic + SYNC_WAKE_UP';
const ROW_OP = 'TCP socket+connect+close';

/** kbench's sources copied to obj/kbench, its cgroup2 root set to this machine's mount, built */
function buildKbench(): string {
  const src = process.env.KBENCH_DIR ?? path.resolve(PACKAGE_ROOT, '..', 'shared', 'floors', 'kbench');
  if (!fs.existsSync(path.join(src, 'kbench.c'))) {
    throw new Error(`kbench: no kbench.c in ${src} (set KBENCH_DIR to a copy of the floors/kbench folder)`);
  }
  const dir = path.join(PACKAGE_ROOT, 'obj', 'kbench');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(src)) fs.copyFileSync(path.join(src, f), path.join(dir, f));
  // kbench names its cgroup2 root at compile time; this machine's comes from mountinfo
  const common = path.join(dir, 'common.h');
  const text = fs.readFileSync(common, 'utf8');
  const root = findCgroup2Mount();
  const patched = text.replace(/^#define CG_ROOT .*$/m, `#define CG_ROOT ${JSON.stringify(root)}`);
  if (patched === text && !text.includes(JSON.stringify(root))) throw new Error('kbench: common.h has no CG_ROOT line to point at this machine\'s cgroup2 mount');
  fs.writeFileSync(common, patched);
  const multiarch = execFileSync('gcc', ['-print-multiarch'], { encoding: 'utf8' }).trim();
  execFileSync('clang', ['-O2', '-g', '-target', 'bpf', `-I/usr/include/${multiarch}`, '-c', 'kb.bpf.c', '-o', 'kb.bpf.o'], { cwd: dir, stdio: 'inherit' });
  execFileSync('gcc', ['-O2', '-o', 'kbench', 'kbench.c', '-lbpf', '-lpthread'], { cwd: dir, stdio: 'inherit' });
  return dir;
}

/** one kbench rep: the floor row's ns per call (kbench's own figure, a mean) */
function runKbench(dir: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(path.join(dir, 'kbench'), ['1'], { cwd: dir, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`kbench: ${err.message} ${stderr}`));
      const re = new RegExp(`^RAW rep=0 cfg="${ROW_CFG.replace(/[+]/g, '\\+')}" op="${ROW_OP.replace(/[+]/g, '\\+')}" ns=(\\d+) bad=(\\d+)`, 'm');
      const m = re.exec(stdout);
      if (!m) return reject(new Error(`kbench: no row cfg="${ROW_CFG}" op="${ROW_OP}" in its output`));
      if (m[2] !== '0') return reject(new Error(`kbench: its floor row reports ${m[2]} bad calls`));
      resolve(Number(m[1]));
    });
  });
}

async function main(): Promise<void> {
  const rounds = Number(process.env.KBENCH_ROUNDS ?? 3);
  const n = Number(process.env.KBENCH_N ?? 10000);
  const dir = buildKbench();
  const srv = net.createServer((s) => {
    s.on('error', () => undefined);
    s.destroy();
  });
  await new Promise<void>((r) => srv.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  const st = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-bench-kb-'));
  const floor = floorOp('kb', `127.0.0.1:${port}`);
  try {
    const policy = path.join(st, 'fast.json');
    fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(port) }, ttl_s: 600 }], delegate: [] }));
    const connect = ['--repeat', String(n), 'bench-connect', 'tcp', '127.0.0.1', String(port)];
    const probeLine = (lines: Record<string, number>[]) => {
      const l = lines.find((x) => 'ns_per_op' in x);
      if (!l) throw new Error(`kbench bench: no probe line in ${JSON.stringify(lines)}`);
      return l;
    };
    let op = 0;
    type K = 'kbench' | 'floor' | 'gensee';
    const run: Record<K, () => Promise<{ mean: number; p50: number }>> = {
      kbench: async () => {
        const ns = await runKbench(dir);
        return { mean: ns, p50: NaN };
      },
      floor: async () => {
        const x = probeLine(await execJson(NOTIFY_FLOOR, [floor.pin, '--', PROBE, '--cgroup', floor.cg, ...connect]));
        return { mean: x.ns_per_op, p50: x.p50_ns };
      },
      gensee: async () => {
        const args = ['run', '--state-dir', st, '--op', `gs-bench-kb-${process.pid}-${op++}`, '--policy', policy, '--json', '--', PROBE, ...connect];
        const x = probeLine(await execJson(GENSEE, args));
        return { mean: x.ns_per_op, p50: x.p50_ns };
      },
    };
    const res: Record<K, { mean: number; p50: number }[]> = { kbench: [], floor: [], gensee: [] };
    await run.floor(); // warm-up
    const rows: (string | number)[][] = [];
    const us = (ns: number) => (Number.isNaN(ns) ? '-' : (ns / 1000).toFixed(1));
    for (let r = 0; r < rounds; r++) {
      const order: K[] = ['kbench', 'floor', 'gensee'];
      for (let k = 0; k < 3; k++) {
        const key = order[(r + k) % 3];
        res[key].push(await run[key]());
      }
      const g = res.gensee[r], f = res.floor[r], kb = res.kbench[r];
      rows.push([String(r + 1), us(kb.mean), us(f.mean), us(f.p50), us(g.mean), us(g.p50), (g.mean / kb.mean).toFixed(2) + 'x', (g.p50 / f.p50).toFixed(2) + 'x', (g.mean / f.mean).toFixed(2) + 'x']);
    }
    const med = (f: (i: number) => number) => median(res.gensee.map((_, i) => f(i)));
    rows.push([
      'median',
      us(median(res.kbench.map((x) => x.mean))),
      us(median(res.floor.map((x) => x.mean))),
      us(median(res.floor.map((x) => x.p50))),
      us(median(res.gensee.map((x) => x.mean))),
      us(median(res.gensee.map((x) => x.p50))),
      med((i) => res.gensee[i].mean / res.kbench[i].mean).toFixed(2) + 'x',
      med((i) => res.gensee[i].p50 / res.floor[i].p50).toFixed(2) + 'x',
      med((i) => res.gensee[i].mean / res.floor[i].mean).toFixed(2) + 'x',
    ]);
    print(
      `fast path against both floors: ${ROW_OP}, n=${n} per run, ${rounds} interleaved rounds (us per call)`,
      ['round', 'kbench mean', 'own floor mean', 'own floor p50', 'gensee mean', 'gensee p50', 'gensee/kbench (mean)', 'gensee/own (p50)', 'gensee/own (mean)'],
      rows,
    );
    process.stdout.write(
      '  kbench\'s row has no cgroup program and no lease lookup, and never asks the socket for its protocol; gensee\'s\n' +
        '  own floor does all three, as gensee must, so gensee/own is the cost of gensee\'s design and gensee/kbench\n' +
        '  also holds the hooks (sock_create, connect4, egress, the guard) and the protocol check. `make bench` prints p50.\n',
    );
  } finally {
    floor.close();
    srv.close();
    fs.rmSync(st, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
  process.exitCode = 1;
});
