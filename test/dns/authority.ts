// A small authoritative DNS server for tests, on loopback, UDP and TCP on one
// port, written with dns-packet (no hand-written wire code). Each question is
// answered by `zone` (records or a reply shape) and logged; `delayMs` holds
// every answer, and `outstanding`/`peak` count the questions received but not
// yet answered (the flood test's view of the stub's concurrency).
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import * as dnsPacket from 'dns-packet';

export interface Reply {
  rcode?: number;
  answers?: dnsPacket.Answer[];
  /** set TC (and send no records) when asked over UDP */
  tcOverUdp?: boolean;
  /** send nothing */
  drop?: boolean;
  /** datagrams to send before the real answer, from the same socket (a wrong id, say) */
  before?: (query: dnsPacket.DecodedPacket) => Buffer[];
}

export interface Seen {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
  id: number;
  port: number;
  query: dnsPacket.DecodedPacket;
}

export interface Authority {
  port: number;
  seen: Seen[];
  /** questions received (also when not logged) */
  count: number;
  /** the raw answers sent, in order (what a client of the stub should get byte for byte, but its id) */
  sent: Buffer[];
  outstanding: number;
  peak: number;
  delayMs: number;
  close(): Promise<void>;
}

export type Zone = (q: dnsPacket.Question, transport: 'udp' | 'tcp') => Reply;

const RCODE_MASK = 0xf;

export async function startAuthority(zone: Zone, o: { host?: string; delayMs?: number; log?: boolean } = {}): Promise<Authority> {
  const host = o.host ?? '127.0.0.1';
  // UDP and TCP on one port: bind UDP anywhere, then TCP on its port, again if that is taken
  let udp!: dgram.Socket;
  let tcp!: net.Server;
  for (let attempt = 0; ; attempt++) {
    udp = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    await new Promise<void>((resolve) => udp.bind(0, host, resolve));
    tcp = net.createServer((sock) => onConnection(sock));
    const err = await new Promise<Error | null>((resolve) => {
      tcp.once('error', resolve);
      tcp.listen(udp.address().port, host, () => resolve(null));
    });
    if (!err) break;
    udp.close();
    if (attempt >= 20) throw err;
  }
  const port = udp.address().port;
  const conns = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const a: Authority = {
    port,
    seen: [],
    count: 0,
    sent: [],
    outstanding: 0,
    peak: 0,
    delayMs: o.delayMs ?? 0,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const c of conns) c.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
  const log = o.log ?? true;

  const answer = (raw: Buffer, transport: 'udp' | 'tcp', srcPort: number, send: (b: Buffer) => void): void => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(raw);
    } catch {
      return;
    }
    const q = (query.questions ?? [])[0];
    if (!q) return;
    a.count++;
    if (log) a.seen.push({ name: q.name, type: q.type, transport, id: query.id ?? 0, port: srcPort, query });
    const r = zone(q, transport);
    if (r.drop) return;
    a.outstanding++;
    a.peak = Math.max(a.peak, a.outstanding);
    const go = (): void => {
      a.outstanding--;
      for (const b of r.before?.(query) ?? []) send(b);
      const tc = transport === 'udp' && !!r.tcOverUdp;
      const out = dnsPacket.encode({
        id: query.id,
        type: 'response',
        flags: dnsPacket.AUTHORITATIVE_ANSWER | (tc ? dnsPacket.TRUNCATED_RESPONSE : 0) | ((r.rcode ?? 0) & RCODE_MASK),
        questions: [q],
        answers: tc ? [] : (r.answers ?? []),
      });
      if (log) a.sent.push(out);
      send(out);
    };
    if (a.delayMs > 0) {
      const t = setTimeout(() => {
        timers.delete(t);
        go();
      }, a.delayMs);
      timers.add(t);
    } else go();
  };

  udp.on('message', (raw, rinfo) => answer(raw, 'udp', rinfo.port, (b) => udp.send(b, rinfo.port, rinfo.address)));
  function onConnection(sock: net.Socket): void {
    conns.add(sock);
    sock.on('close', () => conns.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const len = buf.readUInt16BE(0);
        const msg = buf.subarray(2, 2 + len);
        buf = buf.subarray(2 + len);
        answer(msg, 'tcp', sock.remotePort ?? 0, (b) => {
          if (sock.destroyed) return;
          const l = Buffer.alloc(2);
          l.writeUInt16BE(b.length);
          sock.write(Buffer.concat([l, b]));
        });
      }
    });
  }
  return a;
}
