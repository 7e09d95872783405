// make bench: every benchmark prints numbers and ratios against a baseline
// measured in the same run. GENSEE_BENCH_QUICK=1 for a short smoke run;
// GENSEE_BENCH_ROUNDS=N sets the resolver section's rounds.
import { benchDataplane } from './dataplane';
import { benchResolver } from './resolver';
import { benchPause } from './pause';
import { benchCounters } from './counters';
import { benchDeadlines } from './deadlines';
import { Progress } from '../src/progress';
import { benchStartup } from './startup';
import { benchLeaseScan } from './leasescan';

const sections: Record<string, () => Promise<void>> = {
  dataplane: () => benchDataplane({ n: quick() ? 2000 : 10000, rounds: quick() ? 3 : 7 }),
  resolver: () => benchResolver({ n1: quick() ? 500 : 2000, n8: quick() ? 1000 : 6000, steadyWarm: quick() ? 1000 : 4000, rounds: Number(process.env.GENSEE_BENCH_ROUNDS) || (quick() ? 2 : 5) }),
  counters: () => benchCounters({ leases: quick() ? 2000 : 10000, seconds: quick() ? 3 : 5 }),
  pause: () => benchPause({ n: quick() ? 2000 : 10000, rounds: quick() ? 2 : 5, newDest: quick() ? 300 : 2000, slowWarm: quick() ? 1000 : 10000 }),
  startup: () => benchStartup({ rounds: quick() ? 3 : 7, newDest: quick() ? 100 : 300 }),
  leasescan: () => benchLeaseScan({ leases: quick() ? 5000 : 15000, rounds: quick() ? 3 : 7 }),
  deadlines: () => benchDeadlines({ trials: quick() ? 3 : 8, faults: quick() ? 200 : 1000, leases: quick() ? 4 : 10, quietMs: quick() ? 3500 : 6500, rounds: quick() ? 3 : 7 }),
};

function quick(): boolean {
  return process.env.GENSEE_BENCH_QUICK === '1';
}

export function addSection(name: string, fn: () => Promise<void>): void {
  sections[name] = fn;
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const todo = Object.entries(sections).filter(([name]) => !only.length || only.includes(name));
  // a section runs for minutes: on a terminal, a status line says which and for how long
  const p = new Progress('bench', todo.length);
  for (const [name, fn] of todo) {
    p.next(name);
    await fn();
  }
  p.done(`${todo.length} section${todo.length === 1 ? '' : 's'}`);
}

main().catch((e) => {
  process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
  process.exitCode = 1;
});
