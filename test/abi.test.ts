// The TypeScript mirror of bpf/gensee_abi.h must match what the compiled
// addon (built from the same header, with _Static_asserts) reports.
import t from 'tap';
import { loadAddon } from '../src/addon';
import * as abi from '../src/abi';
import { parseAddress, parseDestination } from '../src/addr';

t.test('sizes and offsets match the C header', async (t) => {
  // the rate-limit and ring sizing constants are reported too (not yet in AddonAbi's type)
  const a = loadAddon().abi;
  t.equal(a.version, abi.ABI_VERSION);
  t.equal(a.leaseKeySize, abi.LEASE_KEY_SIZE);
  t.equal(a.leaseValueSize, abi.LEASE_VALUE_SIZE);
  t.equal(a.counterKeySize, abi.COUNTER_KEY_SIZE);
  t.equal(a.faultEventSize, abi.FAULT_EVENT_SIZE);
  t.equal(a.leaseValueUsesLeftOffset, 16);
  t.equal(a.counterKeyAddrOffset, 16);
  t.equal(a.faultEventAddrOffset, 32);
  t.equal(a.faultRlKeySize, abi.FAULT_RL_KEY_SIZE);
  t.equal(a.faultRlWindowNs, abi.FAULT_RL_WINDOW_NS);
  t.equal(a.eventsBytes, abi.EVENTS_BYTES);
});

t.test('lease key/value round trip', async (t) => {
  for (const d of ['127.0.0.1:8080', '[::1]:53', '[2001:db8::1:0:0:1]:443', '[::ffff:10.1.2.3]:80']) {
    const tuple = parseDestination('tcp', d);
    t.same(abi.decodeLeaseKey(abi.encodeLeaseKey(tuple)), tuple, d);
  }
  const v = { generation: 9n, expiresBootNs: 123456789n, usesLeft: 4n };
  t.same(abi.decodeLeaseValue(abi.encodeLeaseValue(v)), v);
  const u = { generation: 1n, expiresBootNs: 0n, usesLeft: null };
  t.same(abi.decodeLeaseValue(abi.encodeLeaseValue(u)), u);
});

t.test('addresses', async (t) => {
  t.same(parseAddress('::ffff:127.0.0.1').family, 'ipv4', 'v4-mapped is IPv4');
  t.equal(parseAddress('::ffff:127.0.0.1').address, '127.0.0.1');
  t.equal(parseAddress('2001:0db8:0000:0000:0000:0000:0000:0001').address, '2001:db8::1');
  t.equal(parseAddress('::').address, '::');
  t.equal(parseAddress('fe80::1:0:0:0').address, 'fe80::1:0:0:0', 'first of equal zero runs is compressed');
  t.equal(parseAddress('1:0:0:2:0:0:0:3').address, '1:0:0:2::3', 'longest zero run is compressed');
  t.throws(() => parseAddress('1.2.3'), { code: 'E_BAD_ADDRESS' });
  t.throws(() => parseAddress('fe80::1%eth0'), { code: 'E_BAD_ADDRESS' });
  t.throws(() => parseDestination('tcp', '1.2.3.4'), { code: 'E_BAD_ADDRESS' });
  t.throws(() => parseDestination('tcp', '1.2.3.4:65536'), { code: 'E_BAD_PORT' });
});
