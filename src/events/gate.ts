// The flood gate of one operation's boundary lines (DESIGN, "Boundary
// events"): at most `limit` boundary lines per wall-clock second; the lines
// beyond are only counted, and once that second is over its count comes back
// exactly once, for the caller to write one
// `{"type":"suppressed","count":N,"second":"<ISO of the second's start>"}`
// line. Counts are never lost here and never handed out twice (the counters
// log keeps every denial anyway: this only bounds events.jsonl).
//
// Pure: the time is passed in (milliseconds since the epoch, Date.now()),
// there is no timer inside. How the caller uses it:
//
//   const gate = new FloodGate();
//   function onBoundary(ev) {
//     const a = gate.admit(Date.now());
//     if (a.flushed) writeSuppressed(a.flushed); // an earlier second's count
//     if (a.write) writeBoundary(ev);
//   }
//   // a quiet spell after a flood still gets its suppressed line:
//   setInterval(() => { const s = gate.flush(Date.now()); if (s) writeSuppressed(s); }, 1000).unref();
//   // when the operation stops: the current second's count, not yet over
//   const last = gate.drain(); if (last) writeSuppressed(last);
//   // (or gate.flush(Number.MAX_SAFE_INTEGER): any time past the current
//   // second ends it, and a time past the last Date counts as the last Date)
//
// admit() and flush() share the hand-out: whichever first sees a later
// second returns the count of the second that is over, and the other then
// sees nothing. A second with no line beyond the limit gives nothing (no
// `count: 0` line). A second is floor(ms / 1000), so a clock stepped back
// starts a new second rather than holding the gate shut; a time beyond the
// range of Date (±8.64e15 ms, ±Infinity) counts as its end, and NaN counts
// in the current second.

/** one suppressed line's fields */
export interface Suppressed {
  /** the start of the second, e.g. 2026-12-01T10:00:00.000Z */
  second: string;
  /** the boundary lines of that second beyond the limit */
  count: number;
}

/**
 * write: whether to write this boundary line. flushed: an earlier second's
 * count, handed out once (write its suppressed line before this one), or null.
 */
export type Admission = { write: true; flushed: Suppressed | null } | { write: false; flushed: Suppressed | null };

/** the most ms that Date can represent */
const MAX_DATE_MS = 8.64e15;

export const DEFAULT_LIMIT_PER_SECOND = 200;

export class FloodGate {
  readonly limit: number;
  /** the current second (floor(ms / 1000)), or null before the first call */
  private second: number | null = null;
  /** lines written in the current second */
  private written = 0;
  /** lines of the current second beyond the limit, not yet handed out */
  private over = 0;

  constructor(limitPerSecond = DEFAULT_LIMIT_PER_SECOND) {
    if (!Number.isSafeInteger(limitPerSecond) || limitPerSecond < 0) {
      throw new RangeError(`FloodGate: limitPerSecond must be a whole number >= 0, not ${limitPerSecond}`);
    }
    this.limit = limitPerSecond;
  }

  /** one boundary line at nowMs: write it or count it */
  admit(nowMs: number): Admission {
    const closed = this.roll(nowMs);
    let write: boolean;
    if (this.written < this.limit) {
      this.written++;
      write = true;
    } else {
      this.over++;
      write = false;
    }
    return write ? { write: true, flushed: closed } : { write: false, flushed: closed };
  }

  /**
   * From a timer (every second) or before a write: the count of a second that
   * is over at nowMs, once; null when there is none (or the second is not
   * over yet).
   */
  flush(nowMs: number): Suppressed | null {
    return this.roll(nowMs);
  }

  /**
   * At the end (the operation stops): the current second's count now, though
   * the second is not over; null when there is none. Later lines of the same
   * second are still limited and counted afresh.
   */
  drain(): Suppressed | null {
    if (this.second === null || this.over === 0) return null;
    const s = { second: isoSecond(this.second), count: this.over };
    this.over = 0;
    return s;
  }

  /** lines of the current second beyond the limit, not yet handed out */
  get pending(): number {
    return this.over;
  }

  /** move to nowMs's second; the count of the second left behind, if any */
  private roll(nowMs: number): Suppressed | null {
    const sec = typeof nowMs !== 'number' || Number.isNaN(nowMs) ? (this.second ?? 0) : Math.floor(Math.min(Math.max(nowMs, -MAX_DATE_MS), MAX_DATE_MS) / 1000);
    if (sec === this.second) return null;
    const closed = this.second !== null && this.over > 0 ? { second: isoSecond(this.second), count: this.over } : null;
    this.second = sec;
    this.written = 0;
    this.over = 0;
    return closed;
  }
}

function isoSecond(sec: number): string {
  return new Date(sec * 1000).toISOString();
}
