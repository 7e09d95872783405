// One opener for every private unix socket: its refusals, its replacement
// of a stale socket, and the mode and owner it leaves.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { loadAddon } from '../src/addon';
import { openPrivateSocket, SUN_PATH_MAX } from '../src/privsock';

const close = (fd: number) => loadAddon().closeFd(fd);

t.test('refusals: a path too long, a file, a symlink, a live socket; nothing changed', async (t) => {
  const d = t.testdir({ file: 'x', target: 'y' });
  const long = path.join(d, 'x'.repeat(SUN_PATH_MAX));
  await t.rejects(openPrivateSocket(long), { code: 'E_USAGE', exitCode: 2, message: /at most 107/ }, 'longer than sun_path');
  t.notOk(fs.existsSync(long), 'nothing made');
  await t.rejects(openPrivateSocket(path.join(d, 'file')), { code: 'E_NOT_FILE', exitCode: 2 }, 'a regular file is not replaced');
  t.equal(fs.readFileSync(path.join(d, 'file'), 'utf8'), 'x', 'the file is as it was');
  fs.symlinkSync(path.join(d, 'target'), path.join(d, 'link'));
  await t.rejects(openPrivateSocket(path.join(d, 'link')), { code: 'E_NOT_FILE' }, 'a symlink is neither followed nor replaced');
  t.ok(fs.lstatSync(path.join(d, 'link')).isSymbolicLink(), 'the symlink is as it was');

  // a live server: refused with probeLive, and it keeps serving
  const live = path.join(d, 'live.sock');
  const srv = net.createServer((c) => c.end('still here'));
  await new Promise<void>((r) => srv.listen(live, r));
  t.teardown(() => srv.close());
  await t.rejects(openPrivateSocket(live, { probeLive: true }), { code: 'E_SOCKET_IN_USE', exitCode: 1 }, 'a live socket is not replaced');
  const got = await new Promise<string>((resolve, reject) => {
    let s = '';
    net.connect(live).on('data', (b) => (s += b)).on('end', () => resolve(s)).on('error', reject);
  });
  t.equal(got, 'still here', 'the live server still answers on its path');
});

t.test('a stale socket is replaced; the new one is 0600 and the owner\'s', async (t) => {
  const d = t.testdir({});
  const p = path.join(d, 's.sock');
  close(await openPrivateSocket(p));
  t.ok(fs.lstatSync(p).isSocket(), 'a closed socket leaves its file: stale');
  const fd = await openPrivateSocket(p, { probeLive: true, owner: 65534 });
  t.teardown(() => close(fd));
  const st = fs.lstatSync(p);
  t.equal(st.mode & 0o777, 0o600, 'mode 0600');
  if (process.geteuid?.() === 0) t.equal(st.uid, 65534, 'chowned to its owner');
  // the fd is the one listening: a client connects
  const srv = net.createServer((c) => c.end('ok'));
  await new Promise<void>((r) => srv.listen({ fd }, r));
  t.teardown(() => srv.close());
  const got = await new Promise<string>((resolve, reject) => {
    let s = '';
    net.connect(p).on('data', (b) => (s += b)).on('end', () => resolve(s)).on('error', reject);
  });
  t.equal(got, 'ok', 'served on the returned fd');
});

t.test('without probeLive a socket at the path is taken as stale (the operation lock guards it)', async (t) => {
  const d = t.testdir({});
  const p = path.join(d, 'x.sock');
  const first = await openPrivateSocket(p);
  const ino = fs.lstatSync(p).ino;
  const second = await openPrivateSocket(p);
  t.teardown(() => {
    close(first);
    close(second);
  });
  t.not(fs.lstatSync(p).ino, ino, 'replaced');
});
