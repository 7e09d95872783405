// Client side of the supervisor socket. The bytes move, and the resolver is
// authenticated, on the addon's client thread (addon/sup_client.c) — the same
// code the pause adapter uses from C: the socket's SO_PEERCRED pid and that
// pid's start time must equal the resolver identity in operation.json, and
// the Resolution's HMAC-SHA256 must verify under the operation key (the
// canonical input of src/protocol/mac.ts) before anything it says is acted
// on. A bad MAC is a deny (`unauthenticated_peer`), never a retry.
import * as os from 'node:os';
import * as path from 'node:path';
import { loadAddon } from '../addon';
import type { NativeSubmitResult } from '../addon';
import { resolutionFromFields } from '../protocol/codec';
import type { Resolution } from '../protocol/types';
import type { ResolverIdentity } from '../state/operation';
export interface SubmitOptions {
  socketPath: string;
  /** the encoded CapabilityFault */
  body: Uint8Array;
  faultId: string;
  key: Uint8Array;
  /** expected resolver identity (operation.json); null skips the check (tests only) */
  resolver: ResolverIdentity | null;
  timeoutMs?: number;
}

export interface SubmitResult {
  resolution: Resolution;
  /** false when the answer failed authentication: resolution is then a deny */
  authenticated: boolean;
  detail?: string;
}


/** The op directory that holds a supervisor socket (…/network-operations/<OP>/supervisor.sock). */
export function opOfSocket(socketPath: string): { stateDir: string; op: string } {
  const dir = path.dirname(path.resolve(socketPath));
  return { op: path.basename(dir), stateDir: path.dirname(path.dirname(dir)) };
}

/**
 * No answer came: the socket is missing or refuses (ENOENT, ECONNREFUSED),
 * the connection was reset or ended before an answer (ECONNRESET), or the
 * deadline passed (ETIMEDOUT). Nothing was decided: the caller fails closed.
 */
export class ResolverUnreachable extends Error {
  /** errno name, e.g. ECONNREFUSED */
  readonly code: string;
  readonly errno: number;
  readonly socketPath: string;
  /** what the client saw, e.g. "the resolver closed the connection without an answer" */
  readonly detail: string;
  constructor(socketPath: string, code: string, errno: number, detail: string) {
    super(`${socketPath}: ${detail}`);
    this.name = 'ResolverUnreachable';
    this.code = code;
    this.errno = errno;
    this.socketPath = socketPath;
    this.detail = detail;
  }
}

function errnoName(n: number): string {
  for (const [name, v] of Object.entries(os.constants.errno)) if (v === n) return name;
  return 'EIO';
}

/**
 * Submit one encoded CapabilityFault and wait for its authenticated
 * Resolution. Rejects with ResolverUnreachable (code ETIMEDOUT,
 * ECONNREFUSED, ENOENT, ...) when no answer came: the caller fails closed.
 */
export async function submitFault(o: SubmitOptions): Promise<SubmitResult> {
  const deny = (detail: string): SubmitResult => ({
    resolution: { fault_id: o.faultId, action: 'deny', reason: 'unauthenticated_peer' },
    authenticated: false,
    detail,
  });
  const submit = loadAddon().submit;
  const r = await new Promise<NativeSubmitResult>((resolve) =>
    submit(
      {
        socketPath: o.socketPath,
        body: o.body,
        faultId: o.faultId,
        key: o.key,
        expectPid: o.resolver ? o.resolver.pid : 0,
        expectStart: o.resolver ? o.resolver.start_time_ticks : 0,
        timeoutMs: o.timeoutMs ?? 5000,
      },
      resolve,
    ),
  );
  if (r.status === 'timeout' || r.status === 'error') {
    const code = r.status === 'timeout' ? 'ETIMEDOUT' : errnoName(r.errno);
    throw new ResolverUnreachable(o.socketPath, code, r.errno, r.detail);
  }
  if (r.status === 'unauthenticated' || !r.resolution) return deny(r.detail);
  const d = resolutionFromFields(r.resolution);
  if (!d.ok) return deny(`malformed resolution: ${d.detail}`);
  if (d.resolution.fault_id !== o.faultId) {
    // the addon lets only a deny for another fault id through: the
    // resolver's refusal of our frame before it parsed, under its own id
    return { resolution: { ...d.resolution, fault_id: o.faultId }, authenticated: true, detail: `refused as ${d.resolution.fault_id}` };
  }
  return { resolution: d.resolution, authenticated: true };
}
