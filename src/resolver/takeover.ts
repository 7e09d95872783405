// A resolver taking over from one that died or left (src/oci/listener.ts
// resume, src/supervisor.ts start with carryOpenFaults): the calls it drains
// first were not raised for it.
//
// - Carried faults: a fault line the old resolver wrote and never resolved.
//   Its call was never answered (an answer waits for its durable
//   resolution), so it still waits in the kernel; the new resolver restarts
//   it (gensee-fdkeep --nudge) and it comes again as a fresh notification
//   with a new fault id. That one is resolved under the original fault id:
//   no second fault line, the resolution line names the original and says
//   which id it was answered as. A carried fault whose call never comes
//   again (its thread gone) is closed as abandoned when the takeover settles.
// - Arrivals: calls the fd holder received while no resolver read (CALL
//   lines of gensee-fdkeep): the holder saw when each thread's call
//   arrived.
// Either way the call's wait counts from its arrival, not from the restart:
// one drained later than fault_deadline_ms after it arrived is denied with
// reason `resolver_restarted`; within the deadline it is answered by policy.
import * as fs from 'node:fs';
import { verifyLog } from '../evidence/verify';
import * as readline from 'node:readline';
import type { Fault } from '../protocol/types';

export interface CarriedFault {
  faultId: string;
  /** the paused thread, as the fault's subject names it */
  pid: number;
  startTicks: number;
  protocol: string;
  address: string;
  port: number;
  /** CLOCK_BOOTTIME ns the old resolver observed the call (0n: unknown) */
  observedNs: bigint;
  /** a hook refusal: the ring record its fault line names (ring_map, ring_pos) */
  ring?: { map: number; pos: number };
}

export interface TakeoverMatch {
  /** the open fault this call was first recorded under (null: none, a call the holder saw arrive) */
  originalId: string | null;
  /** CLOCK_BOOTTIME ns the call arrived */
  arrivedNs: bigint;
  waitedMs: number;
  /** waited past fault_deadline_ms: deny, reason resolver_restarted */
  late: boolean;
}

function keyOf(pid: number, startTicks: number, protocol: string, address: string, port: number): string {
  return `${pid}/${startTicks}/${protocol}/${address}/${port}`;
}

export class Takeover {
  private readonly carried = new Map<string, CarriedFault>();
  private readonly arrivals = new Map<number, bigint>();
  private readonly deadlineNs: bigint;
  private readonly now: () => bigint;
  private settled = false;
  readonly stats = { carried: 0, arrivals: 0, matchedCarried: 0, matchedArrivals: 0, late: 0 };

  constructor(o: { carried: CarriedFault[]; deadlineMs: number; now: () => bigint }) {
    for (const c of o.carried) this.carried.set(keyOf(c.pid, c.startTicks, c.protocol, c.address, c.port), c);
    this.stats.carried = o.carried.length;
    this.deadlineNs = BigInt(Math.max(0, Math.floor(o.deadlineMs))) * 1_000_000n;
    this.now = o.now;
  }

  /** calls the holder saw arrive while no resolver read (tid → CLOCK_BOOTTIME ns); the earliest per thread wins */
  addArrivals(calls: Iterable<{ tid: number; arrivedNs: bigint }>): void {
    if (this.settled) return;
    for (const c of calls) {
      const was = this.arrivals.get(c.tid);
      if (was === undefined) this.stats.arrivals++;
      if (was === undefined || c.arrivedNs < was) this.arrivals.set(c.tid, c.arrivedNs);
    }
  }

  get carriedIds(): string[] {
    return [...this.carried.values()].map((c) => c.faultId);
  }

  /** the carried fault whose line names this ring record (without matching it) */
  carriedAtRing(map: number, pos: number): CarriedFault | undefined {
    if (this.settled) return undefined;
    for (const c of this.carried.values()) if (c.ring && c.ring.map === map && c.ring.pos === pos) return c;
    return undefined;
  }

  /** Is this fault a call drained from before the takeover? Each is matched once. */
  match(f: Fault): TakeoverMatch | null {
    if (this.settled || (this.carried.size === 0 && this.arrivals.size === 0)) return null;
    const p = f.subject.process;
    const n = f.effect.network;
    if (!p || !n) return null;
    const k = keyOf(p.pid, p.start_time_ticks, n.protocol, n.address, n.port);
    const c = this.carried.get(k);
    const a = this.arrivals.get(p.pid);
    if (!c && a === undefined) return null;
    if (c) this.carried.delete(k);
    if (a !== undefined) this.arrivals.delete(p.pid);
    let arrived = a ?? f.observed_at_boot_ns;
    if (c && c.observedNs > 0n && c.observedNs < arrived) arrived = c.observedNs;
    const now = this.now();
    const waited = now > arrived ? now - arrived : 0n;
    // a hook refusal waits for nothing (the kernel answered EPERM at once; a
    // lease only lets its retry through): never late
    const late = f.source !== 'cgroup_hook' && waited > this.deadlineNs;
    if (c) this.stats.matchedCarried++;
    else this.stats.matchedArrivals++;
    if (late) this.stats.late++;
    return { originalId: c?.faultId ?? null, arrivedNs: arrived, waitedMs: Number(waited / 1_000_000n), late };
  }

  /** Stop matching; the carried faults whose call never came again. */
  settle(): string[] {
    this.settled = true;
    this.arrivals.clear();
    const left = this.carriedIds;
    this.carried.clear();
    return left;
  }
}

interface FaultLine {
  kind?: string;
  fault_id?: string;
  ring_map?: number;
  ring_pos?: number;
  fault?: {
    subject?: { process?: { pid?: number; start_time_ticks?: number | string } };
    effect?: { network?: { protocol?: string; address?: string; port?: number } };
    observed_at_boot_ns?: string | number;
  };
}

/**
 * The faults of a log with no resolution, with what it takes to know their
 * call again (a network fault of a process); others are left to be
 * abandoned as before.
 */
export async function openFaultsOf(file: string): Promise<{ carried: CarriedFault[]; other: string[] }> {
  if (!fs.existsSync(file)) return { carried: [], other: [] };
  const rep = await verifyLog(file, { pairFaults: true });
  const open = new Set(rep.problems.filter((p) => p.kind === 'unresolved_fault' && p.fault_id !== undefined).map((p) => p.fault_id!));
  if (open.size === 0) return { carried: [], other: [] };
  const carried: CarriedFault[] = [];
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.includes('"fault"')) continue;
    let v: FaultLine;
    try {
      v = JSON.parse(line) as FaultLine;
    } catch {
      continue;
    }
    if (v.kind !== 'fault' || !v.fault_id || !open.has(v.fault_id)) continue;
    const p = v.fault?.subject?.process;
    const n = v.fault?.effect?.network;
    if (!p || !n || typeof p.pid !== 'number' || p.start_time_ticks === undefined || !n.protocol || !n.address || typeof n.port !== 'number') continue;
    let observed = 0n;
    try {
      observed = BigInt(v.fault?.observed_at_boot_ns ?? 0);
    } catch {
      observed = 0n;
    }
    const ring = typeof v.ring_map === 'number' && typeof v.ring_pos === 'number' ? { ring: { map: v.ring_map, pos: v.ring_pos } } : {};
    carried.push({ faultId: v.fault_id, pid: p.pid, startTicks: Number(p.start_time_ticks), protocol: n.protocol, address: n.address, port: n.port, observedNs: observed, ...ring });
    open.delete(v.fault_id);
  }
  return { carried, other: [...open] };
}
