// Issue 28's measure: N restarts of `gensee oci-listener --fdkeep`
// (SIGKILL and graceful SIGTERM, alternating) while two runc containers each
// make a steady stream of first connects to new allowed destinations
// (127.1.x.y, leased by policy: a fault each) and to denied ones
// (127.2.x.y: a fault each). Prints: ENOSYS count, wrong answers (an
// allowed call that failed, a denied one that did not get EACCES or
// reached its server), lost fault records (a call made with no fault line
// for its destination in faults.jsonl), the longest pause a call saw
// (/proc/uptime in the container: 10 ms resolution), and the restart times.
// Not part of make test: node dist/bench/restart.js [restarts=50]
//
// Mode supervise (node dist/bench/restart.js supervise [restarts=50]): the
// same for `gensee supervise` (hooks only, no seccomp): N restarts,
// alternating kill -9 (then a fresh supervise) and `gensee upgrade --op`
// (SIGHUP takeover), while a process in the cgroup makes first connects to
// new allowed destinations (refused by the hook until the resolver's lease
// is in: retried every 50 ms) and to denied ones. Prints: hook faults lost
// (a denied connect with no fault line for its destination, beyond what
// faults.jsonl counts as suppressed or records_lost), wrong answers (an
// allowed destination never reached, a denied one reached), the longest
// wait for an allowed destination, kernel leases without a resolution line,
// and the restart times.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { findCgroup2Mount } from '../src/cgroup';
import { DataPlane } from '../src/dataplane';
import { detachHooks } from '../src/dataplane';
import { pinDirFor } from '../src/bpffs';
import { uniqueName } from '../test/helpers/kernel';
import { faultLines } from '../test/helpers/supervisor';
import { startListener, makeBundle, runcRun, cleanupOp, TapT, Listener } from '../test/oci/runc-helpers';
import { FdKeep } from '../src/oci/fdkeep';

const MODE = process.argv[2] === 'supervise' ? 'supervise' : 'oci';
const RESTARTS = Number((MODE === 'supervise' ? process.argv[3] : process.argv[2]) ?? 50);
const GENSEE = path.join(__dirname, '..', '..', 'bin', 'gensee');

const teardowns: (() => unknown)[] = [];
const t: TapT = {
  teardown: (fn) => teardowns.push(fn),
  fail: (m) => {
    throw new Error(m);
  },
  plan: () => undefined,
};

function server(): Promise<{ port: number; accepted: () => number; close: () => void }> {
  let n = 0;
  const s = net.createServer((c) => {
    n++;
    c.destroy();
  });
  return new Promise((resolve) =>
    s.listen(0, '0.0.0.0', () => resolve({ port: (s.address() as net.AddressInfo).port, accepted: () => n, close: () => s.close() })),
  );
}

