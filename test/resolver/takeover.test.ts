// A resolver taking over from one killed between a fault and its answer
// (real runc, real holder, kill -9): the open fault is carried over and
// resolved under its own fault id by the new resolver, after a
// resolver_takeover line; `gensee verify` passes across it. A call that
// waited longer than fault_deadline_ms for a resolver is denied with
// reason resolver_restarted (resolution line and boundary event), whether
// the old resolver had recorded it (carried) or the holder saw it arrive
// while none ran.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { tcpServer, uniqueName, waitFor, sleep, GENSEE_BIN } from '../helpers/kernel';
import { faultLines } from '../helpers/supervisor';
import { timeScaled } from '../helpers/time';
import { requireRunc, tempRoot, startListener, makeBundle, runcRun, cleanupOp, ncScript, TapT, Listener } from '../oci/runc-helpers';
import { FdKeep } from '../../src/oci/fdkeep';

type Line = Record<string, unknown> & { kind?: string; fault_id?: string };

function killHolderAtTeardown(t: TapT, p: string): void {
  t.teardown(() => {
    try {
      const k = FdKeep.connect(p);
      if (!k) return;
      const { pid } = k.ping();
      k.close();
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
}

async function setup(t: TapT, leasedPort: number, deadlineMs: number) {
  const root = tempRoot(t);
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const keep = path.join(root, 'keep', 'fdkeep.sock');
  const op = uniqueName('gs-to');
  cleanupOp(t, op);
  fs.mkdirSync(policyDir, { recursive: true, mode: 0o700 });
  const policy = {
    schema: 1,
    grants: [],
    leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(leasedPort) }, ttl_s: 30, max_uses: 0 }],
    delegate: [],
    fault_deadline_ms: deadlineMs,
  };
  fs.writeFileSync(path.join(policyDir, `${op}.json`), JSON.stringify(policy), { mode: 0o600 });
  killHolderAtTeardown(t, keep);
  return { root, stateDir, sock, keep, op, args: ['--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir, '--fdkeep', keep] };
}

/** a listener whose resolver writes each fault line and then stalls (tests-only hook), never answering */
async function stallingListener(t: TapT, args: string[]): Promise<Listener> {
  process.env.GENSEE_TEST_STALL_FAULT_MS = '600000';
  try {
    return await startListener(t, args);
  } finally {
    delete process.env.GENSEE_TEST_STALL_FAULT_MS;
  }
}

async function kill9(l: Listener): Promise<void> {
  l.child.kill('SIGKILL');
  if (l.child.exitCode === null && l.child.signalCode === null) await new Promise((r) => l.child.once('exit', r));
}

function verify(stateDir: string, op: string): string {
  return execFileSync(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir]).toString();
}

const portOf = (x: Line) => ((x.fault as { effect?: { network?: { port?: number } } } | undefined)?.effect?.network?.port ?? -1);

t.test('an open fault (resolver killed between fault line and answer) is carried over and resolved under its own id', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  // a deadline well above a restart here: the carried call is answered by policy
  const { root, stateDir, sock, op, args } = await setup(t, leased.port, 60_000); // the most a policy allows
  const l1 = await stallingListener(t, args);
  const script = `(${ncScript([['carried', leased.port]])}) & while [ ! -e /tmp/go ]; do sleep 0.05; done; ${ncScript([['held', leased.port]])}; wait`;
  const b = makeBundle(t, root, 'c', { listenerPath: sock, metadata: `op=${op}`, script });
  const running = runcRun(b, timeScaled(120_000));
  const fault = (await waitFor(() => faultLines(stateDir, op).find((x) => x.kind === 'fault' && portOf(x) === leased.port), 60_000)) as Line;
  t.equal(leased.accepted(), 0, 'the first resolver recorded the fault and did not answer');
  await kill9(l1);
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  await sleep(500);
  t.equal(leased.accepted(), 0, 'with no resolver, both calls wait');

  const l2 = await startListener(t, args);
  const resumed = await l2.waitEvent((e) => e.event === 'resumed' && e.op === op, 60_000);
  t.equal(resumed.carried_faults, 1, 'the new listener carries one open fault over');
  const r = await running;
  t.match(r.out, /^carried=0 /m, `the carried call is answered by policy: allowed (${r.out.trim()})`);
  t.match(r.out, /^held=0 /m, 'so is the call made while no resolver ran (within the deadline)');
  t.notMatch(r.out, /Function not implemented/, 'never ENOSYS');
  t.equal(leased.accepted(), 2);
  await l2.waitEvent((e) => e.event === 'stopped' && e.op === op, 60_000);

  const lines = faultLines(stateDir, op) as Line[];
  const id = fault.fault_id!;
  const takeIdx = lines.findIndex((x) => x.kind === 'resolver_takeover');
  const take = lines[takeIdx];
  t.match(take, { old_pid: l1.child.pid, new_pid: l2.child.pid, version: /\d+\.\d+/, how: 'restart', carried_faults: [id] }, 'resolver_takeover names old/new pid, version and the carried fault');
  const res = lines.filter((x) => x.kind === 'resolution' && x.fault_id === id);
  t.equal(res.length, 1, 'exactly one resolution for the original fault');
  t.ok(lines.indexOf(res[0]) > takeIdx, 'it comes after the takeover line');
  // both calls go to the same destination: whichever is second finds the lease the first one got
  t.match(res[0], { resolution: { fault_id: id, action: /^(retry_after_lease|continue_already_authorized)$/ }, takeover: { carried: true, answered_as: /^sn-/ } }, 'resolved by policy under the original fault id');
  // (the new notifier numbers its faults afresh: the id it raised may even equal the original)
  t.notOk(lines.some((x) => x.kind === 'resolution' && typeof x.abandoned === 'string'), 'nothing abandoned');
  t.equal(lines.filter((x) => x.kind === 'fault' && portOf(x) === leased.port).length, 2, 'one fault line per call: none repeated for the carried one');
  const held = lines.find((x) => x.kind === 'resolution' && x.fault_id !== id && (x.takeover as { carried?: boolean } | undefined)?.carried === undefined && x.takeover !== undefined);
  t.match(held, { resolution: { action: /^(retry_after_lease|continue_already_authorized)$/ }, takeover: { waited_ms: Number } }, 'the held call: answered by policy, its wait since arrival recorded');
  const v = verify(stateDir, op);
  t.match(v, /verify .*: ok/, `gensee verify passes across the takeover (${v.trim().split('\n')[0]})`);
});

