// events.jsonl: the operation's boundary events and the watchdog's
// attention lines (docs/design.md, "Boundary events"). One writer per
// operation: the supervisor. Hash-chained like the other logs
// (src/evidence/chain.ts), so `gensee verify` checks it.
//
// Reporting only: a control has already decided when its event is written,
// and nothing waits for the line. Lines are written at once (they survive a
// kill of this process) and made durable by group commit, never on the
// answer path.
//
// A flood does not flood the log: at most 200 boundary lines per wall-clock
// second (src/events/gate.ts); the rest of that second becomes one
// {"type":"suppressed","count":N,"second":...} line. The counters keep every
// count regardless. While the state disk is below its reserve
// (src/state/space.ts) no boundary line is written at all: they are counted,
// and the count is one {"type":"suppressed",...,"low_space":true} line once
// space returns or the log closes.
import * as path from 'node:path';
import { ChainedLog } from '../evidence/chain';
import { readLines } from '../state/fsutil';
import { FloodGate } from './gate';
import { redactDetail, redactTarget } from './redact';
import type { LogHub } from './hub';
import type { BoundaryEvent, BoundaryKind, ClearedBy, EventFields, Signature } from './types';

export const EVENTS_FILE = 'events.jsonl';
/** boundary lines per second per operation before the rest is one suppressed line */
export const EVENTS_PER_SECOND = 200;

export interface BoundaryInput {
  kind: BoundaryKind;
  control: string;
  /** redacted and cut to one line of at most 300 characters here */
  detail: string;
  target?: string;
  /** when the control decided (default: now) */
  at?: Date | string;
  tool_id?: string;
  fault_id?: string;
}

export interface EventLogStats {
  written: number;
  suppressed: number;
}

export class EventLog {
  private readonly log: ChainedLog;
  private readonly gate: FloodGate;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** seq of the attention line not yet cleared, if any */
  private openAttention: number | null;
  readonly stats: EventLogStats = { written: 0, suppressed: 0 };
  private readonly onError: (e: Error) => void;
  /** the state disk is below its reserve: count, do not write */
  private readonly low: () => boolean;
  /** boundary lines counted while the disk was low, and the second the first fell in */
  private heldLow = 0;
  private heldLowFrom = '';

  private constructor(log: ChainedLog, openAttention: number | null, onError: (e: Error) => void, limit: number, low: () => boolean) {
    this.log = log;
    this.low = low;
    this.openAttention = openAttention;
    this.onError = onError;
    this.gate = new FloodGate(limit);
    // the suppressed count of a second that ended quietly is written by this tick
    this.timer = setInterval(() => this.flushSuppressed(Date.now()), 1000);
    this.timer.unref();
  }

  /** Open (or create) `<dir>/events.jsonl`; every line written is announced to hub. */
  static async open(dir: string, o: { hub?: LogHub; onError?: (e: Error) => void; limitPerSecond?: number; low?: () => boolean } = {}): Promise<EventLog> {
    const file = path.join(dir, EVENTS_FILE);
    const log = ChainedLog.openSync(file, { groupWindowMs: 20, onLine: o.hub ? (seq, text) => o.hub!.publish('events', seq, text) : undefined });
    let open: number | null;
    try {
      open = await lastOpenAttention(file);
    } catch (e) {
      log.closeSync();
      throw e;
    }
    return new EventLog(log, open, o.onError ?? (() => undefined), o.limitPerSecond ?? EVENTS_PER_SECOND, o.low ?? (() => false));
  }

  get seq(): number {
    return this.log.seq;
  }

  /** seq of the attention line in force, or null */
  get attention(): number | null {
    return this.openAttention;
  }

  /**
   * Record a refusal. Returns the line's seq, or 0 when the flood gate
   * counted it into this second's suppressed line instead.
   */
  boundary(e: BoundaryInput): number {
    if (this.closed) return 0;
    const now = Date.now();
    if (this.low()) {
      if (this.heldLow++ === 0) this.heldLowFrom = new Date(Math.floor(now / 1000) * 1000).toISOString();
      this.stats.suppressed++;
      return 0;
    }
    this.flushLow();
    const verdict = this.gate.admit(now);
    this.flushPending(verdict.flushed);
    if (!verdict.write) {
      this.stats.suppressed++;
      return 0;
    }
    const at = e.at === undefined ? new Date(now).toISOString() : typeof e.at === 'string' ? e.at : e.at.toISOString();
    const event: BoundaryEvent = { kind: e.kind, control: e.control, detail: redactDetail(e.detail), at };
    const target = e.target ? redactTarget(e.target) : '';
    if (target) event.target = target;
    const fields: EventFields = { type: 'boundary', event };
    if (e.tool_id) fields.tool_id = e.tool_id;
    if (e.fault_id) fields.fault_id = e.fault_id;
    return this.write(fields);
  }

