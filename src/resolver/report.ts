// A trusted client that refuses its own input (a symlinked or invalid fault
// file) still reports it, so the refusal is recorded in faults.jsonl. The
// report is a CapabilityFault carrying only client_refusal: the resolver
// records it and answers deny; it can never grant anything.
import { randomBytes } from 'node:crypto';
import { encodeClientRefusal } from '../protocol/codec';
import type { ResolverIdentity } from '../state/operation';
import { submitFault } from './client';

export interface RefusalReport {
  socketPath: string;
  operationId: string;
  key: Buffer;
  resolver: ResolverIdentity | null;
  code: string;
  detail: string;
}

export async function reportRefusal(o: RefusalReport): Promise<void> {
  const faultId = `client-refusal-${randomBytes(6).toString('hex')}`;
  await submitFault({
    socketPath: o.socketPath,
    body: encodeClientRefusal(o.operationId, faultId, o.code, o.detail),
    faultId,
    key: o.key,
    resolver: o.resolver,
    timeoutMs: 2000,
  });
}
