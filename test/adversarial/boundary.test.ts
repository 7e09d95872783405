// The ways out that are not a TCP or UDP connect/sendmsg (issue 23, classes
// 1-4): other IP protocols (ping sockets, UDP-Lite, SCTP, MPTCP, DCCP, raw),
// io_uring's socket creation, every socket family but AF_UNIX/AF_INET/
// AF_INET6, source routing (IP options, IPv6 routing headers), AF_UNIX to the
// host (path, abstract, datagram, relative and symlinked names), bind/listen,
// and a socket handed out of an operation that then ends. Each runs AS the
// workload (obj/adv/boundary) under `gensee run`, for both identities; bytes
// are counted at the listeners; refusals the hooks make are in faults.jsonl
// and events.jsonl; `gensee verify` holds.
import t from 'tap';
import type { Test } from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as dgram from 'node:dgram';
import * as path from 'node:path';
import { spawn, ChildProcess } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { IDENTITIES, Counter, Env, attackEnv, verify, worked, faultLines } from './lib';
import { GENSEE_BIN, requireKernel, sleep, waitFor } from '../helpers/kernel';

const BOUNDARY = path.join(PACKAGE_ROOT, 'obj', 'adv', 'boundary');

interface Report {
  attack: string;
  attempts: Record<string, string>;
  info: Record<string, number>;
}

/** a UDP socket on [::1] counting datagrams (conns) and bytes */
async function udp6Counter(t: Test): Promise<Counter> {
  const c: Counter = { port: 0, conns: 0, bytes: 0 };
  const sock = dgram.createSocket({ type: 'udp6', ipv6Only: true });
  sock.on('message', (m) => {
    c.conns++;
    c.bytes += m.length;
  });
  await new Promise<void>((res) => sock.bind(0, '::1', () => res()));
  c.port = sock.address().port;
  t.teardown(() => new Promise<void>((res) => sock.close(() => res())));
  return c;
}

/** an AF_UNIX stream listener at a path or an abstract name, counting connections and bytes */
async function unixCounter(t: Test, where: string): Promise<Counter> {
  const c: Counter = { port: 0, conns: 0, bytes: 0 };
  const socks = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    c.conns++;
    socks.add(s);
    s.on('data', (d: Buffer) => (c.bytes += d.length));
    s.on('error', () => undefined);
    s.on('close', () => socks.delete(s));
  });
  if (!where.startsWith('\0')) fs.rmSync(where, { force: true });
  await new Promise<void>((res) => srv.listen(where, () => res()));
  if (!where.startsWith('\0')) fs.chmodSync(where, 0o777); // any uid may connect: only the boundary stops it
  t.teardown(
    () =>
      new Promise<void>((res) => {
        for (const s of socks) s.destroy();
        srv.close(() => res());
      }),
  );
  return c;
}

/** a free loopback TCP port (bound and closed at once) */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', () => res()));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise<void>((res) => s.close(() => res()));
  return p;
}

/** obj/adv/boundary outside the boundary (sink, relay): its JSON lines as they come */
function helper(t: Test, args: string[]): { child: ChildProcess; lines: Record<string, unknown>[] } {
  const child = spawn(BOUNDARY, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      try {
        lines.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
      } catch {
        /* not ours */
      }
      buf = buf.slice(i + 1);
    }
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return { child, lines };
}

async function helperReport(h: { child: ChildProcess; lines: Record<string, unknown>[] }, mode: string): Promise<Report> {
  h.child.stdin!.end();
  await waitFor(() => h.lines.some((l) => l.attack === mode && 'attempts' in l), 30_000);
  return h.lines.find((l) => l.attack === mode && 'attempts' in l) as unknown as Report;
}

/** the policy of a run: attackEnv's (one TCP lease, one UDP grant) and more */
function policy(env: Env, more: Record<string, unknown>): string {
  const base = JSON.parse(fs.readFileSync(env.policy, 'utf8')) as Record<string, unknown[]>;
  const f = path.join(env.st, `policy-${Object.keys(more).join('-') || 'base'}.json`);
  const merged: Record<string, unknown> = { ...base, io_uring: false, ...more };
  if (Array.isArray(more.grants)) merged.grants = [...base.grants, ...more.grants];
  fs.writeFileSync(f, JSON.stringify(merged));
  return f;
}

