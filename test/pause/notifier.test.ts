// The seccomp pause on the real kernel: a workload under gensee-exec makes
// real calls; the addon's notify loop answers the leased ones in C and
// raises the rest, and whatever it answers still meets the eBPF hook.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { requireKernel, testOp, tcpServer, udpServer, PROBE, waitFor, sleep } from '../helpers/kernel';
import { launchOnOp } from '../helpers/launch';
import { pinDirFor } from '../../src/bpffs';
import { bootNs } from '../../src/dataplane';
import { parseDestination, Tuple } from '../../src/addr';
import { encodeLeaseKey } from '../../src/abi';
import { decodeFault } from '../../src/protocol/codec';
import { readStartTimeTicks } from '../../src/resolver/subject';
import { launchUnderBoundary, Launched } from '../../src/pause/launch';
import { PausedCall, REFUSAL_ERRNO } from '../../src/pause/notifier';

const { EACCES, ECONNREFUSED } = os.constants.errno;

interface Workload {
  l: Launched;
  faults: PausedCall[];
  /** start time of each fault's pid, read by the test while the call was paused */
  startTimes: (number | null)[];
  /** CMD's host pid, read while each call was paused */
  cmdPids: (number | null)[];
  out(): string;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

type Tap = Parameters<typeof testOp>[0];

/** Start argv under the boundary; each fault goes to onFault (default: queue only). */
async function workload(t: Tap, op: { op: string; cgroup: string }, argv: string[], onFault?: (f: PausedCall, w: Workload) => void): Promise<Workload> {
  const faults: PausedCall[] = [];
  const startTimes: (number | null)[] = [];
  const cmdPids: (number | null)[] = [];
  // eslint-disable-next-line prefer-const -- onFault closes over w, which is built from what launchOnOp returns
  let w: Workload;
  const run = await launchOnOp(t, op, argv, (f, l) => {
    faults.push(f);
    startTimes.push(readStartTimeTicks(f.pid));
    cmdPids.push(l.cmdPid());
    onFault?.(f, w);
  });
  w = { l: run.l, faults, startTimes, cmdPids, out: run.stdout, done: run.done };
  return w;
}

function results(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { result?: string })
    .filter((x) => x.result)
    .map((x) => x.result!);
}

