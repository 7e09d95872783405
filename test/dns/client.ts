// A DNS client that runs INSIDE a workload (`node dist/test/dns/client.js
// MODE …` under `gensee run`), written with dns-packet like the stub. It asks
// the first nameserver of /etc/resolv.conf (the operation's stub), or
// --server ADDR:PORT, and prints JSON lines on stdout:
//
//   ask NAME/TYPE[/tcp] …   one question after another; a line each:
//                           {name, type, transport, rcode, tc, answers: [{type, name, data, ttl}]}
//                           (rcode "TIMEOUT" when nothing came back in 3 s × GENSEE_TIME_SCALE)
//   flood PREFIX SUFFIX N WINDOW
//                           N distinct names PREFIX<i>SUFFIX over UDP, WINDOW in
//                           flight; one line: {sent, rcodes: {RCODE: n}, timeouts, ms}
//   connect PREFIX SUFFIX N PORT
//                           (bench/dns.ts) for each of N distinct names: ask A
//                           over UDP, then a TCP connect to the first answered
//                           address on PORT; one line: {us: [query sent → connect
//                           settled, per name], results: {connected|ECONNREFUSED|…: n}}
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as dnsPacket from 'dns-packet';
import { timeScaled } from '../helpers/time';

const TIMEOUT_MS = timeScaled(3000);

type Decoded = dnsPacket.DecodedPacket & { rcode?: string };
type Rec = { type: string; name: string; data?: unknown; ttl?: number };

interface Server {
  host: string;
  port: number;
}

function serverFrom(argv: string[]): { server: Server; rest: string[] } {
  const i = argv.indexOf('--server');
  if (i >= 0) {
    const v = argv[i + 1] ?? '';
    const m = /^\[?([0-9a-fA-F:.]+?)\]?:([0-9]+)$/.exec(v);
    if (!m) throw new Error(`bad --server ${v}`);
    return { server: { host: m[1], port: Number(m[2]) }, rest: [...argv.slice(0, i), ...argv.slice(i + 2)] };
  }
  const conf = fs.readFileSync('/etc/resolv.conf', 'utf8');
  const m = /^nameserver\s+(\S+)/m.exec(conf);
  if (!m) throw new Error('no nameserver in /etc/resolv.conf');
  return { server: { host: m[1], port: 53 }, rest: argv };
}

function query(id: number, name: string, type: string): Buffer {
  return dnsPacket.encode({ id, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as dnsPacket.RecordType, class: 'IN' }] });
}

interface Reply {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
  rcode: string;
  tc: boolean;
  answers: { type: string; name: string; data: unknown; ttl: number | undefined }[];
}

function summarize(name: string, type: string, transport: 'udp' | 'tcp', m: Decoded | null): Reply {
  if (!m) return { name, type, transport, rcode: 'TIMEOUT', tc: false, answers: [] };
  return {
    name,
    type,
    transport,
    rcode: m.rcode ?? '?',
    tc: ((m.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0,
    answers: ((m.answers ?? []) as Rec[]).map((a) => ({ type: a.type, name: a.name, data: a.data ?? null, ttl: a.ttl })),
  };
}

function askUdp(s: Server, name: string, type: string): Promise<Decoded | null> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket(net.isIPv6(s.host) ? 'udp6' : 'udp4');
    const id = Math.floor(Math.random() * 65536);
    const done = (m: Decoded | null): void => {
      clearTimeout(timer);
      sock.close();
      resolve(m);
    };
    const timer = setTimeout(() => done(null), TIMEOUT_MS);
    sock.on('error', () => done(null));
    sock.on('message', (b) => {
      try {
        const m = dnsPacket.decode(b) as Decoded;
        if (m.id === id) done(m);
      } catch {
        /* not a DNS message: keep waiting */
      }
    });
    sock.send(query(id, name, type), s.port, s.host);
  });
}

