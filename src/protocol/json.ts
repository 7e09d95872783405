// JSON forms (DESIGN.md "JSON forms"): faults and policies validated with the
// generated ajv standalone validators (schema/*.schema.json), resolutions
// printed in the exact documented shape. Errors name the offending field as a
// JSON pointer: `/effect/network/port: must be <= 65535`.
import { createHash } from 'node:crypto';
import type { ErrorObject } from 'ajv';
import { validateBoundaryEvent, validateFault, validatePolicy } from '../gen/validators';
import { GenseeError } from '../errors';
import { hostError, parseCidr, parseIp, parsePortRange } from './ip';
import {
  DEFAULT_DNS_BUDGET,
  DEFAULT_FAULT_DEADLINE_MS,
  HOST_RULE_MAX_PORTS,
  EFFECT_TYPES,
  SUBJECT_KINDS,
  type Effect,
  type Family,
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
  /** audit mode: what the policy would have denied it for (reason is then audit_allowed) */
  would_deny?: string;
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

/** A problem with a JSON form: where (a JSON pointer, "/" for the root) and what. */
export interface Problem {
  pointer: string;
  message: string;
}

/** One ajv error as its pointer and message. */
export function describeAjvError(e: ErrorObject, data: unknown): Problem {
  const path = e.instancePath;
  const p = e.params as Record<string, unknown>;
  const is = (pointer: string, message: string): Problem => ({ pointer: at(pointer), message });
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      if (path === '/effect') return is(path, `unknown effect type "${key}" (expected one of ${EFFECT_TYPES.join('|')})`);
      if (path === '/subject') return is(path, `unknown subject kind "${key}" (expected one of ${SUBJECT_KINDS.join('|')})`);
      return is(path, `unknown field "${key}"`);
    }
    case 'required':
      return is(`${path}/${String(p.missingProperty)}`, 'required field missing');
    case 'minProperties':
    case 'maxProperties':
      if (path === '/effect') return is(path, `exactly one effect type required (${EFFECT_TYPES.join('|')})`);
      if (path === '/subject') return is(path, `exactly one subject kind required (${SUBJECT_KINDS.join('|')})`);
      break;
    case 'enum':
      return is(path, `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join('|')}`);
    case 'const':
      return is(path, `must be ${JSON.stringify(p.allowedValue)}`);
    case 'oneOf': {
      // policy network matchers: exactly one of address|cidr|host, one of port|ports
      const v = pointerGet(data, path);
      if (v && typeof v === 'object' && /\/network$/.test(path)) {
        const has = (k: string) => Object.prototype.hasOwnProperty.call(v, k);
        if (['address', 'cidr', 'host'].filter(has).length !== 1) return is(path, 'exactly one of "address", "cidr" or "host" required');
        if (has('port') === has('ports')) return is(path, 'exactly one of "port" or "ports" required');
      }
      break;
    }
    case 'pattern':
    case 'minLength':
    case 'maxLength': {
      // a policy host: say what is wrong with the name, not which regex it failed
      if (/\/network\/host$/.test(path)) {
        const v = pointerGet(data, path);
        const why = typeof v === 'string' ? hostError(v) : null;
        if (why) return is(path, why);
      }
      break;
    }
    default:
      break;
  }
  return is(path, e.message ?? e.keyword);
}

/** One ajv error as `<json pointer>: <what is wrong>`. */
export function formatAjvError(e: ErrorObject, data: unknown): string {
  const d = describeAjvError(e, data);
  return `${d.pointer}: ${d.message}`;
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
  if (r.would_deny !== undefined) out.would_deny = r.would_deny;
  return out;
}

interface NetworkMatchJson {
  protocol: Protocol;
  address?: string;
  cidr?: string;
  host?: string;
  port?: number;
  ports?: string;
}

interface PolicyJson {
  grants?: { network: NetworkMatchJson }[];
  leases?: { network: NetworkMatchJson; ttl_s: number; max_uses?: number }[];
  delegate?: { network: NetworkMatchJson; to: string; tool?: string }[];
  listen?: { protocol: 'tcp' | 'udp'; port: number }[];
  unix?: { path?: string; abstract?: string }[];
  io_uring?: boolean;
  fault_deadline_ms?: number;
  dns_budget?: number;
  limits?: { pids_max?: number; memory_max_bytes?: number };
}