function dest(proto: 'tcp' | 'udp', host: string, port: number): Tuple {
  return parseDestination(proto, host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
}

t.test('seccomp pause', async (t) => {
  if (!requireKernel(t)) return;

  await t.test('kernel features: SYNC_WAKE_UP and WAIT_KILLABLE_RECV are on', async (t) => {
    const o = testOp(t, 'gs-nf');
    const w = await workload(t, o, ['true']);
    const [maj, min] = os.release().split('.').map(Number);
    if (maj > 6 || (maj === 6 && min >= 6)) t.equal(w.l.notifier!.syncWakeUp, true, 'SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6+)');
    if (maj > 5 || (maj === 5 && min >= 19)) t.equal(w.l.waitKillable, true, 'SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19+)');
    await w.done;
  });

  await t.test('fast path: exact lease in the map → CONTINUE in C, no JavaScript hop', async (t) => {
    const o = testOp(t, 'gs-nf');
    const srv = await tcpServer(t);
    o.dp.putLease({ tuple: dest('tcp', '127.0.0.1', srv.port), generation: 1n });
    const w = await workload(t, o, [PROBE, '--repeat', '3', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
    const r = await w.done;
    t.same(results(r.stdout), ['ok', 'ok', 'ok'], 'all three connect');
    t.equal(w.faults.length, 0, 'onFault never called');
    const st = w.l.notifier!.stats();
    t.equal(st.fastPath, 3, 'three fast-path answers');
    t.equal(st.slowPath, 0, 'no slow path');
    await waitFor(() => srv.accepted() === 3, 2000).catch(() => undefined); // accept runs on our loop
    t.equal(srv.accepted(), 3, 'the server saw three connections');
  });

  await t.test('slow path: the fault names the caller and the exact tuple', async (t) => {
    const o = testOp(t, 'gs-nf');
    const srv = await tcpServer(t);
    const w = await workload(t, o, [PROBE, 'connect', 'tcp', '127.0.0.1', String(srv.port)], (f, w) => w.l.notifier!.respond(f.id, 'continue'));
    const r = await w.done;
    t.equal(w.faults.length, 1, 'one fault');
    const f = w.faults[0];
    t.match(f, { syscall: 'connect', family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: srv.port, pid: w.cmdPids[0], tgid: w.cmdPids[0] });
    t.not(w.cmdPids[0], w.l.pid, "CMD is gensee-exec's grandchild, not the launcher itself");
    t.equal(typeof f.id, 'bigint');
    t.equal(f.startTimeTicks, BigInt(w.startTimes[0] ?? -1), 'startTimeTicks is field 22 of /proc/PID/stat');
    t.ok(f.observedAtBootNs > 0n && f.observedAtBootNs <= bootNs(), 'observed on CLOCK_BOOTTIME');
    t.equal(f.cgroupId, BigInt(fs.statSync(o.cgroup).ino), 'cgroup id of the operation cgroup');
    t.equal(f.faultId, `sn-${w.cmdPids[0]}-1`);
    t.same(f.leaseKey, encodeLeaseKey(dest('tcp', '127.0.0.1', srv.port)), 'lease key as the hook keys it');
    const d = decodeFault(f.fault!);
    t.ok(d.ok, `fault protobuf decodes strictly ${d.ok ? '' : d.detail}`);
    if (d.ok) {
      t.match(d.fault, {
        schema: 2,
        operation_id: o.op,
        fault_id: f.faultId,
        subject: { process: { pid: w.cmdPids[0] } },
        effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: srv.port } },
        source: 'seccomp_notify',
      });
      t.equal(d.fault.observed_at_boot_ns, f.observedAtBootNs);
      t.equal(d.fault.cgroup_id, f.cgroupId);
    }
    t.same(results(r.stdout), ['EPERM'], 'CONTINUE without a lease meets the hook: EPERM');
    t.equal(srv.accepted(), 0);
    t.match(w.l.notifier!.stats(), { slowPath: 1, continued: 1, fastPath: 0, pending: 0 });
  });

  await t.test('slow path: lease installed before CONTINUE → the retried call succeeds', async (t) => {
    const o = testOp(t, 'gs-nf');
    const srv = await tcpServer(t);
    const w = await workload(t, o, [PROBE, '--repeat', '2', 'connect', 'tcp', '127.0.0.1', String(srv.port)], (f, w) => {
      o.dp.putLease({ tuple: dest(f.protocol, f.address, f.port), generation: 3n });
      w.l.notifier!.respond(f.id, 'continue');
    });
    const r = await w.done;
    t.same(results(r.stdout), ['ok', 'ok'], 'both connect');
    t.equal(w.faults.length, 1, 'one fault; the second call found the lease');
    t.match(w.l.notifier!.stats(), { slowPath: 1, fastPath: 1, continued: 1 });
    await waitFor(() => srv.accepted() === 2, 2000).catch(() => undefined);
    t.equal(srv.accepted(), 2);
  });

  await t.test('respond(id, EACCES): the application sees EACCES', async (t) => {
    const o = testOp(t, 'gs-nf');
    const srv = await tcpServer(t);
    const w = await workload(t, o, [PROBE, 'connect', 'tcp', '127.0.0.1', String(srv.port)], (f, w) => w.l.notifier!.respond(f.id, EACCES));
    const r = await w.done;
    t.same(results(r.stdout), ['EACCES']);
    t.equal(REFUSAL_ERRNO.deny, EACCES, 'deny maps to EACCES');
    t.match(w.l.notifier!.stats(), { refused: 1, continued: 0 });
  });

  await t.test('udp sendto and IPv6 and v4-mapped destinations', async (t) => {
    const cases = [
      { argv: ['sendto', 'udp', '127.0.0.1'], host: '127.0.0.1', syscall: 'sendto', family: 'ipv4', address: '127.0.0.1' },
      { argv: ['connect', 'tcp', '::1'], host: '::1', syscall: 'connect', family: 'ipv6', address: '::1' },
      { argv: ['--v6sock', 'connect', 'tcp', '::ffff:127.0.0.1'], host: '127.0.0.1', syscall: 'connect', family: 'ipv4', address: '127.0.0.1' },
    ] as const;
    for (const c of cases) {
      const o = testOp(t, 'gs-nf');
      const proto = (c.argv as readonly string[]).includes('udp') ? 'udp' : 'tcp';
      const srv = proto === 'udp' ? await udpServer(t, c.host) : await tcpServer(t, c.host);
      const argv = [...c.argv];
      const w = await workload(t, o, [PROBE, ...argv, String(srv.port)], (f, w) => {
        o.dp.putLease({ tuple: dest(f.protocol, f.address, f.port), generation: 1n });
        w.l.notifier!.respond(f.id, 'continue');
      });
      const r = await w.done;
      t.same(results(r.stdout), ['ok'], `${c.argv.join(' ')}: succeeds after the lease`);
      t.match(w.faults, [{ syscall: c.syscall, family: c.family, protocol: proto, address: c.address, port: srv.port }], `${c.argv.join(' ')}: fault tuple`);
      if ('received' in srv) await waitFor(() => srv.received() === 1, 2000).then(() => t.pass('datagram delivered'), () => t.fail('datagram not delivered'));
    }
  });

  await t.test('AF_UNIX connect passes without a fault', async (t) => {
    const o = testOp(t, 'gs-nf');
    // the socket must be one a unix rule names: the connect_unix hook refuses any other
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-nfu-')); // short: sun_path is 108 bytes
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const sock = path.join(dir, 's');
    const srv = net.createServer((s) => s.end('hi'));
    await new Promise<void>((r) => srv.listen(sock, () => r()));
    // the workload is an unprivileged uid on the host: let it reach the socket
    fs.chmodSync(dir, 0o711);
    fs.chmodSync(sock, 0o666);
    t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
    o.dp.setRules([], [{ path: sock }]);
    const script = `require('net').connect(${JSON.stringify(sock)}).on('data', (d) => { console.log(String(d)); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(1) })`;
    const w = await workload(t, o, [process.execPath, '-e', script], (f, w) => w.l.notifier!.respond(f.id, EACCES));
    const r = await w.done;
    t.equal(r.stdout.trim(), 'hi', 'connected over the unix socket');
    t.equal(w.faults.length, 0, 'no fault');
    t.ok(w.l.notifier!.stats().passthrough >= 1, 'answered as pass-through');
  });

  await t.test('target killed while paused: respond returns false, counted as gone', async (t) => {
    const o = testOp(t, 'gs-nf');
    const srv = await tcpServer(t);
    const w = await workload(t, o, [PROBE, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
    await waitFor(() => w.faults.length === 1, 5000);
    t.equal(w.l.notifier!.stats().pending, 1, 'one call paused');
    w.l.child.kill('SIGKILL');
    await w.done;
    t.equal(w.l.notifier!.respond(w.faults[0].id, 'continue'), false, 'respond reports the caller gone');
    t.match(w.l.notifier!.stats(), { gone: 1, continued: 0, pending: 0 });
    t.throws(() => w.l.notifier!.respond(w.faults[0].id, 'continue'), { code: 'EINVAL' }, 'a second answer is an error: not pending');
    t.equal(srv.accepted(), 0);
  });

  await t.test('close() refuses every pending call (never a silent allow)', async (t) => {
    const o = testOp(t, 'gs-nf');
    const srv = await tcpServer(t);
    o.dp.putLease({ tuple: dest('tcp', '127.0.0.1', srv.port), generation: 1n, ttlMs: 1 });
    await sleep(5); // expired: the C fast path must not take it
    const w = await workload(t, o, [PROBE, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
    await waitFor(() => w.faults.length === 1, 5000);
    t.equal(w.l.notifier!.close(ECONNREFUSED), 1, 'one pending call refused');
    const r = await w.done;
    t.same(results(r.stdout), ['ECONNREFUSED'], 'the application sees the close errno');
    t.equal(w.l.notifier!.respond(w.faults[0].id, 'continue'), false, 'respond after close is a no-op');
    t.match(w.l.notifier!.stats(), { refused: 1, pending: 0, polling: false });
    t.equal(srv.accepted(), 0);
  });

  await t.test('the notifier stops by itself when the workload is gone', async (t) => {
    const o = testOp(t, 'gs-nf');
    let stopped: unknown = 'no';
    const l = await launchUnderBoundary({
      cgroupPath: o.cgroup,
      pinDir: pinDirFor(o.op),
      argv: ['true'],
      stdio: ['ignore', 'ignore', 'ignore'],
      onFault: () => undefined,
      onStop: (err) => (stopped = err),
    });
    t.teardown(() => l.notifier?.close());
    await l.exited;
    await waitFor(() => stopped !== 'no', 5000);
    t.equal(stopped, undefined, 'onStop() without an error');
    t.equal(l.notifier!.stats().polling, false, 'no longer polling');
  });
});
