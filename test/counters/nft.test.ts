// Acceptance (--nft): the operation's nftables table exists while it runs
// (a table left by a killed run is replaced), its per-element allow counters
// agree with the eBPF ones for the same traffic, its counted default deny
// catches what the socket hooks never see (a raw socket), and the table is
// removed when the operation is closed.
import t from 'tap';
import * as path from 'node:path';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { probe, tcpServer, udpServer, testCgroup, uniqueName, waitFor, freePort } from '../helpers/kernel';
import { shortStateDir, workload, networkFault } from '../helpers/supervisor';
import { Supervisor } from '../../src/supervisor';
import { detachHooks } from '../../src/dataplane';
import { parsePolicy, policyHash } from '../../src/protocol/json';
import { readKey } from '../../src/state/operation';
import { submitFault } from '../../src/resolver/client';
import { encodeFault } from '../../src/protocol/codec';
import { NftBackend, nftTableExists, nftTableName, nftRemoveTable, nftCgroupMatch } from '../../src/backends/nft';
import { findCgroup2Mount } from '../../src/cgroup';
import { pinDirFor } from '../../src/bpffs';
import { counterLines, sumDelta, matching, requireNft, leasePolicy } from './lib';

const POLICY = leasePolicy(
  { network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '1024-65535' }, ttl_s: 120, max_uses: 0 },
  { network: { protocol: 'udp', cidr: '127.0.0.1/32', ports: '1024-65535' }, ttl_s: 120, max_uses: 0 },
);

