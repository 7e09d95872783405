// The seccomp pause of sendmsg(2) and sendmmsg(2) on the real kernel, under
// the bare notifier (launchUnderBoundary) and end to end under `gensee run`.
//
// sendmmsg carries one destination per message. The notify loop
// (addon/notify.c locate_sockaddr) looks at the FIRST message's destination
// only; the rest are decided by the cgroup/sendmsg4 hook, message by message,
// on the kernel's own copy. The kernel stops a sendmmsg at the first message
// that fails and returns how many went before it (that error is lost). So a
// call to [allowed, denied, allowed2] pauses once, for `allowed`; the retried
// call delivers message 0, the hook refuses message 1 (EPERM, no pause: in
// `gensee run` the hook's refusal becomes a cgroup_hook fault), message 2 is
// never attempted, and the caller sees 1 sent. A caller that resumes from
// the first unsent message (gs-probe --resume) then pauses on `denied`
// (refused: EACCES), skips it, and pauses on `allowed2` (leased, delivered).
// Whatever the sequence, no byte reaches the denied listener.
import t from 'tap';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { requireKernel, testOp, uniqueName, GENSEE_BIN, PROBE, waitFor, sleep } from '../helpers/kernel';
import { shortStateDir, faultLines } from '../helpers/supervisor';
import { launchOnOp } from '../helpers/launch';
import { parseDestination } from '../../src/addr';
import type { PausedCall } from '../../src/pause/notifier';

const { EACCES } = os.constants.errno;

type Tap = Parameters<typeof testOp>[0];

/** A UDP listener on 127.0.0.1 that keeps every payload it receives. */
async function listener(t: Tap): Promise<{ port: number; got: string[] }> {
  const got: string[] = [];
  const sock = dgram.createSocket('udp4');
  sock.on('message', (m) => got.push(m.toString()));
  await new Promise<void>((res) => sock.bind(0, '127.0.0.1', () => res()));
  t.teardown(() => new Promise<void>((res) => sock.close(() => res())));
  return { port: sock.address().port, got };
}

/** gs-probe's JSON lines after its {pid} line */
function probeLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => !('pid' in l) && !('event' in l));
}

/** A datagram in flight on loopback is queued by the time the call returns; give the event loop a turn to read it. */
async function settle(): Promise<void> {
  await sleep(50);
}

/**
 * Run argv under the bare notifier. `allow` ports are leased and continued,
 * every other paused call is answered EACCES (what a deny maps to).
 */
async function underNotifier(t: Tap, argv: string[], allow: number[]): Promise<{ faults: PausedCall[]; lines: Record<string, unknown>[]; stderr: string }> {
  const o = testOp(t, 'gs-smsg');
  const faults: PausedCall[] = [];
  const run = await launchOnOp(t, o, argv, (f, l) => {
    faults.push(f);
    if (allow.includes(f.port)) {
      o.dp.putLease({ tuple: parseDestination(f.protocol, `${f.address}:${f.port}`), generation: 1n, ttlMs: 60_000 });
      l.notifier!.respond(f.id, 'continue');
    } else {
      l.notifier!.respond(f.id, EACCES);
    }
  });
  const { stdout, stderr } = await run.done;
  await settle();
  return { faults, lines: probeLines(stdout), stderr };
}

