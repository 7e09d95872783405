// The network backend: the only connected backend. Decides a network effect
// against the envelope (static grants + live leases read from the kernel map)
// and the operator policy, installs exact leases in the kernel, reads them
// back, and mirrors them into network.json (group-committed).
import type { DelegateRule, NetworkEffect, Policy, Resolution, Lease as WireLease } from '../protocol/types';
import { parseIp } from '../protocol/ip';
import { PolicyIndex } from './policy-index';
import { DataPlane, Lease, bootNs } from '../dataplane';
import { Tuple } from '../addr';
import { decodeLeaseValue, encodeLeaseKey, encodeLeaseValue, leaseExpired, leaseSpent } from '../abi';
import { NetworkRecord, LeaseRecord, leaseKey, leaseRecordOf, writeNetworkSnapshot } from '../state/network';

/**
 * The answer, and for a delegation the executor's tool that takes it over
 * (recorded, never sent). A granted lease is not in the kernel yet: `commit`
 * puts it there, and the resolver calls it only once the resolution line
 * that carries it is durable (no lease is usable without its durable answer).
 */
export type NetworkDecision = Omit<Resolution, 'fault_id'> & { delegate_tool?: string; commit?: () => Promise<void>; direct?: DirectPut };

/**
 * A grant's install as one plain put (no use limit, no nft mirror), which
 * the commit path can run in C right after the covering fdatasync, on the
 * syncer thread, with the answer (addon/sup_server.c
 * gs_sup_server_answer_grant) instead of `commit` on the event loop. The
 * tuple is "in flight" from begin() until installed() or abandoned(): the
 * kernel may hold the lease before the record does, and the lease scan
 * leaves such a key alone (inFlight).
 */
export interface DirectPut {
  /** encodeLeaseKey(tuple) */
  key: Buffer;
  /** encodeLeaseValue of the lease as granted */
  value: Buffer;
  begin(): void;
  /** put and read back as `back` (the kernel's bytes): recorded now */
  installed(back: Buffer): void;
  /** not put (not durable, failed, stopped), or handed back to `commit` */
  abandoned(): void;
}

/** the lease a decision is about to install, as its intent line records it */
export interface LeaseIntent {
  generation: number;
  family: Tuple['family'];
  protocol: Tuple['protocol'];
  address: string;
  port: number;
  ttl_s: number;
  max_uses: number;
}

export interface ResolveOptions {
  /**
   * Record the lease before it enters the kernel (the resolver's
   * lease_intent line, ahead of the resolution line; the commit runs only
   * once that line is durable, and the intent with it): the record says
   * what may be in the kernel whatever instant a crash comes at.
   */
  intent?: (l: LeaseIntent) => Promise<void>;
  /**
   * audit mode: what the policy denies gets a short exact lease instead
   * (reason audit_allowed, would_deny the reason it would have been denied)
   */
  audit?: boolean;
}

/** how long an audit lease lives: long enough for the retry and a burst after it, short enough that a later use faults (and is recorded) again */
export const AUDIT_LEASE_TTL_S = 10;

/**
 * Where this backend's installs are reported (src/envelope/installs.ts),
 * handed over by the supervisor; without one (or once closed) every kernel
 * entry is tagged with the newest generation. It never calls this backend.
 */
export interface InstallSink {
  /** false once the operation's envelope stopped */
  readonly open: boolean;
  /** the generation a grant's kernel entry is tagged with */
  readonly policyGeneration: number;
  /** generation `generation` was just added to the record (its `generation` line) */
  generationStarted(generation: number, reason: string, extra: Record<string, unknown>, at: string): void;
  /** a lease was installed and recorded (replacing `replaced`); awaited before the answer (nft mirror) */
  installed(l: LeaseRecord, replaced: LeaseRecord | undefined): Promise<void>;
  /** installs are mirrored into nft (installed() must be awaited before the answer) */
  readonly mirrorsNft: boolean;
}

/** the record's leases by key, counting its changes (the record's array is rebuilt only after one) */
class LeaseMap extends Map<string, LeaseRecord> {
  version = 0;

  override set(k: string, v: LeaseRecord): this {
    this.version++;
    return super.set(k, v);
  }

  override delete(k: string): boolean {
    this.version++;
    return super.delete(k);
  }
}

function live(l: Lease | null, now: bigint): boolean {
  return l !== null && !leaseExpired(l, now) && !leaseSpent(l);
}