/** A schema-valid network matcher, parsed; or the problem with it (pointer under `path`). */
function parseMatch(m: NetworkMatchJson, path: string): NetworkMatch | Problem {
  const fail = (message: string, pointer = path): Problem => ({ pointer, message });
  const ports = m.port !== undefined ? { lo: m.port, hi: m.port } : parsePortRange(m.ports as string);
  if (typeof ports === 'string') return fail(ports);
  const portText = ports.lo === ports.hi ? `${ports.lo}` : `${ports.lo}-${ports.hi}`;
  if (m.host !== undefined) {
    const why = hostError(m.host);
    if (why) return fail(why, `${path}/host`);
    const n = ports.hi - ports.lo + 1;
    if (n > HOST_RULE_MAX_PORTS) {
      return fail(
        `a host rule names at most ${HOST_RULE_MAX_PORTS} ports (each answered address installs one lease per port); "${portText}" names ${n}`,
        `${path}/ports`,
      );
    }
    return { kind: 'host', protocol: m.protocol, host: m.host, wildcard: m.host.startsWith('*.'), ports, text: `${m.protocol} ${m.host} ${portText}` };
  }
  let family: Family;
  let bytes: Buffer;
  let prefix: number;
  if (m.address !== undefined) {
    const ip = parseIp(m.address);
    if (!ip) return fail(`address "${m.address}" is not an IPv4 or IPv6 address`);
    ({ family, bytes } = ip);
    prefix = bytes.length * 8;
  } else {
    const c = parseCidr(m.cidr as string);
    if (typeof c === 'string') return fail(c);
    ({ family, bytes, prefix } = c);
  }
  const where = m.address ?? m.cidr;
  return { kind: 'address', protocol: m.protocol, family, bytes, prefix, ports, text: `${m.protocol} ${where} ${portText}` };
}

function isProblem(v: NetworkMatch | Problem): v is Problem {
  return (v as Problem).pointer !== undefined;
}

/** The rules' network matchers of a policy object, with their pointers. */
function networksOf(v: PolicyJson): { path: string; network: unknown }[] {
  const out: { path: string; network: unknown }[] = [];
  for (const list of ['grants', 'leases', 'delegate'] as const) {
    const rules: unknown = v[list];
    if (!Array.isArray(rules)) continue;
    rules.forEach((r: unknown, i) => {
      if (isObject(r)) out.push({ path: `/${list}/${i}/network`, network: r.network });
    });
  }
  return out;
}

function unsupportedSchema(value: unknown): Problem | null {
  return isObject(value) && value.schema !== undefined && value.schema !== 1
    ? { pointer: '/schema', message: `unsupported schema ${JSON.stringify(value.schema)} (expected 1)` }
    : null;
}

/**
 * An operation policy from its JSON form. Throws GenseeError E_SCHEMA naming
 * the field (`policy /leases/0/network/cidr: ...`): the first problem only
 * (checkPolicy lists them all).
 */
export function parsePolicy(value: unknown): Policy {
  const bad = (p: Problem) => new GenseeError('E_SCHEMA', `policy ${p.pointer}: ${p.message}`);
  const unsupported = unsupportedSchema(value);
  if (unsupported) throw bad(unsupported);
  if (!validatePolicy(value)) {
    throw new GenseeError('E_SCHEMA', `policy ${firstError(validatePolicy.errors, value)}`);
  }
  const v = value as PolicyJson;
  const match = (m: NetworkMatchJson, path: string): NetworkMatch => {
    const r = parseMatch(m, path);
    if (isProblem(r)) throw bad(r);
    return r;
  };
  return {
    schema: 1,
    grants: (v.grants ?? []).map((g, i) => ({ network: match(g.network, `/grants/${i}/network`) })),
    leases: (v.leases ?? []).map((l, i) => ({
      network: match(l.network, `/leases/${i}/network`),
      ttl_s: l.ttl_s,
      max_uses: l.max_uses ?? 0,
    })),
    delegate: (v.delegate ?? []).map((d, i) => ({ network: match(d.network, `/delegate/${i}/network`), to: d.to, ...(d.tool ? { tool: d.tool } : {}) })),
    listen: (v.listen ?? []).map((l) => ({ protocol: l.protocol, port: l.port })),
    unix: (v.unix ?? []).map((u, i) => {
      const name = u.path ?? u.abstract ?? '';
      // the kernel's limit is in bytes (sun_path), the schema's in characters
      if (Buffer.byteLength(name) > (u.path !== undefined ? 107 : 106)) throw bad({ pointer: `/unix/${i}`, message: `${u.path !== undefined ? 'path' : 'abstract name'} is ${Buffer.byteLength(name)} bytes; sun_path holds ${u.path !== undefined ? 107 : 106}` });
      return u.path !== undefined ? { path: u.path } : { abstract: name };
    }),
    io_uring: v.io_uring ?? false,
    fault_deadline_ms: v.fault_deadline_ms ?? DEFAULT_FAULT_DEADLINE_MS,
    dns_budget: v.dns_budget ?? DEFAULT_DNS_BUDGET,
    limits: { ...v.limits },
  };
}

type AllErrorsValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
let allErrorsValidator: Promise<AllErrorsValidator> | null = null;

/**
 * The policy schema compiled with allErrors (the generated validators stop at
 * the first error). Loaded on first use only: ajv's compiler stays off the
 * resolver's start-up path.
 */
function policyValidatorAll(): Promise<AllErrorsValidator> {
  allErrorsValidator ??= (async () => {
    const { default: Ajv } = await import('ajv');
    const schema = (await import('../../schema/policy.schema.json')).default;
    // the options of scripts/gen.sh, plus allErrors
    const ajv = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
    return ajv.compile(schema) as AllErrorsValidator;
  })();
  return allErrorsValidator;
}

/**
 * EVERY problem with a policy (`gensee policy check`), schema and semantic,
 * each with its JSON pointer, in document order; [] when parsePolicy would
 * accept it. A failed oneOf is reported once, not with each branch it tried;
 * a rule whose network matcher broke the schema gets no semantic checks.
 */
export async function checkPolicy(value: unknown): Promise<Problem[]> {
  const unsupported = unsupportedSchema(value);
  if (unsupported) return [unsupported];
  const validate = await policyValidatorAll();
  const errors = validate(value) ? [] : (validate.errors ?? []);
  // drop what the branches of a failed oneOf/anyOf missed: the oneOf itself says it
  const alternatives = errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf');
  const under = (e: ErrorObject, a: ErrorObject) =>
    e !== a &&
    e.schemaPath.startsWith(`${a.schemaPath}/`) &&
    (e.instancePath === a.instancePath || e.instancePath.startsWith(`${a.instancePath}/`));
  const kept = errors.filter((e) => !alternatives.some((a) => under(e, a)));
  const problems: Problem[] = [];
  const seen = new Set<string>();
  const add = (p: Problem) => {
    const k = `${p.pointer}\0${p.message}`;
    if (!seen.has(k)) {
      seen.add(k);
      problems.push(p);
    }
  };
  for (const e of kept) add(describeAjvError(e, value));
  if (isObject(value)) {
    const broken = errors.map((e) => e.instancePath);
    for (const { path, network } of networksOf(value as PolicyJson)) {
      if (!isObject(network) || broken.some((b) => b === path || b.startsWith(`${path}/`))) continue;
      const r = parseMatch(network as unknown as NetworkMatchJson, path);
      if (isProblem(r)) add(r);
    }
  }
  return problems.sort((a, b) => comparePointers(a.pointer, b.pointer));
}

const TOP_ORDER = ['', 'schema', 'grants', 'leases', 'delegate', 'fault_deadline_ms', 'dns_budget', 'limits'];

/** Document order by top-level field, then rule index; within one rule the order found (stable sort). */
function comparePointers(a: string, b: string): number {
  const key = (p: string): [number, number] => {
    const [, top = '', index = ''] = p.split('/');
    const rank = TOP_ORDER.indexOf(top);
    return [rank < 0 ? TOP_ORDER.length : rank, /^[0-9]+$/.test(index) ? Number(index) : -1];
  };
  const [x, y] = [key(a), key(b)];
  return x[0] - y[0] || x[1] - y[1];
}

/** sha256 hex of the policy file's bytes (recorded in operation.json). */
export function policyHash(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** null when `value` is a valid boundary event, else the first error. */
export function checkBoundaryEvent(value: unknown): string | null {
  return validateBoundaryEvent(value) ? null : firstError(validateBoundaryEvent.errors, value);
}
