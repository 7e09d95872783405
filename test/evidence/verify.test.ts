import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChainedLog, LogFields } from '../../src/evidence/chain';
import { parseAnchor, verifyLog, verifyOperation } from '../../src/evidence/verify';
import { createOperation, opDir } from '../../src/state/operation';

async function writeLog(file: string, recs: LogFields[]): Promise<void> {
  const log = await ChainedLog.open(file);
  for (const r of recs) await log.append(r);
  await log.close();
}

const ten = (): LogFields[] => Array.from({ length: 10 }, (_, i) => ({ kind: 'event', n: i + 1 }));
const fileLines = (f: string): string[] => fs.readFileSync(f, 'utf8').split('\n').slice(0, -1);
const putLines = (f: string, ls: string[]): void => fs.writeFileSync(f, ls.map((l) => l + '\n').join(''));
const kinds = (r: { problems: Array<{ line: number; kind: string }> }): Array<[number, string]> =>
  r.problems.map((p) => [p.line, p.kind]);

t.test('an intact log passes', async (t) => {
  const f = path.join(t.testdir({}), 'x.jsonl');
  await writeLog(f, ten());
  const r = await verifyLog(f);
  t.ok(r.ok);
  t.equal(r.lines, 10);
  t.same(r.problems, []);
  t.match(r.last_hash, /^[0-9a-f]{64}$/);
  fs.writeFileSync(path.join(path.dirname(f), 'empty.jsonl'), '');
  t.match(await verifyLog(path.join(path.dirname(f), 'empty.jsonl')), { ok: true, lines: 0, problems: [] });
});

t.test('an edited line is reported at its own line number', async (t) => {
  const f = path.join(t.testdir({}), 'x.jsonl');
  await writeLog(f, ten());
  const ls = fileLines(f);
  ls[4] = ls[4].replace('"n":5', '"n":50');
  putLines(f, ls);
  const r = await verifyLog(f);
  t.notOk(r.ok);
  t.same(kinds(r), [[5, 'edited']]);
  t.equal(r.problems[0].severity, 'error');

  // the first line
  await writeLog(path.join(path.dirname(f), 'y.jsonl'), ten());
  const y = path.join(path.dirname(f), 'y.jsonl');
  const ly = fileLines(y);
  ly[0] = ly[0].replace('"kind":"event"', '"kind":"evenT"');
  putLines(y, ly);
  t.same(kinds(await verifyLog(y)), [[1, 'edited']]);
});

t.test('a removed line is reported at its position', async (t) => {
  const f = path.join(t.testdir({}), 'x.jsonl');
  await writeLog(f, ten());
  const ls = fileLines(f);
  putLines(f, [...ls.slice(0, 4), ...ls.slice(5)]);
  const r = await verifyLog(f);
  t.notOk(r.ok);
  t.same(kinds(r), [[5, 'removed']]);
  t.match(r.problems[0].detail, /seq 5 is missing/);

  putLines(f, [...ls.slice(0, 2), ...ls.slice(5)]);
  const r2 = await verifyLog(f);
  t.same(kinds(r2), [[3, 'removed']]);
  t.match(r2.problems[0].detail, /seq 3\.\.5 \(3\)/);

  putLines(f, ls.slice(1));
  t.same(kinds(await verifyLog(f)), [[1, 'removed']], 'head removed');
});

t.test('a torn last line is reported', async (t) => {
  const f = path.join(t.testdir({}), 'x.jsonl');
  await writeLog(f, ten());
  fs.appendFileSync(f, '{"seq":11,"at":"2024');
  const r = await verifyLog(f);
  t.notOk(r.ok);
  t.equal(r.lines, 11);
  t.same(kinds(r), [[11, 'torn']]);

  // even a complete-looking object without its newline is torn
  const g = path.join(path.dirname(f), 'g.jsonl');
  await writeLog(g, ten());
  const s = fs.readFileSync(g, 'utf8');
  fs.writeFileSync(g, s.slice(0, -1));
  t.same(kinds(await verifyLog(g)), [[10, 'torn']]);
});

t.test('faults must be resolved; refusals stand alone', async (t) => {
  const f = path.join(t.testdir({}), 'faults.jsonl');
  await writeLog(f, [
    { kind: 'fault', fault_id: 'f-1' },
    { kind: 'resolution', fault_id: 'f-1', action: 'deny' },
    { kind: 'fault', fault_id: 'f-2' },
    { kind: 'refusal', reason: 'unauthenticated_peer' },
    { kind: 'fault', fault_id: 'f-3' },
    { kind: 'fault', fault_id: 'f-1' },
    { kind: 'resolution', fault_id: 'f-3', action: 'retry_after_lease' },
  ]);
  const r = await verifyLog(f, { pairFaults: true });
  t.notOk(r.ok);
  t.same(kinds(r), [[3, 'unresolved_fault'], [6, 'unresolved_fault']], 'f-2 and the second f-1');
  t.same(r.problems.map((p) => p.fault_id), ['f-2', 'f-1']);
  t.ok((await verifyLog(f)).ok, 'pairing is opt-in');
  t.ok((await verifyLog(f, { pairFaults: false })).ok);
});

