// Protocol types: the in-memory shapes of a CapabilityFault, a Resolution and
// an operation Policy. Field names are the proto's (snake_case), as in the
// JSON forms of DESIGN.md. uint64 values that can exceed 2^53 (boot-time
// nanoseconds, cgroup ids) are bigint here and decimal strings in JSON.

export type Family = 'ipv4' | 'ipv6';
export type Protocol = 'tcp' | 'udp';

export const SOURCES = ['seccomp_notify', 'cgroup_hook', 'manual', 'peer_gateway', 'executor'] as const;
export type Source = (typeof SOURCES)[number];

export const EFFECT_TYPES = [
  'network',
  'file',
  'syscall',
  'secret',
  'cloud_iam',
  'application',
  'database',
  'promotion',
] as const;
export type EffectType = (typeof EFFECT_TYPES)[number];

export const SUBJECT_KINDS = ['process', 'peer'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

export interface ProcessSubject {
  pid: number;
  /** field 22 of /proc/PID/stat */
  start_time_ticks: number;
}
export interface PeerSubject {
  /** exact address inside an isolated network namespace */
  address: string;
}
export type Subject =
  | { process: ProcessSubject; peer?: never }
  | { peer: PeerSubject; process?: never };

export interface NetworkEffect {
  family: Family;
  protocol: Protocol;
  address: string;
  port: number;
}
export type FileAccess = 'read' | 'write' | 'exec' | 'create' | 'delete';
export interface FileEffect {
  path: string;
  access: FileAccess;
}
export interface SyscallEffect {
  name: string;
  number: number;
  /** Linux capability name, e.g. CAP_NET_RAW */
  capability?: string;
}
export interface SecretEffect {
  name: string;
  scope: string;
}
export interface CloudIamEffect {
  provider: string;
  action: string;
  resource: string;
}
export interface ApplicationEffect {
  name: string;
  action: string;
  target?: string;
}
export type StatementClass = 'read' | 'write' | 'ddl' | 'admin';
export interface DatabaseEffect {
  engine: string;
  database: string;
  statement_class: StatementClass;
  table?: string;
}
export interface PromotionEffect {
  artifact: string;
  from_stage: string;
  to_stage: string;
}

export interface EffectMap {
  network: NetworkEffect;
  file: FileEffect;
  syscall: SyscallEffect;
  secret: SecretEffect;
  cloud_iam: CloudIamEffect;
  application: ApplicationEffect;
  database: DatabaseEffect;
  promotion: PromotionEffect;
}

/** Exactly one effect key, e.g. `{ network: {...} }`. */
export type Effect = {
  [K in EffectType]: { [P in K]: EffectMap[K] } & { [P in Exclude<EffectType, K>]?: never };
}[EffectType];

export interface Fault {
  schema: 2;
  operation_id: string;
  fault_id: string;
  subject: Subject;
  effect: Effect;
  source: Source;
  /** CLOCK_BOOTTIME when observed; 0n = unknown */
  observed_at_boot_ns: bigint;
  /** kernel cgroup id of the faulting task; 0n = unknown */
  cgroup_id: bigint;
}

/** Result of decoding a fault (protobuf or JSON): never throws on bad input. */
export type FaultResult =
  | { ok: true; fault: Fault }
  | { ok: false; reason: 'malformed_fault'; detail: string };

export const ACTIONS = ['continue_already_authorized', 'retry_after_lease', 'delegate', 'deny'] as const;
export type Action = (typeof ACTIONS)[number];

/** An exact, expiring allowance: always the faulted tuple, never a range. */
export interface Lease {
  generation: number;
  family: Family;
  protocol: Protocol;
  address: string;
  port: number;
  /** CLOCK_BOOTTIME */
  expires_at_boot_ns: bigint;
  /** 0 = unlimited */
  max_uses: number;
}

/**
 * The answer to a fault. `lease` is present iff action is retry_after_lease,
 * `delegate_to` iff action is delegate; a deny's reason is a DenyReason.
 */
export interface Resolution {
  fault_id: string;
  action: Action;
  /** stable snake_case code, e.g. "lease_installed" or a DenyReason */
  reason: string;
  lease?: Lease;
  delegate_to?: string;
  /**
   * audit mode (`gensee run --audit`): the DenyReason the policy would have
   * answered; the lease is a short audit lease, reason is "audit_allowed".
   * Recorded in faults.jsonl, never sent on the wire.
   */
  would_deny?: string;
}

/** Inclusive port range; a single port has lo === hi. */
export interface PortRange {
  lo: number;
  hi: number;
}

/**
 * A parsed policy network matcher: an address rule (`address` or `cidr`) or a
 * host rule (`host`). Discriminated on `kind`, so a host rule can never be
 * read as an address prefix: code that wants `bytes`/`prefix` must first
 * narrow to kind 'address'. matchesNetwork() never matches a host rule; names
 * are matched by hostMatches() (src/protocol/ip.ts) and their answers become
 * exact leases through the DNS stub.
 */
export type NetworkMatch = AddressMatch | HostMatch;

/** `address` (a /32 or /128 prefix) or `cidr`. */
export interface AddressMatch {
  kind: 'address';
  protocol: Protocol;
  family: Family;
  /** network address, 4 (ipv4) or 16 (ipv6) bytes, host bits zero */
  bytes: Buffer;
  prefix: number;
  ports: PortRange;
  /** the rule as written, for evidence: "tcp 127.0.0.0/8 8000-8999" */
  text: string;
}

/** A host rule names at most this many ports (each answered address installs one lease per port). */
export const HOST_RULE_MAX_PORTS = 64;

/**
 * `host`: an exact DNS name, or a `*.` wildcard. `*.example.com` matches ONE
 * OR MORE labels under example.com (a.example.com, a.b.example.com) and never
 * example.com itself. Names are lowercase A-labels (IDNA as xn-- punycode).
 */
export interface HostMatch {
  kind: 'host';
  protocol: Protocol;
  /** the name as written (lowercase A-label form): "api.example.com" or "*.example.com" */
  host: string;
  /** true for "*.<suffix>" */
  wildcard: boolean;
  /** at most HOST_RULE_MAX_PORTS ports */
  ports: PortRange;
  /** the rule as written, for evidence: "tcp *.example.com 443" */
  text: string;
}

export interface GrantRule {
  network: NetworkMatch;
}
export interface LeaseRule {
  network: NetworkMatch;
  ttl_s: number;
  /** 0 = unlimited */
  max_uses: number;
}
export interface DelegateRule {
  network: NetworkMatch;
  to: string;
  /** the executor's tool that takes the effect over, when `to` is an executor */
  tool?: string;
}

export const DEFAULT_FAULT_DEADLINE_MS = 5000;
/** distinct names an operation may query (policy `dns_budget`) */
export const DEFAULT_DNS_BUDGET = 1000;
export const MAX_DNS_BUDGET = 100000;

/** A port the workload may bind and listen on (port 0: one the kernel picks). */
export interface ListenRule {
  protocol: Protocol;
  port: number;
}

/** An AF_UNIX socket the workload may reach: a path, or an abstract name (without its leading NUL). */
export interface UnixRule {
  path?: string;
  abstract?: string;
}

export interface Policy {
  schema: 1;
  grants: GrantRule[];
  leases: LeaseRule[];
  delegate: DelegateRule[];
  /** bind/listen: refused unless a rule names the port */
  listen: ListenRule[];
  /** AF_UNIX connects and datagrams to a name: refused unless a rule names it */
  unix: UnixRule[];
  /** the workload may use io_uring (default false: refused with ENOSYS) */
  io_uring: boolean;
  /** default 5000 */
  fault_deadline_ms: number;
  /** distinct names the operation may query before every query is refused; 1..100000, default 1000 */
  dns_budget: number;
  /** the limits the policy names; what it leaves out takes src/resources.ts's defaults */
  limits: PolicyLimits;
}

/** An operation cgroup's resource limits as a policy names them (docs/design.md "Resource limits"). */
export interface PolicyLimits {
  /** pids.max: tasks (processes and threads), 16..4194304 */
  pids_max?: number;
  /** memory.max (+ swap 0) or memory.limit_in_bytes = memsw: bytes, 16 MiB..2^52 */
  memory_max_bytes?: number;
}

/**
 * A control refused something (schema/boundary-event.schema.json). Reporting
 * only: it grants nothing. detail is redacted, at most 300 characters.
 */
export interface BoundaryEvent {
  kind: string;
  control: string;
  detail: string;
  target?: string;
  /** RFC 3339 UTC, e.g. new Date().toISOString() */
  at: string;
}

/** The effect type of an effect (its only key). */
export function effectType(e: Effect): EffectType {
  for (const t of EFFECT_TYPES) if ((e as Partial<EffectMap>)[t] !== undefined) return t;
  throw new TypeError('effect has no known type');
}

/** The subject kind of a subject (its only key). */
export function subjectKind(s: Subject): SubjectKind {
  return s.process !== undefined ? 'process' : 'peer';
}
