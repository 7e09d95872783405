// Class 6 of issue 23, the shared state disk: a hostile workload's refused
// connects must not let it fill the state filesystem that every operation
// shares. The state dir sits on a small tmpfs of its own, filled by another
// tenant to just above gensee's reserve; operation A floods denied ports
// with plain connects (each one paused by seccomp and refused by the
// resolver), and while it does, operation B is granted a connect. B's grant
// must still work and be recorded, A's refusals must be bounded (written
// lines plus `suppressed` counts equal the calls refused, exactly), the disk
// must keep its free space, no byte may reach A's denied listener, and both
// operations' evidence must verify. Both identities.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { GENSEE_BIN, requireKernel, uniqueName, waitFor } from '../helpers/kernel';
import { shortStateDir } from '../helpers/supervisor';
import { IDENTITIES, tcpCounter, cleanupOp } from './lib';

const FLOOD = path.join(PACKAGE_ROOT, 'obj', 'adv', 'diskflood');
/** the tmpfs, and the reserve gensee keeps on it (set explicitly: the test must not depend on the default's formula) */
const FS_BYTES = 8 << 20;
const RESERVE = 1 << 20;
/** what the other tenant leaves free above the reserve */
const MARGIN = 512 << 10;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function genseeRun(args: string[], timeoutMs: number): { done: Promise<Ran>; pid: number } {
  const c = spawn(GENSEE_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GENSEE_STATE_RESERVE: String(RESERVE) } });
  let out = '';
  let err = '';
  // gensee prints every resolution: keep the tail only
  c.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-64 << 10)));
  c.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-64 << 10)));
  const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
  const done = new Promise<Ran>((res) =>
    c.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout: out, stderr: err });
    }),
  );
  return { done, pid: c.pid! };
}

function free(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

function lines(file: string): Record<string, unknown>[] {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return { unparsed: l.slice(0, 200) };
      }
    });
}

