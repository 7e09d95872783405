// Helpers for the counter-evidence tests: read counters.jsonl, sum deltas.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel } from '../helpers/kernel';
import { nftUnavailable } from '../../src/backends/nft';

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

/** a policy of these lease rules alone: no grants, no delegation, a 5 s fault deadline */
export const leasePolicy = (...leases: object[]) => ({ schema: 1, grants: [], leases, delegate: [], fault_deadline_ms: 5000 });

/** a policy that leases TCP to 127.0.0.1 on `ports` (for ttl_s, unlimited uses) */
export const tcpLeasePolicy = (ports: string, ttl_s = 120) => leasePolicy({ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports }, ttl_s, max_uses: 0 });

/** requireKernel, and nft too: false, the test failed (GENSEE_REQUIRE_KERNEL=1) or skipped, when either is unavailable */
export async function requireNft(t: Parameters<typeof requireKernel>[0]): Promise<boolean> {
  if (!requireKernel(t)) return false;
  const why = await nftUnavailable();
  if (!why) return true;
  if (process.env.GENSEE_REQUIRE_KERNEL === '1') t.fail(`nft unavailable: ${why}`);
  else t.plan(0, `nft unavailable: ${why}`);
  return false;
}
