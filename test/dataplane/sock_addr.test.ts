// Real-kernel tests of the cgroup sock_addr hooks, table-driven in the manner
// of the kernel's selftests/bpf/prog_tests/sock_addr.c: a process placed in a
// fresh test cgroup makes the call; the test asserts the outcome, the
// counters and the ring-buffer events.
import t from 'tap';
import { requireKernel, testOp, probe, tcpServer, udpServer, freePort, waitFor, ringBarrier } from '../helpers/kernel';
import { parseDestination, Tuple } from '../../src/addr';
import { FaultEvent } from '../../src/abi';
import { DataPlane, bootNs } from '../../src/dataplane';

interface Case {
  name: string;
  /** what the probe does */
  op: 'connect' | 'sendto' | 'uring-connect';
  proto: 'tcp' | 'udp';
  /** server/destination host, and the address the probe dials */
  host: string;
  dial?: string;
  v6sock?: boolean;
  /** lease to install for the destination ({} = unlimited, no expiry) */
  lease?: { ttlMs?: number; maxUses?: number; address?: string };
  calls?: number;
  expect: string[];
  /** counters per verdict for the destination */
  counts: Partial<Record<'allow' | 'no_lease' | 'expired' | 'exhausted', number>>;
  delivered?: number;
}

const cases: Case[] = [
  { name: 'tcp4 without lease is EPERM', op: 'connect', proto: 'tcp', host: '127.0.0.1', expect: ['EPERM'], counts: { no_lease: 1 } },
  { name: 'tcp4 with lease connects', op: 'connect', proto: 'tcp', host: '127.0.0.1', lease: {}, expect: ['ok'], counts: { allow: 1 } },
  { name: 'tcp6 without lease is EPERM', op: 'connect', proto: 'tcp', host: '::1', expect: ['EPERM'], counts: { no_lease: 1 } },
  { name: 'tcp6 with lease connects', op: 'connect', proto: 'tcp', host: '::1', lease: {}, expect: ['ok'], counts: { allow: 1 } },
  { name: 'expired lease is denied', op: 'connect', proto: 'tcp', host: '127.0.0.1', lease: { ttlMs: 1 }, expect: ['EPERM'], counts: { expired: 1 } },
  { name: 'uses-left exhausted is denied', op: 'connect', proto: 'tcp', host: '127.0.0.1', lease: { maxUses: 2 }, calls: 4, expect: ['ok', 'ok', 'EPERM', 'EPERM'], counts: { allow: 2, exhausted: 2 } },
  { name: 'udp4 connect without lease is EPERM', op: 'connect', proto: 'udp', host: '127.0.0.1', expect: ['EPERM'], counts: { no_lease: 1 } },
  { name: 'udp4 connect with lease', op: 'connect', proto: 'udp', host: '127.0.0.1', lease: {}, expect: ['ok'], counts: { allow: 1 } },
  { name: 'udp4 unconnected sendto without lease is EPERM', op: 'sendto', proto: 'udp', host: '127.0.0.1', calls: 3, expect: ['EPERM', 'EPERM', 'EPERM'], counts: { no_lease: 3 }, delivered: 0 },
  { name: 'udp4 unconnected sendto with lease is delivered', op: 'sendto', proto: 'udp', host: '127.0.0.1', lease: {}, calls: 3, expect: ['ok', 'ok', 'ok'], counts: { allow: 3 }, delivered: 3 },
  { name: 'udp6 unconnected sendto with lease is delivered', op: 'sendto', proto: 'udp', host: '::1', lease: {}, calls: 2, expect: ['ok', 'ok'], counts: { allow: 2 }, delivered: 2 },
  { name: '::ffff:127.0.0.1 on AF_INET6 meets the IPv4 lease', op: 'connect', proto: 'tcp', host: '127.0.0.1', dial: '::ffff:127.0.0.1', v6sock: true, lease: {}, expect: ['ok'], counts: { allow: 1 } },
  { name: '::ffff:127.0.0.1 on AF_INET6 without IPv4 lease is EPERM', op: 'connect', proto: 'tcp', host: '127.0.0.1', dial: '::ffff:127.0.0.1', v6sock: true, expect: ['EPERM'], counts: { no_lease: 1 } },
  { name: 'io_uring IORING_OP_CONNECT without lease is EPERM', op: 'uring-connect', proto: 'tcp', host: '127.0.0.1', expect: ['EPERM'], counts: { no_lease: 1 } },
  { name: 'io_uring IORING_OP_CONNECT with lease connects', op: 'uring-connect', proto: 'tcp', host: '127.0.0.1', lease: {}, expect: ['ok'], counts: { allow: 1 } },
];

function countsFor(dp: DataPlane, dest: Tuple): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of dp.readCounters()) {
    if (r.tuple.address === dest.address && r.tuple.port === dest.port && r.tuple.protocol === dest.protocol) {
      out[r.verdict] = (out[r.verdict] ?? 0) + Number(r.count);
    }
  }
  return out;
}

let executed = 0;

