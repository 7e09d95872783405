// Typed data-plane API over the addon: attach/detach the pinned hooks of an
// operation, exact leases, counters and ring-buffer fault events.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadAddon, NativeDataPlane, RingState } from './addon';
import { findCgroup2Mount } from './cgroup';
import { Tuple, formatTuple } from './addr';
import {
  COUNTER_KEY_SIZE,
  FAULT_EVENT_SIZE,
  LEASE_KEY_SIZE,
  LEASE_VALUE_SIZE,
  FaultEvent,
  LeaseValue,
  Verdict,
  decodeCounterKey,
  decodeFaultEvent,
  decodeLeaseKey,
  decodeLeaseValue,
  encodeLeaseKey,
  encodeLeaseValue,
  encodeListenKey,
  encodeUnixKey,
} from './abi';
import type { ListenRule, UnixRule } from './protocol/types';
import { ensureBpffs, pinDirFor, pinRoot } from './bpffs';
import { GenseeError, isErrno } from './errors';

/** sizeof(struct gs_topup_args) of bpf/lease_topup.h (the glue refuses any other size) */
const TOPUP_ARGS_SIZE = 64;
/** GS_TOPUP_ADDED: the program added the uses */
const TOPUP_ADDED = 0;

export interface Lease extends LeaseValue {
  tuple: Tuple;
}

/** a lease's generation and destination: the fields a lease's JSON (the resolver's wire lease, lease ls --json) begins with */
export function leaseDestination(l: Lease) {
  return { generation: Number(l.generation), family: l.tuple.family, protocol: l.tuple.protocol, address: l.tuple.address, port: l.tuple.port };
}

export interface LeaseSpec {
  tuple: Tuple;
  generation: bigint;
  /** lifetime from now in ms; null/undefined/0 = no expiry */
  ttlMs?: number | null;
  /** absolute CLOCK_BOOTTIME expiry (wins over ttlMs) */
  expiresBootNs?: bigint;
  /** 0/undefined = unlimited */
  maxUses?: number;
}

export interface CounterRow {
  tuple: Tuple;
  verdict: Verdict;
  generation: bigint;
  count: bigint;
  /** destinations the full counter map could not key (tuple is a placeholder) */
  aggregate?: true;
}

/** How a counter row names its destination. */
export function describeDestination(r: CounterRow): string {
  return r.aggregate ? 'other destinations (counter map full)' : formatTuple(r.tuple);
}

export function bootNs(): bigint {
  return loadAddon().bootNs();
}

export interface AttachOptions {
  emitEvents?: boolean;
  countAllows?: boolean;
  /**
   * The parent cgroup every operation's cgroup sits in directly (`gensee
   * run`'s `<cgroup2>/gensee`): its guard (made on first use) keeps a socket
   * born in an operation from sending anything once that operation ends.
   */
  guardParent?: string;
}

/** The level of a cgroup below the cgroup2 root (the root is 0). */
export function cgroupLevel(cgroupPath: string): number {
  const rel = path.relative(findCgroup2Mount(), path.resolve(cgroupPath));
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new GenseeError('E_USAGE', `cgroup ${cgroupPath} is not below the cgroup2 mount ${findCgroup2Mount()}`);
  return rel === '' ? 0 : rel.split(path.sep).length;
}

/** The guard's pin dir for a parent cgroup: one per parent, beside the operations' pin dirs. */
export function guardDirFor(parentCgroup: string): string {
  return path.join(pinRoot(), `_guard-${fs.statSync(parentCgroup).ino}`);
}

/** what the addon's attach is given for op on cgroupPath (the guard checked) */
function attachArgs(op: string, cgroupPath: string, opts: AttachOptions): { pin: string; native: Parameters<ReturnType<typeof loadAddon>['attach']>[2] & object } {
  ensureBpffs();
  const pin = pinDirFor(op);
  const { guardParent, ...flags } = opts;
  const native: Parameters<ReturnType<typeof loadAddon>['attach']>[2] & object = { ...flags, opLevel: cgroupLevel(cgroupPath) };
  if (guardParent) {
    if (path.resolve(path.dirname(cgroupPath)) !== path.resolve(guardParent)) {
      throw new GenseeError('E_USAGE', `cgroup ${cgroupPath} is not directly below the guarded parent ${guardParent}`);
    }
    native.guardDir = guardDirFor(guardParent);
    native.guardCgroup = guardParent;
  }
  return { pin, native };
}

function attachError(op: string, pin: string, e: unknown): unknown {
  if (isErrno(e) && e.code === 'EEXIST') return new GenseeError('E_OP_EXISTS', `hooks for operation "${op}" are already attached (${pin}); detach first`);
  return e;
}

