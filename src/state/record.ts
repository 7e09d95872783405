// Shape checks shared by the operation and network records. Records are
// written only by gensee, so anything unexpected on read (unknown key, wrong
// type) means damage or tampering: refuse with E_STATE naming the field.
import { GenseeError, isErrno } from '../errors';
import { assertNoSymlinks, assertPrivate, readFileNoFollowStat } from './fsutil';

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function bad(where: string, msg: string): GenseeError {
  return new GenseeError('E_STATE', `${where}: ${msg}`);
}

export function obj(v: unknown, where: string, keys: readonly string[], optional: readonly string[] = []): Json {
  if (!isObject(v)) throw bad(where, 'expected an object');
  for (const k of Object.keys(v)) {
    if (!keys.includes(k) && !optional.includes(k)) throw bad(where, `unknown field "${k}"`);
  }
  for (const k of keys) if (!(k in v)) throw bad(where, `missing field "${k}"`);
  return v;
}

export function uint(v: unknown, where: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > max) {
    throw bad(where, `expected an integer in 0..${max}, got ${JSON.stringify(v)}`);
  }
  return v;
}

export function str(v: unknown, where: string, maxLen = 4096): string {
  if (typeof v !== 'string' || v === '' || v.length > maxLen || v.includes('\0')) {
    throw bad(where, `expected a non-empty string (≤ ${maxLen} chars)`);
  }
  return v;
}

export function isoTime(v: unknown, where: string): string {
  const s = str(v, where, 64);
  if (Number.isNaN(Date.parse(s))) throw bad(where, `not an ISO time: ${s}`);
  return s;
}

export function oneOf<T extends string>(v: unknown, where: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw bad(where, `expected one of ${values.join(', ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

export function arr(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) throw bad(where, 'expected an array');
  return v;
}

/** Counter totals, shared by operation.json and network.json. */
export interface CounterTotals {
  allow: number;
  /** deny reason (snake_case) → count */
  deny: Record<string, number>;
  /** ring-buffer events the kernel could not deliver */
  lost_events: number;
}

export function zeroTotals(): CounterTotals {
  return { allow: 0, deny: {}, lost_events: 0 };
}

export function parseTotals(v: unknown, where: string): CounterTotals {
  const o = obj(v, where, ['allow', 'deny', 'lost_events']);
  if (!isObject(o.deny)) throw bad(`${where}.deny`, 'expected an object');
  const deny: Record<string, number> = {};
  for (const [k, n] of Object.entries(o.deny)) {
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(k)) throw bad(`${where}.deny`, `bad reason "${k}"`);
    deny[k] = uint(n, `${where}.deny.${k}`);
  }
  return { allow: uint(o.allow, `${where}.allow`), deny, lost_events: uint(o.lost_events, `${where}.lost_events`) };
}

/** serialize a record: fixed key order comes from the caller's normalized object */
export function recordText(rec: object): string {
  return JSON.stringify(rec, null, 2) + '\n';
}

export function parseRecordJson(data: Buffer, where: string): unknown {
  try {
    return JSON.parse(data.toString('utf8'));
  } catch (e) {
    throw new GenseeError('E_BAD_JSON', `${where}: ${(e as Error).message}`);
  }
}

/**
 * A record file's JSON, read the way every record is: no symlinks on its
 * path, at most maxBytes, private to a trusted owner (assertPrivate).
 * undefined when the file does not exist.
 */
export async function readRecordJson(file: string, maxBytes: number): Promise<{ json: unknown } | undefined> {
  assertNoSymlinks(file);
  let got;
  try {
    got = await readFileNoFollowStat(file, maxBytes);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') return undefined;
    throw e;
  }
  assertPrivate(got.stat, file);
  return { json: parseRecordJson(got.data, file) };
}
