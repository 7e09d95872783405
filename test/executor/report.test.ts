// The supervisor's side of the executor's records: a write refused at call
// time becomes an application-effect fault denied in faults.jsonl and a
// write_denied event naming the tool; a hook refusal from a tool's own
// cgroup (registered by the executor) names the tool too. Real supervisor,
// real control.sock, real hooks.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel, probe, tcpServer, waitFor } from '../helpers/kernel';
import { startTestSupervisor, jsonlLines } from '../helpers/supervisor';
import { opDir } from '../../src/state/operation';
import { registerToolCgroup, reportWriteDenied } from '../../src/executor/report';
import { cgroupId } from '../../src/cgroup';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };

const lines = jsonlLines;

t.test('a refused write is an application fault denied and a write_denied event with the tool id', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, DENY_ALL, 'gs-exr');
  const dir = opDir(s.stateDir, s.op);
  const id = await reportWriteDenied(s.stateDir, s.op, { toolId: 'charge-card', callId: 'c-1', reason: 'write_key_mismatch', target: 'http://127.0.0.1:9/charge', detail: 'a key the tool made up', pid: process.pid });
  t.match(id, /^ex-c-1-/, 'the fault id');
  const faults = lines(path.join(dir, 'faults.jsonl'));
  const f = faults.find((l) => l.kind === 'fault' && l.fault_id === id);
  t.match(f?.fault, { source: 'executor', effect: { application: { name: 'charge-card', action: 'write', target: 'http://127.0.0.1:9/charge' } } }, 'faults.jsonl: an application-effect fault');
  t.match(faults.find((l) => l.kind === 'resolution' && l.fault_id === id)?.resolution, { action: 'deny', reason: 'write_key_mismatch' }, 'denied, with the reason');
  const ev = await waitFor(() => lines(path.join(dir, 'events.jsonl')).find((l) => l.type === 'boundary' && l.fault_id === id));
  t.match(ev, { tool_id: 'charge-card', event: { kind: 'write_denied', control: 'executor/write_key_mismatch', target: 'http://127.0.0.1:9/charge' } }, 'events.jsonl: write_denied naming the tool');

  const bad = await reportWriteDenied(s.stateDir, s.op, { toolId: 'x', callId: 'c-2', reason: 'made_up' as 'handle_forged', target: '', detail: '', pid: 0 }).catch((e: Error) => e);
  t.match(bad, { code: 'E_SCHEMA' }, 'an unknown reason is refused');
});

t.test('a hook refusal from a registered tool cgroup names the tool', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, DENY_ALL, 'gs-exh');
  const dir = opDir(s.stateDir, s.op);
  const sub = path.join(s.cgroup, 'tool-c9');
  fs.mkdirSync(sub);
  t.teardown(() => fs.rmdirSync(sub));
  await registerToolCgroup(s.stateDir, s.op, { cgroupId: cgroupId(sub), toolId: 'fetch-page', callId: 'c-9' });
  const srv = await tcpServer(t);
  const r = await probe(['--cgroup', sub, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(r.results.map((x) => x.result), ['EPERM'], 'the hook on the operation cgroup refuses the tool cgroup too');
  const ev = await waitFor(() => lines(path.join(dir, 'events.jsonl')).find((l) => l.type === 'boundary' && (l.event as { target?: string }).target === `127.0.0.1:${srv.port}`), 10_000);
  t.match(ev, { tool_id: 'fetch-page', event: { kind: 'egress_denied', control: 'ebpf/connect4' } }, 'egress_denied carries the tool id');
  t.equal(srv.accepted(), 0, 'nothing reached the listener');
});
