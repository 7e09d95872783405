// Where every line appended to an operation's logs is announced, in order,
// as the exact text written (no newline). The live stream (src/events/stream.ts)
// subscribes; a subscriber must never block or throw into the writer.
import type { LogName } from './types';

export interface HubLine {
  log: LogName;
  seq: number;
  /** the line as written, without its newline */
  text: string;
}

export type HubListener = (line: HubLine) => void;

export class LogHub {
  private readonly listeners = new Set<HubListener>();
  private readonly drains = new Map<LogName, () => void>();

  /** how to put every line announced for `log` into its file now (a log whose syncer writes its lines) */
  setDrain(log: LogName, fn: () => void): void {
    this.drains.set(log, fn);
  }

  /**
   * Every line announced for `log` so far is in its file when this returns:
   * a replay that subscribed first and then reads the file misses nothing.
   */
  drain(log: LogName): void {
    this.drains.get(log)?.();
  }

  /** called by the log writer after each line is written */
  publish(log: LogName, seq: number, text: string): void {
    if (this.listeners.size === 0) return;
    const line = { log, seq, text };
    for (const l of this.listeners) {
      try {
        l(line);
      } catch {
        /* a subscriber's failure is its own: the writer goes on */
      }
    }
  }

  subscribe(l: HubListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}
