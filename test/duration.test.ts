// One way to write a duration, for --ttl and --since alike.
import t from 'tap';
import { durationMs } from '../src/duration';
import { parseDuration } from '../src/cli/args';
import { parseSince } from '../src/counters/summary';

t.test('the same forms for --ttl and --since', async (t) => {
  for (const [s, ms] of [['250ms', 250], ['30s', 30_000], ['30', 30_000], ['5m', 300_000], ['1h', 3_600_000], ['1d', 86_400_000], ['1.5s', 1500]] as const) {
    t.equal(durationMs(s), ms, s);
    t.equal(parseDuration(s), ms, `--ttl ${s}`);
    t.equal(parseSince(s, 1_000_000_000_000).getTime(), 1_000_000_000_000 - ms, `--since ${s}`);
  }
  for (const bad of ['', '1w', '-1s', 's', '1 s', '1e3']) {
    t.equal(durationMs(bad), null, `not a duration: ${JSON.stringify(bad)}`);
    t.throws(() => parseDuration(bad), { code: 'E_BAD_DURATION' }, `--ttl ${JSON.stringify(bad)} refused`);
  }
  t.throws(() => parseDuration('0s'), { code: 'E_BAD_DURATION' }, 'zero refused');
  t.throws(() => parseDuration('400d'), { code: 'E_BAD_DURATION' }, 'more than a year refused');
  t.equal(parseSince('2026-12-01T10:00:00Z').toISOString(), '2026-12-01T10:00:00.000Z', 'an ISO time is still a time');
});
