// Client side of the supervisor socket. It authenticates the resolver before
// acting on anything it says: the socket's SO_PEERCRED pid and that pid's
// start time must equal the resolver identity in operation.json, and the
// Resolution's HMAC-SHA256 must verify under the operation key. A bad MAC is
// a deny (`unauthenticated_peer`), never a retry.
import * as net from 'node:net';
import * as path from 'node:path';
import { loadAddon } from '../addon';
import { readFrame, writeFrame } from '../protocol/framing';
import { decodeResolution } from '../protocol/codec';
import { verifyMac } from '../protocol/mac';
import type { Resolution } from '../protocol/types';
import type { ResolverIdentity } from '../state/operation';
import { readStartTimeTicks } from './subject';
import { fdOf } from './unixsock';

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

export async function submitFault(o: SubmitOptions): Promise<SubmitResult> {
  const deny = (detail: string): SubmitResult => ({
    resolution: { fault_id: o.faultId, action: 'deny', reason: 'unauthenticated_peer' },
    authenticated: false,
    detail,
  });
  const sock = net.createConnection(o.socketPath);
  sock.on('error', () => undefined);
  const timeoutMs = o.timeoutMs ?? 5000;
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(Object.assign(new Error(`connect ${o.socketPath}: timed out`), { code: 'ETIMEDOUT' })), timeoutMs);
      sock.once('connect', () => {
        clearTimeout(t);
        resolve();
      });
      sock.once('error', (e) => {
        clearTimeout(t);
        reject(e);
      });
    });
    if (o.resolver) {
      const cred = loadAddon().peerCred(fdOf(sock));
      if (cred.pid !== o.resolver.pid) return deny(`socket peer pid ${cred.pid} is not the resolver pid ${o.resolver.pid} of operation.json`);
      if (readStartTimeTicks(cred.pid) !== o.resolver.start_time_ticks) return deny(`resolver pid ${cred.pid} start time does not match operation.json`);
    }
    const reply = readFrame(sock, { idleTimeoutMs: timeoutMs });
    reply.catch(() => undefined);
    await writeFrame(sock, o.body);
    const frame = await reply;
    const d = decodeResolution(frame);
    if (!d.ok) return deny(`malformed resolution: ${d.detail}`);
    if (!verifyMac(o.key, d.resolution, d.mac)) return deny('resolution MAC does not verify under the operation key');
    if (d.resolution.fault_id !== o.faultId) {
      // a refusal of our frame before it parsed carries the resolver's own id;
      // anything but a deny for another fault id is not ours to act on
      if (d.resolution.action === 'deny') return { resolution: { ...d.resolution, fault_id: o.faultId }, authenticated: true, detail: `refused as ${d.resolution.fault_id}` };
      return deny(`resolution is for fault ${d.resolution.fault_id}, not ${o.faultId}`);
    }
    return { resolution: d.resolution, authenticated: true };
  } finally {
    sock.destroy();
  }
}
