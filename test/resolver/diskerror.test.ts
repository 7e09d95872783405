// Issue 25: a disk error on the evidence fails closed and recovers. The
// state dir is on a tmpfs of its own; a workload is granted a lease for
// each new port it dials (ECONNREFUSED: the kernel let it through to a port
// nobody listens on) while another tenant fills the filesystem to ENOSPC.
// Then: the supervisor is in a failed state (status says so), no kernel
// lease lacks its durable resolution line, new calls are refused; once
// space returns it serves again by itself, the record says how many calls
// were denied meanwhile, and the evidence verifies.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { DataPlane } from '../../src/dataplane';
import { GENSEE_BIN, requireKernel, uniqueName, waitFor } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';
import { startupDeadline } from '../helpers/trials';
import { cleanupOp, logLines as lines, type FloodProgress } from '../adversarial/lib';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'diskflood');

t.test('ENOSPC mid-run with grants in flight: fail closed, no undurable lease, resume by itself', { timeout: 180_000 }, async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(FLOOD)) return t.fail(`workload not built: ${FLOOD} (make build)`);
  const mnt = fs.mkdtempSync('/tmp/gs-de-');
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0755', 'gs-diskerr-test', mnt], { encoding: 'utf8' });
  if (m.status !== 0) {
    fs.rmdirSync(mnt);
    return t.fail(`mount tmpfs: ${m.stderr}`);
  }
  const op = uniqueName('gs-de');
  const st = path.join(mnt, 's');
  const runDir = shortStateDir(t);
  t.teardown(async () => {
    await cleanupOp(st, op);
    spawnSync('umount', ['-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  fs.mkdirSync(st, { mode: 0o700 });
  // ports nobody listens on, all leasable: every new one is a new lease
  const base = 20000 + (process.pid % 20) * 1000;
  const span = 3000;
  const policy = path.join(runDir, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: `${base}-${base + span}` }, ttl_s: 300, max_uses: 0 }], delegate: [] }));

  const env = { ...process.env, GENSEE_STATE_RESERVE: '1M', GENSEE_RUN_DIR: runDir };
  // gensee's per-fault lines to a file of their own: stderr keeps only what gensee says about itself
  const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--json-out', path.join(runDir, 'out.jsonl'), '--', FLOOD, 'flood', '--port', String(base), '--span', String(span), '--ms', '25000', '--every', '100'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let last: FloodProgress | null = null;
  let err = '';
  let buf = '';
  c.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (l.startsWith('{"t":') || l.startsWith('{"attempts"')) last = JSON.parse(l) as FloodProgress;
    }
  });
  c.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((res) => c.on('close', (code) => res(code)));
  const now = (): FloodProgress => last ?? { t: 0, attempts: 0, ok: 0, EACCES: 0, ECONNREFUSED: 0, other: 0 };
  const status = () => {
    const r = spawnSync(GENSEE_BIN, ['status', '--op', op, '--state-dir', st, '--json'], { encoding: 'utf8', env });
    try {
      return JSON.parse(r.stdout) as { condition: string; failed?: { log: string; error: string } };
    } catch {
      return { condition: `unreadable: ${r.stderr.slice(0, 200)}` };
    }
  };

  await waitFor(() => now().ECONNREFUSED > 200, startupDeadline(), 50);
  t.ok(now().ECONNREFUSED > 200, `grants work before the disk fills (${now().ECONNREFUSED} granted)`);

  // another tenant fills the filesystem
  const filler = path.join(mnt, 'filler');
  const fd = fs.openSync(filler, 'w');
  const chunk = Buffer.alloc(64 << 10);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (e) {
    t.equal((e as NodeJS.ErrnoException).code, 'ENOSPC', 'the filesystem is full');
  }
  fs.closeSync(fd);

  const failed = await waitFor(() => (status().condition === 'failed' ? status() : null), 20_000, 100).catch(() => status());
  t.equal(failed.condition, 'failed', 'gensee status: failed', { status: failed, stderr: err.slice(-2000) });
  t.match(failed.failed?.error ?? '', /ENOSPC/, 'naming the error');

  // no lease in the kernel without its resolution line
  const dp = DataPlane.open(op);
  const kernel = dp.listLeases().map((l) => `${l.tuple.address}:${l.tuple.port}`);
  dp.close();
  const faults = path.join(st, 'network-operations', op, 'faults.jsonl');
  const granted = new Set(
    lines(faults)
      .filter((l) => l.kind === 'resolution' && (l.resolution as { action: string }).action === 'retry_after_lease')
      .map((l) => {
        const x = (l.resolution as { lease: { address: string; port: number } }).lease;
        return `${x.address}:${x.port}`;
      }),
  );
  const orphans = kernel.filter((k) => !granted.has(k));
  t.same(orphans, [], `every one of the ${kernel.length} kernel leases has its resolution line in faults.jsonl`);

  // failed: new calls are refused, no lease enters the kernel
  const before = now();
  await waitFor(() => now().EACCES > before.EACCES + 200, 10_000, 50).catch(() => undefined);
  const during = now();
  const dp2 = DataPlane.open(op);
  const kernel2 = dp2.listLeases().length;
  dp2.close();
  t.equal(kernel2, kernel.length, `no new lease in the kernel while failed (${during.attempts - before.attempts} calls)`);
  t.ok(during.EACCES > before.EACCES, `calls are refused while failed (${during.EACCES - before.EACCES})`);
  const lines0 = err.split('\n').filter((l) => /FAILED/.test(l)).length;
  t.equal(lines0, 1, 'one stderr line says so', { stderr: err.slice(-2000) });

  // space returns: serving again by itself
  fs.rmSync(filler);
  await waitFor(() => status().condition !== 'failed', 20_000, 100).catch(() => undefined);
  // active again (closed if a slow machine let the workload end meanwhile:
  // the evidence_resumed line below says it resumed)
  t.match(status().condition, /^(active|closed)$/, 'gensee status: no longer failed');
  const back = now().ECONNREFUSED;
  await waitFor(() => now().ECONNREFUSED > back + 50, 10_000, 50).catch(() => undefined);
  t.ok(now().ECONNREFUSED > back + 50, `grants work again (${now().ECONNREFUSED - back} since)`);
  t.ok(err.split('\n').length < 20, `stderr stayed short (${err.split('\n').length} lines)`, { stderr: err.slice(-2000) });

  t.equal(await exited, 0, 'gensee run ended with its workload');
  const resumed = lines(faults).filter((l) => l.kind === 'evidence_resumed');
  t.equal(resumed.length, 1, 'faults.jsonl records the resumption, once: no flapping on a full disk');
  t.equal(lines(faults).filter((l) => l.kind === 'evidence_failed').length, 1, 'and the failure');
  t.ok(Number(resumed[0]?.denied) > 0, `with the calls denied meanwhile (${String(resumed[0]?.denied)})`);
  const v = spawnSync(GENSEE_BIN, ['verify', '--op', op, '--state-dir', st], { encoding: 'utf8' });
  t.equal(v.status, 0, 'gensee verify passes', { verify: `${v.stdout}${v.stderr}`.slice(-2000) });
});

