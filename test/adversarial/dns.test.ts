// Issue 23, class 5: the DNS channel. Each attack runs AS the workload
// (test/adversarial/dnswork.ts, test/dns/client.ts) through `bin/gensee run
// --dns-upstream` with a host-rule policy, for both identities, in front of
// a UDP-only test upstream on loopback that counts what reaches it:
//
//   bits    the same name in every letter case, query type, header flag and
//           EDNS shape: at most the two canonical questions (A, AAAA) of the
//           one counted name reach the upstream; nothing past the budget
//   nx      NXDOMAIN, SERVFAIL and empty answers: each forwarded question
//           is a dns_query + dns_answer record with the upstream's rcode
//   outside a process outside the operation (this test, as host root), and
//           another operation's workload, ask the stub over UDP and TCP:
//           nothing answered, nothing forwarded,
//           no budget spent, the attempt recorded (dns/outside); the nft
//           fence is removed with the operation, a leftover one swept
//   fakeup  the workload listens on TCP at the UDP-only upstream's port and
//           asks the stub over TCP: the fake is never asked, its address
//           never leased, no byte reaches a listener there
import t, { type Test } from 'tap';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import * as dnsPacket from 'dns-packet';
import { PACKAGE_ROOT } from '../../src/addon';
import { opDir } from '../../src/state/operation';
import { findCgroup2Mount, killCgroupAndWait, removeEmptyCgroup } from '../../src/cgroup';
import { detachHooks } from '../../src/dataplane';
import { guardRuleset, guardTableName } from '../../src/dns/guard';
import { requireKernel, uniqueName, waitFor, testCgroup, GENSEE_BIN } from '../helpers/kernel';
import { shortStateDir, jsonlLines, type LogLine } from '../helpers/supervisor';
import { Proc } from '../helpers/gensee';
import { IDENTITIES } from './lib';

const WORK = path.join(PACKAGE_ROOT, 'dist', 'test', 'adversarial', 'dnswork.js');
const CLIENT = path.join(PACKAGE_ROOT, 'dist', 'test', 'dns', 'client.js');
const NODE = process.execPath;

interface Upstream {
  port: number;
  /** every question received: its name as on the wire */
  names: string[];
  /** distinct queries as on the wire, the id zeroed */
  wire: Set<string>;
}

