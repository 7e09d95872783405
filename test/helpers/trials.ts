// Helpers for crash trials (test/resolver/killtrials.test.ts): supervisors
// started as real processes (./gensee's Proc), loopback listeners that count
// every connection and byte with the time of each accept, a small concurrency
// pool, faults.jsonl read the way a crash leaves it (a torn last line is not
// an error here: verify judges it), and a per-check tally for the closing
// summary.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { bootNs } from '../../src/dataplane';
import { GENSEE_BIN, waitFor } from './kernel';
import { Proc } from './gensee';

export interface Serving {
  proc: Proc;
  /** the `serving` event of `gensee supervise --json` */
  event: { reconciled: { removed: string[]; reinstalled: string[]; dropped: string[] } } & Record<string, unknown>;
}

/** the slowest start-up seen in this process (ms from spawn to serving), 0 before the first */
let slowestStart = 0;

/**
 * How long to wait for a gensee start-up (issue 25): scaled to the slowest
 * one this machine has shown so far (eight times it), never under 15 s, and
 * 60 s before any was measured — a deadline, not a sleep, so a loaded
 * machine only makes it longer.
 */
export function startupDeadline(): number {
  return slowestStart === 0 ? 60_000 : Math.max(15_000, 8 * slowestStart);
}

/** record a start-up's duration (ms) for startupDeadline() */
export function startupTook(ms: number): void {
  slowestStart = Math.max(slowestStart, ms);
}

/** Start `gensee supervise --json ARGS` and wait until it serves (by default within startupDeadline()). */
export async function supervise(args: string[], procs: Proc[], timeoutMs = startupDeadline()): Promise<Serving> {
  const t0 = Date.now();
  const proc = new Proc(GENSEE_BIN, ['supervise', '--json', ...args]);
  procs.push(proc);
  const event = await waitFor(() => proc.json().find((l) => l.event === 'serving') ?? (!proc.running && 'exited'), timeoutMs, 5).catch(() => null);
  if (event && event !== 'exited') startupTook(Date.now() - t0);
  if (!event || event === 'exited') {
    await proc.end();
    throw new Error(`gensee supervise did not come up (${event ?? 'timeout'}): ${proc.stdout}${proc.stderr}`);
  }
  return { proc, event: event as Serving['event'] };
}

/** A loopback TCP listener counting connections and bytes, with the CLOCK_BOOTTIME of each accept. */
export class Listener {
  conns = 0;
  bytes = 0;
  readonly acceptedAt: bigint[] = [];
  port = 0;
  private readonly srv: net.Server;
  private readonly socks = new Set<net.Socket>();

  constructor() {
    this.srv = net.createServer((s) => {
      this.conns++;
      this.acceptedAt.push(bootNs());
      this.socks.add(s);
      s.on('data', (d: Buffer) => (this.bytes += d.length));
      s.on('error', () => undefined);
      s.on('close', () => this.socks.delete(s));
      s.end();
    });
  }

  static async open(host = '127.0.0.1'): Promise<Listener> {
    const l = new Listener();
    await new Promise<void>((res, rej) => {
      l.srv.once('error', rej);
      l.srv.listen(0, host, () => res());
    });
    l.port = (l.srv.address() as net.AddressInfo).port;
    return l;
  }

  /** connections accepted in [from, to) on CLOCK_BOOTTIME */
  acceptsBetween(from: bigint, to: bigint): bigint[] {
    return this.acceptedAt.filter((x) => x >= from && x < to);
  }

  close(): Promise<void> {
    for (const s of this.socks) s.destroy();
    return new Promise((res) => this.srv.close(() => res()));
  }
}

/** Run fn over items with at most n at a time; resolves when all have settled. */
export async function pool<X>(n: number, items: X[], fn: (x: X) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

export function randInt(lo: number, hi: number): number {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

export interface LogLine {
  kind?: string;
  fault_id?: string;
  resolution?: { action?: string; reason?: string; lease?: { family: string; protocol: string; address: string; port: number; expires_at_boot_ns: string } };
  abandoned?: string;
  [k: string]: unknown;
}

/** faults.jsonl as a crash left it: whole lines parsed, a torn line reported as {kind: 'torn'}. */
export function readLog(file: string): LogLine[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        return { kind: 'torn' };
      }
    });
}

/** Pass/fail counts per named check, for the summary line; every check still asserts through tap. */
export class Tally {
  private readonly m = new Map<string, { pass: number; fail: number }>();

  record(check: string, ok: boolean): boolean {
    const c = this.m.get(check) ?? { pass: 0, fail: 0 };
    if (ok) c.pass++;
    else c.fail++;
    this.m.set(check, c);
    return ok;
  }

  lines(): string[] {
    return [...this.m].map(([k, c]) => `${k}: ${c.pass} pass, ${c.fail} fail`);
  }
}
