// Policy `limits` (issue 23, class 10): pids_max 16..4194304 and
// memory_max_bytes 16 MiB..2^52, integers, no other field; absent → {} (the
// defaults of src/resources.ts apply). Every bad value is refused with its
// pointer, by parsePolicy and by checkPolicy (`gensee policy check`).
import t from 'tap';
import { checkPolicy, parsePolicy } from '../../src/protocol/json';

function refusal(value: unknown): string | null {
  try {
    parsePolicy(value);
    return null;
  } catch (e) {
    const err = e as { code?: string; message: string };
    if (err.code !== 'E_SCHEMA') throw e;
    return err.message;
  }
}

const p = (limits: unknown) => ({ schema: 1, limits });

t.test('limits: accepted values, and absent', async (t) => {
  t.same(parsePolicy({ schema: 1 }).limits, {}, 'absent: nothing named, the defaults apply');
  t.same(parsePolicy(p({})).limits, {});
  t.same(parsePolicy(p({ pids_max: 16, memory_max_bytes: 16 * 1024 * 1024 })).limits, { pids_max: 16, memory_max_bytes: 16777216 });
  t.same(parsePolicy(p({ pids_max: 4194304, memory_max_bytes: 2 ** 52 })).limits, { pids_max: 4194304, memory_max_bytes: 2 ** 52 });
  t.same(parsePolicy(p({ memory_max_bytes: 4 * 1024 ** 3 })).limits, { memory_max_bytes: 4294967296 }, 'one without the other');
});

t.test('limits: bad values are refused with their pointer', async (t) => {
  const cases: [unknown, string][] = [
    [{ pids_max: 0 }, 'policy /limits/pids_max: must be >= 16'],
    [{ pids_max: 15 }, 'policy /limits/pids_max: must be >= 16'],
    [{ pids_max: -1 }, 'policy /limits/pids_max: must be >= 16'],
    [{ pids_max: 4194305 }, 'policy /limits/pids_max: must be <= 4194304'],
    [{ pids_max: 64.5 }, 'policy /limits/pids_max: must be integer'],
    [{ pids_max: '64' }, 'policy /limits/pids_max: must be integer'],
    [{ pids_max: null }, 'policy /limits/pids_max: must be integer'],
    [{ memory_max_bytes: 16777215 }, 'policy /limits/memory_max_bytes: must be >= 16777216'],
    [{ memory_max_bytes: 2 ** 52 + 1 }, 'policy /limits/memory_max_bytes: must be <= 4503599627370496'],
    [{ memory_max_bytes: '4G' }, 'policy /limits/memory_max_bytes: must be integer'],
    [{ cpu_max: 2 }, 'policy /limits: unknown field "cpu_max"'],
  ];
  for (const [limits, want] of cases) t.equal(refusal(p(limits)), want, JSON.stringify(limits));
  t.equal(refusal(p(4096)), 'policy /limits: must be object');
  t.equal(refusal(p([])), 'policy /limits: must be object');
});

t.test('checkPolicy lists every bad limit, in document order', async (t) => {
  t.same(await checkPolicy({ schema: 1, dns_budget: 0, limits: { pids_max: 1, memory_max_bytes: 1, swap: 0 } }), [
    { pointer: '/dns_budget', message: 'must be >= 1' },
    { pointer: '/limits', message: 'unknown field "swap"' },
    { pointer: '/limits/pids_max', message: 'must be >= 16' },
    { pointer: '/limits/memory_max_bytes', message: 'must be >= 16777216' },
  ]);
});
