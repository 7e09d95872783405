// Destination tuples: parsing operator input ("tcp 127.0.0.1:8080",
// "[::1]:8080") and converting addresses to/from the 16-byte kernel form.
import { GenseeError } from './errors';
import { parseIp, formatIp } from './protocol/ip';

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

/**
 * Parse an address (one parser for the whole project: src/protocol/ip.ts) into
 * the kernel's 16-byte form. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is
 * the IPv4 destination: the eBPF hook treats it so, and a lease must match.
 */
export function parseAddress(s: string): { family: Family; address: string; bytes: Buffer } {
  const ip = parseIp(s);
  if (!ip) throw new GenseeError('E_BAD_ADDRESS', `bad address "${s}": expected an IPv4 or IPv6 literal`);
  const bytes = Buffer.alloc(16);
  if (ip.family === 'ipv4') {
    ip.bytes.copy(bytes);
    return { family: 'ipv4', address: formatIp(ip.bytes), bytes };
  }
  const b = ip.bytes;
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) {
    b.copy(bytes, 0, 12, 16);
    return { family: 'ipv4', address: formatIp(b.subarray(12, 16)), bytes };
  }
  return { family: 'ipv6', address: formatIp(b), bytes: Buffer.from(b) };
}

/** Text form of the kernel's 16-byte address field. */
export function addressFromBytes(family: Family, b: Buffer): string {
  return formatIp(family === 'ipv4' ? b.subarray(0, 4) : b.subarray(0, 16));
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

/** host:port, [v6]:port */
export function formatEndpoint(t: Pick<Tuple, 'family' | 'address' | 'port'>): string {
  return t.family === 'ipv6' ? `[${t.address}]:${t.port}` : `${t.address}:${t.port}`;
}

export function formatTuple(t: Tuple): string {
  return `${t.protocol} ${formatEndpoint(t)}`;
}
