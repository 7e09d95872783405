// `gensee supervise` as an operator runs it: SIGTERM leaves the hooks pinned
// and failing closed; --detach-on-exit removes them; `gensee status` shows
// the operation, its generation and the live kernel leases.
import t from 'tap';
import * as fs from 'node:fs';
import { requireKernel, probe, tcpServer } from '../helpers/kernel';
import { supervisedOp, superviseProcess, POLICY } from '../helpers/supervisor';
import { gensee } from '../helpers/gensee';
import { pinDirFor } from '../../src/bpffs';

t.test('SIGTERM keeps the boundary; --detach-on-exit removes it; status', async (t) => {
  if (!requireKernel(t)) return;
  const { cgroup: cg, op, stateDir: st, args } = supervisedOp(t, 'gs-sv', POLICY);
  const srv = await tcpServer(t);

  const a = await superviseProcess(t, args);
  // reject mode: the first attempt is EPERM, the retry gets the lease
  const r = await probe(['--cgroup', cg, '--repeat', '40', '--interval', '25', '--until-ok', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(r.results[r.results.length - 1].result, 'ok', 'leased on retry');

  const s = await gensee(['status', '--op', op, '--state-dir', st, '--json']);
  t.equal(s.code, 0, s.stderr);
  const status = JSON.parse(s.stdout) as { operation: { state: string; cgroup: string }; generation: number; hooks_attached: boolean; resolver_alive: boolean; kernel_leases: { port: number }[] };
  t.match(status, { operation: { state: 'active', cgroup: cg }, hooks_attached: true, resolver_alive: true }, 'status: active, hooks attached, resolver alive');
  t.ok(status.generation >= 1, `status: generation ${status.generation}`);
  t.ok(status.kernel_leases.some((l) => l.port === srv.port), 'status lists the live kernel lease');
  const text = await gensee(['status', '--op', op, '--state-dir', st]);
  t.match(text.stdout, new RegExp(`tcp 127\\.0\\.0\\.1:${srv.port}`), 'readable status lists it too');

  a.kill('SIGTERM');
  t.equal((await a.exited).code, 0, 'supervise exits 0 on SIGTERM');
  t.match(a.stdout, /hooks left pinned, failing closed/);
  t.ok(fs.existsSync(pinDirFor(op)), 'pins remain');
  const other = await tcpServer(t);
  const denied = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(other.port)]);
  t.same(denied.results.map((x) => x.result), ['EPERM'], 'unleased destinations still denied with no resolver');
  const gone = await gensee(['status', '--op', op, '--state-dir', st, '--json']);
  t.match(JSON.parse(gone.stdout), { hooks_attached: true, resolver_alive: false }, 'status: hooks attached, no resolver');

  const b = await superviseProcess(t, [...args, '--detach-on-exit']);
  t.match(b.stdout, /reconciled:/, 'restart reconciles');
  b.kill('SIGTERM');
  t.equal((await b.exited).code, 0);
  t.notOk(fs.existsSync(pinDirFor(op)), '--detach-on-exit removed the pins');
  const free = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(other.port)]);
  t.same(free.results.map((x) => x.result), ['ok'], 'nothing enforced after detach');
});
