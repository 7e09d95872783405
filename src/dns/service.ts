// DNS for one operation: the stub (src/dns/stub.ts) wired to the policy's
// host rules, the lease path, the DNS budget and the evidence.
//
//   a question → decide: the budget (distinct names per operation,
//                policy dns_budget), then the first host rule covering the
//                name (grants, leases, delegate); none → REFUSED, a
//                dns_refused line and a dns_denied boundary event whose
//                detail names the registered domain only
//   an answer  → for a grants/leases rule: an exact lease per answered
//                address × each port of the rule (its protocol), TTL =
//                min(rule ttl_s, the record's TTL + DNS_TTL_GRACE_S), through
//                the resolver's lease path (dns_query, lease_intent, install
//                read back, dns_answer) — all in the kernel before the answer
//                reaches the workload, so its first connect takes the fast
//                path; for a delegate rule: the addresses are remembered
//                until their TTL, and a connect to one is delegated
//
//   every forwarded question is a record: dns_query + dns_answer (with the
//                upstream's rcode) also for NXDOMAIN, SERVFAIL and empty
//                answers, which lease nothing
//
// Where the stub listens: `gensee run` picks a loopback address of its own
// per operation (127.53.X.Y port 53) and binds a resolv.conf naming it over
// the workload's /etc/resolv.conf; `gensee supervise --dns-listen ADDR:53`
// serves a container whose resolv.conf the operator points there. Either
// way the address is a standing grant (udp and tcp) of the operation, and
// fenced to the operation's cgroup (src/dns/guard.ts): a packet for it from
// any other socket is rejected in the kernel and counted, the count recorded
// as a dns_refused line (control dns/outside) and a dns_denied event.
import { createHash } from 'node:crypto';
import * as net from 'node:net';
import type { Resolver } from '../resolver/resolver';
import type { NetworkBackend } from '../backends/network';
import type { EventLog } from '../events/log';
import type { CounterRecorder } from '../counters/recorder';
import type { Family, HostMatch, Policy, Protocol } from '../protocol/types';
import type { Tuple } from '../addr';
import { parseIp, ruleForName } from '../protocol/ip';
import { GenseeError } from '../errors';
import { guardStub } from './guard';
import { registeredDomain, startDnsStub, type DnsAnswer, type DnsRefusal, type DnsStub, type NameVerdict, type Upstream } from './stub';

/** added to a record's TTL: a lease outlives the answer by this much (the connect follows the answer) */
export const DNS_TTL_GRACE_S = 5;
/** the DNS budget when the policy sets none */
export const DEFAULT_DNS_BUDGET = 1000;

export interface DnsServiceOptions {
  listen: { host: string; port: number };
  /** the operation's cgroup: the only one whose sockets reach the stub (src/dns/guard.ts) */
  cgroup: string;
  upstream: Upstream;
  /** the operation's current policy (it changes with `gensee policy apply`) */
  policy: () => Policy;
  resolver: Resolver;
  network: NetworkBackend;
  events: EventLog;
  recorder?: CounterRecorder;
  onError: (e: Error) => void;
}

export interface DnsService {
  readonly host: string;
  readonly port: number;
  /** distinct names queried so far */
  names(): number;
  close(): Promise<void>;
  stub: DnsStub;
}

/** A loopback address of the operation's own for its stub: 127.53.X.Y from the operation id (attempt > 0: the next ones). */
export function stubAddressFor(op: string, attempt = 0): string {
  const h = createHash('sha256').update(op).digest();
  const n = (h.readUInt16BE(0) + attempt) % 65024; // 127.53.0.1 .. 127.53.253.255
  return `127.53.${Math.floor(n / 255)}.${(n % 255) + 1}`;
}

/** The resolv.conf a workload gets: gensee's stub only. */
export function resolvConfText(host: string): string {
  return `# gensee: this operation's DNS stub; names no policy rule covers are REFUSED\nnameserver ${host}\noptions edns0\n`;
}

function ruleOf(policy: Policy, ref: string): { list: string; rule: HostMatch; ttl_s: number | null; max_uses: number; delegate: Policy['delegate'][number] | null } | null {
  const [list, idx] = ref.split('/');
  const i = Number(idx);
  if (list === 'grants') {
    const r = policy.grants[i];
    return r?.network.kind === 'host' ? { list, rule: r.network, ttl_s: null, max_uses: 0, delegate: null } : null;
  }
  if (list === 'leases') {
    const r = policy.leases[i];
    return r?.network.kind === 'host' ? { list, rule: r.network, ttl_s: r.ttl_s, max_uses: r.max_uses, delegate: null } : null;
  }
  if (list === 'delegate') {
    const r = policy.delegate[i];
    return r?.network.kind === 'host' ? { list, rule: r.network, ttl_s: null, max_uses: 0, delegate: r } : null;
  }
  return null;
}

