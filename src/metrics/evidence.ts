// What the Prometheus endpoint reports, read from an operation's evidence at
// the moment of the scrape: counters.jsonl (through the same summary `gensee
// counters` prints), faults.jsonl, events.jsonl and network.json. Nothing is
// counted a second time in memory, so a scrape says exactly what the logs
// say, and a restarted supervisor reports the operation's whole history.
// Cost: a scrape reads only what the logs gained since the last one
// (EvidenceTail keeps, per log, the byte offset after its last complete
// line and the figures folded so far); a log replaced or cut shorter is read
// again from its start. readEvidence is the same fold over the whole logs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertNoSymlinks } from '../state/fsutil';
import { GenseeError, isErrno } from '../errors';
import { CounterSummarizer, type CounterSummary } from '../counters/summary';
import { readNetwork } from '../state/network';
import { foldAttention, type OpenAttention } from '../events/log';

export interface FaultFigures {
  /** fault lines by the fault's source (seccomp_notify, ebpf_ringbuf, ...) */
  faults: Map<string, number>;
  /** resolution lines by "action\0reason" */
  resolutions: Map<string, number>;
  /** seconds from a fault line to its resolution line, by the fault's source (the lines' `at`, millisecond resolution) */
  latencies: Map<string, number[]>;
  /** refusal lines (refused before becoming a fault: a bad peer, a bad frame, a hook event) by "via\0reason" */
  refusals: Map<string, number>;
  /** faults with no resolution line yet */
  open: number;
  /** resolver_takeover lines: a listener or supervise that took over from its predecessor */
  takeovers: number;
}

export interface EvidenceFigures {
  op: string;
  counters: CounterSummary | null;
  faults: FaultFigures;
  /** boundary event lines by kind; suppressed lines' counts summed */
  events: Map<string, number>;
  suppressed: number;
  attention_open: number;
  /** leases in network.json whose expiry is after `nowBootNs` (or never) */
  leases_live: number;
  /**
   * the resolver's restarts: counters.jsonl "sampler start" lines after the
   * first, or faults.jsonl's resolver_takeover lines where there are more
   * (an OCI listener's takeover restarts no sampler)
   */
  restarts: number;
}

type Line = Record<string, unknown>;

const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

function parseLine(buf: Buffer): Line | null {
  if (buf.length === 0) return null;
  try {
    return JSON.parse(buf.toString('utf8')) as Line;
  } catch {
    return null; // a damaged line: gensee verify reports it
  }
}

/** faults.jsonl's figures, one complete line at a time */
class FaultFold {
  readonly f: FaultFigures = { faults: new Map(), resolutions: new Map(), latencies: new Map(), refusals: new Map(), open: 0, takeovers: 0 };
  private readonly pending = new Map<string, { at: number; source: string }>();

  add(buf: Buffer): void {
    const l = parseLine(buf);
    if (!l) return;
    const f = this.f;
    if (l.kind === 'fault' && typeof l.fault_id === 'string') {
      const fault = l.fault as Line | undefined;
      const source = typeof fault?.source === 'string' ? fault.source : 'unknown';
      bump(f.faults, source);
      this.pending.set(l.fault_id, { at: Date.parse(String(l.at)), source });
    } else if (l.kind === 'resolver_takeover') {
      f.takeovers++;
    } else if (l.kind === 'refusal') {
      bump(f.refusals, `${String(l.via ?? 'unknown')}\0${String(l.reason ?? '')}`);
    } else if (l.kind === 'resolution' && typeof l.fault_id === 'string') {
      const r = l.resolution as Line | undefined;
      bump(f.resolutions, `${String(r?.action ?? 'unknown')}\0${String(r?.reason ?? '')}`);
      const p = this.pending.get(l.fault_id);
      if (p) {
        this.pending.delete(l.fault_id);
        const s = (Date.parse(String(l.at)) - p.at) / 1000;
        if (Number.isFinite(s)) {
          const list = f.latencies.get(p.source) ?? [];
          list.push(Math.max(0, s));
          f.latencies.set(p.source, list);
        }
      }
    }
    f.open = this.pending.size;
  }
}

/** events.jsonl's figures */
class EventFold {
  readonly events = new Map<string, number>();
  suppressed = 0;
  attention: OpenAttention[] = [];

  add(buf: Buffer): void {
    this.attention = foldAttention(this.attention, buf);
    const l = parseLine(buf);
    if (!l) return;
    if (l.type === 'boundary') bump(this.events, String((l.event as Line | undefined)?.kind ?? 'unknown'));
    else if (l.type === 'suppressed' && typeof l.count === 'number') this.suppressed += l.count;
  }
}

/** counters.jsonl's figures: the summary `gensee counters` prints, and the sampler's starts */
class CounterFold {
  readonly sum = new CounterSummarizer();
  starts = 0;

  add(buf: Buffer): void {
    const text = buf.toString('utf8');
    this.sum.add(text);
    if (text.indexOf('"sampler"') < 0) return;
    const l = parseLine(buf);
    if (l && l.kind === 'sampler' && l.event === 'start') this.starts++;
  }
}

