// A reader that goes away (`gensee verify | head -1`) is not an error: no
// EPIPE stack trace. A read-only command ends quietly with its code so far;
// any other finishes its work and ends with its own code.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { spawn, execFile } from 'node:child_process';
import { uniqueName, GENSEE_BIN } from '../helpers/kernel';
import { shortStateDir, networkFault } from '../helpers/supervisor';
import { createOperation, opDir, readKey } from '../../src/state/operation';
import { readStartTimeTicks } from '../../src/resolver/subject';
import { readFrame, writeFrame } from '../../src/protocol/framing';
import { decodeFault, encodeResolution } from '../../src/protocol/codec';
import { computeMac } from '../../src/protocol/mac';
import { faultToJson } from '../../src/protocol/json';
import type { Resolution } from '../../src/protocol/types';

/** Run gensee with its stdout a pipe whose read end is closed before it writes anything. */
function closedStdout(args: string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(GENSEE_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout!.destroy();
    let stderr = '';
    c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

function sh(cmd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('sh', ['-c', cmd], { timeout: 30_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  );
}

const STACK = /EPIPE|\n\s+at |Unhandled/;

async function opOnDisk(t: Parameters<typeof shortStateDir>[0]): Promise<{ st: string; op: string }> {
  const st = shortStateDir(t);
  const op = uniqueName('gs-ep');
  await createOperation(st, { id: op, owner_uid: 0, cgroup: '/sys/fs/cgroup/none', policy_hash: 'sha256:' + '0'.repeat(64), resolver: { pid: process.pid, start_time_ticks: readStartTimeTicks(process.pid)! } });
  // a long faults.jsonl is not needed for the EPIPE: the first write already meets a closed pipe
  return { st, op };
}

t.test('read-only commands: a closed stdout ends them quietly', async (t) => {
  const { st, op } = await opOnDisk(t);
  for (const args of [['--help'], ['verify', '--help'], ['verify', '--op', op, '--state-dir', st], ['status', '--op', op, '--state-dir', st], ['ls', '--state-dir', st]]) {
    const r = await closedStdout(args);
    t.equal(r.code, 0, `gensee ${args.join(' ')}: exit 0`);
    t.equal(r.signal, null, `gensee ${args.join(' ')}: no signal`);
    t.notMatch(r.stderr, STACK, `gensee ${args.join(' ')}: no EPIPE, no stack (${JSON.stringify(r.stderr.slice(0, 200))})`);
  }
});

t.test('as a shell pipeline into head -1', async (t) => {
  const { st, op } = await opOnDisk(t);
  for (const cmd of ['--help', `status --op ${op} --state-dir ${st}`, `verify --op ${op} --state-dir ${st}`]) {
    const r = await sh(`"${GENSEE_BIN}" ${cmd} | head -1`);
    t.equal(r.stdout.split('\n').filter(Boolean).length, 1, `gensee ${cmd} | head -1: one line`);
    t.equal(r.stderr, '', `gensee ${cmd} | head -1: nothing on stderr`);
  }
});

t.test('other commands finish and keep their own exit code', async (t) => {
  const { st, op } = await opOnDisk(t);
  const key = await readKey(st, op);
  // a resolver (this process, as operation.json says) that denies
  const sock = path.join(opDir(st, op), 'supervisor.sock');
  const srv = net.createServer((c) => {
    c.on('error', () => undefined);
    readFrame(c).then(async (body) => {
      const d = decodeFault(body);
      const r: Resolution = { fault_id: d.ok ? d.fault.fault_id : 'x', action: 'deny', reason: 'policy_denied' };
      await writeFrame(c, encodeResolution(r, computeMac(key, r)));
      c.end();
    }, () => c.destroy());
  });
  await new Promise<void>((r) => srv.listen(sock, () => r()));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  const f = path.join(st, 'fault.json');
  fs.writeFileSync(f, JSON.stringify(faultToJson(networkFault(op, 4242, 1, 'tcp', '127.0.0.1', 8080))));

  const r = await closedStdout(['run', 'fault', '--socket', sock, '--fault', f]);
  t.equal(r.code, 1, 'run fault with stdout closed: still exit 1 for the deny');
  t.notMatch(r.stderr, STACK, `no EPIPE, no stack (${JSON.stringify(r.stderr.slice(0, 200))})`);
});