t.test('other damage: bad json, duplicated line, bad prev', async (t) => {
  const dir = t.testdir({});
  const f = path.join(dir, 'x.jsonl');
  await writeLog(f, ten());
  const ls = fileLines(f);

  putLines(f, [...ls.slice(0, 3), 'not json', ...ls.slice(4)]);
  t.same(kinds(await verifyLog(f)), [[4, 'bad_json']], 'a garbage line: bad_json, no duplicate edited report');

  putLines(f, [...ls.slice(0, 6), ls[5], ...ls.slice(6)]);
  const dup = await verifyLog(f);
  t.same(kinds(dup), [[6, 'edited'], [7, 'seq_gap']], 'a duplicated line');

  const noPrev = JSON.parse(ls[2]);
  delete noPrev.prev;
  putLines(f, [...ls.slice(0, 2), JSON.stringify(noPrev), ...ls.slice(3)]);
  t.same(kinds(await verifyLog(f)), [[3, 'bad_json']], 'prev stripped: one report for the malformed line');
});

t.test('symlinked or non-file logs are refused', async (t) => {
  const dir = t.testdir({ 'x.jsonl': '' });
  fs.symlinkSync(path.join(dir, 'x.jsonl'), path.join(dir, 'l.jsonl'));
  await t.rejects(verifyLog(path.join(dir, 'l.jsonl')), { code: 'E_SYMLINK' });
  await t.rejects(verifyLog(dir), { code: 'E_NOT_FILE' });
  await t.rejects(verifyLog(path.join(dir, 'missing.jsonl')), { code: 'ENOENT' });
});