t.test('calls that waited past fault_deadline_ms for a resolver are denied resolver_restarted, recorded', async (t) => {
  if (!requireRunc(t)) return;
  const leased = await tcpServer(t);
  // long enough to kill the first resolver before its own timer fires, short against the wait below
  const deadline = Math.min(60_000, timeScaled(4000)); // 60 s: the most a policy allows
  const { root, stateDir, sock, op, args } = await setup(t, leased.port, deadline);
  const l1 = await stallingListener(t, args);
  // two threads of calls: one the first resolver records (carried), one made while no resolver runs (held)
  const script = `(${ncScript([['carried', leased.port]])}) & while [ ! -e /tmp/go ]; do sleep 0.05; done; ${ncScript([['held', leased.port]])}; wait`;
  const b = makeBundle(t, root, 'l', { listenerPath: sock, metadata: `op=${op}`, script });
  const running = runcRun(b, timeScaled(120_000));
  const fault = (await waitFor(() => faultLines(stateDir, op).find((x) => x.kind === 'fault' && portOf(x) === leased.port), 60_000)) as Line;
  await kill9(l1);
  fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'go'), '');
  // both wait past the deadline with no resolver
  await sleep(deadline + 1500);
  t.equal(leased.accepted(), 0, 'nothing got through while no resolver ran');

  const l2 = await startListener(t, args);
  const resumed = await l2.waitEvent((e) => e.event === 'resumed' && e.op === op, 60_000);
  t.equal(resumed.carried_faults, 1, 'one open fault carried over');
  t.equal(resumed.held_calls, 1, 'the holder saw the other call arrive');
  const r = await running;
  t.match(r.out, /^carried=1 .*Permission denied/m, `the carried call is denied (${r.out.trim()})`);
  t.match(r.out, /^held=1 .*Permission denied/m, 'the call made while no resolver ran is denied');
  t.notMatch(r.out, /Function not implemented/, 'never ENOSYS');
  t.equal(leased.accepted(), 0, 'neither went through');
  await l2.waitEvent((e) => e.event === 'stopped' && e.op === op, 60_000);

  const lines = faultLines(stateDir, op) as Line[];
  const take = lines.find((x) => x.kind === 'resolver_takeover');
  t.match(take, { carried_faults: [fault.fault_id], held_calls: 1, fault_deadline_ms: deadline }, 'the takeover line says what was carried and held');
  const late = lines.filter((x) => x.kind === 'resolution' && (x.resolution as { reason?: string }).reason === 'resolver_restarted');
  t.equal(late.length, 2, 'two resolutions with reason resolver_restarted');
  const carried = late.find((x) => x.fault_id === fault.fault_id);
  t.ok(carried, 'one closes the original fault');
  t.ok(((carried?.takeover as { waited_ms?: number }) ?? {}).waited_ms! > deadline, `it waited past the deadline (${String((carried?.takeover as { waited_ms?: number })?.waited_ms)} ms)`);
  const held = late.find((x) => x.fault_id !== fault.fault_id)!;
  t.ok(lines.some((x) => x.kind === 'fault' && x.fault_id === held.fault_id), 'the held call has its own fault line');
  t.ok((held.takeover as { waited_ms: number }).waited_ms > deadline, `the held call waited past the deadline since its arrival (${(held.takeover as { waited_ms: number }).waited_ms} ms)`);
  // boundary events: each denial is an event of the operation
  await waitFor(() => {
    const ev = fs.readFileSync(path.join(stateDir, 'network-operations', op, 'events.jsonl'), 'utf8');
    return ev.split('\n').filter((x) => x.includes('resolver_restarted')).length >= 2;
  }, 30_000);
  t.pass('both denials are boundary events in events.jsonl');
  const v = verify(stateDir, op);
  t.match(v, /verify .*: ok/, `gensee verify passes across the takeover (${v.trim().split('\n')[0]})`);
});
