// gensee run [--op ID] [--policy FILE] [--audit] [--fail-on-deny] [--report FILE[:FORMAT]] [--json] [--json-out FILE] [--user USER | --host-root] -- CMD ARGS…
// The main job: create an operation (cgroup with its pids and memory limits,
// hooks, resolver, seccomp pause), run CMD inside it from its first
// instruction, print faults and resolutions as they happen, leave the
// evidence. Exit code is CMD's; with --fail-on-deny, EXIT_DENIED (77) when
// CMD exited 0 but something was refused.
//
// --audit: everything runs as enforcing, but what the policy would deny is
// answered with a short lease and recorded audit_allowed (docs/audit.md).
// --report FILE[:FORMAT]: `gensee report` written when the run ends, also
// when CMD fails.
//
// Live lines: every fault but those to the operation's own DNS stub (counted,
// in the summary), every refusal of every control (hook, filter, pause, DNS,
// executor) with that control, a name's first answer. The summary lists
// what was refused by control and target.
//
// CMD keeps the stdout and stderr it was given; gensee's own lines never go
// to stdout. They go to stderr (text, or JSON with --json), where CMD's
// stderr may hold lines that look like them: that is for people. A machine
// reads --json-out FILE, which only gensee can write.
import type { StreamListen } from '../events/stream';
import type { Upstream } from '../dns/stub';
import { hostRules } from '../protocol/ip';
import type { Policy } from '../protocol/types';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { parse, liveOut, liveTo, flushLive, requireOp } from './args';
import { openJsonOut, writeAll } from './json-out';
import { GenseeError } from '../errors';
import { findCgroup2Mount, removeEmptyCgroup, killCgroupAndWait } from '../cgroup';
import type { Supervisor } from '../supervisor';
import { loadPolicyFile, type LoadedPolicy } from '../policy-file';
import { parsePolicy, policyHash } from '../protocol/json';
import { resolveStateDir, readKey, updateOperation, openOperation, createOperation, OperationRecord } from '../state/operation';
import { identityAlive, readStartTimeTicks } from '../resolver/subject';
import { PACKAGE_ROOT, loadAddon } from '../addon';
import { requireKernelFeatures } from './doctor';
import type { WorkloadIdentityOption } from '../pause/launch';
import type { PauseAdapter, PauseOutcome } from '../pause/adapter';
import { pinDirFor } from '../bpffs';
import { attachHooksAsync, detachHooks } from '../dataplane';
import { formatResolved, formatRefused } from './live';
import type { ReportFormat } from '../report/report';
import type { DnsAnsweredEvent, DnsRefusedEvent, ResolvedEvent } from '../resolver/resolver';
import type { FaultContext } from '../resolver/resolver';
import { formatTuple } from '../addr';
import { mark } from '../startup-trace';
import { applyOperationLimits, limitCgroupsOf, missingPolicyLimits, removeLimitCgroups, unappliedLimits, type AppliedLimits } from '../resources';

/** `gensee run --fail-on-deny`: CMD exited 0, but something was refused (EX_NOPERM) */
export const EXIT_DENIED = 77;

export const usage = 'usage: gensee run [--op ID] [--policy FILE] [--audit] [--fail-on-deny] [--report FILE[:FORMAT]] [--json] [--json-out FILE] [--user USER | --host-root] [--nft] [--keep-hooks] [--listen 127.0.0.1:PORT] [--metrics 127.0.0.1:PORT] [--dns-upstream [tcp:]ADDR[:PORT] | --no-dns] -- CMD ARGS…';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [] };

function defaultPolicy(): LoadedPolicy {
  const text = JSON.stringify(DENY_ALL);
  return { policy: parsePolicy(DENY_ALL), hash: policyHash(text) };
}

/**
 * Whether `gensee run` serves DNS, and from which upstream: --dns-upstream,
 * else the host's resolver configuration. Without an upstream a policy with
 * host rules is an error; one without runs with no stub (--no-dns: never).
 */
