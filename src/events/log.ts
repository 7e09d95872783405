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
// count regardless. A suppressed line also says how many of its lines came
// from each executor tool's cgroup ("tools": {TOOL_ID: N}), so a tool's
// refusals are never lost to a flood of others (their fault lines in
// faults.jsonl name the tool too).
//
// Attention is open from its line until an attention_cleared line: a person
// through the operator path (`gensee attention clear`, control.sock) or the
// operation ending for good. Nothing else clears it: a supervisor restart
// reads what is open back from the file.
//
// While the state disk is below its reserve (src/state/space.ts) no
// boundary line is written at all: they are counted, and the count is one
// {"type":"suppressed",...,"low_space":true} line once space returns or the
// log closes.
import * as path from 'node:path';
import { ChainedLog } from '../evidence/chain';
import { readLines } from '../state/fsutil';
import { FloodGate } from './gate';
import { redactDetail, redactTarget } from './redact';
import type { LogHub } from './hub';
import type { BoundaryEvent, BoundaryKind, ClearedWho, EventFields, Signature } from './types';

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
  /** seqs of the attention lines not yet cleared, oldest first */
  private openAttention: number[];
  /** suppressed lines per second (its ISO start) per tool id, until that second's suppressed line is written */
  private readonly toolSuppressed = new Map<string, Map<string, number>>();
  readonly stats: EventLogStats = { written: 0, suppressed: 0 };
  private readonly onError: (e: Error) => void;
  /** the state disk is below its reserve: count, do not write */
  private readonly low: () => boolean;
  /** boundary lines counted while the disk was low, and the second the first fell in */
  private heldLow = 0;
  private heldLowFrom = '';

  private constructor(log: ChainedLog, openAttention: number[], onError: (e: Error) => void, limit: number, low: () => boolean) {
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
    let open: number[];
    try {
      open = (await readOpenAttention(file)).map((a) => a.seq);
    } catch (e) {
      log.closeSync();
      throw e;
    }
    return new EventLog(log, open, o.onError ?? (() => undefined), o.limitPerSecond ?? EVENTS_PER_SECOND, o.low ?? (() => false));
  }

  get seq(): number {
    return this.log.seq;
  }

  /** seq of the newest attention line in force, or null */
  get attention(): number | null {
    return this.openAttention.length ? this.openAttention[this.openAttention.length - 1] : null;
  }

  /** seqs of every attention line in force, oldest first */
  get openAttentionSeqs(): readonly number[] {
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
      if (e.tool_id) this.countToolSuppressed(now, e.tool_id);
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

  /**
   * The watchdog's finding: in force until a person clears it or the
   * operation ends for good. `agentEvents` names where refs "agent:N:HASH"
   * point (the --agent-events file, or "-" for the watch's stdin).
   */
  raiseAttention(signature: Signature, detail: string, evidence: number[], refs?: string[], agentEvents?: string): number {
    const fields: Extract<EventFields, { type: 'attention' }> = { type: 'attention', signature, detail: redactDetail(detail), evidence: evidence.slice(0, 64) };
    if (refs?.length) fields.refs = refs.slice(0, 64);
    if (agentEvents) fields.agent_events = agentEvents;
    const seq = this.write(fields);
    if (seq) {
      this.openAttention.push(seq);
      if (this.openAttention.length > 4096) this.openAttention.shift();
    }
    return seq;
  }

  /**
   * Clear every attention line in force: a person (who, and why), or the
   * operation ending for good. A no-op returning 0 when none is in force.
   */
  clearAttention(by: 'operation_stopped'): number;
  clearAttention(by: 'person', who: ClearedWho): number;
  clearAttention(by: 'person' | 'operation_stopped', who?: ClearedWho): number {
    if (!this.openAttention.length) return 0;
    const attention = [...this.openAttention];
    const seq =
      by === 'person'
        ? this.write({ type: 'attention_cleared', by, person: who!.person, note: redactDetail(who!.note), peer: who!.peer, attention })
        : this.write({ type: 'attention_cleared', by, attention });
    if (seq) this.openAttention = [];
    return seq;
  }

  /** every line written so far is durable (fdatasync) when this resolves */
  async flushNow(): Promise<void> {
    if (!this.closed) await this.log.flushNow();
  }

  private countToolSuppressed(now: number, tool: string): void {
    const second = new Date(Math.floor(now / 1000) * 1000).toISOString();
    let m = this.toolSuppressed.get(second);
    if (!m) {
      m = new Map();
      this.toolSuppressed.set(second, m);
    }
    // a bound on memory: tools beyond it are counted under "*"
    const key = m.has(tool) || m.size < MAX_TOOLS_PER_LINE ? tool : '*';
    m.set(key, (m.get(key) ?? 0) + 1);
  }

  private write(fields: EventFields): number {
    if (this.closed) return 0;
    if (this.broken) {
      // the log failed: counted, said once (the supervisor's failed state retries the disk)
      this.lostWhileBroken++;
      return 0;
    }
    try {
      this.log.appendTicket(fields as unknown as Record<string, unknown>, { sync: true });
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
    if (!p || p.count <= 0) return;
    const tools = this.toolSuppressed.get(p.second);
    // seconds whose count is written (or was never over): forgotten
    for (const s of this.toolSuppressed.keys()) if (s <= p.second) this.toolSuppressed.delete(s);
    if (tools?.size) this.write({ type: 'suppressed', count: p.count, second: p.second, tools: Object.fromEntries(tools) });
    else this.write({ type: 'suppressed', count: p.count, second: p.second });
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
   * operation ends for good: `stopping`) and close once durable. A
   * supervisor that only stops serving (a restart, `supervise` leaving the
   * workload running) leaves attention in force.
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

/** at most this many tools are named in one suppressed line; the rest are counted under "*" */
const MAX_TOOLS_PER_LINE = 64;

/** an attention line in force, as events.jsonl has it */
export interface OpenAttention {
  seq: number;
  /** when the line was written */
  at: string;
  signature: Signature;
  detail: string;
  evidence: number[];
  refs?: string[];
  agent_events?: string;
}

/**
 * The events.jsonl seqs every attention line so far names as evidence: spent,
 * whether or not the attention is still open (a watch reading the logs from
 * their start must not flag them again). At most `cap`, the newest kept.
 */
export async function readSpentEvidence(file: string, cap = 1 << 16): Promise<Set<number>> {
  const spent = new Set<number>();
  await readLines(
    file,
    (line, complete) => {
      if (!complete || line.indexOf('"type":"attention"') < 0) return;
      try {
        const v = JSON.parse(line.toString('utf8')) as { type: string; evidence?: unknown };
        if (v.type !== 'attention' || !Array.isArray(v.evidence)) return;
        for (const n of v.evidence) {
          if (typeof n !== 'number') continue;
          spent.add(n);
          if (spent.size > cap) spent.delete(spent.values().next().value as number);
        }
      } catch {
        /* a damaged line: verify reports it */
      }
    },
    { chunk: 1 << 16, missingOk: true },
  );
  return spent;
}

/**
 * The attention lines that no later attention_cleared line clears, from
 * events.jsonl as it is (a supervisor or watch restart keeps attention in
 * force), oldest first. Streamed: only lines naming attention are parsed.
 * A missing file has none.
 */
export async function readOpenAttention(file: string): Promise<OpenAttention[]> {
  let open: OpenAttention[] = [];
  await readLines(
    file,
    (line, complete) => {
      if (complete) open = foldAttention(open, line);
    },
    { chunk: 1 << 16, missingOk: true },
  );
  return open;
}

/** readOpenAttention's rule for one complete events.jsonl line: the attention in force after it (open is changed in place, or replaced) */
export function foldAttention(open: OpenAttention[], line: Buffer): OpenAttention[] {
  if (line.indexOf('"type":"attention') < 0) return open;
  try {
    const v = JSON.parse(line.toString('utf8')) as OpenAttention & { type: string };
    if (v.type === 'attention') {
      const { seq, at, signature, detail, evidence, refs, agent_events } = v;
      open.push({ seq, at, signature, detail, evidence, ...(refs ? { refs } : {}), ...(agent_events ? { agent_events } : {}) });
      if (open.length > 4096) open.shift();
    } else if (v.type === 'attention_cleared') return [];
  } catch {
    /* a damaged line: verify reports it */
  }
  return open;
}
