// A workload floods 10,000 distinct denied destinations through io_uring
// (seccomp never sees it: the eBPF hook's reject path is the only control)
// under `gensee supervise`. No fault record may be lost: one ring event per
// destination reaches faults.jsonl — as a fault line, or past the refusal
// budget (200 a second, docs/design.md "The shared state disk") in the count
// of a suppressed line —, the lost-event counter does not move, a
// second burst to the same destinations inside the hook's rate-limit window
// adds no record but every attempt is counted, no byte reaches the denied
// listener, and the evidence verifies. Where loss cannot be avoided (no
// consumer at all: the supervisor is stopped), faults.jsonl says how many.
import t, { Test } from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { EVENTS_BYTES, FAULT_RL_WINDOW_NS } from '../../src/abi';
import { DataPlane } from '../../src/dataplane';
import { opDir } from '../../src/state/operation';
import { requireKernel, tcpServer, waitFor, sleep } from '../helpers/kernel';
import { supervisedOp, superviseProcess } from '../helpers/supervisor';
import { gensee, Proc } from '../helpers/gensee';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'flood');
const COUNT = 10_000;
const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };

interface Burst {
  burst: number;
  n: number;
  ok: number;
  EPERM: number;
  other: number;
  start_boot_ns: number;
  end_boot_ns: number;
}

