// Deadlines gensee promises, measured tight. The tests assert each promise
// with a generous bound (never before the limit, within 10 s) so that a
// loaded runner cannot fail them; here is how close to the limit they come:
// - frame limit: a frame not complete 2 s after its first byte is refused
//   (readFrame on a unix socket; and the supervisor socket, with the fault
//   latency of a good client while slow ones trickle, against an idle run)
// - fault deadline: a paused call with no authenticated answer is refused
//   ETIMEDOUT at fault_deadline_ms (the adapter's own time and the workload's)
// - lease expiry: refused by the hook from the instant of expiry; removed
//   from the kernel map by a reading, promised within one sampling period;
//   and the period between readings itself
// - OCI listener: a connection without a complete state within the state
//   deadline is refused; a bad one meanwhile is refused at once
// - and a speed figure the tests no longer assert: ChainedLog.open of a large
//   log reads its tail (against reading the whole file)
// Each row prints the promise, min / p50 / max, and p50 and max over the promise.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { PACKAGE_ROOT } from '../src/addon';
import { findCgroup2Mount, removeCgroup } from '../src/cgroup';
import { attachHooks, detachHooks, bootNs } from '../src/dataplane';
import { pinDirFor } from '../src/bpffs';
import { Supervisor } from '../src/supervisor';
import { parsePolicy, policyHash } from '../src/protocol/json';
import { readFrame, FRAME_TIMEOUT_MS } from '../src/protocol/framing';
import { encodeFault } from '../src/protocol/codec';
import type { Fault } from '../src/protocol/types';
import { submitFault } from '../src/resolver/client';
import { readStartTimeTicks } from '../src/resolver/subject';
import { readKey } from '../src/state/operation';
import { ChainedLog } from '../src/evidence/chain';
import { launchUnderBoundary } from '../src/pause/launch';
import { PauseAdapter } from '../src/pause/adapter';
import { pauseAddon } from '../src/pause/notifier';
import { OciListener } from '../src/oci/listener';
import { median, percentile, print } from './util';

const PROBE = path.join(PACKAGE_ROOT, 'obj', 'gs-probe');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

type Row = (string | number)[];

/** one row: what, promise, n, min, p50, max, p50/promise, max/promise */
function deadlineRow(what: string, promiseMs: number, xs: number[]): Row {
  const s = [...xs].sort((a, b) => a - b);
  const p50 = median(s);
  return [what, promiseMs, s.length, s[0].toFixed(1), p50.toFixed(1), s[s.length - 1].toFixed(1), (p50 / promiseMs).toFixed(3), (s[s.length - 1] / promiseMs).toFixed(3)];
}
const DEADLINE_HEADER = ['deadline', 'promise ms', 'n', 'min ms', 'p50 ms', 'max ms', 'p50/promise', 'max/promise'];

function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join('/tmp', prefix));
}

