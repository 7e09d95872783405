import t from 'tap';
import * as fs from 'node:fs';
import nodeFs from 'node:fs'; // the module object itself: the spy on readSync below
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { ChainedLog, ZERO_HASH } from '../../src/evidence/chain';
import { verifyLog } from '../../src/evidence/verify';

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');
const mode = (p: string): number => fs.lstatSync(p).mode & 0o7777;
const lines = (file: string): string[] => {
  const s = fs.readFileSync(file, 'utf8');
  return s.endsWith('\n') ? s.slice(0, -1).split('\n') : s.split('\n');
};
const LINE_RE = /^\{"seq":\d+,"at":"[^"]+",.*"prev":"[0-9a-f]{64}"\}$/;

t.test('line format, key order, chain, mode', async (t) => {
  const file = path.join(t.testdir({}), 'faults.jsonl');
  const old = process.umask(0);
  let log: ChainedLog;
  try {
    log = await ChainedLog.open(file);
  } finally {
    process.umask(old);
  }
  t.equal(mode(file), 0o600);
  t.equal(log.seq, 0);
  t.equal(log.lastHash, ZERO_HASH);
  t.equal(log.torn, null);
  await log.append({ kind: 'fault', fault_id: 'f-1', nested: { b: 1, a: [1, 'x'] } });
  await log.append({ kind: 'resolution', fault_id: 'f-1', action: 'deny', reason: 'policy_denied' });
  await log.append({ at: '2020-01-01T00:00:00.000Z', kind: 'event', detail: 'line\nbreak "quoted"' });
  await log.append({});
  await log.close();

  const raw = fs.readFileSync(file, 'utf8');
  t.ok(raw.endsWith('}\n'));
  const ls = lines(file);
  t.equal(ls.length, 4);
  for (const l of ls) t.match(l, LINE_RE);
  const objs = ls.map((l) => JSON.parse(l));
  t.same(Object.keys(objs[0]), ['seq', 'at', 'kind', 'fault_id', 'nested', 'prev'], 'seq, at, caller fields in order, prev last');
  t.same(objs.map((o) => o.seq), [1, 2, 3, 4]);
  t.equal(objs[0].prev, ZERO_HASH);
  for (let i = 1; i < ls.length; i++) t.equal(objs[i].prev, sha(ls[i - 1]), `line ${i + 1} prev = sha256(line ${i})`);
  t.equal(objs[2].at, '2020-01-01T00:00:00.000Z', 'caller-supplied at');
  t.same(Object.keys(objs[2]), ['seq', 'at', 'kind', 'detail', 'prev']);
  t.equal(objs[2].detail, 'line\nbreak "quoted"');
  t.equal(ls[3], `{"seq":4,"at":"${objs[3].at}","prev":"${sha(ls[2])}"}`);
  t.ok(!Number.isNaN(Date.parse(objs[0].at)));
});

t.test('bad records are refused without advancing the chain', async (t) => {
  const file = path.join(t.testdir({}), 'x.jsonl');
  const log = await ChainedLog.open(file);
  await t.rejects(log.append({ seq: 5 }), { code: 'E_USAGE' });
  await t.rejects(log.append({ prev: 'x' }), { code: 'E_USAGE' });
  await t.rejects(log.append({ at: 5 }), { code: 'E_USAGE' });
  await t.rejects(log.append([] as never), { code: 'E_USAGE' });
  await t.rejects(log.append({ n: 1n }), TypeError);
  t.throws(() => log.appendSync({ seq: 1 }), { code: 'E_USAGE' });
  t.equal(log.seq, 0);
  await log.append({ ok: true });
  await log.close();
  await t.rejects(log.append({ late: true }), { code: 'E_STATE' }, 'closed');
  t.same(lines(file).map((l) => JSON.parse(l).seq), [1]);
  t.ok((await verifyLog(file)).ok);
});

