// Resources (issue 23, class 10): a workload's fork bomb and memory bomb stay
// inside the operation. gensee run sets pids.max and the memory limit on the
// operation's cgroup (cgroup2 controllers, or the operation's own cgroups in
// the v1 pids/memory hierarchies on a hybrid layout) before the workload's
// first instruction, records them in operation.json, and removes them when
// the operation ends. Each bomb stops at 3× the limit on its own, so a run
// without limits fails the test without hurting the host.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { cgroupPids, cgroupPopulated, findCgroup2Mount, removeCgroup } from '../../src/cgroup';
import { cgroupLayout, limitCgroupsOf, type ResourcesRecord } from '../../src/resources';
import { GENSEE_BIN, requireKernel, sleep, testCgroup, uniqueName, waitFor, CGROUP_PARENT } from '../helpers/kernel';
import { gensee } from '../helpers/gensee';
import { shortStateDir, superviseProcess, supervisedOp } from '../helpers/supervisor';
import { pinDirFor } from '../../src/bpffs';
import { IDENTITIES, cleanupOp } from './lib';

const BOMB = path.join(PACKAGE_ROOT, 'obj', 'adv', 'bomb');
const PIDS_MAX = 64;
const MIB = 1024 * 1024;
const MEMORY_MAX = 64 * MIB;
/** what the bombs stop at by themselves */
const CAP = 3;

interface Bombed {
  code: number | null;
  bomb: Record<string, unknown> | null;
  stderr: string;
  /** what the test saw while the fork bomb held its processes */
  held: { procs: number; pidsCurrent: number | null; hostForks: boolean } | null;
  resources: ResourcesRecord | null;
  cgroup: string;
  st: string;
  op: string;
}

function readResources(st: string, op: string): ResourcesRecord | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(st, 'network-operations', op, 'operation.json'), 'utf8')) as { resources?: ResourcesRecord }).resources ?? null;
  } catch {
    return null;
  }
}

/** processes in a cgroup and its descendants */
function procsTree(cg: string): number {
  let n = cgroupPids(cg).length;
  try {
    for (const e of fs.readdirSync(cg, { withFileTypes: true })) if (e.isDirectory()) n += procsTree(path.join(cg, e.name));
  } catch {
    /* gone */
  }
  return n;
}

function bombPids(tag: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (argv[0] === BOMB && argv.includes(tag)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** the v1 limit cgroups a test made, gone even when it failed */
function cleanupLimits(st: string, op: string): void {
  const r = readResources(st, op);
  const layout = cgroupLayout();
  const dirs = new Set<string>();
  for (const c of ['pids', 'memory']) {
    const m = layout.v1.get(c);
    if (m) dirs.add(path.join(m, CGROUP_PARENT, op));
  }
  for (const l of r ? [r.pids, r.memory] : []) if (l.controller === 'cgroup1' && l.cgroup) dirs.add(l.cgroup);
  for (const d of dirs) {
    try {
      removeCgroup(d);
    } catch {
      /* tolerated: the next run's cleanup */
    }
  }
}

/** `gensee run --json [identity] -- bomb MODE CAP TAG` under a policy with limits */
async function runBomb(t: Test, mode: 'fork' | 'mem', identity: string[], limits: object, cap: number, o: { killRun?: boolean } = {}): Promise<Bombed> {
  const st = shortStateDir(t);
  const op = uniqueName(`adv-res-${mode}`);
  const policy = path.join(st, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, limits }));
  const cgroup = path.join(findCgroup2Mount(), CGROUP_PARENT, op);
  t.teardown(async () => {
    for (const pid of bombPids(op)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* exited */
      }
    }
    await cleanupOp(st, op);
    cleanupLimits(st, op);
  });
  const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--json', '--no-dns', ...identity, '--', BOMB, mode, String(cap), op], { stdio: ['pipe', 'pipe', 'pipe'] });
  c.stdin.on('error', () => undefined);
  let out = '';
  let err = '';
  let bomb: Record<string, unknown> | null = null;
  let held: Bombed['held'] = null;
  let resources: ResourcesRecord | null = null;
  const timer = setTimeout(() => c.kill('SIGKILL'), 120_000);
  c.stderr.on('data', (d: Buffer) => (err += d.toString()));
  c.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let i;
    while ((i = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      let j: Record<string, unknown>;
      try {
        j = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (!('bomb' in j)) continue;
      bomb = j;
      resources = readResources(st, op);
      if (mode === 'fork') {
        // the bomb holds every process it made until it reads a line
        const p = resources?.pids;
        const current = p?.applied && p.cgroup ? Number(fs.readFileSync(path.join(p.cgroup, 'pids.current'), 'utf8')) : null;
        held = { procs: procsTree(cgroup), pidsCurrent: current, hostForks: spawnSync('/bin/true').status === 0 };
        if (o.killRun) c.kill('SIGKILL');
        else c.stdin.write('\n');
      }
    }
  });
  const code = await new Promise<number | null>((res) => c.on('close', (x) => res(x)));
  clearTimeout(timer);
  return { code, bomb, stderr: err, held, resources, cgroup, st, op };
}

