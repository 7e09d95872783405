// Issue 25: no live lease without a durable answer, not even for the
// milliseconds between a resolution line's write and its fdatasync. The
// test-only hook GENSEE_TEST_FAIL_RESOLUTION_SYNC=MS holds the first
// granting resolution line back MS after its fdatasync and then fails the
// log as if that fdatasync had returned EIO (src/evidence/chain.ts): a long,
// known window. One process in the cgroup asks for the lease; a second one
// dials the same destination over and over during the window. Neither may
// reach the listener: the lease must not be usable until its answer is
// durable, and an answer that never becomes durable grants nothing.
// (Before the fix the lease entered the kernel before the resolution line,
// and the second process went through the notifier's fast path.)
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { GENSEE_BIN, requireKernel, uniqueName } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';
import { Listener } from '../helpers/trials';
import { cleanupOp, logLines } from '../adversarial/lib';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'diskflood');
const WINDOW_MS = 4000;

/** the log's lines, none while it does not exist yet */
const lines = (file: string): Record<string, unknown>[] => (fs.existsSync(file) ? logLines(file) : []);

t.test('a grant whose resolution never becomes durable is never usable, not even in the sync window', { timeout: 120_000 }, async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(FLOOD)) return t.fail(`workload not built: ${FLOOD} (make build)`);
  const st = shortStateDir(t);
  const op = uniqueName('gs-dw');
  t.teardown(() => cleanupOp(st, op));
  const listener = await Listener.open();
  t.teardown(() => listener.close());
  const port = listener.port;
  const policy = path.join(st, 'p.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(port) }, ttl_s: 300, max_uses: 0 }], delegate: [] }));
  // first: one connect (it asks for the lease); second, a moment later:
  // connects in a loop for the rest of the window
  const script = `${FLOOD} connect --port ${port} & sleep 0.3; ${FLOOD} flood --port ${port} --span 1 --ms ${WINDOW_MS - 1500}; wait`;
  const env = { ...process.env, GENSEE_TEST_FAIL_RESOLUTION_SYNC: String(WINDOW_MS), GENSEE_RUN_DIR: st };
  const c = spawn(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--policy', policy, '--no-dns', '--json-out', path.join(st, 'out.jsonl'), '--', '/bin/sh', '-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  c.stdout.on('data', (d: Buffer) => (out += d.toString()));
  c.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((res) => c.on('close', (x) => res(x)));
  const first = /\{"connect":"([^"]+)"\}/.exec(out)?.[1];
  const second = /\{"attempts":(\d+),"ok":(\d+)/.exec(out);
  t.ok(first !== undefined && second !== null, 'both workload processes reported', { out, err: err.slice(-2000), code });
  t.not(first, 'ok', `the process that asked is not let through (${first})`);
  t.ok(second && Number(second[1]) > 0, `the second process dialled during the window (${second?.[1]} attempts)`);
  t.equal(second ? Number(second[2]) : -1, 0, 'the second process never got through', { out });
  t.equal(listener.conns, 0, 'the listener saw no connection at all');
  const faults = lines(path.join(st, 'network-operations', op, 'faults.jsonl'));
  // the hook really fired: the log failed and the record says so
  t.ok(
    faults.some((l) => l.kind === 'evidence_failed') || /FAILED|EIO/.test(err),
    'the injected fdatasync failure put gensee in its failed state',
    { err: err.slice(-2000) },
  );
  // Grants written in the window (the first, and any fault of the second
  // process decided before the log failed: their lease_intent lines wait
  // for no fdatasync of their own) are lines whose durability was never
  // confirmed: none of their leases entered the kernel (no connection
  // above), and the record says they were never installed.
  const granted = faults.filter((l) => l.kind === 'resolution' && (l.resolution as { action?: string })?.action === 'retry_after_lease');
  t.ok(granted.length >= 1, `the first process's grant was written (${granted.length} grants)`);
  const kinds = faults.map((l) => l.kind);
  t.same(faults.filter((l) => l.kind === 'lease_not_installed'), [], 'no install was tried (and failed): none was ever due', { kinds });
});
