// `gensee lease add|rm` with a supervisor running goes through its control
// socket: the change is a generation of its own, harvested, in counters.jsonl.
import t from 'tap';
import { execFile } from 'node:child_process';
import { requireKernel, tcpServer, GENSEE_BIN, probe } from '../helpers/kernel';
import { startTestSupervisor } from '../helpers/supervisor';
import { counterLines } from './lib';

function gensee(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => execFile(GENSEE_BIN, args, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })));
}

t.test('lease add/rm through a running supervisor', async (t) => {
  if (!requireKernel(t)) return;
  const policy = { schema: 1, grants: [], leases: [], delegate: [] };
  const s = await startTestSupervisor(t, policy, 'gs-lcli');
  const srv = await tcpServer(t);
  const dest = `127.0.0.1:${srv.port}`;
  const add = await gensee(['lease', 'add', '--op', s.op, '--state-dir', s.stateDir, 'tcp', dest, '--ttl', '30s']);
  t.equal(add.code, 0, add.stderr);
  t.match(add.stdout, /installed by the supervisor .* as generation \d+/, 'went through the supervisor');
  const p = await probe(['--cgroup', s.cgroup, '--repeat', '2', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(p.summary?.ok, 2, 'the lease works');
  const rm = await gensee(['lease', 'rm', '--op', s.op, '--state-dir', s.stateDir, 'tcp', dest]);
  t.equal(rm.code, 0, rm.stderr);
  t.match(rm.stdout, /revoked with 2 allowed calls/, 'revoked with its final count');
  const lines = counterLines(s.stateDir, s.op);
  t.ok(lines.some((l) => l.kind === 'generation' && l.reason === 'operator_lease'), 'operator_lease generation in counters.jsonl');
  t.ok(lines.some((l) => l.kind === 'lease_revoked' && l.by === 'operator' && l.final_allow === 2), 'lease_revoked by operator with final_allow 2');
  const again = await probe(['--cgroup', s.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(again.results.map((r) => r.result), ['EPERM'], 'denied again after rm');
});
