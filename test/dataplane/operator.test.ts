// The operator's path through the CLI, in separate processes: attach, lease,
// connect from inside the cgroup, counters, detach. The pinned hooks must
// keep denying after the process that loaded them exited, and detach must
// leave no link, pin or cgroup behind.
import t from 'tap';
import * as fs from 'node:fs';
import { execFile } from 'node:child_process';
import { requireKernel, testCgroup, probe, tcpServer, uniqueName, detachAtTeardown } from '../helpers/kernel';
import { gensee } from '../helpers/gensee';
import { pinDirFor } from '../../src/bpffs';
import { removeCgroup } from '../../src/cgroup';
import { hookLinkNames } from '../../src/dataplane';

function bpftoolCgroup(cg: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('bpftool', ['-j', 'cgroup', 'show', cg], (err, stdout) => {
      if (err) return reject(err);
      const rows = stdout.trim() ? (JSON.parse(stdout) as { name: string }[]) : [];
      resolve(rows.map((r) => r.name));
    });
  });
}

t.test('operator: attach, lease, connect, counters, detach', async (t) => {
  if (!requireKernel(t)) return;
  const cg = testCgroup(t, 'gs-opr');
  const op = uniqueName('gs-opr');
  detachAtTeardown(t, op);
  const ok = await tcpServer(t);
  const other = await tcpServer(t);

  const a = await gensee(['hooks', 'attach', '--op', op, '--cgroup', cg]);
  t.equal(a.code, 0, `attach: ${a.stderr}`);
  // bpftool 7.1 (Debian 12) does not list the unix attach types (Linux 6.7); their links are pinned
  t.same(
    (await bpftoolCgroup(cg)).sort(),
    ['gs_bind4', 'gs_bind6', 'gs_connect4', 'gs_connect6', 'gs_sendmsg4', 'gs_sendmsg6', 'gs_setsockopt', 'gs_sock_create', 'gs_udp_egress'],
    'the sock_addr, bind, socket, setsockopt and egress programs on the cgroup',
  );

  // The loader exited: the pinned boundary keeps denying.
  const before = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(ok.port)]);
  t.same(before.results.map((r) => r.result), ['EPERM'], 'pinned hooks deny after the loading process exited');

  const l = await gensee(['lease', 'add', '--op', op, 'tcp', `127.0.0.1:${ok.port}`, '--ttl', '60s']);
  t.equal(l.code, 0, `lease add: ${l.stderr}`);
  const ls = await gensee(['lease', 'ls', '--op', op, '--json']);
  const leases = JSON.parse(ls.stdout) as { address: string; port: number; protocol: string }[];
  t.match(leases, [{ address: '127.0.0.1', port: ok.port, protocol: 'tcp' }], 'lease listed');

  const r1 = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(ok.port)]);
  const r2 = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(other.port)]);
  t.same(r1.results.map((r) => r.result), ['ok'], 'leased port connects');
  t.same(r2.results.map((r) => r.result), ['EPERM'], 'other port is EPERM');

  const c = await gensee(['counters', '--op', op, '--json']);
  t.equal(c.code, 0);
  const counters = (JSON.parse(c.stdout) as { counters: { port: number; verdict: string; count: number }[] }).counters;
  t.same(
    counters.filter((x) => x.verdict === 'allow').map((x) => [x.port, x.count]),
    [[ok.port, 1]],
    'one allow for the leased port',
  );
  t.same(
    counters.filter((x) => x.verdict === 'no_lease').map((x) => [x.port, x.count]).sort(),
    [[ok.port, 1], [other.port, 1]].sort(),
    'one no_lease each: the first call before the lease and the other port',
  );
  const text = await gensee(['counters', '--op', op]);
  t.match(text.stdout, new RegExp(`tcp 127\\.0\\.0\\.1:${other.port}\\s+no_lease`), 'readable table per destination');

  const rm = await gensee(['lease', 'rm', '--op', op, 'tcp', `127.0.0.1:${ok.port}`]);
  t.equal(rm.code, 0);
  const r3 = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(ok.port)]);
  t.same(r3.results.map((r) => r.result), ['EPERM'], 'revoked lease denies again');

  const d = await gensee(['hooks', 'detach', '--op', op]);
  t.equal(d.code, 0, `detach: ${d.stderr}`);
  t.notOk(fs.existsSync(pinDirFor(op)), 'no pins left');
  t.same(await bpftoolCgroup(cg), [], 'no programs left on the cgroup');
  const r4 = await probe(['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(other.port)]);
  t.same(r4.results.map((r) => r.result), ['ok'], 'after detach nothing is enforced');
  removeCgroup(cg);
  t.notOk(fs.existsSync(cg), 'no cgroup left');
});

