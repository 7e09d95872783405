// Evidence under attack and under a crash: `gensee verify` finds edited,
// removed and torn lines; a resolver killed with SIGKILL under load leaves
// the hooks failing closed, and a restart loses nothing silently and
// reconciles the kernel lease map with network.json.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel, probe, tcpServer, waitFor } from '../helpers/kernel';
import { startTestSupervisor, supervisedOp, superviseProcess, workload, networkFault, POLICY } from '../helpers/supervisor';
import { gensee } from '../helpers/gensee';
import { encodeFault } from '../../src/protocol/codec';
import { submitFault } from '../../src/resolver/client';
import { openOperation, readKey } from '../../src/state/operation';
import { readNetwork, leaseKey } from '../../src/state/network';
import { DataPlane } from '../../src/dataplane';

t.test('gensee verify: intact, edited, removed, torn', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-vf');
  const w = await workload(t, s.cgroup);
  for (let i = 0; i < 6; i++) await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8100 + i));
  await s.sup.stop();
  const file = path.join(s.sup.dir, 'faults.jsonl');
  const intact = fs.readFileSync(file, 'utf8');
  const args = ['verify', '--op', s.op, '--state-dir', s.stateDir];

  const ok = await gensee(args);
  t.equal(ok.code, 0, `intact log verifies: ${ok.stdout}`);
  // three lines a leased fault: fault, lease_intent, resolution
  const am = /faults\.jsonl: 18 lines, ok; last line (faults\.jsonl:18:[0-9a-f]{64})/.exec(ok.stdout);
  t.ok(am, `verify prints the last line as an anchor: ${ok.stdout}`);
  const anchor = am ? am[1] : 'faults.jsonl:18:' + '0'.repeat(64);

  // the last fault and its resolution cut off the end: the chain alone
  // cannot tell, the anchor kept from the intact log can
  const lines = intact.split('\n');
  fs.writeFileSync(file, lines.slice(0, 15).join('\n') + '\n');
  const cutNoAnchor = await gensee(args);
  t.equal(cutNoAnchor.code, 0, 'a whole fault cut off the end passes the chain check (the known limit)');
  const cutAnchored = await gensee([...args, '--anchor', anchor]);
  t.equal(cutAnchored.code, 1, `cut off the end → non-zero exit against the anchor: ${cutAnchored.stdout}`);
  t.match(cutAnchored.stdout, /faults\.jsonl:18: error removed: the log ends at line 15, but the anchor names line 18/, 'names what was cut');
  t.match(cutAnchored.stdout, /anchor line 18 FAILS/);
  fs.writeFileSync(file, intact);
  const holds = await gensee([...args, '--anchor', anchor, '--anchor', 'counters.jsonl:1:' + 'a'.repeat(64)]);
  t.match(holds.stdout, /anchor line 18 holds/, 'the anchor holds on the intact log');
  t.match(holds.stdout, /counters\.jsonl:1: error edited: its SHA-256 is [0-9a-f]{16}…, the anchor says aaaaaaaaaaaaaaaa…/, 'a wrong hash for an anchored line is an edit');
  t.equal(holds.code, 1);
  for (const bad of ['12:' + 'A'.repeat(64), 'faults.jsonl:0:' + '0'.repeat(64), 'nope.jsonl:1:' + '0'.repeat(64), 'faults.jsonl:12', '12:abc']) {
    const b = await gensee([...args, '--anchor', bad]);
    t.equal(b.code, 2, `bad anchor ${bad.slice(0, 20)}… → exit 2`);
    t.match(b.stderr, /E_BAD_ANCHOR/, 'with its code');
  }

  const edited = [...lines];
  edited[6] = edited[6].replace('"port":8102', '"port":8199');
  t.not(edited[6], lines[6], 'edited line 7');
  fs.writeFileSync(file, edited.join('\n'));
  const e = await gensee(args);
  t.equal(e.code, 1, 'edited → non-zero exit');
  t.match(e.stdout, /faults\.jsonl:7: error edited/, 'names the edited line');

  const removed = lines.filter((_, i) => i !== 6);
  fs.writeFileSync(file, removed.join('\n'));
  const r = await gensee(args);
  t.equal(r.code, 1, 'removed → non-zero exit');
  t.match(r.stdout, /faults\.jsonl:7: error removed/, 'names where the line was removed');

  fs.writeFileSync(file, intact + '{"seq":19,"at":"2026');
  const tr = await gensee(args);
  t.equal(tr.code, 1, 'torn → non-zero exit');
  t.match(tr.stdout, /faults\.jsonl:19: error torn/, 'names the torn last line');

  // a fault without its resolution (cut after a write-ahead fault line)
  const cut = lines.slice(0, 16).join('\n') + '\n';
  fs.writeFileSync(file, cut);
  const u = await gensee(args);
  t.equal(u.code, 1, 'unresolved fault → non-zero exit');
  t.match(u.stdout, /faults\.jsonl:16: error unresolved_fault/, 'names the fault left without a resolution');
  fs.writeFileSync(file, intact);
});

