// The expiry sweep compares the kernel lease map with the record in slices,
// a turn of the event loop between two (src/envelope/lease-scan.ts). The
// resolver runs in those turns: a lease the comparison found expired or used
// up may be replaced or topped up before the sweep acts. The sweep re-checks
// each candidate in the step that acts (settle: the same record lease, and a
// compare-and-delete of the kernel entry as it was compared), so such a lease
// stays; and expired, adopted and gone leases are still found across slices.
import t from 'tap';
import { requireKernel, probe, tcpServer, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, TestSup } from '../helpers/supervisor';
import { counterLines, leasePolicy } from '../counters/lib';
import { bootNs, Lease } from '../../src/dataplane';
import { editLeases } from '../../src/envelope/generations';
import type { Envelope } from '../../src/envelope/envelope';
import type { LeaseScan, ScanResult } from '../../src/envelope/lease-scan';
import type { Tuple } from '../../src/addr';
import { LeaseRecord, leaseKey } from '../../src/state/network';

/** enough leases for a reading to take several slices */
const FILLER = 8000;

const POLICY = leasePolicy(
  // replaced when it has expired: a new lease of its own
  { network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: '1024-65535' }, ttl_s: 1, max_uses: 0 },
  // topped up when used up: uses added in place
  { network: { protocol: 'tcp', cidr: '127.0.0.2/32', ports: '1024-65535' }, ttl_s: 60, max_uses: 1 },
);

const tcp = (address: string, port: number): Tuple => ({ family: 'ipv4', protocol: 'tcp', address, port });

/** FILLER live leases, long-lived, in the kernel map and the record (one synchronous step) */
function fill(s: TestSup, base: number): void {
  const ev = s.sup.envelope!;
  const net = s.sup.resolver.network;
  const exp = bootNs() + 3600n * 1_000_000_000n;
  const at = new Date().toISOString();
  const recs: LeaseRecord[] = [];
  for (let i = 0; i < FILLER; i++) {
    const tu = tcp(`10.${base}.${(i >> 8) & 255}.${i & 255}`, 443);
    s.sup.dp.putLease({ tuple: tu, generation: BigInt(ev.policyGeneration), expiresBootNs: exp });
    recs.push({ generation: ev.policyGeneration, ...tu, expires_at_boot_ns: String(exp), max_uses: 0, installed_at: at });
  }
  net.setRecord(editLeases(net.record, new Set(), recs));
}

/** the envelope's scan and its synchronous step, for a look between the two and after the second */
function interpose(ev: Envelope, between: (found: ScanResult) => Promise<void>, after: (found: ScanResult, scan: LeaseScan) => void): void {
  const scan = ev['scan'];
  const sliced = scan.scanSliced.bind(scan);
  scan.scanSliced = async (...a) => {
    const found = await sliced(...a);
    if (found) await between(found);
    return found;
  };
  const sweep = ev['sweepAndSample'].bind(ev);
  ev['sweepAndSample'] = (at, found) => {
    const changed = sweep(at, found);
    if (found) after(found, scan);
    return changed;
  };
}

const has = (found: ScanResult, port: number, address: string) => found.expired.some((e) => ('tuple' in e.lease ? e.lease.tuple : e.lease).port === port && ('tuple' in e.lease ? e.lease.tuple : e.lease).address === address);

