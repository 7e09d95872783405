// One readable line per fault and resolution (colours only when the stream
// they go to is a TTY), or one JSON object per line with --json.
import type { ResolvedEvent, FaultContext } from '../resolver/resolver';
import { resolutionToJson, faultToJson } from '../protocol/json';
import { effectType } from '../protocol/types';
import { formatTuple } from '../addr';

const paint = (tty: boolean, code: number, s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);

/** tty: whether the lines go to a terminal (colours); stdout's by default */
export function formatResolved(e: ResolvedEvent, json: boolean, tty = process.stdout.isTTY === true): string {
  if (json) return JSON.stringify({ event: 'resolved', fault: faultToJson(e.fault), resolution: resolutionToJson(e.resolution), micros: Math.round(e.micros) });
  const f = e.fault;
  const t = effectType(f.effect);
  const what =
    t === 'network' && f.effect.network
      ? formatTuple(f.effect.network)
      : t;
  const who = f.subject.process ? `pid ${f.subject.process.pid}` : `peer ${f.subject.peer?.address}`;
  const r = e.resolution;
  if (r.reason === 'audit_allowed') {
    // audit: the one line that must not read as an ordinary allow
    return `fault ${f.fault_id} ${f.source} ${who} ${what} → ${paint(tty, 33, 'AUDIT-ALLOWED')} (enforcing: deny ${r.would_deny ?? 'policy_denied'}) ${(e.micros / 1000).toFixed(2)}ms`;
  }
  const colour = r.action === 'deny' ? 31 : r.action === 'delegate' ? 33 : 32;
  const extra = r.lease ? ` lease gen ${r.lease.generation}` : r.delegate_to ? ` to ${r.delegate_to}` : '';
  return `fault ${f.fault_id} ${f.source} ${who} ${what} → ${paint(tty, colour, r.action)} (${r.reason})${extra} ${(e.micros / 1000).toFixed(2)}ms`;
}

export function formatRefused(e: { reason: string; detail: string; ctx: FaultContext }, json: boolean, tty = process.stdout.isTTY === true): string {
  if (json) return JSON.stringify({ event: 'refused', reason: e.reason, detail: e.detail, peer: e.ctx.peer ?? null });
  const who = e.ctx.peer ? ` from pid ${e.ctx.peer.pid} uid ${e.ctx.peer.uid}` : '';
  return `refused${who}: ${paint(tty, 31, e.reason)} — ${e.detail}`;
}