async function runDns(policy: Policy, upstream: string | undefined, off: boolean): Promise<{ upstream: Upstream } | null> {
  const named = hostRules(policy).length > 0;
  if (off) {
    if (upstream !== undefined) throw new GenseeError('E_USAGE', '--dns-upstream and --no-dns exclude each other');
    if (named) throw new GenseeError('E_USAGE', '--no-dns: the policy names hosts, which only the DNS stub can resolve into leases');
    return null;
  }
  // the DNS code only when DNS is served (--no-dns does not load it)
  if (upstream !== undefined) return { upstream: (await import('../dns/service')).parseUpstream(upstream) };
  const { hostUpstream } = await import('../dns/stub');
  try {
    return { upstream: hostUpstream() };
  } catch (e) {
    if (named) throw e;
    return null;
  }
}

export async function run(argv: string[]): Promise<number> {
  const dd = argv.indexOf('--');
  if (dd < 0 || dd === argv.length - 1) throw new GenseeError('E_USAGE', `missing "-- CMD": ${usage}`);
  const cmd = argv.slice(dd + 1);
  const { values } = parse(argv.slice(0, dd), {
    op: { type: 'string' },
    policy: { type: 'string' },
    user: { type: 'string' },
    'host-root': { type: 'boolean' },
    json: { type: 'boolean' },
    'json-out': { type: 'string' },
    nft: { type: 'boolean' },
    'keep-hooks': { type: 'boolean' },
    listen: { type: 'string' },
    metrics: { type: 'string' },
    'dns-upstream': { type: 'string' },
    'no-dns': { type: 'boolean' },
    audit: { type: 'boolean' },
    'fail-on-deny': { type: 'boolean' },
    report: { type: 'string' },
  }, false);
  const audit = values.flags.has('audit');
  const reportTo: { file: string; format: ReportFormat } | null = values.report !== undefined ? (await import('../report/report')).parseReportTarget(values.report) : null;
  if (process.getuid && process.getuid() !== 0) throw new GenseeError('E_NOT_ROOT', 'gensee run needs root (cgroups, BPF, seccomp listener)');
  // before anything is made: a kernel that lacks what the boundary needs is named, not met halfway
  mark('run: modules loaded');
  requireKernelFeatures();
  mark('run: kernel features checked');
  const op = values.op !== undefined ? requireOp(values.op) : `run-${process.pid}-${randomBytes(3).toString('hex')}`;
  const hostRoot = values.flags.has('host-root');
  if (hostRoot && values.user !== undefined) throw new GenseeError('E_USAGE', `--user and --host-root exclude each other: ${usage}`);
  const policy = values.policy ? await loadPolicyFile(values.policy) : defaultPolicy();
  const parseListen = async (s: string): Promise<StreamListen> => (await import('../events/stream')).parseListen(s);
  const listen = values.listen !== undefined ? await parseListen(values.listen) : undefined;
  const metrics = values.metrics !== undefined ? await parseListen(values.metrics) : undefined;
  const dns = await runDns(policy.policy, values['dns-upstream'], values.flags.has('no-dns'));
  const stateDir = resolveStateDir(values['state-dir']);
  // gensee's lines: to the --json-out file (JSON), else to stderr; opened
  // here, before the workload exists, so it never holds the descriptor
  const jsonOut = values['json-out'] !== undefined ? openJsonOut(values['json-out']) : null;
  const json = values.flags.has('json') || jsonOut !== null;
  const tty = jsonOut === null && process.stderr.isTTY === true;
  liveTo(jsonOut !== null ? (text) => writeAll(jsonOut, text) : (text) => process.stderr.write(text));
  const say = (line: string) => liveOut(line);

  // the operation's cgroup: <cgroup2>/gensee/<op> (GENSEE_CGROUP_PARENT names
  // another parent, one path component: tests use it to keep their guard apart)
  const parentName = process.env.GENSEE_CGROUP_PARENT ?? 'gensee';
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(parentName)) throw new GenseeError('E_USAGE', `GENSEE_CGROUP_PARENT ${JSON.stringify(parentName)} is not one plain path component`);
  const parent = path.join(findCgroup2Mount(), parentName);
  const cgroup = path.join(parent, op);
  // the operation's record before its cgroup or any pin (issue 25): a kill
  // from here on leaves a record naming them, which `gensee stop` ends
  let prior: OperationRecord | null = null;
  try {
    prior = await openOperation(stateDir, op);
  } catch (e) {
    if (!(e instanceof GenseeError && e.code === 'E_UNKNOWN_OP')) throw e;
  }
  if (prior && prior.state === 'active' && prior.resolver && identityAlive(prior.resolver)) {
    throw new GenseeError('E_OP_EXISTS', `operation ${op} is running (resolver pid ${prior.resolver.pid})`);
  }
  await createOperation(
    stateDir,
    { id: op, owner_uid: 0, cgroup, policy_hash: policy.hash, resolver: { pid: process.pid, start_time_ticks: readStartTimeTicks(process.pid) ?? 0 }, peers: prior?.peers ?? [], mode: audit ? 'audit' : 'enforce' },
    { reopen: true },
  );
  mark('run: operation record created');
  // the parent right before the cgroup: a run ending elsewhere may remove an empty parent meanwhile
  fs.mkdirSync(parent, { recursive: true });
  try {
    try {
      fs.mkdirSync(cgroup);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      fs.mkdirSync(parent, { recursive: true });
      fs.mkdirSync(cgroup);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new GenseeError('E_OP_EXISTS', `cgroup ${cgroup} already exists: operation ${op} is running or was not cleaned up`);
    throw e;
  }
  // the hooks' attach started below (undefined: none, or pins of an earlier run)
  let attaching: Promise<string> | undefined;

  let sup: Supervisor | null = null;
  let limits: AppliedLimits | null = null;
  let adapter: PauseAdapter | null = null;
  const outcomes: PauseOutcome[] = [];
  let code = 1;
  let cgroupKilled = false;
  let exited = false;
  const tally = new RunTally();
  // whether the cgroup was killed and seen empty; if not, the hooks stay
  const killAll = () =>
    killCgroupAndWait(cgroup).then(
      () => true,
      (e: Error) => (process.stderr.write(`gensee: ${e.message}; the hooks stay attached\n`), false),
    );
  try {
    // the hooks' load, verifier and attach start now, on a worker thread,
    // while this thread loads the supervisor's code and applies the limits;
    // Supervisor.start awaits it before it makes anything else, and the
    // workload starts only after Supervisor.start (the fail-closed order is
    // the same). Pins left by an earlier run (--keep-hooks): Supervisor.start
    // checks and reuses them, as before.
    if (!fs.existsSync(pinDirFor(op))) {
      attaching = attachHooksAsync(op, cgroup, { guardParent: parent });
      // awaited, and its error thrown, by Supervisor.start or by the clean-up below
      attaching.catch(() => {});
    }
    mark('run: attach started');
    // the rest of gensee run's code: loaded while the hooks attach
    const [{ Supervisor }, { launchUnderBoundary, workloadIdFor }, { PauseAdapter }, { startRefusalRecorder }] = await Promise.all([
      import('../supervisor'),
      import('../pause/launch'),
      import('../pause/adapter'),
      import('../pause/refusals'),
    ]);
    const identity: WorkloadIdentityOption = hostRoot ? { kind: 'host_root' } : values.user !== undefined ? { kind: 'user', user: values.user } : { kind: 'userns', ...workloadIdFor(op) };
    mark('run: supervisor code loaded');
    // pids and memory limits, before anything can run in the cgroup
    limits = applyOperationLimits({ op, cgroup, limits: policy.policy.limits });
    const missing = missingPolicyLimits(limits.record);
    if (missing.length) throw new GenseeError('E_KERNEL', `operation ${op}: the policy's limits cannot be applied on this host: ${missing.join('; ')}`);
    for (const w of unappliedLimits(limits.record)) process.stderr.write(`gensee: warning: operation ${op}: ${w}\n`);
    mark('run: limits applied');
    sup = await Supervisor.start({ stateDir, op, cgroup, policy, guardParent: parent, attaching, startIntent: prior === null, nft: values.flags.has('nft'), listen, metrics, dns: dns ?? undefined, audit, onError: (e) => process.stderr.write(`gensee: ${e.message}\n`) });
    mark('run: supervisor started');
    const stub = sup.dns ? { address: sup.dns.host, port: sup.dns.port } : null;
    sup.resolver.on('resolved', (e: ResolvedEvent) => {
      // the workload's own DNS stub: counted for the summary, not a line per packet
      if (tally.resolved(e, stub)) say(formatResolved(e, json, tty));
    });
    sup.resolver.on('refused', (e: { reason: string; detail: string; ctx: FaultContext }) => {
      tally.refused(e);
      say(formatRefused(e, json, tty));
    });
    sup.resolver.on('dns_refused', (e: DnsRefusedEvent) => {
      tally.dnsRefused(e);
      say(json ? JSON.stringify({ event: 'dns_refused', ...e }) : `dns ${e.qtype ?? '?'} ${e.name ?? '(no name)'} → ${e.rcode} [${e.control}] ${e.detail}`);
    });
    sup.resolver.on('dns_answered', (e: DnsAnsweredEvent) => {
      // a name's first answer with addresses: one line; the rest are counted
      if (tally.dnsAnswered(e)) say(json ? JSON.stringify({ event: 'dns_answered', ...e }) : `dns ${e.name} → ${e.addresses.join(', ')}${e.would_deny ? ` (AUDIT: enforcing, refused: ${e.would_deny})` : ` (${e.leases} lease(s))`}`);
    });
    await updateOperation(stateDir, op, { resources: limits.record });
    const key = await readKey(stateDir, op);
    if (!json) say(`gensee: operation ${op}${audit ? ' (AUDIT: what the policy denies is allowed and recorded)' : ''}: cgroup ${cgroup}, evidence ${sup.dir}`);
    else say(JSON.stringify({ event: 'start', op, mode: audit ? 'audit' : 'enforce', cgroup, evidence: sup.dir, argv: cmd }));

    // the workload's resolver asks the operation's DNS stub, and nothing else
    let resolvConf: string | undefined;
    if (sup.metrics) say(json ? JSON.stringify({ event: 'metrics', url: `http://${metrics!.host.includes(':') ? `[${metrics!.host}]` : metrics!.host}:${sup.metrics.port}/metrics` }) : `gensee: metrics for ${op} on http://${metrics!.host.includes(':') ? `[${metrics!.host}]` : metrics!.host}:${sup.metrics.port}/metrics`);
    if (sup.dns) {
      resolvConf = path.join(sup.dir, 'resolv.conf');
      fs.writeFileSync(resolvConf, (await import('../dns/service')).resolvConfText(sup.dns.host), { mode: 0o644 });
      if (!json) say(`gensee: DNS for ${op} on ${sup.dns.host}:${sup.dns.port} (upstream ${dns!.upstream.host}:${dns!.upstream.port})`);
      else say(JSON.stringify({ event: 'dns', listen: `${sup.dns.host}:${sup.dns.port}`, upstream: `${dns!.upstream.host}:${dns!.upstream.port}` }));
    }
    if (hostRoot) process.stderr.write(`gensee: warning: --host-root: ${op}'s workload runs as host uid 0; it cannot gain capabilities, but every root-owned file it can reach is its own (recorded in operation.json)\n`);
    mark('run: launching');
    const launched = await launchUnderBoundary({
      cgroupPath: cgroup,
      joinCgroups: limits.join,
      pinDir: pinDirFor(op),
      argv: cmd,
      identity,
      operationId: op,
      // the evidence, the key and the sockets have no name in the workload's view
      hide: [stateDir],
      // gensee's own code is not the workload's to change, whatever uid it runs as
      readOnly: ['dist', 'bin', 'obj', 'build', 'node_modules'].map((d) => path.join(PACKAGE_ROOT, d)).filter((d) => fs.existsSync(d)),
      resolvConf,
      allowIoUring: policy.policy.io_uring,
      allowListen: policy.policy.listen.length > 0,
      // before Linux 6.7 no hook sees an AF_UNIX connect: no AF_UNIX socket then (socketpair() stays)
      noUnix: !loadAddon().unixHooks(),
    });
    if (!launched.hostIds) throw new GenseeError('E_KERNEL', 'gensee-exec did not report the host uid/gid the workload runs as');
    const notifier = launched.notifier!;
    // the filter's own refusals (other socket families, io_uring, listen): recorded like the hooks'
    const refusals = startRefusalRecorder(notifier, sup.resolver, sup.events, (e) => process.stderr.write(`gensee: ${e.message}\n`));
    adapter = new PauseAdapter({
      notifier,
      socketPath: sup.socketPath,
      operationId: op,
      key,
      resolver: sup.record.resolver,
      deadlineMs: policy.policy.fault_deadline_ms,
      onAnswer: (call, o) => {
        if (outcomes.length === 0) mark('run: first paused call answered');
        outcomes.push(o);
        if (o.how !== 'answered') {
          tally.refuse(`pause/${o.how}`, `errno ${o.verdict}`, o.detail ?? call.faultId);
          say(json ? JSON.stringify({ event: 'pause', fault_id: call.faultId, how: o.how, verdict: o.verdict, detail: o.detail ?? null }) : `paused ${call.faultId}: ${o.how}${o.detail ? ` (${o.detail})` : ''} → errno ${o.verdict}`);
        }
      },
    });
    launched.setFaultHandler(adapter.handle);
    mark('run: launched');
    // CMD runs from the hand-over on: its first paused call is served
    // (above) before the record's durable write, not after it
    await updateOperation(stateDir, op, { workload: { identity: identity.kind, ...launched.hostIds } });
    mark('run: workload recorded');
    const forward = (sig: NodeJS.Signals) => launched.child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const ex = await launched.exited;
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
    mark('run: workload exited');
    code = ex.code ?? 128 + (ex.signal ? osConstants.signals[ex.signal] : 0);
    exited = true;
    // kill, then detach: whatever CMD left behind dies while the listener
    // and the hooks are still there (gensee-exec's pid namespace already
    // took it down with CMD; this holds even if it did not)
    cgroupKilled = await killAll();
    mark('run: cgroup killed');
    await adapter.idle();
    refusals.stop();
    const ns = notifier.stats();
    notifier.close();
    // the last hook events, all in the ring by now: resolved before the summary counts them
    await sup.drainHookEvents();
    mark('run: drained');

    const st = sup.resolver.stats;
    const refusedList = tally.refusedList();
    const refusedTotal = refusedList.reduce((s, r) => s + r.count, 0);
    const summary = {
      op,
      exit: code,
      mode: audit ? 'audit' : 'enforce',
      ...sup.summary(ns),
      audit_allowed: st.audit,
      refused_total: refusedTotal,
      refused_list: refusedList,
      dns: tally.dnsSummary(stub),
      anchor: await sup.faultsAnchor(),
    };
    if (values.flags.has('fail-on-deny') && code === 0 && refusedTotal > 0) code = EXIT_DENIED;
    summary.exit = code;
    mark('run: summary built');
    if (json) say(JSON.stringify({ event: 'summary', ...summary }));
    else {
      say(`gensee: ${op} exited ${code}${audit ? ' (AUDIT)' : ''}: ${st.faults} faults, ${st.retry} leases installed, ${st.continue} already authorized, ${st.delegate} delegated, ${st.deny} denied, ${st.audit} audit-allowed, ${refusedTotal} refused in all; fast path ${ns.fastPath}, paused ${ns.slowPath}`);
      // the stub's packets are in the DNS line
      for (const d of summary.destinations) if (!stub || !d.destination.includes(`${stub.address}:${stub.port}`)) say(`  ${d.destination}  ${d.verdict}  ${d.count}`);
      const dnsS = summary.dns;
      if (dnsS.stub) say(`  DNS: ${dnsS.answered} answered (${dnsS.names} names${dnsS.audit_names ? `, ${dnsS.audit_names} only because of --audit` : ''}), ${dnsS.refused} refused, ${dnsS.stub_faults} fault(s) to the stub ${dnsS.stub}`);
      if (refusedList.length) {
        say(`  refused:`);
        for (const r of refusedList.slice(0, 50)) say(`    [${r.control}] ${r.target}  ${r.count}  ${r.reason}`);
        if (refusedList.length > 50) say(`    … ${refusedList.length - 50} more (gensee report --op ${op})`);
      }
      if (st.audit) say(`  AUDIT: ${st.audit} fault(s) enforcing would deny were allowed; gensee policy suggest --op ${op} prints the policy this run needs`);
      if (code === EXIT_DENIED) say(`  --fail-on-deny: exit ${EXIT_DENIED} (the workload exited 0, ${refusedTotal} refused)`);
      say(`  evidence: ${sup.dir} (faults.jsonl; gensee verify --op ${op}${values['state-dir'] ? ` --state-dir ${stateDir}` : ''})`);
      if (summary.anchor) say(`  anchor: ${summary.anchor} (keep it elsewhere: gensee verify --anchor shows any line cut off after it)`);
    }
  } finally {
    // a launch that failed half-way, or an exception: the cgroup is killed
    // before anything is removed, whatever the path here
    if (!cgroupKilled) cgroupKilled = await killAll();
    // the v1 limit cgroups empty with the cgroup2 one: every process in them is in it too
    if (cgroupKilled && limits) await removeLimitCgroups(limitCgroupsOf(limits.record)).catch((e: Error) => process.stderr.write(`gensee: cleanup: ${e.message}\n`));
    mark('run: limit cgroups removed');
    if (sup) await sup.stop({ close: true }).catch((e: Error) => process.stderr.write(`gensee: stop: ${e.message}\n`));
    mark('run: supervisor stopped');
    // an attach started above whose Supervisor.start did not return (a step
    // before it, or it, failed): settled, then its hooks come off whatever
    // --keep-hooks says, as a failed Supervisor.start's own attach always
    // did (no process can be in the cgroup: CMD starts after it returned)
    if (attaching && !sup) {
      const attached = await attaching.then(
        () => true,
        () => false,
      );
      if (attached) {
        try {
          detachHooks(op);
        } catch (e) {
          process.stderr.write(`gensee: detach: ${(e as Error).message}\n`);
        }
      }
    }
    if (!values.flags.has('keep-hooks') && cgroupKilled) {
      try {
        detachHooks(op);
      } catch (e) {
        process.stderr.write(`gensee: detach: ${(e as Error).message}\n`);
      }
      try {
        // the shared parent stays: it carries the guard that keeps a socket
        // born in an ended operation from sending (src/dataplane.ts)
        removeEmptyCgroup(cgroup);
      } catch (e) {
        process.stderr.write(`gensee: cleanup of ${cgroup}: ${(e as Error).message}\n`);
      }
    }
    mark('run: hooks detached, cgroup removed');
    if (reportTo) {
      // written whatever happened to the workload: from the evidence on disk
      try {
        const { buildReport, renderReport } = await import('../report/report');
        const rep = await buildReport(stateDir, op, { exit: exited ? code : null });
        fs.writeFileSync(reportTo.file, renderReport(rep, reportTo.format), { mode: 0o644 });
      } catch (e) {
        process.stderr.write(`gensee: --report ${reportTo.file}: ${(e as Error).message}\n`);
      }
    }
    if (jsonOut !== null) {
      // the summary is on disk before gensee run exits
      flushLive();
      liveTo((text) => process.stderr.write(text));
      try {
        fs.fsyncSync(jsonOut);
      } finally {
        fs.closeSync(jsonOut);
      }
    }
  }
  mark('run: done');
  return code;
}


