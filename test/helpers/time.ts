// Test deadlines on a slow machine (issue 26): one factor, read in one place,
// with no imports so that small helper processes (test/dns/client.ts) can
// use it too.

/**
 * How much slower than a normal host this machine is, from
 * GENSEE_TIME_SCALE (default 1). make vmtest sets it for a guest under
 * software emulation (TCG), where everything takes several times longer;
 * every deadline a test waits for is multiplied by it, so the tests keep
 * their meaning (a deadline, never a sleep) on a slow machine and stay
 * exactly the same on the host.
 */
export function timeScale(): number {
  const v = process.env.GENSEE_TIME_SCALE;
  if (v === undefined || v === '') return 1;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 1 || n > 1000) throw new Error(`GENSEE_TIME_SCALE must be a number from 1 to 1000, not ${JSON.stringify(v)}`);
  return n;
}

/** a deadline of ms on a normal host, on this machine (ms × GENSEE_TIME_SCALE) */
export function timeScaled(ms: number): number {
  return Math.round(ms * timeScale());
}