interface Run {
  code: number | null;
  report?: Report;
  stderr: string;
}

/** `gensee run --policy P [identity] -- boundary MODE ARGS` */
function runBoundary(env: Env, pol: string, mode: string, identity: string[], args: string[]): Promise<Run> {
  const argv = ['run', '--state-dir', env.st, '--op', env.op, '--policy', pol, ...identity, '--', BOUNDARY, mode, '--token', env.op, ...args];
  return new Promise((resolve) => {
    const c = spawn(GENSEE_BIN, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => c.kill('SIGKILL'), 120_000);
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => {
      clearTimeout(timer);
      let report: Report | undefined;
      for (const l of out.split('\n')) {
        if (!l.startsWith('{"attack"')) continue;
        try {
          const j = JSON.parse(l) as Report;
          if (j.attack === mode && j.attempts) report = j;
        } catch {
          /* a line of gensee's own */
        }
      }
      resolve({ code, report, stderr: err });
    });
  });
}

function eventLines(env: Env): Record<string, unknown>[] {
  try {
    return fs
      .readFileSync(path.join(env.opDir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
}

/** the refusal lines a control left in faults.jsonl, and its boundary events (control: ebpf/<hook> or seccomp/<syscall>) */
function recorded(env: Env, control: string): { refusals: number; events: number } {
  const c = control.includes('/') ? control : `ebpf/${control}`;
  const refusals = faultLines(env).filter((l) => l.kind === 'refusal' && String(l.detail).includes(`${c})`)).length;
  const events = eventLines(env).filter((l) => (l.event as { control?: string } | undefined)?.control === c).length;
  return { refusals, events };
}

/** the common assertions: it ran, nothing worked, nothing reached the denied listeners, verify holds */
async function held(t: Test, env: Env, r: Run, mode: string, extra: Counter[] = []): Promise<Report | undefined> {
  t.ok(r.report, `${mode}: the attack ran and reported (exit ${r.code})`, { stderr: r.stderr.slice(-2000) });
  t.same(worked(r.report as never), [], `${mode}: every attempt was refused`, { attempts: r.report?.attempts });
  await sleep(150); // anything in flight on loopback lands
  t.equal(env.denied.bytes + env.denied.conns, 0, `${mode}: nothing reached the denied TCP listener`);
  t.equal(env.deniedUdp.conns, 0, `${mode}: no datagram reached the denied UDP listener`);
  for (const c of extra) t.equal(c.conns + c.bytes, 0, `${mode}: nothing reached the denied listener on ${c.port || 'its path'}`);
  const v = verify(env);
  t.equal(v.code, 0, `${mode}: gensee verify holds afterwards`, { verify: v.out.slice(-2000) });
  // a hook's or the filter's refusal is its egress_denied event; no gensee socket was involved
  t.same(eventLines(env).filter((l) => (l.event as { kind?: string } | undefined)?.kind === 'frame_rejected'), [], `${mode}: no frame_rejected event`);
  return r.report;
}

/** net.ipv4.ping_group_range open to every group, as systemd distributions ship it, for the test's length */
function pingForAll(t: Test): void {
  const f = '/proc/sys/net/ipv4/ping_group_range';
  const before = fs.readFileSync(f, 'utf8').trim();
  fs.writeFileSync(f, '0 2147483647');
  t.teardown(() => fs.writeFileSync(f, before.replace(/\s+/, ' ')));
}

for (const id of IDENTITIES) {
  t.test(`protocols, ${id.name}: ping sockets, UDP-Lite, SCTP, MPTCP, DCCP, raw and io_uring are refused`, async (t) => {
    if (!requireKernel(t)) return;
    pingForAll(t);
    const env = await attackEnv(t, 'adv-proto');
    const sinkPort = await freePort();
    const sink = helper(t, ['sink', '--sink', String(sinkPort)]);
    await waitFor(() => sink.lines.some((l) => l.phase === 'ready'), 10_000);
    const r = await runBoundary(env, policy(env, {}), 'protocols', id.flags, ['--port', String(env.denied.port), '--sink', String(sinkPort)]);
    const rep = await held(t, env, r, 'protocols');
    t.equal(rep?.info.udp_socket_ok, 1, 'a UDP socket is still the workload\'s');
    t.equal(rep?.attempts.io_uring_setup, 'ENOSYS', 'io_uring is refused without the policy saying io_uring: true');
    t.equal(recorded(env, 'seccomp/io_uring_setup').refusals, 1, 'and that refusal is in faults.jsonl');
    const counted = await helperReport(sink, 'sink');
    t.same(
      { udplite4: counted.info.udplite4, udplite6: counted.info.udplite6, icmp4: counted.info.icmp4, icmp6: counted.info.icmp6 },
      { udplite4: 0, udplite6: 0, icmp4: 0, icmp6: 0 },
      'no UDP-Lite datagram and no ICMP echo carrying the payload arrived',
    );
    const rec = recorded(env, 'socket');
    t.ok(rec.refusals >= 4, `the socket() refusals are in faults.jsonl (${rec.refusals})`);
    t.ok(rec.events >= 4, `and in events.jsonl (${rec.events})`);
  });

  t.test(`families, ${id.name}: no socket of another family, whatever the register holds`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-fam');
    const r = await runBoundary(env, policy(env, {}), 'families', id.flags, []);
    const rep = await held(t, env, r, 'families');
    t.equal(rep?.info.socketpair_unix_ok, 1, 'socketpair(AF_UNIX) is still the workload\'s');
    t.equal(rep?.attempts.socket_af40, 'EAFNOSUPPORT', 'AF_VSOCK: EAFNOSUPPORT');
    t.equal(rep?.attempts.socket_af16, 'EAFNOSUPPORT', 'AF_NETLINK: EAFNOSUPPORT');
    const rec = recorded(env, 'seccomp/socket');
    t.ok(rec.refusals >= 40, `every refused socket() is in faults.jsonl (${rec.refusals})`);
    t.ok(recorded(env, 'seccomp/socketpair').refusals >= 2, 'and the refused socketpair() calls');
  });

  t.test(`routing, ${id.name}: no IPv4 source route and no IPv6 routing header leaves`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-route');
    const allowed6 = await udp6Counter(t);
    const pol = policy(env, { grants: [{ network: { protocol: 'udp', address: '::1', port: allowed6.port } }] });
    const r = await runBoundary(env, pol, 'routing', id.flags, ['--auport', String(env.allowedUdp.port), '--auport6', String(allowed6.port)]);
    const rep = await held(t, env, r, 'routing');
    t.equal(rep?.info.control_sent, 2, 'the two plain datagrams were sent');
    await waitFor(() => env.allowedUdp.conns + allowed6.conns >= 2, 5000).catch(() => undefined);
    t.equal(env.allowedUdp.conns, 1, 'the allowed IPv4 listener got the plain datagram and nothing routed');
    t.equal(allowed6.conns, 1, 'the allowed IPv6 listener got the plain datagram and nothing routed');
    const rec = recorded(env, 'setsockopt');
    t.equal(rec.refusals, 2, 'both socket options refused and recorded in faults.jsonl');
  });

  t.test(`unix, ${id.name}: no host path, abstract or datagram socket by any name`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-unix');
    const base = `/tmp/gs-${env.op}`;
    const host = await unixCounter(t, `${base}.sock`);
    const abs = await unixCounter(t, `\0gs-${env.op}`);
    const ruled = await unixCounter(t, `${base}-ok.sock`);
    const sink = helper(t, ['sink', '--dpath', `${base}.dgram`]);
    await waitFor(() => sink.lines.some((l) => l.phase === 'ready'), 10_000);
    const pol = policy(env, { unix: [{ path: `${base}-ok.sock` }] });
    const r = await runBoundary(env, pol, 'unix', id.flags, ['--path', `${base}.sock`, '--dpath', `${base}.dgram`, '--abstract', `gs-${env.op}`, '--apath', `${base}-ok.sock`]);
    const rep = await held(t, env, r, 'unix', [host, abs]);
    const counted = await helperReport(sink, 'sink');
    t.equal(counted.info.unix_dgram, 0, 'no datagram reached the host datagram socket');
    t.equal(rep?.info.ruled_connect_ok, 1, 'the socket a unix rule names is reached');
    await waitFor(() => ruled.conns >= 1, 5000).catch(() => undefined);
    t.equal(ruled.conns, 1, 'and its listener counted the connection');
    t.equal(rep?.info.socketpair_ok, 1, 'socketpair is the workload\'s');
    const rec = recorded(env, 'connect_unix');
    t.ok(rec.refusals >= 4, `the unix connects refused are in faults.jsonl (${rec.refusals})`);
    t.ok(recorded(env, 'sendmsg_unix').refusals >= 1, 'the datagram refused is in faults.jsonl');
  });

  t.test(`bind, ${id.name}: no bind or listen on a port no listen rule names`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-bind');
    const bport = await freePort();
    const r = await runBoundary(env, policy(env, {}), 'bind', id.flags, ['--bport', String(bport)]);
    await held(t, env, r, 'bind');
    t.ok(recorded(env, 'bind4').refusals >= 2, 'the binds refused are in faults.jsonl');
    t.ok(recorded(env, 'seccomp/listen').refusals >= 1, 'and the listen() calls refused without a listen rule');
    // with a listen rule: that port works, the others still do not
    const env2 = await attackEnv(t, 'adv-bind2');
    const lport = await freePort();
    const pol = policy(env2, { listen: [{ protocol: 'tcp', port: lport }] });
    const r2 = await runBoundary(env2, pol, 'bind', id.flags, ['--bport', String(bport), '--lport', String(lport)]);
    const rep2 = r2.report;
    t.equal(rep2?.info.ruled_listen_ok, 1, 'the port a listen rule names can be bound and listened on');
    // (listen() itself is allowed once a listen rule exists: on a socket the
    // kernel binds, no hook sees the port; docs/workload.md says so)
    t.same(
      ['bind_tcp4', 'bind_tcp6', 'bind_udp4'].map((k) => rep2?.attempts[k] === 'ok'),
      [false, false, false],
      'an unruled port still cannot be bound',
      { attempts: rep2?.attempts },
    );
  });

  t.test(`handoff, ${id.name}: a socket handed out of an operation sends nothing once it ends`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-hand');
    const relayPath = `/tmp/gs-${env.op}-relay.sock`;
    const relay = helper(t, ['relay', '--path', relayPath, '--port', String(env.denied.port), '--uport', String(env.deniedUdp.port)]);
    await waitFor(() => relay.lines.some((l) => l.phase === 'listening'), 10_000);
    const pol = policy(env, { unix: [{ path: relayPath }] });
    const r = await runBoundary(env, pol, 'handoff', id.flags, ['--path', relayPath]);
    t.equal(r.report?.info.handed_over, 1, 'the workload handed a TCP and a UDP socket out', { stderr: r.stderr.slice(-2000) });
    await waitFor(() => relay.lines.some((l) => l.phase === 'ready'), 10_000);
    // gensee run has returned: the operation has ended, its hooks are gone
    const rep = await helperReport(relay, 'relay');
    t.equal(rep.info.received, 1, 'the relay holds both sockets');
    t.same(worked(rep as never), [], 'neither socket reaches anything after its operation ended', { attempts: rep.attempts });
    await sleep(150);
    t.equal(env.denied.conns + env.denied.bytes, 0, 'nothing reached the denied TCP listener');
    t.equal(env.deniedUdp.conns, 0, 'no datagram reached the denied UDP listener');
  });
}
