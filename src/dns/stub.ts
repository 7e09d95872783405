// The DNS stub: the workload's resolver asks it (UDP and TCP on one address),
// it decides each question's name before anything leaves, forwards allowed
// questions to the host's upstream, hands the answer to onAnswer (which puts
// the leases in the kernel) and only then answers the client with the
// upstream's own bytes. Refused and failed queries are answered at once and
// reported to onRefused. A library: the supervisor supplies decide, onAnswer
// and onRefused (policy, leases, boundary events).
//
// What reaches the upstream is the stub's own query, never the client's:
// only opcode QUERY with one question of class IN and type A or AAAA is
// forwarded (anything else is answered NOTIMP or REFUSED and recorded), the
// name in lower case, flags RD only, no EDNS (src/dns/wire.ts upstreamQuery).
// So a name's letter case, the query type, the header flags and the EDNS
// size, DO bit and options carry nothing out: each decided (counted) name is
// at most two distinct questions on the wire. The client gets its own
// spelling of the name back in the question section.
//
// Bounds: at most maxInflight questions are forwarded or awaiting onAnswer at
// once (beyond, SERVFAIL at once, control dns/overload); at most
// maxTcpConnections TCP clients, each idle at most 10 s, with queries of at
// most 4096 bytes, at most 32 outstanding queries and 64 KiB of unsent
// answers per connection (beyond, it is not read until it catches up).
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import type * as dnsPacket from 'dns-packet';
import { isQueryableName, normalizeName, registeredDomain } from './names';
import { canonicalUpstream, forward, ForwardError, frame, type ForwardCounters } from './forward';
import type { Upstream } from './upstream';
import { parseIp, formatIp } from '../protocol/ip';
import { clientOpt, decodeHeader, decodeMessage, errorResponse, extractAnswer, FORWARDED_QTYPES, truncatedResponse, udpLimit, withId, withQuestionOf, type DnsAnswer, type ErrorRcode } from './wire';

export { hostUpstream, type Upstream } from './upstream';
export { registeredDomain, normalizeName } from './names';
export type { DnsAnswer, DnsAddress } from './wire';

export type NameVerdict = { allow: true; ruleRef: string } | { allow: false; control: string /* 'dns/no_rule' | 'dns/budget' */; reason: string };

export interface DnsRefusal {
  /** the question's name, normalized (null when the query did not decode) */
  name: string | null;
  qtype: string | null;
  rcode: ErrorRcode;
  /**
   * which control answered: decide's own control for a refused name
   * ('dns/no_rule', 'dns/budget'), else one of the stub's:
   * dns/malformed (FORMERR: undecodable, not one question, a response,
   * or a name that is not a host name: only letters, digits, "-" and
   * "_", so never a literal "*" label), dns/opcode (NOTIMP: not QUERY),
   * dns/class (REFUSED: not IN), dns/qtype (REFUSED: a type other than A
   * and AAAA), dns/overload
   * (SERVFAIL: maxInflight reached), dns/upstream (SERVFAIL: upstream down,
   * timed out or answered garbage), dns/answer (SERVFAIL: onAnswer rejected
   * or outlived answerTimeoutMs), dns/decide (SERVFAIL: decide threw),
   * dns/internal (a bug in the stub: that query is dropped, the stub serves on)
   */
  control: string;
  /** why; the stub's own details name the registered domain only, never the full name (decide's reason is passed as it is) */
  detail: string;
  /** the client, "udp ADDR:PORT" or "tcp ADDR:PORT" */
  peer: string;
  /** true when nothing was sent back (a UDP datagram too short to answer, or a response sent to the stub) */
  dropped?: boolean;
}

export interface DnsStubOptions {
  /** UDP and TCP on the same address; port 0 picks one free for both */
  listen: { host: string; port: number };
  /** an IP literal; every question is forwarded over its transport (default UDP), whatever the client used */
  upstream: Upstream;
  /** decides a question's name (normalized) BEFORE forwarding: a refused name is answered REFUSED and never forwarded. Called once per decodable query of opcode QUERY, class IN and type A or AAAA. */
  decide(name: string, qtype: string): NameVerdict;
  /** the upstream's answer for an allowed name, BEFORE the client gets it; it gets it only after this resolves; a rejection answers SERVFAIL. Called for every reply (NXDOMAIN and empty answers too: addresses is then []). */
  onAnswer(q: { name: string; qtype: string; peer: string }, a: DnsAnswer, verdict: { ruleRef: string }): Promise<void>;
  /** every refusal and failure, for the record */
  onRefused(r: DnsRefusal): void;
  /** overall (default 2000) */
  upstreamTimeoutMs?: number;
  /** how long onAnswer may take before the client is answered SERVFAIL (control dns/answer) and its inflight slot freed (default 10000) */
  answerTimeoutMs?: number;
  /** questions forwarded or awaiting onAnswer at once (default 256) */
  maxInflight?: number;
  /** default 64 */
  maxTcpConnections?: number;
  /** bound but not serving until serve() is called (queries before are dropped): time to fence the address first */
  held?: boolean;
}

