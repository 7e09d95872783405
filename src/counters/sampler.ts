// The counter sampler: reads cumulative counters (the eBPF per-CPU counter
// map, summed; the lost-events and map-full stats; the nftables element and
// default-deny counters), turns them into monotonic deltas against the
// previous reading, and returns counters.jsonl lines (see lines.ts).
//
// Rules, the same for every counter source:
// - delta = current - previous; a zero delta writes nothing.
// - a counter lower than before (the map was recreated, a wrap) is a reset:
//   a `reset` line records both values and the delta is the current value
//   (what was counted since the reset), never a negative number.
// - a counter that disappeared (map recreated) is a reset to 0; a counter we
//   deleted ourselves (forget()) is not.
// - a key seen for the first time starts from its baseline: 0, or the total
//   the evidence already holds for it (restore()), so counts made while no
//   resolver ran are recorded at the first reading, not lost.
//
// Readings are synchronous (the addon's batch dump), so a reading is one
// atomic step of the event loop: no other code of this process changes the
// lease map in the middle of one. Keys are compared as raw bytes and decoded
// once, so a reading of 10,000 unchanged counters allocates little.
import { COUNTER_KEY_SIZE, decodeCounterKey, CounterKey, VERDICTS, Verdict } from '../abi';
import { IPPROTO, Tuple, parseAddress } from '../addr';
import type { NftCounters } from '../backends/nft';
import { CounterTotals, zeroTotals } from '../state/record';
import type { LogFields } from '../evidence/chain';

export interface RawCounters {
  count: number;
  /** count × COUNTER_KEY_SIZE bytes of gs_counter_key */
  keys: Buffer;
  /** count × u64 LE, per-CPU values summed */
  sums: Buffer;
}

export interface CounterSource {
  countersRaw(): RawCounters;
  stats(): { lostEvents: bigint; counterFull: bigint };
}

interface Prev {
  v: bigint;
  seen: number;
}

/** A counter key as the kernel writes it, hex: the identity of one eBPF counter. */
export function counterKeyHex(tuple: Tuple, verdict: Verdict, generation: bigint): string {
  const b = Buffer.alloc(COUNTER_KEY_SIZE);
  b.writeUInt8(tuple.family === 'ipv4' ? 4 : 6, 0);
  b.writeUInt8(IPPROTO[tuple.protocol], 1);
  b.writeUInt16LE(tuple.port, 2);
  b.writeUInt8(VERDICTS.indexOf(verdict), 4);
  b.writeBigUInt64LE(generation, 8);
  parseAddress(tuple.address).bytes.copy(b, 16);
  return b.toString('hex');
}

function dest(t: Tuple): { family: string; protocol: string; address: string; port: number } {
  return { family: t.family, protocol: t.protocol, address: t.address, port: t.port };
}

export function tupleKey(t: Tuple): string {
  return `${t.family}/${t.protocol}/${t.address}/${t.port}`;
}

/** Cumulative state a sampler resumes from (snapshot.ts persists it). */
export interface SamplerState {
  ebpf: Map<string, bigint>;
  lostEvents: bigint;
  counterFull: bigint;
  nft: Map<string, bigint>;
  nftDeny: bigint;
  totals: CounterTotals;
}

export function emptySamplerState(): SamplerState {
  return { ebpf: new Map(), lostEvents: 0n, counterFull: 0n, nft: new Map(), nftDeny: 0n, totals: zeroTotals() };
}

export interface SampleResult {
  lines: LogFields[];
  /** sum of all deltas (allow + deny + lost) this reading; 0 = nothing changed */
  changed: number;
}

