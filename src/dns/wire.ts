// Every DNS message the stub reads or writes goes through dns-packet. The
// only bytes touched outside it are the 16-bit transaction id at offset 0
// (RFC 1035 4.1.1), rewritten so an upstream's answer reaches the client
// byte for byte under the client's own id; the letters of the question's
// name (the stub asks the upstream in lower case, and gives the client its
// own spelling back: withQuestionOf); and the 2-byte TCP length prefix
// (RFC 1035 4.2.2), which is framing rather than DNS.
import { randomInt } from 'node:crypto';
import * as dnsPacket from 'dns-packet';
import { normalizeName } from './names';
import { parseIp, formatIp } from '../protocol/ip';

/** dns-packet's decoded message, with the two header fields its types leave out. */
export type Decoded = dnsPacket.DecodedPacket & { opcode?: string; rcode?: string };

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NOTIMP: 4, REFUSED: 5 } as const;
export type ErrorRcode = 'FORMERR' | 'SERVFAIL' | 'NOTIMP' | 'REFUSED';

/** The opcode bits of the header's flags word (dns-packet keeps them there). */
const OPCODE_BITS = 0xf << 11;

/** The classic UDP limit without EDNS, and the most the stub sends over UDP whatever a client offers. */
export const UDP_PLAIN = 512;
export const UDP_MAX = 4096;

/**
 * The only query types the stub forwards: the ones a host rule can turn into
 * leases. Any other type would be a second question per name the workload
 * could choose (bits past the budget), so it is REFUSED, never forwarded.
 */
export const FORWARDED_QTYPES: ReadonlySet<string> = new Set(['A', 'AAAA']);

export interface Header {
  id: number;
  qr: boolean;
  opcode: string;
  /** the 15 flag bits below QR, as dns-packet encodes them back */
  flags: number;
}

/**
 * The header of a message whose body may not decode (so a FORMERR can still
 * carry the client's id): dns-packet decodes the first 4 bytes with the four
 * section counts zeroed. null below 12 bytes: there is no header to answer.
 */
export function decodeHeader(msg: Buffer): Header | null {
  if (msg.length < 12) return null;
  const h = dnsPacket.decode(Buffer.concat([msg.subarray(0, 4), Buffer.alloc(8)])) as Decoded;
  return { id: h.id ?? 0, qr: h.flag_qr, opcode: h.opcode ?? 'QUERY', flags: h.flags ?? 0 };
}

/** The whole message, or the error dns-packet threw. */
export function decodeMessage(msg: Buffer): Decoded | Error {
  try {
    return dnsPacket.decode(msg) as Decoded;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** The client's EDNS OPT record, if it sent one. */
export function clientOpt(m: Decoded): dnsPacket.OptAnswer | undefined {
  return (m.additionals ?? []).find((a): a is dnsPacket.OptAnswer => a.type === 'OPT');
}

/** How large a UDP answer this client takes: its EDNS size within [512, 4096], else 512. */
export function udpLimit(opt: dnsPacket.OptAnswer | undefined): number {
  if (!opt) return UDP_PLAIN;
  return Math.min(UDP_MAX, Math.max(UDP_PLAIN, opt.udpPayloadSize || UDP_PLAIN));
}

function freshOpt(size: number, dnssecOk: boolean): dnsPacket.OptAnswer {
  return { type: 'OPT', name: '.', udpPayloadSize: size, extendedRcode: 0, ednsVersion: 0, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0, flag_do: dnssecOk, options: [] };
}

/** An error answer of the stub's own (FORMERR, SERVFAIL, REFUSED) under the client's id and opcode. */
export function errorResponse(h: Header, rcode: ErrorRcode, question?: dnsPacket.Question, edns?: boolean): Buffer {
  const flags = (h.flags & (OPCODE_BITS | dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED)) | dnsPacket.RECURSION_AVAILABLE | RCODE[rcode];
  return dnsPacket.encode({
    id: h.id,
    type: 'response',
    flags,
    questions: question ? [question] : [],
    additionals: edns ? [freshOpt(UDP_MAX, false)] : [],
  });
}

/**
 * The query the stub sends upstream: built by the stub alone from the
 * decided question, so no bit of it is the workload's to choose beyond the
 * (normalized, lower-case) name and the type (A or AAAA). A fresh random id,
 * flags RD only, one question of class IN, no EDNS (so an answer over UDP is
 * at most 512 bytes; a larger one comes back truncated and is passed on as
 * it is). Nothing of the client's message — the letter case of its name, its
 * flags (CD, AD, Z), its EDNS size, DO bit and options, its other sections —
 * reaches the upstream: the count of distinct questions on the wire is the
 * count of decided names × at most two types.
 */
export function upstreamQuery(name: string, type: 'A' | 'AAAA'): { id: number; msg: Buffer } {
  const id = randomInt(0, 0x10000);
  const msg = dnsPacket.encode({ id, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name: normalizeName(name), type, class: 'IN' }] });
  return { id, msg };
}

