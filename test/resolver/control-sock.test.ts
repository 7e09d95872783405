// control.sock on the supervisor socket's native server: protobuf bodies, a
// MAC'd reply, several requests on one connection, and refusals (a peer
// inside the operation's cgroup, unknown fields, bytes before an answer)
// recorded in faults.jsonl.
import t from 'tap';
import * as path from 'node:path';
import { requireKernel, waitFor } from '../helpers/kernel';
import { rawFrameClient, frame } from '../helpers/rawframes';
import { startTestSupervisor, faultLines, controlRequestFromCgroup } from '../helpers/supervisor';
import { ControlServer, CONTROL_SOCKET, controlRequest, encodeRequest, replyMac, type ControlRequest } from '../../src/envelope/control';
import { gensee } from '../../src/gen/control';

const rawClient = (sockPath: string) => rawFrameClient(sockPath, (body) => body);

t.test('control.sock served by the supervisor socket code', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-cs');
  const seen: ControlRequest[] = [];
  const refusedCb: string[] = [];
  const sockPath = path.join(s.sup.dir, 'ctl-test.sock');
  const srv = new ControlServer({
    socketPath: sockPath,
    ownerUid: 0,
    cgroup: s.cgroup,
    key: s.key,
    handler: async (req) => {
      seen.push(req);
      return { generation: seen.length };
    },
    onRefused: (code) => refusedCb.push(code),
    refusals: s.sup.resolver,
  });
  await srv.listen();
  t.teardown(() => srv.close());
  const refusals = () => faultLines(s.stateDir, s.op).filter((l) => l.kind === 'refusal' && /^control\.sock: /.test(String(l.detail)));

  // the client API: a request, its reply authenticated
  const r = await controlRequest({ socketPath: sockPath, key: s.key, resolver: s.sup.record.resolver, request: { schema: 1, command: 'lease_add', protocol: 'tcp', address: '127.0.0.1', port: 8080, ttl_ms: 30_000, max_uses: 2 } });
  t.same(r, { ok: true, command: 'lease_add', generation: 1 });
  t.same(seen[0], { schema: 1, command: 'lease_add', protocol: 'tcp', address: '127.0.0.1', port: 8080, ttl_ms: 30_000, max_uses: 2 }, 'the handler sees the request as before');

  // several requests on one connection; each reply's MAC covers the whole reply
  const c = await rawClient(sockPath);
  t.teardown(() => c.destroy());
  for (let i = 0; i < 3; i++) {
    c.send(frame(encodeRequest({ schema: 1, command: 'lease_rm', protocol: 'udp', address: '10.0.0.1', port: 53 + i })));
    const body = await c.next(i + 1);
    const signed = gensee.v2.SignedControlReply.decode(body);
    t.same(Buffer.from(signed.mac), replyMac(s.key, signed.reply), `reply ${i + 1}: the MAC verifies`);
    const reply = gensee.v2.ControlReply.decode(signed.reply);
    t.equal(reply.ok?.command, 'lease_rm');
  }
  t.notOk(c.ended(), 'the connection stays open');
  t.equal(seen.length, 4);

  // an unknown field: refused, recorded, the sequence ends
  const good = encodeRequest({ schema: 1, command: 'lease_rm', protocol: 'tcp', address: '127.0.0.1', port: 1 });
  const unk = Buffer.concat([good, Buffer.from([0x98, 0x06, 0x01])]);
  const u = await rawClient(sockPath);
  t.teardown(() => u.destroy());
  u.send(frame(unk));
  const ur = gensee.v2.ControlReply.decode(gensee.v2.SignedControlReply.decode(await u.next(1)).reply);
  t.equal(ur.error?.code, 'E_SCHEMA', 'unknown field → E_SCHEMA');
  await waitFor(() => refusals().some((l) => /unknown fields/.test(String(l.detail))), 4000).catch(() => undefined);
  t.ok(refusals().some((l) => /unknown fields/.test(String(l.detail))), 'recorded in faults.jsonl');

  // bytes after the frame: refused, recorded
  const tr = await rawClient(sockPath);
  t.teardown(() => tr.destroy());
  tr.send(Buffer.concat([frame(good), Buffer.from('MORE')]));
  await waitFor(() => tr.ended(), 5000);
  await waitFor(() => refusals().some((l) => /frame_trailing/.test(String(l.detail))), 4000).catch(() => undefined);
  t.ok(refusals().some((l) => /frame_trailing/.test(String(l.detail))), 'bytes after the frame: recorded');

  // a client inside the operation's cgroup: refused, recorded, handler never called
  const before = seen.length;
  // (a unix rule names the socket, so the connect passes the connect_unix hook and meets the peer check)
  s.sup.dp.setRules([], [{ path: sockPath }]);
  const out = await controlRequestFromCgroup(s, sockPath);
  t.match(out, /^refused .*inside the operation's cgroup/, `workload refused: ${out}`);
  t.equal(seen.length, before, 'the handler never saw it');
  await waitFor(() => refusals().some((l) => l.reason === 'unauthenticated_peer'), 4000).catch(() => undefined);
  t.ok(refusals().some((l) => l.reason === 'unauthenticated_peer' && /inside the operation/.test(String(l.detail))), 'the refused peer is in faults.jsonl');
  t.ok(refusedCb.includes('unauthenticated_peer') && refusedCb.includes('E_SCHEMA'), 'and reported to onRefused');
});

t.test("a running supervisor's own control.sock records its refusals in faults.jsonl", async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-csl');
  const sockPath = path.join(s.sup.dir, CONTROL_SOCKET);
  const refusals = () => faultLines(s.stateDir, s.op).filter((l) => l.kind === 'refusal' && /^control\.sock: /.test(String(l.detail)));
  t.equal(refusals().length, 0, 'none before');
  const good = encodeRequest({ schema: 1, command: 'lease_rm', protocol: 'tcp', address: '127.0.0.1', port: 1 });
  const c = await rawClient(sockPath);
  t.teardown(() => c.destroy());
  c.send(frame(Buffer.concat([good, Buffer.from([0x98, 0x06, 0x01])])));
  const reply = gensee.v2.ControlReply.decode(gensee.v2.SignedControlReply.decode(await c.next(1)).reply);
  t.equal(reply.error?.code, 'E_SCHEMA', 'an unknown field is refused');
  await waitFor(() => refusals().length > 0, 4000).catch(() => undefined);
  t.ok(refusals().some((l) => /unknown fields/.test(String(l.detail))), 'and recorded in faults.jsonl, like any refused peer');
});