async function main(): Promise<void> {
  const allowed = await server();
  const denied = await server();
  const root = fs.mkdtempSync('/tmp/gs-rb-');
  const stateDir = path.join(root, 'st');
  const policyDir = path.join(root, 'pol');
  const sock = path.join(root, 'oci.sock');
  const keep = path.join(root, 'keep', 'fdkeep.sock');
  fs.mkdirSync(policyDir, { mode: 0o700 });
  const ops = [uniqueName('gs-rba'), uniqueName('gs-rbb')];
  for (const op of ops) {
    cleanupOp(t, op);
    const policy = {
      schema: 1,
      grants: [],
      leases: [{ network: { protocol: 'tcp', cidr: '127.1.0.0/16', ports: String(allowed.port) }, ttl_s: 600, max_uses: 0 }],
      delegate: [],
      fault_deadline_ms: 30_000,
    };
    fs.writeFileSync(path.join(policyDir, `${op}.json`), JSON.stringify(policy), { mode: 0o600 });
  }
  const args = ['--socket', sock, '--state-dir', stateDir, '--policy-dir', policyDir, '--fdkeep', keep];
  // each container: new destinations, allowed then denied, until /tmp/stop; one line per call:
  //   <a|d> <exit> <start centiseconds> <end centiseconds> <dest> <message>
  const script = (k: number) =>
    `i=0; while [ ! -e /tmp/stop ]; do i=$((i+1)); a=$((i/250)); b=$((i%250+1)); ` +
    `for kind in a d; do if [ $kind = a ]; then dst=127.1.${k}$a.$b; p=${allowed.port}; else dst=127.2.${k}$a.$b; p=${denied.port}; fi; ` +
    `read t0 x < /proc/uptime; busybox nc $dst $p </dev/null >/dev/null 2>/tmp/e; r=$?; read t1 x < /proc/uptime; ` +
    `echo "$kind $r $t0 $t1 $dst $(cat /tmp/e)"; done; done`;
  let l: Listener = await startListener(t, args);
  const bundles = [0, 1].map((k) => makeBundle(t, root, `c${k}`, { listenerPath: sock, metadata: `op=${ops[k]}`, script: script(k + 1) }));
  const runs = bundles.map((b) => runcRun(b, 3_600_000));
  await l.waitEvent((e) => e.event === 'attached' && e.op === ops[1], 30_000);
  await l.waitEvent((e) => e.event === 'attached' && e.op === ops[0], 30_000);
  const restartMs: number[] = [];
  for (let i = 0; i < RESTARTS; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    if (i % 2 === 0) l.child.kill('SIGKILL');
    else l.child.kill('SIGTERM');
    await new Promise((r) => (l.child.exitCode !== null || l.child.signalCode !== null ? r(null) : l.child.once('exit', r)));
    l = await startListener(t, args);
    await l.waitEvent((e) => e.event === 'resumed' && e.op === ops[1], 30_000);
    restartMs.push(Date.now() - t0);
    process.stderr.write(`restart ${i + 1}/${RESTARTS} (${i % 2 === 0 ? 'kill -9' : 'SIGTERM'}): ${restartMs[i]} ms\n`);
  }
  await new Promise((r) => setTimeout(r, 500));
  for (const b of bundles) fs.writeFileSync(path.join(b.dir, 'rootfs', 'tmp', 'stop'), '');
  const outs = await Promise.all(runs);
  await Promise.all(ops.map((op) => l.waitEvent((e) => e.event === 'stopped' && e.op === op, 60_000)));
  let calls = 0;
  let enosys = 0;
  let wrong = 0;
  let lost = 0;
  let longest = 0;
  const wrongLines: string[] = [];
  const evidence = { carried_resolved: 0, abandoned: 0, resolver_restarted: 0, held_calls: 0, takeovers: 0 };
  for (let k = 0; k < 2; k++) {
    const all = faultLines(stateDir, ops[k]) as Record<string, unknown>[];
    for (const x of all) {
      if (x.kind === 'resolver_takeover') {
        evidence.takeovers++;
        evidence.held_calls += Number(x.held_calls ?? 0);
      }
      if (x.kind !== 'resolution') continue;
      if (typeof x.abandoned === 'string') evidence.abandoned++;
      if ((x.takeover as { carried?: boolean } | undefined)?.carried) evidence.carried_resolved++;
      if ((x.resolution as { reason?: string }).reason === 'resolver_restarted') evidence.resolver_restarted++;
    }
    const faults = all.filter((x) => x.kind === 'fault') as unknown as { fault: { effect: { network: { address: string } } } }[];
    const seen = new Set(faults.map((f) => f.fault.effect.network.address));
    for (const line of outs[k].out.split('\n')) {
      const m = /^([ad]) (\d+) ([\d.]+) ([\d.]+) (\S+) ?(.*)$/.exec(line);
      if (!m) continue;
      calls++;
      const [, kind, code, t0, t1, dst, msg] = m;
      longest = Math.max(longest, Math.round((Number(t1) - Number(t0)) * 1000));
      if (/Function not implemented/.test(msg)) enosys++;
      const ok = kind === 'a' ? code === '0' : code === '1' && /Permission denied/.test(msg);
      if (!ok) {
        wrong++;
        if (wrongLines.length < 5) wrongLines.push(line);
      }
      if (!seen.has(dst)) lost++;
    }
  }
  if (denied.accepted() > 0) wrong += denied.accepted();
  const verify = ops.map((op) => {
    try {
      return /: ok/.test(execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'bin', 'gensee'), 'verify', '--op', op, '--state-dir', stateDir]).toString());
    } catch {
      return false;
    }
  });
  const sorted = [...restartMs].sort((a, b) => a - b);
  const out = {
    restarts: RESTARTS,
    calls,
    enosys,
    wrong_answers: wrong,
    lost_records: lost,
    longest_pause_ms: longest,
    restart_ms: { p50: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] },
    denied_server_accepts: denied.accepted(),
    evidence,
    verify_ok: verify,
    wrong_examples: wrongLines,
  };
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
  await l.stop();
  const k = FdKeep.connect(keep);
  if (k) {
    const { pid } = k.ping();
    k.close();
    process.kill(pid, 'SIGKILL');
  }
  allowed.close();
  denied.close();
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
}

