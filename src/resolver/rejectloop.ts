// Reject mode: the eBPF hooks refused a call (EPERM) and put a fault event on
// the ring buffer. Each event becomes a CapabilityFault (source cgroup_hook)
// resolved like any other, so a workload that retries after EPERM succeeds
// on its retry when policy allows.
import type { DataPlane } from '../dataplane';
import type { FaultEvent } from '../abi';
import type { Fault } from '../protocol/types';
import type { Resolver } from './resolver';
import { readStartTimeTicks } from './subject';

export interface RejectLoop {
  stop(): void;
  /** resolves when every event received so far has its resolution line */
  idle(): Promise<void>;
}

export function startRejectLoop(dp: DataPlane, resolver: Resolver, onError: (e: Error) => void): RejectLoop {
  let seq = 0;
  const inflight = new Set<Promise<unknown>>();
  const handle = (ev: FaultEvent) => {
    // read the start time at once: the process may be about to exit
    const start = readStartTimeTicks(ev.tgid);
    const id = `hk-${ev.bootNs}-${ev.tgid}-${++seq}`;
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
    track(resolver.resolve(fault, { via: 'cgroup_hook' }));
  };
  const track = (p: Promise<unknown>) => {
    const q = p.catch((e: Error) => onError(e)).finally(() => inflight.delete(q));
    inflight.add(q);
  };
  dp.onEvents((evs) => evs.forEach(handle), onError, { ref: false });
  return {
    stop: () => dp.stopEvents(),
    idle: async () => {
      while (inflight.size) await Promise.all([...inflight]);
    },
  };
}
