// Warm-up of the resolver's pure hot path, run once at supervisor start
// before the first real fault (issue 15: the fresh process's tail). A fresh
// V8 runs the first faults in the interpreter, allocates feedback vectors
// lazily and only then queues TurboFan jobs, which compete for the CPU
// with the workload's first calls; this drives the same functions with
// throwaway inputs of the real shapes so that work happens before the
// workload starts. Pure functions only: a sample fault frame decoded, its
// log lines built and hashed, a resolution MAC'ed under a random key,
// encoded and framed. Never the evidence logs, the kernel maps, the
// operation's state or its key. 300 rounds by default (30-80 ms on the
// 2-core bench machine; more rounds bought nothing measurable there).
// GENSEE_WARMUP=0 turns it off (the baseline of bench/warmup.ts),
// GENSEE_WARMUP=N sets the rounds.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../evidence/chain';
import { decodeFault, encodeFault, encodeResolution } from '../protocol/codec';
import { encodeFrame } from '../protocol/framing';
import { faultToJson, resolutionToJson } from '../protocol/json';
import { computeMac } from '../protocol/mac';
import type { Fault, Resolution } from '../protocol/types';

let warmed = false;

/** GENSEE_WARMUP: 0 = off, N = rounds (the bench's sweep); unset: the default */
function warmRounds(): number {
  const v = process.env.GENSEE_WARMUP;
  return v !== undefined && /^[0-9]{1,6}$/.test(v) ? Number(v) : 300;
}

/**
 * Drive the fault path's pure functions `rounds` times (once per process;
 * later calls return at once). Returns the milliseconds it took (0 when
 * skipped).
 */
export function warmResolver(rounds = warmRounds()): number {
  if (warmed || rounds <= 0) return 0;
  warmed = true;
  const t0 = process.hrtime.bigint();
  const key = randomBytes(32);
  // built as a real fault is: encoded by a client, decoded here
  const frames: Uint8Array[] = [];
  const now = process.hrtime.bigint();
  for (let i = 0; i < 64; i++) {
    const f: Fault = {
      schema: 2,
      operation_id: 'gensee-warmup',
      fault_id: `warmup-${i}`,
      subject: { process: { pid: 100000 + i, start_time_ticks: 2000000 + i } },
      effect: { network: { family: 'ipv4', protocol: 'tcp', address: `192.0.2.${i + 1}`, port: 20000 + i } },
      source: 'seccomp_notify',
      // a real one's magnitude (past 2^32: the varint decoders' 64-bit path)
      observed_at_boot_ns: now + BigInt(i),
      cgroup_id: 4242n,
    };
    // in the form the addon hands a request's body over (node::Buffer::New:
    // a Uint8Array given Buffer.prototype), not a pooled FastBuffer: the
    // decoder trained on another map deoptimizes at the first real fault
    const bytes = encodeFault(f);
    const body = new Uint8Array(new ArrayBuffer(bytes.length));
    body.set(bytes);
    frames.push(Object.setPrototypeOf(body, Buffer.prototype) as Buffer);
  }
  let prev = '0'.repeat(64);
  let sink = 0;
  for (let n = 0; n < rounds; n++) {
    const d = decodeFault(frames[n & 63]);
    if (!d.ok) throw new Error(`warm-up: sample fault refused: ${d.detail}`);
    const fault = d.fault;
    const e = fault.effect.network!;
    // the fault line and the resolution line, as the log builds them
    const at = new Date().toISOString();
    const body = JSON.stringify({ kind: 'fault', fault_id: fault.fault_id, via: 'socket', peer: { pid: 1, uid: 0, gid: 0 }, fault: faultToJson(fault) }).slice(1, -1);
    const line = `{"seq":${2 * n + 1},"at":${JSON.stringify(at)},${body},"prev":"${prev}"}`;
    prev = sha256Hex(line);
    const r: Resolution = {
      fault_id: fault.fault_id,
      action: 'retry_after_lease',
      reason: 'lease_installed',
      lease: { generation: 1 + (n & 7), family: e.family, protocol: e.protocol, address: e.address, port: e.port, expires_at_boot_ns: now + 600000000000n + BigInt(n), max_uses: 0 },
    };
    const rbody = JSON.stringify({ kind: 'resolution', fault_id: r.fault_id, resolution: resolutionToJson(r) }).slice(1, -1);
    prev = sha256Hex(`{"seq":${2 * n + 2},"at":${JSON.stringify(at)},${rbody},"prev":"${prev}"}`);
    // the answer: MAC, encoding, frame; the live --json line
    const frame = encodeFrame(encodeResolution(r, computeMac(key, r)));
    sink += frame.length + JSON.stringify({ event: 'resolved', fault: faultToJson(fault), resolution: resolutionToJson(r), micros: n }).length;
  }
  if (sink === 0) throw new Error('warm-up: nothing encoded');
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
