// `gensee rm` frees an ended operation's id and keeps, archives or deletes
// its evidence; `gensee prune` does it by age. Tried as an attacker would:
// a path-traversal id, a live operation (a real supervisor, then one killed
// -9), another user's operation as a real non-root uid, a symlinked state
// directory or archive. Every refusal changes nothing and is recorded.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { gensee, CliResult } from '../helpers/gensee';
import { GENSEE_BIN, requireKernel, uniqueName, testCgroup, waitFor } from '../helpers/kernel';
import { shortStateDir, supervisedOp, superviseProcess, workload } from '../helpers/supervisor';
import { createOperation, updateOperation, opDir, OperationRecord } from '../../src/state/operation';
import { readStartTimeTicks } from '../../src/resolver/subject';
import { ARCHIVE_DIR, HOUSEKEEPING_LOG, REMOVED_FILE } from '../../src/state/remove';

const NOBODY = 65534;
const OTHER = 64999; // a uid with no account: owns nothing on this machine

/** every path under dir with its mode and content: to see that a refusal changed nothing */
function snapshot(dir: string): string[] {
  const outv: string[] = [];
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d).sort()) {
      if (n === HOUSEKEEPING_LOG) continue; // the record of what was tried
      const p = path.join(d, n);
      const st = fs.lstatSync(p);
      outv.push(`${path.relative(dir, p)} ${st.mode.toString(8)} ${st.uid}`);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) outv.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return outv;
}

