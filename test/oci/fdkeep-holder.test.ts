// What still fails closed: the fd holder itself dies (kill -9). The running
// listener keeps serving with its own copies and says so (fdkeep_lost in
// the evidence, `gensee ls` and `gensee status`: holder LOST); a restart of
// the listener after that is today's behaviour: the container's calls fail
// with ENOSYS, closed, never let through.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { tcpServer, uniqueName, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { faultLines } from '../helpers/supervisor';
import { timeScaled } from '../helpers/time';
import { requireRunc, tempRoot, startListener, makeBundle, runcRun, writePolicy, cleanupOp, ncScript, TapT } from './runc-helpers';
import { FdKeep } from '../../src/oci/fdkeep';

function gensee(args: string[]): string {
  return execFileSync(process.execPath, [GENSEE_BIN, ...args]).toString();
}

t.test('the holder dies: the listener keeps serving, ls and status say LOST, a listener restart then fails closed (ENOSYS)', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const keep = path.join(root, 'keep', 'fdkeep.sock');
  const op = uniqueName('gs-fh');
  cleanupOp(t, op);
  writePolicy(policyDir, op, leased.port);
  let holderPid = 0;
  t.teardown(() => {
    try {
      if (holderPid) process.kill(holderPid, 'SIGKILL');
    } catch {
      /* gone, as the test wants */
    }
  });
  const args = ['--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir, '--fdkeep', keep];
  const l1 = await startListener(t, args);
  const gate = (n: string) => `while [ ! -e /tmp/${n} ]; do sleep 0.05; done`;
  const script = `${ncScript([['first', leased.port]])}; ${gate('go1')}; ${ncScript([['second', leased.port]])}; ${gate('go2')}; ${ncScript([['third', leased.port]])}`;
  const b = makeBundle(t, root, 'h', { listenerPath: sock, metadata: `op=${op}`, script });
  const running = runcRun(b, timeScaled(90_000));
  await waitFor(() => leased.accepted() === 1, 30_000);

  const ls0 = JSON.parse(gensee(['ls', '--json', '--state-dir', stateDir])) as { operations: { id: string; fd_holder: string | null }[] };
  t.equal(ls0.operations.find((o) => o.id === op)?.fd_holder, 'kept', 'ls: the holder keeps the operation\'s fds');

  const k = FdKeep.connect(keep);
  t.ok(k, 'the holder answers');
  holderPid = k!.ping().pid;
  k!.close();
  process.kill(holderPid, 'SIGKILL');
  await l1.waitEvent((e) => e.event === 'fdkeep_lost', 30_000);
  t.pass('the listener saw its holder go (fdkeep_lost)');

  await waitFor(() => faultLines(stateDir, op).some((x) => x.kind === 'fdkeep_lost'), 10_000);
  t.pass('faults.jsonl records fdkeep_lost');
  const ls = JSON.parse(gensee(['ls', '--json', '--state-dir', stateDir])) as { operations: { id: string; fd_holder: string | null }[] };
  t.equal(ls.operations.find((o) => o.id === op)?.fd_holder, 'lost', 'ls --json: fd_holder lost');
  const lsText = gensee(['ls', '--state-dir', stateDir]);
  t.match(lsText, new RegExp(`${op}.*LOST \\(restart: ENOSYS\\)`), 'ls: the FD HOLDER column says LOST');
  t.match(lsText, new RegExp(`${op}: its fd holder is gone: a restart of its listener leaves the container failing closed \\(ENOSYS\\)`), 'ls: and says what that means');
  const st = JSON.parse(gensee(['status', '--op', op, '--json', '--state-dir', stateDir])) as { fd_holder: string | null };
  t.equal(st.fd_holder, 'lost', 'status --json: fd_holder lost');
  t.match(gensee(['status', '--op', op, '--state-dir', stateDir]), /fd holder LOST: a restart of its OCI listener leaves the container failing closed \(ENOSYS\)/, 'status says so');

  // the running listener still serves the container
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go1'), '');
  await waitFor(() => leased.accepted() === 2, 30_000);
  t.pass('the running listener still serves the container (its own copy of the fd)');

  // a listener restart now: nobody keeps the fd, the container fails closed
  l1.child.kill('SIGKILL');
  await new Promise((r) => (l1.child.exitCode === null && l1.child.signalCode === null ? l1.child.once('exit', r) : r(null)));
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go2'), '');
  const r = await running;
  t.match(r.out, /^second=0 /m, 'the call after the holder died, before the listener did, succeeded');
  t.match(r.out, /^third=1 .*Function not implemented/m, `after the listener died too: ENOSYS, failing closed (${r.out.trim()})`);
  t.equal(leased.accepted(), 2, 'the failed call got nowhere');
});

/** bin/gensee oci-listener as a child with exactly these flags; its first JSON line */
async function listenerLine(t: TapT, args: string[]): Promise<{ child: ChildProcess; first: Record<string, unknown> | null; out: string }> {
  const child = spawn(process.execPath, [GENSEE_BIN, 'oci-listener', '--json', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(() => out.includes('\n') || child.exitCode !== null, 30_000);
  let first: Record<string, unknown> | null = null;
  try {
    first = JSON.parse(out.split('\n')[0]) as Record<string, unknown>;
  } catch {
    first = null;
  }
  return { child, first, out };
}

t.test('the holder is on by default; --no-fdkeep opts out; both flags are refused', async (t) => {
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const sock = path.join(root, 'd.sock');
  const keep = `${sock}.keep/fdkeep.sock`;
  t.teardown(() => {
    try {
      const k = FdKeep.connect(keep);
      if (!k) return;
      const { pid } = k.ping();
      k.close();
      process.kill(pid, 'SIGKILL');
    } catch {
      /* none */
    }
  });
  const on = await listenerLine(t, ['--socket', sock, '--state-dir', stateDir]);
  t.match(on.first, { event: 'listening', fdkeep: keep }, `with no flag, the listener keeps its fds with a holder beside its socket (${on.out.trim()})`);
  const k = FdKeep.connect(keep);
  t.ok(k, 'and that holder runs');
  k?.close();
  on.child.kill('SIGINT');
  await new Promise((r) => (on.child.exitCode === null ? on.child.once('exit', r) : r(null)));

  const off = await listenerLine(t, ['--socket', path.join(root, 'n.sock'), '--state-dir', stateDir, '--no-fdkeep']);
  t.match(off.first, { event: 'listening', fdkeep: null }, '--no-fdkeep: no holder');
  t.notOk(fs.existsSync(path.join(root, 'n.sock.keep')), 'none was started');
  off.child.kill('SIGTERM');
  await new Promise((r) => (off.child.exitCode === null ? off.child.once('exit', r) : r(null)));

  const both = await listenerLine(t, ['--socket', path.join(root, 'b.sock'), '--state-dir', stateDir, '--no-fdkeep', '--fdkeep', path.join(root, 'x', 'k.sock')]);
  await waitFor(() => both.child.exitCode !== null, 30_000);
  t.not(both.child.exitCode, 0, 'both flags: refused');
  t.match(both.out, /--fdkeep PATH and --no-fdkeep contradict each other/, 'with a clear message');
  t.notOk(fs.existsSync(path.join(root, 'b.sock')), 'and nothing was started');
});
