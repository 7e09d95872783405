// The exit window: a daemon the workload leaves behind keeps connecting
// (connect, io_uring, UDP, control.sock) after the main process exits. The
// whole cgroup is killed and seen empty before the listener closes or the
// hooks go, so it never reaches anything and never outlives gensee run.
import t from 'tap';
import * as fs from 'node:fs';
import { requireKernel, sleep } from '../helpers/kernel';
import { IDENTITIES, attackEnv, runAttack, assertHeld, processesWith } from './lib';

const TRIALS = 5;

for (const id of IDENTITIES) {
  t.test(`exit-window, ${id.name}: a daemon left behind reaches nothing and dies with the run (${TRIALS} trials)`, async (t) => {
    if (!requireKernel(t)) return;
    for (let i = 0; i < TRIALS; i++) {
      const env = await attackEnv(t, 'adv-exit');
      const r = await runAttack(env, 'exit-window', { identity: id.flags });
      // right as gensee run returns: nothing of the workload is left
      const left = processesWith(env.op);
      const cg = JSON.parse(fs.readFileSync(`${env.opDir}/operation.json`, 'utf8')).cgroup as string;
      t.same(left, [], `trial ${i + 1}: no workload process outlives gensee run`);
      t.notOk(fs.existsSync(cg), `trial ${i + 1}: the operation's cgroup is gone`);
      t.equal(r.reports.find((x) => x.attack === 'exit-window')?.info.daemon_forked, 1, `trial ${i + 1}: the daemon was forked`);
      await sleep(300); // a surviving daemon would keep trying for 3 s
      await assertHeld(t, env, r, 'exit-window');
    }
  });
}