t.test('a lease replaced or topped up between the comparison and the act stays', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-lsw');
  const ev = s.sup.envelope!;
  const w = await workload(t, s.cgroup);
  const srvY = await tcpServer(t, '127.0.0.1');
  const srvX = await tcpServer(t, '127.0.0.2');
  const srvZ = await tcpServer(t, '127.0.0.2');
  const Y = tcp('127.0.0.1', srvY.port);
  const X = tcp('127.0.0.2', srvX.port);
  const Z = tcp('127.0.0.2', srvZ.port);
  fill(s, 71);
  // what each candidate's turn did, and what the kernel held right after the act
  const renewed = new Map<string, { generation: number; slices?: number; kernel?: Lease | null; stale?: number }>();
  const renew = async (tu: Tuple) => {
    const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', tu.address, tu.port));
    t.equal(r.resolution.action, 'retry_after_lease', `${tu.address}:${tu.port} granted again by the resolver`);
    return r.resolution.lease!.generation;
  };
  interpose(
    ev,
    async (found) => {
      // the resolver, between the comparison and the act: Y replaced (expired), X topped up (used up)
      if (!renewed.has('Y') && has(found, Y.port, Y.address)) renewed.set('Y', { generation: await renew(Y) });
      if (!renewed.has('X') && has(found, X.port, X.address)) renewed.set('X', { generation: await renew(X) });
      // Z: its kernel entry alone gets a use back (the record as compared): the compare-and-delete sees it live
      if (!renewed.has('Z') && has(found, Z.port, Z.address)) {
        const cur = s.sup.dp.getLease(Z)!;
        s.sup.dp.topUpLease(Z, 1, cur.expiresBootNs, bootNs(), 0n);
        renewed.set('Z', { generation: Number(cur.generation) });
      }
    },
    (found, scan) => {
      for (const [name, tu] of [['Y', Y], ['X', X], ['Z', Z]] as const) {
        const r = renewed.get(name);
        if (r && r.kernel === undefined && has(found, tu.port, tu.address)) Object.assign(r, { kernel: s.sup.dp.getLease(tu), slices: scan.stats.slices, stale: scan.stats.stale });
      }
    },
  );
  const first = new Map<string, number>();
  for (const [name, tu] of [['Y', Y], ['X', X], ['Z', Z]] as const) {
    const r = await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', tu.address, tu.port));
    t.equal(r.resolution.action, 'retry_after_lease');
    first.set(name, r.resolution.lease!.generation);
  }
  // no lease from the hooks' refusals: the resolver grants only what the test asks
  s.sup.dp.stopEvents();
  for (const tu of [X, Z]) {
    const p = await probe(['--cgroup', s.cgroup, '--repeat', '2', '--summary', 'connect', 'tcp', tu.address, String(tu.port)]);
    t.match(p.summary, { ok: 1, EPERM: 1 }, `${tu.address}:${tu.port}: its one use, then used up`);
  }
  // Y expires after 1 s; X and Z are used up now
  await waitFor(() => ['Y', 'X', 'Z'].every((n) => renewed.get(n)?.kernel !== undefined), 15_000, 20);
  for (const name of ['Y', 'X', 'Z']) {
    const r = renewed.get(name)!;
    t.ok(r.slices! > 1, `${name}: found by a reading of ${r.slices} slices`);
    t.ok(r.kernel, `${name}: still in the kernel map after that reading acted`);
    t.equal(Number(r.kernel!.generation), r.generation, `${name}: the entry as the resolver left it (generation ${r.generation})`);
  }
  t.not(renewed.get('Y')!.generation, first.get('Y'), 'Y was replaced by a lease of a new generation');
  t.not(renewed.get('X')!.generation, first.get('X'), 'X was topped up under the new grant\'s generation');
  t.equal(renewed.get('Z')!.generation, first.get('Z'), 'Z kept its generation');
  t.equal(renewed.get('X')!.kernel!.usesLeft, 1n, 'X has the use the top-up added');
  t.equal(renewed.get('Z')!.kernel!.usesLeft, 1n, 'Z has the use given back in the kernel');
  t.ok(ev['scan'].stats.stale >= 3, `the re-check left them alone (${ev['scan'].stats.stale} stale)`);
  // the record: Y and X as the resolver recorded them, Z as before
  const net = s.sup.resolver.network;
  t.equal(net.recordedLease(leaseKey(Y))?.generation, renewed.get('Y')!.generation, 'Y recorded with its new generation');
  t.equal(net.recordedLease(leaseKey(X))?.generation, renewed.get('X')!.generation, 'X recorded with its new generation');
  t.equal(net.recordedLease(leaseKey(Z))?.generation, first.get('Z'), 'Z still recorded');
  // the evidence: Y's and X's old leases were replaced, none of the three expired by that reading
  await waitFor(() => counterLines(s.stateDir, s.op).filter((l) => l.kind === 'lease_replaced' && (l.port === X.port || l.port === Y.port)).length >= 2, 5000, 20);
  const lines = counterLines(s.stateDir, s.op);
  for (const [name, tu] of [['Y', Y], ['X', X], ['Z', Z]] as const) {
    t.notOk(
      lines.some((l) => l.kind === 'lease_expired' && l.port === tu.port && l.address === tu.address && l.generation === first.get(name)),
      `${name}: no lease_expired line for the lease the reading compared`,
    );
  }
  // Z, unchanged in the record and live again in the kernel, is used once more and then ends as exhausted
  const p = await probe(['--cgroup', s.cgroup, 'connect', 'tcp', Z.address, String(Z.port)]);
  t.same(p.results.map((x) => x.result), ['ok'], 'Z: the use given back is there');
  const end = await waitFor(() => counterLines(s.stateDir, s.op).find((l) => l.kind === 'lease_expired' && l.port === Z.port && l.address === Z.address), 10_000, 20);
  t.match(end, { why: 'exhausted', generation: first.get('Z') }, 'Z: removed once used up again');
  t.equal(s.sup.dp.getLease(Z), null, 'Z: out of the kernel map');
});

