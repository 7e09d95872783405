// Resolution MAC: canonical input, HMAC-SHA256, tamper detection.
import t from 'tap';
import { createHmac, randomBytes } from 'node:crypto';
import { computeMac, MacKey, macInput, MAC_TAG, verifyMac } from '../../src/protocol/mac';
import type { Resolution } from '../../src/protocol/types';

const key = Buffer.from('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff', 'hex');
const r: Resolution = {
  fault_id: 'f-0001',
  action: 'retry_after_lease',
  reason: 'lease_installed',
  lease: { generation: 3, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080, expires_at_boot_ns: 1234567890n, max_uses: 0 },
};

t.test('documented byte layout', async (t) => {
  const want = Buffer.concat([
    Buffer.from('gensee-resolution-mac-v1\0', 'latin1'),
    Buffer.from('00000006', 'hex'), Buffer.from('f-0001'),
    Buffer.from([2]),
    Buffer.from('0000000f', 'hex'), Buffer.from('lease_installed'),
    Buffer.from([1]),
    Buffer.from('0000000000000003', 'hex'),
    Buffer.from([1, 1]),
    Buffer.from('00000009', 'hex'), Buffer.from('127.0.0.1'),
    Buffer.from('1f90', 'hex'),
    Buffer.from('00000000499602d2', 'hex'),
    Buffer.from('00000000', 'hex'),
    Buffer.from('00000000', 'hex'),
  ]);
  t.equal(MAC_TAG.length, 25);
  t.same(macInput(r), want);
  const deny: Resolution = { fault_id: 'f', action: 'deny', reason: 'timeout' };
  t.same(macInput(deny), Buffer.concat([MAC_TAG, Buffer.from('0000000166', 'hex'), Buffer.from([4]),
    Buffer.from('00000007', 'hex'), Buffer.from('timeout'), Buffer.from([0]), Buffer.from('00000000', 'hex')]));
});

t.test('verify accepts the right MAC only', async (t) => {
  const mac = computeMac(key, r);
  t.equal(mac.length, 32);
  t.ok(verifyMac(key, r, mac));
  t.notOk(verifyMac(Buffer.alloc(32), r, mac), 'other key');
  t.notOk(verifyMac(key, r, mac.subarray(0, 31)), 'short mac');
  t.notOk(verifyMac(key, r, Buffer.alloc(0)), 'empty mac');
  const flipped = Buffer.from(mac);
  flipped[5] ^= 1;
  t.notOk(verifyMac(key, r, flipped), 'flipped bit');
});

t.test('every covered field is tamper-evident', async (t) => {
  const mac = computeMac(key, r);
  const l = r.lease!;
  const tampered: [string, Resolution][] = [
    ['fault_id', { ...r, fault_id: 'f-0002' }],
    ['action', { ...r, action: 'continue_already_authorized', lease: undefined }],
    ['reason', { ...r, reason: 'lease_installeD' }],
    ['lease dropped', { fault_id: r.fault_id, action: r.action, reason: r.reason }],
    ['generation', { ...r, lease: { ...l, generation: 4 } }],
    ['family', { ...r, lease: { ...l, family: 'ipv6' } }],
    ['protocol', { ...r, lease: { ...l, protocol: 'udp' } }],
    ['address', { ...r, lease: { ...l, address: '127.0.0.2' } }],
    ['port', { ...r, lease: { ...l, port: 8081 } }],
    ['expiry', { ...r, lease: { ...l, expires_at_boot_ns: 1234567891n } }],
    ['max_uses', { ...r, lease: { ...l, max_uses: 1 } }],
    ['delegate_to', { ...r, delegate_to: 'x' }],
  ];
  for (const [name, x] of tampered) t.notOk(verifyMac(key, x, mac), name);
  // length prefixes: moving bytes between adjacent strings changes the input
  const a: Resolution = { fault_id: 'ab', action: 'deny', reason: 'c_d' };
  const b: Resolution = { fault_id: 'abc', action: 'deny', reason: '_d' };
  t.not(macInput(a).toString('hex'), macInput(b).toString('hex'));
});

t.test('MacKey (pads computed once) gives createHmac\'s bytes', async (t) => {
  // keys shorter than, equal to and longer than SHA-256's block (hashed first), inputs short and longer than the first buffer
  for (const keyLen of [0, 1, 32, 63, 64, 65, 200]) {
    const k = randomBytes(keyLen);
    const mk = new MacKey(k);
    for (const x of [
      r,
      { fault_id: '', action: 'deny', reason: 'policy_denied' } satisfies Resolution,
      { fault_id: 'f-ü-\u{1F600}', action: 'delegate', reason: 'policy_delegate', delegate_to: 'ops' } satisfies Resolution,
      { ...r, fault_id: 'x'.repeat(300), lease: { ...r.lease!, address: 'fd00::1', family: 'ipv6', expires_at_boot_ns: (1n << 64n) - 1n, max_uses: 0xffffffff } } satisfies Resolution,
      r,
    ]) {
      const want = createHmac('sha256', k).update(macInput(x)).digest();
      t.same(mk.mac(x), want, `key of ${keyLen} bytes, fault_id of ${x.fault_id.length}`);
      t.same(computeMac(k, x), want);
    }
  }
  // the pads are of the key as given: changing the caller's buffer later changes nothing
  const k = Buffer.from(key);
  const mk = new MacKey(k);
  k.fill(0);
  t.same(mk.mac(r), computeMac(key, r));
});
