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

export const VERDICTS = ['allow', 'no_lease', 'expired', 'exhausted'] as const;
export type Verdict = (typeof VERDICTS)[number];
export const HOOKS = ['', 'connect4', 'connect6', 'sendmsg4', 'sendmsg6'] as const;

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
}

export function decodeFaultEvent(b: Buffer, off = 0): FaultEvent {
  const tuple = decodeTuple(b, off + 24, off + 32);
  return {
    cgroupId: b.readBigUInt64LE(off),
    bootNs: b.readBigUInt64LE(off + 8),
    tgid: b.readUInt32LE(off + 16),
    pid: b.readUInt32LE(off + 20),
    tuple,
    reason: VERDICTS[b.readUInt8(off + 28)] ?? 'no_lease',
    hook: HOOKS[b.readUInt8(off + 29)] ?? 'unknown',
  };
}
