// The README's tour, "Run something inside the boundary", as written there:
// the stand-in resolver (examples/names/resolver.js), `python3 -m
// http.server`, a policy naming the host api.test, and
//   gensee run --policy policy.json --dns-upstream 127.0.0.1:PORT -- curl -s http://api.test:PORT/
// Issue 26's motivating failure: on 6.1 (no PIDFD_THREAD) curl resolves in a
// worker thread and printed "Could not resolve host". Here curl must fetch
// the page through the operation's DNS stub, its connect must take the fast
// path (the stub's answer put the lease in the kernel first), and a name no
// rule covers must not resolve. make vmtest runs it on Debian 12's 6.1.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../../src/addon';
import { opDir } from '../../src/state/operation';
import { findCgroup2Mount, killCgroupAndWait, removeEmptyCgroup } from '../../src/cgroup';
import { detachHooks } from '../../src/dataplane';
import { requireKernel, uniqueName, freePort, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { shortStateDir, jsonlLines } from '../helpers/supervisor';
import { gensee, Proc } from '../helpers/gensee';

const RESOLVER = path.join(PACKAGE_ROOT, 'examples', 'names', 'resolver.js');
const CURL = '/usr/bin/curl';

interface T {
  teardown(fn: () => unknown): void;
}

/** a process this file started, ended (by its pid) at teardown */
function background(t: T, cmd: string, args: string[], cwd?: string): Proc {
  const p = cwd ? new Proc('/bin/sh', ['-c', `cd '${cwd}' && exec "$@"`, 'sh', cmd, ...args]) : new Proc(cmd, args);
  t.teardown(() => p.end());
  return p;
}

/** until a TCP connect to 127.0.0.1:port is accepted (the listener is up) */
async function listening(port: number, who: Proc): Promise<void> {
  let up = false;
  await waitFor(() => {
    if (!who.running) throw new Error(`exited before listening: ${who.stderr}`);
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      up = true;
      s.destroy();
    });
    s.once('error', () => s.destroy());
    return up;
  }, 30_000, 100);
}

/** `gensee run` as the README runs it, with --state-dir/--op/--json-out for the test to read */
async function run(t: T, st: string, policy: string, upstream: string, cmd: string[]) {
  const op = uniqueName('gs-tour');
  const out = path.join(st, `${op}.jsonl`);
  const proc = new Proc(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--json-out', out, '--dns-upstream', upstream, '--', ...cmd]);
  t.teardown(async () => {
    if (!proc.running) return;
    // killed mid-way: the workload first, then the pinned hooks
    await proc.end();
    const cg = path.join(findCgroup2Mount(), 'gensee', op);
    await killCgroupAndWait(cg).catch(() => undefined);
    try {
      detachHooks(op);
    } catch {
      /* never attached */
    }
    try {
      removeEmptyCgroup(cg);
    } catch {
      /* not empty: left for the operator */
    }
  });
  const ex = await proc.exited;
  return {
    op,
    code: ex.code,
    stdout: proc.stdout,
    stderr: proc.stderr,
    faults: jsonlLines(path.join(opDir(st, op), 'faults.jsonl')),
    summary: jsonlLines(out).find((l) => l.event === 'summary') as unknown as { fast_path: number; paused: number; destinations: { destination: string; verdict: string; count: number }[] } | undefined,
  };
}

t.test("README tour: a host rule, the DNS stub and curl", async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const web = path.join(st, 'www');
  fs.mkdirSync(web);
  const token = `tour-${process.pid}-${Date.now()}`;
  fs.writeFileSync(path.join(web, 'index.html'), `${token}\n`);

  const dnsPort = await freePort();
  const httpPort = await freePort();
  // node examples/names/resolver.js 5353 api.test=127.0.0.1 &
  const resolver = background(t, process.execPath, [RESOLVER, String(dnsPort), 'api.test=127.0.0.1']);
  // python3 -m http.server 8080 --bind 127.0.0.1 &
  const http = background(t, '/usr/bin/python3', ['-m', 'http.server', String(httpPort), '--bind', '127.0.0.1'], web);
  await listening(dnsPort, resolver);
  await listening(httpPort, http);

  // the README's policy, on this test's port
  const policy = path.join(st, 'policy.json');
  fs.writeFileSync(
    policy,
    JSON.stringify({
      schema: 1,
      leases: [
        { network: { protocol: 'tcp', host: 'api.test', port: httpPort }, ttl_s: 300 },
        { network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '9000-9999' }, ttl_s: 30, max_uses: 0 },
      ],
      delegate: [{ network: { protocol: 'tcp', cidr: '0.0.0.0/0', ports: '443' }, to: 'egress-proxy' }],
      dns_budget: 200,
      fault_deadline_ms: 5000,
    }),
  );
  const upstream = `127.0.0.1:${dnsPort}`;

  const r = await run(t, st, policy, upstream, [CURL, '-s', `http://api.test:${httpPort}/`]);
  t.equal(r.code, 0, `curl fetched http://api.test:${httpPort}/ inside the boundary (exit 0) ${r.stderr}`);
  t.equal(r.stdout, `${token}\n`, 'the page the listener serves');
  const answers = r.faults.filter((l) => l.kind === 'dns_answer' && l.name === 'api.test');
  t.ok(answers.length >= 1, 'the stub answered api.test');
  // curl asks A and AAAA at once: the AAAA answer (no address for api.test)
  // can be written first, so the A answer is the one with an IPv4 address
  const a = answers.find((l) => (l.addresses as { family?: string }[] | undefined)?.some((x) => x.family === 'ipv4'));
  t.match(a, { addresses: [{ family: 'ipv4', address: '127.0.0.1' }], leases: [{ address: '127.0.0.1', port: httpPort }] }, 'and leased its address on the rule port');
  const paused = r.faults.filter((l) => {
    if (l.kind !== 'fault') return false;
    const f = l.fault as { source?: string; effect?: { network?: { address: string; port: number } } };
    return f.source === 'seccomp_notify' && f.effect?.network?.port === httpPort;
  });
  t.same(paused, [], "curl's connect took the fast path: the lease was in the kernel before the answer");
  t.ok(r.summary?.destinations.some((d) => d.destination === `tcp 127.0.0.1:${httpPort}` && d.verdict === 'allow' && d.count === 1), 'the summary counts one allowed connect');
  const v = await gensee(['verify', '--op', r.op, '--state-dir', st]);
  t.equal(v.code, 0, `gensee verify passes ${v.stdout}${v.stderr}`);

  // "A name no rule covers is answered REFUSED (curl http://other.test:8080/ cannot resolve it)"
  const o = await run(t, st, policy, upstream, [CURL, '-s', `http://other.test:${httpPort}/`]);
  t.equal(o.code, 6, `curl: could not resolve host (exit 6) ${o.stderr}`);
  t.ok(
    o.faults.some((l) => l.kind === 'dns_refused' && l.name === 'other.test'),
    'the stub refused other.test',
  );
  t.equal(o.stdout, '', 'nothing fetched');
});