function askTcp(s: Server, name: string, type: string): Promise<Decoded | null> {
  return new Promise((resolve) => {
    const id = Math.floor(Math.random() * 65536);
    const sock = net.connect({ host: s.host, port: s.port });
    let buf = Buffer.alloc(0);
    const done = (m: Decoded | null): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(m);
    };
    const timer = setTimeout(() => done(null), TIMEOUT_MS);
    sock.on('error', () => done(null));
    sock.on('connect', () => {
      const q = query(id, name, type);
      const l = Buffer.alloc(2);
      l.writeUInt16BE(q.length);
      sock.write(Buffer.concat([l, q]));
    });
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        try {
          done(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))) as Decoded);
        } catch {
          done(null);
        }
      }
    });
  });
}

async function ask(s: Server, specs: string[]): Promise<void> {
  for (const spec of specs) {
    const [name, type = 'A', transport = 'udp'] = spec.split('/');
    const m = transport === 'tcp' ? await askTcp(s, name, type) : await askUdp(s, name, type);
    process.stdout.write(JSON.stringify(summarize(name, type, transport === 'tcp' ? 'tcp' : 'udp', m)) + '\n');
  }
}

async function flood(s: Server, prefix: string, suffix: string, n: number, window: number): Promise<void> {
  const sock = dgram.createSocket(net.isIPv6(s.host) ? 'udp6' : 'udp4');
  await new Promise<void>((r) => sock.bind(0, r));
  const pending = new Map<number, NodeJS.Timeout>();
  const rcodes: Record<string, number> = {};
  let timeouts = 0;
  let next = 0;
  const t0 = Date.now();
  await new Promise<void>((resolve) => {
    const settle = (id: number): void => {
      clearTimeout(pending.get(id));
      pending.delete(id);
      pump();
    };
    const pump = (): void => {
      while (pending.size < window && next < n) {
        const id = next++;
        pending.set(
          id,
          setTimeout(() => {
            timeouts++;
            settle(id);
          }, TIMEOUT_MS),
        );
        sock.send(query(id, `${prefix}${id}${suffix}`, 'A'), s.port, s.host);
      }
      if (pending.size === 0 && next >= n) resolve();
    };
    sock.on('message', (b) => {
      let m: Decoded;
      try {
        m = dnsPacket.decode(b) as Decoded;
      } catch {
        return;
      }
      const id = m.id ?? -1;
      if (!pending.has(id)) return;
      const rc = m.rcode ?? '?';
      rcodes[rc] = (rcodes[rc] ?? 0) + 1;
      settle(id);
    });
    pump();
  });
  sock.close();
  process.stdout.write(JSON.stringify({ sent: n, rcodes, timeouts, ms: Date.now() - t0 }) + '\n');
}

function connectOnce(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const c = net.connect({ host, port });
    c.on('connect', () => {
      c.destroy();
      resolve('connected');
    });
    c.on('error', (e: NodeJS.ErrnoException) => {
      c.destroy();
      resolve(e.code ?? 'error');
    });
  });
}

async function connectEach(s: Server, prefix: string, suffix: string, n: number, port: number): Promise<void> {
  const us: number[] = [];
  const results: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const m = await askUdp(s, `${prefix}${i}${suffix}`, 'A');
    const a = ((m?.answers ?? []) as Rec[]).find((x) => x.type === 'A');
    const r = a && typeof a.data === 'string' ? await connectOnce(a.data, port) : `dns_${m?.rcode ?? 'TIMEOUT'}`;
    us.push(Number(process.hrtime.bigint() - t0) / 1000);
    results[r] = (results[r] ?? 0) + 1;
  }
  process.stdout.write(JSON.stringify({ us, results }) + '\n');
}

async function main(): Promise<void> {
  const { server, rest } = serverFrom(process.argv.slice(2));
  const [mode, ...args] = rest;
  if (mode === 'ask') return ask(server, args);
  if (mode === 'flood') return flood(server, args[0], args[1], Number(args[2]), Number(args[3]));
  if (mode === 'connect') return connectEach(server, args[0], args[1], Number(args[2]), Number(args[3]));
  throw new Error(`usage: client.js [--server ADDR:PORT] ask NAME/TYPE[/tcp]… | flood PREFIX SUFFIX N WINDOW | connect PREFIX SUFFIX N PORT`);
}

main().catch((e: unknown) => {
  process.stderr.write(`client: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
