// Reject mode: the eBPF hooks refused a call (EPERM) and put a fault event on
// the ring buffer. Each event becomes a CapabilityFault (source cgroup_hook)
// resolved like any other, so a workload that retries after EPERM succeeds
// on its retry when policy allows.
//
// An event the ring had no room for is counted by the kernel (lostEvents);
// every increase becomes a {kind:"records_lost"} line in faults.jsonl with
// the count, so the fault log itself says it is incomplete and by how much.
// A loss leaves the ring full, so the drain that follows it sees it; stop()
// looks once more for the last ones.
//
// Replay (issue 28): a record's room in the ring is given back to the
// kernel (ackEvents) only once its line is durable, in ring order, so a
// resolver killed between reading a record and writing its line leaves it
// in the ring and the next one reads it again. Each line names its record
// (ring_map, ring_pos): a successor skips the records a line already
// covers and decided (written, not yet acked when the predecessor died),
// decides those whose line is still open under their own fault id, and
// writes one ring_replayed line with the counts.
import type { DataPlane } from '../dataplane';
import type { FaultEvent } from '../abi';
import type { Fault } from '../protocol/types';
import type { Resolver } from './resolver';
import { readStartTimeTicks } from './subject';
import type { EventLog } from '../events/log';
import { describeHookEvent, reportHookDenial, reportRecordsLost, ToolCgroups } from '../events/reporter';
import { LEASE_HOOKS } from '../abi';
import * as fs from 'node:fs';
import { loadAddon } from '../addon';
const debugLatency = !!process.env.GENSEE_DEBUG_RING;

export interface RejectLoop {
  /** settles once the records found unreleased in the ring at start have been read (at once: none) */
  replayed: Promise<void>;
  stop(): void;
  /** resolves when every event received so far has its resolution line */
  idle(): Promise<void>;
}

/** records held unreleased past which the held suppressed count is written at once */
const HELD_FLUSH = 4096;

