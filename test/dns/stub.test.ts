// The DNS stub on loopback: decide before forwarding, the answer held until
// onAnswer resolves, REFUSED/SERVFAIL/FORMERR recorded, the stub's own
// canonical query upstream, TC passed on (no TCP fallback), the TCP path, and a query flood that stays bounded. The upstream is a small
// authoritative server written here with dns-packet (./authority.ts).
import t from 'tap';
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { randomBytes } from 'node:crypto';
import * as dnsPacket from 'dns-packet';
import { parseDnsListen, parseUpstream } from '../../src/dns/service';
import { startDnsStub, hostUpstream, registeredDomain, type DnsStubOptions, type DnsRefusal, type DnsAnswer, type NameVerdict } from '../../src/dns/stub';
import { startAuthority, type Zone, type Authority } from './authority';

type Decoded = dnsPacket.DecodedPacket & { rcode?: string };
/** tap's Test, structurally */
interface T {
  teardown(fn: () => unknown): void;
}
/** a record's data (A/AAAA/CNAME: the text) */
const data = (a: dnsPacket.Answer | undefined): unknown => (a && 'data' in a ? a.data : undefined);

const A = (name: string, data: string, ttl = 300): dnsPacket.Answer => ({ type: 'A', name, ttl, class: 'IN', data });
const AAAA = (name: string, data: string, ttl = 300): dnsPacket.Answer => ({ type: 'AAAA', name, ttl, class: 'IN', data });
const CNAME = (name: string, data: string, ttl = 300): dnsPacket.Answer => ({ type: 'CNAME', name, ttl, class: 'IN', data });

const allowAll = (): NameVerdict => ({ allow: true, ruleRef: 'grants/0' });

/** a stub on loopback with recording callbacks; closed with the test */
async function stubFor(t: T, up: { port: number; host?: string }, over: Partial<DnsStubOptions> = {}) {
  const refused: DnsRefusal[] = [];
  const answers: { q: { name: string; qtype: string }; a: DnsAnswer; ruleRef: string }[] = [];
  const decided: [string, string][] = [];
  const stub = await startDnsStub({
    listen: { host: '127.0.0.1', port: 0 },
    upstream: { host: up.host ?? '127.0.0.1', port: up.port },
    decide: (n, qt) => {
      decided.push([n, qt]);
      return allowAll();
    },
    onAnswer: async (q, a, v) => {
      answers.push({ q, a, ruleRef: v.ruleRef });
    },
    onRefused: (r) => refused.push(r),
    ...over,
  });
  t.teardown(() => stub.close());
  return { stub, refused, answers, decided };
}

async function authority(t: T, zone: Zone, o: Parameters<typeof startAuthority>[1] = {}): Promise<Authority> {
  const a = await startAuthority(zone, o);
  t.teardown(() => a.close());
  return a;
}

interface Got {
  raw: Buffer;
  msg: Decoded;
}

/** one UDP exchange; null if nothing comes back within waitMs */
function udpRaw(port: number, msg: Buffer, waitMs = 3000, host = '127.0.0.1'): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const s = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      s.close();
      resolve(null);
    }, waitMs);
    s.on('message', (raw) => {
      clearTimeout(timer);
      s.close();
      resolve(raw);
    });
    s.send(msg, port, host);
  });
}

function queryMsg(name: string, type: dnsPacket.RecordType = 'A', o: { id?: number; edns?: number } = {}): Buffer {
  return dnsPacket.encode({
    id: o.id ?? 4242,
    type: 'query',
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type, class: 'IN' }],
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [],
  });
}

async function udpQuery(port: number, name: string, type: dnsPacket.RecordType = 'A', o: { id?: number; edns?: number; host?: string } = {}): Promise<Got> {
  const raw = await udpRaw(port, queryMsg(name, type, o), 3000, o.host);
  if (!raw) throw new Error(`no answer for ${name}`);
  return { raw, msg: dnsPacket.decode(raw) as Decoded };
}

/** a TCP connection speaking length-prefixed DNS: send() many, next() the answers in arrival order */
async function tcpConn(port: number) {
  const sock = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  let buf = Buffer.alloc(0);
  const got: Buffer[] = [];
  const waiters: (() => void)[] = [];
  let closed = false;
  sock.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      got.push(Buffer.from(buf.subarray(2, 2 + buf.readUInt16BE(0))));
      buf = buf.subarray(2 + buf.readUInt16BE(0));
    }
    waiters.splice(0).forEach((w) => w());
  });
  sock.on('error', () => {});
  sock.on('close', () => {
    closed = true;
    waiters.splice(0).forEach((w) => w());
  });
  return {
    sock,
    sendRaw(b: Buffer) {
      sock.write(b);
    },
    send(m: Buffer) {
      const l = Buffer.alloc(2);
      l.writeUInt16BE(m.length);
      sock.write(Buffer.concat([l, m]));
    },
    async next(waitMs = 3000): Promise<Got | null> {
      const deadline = Date.now() + waitMs;
      while (got.length === 0 && !closed && Date.now() < deadline) {
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
      const raw = got.shift();
      return raw ? { raw, msg: dnsPacket.decode(raw) as Decoded } : null;
    },
    get closed() {
      return closed;
    },
    close() {
      sock.destroy();
    },
  };
}

