// Hook fault records survive a resolver killed with them in hand (issue 28):
// the ring's room is given back to the kernel only once a record's line is
// durable, so a `gensee supervise` killed -9 after reading records and
// before writing their lines leaves them in the pinned ring, and the next
// one reads them again and writes them (ring_replayed), none lost, none
// counted twice. One killed after writing the lines and before releasing
// them leaves records the log already has: the next one skips them by the
// ring position each line carries (ring_map, ring_pos).
import t, { Test } from 'tap';
import { execFile, spawn } from 'node:child_process';
import * as path from 'node:path';
import { tcpServer, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { supervisedOp, superviseProcess, faultLines } from '../helpers/supervisor';
import type { Proc } from '../helpers/gensee';

const K = 5;

type Line = Record<string, unknown> & { kind?: string };

function portOf(x: Line): number | undefined {
  return (x.fault as { effect?: { network?: { port?: number } } } | undefined)?.effect?.network?.port;
}

/** a process in the cgroup connects once to each port (each refused by the hook: one ring record per port) */
async function connectAll(cgroup: string, ports: number[]): Promise<string> {
  const script = `echo $$ > ${path.join(cgroup, 'cgroup.procs')}; for p in ${ports.join(' ')}; do busybox nc 127.0.0.1 $p </dev/null >/dev/null 2>&1; echo rc=$?; done`;
  const sh = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  sh.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => sh.once('exit', r));
  return out;
}

async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const old: Record<string, string | undefined> = {};
  for (const k of Object.keys(env)) {
    old[k] = process.env[k];
    process.env[k] = env[k];
  }
  try {
    return await fn();
  } finally {
    for (const k of Object.keys(env)) {
      if (old[k] === undefined) delete process.env[k];
      else process.env[k] = old[k];
    }
  }
}

async function killed(p: Proc): Promise<void> {
  p.kill('SIGKILL');
  await p.exited;
}

function verify(stateDir: string, op: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [GENSEE_BIN, 'verify', '--op', op, '--state-dir', stateDir], { timeout: 120_000 }, (e, so, se) =>
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out: so + se }),
    ),
  );
}

/**
 * A deny-all operation, its first supervise started with env (a test
 * knob), and one refused connect by a process in the cgroup to each of K
 * denied ports: one ring record each.
 */
async function firstSupervise(t: Test, tag: string, env: Record<string, string>) {
  const servers: Awaited<ReturnType<typeof tcpServer>>[] = [];
  for (let i = 0; i < K; i++) servers.push(await tcpServer(t));
  const ports = servers.map((s) => s.port);
  const reached = () => servers.reduce((n, s) => n + s.accepted() + s.bytes(), 0);
  const o = supervisedOp(t, tag, { schema: 1, grants: [], leases: [], delegate: [] });
  const p1 = await withEnv(env, () => superviseProcess(t, [...o.args, '--json'], 60_000));
  const out = await connectAll(o.cgroup, ports);
  t.equal((out.match(/rc=1/g) ?? []).length, K, 'every connect was refused by the hook');
  /** the fault lines of those connects */
  const mine = (ls: Line[] = faultLines(o.stateDir, o.op) as Line[]) => ls.filter((x) => x.kind === 'fault' && ports.includes(portOf(x)!));
  return { ports, o, p1, mine, reached };
}

/** the next supervise, started once the first is killed; returns when it has written ring_replayed */
async function nextSupervise(t: Test, o: { args: string[]; stateDir: string; op: string }): Promise<Proc> {
  const p2 = await superviseProcess(t, [...o.args, '--json'], 60_000);
  await waitFor(() => faultLines(o.stateDir, o.op).some((x: Line) => x.kind === 'ring_replayed'), 60_000);
  return p2;
}

/** every one of the ports has a fault line */
function allFaulted(o: { stateDir: string; op: string }, ports: number[]): Promise<unknown> {
  return waitFor(() => new Set(faultLines(o.stateDir, o.op).filter((x: Line) => x.kind === 'fault').map(portOf)).size >= ports.length, 60_000);
}

