// From an operation's own log lines to the watchdog's calls (no I/O):
//   events.jsonl    boundary          → boundary(seq, event)
//                   attention         → attentionLogged(seq, signature): open until cleared
//                   attention_cleared → clearedInLog(by, person, note): what a person or
//                                       the operation's end cleared (the only clearing)
//   faults.jsonl    fault             → remembered: fault_id → its network target
//                   resolution        retry_after_lease → leaseIssued(lease target, its generation)
//                                     continue_already_authorized → leaseIssued(the fault's target)
//                                     delegate → delegated(the fault's target): its refusal leaves the trail
//                   lease_added       by operator (`gensee lease add` without a supervisor) → leaseIssued
//   counters.jsonl  allow             → reached(destination, "counters:SEQ", generation)
//                   generation        lease_added (the resolver), operator_lease by an operator → leaseIssued;
//                                     operator_lease by "external" (a lease found in the kernel
//                                     map and adopted: nobody issued it) covers NOTHING, and
//                                     → leaseAdopted: no generation covers that target's reach;
//                                     a policy generation → policyChanged
// Lines read together (one poll of the three files) are fed in the order
// their writers appended them (`at`), so a refusal and the lease answering
// it keep their order whichever file was read first.
import type { Output, Watchdog } from './signatures';
import type { BoundaryEvent, ClearedBy, Signature } from '../events/types';

export type WatchedLog = 'events' | 'faults' | 'counters';

export interface LogLine {
  log: WatchedLog;
  /** the parsed line */
  v: Record<string, unknown>;
}

const POLICY_REASONS: ReadonlySet<string> = new Set(['start', 'restart', 'policy_change', 'policy_apply']);
/** fault ids remembered for their targets (a resolution follows its fault within one deadline) */
const FAULTS_CAP = 4096;
/** ties in `at`: a refusal before the lease that answers it, counters (read after the fact) last */
const LOG_ORDER: Record<WatchedLog, number> = { events: 0, faults: 1, counters: 2 };

/** `host:port` or `[v6]:port`, as boundary events name a destination */
export function destination(v: unknown): string | null {
  if (v === null || typeof v !== 'object') return null;
  const d = v as Record<string, unknown>;
  if (typeof d.address !== 'string' || typeof d.port !== 'number') return null;
  const v6 = d.family === 'ipv6' || d.address.includes(':');
  return v6 ? `[${d.address}]:${d.port}` : `${d.address}:${d.port}`;
}

/** order lines read in one poll as they were appended (stable; `at` is gensee's own, ISO 8601 UTC) */
export function appendOrder(lines: LogLine[]): LogLine[] {
  const at = (l: LogLine) => (typeof l.v.at === 'string' ? l.v.at : '');
  return lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => {
      const x = at(a.l);
      const y = at(b.l);
      if (x !== y) return x < y ? -1 : 1;
      if (a.l.log !== b.l.log) return LOG_ORDER[a.l.log] - LOG_ORDER[b.l.log];
      return a.i - b.i;
    })
    .map((x) => x.l);
}

export class LogFeed {
  private readonly wd: Watchdog;
  private readonly faultTargets = new Map<string, string>();

  constructor(wd: Watchdog) {
    this.wd = wd;
  }

  line(l: LogLine, now: number): Output[] {
    const v = l.v;
    const seq = typeof v.seq === 'number' ? v.seq : 0;
    switch (l.log) {
      case 'events':
        if (v.type === 'boundary' && v.event && typeof v.event === 'object') {
          const ev = v.event as Partial<BoundaryEvent>;
          if (typeof ev.kind === 'string') return this.wd.boundary(seq, { kind: ev.kind, ...(typeof ev.target === 'string' ? { target: ev.target } : {}) }, now);
        }
        if (v.type === 'attention' && typeof v.signature === 'string' && seq > 0) return this.wd.attentionLogged(seq, v.signature as Signature);
        if (v.type === 'attention_cleared' && (v.by === 'person' || v.by === 'operation_stopped')) {
          return this.wd.clearedInLog(v.by as ClearedBy, {
            ...(typeof v.person === 'string' ? { person: v.person } : {}),
            ...(typeof v.note === 'string' ? { note: v.note } : {}),
          });
        }
        return [];
      case 'faults':
        return this.fault(v, now);
      case 'counters':
        return this.counter(v, seq, now);
    }
  }

  private fault(v: Record<string, unknown>, now: number): Output[] {
    if (v.kind === 'fault' && typeof v.fault_id === 'string') {
      const effect = (v.fault as { effect?: { network?: unknown } } | undefined)?.effect;
      const t = destination(effect?.network);
      if (t) {
        this.faultTargets.set(v.fault_id, t);
        if (this.faultTargets.size > FAULTS_CAP) this.faultTargets.delete(this.faultTargets.keys().next().value as string);
      }
      return [];
    }
    if (v.kind === 'resolution' && typeof v.fault_id === 'string') {
      const r = v.resolution as { action?: string; lease?: { generation?: unknown } } | undefined;
      const known = this.faultTargets.get(v.fault_id);
      this.faultTargets.delete(v.fault_id);
      if (r?.action === 'retry_after_lease') {
        const t = destination(r.lease) ?? known;
        const g = r.lease?.generation;
        if (t) return this.wd.leaseIssued(t, now, typeof g === 'number' ? g : undefined);
      } else if (r?.action === 'continue_already_authorized' && known) {
        return this.wd.leaseIssued(known, now);
      } else if (r?.action === 'delegate' && known) {
        // a hook's refusal answered with a delegation: the executor reaches the target, not a defeat
        return this.wd.delegated(known, now);
      }
      return [];
    }
    if (v.kind === 'lease_added' && v.by === 'operator') {
      const lease = v.lease as { generation?: unknown } | undefined;
      const t = destination(lease);
      if (t) return this.wd.leaseIssued(t, now, typeof lease?.generation === 'number' ? lease.generation : undefined);
    }
    return [];
  }

  private counter(v: Record<string, unknown>, seq: number, now: number): Output[] {
    const g = typeof v.generation === 'number' ? v.generation : undefined;
    if (v.kind === 'allow') {
      const t = destination(v);
      if (t && typeof v.delta === 'number' && v.delta > 0) return this.wd.reached(t, `counters:${seq}`, now, g);
      return [];
    }
    if (v.kind === 'generation' && typeof v.reason === 'string') {
      if (POLICY_REASONS.has(v.reason)) return this.wd.policyChanged(now, g);
      const t = destination(v);
      if (!t) return [];
      if (v.reason === 'lease_added') return this.wd.leaseIssued(t, now, g);
      // by: the control peer ({pid, uid}) or "operator"; "external" is a
      // lease adopted from the kernel map that no resolution or command issued
      if (v.reason === 'operator_lease' && v.by === 'external') return this.wd.leaseAdopted(t, now);
      if (v.reason === 'operator_lease' && v.by !== undefined) return this.wd.leaseIssued(t, now, g);
    }
    return [];
  }
}