/** Load the programs and attach them to cgroupPath, pinned under the op's pin dir. */
export function attachHooks(op: string, cgroupPath: string, opts: AttachOptions = {}): string {
  const { pin, native } = attachArgs(op, cgroupPath, opts);
  try {
    loadAddon().attach(pin, cgroupPath, native);
  } catch (e) {
    throw attachError(op, pin, e);
  }
  return pin;
}

/**
 * attachHooks with the load, the verifier and the pins on a libuv worker
 * thread: the event loop's thread does other start-up work meanwhile (the
 * resolver's warm-up). The same checks first, the same errors after.
 */
export function attachHooksAsync(op: string, cgroupPath: string, opts: AttachOptions = {}): Promise<string> {
  const { pin, native } = attachArgs(op, cgroupPath, opts);
  return new Promise((resolve, reject) => loadAddon().attachAsync(pin, cgroupPath, native, (err) => (err ? reject(attachError(op, pin, err)) : resolve(pin))));
}

/** Detach and unpin everything of an operation. Returns false if nothing was there. */
export function detachHooks(op: string): boolean {
  const pin = pinDirFor(op);
  if (!fs.existsSync(pin)) return false;
  loadAddon().detach(pin);
  return true;
}

/**
 * The pinned links of an attached operation, one per program: the four
 * sock_addr hooks and the UDP egress check. hooksAttached() is true only
 * when every one of them is pinned.
 */
export function hookLinkNames(): readonly string[] {
  return loadAddon().linkNames;
}

export function hooksAttached(op: string): boolean {
  return loadAddon().linksPresent(pinDirFor(op));
}

export class DataPlane {
  readonly op: string;
  readonly pinDir: string;
  private readonly native: NativeDataPlane;

  private constructor(op: string, pinDir: string, native: NativeDataPlane) {
    this.op = op;
    this.pinDir = pinDir;
    this.native = native;
  }

  /** Open an attached operation from its pins. */
  static open(op: string): DataPlane {
    const pin = pinDirFor(op);
    if (!fs.existsSync(pin)) throw new GenseeError('E_UNKNOWN_OP', `unknown operation "${op}": no hooks pinned at ${pin}`);
    const Native = loadAddon().DataPlane;
    return new DataPlane(op, pin, new Native(pin));
  }

  /** The addon handle itself, for bulk readers (the counter sampler); owned and closed by this DataPlane. */
  get raw(): NativeDataPlane {
    return this.native;
  }

  /** Install (or replace) an exact lease and read it back from the kernel. */
  putLease(spec: LeaseSpec, encodedKey?: Buffer): Lease {
    let expires = spec.expiresBootNs ?? 0n;
    if (!spec.expiresBootNs && spec.ttlMs) expires = bootNs() + BigInt(Math.round(spec.ttlMs * 1e6));
    const value: LeaseValue = {
      generation: spec.generation,
      expiresBootNs: expires,
      usesLeft: spec.maxUses ? BigInt(spec.maxUses) : null,
    };
    const key = encodedKey ?? encodeLeaseKey(spec.tuple);
    // put and read back in one step under the addon's lease lock (no other writer in between)
    const got = decodeLeaseValue(this.native.leasePut(key, encodeLeaseValue(value)));
    if (got.generation !== value.generation || got.expiresBootNs !== value.expiresBootNs) {
      throw new GenseeError('E_KERNEL', `lease ${formatTuple(spec.tuple)} read back differs from what was installed`);
    }
    return { tuple: spec.tuple, ...got };
  }

  /**
   * Add `uses` to the limited lease on `tuple` in the kernel, in place,
   * move its expiry to `expiresBootNs` if that is later (0n: never) and tag
   * it with `generation` (0n: keep its own). The add is the kernel's atomic
   * add on the value the hooks spend from (bpf/lease_topup.bpf.c): no
   * concurrent use is lost or given back. Returns the lease as the kernel
   * holds it right after, or null when there is nothing to add to: no
   * lease, an unlimited one, or one expired at `nowBootNs`.
   */
  topUpLease(tuple: Tuple, uses: number, expiresBootNs: bigint, nowBootNs: bigint, generation: bigint, encodedKey?: Buffer): Lease | null {
    if (!Number.isSafeInteger(uses) || uses < 1) throw new GenseeError('E_BAD_COUNT', `bad uses to add: ${uses}`);
    // struct gs_topup_args (bpf/lease_topup.h): key, uses, now, expires, uses_left, generation
    const a = Buffer.alloc(TOPUP_ARGS_SIZE);
    (encodedKey ?? encodeLeaseKey(tuple)).copy(a, 0);
    a.writeBigInt64LE(BigInt(uses), LEASE_KEY_SIZE);
    a.writeBigUInt64LE(nowBootNs, LEASE_KEY_SIZE + 8);
    a.writeBigUInt64LE(expiresBootNs, LEASE_KEY_SIZE + 16);
    a.writeBigUInt64LE(generation, LEASE_KEY_SIZE + 32);
    const status = this.native.leaseTopUp(a);
    if (status !== TOPUP_ADDED) return null;
    return {
      tuple,
      generation: a.readBigUInt64LE(LEASE_KEY_SIZE + 32),
      expiresBootNs: a.readBigUInt64LE(LEASE_KEY_SIZE + 16),
      usesLeft: a.readBigInt64LE(LEASE_KEY_SIZE + 24),
    };
  }