function housekeeping(st: string): Record<string, unknown>[] {
  try {
    return fs.readFileSync(path.join(st, HOUSEKEEPING_LOG), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
}

/** an ended operation: created, then stopped (or closed) `agoMs` ago as far as its record says */
async function ended(st: string, id: string, how: 'stopped' | 'closed' = 'stopped', owner = 0): Promise<OperationRecord> {
  await createOperation(st, { id, owner_uid: owner, cgroup: `/sys/fs/cgroup/${id}-never-made`, policy_hash: 'h' });
  return how === 'stopped'
    ? updateOperation(st, id, { state: 'stopped', stopped: { at: new Date().toISOString(), by: 'gensee_stop', found: 'no_resolver' } })
    : updateOperation(st, id, { state: 'closed' });
}

/** age a record: its stop/update time set `ms` into the past (as a long-ended operation's would be) */
function age(st: string, id: string, ms: number): void {
  const f = path.join(opDir(st, id), 'operation.json');
  const rec = JSON.parse(fs.readFileSync(f, 'utf8')) as OperationRecord;
  const at = new Date(Date.now() - ms).toISOString();
  rec.updated_at = at;
  if (rec.stopped) rec.stopped.at = at;
  fs.writeFileSync(f, JSON.stringify(rec));
}

/** bin/gensee as another uid (setpriv: real uid, gid and no supplementary groups) */
function asUid(uid: number, args: string[]): CliResult {
  // env -i: nothing of the test runner's (its NODE_OPTIONS hooks write under .tap/) reaches it
  const r = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'env', '-i', `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`, process.execPath, GENSEE_BIN, ...args], { encoding: 'utf8' });
  return { code: r.status ?? 1, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function chownTree(p: string, uid: number): void {
  fs.lchownSync(p, uid, uid);
  if (fs.lstatSync(p).isDirectory()) for (const n of fs.readdirSync(p)) chownTree(path.join(p, n), uid);
}

t.test('rm frees the id; the evidence is kept, archived or deleted as asked', async (t) => {
  const st = shortStateDir(t);
  await ended(st, 'keepme');
  fs.writeFileSync(path.join(opDir(st, 'keepme'), 'faults.jsonl'), '{"kind":"x"}\n', { mode: 0o600 });
  const before = snapshot(st);
  const dry = await gensee(['rm', '--op', 'keepme', '--state-dir', st, '--dry-run', '--json']);
  t.equal(dry.code, 0, dry.stderr);
  t.match(JSON.parse(dry.stdout), { event: 'would_remove', op: 'keepme', evidence: 'keep', dry_run: true });
  t.same(snapshot(st), before, '--dry-run changes nothing');

  const r = await gensee(['rm', '--op', 'keepme', '--state-dir', st, '--json']);
  t.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { to: string; evidence: string; recorded: boolean };
  t.match(j, { event: 'removed', op: 'keepme', state: 'stopped', evidence: 'keep', recorded: true });
  t.notOk(fs.existsSync(path.join(st, 'network-operations', 'keepme')), 'gone from network-operations/');
  t.equal(path.dirname(j.to), path.join(st, ARCHIVE_DIR), 'kept under archived-operations/');
  t.match(path.basename(j.to), /^keepme@\d{8}T\d{6}\.\d{3}Z$/);
  t.equal(fs.readFileSync(path.join(j.to, 'faults.jsonl'), 'utf8'), '{"kind":"x"}\n', 'the evidence is intact');
  t.match(JSON.parse(fs.readFileSync(path.join(j.to, REMOVED_FILE), 'utf8')), { op: 'keepme', by: 'gensee rm', by_uid: 0, state: 'stopped' }, 'removed.json says who and when');
  t.equal(fs.statSync(path.join(st, ARCHIVE_DIR)).mode & 0o777, 0o700, 'archive dir 0700');

  // the id is free: a new operation of the same name is created, not E_OP_EXISTS
  await createOperation(st, { id: 'keepme', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h2' });
  t.pass('the id is used again');
  await updateOperation(st, 'keepme', { state: 'closed' });
  const again = await gensee(['rm', '--op', 'keepme', '--state-dir', st, '--json']);
  t.equal(again.code, 0, again.stderr);
  t.not((JSON.parse(again.stdout) as { to: string }).to, j.to, 'a second removal of the same id keeps both');

  // --archive DIR (created 0700), --delete-evidence
  await ended(st, 'arch', 'closed');
  const dest = path.join(st, 'elsewhere', 'evidence');
  const a = await gensee(['rm', '--op', 'arch', '--state-dir', st, '--archive', dest]);
  t.equal(a.code, 0, a.stderr);
  t.match(a.stdout, /removed operation arch \(closed at .*\): its evidence is in .*elsewhere\/evidence\/arch@/);
  t.equal(fs.readdirSync(dest).length, 1);
  t.equal(fs.statSync(dest).mode & 0o777, 0o700);
  await ended(st, 'gone');
  const d = await gensee(['rm', '--op', 'gone', '--state-dir', st, '--delete-evidence', '--json']);
  t.equal(d.code, 0, d.stderr);
  t.match(JSON.parse(d.stdout), { evidence: 'delete', to: null });
  t.notOk(fs.readdirSync(path.join(st, ARCHIVE_DIR)).some((n) => n.startsWith('gone@')), 'deleted, not kept');

  const lines = housekeeping(st);
  t.match(lines.filter((l) => l.outcome !== 'dry_run'), [
    { action: 'rm', op: 'keepme', outcome: 'removed', evidence: 'keep' },
    { action: 'rm', op: 'keepme', outcome: 'removed' },
    { action: 'rm', op: 'arch', outcome: 'removed', evidence: 'archive' },
    { action: 'rm', op: 'gone', outcome: 'removed', evidence: 'delete', to: null },
  ], 'every removal recorded');
  t.equal(fs.statSync(path.join(st, HOUSEKEEPING_LOG)).mode & 0o777, 0o600);
  const ls = await gensee(['ls', '--state-dir', st, '--json']);
  t.same((JSON.parse(ls.stdout) as { operations: unknown[] }).operations, [], 'ls shows none of them');
});

t.test('bad input: traversal ids, symlinks, conflicting flags change nothing and are recorded', async (t) => {
  const st = shortStateDir(t);
  await ended(st, 'victim');
  fs.mkdirSync(path.join(st, 'outside'), { mode: 0o700 });
  fs.writeFileSync(path.join(st, 'outside', 'operation.json'), '{}');
  const before = snapshot(st);
  const cases: [string[], number, RegExp][] = [
    [['--op', '../outside'], 2, /E_BAD_OP_ID/],
    [['--op', '..'], 2, /E_BAD_OP_ID/],
    [['--op', 'a/../../victim'], 2, /E_BAD_OP_ID/],
    [['--op', '.hidden'], 2, /E_BAD_OP_ID/],
    [['--op', 'victim/'], 2, /E_BAD_OP_ID/],
    [['--op', 'nosuch'], 2, /E_UNKNOWN_OP/],
    [['--op', 'victim', '--archive', '/tmp/x', '--delete-evidence'], 2, /exclude each other/],
    [['--op', 'victim', '--archive', ''], 2, /must not be empty/],
    [['--op', 'victim', '--archive', path.join(st, 'network-operations', 'inside')], 2, /inside .*network-operations/],
    [['--op', 'victim', '--archive', path.join(st, 'network-operations', 'victim', 'operation.json')], 2, /inside/],
  ];
  for (const [args, code, re] of cases) {
    const r = await gensee(['rm', ...args, '--state-dir', st]);
    t.equal(r.code, code, `${args.join(' ')}: exit ${code}`);
    t.match(r.stderr, re, `${args.join(' ')}: ${re}`);
    t.same(snapshot(st), before, `${args.join(' ')}: nothing changed`);
  }
  const refused = housekeeping(st);
  t.equal(refused.length, cases.length, 'every refusal is recorded');
  t.match(refused.slice(0, 6), [
    { outcome: 'refused', code: 'E_BAD_OP_ID', op: '../outside' },
    { code: 'E_BAD_OP_ID', op: '..' },
    { code: 'E_BAD_OP_ID', op: 'a/../../victim' },
    { code: 'E_BAD_OP_ID' },
    { code: 'E_BAD_OP_ID' },
    { code: 'E_UNKNOWN_OP', op: 'nosuch' },
  ]);

  // a symlink on the state directory's path, or on the archive's
  const link = path.join(st, 'link');
  fs.symlinkSync(st, link);
  const viaLink = await gensee(['rm', '--op', 'victim', '--state-dir', link]);
  t.equal(viaLink.code, 2);
  t.match(viaLink.stderr, /E_SYMLINK: refusing symlink at .*link/, 'a symlinked state dir is refused');
  const alink = path.join(st, 'alink');
  fs.symlinkSync('/tmp', alink);
  const viaALink = await gensee(['rm', '--op', 'victim', '--state-dir', st, '--archive', path.join(alink, 'ev')]);
  t.equal(viaALink.code, 2);
  t.match(viaALink.stderr, /E_SYMLINK/, 'an archive through a symlink is refused');
  t.ok(fs.existsSync(path.join(opDir(st, 'victim'), 'operation.json')), 'the operation is still there');
  // the operation directory itself a symlink to another operation
  await ended(st, 'real');
  fs.symlinkSync(opDir(st, 'real'), path.join(st, 'network-operations', 'alias'));
  const alias = await gensee(['rm', '--op', 'alias', '--state-dir', st]);
  t.equal(alias.code, 2);
  t.match(alias.stderr, /E_SYMLINK/, 'an operation directory that is a symlink is refused');
  t.ok(fs.existsSync(path.join(opDir(st, 'real'), 'operation.json')), 'its target is untouched');
});

t.test('a live operation is refused, with the command that ends it', async (t) => {
  const st = shortStateDir(t);
  // served: the recorded resolver is this very process, alive
  await createOperation(st, { id: 'served', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h', resolver: { pid: process.pid, start_time_ticks: readStartTimeTicks(process.pid)! } });
  // recorded active, its resolver gone: failing closed, nobody serving
  await createOperation(st, { id: 'orphan', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h', resolver: { pid: process.pid, start_time_ticks: 1 } });
  // closed, but its resolver (this process) still runs
  await createOperation(st, { id: 'lingering', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h', resolver: { pid: process.pid, start_time_ticks: readStartTimeTicks(process.pid)! } });
  await updateOperation(st, 'lingering', { state: 'closed' });
  const before = snapshot(st);
  for (const [op, re] of [
    ['served', new RegExp(`operation served is live: served by pid ${process.pid}; end it first: gensee stop --op served --state-dir ${st}`)],
    ['orphan', /recorded active \(its hooks fail closed and nobody serves it\); end it first: gensee stop/],
    ['lingering', /closed but its resolver, pid \d+, still runs/],
  ] as const) {
    const r = await gensee(['rm', '--op', op, '--state-dir', st, '--delete-evidence']);
    t.equal(r.code, 2, `${op}: exit 2`);
    t.match(r.stderr, /E_OP_LIVE/);
    t.match(r.stderr, re, `${op}: says why and how to end it`);
  }
  t.same(snapshot(st), before, 'nothing changed');
  t.match(housekeeping(st), [{ op: 'served', outcome: 'refused', code: 'E_OP_LIVE' }, { op: 'orphan', code: 'E_OP_LIVE' }, { op: 'lingering', code: 'E_OP_LIVE' }], 'each refusal recorded');
  // prune never touches active ones, and skips the lingering one with the reason
  age(st, 'lingering', 86_400_000 * 30);
  const p = await gensee(['prune', '--older-than', '1d', '--state-dir', st, '--json']);
  t.equal(p.code, 0, p.stderr);
  t.match(JSON.parse(p.stdout), { removed: [], skipped: [{ op: 'lingering', code: 'E_OP_LIVE' }] });
});

t.test('a real supervisor: refused live, refused killed -9, removed after stop, id reused', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-rm', { schema: 1, grants: [], leases: [], delegate: [] });
  const sup = await superviseProcess(t, o.args);
  const live = await gensee(['rm', '--op', o.op, '--state-dir', o.stateDir]);
  t.equal(live.code, 2);
  t.match(live.stderr, new RegExp(`E_OP_LIVE: operation ${o.op} is live: served by pid ${sup.pid}`));
  const w = await workload(t, o.cgroup);
  sup.kill('SIGKILL');
  await sup.exited;
  const orphan = await gensee(['rm', '--op', o.op, '--state-dir', o.stateDir]);
  t.equal(orphan.code, 2);
  t.match(orphan.stderr, /E_OP_LIVE: .*recorded active/, 'killed -9: still refused (hooks attached, failing closed)');
  // closed by hand but the kernel still holds it: the hooks are what refuses
  const f = path.join(opDir(o.stateDir, o.op), 'operation.json');
  const saved = fs.readFileSync(f);
  const rec = JSON.parse(saved.toString()) as OperationRecord;
  fs.writeFileSync(f, JSON.stringify({ ...rec, state: 'closed', resolver: null }));
  const forged = await gensee(['rm', '--op', o.op, '--state-dir', o.stateDir]);
  t.equal(forged.code, 2);
  t.match(forged.stderr, /closed but its hooks are still attached; remove them first: gensee stop/, 'a record saying closed does not outweigh attached hooks');
  fs.writeFileSync(f, saved);
  const stop = await gensee(['stop', '--op', o.op, '--state-dir', o.stateDir]);
  t.equal(stop.code, 0, stop.stderr);
  await waitFor(() => w.child.exitCode !== null || w.child.signalCode !== null, 10_000);
  const rm = await gensee(['rm', '--op', o.op, '--state-dir', o.stateDir, '--json']);
  t.equal(rm.code, 0, rm.stderr);
  t.match(JSON.parse(rm.stdout), { event: 'removed', op: o.op, state: 'stopped', evidence: 'keep' });
  // the same id served again from scratch
  fs.mkdirSync(o.cgroup, { recursive: true });
  const again = await superviseProcess(t, o.args);
  const s = await gensee(['status', '--op', o.op, '--state-dir', o.stateDir, '--json']);
  t.equal(s.code, 0, s.stderr);
  const fresh = JSON.parse(s.stdout) as { condition: string; operation: OperationRecord };
  t.match(fresh, { condition: 'active', operation: { id: o.op, state: 'active', stopped: null } }, 'a fresh operation under the freed id');
  t.ok(fresh.operation.created_at > rec.created_at, 'created anew, not reopened');
  again.kill('SIGTERM');
  await again.exited;
  await gensee(['stop', '--op', o.op, '--state-dir', o.stateDir]);
});

t.test('a closed operation with processes left in its cgroup is refused', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const cg = testCgroup(t, 'gs-rmcg');
  const id = uniqueName('gs-rmcg');
  await createOperation(st, { id, owner_uid: 0, cgroup: cg, policy_hash: 'h' });
  await updateOperation(st, id, { state: 'closed' });
  const w = await workload(t, cg);
  const r = await gensee(['rm', '--op', id, '--state-dir', st]);
  t.equal(r.code, 2);
  t.match(r.stderr, new RegExp(`E_OP_LIVE: operation ${id} is closed but processes remain in its cgroup ${cg}`));
  w.child.kill('SIGKILL');
  await waitFor(() => fs.readFileSync(path.join(cg, 'cgroup.procs'), 'utf8').trim() === '', 10_000);
  const ok = await gensee(['rm', '--op', id, '--state-dir', st]);
  t.equal(ok.code, 0, ok.stderr);
});

t.test('as a real non-root uid: ls, rm of its own, of another\'s, of root\'s', async (t) => {
  // a state directory nobody owns (theirs), with nobody's operation and one recorded for another uid
  const st = fs.mkdtempSync('/tmp/gs-nr-');
  t.teardown(() => fs.rmSync(st, { recursive: true, force: true }));
  fs.chmodSync(st, 0o755);
  const mine = path.join(st, 'mine');
  await ended(mine, 'nb-own', 'stopped', NOBODY);
  await ended(mine, 'nb-other', 'stopped', OTHER);
  chownTree(mine, NOBODY);
  // root's own state directory: 0700, root's
  const roots = path.join(st, 'root');
  await ended(roots, 'root-op');

  const ls = asUid(NOBODY, ['ls', '--state-dir', mine, '--json']);
  t.equal(ls.code, 0, ls.stderr);
  const lj = JSON.parse(ls.stdout) as { uid: number; other_owners: number; operations: { id: string }[] };
  t.equal(lj.uid, NOBODY);
  t.same(lj.operations.map((o) => o.id), ['nb-own'], 'ls: only the caller\'s own');
  t.equal(lj.other_owners, 1);
  const lsAll = asUid(NOBODY, ['ls', '--all', '--state-dir', mine, '--json']);
  t.same((JSON.parse(lsAll.stdout) as { operations: { id: string }[] }).operations.map((o) => o.id), ['nb-other', 'nb-own'], 'ls --all: every owner');
  const lsText = asUid(NOBODY, ['ls', '--state-dir', mine]);
  t.match(lsText.stdout, /1 more operation of other owners: gensee ls --all/);

  const lsRoot = asUid(NOBODY, ['ls', '--state-dir', roots]);
  t.equal(lsRoot.code, 0, `ls of root's state dir: exit 0, not EACCES (${lsRoot.stderr})`);
  t.match(lsRoot.stdout, /not readable by uid 65534 \(EACCES\)/);
  t.notMatch(lsRoot.stderr, /EACCES/);
  const lsDefault = asUid(NOBODY, ['ls']);
  t.equal(lsDefault.code, 0, `plain ls as non-root: exit 0 (${lsDefault.stderr})`);

  const before = snapshot(mine);
  const other = asUid(NOBODY, ['rm', '--op', 'nb-other', '--state-dir', mine]);
  t.equal(other.code, 2);
  t.match(other.stderr, /E_NOT_OWNER: operation nb-other belongs to uid 64999, not to you \(uid 65534\)/);
  t.same(snapshot(mine), before, 'another owner\'s operation: nothing changed');
  const rootOp = asUid(NOBODY, ['rm', '--op', 'root-op', '--state-dir', roots, '--delete-evidence']);
  t.equal(rootOp.code, 2);
  t.match(rootOp.stderr, /E_NOT_OWNER: operation root-op .* not readable by uid 65534 \(EACCES\)/);
  t.ok(fs.existsSync(path.join(opDir(roots, 'root-op'), 'operation.json')), 'root\'s operation untouched');
  const prune = asUid(NOBODY, ['prune', '--older-than', '1ms', '--state-dir', mine, '--json']);
  t.equal(prune.code, 0, prune.stderr);
  t.same((JSON.parse(prune.stdout) as { removed: { op: string }[] }).removed.map((r) => r.op), ['nb-own'], 'prune as non-root: only its own');
  t.ok(fs.existsSync(path.join(opDir(mine, 'nb-other'), 'operation.json')), 'the other owner\'s survives prune');
  t.match(housekeeping(mine), [{ action: 'rm', op: 'nb-other', outcome: 'refused', code: 'E_NOT_OWNER', by_uid: NOBODY }, { action: 'prune', op: 'nb-own', outcome: 'removed', by_uid: NOBODY }]);
});

t.test('prune: by age, dry run first, bad durations refused', async (t) => {
  const st = shortStateDir(t);
  await ended(st, 'old-stopped');
  await ended(st, 'old-closed', 'closed');
  await ended(st, 'young');
  await createOperation(st, { id: 'active-old', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h' });
  age(st, 'old-stopped', 8 * 86_400_000);
  age(st, 'old-closed', 9 * 86_400_000);
  age(st, 'active-old', 30 * 86_400_000);
  const before = snapshot(st);
  for (const bad of [[], ['--older-than', 'soon'], ['--older-than', '0'], ['--older-than', '-1d']]) {
    const r = await gensee(['prune', ...bad, '--state-dir', st]);
    t.equal(r.code, 2, `prune ${bad.join(' ')}: exit 2`);
    t.match(r.stderr, bad.length ? /E_BAD_DURATION|E_USAGE/ : /--older-than DURATION is required/);
  }
  const dry = await gensee(['prune', '--older-than', '7d', '--dry-run', '--state-dir', st]);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.stdout, /would remove old-closed .*\nwould remove old-stopped .*\nwould remove 2 operations ended more than 7d ago/);
  t.same(snapshot(st), before, '--dry-run changes nothing');
  const p = await gensee(['prune', '--older-than', '7d', '--delete-evidence', '--state-dir', st, '--json']);
  t.equal(p.code, 0, p.stderr);
  t.same((JSON.parse(p.stdout) as { removed: { op: string }[] }).removed.map((r) => r.op).sort(), ['old-closed', 'old-stopped']);
  t.same(fs.readdirSync(path.join(st, 'network-operations')).sort(), ['active-old', 'young'], 'the young and the active stay');
});
