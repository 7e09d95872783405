// gensee supervise --op ID --cgroup PATH --policy FILE [--detach-on-exit]
// Attach to an existing (container) cgroup and serve until SIGTERM/SIGINT.
// The cgroup is its owner's: the policy's pids/memory limits (or the
// defaults) are written where the owner enabled the controller on cgroup2,
// never loosening a lower limit it set (src/resources.ts); its v1 cgroups
// are left to the runtime. A limit the policy names that cannot be applied
// is an error before anything is attached.
// On exit the hooks stay pinned, failing closed; with --detach-on-exit every
// process in the cgroup is killed first (kill, then detach: nothing in it
// ever runs without hooks).
// Upgrade in place (SIGHUP, or `gensee upgrade --op ID`): this process starts
// its successor with its own command line (the binary on disk now) and
// --takeover-from PID; the successor tells it to leave (SIGTERM: it stops
// serving, kills and detaches nothing, even with --detach-on-exit), waits
// for it to exit, reopens the operation and serves. The hooks, the lease map
// and the ring are pinned and outlive both: while neither serves, the hooks
// refuse what no lease allows (EPERM, as always in hooks-only mode) and put
// the refusal on the ring, which the successor drains (a ring that filled
// meanwhile is counted as records_lost, never silently dropped). The
// successor writes a resolver_takeover line in faults.jsonl.
import { spawn } from 'node:child_process';
import { parseListen } from '../events/stream';
import { hostUpstream } from '../dns/stub';
import { parseDnsListen, parseUpstream } from '../dns/service';
import { parse, requireOp, out, liveOut, liveHold } from './args';
import { GenseeError } from '../errors';
import { Supervisor, loadPolicyFile } from '../supervisor';
import { resolveStateDir, updateOperation, openOperation } from '../state/operation';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../addon';
import { identityAlive, readStartTimeTicks } from '../resolver/subject';
import { resolveCgroupPath } from '../cgroup';
import { applyExistingCgroupLimits, missingPolicyLimits, unappliedLimits } from '../resources';
import { formatResolved, formatRefused } from './live';

/** how long live lines may wait for company while faults keep coming (ms) */
const LIVE_HOLD_MS = 20;