/** the operation's cgroups are gone once gensee run returns */
async function assertCleaned(t: Test, r: Bombed): Promise<void> {
  t.notOk(fs.existsSync(r.cgroup), 'the cgroup2 cgroup is gone');
  for (const l of r.resources ? [r.resources.pids, r.resources.memory] : []) {
    if (l.controller === 'cgroup1' && l.cgroup) t.notOk(fs.existsSync(l.cgroup), `the v1 limit cgroup ${l.cgroup} is gone`);
  }
  await sleep(50);
  t.same(bombPids(r.op), [], 'no bomb process outlives gensee run');
}

for (const id of IDENTITIES) {
  t.test(`fork bomb, ${id.name}: bounded by pids_max ${PIDS_MAX}, killed with the run`, async (t) => {
    if (!requireKernel(t)) return;
    const r = await runBomb(t, 'fork', id.flags, { pids_max: PIDS_MAX }, CAP * PIDS_MAX);
    t.equal(r.code, 0, 'gensee run exits with the bomb', { stderr: r.stderr.slice(-2000) });
    t.ok(r.bomb, 'the bomb reported', { stderr: r.stderr.slice(-2000) });
    t.match(r.resources?.pids, { applied: true, requested: PIDS_MAX, source: 'policy', value: String(PIDS_MAX) }, 'operation.json: pids.max applied and read back', { resources: r.resources });
    const forked = Number(r.bomb?.forked);
    // gensee-exec's outer process and the init are in the cgroup too
    t.ok(forked < PIDS_MAX, `the bomb made ${forked} processes, fewer than pids_max ${PIDS_MAX} (it would stop at ${CAP * PIDS_MAX})`, { bomb: r.bomb });
    t.ok(Number(r.bomb?.failed) > 0 && r.bomb?.errno === 'EAGAIN', 'fork failed with EAGAIN at the limit', { bomb: r.bomb });
    t.ok(r.held && r.held.procs <= PIDS_MAX, `${r.held?.procs} processes in the operation's cgroup at the peak, ≤ ${PIDS_MAX}`);
    t.ok(r.held?.pidsCurrent !== null && r.held!.pidsCurrent <= PIDS_MAX, `pids.current ${r.held?.pidsCurrent} ≤ ${PIDS_MAX}`);
    t.ok(r.held?.hostForks, 'the host could still fork during the bomb');
    await assertCleaned(t, r);
  });

  t.test(`memory bomb, ${id.name}: OOM-killed within memory_max_bytes ${MEMORY_MAX / MIB} MiB`, async (t) => {
    if (!requireKernel(t)) return;
    const r = await runBomb(t, 'mem', id.flags, { memory_max_bytes: MEMORY_MAX }, (CAP * MEMORY_MAX) / MIB);
    t.equal(r.code, 0, 'gensee run exits with the bomb', { stderr: r.stderr.slice(-2000) });
    t.ok(r.bomb, 'the bomb reported', { stderr: r.stderr.slice(-2000) });
    t.match(r.resources?.memory, { applied: true, requested: MEMORY_MAX, source: 'policy', value: String(MEMORY_MAX) }, 'operation.json: the memory limit applied and read back', { resources: r.resources });
    const mem = r.resources?.memory;
    const swapFile = mem?.controller === 'cgroup1' ? 'memory.memsw.limit_in_bytes' : 'memory.swap.max';
    if (mem?.cgroup && fs.existsSync(path.join(path.dirname(path.dirname(mem.cgroup)), swapFile))) {
      t.equal(mem.swap, `${swapFile} ${mem.controller === 'cgroup1' ? MEMORY_MAX : 0}`, 'swap cannot stretch the limit');
    }
    t.equal(r.bomb?.signal, 9, 'the bomb was killed (SIGKILL: the OOM killer)', { bomb: r.bomb });
    const touched = Number(r.bomb?.touched_mib);
    t.ok(touched < MEMORY_MAX / MIB, `the bomb touched ${touched} MiB before it died, less than ${MEMORY_MAX / MIB} (it would stop at ${(CAP * MEMORY_MAX) / MIB})`, { bomb: r.bomb });
    await assertCleaned(t, r);
  });
}

