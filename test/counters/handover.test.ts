// Acceptance: generation handovers under continuous traffic lose and double
// count nothing, and nothing unleased gets through during them. One apply
// goes through the CLI and the control socket (another process), one
// in-process; a lease removed behind the supervisor's back (`gensee lease rm`
// edits the kernel map directly) becomes a revocation generation with its
// final counts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { requireKernel, probe, tcpServer, freePort, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault } from '../helpers/supervisor';
import { parsePolicy, policyHash } from '../../src/protocol/json';
import { parseDestination } from '../../src/addr';
import { verifyLog } from '../../src/evidence/verify';
import { counterLines, readJson, sumDelta, matching, calls, Line, tcpLeasePolicy as policy } from './lib';

function gensee(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(GENSEE_BIN, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

t.test('policy handovers under continuous traffic', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, policy('1024-65535'), 'gs-ho');
  const w = await workload(t, s.cgroup);
  const keep = await tcpServer(t);
  const drop = await tcpServer(t);
  for (const srv of [keep, drop]) {
    const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port));
    t.equal(r.resolution.action, 'retry_after_lease', `leased :${srv.port}`);
  }
  const unleased = await freePort('127.0.0.1');
  const keepGen0 = s.sup.dp.getLease(parseDestination('tcp', `127.0.0.1:${keep.port}`))!.generation;

  const N = 300;
  const run = (port: number, addr = '127.0.0.1') =>
    probe(['--cgroup', s.cgroup, '--repeat', String(N), '--interval', '10', '--summary', 'connect', 'tcp', addr, String(port)], { timeoutMs: 60_000 });
  const traffic = Promise.all([run(keep.port), run(drop.port), run(unleased, '127.0.0.2')]);

  // the kernel's own counters show traffic flowing on all three before each handover
  const counted = (port: number, verdict: string, generation?: bigint) =>
    s.sup.dp
      .readCounters()
      .filter((c) => c.tuple.port === port && c.verdict === verdict && (generation === undefined || c.generation === generation))
      .reduce((n, c) => n + Number(c.count), 0);
  const flowing = (what: string, fn: () => boolean) => waitFor(fn, 20_000, 5).catch(() => t.fail(`no traffic seen: ${what}`));
  await flowing('before handover 1', () => counted(keep.port, 'allow') >= 20 && counted(drop.port, 'allow') >= 20 && counted(unleased, 'no_lease') >= 20);

  // handover 1, from another process through control.sock: only `keep` stays allowed
  const file = path.join(s.stateDir, 'p1.json');
  fs.writeFileSync(file, JSON.stringify(policy(String(keep.port))));
  const cli = await gensee(['policy', 'apply', '--op', s.op, '--state-dir', s.stateDir, '--json', file]);
  t.equal(cli.code, 0, `gensee policy apply: ${cli.stderr}`);
  const r1 = JSON.parse(cli.stdout) as { generation: number; retagged: number; revoked: number };
  t.match(r1, { ok: true, command: 'policy_apply', retagged: 1, revoked: 1 }, 'keep moved to the new generation, drop revoked');

  // keep counted under the new generation, drop refused since its revocation
  await flowing('after handover 1', () => counted(keep.port, 'allow', BigInt(r1.generation)) >= 20 && counted(drop.port, 'no_lease') >= 1);

  // handover 2, in-process: back to the wide policy
  const p2 = policy('1024-65535');
  const r2 = await s.sup.envelope!.applyPolicy(parsePolicy(p2), policyHash(JSON.stringify(p2)), { pid: process.pid, uid: 0 });
  t.equal(r2.retagged, 1, 'keep moved again');
  const [rk, rd, ru] = await traffic;
  t.equal(rk.summary?.ok, N, 'keep: every call succeeded across both handovers (no gap)');
  t.equal(ru.summary?.EPERM, N, 'unleased: every call refused during the handovers');
  t.equal(calls(rd.summary), N, 'drop: every call made');
  t.ok((rd.summary?.EPERM ?? 0) > 0, `drop: refused after its revocation (${rd.summary?.EPERM} EPERM, re-leased by the reject loop under policy 2)`);

  const lines = await waitFor(() => {
    const l = counterLines(s.stateDir, s.op);
    const k = sumDelta(l, { kind: 'allow', source: 'ebpf', port: keep.port });
    const u = sumDelta(l, { kind: 'deny', source: 'ebpf', port: unleased });
    const d = sumDelta(l, { kind: 'allow', source: 'ebpf', port: drop.port }) + sumDelta(l, { kind: 'deny', source: 'ebpf', port: drop.port });
    return k === N && u === N && d === N ? l : null;
  }, 4000, 100).catch(() => counterLines(s.stateDir, s.op));

  // nothing lost, nothing counted twice
  t.equal(sumDelta(lines, { kind: 'allow', source: 'ebpf', port: keep.port }), N, 'keep: Σ allow deltas over all its generations = calls');
  t.equal(sumDelta(lines, { kind: 'allow', source: 'ebpf', port: drop.port }), rd.summary?.ok, 'drop: Σ allow deltas = its successful calls');
  t.equal(sumDelta(lines, { kind: 'deny', source: 'ebpf', port: drop.port }), rd.summary?.EPERM, 'drop: Σ deny deltas = its refused calls');
  t.equal(sumDelta(lines, { kind: 'deny', source: 'ebpf', port: unleased, reason: 'no_lease' }), N, 'unleased: Σ no_lease deltas = calls');
  t.equal(matching(lines, { kind: 'allow', port: unleased }).length, 0, 'unleased: never an allow');

  const keepGens = [...new Set(matching(lines, { kind: 'allow', port: keep.port }).map((l) => l.generation as number))];
  t.ok(keepGens.length === 3 && keepGens.includes(Number(keepGen0)) && keepGens.includes(r1.generation) && keepGens.includes(r2.generation as number), `keep counted under its lease generation and both policy generations: ${keepGens}`);

  // order of evidence: baseline of the new generation before the old one is retired
  const seqOf = (f: (l: Line) => boolean) => lines.find(f)?.seq ?? -1;
  const g1 = seqOf((l) => l.kind === 'generation' && l.generation === r1.generation);
  const revoked0 = seqOf((l) => l.kind === 'generation_revoked' && l.generation === Number(keepGen0));
  t.ok(g1 > 0 && revoked0 > g1, `generation ${r1.generation} line (seq ${g1}) before generation ${keepGen0} is revoked (seq ${revoked0})`);
  const rev = lines.find((l) => l.kind === 'generation_revoked' && l.generation === Number(keepGen0))!;
  const afterRevoke = sumDelta(lines.filter((l) => l.seq > revoked0), { kind: 'allow', port: keep.port, generation: Number(keepGen0) });
  const before = sumDelta(lines.filter((l) => l.seq < revoked0), { kind: 'allow', port: keep.port, generation: Number(keepGen0) });
  t.equal(rev.final_allow, before, 'the revoked generation\'s final count is what was harvested before it');
  t.equal(afterRevoke, 0, 'nothing counted under it after its revocation');
  t.ok(matching(lines, { kind: 'lease_revoked', port: drop.port }).some((l) => l.by === 'policy'), 'drop revoked by the policy, recorded');
  t.ok(matching(lines, { kind: 'lease_retagged', port: keep.port }).length === 2, 'keep moved twice, recorded');

  const net = readJson(s.stateDir, s.op, 'network.json') as unknown as { generations: { generation: number; reason: string; revoked_at?: string }[] };
  t.ok(net.generations.some((g) => g.generation === Number(keepGen0) && g.revoked_at), 'network.json: the lease generation is revoked');
  t.ok(net.generations.some((g) => g.generation === r1.generation && g.reason === 'policy_apply' && g.revoked_at), 'network.json: policy generation 1 is revoked after handover 2');
  const op = readJson(s.stateDir, s.op, 'operation.json') as unknown as { policy_hash: string };
  t.equal(op.policy_hash, policyHash(JSON.stringify(p2)), 'operation.json has the applied policy hash');
  const rep = await verifyLog(path.join(s.stateDir, 'network-operations', s.op, 'counters.jsonl'));
  t.ok(rep.ok, 'counters.jsonl chain verifies');
});

