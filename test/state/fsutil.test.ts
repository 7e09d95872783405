import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  assertNoSymlinks,
  createFileExclusive,
  ensureDir0700,
  readFileNoFollow,
  readFileNoFollowStat,
  readFileNoFollowSync,
  withFileLock,
  writeFileAtomic,
  writeFileAtomicSync,
} from '../../src/state/fsutil';

const mode = (p: string): number => fs.lstatSync(p).mode & 0o7777;

function withUmask<T>(m: number, fn: () => T): T {
  const old = process.umask(m);
  try {
    return fn();
  } finally {
    process.umask(old);
  }
}

t.test('assertNoSymlinks', async (t) => {
  const dir = t.testdir({ real: { sub: {} } });
  fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
  t.doesNotThrow(() => assertNoSymlinks(path.join(dir, 'real', 'sub')));
  t.doesNotThrow(() => assertNoSymlinks(path.join(dir, 'real', 'not', 'yet', 'there')), 'missing tail is fine');
  t.throws(() => assertNoSymlinks(path.join(dir, 'link', 'sub')), { code: 'E_SYMLINK', message: new RegExp(`${path.join(dir, 'link')} `) });
  t.throws(() => assertNoSymlinks(path.join(dir, 'link')), { code: 'E_SYMLINK' }, 'final component');
  t.throws(() => assertNoSymlinks(dir + '/link/../real'), { code: 'E_SYMLINK' }, '.. cannot hide a link');
  t.throws(() => assertNoSymlinks('relative/path'), { code: 'E_USAGE' });
});

t.test('ensureDir0700 creates private dirs whatever the umask', async (t) => {
  const dir = t.testdir({});
  const deep = path.join(dir, 'a', 'b', 'c');
  t.equal(withUmask(0o022, () => ensureDir0700(deep)), true);
  for (const p of ['a', 'a/b', 'a/b/c']) t.equal(mode(path.join(dir, p)), 0o700, p);
  const other = path.join(dir, 'u');
  withUmask(0o277, () => ensureDir0700(other));
  t.equal(mode(other), 0o700, 'umask 0277 does not break it');
  t.equal(ensureDir0700(deep), false, 'existing');
});

t.test('ensureDir0700 tightens a loose existing dir, refuses a foreign owner and symlinks', async (t) => {
  const dir = t.testdir({ loose: {}, foreign: {}, real: {} });
  const loose = path.join(dir, 'loose');
  fs.chmodSync(loose, 0o755);
  ensureDir0700(loose);
  t.equal(mode(loose), 0o700, 'fixed to 0700');

  const foreign = path.join(dir, 'foreign');
  fs.chownSync(foreign, 4242, 4242);
  t.throws(() => ensureDir0700(foreign), { code: 'E_BAD_MODE' });
  t.doesNotThrow(() => ensureDir0700(foreign, { allowUids: [4242] }));

  fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
  t.throws(() => ensureDir0700(path.join(dir, 'link')), { code: 'E_SYMLINK' });
  t.throws(() => ensureDir0700(path.join(dir, 'link', 'new')), { code: 'E_SYMLINK' });
  t.notOk(fs.existsSync(path.join(dir, 'real', 'new')), 'nothing created through the link');
});

t.test('writeFileAtomic: mode, content, no temp files, does not follow the target', async (t) => {
  const dir = t.testdir({ target: 'secret' });
  const file = path.join(dir, 'rec.json');
  const old = process.umask(0);
  try {
    await writeFileAtomic(file, '{"a":1}\n');
  } finally {
    process.umask(old);
  }
  t.equal(mode(file), 0o600);
  t.equal(fs.readFileSync(file, 'utf8'), '{"a":1}\n');
  await writeFileAtomic(file, Buffer.from('{"a":2}\n'));
  t.equal(fs.readFileSync(file, 'utf8'), '{"a":2}\n');
  writeFileAtomicSync(file, 'sync\n', 0o640);
  t.equal(fs.readFileSync(file, 'utf8'), 'sync\n');
  t.equal(mode(file), 0o640, 'explicit mode');

  // 50 concurrent writers: one wins whole, no temp files remain
  await Promise.all(Array.from({ length: 50 }, (_, i) => writeFileAtomic(file, `w${i}\n`.repeat(1000))));
  t.match(fs.readFileSync(file, 'utf8'), /^(w\d+\n)\1*$/);
  t.same(fs.readdirSync(dir).sort(), ['rec.json', 'target']);

  // a symlink at the target is replaced, its target is untouched
  const link = path.join(dir, 'link');
  fs.symlinkSync(path.join(dir, 'target'), link);
  await writeFileAtomic(link, 'new');
  t.ok(fs.lstatSync(link).isFile());
  t.equal(fs.readFileSync(path.join(dir, 'target'), 'utf8'), 'secret');

  // failure leaves no temp file
  await t.rejects(writeFileAtomic(path.join(dir, 'missing-dir', 'x'), 'x'));
  t.same(fs.readdirSync(dir).sort(), ['link', 'rec.json', 'target']);
});

