// Real runc against `gensee oci-listener` (bin/gensee, a child process): a
// busybox-static bundle whose seccomp profile sends connect/sendto/sendmsg/
// sendmmsg to the listener (`linux.seccomp.listenerPath`, `listenerMetadata:
// "op=<unique>"`), sharing the host network namespace so it can reach this
// test's loopback servers. The leased port connects after a pause
// (retry_after_lease from seccomp_notify in faults.jsonl), the unleased one is
// refused inside the container, the evidence lands in the operation's dir.
// Everything is cleaned up even on failure: runc delete -f, the listener (by
// pid), cgroups in every hierarchy, pins, temp dirs.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, execFile, execFileSync } from 'node:child_process';
import { tcpServer, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { faultLines } from '../helpers/supervisor';
import { findCgroup2Mount } from '../../src/cgroup';
import { pinDirFor } from '../../src/bpffs';
import { cleanupOp, makeBundle, ncScript, requireRunc, runcRun, serveOp } from './runc-helpers';

t.test('runc container: leased port after a pause, unleased refused, evidence in the operation dir', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const unleased = await tcpServer(t); // listening: a refusal is gensee's, not a closed port
  const { root, stateDir, policyDir, sock, op, l } = await serveOp(t, leased.port);

  const b = makeBundle(t, root, 'a', {
    listenerPath: sock,
    metadata: `op=${op}`,
    script: ncScript([['leased', leased.port], ['unleased', unleased.port]]),
  });
  const r = await runcRun(b);
  t.equal(r.code, 0, `runc run exits 0 (${r.out.trim()})`);
  t.match(r.out, /^leased=0 /m, 'the leased connect succeeded inside the container');
  t.match(r.out, /^unleased=1 .*Permission denied/m, 'the unleased connect was refused inside the container (EACCES)');
  t.equal(leased.accepted(), 1, 'the leased server saw the connection');
  t.equal(unleased.accepted(), 0, 'the unleased server saw nothing');

  const attached = await l.waitEvent((e) => e.event === 'attached' && e.op === op);
  t.equal(attached.container, b.id);
  t.equal(attached.cgroup, path.join(findCgroup2Mount(), b.cgroupRel), 'the container cgroup v2 dir, from /proc/<pid>/cgroup on the discovered mount');
  t.equal(attached.policy, path.join(policyDir, `${op}.json`), 'the policy from --policy-dir');
  const stopped = await l.waitEvent((e) => e.event === 'stopped' && e.op === op);
  t.match(stopped, { why: 'tasks_gone', faults: 2, leases_installed: 1, denied: 1, paused: 2, hooks: 'detached' }, `the operation ended with its container (${JSON.stringify(stopped)})`);
  t.match(stopped, { anchor: /^faults\.jsonl:\d+:[0-9a-f]{64}$/ }, 'its summary carries the faults.jsonl anchor');

  // evidence
  const opDir = path.join(stateDir, 'network-operations', op);
  t.equal(attached.evidence, opDir);
  const lines = faultLines(stateDir, op);
  const faults = lines.filter((x) => x.kind === 'fault') as { fault_id: string; fault: { source: string; effect: { network: { port: number } } } }[];
  const resolutions = lines.filter((x) => x.kind === 'resolution') as { fault_id: string; resolution: { action: string; reason: string } }[];
  const answer = (port: number) => {
    const f = faults.find((x) => x.fault.effect.network.port === port);
    return { f, r: resolutions.find((x) => x.fault_id === f?.fault_id)?.resolution };
  };
  const a1 = answer(leased.port);
  t.equal(a1.f?.fault.source, 'seccomp_notify', 'the leased connect was paused: a seccomp_notify fault');
  t.match(a1.r, { action: 'retry_after_lease', reason: 'lease_installed' }, 'and retried after the lease');
  const a2 = answer(unleased.port);
  t.equal(a2.f?.fault.source, 'seccomp_notify');
  t.match(a2.r, { action: 'deny', reason: 'policy_denied' }, 'the unleased one was denied by policy');
  const rec = JSON.parse(fs.readFileSync(path.join(opDir, 'operation.json'), 'utf8')) as { state: string; cgroup: string; resolver: unknown };
  t.match(rec, { state: 'closed', cgroup: attached.cgroup, resolver: null }, 'operation record closed');
  t.notOk(fs.existsSync(pinDirFor(op)), 'hooks detached: the container is gone');
  const verify = execFileSync(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir]).toString();
  t.match(verify, /verify .*: ok/, 'gensee verify: the evidence chain is intact');
  t.equal(await l.stop(), 0, 'listener exits 0 on SIGTERM');
  t.notOk(fs.existsSync(sock), 'listener socket removed');
});

