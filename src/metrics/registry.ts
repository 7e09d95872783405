// The Prometheus exposition of an operation's evidence (prom-client). Names
// follow Prometheus conventions: the gensee_ prefix, base units (seconds),
// _total for counters, the operation as the "op" label. Every value is set
// from readEvidence() at scrape time (src/metrics/evidence.ts): the registry
// holds no count of its own between scrapes.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EvidenceFigures } from './evidence';

/** fault → resolution, seconds: the pause a workload's call waits */
export const ANSWER_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class EvidenceMetrics {
  readonly registry = new Registry();
  private readonly faults: Counter<'op' | 'source'>;
  private readonly resolutions: Counter<'op' | 'action' | 'reason'>;
  private readonly refusals: Counter<'op' | 'via' | 'reason'>;
  private readonly openFaults: Gauge<'op'>;
  private readonly answer: Histogram<'op' | 'source'>;
  private readonly allowed: Counter<'op' | 'source'>;
  private readonly denied: Counter<'op' | 'reason'>;
  private readonly lost: Counter<'op'>;
  private readonly counterFull: Counter<'op'>;
  private readonly leaseEnds: Counter<'op' | 'why'>;
  private readonly leasesLive: Gauge<'op'>;
  private readonly events: Counter<'op' | 'kind'>;
  private readonly suppressed: Counter<'op'>;
  private readonly attention: Gauge<'op'>;
  private readonly restarts: Counter<'op'>;

  constructor() {
    const registers = [this.registry];
    this.faults = new Counter({ name: 'gensee_faults_total', help: 'capability faults recorded in faults.jsonl, by where they came from', labelNames: ['op', 'source'], registers });
    this.resolutions = new Counter({ name: 'gensee_resolutions_total', help: 'resolutions recorded in faults.jsonl, by action and reason', labelNames: ['op', 'action', 'reason'], registers });
    this.refusals = new Counter({ name: 'gensee_refusals_total', help: 'refusal lines in faults.jsonl (refused before it became a fault: a peer without the token, a bad frame, a hook event), by where and why', labelNames: ['op', 'via', 'reason'], registers });
    this.openFaults = new Gauge({ name: 'gensee_open_faults', help: 'faults in faults.jsonl with no resolution yet', labelNames: ['op'], registers });
    this.answer = new Histogram({
      name: 'gensee_fault_answer_seconds',
      help: 'the slow path: from a fault line to its resolution line in faults.jsonl (millisecond resolution); the fast path (a kernel lease hit) has no answer to wait for and is counted in gensee_connections_allowed_total',
      labelNames: ['op', 'source'],
      buckets: ANSWER_BUCKETS,
      registers,
    });
    this.allowed = new Counter({ name: 'gensee_connections_allowed_total', help: 'connects and sends the boundary let through (counters.jsonl allow deltas), by counter source', labelNames: ['op', 'source'], registers });
    this.denied = new Counter({ name: 'gensee_connections_denied_total', help: 'connects and sends refused (counters.jsonl deny deltas), by reason', labelNames: ['op', 'reason'], registers });
    this.lost = new Counter({ name: 'gensee_ringbuf_lost_events_total', help: 'fault events the kernel ring buffer had no room for (counters.jsonl lost_events)', labelNames: ['op'], registers });
    this.counterFull = new Counter({ name: 'gensee_counter_map_full_total', help: 'counts the kernel counter map had no room for (counters.jsonl counter_full)', labelNames: ['op'], registers });
    this.leaseEnds = new Counter({ name: 'gensee_lease_ends_total', help: 'leases that left the kernel map (counters.jsonl), by why', labelNames: ['op', 'why'], registers });
    this.leasesLive = new Gauge({ name: 'gensee_leases_live', help: 'leases in network.json that have not expired', labelNames: ['op'], registers });
    this.events = new Counter({ name: 'gensee_boundary_events_total', help: 'boundary event lines in events.jsonl, by kind', labelNames: ['op', 'kind'], registers });
    this.suppressed = new Counter({ name: 'gensee_boundary_events_suppressed_total', help: 'boundary events not written one by one (a flood or a low disk), from the suppressed lines', labelNames: ['op'], registers });
    this.attention = new Gauge({ name: 'gensee_attention_open', help: "the watchdog's attention lines in force (1 or more: a person should look)", labelNames: ['op'], registers });
    this.restarts = new Counter({ name: 'gensee_resolver_restarts_total', help: "times the operation's resolver started again after its first start (counters.jsonl sampler start lines, or faults.jsonl resolver_takeover lines where more)", labelNames: ['op'], registers });
  }

  /** set every metric to the figures (replacing whatever the last scrape set) */
  set(f: EvidenceFigures): void {
    this.registry.resetMetrics();
    const op = f.op;
    for (const [source, n] of f.faults.faults) this.faults.inc({ op, source }, n);
    for (const [k, n] of f.faults.resolutions) {
      const [action, reason] = k.split('\0');
      this.resolutions.inc({ op, action, reason }, n);
    }
    for (const [k, n] of f.faults.refusals) {
      const [via, reason] = k.split('\0');
      this.refusals.inc({ op, via, reason }, n);
    }
    this.openFaults.set({ op }, f.faults.open);
    for (const [source, list] of f.faults.latencies) for (const s of list) this.answer.observe({ op, source }, s);
    const c = f.counters;
    this.allowed.inc({ op, source: 'ebpf' }, c?.allow ?? 0);
    if (c && c.nft.allow > 0) this.allowed.inc({ op, source: 'nft' }, c.nft.allow);
    for (const [reason, n] of Object.entries(c?.deny ?? {})) this.denied.inc({ op, reason }, n);
    this.lost.inc({ op }, c?.lost_events ?? 0);
    this.counterFull.inc({ op }, c?.counter_full ?? 0);
    for (const [why, n] of Object.entries(c?.leases ?? {})) this.leaseEnds.inc({ op, why }, n);
    this.leasesLive.set({ op }, f.leases_live);
    for (const [kind, n] of f.events) this.events.inc({ op, kind }, n);
    this.suppressed.inc({ op }, f.suppressed);
    this.attention.set({ op }, f.attention_open);
    this.restarts.inc({ op }, f.restarts);
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