t.test('kill -9 of the resolver under load; restart reconciles and loses nothing silently', async (t) => {
  if (!requireKernel(t)) return;
  const { cgroup: cg, op, stateDir: st, args } = supervisedOp(t, 'gs-k9', POLICY);
  const w = await workload(t, cg);
  const first = await superviseProcess(t, args);
  const rec = await openOperation(st, op);
  const key = await readKey(st, op);
  const sockPath = path.join(st, 'network-operations', op, 'supervisor.sock');

  // 8 concurrent clients, each its own stream of new destinations
  let answered = 0;
  let failed = 0;
  let stop = false;
  const client = async (k: number) => {
    for (let i = 0; !stop && i < 200; i++) {
      const f = networkFault(op, w.pid, w.start, 'tcp', '127.0.0.1', 20000 + k * 1000 + i);
      try {
        const r = await submitFault({ socketPath: sockPath, body: encodeFault(f), faultId: f.fault_id, key, resolver: rec.resolver, timeoutMs: 1000 });
        if (r.authenticated) answered++;
      } catch {
        failed++;
        return;
      }
    }
  };
  const load = Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(client));
  await waitFor(() => answered >= 150, 20_000);
  first.kill('SIGKILL');
  await load;
  stop = true;
  t.ok(answered >= 150, `answered before the kill: ${answered}; clients cut off: ${failed}`);

  // resolver gone: the pinned hooks keep denying unleased destinations
  const srv = await tcpServer(t);
  const gone = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(gone.results.map((r) => r.result), ['EPERM'], 'hooks still deny with the resolver dead');

  // restart: rebuild from the records, reconcile kernel leases with network.json
  const second = await superviseProcess(t, args);
  t.match(second.stdout, /reconciled: \d+ removed, \d+ re-installed, \d+ dropped/, 'restart reports its reconciliation');
  const net = await readNetwork(st, op);
  const dp = DataPlane.open(op);
  const kernel = dp.listLeases().map((l) => leaseKey(l.tuple)).sort();
  dp.close();
  t.same(kernel, net.leases.map((l) => leaseKey(l)).sort(), `kernel leases (${kernel.length}) equal network.json after restart`);

  const v = await gensee(['verify', '--op', op, '--state-dir', st, '--json']);
  const rep = JSON.parse(v.stdout) as { ok: boolean; logs: { file: string; problems: { kind: string; line: number; fault_id?: string }[] }[] };
  const faults = rep.logs.find((l) => l.file === 'faults.jsonl')!;
  const lines = fs.readFileSync(path.join(st, 'network-operations', op, 'faults.jsonl'), 'utf8').split('\n').filter(Boolean);
  const parsed = lines.map((l) => {
    try {
      return JSON.parse(l) as { kind: string; fault_id: string };
    } catch {
      return { kind: 'torn', fault_id: '' };
    }
  });
  const resolved = new Set(parsed.filter((l) => l.kind === 'resolution').map((l) => l.fault_id));
  const unresolved = parsed.filter((l) => l.kind === 'fault' && !resolved.has(l.fault_id)).map((l) => l.fault_id).sort();
  const listed = faults.problems.filter((p) => p.kind === 'unresolved_fault').map((p) => p.fault_id!).sort();
  t.same(listed, unresolved, `verify lists every fault left without a resolution (${unresolved.length})`);
  t.equal(faults.problems.filter((p) => p.kind === 'edited' || p.kind === 'removed').length, 0, 'no chain damage from the crash');
  t.ok(parsed.filter((l) => l.kind === 'resolution').length >= answered, 'every answer a client received has its resolution line');

  // and it serves again
  const rec2 = await openOperation(st, op);
  const f = networkFault(op, w.pid, w.start, 'tcp', '127.0.0.1', srv.port);
  const again = await submitFault({ socketPath: sockPath, body: encodeFault(f), faultId: f.fault_id, key, resolver: rec2.resolver });
  t.match(again.resolution, { action: 'retry_after_lease' }, 'the restarted resolver serves');
  const now = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(now.results.map((r) => r.result), ['ok'], 'and its lease works');
  second.kill('SIGTERM');
  await second.exited;
});