async function tcpQuery(port: number, name: string, type: dnsPacket.RecordType = 'A', id = 777): Promise<Got> {
  const c = await tcpConn(port);
  c.send(queryMsg(name, type, { id }));
  const g = await c.next();
  c.close();
  if (!g) throw new Error(`no TCP answer for ${name}`);
  return g;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** the same message under another id: what "byte for byte but the id" compares */
const idless = (b: Buffer): string => b.subarray(2).toString('hex');

t.test('names: registeredDomain and hostUpstream', async (t) => {
  t.equal(registeredDomain('a.b.example.com'), 'example.com');
  t.equal(registeredDomain('A.B.Example.COM.'), 'example.com', 'lower case, no trailing dot');
  t.equal(registeredDomain('x.example.co.uk'), 'co.uk', 'no public-suffix list: the last two labels');
  t.equal(registeredDomain('localhost'), 'localhost');
  t.equal(registeredDomain('.'), '');
  t.same(hostUpstream('# comment\nsearch example.com\nnameserver 127.0.0.53\nnameserver 8.8.8.8\n'), { host: '127.0.0.53', port: 53 }, 'the first nameserver, loopback not skipped');
  t.same(hostUpstream('options edns0\n  nameserver   2001:DB8::1  # v6\n'), { host: '2001:db8::1', port: 53 }, 'IPv6, canonical');
  t.throws(() => hostUpstream('search example.com\n; nameserver 1.1.1.1\n'), /no nameserver .*--dns-upstream/, 'none: a clear error');
  t.throws(() => hostUpstream('nameserver dns.example\n'), /not an IP address/, 'a name is not an upstream');
  t.same(parseUpstream('127.0.0.1:5353'), { host: '127.0.0.1', port: 5353 }, '--dns-upstream: UDP by default');
  t.same(parseUpstream('tcp:[::1]:53'), { host: '::1', port: 53, transport: 'tcp' }, 'tcp: only when the operator says so');
  t.same(parseUpstream('udp:10.0.0.2'), { host: '10.0.0.2', port: 53, transport: 'udp' });
  t.throws(() => parseUpstream('tls:10.0.0.2'), /bad --dns-upstream "tls:10\.0\.0\.2"/, 'another transport: a clear error');
  t.same(parseDnsListen('127.53.0.1'), { host: '127.53.0.1', port: 53 });
});

t.test('an allowed name: the exact upstream answer, only after onAnswer resolves', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.10', 123), A(q.name, '192.0.2.11', 77)] }));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let called = 0;
  const seen: DnsAnswer[] = [];
  const { stub, refused, decided } = await stubFor(t, auth, {
    onAnswer: async (_q, a) => {
      called++;
      seen.push(a);
      await held;
    },
  });
  t.equal(stub.udpPort, stub.tcpPort, 'UDP and TCP on one port');
  let answered: Buffer | null | undefined;
  const pending = udpRaw(stub.udpPort, queryMsg('api.Example.com', 'A', { id: 0xbeef })).then((r) => (answered = r));
  while (called === 0) await sleep(10);
  await sleep(200);
  t.equal(answered, undefined, 'the client has no answer while onAnswer is pending');
  t.equal(stub.stats().inflight, 1, 'the question is in flight');
  release();
  await pending;
  t.ok(answered, 'answered once onAnswer resolved');
  const raw = answered as Buffer;
  t.equal(raw.readUInt16BE(0), 0xbeef, "the client's id");
  t.equal(auth.sent.length, 1);
  t.equal(auth.seen[0].name, 'api.example.com', 'the upstream was asked in lower case');
  const spelled = Buffer.from(auth.sent[0]);
  Buffer.from('\x03api\x07Example').copy(spelled, 12);
  t.equal(idless(raw), idless(spelled), "the upstream's answer byte for byte (TTLs untouched), the client's spelling in its question");
  t.equal((dnsPacket.decode(raw) as Decoded).questions?.[0].name, 'api.Example.com');
  t.not(auth.seen[0].id, 0xbeef, 'the upstream saw a fresh id, not the client one');
  t.same(decided, [['api.example.com', 'A']], 'decided once, lower case');
  t.same(seen[0], {
    name: 'api.example.com',
    rcode: 'NOERROR',
    truncated: false,
    chain: [],
    addresses: [
      { family: 'ipv4', address: '192.0.2.10', ttl: 123 },
      { family: 'ipv4', address: '192.0.2.11', ttl: 77 },
    ],
  }, 'onAnswer got the addresses and TTLs');
  t.same(refused, []);
  t.equal(stub.stats().inflight, 0);

  // random ids and source ports per forwarded query
  for (let i = 0; i < 8; i++) await udpQuery(stub.udpPort, `n${i}.example.com`);
  const ids = new Set(auth.seen.map((s) => s.id));
  const ports = new Set(auth.seen.map((s) => s.port));
  t.ok(ids.size >= 7, `upstream ids vary (${ids.size} distinct of ${auth.seen.length})`);
  t.ok(ports.size >= 7, `upstream source ports vary (${ports.size} distinct of ${auth.seen.length})`);
  const q = auth.seen[1].query;
  t.same([q.questions?.length, q.answers?.length, q.authorities?.length, q.additionals?.length], [1, 0, 0, 0], 'one question and nothing else forwarded');
});

