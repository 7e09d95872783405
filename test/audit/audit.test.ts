// Audit → suggest → enforce, and the per-job report (issue 29), on the real
// kernel: `gensee run` with its real DNS stub in front of a test
// authoritative server on loopback (test/dns/authority.ts), curl as the
// workload, real HTTP listeners on their own loopback addresses (127.0.0.2,
// .3, .4, .5) so that a name, an address and a port each say which is which.
//
//   1. audit: two names and one bare address; every connect succeeds; the
//      evidence says audit_allowed with the would-be reason; suggest gives two
//      host rules and one address rule; enforcing them reaches all three and
//      refuses a fourth; --fail-on-deny exits 77; the reports (markdown parsed
//      by marked, JUnit checked against an XSD by libxml2-wasm, JSON) hold the
//      numbers faults.jsonl and counters.jsonl hold
//   2. audit does not leak past its operation: an enforcing one at the same
//      time is refused the destination the audited one is let through to
//   3. a failing workload still writes its report, with its exit code
//   4. bad input: suggest on an unknown op, on an op with no evidence, on a
//      corrupted chain
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import * as dnsPacket from 'dns-packet';
import MarkdownIt from 'markdown-it';
import { opDir, createOperation } from '../../src/state/operation';
import { findCgroup2Mount, killCgroupAndWait, removeEmptyCgroup } from '../../src/cgroup';
import { detachHooks } from '../../src/dataplane';
import { requireKernel, uniqueName, waitFor, GENSEE_BIN, CGROUP_PARENT } from '../helpers/kernel';
import { shortStateDir, jsonlLines, type LogLine } from '../helpers/supervisor';
import { startupDeadline } from '../helpers/trials';
import { gensee, Proc } from '../helpers/gensee';
import { startAuthority, type Authority } from '../dns/authority';
import { PACKAGE_ROOT } from '../../src/addon';

interface T {
  teardown(fn: () => unknown): void;
  fail(msg: string): void;
  end(): void;
}

const A = (name: string, data: string, ttl = 300): dnsPacket.Answer => ({ type: 'A', name, ttl, data });
const NXDOMAIN = 3;

async function authority(t: T, table: Record<string, dnsPacket.Answer[]>): Promise<Authority> {
  const a = await startAuthority((q) => {
    const e = table[q.name];
    if (!e) return { rcode: NXDOMAIN };
    return { answers: e.filter((r) => r.type === q.type) };
  });
  t.teardown(() => a.close());
  return a;
}

/** an HTTP listener on host counting requests; closed at teardown */
async function httpServer(t: T, host: string): Promise<{ host: string; port: number; hits: () => number }> {
  let hits = 0;
  const srv = http.createServer((_req, res) => {
    hits++;
    res.end('ok\n');
  });
  await new Promise<void>((r) => srv.listen(0, host, () => r()));
  t.teardown(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  return { host, port: (srv.address() as net.AddressInfo).port, hits: () => hits };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  op: string;
  st: string;
  dir: string;
  faults: LogLine[];
  events: LogLine[];
  counters: LogLine[];
  summary: Record<string, unknown>;
  live: Record<string, unknown>[];
}

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };

