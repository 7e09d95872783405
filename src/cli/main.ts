// gensee CLI entry: one module per command; errors become one clear line
// and an exit code (2 = bad usage or input, nothing changed).
import * as v8 from 'node:v8';
import { GenseeError, isErrno } from '../errors';
import * as hooks from './hooks';
import * as lease from './lease';
import * as counters from './counters';
import * as policy from './policy';
import * as supervise from './supervise';
import * as runfault from './runfault';
import * as runcmd from './run';
import * as status from './status';
import * as ls from './ls';
import * as stop from './stop';
import * as verify from './verify';
import * as oci from './oci';
import * as upgrade from './upgrade';
import * as watch from './watch';
import * as events from './events';
import * as executor from './executor';
import * as attention from './attention';

type Command = (argv: string[]) => number | Promise<number>;

const commands: Record<string, Command> = {
  hooks: hooks.run,
  lease: lease.run,
  counters: counters.run,
  policy: policy.run,
  supervise: supervise.run,
  status: status.run,
  ls: ls.run,
  stop: stop.run,
  verify: verify.run,
  'oci-listener': oci.run,
  upgrade: upgrade.run,
  watch: watch.run,
  events: events.run,
  executor: executor.run,
  attention: attention.run,
  run: (argv) => {
    if (argv[0] === 'fault') return runfault.run(argv.slice(1));
    return runcmd.run(argv);
  },
};

const usages: Record<string, string> = {
  hooks: hooks.usage,
  lease: lease.usage,
  counters: counters.usage,
  policy: policy.usage,
  supervise: supervise.usage,
  status: status.usage,
  ls: ls.usage,
  stop: stop.usage,
  verify: verify.usage,
  'oci-listener': oci.usage,
  upgrade: upgrade.usage,
  watch: watch.usage,
  events: events.usage,
  executor: executor.usage,
  attention: attention.usage,
  run: `${runcmd.usage}\n       ${runfault.usage.replace(/^usage: /, '')}`,
};

/** --help / -h anywhere in a command's own options (not in CMD after "--") */
function wantsHelp(argv: string[]): boolean {
  const dd = argv.indexOf('--');
  return (dd < 0 ? argv : argv.slice(0, dd)).some((a) => a === '--help' || a === '-h');
}

const USAGE = `usage: gensee <command> [options]
  hooks attach|detach   attach the eBPF boundary to a cgroup / remove it
  lease add|rm|ls       exact leases in the kernel map
  counters              what crossed the boundary: counters.jsonl summary and live kernel counters
  policy apply|check    hand a new policy to the running supervisor (a new generation) / list every error in a policy file
  supervise             attach to a cgroup and serve the resolver on its socket
  run -- CMD            run CMD inside a new operation: hooks, resolver, seccomp pause
  run fault             submit a fault (JSON) to a supervisor socket, print the resolution
  oci-listener          receive runc/crun seccomp fds (listenerPath), serve each container's cgroup
  upgrade               replace a running oci-listener in place (--fdkeep); no container breaks
  status                operation, its condition (resolver_gone?), generation, live leases, totals
  ls                    every operation: condition, resolver, hooks, workload identity
  stop                  end an operation: kill its cgroup, then remove hooks and pins, record the stop
  verify                check the evidence hash chains (faults, counters, events, calls) and fault/resolution pairing
  watch                 the watchdog: a workload's events + the boundary → nudges, attention
  attention clear       a person clears the watchdog's attention (recorded: who, why)
  events                boundary events and attention (events.jsonl); --follow the live stream
  executor call|recover run a tool call through the executor (keyed writes); recover crashed calls
Every command takes --state-dir DIR (default /var/lib/gensee or $GENSEE_STATE_DIR).`;

export function formatError(e: unknown): { line: string; code: number } {
  if (e instanceof GenseeError) {
    // usage text goes with --help; the error itself stays one line
    const msg = e.code === 'E_USAGE' && e.message.startsWith('usage:') ? `bad arguments; ${e.message.split('\n')[0]} (see --help)` : e.message;
    return { line: `gensee: ${e.code}: ${msg}`, code: e.exitCode };
  }
  if (isErrno(e) && typeof (e as NodeJS.ErrnoException).syscall === 'string') {
    const x = e as NodeJS.ErrnoException;
    return { line: `gensee: ${x.syscall}${x.path ? ` (${x.path})` : ''}: ${x.code}`, code: 1 };
  }
  return { line: `gensee: ${(e as Error)?.stack ?? String(e)}`, code: 1 };
}

/** Commands that only read: they end at once when their reader goes away. */
const READ_ONLY = new Set(['verify', 'status', 'ls', 'counters', 'events', 'help']);

/**
 * stdout closed early (`gensee verify | head -1`) is not an error: no EPIPE
 * stack trace. A read-only command ends at once, quietly, with its exit code
 * so far. Any other command carries on with its output discarded, so that a
 * reader going away never cuts a serving or state-changing command short
 * (`gensee run -- CMD | head` must not abandon the operation); it ends with
 * its own code.
 */
function quietWhenStdoutCloses(name: string): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') {
      process.stderr.write(`gensee: stdout: ${e.code ?? e.message}\n`);
      process.exit(1);
    }
    if (READ_ONLY.has(name)) process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
  // stderr carries `gensee run`'s live lines: a reader of it going away
  // (`gensee run -- CMD 2>&1 | head`) must not end the run either
  process.stderr.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && READ_ONLY.has(name)) process.exit(1);
  });
}

/** Commands that serve an operation for as long as it runs. */
const SERVING = new Set(['run', 'supervise']);

/**
 * A serving process's heap grows by at most 30% over what its last full
 * collection kept (V8's own factor for a small heap is up to 4x): under a
 * steady fault load the resolver's heap otherwise swung between ~25 MB
 * live and ~130 MB before each collection, and its RSS with it (issue 15's
 * soak: 157-252 MiB). Collections come more often; each has less to do.
 * GENSEE_HEAP_GROWING_PERCENT sets another value; 0 leaves V8's own. A
 * --heap-growing-percent given to node itself wins.
 */
function tuneHeap(): void {
  if (process.execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) return;
  const env = process.env.GENSEE_HEAP_GROWING_PERCENT;
  const pct = env !== undefined && /^[0-9]{1,4}$/.test(env) ? Number(env) : 30;
  if (pct > 0) v8.setFlagsFromString(`--heap-growing-percent=${pct}`);
}

export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (SERVING.has(name)) tuneHeap();
  quietWhenStdoutCloses(!name || name === '--help' || name === '-h' || wantsHelp(rest) ? 'help' : name);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    process.exitCode = name ? 0 : 2;
    return;
  }
  const cmd = commands[name];
  if (!cmd) {
    process.stderr.write(`gensee: E_USAGE: unknown command "${name}"\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (wantsHelp(rest) && usages[name]) {
    process.stdout.write(usages[name] + '\n');
    process.exitCode = 0;
    return;
  }
  try {
    process.exitCode = await cmd(rest);
  } catch (e) {
    const f = formatError(e);
    process.stderr.write(f.line + '\n');
    process.exitCode = f.code;
  }
}