t.test('a CNAME chain is reported; a chain leaving the answer section is not chased', async (t) => {
  const auth = await authority(t, (q) => {
    if (q.name.toLowerCase() === 'www.example.com')
      return { answers: [CNAME('www.example.com', 'cdn.Example.NET'), CNAME('cdn.example.net', 'edge.cdn.example.net', 60), A('edge.cdn.example.net', '192.0.2.7', 20), A('other.example.net', '192.0.2.99')] };
    if (q.name === 'away.example.com') return { answers: [CNAME('away.example.com', 'elsewhere.example.org')] };
    if (q.name === 'loop.example.com') return { answers: [CNAME('loop.example.com', 'loop2.example.com'), CNAME('loop2.example.com', 'loop.example.com')] };
    if (q.type === 'MX') return { answers: [{ type: 'MX', name: q.name, ttl: 30, class: 'IN', data: { preference: 10, exchange: 'mx.example.com' } }, A('mx.example.com', '192.0.2.25')] };
    return { rcode: 3 };
  });
  const { stub, answers } = await stubFor(t, auth);
  const r = await udpQuery(stub.udpPort, 'www.example.com.');
  t.equal(r.msg.answers?.length, 4, 'the client got the whole answer');
  t.same(answers[0].a, { name: 'www.example.com', rcode: 'NOERROR', truncated: false, chain: ['cdn.example.net', 'edge.cdn.example.net'], addresses: [{ family: 'ipv4', address: '192.0.2.7', ttl: 20 }] }, 'chain in order; only the end of the chain gives addresses');
  await udpQuery(stub.udpPort, 'away.example.com');
  t.same(answers[1].a, { name: 'away.example.com', rcode: 'NOERROR', truncated: false, chain: ['elsewhere.example.org'], addresses: [] }, 'the chain as far as the answer section goes');
  await udpQuery(stub.udpPort, 'loop.example.com');
  t.same(answers[2].a.chain, ['loop2.example.com'], 'a CNAME loop ends the chain');
  const seenBefore = auth.count;
  const mx = await udpQuery(stub.udpPort, 'mail.example.com', 'MX');
  t.equal(mx.msg.rcode, 'REFUSED', 'another qtype (MX) is REFUSED');
  t.equal(auth.count, seenBefore, '... and never forwarded');
  const nx = await udpQuery(stub.udpPort, 'nope.example.com');
  t.equal(nx.msg.rcode, 'NXDOMAIN', "the upstream's NXDOMAIN is passed on");
  t.match(answers[3], { q: { name: 'nope.example.com', qtype: 'A' }, a: { name: 'nope.example.com', rcode: 'NXDOMAIN', chain: [], addresses: [] }, ruleRef: 'grants/0' }, 'onAnswer sees it, with its rcode and no addresses');
});

t.test("the upstream gets the stub's own query: lower case, RD only, no EDNS, A/AAAA only", async (t) => {
  const auth = await authority(t, (q) => ({ answers: q.type === 'A' ? [A(q.name, '192.0.2.1')] : [] }));
  const { stub, refused } = await stubFor(t, auth);
  const opt = (size: number, flags: number, options: dnsPacket.OptAnswer['options']): dnsPacket.OptAnswer => ({ type: 'OPT', name: '.', udpPayloadSize: size, extendedRcode: 0, ednsVersion: 0, flags, flag_do: false, options });
  const variants: Buffer[] = [
    dnsPacket.encode({ id: 1, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name: 'WwW.CaSe.TeSt', type: 'A' }] }),
    dnsPacket.encode({ id: 2, type: 'query', flags: dnsPacket.CHECKING_DISABLED | dnsPacket.AUTHENTIC_DATA | (1 << 6), questions: [{ name: 'www.case.test', type: 'A' }] }),
    dnsPacket.encode({ id: 3, type: 'query', flags: 0, questions: [{ name: 'www.case.test', type: 'AAAA' }], additionals: [opt(1234, dnsPacket.DNSSEC_OK, [{ code: 12, length: 16 }])] }),
    dnsPacket.encode({ id: 4, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name: 'www.case.test', type: 'A' }], additionals: [opt(4000, 0, [])] }),
  ];
  for (const v of variants) t.ok(await udpRaw(stub.udpPort, v), 'answered');
  t.equal((dnsPacket.decode((await udpRaw(stub.udpPort, dnsPacket.encode({ id: 5, type: 'query', questions: [{ name: 'www.case.test', type: 'TXT' }] })))!) as Decoded).rcode, 'REFUSED', 'TXT: REFUSED');
  t.match(refused.at(-1), { control: 'dns/qtype', qtype: 'TXT' });
  t.equal(auth.seen.length, 4, 'four forwarded');
  const wire = new Set(auth.seen.map((s) => JSON.stringify({ name: s.name, type: s.type, flags: s.query.flags, add: s.query.additionals?.length ?? 0 })));
  t.same([...wire].sort(), [JSON.stringify({ name: 'www.case.test', type: 'A', flags: dnsPacket.RECURSION_DESIRED, add: 0 }), JSON.stringify({ name: 'www.case.test', type: 'AAAA', flags: dnsPacket.RECURSION_DESIRED, add: 0 })].sort(), 'two distinct questions on the wire, none of the client bits');
});

