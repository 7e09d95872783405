// gensee-exec on the real kernel: every way out of the boundary the workload
// might try, each asserted. CMD runs as root (the hard case: uid 0 without
// capabilities still passes DAC on root-owned files) and as --user nobody.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, execFileSync, spawnSync } from 'node:child_process';
import { requireKernel, testOp, testCgroup, tcpServer, PROBE, uniqueName } from '../helpers/kernel';
import { findCgroup2Mount } from '../../src/cgroup';
import { pinDirFor } from '../../src/bpffs';
import { hooksAttached } from '../../src/dataplane';
import { launchUnderBoundary, launcherPath, LaunchOptions } from '../../src/pause/launch';
import { pauseAddon } from '../../src/pause/notifier';

interface Ran {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  pid: number;
}

/** Run argv under the launcher (pause mode: every fault is answered CONTINUE, so the hooks decide). */
async function run(o: Omit<LaunchOptions, 'stdio' | 'onFault'>): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const l = await launchUnderBoundary({
    ...o,
    stdio: ['ignore', 'pipe', 'pipe'],
    onFault: (f) => l.notifier?.respond(f.id, 'continue'),
  });
  l.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  l.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const [{ code, signal }] = await Promise.all([
    l.exited,
    new Promise((r) => l.child.once('close', r)),
  ]);
  l.notifier?.close();
  return { code, signal, stdout, stderr, pid: l.pid };
}

/** Run gensee-exec directly (reject mode), with extra inherited fds if asked. */
function runDirect(args: string[], extraFds = 0): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const stdio: ('ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe'];
    for (let i = 0; i < extraFds; i++) stdio.push('pipe');
    const c = spawn(launcherPath(), args, { stdio });
    let stdout = '';
    let stderr = '';
    c.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('error', reject);
    c.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, pid: c.pid ?? 0 }));
  });
}

function statusField(status: string, name: string): string | undefined {
  return new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1];
}

/** The operation's cgroup is a leaf under a parent the test owns, so "move to the parent" is a real option. */
function setup(t: Parameters<typeof testOp>[0]) {
  const { op, cgroup, dp } = testOp(t, 'gs-lx');
  const leaf = path.join(cgroup, 'leaf');
  fs.mkdirSync(leaf);
  return { op, parent: cgroup, cgroup: leaf, dp, pinDir: pinDirFor(op) };
}

