// The idempotency key (src/executor/key.ts, the contract in its header):
// deterministic over the recorded arguments, within a process and across
// processes; only the named fields count; a key over a timestamp is refused
// at registration.
import t from 'tap';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { deriveKey, keyMaterial } from '../../src/executor/key';
import { defineTool, keyFor } from '../../src/executor/tool';

const KEY_JS = path.resolve(__dirname, '../../src/executor/key.js');

const charge = defineTool<{ to: string; amount: number; memo?: Record<string, unknown>; requested_at?: string; attempt?: number }>({
  id: 'charge',
  schema: {
    type: 'object',
    properties: {
      to: { type: 'string' },
      amount: { type: 'integer' },
      memo: { type: 'object' },
      requested_at: { type: 'string', 'x-gensee-nondeterministic': true },
      attempt: { type: 'integer', 'x-gensee-nondeterministic': true },
    },
    required: ['to', 'amount'],
  },
  effect: { kind: 'idempotent', key: { fields: ['to', 'amount', 'memo'] } },
  run: async () => null,
});
const FIELDS = ['to', 'amount', 'memo'];

// the recorded arguments of one call, as the journal would hold them
const RECORDED = '{"to":"acct-42","amount":1250,"memo":{"lines":["a","b"],"currency":"EUR"},"requested_at":"2026-01-01T00:00:00Z","attempt":1}';

/** The same object with its keys, at every depth, in reverse order. */
function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)]));
  return v;
}

t.test('a known vector (the contract, pinned)', async (t) => {
  // Input: tool "charge", fields to, amount, memo of RECORDED. The canonical
  // JSON below is RFC 8785 written out by hand (members sorted at every
  // depth, no whitespace, requested_at and attempt absent because unnamed);
  // the hex was computed once with `printf '%s' '<that JSON>' | sha256sum`
  // (coreutils, not this code) and is hard-coded so a change to the
  // derivation, the canonicalization or the hash fails here.
  const args = JSON.parse(RECORDED) as Record<string, unknown>;
  t.equal(keyMaterial('charge', FIELDS, args), '{"args":{"amount":1250,"memo":{"currency":"EUR","lines":["a","b"]},"to":"acct-42"},"tool_id":"charge"}');
  t.equal(deriveKey('charge', FIELDS, args), '6c8846805cca606268bd573bec6e6b357f96e2d99c2a2bf5bdb2d465b8c16e46');
  t.equal(keyFor(charge, args), '6c8846805cca606268bd573bec6e6b357f96e2d99c2a2bf5bdb2d465b8c16e46', 'keyFor is deriveKey over the tool\'s fields');

  // RFC 8785 specifics: ECMAScript number form (1e+21, -0 as 0), strings as
  // JSON.stringify escapes them (UTF-8, not \u-escaped), an absent named
  // field as null; hex again from sha256sum over the JSON shown
  const odd = { big: 1e21, small: 0.1, neg: -0, s: '€\n"', e: 'é' };
  const oddFields = ['s', 'big', 'small', 'neg', 'e', 'missing'];
  t.equal(keyMaterial('t.x', oddFields, odd), '{"args":{"big":1e+21,"e":"é","missing":null,"neg":0,"s":"€\\n\\"","small":0.1},"tool_id":"t.x"}');
  t.equal(deriveKey('t.x', oddFields, odd), '2e6c987e2ef08ca7a6777ae5fba5d218fb34bbc74c77350f4671a2c5fe47eed8');
});

t.test('100 derivations from the same recorded arguments are identical', async (t) => {
  const keys = new Set<string>();
  for (let i = 0; i < 100; i++) {
    // a fresh parse each time, as recovery reads the journal entry anew
    const args = JSON.parse(RECORDED) as Record<string, unknown>;
    keys.add(i % 2 === 0 ? deriveKey('charge', FIELDS, args) : (keyFor(charge, args) as string));
  }
  t.equal(keys.size, 1, 'one key');
  t.match([...keys][0], /^[0-9a-f]{64}$/, 'hex SHA-256');
});

t.test('identical across two processes, whatever the key order', async (t) => {
  const here = deriveKey('charge', FIELDS, JSON.parse(RECORDED) as Record<string, unknown>);
  const script = `const { deriveKey } = require(${JSON.stringify(KEY_JS)});
    process.stdout.write(deriveKey('charge', JSON.parse(process.argv[1]), JSON.parse(process.argv[2])));`;
  const run = (args: string, fields: string[]) => {
    const r = spawnSync(process.execPath, ['-e', script, JSON.stringify(fields), args], { encoding: 'utf8', timeout: 30_000 });
    t.equal(r.status, 0, `child exited 0 ${r.stderr}`);
    return r.stdout;
  };
  const a = run(RECORDED, FIELDS);
  const b = run(JSON.stringify(reversed(JSON.parse(RECORDED))), [...FIELDS].reverse());
  t.not(RECORDED, JSON.stringify(reversed(JSON.parse(RECORDED))), 'the two processes got different texts');
  t.equal(a, here, 'first process');
  t.equal(b, here, 'second process, keys and fields in another order');
});

