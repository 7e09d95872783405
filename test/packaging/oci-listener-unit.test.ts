// packaging/systemd/gensee-oci-listener.service: systemd-analyze verify
// accepts it, and its ExecStart passes only options `gensee oci-listener`
// takes. FileDescriptorStorePreserve= is systemd 254's: an older
// systemd-analyze (Debian 12 has 252) reports it unknown and ignores it,
// which is the one warning allowed, and only there. systemd is not PID 1
// on this machine, so the unit is verified, not started.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { BY_NAME, COMMON_OPTIONS } from '../../src/cli/help-table';

const UNIT = path.join(PACKAGE_ROOT, 'packaging', 'systemd', 'gensee-oci-listener.service');
const INSTALLED = '/opt/gensee/bin/gensee';

function systemdVersion(): number {
  const r = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  return Number(/^systemd (\d+)/.exec(r.stdout ?? '')?.[1] ?? 0);
}

function verify(dir: string, name: string, text: string): { status: number | null; warnings: string[] } {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8', cwd: dir });
  if (r.error) throw r.error;
  return { status: r.status, warnings: r.stderr.split('\n').filter((l) => l.trim() !== '') };
}

t.test('gensee-oci-listener.service passes systemd-analyze verify', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-unit-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  // verify checks that ExecStart's program exists: this checkout's bin/gensee stands for the installed one
  const text = fs.readFileSync(UNIT, 'utf8').replaceAll(INSTALLED, path.join(PACKAGE_ROOT, 'bin', 'gensee'));
  const ok = verify(dir, 'gensee-oci-listener.service', text);
  t.equal(ok.status, 0, 'exit 0');
  const allowed = systemdVersion() < 254 ? /Unknown key 'FileDescriptorStorePreserve'/ : /^$/;
  t.same(ok.warnings.filter((w) => !allowed.test(w)), [], `no warning but a newer systemd's key (systemd ${systemdVersion()})`);
  const typo = verify(dir, 'typo.service', text.replace('Restart=always', 'Restrat=always'));
  t.match(typo.warnings.join('\n'), /Unknown key 'Restrat'/, 'the check can fail: a misspelt key is reported');
  for (const d of ['Type=notify', 'Restart=always', 'FileDescriptorStoreMax=', 'KillMode=mixed']) t.match(text, `\n${d}`, `the unit sets ${d}`);
});

t.test("the unit's ExecStart passes only options gensee oci-listener takes", async (t) => {
  const exec = /^ExecStart=(.*)$/m.exec(fs.readFileSync(UNIT, 'utf8'))![1];
  const words = exec.split(/\s+/);
  t.equal(words[0], INSTALLED);
  t.equal(words[1], 'oci-listener');
  const taken = new Set([...BY_NAME.get('oci-listener')!.options, ...COMMON_OPTIONS].map((o) => `--${o.name}`));
  const flags = words.filter((w) => w.startsWith('--'));
  for (const f of flags) t.ok(taken.has(f), `${f} is a gensee oci-listener option`);
  t.ok(flags.includes('--socket'), 'the required --socket is given');
});
