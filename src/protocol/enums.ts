// Proto enum numbers <-> JSON names, derived from the generated field table so
// they cannot drift from fault.proto: FAMILY_IPV4 <-> "ipv4",
// ACTION_RETRY_AFTER_LEASE <-> "retry_after_lease". Value 0 (*_UNSPECIFIED)
// has no name: it is invalid wherever it appears.
import { ENUMS } from '../gen/fault-fields';
import type { Action, Family, FileAccess, Protocol, Source, StatementClass } from './types';

export interface EnumMap<N extends string> {
  /** proto enum name, e.g. "gensee.v2.Family" */
  readonly proto: string;
  readonly byName: ReadonlyMap<N, number>;
  readonly byNumber: ReadonlyMap<number, N>;
}

function enumMap<N extends string>(proto: string, prefix: string): EnumMap<N> {
  const values = ENUMS[proto];
  if (!values) throw new Error(`enum ${proto} missing from src/gen/fault-fields.js (run make gen)`);
  const byName = new Map<N, number>();
  const byNumber = new Map<number, N>();
  for (const [key, num] of Object.entries(values)) {
    if (num === 0) continue;
    const name = key.slice(prefix.length).toLowerCase() as N;
    byName.set(name, num);
    byNumber.set(num, name);
  }
  return { proto, byName, byNumber };
}

export const SOURCE = enumMap<Source>('gensee.v2.Source', 'SOURCE_');
export const FAMILY = enumMap<Family>('gensee.v2.Family', 'FAMILY_');
export const PROTOCOL = enumMap<Protocol>('gensee.v2.Protocol', 'PROTOCOL_');
export const FILE_ACCESS = enumMap<FileAccess>('gensee.v2.FileAccess', 'FILE_ACCESS_');
export const STATEMENT_CLASS = enumMap<StatementClass>('gensee.v2.StatementClass', 'STATEMENT_CLASS_');
export const ACTION = enumMap<Action>('gensee.v2.Action', 'ACTION_');

/** The proto number for a name; throws on a name the proto does not define. */
export function toNumber<N extends string>(m: EnumMap<N>, name: N): number {
  const n = m.byName.get(name);
  if (n === undefined) throw new TypeError(`${m.proto}: no value "${name}"`);
  return n;
}
