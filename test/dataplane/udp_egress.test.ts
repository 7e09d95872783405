// Real-kernel tests of the UDP egress check (cgroup_skb/egress): a connected
// UDP socket's send() carries no address, so only this program stands
// between it and a lease that has ended. Table-driven like sock_addr.test.ts:
// a gs-probe placed in a fresh cgroup with the hooks attached connects once
// and sends a stamped datagram every interval; a loopback listener records
// what arrives. Every message carries its CLOCK_BOOTTIME send time, so the
// assertions need no timing margin: a send that started after the lease
// ended must fail with EPERM, and nothing sent after it may arrive.
import t from 'tap';
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import { requireKernel, testOp, probe, ProbeResult, T, sleep, waitFor } from '../helpers/kernel';
import { parseDestination, Tuple } from '../../src/addr';
import { DataPlane, bootNs, hookLinkNames } from '../../src/dataplane';

/** one datagram (or TCP message) as the listener saw it */
interface Rx {
  seq: number;
  /** the sender's CLOCK_BOOTTIME before send() */
  t0: bigint;
  /** CLOCK_BOOTTIME at receipt */
  at: bigint;
}

interface Send {
  seq: number;
  result: string;
  t0: bigint;
  t1: bigint;
}

function parseMessages(buf: Buffer, at: bigint): Rx[] {
  const out: Rx[] = [];
  for (const line of buf.toString('latin1').split('\n')) {
    const m = /^(\d{10}) (\d{20})$/.exec(line);
    if (m) out.push({ seq: Number(m[1]), t0: BigInt(m[2]), at });
  }
  return out;
}

/** rx: the stamped messages; datagrams(): every datagram, stamped or not */
async function udpListener(t: T, host: string): Promise<{ port: number; rx: Rx[]; datagrams: () => number }> {
  const rx: Rx[] = [];
  let datagrams = 0;
  const sock = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 1 << 20 });
  sock.on('message', (m) => {
    datagrams++;
    rx.push(...parseMessages(m, bootNs()));
  });
  await new Promise<void>((res) => sock.bind(0, host, () => res()));
  t.teardown(() => new Promise<void>((res) => sock.close(() => res())));
  return { port: sock.address().port, rx, datagrams: () => datagrams };
}

async function tcpListener(t: T, host: string): Promise<{ port: number; rx: Rx[] }> {
  const rx: Rx[] = [];
  const conns = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    conns.add(s);
    let pending = '';
    s.on('data', (d) => {
      pending += d.toString('latin1');
      const cut = pending.lastIndexOf('\n') + 1;
      rx.push(...parseMessages(Buffer.from(pending.slice(0, cut), 'latin1'), bootNs()));
      pending = pending.slice(cut);
    });
    s.on('error', () => undefined);
    s.on('close', () => conns.delete(s));
  });
  await new Promise<void>((res) => srv.listen(0, host, () => res()));
  t.teardown(() => {
    for (const s of conns) s.destroy();
    return new Promise<void>((res) => srv.close(() => res()));
  });
  return { port: (srv.address() as net.AddressInfo).port, rx };
}

function sendsOf(r: ProbeResult): { connect: string; sends: Send[] } {
  let connect = '';
  const sends: Send[] = [];
  for (const line of r.raw.trim().split('\n')) {
    const l = JSON.parse(line) as { call?: string; result: string; seq: number; t0: string; t1: string };
    if (l.call === 'connect') connect = l.result;
    else if (l.call === 'send') sends.push({ seq: l.seq, result: l.result, t0: BigInt(l.t0), t1: BigInt(l.t1) });
  }
  return { connect, sends };
}

function countsFor(dp: DataPlane, dest: Tuple): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of dp.readCounters()) {
    if (r.tuple.family === dest.family && r.tuple.address === dest.address && r.tuple.port === dest.port && r.tuple.protocol === dest.protocol) {
      out[r.verdict] = (out[r.verdict] ?? 0) + Number(r.count);
    }
  }
  return out;
}

