// V8's code cache for gensee's own JavaScript (src/codecache.ts): a cached
// run prints exactly what an uncached one does; an entry that is torn,
// garbage or built under other V8 flags is refused by V8 and written again;
// a directory anybody but root could write to, or a symlink in its place,
// is never used; nobody but root uses a cache; and an entry is found by the
// file's identity on disk, so a rebuilt file misses.
import t from 'tap';
import type { Test } from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { GENSEE_BIN } from '../helpers/kernel';
import { entryName, prune, unsafeDir, PRUNE_AGE_MS, PRUNE_KEEP } from '../../src/codecache';

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

function gensee(args: string[], env: NodeJS.ProcessEnv, opts: { node?: string[]; uid?: number } = {}): Promise<Out> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [...(opts.node ?? []), GENSEE_BIN, ...args],
      { env: { ...process.env, GENSEE_CODE_CACHE_DEBUG: '1', ...env }, timeout: 60_000, cwd: '/', ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}) },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

/** the counts line the cache prints at exit with GENSEE_CODE_CACHE_DEBUG=1 */
function counts(o: Out): { dir: string; hits: number; misses: number; rejected: number; written: number; failed: number; pruned: number } | { off: string } {
  const on = /gensee: code cache: (\/\S+): (\d+) hits, (\d+) misses, (\d+) rejected, (\d+) written, (\d+) not written, (\d+) pruned/.exec(o.stderr);
  if (on) return { dir: on[1], hits: +on[2], misses: +on[3], rejected: +on[4], written: +on[5], failed: +on[6], pruned: +on[7] };
  const off = /gensee: code cache: off \((.*)\): /.exec(o.stderr);
  if (off) return { off: off[1] };
  throw new Error(`no code cache line in: ${o.stderr}`);
}

function entries(dir: string): string[] {
  return fs.readdirSync(dir).map((f) => path.join(dir, f));
}

/** a fresh cache base (removed after t), the uncached output, and the base filled by one run */
async function filledCache(t: Test): Promise<{ base: string; env: NodeJS.ProcessEnv; plain: Out; dir: string }> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  const env = { GENSEE_CODE_CACHE: base };
  const plain = await gensee(['--help'], { GENSEE_CODE_CACHE: '0' });
  const c1 = counts(await gensee(['--help'], env));
  if (!('dir' in c1)) throw new Error(`cache off: ${c1.off}`);
  return { base, env, plain, dir: c1.dir };
}

t.test('a cached command prints what an uncached one does; entries are written once, then used', async (t) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  const env = { GENSEE_CODE_CACHE: base };
  const plain = await gensee(['--help'], { GENSEE_CODE_CACHE: '0' });
  t.equal(plain.code, 0, 'uncached: exit 0');
  t.match(counts(plain), { off: 'GENSEE_CODE_CACHE=0' });

  const first = await gensee(['--help'], env);
  const c1 = counts(first);
  if (!('dir' in c1)) throw new Error(`cache off: ${c1.off}`);
  t.equal(first.stdout, plain.stdout, 'first (filling) run: the same output');
  t.ok(c1.misses >= 5, `first run compiled its files (${c1.misses} misses)`);
  t.equal(c1.written, c1.misses, 'and wrote an entry for each');
  t.equal(c1.hits, 0);
  t.equal(path.dirname(path.dirname(c1.dir)), base, 'under the cache base, by node version and command');
  t.equal(path.basename(c1.dir), 'cli', '--help is no command of its own');
  const st = fs.lstatSync(c1.dir);
  t.equal(st.mode & 0o777, 0o700, 'the command directory is 0700');
  for (const e of entries(c1.dir)) t.equal(fs.statSync(e).mode & 0o777, 0o600, `${path.basename(e)} is 0600`);

  const second = await gensee(['--help'], env);
  const c2 = counts(second);
  t.equal(second.stdout, plain.stdout, 'cached run: the same output');
  t.match(c2, { hits: c1.misses, misses: 0, rejected: 0, written: 0 }, 'every file from the cache, nothing written');

  // a command of its own gets its own entries
  const ver = await gensee(['version'], env);
  t.equal(ver.code, 0);
  t.match(counts(ver), { dir: path.join(path.dirname(c1.dir), 'version') });
});

