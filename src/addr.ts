// Destination tuples: parsing operator input ("tcp 127.0.0.1:8080",
// "[::1]:8080") and converting addresses to/from the 16-byte kernel form.
import { isIP } from 'node:net';
import { GenseeError } from './errors';

export type Family = 'ipv4' | 'ipv6';
export type Protocol = 'tcp' | 'udp';

/** An exact destination: what a lease allows and a fault names. */
export interface Tuple {
  family: Family;
  protocol: Protocol;
  /** canonical text form (dotted IPv4, RFC 5952 IPv6) */
  address: string;
  port: number;
}

export const IPPROTO: Record<Protocol, number> = { tcp: 6, udp: 17 };

export function parseProtocol(s: string): Protocol {
  const p = s.toLowerCase();
  if (p !== 'tcp' && p !== 'udp') throw new GenseeError('E_BAD_PROTOCOL', `bad protocol "${s}": expected tcp or udp`);
  return p;
}

export function parsePort(s: string | number): number {
  const str = String(s);
  if (!/^[0-9]{1,5}$/.test(str)) throw new GenseeError('E_BAD_PORT', `bad port "${str}": expected 1-65535`);
  const n = Number(str);
  if (n < 1 || n > 65535) throw new GenseeError('E_BAD_PORT', `port ${n} out of range 1-65535`);
  return n;
}

function v4ToBytes(a: string): Buffer {
  return Buffer.from(a.split('.').map((x) => Number(x)));
}

function v6ToBytes(a: string): Buffer {
  let s = a;
  const out = Buffer.alloc(16);
  // embedded dotted quad (::ffff:1.2.3.4)
  const m = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  let tail: Buffer | null = null;
  if (m) {
    tail = v4ToBytes(m[2]);
    s = m[1] + '0:0';
  }
  const [head, rest] = s.includes('::') ? s.split('::') : [s, null];
  const hs = head ? head.split(':') : [];
  const rs = rest !== null && rest !== undefined && rest !== '' ? rest.split(':') : [];
  const groups = rest === null ? hs : [...hs, ...Array(8 - hs.length - rs.length).fill('0'), ...rs];
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  if (tail) tail.copy(out, 12);
  return out;
}

/** RFC 5952 text form of a 16-byte IPv6 address. */
export function v6ToString(b: Buffer): string {
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push(b.readUInt16BE(i * 2));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/**
 * Parse an address. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the
 * IPv4 destination: the eBPF hook treats it so, and a lease must match.
 */
export function parseAddress(s: string): { family: Family; address: string; bytes: Buffer } {
  const kind = isIP(s);
  if (kind === 4) {
    const bytes = Buffer.alloc(16);
    v4ToBytes(s).copy(bytes);
    return { family: 'ipv4', address: s.split('.').map(Number).join('.'), bytes };
  }
  if (kind === 6 && !s.includes('%')) {
    const b = v6ToBytes(s);
    if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) {
      const bytes = Buffer.alloc(16);
      b.copy(bytes, 0, 12, 16);
      return { family: 'ipv4', address: `${b[12]}.${b[13]}.${b[14]}.${b[15]}`, bytes };
    }
    return { family: 'ipv6', address: v6ToString(b), bytes: b };
  }
  throw new GenseeError('E_BAD_ADDRESS', `bad address "${s}": expected an IPv4 or IPv6 literal`);
}

/** Text form of the kernel's 16-byte address field. */
export function addressFromBytes(family: Family, b: Buffer): string {
  if (family === 'ipv4') return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  return v6ToString(b);
}

/** "127.0.0.1:8080" or "[::1]:8080" (plus protocol) → Tuple. */
export function parseDestination(protocol: string, dest: string): Tuple {
  const proto = parseProtocol(protocol);
  let host: string;
  let port: string;
  const m6 = /^\[([^\]]+)\]:([^:]+)$/.exec(dest);
  if (m6) {
    host = m6[1];
    port = m6[2];
  } else {
    const i = dest.lastIndexOf(':');
    if (i <= 0 || dest.indexOf(':') !== i) {
      throw new GenseeError('E_BAD_ADDRESS', `bad destination "${dest}": expected ADDR:PORT (IPv6 as [ADDR]:PORT)`);
    }
    host = dest.slice(0, i);
    port = dest.slice(i + 1);
  }
  const a = parseAddress(host);
  return { family: a.family, protocol: proto, address: a.address, port: parsePort(port) };
}

export function formatTuple(t: Tuple): string {
  const host = t.family === 'ipv6' ? `[${t.address}]` : t.address;
  return `${t.protocol} ${host}:${t.port}`;
}