/** A UDP-only authority on 127.0.0.1 (no TCP on its port): zone(name, type) → rcode and A records. */
async function udpUpstream(t: Test, zone: (name: string, type: string) => { rcode?: number; a?: string[] }): Promise<Upstream> {
  const u: Upstream = { port: 0, names: [], wire: new Set() };
  const sock = dgram.createSocket('udp4');
  sock.on('message', (raw, rinfo) => {
    let m: dnsPacket.DecodedPacket;
    try {
      m = dnsPacket.decode(raw);
    } catch {
      return;
    }
    const q = (m.questions ?? [])[0];
    if (!q) return;
    u.names.push(q.name);
    const idless = Buffer.from(raw);
    idless.writeUInt16BE(0, 0);
    u.wire.add(idless.toString('hex'));
    const r = zone(q.name.toLowerCase(), q.type);
    const answers: dnsPacket.Answer[] = q.type === 'A' ? (r.a ?? []).map((data) => ({ type: 'A', name: q.name, ttl: 300, data })) : [];
    sock.send(dnsPacket.encode({ id: m.id, type: 'response', flags: dnsPacket.AUTHORITATIVE_ANSWER | ((r.rcode ?? 0) & 0xf), questions: [q], answers }), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  u.port = sock.address().port;
  t.teardown(() => new Promise<void>((r) => sock.close(() => r())));
  return u;
}

/** A TCP listener on host counting connections and bytes. */
async function tcpCounter(t: Test, host: string): Promise<{ port: number; conns: number; bytes: number }> {
  const c = { port: 0, conns: 0, bytes: 0 };
  const socks = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    c.conns++;
    socks.add(s);
    s.on('data', (d: Buffer) => (c.bytes += d.length));
    s.on('error', () => undefined);
    s.on('close', () => socks.delete(s));
  });
  await new Promise<void>((r) => srv.listen(0, host, () => r()));
  c.port = (srv.address() as net.AddressInfo).port;
  t.teardown(() => new Promise<void>((r) => (socks.forEach((s) => s.destroy()), srv.close(() => r()))));
  return c;
}

interface Ran {
  proc: Proc;
  op: string;
  dir: string;
  out: Record<string, unknown>[];
  faults: LogLine[];
  events: LogLine[];
}

/** JSON lines of both of gensee run's streams (the workload's own among them) */
function jsonOf(p: Proc): Record<string, unknown>[] {
  const r: Record<string, unknown>[] = [];
  for (const l of `${p.stdout}\n${p.stderr}`.split('\n')) {
    if (!l.startsWith('{')) continue;
    try {
      r.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      /* partial */
    }
  }
  return r;
}

function start(t: Test, prefix: string, policy: object, up: Upstream, identity: string[], cmd: string[]): { proc: Proc; op: string; dir: string } {
  const st = shortStateDir(t);
  const op = uniqueName(prefix);
  const file = path.join(st, 'policy.json');
  fs.writeFileSync(file, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000, ...policy }));
  const proc = new Proc(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', file, '--json', ...identity, '--dns-upstream', `127.0.0.1:${up.port}`, '--', ...cmd]);
  t.teardown(async () => {
    if (!proc.running) return;
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
  return { proc, op, dir: opDir(st, op) };
}

async function finish(r: { proc: Proc; op: string; dir: string }, t: Test): Promise<Ran> {
  const ex = await r.proc.exited;
  t.equal(ex.code, 0, 'gensee run and its workload exited 0', { stderr: r.proc.stderr.slice(-1500) });
  return { ...r, out: jsonOf(r.proc).filter((l) => 'attack' in l || 'rcode' in l), faults: jsonlLines(path.join(r.dir, 'faults.jsonl')), events: jsonlLines(path.join(r.dir, 'events.jsonl')) };
}

const nftTables = (): string => execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });

const kinds = (r: Ran, kind: string, name?: string): LogLine[] => r.faults.filter((f) => f.kind === kind && (name === undefined || f.name === name));

