// max_uses leases under a race: threads of one workload connect to a
// destination whose lease rule grants one use per fault. Each connect is
// paused and answered on its own; an answer of retry_after_lease must find
// its use in the kernel when the call runs again, whatever the other
// threads' connects and answers did to the same destination's lease:
// - 64 threads at once (each grant used to replace the last: 1 of 64 got through);
// - 100 rounds of 4 threads 400 us apart, so that a later one often
//   arrives while an earlier one's answer is on its way (it used to take the
//   C fast path on the use promised to the earlier one, which then got
//   EPERM: measured, 6-69 of 100 rounds, most near 1 ms apart).
// Counted at the listener: it accepts exactly as many connections as there
// were such answers, and no thread got EPERM.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomInt } from 'node:crypto';
import { spawn } from 'node:child_process';
import { PACKAGE_ROOT } from '../../src/addon';
import { GENSEE_BIN, requireKernel, sleep, waitFor } from '../helpers/kernel';
import { IDENTITIES, attackEnv, faultLines, verify } from './lib';

const RACE = path.join(PACKAGE_ROOT, 'obj', 'adv', 'race');
const CASES = [
  { name: `64 racing first connects`, threads: 64, stagger: 0, rounds: 1 },
  { name: `100 rounds of 4 connects 400 us apart`, threads: 4, stagger: 400, rounds: 100 },
];

interface Race {
  threads: number;
  rounds: number;
  ok: number;
  EPERM: number;
  EACCES: number;
  other: number;
  first_other: string;
}

/**
 * A TCP listener counting connections, on an address of its own in
 * 127.0.0.0/8 (not 127.0.0.1): a port scan of 127.0.0.1 by another test on
 * the machine does not reach it.
 */
async function destination(t: { teardown(fn: () => unknown): void }): Promise<{ address: string; port: number; conns: number }> {
  const d = { address: `127.${randomInt(2, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`, port: 0, conns: 0 };
  const socks = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    d.conns++;
    socks.add(s);
    s.on('error', () => undefined);
    s.on('close', () => socks.delete(s));
  });
  await new Promise<void>((res) => srv.listen(0, d.address, () => res()));
  d.port = (srv.address() as net.AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((res) => {
        for (const s of socks) s.destroy();
        srv.close(() => res());
      }),
  );
  return d;
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(GENSEE_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => c.kill('SIGKILL'), 90_000);
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

for (const c of CASES) for (const id of IDENTITIES) {
  const CONNECTS = c.threads * c.rounds;
  t.test(`race, ${id.name}: ${c.name} under max_uses 1 each find the lease they were answered`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-race');
    const dest = await destination(t);
    const policy = path.join(env.st, 'race-policy.json');
    fs.writeFileSync(
      policy,
      JSON.stringify({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: `${dest.address}/32`, ports: String(dest.port) }, ttl_s: 60, max_uses: 1 }], delegate: [] }),
    );
    const jsonOut = path.join(env.st, 'race.jsonl');
    const r = await run(['run', '--state-dir', env.st, '--op', env.op, '--policy', policy, '--json-out', jsonOut, ...id.flags, '--', RACE, '--addr', dest.address, '--port', String(dest.port), '--threads', String(c.threads), '--stagger-us', String(c.stagger), '--rounds', String(c.rounds)]);
    t.equal(r.code, 0, 'the workload ran to its end', { stderr: r.stderr.slice(-2000) });
    const rep = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{"attack":"race"'))
      .map((l) => JSON.parse(l) as Race)[0];
    t.ok(rep, 'the workload reported', { stdout: r.stdout.slice(-2000) });
    if (!rep) return;

    const lines = faultLines(env);
    const faultIds = new Set(
      lines
        .filter((l) => l.kind === 'fault' && (l.fault as { effect: { network?: { port: number } } }).effect.network?.port === dest.port)
        .map((l) => l.fault_id as string),
    );
    const answers = lines.filter((l) => l.kind === 'resolution' && faultIds.has(l.fault_id as string)).map((l) => l.resolution as { action: string; lease?: { max_uses: number } });
    const retried = answers.filter((a) => a.action === 'retry_after_lease');
    t.equal(answers.length, CONNECTS, `every connect was paused and answered (${answers.length})`);
    t.equal(retried.length, CONNECTS, `every answer was retry_after_lease (${answers.map((a) => a.action).filter((a) => a !== 'retry_after_lease').join(',') || 'all'})`);
    t.same(retried.map((a) => a.lease?.max_uses), retried.map(() => 1), 'each with the one use its rule grants');

    t.same({ ok: rep.ok, EPERM: rep.EPERM, EACCES: rep.EACCES, other: rep.other }, { ok: retried.length, EPERM: 0, EACCES: 0, other: 0 }, 'every connect answered retry_after_lease connected', { rep });
    await waitFor(() => dest.conns >= rep.ok, 5000).catch(() => undefined);
    await sleep(100); // a connection beyond them would land by now
    t.equal(dest.conns, retried.length, `the listener accepted exactly the answered connects (${dest.conns})`);

    const summary = fs
      .readFileSync(jsonOut, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.event === 'summary');
    t.match(summary, { exit: 0, leases_installed: CONNECTS }, 'the summary counts one grant per answer');
    t.equal(verify(env).code, 0, 'verify holds');
  });
}
