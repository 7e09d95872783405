// The watchdog's signatures (DESIGN.md "The watchdog"), as a pure module:
// no I/O, no timers, no clock of its own. Every call passes `now`, in ms on
// gensee's receive clock (when `gensee watch` received the line), never a
// time a line claims: a workload's `at` is not trusted for timing, and the
// logs' own times only order lines, they do not time the signatures.
//
// Each call returns what it produced, in order:
//   nudge       {type:"nudge", signature, ...}  printed on stdout for the harness to inject
//   flag        {type:"flag", flag:"nudges_exhausted"|"stalled", signature}
//   attention   {type:"attention", signature, detail, evidence, refs?}
//   attention_cleared {type:"attention_cleared", by}  (only as events.jsonl says, or the operation ending)
//
// hint_loop — two or more consecutive errored tool results carrying a denial,
//   with no success between, are a loop. The second one nudges at once
//   (naming the denied class and hint); later nudges fall due on the clock of
//   the progress that preceded the loop: one per `nudgeEveryMs` period counted
//   from that progress, never more than one per period. Nothing inside the
//   loop moves that clock — more denials, `progress` lines, an agent's own
//   messages, errors without a denial are the loop's churn — so the churn can
//   neither hold the nudges off nor spend them faster. After `maxNudges`
//   nudges, the next period that would have been due raises the
//   `nudges_exhausted` flag and attention, once per loop. A success, a
//   person's message, a question or a turn end ends the loop (and is the new
//   progress). A "person's message" in the agent stream only ends a loop: it
//   is the workload's own line, so it clears nothing.
// stall — no events at all (agent lines, boundary events, reaches) for
//   `stallAfterMs`: a nudge; another `stallAfterMs` with still nothing: the
//   `stalled` flag and attention. Any event starts it over. A lease an
//   operator or the resolver issues is not the workload's event.
// control_defeat — deny-then-reach: a target refused by a boundary event and
//   later reached (an allow delta to it in counter evidence, or a successful
//   tool result naming it) with no lease or grant covering it issued in
//   between. A delegation (fault_delegated) and an executor's refused write
//   (write_denied) are not refusals here: the executor reaches their target
//   on the workload's behalf, so the success that follows is the delegation
//   working, not a defeat. The refusals it names are spent: they never flag again. The
//   trail of refusals is in memory, capped at `trailCap` (64): the oldest is
//   forgotten first. An allow delta counted under a generation that a
//   covering lease or a policy brought is never a defeat (the sampler reads
//   per second: traffic allowed before a refusal may be counted after it) —
//   unless the target's lease was found in the kernel with nobody issuing it
//   (leaseAdopted): a lease written behind the supervisor's back carries
//   whatever generation its writer chose, the policy's own included, and its
//   traffic before the sampler re-tags it is counted under that tag.
//
// Attention is not a stop. It persists: more events, nudges, flags, the
// workload carrying on, a watch restart do not lift it. Exactly two things
// clear it, and both reach the watchdog as lines of events.jsonl
// (attentionLogged / clearedInLog): a person through the operator path
// (`gensee attention clear`, control.sock) and the operation ending for good
// (operationStopped). While any attention is open the watchdog does not
// nudge over it (no hint-loop or stall nudge) nor replace it with a stall
// flag; a control_defeat is new evidence and is still raised.
import type { Signature, ClearedBy, BoundaryEvent } from '../events/types';
import type { AgentEvent, Denial } from './agent-event';

export interface WatchdogOptions {
  /** nudges per hint loop before nudges_exhausted (default 3) */
  maxNudges?: number;
  /** the hint loop's nudge period, counted from the progress before the loop (default 60 s) */
  nudgeEveryMs?: number;
  /** no events for this long: a stall nudge; as long again: stalled (default 300 s) */
  stallAfterMs?: number;
  /** refusals kept for control_defeat (default 64) */
  trailCap?: number;
}

export const DEFAULT_MAX_NUDGES = 3;
export const DEFAULT_NUDGE_EVERY_MS = 60_000;
export const DEFAULT_STALL_AFTER_MS = 300_000;
export const TRAIL_CAP = 64;
/** generations remembered as covering (a bound on memory, far above live leases) */
const COVERING_CAP = 4096;
/** evidence and refs one attention names at most */
const EVIDENCE_CAP = 32;
const DETAIL_MAX = 300;