t.test('bad input: clear one-line error, exit 2, nothing changed', async (t) => {
  if (!requireKernel(t)) return;
  const cg = testCgroup(t, 'gs-bad');
  const op = uniqueName('gs-bad');
  detachAtTeardown(t, op);
  t.equal((await gensee(['hooks', 'attach', '--op', op, '--cgroup', cg])).code, 0);
  const bad: [string[], RegExp][] = [
    [['lease', 'add', '--op', op, 'tcp', '127.0.0.1:70000'], /E_BAD_PORT: port 70000 out of range/],
    [['lease', 'add', '--op', op, 'tcp', '127.0.0.1:0'], /E_BAD_PORT/],
    [['lease', 'add', '--op', op, 'tcp', '127.0.0.300:80'], /E_BAD_ADDRESS: bad address "127\.0\.0\.300"/],
    [['lease', 'add', '--op', op, 'tcp', '::1:80'], /E_BAD_ADDRESS: bad destination/],
    [['lease', 'add', '--op', op, 'sctp', '127.0.0.1:80'], /E_BAD_PROTOCOL/],
    [['lease', 'add', '--op', op, 'tcp', '127.0.0.1:80', '--ttl', 'soon'], /E_BAD_DURATION/],
    [['lease', 'add', '--op', op, 'tcp', '127.0.0.1:80', '--uses', '-1'], /E_USAGE|E_BAD_COUNT/],
    [['lease', 'add', '--op', 'no-such-op-x', 'tcp', '127.0.0.1:80'], /E_UNKNOWN_OP: unknown operation "no-such-op-x"/],
    [['lease', 'add', '--op', '../etc', 'tcp', '127.0.0.1:80'], /E_BAD_OP_ID/],
    [['hooks', 'attach', '--op', uniqueName('gs-bad'), '--cgroup', '/tmp'], /E_NOT_CGROUP2: \/tmp is not a cgroup v2 directory/],
    [['hooks', 'attach', '--op', uniqueName('gs-bad'), '--cgroup', '/nonexistent/x'], /E_NOT_CGROUP2: cgroup path \/nonexistent\/x does not exist/],
    [['hooks', 'attach', '--op', op, '--cgroup', cg], /E_OP_EXISTS/],
    [['hooks', 'detach', '--op', 'no-such-op-y'], /E_UNKNOWN_OP/],
    [['lease', 'frob', '--op', op], /E_USAGE/],
    [['counters', '--op', op, '--bogus'], /E_USAGE/],
  ];
  for (const [args, re] of bad) {
    const r = await gensee(args);
    t.equal(r.code, 2, `exit 2: gensee ${args.join(' ')}`);
    t.match(r.stderr, re, `error names the problem: ${r.stderr.trim()}`);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
  const ls = await gensee(['lease', 'ls', '--op', op, '--json']);
  t.same(JSON.parse(ls.stdout), [], 'no lease was installed by any bad command');
  t.same((await bpftoolCgroup(cg)).length, hookLinkNames().filter((n) => !n.endsWith('_unix')).length, 'hooks still attached once');
});
