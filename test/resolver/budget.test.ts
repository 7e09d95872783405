// The refusal budget (src/resolver/budget.ts): 200 written a second, the
// rest counted exactly, by reason, handed out once its second is over —
// and while the disk is low, everything counted until space returns.
import t from 'tap';
import { RefusalBudget } from '../../src/resolver/budget';

t.test('past the limit a second, refusals are counted and handed out once', async (t) => {
  const b = new RefusalBudget(3);
  const s0 = 1_000_000;
  const admitted = [0, 1, 2, 3, 4, 5].map((i) => b.admit(s0 + i, i % 2 ? 'policy_denied' : 'dns_refused', false));
  t.same(admitted, [true, true, true, false, false, false]);
  t.equal(b.take(s0 + 999, false), null, 'not before its second is over');
  const h = b.take(s0 + 1000, false);
  t.match(h, { count: 3, reasons: { policy_denied: 2, dns_refused: 1 }, from: new Date(s0).toISOString(), low_space: false });
  t.equal(b.take(s0 + 5000, false), null, 'handed out once');
  t.equal(b.admit(s0 + 1000, 'policy_denied', false), true, 'a new second has its allowance again');
  t.ok(b.full(s0 + 1000, 2), 'faults still being decided count against it');
});

t.test('a low disk counts everything, and holds the count until space returns (or force)', async (t) => {
  const b = new RefusalBudget(100);
  t.equal(b.admit(2000, 'policy_denied', true), false);
  t.equal(b.admit(3500, 'policy_denied', true), false);
  t.equal(b.take(9000, true), null, 'nothing written while low');
  t.match(b.take(9000, true, true), { count: 2, low_space: true, from: new Date(2000).toISOString(), to: new Date(3000).toISOString() }, 'force: the closing line');
  b.admit(10_000, 'x', true);
  t.match(b.take(12_000, false), { count: 1 }, 'space back: written');
});
