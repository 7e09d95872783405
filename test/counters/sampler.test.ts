// The delta rules without a kernel: monotonic deltas, resets recorded (never
// negative), vanished counters, resume from a baseline, replay of the log,
// generation planning and compaction, the summary.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sampler, CounterSource, RawCounters, counterKeyHex, emptySamplerState } from '../../src/counters/sampler';
import { applyLine, resume, writeSnapshot } from '../../src/counters/snapshot';
import { compact, planHandover, needsCompaction, editLeases } from '../../src/envelope/generations';
import { summarize, parseSince } from '../../src/counters/summary';
import { ChainedLog } from '../../src/evidence/chain';
import { parsePolicy } from '../../src/protocol/json';
import { emptyNetworkRecord, beginGeneration, withLease, LeaseRecord } from '../../src/state/network';
import type { Verdict } from '../../src/abi';
import type { Tuple } from '../../src/addr';

const A: Tuple = { family: 'ipv4', protocol: 'tcp', address: '10.0.0.1', port: 80 };
const B: Tuple = { family: 'ipv6', protocol: 'udp', address: '2001:db8::1', port: 53 };

class FakeSource implements CounterSource {
  counters = new Map<string, bigint>();
  lost = 0n;
  full = 0n;
  set(t: Tuple, v: Verdict, gen: number, n: number): void {
    this.counters.set(counterKeyHex(t, v, BigInt(gen)), BigInt(n));
  }
  countersRaw(): RawCounters {
    const keys = Buffer.concat([...this.counters.keys()].map((h) => Buffer.from(h, 'hex')));
    const sums = Buffer.alloc(8 * this.counters.size);
    [...this.counters.values()].forEach((v, i) => sums.writeBigUInt64LE(v, i * 8));
    return { count: this.counters.size, keys, sums };
  }
  stats() {
    return { lostEvents: this.lost, counterFull: this.full };
  }
}

t.test('monotonic deltas, one line per non-zero delta', async (t) => {
  const src = new FakeSource();
  const s = new Sampler(src);
  t.same(s.sample().lines, [], 'empty map: nothing');
  src.set(A, 'allow', 3, 5);
  src.set(B, 'no_lease', 0, 2);
  let r = s.sample();
  t.same(r.lines, [
    { kind: 'allow', source: 'ebpf', generation: 3, family: 'ipv4', protocol: 'tcp', address: '10.0.0.1', port: 80, delta: 5, total: 5 },
    { kind: 'deny', source: 'ebpf', reason: 'no_lease', family: 'ipv6', protocol: 'udp', address: '2001:db8::1', port: 53, delta: 2, total: 2 },
  ]);
  t.same(s.sample().lines, [], 'unchanged: nothing');
  src.set(A, 'allow', 3, 9);
  src.lost = 4n;
  r = s.sample();
  t.same(r.lines.map((l) => [l.kind, l.delta]), [['allow', 4], ['lost_events', 4]]);
  t.same(s.totals, { allow: 9, deny: { no_lease: 2 }, lost_events: 4 });
  t.equal(s.generationAllow(3), 9);
  t.equal(s.leaseAllow(A, 3), 9);
});

t.test('a counter that goes backwards is a reset, never a negative delta', async (t) => {
  const src = new FakeSource();
  const s = new Sampler(src);
  src.set(A, 'allow', 1, 100);
  src.lost = 10n;
  s.sample();
  src.set(A, 'allow', 1, 7); // map recreated, 7 counted since
  src.lost = 2n;
  const r = s.sample();
  t.same(r.lines.map((l) => [l.kind, l.delta ?? null, l.previous ?? null, l.current ?? null]), [
    ['allow', 7, null, null],
    ['reset', null, 100, 7],
    ['reset', null, 10, 2],
    ['lost_events', 2, null, null],
  ]);
  t.ok(r.lines.every((l) => l.delta === undefined || (l.delta as number) > 0), 'no negative delta');
  t.same(s.totals, { allow: 107, deny: {}, lost_events: 12 });
  // a counter that disappears (map recreated): a reset to 0, unless we deleted it
  src.counters.clear();
  src.set(B, 'expired', 0, 1);
  const r2 = s.sample();
  t.match(r2.lines, [{ kind: 'deny', reason: 'expired', delta: 1 }, { kind: 'reset', address: '10.0.0.1', previous: 7, current: 0 }]);
  s.forget([counterKeyHex(B, 'expired', 0n)]);
  src.counters.clear();
  t.same(s.sample().lines, [], 'a forgotten key may vanish silently');
});