function startRun(t: T, st: string, op: string, policy: object, upstream: string, flags: string[], cmd: string[]): Proc {
  const file = path.join(st, `${op}.policy.json`);
  fs.writeFileSync(file, JSON.stringify(policy));
  const proc = new Proc(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', file, '--json-out', path.join(st, `${op}.run.jsonl`), '--dns-upstream', upstream, ...flags, '--', ...cmd]);
  t.teardown(async () => {
    if (!proc.running) return;
    // killed mid-way: the workload dies first, then the hooks come off
    await proc.end();
    const cg = path.join(findCgroup2Mount(), CGROUP_PARENT, op);
    await killCgroupAndWait(cg).catch(() => undefined);
    try {
      detachHooks(op);
    } catch {
      /* never attached */
    }
    try {
      removeEmptyCgroup(cg);
    } catch {
      /* not empty: left for the operator */
    }
  });
  return proc;
}

async function finish(proc: Proc, st: string, op: string): Promise<Ran> {
  const ex = await proc.exited;
  const dir = opDir(st, op);
  const live = jsonlLines(path.join(st, `${op}.run.jsonl`)) as Record<string, unknown>[];
  return {
    code: ex.code,
    stdout: proc.stdout,
    stderr: proc.stderr,
    op,
    st,
    dir,
    faults: jsonlLines(path.join(dir, 'faults.jsonl')),
    events: jsonlLines(path.join(dir, 'events.jsonl')),
    counters: jsonlLines(path.join(dir, 'counters.jsonl')),
    summary: live.find((l) => l.event === 'summary') ?? {},
    live,
  };
}

const sh = (script: string): string[] => ['/bin/sh', '-c', script];
/** one curl: "<label> HTTP <code> rc=<exit>" on the workload's stdout */
const curl = (label: string, url: string): string => `curl -sS -m 5 -o /dev/null -w '${label} HTTP %{http_code}' '${url}' 2>/dev/null; echo " rc=$?"`;
const up = (a: Authority) => `127.0.0.1:${a.port}`;

type Net = { family: string; protocol: string; address: string; port: number };
const netOf = (l: LogLine | undefined): Net | undefined => (l?.fault as { effect?: { network?: Net } } | undefined)?.effect?.network;
/** resolution lines with the fault they answer */
function resolutions(r: Ran): { res: { action: string; reason: string; would_deny?: string }; fault: LogLine | undefined; line: LogLine }[] {
  const faults = new Map(r.faults.filter((l) => l.kind === 'fault').map((l) => [l.fault_id as string, l]));
  return r.faults.filter((l) => l.kind === 'resolution').map((l) => ({ res: l.resolution as { action: string; reason: string; would_deny?: string }, fault: faults.get(l.fault_id as string), line: l }));
}
const boundary = (r: Ran, kind: string) => r.events.filter((l) => l.type === 'boundary' && (l.event as { kind: string }).kind === kind).map((l) => l.event as { kind: string; control: string; detail: string; target?: string });
const allowedTo = (r: Ran, address: string, port: number) =>
  r.counters.filter((l) => l.source === 'ebpf' && l.kind === 'allow' && l.address === address && l.port === port).reduce((s, l) => s + (l.delta as number), 0);

async function verified(t: Test, st: string, op: string): Promise<void> {
  const v = await gensee(['verify', '--op', op, '--state-dir', st]);
  t.equal(v.code, 0, `gensee verify ${op} passes ${v.stdout}${v.stderr}`);
}

/** the numbers a report must hold, counted here from the logs themselves */
function expectedTotals(r: Ran): Record<string, number> {
  const res = resolutions(r).filter((x) => typeof x.line.abandoned !== 'string');
  const hookFaults = r.faults.filter((l) => l.kind === 'fault' && l.via === 'cgroup_hook').length;
  const refusalLines = r.faults.filter((l) => l.kind === 'refusal').length;
  const dnsRefused = r.faults.filter((l) => l.kind === 'dns_refused').length;
  const suppressed = r.faults.filter((l) => l.kind === 'suppressed').reduce((s, l) => s + (l.count as number), 0);
  const denied = res.filter((x) => x.res.action === 'deny').length;
  return {
    faults: r.faults.filter((l) => l.kind === 'fault').length,
    leases_installed: res.filter((x) => x.res.action === 'retry_after_lease' && x.res.reason !== 'audit_allowed').length,
    continued: res.filter((x) => x.res.action === 'continue_already_authorized').length,
    delegated: res.filter((x) => x.res.action === 'delegate').length,
    denied,
    audit_allowed: res.filter((x) => x.res.reason === 'audit_allowed').length,
    refusals: refusalLines,
    suppressed,
    dns_queries: r.faults.filter((l) => l.kind === 'dns_query').length,
    dns_refused: dnsRefused,
    kernel_allowed: r.counters.filter((l) => l.source === 'ebpf' && l.kind === 'allow').reduce((s, l) => s + (l.delta as number), 0),
    kernel_denied: r.counters.filter((l) => l.source === 'ebpf' && l.kind === 'deny').reduce((s, l) => s + (l.delta as number), 0),
    refused: denied + hookFaults + refusalLines + dnsRefused + suppressed,
  };
}

/** libxml2 (WebAssembly build, an ES module) validating xml against the JUnit XSD; null when valid, else the error */
async function junitSchemaError(xmlText: string): Promise<string | null> {
  // an ES module from CommonJS: a real import(), which tsc would otherwise turn into require()
  const lx = (await (new Function('m', 'return import(m)') as (m: string) => Promise<unknown>)('libxml2-wasm')) as {
    XmlDocument: { fromString(s: string): { dispose(): void } };
    XsdValidator: { fromDoc(d: unknown): { validate(d: unknown): void; dispose(): void } };
  };
  const xsd = lx.XmlDocument.fromString(fs.readFileSync(path.join(PACKAGE_ROOT, 'test', 'audit', 'junit.xsd'), 'utf8'));
  const v = lx.XsdValidator.fromDoc(xsd);
  let doc: { dispose(): void } | null = null;
  try {
    doc = lx.XmlDocument.fromString(xmlText);
    v.validate(doc);
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    doc?.dispose();
    v.dispose();
    xsd.dispose();
  }
}

/** the tables of a Markdown document, parsed by markdown-it (CommonMark + GFM tables): header cells → rows of cells */
function mdTables(md: string): { header: string[]; rows: string[][] }[] {
  const tokens = new MarkdownIt().parse(md, {});
  const tables: { header: string[]; rows: string[][] }[] = [];
  let cur: { header: string[]; rows: string[][] } | null = null;
  let row: string[] | null = null;
  let inHead = false;
  for (const tk of tokens) {
    if (tk.type === 'table_open') tables.push((cur = { header: [], rows: [] }));
    else if (tk.type === 'thead_open') inHead = true;
    else if (tk.type === 'thead_close') inHead = false;
    else if (tk.type === 'tr_open') row = [];
    else if (tk.type === 'tr_close' && cur && row) {
      if (inHead) cur.header = row;
      else cur.rows.push(row);
      row = null;
    } else if (tk.type === 'inline' && row) row.push(tk.content);
    else if (tk.type === 'table_close') cur = null;
  }
  return tables;
}

t.test('1. audit → suggest → enforce: two names and a bare address, then a fourth refused; the reports hold the evidence\'s numbers', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const alpha = await httpServer(t, '127.0.0.2');
  const beta = await httpServer(t, '127.0.0.3');
  const bare = await httpServer(t, '127.0.0.4');
  const fourth = await httpServer(t, '127.0.0.5');
  const auth = await authority(t, { 'alpha.test': [A('alpha.test', alpha.host)], 'beta.test': [A('beta.test', beta.host)] });
  const three = [curl('alpha', `http://alpha.test:${alpha.port}/`), curl('beta', `http://beta.test:${beta.port}/`), curl('bare', `http://${bare.host}:${bare.port}/`)];

  // --- audit: a deny-all policy, everything reached, everything recorded
  const op1 = uniqueName('gs-au1');
  const r1 = await finish(startRun(t, st, op1, DENY_ALL, up(auth), ['--audit', '--report', path.join(st, 'r1.json')], sh(three.join('; '))), st, op1);
  t.equal(r1.code, 0, `gensee run --audit exits with the workload's 0 ${r1.stderr}`);
  for (const l of ['alpha', 'beta', 'bare']) t.match(r1.stdout, new RegExp(`${l} HTTP 200 rc=0`), `${l}: reached under audit`);
  t.same([alpha.hits(), beta.hits(), bare.hits()], [1, 1, 1], 'each listener got its one request');
  const audited = resolutions(r1).filter((x) => x.res.reason === 'audit_allowed');
  for (const s of [alpha, beta, bare]) {
    const x = audited.find((a) => netOf(a.fault)?.address === s.host && netOf(a.fault)?.port === s.port);
    t.match(x?.res, { action: 'retry_after_lease', reason: 'audit_allowed', would_deny: 'policy_denied' }, `${s.host}:${s.port}: resolution audit_allowed, would_deny policy_denied`);
    t.equal(typeof x?.line.comm, 'string', `${s.host}: the process that asked is named (${String(x?.line.comm)})`);
  }
  t.equal(resolutions(r1).filter((x) => x.res.action === 'deny').length, 0, 'nothing denied under audit');
  const dnsAudit = r1.faults.filter((l) => l.kind === 'dns_answer' && l.audit_allowed === true && (l.addresses as unknown[]).length > 0);
  t.same(dnsAudit.map((l) => l.name).sort(), ['alpha.test', 'beta.test'], 'both names answered by the stub under audit (no host rule), recorded audit_allowed');
  t.ok(dnsAudit.every((l) => l.would_deny === 'dns/no_rule'), 'with the control that would have refused them');
  t.equal(r1.faults.filter((l) => l.kind === 'dns_refused').length, 0, 'no DNS refusal under audit');
  const ev1 = boundary(r1, 'audit_allowed');
  t.equal(ev1.filter((e) => e.control === 'resolver/policy_denied').length, 3, 'three boundary events audit_allowed for the connects');
  t.ok(ev1.some((e) => e.control === 'dns/no_rule'), 'and audit_allowed events for the names');
  t.equal(boundary(r1, 'fault_denied').length + boundary(r1, 'dns_denied').length, 0, 'no denial events');
  const auditLines = r1.counters.filter((l) => l.kind === 'audit_allowed');
  t.equal(auditLines.reduce((s, l) => s + (l.delta as number), 0), 3, 'counters.jsonl counts the three audit leases apart (kind audit_allowed)');
  t.equal(r1.counters.filter((l) => l.kind === 'deny' && l.source === 'resolver').length, 0, 'and no resolver denials');
  const rec1 = JSON.parse(fs.readFileSync(path.join(r1.dir, 'operation.json'), 'utf8')) as { mode: string };
  t.equal(rec1.mode, 'audit', "operation.json says the mode it ran in");
  t.match(r1.summary, { mode: 'audit', audit_allowed: 3 }, 'the run summary: audit, 3 audit-allowed');
  // what audit never lets through is still refused and shown: glibc's probe of nscd's AF_UNIX socket (no unix rule) is the hook's refusal
  const refused1 = r1.summary.refused_list as { control: string; target: string }[];
  t.same(refused1.filter((x) => !x.target.startsWith('unix ')), [], `nothing but AF_UNIX refused under audit (${JSON.stringify(refused1)})`);
  const rep1 = JSON.parse(fs.readFileSync(path.join(st, 'r1.json'), 'utf8')) as { mode: string; exit: number; totals: Record<string, number> };
  t.match(rep1, { report: 1, mode: 'audit', exit: 0 }, '--report FILE.json: the JSON report, mode and exit');
  t.same(rep1.totals, expectedTotals(r1), 'every total in the JSON report equals what faults.jsonl and counters.jsonl hold');
  await verified(t, st, op1);

  // --- suggest
  const sg = await gensee(['policy', 'suggest', '--op', op1, '--state-dir', st]);
  t.equal(sg.code, 0, `policy suggest exits 0 ${sg.stderr}`);
  const suggested = JSON.parse(sg.stdout) as { leases: { network: Record<string, unknown>; why: string; ttl_s: number }[] };
  const hosts = suggested.leases.filter((l) => 'host' in l.network);
  const addrs = suggested.leases.filter((l) => 'address' in l.network || 'cidr' in l.network);
  t.same(hosts.map((l) => l.network).sort((a, b) => String(a.host).localeCompare(String(b.host))), [
    { protocol: 'tcp', host: 'alpha.test', port: alpha.port },
    { protocol: 'tcp', host: 'beta.test', port: beta.port },
  ], 'two host rules: the names the stub answered, on the ports used');
  t.same(addrs.map((l) => l.network), [{ protocol: 'tcp', address: bare.host, port: bare.port }], 'one address rule: the address no name explains');
  t.equal(suggested.leases.length, 3, 'nothing else (not the DNS stub)');
  t.ok(suggested.leases.every((l) => /^used 1 time by curl in /.test(l.why)), `each rule says how often and by which process (${suggested.leases.map((l) => l.why).join(' | ')})`);
  const pfile = path.join(st, 'suggested.json');
  fs.writeFileSync(pfile, sg.stdout);
  const chk = await gensee(['policy', 'check', pfile]);
  t.equal(chk.code, 0, `the suggestion passes gensee policy check: ${chk.stdout}`);
  const tooFew = await gensee(['policy', 'suggest', '--op', op1, '--state-dir', st, '--min-uses', '2']);
  t.equal((JSON.parse(tooFew.stdout) as { leases: unknown[] }).leases.length, 0, '--min-uses 2 leaves out the one-offs');

  // --- enforce the suggestion: the three reached, a fourth refused, --fail-on-deny
  const op2 = uniqueName('gs-au2');
  const r2 = await finish(
    startRun(t, st, op2, { ...DENY_ALL, ...JSON.parse(sg.stdout) }, up(auth), ['--fail-on-deny', '--report', path.join(st, 'r2.xml')], sh([...three, curl('fourth', `http://${fourth.host}:${fourth.port}/`)].join('; '))),
    st,
    op2,
  );
  for (const l of ['alpha', 'beta', 'bare']) t.match(r2.stdout, new RegExp(`${l} HTTP 200 rc=0`), `${l}: reached under the suggested policy`);
  t.match(r2.stdout, /fourth HTTP 000 rc=[1-9]/, 'the fourth destination is refused');
  t.same([alpha.hits(), beta.hits(), bare.hits(), fourth.hits()], [2, 2, 2, 0], 'the listeners: one more request each for the three, none for the fourth');
  t.equal(r2.code, 77, `the workload exited 0, something was refused: --fail-on-deny exits 77 ${r2.stderr}`);
  const denied2 = resolutions(r2).filter((x) => x.res.action === 'deny');
  t.ok(denied2.length >= 1 && denied2.every((x) => netOf(x.fault)?.address === fourth.host && x.res.reason === 'policy_denied'), 'denied: the fourth, policy_denied, nothing else');
  t.equal(resolutions(r2).filter((x) => x.res.reason === 'audit_allowed').length, 0, 'no audit lease when enforcing');
  const rec2 = JSON.parse(fs.readFileSync(path.join(r2.dir, 'operation.json'), 'utf8')) as { mode: string };
  t.equal(rec2.mode, 'enforce', 'operation.json: enforce');
  const refusedList = r2.summary.refused_list as { control: string; target: string; count: number }[];
  t.ok(refusedList.some((x) => x.control === 'resolver/policy_denied' && x.target.includes(`${fourth.host}:${fourth.port}`)), 'the run summary lists the refusal with its control');
  t.match(r2.stderr + fs.readFileSync(path.join(st, `${op2}.run.jsonl`), 'utf8'), /"action":"deny"/, 'the refusal was printed live');
  await verified(t, st, op2);

  // --- the reports of the enforcing run
  const exp2 = expectedTotals(r2);
  const junitText = fs.readFileSync(path.join(st, 'r2.xml'), 'utf8');
  t.equal(await junitSchemaError(junitText), null, '--report FILE.xml: JUnit XML valid against the JUnit XSD (libxml2)');
  const failures = [...junitText.matchAll(/<failure [^>]*type="([^"]+)"/g)].map((m) => m[1]);
  const jr = (await gensee(['report', '--op', op2, '--state-dir', st, '--format', 'json'])).stdout;
  const rep2 = JSON.parse(jr) as { totals: Record<string, number>; refused: { control: string; target: string; count: number }[]; reached: { address: string; port: number; names: string[]; allowed: number }[] };
  t.same(rep2.totals, exp2, 'gensee report --format json: every total equals the logs');
  t.equal(failures.length, rep2.refused.length, `JUnit: one failed case per refused destination (${failures.join(', ')})`);
  t.ok(failures.includes('resolver/policy_denied'), 'the fourth is a failed case, its control as the failure type');
  for (const s of [alpha, beta, bare]) {
    const d = rep2.reached.find((x) => x.address === s.host && x.port === s.port);
    t.equal(d?.allowed, allowedTo(r2, s.host, s.port), `report: ${s.host}:${s.port} allowed ${d?.allowed}, as counters.jsonl says`);
  }
  t.same(rep2.reached.find((x) => x.address === alpha.host)?.names, ['alpha.test'], 'reached by name and address');
  const md = await gensee(['report', '--op', op2, '--state-dir', st, '--format', 'markdown']);
  t.equal(md.code, 0, 'gensee report --format markdown');
  const tables = mdTables(md.stdout);
  const totals = tables.find((x) => x.header[0] === 'what');
  t.ok(totals, 'Markdown: the totals table parses');
  const mdTotals = Object.fromEntries((totals?.rows ?? []).map((row) => [row[0], Number(row[1])]));
  t.same(mdTotals, exp2, 'Markdown: every total equals what faults.jsonl and counters.jsonl hold');
  const refusedTable = tables.find((x) => x.header[0] === 'control');
  t.equal(refusedTable?.rows.reduce((s, row) => s + Number(row[2]), 0), exp2.refused, 'Markdown: the refused table adds up to the refusals in the logs');
  const reachedTable = tables.find((x) => x.header[0] === 'destination');
  for (const s of [alpha, beta, bare]) {
    const row = reachedTable?.rows.find((x) => x[0] === `tcp ${s.host}:${s.port}`);
    t.equal(Number(row?.[2]), allowedTo(r2, s.host, s.port), `Markdown: ${s.host}:${s.port} allowed count from counters.jsonl`);
  }
  const txt = await gensee(['report', '--op', op2, '--state-dir', st]);
  t.match(txt.stdout, /enforced/, 'text: says enforced');
  t.match((await gensee(['report', '--op', op1, '--state-dir', st])).stdout, /AUDIT/, 'text: says audit at a glance');
  t.match((await gensee(['status', '--op', op1, '--state-dir', st])).stdout, /audit/, 'gensee status shows the audit mode');
  t.match((await gensee(['verify', '--op', op1, '--state-dir', st])).stdout, /audit/, 'gensee verify shows the audit mode');
});