/** a raw ICMP echo from inside the cgroup: no connect/sendmsg hook sees it */
function rawPing(cgroup: string): Promise<string> {
  const py = `
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b)//2), b))
    s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
hdr = struct.pack('!BBHHH', 8, 0, 0, 0x4747, 1)
pkt = struct.pack('!BBHHH', 8, 0, csum(hdr + b'gensee!!'), 0x4747, 1) + b'gensee!!'
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
try:
    s.sendto(pkt, ('127.0.0.1', 0)); print('sent')
except OSError as e:
    print('errno', e.errno)
`;
  return new Promise((resolve, reject) => {
    const c = spawn('sh', ['-c', `echo $$ > "${path.join(cgroup, 'cgroup.procs')}" && exec python3 -c "$0"`, py], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.on('error', reject);
    c.on('close', () => resolve(out.trim()));
  });
}

t.test('nftables layer: table, agreeing counters, default deny, removal at close', async (t) => {
  if (!(await requireNft(t))) return;
  const cgroup = testCgroup(t, 'gs-nf');
  const op = uniqueName('gs-nf');
  const table = nftTableName(op);
  const stateDir = shortStateDir(t);
  t.teardown(async () => {
    detachHooks(op);
    await nftRemoveTable(table).catch(() => undefined);
  });
  const m = nftCgroupMatch(cgroup);
  t.equal(m.level, path.relative(findCgroup2Mount(), cgroup).split('/').length, `level = depth below the cgroup2 mount (${m.level}, "${m.path}")`);

  // a table left by a killed run, with an element that would allow too much
  execFileSync('nft', ['-f', '-'], { input: NftBackend.rulesetText(table, cgroup) + `add element inet ${table} allow4 { 127.0.0.1 . tcp . 9 }\n` });
  t.ok(await nftTableExists(table), 'leftover table present before start');

  const text = JSON.stringify(POLICY);
  const sup = await Supervisor.start({ stateDir, op, cgroup, policy: { policy: parsePolicy(POLICY), hash: policyHash(text) }, nft: true, onError: () => undefined });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await sup.stop({ close: true });
  });
  t.ok(await nftTableExists(table), 'table exists while the operation runs');
  const list = execFileSync('nft', ['list', 'table', 'inet', table]).toString();
  t.notMatch(list, /127\.0\.0\.1 \. tcp \. 9\b/, 'the leftover table was replaced, not reused');
  t.match(list, new RegExp(`socket cgroupv2 level ${m.level} "${m.path.replace(/[.]/g, '\\.')}"`), 'chain scoped to the operation cgroup');
  t.ok(counterLines(stateDir, op).some((l) => l.kind === 'nft_table' && l.replaced === true), 'replacement recorded');

  const key = await readKey(stateDir, op);
  const w = await workload(t, cgroup);
  const tcp = await tcpServer(t);
  const udp = await udpServer(t);
  for (const [proto, port] of [['tcp', tcp.port], ['udp', udp.port]] as const) {
    const f = networkFault(op, w.pid, w.start, proto, '127.0.0.1', port);
    const r = await submitFault({ socketPath: sup.socketPath, body: encodeFault(f), faultId: f.fault_id, key, resolver: sup.record.resolver });
    t.equal(r.resolution.action, 'retry_after_lease', `${proto} leased`);
  }
  t.match(execFileSync('nft', ['list', 'set', 'inet', table, 'allow4']).toString(), new RegExp(`127\\.0\\.0\\.1 \\. tcp \\. ${tcp.port}`), 'the lease is an element before the answer');

  const T = 30;
  const U = 25;
  const [pt, pu] = await Promise.all([
    probe(['--cgroup', cgroup, '--repeat', String(T), '--interval', '5', '--summary', 'connect', 'tcp', '127.0.0.1', String(tcp.port)]),
    probe(['--cgroup', cgroup, '--repeat', String(U), '--interval', '5', '--summary', 'sendto', 'udp', '127.0.0.1', String(udp.port)]),
  ]);
  t.equal(pt.summary?.ok, T, 'tcp connects pass both layers');
  t.equal(pu.summary?.ok, U, 'udp sends pass both layers');
  // a destination without a lease: the hook refuses before any packet exists
  const denied = await freePort();
  await probe(['--cgroup', cgroup, '--repeat', '3', '--summary', 'connect', 'tcp', '127.0.0.2', String(denied)]);
  // cgroup/sock_create refuses a raw socket in the cgroup outright; with that
  // hook detached, nft (whose output chain runs before the cgroup's egress
  // program) is what drops and counts the raw packet: the second layer holds alone
  const pinned = path.join(pinDirFor(op), 'link_sock_create');
  t.equal(spawnSync('bpftool', ['link', 'detach', 'pinned', pinned]).status, 0, 'the socket-kind hook detached for this check');
  const ping = await rawPing(cgroup);
  t.match(ping, /^errno 1$/, `a raw ICMP packet from the cgroup is dropped by nft (${ping})`);

  const lines = await waitFor(() => {
    const l = counterLines(stateDir, op);
    return sumDelta(l, { kind: 'allow', source: 'nft', port: tcp.port }) === T && sumDelta(l, { kind: 'allow', source: 'nft', port: udp.port }) === U && sumDelta(l, { kind: 'deny', source: 'nft' }) >= 1 ? l : null;
  }, 6000, 100).catch(() => counterLines(stateDir, op));
  for (const [name, port, n] of [['tcp', tcp.port, T], ['udp', udp.port, U]] as const) {
    const e = sumDelta(lines, { kind: 'allow', source: 'ebpf', port });
    const x = sumDelta(lines, { kind: 'allow', source: 'nft', port });
    t.equal(e, n, `${name}: eBPF allow deltas = ${n} calls`);
    t.equal(x, e, `${name}: nftables allow deltas agree with eBPF (${x})`);
    t.ok(matching(lines, { kind: 'allow', source: 'nft', port }).every((l) => typeof l.generation === 'number'), `${name}: nft deltas attributed to the lease generation`);
  }
  t.ok(sumDelta(lines, { kind: 'deny', source: 'nft', reason: 'nft_default_deny' }) >= 1, 'the raw packet is counted by the default deny');
  t.equal(sumDelta(lines, { kind: 'allow', source: 'nft', address: '127.0.0.2' }), 0, 'nothing unleased at packet level');

  await sup.stop({ close: true });
  stopped = true;
  t.notOk(await nftTableExists(table), 'table removed when the operation is closed');
});

t.test('socket cgroupv2 matches a nested cgroup under the hybrid mount (level = depth)', async (t) => {
  if (!(await requireNft(t))) return;
  const parent = testCgroup(t, 'gs-nn');
  const child = path.join(parent, 'inner');
  (await import('node:fs')).mkdirSync(child);
  const op = uniqueName('gs-nn');
  const srv = await tcpServer(t);
  const { nft } = await NftBackend.create({ op, cgroup: child, elements: [{ tuple: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: srv.port }, expiresBootNs: 0n }], nowBootNs: 0n });
  t.teardown(() => nft.destroy().catch(() => undefined));
  t.equal(nftCgroupMatch(child).level, nftCgroupMatch(parent).level + 1, 'one level deeper');
  const p = await probe(['--cgroup', child, '--repeat', '4', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(p.summary?.ok, 4);
  const c = await nft.read();
  t.equal(c.allow.get(`ipv4/tcp/127.0.0.1/${srv.port}`)?.packets, 4n, 'the nested cgroup\'s flows hit its element');
  const outside = await probe(['--cgroup', parent, '--repeat', '2', '--summary', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.equal(outside.summary?.ok, 2, 'the parent is not matched (its flows skip the table)');
  t.equal((await nft.read()).allow.get(`ipv4/tcp/127.0.0.1/${srv.port}`)?.packets, 4n, 'and are not counted');
});
