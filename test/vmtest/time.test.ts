// GENSEE_TIME_SCALE (test/helpers/time.ts): every test deadline is the
// host's value times it; unset, it is 1 and nothing changes; a value that
// is not a number from 1 to 1000 is an error, never a silent 1.
import t from 'tap';
import { timeScale, timeScaled } from '../helpers/time';
import { waitFor } from '../helpers/kernel';

function withScale<X>(v: string | undefined, fn: () => X): X {
  const old = process.env.GENSEE_TIME_SCALE;
  if (v === undefined) delete process.env.GENSEE_TIME_SCALE;
  else process.env.GENSEE_TIME_SCALE = v;
  try {
    return fn();
  } finally {
    if (old === undefined) delete process.env.GENSEE_TIME_SCALE;
    else process.env.GENSEE_TIME_SCALE = old;
  }
}

t.test('unset or empty: 1, the host deadlines unchanged', async (t) => {
  t.equal(withScale(undefined, timeScale), 1);
  t.equal(withScale('', timeScale), 1);
  t.equal(withScale(undefined, () => timeScaled(3000)), 3000);
});

t.test('a factor multiplies every deadline', async (t) => {
  t.equal(withScale('10', () => timeScaled(3000)), 30_000);
  t.equal(withScale('2.5', () => timeScaled(15_000)), 37_500);
});

t.test('not a number from 1 to 1000: a clear error', async (t) => {
  for (const v of ['x', '0', '0.5', '-3', 'Infinity', 'NaN', '1001', '10s'])
    t.throws(() => withScale(v, timeScale), { message: `GENSEE_TIME_SCALE must be a number from 1 to 1000, not ${JSON.stringify(v)}` }, `${JSON.stringify(v)} refused`);
});

t.test('waitFor gives up after the scaled deadline, not the host one', async (t) => {
  process.env.GENSEE_TIME_SCALE = '4';
  t.teardown(() => {
    delete process.env.GENSEE_TIME_SCALE;
  });
  const t0 = Date.now();
  const err = await waitFor(() => false, 100).catch((e: Error) => e);
  const took = Date.now() - t0;
  t.ok(err instanceof Error, 'it gave up');
  t.match((err as Error).message, /timed out after 400 ms \(100 ms × GENSEE_TIME_SCALE 4\)/, 'and says which deadline it used');
  t.ok(took >= 400, `not before 4 × 100 ms (${took} ms)`);
  let n = 0;
  t.equal(await waitFor(() => ++n >= 3 && 'done', 100), 'done', 'a condition that comes true still returns at once');
});