t.test('a lease removed behind the supervisor\'s back becomes a revocation with final counts', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, policy('1024-65535'), 'gs-hx');
  const w = await workload(t, s.cgroup);
  const srv = await tcpServer(t);
  await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port));
  const gen = Number(s.sup.dp.getLease(parseDestination('tcp', `127.0.0.1:${srv.port}`))!.generation);
  const r = await probe(['--cgroup', s.cgroup, '--repeat', '7', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(r.summary?.ok, 7);
  const rm = await gensee(['lease', 'rm', '--op', s.op, 'tcp', `127.0.0.1:${srv.port}`]);
  t.equal(rm.code, 0, `lease rm: ${rm.stderr}`);
  const line = await waitFor(() => counterLines(s.stateDir, s.op).find((l) => l.kind === 'lease_revoked' && l.port === srv.port), 3000, 50);
  t.match(line, { by: 'external', generation: gen, final_allow: 7 }, 'revoked by an outside edit, final count 7');
  const lines = counterLines(s.stateDir, s.op);
  t.ok(lines.some((l) => l.kind === 'generation' && l.reason === 'lease_revoked' && l.generation === line.in_generation), 'the revocation is its own generation');
  t.ok(lines.some((l) => l.kind === 'generation_revoked' && l.generation === gen && l.final_allow === 7), 'its generation retired with the final count');
  await waitFor(() => !(readJson(s.stateDir, s.op, 'network.json') as unknown as { leases: { port: number }[] }).leases.some((l) => l.port === srv.port), 3000, 50);
  t.pass('network.json no longer lists it');
});
