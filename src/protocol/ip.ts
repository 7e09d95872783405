// IP addresses, CIDR prefixes and port ranges as the protocol and policy use
// them. Parsers return null (or an error string) instead of throwing, so the
// callers can name the offending field.
import { isIPv6 } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import type { AddressMatch, Family, HostMatch, NetworkEffect, NetworkMatch, Policy, PortRange, Protocol } from './types';

/**
 * Dotted quad, no leading zeros (so no octal ambiguity), each octet <= 255.
 * Scanned by hand: this runs several times on every fault.
 */
function v4Bytes(s: string): Buffer | null {
  const n = s.length;
  if (n < 7 || n > 15) return null;
  const out = Buffer.allocUnsafe(4);
  let i = 0;
  for (let k = 0; k < 4; k++) {
    if (k > 0) {
      if (s.charCodeAt(i) !== 0x2e) return null;
      i++;
    }
    const start = i;
    let v = 0;
    while (i < n && i - start < 3) {
      const c = s.charCodeAt(i) - 0x30;
      if (c < 0 || c > 9) break;
      v = v * 10 + c;
      i++;
    }
    const len = i - start;
    if (len === 0 || v > 255 || (len > 1 && s.charCodeAt(start) === 0x30)) return null;
    out[k] = v;
  }
  return i === n ? out : null;
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
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
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
  if (addr.length !== bytes.length) return false;
  // byte by byte, no copy: this is on every fault, for every rule looked at
  const whole = prefix >> 3;
  for (let i = 0; i < whole; i++) if (addr[i] !== bytes[i]) return false;
  const rest = prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (addr[whole] & mask) === bytes[whole];
}

/**
 * Does a policy matcher cover this exact network effect? Family must be equal:
 * a v4-mapped IPv6 address does not match an IPv4 rule (fail closed). A host
 * rule NEVER matches an address: only the DNS stub turns a name's answers
 * into exact leases, so a connect to an address no name answered is denied.
 */
export function matchesNetwork(m: NetworkMatch, e: NetworkEffect): boolean {
  if (m.kind !== 'address') return false;
  if (m.protocol !== e.protocol || m.family !== e.family) return false;
  if (e.port < m.ports.lo || e.port > m.ports.hi) return false;
  const ip = parseIp(e.address, e.family);
  return ip !== null && inPrefix(ip.bytes, m.bytes, m.prefix);
}

// ---- names (policy `host`) ----

export const HOST_MAX_LENGTH = 253;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const WILDCARD_NOTE = '"*.example.com" matches one or more labels under example.com, never example.com itself';

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/**
 * Why `text` is not a valid policy `host` (null when it is). A host is an
 * exact name or `*.` + a name; the name is at most 253 characters, in
 * lowercase A-label form (IDNA as xn-- punycode), with at least two labels of
 * 1-63 characters from a-z 0-9 "-" (not at either end), the last not all
 * digits. `*` is allowed only as the whole first label. The message names the
 * host, not the field: the caller adds the JSON pointer.
 */
export function hostError(text: string): string | null {
  const q = JSON.stringify(clip(text));
  if (text.length === 0) return 'host must not be empty';
  if (/[\u0080-\uffff]/.test(text) || /[A-Z]/.test(text)) {
    const wild = text.startsWith('*.');
    const ascii = domainToASCII(wild ? text.slice(2) : text);
    const fix = ascii !== '' && !/[\u0080-\uffff]/.test(ascii) ? `use "${wild ? '*.' : ''}${ascii}"` : 'e.g. "xn--bcher-kva.example" for "bücher.example"';
    return `host ${q} must be in lowercase A-label form (IDNA names as xn-- punycode): ${fix}`;
  }
  if (text.length > HOST_MAX_LENGTH) return `host ${q} is longer than ${HOST_MAX_LENGTH} characters`;
  if (text.endsWith('.')) return `host ${q} must not end with "."`;
  const labels = text.split('.');
  const wildcard = labels[0] === '*';
  const rest = wildcard ? labels.slice(1) : labels;
  if (rest.some((l) => l.includes('*'))) {
    return `host ${q}: "*" is allowed only as the whole first label (${WILDCARD_NOTE})`;
  }
  for (const l of rest) {
    if (l.length === 0) return `host ${q} has an empty label`;
    if (l.length > 63) return `host ${q}: label "${clip(l)}" is longer than 63 characters`;
    if (!/^[a-z0-9-]+$/.test(l)) return `host ${q}: label "${l}" may hold only a-z, 0-9 and "-"`;
    if (!LABEL.test(l)) return `host ${q}: label "${l}" must not start or end with "-"`;
    if (l.startsWith('xn--')) {
      const u = domainToUnicode(l);
      if (u === '' || domainToASCII(u) !== l) return `host ${q}: label "${l}" is not a valid A-label (xn-- punycode)`;
    }
  }
  if (rest.length < 2) {
    return wildcard
      ? `host ${q}: a wildcard needs at least two labels after "*." (${WILDCARD_NOTE})`
      : `host ${q}: at least two labels required (e.g. "api.example.com")`;
  }
  if (/^[0-9]+$/.test(rest[rest.length - 1])) return `host ${q} looks like an IP address: use "address" (the last label must not be all digits)`;
  return null;
}

