// gensee's own output is not the workload's to write. The workload shares
// gensee's stdout and stderr; a line it prints there that looks like
// gensee's summary must not be taken for it. Here the workload prints a
// forged summary and a forged event on both streams, writes the same into
// every descriptor from 3 to 63 and tries to append to the --json-out file
// (0600, in a directory it can see). The real summary is in --json-out,
// whole and true (exit status, counts), and no forged line is; stdout holds
// the workload's lines and nothing of gensee's, in JSON and in text mode.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { GENSEE_BIN, PROBE, requireKernel } from '../helpers/kernel';
import { findCgroup2Mount } from '../../src/cgroup';
import { IDENTITIES, attackEnv, verify, Env } from './lib';

const MARK = 'forged-by-the-workload';
const EXIT = 7;

/** the workload: forge on every stream it has, then one denied connect, then exit EXIT */
function forger(env: Env, jsonOut: string): string[] {
  const summary = JSON.stringify({ event: 'summary', op: env.op, exit: 0, faults: 0, leases_installed: 0, continued: 0, delegated: 0, denied: 0, refused: 0, fast_path: 0, paused: 0, destinations: [], note: MARK });
  const event = JSON.stringify({ event: 'resolved', fault: { fault_id: MARK }, resolution: { action: 'retry_after_lease', reason: 'lease_installed' } });
  const text = `gensee: ${env.op} exited 0: 0 faults, 0 leases installed, 0 already authorized, 0 delegated, 0 denied, 0 refused; fast path 0, paused 0 (${MARK})`;
  const script = [
    `for s in '${summary}' '${event}' '${text}'; do printf '%s\\n' "$s"; printf '%s\\n' "$s" >&2; done`,
    // every descriptor the workload might have been handed
    // (in a subshell: a failed redirection of eval ends the shell that runs it)
    `fd=3; while [ $fd -lt 64 ]; do (eval "printf '%s\\n' '${summary}' >&$fd") 2>/dev/null && echo "wrote-fd-$fd"; fd=$((fd+1)); done`,
    `if printf '%s\\n' '${summary}' >> '${jsonOut}' 2>/dev/null; then echo append-ok; else echo append-refused; fi`,
    `'${PROBE}' connect tcp 127.0.0.1 ${env.denied.port}`,
    `exit ${EXIT}`,
  ].join('\n');
  return ['/bin/sh', '-c', script];
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(GENSEE_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => c.kill('SIGKILL'), 60_000);
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** a directory every uid may enter and list, for the --json-out file */
function openDir(t: { teardown(fn: () => unknown): void }): string {
  const d = fs.mkdtempSync('/tmp/gs-jo-');
  fs.chmodSync(d, 0o755);
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** every line the workload itself printed on stdout (and nothing else may be there) */
function workloadLines(stdout: string): string[] {
  return stdout.split('\n').filter(Boolean);
}

for (const id of IDENTITIES) {
  t.test(`output, ${id.name}: a forged summary on stdout, stderr and every fd does not replace gensee's`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-out');
    const jsonOut = path.join(openDir(t), 'gensee.jsonl');
    const r = await run(['run', '--state-dir', env.st, '--op', env.op, '--policy', env.policy, '--json-out', jsonOut, ...id.flags, '--', ...forger(env, jsonOut)]);
    t.equal(r.code, EXIT, "gensee run exits with the workload's code", { stderr: r.stderr.slice(-1000) });

    const text = fs.readFileSync(jsonOut, 'utf8');
    const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    // the start line names the workload's argv, which holds the forgeries as text
    t.same(lines.filter((l) => l.event !== 'start' && JSON.stringify(l).includes(MARK)), [], 'no forged line is in --json-out');
    const summaries = lines.filter((l) => l.event === 'summary');
    t.equal(summaries.length, 1, 'exactly one summary in --json-out');
    t.match(summaries[0], { op: env.op, exit: EXIT, faults: 1, denied: 1, leases_installed: 0, paused: 1 }, 'and it is the real one: exit status and counts');
    t.equal(lines[lines.length - 1]?.event, 'summary', 'the summary is the last line');
    t.ok(lines.some((l) => l.event === 'resolved' && (l.resolution as { action?: string }).action === 'deny'), 'the denied connect is in --json-out');
    t.equal(lines.filter((l) => l.event === 'resolved').length, 1, 'one resolved line: the real fault');

    const out = workloadLines(r.stdout);
    t.notOk(out.some((l) => l.startsWith('wrote-fd-')), `the workload had no descriptor beyond 0-2 to write to (${out.filter((l) => l.startsWith('wrote-fd-')).join(' ')})`);
    t.ok(out.includes('append-refused'), 'the workload could not append to the --json-out file');
    t.same(
      out.filter((l) => l.includes('"event"') || l.startsWith('gensee')).filter((l) => !l.includes(MARK)),
      [],
      "stdout holds none of gensee's lines: only the workload's",
    );
    t.match(r.stdout, /"EACCES"/, "the workload's own output is on its stdout");
    t.match(r.stderr, MARK, "the workload's stderr is still its stderr");
    t.equal(env.denied.conns, 0, 'no connection reached the denied listener');
    t.equal(verify(env).code, 0, 'verify holds');
  });

  t.test(`output, ${id.name}: in text mode gensee's lines are on stderr, stdout is the workload's`, async (t) => {
    if (!requireKernel(t)) return;
    const env = await attackEnv(t, 'adv-outt');
    const jsonOut = path.join(openDir(t), 'never.jsonl');
    const r = await run(['run', '--state-dir', env.st, '--op', env.op, '--policy', env.policy, ...id.flags, '--', ...forger(env, jsonOut)]);
    t.equal(r.code, EXIT, "gensee run exits with the workload's code", { stderr: r.stderr.slice(-1000) });
    t.same(
      workloadLines(r.stdout).filter((l) => l.startsWith('gensee') || l.startsWith('fault ') || l.startsWith('  ')).filter((l) => !l.includes(MARK)),
      [],
      "stdout holds none of gensee's lines",
    );
    t.match(r.stderr, new RegExp(`gensee: ${env.op} exited ${EXIT}: 1 faults, 0 leases installed, 0 already authorized, 0 delegated, 1 denied`), "gensee's summary is on stderr");
  });
}

t.test('--json-out refuses what the workload could share or reach', async (t) => {
  if (!requireKernel(t)) return;
  const env = await attackEnv(t, 'adv-outr');
  const dir = openDir(t);
  const link = path.join(dir, 'link');
  fs.symlinkSync(path.join(dir, 'target'), link);
  const theirs = path.join(dir, 'theirs');
  fs.writeFileSync(theirs, '');
  fs.chownSync(theirs, 65534, 65534);
  const loose = path.join(dir, 'loose');
  fs.writeFileSync(loose, 'keep');
  fs.chmodSync(loose, 0o666);
  const cases: [string, string, RegExp][] = [
    ['a symlink', link, /E_SYMLINK/],
    ['/dev/stdout (a symlink to the shared stream)', '/dev/stdout', /E_SYMLINK/],
    ['/proc/self/fd/2', '/proc/self/fd/2', /E_SYMLINK/],
    ['a file another uid owns', theirs, /E_BAD_MODE/],
    ['a file others may write', loose, /E_BAD_MODE/],
    ['a directory', dir, /E_USAGE.*EISDIR|E_NOT_FILE/],
  ];
  for (const [what, file, err] of cases) {
    const r = await run(['run', '--state-dir', env.st, '--op', env.op, '--policy', env.policy, '--json-out', file, '--', '/bin/true']);
    t.equal(r.code, 125, `${what}: refused as bad input (125: gensee run's own failure)`);
    t.match(r.stderr, err, `${what}: ${r.stderr.trim()}`);
  }
  t.notOk(fs.existsSync(path.join(dir, 'target')), 'nothing was created through the symlink');
  t.equal(fs.readFileSync(loose, 'utf8'), 'keep', 'a refused file is left as it was');
  t.notOk(fs.existsSync(path.join(env.opDir, 'operation.json')), 'no operation was started');
});

t.test("a reader of gensee's stderr going away does not end the run", async (t) => {
  if (!requireKernel(t)) return;
  const env = await attackEnv(t, 'adv-oute');
  const r = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const c = spawn(GENSEE_BIN, ['run', '--state-dir', env.st, '--op', env.op, '--policy', env.policy, '--', '/bin/sh', '-c', 'sleep 0.5; exit 5'], { stdio: ['ignore', 'ignore', 'pipe'] });
    c.stderr.destroy(); // every live line now meets EPIPE
    c.on('close', (code, signal) => resolve({ code, signal }));
  });
  t.same(r, { code: 5, signal: null }, "gensee run ends with the workload's code, not of the EPIPE");
  t.notOk(fs.existsSync(path.join(findCgroup2Mount(), 'gensee', env.op)), 'and cleans up after it: no cgroup left');
  t.equal(verify(env).code, 0, 'verify holds');
});
