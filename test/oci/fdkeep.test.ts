// The listener restarts under running runc containers without breaking
// them: with --fdkeep, gensee-fdkeep keeps every seccomp listener fd (and
// the listening socket), so a container's connect made while no listener
// runs waits in the kernel and is answered by policy once the next listener
// is up (never ENOSYS); a peer that is not root in the holder's own
// namespaces gets nothing and is recorded; a container started while the
// listener is down waits in the kept socket's backlog and is served.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { tcpServer, uniqueName, waitFor, sleep, GENSEE_BIN } from '../helpers/kernel';
import { faultLines } from '../helpers/supervisor';
import { requireRunc, tempRoot, startListener, makeBundle, runcRun, writePolicy, cleanupOp, ncScript, TapT } from './runc-helpers';
import { FdKeep } from '../../src/oci/fdkeep';

/** the holder at p, killed by pid at teardown (it outlives the listeners by design) */
function killHolderAtTeardown(t: TapT, p: string): void {
  t.teardown(() => {
    try {
      const k = FdKeep.connect(p);
      if (!k) return;
      const { pid } = k.ping();
      k.close();
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
}

async function setup(t: TapT, leasedPort: number) {
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const keep = path.join(root, 'keep', 'fdkeep.sock');
  const op = uniqueName('gs-fk');
  cleanupOp(t, op);
  writePolicy(policyDir, op, leasedPort);
  // a deadline well above a restart on this machine (60 s: the most a policy allows): calls that waited longer are denied resolver_restarted
  const pol = JSON.parse(fs.readFileSync(path.join(policyDir, `${op}.json`), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(policyDir, `${op}.json`), JSON.stringify({ ...pol, fault_deadline_ms: 60_000 }), { mode: 0o600 });
  killHolderAtTeardown(t, keep);
  const args = ['--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir, '--fdkeep', keep];
  return { root, stateDir, policyDir, sock, keep, op, args };
}

t.test('listener SIGKILLed under a running container: its calls wait, then are answered by policy, never ENOSYS', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const unleased = await tcpServer(t);
  const { root, stateDir, sock, keep, op, args } = await setup(t, leased.port);
  const l1 = await startListener(t, args);
  const script = `${ncScript([['first', leased.port]])}; while [ ! -e /tmp/go ]; do sleep 0.05; done; ${ncScript([['second', leased.port], ['denied', unleased.port]])}`;
  const b = makeBundle(t, root, 'k', { listenerPath: sock, metadata: `op=${op}`, script });
  const running = runcRun(b, 60_000);
  await waitFor(() => leased.accepted() === 1, 30_000);
  t.ok(fs.existsSync(keep), 'the listener started the holder');

  l1.child.kill('SIGKILL');
  await new Promise((r) => l1.child.once('exit', r));
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  // the container's second connect is paused now, with no resolver anywhere
  await sleep(800);
  t.equal(leased.accepted(), 1, 'while no listener runs, the paused connect neither fails nor gets through');

  const l2 = await startListener(t, args);
  const resumed = await l2.waitEvent((e) => e.event === 'resumed' && e.op === op, 30_000);
  t.equal(resumed.fds, 1, 'the new listener took the container\'s seccomp fd from the holder');
  const r = await running;
  t.match(r.out, /^first=0 /m, 'the first connect went through under the first listener');
  t.match(r.out, /^second=0 /m, 'the connect made while the listener was dead succeeded once it was back (allowed)');
  t.match(r.out, /^denied=1 .*Permission denied/m, 'the denied destination is refused by policy (EACCES)');
  t.notMatch(r.out, /Function not implemented/, 'no call saw ENOSYS');
  t.equal(leased.accepted(), 2, 'the leased server saw both connects');
  t.equal(unleased.accepted(), 0, 'the denied server saw nothing');

  await l2.waitEvent((e) => e.event === 'stopped' && e.op === op, 30_000);
  const lines = faultLines(stateDir, op);
  const takeover = lines.find((x) => x.kind === 'resolver_takeover');
  t.match(takeover, { old_pid: l1.child.pid, new_pid: l2.child.pid, how: 'restart', kept_fds: 1 }, 'faults.jsonl says who took over from whom');
  const verify = execFileSync(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir]).toString();
  t.match(verify, /verify .*: ok/, 'gensee verify passes across the restart');
  t.equal(await l2.stop(), 0);
});

t.test('a connect in flight when the listener dies is restarted and answered, not left waiting', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const { root, stateDir, sock, op, args, policyDir } = await setup(t, leased.port);
  // a deadline long enough that the first listener is killed while it holds the call
  const pol = JSON.parse(fs.readFileSync(path.join(policyDir, `${op}.json`), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(policyDir, `${op}.json`), JSON.stringify({ ...pol, fault_deadline_ms: 20_000 }));
  const l1 = await startListener(t, args);
  const b = makeBundle(t, root, 'f', { listenerPath: sock, metadata: `op=${op}`, script: `while [ ! -e /tmp/go ]; do sleep 0.05; done; ${ncScript([['inflight', leased.port]])}` });
  const running = runcRun(b, 60_000);
  await l1.waitEvent((e) => e.event === 'attached' && e.op === op, 30_000);
  // stop the listener (SIGSTOP: its notifier has received the call, nothing answers it), then kill it
  l1.child.kill('SIGSTOP');
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  await sleep(500);
  l1.child.kill('SIGKILL');
  await new Promise((r) => l1.child.once('exit', r));
  const l2 = await startListener(t, args);
  const resumed = await l2.waitEvent((e) => e.event === 'resumed' && e.op === op, 30_000);
  const r = await running;
  t.match(r.out, /^inflight=0 /m, `the call survives its listener's death (${r.out.trim()}; restarted ${String(resumed.restarted_calls)})`);
  t.equal(leased.accepted(), 1);
  await l2.waitEvent((e) => e.event === 'stopped' && e.op === op, 30_000);
  const verify = execFileSync(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir]).toString();
  t.match(verify, /verify .*: ok/, 'gensee verify passes');
});

t.test('a container started while the listener is down waits in the kept socket and is served', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const { root, sock, op, args } = await setup(t, leased.port);
  const l1 = await startListener(t, args);
  l1.child.kill('SIGKILL');
  await new Promise((r) => l1.child.once('exit', r));
  const b = makeBundle(t, root, 'd', { listenerPath: sock, metadata: `op=${op}`, script: ncScript([['late', leased.port]]) });
  const running = runcRun(b, 60_000);
  await sleep(800);
  t.equal(leased.accepted(), 0, 'nothing gets through while no listener runs');
  const l2 = await startListener(t, args);
  const r = await running;
  t.equal(r.code, 0, `runc run succeeds: its hand-off went into the kept socket's backlog (${r.out.trim()})`);
  t.match(r.out, /^late=0 /m, 'the container\'s connect is served once the listener is back');
  await l2.waitEvent((e) => e.event === 'attached' && e.op === op, 30_000);
  t.equal(await l2.stop(), 0);
});

/** try to take fds from the holder as another process; what it got */
function forgedClient(keep: string, prefix: string[]): Promise<string> {
  const py = `
import socket, array, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except Exception as e:
    print("connect-failed", type(e).__name__); sys.exit(0)
fds = 0
msg = b""
try:
    s.send(b"LIST")
    while True:
        msg, anc, flags, addr = s.recvmsg(65536, socket.CMSG_SPACE(16))
        for lvl, typ, data in anc:
            if typ == socket.SCM_RIGHTS: fds += len(data) // 4
        if not msg: break
        if msg.startswith(b"END"): break
except (ConnectionResetError, BrokenPipeError):
    msg = b""
print("fds", fds, "eof" if not msg else "answered")
`;
  return new Promise((resolve) => {
    const c = spawn(prefix[0], [...prefix.slice(1), 'python3', '-c', py, keep], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    c.once('exit', () => resolve(out.trim()));
  });
}

t.test('a forged resolver gets nothing from the holder and is recorded', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const { root, stateDir, sock, keep, op, args } = await setup(t, leased.port);
  const l1 = await startListener(t, args);
  const b = makeBundle(t, root, 'z', { listenerPath: sock, metadata: `op=${op}`, script: `while [ ! -e /tmp/go ]; do sleep 0.05; done; ${ncScript([['after', leased.port]])}` });
  const running = runcRun(b, 60_000);
  await l1.waitEvent((e) => e.event === 'attached' && e.op === op, 30_000);

  // root itself, as a control: admitted, and it does get the fds
  const control = await forgedClient(keep, ['env']);
  t.match(control, /^fds [1-9]\d* answered$/, `root in the holder's namespaces is answered with fds (${control})`);
  // another uid, given the right to get past the 0700 directory
  const otherUid = await forgedClient(keep, ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups', '--inh-caps', '+dac_override', '--ambient-caps', '+dac_override']);
  t.equal(otherUid, 'fds 0 eof', 'uid 65534 (past the directory mode) gets no fd, no answer');
  // root in another network namespace
  const otherNet = await forgedClient(keep, ['unshare', '--net']);
  t.equal(otherNet, 'fds 0 eof', 'root in another network namespace gets no fd, no answer');
  // root in another user namespace
  const otherUser = await forgedClient(keep, ['unshare', '--user', '--map-root-user']);
  t.match(otherUser, /^(fds 0 eof|connect-failed .*)$/, `root of another user namespace gets nothing (${otherUser})`);

  // the next listener records the refusals in the operation's evidence
  l1.child.kill('SIGKILL');
  await new Promise((r) => l1.child.once('exit', r));
  const l2 = await startListener(t, args);
  await l2.waitEvent((e) => e.event === 'resumed' && e.op === op, 30_000);
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  const r = await running;
  t.match(r.out, /^after=0 /m, 'the container is served after the restart');
  await l2.waitEvent((e) => e.event === 'stopped' && e.op === op, 30_000);
  const refused = faultLines(stateDir, op).filter((x) => x.kind === 'fdkeep_refused') as { uid: number; why: string }[];
  t.ok(refused.some((x) => x.uid === 65534 && /uid 65534/.test(x.why)), 'the other uid is in faults.jsonl as fdkeep_refused');
  t.ok(refused.some((x) => x.uid === 0 && /net namespace/.test(x.why)), 'so is root of the other network namespace');
  t.ok(refused.length >= 3, `every refused peer is recorded (${refused.length})`);
});

t.test('gensee upgrade: a successor takes the fds over, the old one leaves, no call breaks', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const unleased = await tcpServer(t);
  const { root, stateDir, sock, op, args } = await setup(t, leased.port);
  const l1 = await startListener(t, args);
  // a steady stream of calls: leased (fast path after the first) and denied (a fault each time)
  const loop =
    `i=0; while [ ! -e /tmp/stop ] && [ $i -lt 2000 ]; do ` +
    `busybox nc 127.0.0.1 ${leased.port} </dev/null >/dev/null 2>/tmp/e || echo "bad-leased $(cat /tmp/e)"; ` +
    `busybox nc 127.0.0.1 ${unleased.port} </dev/null >/dev/null 2>/tmp/e; echo "denied $? $(cat /tmp/e)"; ` +
    `i=$((i+1)); sleep 0.02; done; echo done $i`;
  const b = makeBundle(t, root, 'u', { listenerPath: sock, metadata: `op=${op}`, script: loop });
  const running = runcRun(b, 120_000);
  await l1.waitEvent((e) => e.event === 'attached' && e.op === op, 30_000);
  await waitFor(() => leased.accepted() >= 3, 30_000);
  let successor = 0;
  t.teardown(() => {
    if (successor) {
      try {
        process.kill(successor, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
  });
  // asynchronously: this process must reap the old listener (its parent) meanwhile
  const up = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [GENSEE_BIN, 'upgrade', '--socket', sock, '--json'], { timeout: 90_000 }, (e, so, se) => (e ? reject(new Error(`${e.message} ${se}`)) : resolve(so))),
  );
  const upgraded = JSON.parse(up.trim().split('\n').pop()!) as { old_pid: number; new_pid: number; ms: number };
  successor = upgraded.new_pid;
  t.equal(upgraded.old_pid, l1.child.pid, 'the old listener was told to upgrade');
  t.not(upgraded.new_pid, l1.child.pid, `a new listener took over (${upgraded.ms} ms)`);
  t.ok(l1.child.exitCode !== null || l1.child.signalCode !== null || (await waitFor(() => l1.child.exitCode !== null, 10_000)), 'the old one exited');
  const before = leased.accepted();
  await waitFor(() => leased.accepted() >= before + 3, 30_000);
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'stop'), '');
  const r = await running;
  const lines = r.out.split('\n');
  const denied = lines.filter((x) => x.startsWith('denied '));
  t.ok(denied.length >= 5, `the container kept calling across the upgrade (${denied.length} denied calls)`);
  t.same(lines.filter((x) => x.startsWith('bad-leased')), [], 'every leased connect succeeded');
  t.same(denied.filter((x) => !/^denied 1 .*Permission denied/.test(x)), [], 'every denied connect got EACCES from policy: no ENOSYS, nothing let through');
  t.equal(unleased.accepted(), 0, 'the denied server saw nothing');
  await waitFor(() => faultLines(stateDir, op).some((x) => x.kind === 'resolver_takeover'), 10_000);
  const take = faultLines(stateDir, op).find((x) => x.kind === 'resolver_takeover');
  t.match(take, { how: 'takeover', old_pid: l1.child.pid, new_pid: upgraded.new_pid, version: /\d+\.\d+/ }, 'faults.jsonl: resolver_takeover with old and new pid and the version');
  await waitFor(() => JSON.parse(fs.readFileSync(path.join(stateDir, 'network-operations', op, 'operation.json'), 'utf8')).state === 'closed', 30_000);
  const verify = execFileSync(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir]).toString();
  t.match(verify, /verify .*: ok/, 'gensee verify passes across the takeover');
});