function verify(st: string, op: string): { code: number | null; out: string } {
  const r = spawnSync(GENSEE_BIN, ['verify', '--op', op, '--state-dir', st], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

for (const id of IDENTITIES) {
  t.test(`${id.name}: a refusal flood cannot fill the shared state disk`, { timeout: 240_000 }, async (t) => {
    if (!requireKernel(t)) return;
    if (!fs.existsSync(FLOOD)) return t.fail(`workload not built: ${FLOOD} (make build)`);
    // the tmpfs: unique mountpoint, unmounted at teardown whatever happened
    const mnt = fs.mkdtempSync('/tmp/gs-dk-');
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_BYTES},mode=0755`, 'gs-disk-test', mnt], { encoding: 'utf8' });
    if (m.status !== 0) {
      fs.rmdirSync(mnt);
      return t.fail(`mount tmpfs: ${m.stderr}`);
    }
    const opA = uniqueName('gs-dka');
    const opB = uniqueName('gs-dkb');
    const st = path.join(mnt, 's');
    t.teardown(async () => {
      await cleanupOp(st, opA);
      await cleanupOp(st, opB);
      spawnSync('umount', ['-l', mnt]);
      fs.rmSync(mnt, { recursive: true, force: true });
    });
    fs.mkdirSync(st, { mode: 0o700 });
    const pol = shortStateDir(t);
    const denied = await tcpCounter(t);
    const allowed = await tcpCounter(t);
    const denyAll = path.join(pol, 'deny.json');
    fs.writeFileSync(denyAll, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [] }));
    const grantB = path.join(pol, 'grant.json');
    fs.writeFileSync(
      grantB,
      JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(allowed.port) }, ttl_s: 60, max_uses: 0 }], delegate: [] }),
    );
    // another tenant of the filesystem leaves little above the reserve
    const filler = path.join(mnt, 'filler');
    fs.writeFileSync(filler, Buffer.alloc(Math.max(0, free(mnt) - RESERVE - MARGIN)));
    t.comment(`tmpfs ${FS_BYTES >> 20} MiB, ${free(mnt) >> 10} KiB free before the flood, reserve ${RESERVE >> 10} KiB`);

    // A: a flood of denied connects over 2,000 ports (the denied listener's among them)
    const a = genseeRun(['run', '--state-dir', st, '--op', opA, '--policy', denyAll, '--no-dns', ...id.flags, '--', FLOOD, 'flood', '--port', String(denied.port), '--span', '2000', '--ms', '10000'], 120_000);
    // until the disk is down to the reserve (today: until it is full), or A is over
    let aOver = false;
    void a.done.then(() => (aOver = true));
    await waitFor(() => aOver || free(mnt) <= RESERVE + (64 << 10), 60_000, 50).catch(() => undefined);
    t.comment(`after the flood reached the floor: ${free(mnt) >> 10} KiB free`);

    // B: granted a connect on the same disk, while A still floods
    const b = await genseeRun(['run', '--state-dir', st, '--op', opB, '--policy', grantB, '--no-dns', ...id.flags, '--', FLOOD, 'connect', '--port', String(allowed.port)], 60_000).done;
    t.equal(b.code, 0, `B's granted connect works while A floods (gensee run exit ${b.code})`, { stderr: b.stderr.slice(-1500), stdout: b.stdout.slice(-500) });
    await waitFor(() => allowed.bytes > 0, 10_000, 20).catch(() => undefined);
    t.ok(allowed.bytes > 0, `B's bytes reached its granted listener (${allowed.bytes} bytes)`);
    const bLines = lines(path.join(st, 'network-operations', opB, 'faults.jsonl'));
    const bRes = bLines.filter((l) => l.kind === 'resolution').map((l) => (l.resolution as { action: string }).action);
    t.ok(bRes.includes('retry_after_lease'), `B's grant is recorded in its faults.jsonl (${bRes.join(',') || 'no resolution'})`);
    t.ok(bLines.some((l) => l.kind === 'lease_intent'), 'with its durable lease_intent');

    const ra = await a.done;
    t.equal(ra.code, 0, `A's gensee run ended normally (exit ${ra.code})`, { stderr: ra.stderr.slice(-1500) });
    const report = ra.stdout
      .split('\n')
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, number>;
        } catch {
          return null;
        }
      })
      .find((j) => j && typeof j.attempts === 'number');
    t.ok(report, 'the flood reported', { tail: ra.stdout.slice(-500) });
    if (report) {
      t.equal(report.ok, 0, `no flood connect succeeded (${report.attempts} attempts)`);
      t.ok(report.attempts > 1000, `the flood made ${report.attempts} attempts`);
    }
    t.equal(denied.bytes, 0, 'no byte reached the denied listener');
    t.equal(denied.conns, 0, 'no connection reached the denied listener');
    t.ok(free(mnt) > 0, `the disk never filled: ${free(mnt) >> 10} KiB free at the end`);

    // A's refusals: every one is a resolution line or counted in a suppressed line, exactly
    const aDir = path.join(st, 'network-operations', opA);
    const aLines = lines(path.join(aDir, 'faults.jsonl'));
    const denials = aLines.filter((l) => l.kind === 'resolution' && (l.resolution as { action: string }).action === 'deny').length;
    const suppressed = aLines.filter((l) => l.kind === 'suppressed').reduce((s, l) => s + Number(l.count), 0);
    const refused = report ? report.attempts - report.ok : -1;
    t.equal(denials + suppressed, refused, `faults.jsonl accounts for every refused call: ${denials} written + ${suppressed} suppressed = ${refused}`);
    t.ok(denials < refused, `the flood did not write a line pair per call (${denials} of ${refused})`);
    const evSuppressed = lines(path.join(aDir, 'events.jsonl')).filter((l) => l.type === 'suppressed').length;
    t.ok(evSuppressed > 0, `events.jsonl has suppressed lines (${evSuppressed})`);

    for (const [op, name] of [[opA, 'A'], [opB, 'B']] as const) {
      const v = verify(st, op);
      t.equal(v.code, 0, `gensee verify passes for ${name}`, { verify: v.out.slice(-2000) });
    }
    // B's evidence lost (what today's full disk left): verify must say so, not pass
    fs.writeFileSync(path.join(st, 'network-operations', opB, 'faults.jsonl'), '');
    const gone = verify(st, opB);
    t.equal(gone.code, 1, 'gensee verify fails for B once its faults.jsonl is empty');
    t.match(gone.out, /evidence_missing/, 'and names the missing evidence', { verify: gone.out.slice(-1000) });
  });
}