/**
 * One log read from where the last read stopped: the offset after its last
 * complete line, and the file's identity (device, inode). A new file under
 * the name, or one shorter than the offset, starts over (reset()). A last
 * line without its newline (being written) is left for the next read.
 */
class LogTail {
  private dev = -1;
  private ino = -1;
  private offset = 0;
  /** the file existed at the last read */
  present = false;

  constructor(
    readonly file: string,
    private readonly reset: () => void,
  ) {}

  async read(onLine: (line: Buffer) => void): Promise<void> {
    assertNoSymlinks(this.file);
    let fh: fs.promises.FileHandle;
    try {
      fh = await fs.promises.open(this.file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (e) {
      if (isErrno(e) && e.code === 'ENOENT') {
        if (this.present) this.startOver();
        this.present = false;
        return;
      }
      if (isErrno(e) && e.code === 'ELOOP') throw new GenseeError('E_SYMLINK', `refusing symlink at ${this.file}`);
      throw e;
    }
    this.present = true;
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new GenseeError('E_NOT_FILE', `not a regular file: ${this.file}`);
      if (st.dev !== this.dev || st.ino !== this.ino || st.size < this.offset) {
        this.startOver();
        this.dev = st.dev;
        this.ino = st.ino;
      }
      const buf = Buffer.alloc(1 << 16);
      let carry: Buffer[] = [];
      let pos = this.offset;
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        const b = buf.subarray(0, bytesRead);
        let start = 0;
        for (let nl = b.indexOf(0x0a); nl >= 0; nl = b.indexOf(0x0a, start)) {
          const piece = b.subarray(start, nl);
          onLine(carry.length ? Buffer.concat([...carry, piece]) : piece);
          carry = [];
          start = nl + 1;
          this.offset = pos + start;
        }
        if (start < b.length) carry.push(Buffer.from(b.subarray(start)));
        pos += bytesRead;
      }
    } finally {
      await fh.close();
    }
  }

  private startOver(): void {
    this.offset = 0;
    this.dev = -1;
    this.ino = -1;
    this.reset();
  }

  /** where the next read starts (for tests: the bytes already folded) */
  get position(): number {
    return this.offset;
  }
}

/**
 * An operation's figures kept between scrapes: each scrape folds in the
 * lines its logs gained since the last one. The values equal a full read
 * of the logs at that moment (readEvidence) at every scrape.
 */
export class EvidenceTail {
  private faults = new FaultFold();
  private events = new EventFold();
  private counters = new CounterFold();
  private readonly tails: { faults: LogTail; events: LogTail; counters: LogTail };

  constructor(
    private readonly stateDir: string,
    private readonly op: string,
    dir: string,
  ) {
    this.tails = {
      faults: new LogTail(path.join(dir, 'faults.jsonl'), () => (this.faults = new FaultFold())),
      events: new LogTail(path.join(dir, 'events.jsonl'), () => (this.events = new EventFold())),
      counters: new LogTail(path.join(dir, 'counters.jsonl'), () => (this.counters = new CounterFold())),
    };
  }

  /** bytes of each log folded so far */
  positions(): { faults: number; events: number; counters: number } {
    return { faults: this.tails.faults.position, events: this.tails.events.position, counters: this.tails.counters.position };
  }

  async read(nowBootNs: bigint): Promise<EvidenceFigures> {
    await this.tails.faults.read((b) => this.faults.add(b));
    await this.tails.events.read((b) => this.events.add(b));
    await this.tails.counters.read((b) => this.counters.add(b));
    let leases = 0;
    try {
      const net = await readNetwork(this.stateDir, this.op);
      leases = net.leases.filter((l) => l.expires_at_boot_ns === '0' || BigInt(l.expires_at_boot_ns) > nowBootNs).length;
    } catch {
      leases = 0;
    }
    const f = this.faults.f;
    return {
      op: this.op,
      counters: this.tails.counters.present ? this.counters.sum.result() : null,
      faults: { faults: new Map(f.faults), resolutions: new Map(f.resolutions), latencies: new Map([...f.latencies].map(([k, v]) => [k, [...v]])), refusals: new Map(f.refusals), open: f.open, takeovers: f.takeovers },
      events: new Map(this.events.events),
      suppressed: this.events.suppressed,
      attention_open: this.events.attention.length,
      leases_live: leases,
      restarts: Math.max(0, this.counters.starts - 1, f.takeovers),
    };
  }
}

/** faults.jsonl's figures, read whole */
export async function readFaultFigures(dir: string): Promise<FaultFigures> {
  const fold = new FaultFold();
  await new LogTail(path.join(dir, 'faults.jsonl'), () => undefined).read((b) => fold.add(b));
  return fold.f;
}

/** Every figure for one operation, from its directory, read whole. nowBootNs: CLOCK_BOOTTIME now (lease expiry is in it). */
export async function readEvidence(stateDir: string, op: string, dir: string, nowBootNs: bigint): Promise<EvidenceFigures> {
  return new EvidenceTail(stateDir, op, dir).read(nowBootNs);
}
