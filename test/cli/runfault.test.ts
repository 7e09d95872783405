// `gensee run fault` exit codes: 0 continue/retry, 1 deny, 3 delegate, 2 bad
// input, and 4 when no answer came (no socket, a refused connect, a
// connection closed or reset before the answer, a timeout), said in one line
// on stderr that names the socket and the errno, never a stack trace.
import t, { Test } from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { requireKernel, uniqueName, GENSEE_BIN } from '../helpers/kernel';
import { shortStateDir, startTestSupervisor, workload, networkFault } from '../helpers/supervisor';
import { createOperation, opDir } from '../../src/state/operation';
import { readStartTimeTicks } from '../../src/resolver/subject';
import { openPrivateSocket } from '../../src/privsock';
import { loadAddon } from '../../src/addon';
import { faultToJson } from '../../src/protocol/json';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runFault(socket: string, faultFile: string): Promise<Run> {
  return new Promise((resolve) =>
    execFile(GENSEE_BIN, ['run', 'fault', '--socket', socket, '--fault', faultFile], { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

function writeFault(dir: string, op: string, port: number): string {
  const f = path.join(dir, `fault-${port}.json`);
  fs.writeFileSync(f, JSON.stringify(faultToJson(networkFault(op, 4242, 123456, 'tcp', '127.0.0.1', port))));
  return f;
}

/** An operation on disk whose resolver is this test process, with no socket yet. */
async function opWithoutResolver(t: Parameters<typeof shortStateDir>[0]): Promise<{ op: string; sock: string; fault: string }> {
  const st = shortStateDir(t);
  const op = uniqueName('gs-rf');
  await createOperation(st, { id: op, owner_uid: 0, cgroup: '/sys/fs/cgroup/none', policy_hash: 'sha256:' + '0'.repeat(64), resolver: { pid: process.pid, start_time_ticks: readStartTimeTicks(process.pid)! } });
  return { op, sock: path.join(opDir(st, op), 'supervisor.sock'), fault: writeFault(st, op, 8080) };
}

/** exit 4, one line naming the socket and the errno code, nothing on stdout */
function unreachable(t: Test, r: Run, sock: string, code: RegExp, what: string): void {
  t.equal(r.code, 4, `${what}: exit 4`);
  t.equal(r.stdout, '', `${what}: nothing on stdout`);
  const lines = r.stderr.split('\n').filter(Boolean);
  t.equal(lines.length, 1, `${what}: one line on stderr: ${r.stderr.trim()}`);
  t.ok(lines[0]?.includes(sock), `${what}: the line names the socket`);
  t.match(lines[0], code, `${what}: the line names the errno code`);
  t.notMatch(r.stderr, /\n\s+at |Error:/, `${what}: no stack trace`);
}

t.test('no resolver socket: exit 4, one line', async (t) => {
  const o = await opWithoutResolver(t);
  unreachable(t, await runFault(o.sock, o.fault), o.sock, /could not reach the resolver.*ENOENT/, 'no socket');
});

t.test('a socket nobody listens on: exit 4 ECONNREFUSED', async (t) => {
  const o = await opWithoutResolver(t);
  // bound and closed: the file stays, connect() is refused
  loadAddon().closeFd(await openPrivateSocket(o.sock, { owner: 0 }));
  t.ok(fs.existsSync(o.sock), 'a stale socket file is there');
  unreachable(t, await runFault(o.sock, o.fault), o.sock, /ECONNREFUSED/, 'stale socket');
});

/** A socket at o.sock that treats each connection with `fn`. */
async function fakeResolver(t: Test, sock: string, fn: (c: net.Socket) => void): Promise<void> {
  const srv = net.createServer((c) => {
    c.on('error', () => undefined);
    fn(c);
  });
  await new Promise<void>((r) => srv.listen(sock, () => r()));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
}

t.test('a socket that accepts and closes: exit 4', async (t) => {
  const o = await opWithoutResolver(t);
  await fakeResolver(t, o.sock, (c) => c.destroy());
  unreachable(t, await runFault(o.sock, o.fault), o.sock, /ECONNRESET|EPIPE/, 'accept and close');
});

t.test('a socket that reads the fault and ends without an answer: exit 4', async (t) => {
  const o = await opWithoutResolver(t);
  await fakeResolver(t, o.sock, (c) => c.once('data', () => c.end()));
  unreachable(t, await runFault(o.sock, o.fault), o.sock, /ECONNRESET/, 'EOF without answer');
});

t.test('a socket that never answers: exit 4 at the deadline', async (t) => {
  const o = await opWithoutResolver(t);
  await fakeResolver(t, o.sock, (c) => c.resume());
  const t0 = Date.now();
  const r = await runFault(o.sock, o.fault);
  unreachable(t, r, o.sock, /ETIMEDOUT/, 'no answer');
  t.ok(Date.now() - t0 >= 4500, `after the 5 s deadline (${Date.now() - t0} ms)`);
});

t.test('answers: retry 0, deny 1, delegate 3, bad input 2', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-rf');
  const w = await workload(t, s.cgroup);
  const dir = shortStateDir(t);
  const file = (port: number) => {
    const f = path.join(dir, `f-${port}.json`);
    fs.writeFileSync(f, JSON.stringify(faultToJson(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', port))));
    return f;
  };
  const sock = s.sup.socketPath;

  const retry = await runFault(sock, file(8080));
  t.equal(retry.code, 0, `a leased port: exit 0 ${retry.stderr}`);
  t.match(JSON.parse(retry.stdout), { action: 'retry_after_lease' });

  const deny = await runFault(sock, file(22));
  t.equal(deny.code, 1, 'a port no rule covers: exit 1');
  t.match(JSON.parse(deny.stdout), { action: 'deny', reason: 'policy_denied' });
  t.equal(deny.stderr, '', 'a deny says nothing on stderr');

  const del = await runFault(sock, file(443));
  t.equal(del.code, 3, 'a delegated port: exit 3');
  t.match(JSON.parse(del.stdout), { action: 'delegate', delegate_to: 'egress-proxy' });

  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{ not json');
  const b = await runFault(sock, bad);
  t.equal(b.code, 2, 'a fault file that is not JSON: exit 2');
  t.match(b.stderr, /E_BAD_JSON/);
});