function cgroupLine(pidOrSelf: string): string {
  return fs.readFileSync(`/proc/${pidOrSelf}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::')) ?? '';
}

const USERS: (string | undefined)[] = [undefined, 'nobody'];

t.test('launcher', async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(launcherPath())) return t.fail('gensee-exec not built');
  const mount = findCgroup2Mount();

  for (const user of USERS) {
    const who = user ?? 'root';
    await t.test(`${who}: no capabilities in any set, no_new_privs, seccomp filter`, async (t) => {
      const s = setup(t);
      const r = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, user, argv: ['cat', '/proc/self/status'] });
      t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
      for (const f of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) {
        t.equal(statusField(r.stdout, f), '0000000000000000', `${f} is empty`);
      }
      t.equal(statusField(r.stdout, 'NoNewPrivs'), '1', 'NoNewPrivs 1');
      t.equal(statusField(r.stdout, 'Seccomp'), '2', 'seccomp filter mode');
      const uid = statusField(r.stdout, 'Uid');
      t.equal(uid, user ? String(execFileSync('id', ['-u', user]).toString().trim()) : '0', 'uid');
    });

    await t.test(`${who}: cannot move itself out of the cgroup`, async (t) => {
      const s = setup(t);
      const script = [
        `for d in '${s.parent}' '${mount}'; do`,
        `  if echo $$ > "$d/cgroup.procs"; then echo "moved:$d"; else echo "refused:$d"; fi`,
        `  if echo 0 > "$d/cgroup.procs"; then echo "moved0:$d"; else echo "refused0:$d"; fi`,
        'done',
        'grep ^0:: /proc/self/cgroup',
      ].join('\n');
      const r = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, user, argv: ['sh', '-c', script] });
      t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
      t.notMatch(r.stdout, /moved/, 'no write to a cgroup.procs outside succeeded');
      t.match(r.stdout, new RegExp(`refused:${s.parent}`), 'parent refused');
      t.match(r.stdout, new RegExp(`refused:${mount}`), 'root refused');
      t.match(r.stderr, /Permission denied|Read-only|No such file/, 'refused: no such path in its view, or read-only');
      t.match(r.stdout, /^0::\/\n/m, 'still at the root of its cgroup namespace: the operation cgroup');
    });
  }

  await t.test('CMD is in the cgroup from its first instruction', async (t) => {
    const s = setup(t);
    const r = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: ['cat', '/proc/self/cgroup'] });
    t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
    t.match(r.stdout, /^0::\/\n/m, "exec'd image is at the root of its cgroup namespace");
    const ns = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: ['sh', '-c', 'ls /sys/fs/cgroup/unified/cgroup.procs /sys/fs/cgroup/cgroup.procs 2>/dev/null; cat $(ls /sys/fs/cgroup/unified/cgroup.procs /sys/fs/cgroup/cgroup.procs 2>/dev/null | head -1)'] });
    // 0: gensee-exec's outer process (in the cgroup, outside the pid namespace); 1: its init; 2: CMD
    t.match(ns.stdout, /cgroup\.procs\n0\n1\n2\n/, "the only cgroup2 in its view is the operation's, holding the launcher, its init and CMD");
    // and so its very first socket is made inside, under the hooks
    const srv = await tcpServer(t);
    const p = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: [PROBE, 'connect', 'tcp', '127.0.0.1', String(srv.port)] });
    t.match(p.stdout, /"result":"EPERM"/, 'an unleased connect meets the hook');
    t.equal(srv.accepted(), 0, 'nothing reached the server');
  });

  await t.test('cannot use bpf() or remove the pinned hooks', async (t) => {
    const s = setup(t);
    const link = path.join(s.pinDir, 'link_connect4');
    const script = [
      'bpftool prog list >/dev/null 2>&1; echo "bpftool:$?"',
      `bpftool map dump pinned '${path.join(s.pinDir, 'gs_leases_v1')}' >/dev/null 2>&1; echo "mapdump:$?"`,
      `rm '${link}' 2>/dev/null; echo "rm:$?"`,
      `test -e '${s.pinDir}'; echo "pins-visible:$?"`,
      `grep -c ' - bpf ' /proc/self/mountinfo; echo "bpffs"`,
      `mv '${link}' '${link}.x' 2>/dev/null; echo "mv:$?"`,
    ].join('\n');
    const r = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: ['sh', '-c', script] });
    t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
    t.notMatch(r.stdout, /bpftool:0/, 'bpftool prog list fails');
    t.notMatch(r.stdout, /mapdump:0/, 'opening the pinned lease map fails');
    t.notMatch(r.stdout, /rm:0/, 'unpinning a link fails');
    t.notMatch(r.stdout, /mv:0/, 'renaming a link fails');
    t.match(r.stdout, /pins-visible:1/, 'the pin directory has no name in its view');
    t.match(r.stdout, /^0\nbpffs/m, 'no bpf filesystem is mounted in its view');
    t.ok(fs.existsSync(link), 'link still pinned');
    t.ok(hooksAttached(s.op), 'hooks still attached');
    // the sanity check the other way: root outside can list programs
    t.equal(spawnSync('bpftool', ['prog', 'list'], { stdio: 'ignore' }).status, 0, 'bpftool works outside');
  });

  await t.test('cannot flush nftables', async (t) => {
    if (spawnSync('nft', ['--version'], { stdio: 'ignore' }).status !== 0) {
      if (process.env.GENSEE_REQUIRE_KERNEL === '1') return t.fail('nft is not installed');
      return t.plan(0, 'nft is not installed');
    }
    const s = setup(t);
    // a table of our own: other tests may change the rest of the ruleset concurrently
    const table = uniqueName('gs_t').replace(/-/g, '_');
    execFileSync('nft', ['add', 'table', 'inet', table]);
    execFileSync('nft', ['add', 'chain', 'inet', table, 'c']);
    t.teardown(() => spawnSync('nft', ['delete', 'table', 'inet', table]));
    const before = execFileSync('nft', ['list', 'table', 'inet', table]).toString();
    const r = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: ['nft', 'flush', 'ruleset'] });
    t.not(r.code, 0, 'nft flush ruleset fails');
    // no AF_NETLINK socket at all (the filter: EAFNOSUPPORT); were there one, the kernel would say EPERM
    t.match(r.stderr, /Address family not supported|Operation not permitted/, 'no netlink socket, or EPERM from netlink');
    const r2 = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: ['nft', 'delete', 'table', 'inet', table] });
    t.not(r2.code, 0, 'nft delete table fails');
    t.equal(execFileSync('nft', ['list', 'table', 'inet', table]).toString(), before, 'the table is unchanged');
  });

  await t.test('holds no fds but 0, 1, 2', async (t) => {
    const s = setup(t);
    const r = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: ['sh', '-c', 'ls /proc/$$/fd'] });
    t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
    t.same(r.stdout.trim().split(/\s+/), ['0', '1', '2'], 'pause mode: the notify socket and listener are gone');
    // fds 3 and 4 inherited from the parent (pipes) must not survive either
    const d = await runDirect(['--cgroup', s.cgroup, '--', 'sh', '-c', 'ls /proc/$$/fd'], 2);
    t.equal(d.code, 0, 'exit 0', { stderr: d.stderr });
    t.same(d.stdout.trim().split(/\s+/), ['0', '1', '2'], 'reject mode: inherited fds closed');
  });

  await t.test('read-only mounts: /sys, /proc/sys and --ro paths', async (t) => {
    const s = setup(t);
    const dir = t.testdir({ f: 'x' });
    const script = [
      'echo 1 > /proc/sys/net/ipv4/ip_forward 2>/dev/null; echo "sysctl:$?"',
      `echo y > '${dir}/f' 2>/dev/null; echo "ro:$?"`,
      `touch '${dir}/g' 2>/dev/null; echo "ro2:$?"`,
    ].join('\n');
    const r = await run({ cgroupPath: s.cgroup, pinDir: s.pinDir, readOnly: [dir], argv: ['sh', '-c', script] });
    t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
    t.match(r.stdout, /sysctl:[1-9]/, 'sysctl write refused');
    t.match(r.stdout, /ro:[1-9]/, '--ro file not writable');
    t.match(r.stdout, /ro2:[1-9]/, '--ro dir not writable');
    t.equal(fs.readFileSync(path.join(dir, 'f'), 'utf8'), 'x', 'file unchanged');
    // and none of it leaked into our own namespace
    fs.writeFileSync(path.join(dir, 'f'), 'z');
    t.equal(fs.readFileSync(path.join(dir, 'f'), 'utf8'), 'z', 'still writable outside');
    t.notMatch(cgroupLine('self'), /leaf/, 'this process is untouched');
  });

  await t.test('failures: clear message, exit 126 / 127', async (t) => {
    const cg = testCgroup(t, 'gs-lxf');
    const nf = await runDirect(['--cgroup', cg, '--', 'gs-no-such-command']);
    t.equal(nf.code, 127, 'command not found is 127');
    t.match(nf.stderr, /^gensee-exec: exec gs-no-such-command: No such file or directory/m);
    const notcg = await runDirect(['--cgroup', t.testdir(), '--', 'true']);
    t.equal(notcg.code, 126, 'not a cgroup2 dir is 126');
    t.match(notcg.stderr, /^gensee-exec: cgroup .*: not a cgroup2 directory: /m);
    const missing = await runDirect(['--cgroup', path.join(cg, 'nope'), '--', 'true']);
    t.equal(missing.code, 126);
    t.match(missing.stderr, /^gensee-exec: cgroup .*nope: No such file or directory/m);
    const nouser = await runDirect(['--cgroup', cg, '--user', 'gs-no-such-user', '--', 'true']);
    t.equal(nouser.code, 126);
    t.match(nouser.stderr, /^gensee-exec: user gs-no-such-user: /m);
    const usage = await runDirect(['--cgroup', cg]);
    t.equal(usage.code, 126);
    t.match(usage.stderr, /usage: gensee-exec/);
    const badfd = await runDirect(['--cgroup', cg, '--notify-fd', '77', '--', 'true']);
    t.equal(badfd.code, 126);
    t.match(badfd.stderr, /^gensee-exec: notify: fd 77: Bad file descriptor/m);
  });

  await t.test('launchUnderBoundary reports a launcher that fails before the hand-over', async (t) => {
    const s = setup(t);
    await t.rejects(
      launchUnderBoundary({ cgroupPath: t.testdir(), pinDir: s.pinDir, argv: ['true'], stdio: ['ignore', 'ignore', 'ignore'] }),
      { code: 'E_KERNEL', message: /gensee-exec ended before handing over the seccomp listener \(exit 126\)/ },
    );
    await t.rejects(
      launchUnderBoundary({ cgroupPath: s.cgroup, pinDir: t.testdir(), argv: ['true'] }),
      { code: 'E_UNKNOWN_OP', message: /no lease map pinned at/ },
      'no pinned lease map: refused before anything starts',
    );
    // CMD not found happens after the hand-over: the launch succeeds, CMD exits 127
    const l = await launchUnderBoundary({ cgroupPath: s.cgroup, pinDir: s.pinDir, argv: ['gs-no-such-command'], stdio: ['ignore', 'ignore', 'ignore'] });
    t.equal((await l.exited).code, 127);
    l.notifier?.close();
  });

  await t.test('the supervisor decides whether CMD starts', async (t) => {
    const cg = testCgroup(t, 'gs-lxa');
    const addon = pauseAddon();
    for (const [name, answer, expect] of [
      ['refusal byte', Buffer.from([0]), /notify: supervisor refused \(ack byte 0x00\)/],
      ['closed without ack', null, /notify: supervisor closed the socket before ack/],
    ] as const) {
      const [mine, theirs] = addon.socketpair();
      const ran = path.join(t.testdir(), 'ran');
      const c = spawn(launcherPath(), ['--cgroup', cg, '--notify-fd', '3', '--', 'touch', ran], {
        stdio: ['ignore', 'ignore', 'pipe', theirs],
      });
      addon.closeFd(theirs);
      let stderr = '';
      c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const got = addon.recvFd(mine, 5000);
      t.ok(got && got.fd >= 0, `${name}: listener received`);
      t.match(JSON.parse(got!.data.toString()), { gensee_exec: 1, pid: c.pid }, 'hand-over data names the pid');
      addon.closeFd(got!.fd);
      if (answer) fs.writeSync(mine, answer);
      addon.closeFd(mine);
      const code = await new Promise((r) => c.on('close', r));
      t.equal(code, 126, `${name}: exit 126`);
      t.match(stderr, expect);
      t.notOk(fs.existsSync(ran), `${name}: CMD never ran`);
    }
  });
});
