// Progress for long work (make bench, make soak): on a terminal one status
// line on stderr, redrawn twice a second with the step, its count and the
// time so far, so a minute of work is never a minute of silence; lines the
// work prints to stdout or stderr meanwhile clear it first and it comes
// back after them. Not a terminal: one plain line per step, nothing redrawn,
// no escape codes. NO_COLOR (non-empty) drops the bold, not the status line.

export interface ProgressStream {
  isTTY?: boolean;
  write(s: string): boolean;
}

import * as fs from 'node:fs';
import { isatty } from 'node:tty';

const SPIN = ['|', '/', '-', '\\'];

export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

export class Progress {
  private readonly tty: boolean;
  private readonly colour: boolean;
  private readonly t0: number;
  private stepAt: number;
  private step = 0;
  private label = '';
  private shown = false;
  private spin = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly restore: (() => void)[] = [];

  /**
   * what: the work ("bench"); total: how many steps, if known. out: where
   * the status goes (stderr); wrap: the streams whose writes clear it first.
   */
  constructor(
    private readonly what: string,
    private readonly total: number | null,
    private readonly out: ProgressStream = process.stderr,
    wrap: ProgressStream[] = [process.stdout, process.stderr],
    private readonly now: () => number = Date.now,
  ) {
    this.tty = out.isTTY === true;
    const nc = process.env.NO_COLOR;
    this.colour = this.tty && (nc === undefined || nc === '');
    this.t0 = now();
    this.stepAt = this.t0;
    if (!this.tty) return;
    for (const s of new Set(wrap)) {
      const orig = s.write.bind(s) as (...a: unknown[]) => boolean;
      s.write = ((...a: unknown[]): boolean => {
        this.clear(orig);
        return orig(...a);
      }) as ProgressStream['write'];
      this.restore.push(() => (s.write = orig as ProgressStream['write']));
    }
  }

  /** the status as it would be drawn now (no escape codes) */
  status(): string {
    const n = this.total ? `[${this.step}/${this.total}] ` : '';
    return `${this.what}: ${n}${this.label} · ${elapsed(this.now() - this.stepAt)} (${elapsed(this.now() - this.t0)} in all)`;
  }

  /** the next step begins */
  next(label: string): void {
    this.step++;
    this.label = label;
    this.stepAt = this.now();
    if (!this.tty) {
      this.out.write(`${this.what}: ${this.total ? `[${this.step}/${this.total}] ` : ''}${label}\n`);
      return;
    }
    this.draw();
    if (!this.timer) {
      this.timer = setInterval(() => this.draw(), 500);
      this.timer.unref();
    }
  }

  /** the work is over: the status line goes, one plain line says how long it took */
  done(note = 'done'): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.tty) this.clear((s) => this.out.write(s));
    for (const r of this.restore.splice(0)) r();
    this.out.write(`${this.what}: ${note} in ${elapsed(this.now() - this.t0)}\n`);
  }

  private draw(): void {
    this.spin = (this.spin + 1) % SPIN.length;
    const text = `${SPIN[this.spin]} ${this.status()}`;
    const cols = (this.out as { columns?: number }).columns || 100; // a pty of unknown size says 0
    const line = text.length > cols - 1 ? text.slice(0, cols - 2) + '…' : text;
    // flagged as drawing: the wrapped write must not clear what it draws
    this.rawWrite(`\r\x1b[K${this.colour ? `\x1b[1m${line}\x1b[22m` : line}`);
    this.shown = true;
  }

  private rawWrite = (s: string): void => {
    this.drawing = true;
    try {
      this.out.write(s);
    } finally {
      this.drawing = false;
    }
  };

  private drawing = false;

  /** the status line goes before any other write (stdout and stderr share the terminal) */
  private clear(write: (s: string) => unknown): void {
    if (this.drawing || !this.shown) return;
    this.shown = false;
    this.drawing = true;
    try {
      write('\r\x1b[K');
    } finally {
      this.drawing = false;
    }
  }
}

/**
 * A Progress drawn straight on the terminal named by GENSEE_PROGRESS_TTY
 * (the Makefile sets it to /dev/tty when make's stderr is one), for work
 * whose own output is not a terminal (a test under tap). null when unset or
 * unopenable: no progress, nothing else changes.
 */
export function progressOnTerminal(what: string, total: number | null): Progress | null {
  const tty = process.env.GENSEE_PROGRESS_TTY;
  if (!tty) return null;
  let fd: number;
  try {
    fd = fs.openSync(tty, fs.constants.O_WRONLY | fs.constants.O_NOCTTY);
  } catch {
    return null;
  }
  if (!isatty(fd)) {
    fs.closeSync(fd);
    return null;
  }
  const stream: ProgressStream = {
    isTTY: true,
    write: (s: string) => {
      try {
        fs.writeSync(fd, s);
      } catch {
        /* the terminal went away: progress is only a courtesy */
      }
      return true;
    },
  };
  return new Progress(what, total, stream, []);
}
