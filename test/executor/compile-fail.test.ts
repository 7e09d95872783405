// An idempotent tool without a key derivation must not compile: the real tsc
// (node_modules/.bin/tsc, --strict) on fixtures under
// test/executor/fixtures/tsc/ (excluded from the project build). The same
// tool WITH its key compiles, so this test fails if the type stops refusing.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const ROOT = path.resolve(__dirname, '../../..');
const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');
const FIXTURES = path.join(ROOT, 'test', 'executor', 'fixtures', 'tsc');

function tsc(fixture: string): { status: number | null; out: string } {
  const r = spawnSync(
    TSC,
    [
      '--noEmit',
      '--strict',
      '--pretty',
      'false',
      '--target',
      'ES2022',
      '--module',
      'commonjs',
      '--moduleResolution',
      'node',
      '--esModuleInterop',
      '--skipLibCheck',
      '--types',
      'node',
      path.join(FIXTURES, fixture),
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

t.test('idempotent without key fails tsc, naming key', async (t) => {
  const r = tsc('idempotent-no-key.ts');
  t.not(r.status, 0, 'tsc exits non-zero');
  t.notOk(r.status === null, 'tsc ran to completion');
  const effectLine = fs.readFileSync(path.join(FIXTURES, 'idempotent-no-key.ts'), 'utf8').split('\n').findIndex((l) => /^\s*effect:/.test(l)) + 1;
  t.ok(effectLine > 0, 'the fixture has an effect line');
  t.match(r.out, new RegExp(`idempotent-no-key\\.ts\\(${effectLine},\\d+\\): error TS\\d+`), 'the error is on the effect line of the fixture');
  t.match(r.out, /Property 'key' is missing/, 'the message names key');
  t.equal(r.out.match(/error TS/g)?.length, 1, 'and it is the only error');
});

t.test('the same tool with its key compiles', async (t) => {
  const r = tsc('idempotent-with-key.ts');
  t.equal(r.status, 0, `tsc exits 0: ${r.out}`);
});

t.test('a key field the arguments do not have fails tsc, naming the field', async (t) => {
  const r = tsc('idempotent-unknown-field.ts');
  t.not(r.status, 0, 'tsc exits non-zero');
  t.match(r.out, /'"amount_cents"' is not assignable to type '"to" \| "amount"'/, 'the message names the field and the allowed ones');
});
