// Summaries of counters.jsonl for `gensee counters`: top destinations,
// allow/deny per reason, allows per generation, over the whole file or
// since a time. The file is streamed (it grows by a line per non-zero delta).
import { durationMs, DURATION_FORMS } from '../duration';
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { assertNoSymlinks } from '../state/fsutil';
import { GenseeError, isErrno } from '../errors';

export interface DestinationSummary {
  family: string;
  protocol: string;
  address: string;
  port: number;
  allow: number;
  deny: Record<string, number>;
  /** packet-level (nftables) new flows allowed */
  nft_allow: number;
}

export interface GenerationSummary {
  generation: number;
  reason: string | null;
  created_at: string | null;
  revoked_at: string | null;
  allow: number;
  final_allow: number | null;
}

export interface CounterSummary {
  lines: number;
  /** lines inside the window */
  counted: number;
  since: string | null;
  first_at: string | null;
  last_at: string | null;
  /** readings that had at least one non-zero delta */
  samples: number;
  allow: number;
  deny: Record<string, number>;
  lost_events: number;
  counter_full: number;
  resets: number;
  nft: { allow: number; deny: number };
  leases: { expired: number; exhausted: number; revoked: number; replaced: number; retagged: number };
  destinations: DestinationSummary[];
  generations: GenerationSummary[];
}

type Line = Record<string, unknown>;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Parse --since: an ISO time, or a duration back from now (src/duration.ts). */
export function parseSince(s: string, now = Date.now()): Date {
  const ms = durationMs(s);
  if (ms !== null) return new Date(now - ms);
  const t = Date.parse(s);
  if (Number.isNaN(t)) throw new GenseeError('E_USAGE', `bad --since "${s}": expected an ISO time or a duration (${DURATION_FORMS})`);
  return new Date(t);
}

/**
 * The summary as a fold over counters.jsonl's lines, one add() per line
 * (without its newline): summarize() streams a file through one; the
 * /metrics scrape keeps one and feeds it only the lines added since its last
 * scrape (src/metrics/evidence.ts). result() may be called at any point.
 */
export class CounterSummarizer {
  private readonly since: number | null;
  private readonly s: CounterSummary;
  private readonly dests = new Map<string, DestinationSummary>();
  private readonly gens = new Map<number, GenerationSummary>();
  private lastSample: string | null = null;

  constructor(opts: { since?: Date | null } = {}) {
    this.since = opts.since ? opts.since.getTime() : null;
    this.s = {
      lines: 0,
      counted: 0,
      since: opts.since ? opts.since.toISOString() : null,
      first_at: null,
      last_at: null,
      samples: 0,
      allow: 0,
      deny: {},
      lost_events: 0,
      counter_full: 0,
      resets: 0,
      nft: { allow: 0, deny: 0 },
      leases: { expired: 0, exhausted: 0, revoked: 0, replaced: 0, retagged: 0 },
      destinations: [],
      generations: [],
    };
  }

  private gen(g: number): GenerationSummary {
    let x = this.gens.get(g);
    if (!x) this.gens.set(g, (x = { generation: g, reason: null, created_at: null, revoked_at: null, allow: 0, final_allow: null }));
    return x;
  }

  private destOf(l: Line): DestinationSummary {
    const k = `${String(l.family)}/${String(l.protocol)}/${String(l.address)}/${num(l.port)}`;
    let d = this.dests.get(k);
    if (!d) {
      d = { family: String(l.family), protocol: String(l.protocol), address: String(l.address), port: num(l.port), allow: 0, deny: {}, nft_allow: 0 };
      this.dests.set(k, d);
    }
    return d;
  }

  add(text: string): void {
    if (!text) return;
    const s = this.s;
    const since = this.since;
    s.lines++;
    let l: Line;
    try {
      l = JSON.parse(text) as Line;
    } catch {
      return; // verify reports damaged lines; a summary skips them
    }
    const at = typeof l.at === 'string' ? l.at : null;
    // generation identities are needed whatever the window
    if (l.kind === 'generation' && typeof l.generation === 'number') {
      const g = this.gen(l.generation);
      g.reason = typeof l.reason === 'string' ? l.reason : null;
      g.created_at = at;
    }
    if (l.kind === 'generation_revoked' && typeof l.generation === 'number') {
      const g = this.gen(l.generation);
      g.revoked_at = at;
      g.final_allow = num(l.final_allow);
    }
    if (since !== null && (at === null || Date.parse(at) < since)) return;
    s.counted++;
    if (at) {
      s.first_at ??= at;
      s.last_at = at;
    }
    const delta = num(l.delta);
    const counts = (l.kind === 'allow' || l.kind === 'deny' || l.kind === 'lost_events') && delta > 0;
    if (counts && at !== this.lastSample) {
      s.samples++;
      this.lastSample = at;
    }
    switch (l.kind) {
      case 'allow':
        if (l.source === 'nft') {
          s.nft.allow += delta;
          this.destOf(l).nft_allow += delta;
        } else {
          s.allow += delta;
          this.destOf(l).allow += delta;
          if (typeof l.generation === 'number') this.gen(l.generation).allow += delta;
        }
        break;
      case 'deny': {
        const r = String(l.reason);
        s.deny[r] = (s.deny[r] ?? 0) + delta;
        if (l.source === 'nft') s.nft.deny += delta;
        else {
          const d = this.destOf(l);
          d.deny[r] = (d.deny[r] ?? 0) + delta;
        }
        break;
      }
      case 'lost_events':
        s.lost_events += delta;
        break;
      case 'counter_full':
        s.counter_full += delta;
        break;
      case 'reset':
        s.resets++;
        break;
      case 'lease_expired':
        if (l.why === 'exhausted') s.leases.exhausted++;
        else s.leases.expired++;
        break;
      case 'lease_revoked':
        s.leases.revoked++;
        break;
      case 'lease_replaced':
        s.leases.replaced++;
        break;
      case 'lease_retagged':
        s.leases.retagged++;
        break;
      default:
    }
  }

  /** the summary so far (a copy: later add()s do not change it) */
  result(): CounterSummary {
    const since = this.since;
    const total = (d: DestinationSummary) => d.allow + Object.values(d.deny).reduce((a, b) => a + b, 0);
    const s = structuredClone(this.s);
    s.destinations = structuredClone([...this.dests.values()]).sort((a, b) => total(b) - total(a) || a.address.localeCompare(b.address) || a.port - b.port);
    s.generations = structuredClone([...this.gens.values()])
      .filter((g) => g.allow > 0 || g.final_allow !== null || since === null || (g.created_at !== null && Date.parse(g.created_at) >= since))
      .sort((a, b) => a.generation - b.generation);
    return s;
  }
}

export async function summarize(file: string, opts: { since?: Date | null } = {}): Promise<CounterSummary | null> {
  assertNoSymlinks(file);
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return null;
    if (isErrno(e) && e.code === 'ELOOP') throw new GenseeError('E_SYMLINK', `refusing symlink at ${file}`);
    throw e;
  }
  const sum = new CounterSummarizer(opts);
  try {
    const rl = readline.createInterface({ input: fh.createReadStream({ encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const text of rl) sum.add(text);
  } finally {
    await fh.close();
  }
  return sum.result();
}