t.test('the default limits apply when the policy names none, and are recorded', async (t) => {
  if (!requireKernel(t)) return;
  const r = await runBomb(t, 'mem', [], {}, 1);
  t.equal(r.code, 0, 'gensee run exits 0', { stderr: r.stderr.slice(-2000) });
  t.match(r.resources, { pids: { applied: true, source: 'default', requested: 4096, value: '4096' }, memory: { applied: true, source: 'default' } }, 'defaults applied', { resources: r.resources });
  t.equal(r.bomb?.signal, 0, 'a 1 MiB workload runs to the end');
  t.notMatch(r.stderr, /not applied/, 'no warning');
});

t.test('a killed run leaves its v1 limit cgroups: gensee stop removes them, or the next run when its cgroup is gone', async (t) => {
  if (!requireKernel(t)) return;
  const v1 = (r: Bombed) => limitCgroupsOf(r.resources);
  // 1. killed, then stopped by the operator: the record names them
  const a = await runBomb(t, 'fork', [], { pids_max: PIDS_MAX }, 8, { killRun: true });
  t.equal(a.code, null, 'gensee run was killed');
  t.ok(v1(a).length > 0 && v1(a).every((d) => fs.existsSync(d)), 'its v1 limit cgroups are left', { resources: a.resources });
  const stop = await gensee(['stop', '--op', a.op, '--state-dir', a.st]);
  t.equal(stop.code, 0, 'gensee stop', { stderr: stop.stderr });
  t.same(v1(a).filter((d) => fs.existsSync(d)), [], 'gensee stop removed them');
  t.notOk(fs.existsSync(a.cgroup), 'and the cgroup2 cgroup');
  // 2. killed, its cgroup2 cgroup removed by hand: the next run sweeps them
  const b = await runBomb(t, 'fork', [], { pids_max: PIDS_MAX }, 8, { killRun: true });
  await waitFor(() => !cgroupPopulated(b.cgroup), 10_000);
  removeCgroup(b.cgroup);
  t.ok(v1(b).length > 0 && v1(b).every((d) => fs.existsSync(d)), 'left again');
  const c = await runBomb(t, 'mem', [], {}, 1);
  t.equal(c.code, 0, 'the next run', { stderr: c.stderr.slice(-2000) });
  t.same(v1(b).filter((d) => fs.existsSync(d)), [], 'it swept the killed run\'s empty v1 cgroups');
  await assertCleaned(t, c);
});