for (const id of IDENTITIES) {
  t.test(`bits past the budget, ${id.name}: case, type, flags and EDNS of one name reach the upstream as at most A and AAAA`, async (t) => {
    if (!requireKernel(t)) return;
    const up = await udpUpstream(t, (n) => (n === 'www.bits.test' ? { a: ['127.0.0.1'] } : { rcode: 3 }));
    const r = await finish(start(t, 'adv-dns-bits', { leases: [{ network: { protocol: 'tcp', host: '*.bits.test', port: 9 }, ttl_s: 30 }], dns_budget: 1 }, up, id.flags, [NODE, WORK, 'variants', 'www.bits.test', 'past.bits.test']), t);
    const rep = r.out.find((o) => o.attack === 'variants') as { sent: number; rcodes: Record<string, number>; past: string[] } | undefined;
    t.ok(rep && rep.sent > 30, `the workload sent ${rep?.sent} variants`, { out: r.out });
    t.same(rep?.past, ['REFUSED', 'REFUSED'], 'a fresh name past the budget: REFUSED');
    t.same([...new Set(up.names)], ['www.bits.test'], 'only the counted name reached the upstream, in lower case');
    t.ok(up.wire.size <= 2, `at most 2 distinct questions on the wire (A, AAAA): saw ${up.wire.size} of ${up.names.length}`);
    const refused = kinds(r, 'dns_refused').filter((f) => f.control === 'dns/qtype');
    t.ok(refused.length >= 10, `the odd types were refused and recorded (${refused.length} dns/qtype lines)`);
  });

  t.test(`nxdomain, ${id.name}: every forwarded question is a record, NXDOMAIN, SERVFAIL and empty answers too`, async (t) => {
    if (!requireKernel(t)) return;
    const up = await udpUpstream(t, (n) => (n === 'nx.rec.test' ? { rcode: 3 } : n === 'sf.rec.test' ? { rcode: 2 } : {}));
    const r = await finish(start(t, 'adv-dns-nx', { leases: [{ network: { protocol: 'tcp', host: '*.rec.test', port: 9 }, ttl_s: 30 }] }, up, id.flags, [NODE, CLIENT, 'ask', 'nx.rec.test/A', 'sf.rec.test/A', 'empty.rec.test/AAAA']), t);
    t.match(r.out, [{ name: 'nx.rec.test', rcode: 'NXDOMAIN' }, { name: 'sf.rec.test', rcode: 'SERVFAIL' }, { name: 'empty.rec.test', rcode: 'NOERROR', answers: [] }], 'the workload got the upstream answers');
    t.same(up.names.sort(), ['empty.rec.test', 'nx.rec.test', 'sf.rec.test'], 'all three were forwarded');
    for (const [name, rcode] of [['nx.rec.test', 'NXDOMAIN'], ['sf.rec.test', 'SERVFAIL'], ['empty.rec.test', 'NOERROR']]) {
      t.equal(kinds(r, 'dns_query', name).length, 1, `${name}: a dns_query line`);
      t.match(kinds(r, 'dns_answer', name), [{ rcode, addresses: [], leases: [] }], `${name}: a dns_answer line with rcode ${rcode}, nothing leased`);
    }
  });

  t.test(`outside, ${id.name}: a process outside the operation gets no answer from its stub and spends none of its budget`, async (t) => {
    if (!requireKernel(t)) return;
    const up = await udpUpstream(t, () => ({ a: ['127.0.0.1'] }));
    const gate = fs.mkdtempSync('/tmp/gs-dnsgo-');
    fs.chmodSync(gate, 0o755);
    t.teardown(() => fs.rmSync(gate, { recursive: true, force: true }));
    const go = path.join(gate, 'go');
    // a fence a killed run left (an address and port no stub holds): swept when a stub starts
    const leftover = guardTableName('127.53.1.1', 5399);
    execFileSync('nft', ['-f', '-'], { input: guardRuleset('127.53.1.1', 5399, testCgroup(t, 'gs-dnsleft')) });
    t.teardown(() => void spawnSync('nft', ['delete', 'table', 'inet', leftover]));
    const run = start(t, 'adv-dns-out', { leases: [{ network: { protocol: 'tcp', host: '*.own.test', port: 9 }, ttl_s: 30 }], dns_budget: 2 }, up, id.flags, [NODE, WORK, 'waitgo', go, 'c.own.test']);
    const dns = await waitFor(() => jsonOf(run.proc).find((l) => l.event === 'dns'), 30_000);
    const [host, port] = String(dns.listen).split(':');
    // this test process is outside the operation's cgroup
    const ask = (name: string): Buffer => dnsPacket.encode({ id: 4242, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: 'A', class: 'IN' }] });
    const udpGot = await new Promise<string>((resolve) => {
      const s = dgram.createSocket('udp4');
      const done = (r: string): void => (clearTimeout(timer), s.close(), resolve(r));
      const timer = setTimeout(() => done('no answer'), 2000);
      s.on('error', (e: NodeJS.ErrnoException) => done(`no answer (${e.code})`));
      s.on('message', () => done('answered'));
      s.connect(Number(port), host, () => s.send(ask('a.own.test')));
    });
    const tcpGot = await new Promise<string>((resolve) => {
      const s = net.connect({ host, port: Number(port) });
      const done = (r: string): void => (clearTimeout(timer), s.destroy(), resolve(r));
      const timer = setTimeout(() => done('no answer'), 2000);
      s.on('error', (e: NodeJS.ErrnoException) => done(`no answer (${e.code})`));
      s.on('connect', () => {
        const m = ask('b.own.test');
        const l = Buffer.alloc(2);
        l.writeUInt16BE(m.length);
        s.write(Buffer.concat([l, m]));
      });
      s.on('data', () => done('answered'));
    });
    // another operation's workload, its policy granting every 127.53.*:53, asks this operation's stub
    const other = await finish(
      start(t, 'adv-dns-oth', { grants: [{ network: { protocol: 'udp', cidr: '127.53.0.0/16', ports: '53' } }, { network: { protocol: 'tcp', cidr: '127.53.0.0/16', ports: '53' } }] }, up, id.flags, [NODE, CLIENT, '--server', `${host}:${port}`, 'ask', 'd.own.test/A', 'e.own.test/A/tcp']),
      t,
    );
    t.match(other.out, [{ name: 'd.own.test', rcode: 'TIMEOUT' }, { name: 'e.own.test', transport: 'tcp', rcode: 'TIMEOUT' }], "another operation's workload gets no answer from this stub, over UDP or TCP");
    t.notOk(nftTables().includes(leftover), 'the leftover fence was swept when the stub started');
    t.ok(nftTables().includes(guardTableName(host, Number(port))), "the stub's fence is in place while it serves");
    // the fence removed behind gensee's back (a ruleset flush) is put back within the next read
    execFileSync('nft', ['delete', 'table', 'inet', guardTableName(host, Number(port))]);
    const back = await waitFor(() => nftTables().includes(guardTableName(host, Number(port))), 10_000).catch(() => false);
    t.ok(back, 'a fence removed by someone else is reinstalled');
    fs.writeFileSync(go, '');
    const r = await finish(run, t);
    t.match(r.proc.stderr, /fence .* was removed by someone else: reinstalled/, 'and the removal reported');
    t.notOk(nftTables().includes(guardTableName(host, Number(port))), 'and removed when the operation ended');
    t.match(udpGot, /^no answer/, `outside over UDP: ${udpGot}`);
    t.match(tcpGot, /^no answer/, `outside over TCP: ${tcpGot}`);
    t.same(up.names, ['c.own.test'], "only the workload's own question reached the upstream");
    t.match(r.out, [{ attack: 'waitgo', go: true, rcode: 'NOERROR' }], "the workload's question was answered: no budget spent by the outside");
    t.equal(kinds(r, 'dns_query').length, 1, 'one dns_query: the workload');
    const ev = r.events.filter((e) => (e.event as { control?: string } | undefined)?.control === 'dns/outside');
    t.ok(ev.length >= 1, 'the outside attempt is a dns_denied event (control dns/outside)', { events: r.events });
    t.ok(kinds(r, 'dns_refused').some((f) => f.control === 'dns/outside'), 'and a dns_refused line');
  });

  t.test(`fakeup, ${id.name}: a workload listening on TCP at the UDP upstream's port is never asked, its address never leased`, async (t) => {
    if (!requireKernel(t)) return;
    const up = await udpUpstream(t, (n) => (n === 'www.fake.test' ? { a: ['127.0.0.1'] } : { rcode: 3 }));
    const target = await tcpCounter(t, '127.0.0.3');
    const r = await finish(start(t, 'adv-dns-fake', { leases: [{ network: { protocol: 'tcp', host: 'www.fake.test', port: target.port }, ttl_s: 30 }] }, up, id.flags, [NODE, WORK, 'fakeup', String(up.port), 'www.fake.test', String(target.port), '127.0.0.3']), t);
    const rep = r.out.find((o) => o.attack === 'fakeup') as { listening: string; asked: number; addresses: string[]; connect: string } | undefined;
    t.ok(rep, 'the attack reported', { out: r.out, stderr: r.proc.stderr.slice(-1500) });
    t.comment(`fake upstream listening: ${rep?.listening}`);
    t.equal(rep?.asked ?? 0, 0, 'the fake TCP upstream was never asked');
    t.notOk(rep?.addresses.includes('127.0.0.3'), 'the workload did not get its own address back');
    t.not(rep?.connect, 'ok', 'its connect to the address it chose was refused');
    const leased = kinds(r, 'lease_intent').map((f) => (f.lease as { address: string }).address);
    t.notOk(leased.includes('127.0.0.3'), `no lease for the chosen address (leases: ${leased.join(', ') || 'none'})`);
    await new Promise((res) => setTimeout(res, 150));
    t.equal(target.conns, 0, 'no connection reached the listener at the chosen address');
    t.equal(target.bytes, 0, 'no byte reached it');
    t.same([...new Set(up.names)], ['www.fake.test'], 'the real upstream was asked, over UDP');
  });
}
