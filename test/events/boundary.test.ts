// Boundary events, end to end on the real kernel: every refusal by a gensee
// control writes one events.jsonl line — the eBPF hook's EPERM, the
// resolver's deny at the pause layer (which is also counted per destination
// in counters.jsonl, since the call never reaches the hook), a refused peer
// on supervisor.sock and on events.sock — and a 65,536-port scan leaves a
// bounded events.jsonl with every count still in counters.jsonl.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as http from 'node:http';
import { execFile } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { opDir } from '../../src/state/operation';
import { requireKernel, tcpServer, udpServer, probe, uniqueName, GENSEE_BIN, PROBE, waitFor } from '../helpers/kernel';
import { supervisedOp, superviseProcess, shortStateDir, jsonlLines } from '../helpers/supervisor';
import { gensee } from '../helpers/gensee';
import { connectEvents, EventStreamError } from '../../src/events/client';
import { readToken } from '../../src/events/token';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'flood');
const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };

const lines = jsonlLines;

interface Boundary {
  seq: number;
  type: 'boundary';
  event: { kind: string; control: string; detail: string; target?: string; at: string };
  fault_id?: string;
}

function boundaries(dir: string): Boundary[] {
  return lines(path.join(dir, 'events.jsonl')).filter((l) => l.type === 'boundary') as unknown as Boundary[];
}

/** the HTTP status of a WebSocket upgrade on a unix socket without Authorization */
function upgradeStatus(socketPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      socketPath,
      path: '/',
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (_res, sock) => {
      sock.destroy();
      resolve(101);
    });
    req.on('error', reject);
    req.end();
  });
}