t.test('resume: counts made while nobody sampled are recorded at the first reading', async (t) => {
  const src = new FakeSource();
  const state = emptySamplerState();
  state.ebpf.set(counterKeyHex(A, 'allow', 2n), 40n);
  state.totals = { allow: 40, deny: {}, lost_events: 0 };
  src.set(A, 'allow', 2, 55);
  const s = new Sampler(src, state);
  t.match(s.sample().lines, [{ kind: 'allow', delta: 15, total: 55 }]);
  t.equal(s.totals.allow, 55);
});

t.test('nft deltas: per element, attributed to the current lease generation', async (t) => {
  const s = new Sampler(new FakeSource());
  const k = 'ipv4/tcp/10.0.0.1/80';
  let r = s.sampleNft({ allow: new Map([[k, { tuple: A, packets: 3n }]]), deny: 1n }, () => 7);
  t.same(r.lines.map((l) => [l.kind, l.source, l.generation ?? null, l.delta]), [['allow', 'nft', 7, 3], ['deny', 'nft', null, 1]]);
  r = s.sampleNft({ allow: new Map([[k, { tuple: A, packets: 1n }]]), deny: 1n }, () => 8);
  t.match(r.lines, [{ kind: 'reset', source: 'nft', previous: 3, current: 1 }, { kind: 'allow', delta: 1, generation: 8 }]);
  t.same(s.totals.deny, { nft_default_deny: 1 });
  t.equal(s.totals.allow, 0, 'nft allows are the same traffic as eBPF allows: not added to the totals');
});

t.test('the log replays to the same state; a snapshot short-cuts it', async (t) => {
  const dir = t.testdir({});
  fs.chmodSync(dir, 0o700);
  const src = new FakeSource();
  const s = new Sampler(src);
  const log = await ChainedLog.open(path.join(dir, 'counters.jsonl'));
  const step = async () => {
    for (const l of s.sample().lines) await log.append(l);
  };
  src.set(A, 'allow', 1, 3);
  await step();
  src.set(A, 'allow', 1, 8);
  src.set(B, 'no_lease', 0, 2);
  src.lost = 1n;
  await step();
  const r1 = await resume(dir, log.seq, log.lastHash);
  t.equal(r1.from, 'replay');
  t.same(r1.state.totals, s.totals, 'replayed totals');
  t.same([...r1.state.ebpf], [...s.state().ebpf], 'replayed per-counter values');
  t.equal(r1.state.lostEvents, 1n);
  await writeSnapshot(dir, s.state(), log.seq, log.lastHash);
  const r2 = await resume(dir, log.seq, log.lastHash);
  t.equal(r2.from, 'snapshot');
  t.same(r2.state.totals, s.totals);
  src.set(A, 'allow', 1, 10);
  await step();
  const r3 = await resume(dir, log.seq, log.lastHash);
  t.equal(r3.from, 'snapshot+replay', 'a snapshot behind the log: the rest is replayed');
  t.equal(r3.replayed, 1);
  t.same(r3.state.totals, s.totals);
  await log.close();
  const st = emptySamplerState();
  applyLine(st, { kind: 'reset', source: 'ebpf', verdict: 'allow', generation: 1, family: 'ipv4', protocol: 'tcp', address: '10.0.0.1', port: 80, previous: 10, current: 0 });
  t.equal(st.ebpf.get(counterKeyHex(A, 'allow', 1n)), 0n, 'a reset line moves the baseline');
});

function lease(gen: number, port: number, extra: Partial<LeaseRecord> = {}): LeaseRecord {
  return { generation: gen, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port, expires_at_boot_ns: '0', max_uses: 0, installed_at: new Date().toISOString(), ...extra };
}

