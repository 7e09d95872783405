// The idempotency key of a call to an Idempotent tool (DESIGN.md "Delegated
// executor and keyed capabilities"). THIS IS THE CONTRACT; the journal, the
// handle and recovery all depend on it, and a change to it changes every key:
//
//   key = lowercase hex of SHA-256( UTF-8( JCS( {
//           "tool_id": <tool id>,
//           "args":    { <each field the derivation names>: <its recorded value> }
//         } ) ) )
//
// - JCS is RFC 8785 (JSON Canonicalization Scheme): object members sorted by
//   their UTF-16 code units at every depth, no whitespace, ECMAScript number
//   and string serialization. It is computed by the maintained `canonicalize`
//   package, never by hand.
// - Only the named fields are in "args"; an unnamed field never influences the
//   key. A named field absent from the arguments is `null`.
// - The arguments are the RECORDED ones (what the journal holds), so recovery
//   re-derives the same key from the same journal entry. Their key order, at
//   any depth, does not matter.
// - A value that is not plain JSON (undefined, a function, a bigint, NaN, a
//   Date or other class instance) is refused (GenseeError E_SCHEMA) rather than
//   silently dropped or coerced: it could not have been recorded.
// - Which fields may be named is checked at registration (src/executor/tool.ts):
//   never one the schema marks `x-gensee-nondeterministic`.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { GenseeError } from '../errors';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Refuses anything JSON.parse could not have produced; `at` is a JSON pointer. */
function assertJson(v: unknown, at: string): void {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new GenseeError('E_SCHEMA', `${at}: ${v} is not a JSON number; it cannot be in a key`);
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => assertJson(x, `${at}/${i}`));
    return;
  }
  if (isPlainObject(v)) {
    for (const k of Object.keys(v)) assertJson(v[k], `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    return;
  }
  const what = v === undefined ? 'undefined' : typeof v === 'object' ? `a ${(v as object).constructor?.name ?? 'non-plain'} object` : `a ${typeof v}`;
  throw new GenseeError('E_SCHEMA', `${at}: ${what} is not a JSON value; it cannot be in a key`);
}

/** The canonical JSON the key is the hash of (exported for the tests and for inspection). */
export function keyMaterial(toolId: string, fields: readonly string[], args: Record<string, unknown>): string {
  if (typeof toolId !== 'string' || toolId === '') throw new GenseeError('E_SCHEMA', 'key: the tool id must be a non-empty string');
  if (!isPlainObject(args)) throw new GenseeError('E_SCHEMA', `key: the arguments of tool "${toolId}" must be a JSON object`);
  // Object.fromEntries defines own properties, so a field named "__proto__"
  // is a field like any other; a field is read only if it is the args' own
  const named = Object.fromEntries(
    fields.map((f) => {
      if (typeof f !== 'string') throw new GenseeError('E_SCHEMA', `key: a field name of tool "${toolId}" is not a string`);
      return [f, Object.prototype.hasOwnProperty.call(args, f) ? args[f] : null];
    }),
  );
  assertJson(named, '/args');
  const text = canonicalize({ tool_id: toolId, args: named });
  if (text === undefined) throw new GenseeError('E_SCHEMA', `key: the arguments of tool "${toolId}" have no canonical JSON`);
  return text;
}

/** The idempotency key: hex SHA-256 of keyMaterial() (see the contract above). */
export function deriveKey(toolId: string, fields: readonly string[], args: Record<string, unknown>): string {
  return createHash('sha256').update(keyMaterial(toolId, fields, args), 'utf8').digest('hex');
}
