// Helpers for crash trials (test/resolver/killtrials.test.ts): real gensee
// processes started and ended by pid, loopback listeners that count every
// connection and byte, a small concurrency pool, faults.jsonl read the way a
// crash leaves it (a torn last line is not an error here: verify judges it),
// and a per-check tally for the closing summary.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { spawn, execFile, ChildProcess } from 'node:child_process';
import { bootNs } from '../../src/dataplane';
import { GENSEE_BIN, waitFor } from './kernel';

export interface CliResult {
  code: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run bin/gensee to completion (killed after timeoutMs). */
export function gensee(args: string[], timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(GENSEE_BIN, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, signal: e?.signal ?? null, stdout, stderr });
    });
  });
}

/** A process this test started: its output so far, its exit, and a kill that only ever signals its own pid. */
export class Proc {
  readonly child: ChildProcess;
  readonly pid: number;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;

  constructor(cmd: string, args: string[]) {
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.pid = this.child.pid!;
    this.child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((r) =>
      this.child.once('exit', (code, signal) => {
        this.done = true;
        r({ code, signal });
      }),
    );
  }

  get running(): boolean {
    return !this.done;
  }

  kill(sig: NodeJS.Signals): void {
    if (this.done) return;
    try {
      process.kill(this.pid, sig);
    } catch {
      /* exited between the check and the signal */
    }
  }

  /** SIGKILL (if still running) and wait for the exit. */
  async end(): Promise<void> {
    this.kill('SIGKILL');
    await this.exited;
  }

  /** JSON objects among the stdout lines */
  json(): Record<string, unknown>[] {
    const r: Record<string, unknown>[] = [];
    for (const l of this.stdout.split('\n')) {
      if (!l.startsWith('{')) continue;
      try {
        r.push(JSON.parse(l) as Record<string, unknown>);
      } catch {
        /* a line still being written */
      }
    }
    return r;
  }
}

export interface Serving {
  proc: Proc;
  /** the `serving` event of `gensee supervise --json` */
  event: { reconciled: { removed: string[]; reinstalled: string[]; dropped: string[] } } & Record<string, unknown>;
}

/** Start `gensee supervise --json ARGS` and wait until it serves. */
export async function supervise(args: string[], procs: Proc[], timeoutMs = 15_000): Promise<Serving> {
  const proc = new Proc(GENSEE_BIN, ['supervise', '--json', ...args]);
  procs.push(proc);
  const event = await waitFor(() => proc.json().find((l) => l.event === 'serving') ?? (!proc.running && 'exited'), timeoutMs, 5).catch(() => null);
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
