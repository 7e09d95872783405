// Protobuf codec for CapabilityFault and Resolution (proto/gensee/v2/fault.proto).
//
// protobufjs' generated decoders silently skip unknown fields, truncate
// oversized uint32s and let the last of two oneof members win. Before handing
// bytes to them we walk the wire format ourselves against the generated field
// table (src/gen/fault-fields.js) and refuse, at every nesting level:
// unknown field numbers, wrong wire types, repeated singular fields, two
// members of one oneof, varints that overflow their type, truncation and
// invalid UTF-8. What survives is then checked exactly like the JSON form
// (same validator, same field paths), so the two entry points cannot drift.
import { gensee } from '../gen/fault';
import { MESSAGES, type MessageName } from '../gen/fault-fields';
import { DENY_REASONS, GenseeError } from '../errors';
import { ACTION, FAMILY, FILE_ACCESS, PROTOCOL, SOURCE, STATEMENT_CLASS, toNumber, type EnumMap } from './enums';
import { parseIp } from './ip';
import { faultFromJson, faultToJson } from './json';
import { EFFECT_TYPES, type Fault, type FaultResult, type Lease, type Resolution } from './types';

const pb = gensee.v2;

export const FAULT_SCHEMA = 2;
/** HMAC-SHA256 output length: a Resolution's mac must be exactly this long */
export const MAC_BYTES = 32;

export type ResolutionResult =
  | { ok: true; resolution: Resolution; mac: Buffer }
  | { ok: false; detail: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

interface Cursor {
  pos: number;
}

/** Read a varint (<= 64 bits); null when truncated or overflowing. */
function readVarint(buf: Uint8Array, c: Cursor, end: number): bigint | null {
  let result = 0n;
  for (let i = 0; i < 10; i++) {
    if (c.pos >= end) return null;
    const b = buf[c.pos++];
    if (i === 9 && b > 1) return null;
    result |= BigInt(b & 0x7f) << BigInt(7 * i);
    if ((b & 0x80) === 0) return result;
  }
  return null;
}

/**
 * readVarint as a number: exact below 2^53, larger values rounded (only
 * compared against 32-bit limits and lengths); -1 when truncated or
 * overflowing 64 bits, as readVarint's null.
 */
function readVarintNum(buf: Uint8Array, c: Cursor, end: number): number {
  let result = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (c.pos >= end) return -1;
    const b = buf[c.pos++];
    if (i === 9 && b > 1) return -1;
    result += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) return result;
    mul *= 128;
  }
  return -1;
}

function at(path: string): string {
  return path === '' ? '/' : path;
}

/**
 * Walk one message's wire bytes [start, end) against the field table.
 * Returns null when well-formed, else a detail naming the field path.
 */
function walk(buf: Uint8Array, start: number, end: number, msg: MessageName, path: string): string | null {
  const fields = MESSAGES[msg];
  // on every fault: numbers instead of BigInt, field paths built only for an error
  let seenLow = 0;
  let seenHigh: Set<number> | null = null;
  let oneofs: Map<string, string> | null = null;
  const c: Cursor = { pos: start };
  while (c.pos < end) {
    const tag = readVarintNum(buf, c, end);
    if (tag < 0 || tag > 0xffffffff) return `${at(path)}: malformed field tag`;
    const num = Math.floor(tag / 8);
    const wire = tag % 8;
    if (num === 0) return `${at(path)}: invalid field number 0`;
    const f = fields[num];
    if (!f) return `${at(path)}: unknown field ${num} (wire type ${wire})`;
    if (wire !== f.wire) return `${path}/${f.name}: wrong wire type ${wire} (expected ${f.wire})`;
    if (num < 31) {
      if (seenLow & (1 << num)) return `${path}/${f.name}: field repeated`;
      seenLow |= 1 << num;
    } else {
      seenHigh ??= new Set<number>();
      if (seenHigh.has(num)) return `${path}/${f.name}: field repeated`;
      seenHigh.add(num);
    }
    if (f.oneof) {
      oneofs ??= new Map<string, string>();
      const other = oneofs.get(f.oneof);
      if (other !== undefined) return `${at(path)}: both "${other}" and "${f.name}" set (only one allowed)`;
      oneofs.set(f.oneof, f.name);
    }
    if (wire === 0) {
      const v = readVarintNum(buf, c, end);
      if (v < 0) return `${path}/${f.name}: malformed varint`;
      if ((f.kind === 'uint32' || f.kind === 'enum') && v > 0xffffffff) return `${path}/${f.name}: value out of range`;
      if (f.kind === 'enum' && v > 0x7fffffff) return `${path}/${f.name}: negative enum value`;
      continue;
    }
    const len = readVarintNum(buf, c, end);
    if (len < 0 || len > end - c.pos) return `${path}/${f.name}: truncated`;
    const from = c.pos;
    const to = from + len;
    c.pos = to;
    if (f.kind === 'string') {
      try {
        utf8.decode(buf.subarray(from, to));
      } catch {
        return `${path}/${f.name}: invalid UTF-8`;
      }
    } else if (f.kind === 'message') {
      const err = walk(buf, from, to, f.ref as MessageName, `${path}/${f.name}`);
      if (err) return err;
    }
  }
  return null;
}

