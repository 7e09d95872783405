// The network record, <state>/network-operations/<OP>/network.json (0600,
// replaced atomically): policy generations, installed leases, counter totals.
// On resolver restart this is the list kernel leases are reconciled against
// (anything in the kernel that is not here, or expired, is removed), so a
// missing file reads as the empty record: fail closed.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Family, Protocol } from '../addr';
import type { Lease } from '../dataplane';
import { GenseeError } from '../errors';
import { assertNoSymlinks, withFileLock, writeFileAtomic } from './fsutil';
import { checkOpDir } from './operation';
import { CounterTotals, arr, bad, isoTime, obj, oneOf, parseTotals, readRecordJson, recordText, str, uint, zeroTotals } from './record';

export const NETWORK_FILE = 'network.json';
/** network.json holds one entry per live lease: allow for tens of thousands */
export const NETWORK_MAX_BYTES = 64 << 20;

export interface GenerationRecord {
  generation: number;
  created_at: string;
  /** why this generation was installed (e.g. "start", "policy_reload") */
  reason: string;
  /** set once its leases were harvested and removed */
  revoked_at?: string;
}

/** one exact allowance, mirrored from the kernel lease map */
export interface LeaseRecord {
  generation: number;
  family: Family;
  protocol: Protocol;
  address: string;
  port: number;
  /** CLOCK_BOOTTIME nanoseconds, decimal string (u64 does not fit a JSON number) */
  expires_at_boot_ns: string;
  /** 0 = unlimited */
  max_uses: number;
  installed_at: string;
}

/**
 * The record of a kernel lease, installed now: the one mapping from a lease
 * map entry to network.json's form, for the resolver's installs and the
 * envelope's alike. maxUses 0 = unlimited.
 */
export function leaseRecordOf(l: Lease, maxUses = 0): LeaseRecord {
  return {
    generation: Number(l.generation),
    family: l.tuple.family,
    protocol: l.tuple.protocol,
    address: l.tuple.address,
    port: l.tuple.port,
    expires_at_boot_ns: String(l.expiresBootNs),
    max_uses: maxUses,
    installed_at: new Date().toISOString(),
  };
}

/** network.json, schema 1. Keys are written in this order. */
export interface NetworkRecord {
  schema: 1;
  /**
   * /proc/sys/kernel/random/boot_id of the boot the leases were granted in.
   * Their expiries are CLOCK_BOOTTIME, which starts again at 0 on every
   * boot: a lease read back after a reboot would live far past its TTL, so
   * readNetwork drops the leases of another boot (absent: unknown, same
   * rule), and every write stamps the record with this boot.
   */
  boot_id?: string;
  /** current generation; 0 before the first one is installed */
  generation: number;
  generations: GenerationRecord[];
  leases: LeaseRecord[];
  totals: CounterTotals;
}

export interface LeaseTuple {
  family: Family;
  protocol: Protocol;
  address: string;
  port: number;
}

export function emptyNetworkRecord(): NetworkRecord {
  return { schema: 1, generation: 0, generations: [], leases: [], totals: zeroTotals() };
}

function parseGeneration(v: unknown, where: string): GenerationRecord {
  const o = obj(v, where, ['generation', 'created_at', 'reason'], ['revoked_at']);
  const g: GenerationRecord = {
    generation: uint(o.generation, `${where}.generation`),
    created_at: isoTime(o.created_at, `${where}.created_at`),
    reason: str(o.reason, `${where}.reason`, 256),
  };
  if (g.generation < 1) throw bad(`${where}.generation`, 'generations start at 1');
  if (o.revoked_at !== undefined) g.revoked_at = isoTime(o.revoked_at, `${where}.revoked_at`);
  return g;
}

function parseLease(v: unknown, where: string): LeaseRecord {
  const o = obj(v, where, ['generation', 'family', 'protocol', 'address', 'port', 'expires_at_boot_ns', 'max_uses', 'installed_at']);
  const family = oneOf(o.family, `${where}.family`, ['ipv4', 'ipv6'] as const);
  const address = str(o.address, `${where}.address`, 64);
  if (net.isIP(address) !== (family === 'ipv4' ? 4 : 6)) throw bad(`${where}.address`, `not an ${family} address: ${address}`);
  const expires = o.expires_at_boot_ns;
  if (typeof expires !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(expires) || BigInt(expires) > 0xffffffffffffffffn) {
    throw bad(`${where}.expires_at_boot_ns`, `expected a u64 decimal string, got ${JSON.stringify(expires)}`);
  }
  return {
    generation: uint(o.generation, `${where}.generation`),
    family,
    protocol: oneOf(o.protocol, `${where}.protocol`, ['tcp', 'udp'] as const),
    address,
    port: uint(o.port, `${where}.port`, 65535),
    expires_at_boot_ns: expires,
    max_uses: uint(o.max_uses, `${where}.max_uses`, 0xffffffff),
    installed_at: isoTime(o.installed_at, `${where}.installed_at`),
  };
}

