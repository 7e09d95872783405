// The pause adapter: a paused call without a lease (the C fast path already
// answered the leased ones) is submitted as a CapabilityFault over the
// authenticated supervisor socket; the resolver's identity and MAC are
// verified; only then is the call answered. All of that happens in C
// (Notifier.setSupervisorClient: the notifier's thread hands the fault to the C
// client, whose thread answers the call); this file configures it, reports
// each answer, and records timeouts. Calls raised before the supervisor client was
// set come through handle() and take the same client from JavaScript. CONTINUE for continue/retry (the
// eBPF hook re-checks the kernel's own copy of the address), an errno for
// deny, delegate and timeout (REFUSAL_ERRNO). A call with no authenticated
// answer within the deadline is refused with ETIMEDOUT and the timeout is
// recorded in faults.jsonl.
import { submitFault } from '../resolver/client';
import { reportRefusal } from '../resolver/report';
import type { Resolution } from '../protocol/types';
import type { ResolverIdentity } from '../state/operation';
import { SupervisorAnswer, Notifier, PausedCall, PauseVerdict, REFUSAL_ERRNO } from './notifier';

export interface PauseAdapterOptions {
  notifier: Notifier;
  socketPath: string;
  operationId: string;
  key: Buffer;
  resolver: ResolverIdentity | null;
  /** policy fault_deadline_ms */
  deadlineMs: number;
  /** after each answer (for live output and stats) */
  onAnswer?: (call: PausedCall, outcome: PauseOutcome) => void;
}

export interface PauseOutcome {
  verdict: PauseVerdict;
  resolution: Resolution | null;
  /** 'answered' | 'timeout' | 'unauthenticated' | 'error' | 'gone' */
  how: 'answered' | 'timeout' | 'unauthenticated' | 'error' | 'gone';
  micros: number;
  detail?: string;
}

export function verdictFor(r: Resolution): PauseVerdict {
  switch (r.action) {
    case 'continue_already_authorized':
    case 'retry_after_lease':
      return 'continue';
    case 'delegate':
      return REFUSAL_ERRNO.delegate;
    default:
      return REFUSAL_ERRNO.deny;
  }
}

export class PauseAdapter {
  private readonly o: PauseAdapterOptions;
  readonly stats = { submitted: 0, continued: 0, refused: 0, timeouts: 0, unauthenticated: 0, errors: 0, gone: 0 };
  private readonly inflight = new Set<Promise<void>>();

  private idleWaiters: Array<() => void> = [];

  constructor(o: PauseAdapterOptions) {
    this.o = o;
    o.notifier.setSupervisorClient(
      {
        socketPath: o.socketPath,
        key: o.key,
        resolverPid: o.resolver ? o.resolver.pid : 0,
        resolverStart: o.resolver ? o.resolver.start_time_ticks : 0,
        deadlineMs: o.deadlineMs,
        errnos: { deny: REFUSAL_ERRNO.deny, delegate: REFUSAL_ERRNO.delegate, timeout: REFUSAL_ERRNO.timeout },
      },
      (call, a) => this.answered(call, a),
    );
  }

  /** Resolves when every call submitted so far is answered and reported. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.inflight.size) {
        await Promise.all([...this.inflight]);
        continue;
      }
      if (this.o.notifier.supervisorInflight() === 0) return;
      await new Promise<void>((r) => this.idleWaiters.push(r));
    }
  }

  /** A call answered in C through the supervisor client. */
  private answered(call: PausedCall, a: SupervisorAnswer): void {
    this.stats.submitted++;
    const how: PauseOutcome['how'] = !a.delivered ? 'gone' : a.status === 'ok' ? 'answered' : a.status;
    if (!a.delivered) this.stats.gone++;
    else if (a.verdict === 'continue') this.stats.continued++;
    else this.stats.refused++;
    if (a.status === 'timeout') {
      this.stats.timeouts++;
      this.reportTimeout(call);
    } else if (a.status === 'unauthenticated') this.stats.unauthenticated++;
    else if (a.status === 'error') this.stats.errors++;
    this.o.onAnswer?.(call, { verdict: a.verdict, resolution: null, how, micros: a.micros, detail: a.detail || undefined });
    if (this.o.notifier.supervisorInflight() === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** the timeout is evidence too (the resolver may still record the fault late) */
  private reportTimeout(call: PausedCall): void {
    void reportRefusal({
      socketPath: this.o.socketPath,
      operationId: this.o.operationId,
      key: this.o.key,
      resolver: this.o.resolver,
      code: 'timeout',
      detail: `paused ${call.syscall} ${call.protocol} ${call.address}:${call.port} by pid ${call.pid} (${call.faultId}) got no answer within ${this.o.deadlineMs} ms`,
    }).catch(() => undefined);
  }

  readonly handle = (call: PausedCall): void => {
    const p = this.run(call).finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  };

  private async run(call: PausedCall): Promise<void> {
    const t0 = process.hrtime.bigint();
    this.stats.submitted++;
    let answered = false;
    const answer = (verdict: PauseVerdict, how: PauseOutcome['how'], resolution: Resolution | null, detail?: string) => {
      if (answered) return;
      answered = true;
      const delivered = this.o.notifier.respond(call.id, verdict);
      if (!delivered) this.stats.gone++;
      else if (verdict === 'continue') this.stats.continued++;
      else this.stats.refused++;
      this.o.onAnswer?.(call, { verdict, resolution, how: delivered ? how : 'gone', micros: Number(process.hrtime.bigint() - t0) / 1000, detail });
    };
    const timer = setTimeout(() => {
      this.stats.timeouts++;
      answer(REFUSAL_ERRNO.timeout, 'timeout', null, `no authenticated answer within ${this.o.deadlineMs} ms`);
      this.reportTimeout(call);
    }, this.o.deadlineMs);
    try {
      if (!call.fault) throw new Error(`paused call ${call.faultId} carries no fault`);
      const res = await submitFault({
        socketPath: this.o.socketPath,
        body: call.fault,
        faultId: call.faultId,
        key: this.o.key,
        resolver: this.o.resolver,
        timeoutMs: this.o.deadlineMs,
      });
      if (!res.authenticated) {
        this.stats.unauthenticated++;
        answer(REFUSAL_ERRNO.deny, 'unauthenticated', res.resolution, res.detail);
      } else {
        answer(verdictFor(res.resolution), 'answered', res.resolution);
      }
    } catch (e) {
      // resolver gone or unreachable: fail closed
      this.stats.errors++;
      answer(REFUSAL_ERRNO.deny, 'error', null, (e as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }
}
