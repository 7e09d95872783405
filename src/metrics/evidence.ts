// What the Prometheus endpoint reports, read from an operation's evidence at
// the moment of the scrape: counters.jsonl (through the same summary `gensee
// counters` prints), faults.jsonl, events.jsonl and network.json. Nothing is
// counted a second time in memory, so a scrape says exactly what the logs
// say, and a restarted supervisor reports the operation's whole history.
// Cost: each scrape reads the logs once, O(their size).
import * as path from 'node:path';
import { readLines } from '../state/fsutil';
import { summarize, type CounterSummary } from '../counters/summary';
import { readNetwork } from '../state/network';
import { readOpenAttention } from '../events/log';

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
  /** counters.jsonl "sampler start" lines after the first: the resolver's restarts */
  restarts: number;
}

type Line = Record<string, unknown>;

async function eachLine(file: string, fn: (l: Line) => void): Promise<void> {
  await readLines(
    file,
    (buf, complete) => {
      if (!complete || buf.length === 0) return;
      try {
        fn(JSON.parse(buf.toString('utf8')) as Line);
      } catch {
        /* a damaged line: gensee verify reports it */
      }
    },
    { chunk: 1 << 16, missingOk: true },
  );
}

const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

export async function readFaultFigures(dir: string): Promise<FaultFigures> {
  const f: FaultFigures = { faults: new Map(), resolutions: new Map(), latencies: new Map(), refusals: new Map(), open: 0 };
  const pending = new Map<string, { at: number; source: string }>();
  await eachLine(path.join(dir, 'faults.jsonl'), (l) => {
    if (l.kind === 'fault' && typeof l.fault_id === 'string') {
      const fault = l.fault as Line | undefined;
      const source = typeof fault?.source === 'string' ? fault.source : 'unknown';
      bump(f.faults, source);
      pending.set(l.fault_id, { at: Date.parse(String(l.at)), source });
    } else if (l.kind === 'refusal') {
      bump(f.refusals, `${String(l.via ?? 'unknown')}\0${String(l.reason ?? '')}`);
    } else if (l.kind === 'resolution' && typeof l.fault_id === 'string') {
      const r = l.resolution as Line | undefined;
      bump(f.resolutions, `${String(r?.action ?? 'unknown')}\0${String(r?.reason ?? '')}`);
      const p = pending.get(l.fault_id);
      if (p) {
        pending.delete(l.fault_id);
        const s = (Date.parse(String(l.at)) - p.at) / 1000;
        if (Number.isFinite(s)) {
          const list = f.latencies.get(p.source) ?? [];
          list.push(Math.max(0, s));
          f.latencies.set(p.source, list);
        }
      }
    }
  });
  f.open = pending.size;
  return f;
}

/** Every figure for one operation, from its directory. nowBootNs: CLOCK_BOOTTIME now (lease expiry is in it). */
export async function readEvidence(stateDir: string, op: string, dir: string, nowBootNs: bigint): Promise<EvidenceFigures> {
  const [counters, faults] = await Promise.all([summarize(path.join(dir, 'counters.jsonl')), readFaultFigures(dir)]);
  const events = new Map<string, number>();
  let suppressed = 0;
  await eachLine(path.join(dir, 'events.jsonl'), (l) => {
    if (l.type === 'boundary') bump(events, String((l.event as Line | undefined)?.kind ?? 'unknown'));
    else if (l.type === 'suppressed' && typeof l.count === 'number') suppressed += l.count;
  });
  let starts = 0;
  await eachLine(path.join(dir, 'counters.jsonl'), (l) => {
    if (l.kind === 'sampler' && l.event === 'start') starts++;
  });
  const attention = await readOpenAttention(path.join(dir, 'events.jsonl'));
  let leases = 0;
  try {
    const net = await readNetwork(stateDir, op);
    leases = net.leases.filter((l) => l.expires_at_boot_ns === '0' || BigInt(l.expires_at_boot_ns) > nowBootNs).length;
  } catch {
    leases = 0;
  }
  return { op, counters, faults, events, suppressed, attention_open: attention.length, leases_live: leases, restarts: Math.max(0, starts - 1) };
}