/**
 * A queried name in canonical form: ASCII-only lower case (never Unicode case
 * folding: "K", the Kelvin sign, must not become "k"), one trailing dot
 * dropped. null when it is not a name a host rule can cover (empty labels,
 * characters outside a-z 0-9 "-", a label over 63 or a name over 253
 * characters): such a name matches no rule (fail closed).
 */
export function canonicalName(name: string): string | null {
  const n = (name.endsWith('.') ? name.slice(0, -1) : name).replace(/[A-Z]/g, (c) => c.toLowerCase());
  if (n.length === 0 || n.length > HOST_MAX_LENGTH) return null;
  for (const l of n.split('.')) if (l.length === 0 || l.length > 63 || !/^[a-z0-9-]+$/.test(l)) return null;
  return n;
}

/**
 * Does host rule `rule` cover the queried `name`? Case-insensitive on the
 * name (ASCII), a trailing dot tolerated. An exact rule matches that name
 * only; `*.example.com` matches one or more labels under example.com
 * (a.example.com, a.b.example.com), never example.com itself. Ports and
 * protocol are not compared here (see ruleForName).
 */
export function hostMatches(rule: HostMatch, name: string): boolean {
  const n = canonicalName(name);
  if (n === null) return false;
  if (!rule.wildcard) return n === rule.host;
  const suffix = rule.host.slice(1); // ".example.com"
  return n.length > suffix.length && n.endsWith(suffix);
}

export type RuleList = 'grants' | 'leases' | 'delegate';

/** A policy's host rules in decision order: grants, then leases, then delegate, each in file order. */
export function hostRules(policy: Policy): { list: RuleList; index: number; rule: HostMatch }[] {
  const out: { list: RuleList; index: number; rule: HostMatch }[] = [];
  const lists: [RuleList, { network: NetworkMatch }[]][] = [
    ['grants', policy.grants],
    ['leases', policy.leases],
    ['delegate', policy.delegate],
  ];
  for (const [list, rules] of lists) {
    rules.forEach((r, index) => {
      if (r.network.kind === 'host') out.push({ list, index, rule: r.network });
    });
  }
  return out;
}

/**
 * The first host rule covering `name` (with `protocol`, only rules of that
 * protocol), in decision order: grants, then leases, then delegate. null when
 * no rule covers it: the name is to be REFUSED.
 */
export function ruleForName(
  policy: Policy,
  name: string,
  protocol?: Protocol,
): { list: RuleList; index: number; rule: HostMatch } | null {
  for (const r of hostRules(policy)) {
    if (protocol !== undefined && r.rule.protocol !== protocol) continue;
    if (hostMatches(r.rule, name)) return r;
  }
  return null;
}

/**
 * The policy with standing grants for destinations gensee itself serves the
 * workload (its DNS stub: udp and tcp ADDR:53), added after the operator's
 * grants. The operator's file and its hash are unchanged.
 */
export function withServedGrants(policy: Policy, served: { protocol: Protocol; address: string; port: number }[]): Policy {
  if (served.length === 0) return policy;
  const grants = served.map((d) => {
    const ip = parseIp(d.address);
    if (!ip) throw new Error(`served destination ${d.address} is not an IP address`);
    const m: AddressMatch = {
      kind: 'address',
      protocol: d.protocol,
      family: ip.family,
      bytes: ip.bytes,
      prefix: ip.family === 'ipv4' ? 32 : 128,
      ports: { lo: d.port, hi: d.port },
      text: `${d.protocol} ${d.address} ${d.port} (served by gensee)`,
    };
    return { network: m };
  });
  return { ...policy, grants: [...policy.grants, ...grants] };
}
