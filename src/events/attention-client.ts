// How attention reaches events.jsonl and leaves it again: the supervisor is
// the one writer of that log, so both go to it over control.sock
// (authenticated both ways, like `gensee lease add`). `gensee watch` raises;
// a person clears (`gensee attention clear`). control.sock admits only an
// operator (root or the operation's owner, outside the operation's cgroup):
// the workload can do neither.
import { controlRequestTo } from '../envelope/control';
import type { Signature } from './types';

export interface AttentionReport {
  signature: Signature;
  /** one sentence; the supervisor redacts it */
  detail: string;
  /** events.jsonl seqs of the evidence (at most 64 are kept) */
  evidence: number[];
  /** evidence in other logs, as "LOG:SEQ" (e.g. "counters:12"), or the agent's lines as "agent:LINE:SHA256" */
  refs?: string[];
  /** where "agent:" refs point: the --agent-events path, or "-" for stdin */
  agent_events?: string;
}

/** Raise attention; resolves to the attention line's seq in events.jsonl. */
export async function reportAttention(stateDir: string, op: string, a: AttentionReport): Promise<number> {
  const r = await controlRequestTo(stateDir, op, {
    schema: 1,
    command: 'attention_raise',
    signature: a.signature,
    detail: a.detail,
    evidence: a.evidence,
    refs: a.refs ?? [],
    agent_events: a.agent_events ?? '',
  });
  return Number(r.seq ?? 0);
}

export interface Cleared {
  /** the attention_cleared line's seq, 0 when none was in force */
  seq: number;
  /** the attention lines it cleared */
  cleared: number[];
}

/** A person clears the attention in force: who (a name) and why (a note) are recorded with the peer's uid. */
export async function clearAttention(stateDir: string, op: string, who: { person: string; note: string }): Promise<Cleared> {
  const r = await controlRequestTo(stateDir, op, { schema: 1, command: 'attention_clear', by: 'person', person: who.person, note: who.note });
  return { seq: Number(r.seq ?? 0), cleared: Array.isArray(r.cleared) ? (r.cleared as number[]) : [] };
}
