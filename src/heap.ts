// The serving commands' heap tuning (a V8 flag), in a module of its own:
// bin/gensee sets it before anything else is compiled, because V8's code
// cache (src/codecache.ts) only takes an entry built under the same flags.
import * as v8 from 'node:v8';

/** Commands that serve an operation for as long as it runs. */
export const SERVING: ReadonlySet<string> = new Set(['run', 'supervise']);

/**
 * A serving process's heap grows by at most 30% over what its last full
 * collection kept (V8's own factor for a small heap is up to 4x): under a
 * steady fault load the resolver's heap otherwise swung between ~25 MB
 * live and ~130 MB before each collection, and its RSS with it (issue 15's
 * soak: 157-252 MiB). Collections come more often; each has less to do.
 * GENSEE_HEAP_GROWING_PERCENT sets another value; 0 leaves V8's own. A
 * --heap-growing-percent given to node itself wins. Nothing for other
 * commands.
 */
export function tuneHeap(command: string | undefined): void {
  if (command === undefined || !SERVING.has(command)) return;
  if (process.execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) return;
  const env = process.env.GENSEE_HEAP_GROWING_PERCENT;
  const pct = env !== undefined && /^[0-9]{1,4}$/.test(env) ? Number(env) : 30;
  if (pct > 0) v8.setFlagsFromString(`--heap-growing-percent=${pct}`);
}