t.test('sendmsg and sendmmsg under the bare notifier', async (t) => {
  if (!requireKernel(t)) return;

  await t.test('sendmsg: pause → fault naming the destination → lease → the retried call delivers', async (t) => {
    const a = await listener(t);
    const r = await underNotifier(t, [PROBE, '--repeat', '2', 'sendmsg', 'udp', '127.0.0.1', String(a.port)], [a.port]);
    t.match(r.lines, [{ result: 'ok' }, { result: 'ok' }], `both sendmsg calls succeed ${r.stderr}`);
    t.equal(r.faults.length, 1, 'one pause; the second call found the lease on the C fast path');
    t.match(r.faults[0], { syscall: 'sendmsg', family: 'ipv4', protocol: 'udp', address: '127.0.0.1', port: a.port }, 'the fault names the exact destination from msg_name');
    t.same(a.got, ['gensee-probe', 'gensee-probe'], 'both datagrams arrived');
  });

  await t.test('sendmsg: deny → EACCES, no datagram', async (t) => {
    const d = await listener(t);
    const r = await underNotifier(t, [PROBE, 'sendmsg', 'udp', '127.0.0.1', String(d.port)], []);
    t.match(r.lines, [{ result: 'EACCES' }], 'the caller sees EACCES');
    t.match(r.faults, [{ syscall: 'sendmsg', address: '127.0.0.1', port: d.port }], 'one fault for the destination');
    t.same(d.got, [], 'nothing arrived');
  });

  await t.test('sendmmsg: one call to [allowed, denied, allowed2] pauses on the first destination only', async (t) => {
    const a = await listener(t);
    const d = await listener(t);
    const b = await listener(t);
    const r = await underNotifier(t, [PROBE, 'sendmmsg', 'udp', '127.0.0.1', String(a.port), '127.0.0.1', String(d.port), '127.0.0.1', String(b.port)], [a.port, b.port]);
    t.match(r.faults, [{ syscall: 'sendmmsg', family: 'ipv4', protocol: 'udp', address: '127.0.0.1', port: a.port }], 'exactly one fault, for message 0\'s destination');
    t.equal(r.faults.length, 1, 'messages 1 and 2 never paused');
    t.same(r.lines, [{ call: 'sendmmsg', first: 0, n: 3, sent: 1, result: 'partial', errno: 0 }], 'the kernel reports 1 sent: the hook refused message 1 and the call stopped there');
    t.same(a.got, ['gensee-mmsg-0'], 'allowed: message 0 delivered');
    t.same(d.got, [], 'denied: nothing (the sendmsg4 hook refused message 1 on its own)');
    t.same(b.got, [], 'allowed2: nothing, message 2 was never attempted');
  });

  await t.test('sendmmsg --resume: each destination gets its own pause and answer', async (t) => {
    const a = await listener(t);
    const d = await listener(t);
    const b = await listener(t);
    const r = await underNotifier(t, [PROBE, '--resume', 'sendmmsg', 'udp', '127.0.0.1', String(a.port), '127.0.0.1', String(d.port), '127.0.0.1', String(b.port)], [a.port, b.port]);
    t.same(r.faults.map((f) => [f.syscall, f.port]), [['sendmmsg', a.port], ['sendmmsg', d.port], ['sendmmsg', b.port]], 'three pauses, one per destination, in order');
    t.same(r.lines, [
      { call: 'sendmmsg', first: 0, n: 3, sent: 1, result: 'partial', errno: 0 },
      { call: 'sendmmsg', first: 1, n: 2, sent: 0, result: 'EACCES', errno: EACCES },
      { call: 'sendmmsg', first: 2, n: 1, sent: 1, result: 'ok', errno: 0 },
    ], 'partial, refused at the pause (EACCES), then delivered');
    t.same(a.got, ['gensee-mmsg-0'], 'allowed: delivered');
    t.same(b.got, ['gensee-mmsg-2'], 'allowed2: delivered after its own lease');
    t.same(d.got, [], 'denied: nothing');
  });
});

interface RunResult {
  code: number | null;
  lines: Record<string, unknown>[];
  stderr: string;
}

function gensee(args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    const c = spawn(GENSEE_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => resolve({ code, lines: probeLines(out), stderr: err }));
  });
}

interface FaultLine {
  kind: string;
  fault_id: string;
  fault?: { source: string; effect: { network: { address: string; port: number; protocol: string } } };
  resolution?: { action: string; reason: string; lease?: { address: string; port: number; protocol: string } };
}

/**
 * Each fault of the run with its resolution, [source, port, action, reason],
 * in log order. A hook refusal reaches the resolver after the call returned;
 * when the caller has exited by then its subject no longer validates, so its
 * deny reason is policy_denied or invalid_subject depending on timing: it
 * reads "deny:hook" here.
 */
function decided(st: string, op: string): [string, number, string, string][] {
  const lines = faultLines(st, op) as unknown as FaultLine[];
  const res = new Map(lines.filter((l) => l.kind === 'resolution').map((l) => [l.fault_id, l.resolution!]));
  return lines
    .filter((l) => l.kind === 'fault')
    .map((l) => {
      const r = res.get(l.fault_id);
      const reason = r && l.fault!.source === 'cgroup_hook' && r.action === 'deny' && ['policy_denied', 'invalid_subject'].includes(r.reason) ? 'deny:hook' : r?.reason ?? '-';
      return [l.fault!.source, l.fault!.effect.network.port, r?.action ?? '-', reason];
    });
}