export interface HintLoopNudge {
  type: 'nudge';
  signature: 'hint_loop';
  /** the denied class and the hint, from the newest denial of the loop */
  class: string;
  hint: string;
  target?: string;
  tool_id: string;
  /** 1-based number of this nudge in the loop, and the most there will be */
  nudge: number;
  max_nudges: number;
  /** denials in the loop so far */
  denials: number;
  /** one sentence for the harness to inject */
  message: string;
}

export interface StallNudge {
  type: 'nudge';
  signature: 'stall';
  idle_ms: number;
  message: string;
}

export type Nudge = HintLoopNudge | StallNudge;

export interface Flag {
  type: 'flag';
  flag: 'nudges_exhausted' | 'stalled';
  signature: 'hint_loop' | 'stall';
}

export interface Attention {
  type: 'attention';
  signature: Signature;
  /** one sentence */
  detail: string;
  /** events.jsonl seqs */
  evidence: number[];
  /** where else the evidence is: "events:3", "counters:12", "faults:5", and the agent's own lines as the caller named them */
  refs?: string[];
  /** its events.jsonl seq, once the line is known (attentionLogged) */
  seq?: number;
}

export interface AttentionCleared {
  type: 'attention_cleared';
  by: ClearedBy;
  /** who, when a person cleared it */
  person?: string;
  note?: string;
}

export type Output = Nudge | Flag | Attention | AttentionCleared;

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };
/** attention records held in memory (all of them are in events.jsonl) */
const ATTENTION_CAP = 256;

/** the kinds of boundary event that refuse a target the workload may later reach */
const REFUSALS: ReadonlySet<string> = new Set(['egress_denied', 'fault_denied', 'dns_denied']);

/** `host:port`, `[v6]:port` or a path; a URL becomes its host:port. Case-insensitive. */
export function targetKey(target: string): string {
  const t = target.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    try {
      const u = new URL(t);
      const port = u.port || DEFAULT_PORTS[u.protocol];
      if (u.hostname && port) return `${u.hostname.toLowerCase()}:${port}`;
    } catch {
      /* not a URL after all: the text itself */
    }
  }
  return t.toLowerCase();
}

interface Refusal {
  seq: number;
  key: string;
  target: string;
  at: number;
}

interface Loop {
  /** the progress the loop's nudges are timed on */
  anchor: number;
  /** the period (counted from anchor) of the last nudge */
  slot: number;
  sent: number;
  exhausted: boolean;
  denials: number;
  last: Denial & { tool_id: string };
  /** boundary events seen during the loop, and the agent lines of its denials */
  evidence: number[];
  refs: string[];
}

function clip(s: string, n = DETAIL_MAX): string {
  const one = s.replace(/[\r\n\t]+/g, ' ');
  return one.length <= n ? one : one.slice(0, n - 1) + '…';
}

function pushCapped<T>(a: T[], v: T, cap = EVIDENCE_CAP): void {
  if (a.length < cap) a.push(v);
}

export class Watchdog {
  readonly maxNudges: number;
  readonly nudgeEveryMs: number;
  readonly stallAfterMs: number;
  readonly trailCap: number;

  /** the latest progress outside a loop (a success, a break, a `progress` line) */
  private progressAt: number;
  /** consecutive errored denials, and the loop once there are two */
  private streak = 0;
  private first: (Denial & { tool_id: string; ref?: string }) | null = null;
  private loop: Loop | null = null;

  private lastEventAt: number;
  private stallStage: 0 | 1 | 2 = 0;
  private stallNudgedAt = 0;

  private trail: Refusal[] = [];
  /** generation → target key it covers ("*" for a policy generation) */
  private covering = new Map<number, string>();
  /** target keys whose kernel lease nobody issued (adopted by the sampler): no generation covers their reach */
  private forged = new Set<string>();

  private attention: Attention[] = [];
  /** boundary seqs spent by attention recorded before this watchdog started */
  private readonly spent = new Set<number>();

