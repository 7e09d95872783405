// gensee CLI entry: one module per command; errors become one clear line
// and an exit code (2 = bad usage or input, nothing changed).
import { buildIdentity, describeBuild } from '../version';
import { bashCompletion, colourOn, commandNames, helpFor, mainHelp, suggest } from './help';
import { GenseeError, isErrno } from '../errors';
import { mark } from '../startup-trace';
import { tuneHeap } from '../heap';
type Command = (argv: string[]) => number | Promise<number>;

// Each command's module is loaded only when that command runs: `--help`,
// `--version` and completion do not pay for the addon, the resolver and the
// rest (each command's module graph is large).
const commands: Record<string, () => Promise<Command>> = {
  hooks: async () => (await import('./hooks')).run,
  lease: async () => (await import('./lease')).run,
  counters: async () => (await import('./counters')).run,
  policy: async () => (await import('./policy')).run,
  supervise: async () => (await import('./supervise')).run,
  status: async () => (await import('./status')).run,
  ls: async () => (await import('./ls')).run,
  stop: async () => (await import('./stop')).run,
  rm: async () => (await import('./rm')).run,
  prune: async () => (await import('./prune')).run,
  verify: async () => (await import('./verify')).run,
  'oci-listener': async () => (await import('./oci')).run,
  upgrade: async () => (await import('./upgrade')).run,
  profile: async () => (await import('./profile')).run,
  watch: async () => (await import('./watch')).run,
  events: async () => (await import('./events')).run,
  executor: async () => (await import('./executor')).run,
  attention: async () => (await import('./attention')).run,
  doctor: async () => (await import('./doctor')).run,
  report: async () => (await import('./report')).run,
  // `run fault` is another module: `gensee run -- CMD` does not load it
  run: async () => async (argv) => (argv[0] === 'fault' ? (await import('./runfault')).run(argv.slice(1)) : (await import('./run')).run(argv)),
  completion: async () => completion,
};

/** --help / -h anywhere in a command's own options (not in CMD after "--") */
function wantsHelp(argv: string[]): boolean {
  const dd = argv.indexOf('--');
  return (dd < 0 ? argv : argv.slice(0, dd)).some((a) => a === '--help' || a === '-h');
}

/** the version in package.json */
export function version(): string {
  return buildIdentity().version;
}

function completion(argv: string[]): number {
  if (argv.length !== 1 || argv[0] !== 'bash') throw new GenseeError('E_USAGE', `usage: gensee completion bash (only bash is generated)${argv[0] ? suggest(argv[0], ['bash']) : ''}`);
  process.stdout.write(bashCompletion());
  return 0;
}

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
const READ_ONLY = new Set(['verify', 'status', 'ls', 'counters', 'events', 'report', 'help']);

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


/** `gensee run`'s own failures, as `env` and `timeout` report theirs: CMD's status stays CMD's */
export const RUN_FAILED = 125;

function print(text: string): void {
  process.stdout.write(text + '\n');
}

export async function main(argv: string[]): Promise<void> {
  mark('main: entered');
  const [name, ...rest] = argv;
  tuneHeap(name); // bin/gensee did already, before the code cache (the same flag again changes nothing)
  const helpOnly = !name || name === '--help' || name === '-h' || name === 'help' || name === '--version' || name === '-V' || name === 'version' || wantsHelp(rest);
  quietWhenStdoutCloses(helpOnly ? 'help' : name);
  const colour = colourOn(process.stdout);
  if (name === '--version' || name === '-V' || name === 'version') {
    const b = buildIdentity();
    print(rest.includes('--json') ? JSON.stringify({ name: 'gensee', version: b.version, commit: b.commit, node: process.version }) : `gensee ${describeBuild(b)}`);
    process.exitCode = 0;
    return;
  }
  if (!name || name === '--help' || name === '-h') {
    // no command at all is a usage error (2), asked-for help is not
    const to = name ? process.stdout : process.stderr;
    to.write(mainHelp(version(), colourOn(to)) + '\n');
    process.exitCode = name ? 0 : 2;
    return;
  }
  if (name === 'help') {
    const words = rest.filter((w) => !w.startsWith('-'));
    if (words.length === 0) {
      print(mainHelp(version(), colour));
      process.exitCode = 0;
      return;
    }
    const text = helpFor(words, colour);
    if (text === null) {
      process.stderr.write(`gensee: E_USAGE: no command "${words[0]}"${suggest(words[0], commandNames())}; "gensee help" lists them\n`);
      process.exitCode = 2;
      return;
    }
    print(text);
    process.exitCode = 0;
    return;
  }
  const cmd = commands[name];
  if (!cmd) {
    process.stderr.write(`gensee: E_USAGE: unknown command "${name}"${suggest(name, commandNames())}; "gensee help" lists them\n`);
    process.exitCode = 2;
    return;
  }
  if (wantsHelp(rest)) {
    print(helpFor(rest[0] !== undefined && !rest[0].startsWith('-') ? [name, rest[0]] : [name], colour) ?? mainHelp(version(), colour));
    process.exitCode = 0;
    return;
  }
  const isRun = name === 'run' && rest[0] !== 'fault';
  try {
    process.exitCode = await (await cmd())(rest);
  } catch (e) {
    const f = formatError(e);
    process.stderr.write(f.line + '\n');
    process.exitCode = isRun ? RUN_FAILED : f.code;
  }
}
