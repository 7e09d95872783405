// gensee-exec --resolv-conf: the workload's /etc/resolv.conf is gensee's
// file (so its resolver asks the DNS stub), read-only, and only in its own
// mount namespace; a symlink or a directory is refused before anything starts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnInBoundary } from '../../src/pause/launch';
import { requireKernel, testOp } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';

function run(o: Parameters<typeof spawnInBoundary>[0]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = spawnInBoundary({ ...o, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => resolve({ code, out, err }));
  });
}

t.test('the workload reads gensee resolv.conf, cannot write it, and the host file is untouched', async (t) => {
  if (!requireKernel(t)) return;
  const { cgroup } = testOp(t, 'gs-rcf');
  const dir = shortStateDir(t);
  const file = path.join(dir, 'resolv.conf');
  fs.writeFileSync(file, 'nameserver 127.53.0.9\noptions edns0\n', { mode: 0o644 });
  const host = fs.readFileSync('/etc/resolv.conf', 'utf8');
  const r = await run({ cgroup, resolvConf: file, hide: [dir], argv: ['/bin/sh', '-c', 'cat /etc/resolv.conf; echo x >> /etc/resolv.conf && echo WROTE || echo READONLY; ls ' + dir + ' | wc -l'] });
  t.equal(r.code, 0, r.err);
  t.match(r.out, /^nameserver 127\.53\.0\.9\noptions edns0\n/, 'the workload sees gensee file');
  t.match(r.out, /READONLY/, 'and cannot write it');
  t.match(r.out, /\n0\n$/, 'the directory it came from is still hidden');
  t.equal(fs.readFileSync('/etc/resolv.conf', 'utf8'), host, "the host's /etc/resolv.conf is unchanged");
  t.equal(fs.readFileSync(file, 'utf8'), 'nameserver 127.53.0.9\noptions edns0\n', 'gensee file is unchanged');
});

t.test('a symlink or a directory as --resolv-conf is refused before CMD runs', async (t) => {
  if (!requireKernel(t)) return;
  const { cgroup } = testOp(t, 'gs-rcf');
  const dir = shortStateDir(t);
  const link = path.join(dir, 'link.conf');
  fs.symlinkSync('/etc/hostname', link);
  for (const [what, p, msg] of [
    ['a symlink', link, /--resolv-conf .*link\.conf/],
    ['a directory', dir, /not a regular file/],
    ['a missing file', path.join(dir, 'nope'), /No such file/],
  ] as const) {
    const r = await run({ cgroup, resolvConf: p, argv: ['/bin/sh', '-c', 'echo RAN'] });
    t.equal(r.code, 126, `${what}: gensee-exec fails`);
    t.match(r.err, msg, `${what}: says why`);
    t.notMatch(r.out, /RAN/, `${what}: CMD never ran`);
  }
});
