// GENSEE_TRACE_STARTUP=1: one line on stderr per start-up or tear-down step
// of `gensee run`, with the milliseconds since the process started (what
// bench/startup.ts and a person profiling the start read). Off: one
// comparison per step.
import { performance } from 'node:perf_hooks';

const on = process.env.GENSEE_TRACE_STARTUP === '1';

export function mark(step: string): void {
  if (on) process.stderr.write(`gensee-trace: ${performance.now().toFixed(1)} ms ${step}\n`);
}
