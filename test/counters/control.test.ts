// The control socket: operator leases added and revoked through it become
// generations with their counts harvested; a client inside the operation's
// cgroup is refused (and the refusal recorded); the client refuses a reply
// it cannot authenticate.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel, probe, tcpServer, waitFor } from '../helpers/kernel';
import { startTestSupervisor, controlRequestFromCgroup } from '../helpers/supervisor';
import { CONTROL_SOCKET, controlRequest } from '../../src/envelope/control';
import { parseDestination } from '../../src/addr';
import { counterLines, matching } from './lib';

const POLICY = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };

t.test('operator leases through the control socket', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-ct');
  const sock = path.join(s.sup.dir, CONTROL_SOCKET);
  t.equal(fs.statSync(sock).mode & 0o777, 0o600, 'control.sock is 0600');
  const srv = await tcpServer(t);
  const req = (request: Parameters<typeof controlRequest>[0]['request']) => controlRequest({ socketPath: sock, key: s.key, resolver: s.sup.record.resolver, request });

  const added = await req({ schema: 1, command: 'lease_add', protocol: 'tcp', address: '127.0.0.1', port: srv.port, ttl_ms: 60_000, max_uses: 0 });
  const gen = added.generation as number;
  t.ok(gen > 1, `an operator lease is its own generation (${gen})`);
  t.equal(s.sup.dp.getLease(parseDestination('tcp', `127.0.0.1:${srv.port}`))?.generation, BigInt(gen), 'installed under it');
  const p = await probe(['--cgroup', s.cgroup, '--repeat', '6', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(p.summary?.ok, 6, 'the policy allows nothing, the operator lease does');

  const rm = await req({ schema: 1, command: 'lease_rm', protocol: 'tcp', address: '127.0.0.1', port: srv.port });
  t.match(rm, { revoked_generation: gen, final_allow: 6 }, 'revoked after a final harvest: 6 allows');
  t.equal(s.sup.dp.getLease(parseDestination('tcp', `127.0.0.1:${srv.port}`)), null, 'gone from the kernel');
  const lines = counterLines(s.stateDir, s.op);
  t.ok(lines.some((l) => l.kind === 'generation' && l.generation === gen && l.reason === 'operator_lease'), 'operator_lease generation recorded');
  t.ok(lines.some((l) => l.kind === 'lease_revoked' && l.by === 'operator' && l.final_allow === 6), 'lease_revoked recorded');
  await t.rejects(req({ schema: 1, command: 'lease_rm', protocol: 'tcp', address: '127.0.0.1', port: srv.port }), { code: 'E_USAGE' }, 'removing it twice is refused');
  await t.rejects(req({ schema: 1, command: 'policy_apply', policy_text: '{"schema":1,"grants":[{"network":{}}]}' }), { code: 'E_SCHEMA' }, 'a bad policy is refused by the supervisor too');

  // a reply that does not authenticate is not believed
  await t.rejects(controlRequest({ socketPath: sock, key: Buffer.alloc(32, 7), resolver: s.sup.record.resolver, request: { schema: 1, command: 'lease_rm', protocol: 'tcp', address: '127.0.0.1', port: 1 } }), /MAC does not verify/);
  await t.rejects(controlRequest({ socketPath: sock, key: s.key, resolver: { pid: 1, start_time_ticks: 1 }, request: { schema: 1, command: 'lease_rm', protocol: 'tcp', address: '127.0.0.1', port: 1 } }), /not the resolver/);

  // a client inside the operation's cgroup: no unix rule names control.sock,
  // so the connect_unix hook refuses it before gensee's socket sees it...
  const hooked = await controlRequestFromCgroup(s, sock);
  t.match(hooked, /EPERM/, `workload refused by the AF_UNIX hook: ${hooked}`);
  // ...and where a rule did name it, the socket's own peer check refuses it, recorded
  s.sup.dp.setRules([], [{ path: sock }]);
  const out = await controlRequestFromCgroup(s, sock);
  t.match(out, /^refused .*inside the operation's cgroup/, `workload refused: ${out}`);
  t.equal(s.sup.dp.getLease(parseDestination('tcp', '127.0.0.1:4444')), null, 'nothing installed');
  await waitFor(() => matching(counterLines(s.stateDir, s.op), { kind: 'control_refused' }).length > 0, 2000, 20);
  t.pass('the refusal is in counters.jsonl');
});
