// Lease expiries are CLOCK_BOOTTIME, which starts at 0 again on every boot.
// A restart in the same boot re-installs a recorded lease the kernel lost;
// a record from another boot re-installs nothing (a 30 s lease granted at
// ten days of uptime would otherwise live ten days after a reboot).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel, probe, tcpServer } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, POLICY } from '../helpers/supervisor';
import { Supervisor } from '../../src/supervisor';
import { parsePolicy, policyHash } from '../../src/protocol/json';
import { DataPlane } from '../../src/dataplane';
import { opDir } from '../../src/state/operation';
import { currentBootId, leaseKey } from '../../src/state/network';
import type { Tuple } from '../../src/addr';

t.test('a record from another boot re-installs no lease', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-rb');
  const w = await workload(t, s.cgroup);
  const srv = await tcpServer(t);
  const tuple: Tuple = { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: srv.port };
  const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port));
  t.equal(r.resolution.action, 'retry_after_lease', 'leased');
  await s.sup.stop(); // the hooks stay pinned, the record is flushed
  const file = path.join(opDir(s.stateDir, s.op), 'network.json');
  const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as { boot_id?: string };
  t.equal(rec.boot_id, currentBootId(), 'network.json names the boot its leases belong to');

  const dp = DataPlane.open(s.op);
  t.teardown(() => dp.close());
  const policy = { policy: parsePolicy(POLICY), hash: policyHash(JSON.stringify(POLICY)) };
  const restart = async () => {
    const sup = await Supervisor.start({ stateDir: s.stateDir, op: s.op, cgroup: s.cgroup, policy, onError: () => undefined });
    await sup.stop();
    return sup.reconciled;
  };

  // same boot: the kernel lost the lease, the record restores it
  dp.removeLease(tuple);
  const same = await restart();
  t.ok(dp.getLease(tuple), 'same boot: the recorded lease is re-installed');
  t.ok(same.reinstalled.includes(leaseKey(tuple)), 'and reported re-installed');

  // another boot: what a reboot leaves (an empty map, the old record)
  dp.removeLease(tuple);
  fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), boot_id: '00000000-0000-0000-0000-000000000000' }), { mode: 0o600 });
  const other = await restart();
  t.notOk(dp.getLease(tuple), 'another boot: nothing re-installed');
  t.ok(other.dropped.includes(leaseKey(tuple)), 'the lease is dropped from the record');
  const got = await probe(['--cgroup', s.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(got.results.map((x) => x.result), ['EPERM'], 'the destination is refused by the hook');
  t.equal(srv.accepted(), 0, 'nothing reached the listener');
  t.equal((JSON.parse(fs.readFileSync(file, 'utf8')) as { leases: unknown[] }).leases.length, 0, 'network.json holds no lease');
});
