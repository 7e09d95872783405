// Tool registration (src/executor/tool.ts): what defineTool refuses and why,
// argument validation with JSON pointers, and loading a tool module.
import t, { type Test } from 'tap';
import * as path from 'node:path';
import { defineTool, loadTools, validateArgs, keyFor, registrationOf, checkRegistration, MAX_TOOLS, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, type ToolDef } from '../../src/executor/tool';
import { GenseeError } from '../../src/errors';
import Ajv from 'ajv';

type Def = ToolDef<Record<string, unknown>>;

const SCHEMA = {
  type: 'object',
  properties: {
    to: { type: 'string' },
    amount: { type: 'integer', minimum: 1 },
    requested_at: { type: 'string', 'x-gensee-nondeterministic': true },
    attempt: { type: 'integer', 'x-gensee-nondeterministic': true },
    order: {
      type: 'object',
      properties: { sku: { type: 'string' }, nonce: { type: 'string', 'x-gensee-nondeterministic': true } },
    },
    customer: { $ref: '#/definitions/customer' },
    items: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer', minimum: 1 } }, required: ['qty'] } },
  },
  required: ['to', 'amount'],
  additionalProperties: false,
  definitions: {
    customer: { type: 'object', properties: { id: { type: 'string' }, seen_at: { type: 'string', 'x-gensee-nondeterministic': true } } },
  },
};

function base(over: Partial<Record<keyof Def, unknown>> = {}): Def {
  return {
    id: 'charge',
    schema: SCHEMA,
    effect: { kind: 'idempotent', key: { fields: ['to', 'amount'] } },
    run: async () => null,
    ...over,
  } as Def;
}

const fixture = (name: string) => path.join(__dirname, 'fixtures', 'modules', `${name}.js`);

/** defineTool(def) must throw E_SCHEMA with a message matching `re`. */
function refused(t: Test, def: unknown, re: RegExp, what: string): void {
  t.throws(() => defineTool(def as Def), { name: 'GenseeError', code: 'E_SCHEMA', message: re }, what);
}

t.test('each class registers, and defineTool returns the definition itself', async (t) => {
  const idem = base();
  t.equal(defineTool(idem), idem);
  const q = base({ effect: { kind: 'queryable', lookup: { requestId: () => 'r', lookup: async () => 'found' } } });
  t.equal(defineTool(q), q);
  const u = base({ effect: { kind: 'unsafe' } });
  t.equal(defineTool(u), u);
  // a nondeterministic field the key does NOT name is fine, and so is a marker set to false
  t.ok(defineTool(base({ schema: { type: 'object', properties: { to: { type: 'string', 'x-gensee-nondeterministic': false } } }, effect: { kind: 'idempotent', key: { fields: ['to'] } } })));
  // annotations ajv does not know are allowed
  t.ok(defineTool(base({ schema: { ...SCHEMA, 'x-ui-group': 'payments', properties: { ...SCHEMA.properties, to: { type: 'string', 'x-ui-label': 'Payee' } } } })));
  for (const id of ['a', '0', 'charge.v2', 'a_b-c', 'x'.repeat(64)]) t.ok(defineTool(base({ id })), `id ${id}`);
});

