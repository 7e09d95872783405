import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildIdentity } from '../../src/version';
import { PACKAGE_ROOT } from '../../src/addon';
import {
  OperationInit,
  assertOpId,
  closeOperation,
  createOperation,
  isValidOpId,
  opDir,
  openOperation,
  readKey,
  resolveStateDir,
  updateOperation,
} from '../../src/state/operation';

const mode = (p: string): number => fs.lstatSync(p).mode & 0o7777;

const init = (id = 'demo', over: Partial<OperationInit> = {}): OperationInit => ({
  id,
  owner_uid: 1000,
  cgroup: '/sys/fs/cgroup/gensee/demo',
  policy_hash: 'sha256:' + 'ab'.repeat(32),
  resolver: { pid: 4242, start_time_ticks: 123456 },
  ...over,
});

t.test('resolveStateDir: flag > env > default', async (t) => {
  const saved = process.env.GENSEE_STATE_DIR;
  t.teardown(() => {
    if (saved === undefined) delete process.env.GENSEE_STATE_DIR;
    else process.env.GENSEE_STATE_DIR = saved;
  });
  delete process.env.GENSEE_STATE_DIR;
  t.equal(resolveStateDir(), '/var/lib/gensee');
  process.env.GENSEE_STATE_DIR = '/srv/env-state';
  t.equal(resolveStateDir(), '/srv/env-state');
  t.equal(resolveStateDir('/srv/flag'), '/srv/flag');
  t.equal(resolveStateDir('rel'), path.resolve('rel'), 'made absolute');
  t.throws(() => resolveStateDir(''), { code: 'E_USAGE' });
  process.env.GENSEE_STATE_DIR = '';
  t.equal(resolveStateDir(), '/var/lib/gensee', 'empty env is unset');
});

t.test('operation ids', async (t) => {
  for (const ok of ['a', 'demo', 'A0', 'op-1.2_x', 'x'.repeat(64)]) t.ok(isValidOpId(ok), ok);
  for (const bad of ['', '.', '..', '-x', '_x', '.x', 'a/b', 'a b', 'x'.repeat(65), 'é', 'a\0', 42, null]) {
    t.notOk(isValidOpId(bad), JSON.stringify(bad));
    t.throws(() => assertOpId(bad), { code: 'E_BAD_OP_ID' });
  }
  t.equal(opDir('/var/lib/gensee', 'demo'), '/var/lib/gensee/network-operations/demo');
  t.throws(() => opDir('/s', '../etc'), { code: 'E_BAD_OP_ID' });
});

