// The calls gensee-exec's filter sends only to be refused (a socket family
// no hook can see, io_uring, listen() without listen rules): the notifier
// answers them in C at once with their errno and keeps them; this records
// them, as the hooks' refusals are recorded, in faults.jsonl (a
// policy_denied refusal) and events.jsonl (egress_denied, control
// seccomp/<syscall>; the flood gate applies). Repeats of the same call by
// the same thread arrive as one entry with a count.
import type { Notifier, FilterRefusal } from '../addon';
import type { Resolver } from '../resolver/resolver';
import type { EventLog } from '../events/log';
import { bootNs } from '../dataplane';
import { AF_NAMES } from '../events/reporter';

const ERRNO: Record<number, string> = { 1: 'EPERM', 38: 'ENOSYS', 97: 'EAFNOSUPPORT' };

/** what the refused call was, in one line */
export function describeFilterRefusal(r: FilterRefusal): string {
  const a = r.args.map((x) => BigInt.asUintN(64, x));
  const fam = (x: bigint) => (x > 0xffffffffn ? `family 0x${x.toString(16)}` : (AF_NAMES[Number(x)] ?? `family ${x}`));
  let call: string;
  let why: string;
  switch (r.syscall) {
    case 'socket':
    case 'socketpair':
      call = `${r.syscall}(${fam(a[0])}, ${Number(a[1] & 0xfn)}, ${Number(a[2] & 0xffffffffn)})`;
      why = 'an operation makes AF_UNIX, AF_INET and AF_INET6 sockets only';
      break;
    case 'io_uring_setup':
      call = 'io_uring_setup()';
      why = 'io_uring makes sockets no filter sees; the policy does not allow it (io_uring: true)';
      break;
    case 'listen':
      call = `listen(fd ${Number(a[0] & 0xffffffffn)})`;
      why = 'the policy has no listen rule';
      break;
    default:
      call = `${r.syscall}()`;
      why = 'refused by the filter';
  }
  return `${call} refused (${ERRNO[r.errno] ?? `errno ${r.errno}`}): ${why}`;
}

export interface RefusalRecorder {
  /** record what the notifier kept so far (call before closing it) */
  drain(): void;
  stop(): void;
}

export function startRefusalRecorder(notifier: Notifier, resolver: Resolver, events: EventLog | null, onError: (e: Error) => void, everyMs = 250): RefusalRecorder {
  let seq = 0;
  const drain = () => {
    let rs: FilterRefusal[];
    try {
      rs = notifier.takeRefusals();
    } catch (e) {
      onError(e as Error);
      return;
    }
    for (const r of rs) {
      const id = `sf-${r.pid}-${++seq}`;
      const what = `${describeFilterRefusal(r)}${r.count > 1 ? `, ${r.count} times` : ''}`;
      events?.boundary({
        kind: 'egress_denied',
        control: `seccomp/${r.syscall}`,
        detail: `${what} by pid ${r.pid}`,
        fault_id: id,
        at: new Date(Date.now() - Math.max(0, Number(bootNs() - r.bootNs) / 1e6)),
      });
      resolver.refuse('policy_denied', `${what} (pid ${r.pid}, seccomp/${r.syscall})`, { via: 'inproc' }, id).catch(onError);
    }
  };
  const timer = setInterval(drain, everyMs);
  timer.unref();
  return {
    drain,
    stop: () => {
      clearInterval(timer);
      drain();
    },
  };
}