  /** encodedKey: encodeLeaseKey(tuple), when the caller has it already */
  getLease(tuple: Tuple, encodedKey?: Buffer): Lease | null {
    const v = this.native.leaseGet(encodedKey ?? encodeLeaseKey(tuple));
    return v ? { tuple, ...decodeLeaseValue(v) } : null;
  }

  removeLease(tuple: Tuple): boolean {
    return this.native.leaseDel(encodeLeaseKey(tuple));
  }

  listLeases(): Lease[] {
    const r = this.native.leaseList();
    const out: Lease[] = [];
    for (let i = 0; i < r.count; i++) {
      out.push({
        tuple: decodeLeaseKey(r.keys, i * LEASE_KEY_SIZE),
        ...decodeLeaseValue(r.values, i * LEASE_VALUE_SIZE),
      });
    }
    return out;
  }

  readCounters(): CounterRow[] {
    const r = this.native.countersRead();
    const out: CounterRow[] = [];
    for (let i = 0; i < r.count; i++) {
      const k = decodeCounterKey(r.keys, i * COUNTER_KEY_SIZE);
      const count = r.sums.readBigUInt64LE(i * 8);
      // the per-verdict aggregates exist from attach on; they matter once they count
      if (k.aggregate && count === 0n) continue;
      out.push({ ...k, count });
    }
    return out;
  }

  stats(): { lostEvents: bigint; counterFull: bigint; socketRefused: bigint; unixRefused: bigint } {
    return this.native.statsRead();
  }

  /**
   * Make the kernel's listen and unix rules exactly the policy's. The old
   * rules go first: for that instant a bind, listen or unix connect the new
   * policy also allows is refused, never one it does not.
   */
  setRules(listen: readonly ListenRule[], unix: readonly UnixRule[]): void {
    const lk = listen.map((r) => encodeListenKey(r.protocol, r.port));
    const uk = unix.map((r) => encodeUnixKey(r.path !== undefined ? Buffer.from(r.path) : Buffer.concat([Buffer.alloc(1), Buffer.from(r.abstract ?? '')])));
    this.native.ruleClear(0);
    this.native.ruleClear(1);
    for (const k of lk) this.native.ruleSet(0, k, true);
    for (const k of uk) this.native.ruleSet(1, k, true);
  }

  /**
   * Deliver ring-buffer fault events as they arrive (uv_poll on the ring's
   * epoll fd), each with its ring position. With manualAck the kernel gets
   * their room back only through ackEvents: a consumer that dies before
   * acking leaves them to the next one (src/resolver/rejectloop.ts acks once
   * each is durable); without, once cb returns.
   */
  onEvents(cb: (events: FaultEvent[]) => void, onError?: (e: Error) => void, opts: { ref?: boolean; manualAck?: boolean } = {}): void {
    this.native.startEvents((err, buf, pos) => {
      if (err) {
        if (onError) onError(err);
        return;
      }
      if (!buf) return;
      const evs: FaultEvent[] = [];
      for (let off = 0, i = 0; off + FAULT_EVENT_SIZE <= buf.length; off += FAULT_EVENT_SIZE, i++) {
        const ev = decodeFaultEvent(buf, off);
        if (pos && pos.length >= (i + 1) * 16) ev.ring = { pos: Number(pos.readBigUInt64LE(i * 16)), end: Number(pos.readBigUInt64LE(i * 16 + 8)) };
        evs.push(ev);
      }
      cb(evs);
      // without manualAck, released once the callback has them (as libbpf's consumer did)
      const last = evs[evs.length - 1]?.ring;
      if (!opts.manualAck && last) this.native.ackEvents(last.end);
    }, opts.ref ?? false);
  }

  /** the events read before ring position `end` are durable: release their room (delivers what came meanwhile) */
  ackEvents(end: number): void {
    this.native.ackEvents(end);
  }

  /** the ring's map id and positions */
  eventsState(): RingState {
    return this.native.eventsState();
  }

  stopEvents(): void {
    this.native.stopEvents();
  }

  /**
   * Hand what the ring holds now to the onEvents callback, before this
   * returns. Once every process of the cgroup has exited, no hook can add
   * to it: this is all of its events.
   */
  drainEvents(): void {
    this.native.drainEvents();
  }

  close(): void {
    this.native.close();
  }
}
