// `npm pack` makes a package that installs in a clean directory with
// nothing but npm's cache (--offline: the runtime dependencies travel in the
// tarball, bundled), builds its native parts at install (scripts/install.sh:
// the eBPF object, the addon through npm's own node-gyp, the launcher, the fd
// holder) and runs: `gensee --help`, `--version`, and a real operation. The
// "files" list holds what the package needs and nothing of the checkout's
// (tests, TypeScript sources, build products). Without clang the install
// fails before building anything, naming clang and its Debian package.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync, SpawnSyncReturns } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { requireKernel, timeScaled, uniqueName } from '../helpers/kernel';

const PKG = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string> };
const NPM_FLAGS = ['--offline', '--no-audit', '--no-fund', '--loglevel=error'];

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, encoding: 'utf8', timeout: timeScaled(opts.timeoutMs), maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return r;
}

function tmp(t: { teardown(fn: () => void): void }, prefix: string): string {
  const d = fs.mkdtempSync(`/tmp/${prefix}`);
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** a clean project directory to install into */
function project(t: { teardown(fn: () => void): void }): string {
  const d = tmp(t, 'gs-inst-');
  fs.writeFileSync(path.join(d, 'package.json'), JSON.stringify({ name: 'clean-install', version: '1.0.0', private: true }));
  return d;
}

let tarball = '';

t.before(() => {
  const dest = fs.mkdtempSync('/tmp/gs-pack-');
  t.teardown(() => fs.rmSync(dest, { recursive: true, force: true }));
  const r = run('npm', ['pack', '--pack-destination', dest, '--loglevel=error'], { cwd: PACKAGE_ROOT, timeoutMs: 300_000 });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  tarball = path.join(dest, `${PKG.name}-${PKG.version}.tgz`);
});

t.test('the files list: what the package needs, nothing of the checkout', async (t) => {
  const r = run('tar', ['tzf', tarball], { cwd: PACKAGE_ROOT, timeoutMs: 60_000 });
  t.equal(r.status, 0, r.stderr);
  const files = r.stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
  const has = (f: string) => files.includes(f);
  for (const f of ['package.json', 'README.md', 'bin/gensee', 'dist/src/cli/main.js', 'dist/src/gen/validators.js', 'dist/build-info.json', 'scripts/install.sh', 'Makefile', 'binding.gyp', 'bpf/gensee.bpf.c', 'bpf/gensee_abi.h', 'bpf/lease_topup.bpf.c', 'addon/notify.c', 'launcher/gensee-exec.c', 'launcher/gensee-fdkeep.c', 'schema/policy.schema.json']) {
    t.ok(has(f), `packed: ${f}`);
  }
  for (const dep of Object.keys(PKG.dependencies)) t.ok(has(`node_modules/${dep}/package.json`), `bundled: ${dep}`);
  const bad = files.filter(
    (f) =>
      /^(src|test|bench|obj|build|\.tap|dist\/test|dist\/bench)\//.test(f) ||
      /^node_modules\/(tap|typescript|eslint|playwright-core|parse-prometheus-text-format|node-gyp)\//.test(f) ||
      (!f.startsWith('node_modules/') && f.endsWith('.ts') && !f.endsWith('.d.ts')),
  );
  t.same(bad, [], 'no tests, TypeScript sources, build products or dev dependencies');
  t.notOk(files.some((f) => f === 'policy.json'), 'no stray policy.json');
});

t.test('installs offline in a clean directory, builds its native parts, runs', async (t) => {
  const dir = project(t);
  const r = run('npm', ['install', ...NPM_FLAGS, tarball], { cwd: dir, timeoutMs: 600_000 });
  t.equal(r.status, 0, `npm install --offline of the tarball: ${r.stderr.slice(-3000)}`);
  const root = path.join(dir, 'node_modules', PKG.name);
  for (const f of ['build/Release/gensee.node', 'obj/gensee.bpf.o', 'obj/gensee-exec', 'obj/gensee-fdkeep']) t.ok(fs.existsSync(path.join(root, f)), `built at install: ${f}`);
  const bin = path.join(dir, 'node_modules', '.bin', 'gensee');
  const help = run(bin, ['--help'], { cwd: dir, timeoutMs: 60_000 });
  t.equal(help.status, 0, help.stderr);
  t.match(help.stdout, /^gensee .*\n\nUsage:\n {2}gensee COMMAND/, 'gensee --help');
  t.match(help.stdout, /\brm\b[\s\S]*\bprune\b/, 'the help of the installed package lists rm and prune');
  const v = run(bin, ['--version', '--json'], { cwd: dir, timeoutMs: 60_000 });
  t.equal(v.status, 0, v.stderr);
  t.match(JSON.parse(v.stdout), { name: 'gensee', version: PKG.version });
  if (!requireKernel(t)) return;
  // the addon and the eBPF object it built load and hold a real operation
  const st = tmp(t, 'gs-pst-');
  const op = uniqueName('gs-pack');
  const live = run(bin, ['run', '--state-dir', st, '--op', op, '--json', '--', 'true'], { cwd: dir, timeoutMs: 120_000 });
  t.equal(live.status, 0, live.stderr);
  const rec = JSON.parse(fs.readFileSync(path.join(st, 'network-operations', op, 'operation.json'), 'utf8')) as { state: string; gensee: { version: string } };
  t.match(rec, { state: 'closed', gensee: { version: PKG.version } }, 'a real operation by the installed package, its version recorded');
});

t.test('without clang: a clear error before anything is built', async (t) => {
  const dir = project(t);
  // every command of this machine but clang
  const bin = tmp(t, 'gs-noclang-');
  for (const d of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      if (/^clang/.test(n) || fs.existsSync(path.join(bin, n))) continue;
      fs.symlinkSync(path.join(d, n), path.join(bin, n));
    }
  }
  const r = run('npm', ['install', ...NPM_FLAGS, tarball], { cwd: dir, env: { ...process.env, PATH: bin }, timeoutMs: 300_000 });
  t.not(r.status, 0, 'the install fails');
  t.match(r.stderr, /gensee install: cannot build the native parts .*missing:/);
  t.match(r.stderr, /- clang \(apt-get install clang\)/, 'names clang and its package');
  t.match(r.stderr, /then: npm rebuild gensee/, 'and what to do after');
  t.notMatch(r.stderr, /make: |gyp /, 'nothing was built');
  t.notOk(fs.existsSync(path.join(dir, 'node_modules', PKG.name, 'build', 'Release', 'gensee.node')), 'no addon left behind');
});
