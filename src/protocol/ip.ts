// IP addresses, CIDR prefixes and port ranges as the protocol and policy use
// them. Parsers return null (or an error string) instead of throwing, so the
// callers can name the offending field.
import { isIPv4, isIPv6 } from 'node:net';
import type { Family, NetworkEffect, NetworkMatch, PortRange } from './types';

/** Dotted quad, no leading zeros (so no octal ambiguity). */
const V4_CANONICAL = /^(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}$/;

function v4Bytes(s: string): Buffer | null {
  if (!V4_CANONICAL.test(s) || !isIPv4(s)) return null;
  return Buffer.from(s.split('.').map(Number));
}

function v6Bytes(s: string): Buffer | null {
  // zone ids ("%eth0") are not addresses
  if (s.includes('%') || !isIPv6(s)) return null;
  let text = s;
  let tail: Buffer | null = null;
  const dotted = /^(.*:)([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+)$/.exec(text);
  if (dotted) {
    tail = v4Bytes(dotted[2]);
    if (!tail) return null;
    text = `${dotted[1]}0:0`;
  }
  const halves = text.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const zeros = 8 - head.length - rest.length;
  if (halves.length === 1 ? zeros !== 0 : zeros < 1) return null;
  const groups = [...head, ...Array<string>(halves.length > 1 ? zeros : 0).fill('0'), ...rest];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  if (tail) tail.copy(out, 12);
  return out;
}

/** Parse a textual address; with `family`, only that family is accepted. */
export function parseIp(text: string, family?: Family): { family: Family; bytes: Buffer } | null {
  if (family !== 'ipv6') {
    const b = v4Bytes(text);
    if (b) return { family: 'ipv4', bytes: b };
    if (family === 'ipv4') return null;
  }
  const b = v6Bytes(text);
  return b ? { family: 'ipv6', bytes: b } : null;
}

/** Canonical text: dotted quad, or RFC 5952 IPv6 (lower case, longest zero run compressed). */
export function formatIp(bytes: Buffer): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push(bytes.readUInt16BE(i));
  let best = -1;
  let bestLen = 1; // RFC 5952: a single zero group is not compressed
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** Parse "a.b.c.d/n" or "x::/n"; host bits must be zero. Returns an error string on failure. */
export function parseCidr(text: string): { family: Family; bytes: Buffer; prefix: number } | string {
  const m = /^([^/]+)\/([0-9]{1,3})$/.exec(text);
  if (!m) return `bad CIDR "${text}": expected ADDRESS/PREFIX`;
  const ip = parseIp(m[1]);
  if (!ip) return `bad CIDR "${text}": "${m[1]}" is not an IPv4 or IPv6 address`;
  const prefix = Number(m[2]);
  const max = ip.family === 'ipv4' ? 32 : 128;
  if (prefix > max) return `bad CIDR "${text}": prefix /${prefix} exceeds /${max}`;
  const net = maskTo(ip.bytes, prefix);
  if (!net.equals(ip.bytes)) {
    return `bad CIDR "${text}": host bits set (did you mean ${formatIp(net)}/${prefix}?)`;
  }
  return { family: ip.family, bytes: net, prefix };
}

function maskTo(bytes: Buffer, prefix: number): Buffer {
  const out = Buffer.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    out[i] &= keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
  }
  return out;
}

/** Parse "443" or "8000-8999" (inclusive, 0..65535, lo <= hi). Returns an error string on failure. */
export function parsePortRange(text: string): PortRange | string {
  const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(text);
  if (!m) return `bad ports "${text}": expected PORT or LO-HI`;
  const lo = Number(m[1]);
  const hi = m[2] === undefined ? lo : Number(m[2]);
  if (lo > 65535 || hi > 65535) return `bad ports "${text}": port out of range 0-65535`;
  if (lo > hi) return `bad ports "${text}": range is reversed`;
  return { lo, hi };
}

/** True when `addr` (4 or 16 bytes, same family) lies inside bytes/prefix. */
export function inPrefix(addr: Buffer, bytes: Buffer, prefix: number): boolean {
  return addr.length === bytes.length && maskTo(addr, prefix).equals(bytes);
}

/**
 * Does a policy matcher cover this exact network effect? Family must be equal:
 * a v4-mapped IPv6 address does not match an IPv4 rule (fail closed).
 */
export function matchesNetwork(m: NetworkMatch, e: NetworkEffect): boolean {
  if (m.protocol !== e.protocol || m.family !== e.family) return false;
  if (e.port < m.ports.lo || e.port > m.ports.hi) return false;
  const ip = parseIp(e.address, e.family);
  return ip !== null && inPrefix(ip.bytes, m.bytes, m.prefix);
}
