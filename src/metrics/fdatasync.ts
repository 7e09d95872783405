// gensee_fdatasync_seconds: how long each fdatasync of faults.jsonl took in
// this supervisor (addon/synclog.c counts them by latency, in C, as it runs
// them). The one metric not read from the evidence at scrape time: the
// files do not hold it. Rendered in the text format beside the registry's.
import { SYNC_HIST_BOUNDS_US, type SyncStats } from '../evidence/chain';

/** where a scrape finds the live figures (the supervisor's fault log); null: none */
export type FdatasyncSource = () => SyncStats | null;

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** the histogram's exposition lines (HELP, TYPE, cumulative buckets, sum, count), or '' without figures */
export function fdatasyncText(op: string, s: SyncStats | null): string {
  if (!s) return '';
  const name = 'gensee_fdatasync_seconds';
  const label = `op="${esc(op)}"`;
  const out = [
    `# HELP ${name} fdatasync calls of faults.jsonl by this supervisor (group commit: one covers every line written before it began), by latency`,
    `# TYPE ${name} histogram`,
  ];
  let cum = 0;
  SYNC_HIST_BOUNDS_US.forEach((us, i) => {
    cum += s.hist[i] ?? 0;
    out.push(`${name}_bucket{${label},le="${us / 1e6}"} ${cum}`);
  });
  cum += s.hist[SYNC_HIST_BOUNDS_US.length] ?? 0;
  out.push(`${name}_bucket{${label},le="+Inf"} ${cum}`);
  out.push(`${name}_sum{${label}} ${s.syncUs / 1e6}`);
  out.push(`${name}_count{${label}} ${cum}`);
  return out.join('\n') + '\n';
}