t.test('sock_addr hooks', async (t) => {
  if (!requireKernel(t)) return;
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const { dp, cgroup } = testOp(t, 'gs-sa');
      const srv = c.proto === 'tcp' ? await tcpServer(t, c.host) : await udpServer(t, c.host);
      const dest = parseDestination(c.proto, c.host.includes(':') ? `[${c.host}]:${srv.port}` : `${c.host}:${srv.port}`);
      if (c.lease) {
        const l = dp.putLease({ tuple: dest, generation: 7n, ttlMs: c.lease.ttlMs ?? null, maxUses: c.lease.maxUses ?? 0 });
        // a lease with a ttl is dialled once it has expired, on the hook's clock
        if (c.lease.ttlMs) await waitFor(() => bootNs() > l.expiresBootNs, 5000, 1);
      }

      const events: FaultEvent[] = [];
      dp.onEvents((evs) => events.push(...evs));
      t.teardown(() => dp.stopEvents());

      const args = ['--cgroup', cgroup, '--repeat', String(c.calls ?? 1)];
      if (c.v6sock) args.push('--v6sock');
      const r = await probe([...args, c.op, c.proto, c.dial ?? c.host, String(srv.port)]);
      t.same(r.results.map((x) => x.result), c.expect, 'call outcomes');

      t.same(countsFor(dp, dest), c.counts, 'counters per verdict equal the calls made');
      // a case's calls go to one destination within the hook's rate-limit
      // window: its denials put one event on the ring; the counters count each
      const denied = c.expect.some((x) => x !== 'ok') ? 1 : 0;
      // every event the calls put on the ring is delivered before a later marker's
      await ringBarrier(events, cgroup).catch((e: Error) => t.fail(`ring barrier: ${e.message}`));
      t.equal(events.length, denied, 'one ring-buffer event per denied destination');
      for (const e of events) {
        t.equal(e.tgid, r.pid, 'event tgid is the calling process');
        t.match(e.tuple, { family: dest.family, protocol: dest.protocol, address: dest.address, port: dest.port }, 'event tuple');
      }
      if (c.lease?.ttlMs) t.ok(events.every((e) => e.reason === 'expired'), 'reason expired');
      if (c.lease?.maxUses) t.ok(events.every((e) => e.reason === 'exhausted'), 'reason exhausted');
      if (c.delivered !== undefined && 'received' in srv) {
        if (c.delivered > 0) await waitFor(() => srv.received() >= c.delivered!, 2000).catch(() => undefined);
        t.equal(srv.received(), c.delivered, 'datagrams delivered');
      }
      executed++;
    });
  }
});

t.test('counters equal the calls made, per destination and reason', async (t) => {
  if (!requireKernel(t)) return;
  const { dp, cgroup } = testOp(t, 'gs-cnt');
  const a = await tcpServer(t);
  const b = await tcpServer(t);
  const unleased = await freePort();
  const ta = parseDestination('tcp', `127.0.0.1:${a.port}`);
  const tb = parseDestination('tcp', `127.0.0.1:${b.port}`);
  const tu = parseDestination('tcp', `127.0.0.1:${unleased}`);
  dp.putLease({ tuple: ta, generation: 1n });
  dp.putLease({ tuple: tb, generation: 2n });
  const events: FaultEvent[] = [];
  dp.onEvents((evs) => events.push(...evs));
  t.teardown(() => dp.stopEvents());
  const ra = await probe(['--cgroup', cgroup, '--repeat', '25', '--summary', 'connect', 'tcp', '127.0.0.1', String(a.port)]);
  const rb = await probe(['--cgroup', cgroup, '--repeat', '11', '--summary', 'connect', 'tcp', '127.0.0.1', String(b.port)]);
  const ru = await probe(['--cgroup', cgroup, '--repeat', '17', '--summary', 'connect', 'tcp', '127.0.0.1', String(unleased)]);
  t.equal(ra.summary?.ok, 25);
  t.equal(rb.summary?.ok, 11);
  t.equal(ru.summary?.EPERM, 17);
  t.same(countsFor(dp, ta), { allow: 25 });
  t.same(countsFor(dp, tb), { allow: 11 });
  t.same(countsFor(dp, tu), { no_lease: 17 });
  const gens = dp.readCounters().filter((r) => r.verdict === 'allow').map((r) => [r.tuple.port, Number(r.generation)]);
  t.same(gens.sort(), [[a.port, 1], [b.port, 2]].sort(), 'allow counters carry the lease generation');
  await ringBarrier(events, cgroup).catch((e: Error) => t.fail(`ring barrier: ${e.message}`));
  // 17 denials of one destination inside the rate-limit window: counted 17 times, one event
  t.equal(events.length, 1, 'exactly one event for the denied destination');
  t.ok(events.every((e) => e.tgid === ru.pid && e.tuple.port === unleased), 'events name the denied process and tuple');
  t.equal(dp.stats().lostEvents, 0n, 'no lost events');
  executed++;
});

t.teardown(() => {
  process.stdout.write(`# kernel sock_addr cases executed: ${executed} of ${cases.length + 1}\n`);
});
