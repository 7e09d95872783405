// The nft mirror keeps nothing for leases that leave the kernel map while
// there is no table: without nft no reading would ever clear the list, and
// a long run held every lease that ever expired.
import t from 'tap';
import { NftMirror } from '../../src/envelope/nft-mirror';

t.test('without a table, retired leases are not kept', async (t) => {
  const m = new NftMirror((e) => t.fail(e.message));
  for (let i = 0; i < 1000; i++) m.retire(`ipv4/tcp/127.0.0.1/${i + 1}`, { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: i + 1 });
  t.equal(m.pending, 0, 'nothing waits for a reading that never comes');
  await m.removeHarvested(new Map());
  t.equal(m.pending, 0);
});