t.test('a refused name: REFUSED, recorded, never forwarded', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.1')] }));
  const { stub, refused, answers } = await stubFor(t, auth, {
    decide: (n) => (n.endsWith('.allowed.test') ? { allow: true, ruleRef: 'grants/1' } : { allow: false, control: 'dns/no_rule', reason: `no host rule covers a name under ${registeredDomain(n)}` }),
  });
  const r = await udpQuery(stub.udpPort, 'aGVsbG8gd29ybGQ.exfil.example.org', 'A', { id: 99 });
  t.equal(r.msg.rcode, 'REFUSED');
  t.equal(r.msg.id, 99);
  t.equal(r.msg.questions?.[0].name, 'aGVsbG8gd29ybGQ.exfil.example.org', 'the question echoed');
  t.equal(auth.count, 0, 'no upstream query was made');
  t.same(answers, [], 'onAnswer not called');
  t.equal(refused.length, 1);
  t.match(refused[0], { name: 'agvsbg8gd29ybgq.exfil.example.org', qtype: 'A', rcode: 'REFUSED', control: 'dns/no_rule', detail: 'no host rule covers a name under example.org' });
  t.match(refused[0].peer, /^udp 127\.0\.0\.1:\d+$/);
  const tr = await tcpQuery(stub.tcpPort, 'x.example.org', 'AAAA');
  t.equal(tr.msg.rcode, 'REFUSED', 'over TCP too');
  t.equal(auth.count, 0);
  t.match(refused[1].peer, /^tcp 127\.0\.0\.1:\d+$/);
  const ok = await udpQuery(stub.udpPort, 'a.allowed.test');
  t.equal(ok.msg.rcode, 'NOERROR', 'an allowed name still goes through');
  t.equal(answers[0].ruleRef, 'grants/1', "onAnswer gets decide's rule");
});

t.test('a budget-like decide is called once per query', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.1')] }));
  const names = new Set<string>();
  let calls = 0;
  const { stub, refused } = await stubFor(t, auth, {
    decide: (n) => {
      calls++;
      names.add(n);
      return names.size <= 3 ? { allow: true, ruleRef: 'grants/0' } : { allow: false, control: 'dns/budget', reason: `dns_budget of 3 distinct names spent` };
    },
  });
  const rcodes: string[] = [];
  for (const n of ['a.x.test', 'b.x.test', 'A.x.test', 'c.x.test', 'd.x.test', 'e.x.test']) rcodes.push((await udpQuery(stub.udpPort, n)).msg.rcode ?? '');
  rcodes.push((await tcpQuery(stub.tcpPort, 'f.x.test')).msg.rcode ?? '');
  t.same(rcodes, ['NOERROR', 'NOERROR', 'NOERROR', 'NOERROR', 'REFUSED', 'REFUSED', 'REFUSED']);
  t.equal(calls, 7, 'decide called exactly once per query (UDP and TCP)');
  t.equal(auth.count, 4, 'only the allowed ones forwarded');
  t.same(refused.map((r) => r.control), ['dns/budget', 'dns/budget', 'dns/budget']);
});

t.test('the upstream down or silent: SERVFAIL, recorded, onAnswer not called', async (t) => {
  // a port with nothing on it: bind, note, close
  const probe = dgram.createSocket('udp4');
  await new Promise<void>((r) => probe.bind(0, '127.0.0.1', r));
  const deadPort = probe.address().port;
  await new Promise<void>((r) => probe.close(() => r()));
  const down = await stubFor(t, { port: deadPort }, { upstreamTimeoutMs: 1000 });
  const t0 = Date.now();
  const r = await udpQuery(down.stub.udpPort, 'api.example.com', 'A', { id: 5 });
  t.equal(r.msg.rcode, 'SERVFAIL');
  t.equal(r.msg.id, 5);
  t.match(down.refused[0], { name: 'api.example.com', rcode: 'SERVFAIL', control: 'dns/upstream', detail: /unreachable|timeout/ });
  t.notMatch(down.refused[0].detail, /api\.example/, 'the detail names the registered domain only');
  t.comment(`port closed: SERVFAIL after ${Date.now() - t0} ms (${down.refused[0].detail})`);
  const tr = await tcpQuery(down.stub.tcpPort, 'api.example.com');
  t.equal(tr.msg.rcode, 'SERVFAIL', 'over TCP: connection refused → SERVFAIL');
  t.same(down.answers, []);

  const silent = await authority(t, () => ({ drop: true }));
  const s = await stubFor(t, silent, { upstreamTimeoutMs: 300 });
  const t1 = Date.now();
  const r2 = await udpQuery(s.stub.udpPort, 'slow.example.com');
  const took = Date.now() - t1;
  t.equal(r2.msg.rcode, 'SERVFAIL', 'a silent upstream: SERVFAIL');
  t.ok(took >= 250 && took < 2000, `after the timeout (${took} ms)`);
  t.match(s.refused[0], { rcode: 'SERVFAIL', control: 'dns/upstream', detail: /timeout/ });
  t.same(s.answers, []);
  t.equal(s.stub.stats().inflight, 0, 'nothing left in flight');
});

