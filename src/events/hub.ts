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