/** a unix socket server that reads one frame per connection with readFrame; resolves each cut's first byte → refusal time */
async function frameLimit(trials: number): Promise<number[]> {
  const dir = tmpDir('gs-bd-');
  const sock = path.join(dir, 'f.sock');
  const cuts: number[] = [];
  const server = net.createServer((s) => {
    s.on('error', () => undefined);
    let first = 0;
    s.once('data', () => (first = nowMs()));
    readFrame(s).then(
      () => s.destroy(),
      (e: { code?: string }) => {
        if (e.code === 'frame_timeout' && first) cuts.push(nowMs() - first);
        s.destroy();
      },
    );
  });
  await new Promise<void>((r) => server.listen(sock, r));
  try {
    // every client trickles a 13-byte frame at 1 byte a second, all at once
    await Promise.all(
      Array.from({ length: trials }, async () => {
        const c = net.createConnection(sock);
        c.on('error', () => undefined);
        await new Promise<void>((r) => c.once('connect', () => r()));
        const frame = Buffer.concat([Buffer.from([0, 0, 0, 9]), Buffer.from('slowloris')]);
        for (let i = 0; i < frame.length && !c.destroyed; i++) {
          c.write(frame.subarray(i, i + 1));
          await new Promise<void>((r) => {
            const t = setTimeout(r, 1000);
            c.once('close', () => (clearTimeout(t), r()));
          });
        }
        c.destroy();
      }),
    );
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return cuts;
}

interface SupRig {
  sup: Supervisor;
  op: string;
  cg: string;
  st: string;
  pid: number;
  start: number;
  key: Buffer;
  submit(f: Fault): ReturnType<typeof submitFault>;
  fault(address: string, port: number): Fault;
  close(): Promise<void>;
}

/** an in-process supervisor on a fresh cgroup with a parked workload, torn down by close() */
async function supervisor(tag: string, policy: object): Promise<SupRig> {
  const op = `gs-bench-dl-${tag}-${process.pid}-${Date.now().toString(36)}`;
  const cg = path.join(findCgroup2Mount(), op);
  const st = tmpDir('gs-bd-');
  fs.mkdirSync(cg);
  const wl = spawn('sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec sleep 600`], { stdio: 'ignore' });
  let sup: Supervisor | null = null;
  const close = async () => {
    if (sup) await sup.stop().catch(() => undefined);
    wl.kill('SIGKILL');
    await new Promise<void>((r) => (wl.exitCode !== null || wl.signalCode !== null ? r() : wl.once('exit', () => r())));
    try {
      detachHooks(op);
    } catch {
      /* detached by stop */
    }
    removeCgroup(cg);
    fs.rmSync(st, { recursive: true, force: true });
  };
  try {
    const text = JSON.stringify(policy);
    sup = await Supervisor.start({ stateDir: st, op, cgroup: cg, policy: { policy: parsePolicy(policy), hash: policyHash(text) }, onError: (e) => process.stderr.write(`bench: ${e.message}\n`) });
    for (let i = 0; i < 500 && readStartTimeTicks(wl.pid!) === null; i++) await sleep(5);
    const started = sup;
    const key = await readKey(st, op);
    const pid = wl.pid!;
    const start = readStartTimeTicks(pid)!;
    let n = 0;
    return {
      sup: started,
      op,
      cg,
      st,
      pid,
      start,
      key,
      submit: (f) => submitFault({ socketPath: started.socketPath, body: encodeFault(f), faultId: f.fault_id, key, resolver: started.record.resolver }),
      fault: (address, port) => ({
        schema: 2,
        operation_id: op,
        fault_id: `bd-${++n}`,
        subject: { process: { pid, start_time_ticks: start } },
        effect: { network: { family: 'ipv4', protocol: 'tcp', address, port } },
        source: 'manual',
        observed_at_boot_ns: 0n,
        cgroup_id: 0n,
      }),
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/** the supervisor socket: trickling clients are cut at 2 s; good faults meanwhile, against an idle run */
async function supervisorFrameLimit(trickling: number, faults: number): Promise<{ cuts: number[]; idle: number[]; busy: number[] }> {
  const rig = await supervisor('sock', { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '1-65535' }, ttl_s: 300 }], delegate: [] });
  try {
    let port = 1000;
    const goodRun = async (): Promise<number[]> => {
      const lat: number[] = [];
      for (let i = 0; i < faults; i++) {
        const f = rig.fault('127.0.0.9', port++);
        const a = nowMs();
        const r = await rig.submit(f);
        lat.push(nowMs() - a);
        if (r.resolution.action !== 'retry_after_lease') throw new Error(`good fault answered ${r.resolution.action}`);
      }
      return lat;
    };
    const idle = await goodRun();
    const body = encodeFault(rig.fault('127.0.0.9', 1));
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0]), body]);
    frame.writeUInt32BE(body.length, 0);
    const cuts: number[] = [];
    const slow = Array.from({ length: trickling }, async () => {
      const c = net.createConnection(rig.sup.socketPath);
      c.on('error', () => undefined);
      await new Promise<void>((r) => c.once('connect', () => r()));
      const t0 = nowMs();
      let closed = 0;
      c.once('close', () => (closed = nowMs()));
      c.resume();
      for (let i = 0; i < frame.length && !closed; i++) {
        c.write(frame.subarray(i, i + 1));
        await new Promise<void>((r) => {
          const t = setTimeout(r, 1000);
          c.once('close', () => (clearTimeout(t), r()));
        });
      }
      if (closed) cuts.push(closed - t0);
      c.destroy();
    });
    await sleep(100); // the trickling clients have sent their first byte
    const busy = await goodRun();
    await Promise.all(slow);
    return { cuts, idle, busy };
  } finally {
    await rig.close();
  }
}