/** events: where each hook refusal becomes an egress_denied boundary event */
export function startRejectLoop(dp: DataPlane, resolver: Resolver, onError: (e: Error) => void, events?: EventLog, tools?: ToolCgroups): RejectLoop {
  let seq = 0;
  let stopped = false;
  const inflight = new Set<Promise<unknown>>();
  // tests only (GENSEE_TEST_HOLD_RING_ACK, read nowhere else): write every
  // line, release nothing (a resolver killed between a durable line and its release)
  const holdAcks = process.env.GENSEE_TEST_HOLD_RING_ACK === '1';
  // records read, in ring order, waiting for their lines to be durable
  const acks: { end: number; done: boolean }[] = [];
  let ackHead = 0;
  const ackFront = () => {
    if (holdAcks) return;
    let end = -1;
    while (ackHead < acks.length && acks[ackHead].done) end = acks[ackHead++].end;
    if (ackHead > 1024 && ackHead * 2 > acks.length) {
      acks.splice(0, ackHead);
      ackHead = 0;
    }
    pollWhileHeld();
    if (end < 0) return;
    try {
      dp.ackEvents(end);
    } catch (e) {
      // the consumer is closed (the operation stops): what was not acked is
      // the next consumer's to read again, and skip by its ring_pos
      if (!stopped) onError(e as Error);
    }
  };
  // Hooks pinned by an older gensee wake the consumer only for a record at
  // the released position: while records are held, look for new ones
  // every 20 ms (this build's hooks wake it for every record)
  let poll: NodeJS.Timeout | null = null;
  const pollWhileHeld = () => {
    const held = acks.length - ackHead;
    if (held > 0 && !poll && !stopped) {
      poll = setInterval(() => dp.drainEvents(), 20);
      poll.unref();
    } else if ((held === 0 || stopped) && poll) {
      clearInterval(poll);
      poll = null;
    }
    // a flood held behind the suppressed count's line: write it now
    if (held > HELD_FLUSH) resolver.releaseHeld();
  };
  let replay: Replay | null = null;
  let replayDone: () => void = () => undefined;
  const replayed = new Promise<void>((res) => (replayDone = res));
  let mapId = 0;
  const handle = (ev: FaultEvent) => {
    let ack: { end: number; done: boolean } | null = null;
    let logged = false;
    if (ev.ring) {
      ack = { end: ev.ring.end, done: false };
      acks.push(ack);
      logged = replay !== null && replay.note(ev.ring.pos);
    }
    const ring = ev.ring ? { map: mapId, pos: ev.ring.pos } : undefined;
    // read the start time at once: the process may be about to exit
    let start = readStartTimeTicks(ev.tgid);
    if (debugLatency) process.stderr.write(`gensee: ring record ${ev.ring?.pos} read ${Number(loadAddon().bootNs() - ev.bootNs) / 1000} us after the hook; start ${start}\n`);
    if (logged) {
      // its line is in the log already. Still open (a carried fault: the
      // resolver before this one died deciding it), it is decided now under
      // its own fault id, as the subject its line names (the process may be
      // gone: then it is denied invalid_subject); else it is done.
      const c = resolver.takeover?.carriedAtRing(mapId, ev.ring!.pos);
      if (!c) {
        replay!.skipped++;
        ack!.done = true;
        return;
      }
      start = c.startTicks;
      replay!.carried++;
    }
    const id = `hk-${ev.bootNs}-${ev.tgid}-${++seq}`;
    // a tool call's cgroup (the executor registered it): its fault line names the tool
    const tool = tools?.get(ev.cgroupId);
    if (events) reportHookDenial(events, ev, id, tools);
    if (!LEASE_HOOKS.has(ev.hook) || ev.socket || ev.unix) {
      // nothing a lease can answer: a socket kind, an option, a bind or
      // listen, an AF_UNIX peer. Recorded; the kernel has already refused it.
      const d = describeHookEvent(ev);
      track(resolver.refuse('policy_denied', `${d.what} (pid ${ev.tgid}, cgroup ${ev.cgroupId}, ebpf/${ev.hook})`, { via: 'cgroup_hook', ring }, id), ack);
      return;
    }
    if (ev.tuple.protocol !== 'tcp' && ev.tuple.protocol !== 'udp') {
      track(resolver.refuse('malformed_fault', `hook event for protocol ${ev.tuple.protocol} has no lease form`, { via: 'cgroup_hook', ring }, id), ack);
      return;
    }
    const fault: Fault = {
      schema: 2,
      operation_id: resolver.scope.id,
      fault_id: id,
      // a process already gone has no start time: recorded, denied invalid_subject
      subject: { process: { pid: ev.tgid, start_time_ticks: start ?? 0 } },
      effect: { network: { family: ev.tuple.family, protocol: ev.tuple.protocol, address: ev.tuple.address, port: ev.tuple.port } },
      source: 'cgroup_hook',
      observed_at_boot_ns: ev.bootNs,
      cgroup_id: ev.cgroupId,
    };
    track(resolver.resolve(fault, { via: 'cgroup_hook', ring, ...(tool ? { tool } : {}) }), ack);
  };
  const track = (p: Promise<unknown>, ack: { end: number; done: boolean } | null) => {
    const q = p.catch((e: Error) => onError(e)).finally(() => inflight.delete(q));
    inflight.add(q);
    if (!ack) return;
    // released once its line is durable (a refusal counted into the held
    // suppressed count: once that count's line is); a line that could not
    // be written is released too (the failed state counts what it denies)
    void q.then(() => resolver.whenHeldWritten()).finally(() => {
      ack.done = true;
      ackFront();
    });
  };
  const recordLost = lostRecorder(dp, resolver, onError, events);
  // tests only (GENSEE_TEST_HOLD_RING, read nowhere else): read records and
  // keep them, unwritten and unacked (a resolver killed here had them in
  // hand and nothing in the log)
  const hold = process.env.GENSEE_TEST_HOLD_RING === '1' ? { n: 0 } : null;
  // nothing acked, no wake-up comes for the next record: look for it
  if (hold) setInterval(() => dp.drainEvents(), 50).unref();
  dp.onEvents(
    (evs) => {
      // after stop: left unacked in the ring, for whoever serves next
      if (stopped) return;
      if (hold) {
        hold.n += evs.length;
        process.stderr.write(`gensee: test: holding ${hold.n} ring record(s)\n`);
        return;
      }
      evs.forEach(handle);
      // records already in the log (a replay) are released at once
      ackFront();
      recordLost();
      if (replay && replay.finished(dp)) {
        writeReplayed(resolver, replay, onError);
        replay = null;
        replayDone();
      }
    },
    onError,
    { ref: false, manualAck: true },
  );
  try {
    const st = dp.eventsState();
    mapId = st.mapId;
    // records a predecessor read and never acked: read again here; the last
    // ring_pos in the log says which of them already have their line
    if (st.produced > st.consumed) replay = new Replay(st.mapId, st.consumed, st.produced, lastRingMark(resolver.log.path, st.mapId));
    if (!replay) replayDone();
    if (process.env.GENSEE_DEBUG) process.stderr.write(`gensee: ring ${st.mapId}: consumed ${st.consumed}, produced ${st.produced}, read ${st.read}${replay ? `, last logged ${replay.logged}` : ''}\n`);
  } catch (e) {
    replayDone();
    onError(e as Error);
  }
  return {
    replayed,
    stop: () => {
      stopped = true;
      pollWhileHeld();
      recordLost();
    },
    idle: async () => {
      while (inflight.size) await Promise.all([...inflight]);
    },
  };
}

