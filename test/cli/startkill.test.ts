// Issue 25 point 4: a kill -9 of `gensee run` at any instant of its start-up
// leaves something `gensee stop` can end: the operation's record is written
// before its cgroup or any pin. Each trial kills a run at a uniformly
// random instant of its first STARTKILL_MS (default 3000), then `gensee stop`
// must succeed (or say the operation is unknown, with no cgroup and no pin
// left), and a rerun of the same operation must succeed.
// Every other trial instead kills the moment the cgroup directory appears
// (the narrow window the issue found: a cgroup and no record).
// GENSEE_STARTKILL_TRIALS sets the count (default 50, as the issue asks);
// GENSEE_STARTKILL_BATCH how many run at once (default 4: each has its own
// operation name, so they share nothing but the state dir and the machine).
// Every wait scales with one start-up measured first on this machine, as it
// is loaded now (test/helpers/trials.ts startupDeadline).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { findCgroup2Mount } from '../../src/cgroup';
import { CGROUP_PARENT, GENSEE_BIN, requireKernel, uniqueName, sleep } from '../helpers/kernel';
import { gensee } from '../helpers/gensee';
import { shortStateDir } from '../helpers/supervisor';
import { pool, startupDeadline, startupTook } from '../helpers/trials';
import { cleanupOp } from '../adversarial/lib';

const TRIALS = Number(process.env.GENSEE_STARTKILL_TRIALS ?? 50);
const BATCH = Math.max(1, Number(process.env.GENSEE_STARTKILL_BATCH ?? 4));
const WINDOW_MS = Number(process.env.STARTKILL_MS ?? 3000);

t.test(`kill -9 of gensee run in its first ${WINDOW_MS} ms: stop, then rerun, always succeed`, { timeout: 600_000 + TRIALS * 20_000 }, async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const policy = path.join(st, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [] }));
  const run = (op: string, cmd: string[]) => ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--', ...cmd];

  // one whole start-up and end, measured: every wait below scales with it
  const probeOp = uniqueName('gs-sk');
  t.teardown(() => cleanupOp(st, probeOp));
  const t0 = Date.now();
  const first = await gensee(run(probeOp, ['/bin/true']), startupDeadline());
  t.equal(first.code, 0, 'a plain run succeeds', { stderr: first.stderr.slice(-1000) });
  startupTook(Date.now() - t0);
  const deadline = startupDeadline();
  t.comment(`one run took ${Date.now() - t0} ms; waits scale to ${deadline} ms`);

  const bad: string[] = [];
  const started = Date.now();
  await pool(
    BATCH,
    Array.from({ length: TRIALS }, (_, i) => i),
    async (i) => {
      const op = uniqueName('gs-sk');
      t.teardown(() => cleanupOp(st, op));
      const at = Math.floor(Math.random() * WINDOW_MS);
      const what = i % 2 ? 'as the cgroup appeared' : `at ${at} ms`;
      const c = spawn(GENSEE_BIN, run(op, ['/bin/sleep', '30']), { stdio: 'ignore' });
      const exited = new Promise((r) => c.on('close', r));
      const cgroupDir = path.join(findCgroup2Mount(), CGROUP_PARENT, op);
      if (i % 2) {
        const end = Date.now() + deadline;
        while (!fs.existsSync(cgroupDir) && Date.now() < end) await sleep(1);
      } else {
        await sleep(at);
      }
      c.kill('SIGKILL');
      await exited;
      const stop = await gensee(['stop', '--op', op, '--state-dir', st], 2 * deadline);
      const unknown = stop.code === 2 && /unknown operation/.test(stop.stderr + stop.stdout);
      if (stop.code !== 0 && !(unknown && !fs.existsSync(cgroupDir) && !fs.existsSync(`/sys/fs/bpf/gensee/${op}`))) {
        bad.push(`kill ${what}: stop exit ${stop.code}: ${(stop.stderr + stop.stdout).trim().slice(0, 200)}`);
        return;
      }
      const rerun = await gensee(run(op, ['/bin/true']), 2 * deadline);
      if (rerun.code !== 0) bad.push(`kill ${what}: rerun exit ${rerun.code}: ${rerun.stderr.trim().slice(0, 200)}`);
      if (fs.existsSync(cgroupDir)) bad.push(`kill ${what}: the cgroup is still there after the rerun ended`);
    },
  );
  t.comment(`${TRIALS} trials, ${BATCH} at a time, in ${Date.now() - started} ms`);
  t.same(bad, [], `${TRIALS} trials: stop and rerun succeeded after every kill`);
});
