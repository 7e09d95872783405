// Every refusal by a gensee control becomes one boundary event. This module
// turns what the hooks, the resolver and the gensee sockets report into
// events.jsonl lines; two controls write their own: the DNS stub
// (dns_denied, src/dns/service.ts) and the launcher's seccomp filter
// (egress_denied seccomp/<syscall>, src/pause/refusals.ts).
//
//   eBPF hook EPERM (a ring-buffer fault)        → egress_denied   ebpf/<hook>
//   resolver deny of a paused or submitted fault → fault_denied    resolver/<reason>
//   resolver delegate                            → fault_delegated policy/delegate
//   a paused call with no answer in time         → fault_denied    pause/timeout
//   a refused peer on a gensee socket            → peer_refused    socket/<name>
//   a refused frame on a gensee socket           → frame_rejected  socket/<name>
//   hook fault events the ring had no room for   → records_lost    ebpf/gs_events_v1
//
// A fault the hook raised (reject mode) was refused by the hook: its event
// is egress_denied, and the resolver's answer to it is not a second refusal.
// Denials at the pause layer never reach the hook's counters, so they are
// also counted per destination in counters.jsonl (CounterRecorder.countRefusal).
import type { FaultEvent } from '../abi';
import { bootNs } from '../dataplane';
import { formatEndpoint, type Tuple } from '../addr';
import type { Fault, Resolution } from '../protocol/types';
import { effectType } from '../protocol/types';
import type { FaultContext, Resolver, ResolvedEvent } from '../resolver/resolver';
import type { EventLog } from './log';

const VERDICT_WORDS: Record<string, string> = {
  no_lease: 'without a lease',
  expired: 'with an expired lease',
  exhausted: 'with a used-up lease',
  protocol: 'of a kind no rule can name',
  option: 'that reroutes packets',
  no_rule: 'that no rule names',
};

/** AF_* names for refusal details (this file's and src/pause/refusals.ts's) */
export const AF_NAMES: Record<number, string> = {
  0: 'AF_UNSPEC', 1: 'AF_UNIX', 2: 'AF_INET', 3: 'AF_AX25', 4: 'AF_IPX', 5: 'AF_APPLETALK', 6: 'AF_NETROM', 7: 'AF_BRIDGE', 8: 'AF_ATMPVC',
  9: 'AF_X25', 10: 'AF_INET6', 16: 'AF_NETLINK',
  17: 'AF_PACKET', 21: 'AF_RDS', 26: 'AF_LLC', 27: 'AF_IB', 28: 'AF_MPLS', 29: 'AF_CAN', 30: 'AF_TIPC', 31: 'AF_BLUETOOTH',
  36: 'AF_IEEE802154', 38: 'AF_ALG', 40: 'AF_VSOCK', 41: 'AF_KCM', 42: 'AF_QIPCRTR', 43: 'AF_SMC', 44: 'AF_XDP', 45: 'AF_MCTP',
};
const SOCK_NAMES: Record<number, string> = { 1: 'SOCK_STREAM', 2: 'SOCK_DGRAM', 3: 'SOCK_RAW', 4: 'SOCK_RDM', 5: 'SOCK_SEQPACKET', 6: 'SOCK_DCCP', 10: 'SOCK_PACKET' };
const PROTO_NAMES: Record<number, string> = { 0: '0', 1: 'IPPROTO_ICMP', 6: 'IPPROTO_TCP', 17: 'IPPROTO_UDP', 33: 'IPPROTO_DCCP', 58: 'IPPROTO_ICMPV6', 132: 'IPPROTO_SCTP', 136: 'IPPROTO_UDPLITE', 255: 'IPPROTO_RAW', 262: 'IPPROTO_MPTCP' };
const OPT_NAMES: Record<string, string> = { '0/4': 'IP_OPTIONS', '41/57': 'IPV6_RTHDR', '41/5': 'IPV6_2292RTHDR' };

/**
 * What a hook refusal says (detail, without who) and names (target), for
 * every hook: the lease hooks name a destination; socket() and setsockopt()
 * name what was asked for; bind and listen a local endpoint; AF_UNIX the
 * name its peer is bound to.
 */
