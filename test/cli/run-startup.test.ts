// What `gensee run` pays at start and at its end (issue 31): no wait that
// is not needed, and nothing given up for the time saved. The evidence's
// first and last lines are durable without waiting out a group window; the
// last hook events of an ended workload are resolved before the summary
// counts them; modules a plain run does not use are not loaded.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { ChainedLog } from '../../src/evidence/chain';
import { findCgroup2Mount } from '../../src/cgroup';
import { attachHooksAsync, detachHooks, hooksAttached } from '../../src/dataplane';
import { pinDirFor } from '../../src/bpffs';
import { requireKernel, uniqueName, testCgroup, GENSEE_BIN, PROBE, timeScaled } from '../helpers/kernel';
import { shortStateDir, faultLines, jsonlLines } from '../helpers/supervisor';

/** resolves true if p settles within ms, false otherwise */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    p.then(
      () => (clearTimeout(timer), resolve(true)),
      () => (clearTimeout(timer), resolve(true)),
    );
  });
}

t.test('ChainedLog.flushSync: durable at once, whatever the group window', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'counters.jsonl');
  // a window far longer than the test's deadline: only flushSync can make the line durable in time
  const log = await ChainedLog.open(file, { groupWindowMs: 600_000 });
  t.teardown(() => log.closeSync());
  const ticket = log.appendTicket({ kind: 'sampler', event: 'start' }, { sync: true, defer: false });
  t.notOk(await within(log.whenDurable(ticket), 200), 'without flushSync the line waits for the window');
  log.flushSync();
  t.ok(await within(log.whenDurable(ticket), timeScaled(5000)), 'after flushSync the line is durable');
  t.match(fs.readFileSync(file, 'utf8'), /"kind":"sampler","event":"start"/, 'and in the file');
  // a closed log refuses, as appendTicket does, instead of pretending
  log.closeSync();
  t.throws(() => log.flushSync(), { code: 'E_STATE' }, 'a closed log refuses flushSync');
});

/** node [-r PRELOAD] bin/gensee ARGS; resolves with its exit code, stdout and stderr */
function gensee(args: string[], env: NodeJS.ProcessEnv = {}, node: string[] = []): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [...node, GENSEE_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => resolve({ code, out, err }));
  });
}

t.test('gensee run: an attach started before Supervisor.start is detached when Supervisor.start fails', async (t) => {
  if (!requireKernel(t)) return;
  // the attach starts once the record and the cgroup exist; Supervisor.start
  // then refuses a socket path over 107 bytes before it takes the attach over
  const op = uniqueName('gs-early');
  const base = shortStateDir(t);
  const st = path.join(base, 'x'.repeat(Math.max(1, 108 - `${base}/network-operations/${op}/supervisor.sock`.length)));
  fs.mkdirSync(st, { mode: 0o700 });
  const r = await gensee(['run', '--state-dir', st, '--op', op, '--no-dns', '--', '/bin/true']);
  t.equal(r.code, 125, 'gensee run fails as its own failure (125)');
  t.match(r.err, /socket path .* bytes; unix sockets allow 107/, 'because of the socket path, in Supervisor.start');
  t.notOk(fs.existsSync(pinDirFor(op)), 'the hooks its attach pinned are detached: no pin dir');
  t.notOk(fs.existsSync(path.join(findCgroup2Mount(), process.env.GENSEE_CGROUP_PARENT ?? 'gensee', op)), 'and the cgroup is removed');
});