/** What `gensee run` saw, for its live lines and its summary: refusals by control and target, the DNS stub's traffic. */
class RunTally {
  private readonly refusals = new Map<string, { control: string; reason: string; target: string; count: number }>();
  private stubFaults = 0;
  private answered = 0;
  private dnsRefusedCount = 0;
  private readonly names = new Map<string, boolean>();

  refuse(control: string, reason: string, target: string): void {
    const k = `${control}\u0000${reason}\u0000${target}`;
    const r = this.refusals.get(k);
    if (r) r.count++;
    else this.refusals.set(k, { control, reason, target, count: 1 });
  }

  /** false: a fault to the operation's DNS stub, counted and not printed */
  resolved(e: ResolvedEvent, stub: { address: string; port: number } | null): boolean {
    const n = e.fault.effect.network;
    if (stub && n && n.address === stub.address && n.port === stub.port && e.resolution.action !== 'deny') {
      this.stubFaults++;
      return false;
    }
    if (e.resolution.action === 'deny') {
      const target = n ? formatTuple(n) : (e.fault.effect.application ? `${e.fault.effect.application.name} ${e.fault.effect.application.target}` : 'effect');
      const control = e.fault.source === 'executor' ? `executor/${e.resolution.reason}` : e.ctx.via === 'cgroup_hook' ? 'ebpf/hook' : `resolver/${e.resolution.reason}`;
      this.refuse(control, e.resolution.reason, target);
    }
    return true;
  }

