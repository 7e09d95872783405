// A fault its resolver died with is closed as abandoned by whoever takes over,
// through the same chain; verify then passes and counts it.
import t from 'tap';
import * as path from 'node:path';
import { ChainedLog } from '../../src/evidence/chain';
import { verifyLog } from '../../src/evidence/verify';
import { closeOpenFaults } from '../../src/evidence/abandon';

t.test('open faults are closed as abandoned; answered ones are left alone', async (t) => {
  const f = path.join(t.testdir({}), 'faults.jsonl');
  const intent = { generation: 3, family: 'ipv4' as const, protocol: 'tcp' as const, address: '127.0.0.1', port: 8080, ttl_s: 30, max_uses: 0 };
  const log = await ChainedLog.open(f);
  await log.append({ kind: 'fault', fault_id: 'a' });
  await log.append({ kind: 'resolution', fault_id: 'a', resolution: { fault_id: 'a', action: 'deny', reason: 'policy_denied' } });
  await log.append({ kind: 'fault', fault_id: 'b' });
  await log.append({ kind: 'refusal', fault_id: '', reason: 'malformed_fault' });
  await log.append({ kind: 'fault', fault_id: 'c' });
  await log.append({ kind: 'lease_intent', fault_id: 'c', lease: intent });
  await log.close();

  const before = await verifyLog(f, { pairFaults: true });
  t.notOk(before.ok, 'two open faults fail verify');
  t.same(before.problems.map((p) => p.fault_id), ['b', 'c']);

  const again = await ChainedLog.open(f);
  t.same(await closeOpenFaults(again, 'resolver_died'), { faults: ['b', 'c'], intents: [intent] }, 'b and c closed, in log order, with c\'s unanswered lease');
  t.same(await closeOpenFaults(again, 'resolver_died'), { faults: [], intents: [] }, 'a second pass finds nothing open');
  await again.close();

  const after = await verifyLog(f, { pairFaults: true });
  t.ok(after.ok, 'verify passes');
  t.equal(after.abandoned, 2, 'and counts the abandoned faults');
  t.equal(after.lines, 8, 'two resolution lines appended, nothing rewritten');
});
