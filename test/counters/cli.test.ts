// gensee counters (summary of counters.jsonl + live kernel counters) and
// gensee policy apply refusals, in separate processes.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { requireKernel, probe, tcpServer, freePort, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault } from '../helpers/supervisor';
import { counterLines, sumDelta, tcpLeasePolicy } from './lib';

function gensee(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(GENSEE_BIN, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const POLICY = tcpLeasePolicy('1024-65535', 60);

t.test('gensee counters: summary and live counters; policy apply refusals', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-cc');
  const w = await workload(t, s.cgroup);
  const srv = await tcpServer(t);
  await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port));
  const denied = await freePort();
  await probe(['--cgroup', s.cgroup, '--repeat', '12', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  await probe(['--cgroup', s.cgroup, '--repeat', '4', '--summary', 'connect', 'tcp', '127.0.0.2', String(denied)]);
  await waitFor(() => sumDelta(counterLines(s.stateDir, s.op), { kind: 'allow', port: srv.port }) === 12, 3000, 50);

  const base = ['--op', s.op, '--state-dir', s.stateDir];
  const j = await gensee(['counters', ...base, '--json']);
  t.equal(j.code, 0, j.stderr);
  const out = JSON.parse(j.stdout) as {
    counters: { port: number; verdict: string; count: number }[];
    summary: { allow: number; deny: Record<string, number>; destinations: { port: number; allow: number }[]; generations: { generation: number; allow: number; reason: string }[] };
  };
  t.ok(out.counters.some((c) => c.port === srv.port && c.verdict === 'allow' && c.count === 12), 'live kernel counters kept');
  t.equal(out.summary.allow, 12);
  t.equal(out.summary.deny.no_lease, 4);
  t.match(out.summary.destinations[0], { port: srv.port, allow: 12 }, 'top destination first');
  t.ok(out.summary.generations.some((g) => g.allow === 12 && g.reason === 'lease_added'), 'allow per generation');

  const txt = await gensee(['counters', ...base]);
  t.equal(txt.code, 0);
  t.match(txt.stdout, new RegExp(`tcp 127\\.0\\.0\\.1:${srv.port}\\s+12\\s+0`), 'top destinations table');
  t.match(txt.stdout, /no_lease\s+4/, 'deny by reason table');
  t.match(txt.stdout, /allow by generation/);
  t.match(txt.stdout, /live kernel counters/);
  const later = await gensee(['counters', ...base, '--since', new Date(Date.now() + 60_000).toISOString(), '--json']);
  t.equal((JSON.parse(later.stdout) as typeof out).summary.allow, 0, '--since after everything: nothing counted');
  const recent = await gensee(['counters', ...base, '--since', '1h', '--json']);
  t.equal((JSON.parse(recent.stdout) as typeof out).summary.allow, 12, '--since 1h: everything');

  // policy apply: bad input is refused before it reaches the supervisor
  const bad = path.join(s.stateDir, 'bad.json');
  fs.writeFileSync(bad, JSON.stringify({ schema: 1, leases: [{ network: { protocol: 'tcp', cidr: 'nope', ports: '1' }, ttl_s: 1 }] }));
  const r1 = await gensee(['policy', 'apply', ...base, bad]);
  t.equal(r1.code, 2, 'bad policy: exit 2');
  t.match(r1.stderr, /E_SCHEMA/);
  const link = path.join(s.stateDir, 'link.json');
  fs.symlinkSync(bad, link);
  const r2 = await gensee(['policy', 'apply', ...base, link]);
  t.match(r2.stderr, /E_SYMLINK/, 'a symlinked policy file is refused');
  const good = path.join(s.stateDir, 'good.json');
  fs.writeFileSync(good, JSON.stringify(POLICY));
  const r3 = await gensee(['policy', 'apply', '--op', 'no-such-op', '--state-dir', s.stateDir, good]);
  t.match(r3.stderr, /E_UNKNOWN_OP/, 'unknown operation');
  const r4 = await gensee(['policy', 'apply', ...base, good]);
  t.equal(r4.code, 0, `apply: ${r4.stderr}`);
  t.match(r4.stdout, /policy applied .* generation \d+ \(1 leases moved to it, 0 kept, 0 revoked\)/);
});