t.test('records a killed supervise read and never wrote are read again by the next one', async (t) => {
  const { ports, o, p1, mine, reached } = await firstSupervise(t, 'gs-rr', { GENSEE_TEST_HOLD_RING: '1' });
  await waitFor(() => new RegExp(`holding ${K} ring record`).test(p1.stderr), 60_000);
  t.pass(`the first supervise read all ${K} records and holds them`);
  await killed(p1);
  t.equal(mine().length, 0, 'it wrote none of them before it was killed');

  const p2 = await nextSupervise(t, o);
  await allFaulted(o, ports);
  const lines = faultLines(o.stateDir, o.op) as Line[];
  const faults = mine(lines);
  t.same(faults.map(portOf).sort(), [...ports].sort(), 'the next supervise wrote one fault line per refused connect');
  t.ok(faults.every((x) => typeof x.ring_map === 'number' && typeof x.ring_pos === 'number'), 'each fault line names its ring record');
  const replayed = lines.find((x) => x.kind === 'ring_replayed')!;
  t.match(replayed, { records: K, already_logged: 0, control: 'ebpf/gs_events_v1' }, 'ring_replayed: every held record, none in the log before');
  t.notOk(lines.some((x) => x.kind === 'records_lost'), 'no record was lost');
  await waitFor(() => faultLines(o.stateDir, o.op).filter((x: Line) => x.kind === 'resolution').length >= K, 60_000);
  await killed(p2);
  t.equal(reached(), 0, 'no denied listener accepted a connection or received a byte, across the kill and the replay');
  const v = await verify(o.stateDir, o.op);
  t.match(v.out, /verify .*: ok/, 'gensee verify passes across the kill and the replay');
});

t.test('records a killed supervise wrote and never released are not written twice', async (t) => {
  // the fault line is made durable, then the resolver stalls before deciding: the record stays unreleased
  const { ports, o, p1, mine, reached } = await firstSupervise(t, 'gs-rr2', { GENSEE_TEST_STALL_FAULT_MS: '600000' });
  // killed once at least one line is written (how many more it read by then does not matter)
  await waitFor(() => mine().length >= 1, 60_000);
  await killed(p1);
  const written = mine();
  t.ok(written.length >= 1, `the first supervise wrote ${written.length} fault line(s) and released none`);

  const p2 = await nextSupervise(t, o);
  await allFaulted(o, ports);
  const lines = faultLines(o.stateDir, o.op) as Line[];
  const faults = mine(lines);
  t.same(faults.map(portOf).sort(), [...ports].sort(), 'exactly one fault line per refused connect across both supervisors');
  const replayed = lines.find((x) => x.kind === 'ring_replayed')!;
  t.match(replayed, { records: K, already_logged: written.length, carried: written.length }, `ring_replayed: ${K} records, ${written.length} already in the log, still open`);
  const resolvedIds = new Set(lines.filter((x) => x.kind === 'resolution').map((x) => x.fault_id));
  t.ok(faults.every((x) => resolvedIds.has(x.fault_id)), 'every fault line has its resolution: the open ones were decided under their own ids by the next supervise');
  t.notOk(lines.some((x) => x.kind === 'abandoned' || (x.kind === 'resolution' && (x.resolution as { reason?: string }).reason === 'abandoned')), 'none was abandoned');
  t.notOk(lines.some((x) => x.kind === 'records_lost'), 'no record was lost');
  await killed(p2);
  t.equal(reached(), 0, 'no denied listener accepted a connection or received a byte, across the kill and the replay');
  const v = await verify(o.stateDir, o.op);
  t.match(v.out, /verify .*: ok/, 'gensee verify passes');
});

t.test('records a killed supervise decided and never released are skipped, not decided again', async (t) => {
  const { o, p1, mine, reached } = await firstSupervise(t, 'gs-rr3', { GENSEE_TEST_HOLD_RING_ACK: '1' });
  await waitFor(() => {
    const ls = faultLines(o.stateDir, o.op) as Line[];
    const ids = new Set(ls.filter((x) => x.kind === 'resolution').map((x) => x.fault_id));
    return mine(ls).length === K && mine(ls).every((x) => ids.has(x.fault_id));
  }, 60_000);
  t.pass(`the first supervise wrote and decided all ${K}, and released none`);
  await killed(p1);
  const p2 = await nextSupervise(t, o);
  const lines = faultLines(o.stateDir, o.op) as Line[];
  t.equal(mine(lines).length, K, 'no second fault line for any of them');
  t.match(lines.find((x) => x.kind === 'ring_replayed'), { records: K, already_logged: K, carried: 0 }, 'ring_replayed: all read again, all skipped');
  await killed(p2);
  t.equal(reached(), 0, 'no denied listener accepted a connection or received a byte, across the kill and the replay');
  const v = await verify(o.stateDir, o.op);
  t.match(v.out, /verify .*: ok/, 'gensee verify passes');
});