t.test('expired, adopted and gone leases are still found across slices', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, POLICY, 'gs-lsf');
  const ev = s.sup.envelope!;
  const net = s.sup.resolver.network;
  const seen = new Map<string, number>();
  const E = tcp('10.72.250.1', 443);
  const A = tcp('10.72.250.2', 443);
  const G = tcp('10.72.250.3', 443);
  interpose(
    ev,
    async () => undefined,
    (found, scan) => {
      const mark = (name: string, hit: boolean) => {
        if (hit && !seen.has(name)) seen.set(name, scan.stats.slices);
      };
      mark('E', has(found, E.port, E.address));
      mark('A', found.adopt.some((a) => a.lease.tuple.address === A.address));
      mark('G', found.gone.some((g) => g.lease.address === G.address));
    },
  );
  // one synchronous step: no reading sees half of it
  fill(s, 72);
  const gen = ev.policyGeneration;
  const at = new Date().toISOString();
  const soon = bootNs() + 300_000_000n;
  s.sup.dp.putLease({ tuple: E, generation: BigInt(gen), expiresBootNs: soon });
  s.sup.dp.putLease({ tuple: A, generation: BigInt(gen), ttlMs: 600_000 });
  const rec = (tu: Tuple, expires: bigint): LeaseRecord => ({ generation: gen, ...tu, expires_at_boot_ns: String(expires), max_uses: 0, installed_at: at });
  net.setRecord(editLeases(net.record, new Set(), [rec(E, soon), rec(G, bootNs() + 600_000_000_000n)]));
  await waitFor(() => seen.size === 3, 15_000, 20);
  for (const [name, slices] of seen) t.ok(slices > 1, `${name}: found by a reading of ${slices} slices`);
  t.equal(s.sup.dp.getLease(E), null, 'E: expired, out of the kernel map');
  t.notOk(net.recordedLease(leaseKey(E)), 'E: out of the record');
  const adopted = net.recordedLease(leaseKey(A));
  t.ok(adopted && adopted.generation !== gen, 'A: adopted into the record, under a generation of its own');
  t.equal(Number(s.sup.dp.getLease(A)?.generation), adopted?.generation, 'A: its kernel entry re-tagged to it');
  t.notOk(net.recordedLease(leaseKey(G)), 'G: gone from the record');
  await waitFor(() => counterLines(s.stateDir, s.op).some((l) => l.kind === 'lease_revoked' && l.address === G.address), 5000, 20);
  const lines = counterLines(s.stateDir, s.op);
  t.match(lines.find((l) => l.kind === 'lease_expired' && l.address === E.address), { why: 'expired' }, 'E: a lease_expired line');
  t.match(lines.find((l) => l.kind === 'lease_revoked' && l.address === G.address), { by: 'external' }, 'G: revoked out of band');
  t.ok(lines.some((l) => l.kind === 'generation' && l.reason === 'operator_lease' && l.generation === adopted?.generation), 'A: its operator_lease generation');
  // the fillers were neither expired nor adopted nor gone
  t.equal(net.record.leases.filter((l) => l.address.startsWith('10.72.') && l.address !== A.address).length, FILLER, 'every filler still recorded');
});
