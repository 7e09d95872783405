// src/resources.ts on layouts this host may not have, built as directories
// of plain files under t.testdir with a mountinfo naming them: pure cgroup2
// (controllers enabled down the tree, memory.swap.max 0), hybrid (the
// operation's own v1 cgroups, joined by gensee-exec), a
// host with neither (recorded with a reason; an explicit limit is an
// error), and supervise's rules on someone else's cgroup. The real kernel
// paths are test/adversarial/resources.test.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  applyExistingCgroupLimits,
  applyOperationLimits,
  cgroupLayout,
  DEFAULT_MEMORY_CAP_BYTES,
  DEFAULT_PIDS_MAX,
  effectiveLimits,
  limitCgroupsOf,
  limitCgroupsToJoin,
  missingPolicyLimits,
  unappliedLimits,
} from '../src/resources';

const GIB = 1024 ** 3;

/** a mountinfo line: id parent major:minor root mountpoint options - fstype source superoptions */
const mi = (mnt: string, fstype: string, opts: string) => `40 23 0:40 / ${mnt.replace(/ /g, '\\040')} rw,relatime shared:9 - ${fstype} ${fstype} ${opts}`;

function tree(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

const read = (f: string) => fs.readFileSync(f, 'utf8');

t.test('defaults: pids 4096, memory min(4 GiB, half the RAM); the policy overrides each', async (t) => {
  t.same(effectiveLimits({}, 64 * GIB), { pids: { value: DEFAULT_PIDS_MAX, source: 'default' }, memory: { value: DEFAULT_MEMORY_CAP_BYTES, source: 'default' } });
  t.equal(effectiveLimits({}, 2 * GIB).memory.value, GIB, 'a small host: half its RAM');
  t.same(effectiveLimits({ pids_max: 100 }, 64 * GIB).pids, { value: 100, source: 'policy' });
  t.same(effectiveLimits({ memory_max_bytes: 2 * GIB }, GIB).memory, { value: 2 * GIB, source: 'policy' }, 'an explicit limit is taken as named');
});

t.test('mountinfo: cgroup2, the v1 hierarchies by controller, escapes undone', async (t) => {
  const d = t.testdir({});
  fs.writeFileSync(
    path.join(d, 'mountinfo'),
    [mi('/sys/fs/cgroup', 'tmpfs', 'rw'), mi('/sys/fs/cgroup/cpu,cpuacct', 'cgroup', 'rw,cpu,cpuacct'), mi('/sys/fs/cgroup/my pids', 'cgroup', 'rw,pids'), mi('/sys/fs/cgroup/unified', 'cgroup2', 'rw'), ''].join('\n'),
  );
  const l = cgroupLayout(path.join(d, 'mountinfo'));
  t.equal(l.cgroup2, '/sys/fs/cgroup/unified');
  t.equal(l.v1.get('pids'), '/sys/fs/cgroup/my pids');
  t.equal(l.v1.get('cpuacct'), '/sys/fs/cgroup/cpu,cpuacct');
  t.notOk(l.v1.has('memory'));
});

t.test('pure cgroup2: enabled in every subtree_control down to the parent, written in the cgroup, swap 0', async (t) => {
  const d = t.testdir({});
  const cg2 = path.join(d, 'cg2');
  tree(cg2, {
    'cgroup.controllers': 'cpuset cpu io memory pids\n',
    'cgroup.subtree_control': 'pids\n',
    'gensee/cgroup.subtree_control': '',
    'gensee/op1/pids.max': 'max\n',
    'gensee/op1/memory.max': 'max\n',
    'gensee/op1/memory.swap.max': 'max\n',
  });
  fs.writeFileSync(path.join(d, 'mountinfo'), mi(cg2, 'cgroup2', 'rw') + '\n');
  const cgroup = path.join(cg2, 'gensee', 'op1');
  const r = applyOperationLimits({ op: 'op1', cgroup, limits: { pids_max: 100, memory_max_bytes: 256 * 1024 * 1024 }, mountinfo: path.join(d, 'mountinfo') });
  t.equal(r.record.layout, 'cgroup2');
  t.same(r.record.pids, { requested: 100, source: 'policy', applied: true, controller: 'cgroup2', cgroup, value: '100', swap: null, reason: null });
  t.same(r.record.memory, { requested: 268435456, source: 'policy', applied: true, controller: 'cgroup2', cgroup, value: '268435456', swap: 'memory.swap.max 0', reason: null });
  t.equal(read(path.join(cg2, 'cgroup.subtree_control')), '+memory', 'the root: only the missing controller was written');
  t.equal(read(path.join(cg2, 'gensee', 'cgroup.subtree_control')), '+memory', 'the parent: both (the file is plain here, so the last write shows)');
  t.same(r.join, [], 'nothing to join besides the cgroup itself');
  t.same(limitCgroupsOf(r.record), [], 'nothing of its own to remove');
  t.same(missingPolicyLimits(r.record), []);
});

t.test('hybrid: the operation gets its own v1 cgroups and joins them', async (t) => {
  const d = t.testdir({});
  tree(d, { 'unified/cgroup.controllers': '\n', 'unified/gensee/op2/cgroup.procs': '', 'v1pids/cgroup.procs': '', 'v1mem/cgroup.procs': '' });
  fs.writeFileSync(path.join(d, 'mountinfo'), [mi(path.join(d, 'v1pids'), 'cgroup', 'rw,pids'), mi(path.join(d, 'v1mem'), 'cgroup', 'rw,memory'), mi(path.join(d, 'unified'), 'cgroup2', 'rw')].join('\n'));
  // a leftover of a killed run with the same name, empty: replaced
  fs.mkdirSync(path.join(d, 'v1mem', 'gensee', 'op2'), { recursive: true });
  // leftovers of killed runs with no cgroup2 cgroup any more: swept; a live run's stays
  fs.mkdirSync(path.join(d, 'v1pids', 'gensee', 'killed'), { recursive: true });
  fs.mkdirSync(path.join(d, 'v1pids', 'gensee', 'live'), { recursive: true });
  fs.mkdirSync(path.join(d, 'unified', 'gensee', 'live'), { recursive: true });
  const r = applyOperationLimits({ op: 'op2', cgroup: path.join(d, 'unified', 'gensee', 'op2'), limits: {}, mountinfo: path.join(d, 'mountinfo') });
  const pidsDir = path.join(d, 'v1pids', 'gensee', 'op2');
  const memDir = path.join(d, 'v1mem', 'gensee', 'op2');
  t.equal(r.record.layout, 'hybrid');
  t.match(r.record.pids, { applied: true, controller: 'cgroup1', cgroup: pidsDir, value: String(DEFAULT_PIDS_MAX), source: 'default' });
  t.match(r.record.memory, { applied: true, controller: 'cgroup1', cgroup: memDir, source: 'default' });
  t.equal(read(path.join(memDir, 'memory.limit_in_bytes')), String(r.record.memory.requested));
  t.equal(r.record.memory.swap, null, 'no memsw file (swap accounting off): none recorded');
  t.same(fs.readdirSync(path.join(d, 'v1pids', 'gensee')).sort(), ['live', 'op2'], "a killed run's leftover swept, a live run's kept");
  t.same(r.join, [pidsDir, memDir], 'gensee-exec joins both (--join-cgroup)');
  t.same(limitCgroupsToJoin(r.record), [pidsDir, memDir]);
  t.same(limitCgroupsOf(r.record), [pidsDir, memDir], 'removed with the operation');
});

t.test('neither: recorded with a reason; a default is a warning, an explicit limit an error', async (t) => {
  const d = t.testdir({});
  tree(d, { 'cg2/cgroup.controllers': 'cpu io\n', 'v1mem/cgroup.procs': '' });
  fs.writeFileSync(path.join(d, 'mountinfo'), [mi(path.join(d, 'cg2'), 'cgroup2', 'rw'), mi(path.join(d, 'v1mem'), 'cgroup', 'rw,memory')].join('\n'));
  fs.mkdirSync(path.join(d, 'cg2', 'gensee', 'op3'), { recursive: true });
  const r = applyOperationLimits({ op: 'op3', cgroup: path.join(d, 'cg2', 'gensee', 'op3'), limits: { pids_max: 64 }, mountinfo: path.join(d, 'mountinfo') });
  t.match(r.record.pids, { applied: false, controller: null, cgroup: null, value: null, reason: /no pids controller/ });
  t.match(missingPolicyLimits(r.record), [/^pids: no pids controller/], 'the policy named it: the run refuses');
  t.match(unappliedLimits(r.record), [/pids limit \(policy 64\) not applied/]);
  t.equal(r.record.memory.applied, true, 'memory still applied on its v1 hierarchy');
});

t.test("supervise: only where the owner enabled the controller, never loosening the owner's limit, v1 left alone", async (t) => {
  const d = t.testdir({});
  const cg = path.join(d, 'cg2', 'ctr');
  tree(d, { 'cg2/cgroup.controllers': 'memory pids\n', 'cg2/ctr/pids.max': '50\n', 'cg2/ctr/memory.max': 'max\n', 'cg2/ctr/memory.swap.max': 'max\n' });
  fs.writeFileSync(path.join(d, 'mountinfo'), mi(path.join(d, 'cg2'), 'cgroup2', 'rw') + '\n');
  const r = applyExistingCgroupLimits({ cgroup: cg, limits: { pids_max: 100, memory_max_bytes: 32 * 1024 * 1024 }, mountinfo: path.join(d, 'mountinfo') });
  t.match(r.pids, { applied: true, value: '50', reason: "kept the owner's lower limit 50" });
  t.equal(read(path.join(cg, 'pids.max')), '50\n', 'not written');
  t.match(r.memory, { applied: true, value: '33554432', swap: 'memory.swap.max 0' });
  fs.rmSync(path.join(cg, 'pids.max'));
  const r2 = applyExistingCgroupLimits({ cgroup: cg, limits: {}, mountinfo: path.join(d, 'mountinfo') });
  t.match(r2.pids, { applied: false, source: 'default', reason: /pids.max is missing: the cgroup's owner did not enable the pids controller/ });
  t.same(missingPolicyLimits(r2), [], 'a default not applied is not an error');
});
