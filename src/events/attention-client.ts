// How `gensee watch` puts its findings into events.jsonl: the supervisor is
// the one writer of that log, so attention goes to it over control.sock
// (authenticated both ways, like `gensee lease add`).
import { controlRequestTo } from '../counters/control';
import type { ClearedBy, Signature } from './types';

export interface AttentionReport {
  signature: Signature;
  /** one sentence; the supervisor redacts it */
  detail: string;
  /** events.jsonl seqs of the evidence (at most 64 are kept) */
  evidence: number[];
  /** evidence in other logs, as "LOG:SEQ" (e.g. "counters:12") */
  refs?: string[];
}

/** Raise attention; resolves to the attention line's seq in events.jsonl. */
export async function reportAttention(stateDir: string, op: string, a: AttentionReport): Promise<number> {
  const r = await controlRequestTo(stateDir, op, { schema: 1, command: 'attention_raise', signature: a.signature, detail: a.detail, evidence: a.evidence, refs: a.refs ?? [] });
  return Number(r.seq ?? 0);
}

/** Clear the attention in force (a person's message); resolves to the attention_cleared line's seq, 0 when none was in force. */
export async function clearAttention(stateDir: string, op: string, by: Extract<ClearedBy, 'person_message'> = 'person_message'): Promise<number> {
  const r = await controlRequestTo(stateDir, op, { schema: 1, command: 'attention_clear', by });
  return Number(r.seq ?? 0);
}
