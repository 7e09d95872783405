// Faults per second through the supervisor socket, and p50/p99 of
// retry_after_lease (fault in → lease in the kernel → answer out), for 1 and
// 8 concurrent clients. The resolver runs as its own process (gensee
// supervise), as in production; every fault is a new destination, so each
// one installs and reads back a lease and writes its evidence durably.
// GENSEE_BENCH_NODE_ARGS passes node flags to the supervisor (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/addon';
import { findCgroup2Mount, removeCgroup } from '../src/cgroup';
import { detachHooks } from '../src/dataplane';
import { encodeFault } from '../src/protocol/codec';
import { submitFault } from '../src/resolver/client';
import { readStartTimeTicks } from '../src/resolver/subject';
import { openOperation, readKey } from '../src/state/operation';
import type { Fault } from '../src/protocol/types';
import { percentile, print } from './util';

const GENSEE = path.join(PACKAGE_ROOT, 'bin', 'gensee');
/** USER_HZ: /proc/PID/stat counts CPU time in these */
const TICKS_PER_S = 100;

/** utime + stime of a process (all its threads), in clock ticks */
function cpuTicks(pid: number): number {
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

export async function benchResolver(opts: { n1: number; n8: number }): Promise<void> {
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const op = `gs-bench-rs-${tag}`;
  const cg = path.join(findCgroup2Mount(), op);
  const st = fs.mkdtempSync('/tmp/gs-bench-');
  fs.mkdirSync(cg);
  const policy = path.join(st, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '1-65535' }, ttl_s: 300 }], delegate: [] }));
  const wl = spawn('sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec sleep 600`], { stdio: 'ignore' });
  const sup = spawn(process.execPath, [...(process.env.GENSEE_BENCH_NODE_ARGS ? process.env.GENSEE_BENCH_NODE_ARGS.split(' ') : []), GENSEE, 'supervise', '--op', op, '--cgroup', cg, '--policy', policy, '--state-dir', st], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes('supervising')) {
          // from here on its per-fault lines are drained, not kept
          sup.stdout!.off('data', onData);
          sup.stdout!.resume();
          resolve();
        }
      };
      sup.stdout!.on('data', onData);
      sup.once('exit', () => reject(new Error(`supervise exited: ${out}`)));
    });
    const rec = await openOperation(st, op);
    const key = await readKey(st, op);
    const sock = path.join(st, 'network-operations', op, 'supervisor.sock');
    const pid = wl.pid!;
    const start = readStartTimeTicks(pid)!;
    let seq = 0;
    const fault = (): Fault => {
      const i = seq++;
      return {
        schema: 2,
        operation_id: op,
        fault_id: `b-${i}`,
        subject: { process: { pid, start_time_ticks: start } },
        effect: { network: { family: 'ipv4', protocol: 'tcp', address: `127.${(i >> 16) & 255}.${(i >> 8) & 255}.1`, port: 1000 + (i & 255) } },
        source: 'manual',
        observed_at_boot_ns: 0n,
        cgroup_id: 0n,
      };
    };
    const runWith = async (clients: number, total: number) => {
      const lat: number[] = [];
      let wrong = 0;
      const per = Math.ceil(total / clients);
      // faults are encoded before the clock starts: the pause adapter receives
      // them encoded (from C); what is timed is the authenticated round trip
      const bodies = Array.from({ length: clients }, () => Array.from({ length: per }, () => {
        const f = fault();
        return { id: f.fault_id, body: encodeFault(f) };
      }));
      const supCpu0 = cpuTicks(sup.pid!);
      const cli0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await Promise.all(
        bodies.map(async (mine) => {
          for (const { id, body } of mine) {
            const a = process.hrtime.bigint();
            const r = await submitFault({ socketPath: sock, body, faultId: id, key, resolver: rec.resolver });
            lat.push(Number(process.hrtime.bigint() - a) / 1000);
            if (!r.authenticated || r.resolution.action !== 'retry_after_lease') wrong++;
          }
        }),
      );
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const cli = process.cpuUsage(cli0);
      const supUs = ((cpuTicks(sup.pid!) - supCpu0) * 1e6) / TICKS_PER_S;
      if (wrong) throw new Error(`${wrong} faults did not get retry_after_lease`);
      return {
        n: lat.length,
        fps: lat.length / secs,
        p50: percentile(lat, 50),
        p99: percentile(lat, 99),
        // CPU per fault, all threads: the resolver process, and this client process
        supCpu: supUs / lat.length,
        cliCpu: (cli.user + cli.system) / lat.length,
      };
    };
    await runWith(1, 200); // warm-up
    const one = await runWith(1, opts.n1);
    const eight = await runWith(8, opts.n8);
    print(
      'resolver: retry_after_lease through the authenticated socket (new destination each fault; lease installed + read back; evidence durable)',
      ['clients', 'faults', 'faults/s', 'p50 us', 'p99 us', 'resolver CPU us/fault', 'client CPU us/fault', 'targets'],
      [
        ['1', one.n, one.fps.toFixed(0), one.p50.toFixed(0), one.p99.toFixed(0), one.supCpu.toFixed(0), one.cliCpu.toFixed(0), '>= 5000/s, p99 <= 2000 us'],
        ['8', eight.n, eight.fps.toFixed(0), eight.p50.toFixed(0), eight.p99.toFixed(0), eight.supCpu.toFixed(0), eight.cliCpu.toFixed(0), `${(eight.fps / one.fps).toFixed(2)}x the 1-client rate`],
      ],
    );
  } finally {
    sup.kill('SIGTERM');
    await new Promise((r) => sup.once('exit', r));
    wl.kill('SIGKILL');
    try {
      detachHooks(op);
    } catch {
      /* best effort */
    }
    removeCgroup(cg);
    fs.rmSync(st, { recursive: true, force: true });
  }
}