t.test('onAnswer rejecting: SERVFAIL, recorded', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.1')] }));
  const { stub, refused } = await stubFor(t, auth, {
    onAnswer: async () => {
      throw new Error('lease table full');
    },
  });
  const r = await udpQuery(stub.udpPort, 'api.example.com');
  t.equal(r.msg.rcode, 'SERVFAIL');
  t.equal(r.msg.answers?.length, 0, 'no records reach the client');
  t.match(refused[0], { rcode: 'SERVFAIL', control: 'dns/answer', detail: /lease table full/ });
});

t.test('onAnswer that never settles: SERVFAIL after answerTimeoutMs, the slot freed', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.1')] }));
  const { stub, refused } = await stubFor(t, auth, { answerTimeoutMs: 200, onAnswer: () => new Promise<void>(() => {}) });
  const t0 = Date.now();
  const r = await udpQuery(stub.udpPort, 'api.example.com');
  t.equal(r.msg.rcode, 'SERVFAIL');
  t.ok(Date.now() - t0 >= 180, 'after the timeout');
  t.match(refused[0], { control: 'dns/answer', detail: /did not settle within 200 ms/ });
  t.equal(stub.stats().inflight, 0, 'the inflight slot is free again');
});

t.test('an upstream answer without a question is a failure at once; the stub as its own upstream is refused', async (t) => {
  const probe = dgram.createSocket('udp4');
  await new Promise<void>((r) => probe.bind(0, '127.0.0.1', r));
  probe.on('message', (raw, rinfo) => {
    const q = dnsPacket.decode(raw);
    probe.send(dnsPacket.encode({ id: q.id, type: 'response', flags: 1 /* FORMERR */, questions: [] }), rinfo.port, rinfo.address);
  });
  t.teardown(() => probe.close());
  const { stub, refused } = await stubFor(t, { port: probe.address().port }, { upstreamTimeoutMs: 5000 });
  const t0 = Date.now();
  const r = await udpQuery(stub.udpPort, 'api.example.com');
  t.equal(r.msg.rcode, 'SERVFAIL');
  t.ok(Date.now() - t0 < 1000, 'without waiting for the timeout');
  t.match(refused[0], { control: 'dns/upstream', detail: /bad_reply: .*without a question/ });

  const taken = dgram.createSocket('udp4');
  await new Promise<void>((r) => taken.bind(0, '127.0.0.1', r));
  const port = taken.address().port;
  await new Promise<void>((r) => taken.close(() => r()));
  await t.rejects(
    startDnsStub({ listen: { host: '127.0.0.1', port }, upstream: { host: '127.0.0.1', port }, decide: allowAll, onAnswer: async () => {}, onRefused: () => {} }),
    /is the stub itself/,
  );
  await t.rejects(
    startDnsStub({ listen: { host: '127.0.0.1', port: 0 }, upstream: { host: 'dns.example', port: 53 }, decide: allowAll, onAnswer: async () => {}, onRefused: () => {} }),
    /not an IP address/,
  );
});

t.test('a truncated upstream answer is passed back truncated, never retried over TCP; a TCP upstream when configured', async (t) => {
  const many = (name: string) => Array.from({ length: 40 }, (_, i) => A(name, `192.0.2.${i + 1}`));
  const auth = await authority(t, (q) => ({ tcOverUdp: true, answers: many(q.name) }));
  const { stub, answers } = await stubFor(t, auth);
  const r = await udpQuery(stub.udpPort, 'big.example.com', 'A', { edns: 4096 });
  t.equal(r.msg.flag_tc, true, 'TC passed on');
  t.equal(r.msg.answers?.length, 0);
  const overTcp = await tcpQuery(stub.tcpPort, 'big.example.com');
  t.equal(overTcp.msg.flag_tc, true, 'a client asking over TCP gets the same truncated answer');
  t.same(auth.seen.map((s) => s.transport), ['udp', 'udp'], 'the upstream is asked over UDP only: no TCP fallback');
  t.match(answers[0].a, { truncated: true, addresses: [] }, 'onAnswer sees a truncated answer with no addresses');

  // the operator configured TCP: every question goes over TCP, whatever the client used
  const viaTcp = await stubFor(t, auth, { upstream: { host: '127.0.0.1', port: auth.port, transport: 'tcp' } });
  const n = auth.seen.length;
  const big = await udpQuery(viaTcp.stub.udpPort, 'big.example.com', 'A', { edns: 4096 });
  t.equal(big.msg.answers?.length, 40, 'all 40 records over UDP to an EDNS client');
  t.ok(big.raw.length > 512, `the answer is ${big.raw.length} bytes`);
  const small = await udpQuery(viaTcp.stub.udpPort, 'big.example.com', 'A', { id: 31 });
  t.equal(small.msg.flag_tc, true, 'over 512 bytes without EDNS: TC');
  t.equal(small.msg.id, 31);
  t.equal(small.msg.answers?.length, 0);
  t.ok(small.raw.length <= 512);
  const full = await tcpQuery(viaTcp.stub.tcpPort, 'big.example.com');
  t.equal(full.msg.answers?.length, 40, 'the client retry over TCP gets the whole answer');
  t.same(auth.seen.slice(n).map((s) => s.transport), ['tcp', 'tcp', 'tcp'], 'asked over TCP only');
  t.equal(viaTcp.stub.stats().truncated, 1);
});

