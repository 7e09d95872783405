// fd passing primitives: the gensee-exec hand-over (SOCK_SEQPACKET pair) and
// the OCI runtime listener shape (runc connects to a SOCK_STREAM unix socket,
// sends the container state JSON with the notify fd attached, and closes).
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pauseAddon } from '../../src/pause/notifier';

const addon = pauseAddon();

function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

/** a pipe's two ends as raw fds (the read end is what we pass around) */
function pipeFds(t: { teardown(fn: () => void): void }): { r: number; w: number } {
  const [r, w] = addon.socketpair(); // any fd will do; a seqpacket pair is handy
  t.teardown(() => {
    for (const fd of [r, w]) {
      try {
        addon.closeFd(fd);
      } catch {
        /* already closed */
      }
    }
  });
  return { r, w };
}

t.test('socketpair + recvFd: one fd and the data', async (t) => {
  const [a, b] = addon.socketpair();
  t.teardown(() => [a, b].forEach((fd) => addon.closeFd(fd)));
  const p = pipeFds(t);
  t.equal(addon.sendFd(a, [p.w], Buffer.from('{"x":1}')), 7);
  const got = addon.recvFd(b, 1000);
  t.ok(got && got.fd >= 0 && got.fd !== p.w, 'a new fd arrived');
  t.equal(got!.data.toString(), '{"x":1}');
  // it is the same socket: a message written through it arrives at p.r
  addon.sendFd(got!.fd, [], Buffer.from('ping'));
  t.equal(addon.recvFd(p.r, 1000)!.data.toString(), 'ping', 'the received fd works');
  t.match(fs.readlinkSync(`/proc/self/fd/${got!.fd}`), /^socket:/);
  addon.closeFd(got!.fd);
});

t.test('unexpected extra fds are closed, not leaked', async (t) => {
  const [a, b] = addon.socketpair();
  t.teardown(() => [a, b].forEach((fd) => addon.closeFd(fd)));
  const p = pipeFds(t);
  const before = openFds();
  addon.sendFd(a, [p.r, p.w, p.r], Buffer.from('three'));
  const got = addon.recvFd(b, 1000)!;
  t.ok(got.fd >= 0);
  t.equal(openFds(), before + 1, 'exactly one new fd in this process');
  addon.closeFd(got.fd);
  t.equal(openFds(), before);
});

t.test('timeouts, EAGAIN, EOF and a message without an fd', async (t) => {
  const [a, b] = addon.socketpair();
  t.teardown(() => addon.closeFd(b));
  t.throws(() => addon.recvFd(b, 0), { code: 'EAGAIN', syscall: 'recvmsg' }, 'nothing there, no waiting: EAGAIN');
  const t0 = Date.now();
  t.throws(() => addon.recvFd(b, 50), { code: 'ETIMEDOUT', syscall: 'recvmsg' }, 'nothing within the timeout: ETIMEDOUT');
  t.ok(Date.now() - t0 >= 45, 'waited the timeout');
  addon.sendFd(a, [], Buffer.from('no fd'));
  t.same(addon.recvFd(b, 1000), { fd: -1, data: Buffer.from('no fd') }, 'fd -1 when none came');
  addon.closeFd(a);
  t.equal(addon.recvFd(b, 1000), null, 'peer closed: null');
  t.throws(() => addon.recvFd(9999, 0), { code: 'EBADF' }, 'errno exception naming the call');
  t.throws(() => addon.closeFd(9999), { code: 'EBADF', syscall: 'close' });
});

t.test('OCI listener shape: unixListen → accept → recvFd(untilEof)', async (t) => {
  // sun_path holds 107 bytes: tap's fixture paths are too long for a socket
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-fdp-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sockPath = path.join(dir, 'listener.sock');
  const lfd = addon.unixListen(sockPath);
  t.teardown(() => addon.closeFd(lfd));
  t.equal(addon.accept(lfd), null, 'nobody waiting: null');

  const accepted = new Promise<number>((resolve, reject) => {
    const w = new addon.FdWatcher(lfd, (err) => {
      if (err) return reject(err);
      const c = addon.accept(lfd);
      if (c === null) return;
      w.stop();
      resolve(c);
    });
  });
  const client = net.createConnection(sockPath);
  await new Promise<void>((r) => client.once('connect', () => r()));
  const conn = await accepted;
  t.teardown(() => addon.closeFd(conn));

  // runc: one sendmsg with the state JSON and the fd, then close; the state
  // can be larger than one read
  const state = JSON.stringify({ ociVersion: '1.0.2', fds: ['seccompFd'], pid: 1, metadata: 'op=x', pad: 'y'.repeat(10000) });
  const p = pipeFds(t);
  const clientFd = (client as unknown as { _handle: { fd: number } })._handle.fd;
  addon.sendFd(clientFd, [p.w], Buffer.from(state));
  client.end();

  const readable = new Promise<void>((resolve, reject) => {
    const w = new addon.FdWatcher(conn, (err) => {
      w.stop();
      if (err) reject(err);
      else resolve();
    });
  });
  await readable;
  const got = addon.recvFd(conn, 2000, { untilEof: true });
  t.ok(got && got.fd >= 0, 'fd received');
  t.equal(got!.data.toString(), state, 'the whole state JSON, read to EOF');
  addon.closeFd(got!.fd);
  t.throws(() => addon.unixListen(sockPath), { code: 'EADDRINUSE', syscall: 'bind' }, 'an existing path is refused');
  t.equal(addon.recvFd(conn, 100), null, 'then EOF: runc closed');
});

t.test('maxBytes bounds what is read', async (t) => {
  const [a, b] = addon.socketpair();
  t.teardown(() => [a, b].forEach((fd) => addon.closeFd(fd)));
  addon.sendFd(a, [], Buffer.alloc(5000, 1));
  t.throws(() => addon.recvFd(b, 1000, { maxBytes: 100 }), { code: 'EMSGSIZE' });
});
