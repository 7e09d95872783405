// gensee counters --op ID [--since T] [--top N] [--json]
// What crossed the boundary: a summary of counters.jsonl (top destinations,
// allow/deny per reason, allows per generation; --since an ISO time or a
// duration back from now), and the kernel's live counters when the hooks
// are attached.
import * as path from 'node:path';
import { parse, requireOp, out, table } from './args';
import { formatTuple, Family, Protocol } from '../addr';
import { DataPlane, CounterRow, hooksAttached, describeDestination } from '../dataplane';
import { GenseeError } from '../errors';
import { opDir, resolveStateDir, checkOpDir } from '../state/operation';
import { COUNTERS_FILE } from '../counters/snapshot';
import { CounterSummary, parseSince, summarize } from '../counters/summary';

export const usage = 'usage: gensee counters --op ID [--since TIME|DURATION] [--top N] [--json]';

function kernelRows(op: string): { rows: CounterRow[]; stats: { lostEvents: bigint; counterFull: bigint } } | null {
  if (!hooksAttached(op)) return null;
  const dp = DataPlane.open(op);
  try {
    const rows = dp.readCounters().sort((a, b) => (a.count < b.count ? 1 : a.count > b.count ? -1 : 0));
    return { rows, stats: dp.stats() };
  } finally {
    dp.close();
  }
}

async function evidenceSummary(stateDir: string, op: string, since: Date | null): Promise<CounterSummary | null> {
  try {
    checkOpDir(stateDir, op);
  } catch (e) {
    if (e instanceof GenseeError && e.code === 'E_UNKNOWN_OP') return null; // hooks without a supervised operation
    throw e;
  }
  return summarize(path.join(opDir(stateDir, op), COUNTERS_FILE), { since });
}

const dest = (d: { family: string; protocol: string; address: string; port: number }) =>
  d.address === 'other'
    ? 'other destinations (counter map full)'
    : formatTuple({ family: d.family as Family, protocol: d.protocol as Protocol, address: d.address, port: d.port });

function printSummary(s: CounterSummary, top: number): void {
  const window = s.since ? `since ${s.since}` : 'whole file';
  out(`counters.jsonl: ${s.counted} of ${s.lines} lines (${window}); ${s.samples} readings with traffic, ${s.first_at ?? '-'} → ${s.last_at ?? '-'}`);
  const denyTotal = Object.values(s.deny).reduce((a, b) => a + b, 0);
  out(`allow ${s.allow}, deny ${denyTotal}, lost events ${s.lost_events}${s.counter_full ? `, uncounted (map full) ${s.counter_full}` : ''}${s.resets ? `, resets ${s.resets}` : ''}`);
  if (s.nft.allow || s.nft.deny) out(`nftables: ${s.nft.allow} new flows allowed, ${s.nft.deny} packets dropped by default deny`);
  const l = s.leases;
  if (l.expired + l.exhausted + l.revoked + l.replaced + l.retagged) {
    out(`leases: ${l.expired} expired, ${l.exhausted} used up, ${l.revoked} revoked, ${l.replaced} replaced, ${l.retagged} moved to a new generation`);
  }
  out('');
  out(`top destinations`);
  const nft = s.nft.allow > 0 || s.nft.deny > 0;
  const rows = s.destinations.slice(0, top).map((d) => [
    dest(d),
    String(d.allow),
    String(Object.values(d.deny).reduce((a, b) => a + b, 0)),
    ...(nft ? [String(d.nft_allow)] : []),
    Object.entries(d.deny).map(([r, n]) => `${r}=${n}`).join(' ') || '-',
  ]);
  out(table([['DESTINATION', 'ALLOW', 'DENY', ...(nft ? ['NFT FLOWS'] : []), 'DENY BY REASON'], ...rows]));
  if (s.destinations.length > top) out(`… ${s.destinations.length - top} more (--top N)`);
  out('');
  out('deny by reason');
  out(table([['REASON', 'COUNT'], ...Object.entries(s.deny).sort((a, b) => b[1] - a[1]).map(([r, n]) => [r, String(n)])]));
  out('');
  out('allow by generation');
  const gens = [...s.generations].sort((a, b) => b.allow - a.allow || b.generation - a.generation).slice(0, top);
  out(
    table([
      ['GEN', 'REASON', 'ALLOW', 'STATE'],
      ...gens.map((g) => [String(g.generation), g.reason ?? '?', String(g.allow), g.revoked_at ? `revoked ${g.revoked_at} (final ${g.final_allow})` : 'live']),
    ]),
  );
  if (s.generations.length > top) out(`… ${s.generations.length - top} more generations`);
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, json: { type: 'boolean' }, since: { type: 'string' }, top: { type: 'string' } }, false);
  if (values.flags.has('help')) {
    out(usage);
    return 0;
  }
  const op = requireOp(values.op);
  const since = values.since !== undefined ? parseSince(values.since) : null;
  const top = values.top !== undefined ? Number(values.top) : 10;
  if (!Number.isSafeInteger(top) || top < 1) throw new GenseeError('E_BAD_COUNT', `bad --top "${values.top}": expected a positive integer`);
  const stateDir = resolveStateDir(values['state-dir']);
  const summary = await evidenceSummary(stateDir, op, since);
  const kernel = kernelRows(op);
  if (!summary && !kernel) throw new GenseeError('E_UNKNOWN_OP', `unknown operation "${op}": no hooks pinned and no counters.jsonl under ${stateDir}`);
  if (values.flags.has('json')) {
    out(
      JSON.stringify({
        op,
        counters: (kernel?.rows ?? []).map((r) => ({
          ...(r.aggregate
            ? { family: 'any', protocol: 'any', address: 'other', port: 0, overflow: true }
            : { family: r.tuple.family, protocol: r.tuple.protocol, address: r.tuple.address, port: r.tuple.port }),
          verdict: r.verdict,
          generation: Number(r.generation),
          count: Number(r.count),
        })),
        lost_events: kernel ? Number(kernel.stats.lostEvents) : null,
        counter_map_full: kernel ? Number(kernel.stats.counterFull) : null,
        summary,
      }),
    );
    return 0;
  }
  if (summary) {
    printSummary(summary, top);
    out('');
  }
  if (kernel) {
    out('live kernel counters (cumulative)');
    out(table([['DESTINATION', 'VERDICT', 'GEN', 'COUNT'], ...kernel.rows.map((r) => [describeDestination(r), r.verdict, String(r.generation), String(r.count)])]));
    out(`lost events: ${kernel.stats.lostEvents}  counter map full: ${kernel.stats.counterFull}`);
  } else {
    out('hooks not attached: no live kernel counters');
  }
  return 0;
}