t.test('under systemd: fds go to the fd store (FDSTORE=1) and come back as LISTEN_FDS', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const op = uniqueName('gs-fs');
  cleanupOp(t, op);
  writePolicy(policyDir, op, leased.port);
  const notify = path.join(root, 'notify.sock');
  // no --fdkeep: systemd's store alone
  const py = spawn('python3', [path.join(__dirname, '..', '..', '..', 'test', 'oci', 'mini-systemd.py'), notify, process.execPath, GENSEE_BIN, 'oci-listener', '--json', '--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: Record<string, unknown>[] = [];
  let buf = '';
  let err = '';
  py.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      try {
        events.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
      } catch {
        /* not an event */
      }
      buf = buf.slice(i + 1);
    }
  });
  py.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const pids: number[] = [];
  t.teardown(() => {
    for (const p of pids) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (py.exitCode === null) py.kill('SIGKILL');
  });
  const ev = (pred: (e: Record<string, unknown>) => boolean) => waitFor(() => events.find(pred), 20_000);
  const first = await ev((e) => e.event === 'listening');
  pids.push(first.pid as number);
  const b = makeBundle(t, root, 's', { listenerPath: sock, metadata: `op=${op}`, script: `${ncScript([['first', leased.port]])}; while [ ! -e /tmp/go ]; do sleep 0.05; done; ${ncScript([['second', leased.port]])}` });
  const running = runcRun(b, 60_000);
  await waitFor(() => leased.accepted() === 1, 30_000);
  process.kill(first.pid as number, 'SIGKILL');
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  const second = await ev((e) => e.event === 'listening' && e.pid !== first.pid);
  pids.push(second.pid as number);
  t.match(err, /restarting with 2 fds: socket\.\d+:gs-fs/, 'the store held the listening socket and the container\'s seccomp fd');
  const resumed = await ev((e) => e.event === 'resumed' && e.op === op);
  t.equal(resumed.fds, 1, 'the restarted listener serves the seccomp fd it got as LISTEN_FDS');
  const r = await running;
  t.match(r.out, /^second=0 /m, `the connect made while the listener was dead succeeded (${r.out.trim()})`);
  t.notMatch(r.out, /Function not implemented/, 'never ENOSYS');
  await ev((e) => e.event === 'stopped' && e.op === op);
  t.ok(faultLines(stateDir, op).some((x) => x.kind === 'resolver_takeover' && x.old_pid === first.pid), 'resolver_takeover recorded');
});