export async function startDnsService(o: DnsServiceOptions): Promise<DnsService> {
  const seen = new Set<string>();
  let exhausted = false;

  const decide = (name: string): NameVerdict => {
    const budget = o.policy().dns_budget ?? DEFAULT_DNS_BUDGET;
    if (exhausted) return { allow: false, control: 'dns/budget', reason: `the DNS budget of ${budget} distinct names is spent: every query is refused` };
    if (!seen.has(name)) {
      if (seen.size >= budget) {
        exhausted = true;
        return { allow: false, control: 'dns/budget', reason: `a name past the DNS budget of ${budget} distinct names: from now on every query is refused` };
      }
      seen.add(name);
      o.recorder?.countDnsName(seen.size);
    }
    const r = ruleForName(o.policy(), name);
    if (!r) return { allow: false, control: 'dns/no_rule', reason: 'no host rule covers the name' };
    return { allow: true, ruleRef: `${r.list}/${r.index}` };
  };

  const onAnswer = async (q: { name: string; qtype: string; peer: string }, a: DnsAnswer, v: { ruleRef: string }): Promise<void> => {
    const r = ruleOf(o.policy(), v.ruleRef);
    const answered = { ...q, rcode: a.rcode, truncated: a.truncated, chain: a.chain, addresses: a.addresses };
    // the policy changed between the question and the answer (answer, grant
    // nothing), or nothing to lease (NXDOMAIN, SERVFAIL, an empty or
    // truncated answer): the forwarded question is recorded all the same
    if (!r || a.addresses.length === 0) {
      await o.resolver.resolveName({ ...answered, rule: r ? `${v.ruleRef} ${r.rule.text}` : `${v.ruleRef} (gone)` }, async () => ({ leases: [] }));
      return;
    }
    const minTtl = Math.min(...a.addresses.map((x) => x.ttl));
    const ttlS = Math.max(1, Math.min(r.ttl_s ?? Number.MAX_SAFE_INTEGER, minTtl + DNS_TTL_GRACE_S));
    if (r.delegate) {
      o.network.delegateAnswered(a.addresses, r.delegate, ttlS * 1000);
      await o.resolver.resolveName({ ...answered, rule: `${v.ruleRef} ${r.rule.text}` }, async () => ({ leases: [] }));
      return;
    }
    const tuples: Tuple[] = [];
    for (const addr of a.addresses) {
      for (let port = r.rule.ports.lo; port <= r.rule.ports.hi; port++) tuples.push({ family: addr.family as Family, protocol: r.rule.protocol as Protocol, address: addr.address, port });
    }
    await o.resolver.resolveName({ ...answered, rule: `${v.ruleRef} ${r.rule.text}` }, (intents) =>
      o.network.installNamed(tuples, ttlS * 1000, r.max_uses, intents),
    );
  };

  const onRefused = (r: DnsRefusal): void => {
    o.resolver.recordDnsRefusal(r).catch(o.onError);
    if (r.control === 'dns/no_rule' || r.control === 'dns/budget') {
      const domain = r.name ? registeredDomain(r.name) : '?';
      o.events.boundary({
        kind: 'dns_denied',
        control: r.control,
        detail: `${r.qtype ?? '?'} query for a name under ${domain} refused: ${r.control === 'dns/budget' ? 'the DNS budget is spent' : 'no host rule covers it'}`,
        target: domain,
      });
    }
  };

  // bound, not serving, until the address is fenced to the operation's cgroup
  const stub = await startDnsStub({ listen: o.listen, upstream: o.upstream, decide, onAnswer, onRefused, held: true });
  const target = net.isIPv6(o.listen.host) ? `[${o.listen.host}]:${stub.udpPort}` : `${o.listen.host}:${stub.udpPort}`;
  let guard;
  try {
    guard = await guardStub({
      host: o.listen.host,
      port: stub.udpPort,
      cgroup: o.cgroup,
      onError: o.onError,
      onOutside: (n) => {
        const detail = `${n} packet(s) to the operation's DNS stub from sockets outside its cgroup rejected (nftables): nothing answered, nothing forwarded, no budget spent`;
        o.resolver.recordDnsRefusal({ name: null, qtype: null, rcode: 'NONE', control: 'dns/outside', detail, peer: 'outside the operation cgroup' }).catch(o.onError);
        o.events.boundary({ kind: 'dns_denied', control: 'dns/outside', detail, target });
      },
    });
  } catch (e) {
    await stub.close();
    throw e;
  }
  stub.serve();
  const g = guard;
  return {
    host: o.listen.host,
    port: stub.udpPort,
    names: () => seen.size,
    // the fence comes off while the address is still ours (see src/dns/guard.ts)
    close: () => stub.close(() => g.remove().catch(o.onError)),
    stub,
  };
}

/**
 * `--dns-upstream [udp:|tcp:]ADDR[:PORT]` / `[V6]:PORT` (port 53 by
 * default; UDP unless `tcp:` says so: the stub never switches transports).
 */
export function parseUpstream(text: string): Upstream {
  const t = /^(udp|tcp):(.*)$/.exec(text);
  if (t) return { ...parseAddrPort(t[2], text), transport: t[1] as 'udp' | 'tcp' };
  return parseAddrPort(text, text);
}

function parseAddrPort(text: string, whole: string): Upstream {
  const m = /^\[([0-9a-fA-F:.]+)\](?::([0-9]{1,5}))?$/.exec(text) ?? /^([0-9.]+)(?::([0-9]{1,5}))?$/.exec(text) ?? /^([0-9a-fA-F:]+)()$/.exec(text);
  const port = m?.[2] ? Number(m[2]) : 53;
  if (!m || !parseIp(m[1]) || port < 1 || port > 65535) {
    throw new GenseeError('E_USAGE', `bad --dns-upstream "${whole}": expected an IP address with an optional port, optionally after udp: or tcp: (127.0.0.1:5353, [::1]:53, tcp:10.0.0.2)`);
  }
  return { host: m[1], port };
}

/** `--dns-listen ADDR[:PORT]` (port 53 by default: a resolv.conf cannot name another). */
export function parseDnsListen(text: string): { host: string; port: number } {
  const u = parseAddrPort(text, text);
  return { host: u.host, port: u.port };
}
