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
import type { DataPlane } from '../dataplane';
import type { FaultEvent } from '../abi';
import type { Fault } from '../protocol/types';
import type { Resolver } from './resolver';
import { readStartTimeTicks } from './subject';
import type { EventLog } from '../events/log';
import { describeHookEvent, reportHookDenial, reportRecordsLost, ToolCgroups } from '../events/reporter';
import { LEASE_HOOKS } from '../abi';

export interface RejectLoop {
  stop(): void;
  /** resolves when every event received so far has its resolution line */
  idle(): Promise<void>;
}

/** events: where each hook refusal becomes an egress_denied boundary event */
export function startRejectLoop(dp: DataPlane, resolver: Resolver, onError: (e: Error) => void, events?: EventLog, tools?: ToolCgroups): RejectLoop {
  let seq = 0;
  const inflight = new Set<Promise<unknown>>();
  const handle = (ev: FaultEvent) => {
    // read the start time at once: the process may be about to exit
    const start = readStartTimeTicks(ev.tgid);
    const id = `hk-${ev.bootNs}-${ev.tgid}-${++seq}`;
    // a tool call's cgroup (the executor registered it): its fault line names the tool
    const tool = tools?.get(ev.cgroupId);
    if (events) reportHookDenial(events, ev, id, tools);
    if (!LEASE_HOOKS.has(ev.hook) || ev.socket || ev.unix) {
      // nothing a lease can answer: a socket kind, an option, a bind or
      // listen, an AF_UNIX peer. Recorded; the kernel has already refused it.
      const d = describeHookEvent(ev);
      track(resolver.refuse('policy_denied', `${d.what} (pid ${ev.tgid}, cgroup ${ev.cgroupId}, ebpf/${ev.hook})`, { via: 'cgroup_hook' }, id));
      return;
    }
    if (ev.tuple.protocol !== 'tcp' && ev.tuple.protocol !== 'udp') {
      const p = resolver.refuse('malformed_fault', `hook event for protocol ${ev.tuple.protocol} has no lease form`, { via: 'cgroup_hook' }, id);
      track(p);
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
    track(resolver.resolve(fault, { via: 'cgroup_hook', ...(tool ? { tool } : {}) }));
  };
  const track = (p: Promise<unknown>) => {
    const q = p.catch((e: Error) => onError(e)).finally(() => inflight.delete(q));
    inflight.add(q);
  };
  const recordLost = lostRecorder(dp, resolver, onError, events);
  dp.onEvents(
    (evs) => {
      evs.forEach(handle);
      recordLost();
    },
    onError,
    { ref: false },
  );
  return {
    stop: () => {
      dp.stopEvents();
      recordLost();
    },
    idle: async () => {
      while (inflight.size) await Promise.all([...inflight]);
    },
  };
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