t.test('torn, garbage or foreign entries are refused by V8 and written again', async (t) => {
  const { env, plain, dir } = await filledCache(t);
  const files = entries(dir);
  // one empty, one cut in half, the rest garbage of the same length
  files.forEach((f, i) => {
    const len = fs.statSync(f).size;
    if (i === 0) fs.writeFileSync(f, Buffer.alloc(0));
    else if (i === 1) fs.truncateSync(f, Math.floor(len / 2));
    else fs.writeFileSync(f, Buffer.alloc(len, 0x5a));
  });
  const bad = await gensee(['--help'], env);
  t.equal(bad.stdout, plain.stdout, 'the same output from broken entries');
  t.match(counts(bad), { hits: 0, misses: 0, rejected: files.length, written: files.length }, 'every entry refused and written again');
  t.match(counts(await gensee(['--help'], env)), { hits: files.length, rejected: 0 }, 'and used after that');

  // built under other V8 flags: refused (V8 checks its flags), then rebuilt for them
  const other = await gensee(['--help'], env, { node: ['--stack-size=900'] });
  t.equal(other.stdout, plain.stdout, 'the same output under other flags');
  t.match(counts(other), { hits: 0, rejected: files.length, written: files.length }, 'entries of other flags refused');
});

t.test('a directory anybody but root could write to, or a symlink, is never used', async (t) => {
  const { base, env, plain, dir } = await filledCache(t);
  const c1 = { dir };
  const files = entries(dir).length;

  fs.chmodSync(base, 0o777);
  const open = await gensee(['--help'], env);
  t.equal(open.stdout, plain.stdout, 'the command still works');
  t.match(counts(open), { off: /writable by group or others \(mode 777\)/ }, 'a world-writable base is refused');
  fs.chmodSync(base, 0o700);

  fs.chmodSync(c1.dir, 0o720);
  t.match(counts(await gensee(['--help'], env)), { off: /writable by group or others \(mode 720\)/ }, 'a group-writable command directory is refused');
  fs.chmodSync(c1.dir, 0o700);

  // the command directory replaced by a symlink to a directory of its entries
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-other-'));
  t.teardown(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
  for (const f of entries(c1.dir)) fs.copyFileSync(f, path.join(elsewhere, path.basename(f)));
  fs.rmSync(c1.dir, { recursive: true });
  fs.symlinkSync(elsewhere, c1.dir);
  const linked = await gensee(['--help'], env);
  t.equal(linked.stdout, plain.stdout);
  t.match(counts(linked), { off: /is not a directory/ }, 'a symlink in its place is refused');
  t.equal(fs.readdirSync(elsewhere).length, files, 'and nothing written through it');

  t.match(unsafeDir(base, '/etc'), /is not under/, 'a directory outside the base is refused');

  // a parent of the base somebody else owns could swap the base after the check
  const theirs = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-theirs-'));
  t.teardown(() => fs.rmSync(theirs, { recursive: true, force: true }));
  const inner = path.join(theirs, 'cache');
  fs.mkdirSync(inner, { mode: 0o700 });
  fs.chownSync(theirs, 65534, 65534);
  const under = await gensee(['--help'], { GENSEE_CODE_CACHE: inner });
  t.equal(under.stdout, plain.stdout);
  t.match(counts(under), { off: /\(above the cache\) is owned by uid 65534, not root/ }, 'a base under a directory of uid 65534 is refused');
  t.same(fs.readdirSync(inner), [], 'and nothing made in it');
  fs.chownSync(theirs, 0, 0);
  fs.chmodSync(theirs, 0o777);
  t.match(counts(await gensee(['--help'], { GENSEE_CODE_CACHE: inner })), { off: /\(above the cache\) is writable by group or others \(mode 777\)/ }, 'or under a world-writable one without the sticky bit');
  fs.chmodSync(theirs, 0o1777);
  t.match(counts(await gensee(['--help'], { GENSEE_CODE_CACHE: inner })), { dir: /^\// }, 'a sticky one (as /tmp) is fine');
});

t.test('nobody but root uses a cache', async (t) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  const o = await gensee(['--help'], { GENSEE_CODE_CACHE: base }, { uid: 65534 });
  t.equal(o.code, 0, `as uid 65534: exit 0 (${o.stderr.slice(0, 300)})`);
  t.match(counts(o), { off: 'not root' });
  t.same(fs.readdirSync(base), [], 'nothing made in the base');
});

t.test('an entry is named by the file on disk, not its path alone', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-key-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'm.js');
  fs.writeFileSync(f, 'module.exports = 1;\n');
  const a = entryName(f, fs.statSync(f, { bigint: true }));
  t.equal(entryName(f, fs.statSync(f, { bigint: true })), a, 'stable for the same file');
  fs.utimesSync(f, new Date(), new Date(Date.now() + 5000));
  const b = entryName(f, fs.statSync(f, { bigint: true }));
  t.not(b, a, 'another mtime, another entry');
  // the same length, another content: a rebuild writes a new file
  const g = path.join(dir, 'm2.js');
  fs.writeFileSync(g, 'module.exports = 2;\n');
  fs.renameSync(g, f);
  t.not(entryName(f, fs.statSync(f, { bigint: true })), b, 'a file replaced by another of the same length: another entry');
});

