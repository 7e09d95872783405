// `gensee supervise` upgrades in place (hooks only): `gensee upgrade --op`
// SIGHUPs it, its successor tells it to leave, reopens the operation and
// serves. The old one leaves without killing or detaching anything, even
// with --detach-on-exit; the hooks stay attached throughout; the successor
// records resolver_takeover and serves the workload's next fault; a hook
// refusal made while neither served is drained from the pinned ring and
// recorded by the successor.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { tcpServer, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { supervisedOp, superviseProcess, workload, faultLines } from '../helpers/supervisor';
import { hooksAttached } from '../../src/dataplane';

function gensee(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [GENSEE_BIN, ...args], { timeout: 120_000 }, (e, so, se) => resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out: so + se })),
  );
}

function alive(pid: number): boolean {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

t.test('gensee upgrade --op: a supervise successor takes over; nothing is killed or detached; it serves', async (t) => {
  const leased = await tcpServer(t);
  const policy = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(leased.port) }, ttl_s: 60, max_uses: 0 }], delegate: [] };
  const o = supervisedOp(t, 'gs-tsu', policy);
  const p1 = await superviseProcess(t, [...o.args, '--json', '--detach-on-exit'], 60_000);
  const w = await workload(t, o.cgroup);
  let successor = 0;
  t.teardown(() => {
    if (successor && alive(successor)) process.kill(successor, 'SIGKILL');
  });

  const up = await gensee(['upgrade', '--op', o.op, '--state-dir', o.stateDir, '--json']);
  t.equal(up.code, 0, `gensee upgrade --op succeeds (${up.out.trim()})`);
  const res = JSON.parse(up.out.trim().split('\n').pop()!) as { old_pid: number; new_pid: number; ms: number };
  successor = res.new_pid;
  t.equal(res.old_pid, p1.pid, 'the running supervise was upgraded');
  t.not(res.new_pid, p1.pid, `by a new process (${res.ms} ms)`);
  await waitFor(() => !alive(p1.pid), 30_000);
  t.pass('the old supervise exited');
  t.ok(alive(w.pid), 'the workload was not killed (the old one left, --detach-on-exit notwithstanding)');
  t.ok(hooksAttached(o.op), 'the hooks stayed attached');
  await waitFor(() => faultLines(o.stateDir, o.op).some((x) => x.kind === 'resolver_takeover' && x.new_pid === successor), 30_000);
  const take = faultLines(o.stateDir, o.op).find((x) => x.kind === 'resolver_takeover');
  t.match(take, { how: 'takeover', old_pid: p1.pid, new_pid: successor, mode: 'hooks', version: /\d+\.\d+/ }, 'faults.jsonl: resolver_takeover with old/new pid and version');

  // the successor serves: a first connect is refused by the hook, leased by the fault it raised, and the retry gets through
  const sh = spawn('sh', ['-c', `echo $$ > ${path.join(o.cgroup, 'cgroup.procs')}; n=0; until busybox nc 127.0.0.1 ${leased.port} </dev/null >/dev/null 2>&1; do n=$((n+1)); [ $n -gt 400 ] && exit 1; sleep 0.05; done; echo tries=$n`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  sh.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => sh.once('exit', r));
  t.equal(code, 0, `the workload's connect got through under the successor (${out.trim()})`);
  t.ok(faultLines(o.stateDir, o.op).some((x) => x.kind === 'resolution' && (x.resolution as { action?: string }).action === 'retry_after_lease'), 'the successor recorded and leased it');

  // kill -9, a refusal while nobody serves, then a plain restart: the ring keeps it for the next one
  process.kill(successor, 'SIGKILL');
  await waitFor(() => !alive(successor), 30_000);
  const gap = await tcpServer(t);
  const sh2 = spawn('sh', ['-c', `echo $$ > ${path.join(o.cgroup, 'cgroup.procs')}; busybox nc 127.0.0.1 ${gap.port} </dev/null >/dev/null 2>/dev/null; echo rc=$?`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out2 = '';
  sh2.stdout!.on('data', (d: Buffer) => (out2 += d.toString()));
  await new Promise((r) => sh2.once('exit', r));
  t.match(out2, /rc=1/, 'with no supervise, the hook refuses what no lease allows (fail closed)');
  const p3 = await superviseProcess(t, [...o.args, '--json'], 60_000);
  successor = p3.pid;
  await waitFor(
    () => faultLines(o.stateDir, o.op).some((x) => x.kind === 'fault' && (x.fault as { effect?: { network?: { port?: number } } }).effect?.network?.port === gap.port),
    30_000,
  );
  t.pass('the refusal made while no supervise ran was drained from the pinned ring and recorded by the next one');
  t.ok(faultLines(o.stateDir, o.op).some((x) => x.kind === 'resolver_takeover' && x.how === 'restart' && x.new_pid === p3.pid), 'a plain restart records resolver_takeover, how restart');
  t.equal(gap.accepted(), 0, 'nothing got through');
  const v = await gensee(['verify', '--op', o.op, '--state-dir', o.stateDir]);
  t.match(v.out, /verify .*: ok/, 'gensee verify passes across both');
});
