// The /metrics scrape reads only what the logs gained since the last scrape
// (EvidenceTail), and still says exactly what a full read of the logs says at
// that moment: after each append, a half-written last line, a log replaced
// under its name, a log cut shorter, a log removed. The kernel-backed
// scrape-equals-evidence test is test/metrics/metrics.test.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EvidenceTail, readEvidence, type EvidenceFigures } from '../../src/metrics/evidence';
import { summarize } from '../../src/counters/summary';
import { readOpenAttention } from '../../src/events/log';
import { EvidenceMetrics } from '../../src/metrics/registry';

const OP = 'tail-op';

function figures(x: EvidenceFigures): unknown {
  return JSON.parse(JSON.stringify(x, (_k, v: unknown) => (v instanceof Map ? [...(v as Map<string, unknown>)].sort() : v)));
}

let seq = 0;
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

/** a few lines of each log, as the resolver, the sampler and the event log write them */
function faultLines(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    const id = `f-${++seq}`;
    s += JSON.stringify({ kind: 'fault', fault_id: id, at: at(seq * 10), fault: { source: seq % 3 ? 'seccomp_notify' : 'ebpf_ringbuf' } }) + '\n';
    if (seq % 4) s += JSON.stringify({ kind: 'resolution', fault_id: id, at: at(seq * 10 + (seq % 7)), resolution: { action: seq % 2 ? 'retry_after_lease' : 'deny', reason: seq % 2 ? 'lease_installed' : 'policy_denied' } }) + '\n';
    if (seq % 5 === 0) s += JSON.stringify({ kind: 'refusal', via: 'socket', reason: 'unauthenticated_peer', at: at(seq) }) + '\n';
  }
  return s;
}
function counterLines(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    ++seq;
    s += JSON.stringify({ at: at(seq * 1000), kind: 'allow', family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 1000 + (seq % 3), generation: 1, delta: seq % 4 }) + '\n';
    if (seq % 3 === 0) s += JSON.stringify({ at: at(seq * 1000), kind: 'deny', reason: 'policy_denied', family: 'ipv4', protocol: 'tcp', address: '127.0.0.2', port: 22, delta: 1 }) + '\n';
    if (seq % 11 === 0) s += JSON.stringify({ at: at(seq * 1000), kind: 'sampler', event: 'start' }) + '\n';
    if (seq % 13 === 0) s += JSON.stringify({ at: at(seq * 1000), kind: 'lost_events', delta: 2 }) + '\n';
  }
  return s;
}
function eventLines(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    ++seq;
    s += JSON.stringify({ seq, at: at(seq), type: 'boundary', event: { kind: seq % 2 ? 'egress_denied' : 'fault_denied' } }) + '\n';
    if (seq % 9 === 0) s += JSON.stringify({ seq, at: at(seq), type: 'suppressed', count: 5 }) + '\n';
    if (seq % 17 === 0) s += JSON.stringify({ seq, at: at(seq), type: 'attention', signature: `s${seq}`, detail: 'd', evidence: [] }) + '\n';
    if (seq % 41 === 0) s += JSON.stringify({ seq, at: at(seq), type: 'attention_cleared', by: 'x' }) + '\n';
  }
  return s;
}

function setup(t: { teardown(fn: () => void): void }): { dir: string; files: { faults: string; counters: string; events: string } } {
  const st = fs.mkdtempSync('/tmp/gs-tail-');
  t.teardown(() => fs.rmSync(st, { recursive: true, force: true }));
  const dir = path.join(st, 'network-operations', OP);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { dir, files: { faults: path.join(dir, 'faults.jsonl'), counters: path.join(dir, 'counters.jsonl'), events: path.join(dir, 'events.jsonl') } };
}

