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
import { parseListen } from '../events/stream';
import { hostUpstream } from '../dns/stub';
import { parseDnsListen, parseUpstream } from '../dns/service';
import { parse, requireOp, out, liveOut } from './args';
import { GenseeError } from '../errors';
import { Supervisor, loadPolicyFile } from '../supervisor';
import { resolveStateDir, updateOperation } from '../state/operation';
import { resolveCgroupPath } from '../cgroup';
import { applyExistingCgroupLimits, missingPolicyLimits, unappliedLimits } from '../resources';
import { formatResolved, formatRefused } from './live';

export const usage = 'usage: gensee supervise --op ID --cgroup PATH --policy FILE [--detach-on-exit] [--nft] [--json] [--owner UID] [--peer ADDR]... [--listen 127.0.0.1:PORT] [--dns-listen ADDR[:PORT] [--dns-upstream [tcp:]ADDR[:PORT]]]';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    op: { type: 'string' },
    cgroup: { type: 'string' },
    policy: { type: 'string' },
    owner: { type: 'string' },
    peer: { type: 'string', multiple: true },
    listen: { type: 'string' },
    'dns-listen': { type: 'string' },
    'dns-upstream': { type: 'string' },
    'detach-on-exit': { type: 'boolean' },
    nft: { type: 'boolean' },
    json: { type: 'boolean' },
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
  const policy = await loadPolicyFile(values.policy);
  const json = values.flags.has('json');
  const cgroup = resolveCgroupPath(values.cgroup);
  const resources = applyExistingCgroupLimits({ cgroup, limits: policy.policy.limits });
  const missing = missingPolicyLimits(resources);
  if (missing.length) throw new GenseeError('E_KERNEL', `operation ${op}: the policy's limits cannot be applied to ${cgroup}: ${missing.join('; ')}`);
  for (const w of unappliedLimits(resources)) process.stderr.write(`gensee: warning: operation ${op}: ${w}\n`);
  const sup = await Supervisor.start({
    stateDir: resolveStateDir(values['state-dir']),
    op,
    cgroup: values.cgroup,
    policy,
    ownerUid: owner,
    peers: values.lists.peer,
    detachOnExit: values.flags.has('detach-on-exit'),
    nft: values.flags.has('nft'),
    listen: values.listen !== undefined ? parseListen(values.listen) : undefined,
    // the container's resolv.conf names --dns-listen (the operator sets it: docs/design.md "Names in policy")
    dns: values['dns-listen'] !== undefined
      ? { listen: parseDnsListen(values['dns-listen']), upstream: values['dns-upstream'] !== undefined ? parseUpstream(values['dns-upstream']) : hostUpstream() }
      : undefined,
  });
  await updateOperation(sup.stateDir, op, { resources });
  sup.resolver.on('resolved', (e) => liveOut(formatResolved(e, json)));
  sup.resolver.on('refused', (e) => liveOut(formatRefused(e, json)));
  const rc = sup.reconciled;
  out(
    json
      ? JSON.stringify({ event: 'serving', op, socket: sup.socketPath, generation: sup.resolver.network.generation, reconciled: rc })
      : `gensee: supervising ${op} (cgroup ${sup.record.cgroup}) on ${sup.socketPath}; generation ${sup.resolver.network.generation}; ` +
          `reconciled: ${rc.removed.length} removed, ${rc.reinstalled.length} re-installed, ${rc.dropped.length} dropped`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  const lat = sup.answerLatency();
  await sup.stop();
  const hooks = values.flags.has('detach-on-exit') ? 'detached' : 'left pinned, failing closed';
  out(
    json
      ? JSON.stringify({ event: 'stopped', op, answered: lat?.count ?? 0, answer_us: lat ? { p50: lat.p50, p90: lat.p90, p99: lat.p99, p999: lat.p999, max: lat.max } : null, hooks })
      : `gensee: stopped; ${lat?.count ?? 0} answered on the socket` +
          (lat && lat.count ? ` (accept → answer sent: p50 ${lat.p50} us, p99 ${lat.p99} us, max ${lat.max} us)` : '') +
          (values.flags.has('detach-on-exit') ? '; cgroup killed and seen empty, then hooks detached' : `; hooks ${hooks}`),
  );
  return 0;
}
