// Audit's reach, attacked directly (issue 29): an in-process supervisor in
// audit mode, faults submitted over its authenticated socket for a real
// process parked in its cgroup, and for everything audit must never cover.
// Only the first may get an audit lease; every other is denied as when
// enforcing, and recorded and reported as a denial.
import t from 'tap';
import * as path from 'node:path';
import { requireKernel } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, jsonlLines } from '../helpers/supervisor';
import { readStartTimeTicks } from '../../src/resolver/subject';
import { opDir } from '../../src/state/operation';
import type { Fault } from '../../src/protocol/types';

t.test('audit lets through a policy denial of the operation, and nothing else', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 }, 'gs-aus', { audit: true });
  t.equal(s.sup.record.mode, 'audit', 'the operation is recorded in audit mode');
  const w = await workload(t, s.cgroup);
  const mine = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 40001);
  const r1 = await s.submit(mine);
  t.match(r1, { authenticated: true, resolution: { action: 'retry_after_lease', reason: 'audit_allowed', lease: { address: '127.0.0.1', port: 40001 } } }, "the operation's own process: an audit lease of the exact tuple");
  t.ok(r1.resolution.lease && r1.resolution.lease.max_uses === 0, 'unlimited uses for its short life');

  // a process outside the operation's cgroup (this test's own)
  const outside = networkFault(s.op, process.pid, readStartTimeTicks(process.pid)!, 'tcp', '127.0.0.1', 40002);
  const r2 = await s.submit(outside);
  t.equal(r2.resolution.action, 'deny', `a process outside the operation: denied (${r2.resolution.reason})`);
  t.not(r2.resolution.reason, 'audit_allowed');
  // another operation's id
  const other = networkFault('gs-not-this-op', w.pid, w.start, 'tcp', '127.0.0.1', 40003);
  const r3 = await s.submit(other);
  t.match(r3.resolution, { action: 'deny', reason: 'unknown_operation' }, "another operation's fault: unknown_operation");
  // an effect no backend serves
  const file: Fault = { ...networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 1), effect: { file: { path: '/etc/shadow', access: 'read' } } };
  const r4 = await s.submit(file);
  t.match(r4.resolution, { action: 'deny', reason: 'capability_fault_backend_unavailable' }, 'a file effect: capability_fault_backend_unavailable');
  // a stale identity: the operation's pid with a start time it never had
  const stale = networkFault(s.op, w.pid, w.start + 1, 'tcp', '127.0.0.1', 40004);
  const r5 = await s.submit(stale);
  t.equal(r5.resolution.action, 'deny', `a forged start time: denied (${r5.resolution.reason})`);

  t.equal(s.sup.resolver.stats.audit, 1, 'one audit lease counted, apart');
  t.equal(s.sup.resolver.stats.deny, 4, 'four denials');
  const faults = jsonlLines(path.join(opDir(s.stateDir, s.op), 'faults.jsonl'));
  const res = new Map(faults.filter((l) => l.kind === 'resolution').map((l) => [l.fault_id as string, l.resolution as { action: string; reason: string; would_deny?: string }]));
  t.match(res.get(mine.fault_id), { reason: 'audit_allowed', would_deny: 'policy_denied' }, 'faults.jsonl: audit_allowed with the would-be reason');
  for (const f of [outside, other, file, stale]) {
    const x = res.get(f.fault_id);
    t.ok(x && x.action === 'deny' && x.would_deny === undefined, `faults.jsonl: ${f.fault_id} a plain denial`);
  }
  await s.sup.stop();
  const events = jsonlLines(path.join(opDir(s.stateDir, s.op), 'events.jsonl')).filter((l) => l.type === 'boundary').map((l) => l.event as { kind: string });
  t.equal(events.filter((e) => e.kind === 'audit_allowed').length, 1, 'one audit_allowed event');
  t.equal(events.filter((e) => e.kind === 'fault_denied').length, 4, 'four fault_denied events');
});