t.test('gensee stop on a full disk: killed, detached, unpinned; the record once space returns', { timeout: 180_000 }, async (t) => {
  if (!requireKernel(t)) return;
  const mnt = fs.mkdtempSync('/tmp/gs-ds-');
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'gs-diskstop-test', mnt], { encoding: 'utf8' });
  if (m.status !== 0) {
    fs.rmdirSync(mnt);
    return t.fail(`mount tmpfs: ${m.stderr}`);
  }
  const op = uniqueName('gs-ds');
  const st = path.join(mnt, 's');
  const runDir = shortStateDir(t);
  t.teardown(async () => {
    await cleanupOp(st, op);
    spawnSync('umount', ['-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  fs.mkdirSync(st, { mode: 0o700 });
  const policy = path.join(runDir, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [] }));
  const env = { ...process.env, GENSEE_RUN_DIR: runDir };
  const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--', FLOOD, 'flood', '--port', '30000', '--span', '1000', '--ms', '60000'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((res) => c.on('close', (code) => res(code)));
  const opFile = path.join(st, 'network-operations', op, 'operation.json');
  await waitFor(() => fs.existsSync(opFile) && fs.existsSync(path.join(st, 'network-operations', op, 'faults.jsonl')), startupDeadline(), 50);
  const cgroup = (JSON.parse(fs.readFileSync(opFile, 'utf8')) as { cgroup: string }).cgroup;
  await new Promise((r) => setTimeout(r, 1000));
  const filler = path.join(mnt, 'filler');
  const fd = fs.openSync(filler, 'w');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(64 << 10));
  } catch {
    /* full */
  }
  fs.closeSync(fd);
  await new Promise((r) => setTimeout(r, 1000));
  const s1 = spawnSync(GENSEE_BIN, ['stop', '--op', op, '--state-dir', st], { encoding: 'utf8', env, timeout: 60_000 });
  t.ok(s1.status === 0 || s1.status === 3, `gensee stop on the full disk: exit ${s1.status} (0, or 3: stopped but not all recorded)`, { out: `${s1.stdout}${s1.stderr}` });
  t.notOk(fs.existsSync(cgroup), 'the cgroup is gone');
  t.notOk(fs.existsSync(`/sys/fs/bpf/gensee/${op}`), 'the pins are gone');
  await exited;
  fs.rmSync(filler);
  const s2 = spawnSync(GENSEE_BIN, ['stop', '--op', op, '--state-dir', st], { encoding: 'utf8', env, timeout: 60_000 });
  t.equal(s2.status, 0, 'gensee stop again once space returns records the stop', { out: `${s2.stdout}${s2.stderr}` });
  const v = spawnSync(GENSEE_BIN, ['verify', '--op', op, '--state-dir', st], { encoding: 'utf8' });
  t.equal(v.status, 0, 'gensee verify passes: torn last lines recorded in every log', { verify: `${v.stdout}${v.stderr}`.slice(-2000) });
});

