// TypeScript mirror of bpf/gensee_abi.h (version 1). test/abi.test.ts checks
// these sizes against the ones the compiled addon reports.
import { Family, Protocol, Tuple, IPPROTO, addressFromBytes, parseAddress } from './addr';

export const ABI_VERSION = 1;
export const LEASE_KEY_SIZE = 24;
export const LEASE_VALUE_SIZE = 32;
export const COUNTER_KEY_SIZE = 32;
export const FAULT_EVENT_SIZE = 48;
/** key of the hook's per-destination fault rate limit (kernel-only map) */
export const FAULT_RL_KEY_SIZE = 32;
/** at most one ring event per destination (and cgroup, hook, reason) per window */
export const FAULT_RL_WINDOW_NS = 1_000_000_000;
/** size of the gs_events_v1 ring buffer */
export const EVENTS_BYTES = 1024 * 1024;
export const LEASE_LIMITED = 1;

export const VERDICTS = ['allow', 'no_lease', 'expired', 'exhausted', 'protocol', 'option', 'no_rule'] as const;
export type Verdict = (typeof VERDICTS)[number];
export const HOOKS = [
  '', 'connect4', 'connect6', 'sendmsg4', 'sendmsg6', 'socket', 'setsockopt', 'bind4', 'bind6', 'connect_unix', 'sendmsg_unix',
] as const;
/** the hooks whose refusals a lease can answer (the others name no destination a lease could) */
export const LEASE_HOOKS: ReadonlySet<string> = new Set(['connect4', 'connect6', 'sendmsg4', 'sendmsg6']);
export const LISTEN_KEY_SIZE = 4;
export const UNIX_KEY_SIZE = 108;

const FAMILY_CODE: Record<Family, number> = { ipv4: 4, ipv6: 6 };

function familyOf(code: number): Family {
  if (code === 4) return 'ipv4';
  if (code === 6) return 'ipv6';
  throw new Error(`abi: unknown family code ${code}`);
}

function protocolOf(code: number): Protocol | `ip${number}` {
  if (code === 6) return 'tcp';
  if (code === 17) return 'udp';
  return `ip${code}`;
}

export function encodeLeaseKey(t: Tuple): Buffer {
  const b = Buffer.alloc(LEASE_KEY_SIZE);
  b.writeUInt8(FAMILY_CODE[t.family], 0);
  b.writeUInt8(IPPROTO[t.protocol], 1);
  b.writeUInt16LE(t.port, 2); // host byte order (x86_64/arm64: little endian)
  parseAddress(t.address).bytes.copy(b, 8);
  return b;
}

/** a destination as the lease key, the counter key and the fault event lay it out: family, protocol, port at off; its 16 address bytes at addrOff */
function decodeTuple(b: Buffer, off: number, addrOff: number): Tuple {
  const family = familyOf(b.readUInt8(off));
  return {
    family,
    protocol: protocolOf(b.readUInt8(off + 1)) as Protocol,
    port: b.readUInt16LE(off + 2),
    address: addressFromBytes(family, b.subarray(addrOff, addrOff + 16)),
  };
}

export function decodeLeaseKey(b: Buffer, off = 0): Tuple {
  return decodeTuple(b, off, off + 8);
}

export interface LeaseValue {
  generation: bigint;
  /** CLOCK_BOOTTIME ns; 0n = never */
  expiresBootNs: bigint;
  /** null = unlimited */
  usesLeft: bigint | null;
}

/** gs_lease_expired() of gensee_abi.h: on or after its CLOCK_BOOTTIME expiry (0n = never) */
export function leaseExpired(v: Pick<LeaseValue, 'expiresBootNs'>, nowBootNs: bigint): boolean {
  return v.expiresBootNs !== 0n && nowBootNs >= v.expiresBootNs;
}

/** gs_lease_spent() of gensee_abi.h: limited, and no use left */
export function leaseSpent(v: Pick<LeaseValue, 'usesLeft'>): boolean {
  return v.usesLeft !== null && v.usesLeft <= 0n;
}

export function encodeLeaseValue(v: LeaseValue): Buffer {
  const b = Buffer.alloc(LEASE_VALUE_SIZE);
  b.writeBigUInt64LE(v.generation, 0);
  b.writeBigUInt64LE(v.expiresBootNs, 8);
  b.writeBigInt64LE(v.usesLeft ?? 0n, 16);
  b.writeUInt32LE(v.usesLeft === null ? 0 : LEASE_LIMITED, 24);
  return b;
}

export function decodeLeaseValue(b: Buffer, off = 0): LeaseValue {
  const flags = b.readUInt32LE(off + 24);
  return {
    generation: b.readBigUInt64LE(off),
    expiresBootNs: b.readBigUInt64LE(off + 8),
    usesLeft: flags & LEASE_LIMITED ? b.readBigInt64LE(off + 16) : null,
  };
}

