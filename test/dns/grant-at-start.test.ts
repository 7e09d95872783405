// Issue 25 point 5: the DNS stub's standing grant is in the kernel before
// the supervisor says it serves, not at the first hook fault (the first
// queries after "supervising" met EPERM).
import t from 'tap';
import { Supervisor } from '../../src/supervisor';
import { DataPlane } from '../../src/dataplane';
import { parsePolicy, policyHash } from '../../src/protocol/json';
import { requireKernel, testCgroup, uniqueName, detachAtTeardown, freePort } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';

t.test('the stub grant is in the kernel map once Supervisor.start returns', async (t) => {
  if (!requireKernel(t)) return;
  const cgroup = testCgroup(t, 'gs-dg');
  const op = uniqueName('gs-dg');
  const stateDir = shortStateDir(t);
  detachAtTeardown(t, op);
  const policy = { schema: 1, grants: [], leases: [], delegate: [] };
  const port = await freePort();
  const sup = await Supervisor.start({
    stateDir,
    op,
    cgroup,
    policy: { policy: parsePolicy(policy), hash: policyHash(JSON.stringify(policy)) },
    onError: () => undefined,
    dns: { upstream: { host: '127.0.0.1', port: 9 }, listen: { host: '127.0.0.1', port } },
  });
  t.teardown(() => sup.stop());
  const dp = DataPlane.open(op);
  t.teardown(() => dp.close());
  for (const protocol of ['udp', 'tcp'] as const) {
    const l = dp.getLease({ family: 'ipv4', protocol, address: '127.0.0.1', port });
    t.ok(l, `${protocol} 127.0.0.1:${port}: the grant is in the kernel before the first query`);
    t.equal(l?.expiresBootNs, 0n, 'a standing grant (no expiry)');
  }
});