t.test('every scrape equals a full read; only the new bytes are read', async (t) => {
  const { dir, files } = setup(t);
  const st = path.dirname(path.dirname(dir));
  const tail = new EvidenceTail(st, OP, dir);
  const check = async (what: string) => {
    const inc = await tail.read(0n);
    const full = await readEvidence(st, OP, dir, 0n);
    t.same(figures(inc), figures(full), `${what}: the incremental figures equal a full read`);
    // and the parts that have their own readers agree with those
    t.same(inc.counters, await summarize(files.counters), `${what}: counters equal gensee counters' summary`);
    t.equal(inc.attention_open, (await readOpenAttention(files.events)).length, `${what}: attention equals readOpenAttention`);
    return inc;
  };
  const empty = await check('no logs yet');
  t.equal(empty.counters, null, 'no counters.jsonl: no counter summary');
  for (let round = 0; round < 6; round++) {
    fs.appendFileSync(files.faults, faultLines(25));
    fs.appendFileSync(files.counters, counterLines(30));
    fs.appendFileSync(files.events, eventLines(40));
    await check(`round ${round}`);
    t.same(tail.positions(), { faults: fs.statSync(files.faults).size, events: fs.statSync(files.events).size, counters: fs.statSync(files.counters).size }, `round ${round}: each log read to its end, no further`);
  }
  // a half-written last line is left for the next scrape
  const more = faultLines(3);
  const cut = more.length - 17;
  fs.appendFileSync(files.faults, more.slice(0, cut));
  const before = tail.positions().faults;
  await check('a torn last line');
  t.equal(tail.positions().faults, before + more.lastIndexOf('\n', cut) + 1, 'read up to the last complete line only');
  fs.appendFileSync(files.faults, more.slice(cut));
  await check('the line completed');
  t.equal(tail.positions().faults, fs.statSync(files.faults).size);

  // replaced under its name (a new file, a new inode): read from its start
  const tmp = files.events + '.new';
  fs.writeFileSync(tmp, eventLines(5));
  fs.renameSync(tmp, files.events);
  const afterReplace = await check('events.jsonl replaced');
  t.ok((afterReplace.events.get('egress_denied') ?? 0) + (afterReplace.events.get('fault_denied') ?? 0) === 5, 'only the new file\'s events count');
  // cut shorter in place (same inode): read from its start
  const text = fs.readFileSync(files.counters, 'utf8');
  fs.truncateSync(files.counters, text.indexOf('\n', 200) + 1);
  await check('counters.jsonl cut shorter');
  // removed
  fs.rmSync(files.faults);
  const gone = await check('faults.jsonl removed');
  t.equal(gone.faults.faults.size, 0);
  fs.appendFileSync(files.faults, faultLines(4));
  await check('faults.jsonl back');
});

t.test('a symlink in place of a log is refused, not followed', async (t) => {
  const { dir, files } = setup(t);
  const st = path.dirname(path.dirname(dir));
  fs.writeFileSync(path.join(dir, 'elsewhere'), faultLines(2));
  fs.symlinkSync(path.join(dir, 'elsewhere'), files.faults);
  await t.rejects(new EvidenceTail(st, OP, dir).read(0n), { code: 'E_SYMLINK' });
});

t.test('cost: a scrape of quiet logs reads nothing; one of grown logs reads only the growth', async (t) => {
  const { dir, files } = setup(t);
  const st = path.dirname(path.dirname(dir));
  fs.writeFileSync(files.faults, faultLines(20_000));
  fs.writeFileSync(files.counters, counterLines(20_000));
  fs.writeFileSync(files.events, eventLines(20_000));
  const size = ['faults', 'counters', 'events'].reduce((a, k) => a + fs.statSync(files[k as keyof typeof files]).size, 0);
  const tail = new EvidenceTail(st, OP, dir);
  const m = new EvidenceMetrics();
  let render = 0;
  /** the read of the logs alone (the registry's render, the same whatever was read, is timed apart) */
  const time = async () => {
    const t0 = process.hrtime.bigint();
    const figures = await tail.read(0n);
    const t1 = process.hrtime.bigint();
    m.set(figures);
    await m.text();
    render = Number(process.hrtime.bigint() - t1) / 1e6;
    return Number(t1 - t0) / 1e6;
  };
  const first = await time();
  const quiet: number[] = [];
  for (let i = 0; i < 5; i++) quiet.push(await time());
  fs.appendFileSync(files.faults, faultLines(10));
  const grown = await time();
  const full0 = process.hrtime.bigint();
  await readEvidence(st, OP, dir, 0n);
  const full = Number(process.hrtime.bigint() - full0) / 1e6;
  const q = quiet.sort((a, b) => a - b)[2];
  t.comment(`logs ${(size / 1e6).toFixed(1)} MB: reading them at the first scrape ${first.toFixed(1)} ms, at a quiet scrape (median) ${q.toFixed(1)} ms, after 10 new faults ${grown.toFixed(1)} ms; a full read ${full.toFixed(1)} ms; the registry's render ${render.toFixed(1)} ms`);
  t.same(figures(await tail.read(0n)), figures(await readEvidence(st, OP, dir, 0n)), 'still equal after all that');
  // the quiet scrape does not read the logs: far cheaper than the full read
  t.ok(q < full / 5, `reading quiet logs (${q.toFixed(1)} ms) costs well under a full read (${full.toFixed(1)} ms)`);
});
