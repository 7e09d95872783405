// A revocation made while no supervisor runs is never undone: `gensee lease
// rm` records it (network.json, faults.jsonl) before the kernel map sees it,
// so the next supervisor's reconcile has nothing to re-install. And `lease
// add` with no supervisor puts nothing in the kernel that is not recorded.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel, probe, tcpServer, testCgroup } from '../helpers/kernel';
import { supervisedOp, superviseProcess, workload, networkFault, faultLines } from '../helpers/supervisor';
import { gensee, Proc } from '../helpers/gensee';
import { openOperation, readKey } from '../../src/state/operation';
import { submitFault } from '../../src/resolver/client';
import { encodeFault } from '../../src/protocol/codec';

type Tap = Parameters<typeof testCgroup>[0];

interface Running {
  proc: Proc;
  reconciled: { removed: string[]; reinstalled: string[] };
  /** SIGTERM, then wait for the exit */
  stop(): Promise<number | null>;
}

/** `gensee supervise --json` on the operation, up once it serves, with the reconcile its serving event reports. */
async function supervise(t: Tap, args: string[]): Promise<Running> {
  const proc = await superviseProcess(t, [...args, '--json']);
  const serving = proc.json().find((l) => l.event === 'serving')!;
  return {
    proc,
    reconciled: serving.reconciled as Running['reconciled'],
    stop: async () => {
      proc.kill('SIGTERM');
      return (await proc.exited).code;
    },
  };
}

async function setup(t: Tap, prefix: string) {
  const srv = await tcpServer(t);
  const { cgroup, op, stateDir, args } = supervisedOp(t, prefix, { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(srv.port) }, ttl_s: 300, max_uses: 0 }], delegate: [] });
  const networkJson = () => JSON.parse(fs.readFileSync(path.join(stateDir, 'network-operations', op, 'network.json'), 'utf8')) as { leases: { address: string; port: number; expires_at_boot_ns: string }[] };
  const connect = async () => (await probe(['--cgroup', cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)])).results.map((r) => r.result);
  return { cgroup, op, stateDir, srv, args, networkJson, connect };
}

t.test('lease rm while no supervisor runs: the next supervisor does not bring the lease back', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-rvk');
  const dest = `127.0.0.1:${s.srv.port}`;

  // a lease granted by a running supervisor
  let sup = await supervise(t, s.args);
  const w = await workload(t, s.cgroup);
  const rec = await openOperation(s.stateDir, s.op);
  const key = await readKey(s.stateDir, s.op);
  const f = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', s.srv.port);
  const r = await submitFault({ socketPath: path.join(s.stateDir, 'network-operations', s.op, 'supervisor.sock'), body: encodeFault(f), faultId: f.fault_id, key, resolver: rec.resolver });
  t.equal(r.resolution.action, 'retry_after_lease', 'the supervisor granted a lease');
  t.same(await s.connect(), ['ok'], 'the lease lets a process in the cgroup connect');
  t.equal(await sup.stop(), 0, 'supervise stopped on SIGTERM');
  t.ok(s.networkJson().leases.some((l) => l.port === s.srv.port), 'network.json still holds the lease after the stop (what reconcile works from)');
  t.same(await s.connect(), ['ok'], 'the pinned lease still works with no supervisor');

  // revoked while nobody supervises
  const rm = await gensee(['lease', 'rm', '--state-dir', s.stateDir, '--op', s.op, 'tcp', dest]);
  t.equal(rm.code, 0, `lease rm: ${rm.stdout}${rm.stderr}`);
  t.notOk(s.networkJson().leases.some((l) => l.port === s.srv.port), 'lease rm took it out of network.json');
  const revoked = faultLines(s.stateDir, s.op).filter((l) => l.kind === 'lease_revoked');
  t.match(revoked, [{ by: 'operator', lease: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: s.srv.port } }], 'a lease_revoked line in faults.jsonl');
  const acceptedBefore = s.srv.accepted();
  t.same(await s.connect(), ['EPERM'], 'refused at once');

  // the next supervisor reconciles and must not re-install it
  sup = await supervise(t, s.args);
  const rc = sup.reconciled;
  t.notOk(rc.reinstalled.some((k) => k.endsWith(`/127.0.0.1/${s.srv.port}`)), `reconcile did not re-install it (reinstalled: ${JSON.stringify(rc.reinstalled)})`);
  t.same(await s.connect(), ['EPERM'], 'still refused after the restart: the hook returns EPERM');
  await new Promise((res) => setTimeout(res, 100)); // an accept, had there been one, runs on this loop
  t.equal(s.srv.accepted(), acceptedBefore, 'the listener got nothing after the revocation');
  t.equal(await sup.stop(), 0);

  const v = await gensee(['verify', '--state-dir', s.stateDir, '--op', s.op]);
  t.equal(v.code, 0, `verify passes with the revocation in the chain: ${v.stdout}${v.stderr}`);
});

t.test('lease add while no supervisor runs: recorded before the kernel holds it, kept by the next supervisor', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-rva');
  const other = await tcpServer(t);
  const sup = await supervise(t, s.args);
  t.equal(await sup.stop(), 0);

  const add = await gensee(['lease', 'add', '--state-dir', s.stateDir, '--op', s.op, 'tcp', `127.0.0.1:${other.port}`, '--ttl', '300s', '--json']);
  t.equal(add.code, 0, `lease add: ${add.stderr}`);
  const kernel = JSON.parse(add.stdout) as { generation: number; expires_at_boot_ns: string };
  const added = faultLines(s.stateDir, s.op).filter((l) => l.kind === 'lease_added');
  t.match(added, [{ by: 'operator', lease: { address: '127.0.0.1', port: other.port, generation: kernel.generation, expires_at_boot_ns: kernel.expires_at_boot_ns } }], 'a lease_added line in faults.jsonl names the exact kernel lease');
  const recd = s.networkJson().leases.find((l) => l.port === other.port);
  t.equal(recd?.expires_at_boot_ns, kernel.expires_at_boot_ns, 'network.json holds it with the kernel\'s exact expiry');
  t.same((await probe(['--cgroup', s.cgroup, 'connect', 'tcp', '127.0.0.1', String(other.port)])).results.map((r) => r.result), ['ok'], 'the lease works');

  const again = await supervise(t, s.args);
  const rc = again.reconciled;
  t.notOk(rc.removed.some((k) => k.endsWith(`/127.0.0.1/${other.port}`)), 'the next supervisor knows it: reconcile keeps it');
  t.equal(await again.stop(), 0);
  const v = await gensee(['verify', '--state-dir', s.stateDir, '--op', s.op]);
  t.equal(v.code, 0, `verify passes: ${v.stdout}${v.stderr}`);
});
