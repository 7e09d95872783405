// The tool registration API of the executor (DESIGN.md "Delegated executor and
// keyed capabilities"). A tool declares its effect class; the type makes a key
// derivation REQUIRED on `idempotent`, so a registration without one fails
// `tsc`, and defineTool() checks at runtime what the types cannot: the id, the
// argument schema, and that no key field is one the schema marks
// non-deterministic (`"x-gensee-nondeterministic": true`: a timestamp, counter
// or random id). The key itself is src/executor/key.ts.
//
// A tool module is code: only a process inside the operation's boundary
// evaluates it (src/executor/tool-main.ts, started by the executor through
// gensee-exec). What the executor learns of it is its registration as DATA
// (ToolRegistration: ids, effect classes, key fields, argument schemas),
// checked again here by checkRegistration() before anything uses it; the
// executor derives keys and checks arguments from that data alone.
import * as path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { GenseeError } from '../errors';
import { deriveKey } from './key';

/** The argument fields an Idempotent tool's key is derived from (key.ts). */
export interface KeyDerivation<A> {
  readonly fields: readonly (keyof A & string)[];
}

/** The read path a Queryable tool's lookup may use (the executor performs the GET; the lookup runs inside the boundary). */
export interface LookupIO {
  get(url: string, headers?: Record<string, string>): Promise<{ status: number; body: string }>;
}

export interface RequestIdLookup<A> {
  /** the request id this call's write carries (derived from the recorded arguments) */
  requestId(args: A): string;
  /** after a crash: did the write with this request id happen? (args: the call's recorded arguments) */
  lookup(requestId: string, io: LookupIO, args: A): Promise<'found' | 'not_found'>;
}

export type EffectClass<A> =
  | { kind: 'idempotent'; key: KeyDerivation<A> } // key REQUIRED: omitting it is a compile error
  | { kind: 'queryable'; lookup: RequestIdLookup<A> }
  | { kind: 'unsafe' };

export type EffectKind = EffectClass<unknown>['kind'];
export const EFFECT_KINDS: readonly EffectKind[] = ['idempotent', 'queryable', 'unsafe'];

export interface WriteRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface WriteResult {
  status: number;
  body: string;
}

export interface WriteHandle {
  write(req: WriteRequest): Promise<WriteResult>;
}

export interface ToolDef<A> {
  /** [a-z0-9][a-z0-9_.-]{0,63} */
  id: string;
  /** JSON Schema (draft-07) of A; a property with "x-gensee-nondeterministic": true is a timestamp, counter or random id */
  schema: Record<string, unknown>;
  effect: EffectClass<A>;
  /** runs inside the operation's boundary; its only write path is the handle */
  run(args: A, handle: WriteHandle): Promise<unknown>;
}

export const TOOL_ID_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** The schema keyword marking a property as a timestamp, counter or random id. */
export const NONDETERMINISTIC = 'x-gensee-nondeterministic';

const WHY_NOT_IN_KEY = 'a key over a timestamp/counter/random id changes on every retry';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function own(o: Record<string, unknown>, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function refuse(what: string, message: string): never {
  throw new GenseeError('E_SCHEMA', `${what}: ${message}`);
}

function pointerToken(k: string): string {
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

function resolveLocalRef(root: Record<string, unknown>, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const k = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(cur) || !own(cur, k)) return undefined;
    cur = cur[k];
  }
  return cur;
}

// keywords whose values are data, not subschemas: a marker in them marks nothing
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/**
 * Schema pointers (within `root`) of every subschema of `schema` marked
 * non-deterministic, following local $refs: a key field whose value contains
 * a timestamp changes on every retry as surely as a timestamp field does.
 */