function run(bin: string, args: string[], timeoutMs = 180_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(bin, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

t.test('a resolver deny under gensee run: one fault_denied event, counted per destination', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const op = uniqueName('gs-evr');
  const srv = await tcpServer(t);
  const policy = path.join(st, 'deny.json');
  fs.writeFileSync(policy, JSON.stringify(DENY_ALL));
  const r = await run(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--json', '--', PROBE, '--repeat', '3', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(r.code, 0, `gensee run exits with the probe's code ${r.stderr}`);
  t.ok(/"EACCES"/.test(r.stdout), 'the probe was refused by the resolver (EACCES)');
  t.equal(srv.accepted(), 0, 'nothing reached the denied listener');
  const dir = opDir(st, op);
  const ev = boundaries(dir).filter((b) => b.event.kind === 'fault_denied');
  t.equal(ev.length, 3, 'one fault_denied event per refused call');
  t.match(ev[0].event, { control: 'resolver/policy_denied', target: `127.0.0.1:${srv.port}` }, 'the control and the target');
  t.ok(ev[0].event.detail.length > 0 && ev[0].event.detail.length <= 300 && !/[\n\r]/.test(ev[0].event.detail), 'a one-line detail of at most 300 characters');
  const faults = lines(path.join(dir, 'faults.jsonl'));
  const denied = faults.filter((l) => l.kind === 'resolution' && (l.resolution as { action: string }).action === 'deny').map((l) => l.fault_id);
  t.same(ev.map((e) => e.fault_id).sort(), [...denied].sort(), 'each event names the fault it reports');
  t.equal(boundaries(dir).filter((b) => b.event.kind === 'egress_denied').length, 0, 'the calls never reached the hook');

  const counted = lines(path.join(dir, 'counters.jsonl')).filter((l) => l.kind === 'deny' && l.source === 'resolver' && l.port === srv.port);
  t.equal(
    counted.reduce((s, l) => s + (l.delta as number), 0),
    3,
    'counters.jsonl counts the 3 pause-layer denials for the destination',
  );
  const c = await gensee(['counters', '--op', op, '--state-dir', st, '--json']);
  t.equal(c.code, 0, c.stderr);
  const summary = JSON.parse(c.stdout) as { summary: { destinations: { port: number; deny: Record<string, number> }[] } };
  const d = summary.summary.destinations.find((x) => x.port === srv.port);
  t.equal(d?.deny.policy_denied, 3, 'gensee counters shows the per-destination deny count');

  const v = await gensee(['verify', '--op', op, '--state-dir', st]);
  t.equal(v.code, 0, `events.jsonl verifies with the other logs ${v.stdout}${v.stderr}`);
});

t.test('a delegation to the executor names the executor and the tool', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const op = uniqueName('gs-evd');
  const srv = await tcpServer(t);
  const policy = path.join(st, 'delegate.json');
  fs.writeFileSync(
    policy,
    JSON.stringify({ ...DENY_ALL, delegate: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(srv.port) }, to: 'gensee-executor', tool: 'charge-card' }] }),
  );
  const r = await run(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--json', '--', PROBE, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(r.code, 0, r.stderr);
  t.ok(/ECONNREFUSED/.test(r.stdout), 'the workload gets ECONNREFUSED');
  t.equal(srv.accepted(), 0, 'nothing reached the listener');
  const dir = opDir(st, op);
  const res = lines(path.join(dir, 'faults.jsonl')).find((l) => l.kind === 'resolution' && (l.resolution as { action: string }).action === 'delegate');
  t.match(res, { resolution: { delegate_to: 'gensee-executor' }, delegate_tool: 'charge-card' }, 'faults.jsonl records the executor and the tool');
  const ev = boundaries(dir).find((b) => b.event.kind === 'fault_delegated') as (Boundary & { tool_id?: string }) | undefined;
  t.match(ev, { tool_id: 'charge-card', event: { control: 'policy/delegate', target: `127.0.0.1:${srv.port}` } }, 'fault_delegated names the tool');
  t.match(ev?.event.detail, /gensee-executor \(tool charge-card\)/, 'and the executor in its detail');
});

t.test('an eBPF hook EPERM under supervise: egress_denied with the hook as control', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-evh', DENY_ALL);
  await superviseProcess(t, o.args);
  const srv = await tcpServer(t);
  const usrv = await udpServer(t);
  const tcp = await probe(['--cgroup', o.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(tcp.results.map((x) => x.result), ['EPERM'], 'the hook refused the connect');
  const udp = await probe(['--cgroup', o.cgroup, 'sendto', 'udp', '127.0.0.1', String(usrv.port)]);
  t.same(udp.results.map((x) => x.result), ['EPERM'], 'the hook refused the sendto');
  const dir = opDir(o.stateDir, o.op);
  const got = await waitFor(() => {
    const b = boundaries(dir).filter((x) => x.event.kind === 'egress_denied');
    return b.length >= 2 ? b : null;
  }, 10_000);
  const c4 = got.find((b) => b.event.target === `127.0.0.1:${srv.port}`);
  const s4 = got.find((b) => b.event.target === `127.0.0.1:${usrv.port}`);
  t.match(c4?.event, { control: 'ebpf/connect4' }, 'connect4 named as the control');
  t.match(s4?.event, { control: 'ebpf/sendmsg4' }, 'sendmsg4 named as the control');
  t.match(c4?.fault_id, /^hk-/, 'the event names the hook fault');
  t.equal(boundaries(dir).filter((b) => b.event.kind === 'fault_denied').length, 0, "the resolver's answer to a hook fault is not a second refusal");
  t.equal(srv.accepted(), 0, 'nothing reached the TCP listener');
  t.equal(usrv.received(), 0, 'nothing reached the UDP listener');
});

t.test('refused peers: a workload on supervisor.sock, a wrong token on events.sock', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-evp', DENY_ALL);
  const dir = opDir(o.stateDir, o.op);
  // a unix rule names supervisor.sock, so the connect passes the AF_UNIX hook
  // and meets the socket's own peer check (without it the hook refuses first)
  fs.writeFileSync(o.policyFile, JSON.stringify({ ...DENY_ALL, unix: [{ path: path.join(dir, 'supervisor.sock') }] }));
  await superviseProcess(t, o.args);
  // a process inside the operation's cgroup submits a fault to the supervisor socket
  const ffile = path.join(o.stateDir, 'f.json');
  fs.writeFileSync(
    ffile,
    JSON.stringify({
      schema: 2,
      operation_id: o.op,
      fault_id: 'inside-1',
      subject: { process: { pid: process.pid, start_time_ticks: 1 } },
      effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9 } },
      source: 'manual',
    }),
  );
  const inside = await run('/bin/sh', ['-c', `echo $$ > "$0/cgroup.procs" && exec "$1" run fault --socket "$2" --fault "$3"`, o.cgroup, GENSEE_BIN, path.join(dir, 'supervisor.sock'), ffile]);
  t.equal(inside.code, 1, `the client inside the cgroup is denied ${inside.stderr}`);
  const peer = await waitFor(() => boundaries(dir).find((b) => b.event.kind === 'peer_refused' && b.event.control === 'socket/supervisor.sock'), 10_000);
  t.ok(peer, 'a peer_refused event for supervisor.sock');

  const err = await connectEvents({ socketPath: path.join(dir, 'events.sock'), token: '0'.repeat(64) }).then(
    (c) => {
      c.close();
      return null;
    },
    (e: unknown) => e,
  );
  t.ok(err instanceof EventStreamError && err.reason === 'unauthorized', 'a wrong token: refused 401');
  t.equal(await upgradeStatus(path.join(dir, 'events.sock')), 401, 'no token at all: 401');
  const ev = await waitFor(() => {
    const b = boundaries(dir).filter((x) => x.event.kind === 'peer_refused' && x.event.control === 'socket/events.sock');
    return b.length >= 2 ? b : null;
  }, 10_000);
  t.match(ev[0].event.detail, /401/, 'the event says 401');
  t.ok(lines(path.join(dir, 'faults.jsonl')).some((l) => l.kind === 'refusal' && /events\.sock/.test(String(l.detail))), 'and faults.jsonl records the refusal');

  // the right token is served
  const good = await connectEvents({ socketPath: path.join(dir, 'events.sock'), token: await readToken(dir), since: { events: 0 }, logs: ['events'] });
  const first = await good[Symbol.asyncIterator]().next();
  good.close();
  t.match(first.value, { log: 'events', type: 'boundary' }, 'the right token replays events.jsonl');
});

t.test('a 65,536-port scan leaves a bounded events.jsonl and every count in counters.jsonl', async (t) => {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, 'gs-evs', DENY_ALL);
  const sup = await superviseProcess(t, o.args);
  const t0 = Date.now();
  const r = await run(FLOOD, ['--cgroup', o.cgroup, '--base', '127.0.0.1', '--port', '0', '--count', '65536', '--scan', 'ports']);
  t.equal(r.code, 0, r.stderr);
  const burst = JSON.parse(r.stdout.trim().split('\n')[1]) as { n: number; ok: number; EPERM: number };
  t.equal(burst.ok, 0, 'no port was reached');
  t.equal(burst.EPERM, 65536, 'every port was refused by the hook');
  await new Promise((res) => setTimeout(res, 2500)); // a reading and the gate's last second
  sup.kill('SIGTERM');
  await waitFor(() => !sup.running, 30_000);
  const seconds = (Date.now() - t0) / 1000;
  const dir = opDir(o.stateDir, o.op);
  const ev = lines(path.join(dir, 'events.jsonl'));
  const bound = ev.filter((l) => l.type === 'boundary');
  const suppressed = ev.filter((l) => l.type === 'suppressed');
  t.ok(bound.length <= 200 * Math.ceil(seconds + 1), `at most 200 boundary lines a second: ${bound.length} in ${seconds.toFixed(1)} s`);
  t.ok(suppressed.length > 0, 'the rest is suppressed lines');
  t.ok(fs.statSync(path.join(dir, 'events.jsonl')).size < 4 << 20, 'events.jsonl stays small');
  // a hook fault past the refusal budget is counted in a suppressed line, not written
  const hookEvents =
    lines(path.join(dir, 'faults.jsonl')).filter((l) => l.kind === 'fault' && l.via === 'cgroup_hook').length +
    lines(path.join(dir, 'faults.jsonl'))
      .filter((l) => l.kind === 'suppressed')
      .reduce((s, l) => s + (l.count as number), 0);
  const lost = lines(path.join(dir, 'faults.jsonl'))
    .filter((l) => l.kind === 'records_lost')
    .reduce((s, l) => s + (l.count as number), 0);
  const lostLines = lines(path.join(dir, 'faults.jsonl')).filter((l) => l.kind === 'records_lost').length;
  const suppressedCount = suppressed.reduce((s, l) => s + (l.count as number), 0);
  t.ok(suppressedCount > 0, `${suppressedCount} events counted in suppressed lines`);
  t.equal(bound.length + suppressedCount, hookEvents + lostLines, 'every hook refusal (and records_lost report) is a line or in a suppressed count');
  t.equal(hookEvents + lost, 65536, 'the ring events and the lost count cover every port');
  const counted = lines(path.join(dir, 'counters.jsonl'))
    .filter((l) => l.kind === 'deny' && l.source === 'ebpf')
    .reduce((s, l) => s + (l.delta as number), 0);
  t.equal(counted, 65536, 'counters.jsonl counts all 65,536 denials');
});
