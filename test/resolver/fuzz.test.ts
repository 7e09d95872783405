// Fuzz of the supervisor socket against a real `gensee supervise` process:
// random bytes, mutated valid protobuf (bit flips, truncation, duplicated and
// unknown fields, spliced garbage), wrong length prefixes, truncated and
// zero-length frames, oversized ones, several frames in one write, a
// second frame after the answer, clients that leave without reading, and a
// few slow senders dribbling bytes past the 2 s frame limit the whole time.
//
// A connection carries a sequence of request/answer pairs (addon/sup_server.h):
// each case is its own connection, most with one frame, the `sequence` ones
// with a second frame sent after the first answer; workers keep CONCURRENCY
// of them in flight. Afterwards: the same resolver pid is alive, its RSS stayed bounded
// and its fd count came back, it answers a valid fault with the policy's
// answer under a MAC the client verifies, every connection left exactly one
// line (a refusal or a fault) in faults.jsonl, and `gensee verify` passes.
//
// GENSEE_FUZZ_FRAMES sets the number of frames (default 100000; `make fuzz`
// runs 1000000), GENSEE_FUZZ_SEED the PRNG seed (printed, for a replay).
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { spawn, ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { requireKernel, testCgroup, uniqueName, waitFor, sleep, GENSEE_BIN } from '../helpers/kernel';
import { shortStateDir, workload, networkFault, POLICY } from '../helpers/supervisor';
import { gensee } from '../helpers/gensee';
import { detachHooks } from '../../src/dataplane';
import { encodeFault, decodeResolution } from '../../src/protocol/codec';
import { verifyMac } from '../../src/protocol/mac';
import { submitFault } from '../../src/resolver/client';
import { openOperation, readKey } from '../../src/state/operation';
import type { Fault } from '../../src/protocol/types';

const FRAMES = Number(process.env.GENSEE_FUZZ_FRAMES ?? 100_000);
const SEED = Number(process.env.GENSEE_FUZZ_SEED ?? (randomBytes(4).readUInt32BE() >>> 0));
const CONCURRENCY = 48;
const SLOW_SENDERS = 6;
/** the RSS bound: twice the RSS after warm-up, plus this */
const RSS_SLACK_KB = 64 * 1024;

t.setTimeout(120_000 + FRAMES * 2);

/** mulberry32: a small seeded PRNG, so a failing run can be replayed */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = prng(SEED);
const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rnd() * xs.length)];
function bytes(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (rnd() * 256) | 0;
  return b;
}

function header(n: number): Buffer {
  const h = Buffer.alloc(4);
  h.writeUInt32BE(n >>> 0);
  return h;
}
const frame = (body: Buffer) => Buffer.concat([header(body.length), body]);

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

/** Top-level fields of a protobuf message as [start, end) byte ranges (null when it does not walk). */
function fields(b: Buffer): [number, number][] | null {
  const r: [number, number][] = [];
  let p = 0;
  const v = (): number | null => {
    let x = 0;
    for (let s = 0; s < 64; s += 7) {
      if (p >= b.length) return null;
      const c = b[p++];
      x += (c & 0x7f) * 2 ** s;
      if (!(c & 0x80)) return x;
    }
    return null;
  };
  while (p < b.length) {
    const start = p;
    const tag = v();
    if (tag === null) return null;
    const wt = tag % 8;
    if (wt === 0) {
      if (v() === null) return null;
    } else if (wt === 1) p += 8;
    else if (wt === 5) p += 4;
    else if (wt === 2) {
      const n = v();
      if (n === null) return null;
      p += n;
    } else return null;
    if (p > b.length) return null;
    r.push([start, p]);
  }
  return r;
}

/** A field number the schema does not have, with a value of a random wire type. */
function unknownField(): Buffer {
  const num = pick([9, 15, 16, 99, 1000, 536870911, int(17, 5000)]);
  const wt = pick([0, 1, 2, 5]);
  const body = wt === 0 ? varint(int(0, 1 << 30)) : wt === 1 ? bytes(8) : wt === 5 ? bytes(4) : (() => {
    const d = bytes(int(0, 40));
    return Buffer.concat([varint(d.length), d]);
  })();
  return Buffer.concat([varint(num * 8 + wt), body]);
}