export interface NetworkBackendOptions {
  stateDir: string;
  op: string;
  dp: DataPlane;
  policy: Policy;
  record: NetworkRecord;
}

export class NetworkBackend {
  private readonly stateDir: string;
  private readonly op: string;
  private readonly dp: DataPlane;
  private policy: Policy;
  /** the policy's address rules compiled for the fault path */
  private index: PolicyIndex;
  private rec: NetworkRecord;
  // network.json is a snapshot, not the journal: the durable record of each
  // lease is its resolution line in faults.jsonl (written before the answer).
  // The snapshot is written at most once a second, off the answer path; a
  // lease granted in the last instants before a crash is therefore unknown at
  // restart and reconcile() removes it from the kernel — fail closed, and the
  // workload simply faults again.
  private writing: Promise<void> | null = null;
  private dirty = false;
  private snapshotTimer: NodeJS.Timeout | null = null;
  static readonly SNAPSHOT_MS = 1000;

  constructor(o: NetworkBackendOptions) {
    this.stateDir = o.stateDir;
    this.op = o.op;
    this.dp = o.dp;
    this.policy = o.policy;
    this.index = new PolicyIndex(o.policy);
    this.rec = o.record;
  }

  get record(): NetworkRecord {
    this.settleOutcomes();
    this.materialize();
    return this.rec;
  }

  /** where the outcomes of direct puts come from (the socket server's takeDone), while one is set */
  private outcomes: (() => void) | null = null;

  /**
   * Take the outcomes of direct puts from `source` whenever the record is
   * read with puts in flight (null: stop): a reader then sees every lease
   * whose put has finished, not only those the server's poll has taken.
   */
  takeOutcomesFrom(source: (() => void) | null): void {
    this.outcomes = source;
  }

  private settleOutcomes(): void {
    if (this.flying.size > 0 && this.outcomes) this.outcomes();
  }

  // Leases are kept in a Map (O(1) per fault); the record's array is rebuilt
  // only when the record is read or written after the map changed.
  private leaseMap: LeaseMap | null = null;
  /** the map's version the record's array was last built from */
  private materialized = -1;

  private leases(): LeaseMap {
    if (!this.leaseMap) {
      this.leaseMap = new LeaseMap();
      for (const l of this.rec.leases) this.leaseMap.set(leaseKey(l), l);
      this.materialized = this.leaseMap.version;
    }
    return this.leaseMap;
  }

  private materialize(): void {
    if (!this.leaseMap || this.leaseMap.version === this.materialized) return;
    this.rec = { ...this.rec, leases: [...this.leaseMap.values()] };
    this.materialized = this.leaseMap.version;
  }

  /**
   * Remove and (re)place leases in place, O(changes): what editLeases
   * (envelope/generations.ts) does to a record, without a new array whose
   * map the next fault would have to rebuild. A put replaces any lease on
   * its tuple (and goes last); a removal wins over a put.
   */
  editLeases(remove: ReadonlySet<string>, put: readonly LeaseRecord[] = []): void {
    if (remove.size === 0 && put.length === 0) return;
    const m = this.leases();
    for (const l of put) {
      const k = leaseKey(l);
      if (remove.has(k)) continue;
      m.delete(k);
      m.set(k, l);
    }
    for (const k of remove) m.delete(k);
  }

  get generation(): number {
    return this.rec.generation;
  }

  /** the record's lease on a key (leaseKey), as it is now: O(1) (the expiry sweep's re-check, lease-scan.ts settle) */
  recordedLease(key: string): LeaseRecord | undefined {
    this.settleOutcomes();
    return this.leases().get(key);
  }

  /** lease keys (latin1 of the kernel key) whose direct put is in flight, with how many */
  private readonly flying = new Map<string, number>();

  /**
   * Is a direct put (DirectPut) of this kernel key in flight: handed to the
   * commit path and not yet recorded? The kernel may hold its lease before
   * the record does; the lease scan leaves the key alone meanwhile.
   */
  inFlight(kernelKey: Buffer): boolean {
    return this.flying.size > 0 && this.flying.has(kernelKey.toString('latin1'));
  }

