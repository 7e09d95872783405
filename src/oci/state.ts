// The OCI runtime-spec "container process state" a runtime sends to
// `linux.seccomp.listenerPath` (config-linux.md, Seccomp): JSON
//   { ociVersion, fds: ["seccompFd"], pid, metadata?, state: {ociVersion, id, status, pid?, bundle?, annotations?} }
// with the seccomp notify fd attached (SCM_RIGHTS, index = position in fds).
// Validated here before anything is attached; the operation id comes from
// `metadata` (the config's `listenerMetadata`), e.g. "op=build-42".
import { createHash } from 'node:crypto';
import { GenseeError } from '../errors';
import { OP_ID_RE, isValidOpId } from '../state/operation';

/** A state document is small (runc: ~200 bytes); anything near this is not a runtime. */
export const STATE_MAX_BYTES = 64 * 1024;
/** the fd name the spec requires for the seccomp listener */
export const SECCOMP_FD_NAME = 'seccompFd';

export interface ContainerState {
  ociVersion: string;
  id: string;
  status: string;
  pid?: number;
  bundle?: string;
  annotations?: Record<string, string>;
}

export interface ContainerProcessState {
  ociVersion: string;
  fds: string[];
  /** the process that installed the filter (container init, or a `runc exec` process), as the runtime sees it */
  pid: number;
  metadata?: string;
  state: ContainerState;
}

const STATUSES = ['creating', 'created', 'running', 'stopped'];
/** runc's own container id rule is ^[\w+-.]+$; allow what the spec allows but keep it printable and bounded */
const CONTAINER_ID_RE = /^[\x21-\x7e]{1,1024}$/;

function bad(what: string): GenseeError {
  return new GenseeError('E_SCHEMA', `container process state: ${what}`);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Record<string, unknown>, k: string, where: string, max: number, optional = false): string | undefined {
  const v = o[k];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string') throw bad(`${where}${k} must be a string`);
  if (v.length > max || v.includes('\0')) throw bad(`${where}${k} is longer than ${max} characters or holds NUL`);
  return v;
}

function pidOf(o: Record<string, unknown>, k: string, where: string, optional = false): number | undefined {
  const v = o[k];
  if (v === undefined && optional) return undefined;
  if (!Number.isInteger(v) || (v as number) <= 0 || (v as number) > 0x3fffffff) throw bad(`${where}${k} must be a positive pid, got ${JSON.stringify(v)}`);
  return v as number;
}

/**
 * Parse and validate. Unknown keys are tolerated (the spec may grow; we
 * use none of them), every key we use is type- and size-checked.
 */
export function parseContainerProcessState(bytes: Buffer): ContainerProcessState {
  if (bytes.length > STATE_MAX_BYTES) throw new GenseeError('E_TOO_LARGE', `container process state is ${bytes.length} bytes (limit ${STATE_MAX_BYTES})`);
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new GenseeError('E_BAD_JSON', `container process state is not JSON: ${(e as Error).message}`);
  }
  if (!isObj(v)) throw bad('not a JSON object');
  const ociVersion = str(v, 'ociVersion', '', 64)!;
  if (!Array.isArray(v.fds) || v.fds.length === 0 || v.fds.length > 8 || !v.fds.every((f) => typeof f === 'string' && f.length <= 64)) {
    throw bad(`fds must name the passed fds (1-8 strings), got ${JSON.stringify(v.fds)?.slice(0, 100)}`);
  }
  const fds = v.fds as string[];
  // the addon keeps the first SCM_RIGHTS fd and closes any other: the seccomp fd must be that one
  if (fds[0] !== SECCOMP_FD_NAME) throw bad(`fds[0] must be "${SECCOMP_FD_NAME}" (got ${JSON.stringify(fds)})`);
  const pid = pidOf(v, 'pid', '')!;
  const metadata = str(v, 'metadata', '', 4096, true);
  if (!isObj(v.state)) throw bad('state must be an object');
  const s = v.state;
  const id = str(s, 'id', 'state.', 1024)!;
  if (!CONTAINER_ID_RE.test(id)) throw bad(`state.id ${JSON.stringify(id.slice(0, 80))} is empty or not printable ASCII`);
  const status = str(s, 'status', 'state.', 32)!;
  if (!STATUSES.includes(status)) throw bad(`state.status ${JSON.stringify(status)} is not one of ${STATUSES.join(', ')}`);
  const state: ContainerState = { ociVersion: str(s, 'ociVersion', 'state.', 64)!, id, status };
  const spid = pidOf(s, 'pid', 'state.', true);
  if (spid !== undefined) state.pid = spid;
  const bundle = str(s, 'bundle', 'state.', 4096, true);
  if (bundle !== undefined) state.bundle = bundle;
  if (s.annotations !== undefined) {
    if (!isObj(s.annotations) || !Object.values(s.annotations).every((a) => typeof a === 'string')) throw bad('state.annotations must map strings to strings');
    state.annotations = s.annotations as Record<string, string>;
  }
  const out: ContainerProcessState = { ociVersion, fds, pid, state };
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}