t.test('createOperation: modes, record, key', async (t) => {
  const state = path.join(t.testdir({}), 'state');
  const old = process.umask(0);
  let rec;
  try {
    rec = await createOperation(state, init('demo', { peers: ['10.77.0.2', 'fd00::2'] }));
  } finally {
    process.umask(old);
  }
  const dir = path.join(state, 'network-operations', 'demo');
  t.equal(mode(state), 0o700, 'created state dir 0700');
  t.equal(mode(path.join(state, 'network-operations')), 0o700);
  t.equal(mode(dir), 0o700);
  t.equal(mode(path.join(dir, 'operation.json')), 0o600);
  t.equal(mode(path.join(dir, 'key')), 0o600);
  t.same(fs.readdirSync(dir).sort(), ['key', 'operation.json'], 'no temp files');
  t.equal(fs.readFileSync(path.join(dir, 'key')).length, 32);

  const onDisk = JSON.parse(fs.readFileSync(path.join(dir, 'operation.json'), 'utf8'));
  t.same(Object.keys(onDisk), ['schema', 'id', 'owner_uid', 'cgroup', 'policy_hash', 'resolver', 'workload', 'resources', 'state', 'stopped', 'created_at', 'updated_at', 'peers', 'totals', 'mode', 'gensee']);
  t.same(onDisk, rec);
  t.same(onDisk.gensee, buildIdentity(), 'the gensee that created it: version and build commit');
  t.equal(onDisk.gensee.version, (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version, 'the version in package.json');
  t.match(onDisk, {
    schema: 1,
    id: 'demo',
    owner_uid: 1000,
    resolver: { pid: 4242, start_time_ticks: 123456 },
    workload: null,
    resources: null,
    state: 'active',
    stopped: null,
    peers: ['10.77.0.2', 'fd00::2'],
    totals: { allow: 0, deny: {}, lost_events: 0 },
  });
  t.same(await openOperation(state, 'demo'), rec);

  const r2 = await createOperation(state, init('nores', { resolver: undefined }));
  t.equal(r2.resolver, null);
  t.same(r2.peers, []);
});

t.test('createOperation refuses bad input with nothing written', async (t) => {
  const state = t.testdir({});
  await t.rejects(createOperation(state, init('bad id')), { code: 'E_BAD_OP_ID' });
  await t.rejects(createOperation(state, init('x', { owner_uid: -1 })), { code: 'E_USAGE' });
  await t.rejects(createOperation(state, init('x', { peers: ['not-an-ip'] })), { code: 'E_USAGE' });
  await t.rejects(createOperation(state, init('x', { cgroup: '' })), { code: 'E_USAGE' });
  t.notOk(fs.existsSync(path.join(state, 'network-operations')));
});

t.test('existing operation, reopen, key stability', async (t) => {
  const state = t.testdir({});
  const first = await createOperation(state, init());
  const key1 = await readKey(state, 'demo');
  t.equal(key1.length, 32);
  await t.rejects(createOperation(state, init()), { code: 'E_OP_EXISTS' });
  await updateOperation(state, 'demo', { totals: { allow: 5, deny: { policy_denied: 2 }, lost_events: 1 } });

  const reopened = await createOperation(state, init('demo', { policy_hash: 'new', resolver: { pid: 99, start_time_ticks: 7 } }), { reopen: true });
  t.equal(reopened.created_at, first.created_at, 'created_at kept');
  t.same(reopened.totals, { allow: 5, deny: { policy_denied: 2 }, lost_events: 1 }, 'totals kept');
  t.equal(reopened.policy_hash, 'new');
  t.same(reopened.resolver, { pid: 99, start_time_ticks: 7 });
  t.same(await readKey(state, 'demo'), key1, 'key stable across reopen');

  // the same again: nothing to change, so nothing written (not even updated_at)
  const file = path.join(opDir(state, 'demo'), 'operation.json');
  const before = fs.statSync(file, { bigint: true });
  const bytes = fs.readFileSync(file);
  const same = await createOperation(state, init('demo', { policy_hash: 'new', resolver: { pid: 99, start_time_ticks: 7 } }), { reopen: true });
  t.same(same, reopened, 'an identical reopen returns the record as it is');
  const after = fs.statSync(file, { bigint: true });
  t.equal(after.ino, before.ino, 'not replaced');
  t.equal(after.mtimeNs, before.mtimeNs, 'not written');
  t.same(fs.readFileSync(file), bytes);
  // one field differs: written
  const other = await createOperation(state, init('demo', { policy_hash: 'newer', resolver: { pid: 99, start_time_ticks: 7 } }), { reopen: true });
  t.equal(other.policy_hash, 'newer');
  t.not(fs.statSync(file, { bigint: true }).ino, before.ino, 'a change is written (a new file renamed over)');
  t.equal((await openOperation(state, 'demo')).policy_hash, 'newer');

  await closeOperation(state, 'demo');
  const again = await createOperation(state, init(), { reopen: true });
  t.equal(again.state, 'active', 'reopen reactivates');
  t.same(await readKey(state, 'demo'), key1);

  await t.rejects(createOperation(state, init('demo', { owner_uid: 2000 }), { reopen: true }), { code: 'E_OP_EXISTS', message: /uid 1000/ });

  // a dir without operation.json (crash between key and record) is completed, key kept
  const dir = opDir(state, 'demo');
  fs.unlinkSync(path.join(dir, 'operation.json'));
  await createOperation(state, init());
  t.same(await readKey(state, 'demo'), key1);
});

t.test('unknown operation', async (t) => {
  const state = t.testdir({});
  await t.rejects(openOperation(state, 'nope'), { code: 'E_UNKNOWN_OP' });
  await t.rejects(readKey(state, 'nope'), { code: 'E_UNKNOWN_OP' });
  await t.rejects(updateOperation(state, 'nope', { state: 'closed' }), { code: 'E_UNKNOWN_OP' });
  await t.rejects(openOperation(state, '../x'), { code: 'E_BAD_OP_ID' });
});

t.test('symlinks refused at every position', async (t) => {
  const root = t.testdir({ real: {}, elsewhere: {} });
  // state dir component
  const realState = path.join(root, 'real');
  await createOperation(realState, init());
  fs.symlinkSync(realState, path.join(root, 'state-link'));
  await t.rejects(openOperation(path.join(root, 'state-link'), 'demo'), { code: 'E_SYMLINK', message: /state-link/ });
  await t.rejects(createOperation(path.join(root, 'state-link'), init('other')), { code: 'E_SYMLINK' });
  await t.rejects(readKey(path.join(root, 'state-link'), 'demo'), { code: 'E_SYMLINK' });

  // the op dir itself
  const ops = path.join(realState, 'network-operations');
  fs.symlinkSync(path.join(ops, 'demo'), path.join(ops, 'alias'));
  await t.rejects(openOperation(realState, 'alias'), { code: 'E_SYMLINK', message: /alias/ });
  await t.rejects(createOperation(realState, init('alias'), { reopen: true }), { code: 'E_SYMLINK' });

  // operation.json
  const dir2 = opDir(realState, 'two');
  await createOperation(realState, init('two'));
  fs.renameSync(path.join(dir2, 'operation.json'), path.join(root, 'elsewhere', 'operation.json'));
  fs.symlinkSync(path.join(root, 'elsewhere', 'operation.json'), path.join(dir2, 'operation.json'));
  await t.rejects(openOperation(realState, 'two'), { code: 'E_SYMLINK', message: /operation\.json/ });
  await t.rejects(updateOperation(realState, 'two', { state: 'closed' }), { code: 'E_SYMLINK' });
  await t.rejects(createOperation(realState, init('two'), { reopen: true }), { code: 'E_SYMLINK' });

  // key
  const dir3 = opDir(realState, 'three');
  await createOperation(realState, init('three'));
  fs.renameSync(path.join(dir3, 'key'), path.join(root, 'elsewhere', 'key'));
  fs.symlinkSync(path.join(root, 'elsewhere', 'key'), path.join(dir3, 'key'));
  await t.rejects(readKey(realState, 'three'), { code: 'E_SYMLINK' });
  await t.rejects(openOperation(realState, 'three'), { code: 'E_SYMLINK' });
  await t.rejects(createOperation(realState, init('three'), { reopen: true }), { code: 'E_SYMLINK' });
});

t.test('modes: loose refused on read, fixed on (re)create; foreign owner refused', async (t) => {
  const state = t.testdir({});
  await createOperation(state, init());
  const dir = opDir(state, 'demo');
  fs.chmodSync(dir, 0o755);
  await t.rejects(openOperation(state, 'demo'), { code: 'E_BAD_MODE', message: /0755/ });
  await createOperation(state, init(), { reopen: true });
  t.equal(mode(dir), 0o700, 'reopen tightened the dir');
  t.ok(await openOperation(state, 'demo'));

  fs.chmodSync(path.join(dir, 'operation.json'), 0o644);
  await t.rejects(openOperation(state, 'demo'), { code: 'E_BAD_MODE', message: /operation\.json/ });
  fs.chmodSync(path.join(dir, 'operation.json'), 0o600);

  fs.chmodSync(path.join(dir, 'key'), 0o640);
  await t.rejects(readKey(state, 'demo'), { code: 'E_BAD_MODE' });
  await t.rejects(openOperation(state, 'demo'), { code: 'E_BAD_MODE' });
  fs.chmodSync(path.join(dir, 'key'), 0o600);

  fs.chownSync(path.join(dir, 'operation.json'), 1000, 1000);
  await t.rejects(openOperation(state, 'demo'), { code: 'E_BAD_MODE', message: /uid 1000/ }, 'records must be root-owned, even by the op owner');
  fs.chownSync(path.join(dir, 'operation.json'), 0, 0);

  fs.chownSync(dir, 1000, 1000);
  t.ok(await openOperation(state, 'demo'), 'the op dir may belong to the operation owner');
  fs.chownSync(dir, 4242, 4242);
  await t.rejects(openOperation(state, 'demo'), { code: 'E_BAD_MODE' });
});

t.test('damaged records are refused', async (t) => {
  const state = t.testdir({});
  await createOperation(state, init());
  const file = path.join(opDir(state, 'demo'), 'operation.json');
  const good = fs.readFileSync(file, 'utf8');
  const put = (s: string): void => {
    fs.writeFileSync(file, s);
    fs.chmodSync(file, 0o600);
  };
  put('{not json');
  await t.rejects(openOperation(state, 'demo'), { code: 'E_BAD_JSON' });
  put(JSON.stringify({ ...JSON.parse(good), extra: 1 }));
  await t.rejects(openOperation(state, 'demo'), { code: 'E_STATE', message: /unknown field "extra"/ });
  put(JSON.stringify({ ...JSON.parse(good), id: 'other' }));
  await t.rejects(openOperation(state, 'demo'), { code: 'E_STATE', message: /"other"/ });
  put(JSON.stringify({ ...JSON.parse(good), schema: 2 }));
  await t.rejects(openOperation(state, 'demo'), { code: 'E_STATE', message: /schema/ });
  put(JSON.stringify({ ...JSON.parse(good), state: 'paused' }));
  await t.rejects(openOperation(state, 'demo'), { code: 'E_STATE', message: /state/ });
  put(good);
  t.ok(await openOperation(state, 'demo'));
});

t.test('updateOperation: patches, immutables, concurrency', async (t) => {
  const state = t.testdir({});
  const first = await createOperation(state, init());
  await new Promise((r) => setTimeout(r, 5));
  const upd = await updateOperation(state, 'demo', { peers: ['10.77.0.9'], resolver: null });
  t.same(upd.peers, ['10.77.0.9']);
  t.equal(upd.resolver, null);
  t.ok(upd.updated_at > first.updated_at, 'updated_at advances');
  t.equal(upd.created_at, first.created_at);

  await t.rejects(updateOperation(state, 'demo', { owner_uid: 0 } as never), { code: 'E_USAGE', message: /owner_uid/ });
  await t.rejects(updateOperation(state, 'demo', { id: 'x' } as never), { code: 'E_USAGE' });
  await t.rejects(updateOperation(state, 'demo', { state: 'bogus' } as never), { code: 'E_USAGE' });
  t.same(await openOperation(state, 'demo'), upd, 'refused patches changed nothing');

  await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      updateOperation(state, 'demo', (r) => ({
        totals: { ...r.totals, allow: r.totals.allow + 1, deny: { ...r.totals.deny, policy_denied: (r.totals.deny.policy_denied ?? 0) + i } },
      })),
    ),
  );
  const after = await openOperation(state, 'demo');
  t.equal(after.totals.allow, 50, 'no lost update');
  t.equal(after.totals.deny.policy_denied, (49 * 50) / 2);
  t.same(fs.readdirSync(opDir(state, 'demo')).sort(), ['key', 'operation.json'], 'no temp files');

  const closed = await closeOperation(state, 'demo');
  t.equal(closed.state, 'closed');
  t.equal((await closeOperation(state, 'demo')).state, 'closed', 'idempotent');
});

