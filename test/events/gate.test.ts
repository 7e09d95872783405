// The flood gate: at most 200 boundary lines per wall-clock second, the rest
// of that second counted and handed out once for one suppressed line.
import t from 'tap';
import { FloodGate, Suppressed } from '../../src/events/gate';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

/** what a caller writes: boundary lines and suppressed lines, in order */
function drive(gate: FloodGate, times: number[]): { written: number; suppressed: Suppressed[] } {
  let written = 0;
  const suppressed: Suppressed[] = [];
  for (const ms of times) {
    const a = gate.admit(ms);
    if (a.flushed) suppressed.push(a.flushed);
    if (a.write) written++;
  }
  return { written, suppressed };
}

function spread(second: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => T0 + second * 1000 + Math.floor((i * 1000) / n));
}

t.test('exactly 200 in a second, the rest counted once', async (t) => {
  const gate = new FloodGate();
  t.equal(gate.limit, 200, 'the default limit');
  const r = drive(gate, spread(0, 1000));
  t.equal(r.written, 200, '200 written');
  t.same(r.suppressed, [], 'nothing handed out while the second lasts');
  t.equal(gate.pending, 800);
  t.equal(gate.flush(T0 + 999), null, 'the second is not over at .999');
  const a = gate.admit(T0 + 1000);
  t.same(a, { write: true, flushed: { second: '2026-12-01T10:00:00.000Z', count: 800 } }, 'the next second hands out 800 with its first line');
  t.equal(gate.flush(T0 + 2500), null, 'handed out once: the timer finds nothing');
});

t.test('admission at the edge', async (t) => {
  const gate = new FloodGate(200);
  for (let i = 0; i < 200; i++) t.equal(gate.admit(T0 + 500).write, true);
  t.same(gate.admit(T0 + 500), { write: false, flushed: null }, 'the 201st is refused');
  t.same(gate.admit(T0 + 999), { write: false, flushed: null });
  t.same(gate.admit(T0 + 1000), { write: true, flushed: { second: '2026-12-01T10:00:00.000Z', count: 2 } });
  const small = new FloodGate(3);
  t.same(drive(small, [T0, T0, T0, T0, T0 + 1, T0 + 1000]), { written: 4, suppressed: [{ second: '2026-12-01T10:00:00.000Z', count: 2 }] });
});

t.test('a quiet second writes no suppressed line', async (t) => {
  const gate = new FloodGate();
  const r = drive(gate, spread(0, 200));
  t.equal(r.written, 200);
  t.equal(gate.flush(T0 + 1500), null, 'at the limit, nothing suppressed');
  t.same(drive(gate, spread(2, 5)), { written: 5, suppressed: [] }, 'a light second');
  t.equal(gate.flush(T0 + 10_000), null, 'nothing to flush');
  t.equal(gate.flush(T0 + 20_000), null, 'still nothing');
});

t.test('counts across many seconds', async (t) => {
  const gate = new FloodGate();
  const times: number[] = [];
  const perSecond = [1000, 10, 0, 201, 200, 5000, 3];
  perSecond.forEach((n, s) => times.push(...spread(s, n)));
  const r = drive(gate, times);
  const tail = gate.flush(T0 + 60_000);
  t.equal(tail, null, 'the last second was under the limit');
  t.equal(r.written, perSecond.reduce((sum, n) => sum + Math.min(n, 200), 0), 'the written lines');
  t.same(
    r.suppressed,
    [
      { second: '2026-12-01T10:00:00.000Z', count: 800 },
      { second: '2026-12-01T10:00:03.000Z', count: 1 },
      { second: '2026-12-01T10:00:05.000Z', count: 4800 },
    ],
    'one suppressed line per flooded second, with its exact count',
  );
  const total = r.written + r.suppressed.reduce((sum, s) => sum + s.count, 0);
  t.equal(total, perSecond.reduce((a, b) => a + b, 0), 'no line lost, none counted twice');
});

t.test('flush by a 1 s timer', async (t) => {
  const gate = new FloodGate();
  const out: Suppressed[] = [];
  // a flood in second 0, then silence; the timer ticks at .250 of each second
  let written = 0;
  for (const ms of spread(0, 450)) if (gate.admit(ms).write) written++;
  for (let s = 0; s < 4; s++) {
    const f = gate.flush(T0 + s * 1000 + 250);
    if (f) out.push(f);
  }
  t.equal(written, 200);
  t.same(out, [{ second: '2026-12-01T10:00:00.000Z', count: 250 }], 'the timer hands it out once, after the second');
  // another flood; the timer wins the race against the next admit
  drive(gate, spread(10, 300));
  t.same(gate.flush(T0 + 11_000), { second: '2026-12-01T10:00:10.000Z', count: 100 }, 'the timer takes it');
  t.same(gate.admit(T0 + 11_001), { write: true, flushed: null }, 'so the next admit has nothing to hand out');
});

t.test('drain at the end, time oddities, limits', async (t) => {
  const gate = new FloodGate(1);
  t.equal(gate.drain(), null, 'nothing before the first line');
  drive(gate, [T0, T0 + 1, T0 + 2]);
  t.same(gate.drain(), { second: '2026-12-01T10:00:00.000Z', count: 2 }, 'drain hands out the current second');
  t.equal(gate.drain(), null, 'once');
  t.same(gate.admit(T0 + 3), { write: false, flushed: null }, 'the second is still limited after a drain');
  t.same(gate.flush(T0 + 1000), { second: '2026-12-01T10:00:00.000Z', count: 1 }, 'and counted afresh');

  const back = new FloodGate(1);
  drive(back, [T0 + 5000, T0 + 5000]);
  t.same(back.admit(T0), { write: true, flushed: { second: '2026-12-01T10:00:05.000Z', count: 1 } }, 'a clock stepped back starts a new second');
  t.same(back.admit(Number.NaN), { write: false, flushed: null }, 'NaN counts in the current second');
  t.same(back.admit(undefined as unknown as number), { write: false, flushed: null }, 'so does no time at all');
  t.same(back.flush(Number.MAX_SAFE_INTEGER), { second: '2026-12-01T10:00:00.000Z', count: 2 }, 'a time past the last Date ends the second');
  t.same(back.admit(Infinity), { write: true, flushed: null }, 'Infinity is that same last second');
  t.same(back.admit(1e300), { write: false, flushed: null }, 'and so is any time past it');
  t.same(back.flush(-Infinity), { second: '+275760-09-13T00:00:00.000Z', count: 1 }, 'its count has a valid second');
  t.equal(back.flush(T0), null, 'the first second of Date had nothing over');
  const odd = new FloodGate(1);
  t.same(odd.admit(Number.NaN), { write: true, flushed: null }, 'a first call with no clock lands in second 0');
  t.same(odd.admit(Number.NaN), { write: false, flushed: null });
  t.same(odd.flush(1000), { second: '1970-01-01T00:00:00.000Z', count: 1 });

  const none = new FloodGate(0);
  t.same(drive(none, [T0, T0, T0 + 1000]), { written: 0, suppressed: [{ second: '2026-12-01T10:00:00.000Z', count: 2 }] }, 'a limit of 0 suppresses all');
  for (const bad of [-1, 1.5, Number.NaN, Infinity]) t.throws(() => new FloodGate(bad), RangeError, `limit ${bad} refused`);
});