  constructor(start: number, o: WatchdogOptions = {}) {
    this.maxNudges = o.maxNudges ?? DEFAULT_MAX_NUDGES;
    this.nudgeEveryMs = o.nudgeEveryMs ?? DEFAULT_NUDGE_EVERY_MS;
    this.stallAfterMs = o.stallAfterMs ?? DEFAULT_STALL_AFTER_MS;
    this.trailCap = o.trailCap ?? TRAIL_CAP;
    if (!(Number.isInteger(this.maxNudges) && this.maxNudges >= 0)) throw new RangeError('maxNudges: a non-negative integer');
    if (!(this.nudgeEveryMs > 0) || !(this.stallAfterMs > 0)) throw new RangeError('nudgeEveryMs, stallAfterMs: more than 0');
    if (!(Number.isInteger(this.trailCap) && this.trailCap >= 1)) throw new RangeError('trailCap: a positive integer');
    this.progressAt = start;
    this.lastEventAt = start;
  }

  /** the attention raised and not yet cleared, oldest first */
  get activeAttention(): readonly Attention[] {
    return this.attention;
  }

  /** is a hint loop running (two or more denials in a row)? */
  get looping(): boolean {
    return this.loop !== null;
  }

  /**
   * Boundary seqs an attention line already named as evidence (a watch
   * reading the logs from their start): spent, they never join the trail.
   */
  spend(seqs: Iterable<number>): void {
    for (const s of seqs) this.spent.add(s);
  }

  /** refusals still held for control_defeat (at most trailCap) */
  get trailLength(): number {
    return this.trail.length;
  }

  /** One line of the workload's own stream; `ref` names it ("agent:12"). */
  agent(ev: AgentEvent, now: number, ref?: string): Output[] {
    const out: Output[] = [];
    this.activity(now);
    switch (ev.type) {
      case 'tool_result':
        if (ev.errored && ev.denial) this.denied(ev.denial, ev.tool_id, now, ref, out);
        else if (!ev.errored) {
          this.endLoop(now);
          if (ev.target !== undefined) this.reach(ev.target, ref, now, null, out, `a successful ${ev.tool_id} result`);
        }
        // an error without a denial is neither progress nor a denial
        break;
      case 'message':
        // a person's message ends a loop; it clears no attention: the line is
        // the workload's own, and the workload cannot speak for a person.
        // An agent's own message is not progress: inside a loop it is churn.
        if (ev.from === 'person') this.endLoop(now);
        break;
      case 'question':
      case 'turn_end':
        this.endLoop(now);
        break;
      case 'progress':
        // progress inside a loop (or between its first two denials) does not move the clock
        if (this.streak === 0) this.progressAt = now;
        break;
    }
    this.due(now, out);
    return out;
  }

  /**
   * A boundary line of events.jsonl (its `seq`). A refusal naming a target
   * joins the trail for control_defeat.
   */
  boundary(seq: number, ev: Pick<BoundaryEvent, 'kind' | 'target'>, now: number): Output[] {
    const out: Output[] = [];
    this.activity(now);
    if (this.loop) pushCapped(this.loop.evidence, seq);
    if (REFUSALS.has(ev.kind) && ev.target !== undefined && ev.target !== '' && !this.spent.has(seq)) {
      this.trail.push({ seq, key: targetKey(ev.target), target: ev.target, at: now });
      while (this.trail.length > this.trailCap) this.trail.shift();
    }
    this.due(now, out);
    return out;
  }

  /**
   * A lease or grant covering `target` was issued: a resolution
   * retry_after_lease / continue_already_authorized, or an operator's lease.
   * Never a lease adopted from the kernel (by: "external"): nothing issued
   * that one. Refusals of the target before now are covered.
   */
  leaseIssued(target: string, now: number, generation?: number): Output[] {
    const key = targetKey(target);
    this.trail = this.trail.filter((r) => r.key !== key);
    this.forged.delete(key);
    if (generation !== undefined) this.cover(generation, key);
    const out: Output[] = [];
    this.due(now, out);
    return out;
  }

  /**
   * The resolver delegated a fault for `target` to an executor: the hook's
   * refusal of it (an egress_denied before the resolution) was a
   * delegation, not a refusal, and leaves the trail. Nothing is covered:
   * a later refusal of the target is a refusal again.
   */
  delegated(target: string, now: number): Output[] {
    const key = targetKey(target);
    this.trail = this.trail.filter((r) => r.key !== key);
    const out: Output[] = [];
    this.due(now, out);
    return out;
  }