t.test('registration refusals name what is wrong', async (t) => {
  refused(t, null, /a tool definition must be an object/, 'not an object');
  refused(t, base({ id: 42 }), /"id" must be a string/, 'id not a string');
  for (const id of ['', 'Charge', '-x', '.x', 'a b', 'a/b', 'x'.repeat(65), 'é']) {
    refused(t, base({ id }), /is not a tool id \(1-64 of a-z 0-9 _ \. -/, `id ${JSON.stringify(id)}`);
  }
  refused(t, base({ schema: 'object' }), /tool "charge": "schema" must be a JSON Schema object/, 'schema not an object');
  refused(t, base({ schema: { type: 'array', items: {} } }), /its schema must be an object schema \("type": "object"\), not "array"/, 'not an object schema');
  refused(t, base({ schema: { type: 'object' } }), /its schema must list the arguments in "properties"/, 'no properties');
  refused(t, base({ schema: { type: 'object', properties: { to: 'string' } } }), /schema \/properties\/to must be a schema/, 'a property that is not a schema');
  refused(t, base({ schema: { type: 'object', properties: { to: { type: 'text' } } }, effect: { kind: 'unsafe' } }), /its argument schema does not compile: .*type/, 'schema does not compile');
  refused(
    t,
    base({ schema: { type: 'object', properties: { to: { type: 'string', 'x-gensee-nondeterministic': 'yes' } } }, effect: { kind: 'unsafe' } }),
    /does not compile: .*x-gensee-nondeterministic.*must be boolean/,
    'a marker that is not a boolean',
  );

  refused(t, base({ effect: undefined }), /"effect" must be an object with "kind" \(idempotent\|queryable\|unsafe\)/, 'no effect');
  refused(t, base({ effect: { kind: 'maybe' } }), /effect\.kind "maybe" is not one of idempotent\|queryable\|unsafe/, 'unknown kind');
  refused(t, base({ effect: { kind: 'idempotent' } }), /an idempotent tool must declare "key"/, 'idempotent without key (a cast around the type)');
  refused(t, base({ effect: { kind: 'idempotent', key: { fields: [] } } }), /key\.fields must name at least one argument field/, 'empty key');
  refused(t, base({ effect: { kind: 'idempotent', key: {} } }), /key\.fields must name at least one argument field/, 'key without fields');
  refused(t, base({ effect: { kind: 'idempotent', key: { fields: ['to', 7] } } }), /key\.fields holds 7, not a field name/, 'a field that is not a string');
  refused(t, base({ effect: { kind: 'idempotent', key: { fields: ['to', 'to'] } } }), /key field "to" is named twice/, 'a field named twice');
  refused(t, base({ effect: { kind: 'idempotent', key: { fields: ['to', 'payee'] } } }), /key field "payee" is not a property of the argument schema \(properties: to, amount,/, 'a field not in the schema');

  const WHY = /a key over a timestamp\/counter\/random id changes on every retry/;
  for (const f of ['requested_at', 'attempt']) {
    refused(t, base({ effect: { kind: 'idempotent', key: { fields: ['to', f] } } }), new RegExp(`key field "${f}" is marked "x-gensee-nondeterministic": true`), `${f} marked`);
    refused(t, base({ effect: { kind: 'idempotent', key: { fields: ['to', f] } } }), WHY, `${f}: the message says why`);
  }
  refused(t, base({ effect: { kind: 'idempotent', key: { fields: ['order'] } } }), /key field "order" contains a field marked at \/properties\/order\/properties\/nonce "x-gensee-nondeterministic".*changes on every retry/, 'a marked field nested in a key field');
  refused(t, base({ effect: { kind: 'idempotent', key: { fields: ['customer'] } } }), /key field "customer" contains a field marked at \/definitions\/customer\/properties\/seen_at/, 'a marked field behind a $ref');
  t.ok(defineTool(base({ effect: { kind: 'idempotent', key: { fields: ['items'] } } })), 'an unmarked nested field may be in the key');

  refused(t, base({ effect: { kind: 'queryable' } }), /a queryable tool must declare "lookup": \{ requestId\(args\), lookup\(requestId, io\) \}/, 'queryable without lookup');
  refused(t, base({ effect: { kind: 'queryable', lookup: { requestId: () => 'r' } } }), /lookup\.lookup must be a function/, 'lookup without lookup()');
  refused(t, base({ effect: { kind: 'queryable', lookup: { lookup: async () => 'found' } } }), /lookup\.requestId must be a function/, 'lookup without requestId()');
  refused(t, base({ effect: { kind: 'unsafe' }, run: 'go' }), /"run" must be a function/, 'run not a function');
  refused(t, base({ run: undefined }), /tool "charge": "run" must be a function/, 'no run');
});

t.test('validateArgs: accepted arguments come back as they are, refusals are JSON pointers', async (t) => {
  const tool = defineTool(base());
  const args = { to: 'acct-1', amount: 5, requested_at: '2026-01-01T00:00:00Z', items: [{ qty: 1 }] };
  t.equal(validateArgs(tool, args), args, 'the same object, unchanged');
  t.same(args, { to: 'acct-1', amount: 5, requested_at: '2026-01-01T00:00:00Z', items: [{ qty: 1 }] }, 'nothing added or coerced');

  const bad = (a: unknown, re: RegExp, what: string) => t.throws(() => validateArgs(tool, a), { code: 'E_SCHEMA', message: re }, what);
  bad({ amount: 5 }, /^tool "charge": invalid arguments: \/to: required field missing$/, 'missing field');
  bad({ to: 'a', amount: '5' }, /\/amount: must be integer/, 'wrong type (no coercion)');
  bad({ to: 'a', amount: 0 }, /\/amount: must be >= 1/, 'out of range');
  bad({ to: 'a', amount: 1, payee: 'b' }, /\/payee: unknown field/, 'unknown field');
  bad({ to: 'a', amount: 1, items: [{ qty: 1 }, { qty: 0 }] }, /\/items\/1\/qty: must be >= 1/, 'a nested pointer');
  bad({ to: 'a', amount: 1, items: [{}] }, /\/items\/0\/qty: required field missing/, 'a nested missing field');
  bad([], /invalid arguments: \/: must be object/, 'not an object');
  bad('{"to":"a"}', /\/: must be object/, 'a JSON string is not arguments');
  bad({ amount: 'x' }, /\/to: required field missing; \/amount: must be integer/, 'every error, not only the first');
  const e = (() => {
    try {
      validateArgs(tool, {});
    } catch (err) {
      return err;
    }
  })();
  t.ok(e instanceof GenseeError && e.exitCode === 2, 'a usage-class error (exit 2)');

  const enumTool = defineTool(base({ schema: { type: 'object', properties: { mode: { enum: ['a', 'b'] } } }, effect: { kind: 'unsafe' } }));
  t.throws(() => validateArgs(enumTool, { mode: 'c' }), { message: /\/mode: must be one of "a"\|"b"/ }, 'enum lists its values');

  // the validator is compiled at registration: a tool whose schema object is
  // later replaced is validated against the new one, not a stale copy
  const mutable = defineTool(base({ schema: { type: 'object', properties: { n: { type: 'number' } } }, effect: { kind: 'unsafe' } }));
  t.ok(validateArgs(mutable, { n: 1 }));
  mutable.schema = { type: 'object', properties: { n: { type: 'string' } } };
  t.throws(() => validateArgs(mutable, { n: 1 }), { message: /\/n: must be string/ });
});

t.test('the schema is compiled once per tool, at registration', async (t) => {
  const compile = Ajv.prototype.compile;
  const compiledSchemas: unknown[] = [];
  Ajv.prototype.compile = function (this: Ajv, ...a: Parameters<Ajv['compile']>) {
    compiledSchemas.push(a[0]);
    return compile.apply(this, a);
  } as Ajv['compile'];
  t.teardown(() => {
    Ajv.prototype.compile = compile;
  });
  const schema = { type: 'object', properties: { n: { type: 'number' } } };
  const tool = defineTool(base({ schema, effect: { kind: 'unsafe' } }));
  const once = compiledSchemas.filter((s) => s === schema).length;
  t.equal(once, 1, 'compiled by defineTool');
  for (let i = 0; i < 20; i++) validateArgs(tool, { n: i });
  t.throws(() => validateArgs(tool, { n: 'x' }));
  t.equal(compiledSchemas.filter((s) => s === schema).length, 1, 'not again by validateArgs');
});

t.test('two tools with the same $id in their schemas do not collide', async (t) => {
  const s = { $id: 'https://example.test/args.json', type: 'object', properties: { n: { type: 'number' } } };
  const a = defineTool(base({ id: 'a', schema: s, effect: { kind: 'unsafe' } }));
  const b = defineTool(base({ id: 'b', schema: { ...s, properties: { n: { type: 'string' } } }, effect: { kind: 'unsafe' } }));
  t.ok(validateArgs(a, { n: 1 }));
  t.ok(validateArgs(b, { n: 'x' }));
  t.throws(() => validateArgs(b, { n: 1 }), { message: /\/n: must be string/ });
});

t.test('keyFor: the key of an idempotent call, none for the other classes', async (t) => {
  t.match(keyFor(defineTool(base()), { to: 'a', amount: 1 }), /^[0-9a-f]{64}$/);
  t.equal(keyFor(defineTool(base({ effect: { kind: 'unsafe' } })), { to: 'a', amount: 1 }), null);
});

t.test('loadTools: a module exporting `tools`', async (t) => {
  const tools = loadTools(fixture('good'));
  t.same([...tools.keys()], ['charge', 'ship.order', 'notify', 'plain_1'], 'every tool, by id, in order');
  const charge = tools.get('charge');
  t.ok(charge);
  if (!charge) return;
  t.equal(charge.effect.kind, 'idempotent');
  t.ok(validateArgs(charge, { to: 'a', amount: 2 }));
  t.throws(() => validateArgs(charge, { to: 'a', amount: 0 }), { code: 'E_SCHEMA', message: /tool "charge": invalid arguments: \/amount: must be >= 1/ });
  const ship = tools.get('ship.order');
  t.equal(ship?.effect.kind === 'queryable' && ship.effect.lookup.requestId({ order: 'o-9' }), 'ship-o-9', 'the lookup is the module\'s own');
  // a relative path is resolved against the working directory
  const rel = path.relative(process.cwd(), fixture('good'));
  t.same([...loadTools(rel).keys()], [...tools.keys()], 'relative path');
});

t.test('loadTools refusals', async (t) => {
  t.throws(() => loadTools(fixture('duplicate')), { code: 'E_SCHEMA', message: /tools\[2\]: duplicate tool id "notify"/ }, 'a duplicate id');
  t.throws(() => loadTools(fixture('non-tool')), { code: 'E_SCHEMA', message: /non-tool\.js: tools\[1\] \("helper"\): tool "helper": "schema" must be a JSON Schema object/ }, 'an export that is not a tool');
  t.throws(
    () => loadTools(fixture('bad-key')),
    { code: 'E_SCHEMA', message: /tools\[0\] \("charge"\): tool "charge": key field "at" is marked "x-gensee-nondeterministic": true .*changes on every retry/ },
    'checked again: a tool that skipped defineTool',
  );
  t.throws(() => loadTools(fixture('no-tools')), { code: 'E_SCHEMA', message: /it must export `tools`, an array of defineTool\(\) results/ }, 'no tools export');
  t.throws(() => loadTools(fixture('absent')), { code: 'E_USAGE', message: /absent\.js: cannot load it/ }, 'no such module');
});

t.test('registrationOf: a module\'s tools as data, which checkRegistration accepts as they are', async (t) => {
  const tools = [...loadTools(fixture('good')).values()];
  const regs = tools.map(registrationOf);
  const text = JSON.stringify({ tools: regs });
  t.notOk(/function|=>/.test(text), 'no code in the registration');
  t.same(regs[0], { id: 'charge', schema: tools[0].schema, effect: { kind: 'idempotent', key: { fields: ['to', 'amount'] } } }, 'idempotent: its key fields');
  t.same(regs[1].effect, { kind: 'queryable' }, 'queryable: no lookup (it runs in the module)');
  const back = checkRegistration(JSON.parse(text), 'test');
  t.same([...back.tools.keys()], ['charge', 'ship.order', 'notify', 'plain_1']);
  const charge = back.tools.get('charge')!;
  t.equal(keyFor(charge, { to: 'a', amount: 2 }), keyFor(tools[0], { to: 'a', amount: 2 }), 'the same key from the data as from the definition');
  t.throws(() => validateArgs(charge, { to: 'a', amount: 0 }), { message: /\/amount: must be >= 1/ }, 'arguments checked against the reported schema');
  t.equal(checkRegistration({ tools: regs, request_id: 'r-1' }, 'test').requestId, 'r-1');
});

t.test('checkRegistration: what a tool process reports is checked, never trusted', async (t) => {
  const good = { id: 'charge', schema: SCHEMA, effect: { kind: 'idempotent', key: { fields: ['to', 'amount'] } } };
  const bad = (report: unknown, re: RegExp, what: string) => t.throws(() => checkRegistration(report, 'tools module m.js'), { code: 'E_SCHEMA', message: re }, what);
  bad(null, /tools module m\.js: the tool process sent a registration that is not one: \/: must be object/, 'not an object');
  bad({}, /\/tools: required field missing/, 'no tools');
  bad({ tools: [good], extra: 1 }, /\/extra: unknown field/, 'an unknown field');
  bad({ tools: [{ ...good, run: 'async () => 1' }] }, /\/tools\/0\/run: unknown field/, 'a tool carrying more than data');
  bad({ tools: [{ ...good, effect: { kind: 'queryable', lookup: {} } }] }, /\/tools\/0\/effect\/lookup: unknown field/, 'a queryable tool carrying a lookup');
  bad({ tools: [{ ...good, effect: { kind: 'unsafe', key: { fields: ['to'] } } }] }, /tool "charge": only an idempotent tool has a key \(this one is unsafe\)/, 'a key on an unsafe tool');
  bad({ tools: [{ ...good, effect: { kind: 'maybe' } }] }, /\/tools\/0\/effect\/kind: must be one of "idempotent"\|"queryable"\|"unsafe"/, 'an unknown class');
  bad({ tools: [{ ...good, effect: { kind: 'idempotent' } }] }, /an idempotent tool must declare "key"/, 'idempotent without a key');
  bad({ tools: [{ ...good, effect: { kind: 'idempotent', key: { fields: ['to', 'requested_at'] } } }] }, /key field "requested_at" is marked "x-gensee-nondeterministic": true/, 'a key over a timestamp');
  bad({ tools: [{ ...good, effect: { kind: 'idempotent', key: { fields: ['payee'] } } }] }, /key field "payee" is not a property of the argument schema/, 'a key field the schema lacks');
  bad({ tools: [{ ...good, id: 'Charge' }] }, /is not a tool id/, 'a bad id');
  bad({ tools: [good, good] }, /tools\[1\]: duplicate tool id "charge"/, 'a duplicate id');
  bad({ tools: [{ ...good, schema: { type: 'object', properties: { to: { type: 'text' } } }, effect: { kind: 'unsafe' } }] }, /its argument schema does not compile/, 'a schema that does not compile');
  bad({ tools: Array.from({ length: MAX_TOOLS + 1 }, (_, i) => ({ ...good, id: `t${i}` })) }, new RegExp(`/tools: must NOT have more than ${MAX_TOOLS} items`), 'too many tools');
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < MAX_SCHEMA_DEPTH; i++) deep = { type: 'object', properties: { x: deep } };
  bad({ tools: [{ ...good, schema: deep, effect: { kind: 'unsafe' } }] }, new RegExp(`its argument schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`), 'a schema nested too deep');
  const wide = { type: 'object', properties: { to: { type: 'string', description: 'x'.repeat(MAX_SCHEMA_BYTES) } } };
  bad({ tools: [{ ...good, schema: wide, effect: { kind: 'unsafe' } }] }, new RegExp(`its argument schema is over ${MAX_SCHEMA_BYTES} bytes`), 'a schema too long');
  t.ok(checkRegistration({ tools: [{ ...good, schema: { type: 'object', properties: { x: { type: 'object', properties: { y: { type: 'string' } } } } }, effect: { kind: 'unsafe' } }] }, 'm').tools.size, 'a nested schema within bounds');
  bad({ tools: [good], request_id: 7 }, /\/request_id: must be string/, 'a request id that is not a string');
});
