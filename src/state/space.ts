// The state filesystem's free space, and the reserve gensee keeps on it
// (docs/design.md, "The shared state disk"). Every operation of a state dir
// shares one filesystem, so a workload that makes gensee write could
// otherwise fill it for all of them. Three levels, from statfs(2) of the
// state dir (read at most every CHECK_MS):
//
//   ok        free > reserve
//   low       free ≤ reserve: lines a workload can cause (refusals, boundary
//             events) are counted, not written; their counts are written as
//             one `suppressed` line once space returns or the log closes
//   critical  free ≤ reserve / 2: no new lease is granted either (the call is
//             denied, fail closed): what is left is for gensee's own closing
//             lines (suppressed counts, torn-line records, the stop record)
//
// Leaving a level takes free space RESUME_FACTOR times its threshold
// (hysteresis), so a disk at the edge does not flap.
//
// The reserve: $GENSEE_STATE_RESERVE (bytes, or with a K/M/G suffix), else
// 5% of the filesystem, at least 1 MiB and at most 64 MiB.
import * as fs from 'node:fs';
import { GenseeError } from '../errors';

export const RESERVE_ENV = 'GENSEE_STATE_RESERVE';
export const RESERVE_MIN = 1 << 20;
export const RESERVE_MAX = 64 << 20;
export const RESERVE_SHARE = 0.05;
/** statfs at most this often (ms) */
export const CHECK_MS = 50;
/** leave a level once free space is this many times its threshold */
export const RESUME_FACTOR = 1.25;

export type SpaceLevel = 'ok' | 'low' | 'critical';

export interface SpaceReading {
  level: SpaceLevel;
  free: number;
  reserve: number;
}

/** "1048576", "512K", "1M", "2G" → bytes; E_USAGE on anything else */
export function parseBytes(s: string, what = RESERVE_ENV): number {
  const m = /^([0-9]{1,15})([KMG]i?B?)?$/i.exec(s.trim());
  if (!m) throw new GenseeError('E_USAGE', `${what}: expected a byte count such as 1048576, 512K, 64M or 1G, not ${JSON.stringify(s.slice(0, 40))}`);
  const unit = (m[2] ?? '').charAt(0).toUpperCase();
  const mult = unit === 'K' ? 1 << 10 : unit === 'M' ? 1 << 20 : unit === 'G' ? 1 << 30 : 1;
  return Number(m[1]) * mult;
}

/** the reserve for a filesystem of fsBytes, from the environment or the default */
export function reserveFor(fsBytes: number, env = process.env[RESERVE_ENV]): number {
  if (env !== undefined && env !== '') return parseBytes(env);
  return Math.min(RESERVE_MAX, Math.max(RESERVE_MIN, Math.round(fsBytes * RESERVE_SHARE)));
}

export class StateSpace {
  readonly dir: string;
  private reserveBytes = -1;
  private checkedAt = -Infinity;
  private cur: SpaceReading = { level: 'ok', free: Number.MAX_SAFE_INTEGER, reserve: 0 };
  private readonly listeners: ((r: SpaceReading, was: SpaceLevel) => void)[] = [];

  constructor(dir: string, reserve?: number) {
    this.dir = dir;
    if (reserve !== undefined) this.reserveBytes = reserve;
  }

  /** told of every change of level (once per change) */
  onChange(fn: (r: SpaceReading, was: SpaceLevel) => void): void {
    this.listeners.push(fn);
  }

  /** the level now (statfs at most every CHECK_MS; force: read it now) */
  read(force = false): SpaceReading {
    const now = Date.now();
    if (!force && now - this.checkedAt < CHECK_MS) return this.cur;
    this.checkedAt = now;
    let free: number;
    let size: number;
    try {
      const s = fs.statfsSync(this.dir);
      free = s.bavail * s.bsize;
      size = s.blocks * s.bsize;
    } catch {
      return this.cur; // the writes themselves will say what is wrong
    }
    if (this.reserveBytes < 0) this.reserveBytes = reserveFor(size);
    const r = this.reserveBytes;
    const was = this.cur.level;
    let level: SpaceLevel;
    if (free <= r / 2) level = 'critical';
    else if (free <= r) level = was === 'critical' && free <= (r / 2) * RESUME_FACTOR ? 'critical' : 'low';
    else if (was !== 'ok' && free <= r * RESUME_FACTOR) level = free <= (r / 2) * RESUME_FACTOR && was === 'critical' ? 'critical' : 'low';
    else level = 'ok';
    this.cur = { level, free, reserve: r };
    if (level !== was) for (const fn of this.listeners) fn(this.cur, was);
    return this.cur;
  }

  get level(): SpaceLevel {
    return this.read().level;
  }

  /** free ≤ reserve: what a workload can cause is counted, not written */
  get low(): boolean {
    return this.read().level !== 'ok';
  }
}