t.test('workload identity: patched, validated, kept on reopen', async (t) => {
  const state = t.testdir({});
  await createOperation(state, init());
  const w = { identity: 'userns' as const, uid: 165536, gid: 165536 };
  const rec = await updateOperation(state, 'demo', { workload: w });
  t.same(rec.workload, w);
  const file = path.join(opDir(state, 'demo'), 'operation.json');
  t.same(JSON.parse(fs.readFileSync(file, 'utf8')).workload, { identity: 'userns', uid: 165536, gid: 165536 }, 'exactly identity, uid, gid on disk');
  t.same((await openOperation(state, 'demo')).workload, w);
  for (const bad of [
    { identity: 'root', uid: 0, gid: 0 },
    { identity: 'user', uid: -1, gid: 0 },
    { identity: 'user', uid: 1, gid: 0xffffffff },
    { identity: 'user', uid: 1 },
    { identity: 'host_root', uid: 0, gid: 0, warned: true },
    'userns',
  ]) {
    await t.rejects(updateOperation(state, 'demo', { workload: bad as never }), { code: 'E_USAGE' }, JSON.stringify(bad));
  }
  t.same((await openOperation(state, 'demo')).workload, w, 'refused patches changed nothing');
  const host = await updateOperation(state, 'demo', { workload: { identity: 'host_root', uid: 0, gid: 0 } });
  t.same(host.workload, { identity: 'host_root', uid: 0, gid: 0 });
  const re = await createOperation(state, init(), { reopen: true });
  t.same(re.workload, { identity: 'host_root', uid: 0, gid: 0 }, 'a resolver restart keeps the workload identity');
  t.equal((await updateOperation(state, 'demo', { workload: null })).workload, null);
});

