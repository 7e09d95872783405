// packaging/systemd/gensee-supervise@.service (issue 30): systemd-analyze
// verify accepts it with no warning (an unknown key or a bad value is a
// warning there, not an error, so the test reads stderr too), and every
// option its ExecStart passes is one `gensee supervise` takes. systemd is
// not PID 1 on this machine, so the unit is verified, not started.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { BY_NAME, COMMON_OPTIONS } from '../../src/cli/help-table';

const UNIT = path.join(PACKAGE_ROOT, 'packaging', 'systemd', 'gensee-supervise@.service');

function verify(dir: string, name: string, text: string): { status: number | null; stderr: string } {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8', cwd: dir });
  if (r.error) throw r.error;
  return { status: r.status, stderr: r.stderr.trim() };
}

t.test('gensee-supervise@.service passes systemd-analyze verify without a warning', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-unit-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  // verify checks that ExecStart's program exists: this checkout's bin/gensee stands for /usr/bin/gensee
  const text = fs.readFileSync(UNIT, 'utf8').replaceAll('/usr/bin/gensee', path.join(PACKAGE_ROOT, 'bin', 'gensee'));
  const ok = verify(dir, 'gensee-supervise@demo.service', text);
  t.equal(ok.status, 0, 'exit 0');
  t.equal(ok.stderr, '', 'and nothing on stderr');
  // the check can fail: a misspelt key and a bad value are reported
  const typo = verify(dir, 'typo@demo.service', text.replace('NoNewPrivileges=yes', 'NoNewPrivilegs=yes'));
  t.match(typo.stderr, /Unknown key 'NoNewPrivilegs'/, 'a misspelt key is reported');
  const value = verify(dir, 'value@demo.service', text.replace('Restart=on-failure', 'Restart=on-failur'));
  t.match(value.stderr, /restart specifier/, 'a bad value is reported');
  for (const d of ['Restart=on-failure', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'CapabilityBoundingSet=']) t.match(text, `\n${d}`, `the unit sets ${d}`);
});

t.test("the unit's ExecStart passes only options gensee supervise takes", async (t) => {
  const exec = /^ExecStart=(.*)$/m.exec(fs.readFileSync(UNIT, 'utf8'))![1];
  const words = exec.split(/\s+/);
  t.equal(words[0], '/usr/bin/gensee', 'runs the installed gensee');
  t.equal(words[1], 'supervise', 'as gensee supervise');
  const taken = new Set([...BY_NAME.get('supervise')!.options, ...COMMON_OPTIONS].map((o) => `--${o.name}`));
  const flags = words.filter((w) => w.startsWith('--'));
  t.ok(flags.length >= 3, `options: ${flags.join(' ')}`);
  for (const f of flags) t.ok(taken.has(f), `${f} is a gensee supervise option`);
  for (const r of BY_NAME.get('supervise')!.options.filter((o) => o.required)) t.ok(flags.includes(`--${r.name}`), `the required --${r.name} is given`);
});
