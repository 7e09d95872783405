// The job's report (issue 29): what an operation reached and what was refused,
// read back from its evidence (faults.jsonl, counters.jsonl, events.jsonl,
// operation.json) and checked with `gensee verify`. One model, four forms:
// text (a person), markdown ($GITHUB_STEP_SUMMARY), json (stable: docs/audit.md)
// and junit (each refused destination a failed case, so CI shows it).
//
// Every number is counted from the logs, never from the resolver's memory:
// the report of a run that was killed says what its evidence says.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { opDir, openOperation, type OperationRecord } from '../state/operation';
import { verifyOperation } from '../evidence/verify';
import { GenseeError } from '../errors';

export const REPORT_FORMATS = ['text', 'markdown', 'json', 'junit'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export type Line = Record<string, unknown> & { seq?: number; kind?: string; type?: string };

/** a destination the workload reached (the kernel allowed a connect or a send) or was let through under audit */
export interface Reached {
  protocol: string;
  family: string;
  address: string;
  port: number;
  /** the names the operation's DNS stub answered this address for */
  names: string[];
  /** connects/sends the kernel allowed (counters.jsonl allow lines) */
  allowed: number;
  /** faults answered with a lease from a policy rule (faults.jsonl) */
  leased: number;
  /** faults answered audit_allowed: enforcing, they would have been denied */
  audit_allowed: number;
  /** what enforcing would have denied it for (audit only) */
  would_deny: string | null;
  /** the processes that asked (comm, from the fault's resolution line), when recorded */
  processes: string[];
  /** the operation's own DNS stub (its traffic is summarized, not listed per packet) */
  dns_stub: boolean;
}

/** refusals of one control, for one target, counted */
export interface Refused {
  /** which control refused: resolver/policy_denied, ebpf/hook, seccomp/filter, dns/no_rule, executor/…, pause/timeout, socket/…, budget/suppressed */
  control: string;
  reason: string;
  /** what was refused: "tcp 10.0.0.1:443", a name, a tool's target */
  target: string;
  count: number;
  /** the first refusal's detail */
  detail: string;
}

export interface DnsName {
  name: string;
  /** questions answered (A and AAAA each count) */
  answered: number;
  addresses: string[];
  /** answered only because the operation audits: enforcing, no host rule covers it */
  audit: boolean;
}

export interface Report {
  /** the report's format version: fields are only ever added */
  report: 1;
  op: string;
  mode: 'enforce' | 'audit';
  state: string;
  created_at: string;
  updated_at: string;
  policy_hash: string;
  /** the workload's exit code when gensee run wrote the report; null from `gensee report` */
  exit: number | null;
  totals: {
    faults: number;
    leases_installed: number;
    continued: number;
    delegated: number;
    denied: number;
    audit_allowed: number;
    /** refusal lines (a hook's, the filter's, a bad frame, a pause timeout) */
    refusals: number;
    /** refusals only counted (the refusal budget) */
    suppressed: number;
    dns_queries: number;
    dns_refused: number;
    /** connects/sends the kernel allowed, all destinations (counters.jsonl) */
    kernel_allowed: number;
    /** connects/sends the kernel refused (counters.jsonl deny lines from the eBPF counters) */
    kernel_denied: number;
    /** every refusal of every control (the sum of refused[].count) */
    refused: number;
  };
  reached: Reached[];
  refused: Refused[];
  dns: { stub: string | null; stub_packets: number; names: DnsName[] };
  events: { boundary: Record<string, number>; attention_raised: number; attention_cleared: number };
  evidence: { ok: boolean; dir: string; logs: { file: string; lines: number; errors: number; last_hash: string }[]; missing: string[] };
}

/** a log's lines as objects: none when the file is absent; a damaged line is skipped (verify names it) */
export function readLines(file: string): Line[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: Line[] = [];
  for (const t of text.split('\n')) {
    if (!t) continue;
    try {
      out.push(JSON.parse(t) as Line);
    } catch {
      /* verify reports a damaged line */
    }
  }
  return out;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const str = (v: unknown, d = '') => (typeof v === 'string' ? v : d);

interface NetJson {
  family: string;
  protocol: string;
  address: string;
  port: number;
}

function netOf(fault: unknown): NetJson | null {
  const n = (fault as { effect?: { network?: NetJson } } | undefined)?.effect?.network;
  return n && typeof n.address === 'string' ? n : null;
}

export function destKey(d: { protocol: string; address: string; port: number }): string {
  return `${d.protocol} ${d.address.includes(':') ? `[${d.address}]` : d.address}:${d.port}`;
}

/** gensee run's DNS stub lives on 127.53.X.Y:53 (src/dns/service.ts stubAddressFor) */
function isRunStub(address: string, port: number): boolean {
  return port === 53 && /^127\.53\.\d+\.\d+$/.test(address);
}

function hookControl(line: Line): string {
  const via = str(line.via);
  if (via === 'cgroup_hook') return 'ebpf/hook';
  if (via === 'inproc') return 'seccomp/filter';
  return `socket/${str(line.socket, 'supervisor.sock')}`;
}

/** Build the report of operation `op` from its evidence. */
export async function buildReport(stateDir: string, op: string, o: { exit?: number | null } = {}): Promise<Report> {
  const rec: OperationRecord = await openOperation(stateDir, op);
  const dir = opDir(stateDir, op);
  const faults = readLines(path.join(dir, 'faults.jsonl'));
  const counters = readLines(path.join(dir, 'counters.jsonl'));
  const events = readLines(path.join(dir, 'events.jsonl'));
  const v = await verifyOperation(stateDir, op);

  const totals: Report['totals'] = {
    faults: 0, leases_installed: 0, continued: 0, delegated: 0, denied: 0, audit_allowed: 0, refusals: 0, suppressed: 0,
    dns_queries: 0, dns_refused: 0, kernel_allowed: 0, kernel_denied: 0, refused: 0,
  };
  const reached = new Map<string, Reached>();
  const reach = (n: NetJson): Reached => {
    const k = destKey(n);
    let r = reached.get(k);
    if (!r) reached.set(k, (r = { protocol: n.protocol, family: n.family, address: n.address, port: n.port, names: [], allowed: 0, leased: 0, audit_allowed: 0, would_deny: null, processes: [], dns_stub: isRunStub(n.address, n.port) }));
    return r;
  };
  const refused = new Map<string, Refused>();
  const refuse = (control: string, reason: string, target: string, detail: string, n = 1) => {
    const k = `${control}\u0000${reason}\u0000${target}`;
    const r = refused.get(k);
    if (r) r.count += n;
    else refused.set(k, { control, reason, target, count: n, detail: detail.slice(0, 300) });
  };
  const names = new Map<string, DnsName>();
  /** address → names the stub answered it for */
  const byAddress = new Map<string, Set<string>>();
  const faultById = new Map<string, Line>();

  for (const l of faults) {
    switch (l.kind) {
      case 'fault': {
        totals.faults++;
        faultById.set(str(l.fault_id), l);
        if (l.via === 'cgroup_hook') {
          // the kernel refused this call with EPERM before anything decided it
          const n = netOf(l.fault);
          refuse('ebpf/hook', 'no_lease', n ? destKey(n) : '?', `a hook refused ${n ? destKey(n) : 'a call'} (EPERM) and raised a fault`);
        }
        break;
      }
      case 'resolution': {
        if (typeof l.abandoned === 'string') break;
        const res = (l.resolution ?? {}) as { action?: string; reason?: string; would_deny?: string };
        const f = faultById.get(str(l.fault_id));
        const n = netOf(f?.fault);
        const comm = typeof l.comm === 'string' ? l.comm : null;
        if (res.reason === 'audit_allowed') {
          totals.audit_allowed++;
          if (n) {
            const r = reach(n);
            r.audit_allowed++;
            r.would_deny = res.would_deny ?? 'policy_denied';
            if (comm && !r.processes.includes(comm)) r.processes.push(comm);
          }
        } else if (res.action === 'retry_after_lease') {
          totals.leases_installed++;
          if (n) {
            const r = reach(n);
            r.leased++;
            if (comm && !r.processes.includes(comm)) r.processes.push(comm);
          }
        } else if (res.action === 'continue_already_authorized') totals.continued++;
        else if (res.action === 'delegate') totals.delegated++;
        else if (res.action === 'deny') {
          totals.denied++;
          const src = str((f?.fault as { source?: string } | undefined)?.source);
          const app = (f?.fault as { effect?: { application?: { name?: string; target?: string } } } | undefined)?.effect?.application;
          const control = src === 'executor' ? `executor/${str(res.reason)}` : `resolver/${str(res.reason)}`;
          const target = n ? destKey(n) : app ? `${str(app.name, '?')} ${str(app.target)}`.trim() : '?';
          refuse(control, str(res.reason), target, `${target} denied: ${str(res.reason)}${comm ? ` (${comm})` : ''}`);
        }
        break;
      }
      case 'refusal': {
        totals.refusals++;
        const reason = str(l.reason);
        const control = reason === 'timeout' ? 'pause/timeout' : hookControl(l);
        const detail = str(l.detail);
        // the target is what the detail names before its parenthesis: "udp sendto to 10.0.0.1:53 refused (EPERM)…"
        refuse(control, reason, detail.replace(/\s*\(.*$/, '').slice(0, 120) || '?', detail);
        break;
      }
      case 'suppressed': {
        const count = num(l.count);
        totals.suppressed += count;
        const reasons = (l.reasons ?? {}) as Record<string, number>;
        for (const [reason, c] of Object.entries(reasons)) refuse('budget/suppressed', reason, '(refusals past the budget: counted, not written)', `refusals past the refusal budget, ${str(l.from)}..${str(l.to)}`, num(c));
        break;
      }
      case 'dns_query':
        totals.dns_queries++;
        break;
      case 'dns_answer': {
        const name = str(l.name);
        const addrs = Array.isArray(l.addresses) ? (l.addresses as { address?: string }[]).map((a) => str(a.address)).filter(Boolean) : [];
        let d = names.get(name);
        if (!d) names.set(name, (d = { name, answered: 0, addresses: [], audit: false }));
        d.answered++;
        if (l.audit_allowed === true) d.audit = true;
        for (const a of addrs) {
          if (!d.addresses.includes(a)) d.addresses.push(a);
          let s = byAddress.get(a);
          if (!s) byAddress.set(a, (s = new Set()));
          s.add(name);
        }
        break;
      }
      case 'dns_refused': {
        totals.dns_refused++;
        refuse(str(l.control, 'dns/?'), str(l.rcode), l.name === null || l.name === undefined ? str(l.peer, '?') : str(l.name), str(l.detail));
        break;
      }
      default:
    }
  }

  for (const l of counters) {
    if (l.source === 'ebpf' && l.kind === 'allow') {
      const d = num(l.delta);
      totals.kernel_allowed += d;
      const r = reach({ family: str(l.family), protocol: str(l.protocol), address: str(l.address), port: num(l.port) });
      r.allowed += d;
    } else if (l.source === 'ebpf' && l.kind === 'deny') totals.kernel_denied += num(l.delta);
  }
  for (const r of reached.values()) r.names = [...(byAddress.get(r.address) ?? [])].sort();

  const boundary: Record<string, number> = {};
  let raised = 0;
  let cleared = 0;
  for (const l of events) {
    if (l.type === 'boundary') {
      const k = str((l.event as { kind?: string } | undefined)?.kind, '?');
      boundary[k] = (boundary[k] ?? 0) + 1;
    } else if (l.type === 'attention') raised++;
    else if (l.type === 'attention_cleared') cleared++;
  }

  const stub = [...reached.values()].filter((r) => r.dns_stub);
  const refusedList = [...refused.values()].sort((a, b) => b.count - a.count || a.control.localeCompare(b.control) || a.target.localeCompare(b.target));
  totals.refused = refusedList.reduce((s, r) => s + r.count, 0);
  return {
    report: 1,
    op,
    mode: rec.mode,
    state: rec.state,
    created_at: rec.created_at,
    updated_at: rec.updated_at,
    policy_hash: rec.policy_hash,
    exit: o.exit ?? null,
    totals,
    reached: [...reached.values()].filter((r) => !r.dns_stub).sort((a, b) => b.allowed + b.audit_allowed - (a.allowed + a.audit_allowed) || destKey(a).localeCompare(destKey(b))),
    refused: refusedList,
    dns: {
      stub: stub.length ? destKey(stub[0]).replace(/^\S+ /, '') : null,
      stub_packets: stub.reduce((s, r) => s + r.allowed, 0),
      names: [...names.values()].sort((a, b) => a.name.localeCompare(b.name)),
    },
    events: { boundary, attention_raised: raised, attention_cleared: cleared },
    evidence: {
      ok: v.ok,
      dir,
      logs: v.logs.map((l) => ({ file: l.file, lines: l.lines, errors: l.problems.filter((p) => p.severity === 'error').length, last_hash: l.last_hash })),
      missing: [...v.missing],
    },
  };
}

/** "FILE" or "FILE:FORMAT" (`gensee run --report`); the format defaults from the extension, else text */
export function parseReportTarget(spec: string): { file: string; format: ReportFormat } {
  const m = /^(.*):(text|markdown|json|junit)$/.exec(spec);
  const file = m ? m[1] : spec;
  if (!file) throw new GenseeError('E_USAGE', `bad --report "${spec}": expected FILE or FILE:FORMAT (FORMAT one of ${REPORT_FORMATS.join(', ')})`);
  if (m) return { file, format: m[2] as ReportFormat };
  const ext = path.extname(file).toLowerCase();
  const format: ReportFormat = ext === '.md' ? 'markdown' : ext === '.json' ? 'json' : ext === '.xml' ? 'junit' : 'text';
  return { file, format };
}

export function parseFormat(s: string | undefined): ReportFormat {
  if (s === undefined) return 'text';
  if (!(REPORT_FORMATS as readonly string[]).includes(s)) throw new GenseeError('E_USAGE', `bad --format "${s}": expected one of ${REPORT_FORMATS.join(', ')}`);
  return s as ReportFormat;
}

export function renderReport(r: Report, format: ReportFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify(r, null, 2) + '\n';
    case 'markdown':
      return markdown(r);
    case 'junit':
      return junit(r);
    default:
      return text(r);
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function headline(r: Report): string {
  const t = r.totals;
  const exit = r.exit === null ? '' : `, exit ${r.exit}`;
  return `${r.op} (${r.mode === 'audit' ? 'AUDIT: nothing the policy denies was refused' : 'enforced'}${exit}): ${plural(r.reached.length, 'destination')} reached, ${t.refused} refused, ${t.audit_allowed} audit-allowed, evidence ${r.evidence.ok ? 'verified' : 'FAILS verify'}`;
}

function reachedWhat(d: Reached): string {
  return `${d.names.length ? `${d.names.join(', ')} ` : ''}${destKey(d)}`;
}

function text(r: Report): string {
  const t = r.totals;
  const out: string[] = [`gensee report: ${headline(r)}`];
  out.push(`  mode ${r.mode}; policy ${r.policy_hash}; state ${r.state}`);
  out.push(`  faults ${t.faults}: ${t.leases_installed} leases installed, ${t.continued} already authorized, ${t.delegated} delegated, ${t.denied} denied, ${t.audit_allowed} audit-allowed; ${t.refusals} other refusals, ${t.suppressed} suppressed`);
  out.push(`  DNS: ${t.dns_queries} questions answered by the stub${r.dns.stub ? ` (${r.dns.stub}, ${r.dns.stub_packets} packets)` : ''}, ${t.dns_refused} refused`);
  out.push('reached:');
  if (!r.reached.length) out.push('  (nothing)');
  for (const d of r.reached) {
    out.push(`  ${reachedWhat(d)}  allowed ${d.allowed}${d.leased ? `, leases ${d.leased}` : ''}${d.audit_allowed ? `, AUDIT-ALLOWED ${d.audit_allowed} (enforcing: ${d.would_deny})` : ''}${d.processes.length ? `  by ${d.processes.join(', ')}` : ''}`);
  }
  out.push('refused:');
  if (!r.refused.length) out.push('  (nothing)');
  for (const x of r.refused) out.push(`  ${x.control}  ${x.target}  ${x.count}  ${x.detail}`);
  const kinds = Object.entries(r.events.boundary);
  out.push(`events: ${kinds.length ? kinds.map(([k, n]) => `${k} ${n}`).join(', ') : 'none'}; attention raised ${r.events.attention_raised}, cleared ${r.events.attention_cleared}`);
  out.push(`evidence: ${r.evidence.ok ? 'ok' : 'FAILED'} (${r.evidence.logs.map((l) => `${l.file} ${l.lines} lines${l.errors ? ` ${l.errors} errors` : ''}`).join(', ')}) in ${r.evidence.dir}`);
  return out.join('\n') + '\n';
}

/** a table cell: no pipe, no newline */
const cell = (s: string | number) => String(s).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');

function markdown(r: Report): string {
  const t = r.totals;
  const out: string[] = [];
  out.push(`## gensee: ${cell(r.op)} — ${r.mode === 'audit' ? 'audit' : 'enforced'}`);
  out.push('');
  out.push(`**${headline(r).replace(/\*/g, '')}**`);
  out.push('');
  out.push('| what | count |');
  out.push('| --- | ---: |');
  for (const [k, v] of Object.entries(t)) out.push(`| ${k} | ${v} |`);
  out.push('');
  out.push('### Reached');
  out.push('');
  if (!r.reached.length) out.push('Nothing.');
  else {
    out.push('| destination | names | allowed | leases | audit-allowed | would deny | processes |');
    out.push('| --- | --- | ---: | ---: | ---: | --- | --- |');
    for (const d of r.reached) out.push(`| ${cell(destKey(d))} | ${cell(d.names.join(', '))} | ${d.allowed} | ${d.leased} | ${d.audit_allowed} | ${cell(d.would_deny ?? '')} | ${cell(d.processes.join(', '))} |`);
  }
  out.push('');
  out.push('### Refused');
  out.push('');
  if (!r.refused.length) out.push('Nothing.');
  else {
    out.push('| control | target | count | detail |');
    out.push('| --- | --- | ---: | --- |');
    for (const x of r.refused) out.push(`| ${cell(x.control)} | ${cell(x.target)} | ${x.count} | ${cell(x.detail)} |`);
  }
  out.push('');
  out.push('### DNS');
  out.push('');
  out.push(`The operation's stub${r.dns.stub ? ` (${cell(r.dns.stub)})` : ''} answered ${t.dns_queries} questions and refused ${t.dns_refused}.`);
  if (r.dns.names.length) {
    out.push('');
    out.push('| name | answers | addresses | audit |');
    out.push('| --- | ---: | --- | --- |');
    for (const n of r.dns.names) out.push(`| ${cell(n.name)} | ${n.answered} | ${cell(n.addresses.join(', '))} | ${n.audit ? 'yes' : ''} |`);
  }
  out.push('');
  out.push('### Evidence');
  out.push('');
  out.push(`\`gensee verify\`: **${r.evidence.ok ? 'ok' : 'FAILED'}**`);
  out.push('');
  out.push('| log | lines | errors |');
  out.push('| --- | ---: | ---: |');
  for (const l of r.evidence.logs) out.push(`| ${l.file} | ${l.lines} | ${l.errors} |`);
  out.push('');
  return out.join('\n');
}

const xml = (s: string | number) =>
  String(s)
    // characters XML 1.0 cannot carry at all
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '?')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

function junit(r: Report): string {
  const cases: string[] = [];
  for (const d of r.reached) {
    const name = `reached ${reachedWhat(d)}`;
    if (d.audit_allowed) {
      cases.push(`    <testcase classname="gensee.${xml(r.op)}.reached" name="${xml(name)}" time="0">\n      <skipped message="${xml(`audit: allowed ${d.audit_allowed} time(s); enforcing, it would be denied: ${d.would_deny}`)}"/>\n    </testcase>`);
    } else cases.push(`    <testcase classname="gensee.${xml(r.op)}.reached" name="${xml(name)}" time="0"/>`);
  }
  for (const x of r.refused) {
    cases.push(
      `    <testcase classname="gensee.${xml(r.op)}.refused" name="${xml(`refused ${x.target} (${x.control})`)}" time="0">\n      <failure message="${xml(`${x.control}: ${x.reason}, ${x.count} time(s)`)}" type="${xml(x.control)}">${xml(x.detail)}</failure>\n    </testcase>`,
    );
  }
  cases.push(
    r.evidence.ok
      ? `    <testcase classname="gensee.${xml(r.op)}.evidence" name="gensee verify" time="0"/>`
      : `    <testcase classname="gensee.${xml(r.op)}.evidence" name="gensee verify" time="0">\n      <failure message="the evidence fails gensee verify" type="evidence">${xml(r.evidence.logs.map((l) => `${l.file}: ${l.errors} errors`).join('; '))}</failure>\n    </testcase>`,
  );
  const failures = r.refused.length + (r.evidence.ok ? 0 : 1);
  const skipped = r.reached.filter((d) => d.audit_allowed).length;
  const tests = cases.length;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="gensee" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}" time="0">\n` +
    `  <testsuite name="gensee ${xml(r.op)} (${r.mode})" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}" time="0" timestamp="${xml(r.created_at.replace(/\.\d+Z$/, '').replace(/Z$/, ''))}">\n` +
    `    <properties>\n      <property name="mode" value="${r.mode}"/>\n      <property name="policy_hash" value="${xml(r.policy_hash)}"/>\n      <property name="exit" value="${r.exit ?? ''}"/>\n    </properties>\n` +
    cases.join('\n') +
    `\n  </testsuite>\n</testsuites>\n`
  );
}
