// A revocation made while no supervisor runs is never undone: `gensee lease
// rm` records it (network.json, faults.jsonl) before the kernel map sees it,
// so the next supervisor's reconcile has nothing to re-install. And `lease
// add` with no supervisor puts nothing in the kernel that is not recorded.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, execFile, ChildProcess } from 'node:child_process';
import { requireKernel, probe, tcpServer, testCgroup, uniqueName, waitFor, GENSEE_BIN } from '../helpers/kernel';
import { shortStateDir, workload, networkFault, faultLines } from '../helpers/supervisor';
import { detachHooks } from '../../src/dataplane';
import { openOperation, readKey } from '../../src/state/operation';
import { submitFault } from '../../src/resolver/client';
import { encodeFault } from '../../src/protocol/codec';

type Tap = Parameters<typeof testCgroup>[0];

function gensee(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(GENSEE_BIN, args, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  );
}

interface Running {
  child: ChildProcess;
  serving: Record<string, unknown>;
  /** SIGTERM, then wait for the exit */
  stop(): Promise<number | null>;
}

/** `gensee supervise --json` as its own process, up once it prints "serving"; ended at teardown if still running. */
async function supervise(t: Tap, stateDir: string, op: string, cgroup: string, policyFile: string): Promise<Running> {
  const child = spawn(GENSEE_BIN, ['supervise', '--state-dir', stateDir, '--op', op, '--cgroup', cgroup, '--policy', policyFile, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let done = false;
  void exited.then(() => (done = true));
  t.teardown(async () => {
    if (!done) child.kill('SIGTERM');
    await exited;
  });
  const serving = await waitFor(() => {
    if (done) throw new Error(`supervise exited: ${err}`);
    const line = out.split('\n').find((l) => l.includes('"serving"'));
    return line ? (JSON.parse(line) as Record<string, unknown>) : null;
  }, 10_000);
  return {
    child,
    serving,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

async function setup(t: Tap, prefix: string) {
  const cgroup = testCgroup(t, prefix);
  const op = uniqueName(prefix);
  const stateDir = shortStateDir(t);
  t.teardown(() => {
    try {
      detachHooks(op);
    } catch {
      /* never attached */
    }
  });
  const srv = await tcpServer(t);
  const policyFile = path.join(stateDir, 'policy.json');
  fs.writeFileSync(policyFile, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(srv.port) }, ttl_s: 300, max_uses: 0 }], delegate: [] }));
  const networkJson = () => JSON.parse(fs.readFileSync(path.join(stateDir, 'network-operations', op, 'network.json'), 'utf8')) as { leases: { address: string; port: number; expires_at_boot_ns: string }[] };
  const connect = async () => (await probe(['--cgroup', cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)])).results.map((r) => r.result);
  return { cgroup, op, stateDir, srv, policyFile, networkJson, connect };
}

t.test('lease rm while no supervisor runs: the next supervisor does not bring the lease back', async (t) => {
  if (!requireKernel(t)) return;
  const s = await setup(t, 'gs-rvk');
  const dest = `127.0.0.1:${s.srv.port}`;

  // a lease granted by a running supervisor
  let sup = await supervise(t, s.stateDir, s.op, s.cgroup, s.policyFile);
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
  sup = await supervise(t, s.stateDir, s.op, s.cgroup, s.policyFile);
  const rc = sup.serving.reconciled as { reinstalled: string[] };
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
  const sup = await supervise(t, s.stateDir, s.op, s.cgroup, s.policyFile);
  t.equal(await sup.stop(), 0);

  const add = await gensee(['lease', 'add', '--state-dir', s.stateDir, '--op', s.op, 'tcp', `127.0.0.1:${other.port}`, '--ttl', '300s', '--json']);
  t.equal(add.code, 0, `lease add: ${add.stderr}`);
  const kernel = JSON.parse(add.stdout) as { generation: number; expires_at_boot_ns: string };
  const added = faultLines(s.stateDir, s.op).filter((l) => l.kind === 'lease_added');
  t.match(added, [{ by: 'operator', lease: { address: '127.0.0.1', port: other.port, generation: kernel.generation, expires_at_boot_ns: kernel.expires_at_boot_ns } }], 'a lease_added line in faults.jsonl names the exact kernel lease');
  const recd = s.networkJson().leases.find((l) => l.port === other.port);
  t.equal(recd?.expires_at_boot_ns, kernel.expires_at_boot_ns, 'network.json holds it with the kernel\'s exact expiry');
  t.same((await probe(['--cgroup', s.cgroup, 'connect', 'tcp', '127.0.0.1', String(other.port)])).results.map((r) => r.result), ['ok'], 'the lease works');

  const again = await supervise(t, s.stateDir, s.op, s.cgroup, s.policyFile);
  const rc = again.serving.reconciled as { removed: string[] };
  t.notOk(rc.removed.some((k) => k.endsWith(`/127.0.0.1/${other.port}`)), 'the next supervisor knows it: reconcile keeps it');
  t.equal(await again.stop(), 0);
  const v = await gensee(['verify', '--state-dir', s.stateDir, '--op', s.op]);
  t.equal(v.code, 0, `verify passes: ${v.stdout}${v.stderr}`);
});