t.test('stop record: with state stopped, and only then', async (t) => {
  const state = t.testdir({});
  await createOperation(state, init());
  await updateOperation(state, 'demo', { workload: { identity: 'user', uid: 65534, gid: 65534 } });
  const at = new Date().toISOString();
  await t.rejects(updateOperation(state, 'demo', { state: 'stopped' }), { code: 'E_USAGE', message: /no stop is recorded/ });
  await t.rejects(updateOperation(state, 'demo', { stopped: { at, by: 'gensee_stop', found: 'resolver_gone' } }), { code: 'E_USAGE', message: /state is "active"/ });
  await t.rejects(updateOperation(state, 'demo', { state: 'stopped', stopped: { at, by: 'kill', found: 'resolver_gone' } as never }), { code: 'E_USAGE', message: /by/ });
  await t.rejects(updateOperation(state, 'demo', { state: 'stopped', stopped: { at: 'yesterday', by: 'gensee_stop', found: 'resolver_gone' } }), { code: 'E_USAGE', message: /at/ });
  await t.rejects(updateOperation(state, 'demo', { state: 'stopped', stopped: { at, by: 'gensee_stop', found: 'x' } as never }), { code: 'E_USAGE', message: /found/ });
  t.equal((await openOperation(state, 'demo')).state, 'active', 'nothing changed');

  const stopped = await updateOperation(state, 'demo', { state: 'stopped', resolver: null, stopped: { at, by: 'gensee_stop', found: 'resolver_gone' } });
  t.match(stopped, { state: 'stopped', resolver: null, stopped: { at, by: 'gensee_stop', found: 'resolver_gone' } });
  t.same(await openOperation(state, 'demo'), stopped, 'read back');
  await t.rejects(closeOperation(state, 'demo'), { code: 'E_USAGE', message: /a stop is recorded/ }, 'a stopped operation does not silently become closed');

  const re = await createOperation(state, init(), { reopen: true });
  t.match(re, { state: 'active', stopped: null, workload: null }, 'reopen clears the stop and the dead workload');
});