export function describeHookEvent(ev: FaultEvent): { what: string; target?: string } {
  const t = ev.tuple;
  if (ev.socket) {
    const s = ev.socket;
    const af = AF_NAMES[s.af] ?? `family ${s.af}`;
    if (s.option) {
      const o = OPT_NAMES[`${s.option.level}/${s.option.name}`] ?? `level ${s.option.level} option ${s.option.name}`;
      return { what: `setsockopt ${o} on an ${af} socket refused: it routes packets through a hop no lease names` };
    }
    return {
      what: `socket(${af}, ${SOCK_NAMES[s.type & 0xf] ?? s.type}, ${PROTO_NAMES[s.protocol] ?? s.protocol}) refused: an operation makes TCP and UDP sockets (IPv4, IPv6) and AF_UNIX sockets only`,
    };
  }
  if (ev.unix) {
    const u = ev.unix;
    const name = u.length === 0 ? '(no name)' : `${u.name}${u.length > 16 ? '…' : ''}`;
    return { what: `unix ${ev.hook === 'sendmsg_unix' ? 'send' : 'connect'} to ${name} refused: no unix rule names it`, target: u.length ? name : undefined };
  }
  if (ev.hook === 'bind4' || ev.hook === 'bind6') {
    return { what: `${t.protocol} bind to ${formatEndpoint(t)} refused: no listen rule names port ${t.port}`, target: formatEndpoint(t) };
  }
  return { what: `${t.protocol} ${verb(ev.hook, t.protocol)} to ${formatEndpoint(t)}`, target: formatEndpoint(t) };
}

function verb(hook: string, protocol: string): string {
  return hook.startsWith('sendmsg') || protocol === 'udp' ? 'send' : 'connect';
}