export class Sampler {
  private readonly src: CounterSource;
  private tick = 0;
  private readonly ebpf = new Map<string, Prev>();
  private readonly decoded = new Map<string, CounterKey>();
  /** generation → its allow counter keys (hex) */
  private readonly byGeneration = new Map<bigint, Set<string>>();
  private readonly baseline: Map<string, bigint>;
  private lost: bigint;
  private full: bigint;
  private readonly nftPrev = new Map<string, bigint>();
  private nftDenyPrev: bigint;
  private readonly nftBaseline: Map<string, bigint>;
  private tot: CounterTotals;
  /** the previous dump, for the fast path */
  private last: RawCounters | null = null;
  /** keys we deleted from the kernel map ourselves: their disappearance is not a reset */
  private readonly forgotten = new Set<string>();
  /** counters read so far (for the bench) */
  readonly stats = { readings: 0, keys: 0 };

  constructor(src: CounterSource, from: SamplerState = emptySamplerState()) {
    this.src = src;
    this.baseline = new Map(from.ebpf);
    this.lost = from.lostEvents;
    this.full = from.counterFull;
    this.nftBaseline = new Map(from.nft);
    this.nftDenyPrev = from.nftDeny;
    this.tot = { allow: from.totals.allow, deny: { ...from.totals.deny }, lost_events: from.totals.lost_events };
  }

  get totals(): CounterTotals {
    return this.tot;
  }

  /** Everything needed to resume exactly here (snapshot). */
  state(): SamplerState {
    const ebpf = new Map(this.baseline);
    for (const [k, p] of this.ebpf) ebpf.set(k, p.v);
    const nft = new Map(this.nftBaseline);
    for (const [k, v] of this.nftPrev) nft.set(k, v);
    return { ebpf, lostEvents: this.lost, counterFull: this.full, nft, nftDeny: this.nftDenyPrev, totals: this.totals };
  }

  private decode(hex: string, keys: Buffer, off: number): CounterKey {
    let k = this.decoded.get(hex);
    if (!k) {
      k = decodeCounterKey(keys, off);
      this.decoded.set(hex, k);
      if (k.verdict === 'allow') {
        let s = this.byGeneration.get(k.generation);
        if (!s) this.byGeneration.set(k.generation, (s = new Set()));
        s.add(hex);
      }
    }
    return k;
  }

  private addTotals(verdict: Verdict | 'nft_default_deny', d: bigint): void {
    const n = Number(d);
    if (verdict === 'allow') this.tot.allow += n;
    else this.tot.deny[verdict] = (this.tot.deny[verdict] ?? 0) + n;
  }

  /** Read the eBPF counters and stats; one line per non-zero delta. */
  sample(): SampleResult {
    const tick = ++this.tick;
    const raw = this.src.countersRaw();
    this.stats.readings++;
    this.stats.keys = raw.count;
    const allow: LogFields[] = [];
    const deny: LogFields[] = [];
    const other: LogFields[] = [];
    let changed = 0n;
    // Fast path: the kernel dumps a hash map in bucket order, so with no key
    // added or removed the keys come back byte-identical: compare the sums
    // per index and look at changed counters only (an idle reading of 10,000
    // counters is two memcmps).
    const same = this.last !== null && this.last.count === raw.count && this.last.keys.equals(raw.keys);
    if (same && this.last!.sums.equals(raw.sums)) return this.stat(other, allow, deny, changed);
    const last = same ? this.last!.sums : null;
    this.last = { count: raw.count, keys: raw.keys, sums: raw.sums };
    for (let i = 0; i < raw.count; i++) {
      if (last && last.readUInt32LE(i * 8) === raw.sums.readUInt32LE(i * 8) && last.readUInt32LE(i * 8 + 4) === raw.sums.readUInt32LE(i * 8 + 4)) continue;
      const off = i * COUNTER_KEY_SIZE;
      const hex = raw.keys.toString('hex', off, off + COUNTER_KEY_SIZE);
      const cur = raw.sums.readBigUInt64LE(i * 8);
      const p = this.ebpf.get(hex);
      let before: bigint;
      if (p) {
        p.seen = tick;
        if (cur === p.v) continue;
        before = p.v;
        p.v = cur;
      } else {
        // first sight: decode once (also indexes it by generation)
        this.decode(hex, raw.keys, off);
        before = this.baseline.get(hex) ?? 0n;
        this.baseline.delete(hex);
        this.ebpf.set(hex, { v: cur, seen: tick });
        if (cur === before) continue;
      }
      const k = this.decode(hex, raw.keys, off);
      let delta = cur - before;
      if (cur < before) {
        other.push(resetLine('ebpf', k, before, cur));
        delta = cur;
      }
      if (delta === 0n) continue;
      changed += delta;
      this.addTotals(k.verdict, delta);
      (k.verdict === 'allow' ? allow : deny).push(counterLine(k, delta, cur));
    }
    // counters that disappeared: deleted by us after their final harvest
    // (forget), or the map was recreated under us. Every key of a changed
    // dump was seen above, so any other is gone — and forgotten here too,
    // with its decoded form: over a long run every lease adds keys of its
    // own, and what the map no longer holds must not stay in memory.
    if (!same && this.ebpf.size > 0) {
      for (const [hex, p] of this.ebpf) {
        if (p.seen === tick) continue;
        const k = this.decoded.get(hex);
        if (k && !this.forgotten.delete(hex)) other.push(resetLine('ebpf', k, p.v, 0n));
        this.ebpf.delete(hex);
        this.decoded.delete(hex);
      }
    }
    return this.stat(other, allow, deny, changed);
  }

