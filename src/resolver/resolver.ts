// The resolver: validate → write-ahead fault line → subject check → route by
// effect → backend → resolution line (durable) → signed answer. Every fault
// and every refusal lands in faults.jsonl; nothing is answered before its
// resolution line is durable.
import { EventEmitter } from 'node:events';
import type { DenyReason } from '../errors';
import type { Fault, Lease, Resolution } from '../protocol/types';
import { effectType } from '../protocol/types';
import { faultToJson, resolutionToJson } from '../protocol/json';
import { computeMac } from '../protocol/mac';
import type { ChainedLog } from '../evidence/chain';
import type { NetworkBackend, LeaseIntent } from '../backends/network';
import { checkSubject } from './subject';
import { ExecutorBackend } from '../backends/executor';

export interface PeerInfo {
  pid: number;
  uid: number;
  gid: number;
}

export interface FaultContext {
  /** how the fault reached us */
  via: 'socket' | 'cgroup_hook' | 'inproc';
  peer?: PeerInfo;
  /** which gensee socket, when via is socket (default supervisor.sock) */
  socket?: 'supervisor.sock' | 'control.sock' | 'events.sock';
  /** the executor tool call whose cgroup raised the fault (a hook refusal): named on the fault line */
  tool?: { tool_id: string; call_id: string };
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
  /** for a delegation to an executor: the tool that takes the effect over */
  delegateTool?: string;
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
  private readonly executor: ExecutorBackend;
  readonly stats = { faults: 0, continue: 0, retry: 0, delegate: 0, deny: 0, refused: 0 };

  constructor(o: ResolverOptions) {
    super();
    this.scope = o.scope;
    this.key = o.key;
    this.faults = o.faults;
    this.network = o.network;
    this.executor = new ExecutorBackend(() => o.network.currentPolicy);
  }

  mac(r: Resolution): Buffer {
    return computeMac(this.key, r);
  }

  /** the fault log (the socket server answers once a line of it is durable) */
  get log(): ChainedLog {
    return this.faults;
  }

  /** Resolve and return once the resolution line is durable. */
  async resolve(fault: Fault, ctx: FaultContext): Promise<Resolution> {
    const r = await this.resolveTicket(fault, ctx);
    await r.durable;
    return r.resolution;
  }

  /**
   * Resolve up to the resolution line being written; `ticket` is that line's
   * ticket in the fault log, `durable` settles once it is on stable storage
   * (absent with deferSync). No answer may leave before then: the socket
   * server hands the ticket to the addon, which sends the answer right after
   * the covering fdatasync. The 'resolved' event (live output) is emitted
   * as the line is written.
   * deferSync: the line (and the request for its fdatasync) waits until
   * every request that arrived together has its line: before the event
   * loop's next turn, one write and one sync for all of them.
   */
  async resolveTicket(
    fault: Fault,
    ctx: FaultContext,
    opts: { deferSync?: boolean } = {},
  ): Promise<{ resolution: Resolution; ticket: number; durable?: Promise<void> }> {
    const t0 = process.hrtime.bigint();
    this.stats.faults++;
    // write-ahead: the fault line precedes everything decided about it; it
    // shares the write(2) of the next line (a lease_intent or the
    // resolution) and becomes durable with its fdatasync (one for both)
    this.faults.appendTicket(
      {
        kind: 'fault',
        fault_id: fault.fault_id,
        via: ctx.via,
        peer: ctx.peer ?? null,
        ...(ctx.tool ? { tool_id: ctx.tool.tool_id, call_id: ctx.tool.call_id } : {}),
        fault: faultToJson(fault),
      },
      false,
      true,
    );
    let r: Resolution;
    let delegateTool: string | undefined;
    try {
      const { delegate_tool, ...d } = await this.decide(fault);
      delegateTool = delegate_tool;
      r = { fault_id: fault.fault_id, ...d };
    } catch (e) {
      r = { fault_id: fault.fault_id, action: 'deny', reason: 'backend_error' };
      this.emit('backend_error', e);
    }
    const ticket = this.faults.appendTicket(
      {
        kind: 'resolution',
        fault_id: fault.fault_id,
        resolution: resolutionToJson(r),
        ...(delegateTool ? { delegate_tool: delegateTool } : {}),
        ...(r.action === 'deny' && r.reason === 'backend_error' ? { detail: 'backend failed; see supervisor log' } : {}),
      },
      true,
      // with deferSync it is written, and its fdatasync asked for, once
      // every request that arrived together has its line: before the event
      // loop's next turn (one write and one sync for the batch)
      opts.deferSync === true,
    );
    // counted and announced as the line is written (a summary taken right
    // after the answer must include it; the live output needs no wake-up of
    // its own per fdatasync); the answer itself waits for durability
    const key = r.action === 'continue_already_authorized' ? 'continue' : r.action === 'retry_after_lease' ? 'retry' : r.action;
    this.stats[key]++;
    this.emit('resolved', { fault, resolution: r, ctx, delegateTool, micros: Number(process.hrtime.bigint() - t0) / 1000 } satisfies ResolvedEvent);
    // socket requests (deferSync) are answered by the addon once durable: no JS waiter
    const durable = opts.deferSync ? undefined : this.faults.whenDurable(ticket);
    return { resolution: r, ticket, durable };
  }