export interface CounterKey {
  tuple: Tuple;
  verdict: Verdict;
  generation: bigint;
  /** the per-verdict aggregate (family 0): counts the map was too full to key by destination */
  aggregate?: true;
}

/** Stands for "destinations the full counter map could not key" in an aggregate's tuple. */
export const AGGREGATE_TUPLE: Tuple = Object.freeze({ family: 'ipv4', protocol: 'tcp', address: '0.0.0.0', port: 0 }) as Tuple;

export function decodeCounterKey(b: Buffer, off = 0): CounterKey {
  if (b.readUInt8(off) === 0) {
    return { tuple: AGGREGATE_TUPLE, verdict: VERDICTS[b.readUInt8(off + 4)] ?? 'no_lease', generation: 0n, aggregate: true };
  }
  const tuple = decodeTuple(b, off, off + 16);
  return {
    tuple,
    verdict: VERDICTS[b.readUInt8(off + 4)] ?? 'no_lease',
    generation: b.readBigUInt64LE(off + 8),
  };
}

export interface FaultEvent {
  cgroupId: bigint;
  bootNs: bigint;
  tgid: number;
  pid: number;
  tuple: Tuple;
  reason: Verdict;
  hook: string;
  /** family 0 events (hook socket, setsockopt): tuple is a placeholder */
  socket?: SocketAttempt;
  /** family 1 events (hook unix): tuple is a placeholder */
  unix?: UnixAttempt;
  /** where the record sat in the ring (src/dataplane.ts onEvents): its position and the one after it */
  ring?: { pos: number; end: number };
}

/** A refused socket() or setsockopt() (fault event family 0): what was asked for. */
export interface SocketAttempt {
  /** AF_* number */
  af: number;
  /** SOCK_* number (0 for an option) */
  type: number;
  protocol: number;
  /** setsockopt: level and option name */
  option?: { level: number; name: number };
}

/** A refused AF_UNIX connect or datagram (fault event family 1): the name it was sent to. */
export interface UnixAttempt {
  /** the first 16 bytes of the name ("@" + name for an abstract one), "" when there was none */
  name: string;
  /** the name's full length in bytes */
  length: number;
}

const FAMILY_SOCKET = 0;
const FAMILY_UNIX = 1;
const NO_TUPLE: Tuple = Object.freeze({ family: 'ipv4', protocol: 'tcp', address: '0.0.0.0', port: 0 }) as Tuple;

export function decodeFaultEvent(b: Buffer, off = 0): FaultEvent {
  const family = b.readUInt8(off + 24);
  const base = {
    cgroupId: b.readBigUInt64LE(off),
    bootNs: b.readBigUInt64LE(off + 8),
    tgid: b.readUInt32LE(off + 16),
    pid: b.readUInt32LE(off + 20),
    reason: VERDICTS[b.readUInt8(off + 28)] ?? 'no_lease',
    hook: HOOKS[b.readUInt8(off + 29)] ?? 'unknown',
  };
  const a = off + 32;
  if (family === FAMILY_SOCKET) {
    const opt = b.readUInt32LE(a + 6);
    const socket: SocketAttempt = { af: b.readUInt16LE(off + 26), type: b.readUInt16LE(a), protocol: b.readUInt32LE(a + 2) };
    if (base.hook === 'setsockopt') socket.option = { level: opt >>> 16, name: opt & 0xffff };
    return { ...base, tuple: NO_TUPLE, socket };
  }
  if (family === FAMILY_UNIX) {
    const length = b.readUInt16LE(off + 26);
    const raw = b.subarray(a, a + Math.min(16, length));
    const name = raw.length && raw[0] === 0 ? `@${raw.subarray(1).toString('latin1')}` : raw.toString('latin1').replace(/\0+$/, '');
    return { ...base, tuple: NO_TUPLE, unix: { name, length } };
  }
  return { ...base, tuple: decodeTuple(b, off + 24, a) };
}

/** gs_listen_key: a (protocol, port) an operation may bind and listen on */
export function encodeListenKey(protocol: Protocol, port: number): Buffer {
  const b = Buffer.alloc(LISTEN_KEY_SIZE);
  b.writeUInt8(IPPROTO[protocol], 0);
  b.writeUInt16LE(port, 2);
  return b;
}

/** gs_unix_key: the name an AF_UNIX peer is bound to, zero-padded ("\0" first for an abstract name) */
export function encodeUnixKey(name: Buffer): Buffer {
  if (name.length < 1 || name.length > UNIX_KEY_SIZE - 1) throw new RangeError(`a unix socket name is 1..${UNIX_KEY_SIZE - 1} bytes, not ${name.length}`);
  const b = Buffer.alloc(UNIX_KEY_SIZE);
  name.copy(b);
  return b;
}