type Mode = 'read' | 'leave' | 'end-read' | 'seq';
interface Case {
  kind: string;
  data: Buffer;
  /** read: write, wait for the answer; end-read: write, half-close, wait; leave: write and go; seq: write, read the answer, write a second frame, read its answer */
  mode: Mode;
  frames: number;
}

/** Mutations of a valid CapabilityFault body. */
const MUTATIONS: Record<string, (b: Buffer) => Buffer> = {
  bitflip(b) {
    const m = Buffer.from(b);
    for (let i = int(1, 4); i > 0; i--) m[int(0, m.length - 1)] ^= 1 << int(0, 7);
    return m;
  },
  byteset(b) {
    const m = Buffer.from(b);
    for (let i = int(1, 3); i > 0; i--) m[int(0, m.length - 1)] = pick([0, 0x7f, 0x80, 0xff, int(0, 255)]);
    return m;
  },
  truncate(b) {
    return b.subarray(0, int(1, b.length - 1));
  },
  dup_field(b) {
    const f = fields(b);
    if (!f || f.length === 0) return Buffer.concat([b, b]);
    const [s, e] = pick(f);
    return Buffer.concat([b, b.subarray(s, e)]);
  },
  dup_message(b) {
    return Buffer.concat([b, b]);
  },
  unknown_field(b) {
    const f = fields(b) ?? [];
    const at = f.length ? pick(f)[int(0, 1)] : b.length;
    return Buffer.concat([b.subarray(0, at), unknownField(), b.subarray(at)]);
  },
  unknown_nested(b) {
    // grow a length-delimited field (a submessage or string) by an unknown field inside it
    const f = (fields(b) ?? []).filter(([s]) => b[s] % 8 === 2);
    if (!f.length) return Buffer.concat([b, unknownField()]);
    const [s, e] = pick(f);
    // every field number of the fault is < 16: a one-byte tag, then the length varint
    let p = s + 1;
    while (b[p] & 0x80) p++;
    const inner = Buffer.concat([b.subarray(p + 1, e), unknownField()]);
    return Buffer.concat([b.subarray(0, s + 1), varint(inner.length), inner, b.subarray(e)]);
  },
  splice(b) {
    const at = int(0, b.length);
    return Buffer.concat([b.subarray(0, at), bytes(int(1, 16)), b.subarray(at + int(0, 8))]);
  },
  overlong_varint(b) {
    const at = int(0, b.length - 1);
    return Buffer.concat([b.subarray(0, at), Buffer.alloc(int(10, 12), 0xff), b.subarray(at + 1)]);
  },
  wrong_wiretype(b) {
    const f = fields(b);
    const m = Buffer.from(b);
    if (f && f.length) {
      const [s] = pick(f);
      m[s] = (m[s] & ~7) | pick([0, 1, 2, 3, 4, 5, 6, 7]);
    }
    return m;
  },
  field_zero(b) {
    return Buffer.concat([Buffer.from([0x00, 0x01]), b]);
  },
};
const MUTATION_NAMES = Object.keys(MUTATIONS);