  /**
   * Record a fault another trusted component already decided (the
   * executor refusing a tool's write at call time): its fault line and its
   * resolution line, durable, announced like any resolution. Nothing is
   * answered: the component that decided has answered already.
   */
  async recordDecided(fault: Fault, r: Resolution, ctx: FaultContext): Promise<void> {
    this.stats.faults++;
    this.faults.appendTicket({ kind: 'fault', fault_id: fault.fault_id, via: ctx.via, peer: ctx.peer ?? null, fault: faultToJson(fault) }, false, true);
    const ticket = this.faults.appendTicket({ kind: 'resolution', fault_id: fault.fault_id, resolution: resolutionToJson(r) }, true);
    const key = r.action === 'continue_already_authorized' ? 'continue' : r.action === 'retry_after_lease' ? 'retry' : r.action;
    this.stats[key]++;
    this.emit('resolved', { fault, resolution: r, ctx, micros: 0 } satisfies ResolvedEvent);
    await this.faults.whenDurable(ticket);
  }

  private async decide(f: Fault): Promise<Omit<Resolution, 'fault_id'> & { delegate_tool?: string }> {
    const deny = (reason: DenyReason) => ({ action: 'deny' as const, reason });
    if (f.operation_id !== this.scope.id) return deny('unknown_operation');
    if (!this.scope.active()) return deny('operation_not_active');
    const bad = checkSubject(f.subject, this.scope);
    if (bad) return deny(bad);
    switch (effectType(f.effect)) {
      case 'network':
        return this.network.resolve(f.effect.network!, { intent: (l) => this.intend(f.fault_id, l) });
      case 'application':
        // a tool's write the executor is about to perform (src/backends/executor.ts)
        return this.executor.resolve(f);
      default:
        // No backend is connected for this effect type: never network
        // authority, never implicitly allowed.
        return deny('capability_fault_backend_unavailable');
    }
  }

  /**
   * The lease_intent line: durable before the lease enters the kernel, so no
   * kernel lease is ever without a record. A resolver that dies before the
   * resolution line leaves the intent with an open fault; whoever takes over
   * closes the fault as abandoned and removes the lease (src/evidence/abandon.ts).
   */
  private async intend(faultId: string, lease: LeaseIntent): Promise<void> {
    await this.intendAll(faultId, [lease]);
  }

  /** lease_intent lines for several leases, made durable by one fdatasync */
  private async intendAll(faultId: string, leases: LeaseIntent[]): Promise<void> {
    let ticket = -1;
    for (const lease of leases) ticket = this.faults.appendTicket({ kind: 'lease_intent', fault_id: faultId, lease }, false, true);
    if (ticket >= 0) await this.faults.whenDurable(ticket);
  }

  /**
   * A DNS answer for a name a host rule covers (src/dns/service.ts; every
   * forwarded question, NXDOMAIN and empty answers included): the
   * question (dns_query, written ahead), a durable lease_intent per lease,
   * each lease installed and read back, then the answer line (dns_answer:
   * the name, the CNAME chain, the addresses, the leases), durable before
   * the answer reaches the workload. A resolver that dies in between leaves
   * the question open: whoever takes over closes it as abandoned and
   * removes its leases (src/evidence/abandon.ts).
   */
  async resolveName(
    q: { name: string; qtype: string; rcode?: string; truncated?: boolean; chain: string[]; addresses: { family: string; address: string; ttl: number }[]; rule: string; peer: string },
    install: (intents: (ls: LeaseIntent[]) => Promise<void>) => Promise<Lease[]>,
  ): Promise<Lease[]> {
    const faultId = `dns-${process.pid}-${++this.dnsSeq}`;
    this.faults.appendTicket({ kind: 'dns_query', fault_id: faultId, name: q.name, qtype: q.qtype, rule: q.rule, peer: q.peer }, false, true);
    let leases: Lease[] = [];
    let error: string | null = null;
    try {
      leases = await install((ls) => this.intendAll(faultId, ls));
    } catch (e) {
      error = (e as Error).message;
      this.emit('backend_error', e);
    }
    const t = this.faults.appendTicket(
      {
        kind: 'dns_answer',
        fault_id: faultId,
        name: q.name,
        ...(q.rcode !== undefined ? { rcode: q.rcode } : {}),
        ...(q.truncated ? { truncated: true } : {}),
        chain: q.chain,
        addresses: q.addresses,
        leases: leases.map((l) => ({ ...l, expires_at_boot_ns: String(l.expires_at_boot_ns) })),
        ...(error ? { error } : {}),
      },
      true,
    );
    await this.faults.whenDurable(t);
    if (error) throw new Error(`DNS answer for ${q.name}: leases not installed: ${error}`);
    return leases;
  }

  private dnsSeq = 0;

  /** A DNS question the stub refused or failed (REFUSED, SERVFAIL, FORMERR): recorded, durable. */
  recordDnsRefusal(r: { name: string | null; qtype: string | null; rcode: string; control: string; detail: string; peer: string }): Promise<void> {
    const t = this.faults.appendTicket({ kind: 'dns_refused', fault_id: `dnsr-${process.pid}-${++this.dnsSeq}`, ...r, detail: r.detail.slice(0, 300) }, true);
    return this.faults.whenDurable(t);
  }

  /** Record something refused before it became a fault (bad frame, bad peer). */
  async refuse(reason: DenyReason, detail: string, ctx: FaultContext, faultId = ''): Promise<void> {
    await this.refuseTicket(reason, detail, ctx, faultId).durable;
  }

  /** refuse(), returning the refusal line's ticket at once (see resolveTicket). */
  refuseTicket(reason: DenyReason, detail: string, ctx: FaultContext, faultId = ''): { ticket: number; durable: Promise<void> } {
    this.stats.refused++;
    const ticket = this.faults.appendTicket({ kind: 'refusal', fault_id: faultId, reason, detail: detail.slice(0, 300), via: ctx.via, peer: ctx.peer ?? null }, true);
    const durable = this.faults.whenDurable(ticket).then(() => {
      this.emit('refused', { reason, detail, ctx, faultId });
    });
    return { ticket, durable };
  }
}