t.test('records written before workload and stopped existed still parse', async (t) => {
  const state = t.testdir({});
  const rec = await createOperation(state, init());
  const file = path.join(opDir(state, 'demo'), 'operation.json');
  const old = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  delete old.workload;
  delete old.stopped;
  delete old.mode;
  delete old.gensee;
  fs.writeFileSync(file, JSON.stringify(old));
  fs.chmodSync(file, 0o600);
  t.same(await openOperation(state, 'demo'), { ...rec, gensee: null }, 'missing fields read as null (mode: enforce, gensee: not recorded)');
  const upd = await updateOperation(state, 'demo', { resolver: null });
  t.same(Object.keys(JSON.parse(fs.readFileSync(file, 'utf8'))), ['schema', 'id', 'owner_uid', 'cgroup', 'policy_hash', 'resolver', 'workload', 'resources', 'state', 'stopped', 'created_at', 'updated_at', 'peers', 'totals', 'mode', 'gensee'], 'rewritten in the new form');
  t.equal(upd.workload, null);

  // a version field that is not one is refused, not guessed at
  for (const bad of [{ version: 1, commit: null }, { version: '0.1.0', commit: '../x' }, { version: '0.1.0' }, { version: '0.1.0', commit: null, extra: 1 }]) {
    fs.writeFileSync(file, JSON.stringify({ ...old, gensee: bad }));
    fs.chmodSync(file, 0o600);
    await t.rejects(openOperation(state, 'demo'), { code: 'E_STATE', message: /gensee/ }, `gensee ${JSON.stringify(bad)} refused`);
  }

  // a damaged pairing on disk is refused, not repaired
  fs.writeFileSync(file, JSON.stringify({ ...old, state: 'stopped' }));
  fs.chmodSync(file, 0o600);
  await t.rejects(openOperation(state, 'demo'), { code: 'E_STATE', message: /no stop is recorded/ });
});