/** One fuzz case: what to send on one connection, and how the client behaves. */
function makeCase(valid: Buffer[]): Case {
  const body = pick(valid);
  const mode: Mode = rnd() < 0.1 ? 'leave' : 'read';
  const r = rnd();
  if (r < 0.12) {
    // random bytes, header and all
    return { kind: 'random', data: bytes(int(1, 300)), mode, frames: 1 };
  }
  if (r < 0.2) {
    // a proper header over random bytes
    const b = bytes(int(1, 1200));
    return { kind: 'random_body', data: frame(b), mode, frames: 1 };
  }
  if (r < 0.62) {
    const name = pick(MUTATION_NAMES);
    const m = MUTATIONS[name](body);
    return { kind: `mutated_${name}`, data: m.length ? frame(m) : header(0), mode, frames: 1 };
  }
  if (r < 0.68) {
    // declared length larger than what comes, then EOF
    return { kind: 'len_larger', data: Buffer.concat([header(body.length + int(1, 300)), body]), mode: rnd() < 0.5 ? 'end-read' : 'leave', frames: 1 };
  }
  if (r < 0.74) {
    // declared length smaller than what comes: bytes after the frame
    const k = int(1, Math.min(40, body.length - 1));
    return { kind: 'len_smaller', data: Buffer.concat([header(body.length - k), body]), mode, frames: 1 };
  }
  if (r < 0.79) {
    // a frame cut short: part of the header, or header and part of the body
    const f = frame(body);
    return { kind: 'truncated', data: f.subarray(0, int(0, f.length - 1)), mode: rnd() < 0.7 ? 'end-read' : 'leave', frames: 1 };
  }
  if (r < 0.83) {
    const tail = rnd() < 0.5 ? Buffer.alloc(0) : bytes(int(1, 20));
    return { kind: 'zero_length', data: Buffer.concat([header(0), tail]), mode, frames: 1 };
  }
  if (r < 0.87) {
    // oversized: declared only, or really sent (a few > 64 KiB bodies)
    if (rnd() < 0.9) {
      const n = pick([65537, 65536 + int(1, 1 << 20), 0x7fffffff, 0xffffffff, int(65537, 0xffffffff)]);
      return { kind: 'oversize_declared', data: Buffer.concat([header(n), bytes(int(0, 64))]), mode, frames: 1 };
    }
    const n = int(65537, 80_000);
    return { kind: 'oversize_sent', data: Buffer.concat([header(n), bytes(n)]), mode, frames: 1 };
  }
  if (r < 0.92) {
    // several frames in one write: the first is the request, the rest trail it
    const n = int(2, 8);
    const parts: Buffer[] = [];
    for (let i = 0; i < n; i++) parts.push(frame(rnd() < 0.7 ? pick(valid) : MUTATIONS[pick(MUTATION_NAMES)](pick(valid))));
    return { kind: 'many_frames', data: Buffer.concat(parts), mode, frames: n };
  }
  if (r < 0.95) {
    // a valid frame, its answer, then a second frame on the same connection
    return { kind: 'sequence', data: frame(body), mode: 'seq', frames: 2 };
  }
  if (r < 0.97) {
    // connect and close without a byte
    return { kind: 'empty_connection', data: Buffer.alloc(0), mode: 'end-read', frames: 1 };
  }
  // an unchanged valid fault (the policy decides: lease, delegate, deny)
  return { kind: 'valid', data: frame(body), mode, frames: 1 };
}

type Outcome = 'answered' | 'left' | 'no_answer' | 'bad_answer' | 'bad_mac' | 'connect_error';

/** Send one case on its own connection; the answer (when read) must decode and verify under the key. */
function send(sockPath: string, c: Case, key: Buffer, second: Buffer): Promise<{ outcome: Outcome; reason?: string }> {
  return new Promise((resolve) => {
    const s = net.createConnection(sockPath);
    const chunks: Buffer[] = [];
    let done = false;
    let connected = false;
    const finish = (o: { outcome: Outcome; reason?: string }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve(o);
    };
    // no answer within 8 s is a failure (the longest legitimate wait is the 2 s frame limit)
    const timer = setTimeout(() => finish({ outcome: 'no_answer', reason: 'timeout' }), 8000);
    s.on('error', (e: NodeJS.ErrnoException) => finish(connected ? (judge() ?? { outcome: 'no_answer', reason: e.code }) : { outcome: 'connect_error', reason: e.code }));
    const judge = (): { outcome: Outcome; reason?: string } | null => {
      const all = Buffer.concat(chunks);
      if (all.length < 4) return null;
      const n = all.readUInt32BE(0);
      if (all.length < 4 + n) return null;
      const d = decodeResolution(all.subarray(4, 4 + n));
      if (!d.ok) return { outcome: 'bad_answer', reason: d.detail };
      if (!verifyMac(key, d.resolution, d.mac)) return { outcome: 'bad_mac', reason: d.resolution.reason };
      return { outcome: 'answered', reason: d.resolution.reason };
    };
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      const j = judge();
      if (!j) return;
      if (c.mode !== 'seq' || j.outcome !== 'answered') return finish(j);
      if (!s.writableEnded) {
        // the connection goes on: the second frame, sent after the answer, is answered too
        const all = Buffer.concat(chunks);
        chunks.length = 0;
        chunks.push(all.subarray(4 + all.readUInt32BE(0)));
        s.write(second);
        s.end();
        return;
      }
      finish(j);
    });
    s.on('end', () => {
      const j = judge();
      const all = Buffer.concat(chunks);
      if (j && all.length > 4 + all.readUInt32BE(0)) finish({ outcome: 'bad_answer', reason: 'bytes after the answer' });
      else finish(j ?? { outcome: 'no_answer', reason: 'eof' });
    });
    s.on('connect', () => {
      connected = true;
      if (c.data.length) s.write(c.data);
      if (c.mode === 'end-read') s.end();
      if (c.mode === 'leave') {
        s.end();
        finish({ outcome: 'left' });
      }
    });
  });
}