/** a paused connect whose resolver never answers: the adapter's submit → ETIMEDOUT, and the workload's connect() time */
async function faultDeadline(deadlineMs: number, calls: number): Promise<{ adapter: number[]; workload: { p50: number; p99: number } }> {
  const op = `gs-bench-fd-${process.pid}-${Date.now().toString(36)}`;
  const cg = path.join(findCgroup2Mount(), op);
  const dir = tmpDir('gs-bd-');
  fs.mkdirSync(cg);
  const silent = net.createServer({ allowHalfOpen: true }, (c) => c.on('error', () => undefined)); // holds every connection, answers none
  const sock = path.join(dir, 'r.sock');
  await new Promise<void>((r) => silent.listen(sock, r));
  const held = net.createServer(() => undefined);
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', () => r()));
  const port = (held.address() as net.AddressInfo).port;
  try {
    attachHooks(op, cg);
    const l = await launchUnderBoundary({ cgroupPath: cg, pinDir: pinDirFor(op), argv: [PROBE, '--repeat', String(calls), 'bench-connect', 'tcp', '127.0.0.1', String(port)], stdio: ['ignore', 'pipe', 'inherit'], operationId: op });
    let out = '';
    l.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const adapter: number[] = [];
    const a = new PauseAdapter({ notifier: l.notifier!, socketPath: sock, operationId: op, key: randomBytes(32), resolver: null, deadlineMs, onAnswer: (_c, o) => o.how === 'timeout' && adapter.push(o.micros / 1000) });
    l.setFaultHandler(a.handle);
    await l.exited;
    await a.idle();
    l.notifier!.close();
    const res = JSON.parse(out.trim().split('\n').pop()!) as { p50_ns: number; p99_ns: number; err: number };
    if (res.err !== calls) throw new Error(`fault deadline: ${res.err} of ${calls} calls refused (${out.trim()})`);
    return { adapter, workload: { p50: res.p50_ns / 1e6, p99: res.p99_ns / 1e6 } };
  } finally {
    silent.close();
    held.close();
    try {
      detachHooks(op);
    } catch {
      /* never attached */
    }
    removeCgroup(cg);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function probeOnce(cg: string, port: number): Promise<string> {
  return new Promise((resolve) =>
    execFile(PROBE, ['--cgroup', cg, 'connect', 'tcp', '127.0.0.1', String(port)], (_e, stdout) => {
      const l = stdout.trim().split('\n').pop() ?? '';
      resolve(((JSON.parse(l || '{}') as { result?: string }).result) ?? '?');
    }),
  );
}

/**
 * Leases of ttl 1 s installed at staggered moments of the sampling period:
 * from the expiry instant, how soon a reading removes each from the kernel
 * map, and whether a connect made then is refused (the reject loop is
 * stopped, so nothing leases it again); then the interval between readings
 * with nothing to do.
 */
async function leaseExpiry(leases: number, quietMs: number): Promise<{ refusedOk: number; removed: number[]; period: number[] }> {
  const rig = await supervisor('exp', { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '1024-65535' }, ttl_s: 1 }], delegate: [] });
  const servers: net.Server[] = [];
  try {
    rig.sup.dp.stopEvents();
    const step = Math.floor(1000 / leases);
    const one = async (i: number) => {
      await sleep(i * step);
      const srv = net.createServer((s) => s.destroy());
      servers.push(srv);
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
      const port = (srv.address() as net.AddressInfo).port;
      const r = await rig.submit(rig.fault('127.0.0.1', port));
      const expires = BigInt(r.resolution.lease!.expires_at_boot_ns);
      while (bootNs() < expires) await sleep(1);
      // the connect and the watch on the map run side by side from the expiry
      const tuple = { family: 'ipv4' as const, protocol: 'tcp' as const, address: '127.0.0.1', port };
      const removed = (async () => {
        while (rig.sup.dp.getLease(tuple) !== null) await sleep(1);
        return Number(bootNs() - expires) / 1e6;
      })();
      const result = await probeOnce(rig.cg, port);
      return { refused: result === 'EPERM', removed: await removed };
    };
    const rs = await Promise.all(Array.from({ length: leases }, (_, i) => one(i)));
    // readings with nothing due: their spacing is the sampling period as kept
    const ev = rig.sup.envelope!;
    const stamps: number[] = [];
    let last = ev.stats.ticks;
    const end = nowMs() + quietMs;
    while (nowMs() < end) {
      if (ev.stats.ticks !== last) {
        last = ev.stats.ticks;
        stamps.push(nowMs());
      }
      await sleep(2);
    }
    const period = stamps.slice(1).map((s, i) => s - stamps[i]);
    return { refusedOk: rs.filter((r) => r.refused).length, removed: rs.map((r) => r.removed), period };
  } finally {
    for (const s of servers) s.close();
    await rig.close();
  }
}

