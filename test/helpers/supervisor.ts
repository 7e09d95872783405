// Test fixtures: an in-process Supervisor on a fresh cgroup and state dir, or
// `gensee supervise` as its own process; and a workload process parked inside
// the cgroup to be the fault's subject.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, ChildProcess } from 'node:child_process';
import { Supervisor, SupervisorOptions } from '../../src/supervisor';
import { parsePolicy, policyHash } from '../../src/protocol/json';
import { readStartTimeTicks } from '../../src/resolver/subject';
import { encodeFault } from '../../src/protocol/codec';
import { submitFault, SubmitResult } from '../../src/resolver/client';
import { readKey } from '../../src/state/operation';
import type { Fault } from '../../src/protocol/types';
import { testCgroup, uniqueName, waitFor, detachAtTeardown, GENSEE_BIN } from './kernel';
import { Proc } from './gensee';

export const POLICY = {
  schema: 1,
  grants: [{ network: { protocol: 'udp', address: '127.0.0.53', port: 53 } }],
  leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '1024-65535' }, ttl_s: 30, max_uses: 0 }],
  delegate: [{ network: { protocol: 'tcp', cidr: '0.0.0.0/0', ports: '443' }, to: 'egress-proxy' }],
  fault_deadline_ms: 5000,
};

export interface TestSup {
  sup: Supervisor;
  op: string;
  cgroup: string;
  stateDir: string;
  key: Buffer;
  submit(f: Fault): Promise<SubmitResult>;
}

interface TapLike {
  teardown(fn: () => unknown): void;
  fail(msg: string): void;
  end(): void;
}

/** A short state dir (unix socket paths are limited to 107 bytes), removed at teardown. */
export function shortStateDir(t: TapLike): string {
  const d = fs.mkdtempSync('/tmp/gs-st-');
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** An in-process Supervisor on a fresh cgroup and state dir; `more` sets the operation's owner or peers. */
export async function startTestSupervisor(
  t: TapLike,
  policy: object = POLICY,
  prefix = 'gs-rs',
  more: Pick<SupervisorOptions, 'ownerUid' | 'peers' | 'audit'> = {},
): Promise<TestSup> {
  const cgroup = testCgroup(t, prefix);
  const op = uniqueName(prefix);
  const stateDir = shortStateDir(t);
  const text = JSON.stringify(policy);
  let sup: Supervisor | null = null;
  detachAtTeardown(t, op);
  t.teardown(async () => {
    if (sup) await sup.stop();
  });
  sup = await Supervisor.start({ ...more, stateDir, op, cgroup, policy: { policy: parsePolicy(policy), hash: policyHash(text) }, onError: () => undefined });
  const key = await readKey(stateDir, op);
  const started = sup;
  return {
    sup: started,
    op,
    cgroup,
    stateDir,
    key,
    submit: (f) =>
      submitFault({ socketPath: started.socketPath, body: encodeFault(f), faultId: f.fault_id, key, resolver: started.record.resolver }),
  };
}

/** What `gensee supervise` is given: a fresh cgroup, op id, and state dir holding policy.json. */
export interface SupervisedOp {
  cgroup: string;
  op: string;
  stateDir: string;
  policyFile: string;
  /** --op, --cgroup, --policy and --state-dir for `gensee supervise` */
  args: string[];
}

/** A fresh operation for `gensee supervise` to run with `policy`; its hooks are detached at teardown. */
export function supervisedOp(t: TapLike, prefix: string, policy: object = POLICY): SupervisedOp {
  const cgroup = testCgroup(t, prefix);
  const op = uniqueName(prefix);
  const stateDir = shortStateDir(t);
  detachAtTeardown(t, op);
  const policyFile = path.join(stateDir, 'policy.json');
  fs.writeFileSync(policyFile, JSON.stringify(policy));
  return { cgroup, op, stateDir, policyFile, args: ['--op', op, '--cgroup', cgroup, '--policy', policyFile, '--state-dir', stateDir] };
}

/**
 * `gensee supervise ARGS` as its own process, returned once it says it serves
 * (the "supervising" line, or with --json the "serving" event); killed at
 * teardown if still running.
 */
export async function superviseProcess(t: TapLike, args: string[], timeoutMs = 15_000): Promise<Proc> {
  const proc = new Proc(GENSEE_BIN, ['supervise', ...args]);
  t.teardown(() => proc.end());
  await waitFor(() => /^gensee: supervising |"event":"serving"/m.test(proc.stdout) || !proc.running, timeoutMs);
  if (!proc.running) throw new Error(`gensee supervise exited before serving: ${proc.stdout}${proc.stderr}`);
  return proc;
}

/** A process parked inside the cgroup (sleep), killed at teardown. */
export async function workload(t: TapLike, cgroup: string): Promise<{ pid: number; start: number; child: ChildProcess }> {
  const child = spawn('sh', ['-c', `echo $$ > "${path.join(cgroup, 'cgroup.procs')}" && exec sleep 300`], { stdio: 'ignore' });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const pid = child.pid!;
  await waitFor(() => fs.readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8').split('\n').includes(String(pid)) && readStartTimeTicks(pid) !== null);
  return { pid, start: readStartTimeTicks(pid)!, child };
}

let n = 0;
export function networkFault(op: string, pid: number, start: number, proto: 'tcp' | 'udp', address: string, port: number): Fault {
  return {
    schema: 2,
    operation_id: op,
    fault_id: `t-${process.pid}-${++n}`,
    subject: { process: { pid, start_time_ticks: start } },
    effect: { network: { family: address.includes(':') ? 'ipv6' : 'ipv4', protocol: proto, address, port } },
    source: 'manual',
    observed_at_boot_ns: 0n,
    cgroup_id: 0n,
  };
}

export function faultLines(stateDir: string, op: string): Record<string, unknown>[] {
  return jsonlLines(path.join(stateDir, 'network-operations', op, 'faults.jsonl'));
}

/** A log line as the tests read it back: seq, and the record's own fields. */
export type LogLine = Record<string, unknown> & { seq: number; type?: string; kind?: string };

/** The complete lines of a JSONL log (none while it does not exist; a line still being written is left out). */
export function jsonlLines(file: string): LogLine[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => JSON.parse(l) as LogLine);
}

/**
 * A control.sock lease_add of tcp 127.0.0.1:4444, asked from a process
 * inside the operation's cgroup: what it printed, "accepted" or
 * "refused <message>".
 */
export function controlRequestFromCgroup(s: TestSup, socketPath: string): Promise<string> {
  const script = `
const { controlRequest } = require(${JSON.stringify(path.resolve(__dirname, '../../src/envelope/control.js'))});
controlRequest({ socketPath: ${JSON.stringify(socketPath)}, key: Buffer.from(${JSON.stringify(s.key.toString('hex'))}, 'hex'), resolver: ${JSON.stringify(s.sup.record.resolver)},
  request: { schema: 1, command: 'lease_add', protocol: 'tcp', address: '127.0.0.1', port: 4444, ttl_ms: 0, max_uses: 0 } })
  .then(() => console.log('accepted'), (e) => console.log('refused ' + e.message));`;
  return new Promise<string>((resolve) => {
    const c = spawn('sh', ['-c', `echo $$ > "${path.join(s.cgroup, 'cgroup.procs')}" && exec node -e "$0"`, script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let o = '';
    c.stdout.on('data', (b: Buffer) => (o += b.toString()));
    c.on('close', () => resolve(o.trim()));
  });
}
