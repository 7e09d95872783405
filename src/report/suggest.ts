// `gensee policy suggest` (issue 29): the policy that would have allowed
// exactly what one or more operations reached, from their evidence.
//
//   host rule     where the operation's DNS stub answered the address for a
//                 name (a dns_answer line): CI gets api.github.com:443, not an
//                 address that changes tomorrow
//   address rule  only where no name explains the address
//   ports         of one name or address, one rule per run of consecutive
//                 ports ("ports": "8000-8002"); UDP rules apart from TCP
//   why           free text: how often, by which processes, from which op
//
// What counts as reached: a fault answered with a lease (a rule's or an
// audit lease) or as already authorized, and every connect or send the
// kernel allowed (counters.jsonl). Refusals are not reached. The stub's own
// address is gensee's, never suggested. The evidence must pass verify.
import * as path from 'node:path';
import { opDir, openOperation } from '../state/operation';
import { verifyOperation } from '../evidence/verify';
import { GenseeError } from '../errors';
import { readLines, type Line } from './report';
import { checkPolicy, parsePolicy } from '../protocol/json';
import { matchesNetwork, ruleForName } from '../protocol/ip';
import type { Family, Policy, Protocol } from '../protocol/types';

/** a suggested lease's TTL: a name's lease lives at most its record's TTL + 5 s anyway */
export const SUGGEST_TTL_S = 300;

interface Use {
  /** the name the stub answered this address for last before these uses (null: none known) */
  name: string | null;
  family: Family;
  protocol: Protocol;
  address: string;
  port: number;
  uses: number;
  processes: Set<string>;
  ops: Set<string>;
}

interface RuleJson {
  network: { protocol: Protocol; host?: string; address?: string; port?: number; ports?: string };
  ttl_s: number;
  why: string;
}

export interface SuggestOptions {
  stateDir: string;
  ops: string[];
  /** an existing policy: kept as it is, the suggested rules it does not cover added */
  merge?: { file: string; text: string };
  /** leave out rules used fewer times than this (default 1) */
  minUses?: number;
}


const isRunStub = (address: string, port: number) => port === 53 && /^127\.53\.\d+\.\d+$/.test(address);

/** consecutive ports in runs: [80, 443, 444] → [[80,80],[443,444]] */
export function portRuns(ports: number[]): [number, number][] {
  const s = [...new Set(ports)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const p of s) {
    const last = out[out.length - 1];
    if (last && p === last[1] + 1) last[1] = p;
    else out.push([p, p]);
  }
  return out;
}