/**
 * `op=NAME` from the listener metadata (other `key=value` items, separated
 * by `;`, `,` or whitespace, are ignored). null when there is no `op=`.
 */
export function opFromMetadata(metadata: string | undefined): string | null {
  if (!metadata) return null;
  const ops = metadata
    .split(/[;,\s]+/)
    .filter((item) => item.startsWith('op='))
    .map((item) => item.slice(3));
  if (ops.length === 0) return null;
  if (ops.length > 1) throw new GenseeError('E_BAD_OP_ID', `listener metadata names more than one operation: ${JSON.stringify(metadata.slice(0, 200))}`);
  const op = ops[0];
  if (!isValidOpId(op)) throw new GenseeError('E_BAD_OP_ID', `bad operation id ${JSON.stringify(String(op).slice(0, 80))} in listener metadata: expected ${OP_ID_RE.source}`);
  return op;
}

/**
 * `policy=NAME` from the listener metadata: the listener serves the
 * container under --policy-dir's NAME.json (each container its own
 * operation unless `op=` names one). null when there is none.
 */
export function policyFromMetadata(metadata: string | undefined): string | null {
  if (!metadata) return null;
  const names = metadata
    .split(/[;,\s]+/)
    .filter((item) => item.startsWith('policy='))
    .map((item) => item.slice(7));
  if (names.length === 0) return null;
  if (names.length > 1) throw new GenseeError('E_SCHEMA', `listener metadata names more than one policy: ${JSON.stringify(metadata.slice(0, 200))}`);
  // the same alphabet as an operation id: a file name, never a path
  if (!isValidOpId(names[0])) throw new GenseeError('E_SCHEMA', `bad policy name ${JSON.stringify(String(names[0]).slice(0, 80))} in listener metadata: expected ${OP_ID_RE.source}`);
  return names[0];
}

/**
 * The longest default operation id: the operation's directory holds unix
 * sockets, and a sun_path holds 107 bytes. podman's, containerd's and
 * CRI's container ids are 64 hex characters, too long to use whole.
 */
export const DEFAULT_OP_ID_MAX = 40;

/**
 * "oci-<container id>" when that is a short valid id; else a sanitized
 * prefix of the container id (24 characters: podman's and crictl's short ids
 * are its first 12) plus a hash of the whole id.
 */
export function defaultOpId(containerId: string): string {
  const plain = `oci-${containerId}`;
  if (isValidOpId(plain) && plain.length <= DEFAULT_OP_ID_MAX) return plain;
  const hash = createHash('sha256').update(containerId).digest('hex').slice(0, 8);
  return `oci-${containerId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 24)}-${hash}`;
}

export function operationIdFor(s: ContainerProcessState): string {
  return opFromMetadata(s.metadata) ?? defaultOpId(s.state.id);
}
