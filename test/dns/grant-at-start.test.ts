// Issue 25 point 5: the DNS stub's standing grant is in the kernel before
// the supervisor says it serves, not at the first hook fault (the first
// queries after "supervising" met EPERM).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { Supervisor } from '../../src/supervisor';
import { DataPlane } from '../../src/dataplane';
import { parsePolicy, policyHash } from '../../src/protocol/json';
import { requireKernel, testCgroup, uniqueName, detachAtTeardown, freePort, GENSEE_BIN, PROBE } from '../helpers/kernel';
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

// The same under `gensee run`, from the workload's side: its first network
// call is a datagram to the stub, from a worker thread (curl's resolver
// thread, Go's runtime). The grant was in the kernel before gensee-exec ran
// the workload, so the call is answered from the C fast path: never
// raised, never refused. Both with PIDFD_THREAD and with the path kernels
// before 6.9 take (GENSEE_NO_PIDFD_THREAD=1).
for (const env of [{}, { GENSEE_NO_PIDFD_THREAD: '1' }]) {
  t.test(`gensee run: the workload's first network call, to the stub from a thread, is never paused ${JSON.stringify(env)}`, async (t) => {
    if (!requireKernel(t)) return;
    const stateDir = shortStateDir(t);
    const op = uniqueName('gs-dgr');
    const out = path.join(stateDir, 'run.jsonl');
    const script = `exec ${PROBE} --threads 1 sendto udp "$(sed -n 's/^nameserver //p' /etc/resolv.conf | head -n 1)" 53`;
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const c = spawn(GENSEE_BIN, ['run', '--json-out', out, '--state-dir', stateDir, '--op', op, '--', '/bin/sh', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    t.equal(r.code, 0, `gensee run exits 0 ${r.stderr}`);
    const lines = fs.readFileSync(out, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const dnsLine = lines.find((l) => l.event === 'dns') as { listen: string } | undefined;
    t.ok(dnsLine, 'the run has a DNS stub');
    const probe = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, number>);
    t.match(probe.find((l) => 'ok' in l), { ok: 1, EPERM: 0, EACCES: 0, other: 0 }, `the datagram to ${dnsLine?.listen} went out`);
    const s = (lines.find((l) => l.event === 'summary') ?? {}) as Record<string, number>;
    t.equal(s.paused, 0, 'nothing was raised to the resolver');
    t.equal(s.fast_path, 1, 'the call was answered from C on the standing grant');
    t.equal(s.faults, 0, 'no fault at all (no hook refusal either)');
  });
}