/** Validate a parsed network.json and return it with keys in record order. */
export function parseNetworkRecord(v: unknown, where = NETWORK_FILE): NetworkRecord {
  const o = obj(v, where, ['schema', 'generation', 'generations', 'leases', 'totals'], ['boot_id']);
  if (o.schema !== 1) throw bad(`${where}.schema`, `unsupported schema ${JSON.stringify(o.schema)}`);
  const generation = uint(o.generation, `${where}.generation`);
  const generations = arr(o.generations, `${where}.generations`).map((g, i) => parseGeneration(g, `${where}.generations[${i}]`));
  let last = 0;
  for (const g of generations) {
    if (g.generation <= last) throw bad(`${where}.generations`, `generation ${g.generation} out of order`);
    last = g.generation;
  }
  if (generation !== last) throw bad(`${where}.generation`, `is ${generation} but the newest generation listed is ${last}`);
  const leases = arr(o.leases, `${where}.leases`).map((l, i) => parseLease(l, `${where}.leases[${i}]`));
  const seen = new Set<string>();
  const known = new Set(generations.map((g) => g.generation));
  leases.forEach((l, i) => {
    if (!known.has(l.generation)) {
      throw bad(`${where}.leases[${i}].generation`, `unknown generation ${l.generation}`);
    }
    const k = leaseKey(l);
    if (seen.has(k)) throw bad(`${where}.leases[${i}]`, `duplicate lease ${k}`);
    seen.add(k);
  });
  const bootIdField = o.boot_id === undefined ? {} : { boot_id: str(o.boot_id, `${where}.boot_id`, 64) };
  return { schema: 1, ...bootIdField, generation, generations, leases, totals: parseTotals(o.totals, `${where}.totals`) };
}

/** identity of a lease, as the kernel map keys it: family/protocol/address/port */
export function leaseKey(t: LeaseTuple): string {
  return `${t.family}/${t.protocol}/${t.address}/${t.port}`;
}

function networkFile(stateDir: string, id: string): string {
  return path.join(checkOpDir(stateDir, id), NETWORK_FILE);
}

/**
 * Read network.json (checked: no symlinks, 0600, schema). Missing → the
 * empty record. Leases of another boot are left out (leasesOfThisBoot);
 * opts.dropped, when given, receives them.
 */
export async function readNetwork(stateDir: string, id: string, opts: { dropped?: LeaseRecord[] } = {}): Promise<NetworkRecord> {
  const file = networkFile(stateDir, id);
  const got = await readRecordJson(file, NETWORK_MAX_BYTES);
  if (!got) return emptyNetworkRecord();
  const { rec, dropped } = leasesOfThisBoot(parseNetworkRecord(got.json, file));
  opts.dropped?.push(...dropped);
  return rec;
}

/**
 * The record as it may be trusted in this boot: leases granted in another
 * boot (or an unknown one) are dropped, since their CLOCK_BOOTTIME expiries
 * mean nothing now. Call before the record is written again (writing
 * stamps it with this boot).
 */
export function leasesOfThisBoot(rec: NetworkRecord): { rec: NetworkRecord; dropped: LeaseRecord[] } {
  if (rec.boot_id === currentBootId() || rec.leases.length === 0) return { rec, dropped: [] };
  return { rec: { ...rec, leases: [] }, dropped: rec.leases };
}

let bootId: string | null = null;

/** this boot's id (/proc/sys/kernel/random/boot_id), read once: it cannot change under a running process */
export function currentBootId(): string {
  bootId ??= fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return bootId;
}

/** the record as written now: stamped with this boot, keys in record order */
function stamped(rec: NetworkRecord): NetworkRecord {
  const out: Record<string, unknown> = { schema: rec.schema, boot_id: currentBootId() };
  // every other key as given, unknown ones too: validation still sees them
  for (const [k, v] of Object.entries(rec)) if (k !== 'schema' && k !== 'boot_id') out[k] = v;
  return out as unknown as NetworkRecord;
}

async function writeChecked(file: string, rec: NetworkRecord): Promise<NetworkRecord> {
  rec = stamped(rec);
  let norm: NetworkRecord;
  try {
    norm = parseNetworkRecord(rec, 'network record');
  } catch (e) {
    if (e instanceof GenseeError && e.code === 'E_STATE') throw new GenseeError('E_USAGE', e.message);
    throw e;
  }
  await writeFileAtomic(file, recordText(norm));
  return norm;
}