/** OCI listener: slow connections cut at the state deadline; bad ones meanwhile refused at once */
async function ociDeadline(deadlineMs: number, slow: number, bad: number): Promise<{ cuts: number[]; bad: number[] }> {
  const addon = pauseAddon();
  const dir = tmpDir('gs-bdo-');
  const badAt: number[] = [];
  const slowAt: number[] = [];
  const l = await OciListener.open({
    socketPath: path.join(dir, 'oci.sock'),
    stateDir: path.join(dir, 'state'),
    json: true,
    stateTimeoutMs: deadlineMs,
    say: (s) => {
      const e = JSON.parse(s) as { event: string; message?: string };
      if (e.event !== 'connection_refused') return;
      (/no complete container process state/.test(e.message ?? '') ? slowAt : badAt).push(nowMs());
    },
  });
  const fds: number[] = [];
  const socks: net.Socket[] = [];
  const send = async (data: string, keepOpen: boolean): Promise<number> => {
    const [a, b] = addon.socketpair();
    fds.push(a, b);
    const c = net.createConnection(l.socketPath);
    socks.push(c);
    c.on('error', () => undefined);
    await new Promise<void>((r) => c.once('connect', () => r()));
    const t0 = nowMs();
    addon.sendFd((c as unknown as { _handle: { fd: number } })._handle.fd, [a], Buffer.from(data));
    if (!keepOpen) c.end();
    return t0;
  };
  const until = async (what: string, fn: () => boolean) => {
    for (let i = 0; i < 20000 && !fn(); i++) await sleep(1);
    if (!fn()) throw new Error(`oci listener: ${what}`);
  };
  try {
    const state = JSON.stringify({ ociVersion: '1.0.2', fds: ['seccompFd'], pid: process.pid, metadata: 'op=x', state: { ociVersion: '1.0.2', id: 'c1', status: 'creating', pid: process.pid, bundle: '/b' } });
    const slowStart: number[] = [];
    for (let i = 0; i < slow; i++) slowStart.push(await send(state.slice(0, 20), true));
    const badLat: number[] = [];
    for (let i = 0; i < bad; i++) {
      const t0 = await send('{]', false);
      await until(`bad connection ${i} never refused`, () => badAt.length > i);
      badLat.push(badAt[i] - t0);
    }
    await until('slow connections never cut', () => slowAt.length >= slow);
    // cut in the order they came (each from its own accept, all within a few ms)
    return { cuts: slowStart.map((t0, i) => slowAt[i] - t0), bad: badLat };
  } finally {
    for (const c of socks) c.destroy();
    await l.close();
    for (const f of fds) addon.closeFd(f);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** ChainedLog.open of a 20,000-line log, against reading the whole file */
async function chainOpen(lines: number, rounds: number): Promise<{ size: number; open: number[]; readAll: number[] }> {
  const dir = tmpDir('gs-bdc-');
  try {
    const file = path.join(dir, 'big.jsonl');
    const log = await ChainedLog.open(file);
    const pad = 'x'.repeat(200);
    const ps: Promise<void>[] = [];
    for (let i = 0; i < lines; i++) ps.push(log.append({ i, pad }));
    await Promise.all(ps);
    await log.close();
    const open: number[] = [];
    const readAll: number[] = [];
    for (let r = 0; r < rounds; r++) {
      let t0 = nowMs();
      const again = await ChainedLog.open(file);
      open.push(nowMs() - t0);
      await again.close();
      t0 = nowMs();
      fs.readFileSync(file);
      readAll.push(nowMs() - t0);
    }
    return { size: fs.statSync(file).size, open, readAll };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchDeadlines(o: { trials: number; faults: number; leases: number; quietMs: number; rounds: number }): Promise<void> {
  const rows: Row[] = [];
  const speed: Row[] = [];

  const cuts = await frameLimit(o.trials);
  rows.push(deadlineRow('frame limit, readFrame (first byte → refusal)', FRAME_TIMEOUT_MS, cuts));

  const sock = await supervisorFrameLimit(o.trials, o.faults);
  rows.push(deadlineRow('frame limit, supervisor.sock (connect → close)', FRAME_TIMEOUT_MS, sock.cuts));
  speed.push(['good fault answered, idle socket (p50 / p99 ms)', `${median(sock.idle).toFixed(2)} / ${percentile(sock.idle, 99).toFixed(2)}`, '1.00']);
  speed.push([`good fault answered, ${o.trials} clients trickling (p50 / p99 ms)`, `${median(sock.busy).toFixed(2)} / ${percentile(sock.busy, 99).toFixed(2)}`, (median(sock.busy) / median(sock.idle)).toFixed(2)]);

  const fd = await faultDeadline(300, o.trials);
  rows.push(deadlineRow('fault deadline, adapter (submit → ETIMEDOUT)', 300, fd.adapter));
  rows.push(['fault deadline, workload connect() (p50 / p99)', 300, o.trials, '', fd.workload.p50.toFixed(1), fd.workload.p99.toFixed(1), (fd.workload.p50 / 300).toFixed(3), (fd.workload.p99 / 300).toFixed(3)]);

  const ex = await leaseExpiry(o.leases, o.quietMs);
  rows.push(deadlineRow(`lease expiry → removed from the map (connects after: ${ex.refusedOk}/${o.leases} EPERM)`, 1000, ex.removed));
  if (ex.period.length) rows.push(deadlineRow('sampling period (reading → reading)', 1000, ex.period));

  const oci = await ociDeadline(400, o.trials, o.trials * 4);
  rows.push(deadlineRow('OCI listener state deadline (connect → refusal)', 400, oci.cuts));
  speed.push(['OCI bad connection refused while slow ones pend (p50 / max ms)', `${median(oci.bad).toFixed(2)} / ${Math.max(...oci.bad).toFixed(2)}`, (median(oci.bad) / 400).toFixed(4) + ' of deadline']);

  const ch = await chainOpen(20000, o.rounds);
  speed.push([`ChainedLog.open, ${(ch.size / 1e6).toFixed(1)} MB log (p50 ms)`, median(ch.open).toFixed(2), '1.00']);
  speed.push(['readFileSync of the same log (p50 ms)', median(ch.readAll).toFixed(2), (median(ch.readAll) / median(ch.open)).toFixed(1) + 'x open']);

  print('deadlines: the promise and how close to it', DEADLINE_HEADER, rows);
  print('speed figures the tests no longer assert', ['what', 'value', 'ratio'], speed);
}