t.test('the TCP path: forwarded over the upstream\'s transport, pipelined queries, idle and bounded', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.53')] }));
  const { stub, refused } = await stubFor(t, auth);
  const c = await tcpConn(stub.tcpPort);
  c.send(queryMsg('one.example.com', 'A', { id: 1 }));
  c.send(queryMsg('two.example.com', 'A', { id: 2 }));
  const got = [await c.next(), await c.next()];
  t.same(got.map((g) => g?.msg.id).sort(), [1, 2], 'two pipelined queries, two answers');
  t.same(auth.seen.map((s) => s.transport), ['udp', 'udp'], "forwarded over the upstream's transport (UDP), not the client's");
  t.equal(data(got.find((g) => g?.msg.id === 1)?.msg.answers?.[0]), '192.0.2.53');
  // a query split across writes
  const m = queryMsg('three.example.com', 'A', { id: 3 });
  const l = Buffer.alloc(2);
  l.writeUInt16BE(m.length);
  const whole = Buffer.concat([l, m]);
  c.sendRaw(whole.subarray(0, 1));
  await sleep(20);
  c.sendRaw(whole.subarray(1, 9));
  await sleep(20);
  c.sendRaw(whole.subarray(9));
  t.equal((await c.next())?.msg.id, 3, 'a frame split across segments');
  c.close();

  // an oversized frame closes the connection
  const big = await tcpConn(stub.tcpPort);
  big.sendRaw(Buffer.from([0xff, 0xff, 1, 2, 3]));
  await big.next(1000);
  t.ok(big.closed, 'a 65535-byte query frame: connection closed');
  t.match(refused.at(-1), { rcode: 'FORMERR', control: 'dns/malformed', dropped: true });

  // the connection limit
  const limited = await stubFor(t, auth, { maxTcpConnections: 2 });
  const c1 = await tcpConn(limited.stub.tcpPort);
  const c2 = await tcpConn(limited.stub.tcpPort);
  await sleep(50);
  const c3 = await tcpConn(limited.stub.tcpPort);
  await c3.next(500);
  t.ok(c3.closed, 'a third connection over maxTcpConnections=2 is closed');
  t.equal(limited.stub.stats().tcpRejected, 1);
  c1.send(queryMsg('ok.example.com', 'A', { id: 11 }));
  t.equal((await c1.next())?.msg.id, 11, 'the admitted ones still work');
  c1.close();
  c2.close();
});

t.test('AAAA ::1, and a stub listening on ::1', async (t) => {
  const auth = await authority(t, (q) => ({ answers: q.type === 'AAAA' ? [AAAA(q.name, '0:0:0:0:0:0:0:1', 45)] : [] }), { host: '::1' });
  const { stub, answers } = await stubFor(t, { host: '::1', port: auth.port }, { listen: { host: '::1', port: 0 } });
  const r = await udpQuery(stub.udpPort, 'v6.example.com', 'AAAA', { host: '::1' });
  t.equal(data(r.msg.answers?.[0]), '::1');
  t.same(answers[0].a.addresses, [{ family: 'ipv6', address: '::1', ttl: 45 }], 'onAnswer gets the canonical IPv6 address');
  t.equal(idless(r.raw), idless(auth.sent[0]));
});

