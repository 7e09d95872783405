// `gensee supervise --detach-on-exit`: kill, then detach. A process left in
// the cgroup loops connect()+write to a loopback port the policy denies
// (forking a sleep each turn); on SIGTERM to the supervisor it must be dead,
// and the cgroup empty, before the hooks are gone, and no byte may ever reach
// the listener.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { requireKernel, tcpServer, waitFor } from '../helpers/kernel';
import { supervisedOp, superviseProcess } from '../helpers/supervisor';
import { pinDirFor } from '../../src/bpffs';
import { cgroupPopulated } from '../../src/cgroup';
import { identityAlive, readStartTimeTicks } from '../../src/resolver/subject';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [] };

t.test('SIGTERM: the cgroup is killed and empty before the hooks come off; 0 bytes through', async (t) => {
  if (!requireKernel(t)) return;
  const { cgroup: cg, op, stateDir: st, args } = supervisedOp(t, 'gs-doe', DENY_ALL);
  // the denied destination: counts every connection and byte that arrives
  const srv = await tcpServer(t);
  const port = srv.port;

  const sup = await superviseProcess(t, [...args, '--detach-on-exit']);
  const out = () => sup.stdout + sup.stderr;

  // the left-behind daemon: joins the cgroup, then connects and writes in a loop
  const loop = `while :; do echo leak 2>/dev/null >/dev/tcp/127.0.0.1/${port}; sleep 0.005; done 2>/dev/null`;
  const daemon = spawn('bash', ['-c', `echo $$ > "${path.join(cg, 'cgroup.procs')}" && exec bash -c '${loop}'`], { stdio: 'ignore' });
  const daemonExit = new Promise<NodeJS.Signals | null>((r) => daemon.once('exit', (_c, sig) => r(sig)));
  t.teardown(() => {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
  });
  const pid = daemon.pid!;
  await waitFor(() => fs.readFileSync(path.join(cg, 'cgroup.procs'), 'utf8').split('\n').includes(String(pid)));
  const me = { pid, start_time_ticks: readStartTimeTicks(pid)! };
  // it is really trying: its denials reach faults.jsonl
  const faults = path.join(st, 'network-operations', op, 'faults.jsonl');
  await waitFor(() => fs.existsSync(faults) && fs.readFileSync(faults, 'utf8').split('\n').length > 6, 10_000);
  t.equal(srv.bytes() + srv.accepted(), 0, 'denied while the supervisor serves');

  // watch, as often as the event loop allows, for the moment the pins go
  let seen: { alive: boolean; populated: boolean } | null = null;
  const watching = (async () => {
    while (fs.existsSync(pinDirFor(op))) await new Promise((r) => setImmediate(r));
    seen = { alive: identityAlive(me), populated: cgroupPopulated(cg) };
  })();
  sup.kill('SIGTERM');
  t.equal((await sup.exited).code, 0, `supervise exits 0: ${out()}`);
  await watching;
  t.same(seen, { alive: false, populated: false }, 'when the hooks were gone, the daemon was dead and the cgroup empty');
  t.equal(await daemonExit, 'SIGKILL', 'the daemon was killed (cgroup.kill)');
  t.match(out(), /cgroup killed and seen empty, then hooks detached/);
  t.notOk(fs.existsSync(pinDirFor(op)), 'pins removed');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(srv.bytes(), 0, '0 bytes reached the denied listener');
  t.equal(srv.accepted(), 0, 'no connection reached it');
});