function run(bin: string, args: string[], timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(bin, args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

async function flood(cgroup: string, base: string, port: number, count: number, bursts: number): Promise<Burst[]> {
  const r = await run(FLOOD, ['--cgroup', cgroup, '--base', base, '--port', String(port), '--count', String(count), '--bursts', String(bursts)]);
  if (r.code !== 0) throw new Error(`flood exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim().split('\n').slice(1).map((l) => JSON.parse(l) as Burst);
}

/** faults.jsonl's complete lines (the supervisor may be mid-write) */
function lines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
}

/** the {kind:"fault"} lines faults.jsonl holds from the hook, by destination */
function hookFaults(file: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines(file)) {
    if (!l.includes('"cgroup_hook"') || !l.includes('"kind":"fault"')) continue;
    const rec = JSON.parse(l) as { fault: { effect: { network: { address: string; port: number } } } };
    const d = `${rec.fault.effect.network.address}:${rec.fault.effect.network.port}`;
    m.set(d, (m.get(d) ?? 0) + 1);
  }
  return m;
}

/** the refusals faults.jsonl's suppressed lines count (the refusal budget) */
function suppressedIn(file: string): number {
  let n = 0;
  for (const l of lines(file)) {
    if (l.includes('"kind":"suppressed"')) n += (JSON.parse(l) as { count: number }).count;
  }
  return n;
}

/** the lost counts faults.jsonl's records_lost lines carry */
function recordsLost(file: string): number {
  let n = 0;
  for (const l of lines(file)) {
    if (l.includes('"kind":"records_lost"')) n += (JSON.parse(l) as { count: number }).count;
  }
  return n;
}

/** no_lease denials the operation's kernel counters hold (its own map: only the flood ran there) */
function denied(dp: DataPlane): number {
  return dp
    .readCounters()
    .filter((r) => r.verdict === 'no_lease')
    .reduce((s, r) => s + Number(r.count), 0);
}

interface Setup {
  cg: string;
  op: string;
  st: string;
  dp: DataPlane;
  faults: string;
  port: number;
  base: string;
  sup: Proc;
  listener: () => { accepted: number; bytes: number };
}

/**
 * A fresh cgroup, a deny-all `gensee supervise` on it, a listener the flood
 * would reach were anything let through, and a 127.x/16 of destinations
 * unique to this test: all removed at teardown, failure or not.
 */
async function setup(t: Test, tag: string, second: number): Promise<Setup> {
  const o = supervisedOp(t, tag, DENY_ALL);
  // the denied listener, on every address the flood dials (port unique to this run)
  const srv = await tcpServer(t, '0.0.0.0');
  // 127.<a>.<b>.1 onwards, per process and test: parallel files dial apart
  const base = `127.${100 + (process.pid % 100)}.${second}.1`;
  const sup = await superviseProcess(t, o.args);
  const dp = DataPlane.open(o.op);
  t.teardown(() => dp.close());
  return {
    cg: o.cgroup,
    op: o.op,
    st: o.stateDir,
    dp,
    faults: path.join(opDir(o.stateDir, o.op), 'faults.jsonl'),
    port: srv.port,
    base,
    sup,
    listener: () => ({ accepted: srv.accepted(), bytes: srv.bytes() }),
  };
}

/** SIGTERM, then `gensee verify` of the operation's logs */
async function stopAndVerify(t: Test, s: Setup): Promise<void> {
  s.sup.kill('SIGTERM');
  t.equal((await s.sup.exited).code, 0, `supervise exits 0 ${s.sup.stderr.trim()}`);
  const v = await gensee(['verify', '--op', s.op, '--state-dir', s.st, '--json'], 120_000);
  t.equal(v.code, 0, `gensee verify ok: ${v.stdout.slice(0, 300)} ${v.stderr}`);
}

t.test('io_uring flood of 10,000 denied destinations loses no fault record', async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(FLOOD)) return t.fail(`flood workload not built: ${FLOOD} (make build)`);
  const s = await setup(t, 'gs-fl', 0);
  const { dp, faults } = s;
  const lost0 = dp.stats().lostEvents;

  // 1. two bursts to the same 10,000 destinations, back to back
  const t0 = Date.now();
  const [b1, b2] = await flood(s.cg, s.base, s.port, COUNT, 2);
  const floodMs = Date.now() - t0;
  t.equal(b1.EPERM, COUNT, 'burst 1: every connect refused by the hook');
  t.equal(b2.EPERM, COUNT, 'burst 2: every connect refused by the hook');
  // the window is per destination: each one's second attempt (burst 2)
  // must come within it of its first (burst 1). The bursts dial in the same
  // order, so the widest gap is at the first or the last destination (a
  // loaded machine may stretch the whole flood past the window; that is not
  // what this needs)
  const gap = Math.max(b2.start_boot_ns - b1.start_boot_ns, b2.end_boot_ns - b1.end_boot_ns);
  t.ok(gap < FAULT_RL_WINDOW_NS, `each destination's second attempt inside its rate-limit window (widest gap ${(gap / 1e6).toFixed(0)} ms)`);
  t.equal(denied(dp), 2 * COUNT, 'the kernel counters count every attempt');

  const m = await waitFor(() => {
    const x = hookFaults(faults);
    return x.size + suppressedIn(faults) >= COUNT ? x : null;
  }, 60_000).catch(() => hookFaults(faults));
  const drainMs = Date.now() - t0;
  const sup1 = suppressedIn(faults);
  t.equal(m.size + sup1, COUNT, `faults.jsonl: a fault line or a suppressed count for every distinct destination (${m.size} + ${sup1})`);
  t.ok(m.size < COUNT, 'the refusal budget held the flood back');
  t.equal([...m.values()].filter((n) => n !== 1).length, 0, 'and exactly one each: the second burst put no event on the ring');
  t.equal(dp.stats().lostEvents - lost0, 0n, 'lost-event counter did not move');

  // 2. past the window the same destination faults again (a retry is never muted for long)
  await sleep(Math.ceil(FAULT_RL_WINDOW_NS / 1e6) + 100);
  const before = hookFaults(faults);
  const [b3] = await flood(s.cg, s.base, s.port, 10, 1);
  t.equal(b3.EPERM, 10, 'after the window: refused again');
  const newOnes = (x: Map<string, number>) => [...x].filter(([d, n]) => n === (before.get(d) ?? 0) + 1).length;
  const again = await waitFor(() => {
    const x = hookFaults(faults);
    return newOnes(x) >= 10 ? x : null;
  }, 10_000).catch(() => hookFaults(faults));
  t.equal(newOnes(again), 10, 'and one new fault per destination (a quiet second: within the budget)');
  t.equal(denied(dp), 2 * COUNT + 10, 'counted too');
  const events = [...again.values()].reduce((x, n) => x + n, 0) + suppressedIn(faults);

  t.same(s.listener(), { accepted: 0, bytes: 0 }, 'the denied listener accepted nothing and received 0 bytes');
  t.equal(recordsLost(faults), 0, 'no records_lost line');
  await stopAndVerify(t, s);
  t.comment(
    `flood: ${m.size} fault lines + ${sup1} suppressed; attempts ${2 * COUNT + 10}, ring events ${events}, lost ${dp.stats().lostEvents - lost0}, ring ${EVENTS_BYTES} bytes, ` +
      `bursts ${((b1.end_boot_ns - b1.start_boot_ns) / 1e6).toFixed(0)}+${((b2.end_boot_ns - b2.start_boot_ns) / 1e6).toFixed(0)} ms, ` +
      `flood ${floodMs} ms, all ${COUNT} faults in faults.jsonl after ${drainMs} ms`,
  );
});

t.test('a loss the ring cannot avoid is recorded in faults.jsonl with its count', async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(FLOOD)) return t.fail(`flood workload not built: ${FLOOD} (make build)`);
  const s = await setup(t, 'gs-fll', 64);
  const lost0 = s.dp.stats().lostEvents;
  // nobody drains while the supervisor is stopped: more distinct
  // destinations than the ring holds must overflow it
  const n = 2 * Math.floor(EVENTS_BYTES / 56);
  s.sup.kill('SIGSTOP');
  let b: Burst;
  try {
    [b] = await flood(s.cg, s.base, s.port, n, 1);
  } finally {
    s.sup.kill('SIGCONT');
  }
  t.equal(b.EPERM, n, `${n} connects refused`);
  t.equal(denied(s.dp), n, 'every attempt counted');
  const lost = Number(s.dp.stats().lostEvents - lost0);
  t.ok(lost > 0, `the ring overflowed: ${lost} events lost`);
  const got = await waitFor(() => (recordsLost(s.faults) >= lost ? recordsLost(s.faults) : 0), 60_000).catch(() => recordsLost(s.faults));
  t.equal(got, lost, 'faults.jsonl: records_lost lines carry the lost count');
  const m = await waitFor(() => {
    const x = hookFaults(s.faults);
    return x.size + suppressedIn(s.faults) >= n - lost ? x : null;
  }, 60_000).catch(() => hookFaults(s.faults));
  t.equal(m.size + suppressedIn(s.faults), n - lost, 'every event the ring kept is a fault line or in a suppressed count');
  t.same(s.listener(), { accepted: 0, bytes: 0 }, 'the denied listener received 0 bytes');
  await stopAndVerify(t, s);
  t.comment(`overflow: ${n} distinct destinations with no consumer, ${n - lost} events kept, ${lost} lost and recorded`);
});