t.test('handover plan: fail closed, limited and operator leases carried', async (t) => {
  let rec = emptyNetworkRecord();
  for (const r of ['start', 'lease_added', 'lease_added', 'operator_lease', 'lease_added', 'lease_added']) rec = beginGeneration(rec, r);
  rec = withLease(rec, lease(2, 8001, { expires_at_boot_ns: String(10n ** 12n) }));
  rec = withLease(rec, lease(3, 9001));
  rec = withLease(rec, lease(4, 9002));
  rec = withLease(rec, lease(5, 8002, { max_uses: 3 }));
  rec = withLease(rec, lease(6, 8003, { expires_at_boot_ns: '5' }));
  const p = parsePolicy({ schema: 1, leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '8000-8999' }, ttl_s: 10 }] });
  const plan = planHandover(rec, p, 100n);
  t.same(plan.map((a) => [a.lease.port, a.action, 'why' in a ? a.why : null]), [
    [8001, 'retag', null],
    [9001, 'revoke', 'policy'],
    [9002, 'carry', 'operator_lease'],
    [8002, 'carry', 'limited'],
    [8003, 'revoke', 'expired'],
  ]);
  const retag = plan[0] as { expiresBootNs: bigint };
  t.equal(retag.expiresBootNs, 100n + 10n * 10n ** 9n, 'a lease rule caps the expiry at its ttl from now');
});

t.test('compaction keeps live generations and a bounded tail', async (t) => {
  let rec = emptyNetworkRecord();
  for (let i = 0; i < 500; i++) rec = beginGeneration(rec, i === 0 ? 'start' : 'lease_added');
  rec = withLease(rec, lease(7, 1));
  rec = withLease(rec, lease(300, 2));
  t.ok(needsCompaction(rec));
  const c = compact(rec, [1], 32);
  const kept = c.generations.map((g) => g.generation);
  t.ok(kept.includes(1) && kept.includes(7) && kept.includes(300) && kept.includes(500), 'policy, leased and newest kept');
  t.equal(kept.length, 4 + 32, 'plus the last 32 others');
  t.equal(c.generation, 500);
  const e = editLeases(c, new Set(['ipv4/tcp/127.0.0.1/1']), [lease(300, 3)]);
  t.same(e.leases.map((l) => l.port), [2, 3]);
});

t.test('summary: destinations, reasons, generations, --since', async (t) => {
  const dir = t.testdir({});
  const log = await ChainedLog.open(path.join(dir, 'counters.jsonl'));
  const d = (port: number) => ({ family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port });
  await log.append({ at: '2030-01-01T00:00:00.000Z', kind: 'generation', generation: 4, reason: 'lease_added' });
  await log.append({ at: '2030-01-01T00:00:01.000Z', kind: 'allow', source: 'ebpf', generation: 4, ...d(80), delta: 5, total: 5 });
  await log.append({ at: '2030-01-01T00:00:01.000Z', kind: 'deny', source: 'ebpf', reason: 'no_lease', ...d(81), delta: 2, total: 2 });
  await log.append({ at: '2030-01-01T00:00:02.000Z', kind: 'allow', source: 'ebpf', generation: 4, ...d(80), delta: 3, total: 8 });
  await log.append({ at: '2030-01-01T00:00:02.000Z', kind: 'generation_revoked', generation: 4, reason: 'lease_added', final_allow: 8 });
  await log.close();
  const all = (await summarize(path.join(dir, 'counters.jsonl')))!;
  t.equal(all.allow, 8);
  t.same(all.deny, { no_lease: 2 });
  t.equal(all.samples, 2);
  t.match(all.destinations[0], { port: 80, allow: 8 });
  t.match(all.generations, [{ generation: 4, reason: 'lease_added', allow: 8, final_allow: 8 }]);
  const late = (await summarize(path.join(dir, 'counters.jsonl'), { since: new Date('2030-01-01T00:00:02.000Z') }))!;
  t.equal(late.allow, 3, 'only the window');
  t.same(late.deny, {});
  t.equal(await summarize(path.join(dir, 'nope.jsonl')), null);
  t.equal(parseSince('5m', 1_000_000).getTime(), 1_000_000 - 300_000);
  t.throws(() => parseSince('yesterday'), { code: 'E_USAGE' });
});
