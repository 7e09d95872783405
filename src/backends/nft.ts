// The nftables layer (`--nft`): a second, packet-level boundary beside the
// eBPF socket hooks. It catches what the hooks never see (raw sockets if the
// workload kept CAP_NET_RAW, packets of protocols without connect/sendmsg),
// and counts what crossed at packet level, per exact lease.
//
// One `inet` table per operation, named nftTableName(op):
//
//   table inet gensee_<op>_<hash> {
//     set allow4 { type ipv4_addr . inet_proto . inet_service; flags timeout; counter; }
//     set allow6 { type ipv6_addr . inet_proto . inet_service; flags timeout; counter; }
//     counter deny { }
//     chain op {
//       ct state established,related accept          # packets of allowed flows: not counted again
//       ip  daddr . meta l4proto . th dport @allow4 accept   # element counter: one per new flow
//       ip6 daddr . meta l4proto . th dport @allow6 accept
//       counter name "deny" drop                        # counted default deny
//     }
//     chain output {
//       type filter hook output priority filter; policy accept;
//       socket cgroupv2 level L "<path>" goto op       # only the operation's cgroup
//     }
//   }
//
// Why `ct state new` counting (via the established rule first): the eBPF
// hook counts one per connect()/sendmsg(); a TCP connection is many packets
// but one new flow, so element counters agree with the eBPF allow counters
// for the same traffic.
//
// The cgroup: nft resolves the `socket cgroupv2` path relative to
// /sys/fs/cgroup (hard-coded in nftables), while `level` is the depth below
// the cgroup2 root. On a hybrid host the cgroup2 mount is
// /sys/fs/cgroup/unified, so a cgroup /sys/fs/cgroup/unified/a/b is written
// as level 2 "unified/a/b". A cgroup2 mount outside /sys/fs/cgroup cannot be
// named by nft 1.0 and is refused.
//
// Updates: every change goes through ONE `nft -f -` per batch (group commit:
// requests that arrive while a batch runs share the next one), never one exec
// per lease. A batch is atomic in the kernel; when one fails, its commands
// are retried one by one so one bad element cannot sink the others.
//
// Expiry: an element's timeout is the lease's remaining lifetime plus
// NFT_EXPIRY_GRACE_MS. The eBPF hook already refuses an expired lease at the
// exact instant; the grace leaves the sampler time to harvest the element's
// final counter and delete it itself. It is also the safety net when no
// resolver is running: elements still go away on their own.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { Tuple, parseAddress } from '../addr';
import { findCgroup2Mount } from '../cgroup';
import { GenseeError } from '../errors';
import { leaseKey } from '../state/network';

/** nftables resolves `socket cgroupv2` paths below this directory */
export const NFT_CGROUP_BASE = '/sys/fs/cgroup';
/** element timeouts run this much past the lease expiry (see above) */
export const NFT_EXPIRY_GRACE_MS = 10_000;
const NFT_BIN = process.env.GENSEE_NFT ?? 'nft';
const EXEC_TIMEOUT_MS = 30_000;

export interface NftElement {
  tuple: Tuple;
  /** CLOCK_BOOTTIME ns; 0n = never */
  expiresBootNs: bigint;
}

export interface NftElementCount {
  tuple: Tuple;
  packets: bigint;
}

export interface NftCounters {
  /** leaseKey(tuple) → element counter (new flows) */
  allow: Map<string, NftElementCount>;
  /** packets of the operation's cgroup dropped by the default-deny rule */
  deny: bigint;
}

/** Table name for an operation: readable prefix plus a hash so "a.b" and "a_b" never collide. */
export function nftTableName(op: string): string {
  const safe = op.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40);
  const h = createHash('sha256').update(op).digest('hex').slice(0, 8);
  return `gensee_${safe}_${h}`;
}

