// The resolver: validate → write-ahead fault line → subject check → route by
// effect → backend → resolution line (durable) → signed answer. Every fault
// and every refusal lands in faults.jsonl; nothing is answered before its
// resolution line is durable.
import { EventEmitter } from 'node:events';
import type { DenyReason } from '../errors';
import type { Fault, Resolution } from '../protocol/types';
import { effectType } from '../protocol/types';
import { faultToJson, resolutionToJson } from '../protocol/json';
import { computeMac } from '../protocol/mac';
import type { ChainedLog } from '../evidence/chain';
import type { NetworkBackend } from '../backends/network';
import { checkSubject } from './subject';

export interface PeerInfo {
  pid: number;
  uid: number;
  gid: number;
}

export interface FaultContext {
  /** how the fault reached us */
  via: 'socket' | 'cgroup_hook' | 'inproc';
  peer?: PeerInfo;
}

export interface ResolverScope {
  id: string;
  cgroup: string;
  peers: readonly string[];
  /** false once the operation is closed */
  active: () => boolean;
}

export interface ResolverOptions {
  scope: ResolverScope;
  key: Buffer;
  faults: ChainedLog;
  network: NetworkBackend;
}

export interface ResolvedEvent {
  fault: Fault;
  resolution: Resolution;
  ctx: FaultContext;
  micros: number;
}

/**
 * Emits 'resolved' (ResolvedEvent) and 'refused' ({reason, detail, ctx}) for
 * live output; the evidence is in faults.jsonl either way.
 */
export class Resolver extends EventEmitter {
  readonly scope: ResolverScope;
  private readonly key: Buffer;
  private readonly faults: ChainedLog;
  readonly network: NetworkBackend;
  readonly stats = { faults: 0, continue: 0, retry: 0, delegate: 0, deny: 0, refused: 0 };
  /** resolves between their fault line and their resolution line (group-commit hint) */
  deciding = 0;

  constructor(o: ResolverOptions) {
    super();
    this.scope = o.scope;
    this.key = o.key;
    this.faults = o.faults;
    this.network = o.network;
  }

  mac(r: Resolution): Buffer {
    return computeMac(this.key, r);
  }

  /** onLogged: called once the resolution line is queued (before it is durable) */
  async resolve(fault: Fault, ctx: FaultContext, onLogged?: () => void): Promise<Resolution> {
    const t0 = process.hrtime.bigint();
    this.stats.faults++;
    // write-ahead: the fault line is in the file before anything is decided;
    // it becomes durable with the resolution line's fdatasync (one for both)
    const written = this.faults.appendLazy({
      kind: 'fault',
      fault_id: fault.fault_id,
      via: ctx.via,
      peer: ctx.peer ?? null,
      fault: faultToJson(fault),
    });
    let r: Resolution;
    this.deciding++;
    try {
      r = { fault_id: fault.fault_id, ...(await this.decide(fault)) };
    } catch (e) {
      r = { fault_id: fault.fault_id, action: 'deny', reason: 'backend_error' };
      this.emit('backend_error', e);
    } finally {
      this.deciding--;
    }
    const durable = Promise.all([
      written,
      this.faults.append({
        kind: 'resolution',
        fault_id: fault.fault_id,
        resolution: resolutionToJson(r),
        ...(r.action === 'deny' && r.reason === 'backend_error' ? { detail: 'backend failed; see supervisor log' } : {}),
      }),
    ]);
    onLogged?.();
    await durable;
    const key = r.action === 'continue_already_authorized' ? 'continue' : r.action === 'retry_after_lease' ? 'retry' : r.action;
    this.stats[key]++;
    this.emit('resolved', { fault, resolution: r, ctx, micros: Number(process.hrtime.bigint() - t0) / 1000 } satisfies ResolvedEvent);
    return r;
  }

  private async decide(f: Fault): Promise<Omit<Resolution, 'fault_id'>> {
    const deny = (reason: DenyReason) => ({ action: 'deny' as const, reason });
    if (f.operation_id !== this.scope.id) return deny('unknown_operation');
    if (!this.scope.active()) return deny('operation_not_active');
    const bad = checkSubject(f.subject, this.scope);
    if (bad) return deny(bad);
    switch (effectType(f.effect)) {
      case 'network':
        return this.network.resolve(f.effect.network!);
      default:
        // No backend is connected for this effect type: never network
        // authority, never implicitly allowed.
        return deny('capability_fault_backend_unavailable');
    }
  }

  /** Record something refused before it became a fault (bad frame, bad peer). */
  async refuse(reason: DenyReason, detail: string, ctx: FaultContext, faultId = ''): Promise<void> {
    this.stats.refused++;
    await this.faults.append({ kind: 'refusal', fault_id: faultId, reason, detail: detail.slice(0, 300), via: ctx.via, peer: ctx.peer ?? null });
    this.emit('refused', { reason, detail, ctx });
  }
}
