// How a duration is written on gensee's command lines (--ttl, --since, …):
// one rule, one place.

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "250ms", "30s", "5m", "1h", "1d", or a bare number of seconds → milliseconds; null if s is not a duration */
export function durationMs(s: string): number | null {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$/.exec(s);
  if (!m) return null;
  return Number(m[1]) * UNIT_MS[(m[2] ?? 's') as keyof typeof UNIT_MS];
}

/** the forms durationMs takes, for error messages */
export const DURATION_FORMS = '250ms, 30s, 5m, 1h, 1d (a bare number is seconds)';
