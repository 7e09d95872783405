// `gensee run fault` on a delegated effect: exit 3, and the resolution it
// prints is the delegate one, naming the executor the operator's policy
// chose. Nothing is leased: the workload never gets the destination itself.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { requireKernel, GENSEE_BIN } from '../helpers/kernel';
import { startTestSupervisor, workload, faultLines } from '../helpers/supervisor';

function runFault(socket: string, faultFile: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(GENSEE_BIN, ['run', 'fault', '--socket', socket, '--fault', faultFile], { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

const POLICY = {
  schema: 1,
  grants: [],
  // 8443 is both leasable and delegated: a lease rule comes first
  leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '8000-8999' }, ttl_s: 30, max_uses: 0 }],
  delegate: [
    { network: { protocol: 'tcp', cidr: '0.0.0.0/0', ports: '443' }, to: 'egress-proxy' },
    { network: { protocol: 'tcp', cidr: '0.0.0.0/0', ports: '8443' }, to: 'egress-proxy' },
    { network: { protocol: 'udp', cidr: '::/0', ports: '53' }, to: 'dns-forwarder' },
  ],
  fault_deadline_ms: 5000,
};

t.test('run fault: a delegated effect exits 3 and prints the delegate resolution', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-dlg');
  const w = await workload(t, s.cgroup);
  const dir = t.testdir({});
  const faultFile = (id: string, proto: string, family: string, address: string, port: number) => {
    const f = path.join(dir, `${id}.json`);
    fs.writeFileSync(f, JSON.stringify({
      schema: 2,
      operation_id: s.op,
      fault_id: id,
      subject: { process: { pid: w.pid, start_time_ticks: w.start } },
      effect: { network: { family, protocol: proto, address, port } },
      source: 'manual',
    }));
    return f;
  };

  const cases = [
    { id: 'dlg-1', proto: 'tcp', family: 'ipv4', address: '93.184.216.34', port: 443, to: 'egress-proxy' },
    { id: 'dlg-2', proto: 'udp', family: 'ipv6', address: '2001:db8::53', port: 53, to: 'dns-forwarder' },
  ];
  for (const c of cases) {
    const r = await runFault(s.sup.socketPath, faultFile(c.id, c.proto, c.family, c.address, c.port));
    t.equal(r.code, 3, `${c.proto} ${c.address}:${c.port}: exit 3 (${r.stderr.trim()})`);
    t.equal(r.stderr, '', 'nothing on stderr: the answer was authenticated');
    t.same(JSON.parse(r.stdout), { fault_id: c.id, action: 'delegate', reason: 'policy_delegate', delegate_to: c.to }, 'one JSON object: the delegate resolution, naming the executor, no lease');
    t.equal(r.stdout.trim().split('\n').length, 1, 'one line on stdout');
  }

  // the same port range as a lease rule: the lease rule is consulted first
  const leased = await runFault(s.sup.socketPath, faultFile('dlg-3', 'tcp', 'ipv4', '127.0.0.1', 8443));
  t.equal(leased.code, 0, 'a leasable destination is leased, exit 0, even though a delegate rule also matches');
  t.match(JSON.parse(leased.stdout), { action: 'retry_after_lease' });

  const lines = faultLines(s.stateDir, s.op);
  for (const c of cases) {
    t.match(lines.find((l) => l.kind === 'resolution' && l.fault_id === c.id), { resolution: { action: 'delegate', reason: 'policy_delegate', delegate_to: c.to } }, `${c.id}: the delegate resolution is recorded`);
  }
  const kernel = s.sup.dp.listLeases().map((l) => `${l.tuple.protocol} ${l.tuple.address}:${l.tuple.port}`);
  t.notOk(kernel.some((k) => k.includes('93.184.216.34') || k.includes('2001:db8::53')), `no lease for a delegated destination (${kernel.join(', ')})`);
});