/** the target a fault names, when its effect names one */
function faultTarget(f: Fault): string | undefined {
  const n = f.effect.network;
  if (n) return formatEndpoint(n);
  const inner: unknown = Object.values(f.effect).find((v) => v !== undefined && v !== null);
  if (typeof inner !== 'object' || inner === null) return undefined;
  for (const k of ['path', 'target', 'name']) {
    const v: unknown = (inner as { [k: string]: unknown })[k];
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

function who(f: Fault): string {
  const p = f.subject.process;
  if (p) return `pid ${p.pid}`;
  if (f.subject.peer) return `peer ${f.subject.peer.address}`;
  return 'no subject';
}

function faultWhat(f: Fault): string {
  const n = f.effect.network;
  if (n) return `${n.protocol} ${n.protocol === 'udp' ? 'send' : 'connect'} to ${formatEndpoint(n)}`;
  return `${effectType(f.effect)} effect`;
}

function socketOf(ctx: FaultContext): string {
  return ctx.socket ?? 'supervisor.sock';
}

export interface ReporterOptions {
  events: EventLog;
  /** per-destination counts of the pause layer's denials (counters.jsonl) */
  countRefusal?: (t: Tuple, reason: string) => void;
}

/** Report the resolver's denials, delegations and refusals as boundary events. */
export function reportResolver(resolver: Resolver, o: ReporterOptions): () => void {
  const onResolved = (e: ResolvedEvent) => resolved(o, e.fault, e.resolution, e.ctx, e.delegateTool);
  const onRefused = (e: { reason: string; detail: string; ctx: FaultContext; faultId?: string }) => refused(o, e);
  resolver.on('resolved', onResolved);
  resolver.on('refused', onRefused);
  return () => {
    resolver.off('resolved', onResolved);
    resolver.off('refused', onRefused);
  };
}

function resolved(o: ReporterOptions, f: Fault, r: Resolution, ctx: FaultContext, tool?: string): void {
  if (ctx.via === 'cgroup_hook') return; // the hook's refusal is its egress_denied event
  if (f.source === 'executor' && r.action === 'deny') {
    const app = f.effect.application;
    o.events.boundary({
      kind: 'write_denied',
      control: `executor/${r.reason}`,
      detail: `write by tool ${app?.name ?? '?'} (${who(f)}) denied: ${r.reason}`,
      target: app?.target || undefined,
      tool_id: app?.name,
      fault_id: f.fault_id,
    });
    return;
  }
  if (r.action === 'deny') {
    const n = f.effect.network;
    if (n) o.countRefusal?.({ family: n.family, protocol: n.protocol, address: n.address, port: n.port }, r.reason);
    o.events.boundary({
      kind: 'fault_denied',
      control: `resolver/${r.reason}`,
      detail: `${faultWhat(f)} by ${who(f)} denied: ${r.reason}`,
      target: faultTarget(f),
      fault_id: f.fault_id,
    });
  } else if (r.action === 'delegate') {
    const to = r.delegate_to ?? 'an executor';
    o.events.boundary({
      kind: 'fault_delegated',
      control: 'policy/delegate',
      detail: `${faultWhat(f)} by ${who(f)} delegated to ${to}${tool ? ` (tool ${tool})` : ''}; the workload gets ECONNREFUSED`,
      target: faultTarget(f),
      fault_id: f.fault_id,
      tool_id: tool,
    });
  }
}

function refused(o: ReporterOptions, e: { reason: string; detail: string; ctx: FaultContext; faultId?: string }): void {
  // a hook's refusal (socket kind, option, bind, AF_UNIX name) and the
  // seccomp filter's have their egress_denied event already: no gensee
  // socket refused anything there
  if (e.ctx.via === 'cgroup_hook' || e.ctx.via === 'inproc') return;
  const sock = socketOf(e.ctx);
  const peer = e.ctx.peer ? ` (peer pid ${e.ctx.peer.pid} uid ${e.ctx.peer.uid})` : '';
  if (e.reason === 'timeout') {
    o.events.boundary({ kind: 'fault_denied', control: 'pause/timeout', detail: e.detail, fault_id: e.faultId || undefined });
  } else if (e.reason === 'unauthenticated_peer') {
    o.events.boundary({ kind: 'peer_refused', control: `socket/${sock}`, detail: `${e.detail}${peer}`, target: sock, fault_id: e.faultId || undefined });
  } else {
    o.events.boundary({ kind: 'frame_rejected', control: `socket/${sock}`, detail: `${e.reason}: ${e.detail}${peer}`, target: sock, fault_id: e.faultId || undefined });
  }
}

/**
 * Which tool runs in which cgroup: the executor starts each tool call in a
 * cgroup of its own under the operation's and registers it (control.sock),
 * so a hook refusing a connection around the handle names the tool.
 */
export class ToolCgroups {
  private readonly byId = new Map<string, { tool_id: string; call_id: string }>();
  static readonly MAX = 4096;

  set(cgroupId: string, t: { tool_id: string; call_id: string }): void {
    this.byId.delete(cgroupId);
    this.byId.set(cgroupId, t);
    if (this.byId.size > ToolCgroups.MAX) this.byId.delete(this.byId.keys().next().value as string);
  }

  get(cgroupId: bigint): { tool_id: string; call_id: string } | undefined {
    return this.byId.size ? this.byId.get(String(cgroupId)) : undefined;
  }
}

/** An eBPF hook returned EPERM and put this fault on the ring. */
export function reportHookDenial(events: EventLog, ev: FaultEvent, faultId: string, tools?: ToolCgroups): void {
  const tool = tools?.get(ev.cgroupId);
  const d = describeHookEvent(ev);
  const lease = !ev.socket && !ev.unix && !ev.hook.startsWith('bind');
  events.boundary({
    kind: 'egress_denied',
    control: `ebpf/${ev.hook || 'unknown'}`,
    detail: `${d.what} by pid ${ev.tgid}${tool ? ` (tool ${tool.tool_id}, call ${tool.call_id})` : ''}${lease ? ` ${VERDICT_WORDS[ev.reason] ?? ev.reason}` : ''}`,
    ...(d.target !== undefined ? { target: d.target } : {}),
    fault_id: faultId,
    tool_id: tool?.tool_id,
    // when the hook decided: its CLOCK_BOOTTIME stamp, on the wall clock
    at: new Date(Date.now() - Math.max(0, Number(bootNs() - ev.bootNs) / 1e6)),
  });
}

/** The ring buffer had no room for `count` hook fault events. */
export function reportRecordsLost(events: EventLog, count: bigint, detail: string): void {
  events.boundary({ kind: 'records_lost', control: 'ebpf/gs_events_v1', detail: `${count} records lost: ${detail}` });
}
