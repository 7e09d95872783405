// Issue 25: a real read-only disk mid-run. The state dir is on an ext4
// image (loop device) mounted errors=remount-ro; with grants in flight the
// filesystem takes an error (/sys/fs/ext4/<loop>/trigger_fs_error) and
// ext4 turns it read-only (EROFS) under gensee. Then: no lease in the
// kernel lacks a durable resolution line (read after a fresh mount of the
// image: only what reached the disk), a new process in the cgroup is
// refused, status and ls say failed, `gensee stop` still kills, detaches
// and unpins, and once the disk is back `verify` passes or names exactly
// what the read-only disk kept out.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { DataPlane } from '../../src/dataplane';
import { GENSEE_BIN, requireKernel, uniqueName, waitFor } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';
import { startupDeadline } from '../helpers/trials';
import { cleanupOp, logLines as lines, type FloodProgress } from './lib';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'diskflood');

t.test('ext4 remounted read-only mid-run (errors=remount-ro): fail closed, stop ends it, verify names what is missing', { timeout: 240_000 }, async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(FLOOD)) return t.fail(`workload not built: ${FLOOD} (make build)`);
  const work = shortStateDir(t);
  const img = path.join(work, 'disk.img');
  fs.writeFileSync(img, '');
  fs.truncateSync(img, 64 << 20);
  if (spawnSync('mkfs.ext4', ['-q', '-F', img]).status !== 0) return t.fail('mkfs.ext4');
  const lo = spawnSync('losetup', ['--find', '--show', img], { encoding: 'utf8' });
  if (lo.status !== 0) return t.fail(`losetup: ${lo.stderr}`);
  const dev = lo.stdout.trim();
  const mnt = fs.mkdtempSync('/tmp/gs-ro-');
  const op = uniqueName('gs-ro');
  const st = path.join(mnt, 's');
  t.teardown(async () => {
    await cleanupOp(st, op).catch(() => undefined);
    spawnSync('umount', ['-l', mnt]);
    spawnSync('losetup', ['-d', dev]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  const mount = () => spawnSync('mount', ['-o', 'errors=remount-ro', dev, mnt], { encoding: 'utf8' });
  const mnted = mount();
  if (mnted.status !== 0) return t.fail(`mount: ${mnted.stderr}`);
  const trigger = `/sys/fs/ext4/${path.basename(dev)}/trigger_fs_error`;
  if (!fs.existsSync(trigger)) return t.fail(`${trigger} is missing: this kernel cannot make an ext4 error on demand`);
  fs.mkdirSync(st, { mode: 0o700 });
  const base = 27000 + (process.pid % 20) * 100;
  const policy = path.join(work, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: `${base}-${base + 3000}` }, ttl_s: 300, max_uses: 0 }], delegate: [] }));
  const env = { ...process.env, GENSEE_RUN_DIR: work };
  // every new port is a new grant: grants are in flight when the disk goes read-only
  const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--json-out', path.join(work, 'out.jsonl'), '--', FLOOD, 'flood', '--port', String(base), '--span', '3000', '--ms', '120000', '--every', '100'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let last: FloodProgress | null = null;
  let err = '';
  let buf = '';
  c.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (l.startsWith('{"t":')) last = JSON.parse(l) as FloodProgress;
    }
  });
  c.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((res) => c.on('close', (code) => res(code)));
  const now = (): FloodProgress => last ?? { t: 0, attempts: 0, ok: 0, EACCES: 0, ECONNREFUSED: 0, other: 0 };
  await waitFor(() => now().ECONNREFUSED > 100, startupDeadline(), 50);
  t.ok(now().ECONNREFUSED > 100, `grants work before the error (${now().ECONNREFUSED} granted)`);
  const opFile = path.join(st, 'network-operations', op, 'operation.json');
  const cgroup = (JSON.parse(fs.readFileSync(opFile, 'utf8')) as { cgroup: string }).cgroup;

  fs.writeFileSync(trigger, '1');
  const ro = await waitFor(() => fs.readFileSync('/proc/mounts', 'utf8').split('\n').find((l) => l.split(' ')[1] === mnt && /\bro\b|emergency_ro/.test(l.split(' ')[3])), 10_000, 20).catch(() => undefined);
  t.ok(ro, `ext4 turned the filesystem read-only (${ro?.split(' ')[3]})`);
  let writeErr = '';
  try {
    fs.writeFileSync(path.join(mnt, 'probe'), 'x');
  } catch (e) {
    writeErr = (e as NodeJS.ErrnoException).code ?? String(e);
  }
  t.equal(writeErr, 'EROFS', 'a write there fails EROFS');

  const status = () => {
    const r = spawnSync(GENSEE_BIN, ['status', '--op', op, '--state-dir', st, '--json'], { encoding: 'utf8', env });
    try {
      return JSON.parse(r.stdout) as { condition: string; failed?: { error: string } };
    } catch {
      return { condition: `unreadable: ${r.stderr.slice(0, 200)}` };
    }
  };
  const s = await waitFor(() => (status().condition === 'failed' ? status() : null), 20_000, 100).catch(() => status());
  t.equal(s.condition, 'failed', 'gensee status: failed', { status: s, stderr: err.slice(-1500) });
  t.match(s.failed?.error ?? '', /EROFS|EIO/, `naming the error (${s.failed?.error})`);
  const ls = spawnSync(GENSEE_BIN, ['ls', '--state-dir', st, '--json'], { encoding: 'utf8', env });
  const row = (JSON.parse(ls.stdout || '{"operations":[]}') as { operations: { id: string; condition: string | null }[] }).operations.find((o) => o.id === op);
  t.equal(row?.condition, 'failed', 'gensee ls: failed');

  // the kernel's leases now, and whether any new one comes while failed
  const dp = DataPlane.open(op);
  const k0 = dp.listLeases().map((l) => `${l.tuple.address}:${l.tuple.port}`);
  const before = now();
  await waitFor(() => now().EACCES > before.EACCES + 200, 20_000, 50).catch(() => undefined);
  const k1 = dp.listLeases().map((l) => `${l.tuple.address}:${l.tuple.port}`);
  dp.close();
  t.same(k1.filter((k) => !k0.includes(k)), [], `no new lease in the kernel while failed (${now().attempts - before.attempts} calls)`);
  t.ok(now().EACCES > before.EACCES, `new calls are refused (${now().EACCES - before.EACCES} EACCES)`);
  t.equal(now().ok, 0, 'nothing got through (no listener: a granted call is ECONNREFUSED)');
  t.equal(err.split('\n').filter((l) => /FAILED/.test(l)).length, 1, 'one stderr line says so', { stderr: err.slice(-1500) });

  const stop = spawnSync(GENSEE_BIN, ['stop', '--op', op, '--state-dir', st], { encoding: 'utf8', env, timeout: 120_000 });
  t.ok(stop.status === 0 || stop.status === 3, `gensee stop on the read-only disk: exit ${stop.status} (3: stopped, not all recorded)`, { out: `${stop.stdout}${stop.stderr}` });
  t.notOk(fs.existsSync(cgroup), 'the cgroup is gone');
  t.notOk(fs.existsSync(`/sys/fs/bpf/gensee/${op}`), 'the pins are gone');
  t.not(await exited, null, 'gensee run ended');

  // what reached the disk: a fresh mount of the image
  t.equal(spawnSync('umount', [mnt]).status, 0, 'unmounted');
  // the administrator's repair after a filesystem error (0: clean, 1: fixed)
  const fsck = spawnSync('e2fsck', ['-fy', dev], { encoding: 'utf8' });
  t.ok(fsck.status === 0 || fsck.status === 1, `e2fsck -fy: exit ${fsck.status}`, { out: fsck.stdout.slice(-1000) });
  const again = mount();
  t.equal(again.status, 0, `mounted again: ${again.stderr.trim()}`);
  const opts = fs.readFileSync('/proc/mounts', 'utf8').split('\n').find((l) => l.split(' ')[1] === mnt)?.split(' ')[3] ?? '';
  t.match(opts, /^rw\b/, `read-write (${opts})`);
  const faults = path.join(st, 'network-operations', op, 'faults.jsonl');
  const durable = new Set(
    lines(faults)
      .filter((l) => l.kind === 'resolution' && (l.resolution as { action?: string })?.action === 'retry_after_lease')
      .map((l) => {
        const x = (l.resolution as { lease: { address: string; port: number } }).lease;
        return `${x.address}:${x.port}`;
      }),
  );
  const orphans = k1.filter((k) => !durable.has(k));
  const all = fs.existsSync(faults) ? fs.readFileSync(faults, 'utf8').split('\n') : [];
  const about = orphans.flatMap((o) => all.filter((l) => l.includes(`"port":${o.split(':')[1]}`)).map((l) => l.slice(0, 300)));
  t.same(orphans, [], `every one of the ${k1.length} leases the kernel held has its resolution line on the disk (${durable.size} granted)`, { about, tail: all.slice(-6).map((l) => l.slice(0, 300)), fsck: fsck.stdout.slice(-1500), stderr: err.slice(-3000) });

  // the record once the disk is back: stop again records it; verify passes or names what is missing
  const stop2 = spawnSync(GENSEE_BIN, ['stop', '--op', op, '--state-dir', st], { encoding: 'utf8', env, timeout: 120_000 });
  t.equal(stop2.status, 0, 'gensee stop on the repaired disk records the stop', { out: `${stop2.stdout}${stop2.stderr}` });
  const v = spawnSync(GENSEE_BIN, ['verify', '--op', op, '--state-dir', st], { encoding: 'utf8' });
  t.ok(v.status === 0 || /missing|torn|cut off/i.test(v.stdout + v.stderr), `gensee verify: exit ${v.status}`, { verify: `${v.stdout}${v.stderr}`.slice(-2000) });
  t.comment(`verify: ${(v.stdout + v.stderr).trim().split('\n').slice(-3).join(' | ')}`);
});
