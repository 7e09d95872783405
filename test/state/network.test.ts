import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createOperation, opDir } from '../../src/state/operation';
import {
  LeaseRecord,
  NetworkRecord,
  beginGeneration,
  emptyNetworkRecord,
  findLease,
  parseNetworkRecord,
  pruneExpired,
  withLease,
  readNetwork,
  withoutLease,
  revokeGeneration,
  updateNetwork,
  writeNetwork,
  currentBootId,
} from '../../src/state/network';

const mode = (p: string): number => fs.lstatSync(p).mode & 0o7777;

const lease = (over: Partial<LeaseRecord> = {}): LeaseRecord => ({
  generation: 1,
  family: 'ipv4',
  protocol: 'tcp',
  address: '127.0.0.1',
  port: 8080,
  expires_at_boot_ns: '1234567890',
  max_uses: 0,
  installed_at: new Date().toISOString(),
  ...over,
});

async function op(state: string): Promise<string> {
  await createOperation(state, { id: 'demo', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h' });
  return state;
}

t.test('missing network.json reads as the empty record; write/read round trip', async (t) => {
  const state = await op(t.testdir({}));
  t.same(await readNetwork(state, 'demo'), emptyNetworkRecord());

  let rec = beginGeneration(emptyNetworkRecord(), 'start');
  rec = withLease(rec, lease());
  rec = withLease(rec, lease({ family: 'ipv6', protocol: 'udp', address: '::1', port: 53, max_uses: 3 }));
  const written = await writeNetwork(state, 'demo', rec);
  const file = path.join(opDir(state, 'demo'), 'network.json');
  t.equal(mode(file), 0o600);
  const back = await readNetwork(state, 'demo');
  t.same(back, written);
  t.equal(back.generation, 1);
  t.same(Object.keys(JSON.parse(fs.readFileSync(file, 'utf8'))), ['schema', 'boot_id', 'generation', 'generations', 'leases', 'totals']);
  t.equal(back.boot_id, currentBootId(), 'stamped with this boot');
  t.same(Object.keys(back.leases[0]), ['generation', 'family', 'protocol', 'address', 'port', 'expires_at_boot_ns', 'max_uses', 'installed_at']);
  t.same(fs.readdirSync(opDir(state, 'demo')).sort(), ['key', 'network.json', 'operation.json']);
  await t.rejects(readNetwork(state, 'nope'), { code: 'E_UNKNOWN_OP' });
});

t.test('pure helpers', async (t) => {
  let rec: NetworkRecord = beginGeneration(emptyNetworkRecord(), 'start');
  rec = withLease(rec, lease({ expires_at_boot_ns: '100' }));
  rec = withLease(rec, lease({ port: 9090, expires_at_boot_ns: '300' }));
  rec = withLease(rec, lease({ expires_at_boot_ns: '200' }));
  t.equal(rec.leases.length, 2, 'same tuple replaced');
  t.equal(findLease(rec, { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080 })?.expires_at_boot_ns, '200');

  const { rec: pruned, removed } = pruneExpired(rec, 200n);
  t.same(removed.map((l) => l.port), [8080]);
  t.same(pruned.leases.map((l) => l.port), [9090]);
  t.equal(rec.leases.length, 2, 'input not modified');

  const g2 = beginGeneration(rec, 'policy_reload');
  t.equal(g2.generation, 2);
  const moved = withLease(g2, lease({ generation: 2, port: 7070 }));
  const revoked = revokeGeneration(moved, 1);
  t.same(revoked.leases.map((l) => l.port), [7070], 'gen 1 leases dropped');
  t.ok(revoked.generations[0].revoked_at);
  t.notOk(revoked.generations[1].revoked_at);
  t.throws(() => revokeGeneration(revoked, 9), { code: 'E_STATE' });
  t.same(withoutLease(revoked, { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 7070 }).leases, []);
  t.same(parseNetworkRecord(JSON.parse(JSON.stringify(revoked))), revoked);
});

t.test('invalid records are refused', async (t) => {
  const base = withLease(beginGeneration(emptyNetworkRecord(), 'start'), lease());
  // a record as JSON: the patches write fields of the wrong type on purpose
  type RawRecord = { [field: string]: unknown; leases: Record<string, unknown>[] };
  const bad = (patch: (r: RawRecord) => void): unknown => {
    const r: RawRecord = JSON.parse(JSON.stringify(base));
    patch(r);
    return r;
  };
  const cases: Array<[string, unknown, RegExp]> = [
    ['unknown top field', bad((r) => (r.extra = 1)), /unknown field "extra"/],
    ['unknown lease field', bad((r) => (r.leases[0].cidr = 'x')), /unknown field "cidr"/],
    ['family mismatch', bad((r) => (r.leases[0].address = '::1')), /not an ipv4 address/],
    ['port range', bad((r) => (r.leases[0].port = 70000)), /port/],
    ['expiry as number', bad((r) => (r.leases[0].expires_at_boot_ns = 5)), /u64 decimal string/],
    ['expiry too big', bad((r) => (r.leases[0].expires_at_boot_ns = '18446744073709551616')), /u64/],
    ['unknown generation', bad((r) => (r.leases[0].generation = 7)), /unknown generation 7/],
    ['duplicate lease', bad((r) => r.leases.push({ ...r.leases[0] })), /duplicate lease/],
    ['generation mismatch', bad((r) => (r.generation = 3)), /newest generation/],
    ['schema', bad((r) => (r.schema = 2)), /schema/],
  ];
  for (const [name, rec, msg] of cases) t.throws(() => parseNetworkRecord(rec), { code: 'E_STATE', message: msg }, name);

  const state = await op(t.testdir({}));
  await t.rejects(writeNetwork(state, 'demo', cases[0][1] as NetworkRecord), { code: 'E_USAGE' });
  t.notOk(fs.existsSync(path.join(opDir(state, 'demo'), 'network.json')), 'nothing written');
});

t.test('network.json symlink and mode refused', async (t) => {
  const root = t.testdir({ state: {}, 'n.json': JSON.stringify(emptyNetworkRecord()) });
  const state = await op(path.join(root, 'state'));
  const dir = opDir(state, 'demo');
  const other = path.join(root, 'n.json');
  fs.symlinkSync(other, path.join(dir, 'network.json'));
  await t.rejects(readNetwork(state, 'demo'), { code: 'E_SYMLINK' });
  await t.rejects(updateNetwork(state, 'demo', (r) => r), { code: 'E_SYMLINK' });
  fs.unlinkSync(path.join(dir, 'network.json'));
  await writeNetwork(state, 'demo', emptyNetworkRecord());
  fs.chmodSync(path.join(dir, 'network.json'), 0o644);
  await t.rejects(readNetwork(state, 'demo'), { code: 'E_BAD_MODE' });
});

t.test('updateNetwork serializes concurrent updates', async (t) => {
  const state = await op(t.testdir({}));
  await updateNetwork(state, 'demo', (r) => beginGeneration(r, 'start'));
  await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      updateNetwork(state, 'demo', async (r) => {
        await new Promise((res) => setImmediate(res));
        return withLease(r, lease({ port: 10000 + i }));
      }),
    ),
  );
  t.equal((await readNetwork(state, 'demo')).leases.length, 40);
});
