// `gensee stop`: a supervised operation whose supervisor was killed -9 shows
// as resolver_gone in status and ls; stop kills its cgroup (the workload
// dies), removes the cgroup, the hooks and the pins, records the stop, and
// the evidence still verifies. A second stop says so; a live supervisor is
// ended by pid and start time.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { requireKernel, T } from '../helpers/kernel';
import { shortStateDir, supervisedOp, superviseProcess, workload } from '../helpers/supervisor';
import { gensee } from '../helpers/gensee';
import { pinDirFor } from '../../src/bpffs';
import { cgroupId } from '../../src/cgroup';
import { ChainedLog } from '../../src/evidence/chain';

const DENY_ALL = { schema: 1, grants: [], leases: [], delegate: [] };

/** bpf links (any program) attached to the cgroup with this id */
function linksOn(id: bigint): number {
  const links = JSON.parse(execFileSync('bpftool', ['-j', 'link', 'show']).toString()) as { cgroup_id?: number }[];
  return links.filter((l) => l.cgroup_id !== undefined && BigInt(l.cgroup_id) === id).length;
}

function record(st: string, op: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(st, 'network-operations', op, 'operation.json'), 'utf8')) as Record<string, unknown>;
}

/** What stop ends: a deny-all `gensee supervise` and a workload in its cgroup, with the signal the workload dies of. */
async function supervisedWorkload(t: T, prefix: string) {
  const { cgroup: cg, op, stateDir: st, args } = supervisedOp(t, prefix, DENY_ALL);
  const sup = await superviseProcess(t, args);
  const w = await workload(t, cg);
  const wExit = new Promise<NodeJS.Signals | null>((r) => w.child.once('exit', (_c, sig) => r(sig)));
  return { cg, op, st, sup, wExit };
}

t.test('supervisor killed -9: resolver_gone, then stop ends the operation', async (t) => {
  if (!requireKernel(t)) return;
  const { cg, op, st, sup, wExit } = await supervisedWorkload(t, 'gs-stop');
  const id = cgroupId(cg);
  t.ok(linksOn(id) >= 4, 'the hooks are on the cgroup (connect4/6, sendmsg4/6, …)');

  sup.kill('SIGKILL');
  t.equal((await sup.exited).signal, 'SIGKILL', 'supervisor killed -9');

  const s = await gensee(['status', '--op', op, '--state-dir', st, '--json']);
  t.equal(s.code, 0, s.stderr);
  const status = JSON.parse(s.stdout) as { condition: string; hint: string; resolver_alive: boolean; hooks_attached: boolean; operation: { state: string } };
  t.match(status, { condition: 'resolver_gone', resolver_alive: false, hooks_attached: true, operation: { state: 'active' } }, 'status --json: resolver_gone, hooks still attached');
  t.equal(status.hint, `gensee stop --op ${op} --state-dir ${st}`, 'with the command that ends it');
  const text = await gensee(['status', '--op', op, '--state-dir', st]);
  t.match(text.stdout, new RegExp(`operation ${op}: resolver_gone \\(recorded active\\)`), 'status text: resolver_gone');
  t.match(text.stdout, new RegExp(`to end it: gensee stop --op ${op} --state-dir ${st}`), 'status text: the hint');

  const l = await gensee(['ls', '--state-dir', st, '--json']);
  t.equal(l.code, 0, l.stderr);
  const rows = (JSON.parse(l.stdout) as { operations: { id: string; condition: string; hint: string | null; hooks_attached: boolean }[] }).operations;
  t.match(rows, [{ id: op, condition: 'resolver_gone', hooks_attached: true, hint: `gensee stop --op ${op} --state-dir ${st}` }], 'ls --json: resolver_gone');
  const lt = await gensee(['ls', '--state-dir', st]);
  t.match(lt.stdout, new RegExp(`${op}\\s+resolver_gone`), 'ls text: resolver_gone');

  t.ok(fs.existsSync(cg) && fs.existsSync(pinDirFor(op)), 'before stop: cgroup and pins');
  // what a kill between a fault's intent and its resolution leaves behind
  const log = await ChainedLog.open(path.join(st, 'network-operations', op, 'faults.jsonl'));
  await log.append({ kind: 'fault', fault_id: 'gs-open-1', via: 'socket', peer: null, fault: {} });
  await log.append({ kind: 'lease_intent', fault_id: 'gs-open-1', lease: { generation: 1, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 9, ttl_s: 30, max_uses: 0 } });
  await log.close();
  const open = await gensee(['verify', '--op', op, '--state-dir', st]);
  t.equal(open.code, 1, 'before stop, the open fault fails verify');
  const stop = await gensee(['stop', '--op', op, '--state-dir', st, '--json']);
  t.equal(stop.code, 0, stop.stderr);
  t.match(JSON.parse(stop.stdout), { event: 'stopped', op, found: 'resolver_gone', cgroup_removed: true, hooks_detached: true, faults_abandoned: 1 }, 'stop --json: the open fault closed as abandoned');
  t.equal(await wExit, 'SIGKILL', 'the workload process was killed');
  t.notOk(fs.existsSync(cg), 'the cgroup is removed');
  t.notOk(fs.existsSync(pinDirFor(op)), 'the pins are removed');
  t.equal(linksOn(id), 0, 'no link is left on the cgroup');
  const rec = record(st, op);
  t.match(rec, { state: 'stopped', resolver: null, stopped: { by: 'gensee_stop', found: 'resolver_gone' } }, 'the stop is recorded');
  t.ok(Date.parse((rec.stopped as { at: string }).at) > 0);

  const v = await gensee(['verify', '--op', op, '--state-dir', st]);
  t.equal(v.code, 0, `verify passes: ${v.stdout}${v.stderr}`);
  t.match(v.stdout, /1 fault\(s\) abandoned by a resolver that died/, 'and says how many faults were abandoned');
  t.match(fs.readFileSync(path.join(st, 'network-operations', op, 'faults.jsonl'), 'utf8'), /"fault_id":"gs-open-1","resolution":\{"fault_id":"gs-open-1","action":"deny","reason":"abandoned"\},"abandoned":"resolver_died"/, 'the resolution line names the cause');

  const again = await gensee(['stop', '--op', op, '--state-dir', st]);
  t.equal(again.code, 0, 'a second stop exits 0');
  t.match(again.stdout, /already stopped/);
  t.same(record(st, op), rec, 'and changes nothing');
  const after = await gensee(['status', '--op', op, '--state-dir', st, '--json']);
  t.match(JSON.parse(after.stdout), { condition: 'stopped', hint: null, hooks_attached: false });
});

