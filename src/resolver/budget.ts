// What a workload can make the resolver write (docs/design.md, "The shared
// state disk"): at most `limit` refused faults per wall-clock second per
// operation are written in full (the fault line and its deny); the rest of
// that second — and every refusal while the state disk is below its reserve
// — is only counted, and the count comes back exactly once, by reason, for
// one {"kind":"suppressed",...} line in faults.jsonl. Counts are never lost
// and never handed out twice; the counters keep every denial regardless.
//
// Pure: the time and the disk's state are passed in.

export const REFUSALS_PER_SECOND = 200;

export interface SuppressedRefusals {
  /** refusals counted, not written */
  count: number;
  /** by deny reason (or record kind) */
  reasons: Record<string, number>;
  /** ISO start of the first and of the last second they fell in */
  from: string;
  to: string;
  /** true when some were counted because the state disk was below its reserve */
  low_space: boolean;
  /** of those, the ones from an executor tool's cgroup, by tool id (at most 64 named, the rest under "*"):
   * faults.jsonl alone still says how often a tool was refused, however many lines a flood cost */
  tools?: Record<string, number>;
}

const MAX_TOOLS = 64;

export class RefusalBudget {
  readonly limit: number;
  private second = -1;
  private written = 0;
  private held: SuppressedRefusals | null = null;

  constructor(limit = REFUSALS_PER_SECOND) {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`RefusalBudget: limit must be a whole number >= 0, not ${limit}`);
    this.limit = limit;
  }

  private roll(nowMs: number): void {
    const sec = Math.floor(nowMs / 1000);
    if (sec !== this.second) {
      this.second = sec;
      this.written = 0;
    }
  }

  /** is this second's allowance spent already, with `pending` more that may still be written? (nothing is counted) */
  full(nowMs: number, pending = 0): boolean {
    this.roll(nowMs);
    return this.written + pending >= this.limit;
  }

  /** one refusal at nowMs: true = write it; false = it is counted into the held count */
  admit(nowMs: number, reason: string, low: boolean, tool?: string): boolean {
    this.roll(nowMs);
    if (!low && this.written < this.limit) {
      this.written++;
      return true;
    }
    const at = new Date(this.second * 1000).toISOString();
    const h = (this.held ??= { count: 0, reasons: {}, from: at, to: at, low_space: false });
    h.count++;
    h.reasons[reason] = (h.reasons[reason] ?? 0) + 1;
    if (tool !== undefined) {
      const t = (h.tools ??= {});
      const k = tool in t || Object.keys(t).length < MAX_TOOLS ? tool : '*';
      t[k] = (t[k] ?? 0) + 1;
    }
    h.to = at;
    if (low) h.low_space = true;
    return false;
  }

  /** a refusal written without asking first (the allowance was not spent when it began) */
  note(nowMs: number): void {
    this.roll(nowMs);
    this.written++;
  }

  /**
   * The held count, once, when it should be written now: its last second is
   * over and the disk is not low — or always, with force (the log closes).
   */
  take(nowMs: number, low: boolean, force = false): SuppressedRefusals | null {
    const h = this.held;
    if (!h) return null;
    if (!force && (low || Math.floor(nowMs / 1000) * 1000 <= Date.parse(h.to))) return null;
    this.held = null;
    return h;
  }

  /** refusals counted and not yet handed out */
  get pending(): number {
    return this.held?.count ?? 0;
  }
}
