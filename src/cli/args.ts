// Small shared helpers for CLI modules: argument parsing with clear errors.
import { parseArgs, ParseArgsConfig } from 'node:util';
import { durationMs, DURATION_FORMS } from '../duration';
import { GenseeError } from '../errors';
import { suggest } from './help';

export type Options = NonNullable<ParseArgsConfig['options']>;

/** Parsed values: strings for string options, booleans for flags. */
export interface Parsed {
  values: { [k: string]: string | undefined } & { flags: Set<string>; lists: Record<string, string[]> };
  positionals: string[];
}

/** the option names the last parse() was given (test/cli/help.test.ts holds them to the help table) */
export let lastParsedOptions: string[] = [];

export function parse(argv: string[], options: Options, allowPositionals = true): Parsed {
  const all: Options = { ...options, 'state-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } };
  lastParsedOptions = Object.keys(all);
  try {
    const r = parseArgs({ args: argv, options: all, allowPositionals, strict: true });
    const values: Parsed['values'] = Object.assign(Object.create(null) as { [k: string]: string | undefined }, { flags: new Set<string>(), lists: {} as Record<string, string[]> });
    for (const [k, v] of Object.entries(r.values)) {
      if (Array.isArray(v)) values.lists[k] = v.filter((x): x is string => typeof x === 'string');
      else if (typeof v === 'string') values[k] = v;
      else if (v === true) values.flags.add(k);
    }
    return { values, positionals: r.positionals };
  } catch (e) {
    const msg = (e as Error).message.replace(/\s*\n\s*/g, ' ');
    // "Unknown option '--polcy'": name the option it most likely meant
    const unknown = /^Unknown option '--?([^'=]+)/.exec(msg);
    if (unknown) {
      const hint = suggest(unknown[1], Object.keys(all), '--');
      throw new GenseeError('E_USAGE', `unknown option "${argv.find((a) => a.replace(/^-+/, '').split('=')[0] === unknown[1]) ?? unknown[1]}"${hint || `; this command takes ${Object.keys(all).map((k) => `--${k}`).join(' ')}`}`);
    }
    throw new GenseeError('E_USAGE', msg);
  }
}

const OP_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function requireOp(v: unknown): string {
  if (typeof v !== 'string' || v === '') throw new GenseeError('E_USAGE', '--op ID is required');
  if (!OP_ID.test(v)) throw new GenseeError('E_BAD_OP_ID', `bad operation id "${v}": use 1-64 of [A-Za-z0-9._-], starting alphanumeric`);
  return v;
}

/** a --ttl-style duration (src/duration.ts) → milliseconds, more than 0 and at most a year */
export function parseDuration(s: string): number {
  const ms = durationMs(s);
  if (ms === null) throw new GenseeError('E_BAD_DURATION', `bad duration "${s}": expected ${DURATION_FORMS}`);
  if (!(ms > 0) || ms > 365 * 24 * 3_600_000) throw new GenseeError('E_BAD_DURATION', `duration "${s}" out of range`);
  return ms;
}

export function parseCount(s: string, what: string): number {
  if (!/^[0-9]{1,9}$/.test(s) || Number(s) < 1) throw new GenseeError('E_BAD_COUNT', `bad ${what} "${s}": expected a positive integer`);
  return Number(s);
}

let live: string[] = [];
let liveScheduled = false;
let liveWrite: (text: string) => void = (text) => process.stdout.write(text);
/** liveHold's window (ms); 0: every turn's lines at the end of that turn */
let liveHoldMs = 0;
/** when live lines were last written (performance.now()) */
let liveWrittenAt = -Infinity;
let liveTimer: NodeJS.Timeout | null = null;

/**
 * Where live lines go from now on (stdout unless told): `gensee run` sends
 * them to stderr or its --json-out file, never to the stdout its workload
 * shares. What is collected so far goes where it was meant to.
 */
export function liveTo(write: (text: string) => void): void {
  flushLive();
  liveWrite = write;
}

/**
 * Hold live lines while they keep coming: a line less than ms after the
 * last write waits for the rest of that window and goes with the others in
 * one write; the first line after a quiet spell still goes at the end of
 * its turn. Only for output no workload shares (`gensee supervise`'s
 * stdout): a held line could land inside a workload's own line on a shared
 * one (daf2d91). With one client, a write per fault cost ~25 us of the
 * event loop's time per fault.
 */
export function liveHold(ms: number): void {
  liveHoldMs = ms;
}

/**
 * One line of live output (a line per fault): collected for the current turn
 * of the event loop (or liveHold's window) and written with one write.
 * stdout on a pipe is a synchronous write on Linux; one per fault cost the
 * resolver ~25 us each. out() and process exit flush what is collected
 * first, so order holds.
 */
export function liveOut(line: string): void {
  live.push(line);
  if (liveScheduled) return;
  liveScheduled = true;
  const since = liveHoldMs > 0 ? performance.now() - liveWrittenAt : Infinity;
  if (since < liveHoldMs) {
    liveTimer = setTimeout(flushLive, liveHoldMs - since);
    liveTimer.unref(); // exit flushes what is held
  } else {
    setImmediate(flushLive);
  }
}

export function flushLive(): void {
  liveScheduled = false;
  if (liveTimer) {
    clearTimeout(liveTimer);
    liveTimer = null;
  }
  if (live.length === 0) return;
  const text = live.join('\n') + '\n';
  live = [];
  if (liveHoldMs > 0) liveWrittenAt = performance.now();
  liveWrite(text);
}

process.on('exit', flushLive);

export function out(line: string): void {
  flushLive();
  process.stdout.write(line + '\n');
}

export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n');
}