t.test('malformed queries: FORMERR or dropped, never a crash', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.1')] }));
  const { stub, refused, decided } = await stubFor(t, auth);
  const port = stub.udpPort;

  t.equal(await udpRaw(port, Buffer.from([1, 2, 3, 4, 5]), 300), null, 'shorter than a header: dropped');
  t.match(refused.at(-1), { rcode: 'FORMERR', dropped: true });

  const cut = queryMsg('api.example.com', 'A', { id: 0x1234 }).subarray(0, 20);
  const r1 = await udpRaw(port, cut);
  t.ok(r1, 'a cut-off question: answered');
  const m1 = dnsPacket.decode(r1!) as Decoded;
  t.same([m1.id, m1.rcode, m1.flag_qr], [0x1234, 'FORMERR', true], 'FORMERR under the client id');

  const two = dnsPacket.encode({ id: 7, type: 'query', questions: [{ name: 'a.example.com', type: 'A' }, { name: 'b.example.com', type: 'A' }] });
  t.equal((dnsPacket.decode((await udpRaw(port, two))!) as Decoded).rcode, 'FORMERR', 'two questions: FORMERR');
  const none = dnsPacket.encode({ id: 8, type: 'query', questions: [] });
  t.equal((dnsPacket.decode((await udpRaw(port, none))!) as Decoded).rcode, 'FORMERR', 'no question: FORMERR');

  const resp = dnsPacket.encode({ id: 9, type: 'response', questions: [{ name: 'a.example.com', type: 'A' }] });
  t.equal(await udpRaw(port, resp, 300), null, 'a response sent as a query over UDP: dropped (no reply loops)');
  t.match(refused.at(-1), { rcode: 'FORMERR', dropped: true, detail: /QR/ });
  const tc = await tcpConn(stub.tcpPort);
  tc.send(resp);
  t.equal((await tc.next())?.msg.rcode, 'FORMERR', 'over TCP: FORMERR');
  tc.close();

  const update = dnsPacket.encode({ id: 10, type: 'query', flags: 5 << 11, questions: [{ name: 'a.example.com', type: 'SOA' }] });
  const mu = dnsPacket.decode((await udpRaw(port, update))!) as Decoded & { opcode?: string };
  t.same([mu.rcode, mu.opcode], ['NOTIMP', 'UPDATE'], 'opcode UPDATE: NOTIMP');
  t.match(refused.at(-1), { control: 'dns/opcode' });

  const chaos = dnsPacket.encode({ id: 11, type: 'query', questions: [{ name: 'version.bind', type: 'TXT', class: 'CH' }] });
  t.equal((dnsPacket.decode((await udpRaw(port, chaos))!) as Decoded).rcode, 'REFUSED', 'class CH: REFUSED');
  t.match(refused.at(-1), { control: 'dns/class' });
  const axfr = dnsPacket.encode({ id: 12, type: 'query', questions: [{ name: 'example.com', type: 'AXFR' }] });
  t.equal((dnsPacket.decode((await udpRaw(port, axfr))!) as Decoded).rcode, 'REFUSED', 'AXFR: REFUSED');
  const odd = dnsPacket.encode({ id: 13, type: 'query', questions: [{ name: 'has space.example.com', type: 'A' }] });
  t.equal((dnsPacket.decode((await udpRaw(port, odd))!) as Decoded).rcode, 'FORMERR', 'a name that is not a host name: FORMERR');
  const star = dnsPacket.encode({ id: 14, type: 'query', questions: [{ name: '*.example.com', type: 'A' }] });
  t.equal((dnsPacket.decode((await udpRaw(port, star))!) as Decoded).rcode, 'FORMERR', 'a literal "*" label: FORMERR (never taken for a policy wildcard)');
  t.same(decided, [], 'decide never saw any of these');
  t.equal(auth.count, 0, 'nothing forwarded');

  // random garbage, then a real query still works
  const before = refused.length;
  const s = dgram.createSocket('udp4');
  for (let i = 0; i < 2000; i++) {
    const g = randomBytes(1 + (i % 300));
    if (i % 3 === 0 && g.length > 3) g[2] &= 0x07; // mostly QUERY opcode, QR clear: deeper into the decoder
    s.send(g, port, '127.0.0.1');
  }
  await sleep(300);
  s.close();
  t.ok(refused.length - before > 0, `garbage recorded (${refused.length - before} records for 2000 datagrams)`);
  const ok = await udpQuery(port, 'after.example.com');
  t.equal(ok.msg.rcode, 'NOERROR', 'still serving after 2000 garbage datagrams');
  const ok2 = await tcpQuery(stub.tcpPort, 'after2.example.com');
  t.equal(ok2.msg.rcode, 'NOERROR', 'and over TCP');
});

t.test('spoofed upstream replies are dropped: wrong id first, then the real answer', async (t) => {
  const auth = await authority(t, (q) => ({
    answers: [A(q.name, '192.0.2.80')],
    before: (query) => [dnsPacket.encode({ id: ((query.id ?? 0) + 1) & 0xffff, type: 'response', questions: [q], answers: [A(q.name, '203.0.113.66')] })],
  }));
  const { stub, answers } = await stubFor(t, auth);
  const r = await udpQuery(stub.udpPort, 'api.example.com');
  t.equal(data(r.msg.answers?.[0]), '192.0.2.80', 'the real answer');
  t.same(answers[0].a.addresses.map((a) => a.address), ['192.0.2.80'], 'the spoof never reached onAnswer');
  t.equal(stub.stats().spoofDropped, 1);
});

