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
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { uniqueName } from '../test/helpers/kernel';
import { faultLines } from '../test/helpers/supervisor';
import { startListener, makeBundle, runcRun, cleanupOp, TapT, Listener } from '../test/oci/runc-helpers';
import { FdKeep } from '../src/oci/fdkeep';

const RESTARTS = Number(process.argv[2] ?? 50);

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
  for (let k = 0; k < 2; k++) {
    const faults = faultLines(stateDir, ops[k]).filter((x) => x.kind === 'fault') as { fault: { effect: { network: { address: string } } } }[];
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

main().catch(async (e) => {
  process.stderr.write(`bench/restart: ${(e as Error).stack}\n`);
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined);
  process.exit(1);
});