t.test('several containers at once; a bad one affects nobody; default op and deny-all', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const { root, stateDir, sock, op, l } = await serveOp(t, leased.port);

  const script = ncScript([['leased', leased.port]]);
  const good = makeBundle(t, root, 'g', { listenerPath: sock, metadata: `op=${op}`, script });
  const bad = makeBundle(t, root, 'b', { listenerPath: sock, metadata: 'op=../escape', script });
  const anon = makeBundle(t, root, 'n', { listenerPath: sock, script });
  const anonOp = `oci-${anon.id}`;
  cleanupOp(t, anonOp);
  const [rg, rb, rn] = await Promise.all([runcRun(good), runcRun(bad), runcRun(anon)]);

  t.match(rg.out, /^leased=0 /m, 'the good container connects after its lease');
  const refused = await l.waitEvent((e) => e.event === 'connection_refused' && e.container === bad.id);
  t.match(refused, { code: 'E_BAD_OP_ID' }, 'the bad metadata is refused with a clear code');
  t.match(rb.out, /^leased=1 .*Function not implemented/m, 'the refused container\'s connect fails (ENOSYS: its listener fd was closed), never succeeds');
  t.match(rn.out, /^leased=1 .*Permission denied/m, 'no op= in metadata: default op, deny-all policy: refused');
  const attachedAnon = await l.waitEvent((e) => e.event === 'attached' && e.container === anon.id);
  t.match(attachedAnon, { op: anonOp, policy: /deny-all/ }, 'the default operation id comes from the container id');
  t.equal(leased.accepted(), 1, 'only the good container reached the leased server');
  await l.waitEvent((e) => e.event === 'stopped' && e.op === op);
  await l.waitEvent((e) => e.event === 'stopped' && e.op === anonOp);
  t.equal(await l.stop(), 0);
  t.notOk(fs.existsSync(path.join(stateDir, 'network-operations', '..', 'escape')), 'nothing was created from the bad id');
});

t.test('SIGTERM with a container running: hooks stay pinned, later calls fail, nothing is let through', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const { root, stateDir, sock, op, l } = await serveOp(t, leased.port);
  // first connect under the listener; then wait for /tmp/go (created by the test) and connect again
  const script = `${ncScript([['first', leased.port]])}; while [ ! -e /tmp/go ]; do sleep 0.05; done; ${ncScript([['second', leased.port]])}`;
  const b = makeBundle(t, root, 's', { listenerPath: sock, metadata: `op=${op}`, script });
  const running = runcRun(b);
  await l.waitEvent((e) => e.event === 'resolved' && (e.resolution as { action: string }).action === 'retry_after_lease');
  await waitFor(() => leased.accepted() === 1, 5000);

  t.equal(await l.stop(), 0, 'listener exits 0 on SIGTERM');
  const stopped = l.events.find((e) => e.event === 'stopped' && e.op === op);
  t.match(stopped, { why: 'shutdown', hooks: 'pinned' }, 'the container still runs: its hooks stay pinned, failing closed');
  t.ok(fs.existsSync(pinDirFor(op)), 'pins are there');
  const rec = JSON.parse(fs.readFileSync(path.join(stateDir, 'network-operations', op, 'operation.json'), 'utf8')) as { state: string; resolver: unknown };
  t.match(rec, { state: 'active', resolver: null }, 'operation left open, no resolver');

  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  const r = await running;
  t.match(r.out, /^first=0 /m, 'the first connect went through while served');
  t.match(r.out, /^second=1 .*Function not implemented/m, 'after shutdown the paused connect fails (ENOSYS), even to the leased port');
  t.equal(leased.accepted(), 1, 'the second connect never reached the server');
});