t.test('a flood of 10,000 distinct names with a slow upstream stays bounded', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.1')] }), { delayMs: 250, log: false });
  const maxInflight = 64;
  let refusedCount = 0;
  let answeredCount = 0;
  const { stub } = await stubFor(t, auth, {
    maxInflight,
    onRefused: () => {
      refusedCount++;
    },
    onAnswer: async () => {
      answeredCount++;
    },
  });
  const gc = (): void => {
    v8.setFlagsFromString('--expose-gc');
    (vm.runInNewContext('gc') as () => void)();
  };
  gc();
  const m0 = process.memoryUsage();
  let peakRss = m0.rss;
  let peakHeap = m0.heapUsed;
  let peakInflight = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakInflight = Math.max(peakInflight, stub.stats().inflight);
  }, 5);

  const client = dgram.createSocket('udp4');
  await new Promise<void>((r) => client.bind(0, '127.0.0.1', r));
  client.setRecvBufferSize(4 * 1024 * 1024);
  const rc: Record<string, number> = {};
  let received = 0;
  client.on('message', (raw) => {
    received++;
    const k = (dnsPacket.decode(raw) as Decoded).rcode ?? '?';
    rc[k] = (rc[k] ?? 0) + 1;
  });
  // as fast as the stub answers, up to WINDOW unanswered at once (more only
  // fills the kernel's socket buffer, which drops the excess before the stub
  // sees it): far more than maxInflight, so most are refused for overload
  const N = 10_000;
  const WINDOW = 500;
  const t0 = Date.now();
  for (let i = 0; i < N; i++) {
    client.send(queryMsg(`${randomBytes(12).toString('hex')}.${i}.flood.example.com`, 'A', { id: i & 0xffff }), stub.udpPort, '127.0.0.1');
    if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    for (let spin = 0; i + 1 - received >= WINDOW && spin < 200; spin++) await sleep(2);
  }
  const sentMs = Date.now() - t0;
  // until everything in flight has been answered
  while (stub.stats().inflight > 0 || Date.now() - t0 < sentMs + 400) await sleep(50);
  await sleep(200);
  clearInterval(sampler);
  const st = stub.stats();
  gc();
  const m1 = process.memoryUsage();
  const mb = (n: number) => (n / 1048576).toFixed(1);
  const got = Object.values(rc).reduce((a, b) => a + b, 0);
  t.comment(`flood: ${N} queries sent in ${sentMs} ms; stub saw ${st.udpQueries}, forwarded ${st.forwarded}, overload SERVFAIL ${st.overload}; client got ${got} answers ${JSON.stringify(rc)}`);
  t.comment(`flood: inflight peak ${st.inflightPeak} (sampled ${peakInflight}), upstream concurrent peak ${auth.peak}, maxInflight ${maxInflight}`);
  t.comment(`flood: rss ${mb(m0.rss)} → peak ${mb(peakRss)} → ${mb(m1.rss)} MB; heap ${mb(m0.heapUsed)} → peak ${mb(peakHeap)} → ${mb(m1.heapUsed)} MB (after gc)`);
  t.ok(st.inflightPeak <= maxInflight, `inflight never exceeded maxInflight (${st.inflightPeak} ≤ ${maxInflight})`);
  t.ok(auth.peak <= maxInflight, `the upstream never had more than maxInflight questions at once (${auth.peak})`);
  t.ok(st.forwarded > 0 && st.overload > 0, 'some forwarded, the rest refused at once');
  t.equal(st.forwarded + st.overload, st.udpQueries, 'every query the stub received was forwarded or answered SERVFAIL');
  t.equal(answeredCount, st.forwarded, 'every forwarded query reached onAnswer');
  t.equal(refusedCount, st.overload, 'every overload recorded');
  t.ok(st.udpQueries >= N * 0.9, `most of the flood reached the stub (${st.udpQueries})`);
  t.ok(peakRss - m0.rss < 150 * 1048576, `RSS growth bounded (${mb(peakRss - m0.rss)} MB < 150 MB)`);
  t.ok(m1.heapUsed - m0.heapUsed < 20 * 1048576, `heap after the flood within 20 MB of before (${mb(m1.heapUsed - m0.heapUsed)} MB)`);
  client.close();

  auth.delayMs = 0;
  const ok = await udpQuery(stub.udpPort, 'after-the-flood.example.com');
  t.equal(ok.msg.rcode, 'NOERROR', 'after the flood a normal query works');
  t.equal(data(ok.msg.answers?.[0]), '192.0.2.1');
  t.equal(stub.stats().inflight, 0);
});

t.test('close() while a question is in flight', async (t) => {
  const auth = await authority(t, () => ({ drop: true }));
  const { stub } = await stubFor(t, auth, { upstreamTimeoutMs: 10_000 });
  void udpRaw(stub.udpPort, queryMsg('hang.example.com'), 300);
  while (auth.count === 0) await sleep(10);
  const t0 = Date.now();
  await stub.close();
  t.ok(Date.now() - t0 < 1000, 'close does not wait for the upstream');
  t.equal(stub.stats().inflight, 0);
  await stub.close();
  t.pass('close twice is fine');
});

t.test('one TCP connection pipelining 1000 queries: read no faster than it is answered', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.9')] }), { delayMs: 20, log: false });
  const { stub } = await stubFor(t, auth);
  const c = await tcpConn(stub.tcpPort);
  const N = 1000;
  const frames: Buffer[] = [];
  for (let i = 0; i < N; i++) {
    const m = queryMsg(`p${i}.example.com`, 'A', { id: i });
    const l = Buffer.alloc(2);
    l.writeUInt16BE(m.length);
    frames.push(l, m);
  }
  c.sendRaw(Buffer.concat(frames));
  const ids = new Set<number>();
  const rcodes = new Set<string>();
  while (ids.size < N) {
    const g = await c.next(5000);
    if (!g) break;
    ids.add(g.msg.id ?? -1);
    rcodes.add(g.msg.rcode ?? '?');
  }
  t.equal(ids.size, N, 'every query answered');
  t.same([...rcodes], ['NOERROR'], 'none refused for overload: the connection was read at its own pace');
  t.ok(auth.peak <= 32, `at most 32 of its queries upstream at once (${auth.peak})`);
  t.comment(`1000 pipelined: upstream concurrent peak ${auth.peak}, stub inflight peak ${stub.stats().inflightPeak}`);
  c.close();
});

t.test('a TCP client that half-closes after its query still gets the answer', async (t) => {
  const auth = await authority(t, (q) => ({ answers: [A(q.name, '192.0.2.8')] }), { delayMs: 50 });
  const { stub } = await stubFor(t, auth);
  const c = await tcpConn(stub.tcpPort);
  c.send(queryMsg('half.example.com', 'A', { id: 61 }));
  c.sock.end();
  const g = await c.next();
  t.equal(g?.msg.id, 61, 'answered after the half-close');
  await c.next(500);
  t.ok(c.closed, 'then the stub closes its side');
});