t.test('createFileExclusive never overwrites', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'key');
  t.equal(await createFileExclusive(file, 'one'), true);
  t.equal(await createFileExclusive(file, 'two'), false);
  t.equal(fs.readFileSync(file, 'utf8'), 'one');
  t.equal(mode(file), 0o600);
  fs.symlinkSync('/nonexistent-target', path.join(dir, 'dangling'));
  t.equal(await createFileExclusive(path.join(dir, 'dangling'), 'x'), false, 'a dangling symlink counts as existing');
  t.notOk(fs.existsSync('/nonexistent-target'));
  t.same(fs.readdirSync(dir).sort(), ['dangling', 'key']);
});

t.test('readFileNoFollow', async (t) => {
  const dir = t.testdir({ 'fault.json': '{"schema":2}', big: 'x'.repeat(5000) });
  const file = path.join(dir, 'fault.json');
  t.equal((await readFileNoFollow(file, 1024)).toString(), '{"schema":2}');
  t.equal(readFileNoFollowSync(file, 1024).toString(), '{"schema":2}');
  t.equal((await readFileNoFollowStat(file, 1024)).stat.size, 12);
  t.equal((await readFileNoFollow(file, 12)).length, 12, 'exactly at the limit');

  fs.symlinkSync(file, path.join(dir, 'link.json'));
  await t.rejects(readFileNoFollow(path.join(dir, 'link.json'), 1024), { code: 'E_SYMLINK' });
  t.throws(() => readFileNoFollowSync(path.join(dir, 'link.json'), 1024), { code: 'E_SYMLINK' });

  await t.rejects(readFileNoFollow(path.join(dir, 'big'), 4096), { code: 'E_TOO_LARGE', message: /5000 bytes, limit is 4096/ });
  t.throws(() => readFileNoFollowSync(path.join(dir, 'big'), 4096), { code: 'E_TOO_LARGE' });

  await t.rejects(readFileNoFollow(dir, 1024), { code: 'E_NOT_FILE' });
  execFileSync('mkfifo', [path.join(dir, 'fifo')]);
  await t.rejects(readFileNoFollow(path.join(dir, 'fifo'), 1024), { code: 'E_NOT_FILE' }, 'a FIFO neither hangs nor is read');

  await t.rejects(readFileNoFollow(path.join(dir, 'nope'), 1024), { code: 'ENOENT' });
});

t.test('withFileLock serializes read-modify-write', async (t) => {
  let inside = 0;
  let maxInside = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      withFileLock('/x', async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        await new Promise((r) => setImmediate(r));
        order.push(i);
        inside--;
      }),
    ),
  );
  t.equal(maxInside, 1);
  t.same(order, Array.from({ length: 20 }, (_, i) => i));
  await t.rejects(withFileLock('/y', async () => {
    throw new Error('boom');
  }), /boom/);
  t.equal(await withFileLock('/y', async () => 7), 7, 'a failed holder releases the lock');
});

t.test('the next writer removes temp files a killed writer left (issue 25)', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'network.json');
  // a pid above any pid_max runs nowhere: its writer is gone
  const stale = path.join(dir, '.network.json.99999999.0123456789ab.tmp');
  const mine = path.join(dir, `.network.json.${process.pid}.ba9876543210.tmp`);
  const other = path.join(dir, '.operation.json.99999999.0123456789ab.tmp');
  for (const f of [stale, mine, other]) fs.writeFileSync(f, 'x'.repeat(1000));
  await writeFileAtomic(file, '{}');
  t.notOk(fs.existsSync(stale), "a dead writer's temp file of the same record is removed");
  t.ok(fs.existsSync(mine), "a live writer's (this process's) is left");
  t.ok(fs.existsSync(other), "another record's is left to its own writer");
  t.equal(fs.readFileSync(file, 'utf8'), '{}');
});
