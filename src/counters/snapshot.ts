// Where the sampler resumes after a restart. counters.jsonl is the source of
// truth: every allow/deny line carries the counter's cumulative `total`, so
// replaying the file gives the last value seen of every counter and the
// running totals. Replaying a long file at every start would be slow, so the
// sampler also writes counters.state.json (0600, atomic) — the same state,
// stamped with the seq and hash of the last counters.jsonl line it covers —
// every SNAPSHOT_EVERY_MS when something changed and at stop. At start:
//   snapshot matches the log's last line  → use it
//   snapshot older than the log (crash)   → stream the log, start from the
//                                           snapshot at its line, apply the rest
//   no usable snapshot                    → replay the whole log
//   no log                                → start from zero (first run)
// The resumed values are the baseline of the first reading, so whatever the
// kernel counted while no resolver ran is recorded then, not lost.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { GenseeError, isErrno } from '../errors';
import { assertNoSymlinks, assertPrivate, readFileNoFollowStat, writeFileAtomic } from '../state/fsutil';
import { sha256Hex } from '../evidence/chain';
import type { Verdict } from '../abi';
import type { Family, Protocol } from '../addr';
import { SamplerState, counterKeyHex, emptySamplerState, tupleKey } from './sampler';

export const SNAPSHOT_FILE = 'counters.state.json';
export const COUNTERS_FILE = 'counters.jsonl';
export const SNAPSHOT_EVERY_MS = 30_000;
const SNAPSHOT_MAX_BYTES = 64 << 20;

interface SnapshotJson {
  schema: 1;
  seq: number;
  hash: string;
  totals: SamplerState['totals'];
  lost_events: string;
  counter_full: string;
  nft_deny: string;
  ebpf: Record<string, string>;
  nft: Record<string, string>;
}

export interface Resumed {
  state: SamplerState;
  from: 'snapshot' | 'replay' | 'snapshot+replay' | 'none';
  /** lines replayed */
  replayed: number;
}

function toJson(s: SamplerState, seq: number, hash: string): SnapshotJson {
  return {
    schema: 1,
    seq,
    hash,
    totals: s.totals,
    lost_events: String(s.lostEvents),
    counter_full: String(s.counterFull),
    nft_deny: String(s.nftDeny),
    ebpf: Object.fromEntries([...s.ebpf].map(([k, v]) => [k, String(v)])),
    nft: Object.fromEntries([...s.nft].map(([k, v]) => [k, String(v)])),
  };
}

function fromJson(j: SnapshotJson): SamplerState {
  const big = (v: unknown) => (typeof v === 'string' && /^[0-9]{1,20}$/.test(v) ? BigInt(v) : 0n);
  return {
    ebpf: new Map(Object.entries(j.ebpf ?? {}).map(([k, v]) => [k, big(v)])),
    lostEvents: big(j.lost_events),
    counterFull: big(j.counter_full),
    nft: new Map(Object.entries(j.nft ?? {}).map(([k, v]) => [k, big(v)])),
    nftDeny: big(j.nft_deny),
    totals: {
      allow: Number(j.totals?.allow ?? 0),
      deny: { ...(j.totals?.deny ?? {}) },
      lost_events: Number(j.totals?.lost_events ?? 0),
    },
  };
}

export async function writeSnapshot(dir: string, s: SamplerState, seq: number, hash: string): Promise<void> {
  const file = path.join(dir, SNAPSHOT_FILE);
  assertNoSymlinks(file);
  await writeFileAtomic(file, JSON.stringify(toJson(s, seq, hash)) + '\n');
}

async function readSnapshot(dir: string): Promise<SnapshotJson | null> {
  const file = path.join(dir, SNAPSHOT_FILE);
  assertNoSymlinks(file);
  try {
    const got = await readFileNoFollowStat(file, SNAPSHOT_MAX_BYTES);
    assertPrivate(got.stat, file);
    const j = JSON.parse(got.data.toString('utf8')) as SnapshotJson;
    if (j.schema !== 1 || !Number.isSafeInteger(j.seq) || typeof j.hash !== 'string') return null;
    return j;
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return null;
    if (e instanceof GenseeError && (e.code === 'E_SYMLINK' || e.code === 'E_BAD_MODE')) throw e;
    return null; // damaged: the log is the truth, replay it
  }
}