function dial(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

interface Case {
  name: string;
  proto: 'udp' | 'tcp';
  host: string;
  /** the lease: ttlMs = expiry, none = never; maxUses 0 = unlimited */
  lease: { ttlMs?: number; maxUses?: number };
  /** remove the lease from the map this long after the probe started */
  revokeAfterMs?: number;
  repeat: number;
  intervalMs: number;
  flags?: string[];
  /** the lease ends mid-stream: sends after it fail, nothing sent after it arrives */
  ends?: 'expired' | 'no_lease';
}

const cases: Case[] = [
  { name: 'udp4: lease expires mid-stream', proto: 'udp', host: '127.0.0.1', lease: { ttlMs: 1000 }, repeat: 60, intervalMs: 50, ends: 'expired' },
  { name: 'udp6: lease expires mid-stream', proto: 'udp', host: '::1', lease: { ttlMs: 1000 }, repeat: 60, intervalMs: 50, ends: 'expired' },
  { name: 'udp4: lease revoked mid-stream', proto: 'udp', host: '127.0.0.1', lease: {}, revokeAfterMs: 1000, repeat: 60, intervalMs: 50, ends: 'no_lease' },
  { name: 'udp6: lease revoked mid-stream', proto: 'udp', host: '::1', lease: {}, revokeAfterMs: 1000, repeat: 60, intervalMs: 50, ends: 'no_lease' },
  // a grant is installed as a lease without expiry: DNS to a granted stub keeps working
  { name: 'udp4: lease without expiry (a grant) to 127.0.0.53 keeps working', proto: 'udp', host: '127.0.0.53', lease: {}, repeat: 20, intervalMs: 50 },
  { name: 'udp4: a use is the connect, not a datagram (max_uses 1)', proto: 'udp', host: '127.0.0.1', lease: { maxUses: 1 }, repeat: 10, intervalMs: 10 },
  // IPv4 options are refused outright now (source routing): test/adversarial/boundary.test.ts
  { name: 'udp6 behind a destination options header: the port is read after it', proto: 'udp', host: '::1', lease: {}, repeat: 5, intervalMs: 0, flags: ['--v6-dstopts'] },
  // the egress check is UDP's alone: TCP is authorized once, at connect
  { name: 'tcp4: an established connection outlives its lease', proto: 'tcp', host: '127.0.0.1', lease: { ttlMs: 500 }, repeat: 30, intervalMs: 50 },
  { name: 'tcp6: an established connection outlives its lease', proto: 'tcp', host: '::1', lease: { ttlMs: 500 }, repeat: 30, intervalMs: 50 },
];

let executed = 0;

t.test('UDP egress check', async (t) => {
  if (!requireKernel(t)) return;
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const { dp, cgroup } = testOp(t, 'gs-ue');
      const srv = c.proto === 'udp' ? await udpListener(t, c.host) : await tcpListener(t, c.host);
      const dest = parseDestination(c.proto, dial(c.host, srv.port));
      const lease = dp.putLease({ tuple: dest, generation: 5n, ttlMs: c.lease.ttlMs ?? null, maxUses: c.lease.maxUses ?? 0 });

      const run = probe(['--cgroup', cgroup, '--repeat', String(c.repeat), '--interval', String(c.intervalMs), ...(c.flags ?? []), 'connected-send', c.proto, c.host, String(srv.port)]);
      // when the lease ended: [from, to] brackets the moment (equal for an expiry)
      let from = lease.expiresBootNs;
      let to = lease.expiresBootNs;
      if (c.revokeAfterMs !== undefined) {
        await sleep(c.revokeAfterMs);
        from = bootNs();
        t.ok(dp.removeLease(dest), 'lease revoked');
        to = bootNs();
      }
      const { connect, sends } = sendsOf(await run);
      t.equal(connect, 'ok', 'connect authorized by the lease');
      t.equal(sends.length, c.repeat, 'every send reported');
      const ok = sends.filter((s) => s.result === 'ok');
      await waitFor(() => srv.rx.length >= ok.length, 2000).catch(() => undefined);
      await sleep(50); // a datagram that should not have left would be here by now

      if (!c.ends) {
        t.equal(ok.length, c.repeat, 'every send succeeds');
        t.equal(srv.rx.length, c.repeat, 'every message arrives');
        if (c.proto === 'tcp') {
          t.ok(sends.some((s) => s.t0 > lease.expiresBootNs), 'sends went on after the lease expired');
          const again = await probe(['--cgroup', cgroup, 'connect', 'tcp', c.host, String(srv.port)]);
          t.same(again.results.map((x) => x.result), ['EPERM'], 'a new connect after expiry is refused');
          t.same(countsFor(dp, dest), { allow: 1, expired: 1 }, 'counters: the first connect allowed, the second expired, no packet counted');
        } else {
          t.same(countsFor(dp, dest), { allow: 1 }, 'counters: the connect is the one use; datagrams are not counted');
          if (c.lease.maxUses) t.equal(dp.getLease(dest)?.usesLeft, 0n, 'the connect spent the only use; the datagrams spent none');
        }
        executed++;
        return;
      }

      const before = sends.filter((s) => s.t1 < from);
      const after = sends.filter((s) => s.t0 >= to);
      t.ok(before.length >= 10, `sends before the lease ended: ${before.length}`);
      t.ok(after.length >= 10, `sends after the lease ended: ${after.length}`);
      t.ok(before.every((s) => s.result === 'ok'), 'every send that finished before the end succeeded');
      t.ok(after.every((s) => s.result === 'EPERM'), 'every send that started after the end failed with EPERM');
      const late = srv.rx.filter((r) => r.t0 >= to);
      t.same(late, [], 'no datagram sent after the end arrived');
      t.equal(srv.rx.length, ok.length, 'datagrams received = sends that succeeded');
      if (c.lease.ttlMs) {
        const fits = Math.ceil((c.lease.ttlMs + 200) / c.intervalMs) + 1;
        t.ok(srv.rx.length <= fits, `received ${srv.rx.length} <= ${fits}, what fits in the TTL + 200 ms`);
      }
      const lastAt = srv.rx.reduce((m, r) => (r.at > m ? r.at : m), 0n);
      t.comment(`${c.name}: ${before.length} sent before the end, ${srv.rx.length} received; ${sends.length - ok.length} EPERM; last receipt ${Number(lastAt - to) / 1e6} ms after the end`);
      t.same(countsFor(dp, dest), { allow: 1, [c.ends]: sends.length - ok.length }, `counters: the connect allowed, every dropped datagram ${c.ends}`);
      executed++;
    });
  }
});