t.test('1000 concurrent appends: call order, valid chain, group commit', async (t) => {
  const file = path.join(t.testdir({}), 'events.jsonl');
  const log = await ChainedLog.open(file);
  const done: number[] = [];
  await Promise.all(Array.from({ length: 1000 }, (_, i) => log.append({ kind: 'n', i }).then(() => done.push(i))));
  t.equal(log.seq, 1000);
  const objs = lines(file).map((l) => JSON.parse(l));
  t.equal(objs.length, 1000);
  t.same(objs.map((o) => o.i), Array.from({ length: 1000 }, (_, i) => i), 'written in call order');
  t.same(objs.map((o) => o.seq), Array.from({ length: 1000 }, (_, i) => i + 1));
  // the syncer's own count: every line is written before the first
  // fdatasync ends, so a handful of syncs cover all 1000
  const st = log.syncStats;
  t.ok(st.syncs >= 1 && st.syncs <= 500, `group commit: ${st.syncs} fdatasyncs for 1000 lines`);
  t.equal(st.lines, 1000, 'every line made durable by a counted fdatasync');
  t.equal(done.length, 1000);
  const r = await verifyLog(file);
  t.same(r.problems, []);
  t.ok(r.ok);

  // a trickle after the burst still works, and appendSync interleaves in order
  const p1 = log.append({ kind: 'a' });
  log.appendSync({ kind: 'b' });
  const p2 = log.append({ kind: 'c' });
  await Promise.all([p1, p2]);
  await log.close();
  t.same(lines(file).slice(-3).map((l) => JSON.parse(l).kind), ['a', 'b', 'c']);
  t.ok((await verifyLog(file)).ok);
});

t.test('append resolves only after the line is on disk', async (t) => {
  const file = path.join(t.testdir({}), 'x.jsonl');
  const log = await ChainedLog.open(file, { groupWindowMs: 0 });
  await log.append({ kind: 'one' });
  t.equal(lines(file).length, 1, 'visible when the promise resolves');
  log.appendSync({ kind: 'two' });
  t.equal(lines(file).length, 2, 'appendSync writes before returning');
  log.closeSync();
  log.closeSync();
});

t.test('reopen continues the chain', async (t) => {
  const file = path.join(t.testdir({}), 'x.jsonl');
  let log = await ChainedLog.open(file);
  for (let i = 0; i < 5; i++) await log.append({ i });
  const h = log.lastHash;
  await log.close();
  log = await ChainedLog.open(file);
  t.equal(log.seq, 5);
  t.equal(log.lastHash, h);
  t.equal(log.torn, null);
  await log.append({ i: 5 });
  await log.close();
  const objs = lines(file).map((l) => JSON.parse(l));
  t.same(objs.map((o) => o.seq), [1, 2, 3, 4, 5, 6]);
  t.ok((await verifyLog(file)).ok);
});

t.test('open reads the tail of a large file', async (t) => {
  const file = path.join(t.testdir({}), 'big.jsonl');
  const log = await ChainedLog.open(file);
  const pad = 'x'.repeat(200);
  const ps: Promise<void>[] = [];
  for (let i = 0; i < 20000; i++) ps.push(log.append({ i, pad }));
  await Promise.all(ps);
  const h = log.lastHash;
  await log.close();
  // what open reads, counted at fs.readSync (how long it takes is `make bench`, deadlines)
  let bytesRead = 0;
  const readSync = nodeFs.readSync as (...a: unknown[]) => number;
  (nodeFs as { readSync: unknown }).readSync = (...a: unknown[]) => {
    const n = readSync(...a);
    bytesRead += n;
    return n;
  };
  let again: ChainedLog;
  try {
    again = await ChainedLog.open(file);
  } finally {
    (nodeFs as { readSync: unknown }).readSync = readSync;
  }
  t.equal(again.seq, 20000);
  t.equal(again.lastHash, h);
  const size = fs.statSync(file).size;
  t.ok(bytesRead > 0 && bytesRead <= 128 * 1024, `open of a ${size} byte log read ${bytesRead} bytes: its tail, not the file`);
  await again.close();
});