/** A sender dribbling one byte of a valid frame every 400 ms: cut at 2 s with a frame_timeout answer. */
async function slowSender(sockPath: string, body: Buffer, key: Buffer): Promise<{ ok: boolean; ms: number; reason?: string }> {
  const f = frame(body);
  const s = net.createConnection(sockPath);
  const chunks: Buffer[] = [];
  s.on('error', () => undefined);
  s.on('data', (d: Buffer) => chunks.push(d));
  const ended = new Promise<void>((r) => s.once('close', () => r()));
  await new Promise<void>((r) => s.once('connect', () => r()));
  const t0 = Date.now();
  for (let i = 0; i < f.length && !s.destroyed && Date.now() - t0 < 3500; i++) {
    s.write(f.subarray(i, i + 1));
    await sleep(400);
    if (chunks.length) break;
  }
  await Promise.race([ended, sleep(3000)]);
  s.destroy();
  const ms = Date.now() - t0;
  const all = Buffer.concat(chunks);
  if (all.length < 4) return { ok: false, ms };
  const d = decodeResolution(all.subarray(4, 4 + all.readUInt32BE(0)));
  if (!d.ok || !verifyMac(key, d.resolution, d.mac)) return { ok: false, ms };
  return { ok: d.resolution.reason === 'malformed_fault', ms, reason: d.resolution.reason };
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}
/** the resolver's open fds: fd number → what it is (socket:[inode], a path, ...) */
function fds(pid: number): Map<string, string> {
  const m = new Map<string, string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      m.set(fd, fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      /* closed meanwhile */
    }
  }
  return m;
}
const socketCount = (m: Map<string, string>) => [...m.values()].filter((v) => v.startsWith('socket:')).length;