/** one supervise, started afresh (kill -9 restarts); its pid */
function startSupervise(args: string[], log: string): ChildProcess {
  const fd = fs.openSync(log, 'a');
  const c = spawn(process.execPath, [GENSEE, 'supervise', '--json', ...args], { stdio: ['ignore', fd, fd], detached: true });
  fs.closeSync(fd);
  c.unref();
  return c;
}

async function until<X>(fn: () => X | null | undefined | false, ms: number, what: string): Promise<X> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function benchSupervise(): Promise<void> {
  const allowed = await server();
  const denied = await server();
  const root = fs.mkdtempSync('/tmp/gs-rs-');
  const stateDir = path.join(root, 'st');
  const op = uniqueName('gs-rbs');
  const cgroup = path.join(findCgroup2Mount(), op);
  fs.mkdirSync(cgroup);
  const policyFile = path.join(root, 'policy.json');
  fs.writeFileSync(
    policyFile,
    JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.1.0.0/16', ports: String(allowed.port) }, ttl_s: 600, max_uses: 0 }], delegate: [], fault_deadline_ms: 30_000 }),
  );
  const args = ['--op', op, '--cgroup', cgroup, '--policy', policyFile, '--state-dir', stateDir];
  const log = path.join(root, 'supervise.log');
  const faultsFile = path.join(stateDir, 'network-operations', op, 'faults.jsonl');
  const lines = (): Record<string, unknown>[] => faultLines(stateDir, op);
  const takeoverBy = (pid: number) => () => fs.existsSync(faultsFile) && lines().some((x) => x.kind === 'resolver_takeover' && x.new_pid === pid);
  let cur = startSupervise(args, log).pid!;
  await until(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('"event":"serving"'), 60_000, 'first supervise serving');
  const stop = path.join(root, 'stop');
  // the workload: in the cgroup; allowed: retried until the lease is in (hooks-only: the first try is refused, the fault leases it).
  // One long-lived process makes every connect (bash's /dev/tcp), as a
  // client that retries does: a hook fault's subject must still be there
  // when the resolver reads it (a process that exits at once is gone by
  // then, ~0.5-2 ms, and its fault is denied invalid_subject: no lease).
  const E = path.join(root, 'e');
  const script =
    `echo $$ > ${cgroup}/cgroup.procs; i=0; while [ ! -e ${stop} ]; do i=$((i+1)); a=$((i/250)); b=$((i%250+1)); ` +
    `dst=127.1.$a.$b; read t0 x < /proc/uptime; n=0; r=1; while [ $n -lt 1200 ]; do { exec 3<>/dev/tcp/$dst/${allowed.port}; } 2>${E} && { exec 3<&-; r=0; break; }; n=$((n+1)); sleep 0.05; done; ` +
    `read t1 x < /proc/uptime; echo "a $r $n $t0 $t1 $dst $(cat ${E})"; ` +
    `dst=127.2.$a.$b; { exec 3<>/dev/tcp/$dst/${denied.port}; } 2>${E} && exec 3<&-; r=$?; [ -s ${E} ] && r=1; echo "d $r 0 $t1 $t1 $dst $(cat ${E} | tr '\n' ' ')"; sleep 0.02; done`;
  const wl = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let wout = '';
  wl.stdout!.on('data', (d: Buffer) => (wout += d.toString()));
  const restartMs: number[] = [];
  try {
    await until(() => wout.split('\n').length > 3, 60_000, 'workload running');
    for (let i = 0; i < RESTARTS; i++) {
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      let next: number;
      if (i % 2 === 0) {
        process.kill(cur, 'SIGKILL');
        await until(() => !alive(cur), 30_000, 'killed supervise gone');
        next = startSupervise(args, log).pid!;
      } else {
        // asynchronously: the killed and the left supervise are this process's children, reaped meanwhile
        const up = await new Promise<string>((resolve, reject) =>
          execFile(process.execPath, [GENSEE, 'upgrade', '--op', op, '--state-dir', stateDir, '--json'], { timeout: 120_000 }, (e, so, se) => (e ? reject(new Error(`${e.message} ${se}`)) : resolve(so))),
        );
        next = (JSON.parse(up.trim().split('\n').pop()!) as { new_pid: number }).new_pid;
      }
      await until(takeoverBy(next), 60_000, `resolver_takeover by ${next}`);
      cur = next;
      restartMs.push(Date.now() - t0);
      process.stderr.write(`supervise restart ${i + 1}/${RESTARTS} (${i % 2 === 0 ? 'kill -9' : 'upgrade'}): ${restartMs[i]} ms\n`);
    }
    await new Promise((r) => setTimeout(r, 1000));
    fs.writeFileSync(stop, '');
    await new Promise((r) => (wl.exitCode !== null ? r(null) : wl.once('exit', r)));
    await new Promise((r) => setTimeout(r, 1500)); // the last ring records drained
    // every lease in the kernel has its resolution line
    const dp = DataPlane.open(op);
    let kernelLeases: { address: string; port: number }[] = [];
    try {
      kernelLeases = dp.listLeases().map((l) => ({ address: l.tuple.address, port: l.tuple.port }));
    } finally {
      dp.close();
    }
    process.kill(cur, 'SIGTERM');
    await until(() => !alive(cur), 60_000, 'last supervise stopped');
    const all = lines();
    const leaseRecorded = new Set<string>();
    const faultAddr = new Set<string>();
    let suppressed = 0;
    let recordsLost = 0;
    let takeovers = 0;
    for (const x of all) {
      if (x.kind === 'resolution') {
        const l = (x.resolution as { lease?: { address: string; port: number } }).lease;
        if (l) leaseRecorded.add(`${l.address}:${l.port}`);
      } else if (x.kind === 'fault') {
        const a = (x.fault as { effect?: { network?: { address?: string } } }).effect?.network?.address;
        if (a) faultAddr.add(a);
      } else if (x.kind === 'suppressed') suppressed += Number(x.count ?? 0);
      else if (x.kind === 'records_lost') recordsLost += Number(x.count ?? 0);
      else if (x.kind === 'resolver_takeover') takeovers++;
    }
    let calls = 0;
    let wrong = 0;
    let missing = 0;
    let longest = 0;
    const wrongLines: string[] = [];
    for (const line of wout.split('\n')) {
      const m = /^([ad]) (\d+) (\d+) ([\d.]+) ([\d.]+) (\S+) ?(.*)$/.exec(line);
      if (!m) continue;
      calls++;
      const [, kind, code, , t0, t1, dst, msg] = m;
      if (kind === 'a') longest = Math.max(longest, Math.round((Number(t1) - Number(t0)) * 1000));
      const ok = kind === 'a' ? code === '0' : code !== '0' && /not permitted|denied/i.test(msg);
      if (!ok) {
        wrong++;
        if (wrongLines.length < 5) wrongLines.push(line);
      }
      // each denied connect (and each allowed destination's first try) was refused by a hook: its fault must be recorded
      if (!faultAddr.has(dst)) missing++;
    }
    wrong += denied.accepted();
    let verifyOk = false;
    try {
      verifyOk = /: ok/.test(execFileSync(process.execPath, [GENSEE, 'verify', '--op', op, '--state-dir', stateDir]).toString());
    } catch {
      verifyOk = false;
    }
    const sorted = [...restartMs].sort((a, b) => a - b);
    const out = {
      mode: 'supervise',
      restarts: RESTARTS,
      calls,
      wrong_answers: wrong,
      hook_faults_missing: missing,
      counted_suppressed: suppressed,
      counted_records_lost: recordsLost,
      hook_faults_lost_silently: Math.max(0, missing - suppressed - recordsLost),
      kernel_leases: kernelLeases.length,
      kernel_leases_without_record: kernelLeases.filter((l) => !leaseRecorded.has(`${l.address}:${l.port}`)).length,
      longest_wait_allowed_ms: longest,
      restart_ms: { p50: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] },
      resolver_takeover_lines: takeovers,
      denied_server_accepts: denied.accepted(),
      verify_ok: verifyOk,
      wrong_examples: wrongLines,
    };
    process.stdout.write(JSON.stringify(out, null, 1) + '\n');
  } finally {
    if (wl.exitCode === null) wl.kill('SIGKILL');
    if (alive(cur)) process.kill(cur, 'SIGKILL');
    allowed.close();
    denied.close();
    try {
      for (const l of fs.readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8').split('\n')) if (l) process.kill(Number(l), 'SIGKILL');
    } catch {
      /* empty */
    }
    await new Promise((r) => setTimeout(r, 300));
    if (fs.existsSync(pinDirFor(op))) detachHooks(op);
    try {
      fs.rmdirSync(cgroup);
    } catch {
      /* busy */
    }
    // GENSEE_BENCH_KEEP=1: the state dir and the supervise log stay, for a look
    if (process.env.GENSEE_BENCH_KEEP === '1') process.stderr.write(`kept: ${root}\n`);
    else fs.rmSync(root, { recursive: true, force: true });
  }
}

(MODE === 'supervise' ? benchSupervise() : main()).catch(async (e) => {
  process.stderr.write(`bench/restart: ${(e as Error).stack}\n`);
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined);
  process.exit(1);
});
