// gensee-exec --handle-fd on the real kernel: the executor's capability
// handle (a unix socket) reaches the tool as fd 3 and works both ways;
// nothing else the parent holds gets in; an inet socket, a file or a pipe is
// refused before anything runs; and the tool is still inside the cgroup,
// under the hooks.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { Duplex } from 'node:stream';
import { requireKernel, testCgroup, testOp, tcpServer, PROBE } from '../helpers/kernel';
import { pinDirFor } from '../../src/bpffs';
import { launchUnderBoundary, launcherPath, spawnInBoundary } from '../../src/pause/launch';
import { pauseAddon } from '../../src/pause/notifier';

interface Ran {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** stdout, stderr and the exit of a child spawned with stdio 1 and 2 piped */
function collect(c: ChildProcess): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  c.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    c.on('error', reject);
    c.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** CMD in node: what fd 3 is, then a round trip over it */
const ECHO_JS = [
  "const fs = require('fs');",
  "process.stdout.write('fd3=' + fs.readlinkSync('/proc/self/fd/3') + '\\n');",
  "fs.writeSync(3, 'ping from the tool');",
  'const b = Buffer.alloc(100);',
  "process.stdout.write('got=' + b.subarray(0, fs.readSync(3, b)).toString() + '\\n');",
].join('\n');

/** the fd number of a node socket or server (there is no public accessor) */
function fdOf(x: net.Socket | net.Server): number {
  const fd = (x as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('no fd');
  return fd;
}

t.test('handle fd', async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(launcherPath())) return t.fail('gensee-exec not built');
  const addon = pauseAddon();

  await t.test('a socketpair reaches CMD as fd 3 and works both ways', async (t) => {
    const cg = testCgroup(t, 'gs-hfa');
    for (const user of [undefined, 'nobody']) {
      const [mine, theirs] = addon.socketpair();
      const c = spawnInBoundary({
        cgroup: cg,
        argv: [process.execPath, '-e', ECHO_JS],
        handleFd: theirs,
        identity: user ? { kind: 'user', user } : undefined,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      addon.closeFd(theirs);
      const done = collect(c);
      try {
        const got = addon.recvFd(mine, 10_000);
        t.equal(got?.data.toString(), 'ping from the tool', `${user ?? 'userns root'}: the tool's write arrives`);
        fs.writeSync(mine, 'pong from the executor');
        const r = await done;
        t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
        t.match(r.stdout, /^fd3=socket:\[\d+\]$/m, 'fd 3 is the socket');
        t.match(r.stdout, /^got=pong from the executor$/m, "the executor's answer arrives");
        // every copy (gensee-exec's outer process and init too) is gone: EOF, not a timeout
        t.equal(addon.recvFd(mine, 2000), null, 'EOF once the tool is gone');
      } finally {
        addon.closeFd(mine);
      }
    }
  });

  await t.test("'pipe': node's unix stream socketpair, the executor's end at child.stdio[3]", async (t) => {
    const cg = testCgroup(t, 'gs-hfp');
    const c = spawnInBoundary({ cgroup: cg, argv: ['sh', '-c', 'echo hi >&3; read x <&3; echo "got:$x"'], handleFd: 'pipe', stdio: ['ignore', 'pipe', 'pipe'] });
    const h = c.stdio[3] as Duplex;
    let heard = '';
    h.on('data', (d: Buffer) => {
      heard += d.toString();
      h.write('pong\n');
    });
    const r = await collect(c);
    t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
    t.equal(heard, 'hi\n', 'the tool wrote on fd 3');
    t.match(r.stdout, /^got:pong$/m, 'and read the answer');
  });

  await t.test('pause mode (launchUnderBoundary): the notify socket on 3, the handle on 4, CMD gets the handle as 3', async (t) => {
    const { op, cgroup } = testOp(t, 'gs-hfn');
    const [mine, theirs] = addon.socketpair();
    const l = await launchUnderBoundary({
      cgroupPath: cgroup,
      pinDir: pinDirFor(op),
      argv: ['sh', '-c', 'ls /proc/$$/fd; echo hi >&3'],
      handleFd: theirs,
      stdio: ['ignore', 'pipe', 'pipe'],
      onFault: (f) => l.notifier?.respond(f.id, 'continue'),
    });
    addon.closeFd(theirs);
    try {
      const r = await collect(l.child);
      l.notifier?.close();
      t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
      t.same(r.stdout.trim().split(/\s+/), ['0', '1', '2', '3'], 'fds 0-3 only: the notify socket and listener are gone');
      t.equal(addon.recvFd(mine, 2000)?.data.toString(), 'hi\n', 'fd 3 is the handle, not the notify socket');
    } finally {
      addon.closeFd(mine);
    }
  });

  await t.test("no other fd of the parent's gets in", async (t) => {
    const cg = testCgroup(t, 'gs-hfx');
    const file = fs.openSync(path.join(t.testdir({ f: 'x' }), 'f'), 'r');
    t.teardown(() => fs.closeSync(file));
    const [mine, theirs] = addon.socketpair();
    t.teardown(() => addon.closeFd(mine));
    // the handle on 5, gensee-exec's fds 3, 4 and 6 an open file, a pipe and another unix socket
    const c = spawn(launcherPath(), ['--cgroup', cg, '--handle-fd', '5', '--', 'sh', '-c', 'ls /proc/$$/fd; echo hi >&3'], {
      stdio: ['ignore', 'pipe', 'pipe', file, 'pipe', theirs, 'pipe'],
    });
    addon.closeFd(theirs);
    const r = await collect(c);
    t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
    const lines = r.stdout.trim().split('\n');
    t.same(lines, ['0', '1', '2', '3'], 'CMD holds 0, 1, 2, 3 and nothing else');
    t.equal(addon.recvFd(mine, 2000)?.data.toString(), 'hi\n', "fd 3 is the handle (from 5), not the parent's file on 3");
  });

  await t.test('anything but a unix stream or seqpacket socket is refused', async (t) => {
    const cg = testCgroup(t, 'gs-hfr');
    const dir = t.testdir({ f: 'x' });
    const ran = path.join(dir, 'ran');
    const srv = await tcpServer(t);
    const tcp = net.connect(srv.port, '127.0.0.1');
    await new Promise<void>((res, rej) => tcp.once('connect', () => res()).once('error', rej));
    t.teardown(() => tcp.destroy());
    const listener = net.createServer();
    await new Promise<void>((res) => listener.listen(0, '127.0.0.1', () => res()));
    t.teardown(() => new Promise<void>((res) => listener.close(() => res())));
    const file = fs.openSync(path.join(dir, 'f'), 'r+');
    t.teardown(() => fs.closeSync(file));
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const pipe = fs.openSync(fifo, 'r+'); // O_RDWR: a pipe that does not wait for a peer
    t.teardown(() => fs.closeSync(pipe));

    const cases: [string, number, RegExp][] = [
      ['a connected TCP socket', fdOf(tcp), /^gensee-exec: --handle-fd 3: socket family 2, not AF_UNIX: /m],
      ['a listening TCP socket', fdOf(listener), /^gensee-exec: --handle-fd 3: socket family 2, not AF_UNIX: /m],
      ['a regular file', file, /^gensee-exec: --handle-fd 3: not an AF_UNIX socket: Socket operation on non-socket/m],
      ['a pipe', pipe, /^gensee-exec: --handle-fd 3: not an AF_UNIX socket: Socket operation on non-socket/m],
    ];
    for (const [name, fd, message] of cases) {
      const c = spawnInBoundary({ cgroup: cg, argv: ['touch', ran], handleFd: fd, stdio: ['ignore', 'pipe', 'pipe'] });
      const r = await collect(c);
      t.equal(r.code, 126, `${name}: exit 126`);
      t.match(r.stderr, message, `${name}: says why`);
      t.notOk(fs.existsSync(ran), `${name}: CMD never ran`);
    }
    const notOpen = await collect(spawn(launcherPath(), ['--cgroup', cg, '--handle-fd', '77', '--', 'touch', ran], { stdio: ['ignore', 'pipe', 'pipe'] }));
    t.equal(notOpen.code, 126, 'an fd that is not open: exit 126');
    t.match(notOpen.stderr, /^gensee-exec: --handle-fd 77: Bad file descriptor/m);
    const same = await collect(spawn(launcherPath(), ['--cgroup', cg, '--notify-fd', '3', '--handle-fd', '3', '--', 'touch', ran], { stdio: ['ignore', 'pipe', 'pipe'] }));
    t.equal(same.code, 126, 'the notify fd as the handle: exit 126');
    t.match(same.stderr, /--handle-fd and --notify-fd must be different fds/);
    t.notOk(fs.existsSync(ran), 'CMD never ran');
  });

  await t.test('with a handle, CMD is still inside the cgroup, under the hooks', async (t) => {
    const { cgroup } = testOp(t, 'gs-hfh'); // hooks attached, no lease: every connect is denied
    const srv = await tcpServer(t);
    const [mine, theirs] = addon.socketpair();
    t.teardown(() => addon.closeFd(mine));
    const script = `grep ^0:: /proc/self/cgroup; '${PROBE}' connect tcp 127.0.0.1 ${srv.port}; echo done >&3`;
    const c = spawnInBoundary({ cgroup, argv: ['sh', '-c', script], handleFd: theirs, stdio: ['ignore', 'pipe', 'pipe'] });
    addon.closeFd(theirs);
    const r = await collect(c);
    t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
    t.match(r.stdout, /^0::\/$/m, 'at the root of its cgroup namespace: the operation cgroup');
    t.match(r.stdout, /"result":"EPERM"/, 'an unleased connect meets the hook');
    t.equal(srv.accepted(), 0, 'nothing reached the server');
    t.equal(addon.recvFd(mine, 2000)?.data.toString(), 'done\n', 'the handle still works');
  });
});