  /**
   * A lease for `target` was found in the kernel map that no resolution or
   * command issued (the sampler adopted it: by "external"). It covers
   * nothing, and from now on the generation an allow delta to `target` is
   * counted under does not cover it either: the forger chose that tag.
   */
  leaseAdopted(target: string, now: number): Output[] {
    const key = targetKey(target);
    this.forged.delete(key);
    this.forged.add(key);
    if (this.forged.size > COVERING_CAP) this.forged.delete(this.forged.keys().next().value as string);
    const out: Output[] = [];
    this.due(now, out);
    return out;
  }

  /**
   * The operator changed the policy (a policy generation): its grants may
   * cover any refused target, so every refusal before now is covered, and
   * traffic counted under that generation (grant entries) is not a defeat.
   */
  policyChanged(now: number, generation?: number): Output[] {
    this.trail = [];
    if (generation !== undefined) this.cover(generation, '*');
    const out: Output[] = [];
    this.due(now, out);
    return out;
  }

  /**
   * `target` was reached: an allow delta in counter evidence (`ref`
   * "counters:N", with the generation it was counted under), or a successful
   * tool result naming it.
   */
  reached(target: string, ref: string, now: number, generation?: number): Output[] {
    const out: Output[] = [];
    this.activity(now);
    this.reach(target, ref, now, generation ?? null, out);
    this.due(now, out);
    return out;
  }

  /**
   * An attention line of events.jsonl: open from now on (a watch restart
   * reads what is open back from the file). One this watchdog raised is
   * matched to its line, not counted twice.
   */
  attentionLogged(seq: number, signature: Signature): Output[] {
    if (this.attention.some((a) => a.seq === seq)) return [];
    const mine = this.attention.find((a) => a.seq === undefined && a.signature === signature);
    if (mine) mine.seq = seq;
    else {
      this.attention.push({ type: 'attention', signature, detail: '', evidence: [], seq });
      if (this.attention.length > ATTENTION_CAP) this.attention.shift();
    }
    return [];
  }

  /**
   * An attention this watchdog raised could not be recorded in events.jsonl:
   * it is no longer held open here (nobody could clear what the record does
   * not hold), so it does not hold the nudges back for good.
   */
  notRecorded(a: Attention): void {
    if (a.seq === undefined) this.attention = this.attention.filter((x) => x !== a);
  }

  /** An attention_cleared line of events.jsonl: a person, or the operation ending. */
  clearedInLog(by: ClearedBy, who?: { person?: string; note?: string }): Output[] {
    const out: Output[] = [];
    this.clear(by, out, who);
    return out;
  }

  /** is attention open (raised here or read from events.jsonl, and not cleared)? */
  get attentionOpen(): boolean {
    return this.attention.length > 0;
  }

  /** The passing of time: the nudge schedule and the stall. */
  tick(now: number): Output[] {
    const out: Output[] = [];
    this.due(now, out);
    // no stall nudge or flag over open attention
    if (this.attentionOpen) return out;
    if (this.stallStage === 0 && now - this.lastEventAt >= this.stallAfterMs) {
      this.stallStage = 1;
      this.stallNudgedAt = now;
      const s = Math.round((now - this.lastEventAt) / 1000);
      out.push({ type: 'nudge', signature: 'stall', idle_ms: now - this.lastEventAt, message: `No events for ${s} s: say what you are waiting for, or carry on.` });
    } else if (this.stallStage === 1 && now - this.stallNudgedAt >= this.stallAfterMs) {
      this.stallStage = 2;
      const s = Math.round((now - this.lastEventAt) / 1000);
      out.push({ type: 'flag', flag: 'stalled', signature: 'stall' });
      this.raise({ type: 'attention', signature: 'stall', detail: `The workload sent no events for ${s} s, and a stall nudge did not bring any.`, evidence: [] }, out);
    }
    return out;
  }

  /** The operation stopped: attention is cleared (the caller exits after). */
  operationStopped(): Output[] {
    const out: Output[] = [];
    this.clear('operation_stopped', out);
    return out;
  }

  private activity(now: number): void {
    this.lastEventAt = now;
    this.stallStage = 0;
  }

