// Issue 25: counters.jsonl is bounded on the hook path like faults.jsonl.
// A workload that dials thousands of distinct destinations makes a counter
// key per destination in the kernel; the recorder writes at most
// COUNTER_LINES_PER_SECOND per-destination lines a second (here set to 200)
// and folds the rest per reason with the exact delta. On a state disk below
// its reserve every such line is folded, so the log grows by a few lines a
// reading whatever the workload does, and gensee's own closing lines still
// fit: the stop is recorded and the evidence verifies. The deltas stay exact
// throughout: their sum is the number of connects the hooks refused, as the
// workload itself counted them.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { GENSEE_BIN, requireKernel, testCgroup, uniqueName, detachAtTeardown, waitFor } from '../helpers/kernel';
import { Proc } from '../helpers/gensee';
import { startupDeadline } from '../helpers/trials';
import { logLines as lines } from './lib';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'diskflood');
const PER_SECOND = 200;

type Line = Record<string, unknown>;

/** run the flood inside the cgroup (no seccomp: every connect meets the hook) and return its counts */
function flood(cgroup: string, port: number, span: number, ms: number): Promise<{ attempts: number; EPERM: number }> {
  return new Promise((resolve, reject) => {
    const c = spawn('sh', ['-c', `echo $$ > "${path.join(cgroup, 'cgroup.procs')}" && exec ${FLOOD} flood --port ${port} --span ${span} --ms ${ms}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', () => {
      const m = /\{"attempts".*\}/.exec(out);
      if (!m) return reject(new Error(`flood printed nothing: ${out}`));
      resolve(JSON.parse(m[0]) as { attempts: number; EPERM: number });
    });
  });
}

const perDest = (l: Line) => (l.kind === 'deny' || l.kind === 'allow') && l.source === 'ebpf' && l.address !== undefined;
const ebpfDeny = (ls: Line[]) => ls.filter((l) => l.kind === 'deny' && l.source === 'ebpf').reduce((s, l) => s + Number(l.delta), 0);

t.test('counters.jsonl under a destination flood: bounded lines, exact deltas, closing lines fit on a full disk', { timeout: 300_000 }, async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(FLOOD)) return t.fail(`workload not built: ${FLOOD} (make build)`);
  const mnt = fs.mkdtempSync('/tmp/gs-dc-');
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=32m,mode=0755', 'gs-diskcounters-test', mnt], { encoding: 'utf8' });
  if (m.status !== 0) {
    fs.rmdirSync(mnt);
    return t.fail(`mount tmpfs: ${m.stderr}`);
  }
  const cgroup = testCgroup(t, 'gs-dc');
  const op = uniqueName('gs-dc');
  detachAtTeardown(t, op);
  const st = path.join(mnt, 's');
  let sup: Proc | null = null;
  t.teardown(async () => {
    await sup?.end();
    spawnSync('umount', ['-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  fs.mkdirSync(st, { mode: 0o700 });
  const policy = path.join(st, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [] }));
  const env = { ...process.env, GENSEE_COUNTER_LINES_PER_SECOND: String(PER_SECOND), GENSEE_STATE_RESERVE: '4M' };
  sup = new Proc('env', [...Object.entries(env).filter(([k]) => k.startsWith('GENSEE_')).map(([k, v]) => `${k}=${v}`), GENSEE_BIN, 'supervise', '--json', '--op', op, '--cgroup', cgroup, '--policy', policy, '--state-dir', st]);
  await waitFor(() => /"event":"serving"/.test(sup!.stdout) || !sup!.running, startupDeadline());
  t.ok(sup.running, 'gensee supervise serves', { out: sup.stdout + sup.stderr });
  const counters = path.join(st, 'network-operations', op, 'counters.jsonl');
  const base = 30000 + (process.pid % 20) * 100;

  // 1. room on the disk: at most PER_SECOND per-destination lines a second
  const f1 = await flood(cgroup, base, 5000, 4000);
  t.ok(f1.EPERM > 2 * PER_SECOND, `the hooks refused ${f1.EPERM} connects to up to 5000 destinations`);
  await waitFor(() => ebpfDeny(lines(counters)) >= f1.EPERM, 30_000, 200).catch(() => undefined);
  const l1 = lines(counters);
  t.equal(ebpfDeny(l1), f1.EPERM, `the deny deltas add up to exactly the refused connects (${ebpfDeny(l1)})`);
  const bySecond = new Map<string, number>();
  for (const l of l1.filter(perDest)) bySecond.set(String(l.at).slice(0, 19), (bySecond.get(String(l.at).slice(0, 19)) ?? 0) + 1);
  const worst = Math.max(0, ...bySecond.values());
  t.ok(worst <= PER_SECOND, `per-destination lines in any one second: ${worst} (at most ${PER_SECOND})`);
  const folded = l1.filter((l) => l.folded === true && l.source === 'ebpf');
  t.ok(folded.length > 0 && folded.every((l) => Number(l.destinations) > 0), `the rest is folded (${folded.length} folded lines)`);

  // 2. the disk below its reserve: every per-destination line folded
  const fill = path.join(mnt, 'filler');
  const fd = fs.openSync(fill, 'w');
  const chunk = Buffer.alloc(256 << 10);
  while (fs.statfsSync(mnt).bavail * fs.statfsSync(mnt).bsize > 3 << 20) fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  const freeBefore = fs.statfsSync(mnt).bavail * fs.statfsSync(mnt).bsize;
  const n1 = l1.length;
  await new Promise((r) => setTimeout(r, 1500)); // a reading sees the low disk
  const mark = lines(counters).length;
  const f2 = await flood(cgroup, base, 5000, 3000);
  await waitFor(() => ebpfDeny(lines(counters)) >= f1.EPERM + f2.EPERM, 30_000, 200).catch(() => undefined);
  const l2 = lines(counters);
  t.equal(ebpfDeny(l2), f1.EPERM + f2.EPERM, `still exact below the reserve (${f2.EPERM} more refused)`);
  t.equal(l2.slice(mark).filter(perDest).length, 0, 'below the reserve no per-destination line is written');
  t.ok(l2.length - n1 < 200, `the log grew by ${l2.length - n1} lines for ${f2.EPERM} refusals to thousands of destinations`);
  const used = freeBefore - fs.statfsSync(mnt).bavail * fs.statfsSync(mnt).bsize;
  t.comment(`state disk: ${freeBefore} bytes free before the second flood, ${used} used by it`);

  // 3. the stop's closing lines fit, and the evidence verifies
  sup.kill('SIGTERM');
  const exit = await sup.exited;
  t.equal(exit.code, 0, 'gensee supervise stops cleanly on the nearly full disk', { err: sup.stderr.slice(-1500) });
  const last = lines(counters).filter((l) => l.kind === 'sampler').at(-1);
  t.equal(last?.event, 'stop', "counters.jsonl ends with the sampler's stop line");
  const v = spawnSync(GENSEE_BIN, ['verify', '--op', op, '--state-dir', st], { encoding: 'utf8' });
  t.equal(v.status, 0, 'gensee verify passes', { verify: `${v.stdout}${v.stderr}`.slice(-2000) });
});
