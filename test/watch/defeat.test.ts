// The watchdog's control_defeat on the real kernel, both ways:
//   - a workload under `gensee supervise` is refused a destination by the
//     eBPF hook (a real egress_denied), then the boundary is defeated out of
//     band: a lease is written straight into the pinned kernel map with
//     bpftool, bypassing the supervisor. The sampler adopts it (a generation
//     `operator_lease` by "external"), which covers nothing; the workload
//     then reaches the destination, and `gensee watch` raises control_defeat
//     from the counter evidence, naming the refusal's seq and the allow line;
//   - the same with the forged lease tagged with the policy's own generation
//     and used before the sampler re-tags it (its allow delta is then counted
//     under the policy generation, which covers the reach of granted targets
//     but not of a target whose lease nobody issued);
//   - the same deny-then-reach with the lease granted through the resolver
//     (a policy `leases` rule answering the hook's fault) raises nothing.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { encodeLeaseKey, encodeLeaseValue } from '../../src/abi';
import { pinDirFor } from '../../src/bpffs';
import { opDir } from '../../src/state/operation';
import { requireKernel, tcpServer, probe, waitFor, sleep, GENSEE_BIN } from '../helpers/kernel';
import { supervisedOp, superviseProcess, SupervisedOp, jsonlLines, LogLine } from '../helpers/supervisor';
import { Proc } from '../helpers/gensee';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [], fault_deadline_ms: 5000 };
/** a generation number no gensee record uses: the forger's own tag (the sampler re-tags it on adoption) */
const FORGED_GENERATION = 0x7e57_0000n;
/** how long watch keeps polling after the allow delta before "nothing fired" is believed */
const QUIET_MS = 4000;

type Line = LogLine;
const lines = jsonlLines;

interface Boundary extends Line {
  type: 'boundary';
  event: { kind: string; control: string; target?: string };
}

interface Attention extends Line {
  type: 'attention';
  signature: string;
  detail: string;
  evidence: number[];
  refs?: string[];
}

const events = (dir: string) => lines(path.join(dir, 'events.jsonl'));
const counters = (dir: string) => lines(path.join(dir, 'counters.jsonl'));

function denied(dir: string, target: string): Boundary | undefined {
  return events(dir).find((l): l is Boundary => l.type === 'boundary' && (l as Boundary).event.kind === 'egress_denied' && (l as Boundary).event.target === target);
}

function allowDelta(dir: string, port: number): Line | undefined {
  return counters(dir).find((l) => l.kind === 'allow' && l.source === 'ebpf' && l.address === '127.0.0.1' && l.port === port && (l.delta as number) > 0);
}

function attentions(dir: string): Attention[] {
  return events(dir).filter((l): l is Attention => l.type === 'attention');
}

