// JSON forms (DESIGN.md "JSON forms"): faults and policies validated with the
// generated ajv standalone validators (schema/*.schema.json), resolutions
// printed in the exact documented shape. Errors name the offending field as a
// JSON pointer: `/effect/network/port: must be <= 65535`.
import { createHash } from 'node:crypto';
import type { ErrorObject } from 'ajv';
import { validateBoundaryEvent, validateFault, validatePolicy } from '../gen/validators';
import { GenseeError } from '../errors';
import { parseCidr, parseIp, parsePortRange } from './ip';
import {
  DEFAULT_FAULT_DEADLINE_MS,
  EFFECT_TYPES,
  SUBJECT_KINDS,
  type Effect,
  type Fault,
  type FaultResult,
  type Lease,
  type NetworkMatch,
  type Policy,
  type Protocol,
  type Resolution,
  type Subject,
} from './types';

const UINT64_MAX = (1n << 64n) - 1n;

/** A fault as JSON: uint64 fields as decimal strings. */
export interface FaultJson {
  schema: 2;
  operation_id: string;
  fault_id: string;
  subject: Subject;
  effect: Effect;
  source: Fault['source'];
  observed_at_boot_ns: string;
  cgroup_id: string;
}

export interface LeaseJson {
  generation: number;
  family: Lease['family'];
  protocol: Lease['protocol'];
  address: string;
  port: number;
  expires_at_boot_ns: string;
  max_uses: number;
}

export interface ResolutionJson {
  fault_id: string;
  action: Resolution['action'];
  reason: string;
  lease?: LeaseJson;
  delegate_to?: string;
}

function at(path: string): string {
  return path === '' ? '/' : path;
}

function pointerGet(root: unknown, path: string): unknown {
  let cur = root;
  for (const raw of path.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** One ajv error as `<json pointer>: <what is wrong>`. */
export function formatAjvError(e: ErrorObject, data: unknown): string {
  const path = e.instancePath;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      if (path === '/effect') return `/effect: unknown effect type "${key}" (expected one of ${EFFECT_TYPES.join('|')})`;
      if (path === '/subject') return `/subject: unknown subject kind "${key}" (expected one of ${SUBJECT_KINDS.join('|')})`;
      return `${at(path)}: unknown field "${key}"`;
    }
    case 'required':
      return `${path}/${String(p.missingProperty)}: required field missing`;
    case 'minProperties':
    case 'maxProperties':
      if (path === '/effect') return `/effect: exactly one effect type required (${EFFECT_TYPES.join('|')})`;
      if (path === '/subject') return `/subject: exactly one subject kind required (${SUBJECT_KINDS.join('|')})`;
      break;
    case 'enum':
      return `${at(path)}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join('|')}`;
    case 'const':
      return `${at(path)}: must be ${JSON.stringify(p.allowedValue)}`;
    case 'oneOf': {
      // policy network matchers: exactly one of address|cidr, one of port|ports
      const v = pointerGet(data, path);
      if (v && typeof v === 'object' && /\/network$/.test(path)) {
        const has = (k: string) => Object.prototype.hasOwnProperty.call(v, k);
        if (has('address') === has('cidr')) return `${path}: exactly one of "address" or "cidr" required`;
        if (has('port') === has('ports')) return `${path}: exactly one of "port" or "ports" required`;
      }
      break;
    }
    default:
      break;
  }
  return `${at(path)}: ${e.message ?? e.keyword}`;
}

/**
 * The validators stop at the first failing keyword, which is the LAST error
 * listed (a failed oneOf first lists what each of its branches missed).
 */