/** Replace network.json atomically (validated first). */
export async function writeNetwork(stateDir: string, id: string, rec: NetworkRecord): Promise<NetworkRecord> {
  const file = networkFile(stateDir, id);
  assertNoSymlinks(file);
  return withFileLock(file, () => writeChecked(file, rec));
}

/**
 * The network backend's periodic snapshot: a record this process built
 * from validated parts (policy, kernel read-backs), written without being
 * parsed back first — that re-check was O(leases) every second, on the
 * event loop that answers faults. Its bytes are recordText's, built by
 * networkRecordParts: each lease and generation is serialized once, and the
 * file is assembled in a buffer kept for the next snapshot, so a snapshot
 * leaves no multi-megabyte string behind for the garbage collector (one a
 * second of those grew the heap by tens of MB between collections).
 */
export async function writeNetworkSnapshot(stateDir: string, id: string, rec: NetworkRecord): Promise<void> {
  const file = networkFile(stateDir, id);
  assertNoSymlinks(file);
  await withFileLock(file, async () => {
    const out = new ByteSink(takeSpare());
    try {
      // a few thousand elements a turn: faults are answered between them.
      // The record as it is now: the backend appends generations in place
      // (addGeneration, O(1) on the fault path), so the arrays are copied
      // here, or a generation added between two parts would be listed past
      // the `generation` already written (a record that does not parse).
      const now = stamped(rec);
      const parts = networkRecordParts({ ...now, generations: rec.generations.slice(), leases: rec.leases.slice() }, out);
      while (!parts.next().done) await new Promise<void>((r) => setImmediate(r));
      await writeFileAtomic(file, out.bytes());
    } finally {
      keepSpare(out.buf);
    }
  });
}

/** the buffer of the last snapshot, for the next one (any record's: one is enough, most processes write one) */
let spareBuffer: Buffer | null = null;

function takeSpare(): Buffer {
  const b = spareBuffer ?? Buffer.allocUnsafeSlow(64 << 10);
  spareBuffer = null;
  return b;
}

function keepSpare(b: Buffer): void {
  if (!spareBuffer || spareBuffer.length < b.length) spareBuffer = b;
}

/** UTF-8 appended to a buffer that grows as needed */
class ByteSink {
  buf: Buffer;
  n = 0;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  put(text: string, bytes = Buffer.byteLength(text)): void {
    if (this.n + bytes > this.buf.length) {
      const b = Buffer.allocUnsafeSlow(Math.max(2 * this.buf.length, this.n + bytes));
      this.buf.copy(b, 0, 0, this.n);
      this.buf = b;
    }
    this.n += this.buf.write(text, this.n, bytes, 'utf8');
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.n);
  }
}

/**
 * The text of each lease and generation record as an element of the
 * record's arrays (recordText's indentation), by object: records are never
 * changed in place (every helper here returns new objects), so an entry
 * stays right for as long as its object lives.
 */
const elementText = new WeakMap<object, string>();

const ELEMENT_INDENT = '    ';

function putElement(v: unknown, out: ByteSink): void {
  out.put(ELEMENT_INDENT, ELEMENT_INDENT.length);
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return out.put('null', 4);
  if (v === null || typeof v !== 'object') return out.put(JSON.stringify(v));
  let t = elementText.get(v);
  if (t === undefined) {
    t = JSON.stringify(v, null, 2).replace(/\n/g, '\n' + ELEMENT_INDENT);
    elementText.set(v, t);
  }
  out.put(t);
}

/** elements put between two yields of networkRecordParts (~2 ms of work) */
const ELEMENTS_PER_PART = 2000;

/**
 * recordText(rec), byte for byte, into `out`: the elements of its arrays
 * (generations, leases) come from elementText, so a snapshot serializes
 * only what changed since the last one instead of every live lease, every
 * second. It yields after every ELEMENTS_PER_PART elements, so that the
 * snapshot of a record with 15,000 live leases (~5 MB, ~30 ms in one piece,
 * the soak's tail) can leave the event loop to the faults between its
 * parts; rec and its arrays are never changed in place, so what is written
 * is the record as it was when the snapshot began.
 */
function* networkRecordParts(rec: NetworkRecord, out: ByteSink): Generator<void> {
  let first = true;
  let put = 0;
  for (const [k, v] of Object.entries(rec)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out.put(first ? '{\n  ' : ',\n  ');
    first = false;
    out.put(JSON.stringify(k));
    out.put(': ');
    if (Array.isArray(v) && v.length > 0) {
      out.put('[\n');
      const xs = v as unknown[];
      for (let i = 0; i < xs.length; i++) {
        if (i > 0) out.put(',\n', 2);
        putElement(xs[i], out);
        if (++put % ELEMENTS_PER_PART === 0) yield;
      }
      out.put('\n  ]');
    } else {
      out.put(JSON.stringify(v, null, 2).replace(/\n/g, '\n  '));
    }
  }
  out.put(first ? '{}\n' : '\n}\n');
}