t.test('GENSEE_ON_EVIDENCE_FAILURE=exit: the supervisor exits 75, the hooks stay pinned for stop', { timeout: 120_000 }, async (t) => {
  if (!requireKernel(t)) return;
  const mnt = fs.mkdtempSync('/tmp/gs-dx-');
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'gs-diskexit-test', mnt], { encoding: 'utf8' });
  if (m.status !== 0) {
    fs.rmdirSync(mnt);
    return t.fail(`mount tmpfs: ${m.stderr}`);
  }
  const op = uniqueName('gs-dx');
  const st = path.join(mnt, 's');
  const runDir = shortStateDir(t);
  t.teardown(async () => {
    await cleanupOp(st, op);
    spawnSync('umount', ['-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  fs.mkdirSync(st, { mode: 0o700 });
  const base = 23000 + (process.pid % 20) * 100;
  const policy = path.join(runDir, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: `${base}-${base + 3000}` }, ttl_s: 300, max_uses: 0 }], delegate: [] }));
  const env = { ...process.env, GENSEE_RUN_DIR: runDir, GENSEE_ON_EVIDENCE_FAILURE: 'exit', GENSEE_STATE_RESERVE: '64K' };
  const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--', FLOOD, 'flood', '--port', String(base), '--span', '3000', '--ms', '60000'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  c.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((res) => c.on('close', (code) => res(code)));
  await waitFor(() => fs.existsSync(path.join(st, 'network-operations', op, 'faults.jsonl')), startupDeadline(), 50);
  await new Promise((r) => setTimeout(r, 1000));
  const fd = fs.openSync(path.join(mnt, 'filler'), 'w');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(64 << 10));
  } catch {
    /* full */
  }
  fs.closeSync(fd);
  const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 30_000))]);
  t.equal(code, 75, 'gensee run exits 75 on the evidence failure', { stderr: err.slice(-1500) });
  t.ok(fs.existsSync(`/sys/fs/bpf/gensee/${op}`), 'its hooks stay pinned, failing closed');
  const s = spawnSync(GENSEE_BIN, ['stop', '--op', op, '--state-dir', st], { encoding: 'utf8', env, timeout: 60_000 });
  t.ok(s.status === 0 || s.status === 3, `gensee stop ends it on the full disk (exit ${s.status})`, { out: `${s.stdout}${s.stderr}` });
  t.notOk(fs.existsSync(`/sys/fs/bpf/gensee/${op}`), 'the pins are gone');
});