type Line = Record<string, unknown>;

/** Apply one counters.jsonl line to a resumed state. */
export function applyLine(s: SamplerState, l: Line): void {
  const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const tuple = () => ({ family: l.family as Family, protocol: l.protocol as Protocol, address: String(l.address), port: num(l.port) });
  try {
    switch (l.kind) {
      case 'allow':
      case 'deny':
        // a folded line (recorder.ts COUNTER_LINES_PER_SECOND) names no
        // counter: the keys it folds keep their older baseline, so the
        // resumed sampler counts those deltas again from the kernel; adding
        // the fold's delta here too would count them twice
        if (l.folded === true) break;
        if (l.source === 'ebpf') {
          const verdict = (l.kind === 'allow' ? 'allow' : l.reason) as Verdict;
          s.ebpf.set(counterKeyHex(tuple(), verdict, BigInt(l.kind === 'allow' ? num(l.generation) : 0)), BigInt(num(l.total)));
          if (l.kind === 'allow') s.totals.allow += num(l.delta);
          else s.totals.deny[String(l.reason)] = (s.totals.deny[String(l.reason)] ?? 0) + num(l.delta);
        } else if (l.source === 'nft') {
          if (l.kind === 'allow') s.nft.set(tupleKey(tuple()), BigInt(num(l.total)));
          else {
            s.nftDeny = BigInt(num(l.total));
            s.totals.deny[String(l.reason)] = (s.totals.deny[String(l.reason)] ?? 0) + num(l.delta);
          }
        }
        break;
      case 'lost_events':
        s.lostEvents = BigInt(num(l.total));
        s.totals.lost_events += num(l.delta);
        break;
      case 'counter_full':
        s.counterFull = BigInt(num(l.total));
        break;
      case 'reset':
        if (l.source === 'ebpf' && l.counter === 'lost_events') s.lostEvents = BigInt(num(l.current));
        else if (l.source === 'ebpf' && l.counter === 'counter_full') s.counterFull = BigInt(num(l.current));
        else if (l.source === 'ebpf' && typeof l.verdict === 'string') {
          s.ebpf.set(counterKeyHex(tuple(), l.verdict as Verdict, BigInt(num(l.generation))), BigInt(num(l.current)));
        } else if (l.source === 'nft' && l.counter === 'deny') s.nftDeny = BigInt(num(l.current));
        else if (l.source === 'nft') s.nft.set(tupleKey(tuple()), BigInt(num(l.current)));
        break;
      case 'nft_table':
        // a new table starts at zero
        s.nft.clear();
        s.nftDeny = 0n;
        break;
      default:
    }
  } catch {
    /* a line that does not describe a counter: nothing to resume */
  }
}

/**
 * The state to resume from, given the log as opened (its seq and last hash).
 * Lines are streamed, never loaded whole.
 */
export async function resume(dir: string, logSeq: number, logHash: string): Promise<Resumed> {
  const snap = await readSnapshot(dir);
  if (snap && snap.seq === logSeq && snap.hash === logHash) return { state: fromJson(snap), from: 'snapshot', replayed: 0 };
  const file = path.join(dir, COUNTERS_FILE);
  if (logSeq === 0) return { state: emptySamplerState(), from: 'none', replayed: 0 };
  assertNoSymlinks(file);
  let state = emptySamplerState();
  let from: Resumed['from'] = 'replay';
  let replayed = 0;
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return { state, from: 'none', replayed: 0 };
    throw e;
  }
  try {
    const rl = readline.createInterface({ input: fh.createReadStream({ encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const text of rl) {
      if (!text) continue;
      let l: Line;
      try {
        l = JSON.parse(text) as Line;
      } catch {
        continue;
      }
      const seq = typeof l.seq === 'number' ? l.seq : 0;
      if (snap && seq === snap.seq && sha256Hex(Buffer.from(text, 'utf8')) === snap.hash) {
        // the snapshot covers everything up to here: start over from it
        state = fromJson(snap);
        from = 'snapshot+replay';
        replayed = 0;
        continue;
      }
      applyLine(state, l);
      replayed++;
    }
  } finally {
    await fh.close();
  }
  return { state, from, replayed };
}