function nondeterministicIn(root: Record<string, unknown>, schema: unknown, at: string, seen: Set<unknown>): string[] {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  const found: string[] = [];
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => found.push(...nondeterministicIn(root, s, `${at}/${i}`, seen)));
    return found;
  }
  const o = schema as Record<string, unknown>;
  if (o[NONDETERMINISTIC] === true) found.push(at === '' ? '/' : at);
  if (typeof o.$ref === 'string') found.push(...nondeterministicIn(root, resolveLocalRef(root, o.$ref), o.$ref.replace(/^#/, ''), seen));
  for (const [k, v] of Object.entries(o)) {
    if (DATA_KEYWORDS.has(k) || k === '$ref') continue;
    found.push(...nondeterministicIn(root, v, `${at}/${pointerToken(k)}`, seen));
  }
  return found;
}

function newAjv(): Ajv {
  // draft-07 (ajv's default); strict off so a tool's schema may carry
  // annotations ajv does not know, but our own keyword is declared, so a
  // marker that is not a boolean is refused when the schema compiles
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addKeyword({ keyword: NONDETERMINISTIC, metaSchema: { type: 'boolean' } });
  return ajv;
}

// one compiled validator per tool definition (per schema object it holds)
const compiled = new WeakMap<object, { schema: Record<string, unknown>; validate: ValidateFunction }>();

function validatorFor(def: { id: string; schema: Record<string, unknown> }, name = `tool "${def.id}"`): ValidateFunction {
  const hit = compiled.get(def);
  if (hit && hit.schema === def.schema) return hit.validate;
  let validate: ValidateFunction;
  try {
    validate = newAjv().compile(def.schema);
  } catch (e) {
    refuse(name, `its argument schema does not compile: ${(e as Error).message}`);
  }
  compiled.set(def, { schema: def.schema, validate });
  return validate;
}

/**
 * Every registration check; `where` (e.g. the module and index) prefixes the
 * messages. `data`: a ToolRegistration (no functions: a queryable tool's
 * lookup and every tool's run stay in the module, inside the boundary).
 */
function checkDef(def: unknown, where = '', data = false): asserts def is ToolDef<Record<string, unknown>> {
  const what = `${where}tool definition`;
  if (!isObject(def)) refuse(what, 'a tool definition must be an object ({ id, schema, effect, run })');
  const id = def.id;
  if (typeof id !== 'string') refuse(what, '"id" must be a string');
  if (!TOOL_ID_RE.test(id)) refuse(what, `id ${JSON.stringify(id)} is not a tool id (1-64 of a-z 0-9 _ . -, starting with a letter or digit)`);
  const name = `${where}tool "${id}"`;

  const schema = def.schema;
  if (!isObject(schema)) refuse(name, '"schema" must be a JSON Schema object');
  if (schema.type !== 'object') refuse(name, `its schema must be an object schema ("type": "object"), not ${JSON.stringify(schema.type)}`);
  const props = schema.properties;
  if (!isObject(props)) refuse(name, 'its schema must list the arguments in "properties"');
  for (const [p, s] of Object.entries(props)) {
    if (!isObject(s) && typeof s !== 'boolean') refuse(name, `schema /properties/${pointerToken(p)} must be a schema (an object)`);
  }

  const effect = def.effect;
  if (!isObject(effect)) refuse(name, `"effect" must be an object with "kind" (${EFFECT_KINDS.join('|')})`);
  switch (effect.kind) {
    case 'idempotent': {
      const key = effect.key;
      if (!isObject(key)) refuse(name, 'an idempotent tool must declare "key": { fields: [...] }, the argument fields its idempotency key is derived from');
      const fields = key.fields;
      if (!Array.isArray(fields) || fields.length === 0) refuse(name, 'key.fields must name at least one argument field (a key over no field is the same for every call)');
      const seen = new Set<string>();
      for (const f of fields as unknown[]) {
        if (typeof f !== 'string') refuse(name, `key.fields holds ${JSON.stringify(f)}, not a field name`);
        if (seen.has(f)) refuse(name, `key field "${f}" is named twice`);
        seen.add(f);
        if (!own(props, f)) refuse(name, `key field "${f}" is not a property of the argument schema (properties: ${Object.keys(props).join(', ') || 'none'})`);
        const marked = nondeterministicIn(schema, props[f], `/properties/${pointerToken(f)}`, new Set());
        if (marked.length > 0) {
          const where = marked[0] === `/properties/${pointerToken(f)}` ? 'is marked' : `contains a field marked at ${marked[0]}`;
          refuse(name, `key field "${f}" ${where} "${NONDETERMINISTIC}": true in the schema (a timestamp, counter or random id): ${WHY_NOT_IN_KEY}`);
        }
      }
      break;
    }
    case 'queryable': {
      if (data) break;
      const lookup = effect.lookup;
      if (!isObject(lookup)) refuse(name, 'a queryable tool must declare "lookup": { requestId(args), lookup(requestId, io) }');
      for (const fn of ['requestId', 'lookup']) {
        if (typeof lookup[fn] !== 'function') refuse(name, `lookup.${fn} must be a function`);
      }
      break;
    }
    case 'unsafe':
      break;
    default:
      refuse(name, `effect.kind ${JSON.stringify(effect.kind)} is not one of ${EFFECT_KINDS.join('|')}`);
  }

  if (!data && typeof def.run !== 'function') refuse(name, '"run" must be a function (args, handle) => Promise');
  // compiled now, so a schema that does not compile is refused at registration
  validatorFor(def as { id: string; schema: Record<string, unknown> }, name);
}

/** Registers a tool: every check above, at registration; throws GenseeError E_SCHEMA. */
export function defineTool<A>(def: ToolDef<A>): ToolDef<A> {
  checkDef(def);
  return def;
}

/**
 * Loads a tool module: require()s it; it exports `tools`, an array of
 * defineTool() results. Each is checked again (a module need not have used
 * defineTool); a duplicate id or anything that is not a tool is refused.
 */
export function loadTools(modulePath: string): Map<string, ToolDef<Record<string, unknown>>> {
  const abs = path.resolve(modulePath);
  let mod: unknown;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module path is only known at run time
    mod = require(abs);
  } catch (e) {
    throw new GenseeError('E_USAGE', `tools module ${abs}: cannot load it: ${(e as Error).message}`);
  }
  const tools = isObject(mod) ? mod.tools : undefined;
  if (!Array.isArray(tools)) refuse(`tools module ${abs}`, 'it must export `tools`, an array of defineTool() results');
  const out = new Map<string, ToolDef<Record<string, unknown>>>();
  tools.forEach((def: unknown, i: number) => {
    const id = isObject(def) && typeof def.id === 'string' ? ` ("${def.id}")` : '';
    checkDef(def, `tools module ${abs}: tools[${i}]${id}: `);
    if (out.has(def.id)) refuse(`tools module ${abs}: tools[${i}]`, `duplicate tool id "${def.id}"`);
    out.set(def.id, def);
  });
  return out;
}

/** An effect class as data: the key derivation is the list of named fields, nothing to call. */
export type RegisteredEffect = { kind: 'idempotent'; key: { fields: string[] } } | { kind: 'queryable' } | { kind: 'unsafe' };

/** A tool as the executor knows it: data reported by the module's process inside the boundary. */
export interface ToolRegistration {
  id: string;
  schema: Record<string, unknown>;
  effect: RegisteredEffect;
}

/** A checked definition's registration (in the tool process): plain JSON, no function. */
export function registrationOf(def: ToolDef<Record<string, unknown>>): ToolRegistration {
  const e = def.effect;
  const effect: RegisteredEffect = e.kind === 'idempotent' ? { kind: 'idempotent', key: { fields: [...e.key.fields] } } : { kind: e.kind };
  // a JSON round trip: what the executor gets is what JSON can carry
  return JSON.parse(JSON.stringify({ id: def.id, schema: def.schema, effect })) as ToolRegistration;
}

/** at most this many tools in one module */
export const MAX_TOOLS = 256;
/**
 * A reported argument schema is at most this long (JSON) and this deep: the
 * executor compiles it, and ajv asks that a schema it did not write be
 * bounded (a deep one overflows the stack of the compiler).
 */
export const MAX_SCHEMA_BYTES = 64 << 10;
export const MAX_SCHEMA_DEPTH = 32;

function depthOf(v: unknown, limit: number): number {
  if (v === null || typeof v !== 'object') return 0;
  if (limit <= 0) return 1;
  let d = 0;
  for (const x of Object.values(v as Record<string, unknown>)) d = Math.max(d, depthOf(x, limit - 1));
  return d + 1;
}

// The shape of a registration report (the executor's first check of what a
// tool process sent; checkDef's own checks follow, with their messages).
const REPORT_SCHEMA = {
  type: 'object',
  required: ['tools'],
  additionalProperties: false,
  properties: {
    tools: {
      type: 'array',
      maxItems: MAX_TOOLS,
      items: {
        type: 'object',
        required: ['id', 'schema', 'effect'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', maxLength: 64 },
          schema: { type: 'object' },
          effect: {
            type: 'object',
            required: ['kind'],
            additionalProperties: false,
            properties: {
              kind: { enum: EFFECT_KINDS },
              key: {
                type: 'object',
                required: ['fields'],
                additionalProperties: false,
                properties: { fields: { type: 'array', maxItems: 64, items: { type: 'string', maxLength: 256 } } },
              },
            },
          },
        },
      },
    },
    request_id: { type: 'string' },
  },
};
let reportValidator: ValidateFunction | null = null;

/**
 * The executor's check of a registration report ({"tools": [ToolRegistration…],
 * "request_id"?}) a tool process sent: its shape (ajv), then every check
 * defineTool makes on a definition, the key fields included; a duplicate id
 * is refused. Throws GenseeError E_SCHEMA naming what is wrong.
 */
export function checkRegistration(report: unknown, where: string): { tools: Map<string, ToolRegistration>; requestId?: string } {
  reportValidator ??= new Ajv({ strict: true, allErrors: true }).compile(REPORT_SCHEMA);
  if (!reportValidator(report)) {
    const errors = (reportValidator.errors ?? []).map(formatError);
    refuse(where, `the tool process sent a registration that is not one: ${[...new Set(errors)].slice(0, 5).join('; ')}`);
  }
  const r = report as { tools: ToolRegistration[]; request_id?: string };
  const out = new Map<string, ToolRegistration>();
  r.tools.forEach((reg, i) => {
    const effect = reg.effect as { kind: string; key?: unknown };
    const at = `${where}: tools[${i}] ("${reg.id}"): `;
    if (Buffer.byteLength(JSON.stringify(reg.schema)) > MAX_SCHEMA_BYTES) refuse(`${at}tool "${reg.id}"`, `its argument schema is over ${MAX_SCHEMA_BYTES} bytes of JSON`);
    if (depthOf(reg.schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH) refuse(`${at}tool "${reg.id}"`, `its argument schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    if (effect.kind !== 'idempotent' && effect.key !== undefined) refuse(`${at}tool "${reg.id}"`, `only an idempotent tool has a key (this one is ${effect.kind})`);
    checkDef(reg, at, true);
    if (out.has(reg.id)) refuse(`${where}: tools[${i}]`, `duplicate tool id "${reg.id}"`);
    out.set(reg.id, reg);
  });
  return { tools: out, requestId: r.request_id };
}

function formatError(e: ErrorObject): string {
  const at = e.instancePath;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${at}/${pointerToken(String(p.missingProperty))}: required field missing`;
    case 'additionalProperties':
      return `${at}/${pointerToken(String(p.additionalProperty))}: unknown field`;
    case 'enum':
      return `${at || '/'}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join('|')}`;
    default:
      return `${at || '/'}: ${e.message ?? e.keyword}`;
  }
}

/**
 * The arguments of a call checked against the tool's schema (ajv, compiled
 * once per tool). Refusals name each offending field as a JSON pointer:
 * `tool "charge": invalid arguments: /amount: must be >= 1`.
 */
export function validateArgs<A = Record<string, unknown>>(tool: { id: string; schema: Record<string, unknown> }, args: unknown): A {
  const validate = validatorFor(tool);
  if (validate(args)) return args as A;
  const errors = (validate.errors ?? []).map(formatError);
  refuse(`tool "${tool.id}"`, `invalid arguments: ${errors.length > 0 ? [...new Set(errors)].join('; ') : '/: invalid'}`);
}

/** The idempotency key of a call to an Idempotent tool (key.ts); null for the other classes. */
export function keyFor<A>(tool: ToolDef<A> | ToolRegistration, args: Record<string, unknown>): string | null {
  return tool.effect.kind === 'idempotent' ? deriveKey(tool.id, tool.effect.key.fields as readonly string[], args) : null;
}