t.test(`supervisor socket survives ${FRAMES} fuzzed frames`, async (t) => {
  if (!requireKernel(t)) return;
  const cgroup = testCgroup(t, 'gs-fz');
  const op = uniqueName('gs-fz');
  const st = shortStateDir(t);
  const pol = path.join(st, 'policy.json');
  fs.writeFileSync(pol, JSON.stringify(POLICY));
  const w = await workload(t, cgroup);

  // the resolver under test: its own process; its stdout (a line per refusal)
  // is read and dropped, after its "serving" line: start-up is over (the
  // event stream's socket and the reject loop's epoll open after
  // supervisor.sock; the fds counted before fuzzing must include them)
  let stderr = '';
  const sup: ChildProcess = spawn(GENSEE_BIN, ['supervise', '--json', '--op', op, '--cgroup', cgroup, '--policy', pol, '--state-dir', st], { stdio: ['ignore', 'pipe', 'pipe'] });
  sup.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let serving = false;
  let head = '';
  sup.stdout!.on('data', (d: Buffer) => {
    if (serving) return;
    head += d.toString();
    const lines = head.split('\n');
    head = lines.pop() ?? ''; // a line not yet complete
    serving = lines.some((l) => /^\{"event":"serving"/.test(l));
  });
  let exit: { code: number | null; signal: string | null } | null = null;
  const exited = new Promise<void>((r) => sup.once('exit', (code, signal) => ((exit = { code, signal }), r())));
  t.teardown(async () => {
    if (!exit) {
      sup.kill('SIGKILL');
      await exited;
    }
    try {
      detachHooks(op);
    } catch {
      /* never attached, or detached */
    }
  });
  const pid = sup.pid!;
  const opDir = path.join(st, 'network-operations', op);
  const sockPath = path.join(opDir, 'supervisor.sock');
  await waitFor(() => {
    if (exit) throw new Error(`supervise exited: ${JSON.stringify(exit)} ${stderr}`);
    try {
      return serving && fs.existsSync(sockPath) && JSON.parse(fs.readFileSync(path.join(opDir, 'operation.json'), 'utf8')).resolver?.pid === pid;
    } catch {
      return false;
    }
  }, 15_000);
  const record = await openOperation(st, op);
  const key = await readKey(st, op);

  // the corpus: valid faults of every subject and effect kind the proto has
  const base = (port: number): Fault => networkFault(op, w.pid, w.start, 'tcp', '127.0.0.1', port);
  const valid: Buffer[] = [];
  for (const port of [8080, 8081, 443, 22, 53]) valid.push(encodeFault(base(port)));
  valid.push(encodeFault({ ...networkFault(op, w.pid, w.start, 'udp', '127.0.0.53', 53) }));
  valid.push(encodeFault({ ...networkFault(op, w.pid, w.start, 'tcp', '::1', 8443) }));
  valid.push(encodeFault({ ...base(9000), subject: { peer: { address: '10.77.0.2' } } }));
  valid.push(encodeFault({ ...base(1), effect: { file: { path: '/etc/shadow', access: 'read' } } }));
  valid.push(encodeFault({ ...base(1), effect: { syscall: { name: 'ptrace', number: 101, capability: 'CAP_SYS_PTRACE' } } }));
  valid.push(encodeFault({ ...base(1), effect: { database: { engine: 'pg', database: 'prod', statement_class: 'ddl', table: 't' } } }));
  valid.push(encodeFault({ ...base(1), effect: { promotion: { artifact: 'a', from_stage: 'dev', to_stage: 'prod' } }, observed_at_boot_ns: 123456789n, cgroup_id: 42n }));

  t.comment(`seed ${SEED} (GENSEE_FUZZ_SEED=${SEED} replays the frames); ${FRAMES} frames, ${CONCURRENCY} connections at a time, resolver pid ${pid}`);
  const fdStart = fds(pid);

  // slow senders for the whole run, in waves
  let fuzzing = true;
  const slow = { n: 0, ok: 0, maxMs: 0, minMs: Infinity };
  const slowLoops = Array.from({ length: SLOW_SENDERS }, async () => {
    while (fuzzing) {
      const r = await slowSender(sockPath, pick(valid), key);
      slow.n++;
      if (r.ok) slow.ok++;
      slow.maxMs = Math.max(slow.maxMs, r.ms);
      slow.minMs = Math.min(slow.minMs, r.ms);
    }
  });

  const outcomes = new Map<string, number>();
  const kinds = new Map<string, number>();
  const reasons = new Map<string, number>();
  const failures: string[] = [];
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const second = frame(valid[0]);
  let sent = 0;
  let conns = 0;
  let seqs = 0; // connections whose second frame is a request of its own
  let rssWarm = 0;
  let rssMax = 0;
  const warmAt = Math.min(5000, Math.floor(FRAMES / 10));
  const sampler = setInterval(() => {
    try {
      rssMax = Math.max(rssMax, rssKb(pid));
    } catch {
      /* gone: checked below */
    }
  }, 500);
  t.teardown(() => clearInterval(sampler));

  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < FRAMES) {
        const c = makeCase(valid);
        sent += c.frames;
        conns++;
        bump(kinds, c.kind);
        const r = await send(sockPath, c, key, second);
        if (c.mode === 'seq') seqs++;
        bump(outcomes, r.outcome);
        if (r.outcome === 'answered') bump(reasons, r.reason!);
        else if (r.outcome !== 'left' && failures.length < 20) failures.push(`${c.kind}/${c.mode}: ${r.outcome} ${r.reason ?? ''} (${c.data.subarray(0, 48).toString('hex')})`);
        if (!rssWarm && sent >= warmAt) rssWarm = rssKb(pid);
      }
    }),
  );
  const fuzzMs = Date.now() - t0;
  fuzzing = false;
  await Promise.all(slowLoops);
  clearInterval(sampler);

  const rate = Math.round((sent / fuzzMs) * 1000);
  t.comment(`${sent} frames on ${conns} connections in ${(fuzzMs / 1000).toFixed(1)} s: ${rate} frames/s`);
  t.comment(`cases: ${[...kinds].sort().map(([k, n]) => `${k} ${n}`).join(', ')}`);
  t.comment(`client outcomes: ${[...outcomes].map(([k, n]) => `${k} ${n}`).join(', ')}; answers: ${[...reasons].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  t.comment(`slow senders: ${slow.n}, cut with malformed_fault: ${slow.ok}, ${slow.minMs}-${slow.maxMs} ms`);
  t.ok(sent >= FRAMES, `${sent} frames sent`);
  t.same(failures, [], 'every client that waited got a decodable answer under a valid MAC');
  t.ok(slow.n >= SLOW_SENDERS && slow.ok === slow.n, `every slow sender was cut with a malformed_fault answer (${slow.ok}/${slow.n})`);
  t.ok(slow.minMs >= 1900, `...no earlier than the 2 s frame limit (${slow.minMs} ms)`);

  t.equal(exit, null, 'the resolver did not exit');
  let alive = true;
  try {
    process.kill(pid, 0);
  } catch {
    alive = false;
  }
  t.ok(alive, `the same resolver pid ${pid} is alive`);

  // a valid fault now: the policy's answer, authenticated by the client (identity and MAC)
  const good = await submitFault({ socketPath: sockPath, body: encodeFault({ ...base(8123), fault_id: 'after-fuzz' }), faultId: 'after-fuzz', key, resolver: record.resolver });
  t.equal(good.authenticated, true, `the answer to a valid fault authenticates ${good.detail ?? ''}`);
  t.match(good.resolution, { fault_id: 'after-fuzz', action: 'retry_after_lease', reason: 'lease_installed' }, 'a valid fault afterwards gets its lease');
  const del = await submitFault({ socketPath: sockPath, body: encodeFault({ ...base(443), fault_id: 'after-fuzz-443' }), faultId: 'after-fuzz-443', key, resolver: record.resolver });
  t.match(del.resolution, { action: 'delegate', delegate_to: 'egress-proxy' }, 'and a delegated one its delegate');

  // every request is recorded once: a refusal, or a fault with its resolution
  const lines = () => {
    const c = { refusal: 0, fault: 0, resolution: 0, torn: 0 } as Record<string, number>;
    for (const l of fs.readFileSync(path.join(opDir, 'faults.jsonl'), 'utf8').split('\n')) {
      if (!l) continue;
      try {
        const j = JSON.parse(l) as { kind: string; count?: number };
        c[j.kind] = (c[j.kind] ?? 0) + 1;
        // past the refusal budget a fault to be denied is counted, not written (src/resolver/budget.ts)
        if (j.kind === 'suppressed') c.suppressedCount = (c.suppressedCount ?? 0) + (j.count ?? 0);
      } catch {
        c.torn++;
      }
    }
    return c;
  };
  const expected = conns + seqs + slow.n + 2;
  const counted = await waitFor(() => {
    const c = lines();
    return c.refusal + c.fault + (c.suppressedCount ?? 0) >= expected && c;
  }, 10_000).catch(() => lines());
  t.comment(`faults.jsonl: ${Object.entries(counted).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  t.ok(counted.refusal > 0, `refusals recorded: ${counted.refusal}`);
  t.equal(counted.refusal + counted.fault + (counted.suppressedCount ?? 0), expected, 'one refusal or fault line, or a suppressed count, per request');
  t.equal(counted.resolution, counted.fault, 'every fault has its resolution');

  // bounded memory, and every connection's fd closed (the drain lasts up to 2 s)
  const rssEnd = rssKb(pid);
  rssMax = Math.max(rssMax, rssEnd);
  t.comment(`resolver RSS: ${(rssWarm / 1024).toFixed(1)} MB after warm-up (${warmAt} frames), max ${(rssMax / 1024).toFixed(1)} MB, end ${(rssEnd / 1024).toFixed(1)} MB`);
  t.ok(rssMax < 2 * rssWarm + RSS_SLACK_KB, `RSS stays under 2x warm-up + 64 MB (${rssMax} kB < ${2 * rssWarm + RSS_SLACK_KB} kB)`);
  const fdEnd = await waitFor(() => {
    const m = fds(pid);
    return socketCount(m) <= socketCount(fdStart) && m;
  }, 5000).catch(() => fds(pid));
  const added = [...fdEnd].filter(([fd, what]) => fdStart.get(fd) !== what).map(([fd, what]) => `${fd}→${what}`);
  t.comment(`resolver fds: ${fdStart.size} before, ${fdEnd.size} after${added.length ? ` (new: ${added.join(', ')})` : ''}`);
  t.ok(socketCount(fdEnd) <= socketCount(fdStart), `every connection's socket closed (${socketCount(fdEnd)} sockets open, ${socketCount(fdStart)} before)`);

  sup.kill('SIGTERM');
  await exited;
  t.same(exit, { code: 0, signal: null }, `supervise exits 0 on SIGTERM ${stderr}`);
  const v = await gensee(['verify', '--op', op, '--state-dir', st], 120_000);
  t.equal(v.code, 0, `gensee verify passes: ${v.stdout.trim().split('\n').slice(-3).join(' | ')} ${v.stderr}`);
});
