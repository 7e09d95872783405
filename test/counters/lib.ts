// Helpers for the counter-evidence tests: read counters.jsonl, sum deltas.
import * as fs from 'node:fs';
import * as path from 'node:path';

export type Line = Record<string, unknown> & { kind: string; seq: number; at: string };

export function counterLines(stateDir: string, op: string): Line[] {
  const p = path.join(stateDir, 'network-operations', op, 'counters.jsonl');
  if (!fs.existsSync(p)) return [];
  return fs
    .readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

export function readJson(stateDir: string, op: string, file: string): Record<string, unknown> & { totals: { allow: number; deny: Record<string, number>; lost_events: number } } {
  return JSON.parse(fs.readFileSync(path.join(stateDir, 'network-operations', op, file), 'utf8')) as ReturnType<typeof readJson>;
}

export interface Match {
  kind?: string;
  source?: string;
  protocol?: string;
  address?: string;
  port?: number;
  reason?: string;
  generation?: number;
}

export function matching(lines: Line[], m: Match): Line[] {
  return lines.filter((l) => Object.entries(m).every(([k, v]) => v === undefined || l[k] === v));
}

export function sumDelta(lines: Line[], m: Match): number {
  return matching(lines, m).reduce((a, l) => a + (l.delta as number), 0);
}

/** calls a gs-probe summary counted (every attempt ends in exactly one bucket) */
export function calls(summary: Record<string, number> | undefined): number {
  if (!summary) return 0;
  return Object.values(summary).reduce((a, b) => a + b, 0);
}