function run(bin: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(bin, args, { timeout: 30_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  );
}

function hex(b: Buffer): string[] {
  return [...b].map((x) => x.toString(16).padStart(2, '0'));
}

/** `gensee watch` on the operation as its own process, reading its logs from the start; ended at teardown. */
async function startWatch(t: Test, o: SupervisedOp): Promise<Proc> {
  const agent = path.join(o.stateDir, 'agent.jsonl');
  fs.writeFileSync(agent, JSON.stringify({ type: 'progress', at: new Date().toISOString() }) + '\n');
  const w = new Proc(GENSEE_BIN, ['watch', '--op', o.op, '--state-dir', o.stateDir, '--agent-events', agent, '--from-start', '--stall-after', '1h']);
  t.teardown(() => w.end());
  await sleep(300);
  if (!w.running) throw new Error(`gensee watch exited at once: ${w.stdout}${w.stderr}`);
  return w;
}

interface Forgery {
  /** the generation the forged lease is tagged with: a number no record uses, or the policy's own (start) generation */
  tag: 'unknown' | 'policy';
  /** connect only once the sampler has adopted the lease (else at once, before its next reading, most likely) */
  afterAdoption: boolean;
}

/** deny, a lease forged into the kernel map with bpftool, reach: control_defeat naming the refusal and the allow line */
async function defeated(t: Test, prefix: string, f: Forgery): Promise<void> {
  if (!requireKernel(t)) return;
  const o = supervisedOp(t, prefix, DENY_ALL);
  await superviseProcess(t, o.args);
  const dir = opDir(o.stateDir, o.op);
  const srv = await tcpServer(t);
  const target = `127.0.0.1:${srv.port}`;

  // 1. a real refusal by the hook
  const r1 = await probe(['--cgroup', o.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(r1.results.map((x) => x.result), ['EPERM'], 'the hook refused the connect');
  t.equal(srv.accepted(), 0, 'nothing reached the listener');
  const deny = await waitFor(() => denied(dir, target), 10_000);
  t.match(deny.event, { control: 'ebpf/connect4' }, 'an egress_denied event from the connect4 hook');

  // 2. the watchdog, seeing the refusal
  const w = await startWatch(t, o);

  // 3. the boundary defeated out of band: bpftool writes a lease into the pinned map
  const policyGen = counters(dir).find((l) => l.kind === 'generation' && l.reason === 'start')?.generation;
  t.type(policyGen, 'number', 'the policy generation is in counters.jsonl');
  const tag = f.tag === 'policy' ? BigInt(policyGen as number) : FORGED_GENERATION;
  const key = encodeLeaseKey({ family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: srv.port });
  const value = encodeLeaseValue({ generation: tag, expiresBootNs: 0n, usesLeft: null });
  const map = path.join(pinDirFor(o.op), 'gs_leases_v1');
  const b = await run('bpftool', ['map', 'update', 'pinned', map, 'key', 'hex', ...hex(key), 'value', 'hex', ...hex(value)]);
  t.equal(b.code, 0, `bpftool wrote the lease ${b.stderr}`);
  const adoption = () => counters(dir).find((l) => l.kind === 'generation' && l.reason === 'operator_lease' && l.port === srv.port);
  if (f.afterAdoption) await waitFor(adoption, 10_000, 50);

  // 4. the workload reaches the destination
  const r2 = await probe(['--cgroup', o.cgroup, 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  t.same(r2.results.map((x) => x.result), ['ok'], 'the forged lease lets the connect through');
  await waitFor(() => srv.accepted() >= 1, 5000);
  t.equal(srv.accepted(), 1, 'the connection reached the listener');
  const allow = await waitFor(() => allowDelta(dir, srv.port), 5000, 50);
  // the sampler adopts it: an operator_lease generation by "external" (nobody issued it)
  const adopted = await waitFor(adoption, 10_000, 50);
  t.equal(adopted.by, 'external', 'adopted from the kernel map as by: "external"');
  if (f.afterAdoption) t.equal(allow.generation, adopted.generation, 'the allow delta is counted under the adopted generation');
  else t.ok([adopted.generation, Number(tag)].includes(allow.generation), `the allow delta is counted under the forged tag or the adopted generation (${String(allow.generation)})`);
  const faultLines = lines(path.join(dir, 'faults.jsonl'));
  t.notOk(
    faultLines.some((l) => (l.kind === 'resolution' && (l.resolution as { action?: string }).action !== 'deny') || l.kind === 'lease_added'),
    'no resolution or operator command issued a lease',
  );

  // 5. control_defeat, naming the refusal and the allow line
  const att = await waitFor(() => attentions(dir).find((a) => a.signature === 'control_defeat'), 10_000, 50);
  t.ok(att.evidence.includes(deny.seq), `the evidence names the egress_denied event (seq ${deny.seq})`);
  t.ok(att.refs?.includes(`events:${deny.seq}`), 'the refs name the event');
  t.ok(att.refs?.includes(`counters:${allow.seq}`), `the refs name the allow line (counters:${allow.seq})`);
  t.match(att.detail, target, 'the detail names the target');
  t.ok(att.seq > deny.seq, 'recorded after the refusal');
  await waitFor(() => /E_ATTENTION: control_defeat: /.test(w.stderr), 5000);
  t.match(w.stderr, new RegExp(`E_ATTENTION: control_defeat: .*${target}.*evidence events ${deny.seq}.*counters:${allow.seq}`), 'an error line on stderr names both');
  t.notMatch(w.stdout, /control_defeat/, 'attention is not a nudge on stdout');
  t.equal(attentions(dir).length, 1, 'raised once');

  const v = await run(GENSEE_BIN, ['verify', '--op', o.op, '--state-dir', o.stateDir]);
  t.equal(v.code, 0, `the logs verify with the attention line ${v.stdout}${v.stderr}`);
}

t.test('a lease written into the kernel map behind the supervisor: deny, then reach, is control_defeat', (t) =>
  defeated(t, 'gs-wdd', { tag: 'unknown', afterAdoption: true }),
);

t.test('a forged lease tagged with the policy generation, used before the sampler adopts it, is control_defeat', (t) =>
  defeated(t, 'gs-wdp', { tag: 'policy', afterAdoption: false }),
);

t.test('the same deny-then-reach with the lease granted through the resolver fires nothing', async (t) => {
  if (!requireKernel(t)) return;
  const srv = await tcpServer(t);
  const target = `127.0.0.1:${srv.port}`;
  const policy = {
    ...DENY_ALL,
    leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(srv.port) }, ttl_s: 60, max_uses: 0 }],
  };
  const o = supervisedOp(t, 'gs-wdn', policy);
  await superviseProcess(t, o.args);
  const dir = opDir(o.stateDir, o.op);
  const w = await startWatch(t, o);

  // the hook refuses the first connect (egress_denied), the resolver answers its fault with a lease, a retry gets through
  const r = await probe(['--cgroup', o.cgroup, '--repeat', '80', '--interval', '25', '--until-ok', 'connect', 'tcp', '127.0.0.1', String(srv.port)]);
  const results = r.results.map((x) => x.result);
  t.equal(results[0], 'EPERM', 'the first connect was refused by the hook');
  t.equal(results[results.length - 1], 'ok', 'a retry got through once the resolver leased it');
  const deny = await waitFor(() => denied(dir, target), 10_000);
  t.match(deny.event, { control: 'ebpf/connect4' }, 'a real egress_denied event');
  const granted = lines(path.join(dir, 'faults.jsonl'))
    .map((l) => l.resolution as { action?: string; lease?: { generation?: number } } | undefined)
    .find((r) => r?.action === 'retry_after_lease');
  t.type(granted?.lease?.generation, 'number', 'the resolver granted the lease');
  const allow = await waitFor(() => allowDelta(dir, srv.port), 5000, 50);
  t.equal(allow.generation, granted?.lease?.generation, `the reach is in counter evidence under the lease's generation (counters:${allow.seq})`);
  t.ok(srv.accepted() >= 1, 'the connection reached the listener');

  await sleep(QUIET_MS);
  t.ok(w.running, 'watch is still following the operation');
  t.same(attentions(dir), [], 'no attention line in events.jsonl');
  t.notMatch(w.stderr, /E_ATTENTION/, 'no attention on stderr');
  t.notMatch(w.stdout, /control_defeat|"type":"nudge"/, 'no nudge on stdout');
});
