// The adversarial suite's listeners are proven to count: the same attack
// program aimed at the ports the policy allows gets its bytes counted, under
// both identities; aimed at the denied ports, nothing. And outside gensee
// (no boundary at all) the egress attacks do reach the denied listeners, so
// their refusal under gensee is the boundary's doing, not a broken attack.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { requireKernel } from '../helpers/kernel';
import { ATTACK, IDENTITIES, attackEnv, runAttack, assertHeld, worked, verify } from './lib';

for (const id of IDENTITIES) {
  t.test(`control, ${id.name}: the allowed ports are reached and counted`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-ctl');
    const r = await runAttack(env, 'plain', {
      identity: id.flags,
      // aim the plain attack at the allowed ports
      args: ['--port', String(env.allowed.port), '--uport', String(env.allowedUdp.port)],
    });
    const rep = r.reports.find((x) => x.attack === 'plain');
    t.ok(rep, `the program ran under gensee run (exit ${r.code}) ${r.stderr.slice(-500)}`);
    t.same(worked(rep).sort(), ['connect', 'sendto_udp', 'uring_connect'], 'it reports its allowed connects and datagram as worked', { rep });
    t.ok(env.allowed.bytes > 0, `bytes reached the allowed TCP listener (${env.allowed.bytes})`);
    t.equal(env.allowed.conns, 2, 'both connections (connect, io_uring) were counted');
    t.equal(env.allowedUdp.conns, 1, 'the datagram was counted');
    t.equal(verify(env).code, 0, 'verify holds');
  });

  t.test(`control, ${id.name}: the denied ports are not`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-ctl');
    const r = await runAttack(env, 'plain', { identity: id.flags });
    await assertHeld(t, env, r, 'plain');
  });
}

t.test('without gensee, the egress attacks reach the denied listeners', async (t) => {
  if (!requireKernel(t)) return;
  const env = await attackEnv(t, 'adv-raw');
  for (const mode of ['udp', 'alias', 'raw']) {
    const r = spawnSync(ATTACK, [mode, '--port', String(env.denied.port), '--uport', String(env.deniedUdp.port)], { encoding: 'utf8', timeout: 20_000 });
    const rep = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { attempts?: Record<string, string> };
    const bad = Object.entries(rep.attempts ?? {}).filter(([, v]) => v !== 'ok');
    t.same(bad, [], `${mode}: as host root with no boundary, every attempt works`);
  }
  await new Promise((r) => setTimeout(r, 150));
  t.ok(env.denied.bytes > 0, `bytes reached the TCP listener (${env.denied.bytes})`);
  // udp: 7 datagrams (sendto x3, sendmsg, sendmmsg x2, write, uring); raw: 3
  t.ok(env.deniedUdp.conns >= 10, `datagrams reached the UDP listener, raw and packet ones included (${env.deniedUdp.conns})`);
});