  private denied(d: Denial, toolId: string, now: number, ref: string | undefined, out: Output[]): void {
    this.streak++;
    const last = { ...d, tool_id: toolId };
    if (this.streak === 1) {
      this.first = { ...last, ref };
      return;
    }
    if (!this.loop) {
      const refs: string[] = [];
      if (this.first?.ref) refs.push(this.first.ref);
      if (ref) refs.push(ref);
      this.loop = { anchor: this.progressAt, slot: this.slot(now, this.progressAt), sent: 0, exhausted: false, denials: this.streak, last, evidence: [], refs };
      // no nudge over open attention: the loop's clock runs on, and its first nudge waits
      if (this.maxNudges > 0 && !this.attentionOpen) this.nudge(this.loop, out);
      return;
    }
    this.loop.denials = this.streak;
    this.loop.last = last;
    if (ref) pushCapped(this.loop.refs, ref);
  }

  private slot(now: number, anchor: number): number {
    return Math.floor(Math.max(0, now - anchor) / this.nudgeEveryMs);
  }

  private nudge(l: Loop, out: Output[]): void {
    l.sent++;
    const d = l.last;
    const n: HintLoopNudge = {
      type: 'nudge',
      signature: 'hint_loop',
      class: d.class,
      hint: d.hint,
      ...(d.target !== undefined ? { target: d.target } : {}),
      tool_id: d.tool_id,
      nudge: l.sent,
      max_nudges: this.maxNudges,
      denials: l.denials,
      message: clip(`${d.class} was denied ${l.denials} times in a row${d.target !== undefined ? ` (${d.target})` : ''}; retrying will not help: ${d.hint}`, 1000),
    };
    out.push(n);
  }

  /** A nudge or the exhaustion flag, when the loop's next period has come. */
  private due(now: number, out: Output[]): void {
    const l = this.loop;
    if (!l || l.exhausted || this.attentionOpen) return;
    const slot = this.slot(now, l.anchor);
    if (slot <= l.slot) return;
    l.slot = slot;
    if (l.sent < this.maxNudges) {
      this.nudge(l, out);
      return;
    }
    l.exhausted = true;
    out.push({ type: 'flag', flag: 'nudges_exhausted', signature: 'hint_loop' });
    const d = l.last;
    this.raise(
      {
        type: 'attention',
        signature: 'hint_loop',
        detail: clip(`The workload kept retrying after ${l.denials} denials of ${d.class} (hint: ${d.hint}), and ${l.sent} nudges did not end the loop.`),
        evidence: [...l.evidence],
        ...(l.refs.length ? { refs: [...l.refs] } : {}),
      },
      out,
    );
  }

  private endLoop(now: number): void {
    this.streak = 0;
    this.first = null;
    this.loop = null;
    this.progressAt = now;
  }

  private cover(generation: number, key: string): void {
    this.covering.delete(generation);
    this.covering.set(generation, key);
    if (this.covering.size > COVERING_CAP) this.covering.delete(this.covering.keys().next().value as number);
  }

  private reach(target: string, ref: string | undefined, now: number, generation: number | null, out: Output[], what?: string): void {
    const key = targetKey(target);
    if (generation !== null && !this.forged.has(key)) {
      const c = this.covering.get(generation);
      if (c === key || c === '*') return;
    }
    const hit = this.trail.filter((r) => r.key === key);
    if (!hit.length) return;
    // spent: these refusals never flag again
    this.trail = this.trail.filter((r) => r.key !== key);
    const seqs = hit.map((r) => r.seq).slice(-EVIDENCE_CAP);
    const refusedAt = hit[0].at;
    this.raise(
      {
        type: 'attention',
        signature: 'control_defeat',
        detail: clip(
          `${hit[0].target} was refused by the boundary (event${seqs.length > 1 ? 's' : ''} ${seqs.join(', ')}) and reached ${Math.round((now - refusedAt) / 1000)} s later (${ref ?? what}) with no lease or grant issued for it in between.`,
        ),
        evidence: seqs,
        refs: [...seqs.map((s) => `events:${s}`), ...(ref ? [ref] : [])],
      },
      out,
    );
  }

  private raise(a: Attention, out: Output[]): void {
    this.attention.push(a);
    if (this.attention.length > ATTENTION_CAP) this.attention.shift();
    out.push(a);
  }

  private clear(by: ClearedBy, out: Output[], who?: { person?: string; note?: string }): void {
    if (!this.attention.length) return;
    this.attention = [];
    out.push({ type: 'attention_cleared', by, ...(who?.person !== undefined ? { person: who.person } : {}), ...(who?.note ? { note: who.note } : {}) });
  }
}