  /** The watchdog's finding: in force until a person's message or the operation stopping. */
  raiseAttention(signature: Signature, detail: string, evidence: number[], refs?: string[]): number {
    const fields: EventFields & { refs?: string[] } = { type: 'attention', signature, detail: redactDetail(detail), evidence: evidence.slice(0, 64) };
    if (refs?.length) fields.refs = refs.slice(0, 64);
    const seq = this.write(fields);
    if (seq) this.openAttention = seq;
    return seq;
  }

  /** Clear attention in force (a no-op returning 0 when none is). */
  clearAttention(by: ClearedBy): number {
    if (this.openAttention === null) return 0;
    const seq = this.write({ type: 'attention_cleared', by });
    if (seq) this.openAttention = null;
    return seq;
  }

  private write(fields: EventFields): number {
    if (this.closed) return 0;
    if (this.broken) {
      // the log failed: counted, said once (the supervisor's failed state retries the disk)
      this.lostWhileBroken++;
      return 0;
    }
    try {
      this.log.appendTicket(fields as unknown as Record<string, unknown>, true);
      this.stats.written++;
      return this.log.seq;
    } catch (e) {
      this.broken = true;
      this.brokenSince = new Date().toISOString();
      this.lostWhileBroken++;
      this.onError(e as Error);
      return 0;
    }
  }

  /** the log failed: lines are counted, not written, until reopen() */
  private broken = false;
  private brokenSince = '';
  private lostWhileBroken = 0;

  /** the chained log (its failure, for the supervisor's failed state) */
  get chain(): ChainedLog {
    return this.log;
  }

  /**
   * After a failure, once the disk takes writes again: reopen the log (a
   * torn last line is recorded) and write how many lines were not written
   * meanwhile, as one suppressed line. Throws while the disk still refuses.
   */
  reopen(): void {
    if (!this.log.failure && !this.broken) return;
    this.log.reopen();
    const lost = this.lostWhileBroken;
    this.broken = false;
    this.lostWhileBroken = 0;
    if (lost) this.write({ type: 'suppressed', count: lost, second: this.brokenSince, evidence_failed: true });
  }

  private flushPending(p: { second: string; count: number } | null): void {
    if (p && p.count > 0) this.write({ type: 'suppressed', count: p.count, second: p.second });
  }

  private flushSuppressed(now: number): void {
    if (this.closed) return;
    this.flushPending(this.gate.flush(now));
    if (!this.low()) this.flushLow();
  }

  /** the count held while the disk was low, as one line */
  private flushLow(): void {
    if (this.heldLow === 0) return;
    const count = this.heldLow;
    this.heldLow = 0;
    this.write({ type: 'suppressed', count, second: this.heldLowFrom, low_space: true });
  }

  /**
   * Write what is pending (a suppressed count; attention_cleared when the
   * operation stops) and close once durable.
   */
  async close(o: { stopping?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    this.flushPending(this.gate.flush(Number.MAX_SAFE_INTEGER));
    this.flushLow();
    if (o.stopping) this.clearAttention('operation_stopped');
    this.closed = true;
    await this.log.close();
  }
}

/**
 * The seq of an attention line that no later attention_cleared line
 * clears, from the file as it is (a supervisor restart keeps attention in
 * force). Streamed: only lines naming attention are parsed.
 */
async function lastOpenAttention(file: string): Promise<number | null> {
  let open: number | null = null;
  await readLines(
    file,
    (line, complete) => {
      if (!complete || line.indexOf('"type":"attention') < 0) return;
      try {
        const v = JSON.parse(line.toString('utf8')) as { seq: number; type: string };
        if (v.type === 'attention') open = v.seq;
        else if (v.type === 'attention_cleared') open = null;
      } catch {
        /* a damaged line: verify reports it */
      }
    },
    { chunk: 1 << 16, missingOk: true },
  );
  return open;
}