t.test('a full disk: nothing written, the command unchanged', async (t) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-full-'));
  const { execFileSync } = await import('node:child_process');
  // 24 KiB: the directories fit, the entries (~1-60 KiB each) mostly do not
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24k,mode=0700', 'gs-cc-full', base]);
  t.teardown(() => {
    try {
      execFileSync('umount', [base]);
    } catch {
      /* not mounted */
    }
    fs.rmSync(base, { recursive: true, force: true });
  });
  const plain = await gensee(['--help'], { GENSEE_CODE_CACHE: '0' });
  const full = await gensee(['--help'], { GENSEE_CODE_CACHE: base });
  t.equal(full.code, 0);
  t.equal(full.stdout, plain.stdout, 'the same output with the cache disk full');
  const c = counts(full);
  if (!('dir' in c)) throw new Error(`cache off: ${c.off}`);
  t.ok(c.failed > 0, `entries that did not fit are not written (${c.failed})`);
  t.equal(c.written + c.failed, c.misses, 'each miss written or counted as not written');
  t.same(fs.readdirSync(c.dir).filter((n) => n.includes('.tmp-')), [], 'no temporary file left behind');
  const again = await gensee(['--help'], { GENSEE_CODE_CACHE: base });
  t.equal(again.stdout, plain.stdout, 'and the next run, from what fitted');
  t.match(counts(again), { hits: c.written, rejected: 0 });
});

t.test('first runs side by side: every entry whole', async (t) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  const env = { GENSEE_CODE_CACHE: base };
  const plain = await gensee(['--help'], { GENSEE_CODE_CACHE: '0' });
  const runs = await Promise.all([1, 2, 3, 4].map(() => gensee(['--help'], env)));
  for (const r of runs) t.equal(r.stdout, plain.stdout, 'each writer: the same output');
  const after = await gensee(['--help'], env);
  const c = counts(after);
  if (!('dir' in c)) throw new Error(`cache off: ${c.off}`);
  t.ok(c.hits > 0, `then every file from the cache (${c.hits} hits)`);
  t.match(c, { misses: 0, rejected: 0, written: 0 });
  t.same(fs.readdirSync(c.dir).filter((n) => n.includes('.tmp-')), [], 'no temporary file left behind');
});

t.test('prune: old entries go, used and recent ones stay, never more than PRUNE_KEEP', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cc-prune-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const now = Date.now();
  const name = (i: number) => path.join(dir, i.toString(16).padStart(64, '0'));
  const make = (file: string, ageMs: number) => {
    fs.writeFileSync(file, 'x');
    const at = new Date(now - ageMs);
    fs.utimesSync(file, at, at);
  };
  make(name(1), PRUNE_AGE_MS + 60_000); // old
  make(name(2), PRUNE_AGE_MS + 60_000); // old, but used by this run
  make(name(3), 60_000); // recent
  make(path.join(dir, `${'a'.repeat(64)}.tmp-123`), 120_000); // a dead writer's
  make(path.join(dir, `${'b'.repeat(64)}.tmp-456`), 1_000); // a live writer's
  make(path.join(dir, 'not-an-entry'), PRUNE_AGE_MS + 60_000); // not ours
  fs.mkdirSync(path.join(dir, 'c'.repeat(64))); // not a file
  t.equal(prune(dir, new Set([name(2)]), now), 2, 'the old unused entry and the dead temporary file');
  t.same(fs.readdirSync(dir).sort(), [name(2), name(3), path.join(dir, `${'b'.repeat(64)}.tmp-456`), path.join(dir, 'c'.repeat(64)), path.join(dir, 'not-an-entry')].map((f) => path.basename(f)).sort());

  // past PRUNE_KEEP: the oldest go first, what this run used stays
  for (let i = 100; i < 100 + PRUNE_KEEP + 5; i++) make(name(i), (PRUNE_KEEP + 200 - i) * 1000);
  const removed = prune(dir, new Set([name(2), name(100)]), now);
  const left = fs.readdirSync(dir).filter((n) => /^[0-9a-f]{64}$/.test(n) && fs.statSync(path.join(dir, n)).isFile());
  t.equal(left.length, PRUNE_KEEP, `${PRUNE_KEEP} entries kept (${removed} removed)`);
  t.ok(left.includes(path.basename(name(100))), 'the oldest one stays: this run used it');
  t.notOk(left.includes(path.basename(name(101))), 'the next oldest went');
  t.ok(left.includes(path.basename(name(100 + PRUNE_KEEP + 4))), 'the newest stays');
});