/** The wire length of the uncompressed name at off (its labels and the root byte), or -1. */
function plainNameLength(msg: Buffer, off: number): number {
  let i = off;
  while (i < msg.length) {
    const len = msg[i];
    if (len === 0) return i + 1 - off;
    if (len > 63) return -1; // a compression pointer or a reserved label type
    i += 1 + len;
  }
  return -1;
}

/** ASCII lower case of a name's wire bytes (length bytes are below 64: never letters). */
function lowerBytes(b: Buffer): Buffer {
  const out = Buffer.from(b);
  for (let i = 0; i < out.length; i++) if (out[i] >= 0x41 && out[i] <= 0x5a) out[i] |= 0x20;
  return out;
}

/**
 * An upstream answer (asked in lower case) with the question name spelled as
 * the client spelled it (a resolver using 0x20 case randomization checks
 * it). Only the letters of the question's name at offset 12 change, and only
 * when both names are uncompressed there and equal but for case; else the
 * answer is returned unchanged.
 */
export function withQuestionOf(answer: Buffer, query: Buffer): Buffer {
  const la = plainNameLength(answer, 12);
  const lq = plainNameLength(query, 12);
  if (la < 0 || la !== lq) return answer;
  const qn = query.subarray(12, 12 + lq);
  if (!lowerBytes(answer.subarray(12, 12 + la)).equals(lowerBytes(qn))) return answer;
  const out = Buffer.from(answer);
  qn.copy(out, 12);
  return out;
}

/** Whether an upstream reply answers exactly the question that was sent (name compared case-insensitively). */
export function answersQuestion(reply: Decoded, q: dnsPacket.Question): boolean {
  const rq = reply.questions ?? [];
  return rq.length === 1 && normalizeName(rq[0].name) === normalizeName(q.name) && rq[0].type === q.type && (rq[0].class ?? 'IN') === 'IN';
}

/** The upstream's answer as the client is to get it: the same bytes under the client's id. */
export function withId(raw: Buffer, id: number): Buffer {
  const out = Buffer.from(raw);
  out.writeUInt16BE(id, 0);
  return out;
}

/**
 * The UDP form of an answer too large for the client: the upstream's header
 * with TC set, the client's question, no records (RFC 2181 9; the client
 * retries over TCP), an OPT if the client used EDNS.
 */
export function truncatedResponse(reply: Decoded, id: number, question: dnsPacket.Question, edns: boolean): Buffer {
  return dnsPacket.encode({
    id,
    type: 'response',
    flags: (reply.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
    questions: [question],
    additionals: edns ? [freshOpt(UDP_MAX, false)] : [],
  });
}

export interface DnsAddress {
  family: 'ipv4' | 'ipv6';
  address: string;
  ttl: number;
}

export interface DnsAnswer {
  /** the question's name, normalized */
  name: string;
  /** the upstream's rcode (NOERROR, NXDOMAIN, SERVFAIL, …) */
  rcode: string;
  /** the upstream answered with TC set (passed on truncated: no TCP retry) */
  truncated: boolean;
  /** the CNAME targets followed from the name, in order (normalized) */
  chain: string[];
  /** the A/AAAA records of the chain's last name, in the answer section */
  addresses: DnsAddress[];
}

/** Most CNAME hops followed within one answer section. */
export const MAX_CHAIN = 16;

/**
 * What a reply says about a name: the CNAME chain from it and the A/AAAA
 * addresses of the chain's end, taken from the answer section alone. A chain
 * that leaves the section (a target with no records there) ends where it
 * leaves; a loop or more than MAX_CHAIN hops ends the chain, reporting what
 * was followed. Records of other types (MX, TXT, …) give no addresses.
 */
export function extractAnswer(name: string, reply: Decoded): DnsAnswer {
  const answers = reply.answers ?? [];
  const chain: string[] = [];
  let cur = normalizeName(name);
  const seen = new Set([cur]);
  for (let hop = 0; hop < MAX_CHAIN; hop++) {
    const c = answers.find((a): a is dnsPacket.StringAnswer => a.type === 'CNAME' && normalizeName(a.name) === cur);
    if (!c || typeof c.data !== 'string') break;
    const next = normalizeName(c.data);
    if (seen.has(next)) break;
    seen.add(next);
    chain.push(next);
    cur = next;
  }
  const addresses: DnsAddress[] = [];
  for (const a of answers) {
    if (a.type !== 'A' && a.type !== 'AAAA') continue;
    if (normalizeName(a.name) !== cur || typeof a.data !== 'string') continue;
    const family = a.type === 'A' ? 'ipv4' : 'ipv6';
    const ip = parseIp(a.data, family);
    if (!ip) continue;
    addresses.push({ family, address: formatIp(ip.bytes), ttl: a.ttl ?? 0 });
  }
  return { name: normalizeName(name), rcode: reply.rcode ?? 'NOERROR', truncated: !!reply.flag_tc, chain, addresses };
}