t.test('a torn last line is kept, terminated and recorded', async (t) => {
  const file = path.join(t.testdir({}), 'faults.jsonl');
  let log = await ChainedLog.open(file);
  for (let i = 0; i < 3; i++) await log.append({ kind: 'x', i });
  await log.close();
  const torn = '{"seq":4,"at":"2024-01-01T00:00:00.000Z","kind":"fau';
  fs.appendFileSync(file, torn);

  log = await ChainedLog.open(file);
  t.same(log.torn, { line: 4, bytes: Buffer.byteLength(torn), record_seq: 5 });
  t.equal(log.seq, 5);
  const ls = lines(file);
  t.equal(ls.length, 5);
  t.equal(ls[3], torn, 'torn bytes kept as they were');
  const rec = JSON.parse(ls[4]);
  t.match(rec, { seq: 5, kind: 'torn_line', line: 4, bytes: Buffer.byteLength(torn), prev: sha(torn) });
  t.same(Object.keys(rec), ['seq', 'at', 'kind', 'line', 'bytes', 'prev']);
  await log.append({ kind: 'after' });
  await log.close();
  t.equal(JSON.parse(lines(file)[5]).seq, 6);

  const r = await verifyLog(file);
  t.ok(r.ok, 'a recorded torn line is a warning, not a failure');
  t.same(r.problems.map((p) => [p.line, p.kind, p.severity]), [[4, 'torn_recorded', 'warning']]);

  // reopening again does not record it twice
  log = await ChainedLog.open(file);
  t.equal(log.torn, null);
  t.equal(log.seq, 6);
  await log.close();
});

t.test('torn first line, and a file that is only garbage', async (t) => {
  const dir = t.testdir({ 'a.jsonl': '{"seq":1,"at', 'b.jsonl': 'garbage\nmore garbage\n' });
  const a = await ChainedLog.open(path.join(dir, 'a.jsonl'));
  t.same(a.torn, { line: 1, bytes: 12, record_seq: 2 });
  await a.close();
  const ra = await verifyLog(path.join(dir, 'a.jsonl'));
  t.ok(ra.ok);
  t.same(ra.problems.map((p) => [p.line, p.kind]), [[1, 'torn_recorded']]);

  const b = await ChainedLog.open(path.join(dir, 'b.jsonl'));
  t.equal(b.seq, 2, 'seq from counting lines when the last one has none');
  t.equal(b.lastHash, sha('more garbage'));
  await b.append({ kind: 'x' });
  await b.close();
  const rb = await verifyLog(path.join(dir, 'b.jsonl'));
  t.notOk(rb.ok);
  t.same(rb.problems.map((p) => [p.line, p.kind]), [[1, 'bad_json'], [2, 'bad_json']]);
});

t.test('symlinks refused', async (t) => {
  const dir = t.testdir({ real: { 'x.jsonl': '' } });
  fs.symlinkSync(path.join(dir, 'real', 'x.jsonl'), path.join(dir, 'link.jsonl'));
  await t.rejects(ChainedLog.open(path.join(dir, 'link.jsonl')), { code: 'E_SYMLINK' });
  fs.symlinkSync('/nonexistent', path.join(dir, 'dangling.jsonl'));
  await t.rejects(ChainedLog.open(path.join(dir, 'dangling.jsonl')), { code: 'E_SYMLINK' });
  t.notOk(fs.existsSync('/nonexistent'));
  fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'dirlink'));
  await t.rejects(ChainedLog.open(path.join(dir, 'dirlink', 'x.jsonl')), { code: 'E_SYMLINK' });
  await t.rejects(ChainedLog.open(path.join(dir, 'real')), { code: 'E_NOT_FILE' });
});

t.test('a loose mode on an existing log is tightened', async (t) => {
  const dir = t.testdir({ 'x.jsonl': '' });
  fs.chmodSync(path.join(dir, 'x.jsonl'), 0o644);
  const log = await ChainedLog.open(path.join(dir, 'x.jsonl'));
  t.equal(mode(path.join(dir, 'x.jsonl')), 0o600);
  await log.close();
});