t.test('runc exec into a served container joins its operation', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const { root, stateDir, sock, op, l } = await serveOp(t, leased.port);
  const b = makeBundle(t, root, 'e', { listenerPath: sock, metadata: `op=${op}`, script: 'while [ ! -e /tmp/go ]; do sleep 0.05; done; echo init-done' });
  const running = runcRun(b);
  await l.waitEvent((e) => e.event === 'attached' && e.op === op);
  await waitFor(() => {
    try {
      return (JSON.parse(execFileSync('runc', ['state', b.id]).toString()) as { status: string }).status === 'running';
    } catch {
      return false;
    }
  }, 10_000);

  const exec = await new Promise<string>((resolve) => {
    execFile('runc', ['exec', b.id, 'sh', '-c', ncScript([['exec', leased.port]])], { timeout: 20_000 }, (_e, so, se) => resolve(so + se));
  });
  t.match(exec, /^exec=0 /m, 'the exec process connects after its pause');
  const joined = await l.waitEvent((e) => e.event === 'joined' && e.op === op);
  t.equal(joined.container, b.id, 'its seccomp fd joined the running operation');
  const f = faultLines(stateDir, op).filter((x) => x.kind === 'resolution');
  t.equal(f.length, 1, 'one fault, resolved retry_after_lease');
  t.notOk(l.events.some((e) => e.event === 'stopped'), 'the exec process ending does not end the operation');

  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  const r = await running;
  t.match(r.out, /init-done/);
  const stopped = await l.waitEvent((e) => e.event === 'stopped' && e.op === op);
  t.match(stopped, { why: 'tasks_gone', faults: 1, leases_installed: 1, hooks: 'detached' }, 'ended with the container');
});

t.test('container gone: a process left in its cgroup is killed before the hooks come off', async (t) => {
  if (!requireRunc(t)) return;
  const { root, stateDir, sock, op, l } = await serveOp(t);
  const b = makeBundle(t, root, 'k', { listenerPath: sock, metadata: `op=${op}`, script: 'while [ ! -e /tmp/go ]; do sleep 0.05; done; echo init-done' });
  const running = runcRun(b);
  const attached = await l.waitEvent((e) => e.event === 'attached' && e.op === op);
  // a host process the container's filter never covered, moved into its cgroup
  const cg = attached.cgroup as string;
  const left = spawn('sh', ['-c', `echo $$ > "${path.join(cg, 'cgroup.procs')}" && exec sleep 300`], { stdio: 'ignore' });
  const leftExit = new Promise<NodeJS.Signals | null>((r) => left.once('exit', (_c, sig) => r(sig)));
  t.teardown(() => {
    if (left.exitCode === null && left.signalCode === null) left.kill('SIGKILL');
  });
  await waitFor(() => fs.readFileSync(path.join(cg, 'cgroup.procs'), 'utf8').split('\n').includes(String(left.pid)));

  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  t.match((await running).out, /init-done/);
  const stopped = await l.waitEvent((e) => e.event === 'stopped' && e.op === op);
  t.match(stopped, { why: 'tasks_gone', hooks: 'detached', cgroup_pids: [] }, 'ended with the container, nothing left in its cgroup');
  t.equal(await leftExit, 'SIGKILL', 'the left-behind process was killed (cgroup.kill)');
  t.notOk(fs.existsSync(pinDirFor(op)), 'then the hooks were detached');
  const rec = JSON.parse(fs.readFileSync(path.join(stateDir, 'network-operations', op, 'operation.json'), 'utf8')) as { state: string };
  t.equal(rec.state, 'closed', 'operation closed');
});
