// Generations: numbered versions of an operation's network envelope.
//
// Every change of the envelope takes the next number (one sequence per
// operation, network.json `generation` is the newest):
//
//   policy generations   start, restart, policy_change (restart with another
//                        policy file), policy_apply (`gensee policy apply`)
//   lease generations    lease_added      the resolver installed a lease
//                        operator_lease   an operator added one (control path,
//                                         or adopted from the kernel map)
//                        lease_expired    the leases that expired or were used
//                                         up in one sampling period (one
//                                         generation per period, not per lease)
//                        lease_revoked    an operator revocation (`lease rm`,
//                                         or a lease found gone from the map)
//
// The kernel tags each lease with the generation that installed it; allow
// counters are keyed by that tag, so every allow is attributed to exactly
// one generation. Grant entries (standing policy authority) are tagged with
// the current policy generation: a grant is not a new authority.
//
// Write amplification is bounded: network.json keeps only generations that
// still tag a live lease, the current policy generation, the newest one and
// the last RETIRED_TAIL others (compact()); everything else lives in
// counters.jsonl, which has one `generation` line per generation and one
// `generation_revoked` line per retirement with its final counts. So
// network.json grows with live leases, never with the fault rate, and
// counters.jsonl grows with lease installs (one line each), which is the
// evidence asked for.
import type { Policy, NetworkEffect } from '../protocol/types';
import { matchesNetwork } from '../protocol/ip';
import { GenerationRecord, LeaseRecord, NetworkRecord, leaseExpired, leaseKey } from '../state/network';

export const POLICY_REASONS = ['start', 'restart', 'policy_change', 'policy_apply'] as const;
export const LEASE_REASONS = ['lease_added', 'operator_lease', 'lease_expired', 'lease_revoked'] as const;
export type GenerationReason = (typeof POLICY_REASONS)[number] | (typeof LEASE_REASONS)[number];

/** revoked generations kept in network.json beyond those still needed */
export const RETIRED_TAIL = 32;

export function isPolicyReason(r: string): boolean {
  return (POLICY_REASONS as readonly string[]).includes(r);
}

/**
 * Drop generations network.json no longer needs: keep the newest, `keep`
 * (e.g. the current policy generation), every generation a live lease is
 * tagged with, and the last RETIRED_TAIL of the rest. Pure; returns `rec`
 * itself when nothing is dropped.
 */
export function compact(rec: NetworkRecord, keep: readonly number[] = [], tail = RETIRED_TAIL): NetworkRecord {
  const live = new Set<number>(keep);
  for (const l of rec.leases) live.add(l.generation);
  live.add(rec.generation);
  const spare = rec.generations.filter((g) => !live.has(g.generation));
  if (spare.length <= tail) return rec;
  const drop = new Set(spare.slice(0, spare.length - tail).map((g) => g.generation));
  return { ...rec, generations: rec.generations.filter((g) => !drop.has(g.generation)) };
}

/**
 * compaction is O(leases): run it only when the list has grown well past
 * what is needed — by a quarter of the live leases, so that under a steady
 * stream of leases it runs once per that many retirements, not at every
 * reading (O(1) amortized per generation; the list stays under 1.25x the
 * live leases plus the tail)
 */
export function needsCompaction(rec: NetworkRecord, tail = RETIRED_TAIL): boolean {
  return rec.generations.length > rec.leases.length + (rec.leases.length >> 2) + 2 * tail + 8;
}

/** Mark generations revoked (idempotent; keeps their leases: callers remove those themselves). */
export function markRevoked(rec: NetworkRecord, gens: ReadonlySet<number>, now = new Date()): NetworkRecord {
  if (gens.size === 0) return rec;
  const at = now.toISOString();
  return {
    ...rec,
    generations: rec.generations.map((g) => (gens.has(g.generation) && g.revoked_at === undefined ? { ...g, revoked_at: at } : g)),
  };
}