export interface DnsStubStats {
  queries: number;
  udpQueries: number;
  tcpQueries: number;
  forwarded: number;
  answered: number;
  refused: number;
  servfail: number;
  formerr: number;
  dropped: number;
  overload: number;
  /** answers too large for the client's UDP limit, sent with TC */
  truncated: number;
  spoofDropped: number;
  inflight: number;
  /** the most inflight ever seen */
  inflightPeak: number;
  tcpConnections: number;
  tcpRejected: number;
}

export interface DnsStub {
  udpPort: number;
  tcpPort: number;
  /** start serving a stub started held */
  serve(): void;
  /** stop serving at once, run beforeUnbind (the address still bound), then release the address */
  close(beforeUnbind?: () => Promise<void>): Promise<void>;
  stats(): DnsStubStats;
}

const TCP_IDLE_MS = 10_000;
const TCP_MAX_QUERY = 4096;
const TCP_MAX_PENDING = 32;
const TCP_MAX_UNSENT = 64 * 1024;
const BIND_ATTEMPTS = 20;

interface Client {
  transport: 'udp' | 'tcp';
  peer: string;
  send(msg: Buffer): void;
}

export async function startDnsStub(o: DnsStubOptions): Promise<DnsStub> {
  const up = canonicalUpstream(o.upstream);
  const timeoutMs = o.upstreamTimeoutMs ?? 2000;
  const answerTimeoutMs = o.answerTimeoutMs ?? 10_000;
  const maxInflight = o.maxInflight ?? 256;
  const maxTcp = o.maxTcpConnections ?? 64;
  const st: DnsStubStats = {
    queries: 0, udpQueries: 0, tcpQueries: 0, forwarded: 0, answered: 0, refused: 0, servfail: 0, formerr: 0, dropped: 0,
    overload: 0, truncated: 0, spoofDropped: 0, inflight: 0, inflightPeak: 0, tcpConnections: 0, tcpRejected: 0,
  };
  const counters: ForwardCounters = { spoofDropped: 0 };
  const cancels = new Set<() => void>();
  let closing = false;
  let held = !!o.held;

  const record = (r: DnsRefusal): void => {
    if (r.dropped) st.dropped++;
    else if (r.rcode === 'REFUSED' || r.rcode === 'NOTIMP') st.refused++;
    else if (r.rcode === 'SERVFAIL') st.servfail++;
    else st.formerr++;
    try {
      o.onRefused(r);
    } catch {
      // the record is the caller's; its failure must not take the stub down
    }
  };

  async function handle(msg: Buffer, c: Client): Promise<void> {
    st.queries++;
    if (c.transport === 'udp') st.udpQueries++;
    else st.tcpQueries++;
    const h = decodeHeader(msg);
    if (!h) {
      record({ name: null, qtype: null, rcode: 'FORMERR', control: 'dns/malformed', detail: `${msg.length}-byte message: shorter than a DNS header`, peer: c.peer, dropped: true });
      return;
    }
    const fail = (rcode: ErrorRcode, control: string, detail: string, name: string | null, qtype: string | null, question?: dnsPacket.Question, edns?: boolean): void => {
      record({ name, qtype, rcode, control, detail, peer: c.peer });
      c.send(errorResponse(h, rcode, question, edns));
    };
    if (h.qr) {
      // a response sent to the stub: answering it over UDP could start a loop
      // with another responder, so it is only recorded; over TCP, FORMERR
      if (c.transport === 'udp') {
        record({ name: null, qtype: null, rcode: 'FORMERR', control: 'dns/malformed', detail: 'a response (QR set) sent as a query: dropped', peer: c.peer, dropped: true });
      } else fail('FORMERR', 'dns/malformed', 'a response (QR set) sent as a query', null, null);
      return;
    }
    if (h.opcode !== 'QUERY') return fail('NOTIMP', 'dns/opcode', `opcode ${h.opcode}: only QUERY is served`, null, null);
    const m = decodeMessage(msg);
    if (m instanceof Error) return fail('FORMERR', 'dns/malformed', `undecodable query: ${m.message}`, null, null);
    const qs = m.questions ?? [];
    const opt = clientOpt(m);
    if (qs.length !== 1) return fail('FORMERR', 'dns/malformed', `${qs.length} questions: exactly one is served`, null, null, undefined, !!opt);
    const q = qs[0];
    const name = normalizeName(q.name);
    const qtype = q.type;
    const where = registeredDomain(name) || '.';
    if (!isQueryableName(name)) return fail('FORMERR', 'dns/malformed', `${qtype} for a name that is not a host name (bytes outside letters, digits, "-" and "_")`, name, qtype, q, !!opt);
    if ((q.class ?? 'IN') !== 'IN') return fail('REFUSED', 'dns/class', `class ${q.class} for a name under ${where}: only IN is served`, name, qtype, q, !!opt);
    if (!FORWARDED_QTYPES.has(qtype)) return fail('REFUSED', 'dns/qtype', `${qtype} for a name under ${where} is never forwarded: only A and AAAA are`, name, qtype, q, !!opt);

    let verdict: NameVerdict;
    try {
      verdict = o.decide(name, qtype);
    } catch (e) {
      return fail('SERVFAIL', 'dns/decide', `deciding ${qtype} for a name under ${where} failed: ${(e as Error).message}`, name, qtype, q, !!opt);
    }
    if (!verdict.allow) return fail('REFUSED', verdict.control, verdict.reason, name, qtype, q, !!opt);
    if (st.inflight >= maxInflight) {
      st.overload++;
      return fail('SERVFAIL', 'dns/overload', `${maxInflight} queries already in flight: ${qtype} for a name under ${where} not forwarded`, name, qtype, q, !!opt);
    }

    st.inflight++;
    if (st.inflight > st.inflightPeak) st.inflightPeak = st.inflight;
    st.forwarded++;
    try {
      let fwd;
      try {
        fwd = await forward(name, qtype as 'A' | 'AAAA', up, { timeoutMs, cancels, counters });
      } catch (e) {
        if (closing) return;
        const why = e instanceof ForwardError ? `${e.kind}: ${e.message}` : String(e);
        return fail('SERVFAIL', 'dns/upstream', `${qtype} for a name under ${where}: upstream ${why}`, name, qtype, q, !!opt);
      }
      const answer = extractAnswer(name, fwd.reply);
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          o.onAnswer({ name, qtype, peer: c.peer }, answer, { ruleRef: verdict.ruleRef }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`onAnswer did not settle within ${answerTimeoutMs} ms`)), answerTimeoutMs);
          }),
        ]);
      } catch (e) {
        if (closing) return;
        return fail('SERVFAIL', 'dns/answer', `${qtype} for a name under ${where}: the answer was not admitted: ${e instanceof Error ? e.message : String(e)}`, name, qtype, q, !!opt);
      } finally {
        clearTimeout(timer);
      }
      if (closing) return;
      let out = withQuestionOf(withId(fwd.raw, h.id), msg);
      if (c.transport === 'udp' && out.length > udpLimit(opt)) {
        st.truncated++;
        out = truncatedResponse(fwd.reply, h.id, q, !!opt);
      }
      st.answered++;
      c.send(out);
    } finally {
      st.inflight--;
    }
  }

  const run = (msg: Buffer, c: Client): Promise<void> =>
    handle(msg, c).catch((e: unknown) => {
      // a bug here must cost one answer, not the stub
      record({ name: null, qtype: null, rcode: 'SERVFAIL', control: 'dns/internal', detail: `internal error: ${e instanceof Error ? e.message : String(e)}`, peer: c.peer, dropped: true });
    });

  // ---- UDP ----
  const udpType = net.isIPv6(o.listen.host) ? 'udp6' : 'udp4';
  const onDatagram = (udp: dgram.Socket) => (msg: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (closing || held) return;
    const peer = rinfo.family === 'IPv6' ? `udp [${rinfo.address}]:${rinfo.port}` : `udp ${rinfo.address}:${rinfo.port}`;
    void run(msg, {
      transport: 'udp',
      peer,
      send: (out) => {
        if (closing) return;
        udp.send(out, rinfo.port, rinfo.address, () => {
          // a lost answer is the client's to retry
        });
      },
    });
  };

  // ---- TCP ----
  const conns = new Set<net.Socket>();
  const onConnection = (sock: net.Socket): void => {
    if (closing || held || conns.size >= maxTcp) {
      st.tcpRejected++;
      sock.destroy();
      return;
    }
    conns.add(sock);
    st.tcpConnections = conns.size;
    const peer = sock.remoteFamily === 'IPv6' ? `tcp [${sock.remoteAddress}]:${sock.remotePort}` : `tcp ${sock.remoteAddress}:${sock.remotePort}`;
    sock.setNoDelay(true);
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy());
    let buf = Buffer.alloc(0);
    let pending = 0;
    // a client may half-close after its queries (RFC 7766 6.2.4): answer them, then end
    let ended = false;
    const client: Client = {
      transport: 'tcp',
      peer,
      send: (out) => {
        if (!sock.destroyed && !closing) sock.write(frame(out));
      },
    };
    const pump = (): void => {
      while (!sock.destroyed && pending < TCP_MAX_PENDING && buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (len > TCP_MAX_QUERY || len < 12) {
          record({ name: null, qtype: null, rcode: 'FORMERR', control: 'dns/malformed', detail: `${len}-byte TCP frame: queries are 12 to ${TCP_MAX_QUERY} bytes; connection closed`, peer, dropped: true });
          sock.destroy();
          return;
        }
        if (buf.length < 2 + len) break;
        const msg = Buffer.from(buf.subarray(2, 2 + len));
        buf = buf.subarray(2 + len);
        pending++;
        void run(msg, client).finally(() => {
          pending--;
          pump();
        });
      }
      if (ended && pending === 0) {
        sock.end();
        return;
      }
      // read on only while this connection keeps up: its queries answered and its answers taken
      const behind = pending >= TCP_MAX_PENDING || sock.writableLength > TCP_MAX_UNSENT || buf.length > TCP_MAX_QUERY + 2;
      if (behind) sock.pause();
      else if (sock.isPaused()) sock.resume();
    };
    sock.on('data', (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      pump();
    });
    sock.on('drain', pump);
    sock.on('end', () => {
      ended = true;
      pump();
    });
    sock.on('error', () => {
      // a reset client is just gone
    });
    sock.on('close', () => {
      conns.delete(sock);
      st.tcpConnections = conns.size;
    });
  };

  // ---- bind UDP and TCP to one port ----
  const bindOnce = async (port: number): Promise<{ udp: dgram.Socket; tcp: net.Server } | NodeJS.ErrnoException> => {
    const udp = dgram.createSocket(udpType);
    try {
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(port, o.listen.host, () => {
          udp.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      udp.close();
      return e as NodeJS.ErrnoException;
    }
    const tcp = net.createServer({ allowHalfOpen: true }, onConnection);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen({ port: udp.address().port, host: o.listen.host, exclusive: true }, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      udp.close();
      tcp.close();
      return e as NodeJS.ErrnoException;
    }
    return { udp, tcp };
  };
  // the stub as its own upstream would forward each question to itself
  const self = parseIp(o.listen.host);
  const isSelf = (port: number): boolean => self !== null && formatIp(self.bytes) === up.host && port === up.port;
  if (o.listen.port !== 0 && isSelf(o.listen.port)) throw new Error(`DNS upstream ${up.host}:${up.port} is the stub itself`);
  let bound: { udp: dgram.Socket; tcp: net.Server } | undefined;
  for (let i = 0; i < (o.listen.port === 0 ? BIND_ATTEMPTS : 1) && !bound; i++) {
    const r = await bindOnce(o.listen.port);
    if (!(r instanceof Error)) bound = r;
    else if (o.listen.port !== 0 || r.code !== 'EADDRINUSE' || i === BIND_ATTEMPTS - 1) throw r;
  }
  const { udp, tcp } = bound!;
  if (isSelf(udp.address().port)) {
    udp.close();
    tcp.close();
    throw new Error(`DNS upstream ${up.host}:${up.port} is the stub itself`);
  }
  udp.on('message', onDatagram(udp));
  udp.on('error', () => {
    // a send error on an unconnected socket is one client's; keep serving
  });
  tcp.on('error', () => {
    // an accept error is one client's; keep serving
  });
  const port = udp.address().port;

  return {
    udpPort: port,
    tcpPort: (tcp.address() as net.AddressInfo).port,
    stats: () => ({ ...st, spoofDropped: counters.spoofDropped }),
    serve: () => {
      held = false;
    },
    close: async (beforeUnbind) => {
      if (closing) return;
      closing = true;
      for (const c of [...cancels]) c();
      for (const s of conns) s.destroy();
      if (beforeUnbind) {
        try {
          await beforeUnbind();
        } finally {
          await Promise.all([
            new Promise<void>((resolve) => udp.close(() => resolve())),
            new Promise<void>((resolve) => tcp.close(() => resolve())),
          ]);
        }
        return;
      }
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}