export const usage = 'usage: gensee supervise --op ID --cgroup PATH --policy FILE [--audit] [--detach-on-exit] [--nft] [--json] [--owner UID] [--peer ADDR]... [--listen 127.0.0.1:PORT] [--metrics 127.0.0.1:PORT] [--dns-listen ADDR[:PORT] [--dns-upstream [tcp:]ADDR[:PORT]]]';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    op: { type: 'string' },
    cgroup: { type: 'string' },
    policy: { type: 'string' },
    owner: { type: 'string' },
    peer: { type: 'string', multiple: true },
    listen: { type: 'string' },
    metrics: { type: 'string' },
    'dns-listen': { type: 'string' },
    'dns-upstream': { type: 'string' },
    'detach-on-exit': { type: 'boolean' },
    nft: { type: 'boolean' },
    json: { type: 'boolean' },
    audit: { type: 'boolean' },
    'takeover-from': { type: 'string' },
  }, false);
  if (values.flags.has('help')) {
    out(usage);
    return 0;
  }
  const op = requireOp(values.op);
  if (!values.cgroup) throw new GenseeError('E_USAGE', '--cgroup PATH is required');
  if (!values.policy) throw new GenseeError('E_USAGE', '--policy FILE is required');
  const owner = values.owner !== undefined ? Number(values.owner) : 0;
  if (!Number.isInteger(owner) || owner < 0) throw new GenseeError('E_USAGE', `bad --owner "${values.owner}"`);
  const takeoverFrom = values['takeover-from'] !== undefined ? Number(values['takeover-from']) : undefined;
  if (takeoverFrom !== undefined && !(Number.isInteger(takeoverFrom) && takeoverFrom > 1)) throw new GenseeError('E_USAGE', `--takeover-from takes a pid, got ${values['takeover-from']}`);
  const policy = await loadPolicyFile(values.policy);
  const json = values.flags.has('json');
  const cgroup = resolveCgroupPath(values.cgroup);
  const resources = applyExistingCgroupLimits({ cgroup, limits: policy.policy.limits });
  const missing = missingPolicyLimits(resources);
  if (missing.length) throw new GenseeError('E_KERNEL', `operation ${op}: the policy's limits cannot be applied to ${cgroup}: ${missing.join('; ')}`);
  for (const w of unappliedLimits(resources)) process.stderr.write(`gensee: warning: operation ${op}: ${w}\n`);
  const stateDir = resolveStateDir(values['state-dir']);
  // the resolver before this one (a restart after a crash, or the one we take over from)
  let oldPid: number | null = null;
  try {
    oldPid = (await openOperation(stateDir, op)).resolver?.pid ?? null;
  } catch {
    oldPid = null;
  }
  const t0 = Date.now();
  if (takeoverFrom !== undefined) await takeOver(takeoverFrom, op);
  const sup = await Supervisor.start({
    stateDir,
    op,
    cgroup: values.cgroup,
    policy,
    ownerUid: owner,
    peers: values.lists.peer,
    detachOnExit: values.flags.has('detach-on-exit'),
    nft: values.flags.has('nft'),
    audit: values.flags.has('audit'),
    // a hook fault the resolver before this one wrote and never decided:
    // decided now if its record is still in the ring (src/resolver/rejectloop.ts)
    carryOpenFaults: true,
    listen: values.listen !== undefined ? parseListen(values.listen) : undefined,
    metrics: values.metrics !== undefined ? parseListen(values.metrics) : undefined,
    // the container's resolv.conf names --dns-listen (the operator sets it: docs/design.md "Names in policy")
    dns: values['dns-listen'] !== undefined
      ? { listen: parseDnsListen(values['dns-listen']), upstream: values['dns-upstream'] !== undefined ? parseUpstream(values['dns-upstream']) : hostUpstream() }
      : undefined,
  });
  await updateOperation(sup.stateDir, op, { resources });
  void sup.settleAfterReplay().catch((e: Error) => process.stderr.write(`gensee: ${e.message}\n`));
  if (oldPid !== null && oldPid !== process.pid) {
    await sup.recordFault({
      kind: 'resolver_takeover',
      old_pid: takeoverFrom ?? oldPid,
      new_pid: process.pid,
      version: version(),
      how: takeoverFrom !== undefined ? 'takeover' : 'restart',
      mode: 'hooks',
      gap_ms: takeoverFrom !== undefined ? Date.now() - t0 : null,
      leases_removed: sup.reconciled.removed.length,
      leases_reinstalled: sup.reconciled.reinstalled.length,
    });
  }
  // this stdout is no workload's: while faults keep coming, their lines go
  // out once per LIVE_HOLD_MS instead of once per fault (src/cli/args.ts)
  liveHold(LIVE_HOLD_MS);
  sup.resolver.on('resolved', (e) => liveOut(formatResolved(e, json)));
  sup.resolver.on('refused', (e) => liveOut(formatRefused(e, json)));
  const rc = sup.reconciled;
  out(
    json
      ? JSON.stringify({ event: 'serving', op, socket: sup.socketPath, generation: sup.resolver.network.generation, reconciled: rc })
      : `gensee: supervising ${op} (cgroup ${sup.record.cgroup}) on ${sup.socketPath}; generation ${sup.resolver.network.generation}; ` +
          `reconciled: ${rc.removed.length} removed, ${rc.reinstalled.length} re-installed, ${rc.dropped.length} dropped`,
  );
  let why = await new Promise<'stop' | 'upgrade'>((resolve) => {
    process.once('SIGTERM', () => resolve('stop'));
    process.once('SIGINT', () => resolve('stop'));
    process.once('SIGHUP', () => resolve('upgrade'));
  });
  let leaving = false;
  if (why === 'upgrade') {
    // the successor reopens the operation once we are gone; it sends SIGTERM when it is ready to
    const argv2 = process.argv.slice(1).filter((a, i, all) => a !== '--takeover-from' && all[i - 1] !== '--takeover-from');
    const child = spawn(process.execPath, [...argv2, '--takeover-from', String(process.pid)], { detached: true, stdio: 'inherit' });
    child.unref();
    out(json ? JSON.stringify({ event: 'upgrade', op, successor: child.pid }) : `gensee: SIGHUP: successor pid ${child.pid} takes over ${op}`);
    why = await new Promise<'stop'>((resolve) => process.once('SIGTERM', () => resolve('stop')));
    leaving = true;
  }
  const lat = sup.answerLatency();
  await sup.stop({ leave: leaving });
  const hooks = values.flags.has('detach-on-exit') && !leaving ? 'detached' : leaving ? 'left pinned for the successor' : 'left pinned, failing closed';
  out(
    json
      ? JSON.stringify({ event: 'stopped', op, answered: lat?.count ?? 0, answer_us: lat ? { p50: lat.p50, p90: lat.p90, p99: lat.p99, p999: lat.p999, max: lat.max } : null, hooks })
      : `gensee: stopped; ${lat?.count ?? 0} answered on the socket` +
          (lat && lat.count ? ` (accept → answer sent: p50 ${lat.p50} us, p99 ${lat.p99} us, max ${lat.max} us)` : '') +
          (values.flags.has('detach-on-exit') && !leaving ? '; cgroup killed and seen empty, then hooks detached' : `; hooks ${hooks}`),
  );
  return 0;
}

/** tell the predecessor to leave and wait (bounded) until it is gone: one resolver per operation */
async function takeOver(pid: number, op: string): Promise<void> {
  const start = readStartTimeTicks(pid);
  if (start === null) return; // already gone
  process.kill(pid, 'SIGTERM');
  const t0 = Date.now();
  // a zombie has left: only its parent's reaping is pending
  while (identityAlive({ pid, start_time_ticks: start })) {
    if (Date.now() - t0 > 60_000) throw new GenseeError('E_OP_EXISTS', `operation ${op}: predecessor pid ${pid} did not leave within 60 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function version(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
