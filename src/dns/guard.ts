// Only the operation's own cgroup reaches its DNS stub.
//
// The stub listens on an address of the host's network namespace (gensee
// run: 127.53.X.Y:53), where any host process, or another operation's
// workload whose policy reaches that address, could ask it: spending the
// operation's DNS budget, carrying names out in its name, and getting leases
// installed for the operation. The stub cannot tell who sent a datagram (a
// UDP or TCP peer is an address and a port, not a process; finding the
// socket's owner in /proc per query is slow and racy), but the kernel can:
// every socket carries the cgroup it was created in, and nftables matches it
// (`socket cgroupv2`, the same match src/backends/nft.ts uses to scope the
// operation's table). So the fence is one small table per stub address:
//
//   table inet gensee_dns_<address>_<port> {
//     counter outside { }
//     chain output {
//       type filter hook output priority filter; policy accept;
//       ip daddr ADDR meta l4proto { tcp, udp } th dport PORT socket cgroupv2 level L "<path>" accept
//       ip daddr ADDR meta l4proto tcp th dport PORT counter name "outside" reject with tcp reset
//       ip daddr ADDR meta l4proto udp th dport PORT counter name "outside" reject
//     }
//   }
//
// The output hook sees every packet a local socket sends, before loopback
// delivers it, with the sending socket attached: a packet for the stub from
// a socket outside the operation's cgroup (or from no socket at all) is
// rejected there, so the stub never reads it — nothing is answered, nothing
// forwarded, no budget spent. `level`/path come from nftCgroupMatch (the
// cgroup2 mount found in /proc/self/mountinfo; on a hybrid host it is
// /sys/fs/cgroup/unified), and `level` makes the operation's sub-cgroups
// (tools) count as inside. The counter is read once a second and every
// increase is recorded (onOutside) — events are rate limited by the event
// log as any boundary event; a table found gone then (someone flushed the
// ruleset) is put back at once and the removal reported.
//
// The table is named by the stub's address, not the operation: it is
// installed only after the stub has bound the address (so no other live
// operation owns it), replacing in one batch any table a killed run left for
// it, and removed while the address is still bound (DnsStub.close's
// beforeUnbind), so an operation that takes the address next never loses
// its own fence. A leftover from a killed run fences an address nobody
// serves: harmless, replaced by the next stub bound there, and removed by
// the next stub that starts (sweepStaleGuards: an IPv4 fence whose address
// and port no UDP socket of this network namespace holds).
import * as fs from 'node:fs';
import * as os from 'node:os';
import { nftBatch, nftCgroupMatch, runNft } from '../backends/nft';
import { parseIp, formatIp } from '../protocol/ip';
import { GenseeError } from '../errors';

export const GUARD_POLL_MS = 1000;
const INSTALL_ATTEMPTS = 4;

export interface StubGuard {
  readonly table: string;
  /** packets refused so far (the counter) */
  read(): Promise<bigint>;
  /** read once more, record, and remove the table */
  remove(): Promise<void>;
}

/** The fence's table name for a stub address. */
export function guardTableName(host: string, port: number): string {
  return `gensee_dns_${host.replace(/[^0-9A-Za-z]/g, '_')}_${port}`;
}

/** The ruleset (see the header) for a stub on host:port serving the cgroup cgroupAbs. */
export function guardRuleset(host: string, port: number, cgroupAbs: string, mount?: string): string {
  const ip = parseIp(host);
  if (!ip) throw new GenseeError('E_USAGE', `DNS stub address ${host} is not an IP address`);
  const addr = formatIp(ip.bytes);
  const fam = ip.family === 'ipv4' ? 'ip' : 'ip6';
  const m = nftCgroupMatch(cgroupAbs, mount);
  const table = guardTableName(addr, port);
  const to = `${fam} daddr ${addr} meta l4proto`;
  return [
    `add table inet ${table}`,
    `delete table inet ${table}`,
    `table inet ${table} {`,
    `  counter outside { }`,
    `  chain output {`,
    `    type filter hook output priority filter; policy accept;`,
    `    ${to} { tcp, udp } th dport ${port} socket cgroupv2 level ${m.level} "${m.path}" accept`,
    `    ${to} tcp th dport ${port} counter name "outside" reject with tcp reset`,
    `    ${to} udp th dport ${port} counter name "outside" reject`,
    `  }`,
    `}`,
    '',
  ].join('\n');
}

