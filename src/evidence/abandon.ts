// Faults a resolver died with. A fault line is written ahead of its decision;
// a resolver killed before the resolution line leaves that fault open. It was
// never answered (an answer waits for its durable resolution line), so
// nothing was granted by it, but the log must say what became of it. Whoever
// takes the operation over next — a restarted supervisor, `gensee stop`, the
// next `gensee run` of the same operation — closes each open fault with a
// resolution line through the same chain: deny, reason `abandoned`, and why.
// `gensee verify` then passes and counts the abandoned faults.
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { verifyLog } from './verify';
import type { ChainedLog } from './chain';
import type { LeaseIntent } from '../backends/network';

/** why a fault was abandoned, as the resolution line's `abandoned` field says */
export type AbandonCause = 'resolver_died' | 'operation_stopped' | 'evidence_failed';

export interface Abandoned {
  /** fault ids closed, in log order */
  faults: string[];
  /**
   * lease_intent lines of those faults: leases that may be in the kernel
   * with no resolution behind them. The caller removes them (fail closed).
   */
  intents: LeaseIntent[];
}

/**
 * Close every open fault of log with an `abandoned` resolution (durable on
 * return). only: just these (a takeover's carried faults whose call never
 * came again); except: all but these (the faults a takeover carries over).
 */
export async function closeOpenFaults(log: ChainedLog, cause: AbandonCause, sel: { only?: ReadonlySet<string>; except?: ReadonlySet<string> } = {}): Promise<Abandoned> {
  await log.flushNow();
  const rep = await verifyLog(log.path, { pairFaults: true });
  const open = rep.problems
    .filter((p) => p.kind === 'unresolved_fault' && p.fault_id !== undefined)
    .map((p) => p.fault_id!)
    .filter((id) => (!sel.only || sel.only.has(id)) && !sel.except?.has(id));
  let ticket = -1;
  for (const id of open) {
    ticket = log.appendTicket(
      {
        kind: 'resolution',
        fault_id: id,
        resolution: { fault_id: id, action: 'deny', reason: 'abandoned' },
        abandoned: cause,
        detail: cause === 'resolver_died'
          ? 'the resolver died between this fault line and its resolution; no answer was sent'
          : cause === 'evidence_failed'
            ? 'the evidence log failed (a disk error) before this fault\'s resolution was durable: no answer was sent, the call was denied, and any lease it announced was removed from the kernel at once'
            : 'the operation was stopped with this fault open; no answer was sent',
      },
      { sync: false },
    );
  }
  if (ticket >= 0) await log.flushNow();
  return { faults: open, intents: open.length ? await intentsOf(log.path, new Set(open)) : [] };
}

/** the lease_intent lines of these faults */
export async function intentsOf(file: string, ids: ReadonlySet<string>): Promise<LeaseIntent[]> {
  const out: LeaseIntent[] = [];
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.includes('"lease_intent"')) continue;
    try {
      const v = JSON.parse(line) as { kind?: string; fault_id?: string; lease?: LeaseIntent };
      if (v.kind === 'lease_intent' && v.fault_id !== undefined && ids.has(v.fault_id) && v.lease) out.push(v.lease);
    } catch {
      /* a torn or edited line: verify reports it */
    }
  }
  return out;
}