/** the records found in the ring at start, unacked by whoever read them before */
class Replay {
  records = 0;
  /** already in the log, decided: done */
  skipped = 0;
  /** already in the log, left open by the resolver that died: decided now */
  carried = 0;
  constructor(
    readonly mapId: number,
    readonly from: number,
    readonly to: number,
    /** the last ring_pos a line in the log names (-1: none) */
    readonly logged: number,
  ) {}

  /** a record read at pos; true when a line already covers it */
  note(pos: number): boolean {
    if (pos >= this.to) return false;
    this.records++;
    return pos <= this.logged;
  }

  /** every record that was in the ring at start has been read */
  finished(dp: DataPlane): boolean {
    try {
      return dp.eventsState().read >= this.to;
    } catch {
      return true;
    }
  }
}

function writeReplayed(resolver: Resolver, r: Replay, onError: (e: Error) => void): void {
  try {
    resolver.log.appendTicket(
      {
        kind: 'ring_replayed',
        control: 'ebpf/gs_events_v1',
        ring_map: r.mapId,
        from_pos: r.from,
        to_pos: r.to,
        records: r.records,
        already_logged: r.skipped + r.carried,
        carried: r.carried,
        detail: `${r.records} hook fault record(s) read by a resolver that stopped before releasing them were read again; ${r.skipped + r.carried} already had their fault line (${r.carried} of them still open, decided now)`,
      },
      { sync: true, defer: true },
    );
  } catch (e) {
    onError(e as Error);
  }
}

/**
 * The last ring position a line of the fault log names for this ring map
 * (-1: none). Lines are written in ring order, so the last one found
 * (reading back from the end) is the highest.
 */
export function lastRingMark(file: string, mapId: number): number {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return -1;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const chunk = 1 << 16;
    let pos = size;
    // the start of the last line read, whose beginning is further back
    let tail = '';
    while (pos > 0) {
      const n = Math.min(chunk, pos);
      pos -= n;
      const buf = Buffer.alloc(n);
      fs.readSync(fd, buf, 0, n, pos);
      const text = buf.toString('latin1') + tail;
      const lines = text.split('\n');
      // the first piece may be the end of a line that starts further back
      tail = pos > 0 ? lines.shift()! : '';
      for (let i = lines.length - 1; i >= 0; i--) {
        const m = /"ring_map":(\d+),"ring_pos":(\d+)/.exec(lines[i]);
        if (m && Number(m[1]) === mapId) return Number(m[2]);
      }
    }
    return -1;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Returns a check that writes one records_lost line per increase of the
 * kernel's lost-event count. The count is kept since attach and outlives a
 * resolver: one found at start (a resolver before this one may have recorded
 * part of it; events lost while none ran were recorded by nobody) is written
 * at once, as the total it is.
 */
function lostRecorder(dp: DataPlane, resolver: Resolver, onError: (e: Error) => void, events?: EventLog): () => void {
  const write = (count: bigint, total: bigint, detail: string) => {
    if (events) reportRecordsLost(events, count, detail);
    try {
      const ticket = resolver.log.appendTicket(
        { kind: 'records_lost', control: 'ebpf/gs_events_v1', count: Number(count), total: Number(total), detail, via: 'cgroup_hook' },
        { sync: true },
      );
      resolver.log.whenDurable(ticket).catch(onError);
    } catch (e) {
      onError(e as Error);
    }
  };
  const read = (): bigint | null => {
    try {
      return dp.stats().lostEvents;
    } catch (e) {
      onError(e as Error);
      return null;
    }
  };
  let seen = read() ?? 0n;
  if (seen > 0n) write(seen, seen, `the kernel had dropped ${seen} hook fault events (ring buffer full) since the hooks were attached, before this resolver started; the counters count every denial`);
  return () => {
    const now = read();
    if (now === null || now <= seen) return;
    write(now - seen, now, `${now - seen} hook fault events dropped: ring buffer gs_events_v1 was full; the counters count every denial`);
    seen = now;
  };
}