t.test('sendmsg and sendmmsg under gensee run with a policy', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const a = await listener(t);
  const d = await listener(t);
  const b = await listener(t);
  const policy = path.join(st, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({
    schema: 1,
    grants: [],
    leases: [{ network: { protocol: 'udp', cidr: '127.0.0.1/32', ports: String(a.port) }, ttl_s: 60 }, { network: { protocol: 'udp', cidr: '127.0.0.1/32', ports: String(b.port) }, ttl_s: 60 }],
    delegate: [],
  }));
  const run = async (argv: string[]) => {
    const op = uniqueName('gs-smr');
    const r = await gensee(['run', '--state-dir', st, '--op', op, '--policy', policy, '--json', '--', PROBE, ...argv]);
    t.equal(r.code, 0, `gensee run exits with the probe's code ${r.stderr}`);
    await settle();
    return { op, r };
  };

  await t.test('sendmsg: lease, then retry delivers; deny: EACCES and nothing delivered', async (t) => {
    const ok = await run(['sendmsg', 'udp', '127.0.0.1', String(a.port)]);
    t.match(ok.r.lines, [{ result: 'ok' }], 'sendmsg to the leased destination succeeds');
    const okLines = faultLines(st, ok.op) as unknown as FaultLine[];
    t.match(okLines.find((l) => l.kind === 'fault'), { fault: { source: 'seccomp_notify', effect: { network: { protocol: 'udp', address: '127.0.0.1', port: a.port } } } }, 'the fault names the exact destination');
    t.match(okLines.find((l) => l.kind === 'resolution'), { resolution: { action: 'retry_after_lease', lease: { protocol: 'udp', address: '127.0.0.1', port: a.port } } }, 'resolved with an exact lease');
    await waitFor(() => a.got.length === 1, 2000).catch(() => undefined);
    t.same(a.got, ['gensee-probe'], 'the datagram arrived');

    const no = await run(['sendmsg', 'udp', '127.0.0.1', String(d.port)]);
    t.match(no.r.lines, [{ result: 'EACCES' }], 'sendmsg to an unleased destination: EACCES');
    t.same(decided(st, no.op), [['seccomp_notify', d.port, 'deny', 'policy_denied']], 'one fault, denied by policy');
    t.same(d.got, [], 'nothing arrived');
  });

  await t.test('sendmmsg to [allowed, denied, allowed2]: what is delivered, and each destination\'s fault', async (t) => {
    a.got.length = 0;
    const one = await run(['sendmmsg', 'udp', '127.0.0.1', String(a.port), '127.0.0.1', String(d.port), '127.0.0.1', String(b.port)]);
    t.same(one.r.lines, [{ call: 'sendmmsg', first: 0, n: 3, sent: 1, result: 'partial', errno: 0 }], 'one call: 1 sent');
    // the hook's refusal of message 1 reaches the resolver through the ring buffer, after the call
    await waitFor(() => decided(st, one.op).length === 2 && decided(st, one.op).every((x) => x[2] !== '-'), 3000).catch(() => undefined);
    t.same(decided(st, one.op), [
      ['seccomp_notify', a.port, 'retry_after_lease', 'lease_installed'],
      ['cgroup_hook', d.port, 'deny', 'deny:hook'],
    ], 'allowed: paused and leased; denied: refused by the sendmsg4 hook (no pause) and recorded; allowed2: no fault, never attempted');
    await waitFor(() => a.got.length === 1, 2000).catch(() => undefined);
    t.same(a.got, ['gensee-mmsg-0'], 'allowed: message 0 delivered');
    t.same(b.got, [], 'allowed2: nothing');

    a.got.length = 0;
    const all = await run(['--resume', 'sendmmsg', 'udp', '127.0.0.1', String(a.port), '127.0.0.1', String(d.port), '127.0.0.1', String(b.port)]);
    t.same(all.r.lines, [
      { call: 'sendmmsg', first: 0, n: 3, sent: 1, result: 'partial', errno: 0 },
      { call: 'sendmmsg', first: 1, n: 2, sent: 0, result: 'EACCES', errno: EACCES },
      { call: 'sendmmsg', first: 2, n: 1, sent: 1, result: 'ok', errno: 0 },
    ], 'resumed: partial, EACCES for denied, then allowed2 delivered');
    await waitFor(() => decided(st, all.op).length === 4 && decided(st, all.op).every((x) => x[2] !== '-'), 3000).catch(() => undefined);
    const got = decided(st, all.op);
    t.same(got.filter((x) => x[0] === 'seccomp_notify'), [
      ['seccomp_notify', a.port, 'retry_after_lease', 'lease_installed'],
      ['seccomp_notify', d.port, 'deny', 'policy_denied'],
      ['seccomp_notify', b.port, 'retry_after_lease', 'lease_installed'],
    ], 'one paused fault per destination, each with its own resolution');
    t.same(got.filter((x) => x[0] === 'cgroup_hook'), [['cgroup_hook', d.port, 'deny', 'deny:hook']], 'and the hook\'s refusal of message 1 in the first call');
    await waitFor(() => a.got.length === 1 && b.got.length === 1, 2000).catch(() => undefined);
    t.same(a.got, ['gensee-mmsg-0'], 'allowed: delivered');
    t.same(b.got, ['gensee-mmsg-2'], 'allowed2: delivered');
  });

  t.same(d.got, [], 'no datagram ever reached the denied listener');
});