t.test('2. --audit does not leak past its operation: an enforcing operation at the same time is refused', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const srv = await httpServer(t, '127.0.0.6');
  const auth = await authority(t, {});
  const gate = fs.mkdtempSync('/tmp/gs-au-gate-');
  fs.chmodSync(gate, 0o755);
  t.teardown(() => fs.rmSync(gate, { recursive: true, force: true }));
  const open = path.join(gate, 'open');
  const opA = uniqueName('gs-au3a');
  const opB = uniqueName('gs-au3b');
  // A: audited, reaches the listener, then waits (still active) until the test says so
  const pa = startRun(t, st, opA, DENY_ALL, up(auth), ['--audit'], sh(`${curl('a', `http://${srv.host}:${srv.port}/`)}; while [ ! -e '${open}' ]; do sleep 0.05; done`));
  await waitFor(() => srv.hits() === 1 || !pa.running, startupDeadline() * 3);
  t.equal(srv.hits(), 1, 'the audited operation reached the listener');
  // B: enforcing, the same destination, while A is active
  const pb = startRun(t, st, opB, DENY_ALL, up(auth), [], sh(curl('b', `http://${srv.host}:${srv.port}/`)));
  const rb = await finish(pb, st, opB);
  t.ok(pa.running, 'A was still running while B tried');
  fs.writeFileSync(open, '');
  const ra = await finish(pa, st, opA);
  t.equal(ra.code, 0, 'A ends with its workload');
  t.match(rb.stdout, /b HTTP 000 rc=[1-9]/, "B's connect is refused");
  t.equal(srv.hits(), 1, 'the listener saw only A');
  t.ok(resolutions(rb).some((x) => x.res.action === 'deny' && x.res.reason === 'policy_denied'), 'B: denied policy_denied');
  t.equal(resolutions(rb).filter((x) => x.res.reason === 'audit_allowed').length, 0, 'B: no audit lease');
  t.ok(resolutions(ra).some((x) => x.res.reason === 'audit_allowed'), 'A: audit_allowed');
  t.equal(boundary(rb, 'audit_allowed').length, 0, 'B: no audit_allowed event');
  await verified(t, st, opA);
  await verified(t, st, opB);
});

t.test('3. a failing workload still writes its report, with its exit code', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const srv = await httpServer(t, '127.0.0.7');
  const auth = await authority(t, {});
  const op = uniqueName('gs-au4');
  const file = path.join(st, 'fail.xml');
  const r = await finish(startRun(t, st, op, DENY_ALL, up(auth), ['--fail-on-deny', '--report', `${file}:junit`], sh(`${curl('x', `http://${srv.host}:${srv.port}/`)}; ${curl('n', 'http://nowhere.test:80/')}; exit 3`)), st, op);
  t.equal(r.code, 3, "the workload's own failure wins over --fail-on-deny");
  t.ok(fs.existsSync(file), 'the report is written');
  const x = fs.readFileSync(file, 'utf8');
  t.equal(await junitSchemaError(x), null, 'valid JUnit');
  t.match(x, /<property name="exit" value="3"\/>/, 'with the exit code');
  t.match(x, new RegExp(`type="resolver/policy_denied"`), 'the denied connect is a failed case');
  t.match(x, /type="dns\/no_rule"/, 'the refused name is a failed case, its control dns/no_rule');
  t.ok(r.faults.some((l) => l.kind === 'dns_refused' && l.name === 'nowhere.test' && l.control === 'dns/no_rule'), 'faults.jsonl: the DNS refusal');
  const live = r.live.filter((l) => l.event === 'dns_refused');
  t.ok(live.some((l) => l.name === 'nowhere.test' && l.control === 'dns/no_rule'), 'the DNS refusal appeared live, with its control');
  const list = r.summary.refused_list as { control: string; target: string }[];
  t.ok(list.some((l) => l.control === 'dns/no_rule' && l.target === 'nowhere.test'), 'and in the summary');
  t.ok(list.some((l) => l.control === 'resolver/policy_denied'), 'beside the connect refused');
  t.notMatch(r.stdout, /gensee|dns_refused|refused/, "none of gensee's lines on the workload's stdout");
  await verified(t, st, op);
});

t.test('4. policy suggest refuses bad input clearly: unknown op, no evidence, a corrupted chain', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const none = await gensee(['policy', 'suggest', '--op', 'gs-no-such-op', '--state-dir', st]);
  t.equal(none.code, 2, 'unknown op: exit 2');
  t.match(none.stderr, /E_UNKNOWN_OP/, none.stderr);
  t.equal(none.stdout, '', 'no policy printed');
  const empty = uniqueName('gs-au5');
  await createOperation(st, { id: empty, owner_uid: 0, cgroup: '/sys/fs/cgroup/none', policy_hash: 'x' });
  const ne = await gensee(['policy', 'suggest', '--op', empty, '--state-dir', st]);
  t.equal(ne.code, 2, 'no evidence: exit 2');
  t.match(ne.stderr, /E_NO_EVIDENCE: operation \S+ has no evidence/, ne.stderr);
  t.equal(ne.stdout, '', 'no policy printed');
  // a real run, then one line of its chain edited
  const srv = await httpServer(t, '127.0.0.8');
  const auth = await authority(t, {});
  const op = uniqueName('gs-au6');
  const r = await finish(startRun(t, st, op, DENY_ALL, up(auth), ['--audit'], sh(curl('x', `http://${srv.host}:${srv.port}/`))), st, op);
  t.equal(r.code, 0, r.stderr);
  const ok = await gensee(['policy', 'suggest', '--op', op, '--state-dir', st]);
  t.equal(ok.code, 0, 'suggest works before the edit');
  const f = path.join(r.dir, 'faults.jsonl');
  const text = fs.readFileSync(f, 'utf8');
  const edited = text.replace(`"address":"${srv.host}"`, '"address":"127.0.0.9"');
  t.not(edited, text, 'an address in the log edited');
  fs.writeFileSync(f, edited);
  const bad = await gensee(['policy', 'suggest', '--op', op, '--state-dir', st]);
  t.equal(bad.code, 1, 'a corrupted chain: exit 1');
  t.match(bad.stderr, /E_VERIFY: operation \S+: the evidence fails gensee verify \(faults\.jsonl: \d+ problem/, bad.stderr);
  t.equal(bad.stdout, '', 'no policy printed');
  const usage = await gensee(['policy', 'suggest', '--op', op, '--state-dir', st, '--min-uses', '0']);
  t.equal(usage.code, 2, '--min-uses 0: bad input');
});
