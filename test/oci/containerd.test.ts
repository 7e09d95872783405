// Real containerd (Debian's 1.6) + `ctr run --seccomp --seccomp-profile
// <the profile gensee profile prints>` against `gensee oci-listener`:
// containerd passes listenerPath and listenerMetadata through to runc like
// podman does. A containerd of this test's own (its root, state and socket
// under a temp dir, the native snapshotter: no mounts left), an image of
// busybox-static imported from an archive podman saves (nothing pulled), a
// namespace and a cgroup of its own; all removed at teardown, containerd
// stopped by its pid.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, execFile, execFileSync } from 'node:child_process';
import { tcpServer, uniqueName, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { faultLines } from '../helpers/supervisor';
import { findCgroup2Mount } from '../../src/cgroup';
import { cleanupOp, ncScript, onPath, removeContainerCgroups, startListener, tempRoot, writePolicy } from './runc-helpers';
import { makePodman, requirePodman } from './podman-helpers';

t.test('ctr run --seccomp-profile: leased after a pause, unleased refused, in the evidence', async (t) => {
  if (!requirePodman(t)) return;
  if (!onPath('containerd') || !onPath('ctr')) {
    if (process.env.GENSEE_REQUIRE_KERNEL === '1') t.fail('containerd test cannot run: containerd not installed (GENSEE_REQUIRE_KERNEL=1)');
    else t.plan(0, 'containerd not installed');
    return;
  }
  const leased = await tcpServer(t);
  const unleased = await tcpServer(t);
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const op = uniqueName('gs-ctr');
  cleanupOp(t, op);
  writePolicy(policyDir, op, leased.port);
  const l = await startListener(t, ['--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir]);

  // the image: podman imports the rootfs and saves it as an OCI archive
  const pod = makePodman(t, root);
  const archive = path.join(root, 'image.tar');
  execFileSync('podman', [...pod.args, 'save', '--format', 'oci-archive', '-o', archive, pod.image], { stdio: 'ignore', timeout: 120_000 });

  // containerd of our own
  const cd = path.join(root, 'ctrd');
  fs.mkdirSync(cd);
  const address = path.join(cd, 'c.sock');
  fs.writeFileSync(
    path.join(cd, 'config.toml'),
    `version = 2\nroot = "${cd}/root"\nstate = "${cd}/state"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "${address}"\n[ttrpc]\n  address = "${address}.ttrpc"\n`,
  );
  const daemon = spawn('containerd', ['--config', path.join(cd, 'config.toml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let daemonErr = '';
  daemon.stderr!.on('data', (d: Buffer) => (daemonErr = (daemonErr + d.toString()).slice(-4000)));
  const ns = uniqueName('gs-ctr');
  const ctr = (args: string[], timeoutMs = 120_000) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile('ctr', ['--address', address, '--namespace', ns, ...args], { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? null) : 0;
        resolve({ code: typeof code === 'number' ? code : null, out: stdout + stderr });
      });
    });
  const id = uniqueName('gsctr');
  const cgroupRel = uniqueName('gs-ctr-cg');
  t.teardown(async () => {
    await ctr(['task', 'kill', '-s', 'SIGKILL', id], 30_000);
    await ctr(['container', 'rm', id], 30_000);
    await ctr(['images', 'rm', pod.image], 30_000);
    await ctr(['namespaces', 'rm', ns], 30_000);
    if (daemon.exitCode === null && daemon.signalCode === null) {
      const gone = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      const timer = setTimeout(() => daemon.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    await removeContainerCgroups(cgroupRel);
    // the runc state root containerd made for our namespace
    fs.rmSync(path.join('/run/containerd/runc', ns), { recursive: true, force: true });
  });
  await waitFor(() => fs.existsSync(address), 60_000, 50).catch((e: Error) => {
    throw new Error(`containerd did not listen: ${e.message}: ${daemonErr}`);
  });
  const imp = await ctr(['images', 'import', '--snapshotter', 'native', archive]);
  t.equal(imp.code, 0, `ctr images import (${imp.out.trim()})`);
  const profile = path.join(root, 'gensee.json');
  fs.writeFileSync(profile, execFileSync(process.execPath, [GENSEE_BIN, 'profile', '--socket', sock, '--op', op, '--policy-dir', policyDir]));

  const r = await ctr([
    'run', '--rm', '--net-host', '--snapshotter', 'native', '--seccomp', '--seccomp-profile', profile, '--cgroup', `/${cgroupRel}`,
    pod.image, id, 'sh', '-c', ncScript([['leased', leased.port], ['unleased', unleased.port]]),
  ]);
  t.equal(r.code, 0, `ctr run exits 0 (${r.out.trim()})`);
  t.match(r.out, /^leased=0 /m, 'the leased connect succeeded inside the container');
  t.match(r.out, /^unleased=1 .*Permission denied/m, 'the unleased connect was refused inside the container (EACCES)');
  t.equal(leased.accepted(), 1);
  t.equal(unleased.accepted(), 0);
  const attached = await l.waitEvent((e) => e.event === 'attached' && e.op === op);
  t.match(attached, { container: id, cgroup: path.join(findCgroup2Mount(), cgroupRel) }, 'the container, in its cgroup');
  const stopped = await l.waitEvent((e) => e.event === 'stopped' && e.op === op);
  t.match(stopped, { why: 'tasks_gone', faults: 2, leases_installed: 1, denied: 1, paused: 2, hooks: 'detached' }, `the operation ended with its container (${JSON.stringify(stopped)})`);
  const lines = faultLines(stateDir, op);
  t.equal(lines.filter((x) => x.kind === 'fault' && (x as { fault: { source: string } }).fault.source === 'seccomp_notify').length, 2, 'both connects paused: seccomp_notify faults');
  const verify = execFileSync(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir]).toString();
  t.match(verify, /verify .*: ok/, 'gensee verify: the evidence chain is intact');
});