t.test('stop ends a live supervisor (pid and start time) after the workload', async (t) => {
  if (!requireKernel(t)) return;
  const { cg, op, st, sup, wExit } = await supervisedWorkload(t, 'gs-stop2');
  const s = await gensee(['status', '--op', op, '--state-dir', st, '--json']);
  t.match(JSON.parse(s.stdout), { condition: 'active', hint: null, resolver_alive: true });

  const stop = await gensee(['stop', '--op', op, '--state-dir', st]);
  t.equal(stop.code, 0, stop.stderr);
  t.match(stop.stdout, new RegExp(`stopped operation ${op}: cgroup .* killed and removed; resolver pid ${sup.pid} terminated; hooks detached and unpinned`));
  t.equal(await wExit, 'SIGKILL', 'the workload died');
  t.same(await sup.exited, { code: 0, signal: null }, 'the supervisor stopped cleanly on SIGTERM');
  t.match(record(st, op), { state: 'stopped', resolver: null, stopped: { found: 'resolver_running' } });
  t.notOk(fs.existsSync(pinDirFor(op)));
  t.notOk(fs.existsSync(cg));
  const v = await gensee(['verify', '--op', op, '--state-dir', st]);
  t.equal(v.code, 0, `verify passes: ${v.stdout}${v.stderr}`);
});

t.test('stop: bad input changes nothing', async (t) => {
  const st = shortStateDir(t);
  const unknown = await gensee(['stop', '--op', 'no-such-op', '--state-dir', st]);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /E_UNKNOWN_OP/);
  for (const argv of [['stop'], ['stop', '--op', 'a b'], ['stop', '--op', 'x', 'extra'], ['stop', '--op', 'x', '--bogus']]) {
    const r = await gensee([...argv, '--state-dir', st]);
    t.equal(r.code, 2, argv.join(' '));
    t.match(r.stderr, /^gensee: E_(USAGE|BAD_OP_ID): /, r.stderr.trim());
  }
  t.same(fs.readdirSync(st), [], 'nothing written');
});
