// Issue 25 point 4: a kill -9 of `gensee run` at any instant of its start-up
// leaves something `gensee stop` can end: the operation's record is written
// before its cgroup or any pin. Each trial kills a run at a uniformly
// random instant of its first STARTKILL_MS (default 3000), then `gensee stop`
// must succeed (or say the operation is unknown, with no cgroup and no pin
// left), and a rerun of the same operation must succeed.
// Every other trial instead kills the moment the cgroup directory appears
// (the narrow window the issue found: a cgroup and no record).
// GENSEE_STARTKILL_TRIALS sets the count (default 12; the issue asks ≥ 50).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { findCgroup2Mount } from '../../src/cgroup';
import { GENSEE_BIN, requireKernel, uniqueName, sleep } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';
import { cleanupOp } from '../adversarial/lib';

const TRIALS = Number(process.env.GENSEE_STARTKILL_TRIALS ?? 12);
const WINDOW_MS = Number(process.env.STARTKILL_MS ?? 3000);

t.test(`kill -9 of gensee run in its first ${WINDOW_MS} ms: stop, then rerun, always succeed`, { timeout: 60_000 + TRIALS * 20_000 }, async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const policy = path.join(st, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [] }));
  const bad: string[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const op = uniqueName('gs-sk');
    t.teardown(() => cleanupOp(st, op));
    const at = Math.floor(Math.random() * WINDOW_MS);
    const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--', '/bin/sleep', '30'], { stdio: 'ignore' });
    const exited = new Promise((r) => c.on('close', r));
    const cgroupDir = path.join(findCgroup2Mount(), 'gensee', op);
    if (i % 2) {
      const end = Date.now() + 15_000;
      while (!fs.existsSync(cgroupDir) && Date.now() < end) await sleep(1);
    } else {
      await sleep(at);
    }
    c.kill('SIGKILL');
    await exited;
    const stop = spawnSync(GENSEE_BIN, ['stop', '--op', op, '--state-dir', st], { encoding: 'utf8', timeout: 30_000 });
    const cg = path.join(findCgroup2Mount(), 'gensee', op);
    const unknown = stop.status === 2 && /unknown operation/.test(stop.stderr + stop.stdout);
    if (stop.status !== 0 && !(unknown && !fs.existsSync(cg) && !fs.existsSync(`/sys/fs/bpf/gensee/${op}`))) {
      bad.push(`kill ${i % 2 ? 'as the cgroup appeared' : `at ${at} ms`}: stop exit ${stop.status}: ${(stop.stderr + stop.stdout).trim().slice(0, 200)}`);
      continue;
    }
    const rerun = spawnSync(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--', '/bin/true'], { encoding: 'utf8', timeout: 30_000 });
    if (rerun.status !== 0) bad.push(`kill ${i % 2 ? 'as the cgroup appeared' : `at ${at} ms`}: rerun exit ${rerun.status}: ${rerun.stderr.trim().slice(0, 200)}`);
  }
  t.same(bad, [], `${TRIALS} trials: stop and rerun succeeded after every kill`);
});