/** `socket cgroupv2` arguments for an absolute cgroup path (see the header). */
export function nftCgroupMatch(cgroupAbs: string, mount = findCgroup2Mount()): { level: number; path: string } {
  const rel = path.relative(mount, cgroupAbs);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new GenseeError('E_NOT_CGROUP2', `nft: ${cgroupAbs} is not a cgroup below the cgroup2 mount ${mount}`);
  }
  const base = path.relative(NFT_CGROUP_BASE, mount);
  if (base.startsWith('..') || path.isAbsolute(base)) {
    throw new GenseeError('E_NOT_CGROUP2', `nft: the cgroup2 mount ${mount} is outside ${NFT_CGROUP_BASE}, where nftables resolves cgroup paths`);
  }
  const p = base ? `${base}/${rel}` : rel;
  if (/["\\\n\r]/.test(p)) throw new GenseeError('E_NOT_CGROUP2', `nft: cgroup path ${JSON.stringify(p)} cannot be quoted for nft`);
  return { level: rel.split('/').length, path: p };
}

function elemText(t: Tuple): string {
  return `${t.address} . ${t.protocol} . ${t.port}`;
}

function setOf(t: Tuple): 'allow4' | 'allow6' {
  return t.family === 'ipv4' ? 'allow4' : 'allow6';
}

/** nft timeouts are relative; a lease expiry is absolute CLOCK_BOOTTIME. null = already expired. */
function timeoutClause(expiresBootNs: bigint, nowBootNs: bigint): string | null {
  if (expiresBootNs === 0n) return '';
  const left = expiresBootNs - nowBootNs;
  if (left <= 0n) return null;
  const ms = Number(left / 1_000_000n) + NFT_EXPIRY_GRACE_MS;
  return ` timeout ${ms}ms`;
}

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runNft(args: string[], input: string | null): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(NFT_BIN, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), EXEC_TIMEOUT_MS);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new GenseeError('E_KERNEL', `nft: cannot run ${NFT_BIN}: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

export async function nftBatch(script: string): Promise<void> {
  const r = await runNft(['-f', '-'], script);
  if (r.code !== 0) throw new GenseeError('E_KERNEL', `nft -f: ${r.stderr.trim().split('\n').slice(0, 4).join(' | ') || `exit ${r.code}`}`);
}

/** Why the nft layer cannot run here, or null. */
export async function nftUnavailable(): Promise<string | null> {
  try {
    const r = await runNft(['--version'], null);
    return r.code === 0 ? null : `nft --version exited ${r.code}`;
  } catch (e) {
    return (e as Error).message;
  }
}

export async function nftTableExists(table: string): Promise<boolean> {
  const r = await runNft(['list', 'table', 'inet', table], null);
  return r.code === 0;
}

/** Remove a table (idempotent): the `add` makes the `delete` valid when it is not there. */
export async function nftRemoveTable(table: string): Promise<void> {
  await nftBatch(`add table inet ${table}\ndelete table inet ${table}\n`);
}

const V4 = /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;

function v6(addr: string): { family: Tuple['family']; address: string } {
  const a = parseAddress(addr);
  return { family: a.family, address: a.address };
}

interface JsonElem {
  val?: unknown;
  counter?: { packets?: number };
  elem?: JsonElem;
  concat?: unknown[];
}

function parseCounters(text: string, table: string): NftCounters {
  let doc: { nftables?: Record<string, unknown>[] };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch (e) {
    throw new GenseeError('E_KERNEL', `nft -j list table ${table}: not JSON: ${(e as Error).message}`);
  }
  const allow = new Map<string, NftElementCount>();
  let deny = 0n;
  for (const item of doc.nftables ?? []) {
    const c = item.counter as { name?: string; packets?: number } | undefined;
    if (c && c.name === 'deny') deny = BigInt(c.packets ?? 0);
    const s = item.set as { name?: string; elem?: JsonElem[] } | undefined;
    if (!s || (s.name !== 'allow4' && s.name !== 'allow6')) continue;
    for (const raw of s.elem ?? []) {
      const e = raw.elem ?? raw;
      const concat = (e.val as { concat?: unknown[] } | undefined)?.concat ?? e.concat;
      if (!Array.isArray(concat) || concat.length !== 3) continue;
      const [addr, proto, port] = concat;
      if (typeof addr !== 'string' || (proto !== 'tcp' && proto !== 'udp') || typeof port !== 'number') continue;
      // nft prints IPv4 canonically; parseAddress (slow at 10,000 elements) only for IPv6
      const tuple: Tuple = V4.test(addr) ? { family: 'ipv4', protocol: proto, address: addr, port } : { ...v6(addr), protocol: proto, port };
      allow.set(leaseKey(tuple), { tuple, packets: BigInt(e.counter?.packets ?? 0) });
    }
  }
  return { allow, deny };
}

/** Read the counters of any table of ours (also a leftover one). null when the table is not there. */
export async function nftReadTable(table: string): Promise<NftCounters | null> {
  const r = await runNft(['-j', 'list', 'table', 'inet', table], null);
  if (r.code !== 0) {
    if (/No such file or directory/.test(r.stderr)) return null;
    throw new GenseeError('E_KERNEL', `nft -j list table ${table}: ${r.stderr.trim() || `exit ${r.code}`}`);
  }
  return parseCounters(r.stdout, table);
}

interface Pending {
  cmd: string;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export interface NftStats {
  batches: number;
  commands: number;
  /** wall time of the last `nft -j list table`, ms */
  lastReadMs: number;
}

export class NftBackend {
  readonly table: string;
  readonly cgroup: string;
  readonly stats: NftStats = { batches: 0, commands: 0, lastReadMs: 0 };
  private pending: Pending[] = [];
  private running: Promise<void> | null = null;
  private closed = false;

  private constructor(table: string, cgroup: string) {
    this.table = table;
    this.cgroup = cgroup;
  }

  /** The ruleset text that (re)creates the table, replacing any table of the same name in the same batch. */
  static rulesetText(table: string, cgroupAbs: string, mount?: string): string {
    const m = nftCgroupMatch(cgroupAbs, mount);
    return [
      `add table inet ${table}`,
      `delete table inet ${table}`,
      `table inet ${table} {`,
      `  set allow4 { type ipv4_addr . inet_proto . inet_service; flags timeout; counter; }`,
      `  set allow6 { type ipv6_addr . inet_proto . inet_service; flags timeout; counter; }`,
      `  counter deny { }`,
      `  chain op {`,
      `    ct state established,related accept`,
      `    ip daddr . meta l4proto . th dport @allow4 accept`,
      `    ip6 daddr . meta l4proto . th dport @allow6 accept`,
      `    counter name "deny" drop`,
      `  }`,
      `  chain output {`,
      `    type filter hook output priority filter; policy accept;`,
      `    socket cgroupv2 level ${m.level} "${m.path}" goto op`,
      `  }`,
      `}`,
      '',
    ].join('\n');
  }

  /**
   * Create the operation's table with `elements` in it, in one batch. A table
   * left by a killed run is read first (its counters are returned so they can
   * be recorded, not lost) and replaced atomically in the same batch.
   */
  static async create(o: { op: string; cgroup: string; elements: NftElement[]; nowBootNs: bigint }): Promise<{ nft: NftBackend; leftover: NftCounters | null }> {
    const table = nftTableName(o.op);
    const leftover = await nftReadTable(table);
    let script = NftBackend.rulesetText(table, o.cgroup);
    for (const e of o.elements) {
      const to = timeoutClause(e.expiresBootNs, o.nowBootNs);
      if (to === null) continue;
      script += `add element inet ${table} ${setOf(e.tuple)} { ${elemText(e.tuple)}${to} }\n`;
    }
    await nftBatch(script);
    return { nft: new NftBackend(table, o.cgroup), leftover };
  }

  /** Add or refresh elements (an existing element keeps its counter; its timeout is replaced). */
  put(elements: NftElement[], nowBootNs: bigint): Promise<void> {
    const cmds: string[] = [];
    for (const e of elements) {
      const to = timeoutClause(e.expiresBootNs, nowBootNs);
      if (to === null) continue;
      cmds.push(`add element inet ${this.table} ${setOf(e.tuple)} { ${elemText(e.tuple)}${to} }`);
    }
    return this.enqueue(cmds);
  }

  /**
   * Delete elements. nft 1.0 has no `destroy`: a delete of a missing element
   * fails its batch, so each delete is preceded by an add (a no-op refresh
   * when it is there).
   */
  remove(tuples: Tuple[]): Promise<void> {
    const cmds: string[] = [];
    for (const t of tuples) {
      cmds.push(`add element inet ${this.table} ${setOf(t)} { ${elemText(t)} timeout 1s }\ndelete element inet ${this.table} ${setOf(t)} { ${elemText(t)} }`);
    }
    return this.enqueue(cmds);
  }

  /** Element and default-deny counters. */
  async read(): Promise<NftCounters> {
    const t0 = process.hrtime.bigint();
    const c = await nftReadTable(this.table);
    this.stats.lastReadMs = Number(process.hrtime.bigint() - t0) / 1e6;
    if (!c) throw new GenseeError('E_KERNEL', `nft: table inet ${this.table} is gone`);
    return c;
  }

  /** Wait for queued updates, then delete the table. */
  async destroy(): Promise<void> {
    this.closed = true;
    while (this.running) await this.running.catch(() => undefined);
    await nftRemoveTable(this.table);
  }

  /** Resolves when everything queued so far is applied. */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  private enqueue(cmds: string[]): Promise<void> {
    if (cmds.length === 0) return Promise.resolve();
    if (this.closed) return Promise.reject(new GenseeError('E_STATE', `nft table ${this.table} is being removed`));
    const ps = cmds.map(
      (cmd) =>
        new Promise<void>((resolve, reject) => {
          this.pending.push({ cmd, resolve, reject });
        }),
    );
    if (!this.running) this.running = this.drain();
    return Promise.all(ps).then(() => undefined);
  }

  private async drain(): Promise<void> {
    try {
      // let callers of this turn of the event loop join the first batch
      await new Promise<void>((r) => setImmediate(r));
      while (this.pending.length) {
        const batch = this.pending.splice(0);
        this.stats.batches++;
        this.stats.commands += batch.length;
        try {
          await nftBatch(batch.map((p) => p.cmd).join('\n') + '\n');
          for (const p of batch) p.resolve();
        } catch (e) {
          if (batch.length === 1) {
            batch[0].reject(e);
            continue;
          }
          // one bad command fails the whole (atomic) batch: find it
          for (const p of batch) {
            try {
              await nftBatch(p.cmd + '\n');
              p.resolve();
            } catch (e1) {
              p.reject(e1);
            }
          }
        }
      }
    } finally {
      this.running = null;
    }
  }
}
