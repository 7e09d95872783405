// One forwarded question, over the one transport the operator configured for
// the upstream: UDP from a fresh socket (a random source port per query) with
// a random id, or TCP. Never the other: a truncated UDP answer is passed back
// truncated, not retried over TCP, because the upstream's address may hold
// only one of the two, and whatever listens on the other port (a workload's
// own listener on a loopback upstream's TCP port, say) must never be asked —
// its answer would become leases. A reply counts only if it comes from the
// upstream's address and port, carries the id sent and answers the question
// sent; anything else is dropped as a spoof and the wait goes on.
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import type * as dnsPacket from 'dns-packet';
import { parseIp, formatIp } from '../protocol/ip';
import type { Upstream } from './upstream';
import { answersQuestion, decodeHeader, decodeMessage, upstreamQuery, type Decoded } from './wire';

export type ForwardFailure = 'timeout' | 'unreachable' | 'bad_reply' | 'closed';

export class ForwardError extends Error {
  constructor(readonly kind: ForwardFailure, message: string) {
    super(message);
    this.name = 'ForwardError';
  }
}

export interface Forwarded {
  raw: Buffer;
  reply: Decoded;
  /** the answer came over TCP (a TCP upstream) */
  tcp: boolean;
}

export interface ForwardCounters {
  /** datagrams or frames dropped: wrong source, id or question */
  spoofDropped: number;
}

/** The canonical text of the upstream's address (an IP literal) and its transport (udp unless tcp), or a clear error. */
export function canonicalUpstream(u: Upstream): Required<Upstream> {
  const ip = parseIp(u.host);
  if (!ip) throw new Error(`DNS upstream "${u.host}" is not an IP address`);
  if (!Number.isInteger(u.port) || u.port < 1 || u.port > 65535) throw new Error(`DNS upstream port ${u.port} out of range 1-65535`);
  if (u.transport !== undefined && u.transport !== 'udp' && u.transport !== 'tcp') throw new Error(`DNS upstream transport ${String(u.transport)}: udp or tcp`);
  return { host: formatIp(ip.bytes), port: u.port, transport: u.transport ?? 'udp' };
}

/** The TCP frame of a message: its 2-byte length, then the message. */
export function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(msg.length);
  return Buffer.concat([len, msg]);
}

/**
 * Ask `up` (canonical, see canonicalUpstream) the question (name, type) over
 * its transport, within timeoutMs. The query is the stub's own
 * (upstreamQuery). Rejects with a ForwardError. While pending, its cancel
 * function is in `cancels`.
 */
export function forward(
  name: string,
  type: 'A' | 'AAAA',
  up: Required<Upstream>,
  o: { timeoutMs: number; cancels: Set<() => void>; counters: ForwardCounters },
): Promise<Forwarded> {
  const q: dnsPacket.Question = { name, type, class: 'IN' };
  return new Promise<Forwarded>((resolve, reject) => {
    let done = false;
    let cleanup: () => void = () => {};
    const finish = (err: ForwardError | null, r?: Forwarded): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.cancels.delete(cancel);
      cleanup();
      if (err) reject(err);
      else resolve(r as Forwarded);
    };
    const timer = setTimeout(() => finish(new ForwardError('timeout', `no answer from ${up.host}:${up.port} within ${o.timeoutMs} ms`)), o.timeoutMs);
    // the stub's close() calls every pending forward's cancel
    const cancel = (): void => finish(new ForwardError('closed', 'the DNS stub is closing'));
    o.cancels.add(cancel);

    // a reply that passed the id and source checks: decode it and check its question
    const accept = (raw: Buffer, sentId: number, tcp: boolean): 'spoof' | 'done' => {
      const h = decodeHeader(raw);
      if (!h || h.id !== sentId || !h.qr) return 'spoof';
      const reply = decodeMessage(raw);
      if (reply instanceof Error) {
        finish(new ForwardError('bad_reply', `undecodable answer from ${up.host}:${up.port}: ${reply.message}`));
        return 'done';
      }
      // a server that cannot parse a query may answer without its question (FORMERR, NOTIMP): a failure, not a spoof
      if ((reply.questions ?? []).length === 0) {
        finish(new ForwardError('bad_reply', `answer from ${up.host}:${up.port} without a question (rcode ${reply.rcode ?? '?'})`));
        return 'done';
      }
      if (!answersQuestion(reply, q)) return 'spoof';
      // TC over UDP: passed back truncated (see the header: no TCP fallback)
      finish(null, { raw, reply, tcp });
      return 'done';
    };

    const { id, msg } = upstreamQuery(name, type);
    const viaTcp = (): void => {
      const sock = net.connect({ host: up.host, port: up.port });
      cleanup = () => sock.destroy();
      let buf = Buffer.alloc(0);
      sock.on('connect', () => sock.write(frame(msg)));
      sock.on('data', (d: Buffer) => {
        buf = buf.length ? Buffer.concat([buf, d]) : d;
        while (!done && buf.length >= 2) {
          const len = buf.readUInt16BE(0);
          if (buf.length < 2 + len) break;
          const raw = Buffer.from(buf.subarray(2, 2 + len));
          buf = buf.subarray(2 + len);
          if (accept(raw, id, true) === 'spoof') o.counters.spoofDropped++;
        }
      });
      sock.on('error', (e) => finish(new ForwardError('unreachable', `TCP to ${up.host}:${up.port}: ${e.message}`)));
      sock.on('close', () => finish(new ForwardError('unreachable', `TCP to ${up.host}:${up.port} closed before an answer`)));
    };

    if (up.transport === 'tcp') return viaTcp();

    const sock = dgram.createSocket(net.isIPv6(up.host) ? 'udp6' : 'udp4');
    let closed = false;
    const closeUdp = (): void => {
      if (closed) return;
      closed = true;
      try {
        sock.close();
      } catch {
        // already closed
      }
    };
    cleanup = closeUdp;
    sock.on('error', (e) => finish(new ForwardError('unreachable', `UDP to ${up.host}:${up.port}: ${e.message}`)));
    sock.on('message', (raw: Buffer, rinfo: dgram.RemoteInfo) => {
      if (done) return;
      const from = parseIp(rinfo.address);
      if (!from || formatIp(from.bytes) !== up.host || rinfo.port !== up.port) {
        o.counters.spoofDropped++;
        return;
      }
      if (accept(raw, id, false) === 'spoof') o.counters.spoofDropped++;
    });
    // connected: the kernel too drops datagrams from any other address, and an
    // ICMP unreachable surfaces as an error instead of a timeout
    sock.connect(up.port, up.host, () => {
      if (done) return;
      sock.send(msg, (e) => {
        if (e) finish(new ForwardError('unreachable', `UDP to ${up.host}:${up.port}: ${e.message}`));
      });
    });
  });
}