/** how many times writeNetworkSnapshot leaves the event loop to others while it serializes rec */
export function networkSnapshotYields(rec: NetworkRecord): number {
  const parts = networkRecordParts(rec, new ByteSink(Buffer.alloc(1024)));
  let n = 0;
  while (!parts.next().done) n++;
  return n;
}

/** networkRecordParts' bytes as a string, in one piece: what writeNetworkSnapshot writes (stamped first) */
export function networkRecordText(rec: NetworkRecord): string {
  const out = new ByteSink(Buffer.alloc(1024));
  const parts = networkRecordParts(rec, out);
  while (!parts.next().done);
  return out.bytes().toString('utf8');
}

/** Read-modify-write network.json, serialized per operation in this process. */
export async function updateNetwork(
  stateDir: string,
  id: string,
  fn: (rec: NetworkRecord) => NetworkRecord | Promise<NetworkRecord>,
): Promise<NetworkRecord> {
  const file = networkFile(stateDir, id);
  assertNoSymlinks(file);
  return withFileLock(file, async () => writeChecked(file, await fn(await readNetwork(stateDir, id))));
}

// ---- pure helpers: each returns a new record, the input is not modified ----

/** Start generation N+1 (the old one stays until revoked: fail-closed overlap). */
export function beginGeneration(rec: NetworkRecord, reason: string, now = new Date()): NetworkRecord {
  const generation = rec.generation + 1;
  return {
    ...rec,
    generation,
    generations: [...rec.generations, { generation, created_at: now.toISOString(), reason }],
  };
}

/**
 * Make generation N known to the record: unchanged when it is listed, the
 * newest when it is past every listed one. An older unlisted number cannot be
 * inserted (generations are kept in order): E_USAGE.
 */
export function withGeneration(rec: NetworkRecord, generation: number, reason: string, now = new Date()): NetworkRecord {
  if (rec.generations.some((g) => g.generation === generation)) return rec;
  if (generation <= rec.generation) {
    throw new GenseeError('E_USAGE', `generation ${generation} is not one of the operation's generations and older than its newest (${rec.generation})`);
  }
  return {
    ...rec,
    generation,
    generations: [...rec.generations, { generation, created_at: now.toISOString(), reason }],
  };
}

/** Mark a generation revoked and drop its leases (after its counters were harvested). */
export function revokeGeneration(rec: NetworkRecord, generation: number, now = new Date()): NetworkRecord {
  if (!rec.generations.some((g) => g.generation === generation)) {
    throw new GenseeError('E_STATE', `no generation ${generation} to revoke`);
  }
  return {
    ...rec,
    generations: rec.generations.map((g) =>
      g.generation === generation && g.revoked_at === undefined ? { ...g, revoked_at: now.toISOString() } : g,
    ),
    leases: rec.leases.filter((l) => l.generation !== generation),
  };
}

/** Add a lease, replacing any lease on the same tuple (the kernel map holds one per tuple). */
export function withLease(rec: NetworkRecord, lease: LeaseRecord): NetworkRecord {
  const k = leaseKey(lease);
  return { ...rec, leases: [...rec.leases.filter((l) => leaseKey(l) !== k), { ...lease }] };
}

export function findLease(rec: NetworkRecord, t: LeaseTuple): LeaseRecord | undefined {
  const k = leaseKey(t);
  return rec.leases.find((l) => leaseKey(l) === k);
}

export function withoutLease(rec: NetworkRecord, t: LeaseTuple): NetworkRecord {
  const k = leaseKey(t);
  return { ...rec, leases: rec.leases.filter((l) => leaseKey(l) !== k) };
}

/** A lease with expiry 0 never expires (the kernel's convention). */
export function leaseExpired(l: LeaseRecord, nowBootNs: bigint): boolean {
  const e = BigInt(l.expires_at_boot_ns);
  return e !== 0n && e <= nowBootNs;
}

/** Drop leases whose expiry is at or before nowBootNs (CLOCK_BOOTTIME ns); 0 = never. */
export function pruneExpired(rec: NetworkRecord, nowBootNs: bigint): { rec: NetworkRecord; removed: LeaseRecord[] } {
  const removed = rec.leases.filter((l) => leaseExpired(l, nowBootNs));
  if (removed.length === 0) return { rec, removed };
  return { rec: { ...rec, leases: rec.leases.filter((l) => !leaseExpired(l, nowBootNs)) }, removed };
}

export function setNetworkTotals(rec: NetworkRecord, totals: CounterTotals): NetworkRecord {
  return { ...rec, totals: { allow: totals.allow, deny: { ...totals.deny }, lost_events: totals.lost_events } };
}