t.test('unconnected sendto: the datagram of the send that spent the last use leaves', async (t) => {
  if (!requireKernel(t)) return;
  const { dp, cgroup } = testOp(t, 'gs-ue');
  const srv = await udpListener(t, '127.0.0.1');
  const dest = parseDestination('udp', dial('127.0.0.1', srv.port));
  dp.putLease({ tuple: dest, generation: 5n, maxUses: 2 });
  const r = await probe(['--cgroup', cgroup, '--repeat', '3', 'sendto', 'udp', '127.0.0.1', String(srv.port)]);
  t.same(r.results.map((x) => x.result), ['ok', 'ok', 'EPERM'], 'two uses, then exhausted at sendmsg');
  await waitFor(() => srv.datagrams() >= 2, 2000).catch(() => undefined);
  await sleep(30);
  t.equal(srv.datagrams(), 2, 'both datagrams arrived');
  t.same(countsFor(dp, dest), { allow: 2, exhausted: 1 }, 'counters: two uses, one exhausted, no packet drop');
  executed++;
});

t.test('the egress program is one of the pinned links', async (t) => {
  if (!requireKernel(t)) return;
  t.same(hookLinkNames(), [
    'link_connect4', 'link_connect6', 'link_sendmsg4', 'link_sendmsg6', 'link_udp_egress', 'link_sock_create',
    'link_setsockopt', 'link_bind4', 'link_bind6', 'link_connect_unix', 'link_sendmsg_unix',
  ]);
  executed++;
});

t.teardown(() => {
  process.stdout.write(`# kernel udp egress cases executed: ${executed} of ${cases.length + 2}\n`);
});