  /**
   * The direct form of a plain grant (no use limit), or undefined when its
   * install must stay in JavaScript (nft mirror: the answer waits for the
   * element).
   */
  private direct(tuple: Tuple, generation: bigint, expires: bigint, key: Buffer): DirectPut | undefined {
    if (this.sink?.open && this.sink.mirrorsNft) return undefined;
    const k = key.toString('latin1');
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      const n = (this.flying.get(k) ?? 1) - 1;
      if (n > 0) this.flying.set(k, n);
      else this.flying.delete(k);
    };
    return {
      key,
      value: encodeLeaseValue({ generation, expiresBootNs: expires, usesLeft: null }),
      begin: () => {
        this.flying.set(k, (this.flying.get(k) ?? 0) + 1);
      },
      installed: (back) => {
        end();
        const v = decodeLeaseValue(back);
        // a grant of the same tuple recorded meanwhile by another path
        // (a newer generation) is not overwritten by this older one
        const cur = this.leases().get(leaseKey(tuple));
        if (cur && cur.generation > Number(generation)) return;
        void this.remember({ tuple, ...v }, 0, false);
      },
      abandoned: end,
    };
  }

  private sink: InstallSink | null = null;

  /** Report installs to `sink` from now on (the supervisor, once the envelope runs). */
  reportTo(sink: InstallSink | null): void {
    this.sink = sink;
  }

  /** The generation a new lease's kernel entry is tagged with: a new one, when installs are reported. */
  private leaseGeneration(t: Tuple): number {
    const sink = this.sink;
    if (!sink?.open) return this.rec.generation;
    const now = new Date();
    const at = now.toISOString();
    const g = this.addGeneration('lease_added', now);
    sink.generationStarted(g, 'lease_added', { family: t.family, protocol: t.protocol, address: t.address, port: t.port }, at);
    return g;
  }

  get currentPolicy(): Policy {
    return this.policy;
  }

  /** A policy change takes effect for the next decision (the handover is src/envelope/envelope.ts). */
  setPolicy(p: Policy): void {
    this.index = new PolicyIndex(p);
    this.policy = p;
  }

  /** Append generation N+1 to the record, leases untouched; returns its number. */
  addGeneration(reason: string, now = new Date()): number {
    const generation = this.rec.generation + 1;
    // in place: O(1) on the fault path (the record is only ever read whole, at snapshot time)
    this.rec.generations.push({ generation, created_at: now.toISOString(), reason });
    this.rec.generation = generation;
    return generation;
  }

  setRecord(r: NetworkRecord): void {
    // the same leases (a record built from this.record, its other fields
    // changed): the map still holds them, and anything added since
    if (r.leases !== this.rec.leases) this.leaseMap = null;
    this.rec = r;
  }

  /**
   * Addresses a DNS answer gave for a name a `delegate` host rule covers,
   * until the answer's TTL: a connect to one of them is delegated by that
   * rule (src/dns/service.ts). Bounded: the oldest go first.
   */
  private readonly named = new Map<string, { rule: DelegateRule; until: bigint }>();
  static readonly NAMED_MAX = 65536;

  delegateAnswered(addresses: { family: Tuple['family']; address: string }[], rule: DelegateRule, ttlMs: number): void {
    const until = bootNs() + BigInt(Math.max(0, Math.round(ttlMs))) * 1_000_000n;
    for (const a of addresses) {
      const k = `${a.family}|${a.address}`;
      this.named.delete(k);
      this.named.set(k, { rule, until });
      if (this.named.size > NetworkBackend.NAMED_MAX) this.named.delete(this.named.keys().next().value as string);
    }
  }

  /**
   * Install the exact leases for the addresses a DNS answer gave for a name a
   * host rule covers: the lease path of resolve() (each its own generation,
   * the intents first — durable with the dns_answer line — then each
   * install read back and recorded), with the TTL the stub computed. Returns
   * the leases as a resolution carries them.
   */
  async installNamed(tuples: Tuple[], ttlMs: number, maxUses: number, intents: (ls: LeaseIntent[]) => Promise<void>): Promise<{ leases: WireLease[]; commit: () => Promise<void> }> {
    const ttl_s = Math.max(1, Math.ceil(ttlMs / 1000));
    const planned = tuples.map((tuple) => ({ tuple, generation: BigInt(this.leaseGeneration(tuple)) }));
    await intents(planned.map((p) => ({ generation: Number(p.generation), ...p.tuple, ttl_s, max_uses: maxUses })));
    const expires = NetworkBackend.expiry(ttlMs);
    return {
      leases: planned.map((p) => ({ generation: Number(p.generation), ...p.tuple, expires_at_boot_ns: expires, max_uses: maxUses })),
      // once the dns_answer line that carries them is durable
      commit: async () => {
        for (const p of planned) {
          const { lease: l, added } = this.install(p.tuple, p.generation, expires, maxUses);
          await this.remember(l, maxUses, added);
        }
      },
    };
  }

  /**
   * Put a granted lease in the kernel, read back. A grant of limited uses
   * on a destination whose limited lease is still there (not expired, spent
   * or not) adds its uses to it in place instead, tagged with the grant's
   * generation and its expiry moved later, never earlier: installing over
   * it would take back uses promised to retries already answered (racing
   * first connects, each answered with a lease of its own) and lose a use
   * a hook spends meanwhile. Decided here, after the intent's write, with
   * nothing awaited between the look and the install: a grant answered
   * while this one waited is seen.
   */
  private install(tuple: Tuple, generation: bigint, expiresBootNs: bigint, maxUses: number, key?: Buffer): { lease: Lease; added: boolean } {
    if (maxUses > 0) {
      const l = this.dp.topUpLease(tuple, maxUses, expiresBootNs, bootNs(), generation, key);
      if (l) return { lease: l, added: true };
    }
    return { lease: this.dp.putLease({ tuple, generation, expiresBootNs, maxUses }, key), added: false };
  }

  /** the CLOCK_BOOTTIME expiry of a lease of ttlMs granted now (0n: never) */
  private static expiry(ttlMs: number): bigint {
    return ttlMs > 0 ? bootNs() + BigInt(Math.round(ttlMs)) * 1_000_000n : 0n;
  }

  /**
   * A standing grant in the kernel now, not at its first fault (the DNS
   * stub's: its grant must be there before `supervise` says it serves).
   */
  async ensureGrant(tuple: Tuple): Promise<void> {
    const cur = this.dp.getLease(tuple);
    if (live(cur, bootNs()) && cur!.expiresBootNs === 0n && cur!.usesLeft === null) return;
    const l = this.dp.putLease({ tuple, generation: BigInt(this.sink?.open ? this.sink.policyGeneration : this.rec.generation), maxUses: 0 });
    await this.remember(l, 0);
  }

  async resolve(e: NetworkEffect, opts: ResolveOptions = {}): Promise<NetworkDecision> {
    const tuple: Tuple = { family: e.family, protocol: e.protocol, address: e.address, port: e.port };
    const now = bootNs();
    // parsed once for every rule looked at (a bad address matches no rule)
    const addr = parseIp(e.address, e.family)?.bytes ?? null;
    const grant = this.index.grants.first(e, addr) !== undefined;
    if (grant) {
      // A grant is standing authority; make sure the kernel holds the exact
      // tuple (the hook decides on the kernel map, not on this answer).
      const cur = this.dp.getLease(tuple);
      if (!live(cur, now) || cur!.expiresBootNs !== 0n || cur!.usesLeft !== null) {
        const l = this.dp.putLease({ tuple, generation: BigInt(this.sink?.open ? this.sink.policyGeneration : this.rec.generation), maxUses: 0 });
        await this.remember(l, 0);
      }
      return { action: 'continue_already_authorized', reason: 'grant' };
    }
    const key = encodeLeaseKey(tuple); // once, for the lookup, the install and the read-back
    const cur = this.dp.getLease(tuple, key);
    const rule = this.index.leases.first(e, addr);
    // a limited lease's uses may all be promised to retries already
    // answered: a grant of limited uses adds its own (install())
    if (live(cur, now) && !(cur!.usesLeft !== null && rule && rule.max_uses > 0)) return { action: 'continue_already_authorized', reason: 'lease_active' };

    if (rule) {
      const generation = BigInt(this.leaseGeneration(tuple));
      await opts.intent?.({ generation: Number(generation), ...tuple, ttl_s: rule.ttl_s, max_uses: rule.max_uses });
      // the lease as granted; it enters the kernel (commit) only once the
      // resolution line that grants it is durable. A top-up keeps an expiry
      // later than this one if an earlier (durable) grant gave it.
      const expires = NetworkBackend.expiry(rule.ttl_s * 1000);
      const maxUses = rule.max_uses;
      return {
        action: 'retry_after_lease',
        reason: 'lease_installed',
        lease: { generation: Number(generation), ...tuple, expires_at_boot_ns: expires, max_uses: maxUses },
        commit: async () => {
          const { lease: l, added } = this.install(tuple, generation, expires, maxUses, key);
          await this.remember(l, maxUses, added);
        },
        ...(maxUses === 0 ? { direct: this.direct(tuple, generation, expires, key) } : {}),
      };
    }
    if (live(cur, now)) return { action: 'continue_already_authorized', reason: 'lease_active' };
    const del = this.index.delegate.first(e, addr) ?? this.namedDelegate(e, now);
    if (del) return { action: 'delegate', reason: 'policy_delegate', delegate_to: del.to, ...(del.tool ? { delegate_tool: del.tool } : {}) };
    if (opts.audit) {
      // audit: the same exact lease path as a lease rule (the intent line
      // first, the kernel only after the durable resolution), short-lived
      const generation = BigInt(this.leaseGeneration(tuple));
      await opts.intent?.({ generation: Number(generation), ...tuple, ttl_s: AUDIT_LEASE_TTL_S, max_uses: 0 });
      const expires = NetworkBackend.expiry(AUDIT_LEASE_TTL_S * 1000);
      return {
        action: 'retry_after_lease',
        reason: 'audit_allowed',
        would_deny: 'policy_denied',
        lease: { generation: Number(generation), ...tuple, expires_at_boot_ns: expires, max_uses: 0 },
        commit: async () => {
          const { lease: l, added } = this.install(tuple, generation, expires, 0, key);
          await this.remember(l, 0, added);
        },
        direct: this.direct(tuple, generation, expires, key),
      };
    }
    return { action: 'deny', reason: 'policy_denied' };
  }

  /**
   * Would resolve() deny this effect now? Pure: nothing is installed,
   * recorded or counted (the resolver's refusal budget asks it before it
   * writes anything: src/resolver/budget.ts).
   */
  wouldDeny(e: NetworkEffect): boolean {
    const addr = parseIp(e.address, e.family)?.bytes ?? null;
    if (this.index.grants.first(e, addr) !== undefined) return false;
    const now = bootNs();
    if (live(this.dp.getLease({ family: e.family, protocol: e.protocol, address: e.address, port: e.port }), now)) return false;
    if (this.index.leases.first(e, addr)) return false;
    return (this.index.delegate.first(e, addr) ?? this.namedDelegate(e, now)) === undefined;
  }

  /** a delegate host rule whose name a live DNS answer resolved to this address, covering its port and protocol */
  private namedDelegate(e: NetworkEffect, now: bigint): DelegateRule | undefined {
    if (this.named.size === 0) return undefined;
    const n = this.named.get(`${e.family}|${e.address}`);
    if (!n || n.until <= now) return undefined;
    const m = n.rule.network;
    return m.protocol === e.protocol && e.port >= m.ports.lo && e.port <= m.ports.hi ? n.rule : undefined;
  }

  /**
   * Record an installed lease in network.json before the answer goes out.
   * One that had uses added (install()) records every use granted on its
   * kernel entry: its max_uses is the sum of its grants'.
   */
  private remember(l: Lease, maxUses: number, added = false): Promise<void> {
    const prev = this.leases().get(leaseKey(l.tuple));
    if (added && prev) maxUses = Math.min(0xffffffff, prev.max_uses + maxUses);
    const rec = leaseRecordOf(l, maxUses);
    this.leases().set(leaseKey(rec), rec);
    this.scheduleSnapshot();
    return this.sink?.open ? this.sink.installed(rec, prev) : Promise.resolve();
  }

  private scheduleSnapshot(): void {
    if (this.snapshotTimer) return;
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      this.persist().catch(() => this.scheduleSnapshot());
    }, NetworkBackend.SNAPSHOT_MS);
    this.snapshotTimer.unref();
  }

  /** Write the snapshot now (shutdown, after reconcile). */
  async flush(): Promise<void> {
    if (this.snapshotTimer) {
      clearTimeout(this.snapshotTimer);
      this.snapshotTimer = null;
    }
    await this.persist();
  }

  forget(t: Tuple): Promise<void> {
    this.leases().delete(leaseKey(t));
    return this.persist();
  }

  /** Resolves once a write that includes the current record is durable. */
  persist(): Promise<void> {
    this.dirty = true;
    // this write covers the scheduled snapshot: one write, not two, a second
    if (this.snapshotTimer) {
      clearTimeout(this.snapshotTimer);
      this.snapshotTimer = null;
    }
    if (!this.writing) {
      this.writing = this.flushLoop();
      return this.writing;
    }
    // the running loop writes again while dirty: its end covers this caller
    return this.writing;
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.dirty) {
        this.dirty = false;
        this.materialize();
        await writeNetworkSnapshot(this.stateDir, this.op, this.rec);
      }
    } finally {
      this.writing = null;
    }
  }
}