t.test('gensee-exec --join-cgroup takes only a cgroup v1 directory, and refuses before CMD runs', async (t) => {
  if (!requireKernel(t)) return;
  const cg = testCgroup(t, 'adv-res-join');
  const exe = path.join(PACKAGE_ROOT, 'obj', 'gensee-exec');
  for (const dir of ['/tmp', cg]) {
    const r = spawnSync(exe, ['--cgroup', cg, '--join-cgroup', dir, '--', '/bin/echo', 'ran'], { encoding: 'utf8', timeout: 30_000 });
    t.equal(r.status, 126, `${dir}: exit 126`);
    t.match(r.stderr, `gensee-exec: --join-cgroup ${dir}: not a cgroup v1 directory`, `${dir}: says why`);
    t.notMatch(r.stdout, /ran/, `${dir}: CMD never ran`);
  }
});

t.test("supervise: limits on the owner's cgroup where it enabled the controller, recorded either way", async (t) => {
  if (!requireKernel(t)) return;
  // the defaults: applied where cgroup2 has the controller in this cgroup, else recorded with the reason
  const a = supervisedOp(t, 'adv-res-sup', { schema: 1 });
  const sup = await superviseProcess(t, a.args);
  const rec = readResources(a.stateDir, a.op);
  for (const [name, file] of [['pids', 'pids.max'], ['memory', 'memory.max']] as const) {
    if (fs.existsSync(path.join(a.cgroup, file))) t.match(rec?.[name], { applied: true, controller: 'cgroup2', cgroup: a.cgroup, source: 'default' }, `${name}: written`);
    else {
      t.match(rec?.[name], { applied: false, source: 'default', reason: new RegExp(`${file} is missing`) }, `${name}: not applied, and why`);
      t.match(sup.stderr, new RegExp(`warning: operation ${a.op}: ${name} limit \\(default [0-9]+\\) not applied`), `${name}: a warning on stderr`);
    }
  }
  await sup.end();
  // a limit the policy names that cannot be applied: an error before anything is attached
  if (!fs.existsSync(path.join(a.cgroup, 'pids.max'))) {
    const b = supervisedOp(t, 'adv-res-sup', { schema: 1, limits: { pids_max: 100 } });
    const r = await gensee(['supervise', ...b.args]);
    t.equal(r.code, 1, 'gensee supervise refuses', { stderr: r.stderr });
    t.match(r.stderr, /the policy's limits cannot be applied to .*: pids: .*pids\.max is missing/, 'and says why');
    t.notOk(fs.existsSync(path.join(b.stateDir, 'network-operations', b.op)), 'no operation was created');
    t.notOk(fs.existsSync(pinDirFor(b.op)), 'no hooks were attached');
  }
});

t.test('bad limits in a policy: a clear error, exit 2, nothing created', async (t) => {
  const st = shortStateDir(t);
  const cases: [object, RegExp][] = [
    [{ pids_max: 0 }, /policy \/limits\/pids_max: must be >= 16/],
    [{ pids_max: 4194305 }, /policy \/limits\/pids_max: must be <= 4194304/],
    [{ pids_max: '64' }, /policy \/limits\/pids_max: must be integer/],
    [{ memory_max_bytes: 1024 }, /policy \/limits\/memory_max_bytes: must be >= 16777216/],
    [{ memory_max_bytes: 1.5e9 + 0.5 }, /policy \/limits\/memory_max_bytes: must be integer/],
    [{ cpu_max: 1 }, /policy \/limits: unknown field "cpu_max"/],
  ];
  for (const [limits, want] of cases) {
    const op = uniqueName('adv-res-bad');
    const policy = path.join(st, `${op}.json`);
    fs.writeFileSync(policy, JSON.stringify({ schema: 1, limits }));
    const r = spawnSync(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--', '/bin/true'], { encoding: 'utf8', timeout: 30_000 });
    t.equal(r.status, 125, `${JSON.stringify(limits)}: exit 125 (gensee run's own refusal)`, { stderr: r.stderr });
    t.match(r.stderr, want, `${JSON.stringify(limits)}: says which field and why`);
    t.notOk(fs.existsSync(path.join(st, 'network-operations', op)), 'no operation was created');
    t.notOk(fs.existsSync(path.join(findCgroup2Mount(), CGROUP_PARENT, op)), 'no cgroup was created');
  }
});