export function generationReason(rec: NetworkRecord, gen: number): string | undefined {
  return findGeneration(rec.generations, gen)?.reason;
}

/** generation `gen` of a record's list (kept in ascending order): a binary search, no index built */
export function findGeneration(gens: readonly GenerationRecord[], gen: number): GenerationRecord | undefined {
  let lo = 0;
  let hi = gens.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const g = gens[mid].generation;
    if (g === gen) return gens[mid];
    if (g < gen) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

export function effectOf(l: LeaseRecord): NetworkEffect {
  return { family: l.family, protocol: l.protocol, address: l.address, port: l.port };
}

export type HandoverAction =
  /** re-installed under the new generation (same tuple, atomic map update) */
  | { action: 'retag'; lease: LeaseRecord; expiresBootNs: bigint; maxUses: number }
  /** kept as it is, in its own generation */
  | { action: 'carry'; lease: LeaseRecord; why: 'operator_lease' | 'limited' }
  /** removed: the new policy does not allow it (or it has expired) */
  | { action: 'revoke'; lease: LeaseRecord; why: 'policy' | 'expired' };

/**
 * What a policy change does to each live lease. Fail closed: a lease stays
 * only if the new policy allows its exact tuple (a grant, or a lease rule,
 * whose ttl and max_uses then bound it), or an operator added it by hand.
 *
 * Leases with max_uses are never re-tagged: the kernel decrements uses_left
 * in place, and a user-space read-modify-write would race it (a use between
 * the read and the write would be given back). They stay in their own
 * generation until they expire, are used up or are revoked.
 */
export function planHandover(
  rec: NetworkRecord,
  policy: Policy,
  nowBootNs: bigint,
): HandoverAction[] {
  const out: HandoverAction[] = [];
  const reasons = new Map(rec.generations.map((g) => [g.generation, g.reason]));
  for (const l of rec.leases) {
    if (leaseExpired(l, nowBootNs)) {
      out.push({ action: 'revoke', lease: l, why: 'expired' });
      continue;
    }
    if (reasons.get(l.generation) === 'operator_lease') {
      out.push({ action: 'carry', lease: l, why: 'operator_lease' });
      continue;
    }
    const e = effectOf(l);
    const grant = policy.grants.some((g) => matchesNetwork(g.network, e));
    const rule = grant ? undefined : policy.leases.find((r) => matchesNetwork(r.network, e));
    if (!grant && !rule) {
      out.push({ action: 'revoke', lease: l, why: 'policy' });
      continue;
    }
    if (l.max_uses > 0) {
      out.push({ action: 'carry', lease: l, why: 'limited' });
      continue;
    }
    let expires = BigInt(l.expires_at_boot_ns);
    let maxUses = 0;
    if (rule) {
      // a lease rule bounds it: never longer than the rule's ttl from now
      const cap = nowBootNs + BigInt(rule.ttl_s) * 1_000_000_000n;
      if (expires === 0n || expires > cap) expires = cap;
      maxUses = rule.max_uses;
    }
    out.push({ action: 'retag', lease: l, expiresBootNs: expires, maxUses });
  }
  return out;
}

/**
 * Remove and (re)place many leases in one pass (O(leases)), instead of one
 * copy of the list per lease. `put` replaces any lease on the same tuple.
 */
export function editLeases(rec: NetworkRecord, remove: ReadonlySet<string>, put: readonly LeaseRecord[] = []): NetworkRecord {
  if (remove.size === 0 && put.length === 0) return rec;
  const replace = new Map(put.map((l) => [leaseKey(l), l]));
  const leases: LeaseRecord[] = [];
  for (const l of rec.leases) {
    const k = leaseKey(l);
    if (remove.has(k) || replace.has(k)) continue;
    leases.push(l);
  }
  for (const l of replace.values()) if (!remove.has(leaseKey(l))) leases.push(l);
  return { ...rec, leases };
}