t.test('a disk that fails every write mid-run (ext4 shut down): fail closed, stop still ends it', { timeout: 120_000 }, async (t) => {
  if (!requireKernel(t)) return;
  const work = shortStateDir(t);
  const img = path.join(work, 'disk.img');
  fs.writeFileSync(img, '');
  fs.truncateSync(img, 64 << 20);
  if (spawnSync('mkfs.ext4', ['-q', '-F', img]).status !== 0) return t.fail('mkfs.ext4');
  const lo = spawnSync('losetup', ['--find', '--show', img], { encoding: 'utf8' });
  if (lo.status !== 0) return t.fail(`losetup: ${lo.stderr}`);
  const dev = lo.stdout.trim();
  const mnt = fs.mkdtempSync('/tmp/gs-dr-');
  const op = uniqueName('gs-dr');
  const st = path.join(mnt, 's');
  t.teardown(async () => {
    await cleanupOp(st, op);
    spawnSync('umount', ['-l', mnt]);
    spawnSync('losetup', ['-d', dev]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  if (spawnSync('mount', [dev, mnt]).status !== 0) return t.fail('mount');
  fs.mkdirSync(st, { mode: 0o700 });
  const base = 26000 + (process.pid % 20) * 100;
  const policy = path.join(work, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: `${base}-${base + 3000}` }, ttl_s: 300, max_uses: 0 }], delegate: [] }));
  const env = { ...process.env, GENSEE_RUN_DIR: work };
  const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--', FLOOD, 'flood', '--port', String(base), '--span', '3000', '--ms', '60000', '--every', '100'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  const opFile = path.join(st, 'network-operations', op, 'operation.json');
  const cgroup = (JSON.parse(fs.readFileSync(opFile, 'utf8')) as { cgroup: string }).cgroup;
  t.equal(spawnSync(path.join(PACKAGE_ROOT, 'obj', 'adv', 'fsshutdown'), [mnt]).status, 0, 'the disk is gone: every write fails (EIO)');
  const status = () => {
    const r = spawnSync(GENSEE_BIN, ['status', '--op', op, '--state-dir', st, '--json'], { encoding: 'utf8', env });
    try {
      return JSON.parse(r.stdout) as { condition: string; failed?: { error: string } };
    } catch {
      return { condition: `unreadable: ${r.stderr.slice(0, 200)}` };
    }
  };
  const s = await waitFor(() => (status().condition === 'failed' ? status() : null), 20_000, 100).catch(() => status());
  t.equal(s.condition, 'failed', 'gensee status: failed, though the record cannot be read', { status: s, stderr: err.slice(-1500) });
  t.match(s.failed?.error ?? '', /EIO|EROFS/, 'naming the error');
  const dp = DataPlane.open(op);
  const k0 = dp.listLeases().length;
  const before = now();
  await waitFor(() => now().EACCES > before.EACCES + 200, 10_000, 50).catch(() => undefined);
  const k1 = dp.listLeases().length;
  dp.close();
  t.equal(k1, k0, 'no new lease in the kernel while failed');
  t.ok(now().EACCES > before.EACCES, `calls are refused (${now().EACCES - before.EACCES})`);
  t.equal(err.split('\n').filter((l) => /FAILED/.test(l)).length, 1, 'one stderr line says so', { stderr: err.slice(-1500) });
  const stop = spawnSync(GENSEE_BIN, ['stop', '--op', op, '--state-dir', st], { encoding: 'utf8', env, timeout: 60_000 });
  t.ok(stop.status === 3, `gensee stop on the dead disk: exit ${stop.status} (3: stopped, not recorded)`, { out: `${stop.stdout}${stop.stderr}` });
  t.notOk(fs.existsSync(cgroup), 'the cgroup is gone');
  t.notOk(fs.existsSync(`/sys/fs/bpf/gensee/${op}`), 'the pins are gone');
  await exited;
});