t.test('verifyOperation combines the logs that exist', async (t) => {
  const state = t.testdir({});
  await createOperation(state, { id: 'demo', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h' });
  const dir = opDir(state, 'demo');
  let r = await verifyOperation(state, 'demo');
  t.match(r, { ok: true, id: 'demo', dir, logs: [], missing: ['faults.jsonl', 'counters.jsonl', 'events.jsonl', 'calls.jsonl'] });

  await writeLog(path.join(dir, 'faults.jsonl'), [
    { kind: 'fault', fault_id: 'f-1' },
    { kind: 'resolution', fault_id: 'f-1' },
  ]);
  await writeLog(path.join(dir, 'events.jsonl'), ten());
  r = await verifyOperation(state, 'demo');
  t.ok(r.ok);
  t.same(r.logs.map((l) => [l.file, l.lines, l.ok]), [['faults.jsonl', 2, true], ['events.jsonl', 10, true]]);
  t.same(r.missing, ['counters.jsonl', 'calls.jsonl']);

  const log = await ChainedLog.open(path.join(dir, 'faults.jsonl'));
  await log.append({ kind: 'fault', fault_id: 'f-2' });
  await log.close();
  r = await verifyOperation(state, 'demo');
  t.notOk(r.ok, 'an unresolved fault in faults.jsonl fails the operation');
  t.same(kinds(r.logs[0]), [[3, 'unresolved_fault']]);

  await t.rejects(verifyOperation(state, 'nope'), { code: 'E_UNKNOWN_OP' });
  fs.symlinkSync(path.join(dir, 'events.jsonl'), path.join(dir, 'counters.jsonl'));
  await t.rejects(verifyOperation(state, 'demo'), { code: 'E_SYMLINK' });
});

t.test('an anchor catches lines cut off the end, and a rewritten anchored line', async (t) => {
  const f = path.join(t.testdir({}), 'x.jsonl');
  await writeLog(f, ten());
  const intact = await verifyLog(f);
  const anchor = { line: 10, hash: intact.last_hash };
  t.match(await verifyLog(f, { anchor }), { ok: true, anchor: { line: 10, ok: true } });
  t.match(await verifyLog(f, { anchor: { line: 4, hash: intact.last_hash } }), { ok: false, problems: [{ line: 4, kind: 'edited' }] });

  const ls = fileLines(f);
  putLines(f, ls.slice(0, 7));
  t.match(await verifyLog(f), { ok: true }, 'without an anchor the cut end is invisible');
  const r = await verifyLog(f, { anchor });
  t.notOk(r.ok);
  t.same(kinds(r), [[10, 'removed']]);
  t.match(r.problems[0].detail, /ends at line 7, but the anchor names line 10/);
  t.equal(r.anchor?.ok, false);

  fs.writeFileSync(f, '');
  t.match(await verifyLog(f, { anchor }), { ok: false, problems: [{ line: 10, kind: 'removed', detail: /the log is empty/ }] });
});

t.test('verifyOperation: an anchored log that is gone fails', async (t) => {
  const state = t.testdir({});
  await createOperation(state, { id: 'anch', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h' });
  const hash = 'b'.repeat(64);
  const r = await verifyOperation(state, 'anch', { 'faults.jsonl': { line: 3, hash } });
  t.notOk(r.ok);
  t.match(r.logs, [{ file: 'faults.jsonl', ok: false, problems: [{ line: 3, kind: 'removed', detail: /the file is gone/ }] }]);
  t.same(r.missing, ['counters.jsonl', 'events.jsonl', 'calls.jsonl']);
});

t.test('parseAnchor: [FILE:]LINE:HASH, anything else refused by name', async (t) => {
  const h = 'c'.repeat(64);
  t.same(parseAnchor(`5:${h}`), { file: 'faults.jsonl', anchor: { line: 5, hash: h } });
  t.same(parseAnchor(`counters.jsonl:9:${h}`), { file: 'counters.jsonl', anchor: { line: 9, hash: h } });
  for (const [spec, why] of [
    [`0:${h}`, /LINE must be a line number/],
    [`x:5:${h}`, /FILE must be one of/],
    [`5:${h.toUpperCase()}`, /HASH must be 64 lowercase hex/],
    [h, /wrong number/],
    [`a:b:c:d`, /wrong number/],
  ] as const) {
    t.throws(() => parseAnchor(spec), { code: 'E_BAD_ANCHOR', message: why }, spec.slice(0, 24));
  }
});

t.test('an operation whose records imply evidence its logs lack fails (evidence_missing)', async (t) => {
  const state = t.testdir({});
  await createOperation(state, { id: 'ev', owner_uid: 0, cgroup: '/sys/fs/cgroup/x', policy_hash: 'h' });
  const dir = opDir(state, 'ev');
  const problems = (r: Awaited<ReturnType<typeof verifyOperation>>) =>
    r.logs.flatMap((l) => l.problems.filter((p) => p.kind === 'evidence_missing').map((p) => [l.file, p.detail.split(',')[0]]));

  // a lease in network.json, and faults.jsonl absent, then empty
  const lease = { generation: 2, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 80, expires_at_boot_ns: '1', max_uses: 0, installed_at: new Date().toISOString() };
  fs.writeFileSync(path.join(dir, 'network.json'), JSON.stringify({ leases: [lease], generations: [{ generation: 2, reason: 'lease_added' }] }), { mode: 0o600 });
  let r = await verifyOperation(state, 'ev');
  t.notOk(r.ok, 'a recorded lease with no faults.jsonl fails');
  t.same(problems(r), [['faults.jsonl', 'faults.jsonl is absent']]);
  t.same(r.missing.includes('faults.jsonl'), false, 'and is not listed as merely not written yet');
  fs.writeFileSync(path.join(dir, 'faults.jsonl'), '', { mode: 0o600 });
  r = await verifyOperation(state, 'ev');
  t.same(problems(r), [['faults.jsonl', 'faults.jsonl is empty']], 'an empty one fails too');

  // its lines present, with a deny: events.jsonl must hold lines
  fs.rmSync(path.join(dir, 'faults.jsonl'));
  await writeLog(path.join(dir, 'faults.jsonl'), [
    { kind: 'fault', fault_id: 'f-1' },
    { kind: 'resolution', fault_id: 'f-1', resolution: { action: 'deny', reason: 'policy_denied' } },
  ]);
  r = await verifyOperation(state, 'ev');
  t.same(problems(r), [['events.jsonl', 'events.jsonl is absent']], 'a recorded refusal with no events.jsonl fails');
  await writeLog(path.join(dir, 'events.jsonl'), [{ type: 'suppressed', count: 1, second: new Date().toISOString() }]);
  r = await verifyOperation(state, 'ev');
  t.ok(r.ok, 'with its events the operation verifies');

  // totals counted with no counters.jsonl
  const rec = JSON.parse(fs.readFileSync(path.join(dir, 'operation.json'), 'utf8')) as { totals: { allow: number } };
  rec.totals.allow = 3;
  fs.writeFileSync(path.join(dir, 'operation.json'), JSON.stringify(rec), { mode: 0o600 });
  r = await verifyOperation(state, 'ev');
  t.same(problems(r), [['counters.jsonl', 'counters.jsonl is absent']], 'totals with no counters.jsonl fail');
  await writeLog(path.join(dir, 'counters.jsonl'), [{ kind: 'allow', delta: 3 }]);
  r = await verifyOperation(state, 'ev');
  t.ok(r.ok, 'and pass once it holds their lines');
});
