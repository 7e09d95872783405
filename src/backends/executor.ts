// The executor backend: decides an `application` effect — a tool's write
// that gensee's executor (src/executor) is about to perform on the tool's
// behalf, submitted as a fault with source `executor` before the write.
//
// The executor is delegated authority: it writes from outside the boundary.
// So it may write only where the operator said this tool may: a policy
// `delegate` rule naming the tool (`"tool": TOOL_ID`) whose network match
// covers the write's destination (tcp and the URL's port, and its address —
// or, for a URL naming a host, a `host` rule covering that name).
// Anything else is denied `policy_denied` (a write_denied event naming the
// tool); an application effect from any other source, or another action,
// has no backend: `capability_fault_backend_unavailable`.
import type { DelegateRule, Fault, Policy } from '../protocol/types';
import { hostMatches, matchesNetwork } from '../protocol/ip';
import { parseAddress } from '../addr';
import type { NetworkDecision } from './network';

/** The destination of a write's URL: an IP literal host and its port (default 80/443). */
export function writeDestination(target: string): { family: 'ipv4' | 'ipv6'; address: string; port: number } | { name: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(target);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  let a: ReturnType<typeof parseAddress>;
  try {
    a = parseAddress(host);
  } catch {
    return host ? { name: host, port } : null;
  }
  return { family: a.family, address: a.address, port };
}

export class ExecutorBackend {
  constructor(private readonly policy: () => Policy) {}

  resolve(f: Fault): NetworkDecision {
    const app = f.effect.application;
    if (!app || f.source !== 'executor' || app.action !== 'write') return { action: 'deny', reason: 'capability_fault_backend_unavailable' };
    const d = writeDestination(app.target ?? '');
    const covers = (r: DelegateRule): boolean => {
      if (r.tool !== app.name || !d) return false;
      const m = r.network;
      if ('name' in d) return m.kind === 'host' && m.protocol === 'tcp' && d.port >= m.ports.lo && d.port <= m.ports.hi && hostMatches(m, d.name);
      return matchesNetwork(m, { family: d.family, protocol: 'tcp', address: d.address, port: d.port });
    };
    if (this.policy().delegate.some(covers)) return { action: 'continue_already_authorized', reason: 'delegated_to_tool' };
    return { action: 'deny', reason: 'policy_denied' };
  }
}