  private stat(other: LogFields[], allow: LogFields[], deny: LogFields[], changed: bigint): SampleResult {
    const st = this.src.stats();
    const lost = this.step('lost_events', this.lost, st.lostEvents, other);
    this.lost = st.lostEvents;
    if (lost > 0n) {
      this.tot.lost_events += Number(lost);
      changed += lost;
      other.push({ kind: 'lost_events', delta: Number(lost), total: Number(st.lostEvents) });
    }
    const full = this.step('counter_full', this.full, st.counterFull, other);
    this.full = st.counterFull;
    if (full > 0n) other.push({ kind: 'counter_full', delta: Number(full), total: Number(st.counterFull) });
    return { lines: [...allow, ...deny, ...other], changed: Number(changed) };
  }

  private step(name: string, before: bigint, cur: bigint, other: LogFields[]): bigint {
    if (cur >= before) return cur - before;
    other.push({ kind: 'reset', source: 'ebpf', counter: name, previous: Number(before), current: Number(cur) });
    return cur;
  }

  /**
   * nftables counters. Elements are keyed by tuple (nft knows no
   * generations): each delta is attributed to the generation the tuple's
   * lease has now (generationOf), null when no lease holds it any more.
   */
  sampleNft(c: NftCounters, generationOf: (tupleKey: string) => number | null): SampleResult {
    const lines: LogFields[] = [];
    let changed = 0n;
    const seen = new Set<string>();
    for (const [k, e] of c.allow) {
      seen.add(k);
      let before = this.nftPrev.get(k);
      if (before === undefined) {
        before = this.nftBaseline.get(k) ?? 0n;
        this.nftBaseline.delete(k);
      }
      this.nftPrev.set(k, e.packets);
      if (e.packets === before) continue;
      let delta = e.packets - before;
      if (e.packets < before) {
        lines.push({ kind: 'reset', source: 'nft', ...dest(e.tuple), previous: Number(before), current: Number(e.packets) });
        delta = e.packets;
      }
      if (delta === 0n) continue;
      changed += delta;
      lines.push({ kind: 'allow', source: 'nft', generation: generationOf(k), ...dest(e.tuple), delta: Number(delta), total: Number(e.packets) });
    }
    // elements gone since the last reading were deleted by us after their
    // final harvest (or timed out): nothing to record, forget them
    for (const k of [...this.nftPrev.keys()]) if (!seen.has(k)) this.nftPrev.delete(k);
    const before = this.nftDenyPrev;
    let d = c.deny - before;
    if (c.deny < before) {
      lines.push({ kind: 'reset', source: 'nft', counter: 'deny', previous: Number(before), current: Number(c.deny) });
      d = c.deny;
    }
    this.nftDenyPrev = c.deny;
    if (d > 0n) {
      changed += d;
      this.addTotals('nft_default_deny', d);
      lines.push({ kind: 'deny', source: 'nft', reason: 'nft_default_deny', delta: Number(d), total: Number(c.deny) });
    }
    return { lines, changed: Number(changed) };
  }