export async function suggestPolicy(o: SuggestOptions): Promise<{ policy: Record<string, unknown>; added: number; left_out: number }> {
  const minUses = o.minUses ?? 1;
  const uses = new Map<string, Use>();
  /** address → names the stub answered it for, per op (a name explains an address only in the op that asked it) */
  const names = new Map<string, Set<string>>();
  for (const op of o.ops) {
    await openOperation(o.stateDir, op); // E_UNKNOWN_OP: exit 2
    const dir = opDir(o.stateDir, op);
    const faults = readLines(path.join(dir, 'faults.jsonl'));
    if (faults.length === 0) throw new GenseeError('E_NO_EVIDENCE', `operation ${op} has no evidence (faults.jsonl is missing or empty in ${dir}): nothing to suggest from`);
    const v = await verifyOperation(o.stateDir, op);
    if (!v.ok) {
      const bad = v.logs.filter((l) => !l.ok).map((l) => `${l.file}: ${l.problems.filter((p) => p.severity === 'error').length} problem(s), first ${l.problems[0]?.kind ?? '?'} at line ${l.problems[0]?.line ?? '?'}`);
      throw new GenseeError('E_VERIFY', `operation ${op}: the evidence fails gensee verify (${bad.join('; ')}): no policy is suggested from evidence that may have been edited`);
    }
    const byId = new Map<string, Line>();
    const use = (n: { family: Family; protocol: Protocol; address: string; port: number }, count: number, comm?: unknown, name: string | null = null) => {
      if (isRunStub(n.address, n.port)) return;
      const k = `${n.protocol}|${n.family}|${n.address}|${n.port}|${name ?? ''}`;
      let u = uses.get(k);
      if (!u) uses.set(k, (u = { name, family: n.family, protocol: n.protocol, address: n.address, port: n.port, uses: 0, processes: new Set(), ops: new Set() }));
      u.uses += count;
      u.ops.add(op);
      if (typeof comm === 'string' && comm) u.processes.add(comm);
    };
    /** per destination: faults answered with a lease or as authorized in this op (a floor when counters are missing) */
    const faulted = new Map<string, { n: { family: Family; protocol: Protocol; address: string; port: number }; count: number; comm: Set<string>; name: string | null }>();
    // which name led to a connect: the last one the stub answered its address for, before its fault
    // (two names on one address are told apart by order, as a workload asks, then connects)
    const lastName = new Map<string, { name: string; at: number }>();
    const nameAt = new Map<string, string>();
    for (const l of faults) {
      if (l.kind === 'fault') {
        byId.set(String(l.fault_id), l);
        const a = (l.fault as { effect?: { network?: { address?: string } } } | undefined)?.effect?.network?.address;
        const ln = a ? lastName.get(a) : undefined;
        if (ln) nameAt.set(String(l.fault_id), ln.name);
      }
      else if (l.kind === 'resolution' && typeof l.abandoned !== 'string') {
        const res = l.resolution as { action?: string } | undefined;
        if (res?.action !== 'retry_after_lease' && res?.action !== 'continue_already_authorized') continue;
        const f = byId.get(String(l.fault_id))?.fault as { effect?: { network?: { family: Family; protocol: Protocol; address: string; port: number } } } | undefined;
        const n = f?.effect?.network;
        if (!n) continue;
        const name = nameAt.get(String(l.fault_id)) ?? null;
        const k = `${n.protocol}|${n.family}|${n.address}|${n.port}|${name ?? ''}`;
        const e = faulted.get(k) ?? { n, count: 0, comm: new Set<string>(), name };
        e.count++;
        if (typeof l.comm === 'string') e.comm.add(l.comm);
        faulted.set(k, e);
      } else if (l.kind === 'dns_answer' && Array.isArray(l.addresses)) {
        for (const a of l.addresses as { address?: unknown }[]) {
          if (typeof a.address !== 'string') continue;
          let s = names.get(a.address);
          if (!s) names.set(a.address, (s = new Set()));
          s.add(String(l.name));
          lastName.set(a.address, { name: String(l.name), at: Number(l.seq) });
        }
      }
    }
    // the kernel's count of allowed connects and sends: every use, the fast path's too
    const allowed = new Map<string, number>();
    for (const l of readLines(path.join(dir, 'counters.jsonl'))) {
      if (l.source !== 'ebpf' || l.kind !== 'allow') continue;
      const k = `${String(l.protocol)}|${String(l.family)}|${String(l.address)}|${Number(l.port)}`;
      allowed.set(k, (allowed.get(k) ?? 0) + Number(l.delta ?? 0));
    }
    // the kernel's count covers every name on the destination: shared out, the faults' own counts first
    const seen = new Set<string>();
    const byDest = new Map<string, (typeof faulted extends Map<string, infer V> ? V : never)[]>();
    for (const e of faulted.values()) {
      const k = `${e.n.protocol}|${e.n.family}|${e.n.address}|${e.n.port}`;
      byDest.set(k, [...(byDest.get(k) ?? []), e]);
    }
    for (const [k, es] of byDest) {
      seen.add(k);
      const extra = Math.max(0, (allowed.get(k) ?? 0) - es.reduce((s, e) => s + e.count, 0));
      es.forEach((e, i) => {
        use(e.n, e.count + (i === es.length - 1 ? extra : 0), undefined, e.name);
        for (const c of e.comm) use(e.n, 0, c, e.name);
      });
    }
    for (const [k, n] of allowed) {
      if (seen.has(k) || n <= 0) continue;
      const [protocol, family, address, port] = k.split('|');
      use({ protocol: protocol as Protocol, family: family as Family, address, port: Number(port) }, n);
    }
  }

  // group: (protocol, name) for named addresses, (protocol, address) for the rest
  interface Group { protocol: Protocol; host?: string; address?: string; ports: Map<number, { uses: number; processes: Set<string>; ops: Set<string>; via: Set<string> }> }
  const groups = new Map<string, Group>();
  const add = (key: string, g: Omit<Group, 'ports'>, u: Use, via: string) => {
    let x = groups.get(key);
    if (!x) groups.set(key, (x = { ...g, ports: new Map() }));
    let p = x.ports.get(u.port);
    if (!p) x.ports.set(u.port, (p = { uses: 0, processes: new Set(), ops: new Set(), via: new Set() }));
    p.uses += u.uses;
    for (const c of u.processes) p.processes.add(c);
    for (const op of u.ops) p.ops.add(op);
    p.via.add(via);
  };
  for (const u of uses.values()) {
    const ns = u.name !== null ? new Set([u.name]) : names.get(u.address);
    if (ns && ns.size) for (const name of ns) add(`${u.protocol}|host|${name}`, { protocol: u.protocol, host: name }, u, u.address);
    else add(`${u.protocol}|address|${u.address}`, { protocol: u.protocol, address: u.address }, u, u.address);
  }

  const existing: Policy | null = o.merge ? parsePolicy(JSON.parse(o.merge.text)) : null;
  const covered = (g: Group, port: number): boolean => {
    if (!existing) return false;
    if (g.host) {
      const r = ruleForName(existing, g.host);
      if (!r) return false;
      const list = r.list === 'grants' ? existing.grants : r.list === 'leases' ? existing.leases : existing.delegate;
      const m = list[r.index].network;
      return m.protocol === g.protocol && port >= m.ports.lo && port <= m.ports.hi;
    }
    const e = { family: (g.address!.includes(':') ? 'ipv6' : 'ipv4') as Family, protocol: g.protocol, address: g.address!, port };
    return [...existing.grants, ...existing.leases, ...existing.delegate].some((r) => matchesNetwork(r.network, e));
  };

  const rules: RuleJson[] = [];
  let leftOut = 0;
  const order = [...groups.values()].sort(
    (a, b) => (a.protocol === b.protocol ? 0 : a.protocol === 'tcp' ? -1 : 1) || (a.host ? 0 : 1) - (b.host ? 0 : 1) || (a.host ?? a.address!).localeCompare(b.host ?? b.address!),
  );
  for (const g of order) {
    const ports = [...g.ports.keys()].filter((p) => !covered(g, p));
    for (const [lo, hi] of portRuns(ports)) {
      let n = 0;
      const procs = new Set<string>();
      const ops = new Set<string>();
      const via = new Set<string>();
      for (let p = lo; p <= hi; p++) {
        const x = g.ports.get(p)!;
        n += x.uses;
        x.processes.forEach((c) => procs.add(c));
        x.ops.forEach((c) => ops.add(c));
        x.via.forEach((c) => via.add(c));
      }
      if (n < minUses) {
        leftOut++;
        continue;
      }
      const network: RuleJson['network'] = { protocol: g.protocol, ...(g.host ? { host: g.host } : { address: g.address }), ...(lo === hi ? { port: lo } : { ports: `${lo}-${hi}` }) };
      const who = procs.size ? ` by ${[...procs].sort().join(', ')}` : '';
      const how = g.host ? `; the DNS stub answered ${g.host} with ${[...via].sort().join(', ')}` : '; no name the DNS stub answered explains this address';
      rules.push({ network, ttl_s: SUGGEST_TTL_S, why: `used ${n} time${n === 1 ? '' : 's'}${who} in ${[...ops].sort().join(', ')}${how}`.slice(0, 1000) });
    }
  }

  const base: Record<string, unknown> = o.merge ? (JSON.parse(o.merge.text) as Record<string, unknown>) : { schema: 1 };
  const policy: Record<string, unknown> = { ...base, leases: [...((base.leases as unknown[]) ?? []), ...rules] };
  const problems = await checkPolicy(policy);
  if (problems.length) throw new GenseeError('E_SCHEMA', `the suggested policy is not valid (a gensee bug): ${problems.map((p) => `${p.pointer}: ${p.message}`).join('; ')}`);
  return { policy, added: rules.length, left_out: leftOut };
}