/** Top-level field 1 (schema) without judging the rest; undefined when absent or unreadable. */
function peekSchema(buf: Uint8Array): bigint | undefined {
  const c: Cursor = { pos: 0 };
  while (c.pos < buf.length) {
    const tag = readVarint(buf, c, buf.length);
    if (tag === null) return undefined;
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const v = readVarint(buf, c, buf.length);
      if (v === null) return undefined;
      if (tag >> 3n === 1n) return v;
    } else if (wire === 2) {
      const len = readVarint(buf, c, buf.length);
      if (len === null || len > BigInt(buf.length - c.pos)) return undefined;
      c.pos += Number(len);
    } else if (wire === 1) c.pos += 8;
    else if (wire === 5) c.pos += 4;
    else return undefined;
  }
  return undefined;
}

type Long64 = number | { toString(): string };

function big(v: Long64 | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  // an unsigned Long (every uint64 decoded with the long package): its two
  // 32-bit halves, the value its decimal toString() spells, without the
  // decimal conversion (on every fault: three of them)
  const l = v as { low?: unknown; high?: unknown; unsigned?: unknown };
  if (l.unsigned === true && typeof l.low === 'number' && typeof l.high === 'number') return (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
  return BigInt(v.toString());
}

/** uint64 that must fit a JS number; larger values stay out of range for the validator. */
function num(v: Long64 | null | undefined): number {
  const b = big(v);
  return b > MAX_SAFE ? Number.MAX_SAFE_INTEGER + 2 : Number(b);
}

function enumName<N extends string>(m: EnumMap<N>, v: number | null | undefined, path: string): N | string {
  const n = v ?? 0;
  if (n === 0) return `${path}: unspecified`;
  const name = m.byNumber.get(n);
  return name ?? `${path}: unknown value ${n}`;
}

class Bad extends Error {}

function need<N extends string>(m: EnumMap<N>, v: number | null | undefined, path: string): N {
  const r = enumName(m, v, path);
  if (m.byName.has(r as N)) return r as N;
  throw new Bad(r);
}

function opt(s: string | null | undefined): string | undefined {
  return s ? s : undefined;
}

/** The decoded message in the JSON form, so faultFromJson applies the same rules. */
function faultJsonOf(m: gensee.v2.CapabilityFault): unknown {
  const out: Record<string, unknown> = {
    schema: m.schema,
    operation_id: m.operation_id,
    fault_id: m.fault_id,
  };
  const s = m.subject;
  if (!s) throw new Bad('/subject: missing');
  if (s.process) out.subject = { process: { pid: s.process.pid, start_time_ticks: num(s.process.start_time_ticks) } };
  else if (s.peer) out.subject = { peer: { address: s.peer.address } };
  else throw new Bad('/subject: exactly one subject kind required (process|peer)');

  const e = m.effect;
  if (!e) throw new Bad('/effect: missing');
  let effect: Record<string, unknown>;
  if (e.network) {
    const n = e.network;
    effect = {
      network: {
        family: need(FAMILY, n.family, '/effect/network/family'),
        protocol: need(PROTOCOL, n.protocol, '/effect/network/protocol'),
        address: n.address,
        port: n.port,
      },
    };
  } else if (e.file) {
    effect = { file: { path: e.file.path, access: need(FILE_ACCESS, e.file.access, '/effect/file/access') } };
  } else if (e.syscall) {
    effect = { syscall: { name: e.syscall.name, number: e.syscall.number, capability: opt(e.syscall.capability) } };
  } else if (e.secret) {
    effect = { secret: { name: e.secret.name, scope: e.secret.scope } };
  } else if (e.cloud_iam) {
    const x = e.cloud_iam;
    effect = { cloud_iam: { provider: x.provider, action: x.action, resource: x.resource } };
  } else if (e.application) {
    const x = e.application;
    effect = { application: { name: x.name, action: x.action, target: opt(x.target) } };
  } else if (e.database) {
    const x = e.database;
    effect = {
      database: {
        engine: x.engine,
        database: x.database,
        statement_class: need(STATEMENT_CLASS, x.statement_class, '/effect/database/statement_class'),
        table: opt(x.table),
      },
    };
  } else if (e.promotion) {
    const x = e.promotion;
    effect = { promotion: { artifact: x.artifact, from_stage: x.from_stage, to_stage: x.to_stage } };
  } else {
    throw new Bad(`/effect: exactly one effect type required (${EFFECT_TYPES.join('|')})`);
  }
  // drop absent optionals so the JSON validator sees what a person would write
  for (const body of Object.values(effect) as Record<string, unknown>[]) {
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  }
  out.effect = effect;
  out.source = need(SOURCE, m.source, '/source');
  out.observed_at_boot_ns = big(m.observed_at_boot_ns).toString();
  out.cgroup_id = big(m.cgroup_id).toString();
  return out;
}

function toBytes(buf: unknown): Uint8Array | null {
  return buf instanceof Uint8Array ? buf : null;
}

/**
 * Decode a CapabilityFault frame body. Strict: unknown fields (any depth),
 * wrong wire types, schema != 2, missing subject/effect, unspecified or
 * unknown enums, port > 65535 and unparsable addresses are refused.
 */
export function decodeFault(input: Uint8Array): FaultResult {
  const bad = (detail: string): FaultResult => ({ ok: false, reason: 'malformed_fault', detail });
  const buf = toBytes(input);
  if (!buf) return bad('/: not a byte buffer');
  if (buf.length === 0) return bad('/: empty message');
  const schema = peekSchema(buf);
  if (schema === undefined) {
    const err = walk(buf, 0, buf.length, 'gensee.v2.CapabilityFault', '');
    return bad(err ?? `/schema: missing (expected ${FAULT_SCHEMA})`);
  }
  if (schema !== BigInt(FAULT_SCHEMA)) return bad(`/schema: unsupported schema ${schema} (expected ${FAULT_SCHEMA})`);
  const err = walk(buf, 0, buf.length, 'gensee.v2.CapabilityFault', '');
  if (err) return bad(err);
  let json: unknown;
  try {
    const m = pb.CapabilityFault.decode(buf); // once: for the refusal check and the fault
    const refusal = clientRefusalOf(m);
    if (refusal) return bad(`client refused its input: ${refusal}`);
    json = faultJsonOf(m);
  } catch (e) {
    return bad(e instanceof Bad ? e.message : `/: ${(e as Error).message}`);
  }
  // the JSON form was built just now from the decoded message: nothing to un-alias
  return faultFromJson(json, { fresh: true });
}

/** "CODE: detail" of a client_refusal report, or null for an ordinary fault. */
function clientRefusalOf(m: gensee.v2.CapabilityFault): string | null {
  const r = m.client_refusal;
  if (!r) return null;
  const text = `${r.code || 'E_UNKNOWN'}: ${r.detail || ''}`.replace(/[\r\n]+/g, ' ');
  return text.slice(0, 280);
}

/**
 * Encode a client refusal report (see fault.proto ClientRefusal): recorded by
 * the resolver as a refusal, always answered with a deny.
 */
export function encodeClientRefusal(operationId: string, faultId: string, code: string, detail: string): Buffer {
  return Buffer.from(
    pb.CapabilityFault.encode({ schema: FAULT_SCHEMA, operation_id: operationId, fault_id: faultId, client_refusal: { code, detail: detail.slice(0, 1000) } }).finish(),
  );
}

/** uint64 for protobufjs; 0 is left out (proto3 default), as protoc-c does. */
function long(v: bigint): number | undefined {
  // protobufjs takes a {low, high} pair for a uint64 (all 64 bits kept: the
  // bits LongBits.from builds from it, as from a decimal string, without
  // parsing one); a value outside uint64 goes as its decimal string, as before
  if (v === 0n) return undefined;
  if (v < 0n || v > 0xffffffffffffffffn) return v.toString() as unknown as number;
  return { low: Number(v & 0xffffffffn) | 0, high: Number(v >> 32n) | 0, unsigned: true } as unknown as number;
}

/** Encode a fault. Throws GenseeError E_SCHEMA when the fault itself is invalid. */
export function encodeFault(f: Fault): Buffer {
  const check = faultFromJson(faultToJson(f));
  if (!check.ok) throw new GenseeError('E_SCHEMA', `fault ${check.detail}`);
  const s = f.subject;
  const e = f.effect;
  const msg: gensee.v2.ICapabilityFault = {
    schema: FAULT_SCHEMA,
    operation_id: f.operation_id,
    fault_id: f.fault_id,
    subject: s.process
      ? { process: { pid: s.process.pid, start_time_ticks: s.process.start_time_ticks } }
      : { peer: { address: s.peer.address } },
    effect: e.network
      ? { network: { ...e.network, family: toNumber(FAMILY, e.network.family), protocol: toNumber(PROTOCOL, e.network.protocol) } }
      : e.file
        ? { file: { path: e.file.path, access: toNumber(FILE_ACCESS, e.file.access) } }
        : e.database
          ? { database: { ...e.database, statement_class: toNumber(STATEMENT_CLASS, e.database.statement_class) } }
          : { ...e },
    source: toNumber(SOURCE, f.source),
    observed_at_boot_ns: long(f.observed_at_boot_ns),
    cgroup_id: long(f.cgroup_id),
  };
  return Buffer.from(pb.CapabilityFault.encode(msg).finish());
}

const REASON = /^[a-z][a-z0-9_]{0,63}$/;
const ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
const EXECUTOR = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const UINT64_MAX = (1n << 64n) - 1n;

function checkLease(l: Lease): string | null {
  if (!Number.isSafeInteger(l.generation) || l.generation < 0) return '/lease/generation: must be a non-negative safe integer';
  if (!FAMILY.byName.has(l.family)) return '/lease/family: must be ipv4|ipv6';
  if (!PROTOCOL.byName.has(l.protocol)) return '/lease/protocol: must be tcp|udp';
  if (typeof l.address !== 'string' || !parseIp(l.address, l.family)) return `/lease/address: not an ${l.family} address`;
  if (!Number.isInteger(l.port) || l.port < 0 || l.port > 65535) return '/lease/port: must be 0-65535';
  if (typeof l.expires_at_boot_ns !== 'bigint' || l.expires_at_boot_ns <= 0n || l.expires_at_boot_ns > UINT64_MAX) {
    return '/lease/expires_at_boot_ns: must be a uint64 > 0';
  }
  if (!Number.isInteger(l.max_uses) || l.max_uses < 0 || l.max_uses > 0xffffffff) return '/lease/max_uses: must be a uint32';
  return null;
}

/**
 * null when the resolution is self-consistent: known action, snake_case
 * reason (a DenyReason for deny), lease iff retry_after_lease, delegate_to
 * iff delegate.
 */
export function checkResolution(r: Resolution): string | null {
  if (typeof r.fault_id !== 'string' || !ID.test(r.fault_id)) return '/fault_id: must be a fault id';
  if (!ACTION.byName.has(r.action)) return '/action: unknown action';
  if (typeof r.reason !== 'string' || !REASON.test(r.reason)) return '/reason: must be a snake_case code';
  if (r.action === 'deny' && !(DENY_REASONS as readonly string[]).includes(r.reason)) {
    return `/reason: "${r.reason}" is not a deny reason`;
  }
  if ((r.lease !== undefined) !== (r.action === 'retry_after_lease')) {
    return r.lease ? '/lease: only allowed with retry_after_lease' : '/lease: required with retry_after_lease';
  }
  if (r.lease) {
    const err = checkLease(r.lease);
    if (err) return err;
  }
  if ((r.delegate_to !== undefined) !== (r.action === 'delegate')) {
    return r.delegate_to !== undefined ? '/delegate_to: only allowed with delegate' : '/delegate_to: required with delegate';
  }
  if (r.delegate_to !== undefined && !EXECUTOR.test(r.delegate_to)) return '/delegate_to: must be an executor name';
  return null;
}

/** A Resolution's fields as the C client decoded them (proto enum numbers). */
export interface ResolutionFields {
  fault_id: string;
  action: number;
  reason: string;
  lease?: { generation: bigint; family: number; protocol: number; address: string; port: number; expires_at_boot_ns: bigint; max_uses: number };
  delegate_to?: string;
}

/** Name the enums and check the whole, as decodeResolution does; the MAC was checked in C. */
export function resolutionFromFields(f: ResolutionFields): { ok: true; resolution: Resolution } | { ok: false; detail: string } {
  const action = ACTION.byNumber.get(f.action);
  if (!action) return { ok: false, detail: '/action: unknown action' };
  const r: Resolution = { fault_id: f.fault_id, action, reason: f.reason };
  if (f.lease) {
    const family = FAMILY.byNumber.get(f.lease.family);
    const protocol = PROTOCOL.byNumber.get(f.lease.protocol);
    if (!family) return { ok: false, detail: '/lease/family: unknown family' };
    if (!protocol) return { ok: false, detail: '/lease/protocol: unknown protocol' };
    if (f.lease.generation > MAX_SAFE) return { ok: false, detail: '/lease/generation: out of range' };
    r.lease = {
      generation: Number(f.lease.generation),
      family,
      protocol,
      address: f.lease.address,
      port: f.lease.port,
      expires_at_boot_ns: f.lease.expires_at_boot_ns,
      max_uses: f.lease.max_uses,
    };
  }
  if (f.delegate_to !== undefined) r.delegate_to = f.delegate_to;
  const bad = checkResolution(r);
  return bad ? { ok: false, detail: bad } : { ok: true, resolution: r };
}

/** Encode a resolution with its MAC (see mac.ts). Throws GenseeError E_SCHEMA when inconsistent. */
export function encodeResolution(r: Resolution, mac: Uint8Array): Buffer {
  const err = checkResolution(r);
  if (err) throw new GenseeError('E_SCHEMA', `resolution ${err}`);
  if (mac.length !== MAC_BYTES) throw new GenseeError('E_SCHEMA', `resolution /mac: must be ${MAC_BYTES} bytes`);
  const l = r.lease;
  const msg: gensee.v2.IResolution = {
    fault_id: r.fault_id,
    action: toNumber(ACTION, r.action),
    reason: r.reason,
    lease: l
      ? {
          generation: l.generation,
          family: toNumber(FAMILY, l.family),
          protocol: toNumber(PROTOCOL, l.protocol),
          address: l.address,
          port: l.port,
          expires_at_boot_ns: long(l.expires_at_boot_ns),
          max_uses: l.max_uses,
        }
      : null,
    delegate_to: r.delegate_to ?? '',
    mac,
  };
  return Buffer.from(pb.Resolution.encode(msg).finish());
}

/** Decode a Resolution frame body, strictly (same wire rules as faults, plus checkResolution and a 32-byte mac). */
export function decodeResolution(input: Uint8Array): ResolutionResult {
  const buf = toBytes(input);
  if (!buf) return { ok: false, detail: '/: not a byte buffer' };
  const err = walk(buf, 0, buf.length, 'gensee.v2.Resolution', '');
  if (err) return { ok: false, detail: err };
  let r: Resolution;
  let mac: Buffer;
  try {
    const m = pb.Resolution.decode(buf);
    r = { fault_id: m.fault_id, action: need(ACTION, m.action, '/action'), reason: m.reason };
    if (m.lease) {
      const l = m.lease;
      const gen = big(l.generation);
      if (gen > MAX_SAFE) throw new Bad('/lease/generation: out of range');
      r.lease = {
        generation: Number(gen),
        family: need(FAMILY, l.family, '/lease/family'),
        protocol: need(PROTOCOL, l.protocol, '/lease/protocol'),
        address: l.address ?? '',
        port: l.port ?? 0,
        expires_at_boot_ns: big(l.expires_at_boot_ns),
        max_uses: l.max_uses ?? 0,
      };
    }
    if (m.delegate_to) r.delegate_to = m.delegate_to;
    mac = Buffer.from(m.mac);
  } catch (e) {
    return { ok: false, detail: e instanceof Bad ? e.message : `/: ${(e as Error).message}` };
  }
  const bad = checkResolution(r);
  if (bad) return { ok: false, detail: bad };
  if (mac.length !== MAC_BYTES) return { ok: false, detail: `/mac: must be ${MAC_BYTES} bytes` };
  return { ok: true, resolution: r, mac };
}