t.test('gensee run -- true loads neither run fault, prom-client, ws, the control code, DNS nor the report', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const dir = t.testdir({});
  const list = path.join(dir, 'modules.txt');
  // the process's own module cache at its exit: what it loaded, not what a test guesses
  const preload = path.join(dir, 'list-modules.js');
  fs.writeFileSync(preload, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join('\\n')));\n`);
  const r = await gensee(['run', '--state-dir', st, '--op', uniqueName('gs-lazy'), '--no-dns', '--', '/bin/true'], {}, ['-r', preload]);
  t.equal(r.code, 0, `gensee run -- true exits 0 (${r.err.trim().split('\n').pop()})`);
  const mods = fs.readFileSync(list, 'utf8').split('\n');
  t.ok(mods.some((m) => m.endsWith(path.join('dist', 'src', 'cli', 'run.js'))), 'the list is real: run.js is in it');
  t.ok(mods.some((m) => m.endsWith(path.join('dist', 'src', 'supervisor.js'))), 'and so is the supervisor');
  t.notOk(mods.some((m) => m.endsWith(path.join('dist', 'src', 'cli', 'runfault.js'))), 'run fault is not loaded');
  t.notOk(mods.some((m) => m.includes(`${path.sep}prom-client${path.sep}`)), 'prom-client is not loaded');
  // loaded at first use: a WebSocket subscriber, a control request, DNS served, --report
  t.notOk(mods.some((m) => m.includes(`${path.sep}node_modules${path.sep}ws${path.sep}`)), 'ws is not loaded (no subscriber)');
  t.notOk(mods.some((m) => m.endsWith(path.join('dist', 'src', 'gen', 'control.js'))), 'the control.proto code is not loaded (no control request)');
  t.notOk(mods.some((m) => m.includes(path.join('dist', 'src', 'dns') + path.sep)), 'the DNS stub\'s code is not loaded (--no-dns)');
  t.notOk(mods.some((m) => m.endsWith(path.join('dist', 'src', 'report', 'report.js'))), 'the report is not loaded (no --report)');

  // `gensee run fault` still finds its module
  const f = await gensee(['run', 'fault']);
  t.equal(f.code, 2, 'gensee run fault without its options is a usage error');
  t.match(f.err, /--socket PATH and --fault FILE are required/, 'told by run fault\'s own module');
});

t.test('an ended workload\'s last hook refusals are resolved and counted when gensee run exits', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  const op = uniqueName('gs-drain');
  const pol = path.join(st, 'policy.json');
  // io_uring allowed: its connect never meets the seccomp pause, only the hook, which refuses it
  fs.writeFileSync(pol, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [], io_uring: true }));
  // distinct ports: each refusal is its own ring event (the ring is rate-limited per destination)
  const n = 12;
  const base = 41000 + (process.pid % 1000) * 16;
  const script = `for i in $(seq 1 ${n}); do "$0" uring-connect tcp 127.0.0.1 $((${base} + i)) || exit 1; done`;
  const out = path.join(st, 'run.jsonl');
  const r = await gensee(['run', '--state-dir', st, '--op', op, '--policy', pol, '--no-dns', '--json-out', out, '--', '/bin/sh', '-c', script, PROBE]);
  t.equal(r.code, 0, `the workload ran (${r.err.trim().split('\n').pop()})`);
  t.equal(r.out.split('\n').filter((l) => l.includes('"EPERM"')).length, n, `${n} io_uring connects refused by the hook`);
  // read at once, as a caller of gensee run would: no waiting for lines to appear
  const summary = jsonlLines(out).find((l) => l.event === 'summary') as unknown as { refused_list: { control: string; count: number }[] } | undefined;
  t.ok(summary, 'the summary is written');
  const hookRefused = (summary?.refused_list ?? []).filter((x) => x.control === 'ebpf/hook').reduce((s, x) => s + x.count, 0);
  t.equal(hookRefused, n, 'the summary counts every hook refusal');
  const lines = faultLines(st, op);
  const hookFaults = lines.filter((l) => l.kind === 'fault' && (l.fault as { source: string }).source === 'cgroup_hook').map((l) => (l.fault as { fault_id: string }).fault_id);
  t.equal(hookFaults.length, n, 'each is a recorded fault');
  const resolved = new Set(lines.filter((l) => l.kind === 'resolution').map((l) => l.fault_id as string));
  t.same(hookFaults.filter((id) => !resolved.has(id)), [], 'and each has its resolution line');
});

t.test('attachHooksAsync: attaches on a worker thread, refuses as attachHooks does', async (t) => {
  if (!requireKernel(t)) return;
  const cg = testCgroup(t, 'gs-aasync');
  const op = uniqueName('gs-aasync');
  t.teardown(() => void detachHooks(op));
  // the event loop keeps turning while the attach runs
  let turns = 0;
  const ticker = setInterval(() => turns++, 1);
  const pin = await attachHooksAsync(op, cg);
  clearInterval(ticker);
  t.equal(pin, pinDirFor(op), 'pinned under the operation\'s pin dir');
  t.ok(hooksAttached(op), 'every link is pinned');
  // a synchronous attach would give 0: no timer runs while the thread is held (the load alone takes tens of ms)
  t.ok(turns > 0, `the event loop turned during the attach (${turns} times)`);
  await t.rejects(attachHooksAsync(op, cg), { code: 'E_OP_EXISTS' }, 'a second attach of the same operation is refused');
  t.ok(hooksAttached(op), 'and the first stays attached');
  const gone = uniqueName('gs-aasync-none');
  await t.rejects(attachHooksAsync(gone, path.join(path.dirname(cg), gone)), { code: 'ENOENT', syscall: 'open' }, 'a missing cgroup: ENOENT from open');
  t.notOk(fs.existsSync(pinDirFor(gone)), 'and nothing is pinned for it');
});
