// Hostile input against the supervisor socket: each is refused with its
// code, recorded in faults.jsonl, and the resolver keeps serving others.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { requireKernel, GENSEE_BIN, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, faultLines, shortStateDir } from '../helpers/supervisor';
import { encodeFault, decodeResolution, encodeResolution } from '../../src/protocol/codec';
import { computeMac } from '../../src/protocol/mac';
import { faultToJson } from '../../src/protocol/json';
import { submitFault } from '../../src/resolver/client';
import { readFrame, writeFrame, FRAME_TIMEOUT_MS } from '../../src/protocol/framing';

function header(n: number): Buffer {
  const h = Buffer.alloc(4);
  h.writeUInt32BE(n);
  return h;
}

/** Send raw bytes (optionally in timed pieces); return the decoded answer, if any. */
async function raw(sockPath: string, pieces: { data: Buffer; delayMs?: number }[], end = false, onReply?: () => void): Promise<{ reason?: string; action?: string; ms: number }> {
  const t0 = Date.now();
  const s = net.createConnection(sockPath);
  s.on('error', () => undefined);
  await new Promise<void>((r) => s.once('connect', () => r()));
  let ms = -1; // connect → the server's answer or close
  const reply = readFrame(s, { idleTimeoutMs: 60_000 }).then(
    (f) => decodeResolution(f),
    () => null,
  ).finally(() => {
    ms = Date.now() - t0;
    onReply?.();
  });
  for (const p of pieces) {
    if (p.delayMs) await new Promise((r) => setTimeout(r, p.delayMs));
    if (s.destroyed || ms >= 0) break;
    s.write(p.data);
  }
  if (end && !s.destroyed) s.end();
  const d = await reply;
  s.destroy();
  return d && d.ok ? { reason: d.resolution.reason, action: d.resolution.action, ms } : { ms };
}