t.test('a derivation naming a timestamp field is rejected at registration', async (t) => {
  for (const f of ['requested_at', 'attempt'] as const) {
    t.throws(
      () => defineTool({ ...charge, effect: { kind: 'idempotent', key: { fields: ['to', f] } } }),
      { code: 'E_SCHEMA', message: new RegExp(`key field "${f}" .*x-gensee-nondeterministic.*a key over a timestamp/counter/random id changes on every retry`) },
      f,
    );
  }
});

t.test('only the named fields count', async (t) => {
  const args = JSON.parse(RECORDED) as Record<string, unknown>;
  const k = deriveKey('charge', FIELDS, args);
  t.equal(deriveKey('charge', FIELDS, { ...args, requested_at: '2031-07-04T12:00:00.123Z', attempt: 7 }), k, 'unnamed timestamp and counter changed: same key');
  t.equal(keyFor(charge, { ...args, requested_at: new Date().toISOString() }), k, 'through the tool too');
  const { requested_at: _a, attempt: _b, ...named } = args;
  t.equal(deriveKey('charge', FIELDS, named), k, 'unnamed fields absent: same key');
  t.equal(deriveKey('charge', FIELDS, { ...args, extra: { anything: [1, 2] } }), k, 'an unnamed field added: same key');
  t.notOk(keyMaterial('charge', FIELDS, args).includes('requested_at'), 'unnamed fields are not in the material');

  t.not(deriveKey('charge', FIELDS, { ...args, amount: 1251 }), k, 'a named field changed: another key');
  t.not(deriveKey('charge', FIELDS, { ...args, to: 'acct-43' }), k, 'another named field changed');
  t.not(deriveKey('charge', FIELDS, { ...args, memo: { lines: ['b', 'a'], currency: 'EUR' } }), k, 'array order counts');
  t.not(deriveKey('charge', FIELDS, { ...args, amount: '1250' }), k, 'a type change counts (no coercion)');
  t.not(deriveKey('refund', FIELDS, args), k, 'the tool id counts');
  t.not(deriveKey('charge', ['to', 'amount'], args), k, 'the set of named fields counts');
  t.equal(deriveKey('charge', ['memo', 'amount', 'to'], args), k, 'the order the fields are named in does not');

  const { memo: _m, ...noMemo } = args;
  t.equal(deriveKey('charge', FIELDS, noMemo), deriveKey('charge', FIELDS, { ...noMemo, memo: null }), 'an absent named field is null');
  t.not(deriveKey('charge', FIELDS, noMemo), k);
});

t.test('key order of the arguments and of nested objects does not matter', async (t) => {
  const args = JSON.parse(RECORDED) as Record<string, unknown>;
  const k = deriveKey('charge', FIELDS, args);
  t.equal(deriveKey('charge', FIELDS, reversed(args) as Record<string, unknown>), k, 'reversed at every depth');
  t.equal(deriveKey('charge', FIELDS, { memo: { currency: 'EUR', lines: ['a', 'b'] }, amount: 1250, to: 'acct-42' }), k, 'written in another order');
  const deep = { a: { z: 1, y: { q: [{ b: 2, a: 1 }], p: null } } };
  t.equal(deriveKey('x', ['a'], deep), deriveKey('x', ['a'], reversed(deep) as Record<string, unknown>), 'deeply nested');
});

t.test('only JSON can be in a key', async (t) => {
  const bad = (args: Record<string, unknown>, re: RegExp, what: string) => t.throws(() => deriveKey('t', ['v'], args), { code: 'E_SCHEMA', message: re }, what);
  bad({ v: { a: undefined } }, /\/args\/v\/a: undefined is not a JSON value/, 'undefined (canonicalize would drop it)');
  bad({ v: [1, undefined] }, /\/args\/v\/1: undefined/, 'undefined in an array (canonicalize would make it null)');
  bad({ v: NaN }, /\/args\/v: NaN is not a JSON number/, 'NaN');
  bad({ v: 10n }, /\/args\/v: a bigint is not a JSON value/, 'bigint');
  bad({ v: new Date(0) }, /\/args\/v: a Date object is not a JSON value/, 'a Date (canonicalize would call toJSON)');
  bad({ v: () => 1 }, /\/args\/v: a function/, 'a function');
  t.throws(() => deriveKey('t', ['v'], [] as unknown as Record<string, unknown>), { code: 'E_SCHEMA', message: /must be a JSON object/ }, 'arguments not an object');
  t.throws(() => deriveKey('', ['v'], {}), { code: 'E_SCHEMA' }, 'no tool id');
  // a field called __proto__ is a field, not the prototype
  const proto = JSON.parse('{"__proto__":{"x":1}}') as Record<string, unknown>;
  t.equal(keyMaterial('t', ['__proto__'], proto), '{"args":{"__proto__":{"x":1}},"tool_id":"t"}');
  t.equal(keyMaterial('t', ['__proto__', 'toString'], {}), '{"args":{"__proto__":null,"toString":null},"tool_id":"t"}', 'inherited names are absent, not Object.prototype');
});