  refused(e: { reason: string; detail: string; ctx: FaultContext }): void {
    const control = e.reason === 'timeout' ? 'pause/timeout' : e.ctx.via === 'cgroup_hook' ? 'ebpf/hook' : e.ctx.via === 'inproc' ? 'seccomp/filter' : `socket/${e.ctx.socket ?? 'supervisor.sock'}`;
    this.refuse(control, e.reason, e.detail.replace(/\s*\(.*$/, '').slice(0, 120));
  }

  dnsRefused(e: DnsRefusedEvent): void {
    this.dnsRefusedCount++;
    this.refuse(e.control, e.rcode, e.name ?? '(no name)');
  }

  /** true for a name's first answer with addresses */
  dnsAnswered(e: DnsAnsweredEvent): boolean {
    this.answered++;
    if (e.addresses.length === 0 || this.names.has(e.name)) return false;
    this.names.set(e.name, e.would_deny !== null);
    return true;
  }

  refusedList(): { control: string; reason: string; target: string; count: number }[] {
    return [...this.refusals.values()].sort((a, b) => b.count - a.count || a.control.localeCompare(b.control) || a.target.localeCompare(b.target));
  }

  dnsSummary(stub: { address: string; port: number } | null): { stub: string | null; answered: number; names: number; audit_names: number; refused: number; stub_faults: number } {
    return {
      stub: stub ? `${stub.address}:${stub.port}` : null,
      answered: this.answered,
      names: this.names.size,
      audit_names: [...this.names.values()].filter(Boolean).length,
      refused: this.dnsRefusedCount,
      stub_faults: this.stubFaults,
    };
  }
}
