// bin/gensee as the tests run it: a command to completion (gensee), or a
// long-running process started and ended by its own pid (Proc).
import { spawn, execFile, ChildProcess } from 'node:child_process';
import { GENSEE_BIN, timeScaled } from './kernel';

export interface CliResult {
  code: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run bin/gensee to completion (killed after timeoutMs, scaled by GENSEE_TIME_SCALE). */
export function gensee(args: string[], timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(GENSEE_BIN, args, { timeout: timeScaled(timeoutMs), maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
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
