// Real podman against `gensee oci-listener`: `podman --runtime runc run
// --security-opt seccomp=<the profile gensee profile prints>` hands the
// container's seccomp fd to the listener (podman 4.3 passes listenerPath and
// listenerMetadata through to runc's config.json). The leased destination
// connects after a pause, the other is refused inside the container, both
// are in the evidence of the container's operation. The image is
// busybox-static imported with `podman import`; podman's storage, the image,
// the containers and their cgroups are this test's and removed at teardown.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { tcpServer, uniqueName, GENSEE_BIN } from '../helpers/kernel';
import { faultLines } from '../helpers/supervisor';
import { findCgroup2Mount } from '../../src/cgroup';
import { pinDirFor } from '../../src/bpffs';
import { defaultOpId } from '../../src/oci/state';
import { cleanupOp, ncScript, startListener, tempRoot, writePolicy } from './runc-helpers';
import { makePodman, requirePodman } from './podman-helpers';

/** `gensee profile ...` as a file under root */
function profile(root: string, name: string, args: string[]): string {
  const file = path.join(root, `${name}.json`);
  fs.writeFileSync(file, execFileSync(process.execPath, [GENSEE_BIN, 'profile', ...args]));
  return file;
}

type Fault = { fault_id: string; fault: { source: string; effect: { network: { port: number } } } };
type Resolution = { fault_id: string; resolution: { action: string; reason: string } };

function answers(stateDir: string, op: string, port: number) {
  const lines = faultLines(stateDir, op);
  const f = (lines.filter((x) => x.kind === 'fault') as Fault[]).find((x) => x.fault.effect.network.port === port);
  const r = (lines.filter((x) => x.kind === 'resolution') as Resolution[]).find((x) => x.fault_id === f?.fault_id);
  return { source: f?.fault.source, resolution: r?.resolution };
}

t.test('podman --runtime runc with the gensee profile: leased after a pause, unleased refused, in the evidence', async (t) => {
  if (!requirePodman(t)) return;
  const leased = await tcpServer(t);
  const unleased = await tcpServer(t);
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const op = uniqueName('gs-pod');
  cleanupOp(t, op);
  writePolicy(policyDir, op, leased.port);
  const l = await startListener(t, ['--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir]);
  const pod = makePodman(t, root);
  // on containers-common's default profile: the rest of the container's calls stay filtered as podman would
  const prof = profile(root, 'gensee', ['--socket', sock, '--op', op, '--policy-dir', policyDir]);

  const r = await pod.run(['--security-opt', `seccomp=${prof}`], ['sh', '-c', ncScript([['leased', leased.port], ['unleased', unleased.port]])]);
  t.equal(r.code, 0, `podman run exits 0 (${r.out.trim()})`);
  t.match(r.out, /^leased=0 /m, 'the leased connect succeeded inside the container');
  t.match(r.out, /^unleased=1 .*Permission denied/m, 'the unleased connect was refused inside the container (EACCES)');
  t.equal(leased.accepted(), 1, 'the leased server saw the connection');
  t.equal(unleased.accepted(), 0, 'the unleased server saw nothing');

  const attached = await l.waitEvent((e) => e.event === 'attached' && e.op === op);
  t.match(attached.container, /^[0-9a-f]{64}$/, "podman's container id");
  t.ok(String(attached.cgroup).startsWith(path.join(findCgroup2Mount(), pod.cgroupParent) + '/'), `the container's own cgroup v2 dir under its --cgroup-parent (${attached.cgroup})`);
  const stopped = await l.waitEvent((e) => e.event === 'stopped' && e.op === op);
  t.match(stopped, { why: 'tasks_gone', faults: 2, leases_installed: 1, denied: 1, paused: 2, hooks: 'detached' }, `the operation ended with its container (${JSON.stringify(stopped)})`);
  t.match(answers(stateDir, op, leased.port), { source: 'seccomp_notify', resolution: { action: 'retry_after_lease', reason: 'lease_installed' } }, 'leased: paused, then retried after the lease');
  t.match(answers(stateDir, op, unleased.port), { source: 'seccomp_notify', resolution: { action: 'deny', reason: 'policy_denied' } }, 'unleased: paused, denied by policy');
  const verify = execFileSync(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir]).toString();
  t.match(verify, /verify .*: ok/, 'gensee verify: the evidence chain is intact');
  t.notOk(fs.existsSync(pinDirFor(op)), 'hooks detached: the container is gone');
});

t.test('podman, profile by policy name: two containers at once, each its own operation', async (t) => {
  if (!requirePodman(t)) return;
  const leased = await tcpServer(t);
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const name = uniqueName('web');
  writePolicy(policyDir, name, leased.port);
  const l = await startListener(t, ['--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir]);
  const pod = makePodman(t, root);
  const prof = profile(root, 'web', ['--socket', sock, '--policy', name, '--policy-dir', policyDir]);
  t.equal((JSON.parse(fs.readFileSync(prof, 'utf8')) as { listenerMetadata: string }).listenerMetadata, `policy=${name}`);

  // both hold their connection open until the other has connected too: they overlap
  const script = `${ncScript([['leased', leased.port]])}; sleep 1`;
  const [a, b] = await Promise.all([pod.run(['--security-opt', `seccomp=${prof}`], ['sh', '-c', script]), pod.run(['--security-opt', `seccomp=${prof}`], ['sh', '-c', script])]);
  t.match(a.out, /^leased=0 /m, `container a connected (${a.out.trim()})`);
  t.match(b.out, /^leased=0 /m, `container b connected (${b.out.trim()})`);
  const att = await Promise.all([0, 1].map((i) => l.waitEvent((e) => e.event === 'attached' && (l.events.filter((x) => x.event === 'attached').length > i))));
  const ops = l.events.filter((e) => e.event === 'attached').map((e) => e.op as string);
  t.equal(new Set(ops).size, 2, `two operations (${ops.join(', ')})`);
  for (const o of ops) cleanupOp(t, o);
  for (const e of l.events.filter((x) => x.event === 'attached')) {
    t.equal(e.op, defaultOpId(e.container as string), `each named after its container (${e.op as string} for ${e.container as string})`);
    t.equal(e.policy, path.join(policyDir, `${name}.json`), `the policy named in the profile (${name}.json)`);
  }
  t.ok(att.length === 2);
  for (const o of ops) {
    const s = await l.waitEvent((e) => e.event === 'stopped' && e.op === o);
    t.match(s, { why: 'tasks_gone', leases_installed: 1, hooks: 'detached' }, `${o}: its own lease, ended with its container`);
  }
});