  /**
   * Counter keys about to be deleted from the kernel map (their generation
   * was harvested and can never count again): their disappearance at the
   * next reading is expected, not a reset.
   */
  forget(hexes: Iterable<string>): void {
    for (const h of hexes) this.forgotten.add(h);
  }

  /**
   * A generation was harvested for the last time and retired: its allow
   * counters can never count again. Returns their keys (hex) for deletion
   * from the kernel map, and forgets them (their disappearance is expected,
   * not a reset). Keeps the map from filling up over a long run, where every
   * lease install starts a generation of its own.
   */
  retireGeneration(gen: number | bigint): string[] {
    const g = BigInt(gen);
    const s = this.byGeneration.get(g);
    if (!s) return [];
    this.byGeneration.delete(g);
    const hexes = [...s];
    // only keys a reading still holds can be noticed gone (and dropped from `forgotten` then)
    this.forget(hexes.filter((h) => this.ebpf.has(h)));
    return hexes;
  }

  /** A table replaced at start: its counters begin again at 0. */
  resetNft(): void {
    this.nftPrev.clear();
    this.nftBaseline.clear();
    this.nftDenyPrev = 0n;
  }

  /** Cumulative eBPF allow count of one generation, as of the last reading. */
  generationAllow(gen: number | bigint): number {
    const s = this.byGeneration.get(BigInt(gen));
    if (!s) return 0;
    let n = 0n;
    for (const hex of s) n += this.ebpf.get(hex)?.v ?? 0n;
    return Number(n);
  }

  /** Cumulative eBPF allow count of one lease tuple under one generation. */
  leaseAllow(t: Tuple, gen: number | bigint): number {
    const p = this.ebpf.get(counterKeyHex(t, 'allow', BigInt(gen)));
    return Number(p?.v ?? this.baseline.get(counterKeyHex(t, 'allow', BigInt(gen))) ?? 0n);
  }

  /** cumulative nft packets of a tuple, as of the last nft reading */
  nftAllow(tupleKey: string): number {
    return Number(this.nftPrev.get(tupleKey) ?? 0n);
  }
}

/** where an aggregate counter's lines say the destination is: none could be keyed */
const OTHER = { family: 'any', protocol: 'any', address: 'other', port: 0 };

function counterLine(k: CounterKey, delta: bigint, total: bigint): LogFields {
  if (k.aggregate) {
    return { kind: k.verdict === 'allow' ? 'allow' : 'deny', source: 'ebpf', ...(k.verdict === 'allow' ? { generation: 0 } : { reason: k.verdict }), ...OTHER, overflow: true, delta: Number(delta), total: Number(total) };
  }
  if (k.verdict === 'allow') {
    return { kind: 'allow', source: 'ebpf', generation: Number(k.generation), ...dest(k.tuple), delta: Number(delta), total: Number(total) };
  }
  return { kind: 'deny', source: 'ebpf', reason: k.verdict, ...dest(k.tuple), delta: Number(delta), total: Number(total) };
}

function resetLine(source: string, k: CounterKey, previous: bigint, current: bigint): LogFields {
  return {
    kind: 'reset',
    source,
    verdict: k.verdict,
    generation: Number(k.generation),
    ...(k.aggregate ? OTHER : dest(k.tuple)),
    previous: Number(previous),
    current: Number(current),
  };
}