function gensee(args: string[], wrapCgroup?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, argv] = wrapCgroup
    ? ['sh', ['-c', `echo $$ > "${wrapCgroup}/cgroup.procs" && exec "$@"`, 'sh', GENSEE_BIN, ...args]]
    : [GENSEE_BIN, args];
  return new Promise((resolve) => {
    execFile(cmd as string, argv as string[], (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

t.test('hostile input is refused, recorded, and others are still served', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-ho');
  const w = await workload(t, s.cgroup);
  const good = () => s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8080));
  const sockPath = s.sup.socketPath;
  const okFault = encodeFault(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8081));

  const refusals = () => faultLines(s.stateDir, s.op).filter((l) => l.kind === 'refusal');
  const expectRefusal = async (re: RegExp, msg: string) => {
    await waitFor(() => refusals().some((l) => re.test(String(l.detail))), 4000).catch(() => undefined);
    t.ok(refusals().some((l) => re.test(String(l.detail)) && l.reason === 'malformed_fault'), `recorded: ${msg}`);
  };

  // oversized: refused from the header alone
  const big = await raw(sockPath, [{ data: header(65537) }]);
  t.equal(big.reason, 'malformed_fault', 'oversized frame → malformed_fault');
  await expectRefusal(/frame_oversize/, 'oversize');

  // truncated: fewer bytes than declared, then EOF
  const tr = await raw(sockPath, [{ data: Buffer.concat([header(okFault.length), okFault.subarray(0, 10)]) }], true);
  t.equal(tr.reason, 'malformed_fault', 'truncated frame → malformed_fault');
  await expectRefusal(/frame_truncated/, 'truncated');

  // trailing garbage after a complete frame
  const tg = await raw(sockPath, [{ data: Buffer.concat([header(okFault.length), okFault, Buffer.from('GARBAGE')]) }]);
  t.equal(tg.reason, 'malformed_fault', 'trailing bytes → malformed_fault');
  await expectRefusal(/frame_trailing/, 'trailing');

  // unknown protobuf field (field 99, varint) at the top level
  const unk = Buffer.concat([okFault, Buffer.from([0x98, 0x06, 0x01])]);
  const uf = await raw(sockPath, [{ data: Buffer.concat([header(unk.length), unk]) }]);
  t.equal(uf.reason, 'malformed_fault', 'unknown protobuf field → malformed_fault');
  await expectRefusal(/unknown field/i, 'unknown protobuf field');

  // schema 3 (field 1 varint 0x08 0x02 → 0x08 0x03)
  t.same([...okFault.subarray(0, 2)], [0x08, 0x02], 'schema is the first field');
  const s3 = Buffer.from(okFault);
  s3[1] = 3;
  const sc = await raw(sockPath, [{ data: Buffer.concat([header(s3.length), s3]) }]);
  t.equal(sc.reason, 'malformed_fault', 'schema 3 → malformed_fault');
  await expectRefusal(/schema/i, 'schema 3');

  // a client trickling the whole frame at 1 byte a second (it would take
  // minutes) is cut at 2 s; meanwhile others are served at once
  const frame = Buffer.concat([header(okFault.length), okFault]);
  let slowDone = false;
  const slow = raw(sockPath, [...frame].map((b, i) => ({ data: Buffer.from([b]), delayMs: i === 0 ? 0 : 1000 })), false, () => (slowDone = true));
  await new Promise((r) => setTimeout(r, 300));
  const g = await good();
  t.equal(g.resolution.action, 'retry_after_lease', 'a good fault is served while the slow client trickles');
  t.notOk(slowDone, '...without waiting for it: the slow client was still being read');
  const sl = await slow;
  t.equal(sl.reason, 'malformed_fault', 'trickling client → malformed_fault');
  // the promise: not before 2 s from its first byte, and well before the frame could complete
  t.ok(sl.ms >= FRAME_TIMEOUT_MS - 5 && sl.ms < 10_000, `cut at 2 s from its first byte (${sl.ms} ms; the frame needed ${frame.length} s)`);
  await expectRefusal(new RegExp(`frame_timeout.*within ${FRAME_TIMEOUT_MS} ms`), 'slow client, at the 2 s frame limit');

  // a peer inside the operation's cgroup is refused even as root
  const ffile = path.join(shortStateDir(t), 'f.json');
  fs.writeFileSync(ffile, JSON.stringify(faultToJson(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8082))));
  // (a unix rule names the socket, so the connect passes the connect_unix hook and meets the peer check)
  s.sup.dp.setRules([], [{ path: sockPath }]);
  const inside = await gensee(['run', 'fault', '--socket', sockPath, '--fault', ffile], s.cgroup);
  t.equal(inside.code, 1, 'client inside the cgroup: deny, exit 1');
  t.match(JSON.parse(inside.stdout), { action: 'deny', reason: 'unauthenticated_peer' });
  t.ok(refusals().some((l) => l.reason === 'unauthenticated_peer' && /inside the operation/.test(String(l.detail))), 'recorded: peer inside cgroup');
  t.equal(s.sup.dp.getLease({ family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8082 }), null, 'nothing installed for it');

  // the same file from outside the cgroup works
  const outside = await gensee(['run', 'fault', '--socket', sockPath, '--fault', ffile]);
  t.equal(outside.code, 0, `same fault from outside: exit 0 ${outside.stderr}`);

  // a fault file that is a symlink; a fault with an unknown JSON field
  const link = path.join(path.dirname(ffile), 'link.json');
  fs.symlinkSync(ffile, link);
  const sym = await gensee(['run', 'fault', '--socket', sockPath, '--fault', link]);
  t.equal(sym.code, 2, 'symlinked fault file: exit 2');
  t.match(sym.stderr, /E_SYMLINK/);
  const extra = path.join(path.dirname(ffile), 'extra.json');
  fs.writeFileSync(extra, JSON.stringify({ ...faultToJson(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8083)), approve: true }));
  const ex = await gensee(['run', 'fault', '--socket', sockPath, '--fault', extra]);
  t.equal(ex.code, 2, 'unknown JSON field: exit 2');
  t.match(ex.stderr, /approve/, 'the error names the field');
  await waitFor(() => refusals().some((l) => /E_SYMLINK/.test(String(l.detail))) && refusals().some((l) => /approve/.test(String(l.detail))), 3000).catch(() => undefined);
  t.ok(refusals().some((l) => /E_SYMLINK/.test(String(l.detail))), 'recorded: symlinked fault file');
  t.ok(refusals().some((l) => /approve/.test(String(l.detail))), 'recorded: unknown JSON field');

  // still serving
  const last = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8084));
  t.equal(last.resolution.action, 'retry_after_lease', 'the resolver still serves after all of it');
});

t.test('a forged MAC or a wrong resolver identity: the client refuses to act', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-mac');
  const w = await workload(t, s.cgroup);
  const f = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8090);

  // an impostor socket that answers retry_after_lease signed with another key
  const fakePath = path.join(shortStateDir(t), 'fake.sock');
  const fake = net.createServer((c) => {
    readFrame(c).then(async () => {
      const r = { fault_id: f.fault_id, action: 'retry_after_lease' as const, reason: 'lease_installed', lease: { generation: 1, family: 'ipv4' as const, protocol: 'tcp' as const, address: '127.0.0.1', port: 8090, expires_at_boot_ns: 1n, max_uses: 0 } };
      await writeFrame(c, encodeResolution(r, computeMac(Buffer.alloc(32, 7), r)));
      c.end();
    }, () => c.destroy());
  });
  await new Promise<void>((r) => fake.listen(fakePath, () => r()));
  t.teardown(() => fake.close());
  const forged = await submitFault({ socketPath: fakePath, body: encodeFault(f), faultId: f.fault_id, key: s.key, resolver: null });
  t.equal(forged.authenticated, false, 'forged MAC detected');
  t.match(forged.resolution, { action: 'deny', reason: 'unauthenticated_peer' }, 'a bad MAC is a deny');
  t.match(forged.detail, /MAC/);

  const wrongId = await submitFault({ socketPath: s.sup.socketPath, body: encodeFault(f), faultId: f.fault_id, key: s.key, resolver: { pid: 1, start_time_ticks: 1 } });
  t.equal(wrongId.authenticated, false, 'resolver pid not the one in operation.json');
  t.match(wrongId.resolution, { action: 'deny', reason: 'unauthenticated_peer' });
  t.equal(s.sup.dp.getLease({ family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8090 }), null, 'the impostor answer installed nothing');
});
