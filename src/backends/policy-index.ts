// The policy's address rules compiled for the fault path: grouped by family
// and protocol (in policy order, so the first rule that matches is the one a
// scan of the policy would find), each with its port range and prefix bytes
// ready, and the fault's address parsed once per look-up instead of once per
// rule. Host rules are not here: they never match an address (only the DNS
// stub turns a name's answers into exact leases, src/dns/service.ts).
import { inPrefix, parseIp } from '../protocol/ip';
import type { AddressMatch, DelegateRule, GrantRule, LeaseRule, NetworkEffect, NetworkMatch, Policy } from '../protocol/types';

type Indexed<R> = { rule: R; m: AddressMatch };

export class RuleIndex<R extends { network: NetworkMatch }> {
  private readonly groups = new Map<string, Indexed<R>[]>();

  constructor(rules: readonly R[]) {
    for (const rule of rules) {
      const m = rule.network;
      if (m.kind !== 'address') continue;
      const k = `${m.family}|${m.protocol}`;
      let g = this.groups.get(k);
      if (!g) this.groups.set(k, (g = []));
      g.push({ rule, m });
    }
  }

  /** the first rule (in policy order) whose address matcher covers e; addr: e.address parsed, when the caller has it */
  first(e: NetworkEffect, addr?: Buffer | null): R | undefined {
    const g = this.groups.get(`${e.family}|${e.protocol}`);
    if (!g) return undefined;
    const bytes = addr !== undefined ? addr : (parseIp(e.address, e.family)?.bytes ?? null);
    if (!bytes) return undefined;
    for (const { rule, m } of g) {
      if (e.port < m.ports.lo || e.port > m.ports.hi) continue;
      if (inPrefix(bytes, m.bytes, m.prefix)) return rule;
    }
    return undefined;
  }
}

/** grants, leases and delegate rules of one policy, compiled */
export class PolicyIndex {
  readonly grants: RuleIndex<GrantRule>;
  readonly leases: RuleIndex<LeaseRule>;
  readonly delegate: RuleIndex<DelegateRule>;

  constructor(p: Policy) {
    this.grants = new RuleIndex(p.grants);
    this.leases = new RuleIndex(p.leases);
    this.delegate = new RuleIndex(p.delegate);
  }
}
