// The JavaScript on one fault's path, piece by piece, in this process (issue
// 31's profile): decode + validate the frame, the fault line's JSON, the
// resolution's MAC input and HMAC, the answer's encoding, one chained line's
// JSON and its SHA-256. No kernel, no socket: what each step costs the event
// loop per fault, in µs (median of rounds). A supervisor cannot be run under
// --cpu-prof here (the profiler's SIGPROF makes the BPF verifier return
// EAGAIN at start-up), so the pieces are timed one by one.
//   node dist/bench/faultpath.js [ITERATIONS]
import { createHmac } from 'node:crypto';
import { decodeFault, encodeFault, encodeResolution } from '../src/protocol/codec';
import { encodeFrame } from '../src/protocol/framing';
import { faultToJson, resolutionToJson } from '../src/protocol/json';
import { MacKey, macInput } from '../src/protocol/mac';
import { sha256Hex } from '../src/evidence/chain';
import type { Resolution } from '../src/protocol/types';
import { benchFault, median } from './util';

function time(n: number, fn: (i: number) => unknown): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

function main(): void {
  const n = Number(process.argv[2] ?? 20000);
  const key = Buffer.alloc(32, 7);
  const macKey = new MacKey(key);
  const bodies = Array.from({ length: 256 }, (_, i) => encodeFault(benchFault('gs-op-bench', 4242, 123456, `b-${i}`, `127.0.${i}.1`, 1000 + i)));
  const fault = decodeFault(bodies[0]);
  if (!fault.ok) throw new Error(fault.detail);
  const f = fault.fault;
  const r: Resolution = {
    fault_id: f.fault_id,
    action: 'retry_after_lease',
    reason: 'lease_installed',
    lease: { generation: 3, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 1000, expires_at_boot_ns: 123456789012345n, max_uses: 0 },
  };
  const prev = '0'.repeat(64);
  const line = (fields: object, seq: number) => `{"seq":${seq},"at":${JSON.stringify(new Date().toISOString())},${JSON.stringify(fields).slice(1, -1)},"prev":"${prev}"}`;
  const faultLine = line({ kind: 'fault', fault_id: f.fault_id, via: 'socket', peer: { pid: 1, uid: 0, gid: 0 }, fault: faultToJson(f) }, 1);
  const rows: Record<string, number[]> = {};
  const steps: [string, (i: number) => unknown][] = [
    ['decode + validate (decodeFault)', (i) => decodeFault(bodies[i & 255])],
    ['fault line JSON (faultToJson + line)', (i) => line({ kind: 'fault', fault_id: f.fault_id, via: 'socket', peer: { pid: 1, uid: 0, gid: i }, fault: faultToJson(f) }, i)],
    ['intent line JSON', (i) => line({ kind: 'lease_intent', fault_id: f.fault_id, lease: { generation: 3, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: i & 0xffff, ttl_s: 300, max_uses: 0 } }, i)],
    ['resolution line JSON', (i) => line({ kind: 'resolution', fault_id: f.fault_id, resolution: resolutionToJson(r) }, i)],
    ['SHA-256 of one line (hex)', () => sha256Hex(faultLine)],
    ['MAC input', () => macInput(r)],
    ['HMAC-SHA256, an HMAC object (reference)', () => createHmac('sha256', key).update(macInput(r)).digest()],
    ['HMAC-SHA256 incl. input (MacKey, resolver)', () => macKey.mac(r)],
    ['answer encode (encodeResolution + frame)', () => encodeFrame(encodeResolution(r, key))],
  ];
  for (let round = 0; round < 5; round++) for (const [name, fn] of steps) (rows[name] ??= []).push(time(n, fn));
  let total = 0;
  for (const [name] of steps) {
    const m = median(rows[name]);
    // three lines are hashed per granted fault (fault, intent, resolution)
    if (!name.endsWith('(reference)')) total += name.startsWith('SHA') ? 3 * m : m;
    process.stdout.write(`${name.padEnd(44)} ${m.toFixed(2).padStart(7)} us\n`);
  }
  process.stdout.write(`${'sum per granted fault (3 hashes)'.padEnd(44)} ${total.toFixed(2).padStart(7)} us\n`);
}

main();