function firstError(errors: ErrorObject[] | null | undefined, data: unknown): string {
  return errors && errors.length > 0 ? formatAjvError(errors[errors.length - 1], data) : '/: invalid';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function uint64(v: unknown, path: string): bigint | string {
  if (v === undefined) return 0n;
  const n = BigInt(v as string | number);
  return n > UINT64_MAX ? `${path}: must be <= ${UINT64_MAX}` : n;
}

/**
 * A fault from its JSON form (already JSON.parse'd). Never throws on bad input:
 * returns malformed_fault with a detail naming the field.
 */
export function faultFromJson(value: unknown, opts: { fresh?: boolean } = {}): FaultResult {
  const bad = (detail: string): FaultResult => ({ ok: false, reason: 'malformed_fault', detail });
  // report a schema mismatch before anything a newer schema might have added
  if (isObject(value) && value.schema !== undefined && value.schema !== 2) {
    return bad(`/schema: unsupported schema ${JSON.stringify(value.schema)} (expected 2)`);
  }
  if (!validateFault(value)) return bad(firstError(validateFault.errors, value));
  const v = value as unknown as FaultJson & { observed_at_boot_ns?: string | number; cgroup_id?: string | number };

  const observed = uint64(v.observed_at_boot_ns, '/observed_at_boot_ns');
  if (typeof observed === 'string') return bad(observed);
  const cgroup = uint64(v.cgroup_id, '/cgroup_id');
  if (typeof cgroup === 'string') return bad(cgroup);

  if (v.subject.peer && !parseIp(v.subject.peer.address)) {
    return bad(`/subject/peer/address: "${v.subject.peer.address}" is not an IPv4 or IPv6 address`);
  }
  const net = v.effect.network;
  if (net && !parseIp(net.address, net.family)) {
    return bad(`/effect/network/address: "${net.address}" is not an ${net.family} address`);
  }
  // deep copy: the caller's object is never aliased into the fault (fresh:
  // the caller built it for this call alone, as decodeFault does)
  const copy = opts.fresh
    ? { subject: v.subject as Subject, effect: v.effect as Effect }
    : (JSON.parse(JSON.stringify({ subject: v.subject, effect: v.effect })) as { subject: Subject; effect: Effect });
  return {
    ok: true,
    fault: {
      schema: 2,
      operation_id: v.operation_id,
      fault_id: v.fault_id,
      subject: copy.subject,
      effect: copy.effect,
      source: v.source,
      observed_at_boot_ns: observed,
      cgroup_id: cgroup,
    },
  };
}

/** A fault in its JSON form (fixed key order, uint64 as decimal strings). */
export function faultToJson(f: Fault): FaultJson {
  return {
    schema: 2,
    operation_id: f.operation_id,
    fault_id: f.fault_id,
    subject: f.subject,
    effect: f.effect,
    source: f.source,
    observed_at_boot_ns: f.observed_at_boot_ns.toString(),
    cgroup_id: f.cgroup_id.toString(),
  };
}

/** A resolution exactly as DESIGN.md prints it (fixed key order). */
export function resolutionToJson(r: Resolution): ResolutionJson {
  const out: ResolutionJson = { fault_id: r.fault_id, action: r.action, reason: r.reason };
  if (r.lease) {
    const l = r.lease;
    out.lease = {
      generation: l.generation,
      family: l.family,
      protocol: l.protocol,
      address: l.address,
      port: l.port,
      expires_at_boot_ns: l.expires_at_boot_ns.toString(),
      max_uses: l.max_uses,
    };
  }
  if (r.delegate_to !== undefined) out.delegate_to = r.delegate_to;
  return out;
}

interface NetworkMatchJson {
  protocol: Protocol;
  address?: string;
  cidr?: string;
  port?: number;
  ports?: string;
}

function parseMatch(m: NetworkMatchJson, path: string): NetworkMatch {
  const fail = (msg: string) => new GenseeError('E_SCHEMA', `policy ${path}: ${msg}`);
  let family: NetworkMatch['family'];
  let bytes: Buffer;
  let prefix: number;
  if (m.address !== undefined) {
    const ip = parseIp(m.address);
    if (!ip) throw fail(`address "${m.address}" is not an IPv4 or IPv6 address`);
    ({ family, bytes } = ip);
    prefix = bytes.length * 8;
  } else {
    const c = parseCidr(m.cidr as string);
    if (typeof c === 'string') throw fail(c);
    ({ family, bytes, prefix } = c);
  }
  const ports = m.port !== undefined ? { lo: m.port, hi: m.port } : parsePortRange(m.ports as string);
  if (typeof ports === 'string') throw fail(ports);
  const where = m.address ?? m.cidr;
  const portText = ports.lo === ports.hi ? `${ports.lo}` : `${ports.lo}-${ports.hi}`;
  return { protocol: m.protocol, family, bytes, prefix, ports, text: `${m.protocol} ${where} ${portText}` };
}

/**
 * An operation policy from its JSON form. Throws GenseeError E_SCHEMA naming
 * the field (`policy /leases/0/network/cidr: ...`).
 */
export function parsePolicy(value: unknown): Policy {
  if (isObject(value) && value.schema !== undefined && value.schema !== 1) {
    throw new GenseeError('E_SCHEMA', `policy /schema: unsupported schema ${JSON.stringify(value.schema)} (expected 1)`);
  }
  if (!validatePolicy(value)) {
    throw new GenseeError('E_SCHEMA', `policy ${firstError(validatePolicy.errors, value)}`);
  }
  const v = value as {
    grants?: { network: NetworkMatchJson }[];
    leases?: { network: NetworkMatchJson; ttl_s: number; max_uses?: number }[];
    delegate?: { network: NetworkMatchJson; to: string; tool?: string }[];
    fault_deadline_ms?: number;
  };
  return {
    schema: 1,
    grants: (v.grants ?? []).map((g, i) => ({ network: parseMatch(g.network, `/grants/${i}/network`) })),
    leases: (v.leases ?? []).map((l, i) => ({
      network: parseMatch(l.network, `/leases/${i}/network`),
      ttl_s: l.ttl_s,
      max_uses: l.max_uses ?? 0,
    })),
    delegate: (v.delegate ?? []).map((d, i) => ({ network: parseMatch(d.network, `/delegate/${i}/network`), to: d.to, ...(d.tool ? { tool: d.tool } : {}) })),
    fault_deadline_ms: v.fault_deadline_ms ?? DEFAULT_FAULT_DEADLINE_MS,
  };
}

/** sha256 hex of the policy file's bytes (recorded in operation.json). */
export function policyHash(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** null when `value` is a valid boundary event, else the first error. */
export function checkBoundaryEvent(value: unknown): string | null {
  return validateBoundaryEvent(value) ? null : firstError(validateBoundaryEvent.errors, value);
}
