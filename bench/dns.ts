// The added latency of a resolved name's first connect (issue 14, "make
// bench"): for each of n distinct names, a UDP A question, then a TCP
// connect to the answered address; timed from the question sent to the
// connect settled, inside one workload process (test/dns/client.js,
// dns-packet). Two configurations, in one run, rounds interleaved (order
// swapped each round), against one loopback test authority
// (test/dns/authority.ts) answering every name at once:
//   no gensee   the client asks the authority itself and connects
//   gensee run  the client asks the operation's stub (/etc/resolv.conf), which
//               decides the name, forwards it, puts the lease in the kernel
//               with its durable evidence (dns_query, lease_intent,
//               dns_answer), then answers; the connect meets the lease on
//               the C fast path
// Every name answers a new loopback address (127.77.X.Y), so every connect
// is to a destination never leased before: the first connect of that name.
// Nothing listens on the port: each connect ends in ECONNREFUSED, the same
// for both (as in the pause bench's new-destination rows); under gensee it
// must get past the hook to be refused, which the bench checks.
//
// Standalone: node dist/bench/dns.js (GENSEE_BENCH_QUICK=1 for a short run).
import { Progress } from '../src/progress';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { startAuthority } from '../test/dns/authority';
import { freePort } from '../test/helpers/kernel';
import { percentile, print } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
const CLIENT = path.join(PACKAGE_ROOT, 'dist', 'test', 'dns', 'client.js');

interface Run {
  us: number[];
  results: Record<string, number>;
}

function exec(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 64 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message} ${stderr}`));
      resolve(stdout);
    });
  });
}

/** the client's result line among the output lines */
function clientLine(stdout: string): Run {
  for (const l of stdout.split('\n')) {
    if (!l.startsWith('{"us":')) continue;
    return JSON.parse(l) as Run;
  }
  throw new Error(`dns bench: no result line in:\n${stdout.slice(0, 2000)}`);
}

/** 127.77.X.Y for name number i (X, Y within 1..250) */
function addressOf(i: number): string {
  return `127.77.${Math.floor(i / 250) + 1}.${(i % 250) + 1}`;
}

export async function benchDns(opts: { n: number; warm: number; rounds: number }): Promise<void> {
  const auth = await startAuthority(
    (q) => {
      const m = /^n([0-9]+)-r[0-9]+-[a-z]+\.bench\.test$/.exec(q.name);
      if (!m || q.type !== 'A') return { rcode: 3 };
      return { answers: [{ type: 'A', name: q.name, ttl: 300, data: addressOf(Number(m[1])) }] };
    },
    { log: false },
  );
  const port = await freePort();
  const st = fs.mkdtempSync('/tmp/gs-bench-dns-');
  const per = opts.warm + opts.n;
  if (per > 250 * 250) throw new Error('dns bench: at most 62500 names per round');
  try {
    const policy = path.join(st, 'names.json');
    fs.writeFileSync(
      policy,
      JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', host: '*.bench.test', port }, ttl_s: 600 }], delegate: [], dns_budget: Math.min(100000, per + 10) }),
    );
    const base: number[] = [];
    const under: number[] = [];
    const runBase = async (r: number): Promise<void> => {
      const out = clientLine(await exec(process.execPath, [CLIENT, '--server', `127.0.0.1:${auth.port}`, 'connect', 'n', `-r${r}-base.bench.test`, String(per), String(port)]));
      if ((out.results.ECONNREFUSED ?? 0) !== per) throw new Error(`dns bench: without gensee, not every connect was refused by TCP: ${JSON.stringify(out.results)}`);
      base.push(...out.us.slice(opts.warm));
    };
    const runUnder = async (r: number): Promise<void> => {
      const op = `gs-bench-dns-${process.pid}-${r}`;
      const stdout = await exec(GENSEE, [
        'run', '--state-dir', st, '--op', op, '--policy', policy, '--json', '--dns-upstream', `127.0.0.1:${auth.port}`, '--',
        process.execPath, CLIENT, 'connect', 'n', `-r${r}-gensee.bench.test`, String(per), String(port),
      ]);
      const out = clientLine(stdout);
      // EACCES/EPERM here would mean a connect did not find its lease
      if ((out.results.ECONNREFUSED ?? 0) !== per) throw new Error(`dns bench: under gensee, not every connect got past the hook: ${JSON.stringify(out.results)}`);
      under.push(...out.us.slice(opts.warm));
      fs.rmSync(path.join(st, 'network-operations', op), { recursive: true, force: true });
    };
    for (let r = 0; r < opts.rounds; r++) {
      if (r % 2 === 0) {
        await runBase(r);
        await runUnder(r);
      } else {
        await runUnder(r);
        await runBase(r);
      }
    }
    const us = (x: number) => x.toFixed(1);
    const b50 = percentile(base, 50);
    const b99 = percentile(base, 99);
    const u50 = percentile(under, 50);
    const u99 = percentile(under, 99);
    print(
      `names: a resolved name's first connect, A question sent → connect settled (n=${opts.n} names x ${opts.rounds} rounds, interleaved, after ${opts.warm} warm-up names a round)`,
      ['config', 'p50 us', 'p99 us', 'added p50 us', 'added p99 us', 'ratio p50', 'ratio p99'],
      [
        ['no gensee (asks the authority, connects)', us(b50), us(b99), '', '', '1.00x', '1.00x'],
        ['gensee run (stub: decide, forward, lease + evidence, answer; fast-path connect)', us(u50), us(u99), us(u50 - b50), us(u99 - b99), (u50 / b50).toFixed(2) + 'x', (u99 / b99).toFixed(2) + 'x'],
      ],
    );
    process.stdout.write(
      '  every name answers a new address: each connect is that destination\'s first; the lease and its evidence\n' +
        '  (lease_intent and dns_answer, made durable by one fdatasync) are in place before the answer leaves the stub\n',
    );
  } finally {
    await auth.close();
    fs.rmSync(st, { recursive: true, force: true });
  }
}

function quick(): boolean {
  return process.env.GENSEE_BENCH_QUICK === '1';
}

if (require.main === module) {
  const p = new Progress('bench', null);
  p.next('dns');
  benchDns({ n: quick() ? 200 : 1000, warm: quick() ? 50 : 200, rounds: quick() ? 2 : 6 }).then(
    () => p.done('dns'),
    (e) => {
      p.done('dns failed');
      process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
      process.exitCode = 1;
    },
  );
}
