// Nothing is lost across a resolver restart: the hooks keep counting while no
// resolver runs, and the next supervisor resumes from the evidence (snapshot
// or log) so the first reading records exactly what was counted meanwhile.
// A restart with another policy file is a handover like `policy apply`.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel, probe, tcpServer, testCgroup, uniqueName, waitFor, timeScaled } from '../helpers/kernel';
import { shortStateDir, workload, networkFault } from '../helpers/supervisor';
import { Supervisor } from '../../src/supervisor';
import { detachHooks } from '../../src/dataplane';
import { parsePolicy, policyHash } from '../../src/protocol/json';
import { readKey } from '../../src/state/operation';
import { submitFault } from '../../src/resolver/client';
import { encodeFault } from '../../src/protocol/codec';
import { verifyLog } from '../../src/evidence/verify';
import { counterLines, readJson, sumDelta, matching, tcpLeasePolicy as policy } from './lib';

for (const crash of [false, true]) {
  t.test(`restart after a ${crash ? 'crash (no snapshot)' : 'clean stop'}: counts made meanwhile are recorded once`, async (t) => {
    if (!requireKernel(t)) return;
    const cgroup = testCgroup(t, 'gs-rs');
    const op = uniqueName('gs-rs');
    const stateDir = shortStateDir(t);
    t.teardown(() => detachHooks(op));
    const start = async (p: object) => {
      const text = JSON.stringify(p);
      return Supervisor.start({ stateDir, op, cgroup, policy: { policy: parsePolicy(p), hash: policyHash(text) }, onError: () => undefined });
    };
    const wide = policy('1024-65535');
    let sup = await start(wide);
    const w = await workload(t, cgroup);
    const srv = await tcpServer(t);
    const other = await tcpServer(t);
    const key = await readKey(stateDir, op);
    for (const port of [srv.port, other.port]) {
      const f = networkFault(op, w.pid, w.start, 'tcp', '127.0.0.1', port);
      await submitFault({ socketPath: sup.socketPath, body: encodeFault(f), faultId: f.fault_id, key, resolver: sup.record.resolver });
    }
    const run = (n: number) => probe(['--cgroup', cgroup, '--repeat', String(n), '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
    t.equal((await run(10)).summary?.ok, 10);
    await sup.stop();
    const file = path.join(stateDir, 'network-operations', op, 'counters.state.json');
    t.ok(fs.existsSync(file), 'snapshot written at stop');
    if (crash) fs.unlinkSync(file); // as if killed: the log is replayed instead
    t.equal((await run(7)).summary?.ok, 7, 'the pinned hooks keep allowing (and counting) with no resolver');

    // restart with a narrower policy: a handover at start
    const narrow = policy(String(srv.port));
    sup = await start(narrow);
    t.teardown(() => sup.stop());
    t.equal((await run(5)).summary?.ok, 5);
    const lines = await waitFor(() => {
      const l = counterLines(stateDir, op);
      return sumDelta(l, { kind: 'allow', port: srv.port }) === 22 ? l : null;
    }, 4000, 50).catch(() => counterLines(stateDir, op));
    t.equal(sumDelta(lines, { kind: 'allow', port: srv.port }), 22, 'Σ allow deltas = 10 + 7 (while down) + 5, nothing twice');
    const resumed = lines.filter((l) => l.kind === 'sampler' && l.event === 'start');
    t.equal(resumed[1]?.resumed, crash ? 'replay' : 'snapshot', `resumed from the ${crash ? 'log' : 'snapshot'}`);
    t.same(matching(lines, { kind: 'reset' }), [], 'no spurious reset');
    t.ok(lines.some((l) => l.kind === 'lease_revoked' && l.port === other.port && l.by === 'policy'), 'the lease the new policy does not allow was revoked at start');
    t.ok(lines.some((l) => l.kind === 'generation' && l.reason === 'policy_change'), 'the restart with another policy is a policy_change generation');
    await waitFor(() => readJson(stateDir, op, 'operation.json').totals.allow === 22, 3000, 50).catch(() => undefined);
    t.equal(readJson(stateDir, op, 'operation.json').totals.allow, 22, 'operation.json totals continue across the restart');
    // network.json takes totals at most every so often (its write budget, src/counters/recorder.ts): a reading comes
    await waitFor(() => readJson(stateDir, op, 'network.json').totals.allow === 22, timeScaled(5000), 50).catch(() => undefined);
    t.equal(readJson(stateDir, op, 'network.json').totals.allow, 22, 'network.json totals continue across the restart');
    t.ok((await verifyLog(path.join(stateDir, 'network-operations', op, 'counters.jsonl'))).ok, 'chain verifies across both runs');
  });
}
