// network.json's snapshot text (networkRecordText): recordText's output
// byte for byte, with each lease and generation serialized once per object.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createOperation, opDir } from '../../src/state/operation';
import { recordText } from '../../src/state/record';
import {
  LeaseRecord,
  NetworkRecord,
  beginGeneration,
  currentBootId,
  emptyNetworkRecord,
  networkRecordText,
  networkSnapshotYields,
  readNetwork,
  revokeGeneration,
  setNetworkTotals,
  withLease,
  writeNetworkSnapshot,
} from '../../src/state/network';

const lease = (i: number, generation: number): LeaseRecord => ({
  generation,
  family: i % 3 === 0 ? 'ipv6' : 'ipv4',
  protocol: i % 2 === 0 ? 'tcp' : 'udp',
  address: i % 3 === 0 ? `fd00::${i.toString(16)}` : `127.0.${(i >> 8) & 255}.${i & 255}`,
  port: 1 + (i % 65535),
  expires_at_boot_ns: String(BigInt(i) * 1_000_000_007n),
  max_uses: i % 5,
  installed_at: new Date(1_700_000_000_000 + i).toISOString(),
});

function record(n: number): NetworkRecord {
  let rec = beginGeneration(emptyNetworkRecord(), 'start', new Date(1_700_000_000_000));
  for (let i = 1; i <= n; i++) {
    rec = beginGeneration(rec, i % 7 === 0 ? 'operator_lease' : 'lease_added', new Date(1_700_000_000_000 + i));
    rec = withLease(rec, lease(i, rec.generation));
  }
  return rec;
}

/** the record as the snapshot stamps it: schema, this boot, the rest */
function stamp(r: NetworkRecord): NetworkRecord {
  const { schema, ...rest } = r;
  return { schema, boot_id: currentBootId(), ...rest };
}

t.test('the text is recordText, byte for byte', async (t) => {
  const empty = { ...emptyNetworkRecord(), boot_id: 'b' };
  t.equal(networkRecordText(empty), recordText(empty), 'empty arrays');
  for (const n of [1, 2, 17, 300]) {
    let rec = stamp(record(n));
    t.equal(networkRecordText(rec), recordText(rec), `${n} leases`);
    // edited records: a revoked generation, new totals, a dropped lease
    rec = revokeGeneration(rec, 2, new Date(1_800_000_000_000));
    rec = setNetworkTotals(rec, { allow: 5, deny: { no_lease: 3, policy: 1 }, lost_events: 2 });
    rec = { ...rec, leases: rec.leases.slice(1) };
    t.equal(networkRecordText(rec), recordText(rec), `${n} leases, edited`);
    // the same objects again: the cached elements
    t.equal(networkRecordText(rec), recordText(rec), `${n} leases, again`);
  }
  // unknown keys, odd values: still what JSON.stringify writes
  const odd = { schema: 1, x: undefined, y: [1, 'a', null, { z: [1, { w: 'q\nr' }] }], z: {}, w: [[]], generation: 0 } as unknown as NetworkRecord;
  t.equal(networkRecordText(odd), recordText(odd), 'nested and unknown values');
});

t.test('the snapshot writes the record readNetwork reads back', async (t) => {
  const state = t.testdir({});
  await createOperation(state, { id: 'demo', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h' });
  const rec = record(50);
  await writeNetworkSnapshot(state, 'demo', rec);
  const file = path.join(opDir(state, 'demo'), 'network.json');
  t.equal(fs.statSync(file).mode & 0o777, 0o600);
  const text = fs.readFileSync(file, 'utf8');
  t.equal(text, recordText(stamp(rec)), 'stamped, in record order');
  t.same(await readNetwork(state, 'demo'), stamp(rec));
});

t.test('a large snapshot leaves the event loop to others between its parts, and writes the record as it began', async (t) => {
  const state = t.testdir({});
  await createOperation(state, { id: 'big', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h' });
  const rec = record(5000); // 5,001 generations + 5,000 leases: several parts
  let turns = 0;
  let spinning = true;
  const spin = () => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  const writing = writeNetworkSnapshot(state, 'big', rec);
  // the next record is built while the snapshot is written: the file is the first one
  const next = withLease(rec, lease(999_999, rec.generation));
  await writing;
  spinning = false;
  // 5,001 generations and 5,000 leases: a yield after every 2,000 elements
  t.equal(networkSnapshotYields(stamp(rec)), 5, 'the serialization yields after every 2,000 elements');
  t.equal(networkSnapshotYields(stamp(record(10))), 0, 'a small record is one piece');
  t.ok(turns >= 5, `other work ran while it was written (${turns} turns)`);
  const text = fs.readFileSync(path.join(opDir(state, 'big'), 'network.json'), 'utf8');
  t.equal(text, recordText(stamp(rec)), 'byte for byte the record as the snapshot began');
  t.not(text, recordText(stamp(next)));
});