/** "a.b.c.d:port" of every bound IPv4 UDP socket in this network namespace (/proc/net/udp). */
function boundUdp4(): Set<string> {
  const out = new Set<string>();
  let text = '';
  try {
    text = fs.readFileSync('/proc/net/udp', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n').slice(1)) {
    const m = /^\s*\d+:\s+([0-9A-F]{8}):([0-9A-F]{4})\s/.exec(line);
    if (!m) continue;
    // the address as the kernel's u32 in host byte order (little-endian here): bytes reversed
    const b = Buffer.from(m[1], 'hex');
    const addr = os.endianness() === 'LE' ? [b[3], b[2], b[1], b[0]] : [b[0], b[1], b[2], b[3]];
    out.add(`${addr.join('.')}:${parseInt(m[2], 16)}`);
  }
  return out;
}

/**
 * Remove the IPv4 fences a killed run left: a gensee_dns_A_B_C_D_PORT table
 * whose address and port no UDP socket holds (a live stub's fence is always
 * for an address it holds: it is installed after the bind and removed before
 * the unbind). Best effort; returns the tables removed.
 */
export async function sweepStaleGuards(): Promise<string[]> {
  const r = await runNft(['-j', 'list', 'tables', 'inet'], null);
  if (r.code !== 0) return [];
  let doc: { nftables?: { table?: { name?: string } }[] };
  try {
    doc = JSON.parse(r.stdout) as typeof doc;
  } catch {
    return [];
  }
  const bound = boundUdp4();
  const removed: string[] = [];
  for (const item of doc.nftables ?? []) {
    const name = item.table?.name ?? '';
    const m = /^gensee_dns_(\d{1,3})_(\d{1,3})_(\d{1,3})_(\d{1,3})_(\d{1,5})$/.exec(name);
    if (!m || bound.has(`${m[1]}.${m[2]}.${m[3]}.${m[4]}:${m[5]}`)) continue;
    try {
      await nftBatch(`add table inet ${name}\ndelete table inet ${name}\n`);
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove now: the next sweep
    }
  }
  return removed;
}

async function readCounter(table: string): Promise<bigint> {
  const r = await runNft(['-j', 'list', 'counter', 'inet', table, 'outside'], null);
  if (r.code !== 0) throw new GenseeError('E_KERNEL', `nft -j list counter ${table} outside: ${r.stderr.trim() || `exit ${r.code}`}`);
  const doc = JSON.parse(r.stdout) as { nftables?: { counter?: { name?: string; packets?: number } }[] };
  for (const item of doc.nftables ?? []) if (item.counter?.name === 'outside') return BigInt(item.counter.packets ?? 0);
  throw new GenseeError('E_KERNEL', `nft: no counter "outside" in ${table}`);
}

/**
 * Fence host:port to the cgroup cgroupAbs (see the header). Throws E_KERNEL
 * when nftables cannot (the stub must then not serve: failing closed).
 * onOutside(n) is called with each increase of the refused-packet count.
 */
export async function guardStub(o: { host: string; port: number; cgroup: string; onOutside: (packets: number) => void; onError: (e: Error) => void }): Promise<StubGuard> {
  const script = guardRuleset(o.host, o.port, o.cgroup);
  const table = guardTableName(formatIp(parseIp(o.host)!.bytes), o.port);
  await sweepStaleGuards().catch(() => []);
  // a batch can fail on a busy host (other nft users committing at once): a few tries before failing closed
  for (let attempt = 1; ; attempt++) {
    try {
      await nftBatch(script);
      break;
    } catch (e) {
      if (attempt < INSTALL_ATTEMPTS) {
        await new Promise((r) => setTimeout(r, 50 * attempt));
        continue;
      }
      throw new GenseeError('E_KERNEL', `the DNS stub on ${o.host}:${o.port} cannot be fenced to the operation's cgroup (nftables): ${(e as Error).message}; pass --no-dns to run without a stub`);
    }
  }
  let seen = 0n;
  let reading: Promise<void> | null = null;
  let closed = false;
  const poll = (): Promise<void> => {
    if (!reading) {
      reading = readCounter(table)
        .then((n) => {
          if (n > seen) o.onOutside(Number(n - seen));
          seen = n;
        })
        .catch(async (e: Error) => {
          // the table was removed behind gensee's back (a ruleset flush): the
          // fence is put back at once, its counter from zero
          if (closed || !/No such file or directory|no counter/.test(e.message)) return o.onError(e);
          seen = 0n;
          await nftBatch(script).then(
            () => o.onError(new Error(`the DNS stub's nftables fence ${table} was removed by someone else: reinstalled`)),
            (e2: Error) => o.onError(new Error(`the DNS stub's nftables fence ${table} was removed by someone else and cannot be reinstalled: ${e2.message}`)),
          );
        })
        .finally(() => {
          reading = null;
        });
    }
    return reading;
  };
  const timer = setInterval(() => void poll(), GUARD_POLL_MS);
  timer.unref();
  return {
    table,
    read: () => readCounter(table),
    remove: async () => {
      clearInterval(timer);
      while (reading) await reading;
      await poll();
      closed = true;
      await nftBatch(`add table inet ${table}\ndelete table inet ${table}\n`);
    },
  };
}
