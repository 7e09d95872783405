// The supervisor is not the workload's to signal, trace or read, and a
// subject that died leaves nothing a later process with its pid can use.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { GENSEE_BIN } from '../helpers/kernel';
import { attackTest, supervisorPid, procState, faultLines, Env } from './lib';

const seen = new Map<string, { pid: number; states: string[] }>();

attackTest(t, 'signal', 'SIGSTOP/SIGKILL of the supervisor fail; kill(-1) stays in the namespace', {
  onReady: (env) => async (phase) => {
    const pid = supervisorPid(env);
    const s = seen.get(env.op) ?? { pid, states: [] };
    seen.set(env.op, s);
    if (phase === 'signal') return `pid ${pid}`;
    // after the attempts: the supervisor must be running, not stopped
    await new Promise((r) => setTimeout(r, 100));
    s.states.push(procState(pid));
    if (procState(pid) === 'T') process.kill(pid, 'SIGCONT'); // our own child: let the run finish
    return 'go';
  },
  check: (t, env, r) => {
    const s = seen.get(env.op);
    t.ok(s && s.pid > 0, `the supervisor's pid was read from operation.json (${s?.pid})`);
    t.ok(s && s.states.length === 1 && !['T', 't', 'Z', 'X', ''].includes(s.states[0]), `the supervisor was alive and not stopped after the attack (state ${s?.states[0]})`);
    t.equal(r.signal, null, 'gensee run itself was not killed');
    t.notOk(r.events.length === 0, 'gensee run kept reporting');
    t.ok(r.events.some((e) => e.event === 'summary'), 'and wrote its summary');
  },
});

attackTest(t, 'procfs', 'no ptrace, process_vm_*, /proc/PID/{mem,root,environ,fd} or pidfd_getfd of the supervisor', {
  onReady: (env) => () => `pid ${supervisorPid(env)}`,
});

// 6. pid reuse: the resolver validates (pid, start_time_ticks) of one and the
// same live process in the operation; a dead subject, or its pid with
// another start time (what a reused pid looks like), gets nothing.
interface Sub {
  pid: number;
  start_time_ticks: number;
}
const subjects = new Map<string, { a?: Sub; b?: Sub; results: Record<string, { code: number | null; out: Record<string, unknown> }> }>();

function forge(env: Env, name: string, s: Sub, port: number) {
  const f = path.join(env.st, `fault-${name}.json`);
  fs.writeFileSync(
    f,
    JSON.stringify({
      schema: 2,
      operation_id: env.op,
      fault_id: `forged-${name}`,
      subject: { process: s },
      effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port } },
      source: 'manual',
    }),
  );
  const r = spawnSync(GENSEE_BIN, ['run', 'fault', '--socket', path.join(env.opDir, 'supervisor.sock'), '--fault', f], { encoding: 'utf8', timeout: 20_000 });
  let out: Record<string, unknown> = {};
  try {
    out = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
  } catch {
    out = { stdout: r.stdout, stderr: r.stderr };
  }
  return { code: r.status, out };
}

attackTest(t, 'pid-reuse', 'a dead subject\'s (pid, start time) gets no lease, not even under its reused pid', {
  onReady: (env) => async (phase) => {
    if (phase !== 'pid-reuse-hold') return '';
    // the two children's denied connects were paused: their subjects are recorded
    const subs = faultLines(env)
      .filter((l) => l.kind === 'fault')
      .map((l) => l.fault as { subject?: { process?: Sub }; effect?: { network?: { port: number } } })
      .filter((f) => f.effect?.network?.port === env.denied.port && f.subject?.process)
      .map((f) => f.subject!.process!);
    const rec = { a: subs[0], b: subs[subs.length - 1], results: {} as Record<string, { code: number | null; out: Record<string, unknown> }> };
    subjects.set(env.op, rec);
    if (rec.a && rec.b && rec.a.pid !== rec.b.pid) {
      // all three ask for the port the policy WOULD lease to a live subject
      rec.results.dead = forge(env, 'dead', rec.a, env.allowed.port);
      rec.results.reused = forge(env, 'reused', { pid: rec.b.pid, start_time_ticks: rec.a.start_time_ticks }, env.allowed.port);
      rec.results.live = forge(env, 'live', rec.b, env.allowed.port);
    }
    return 'go';
  },
  check: (t, env) => {
    const rec = subjects.get(env.op);
    t.ok(rec?.a && rec?.b && rec.a.pid !== rec.b.pid, 'both subjects (the dead child A, the live child B) were recorded', { rec });
    if (!rec?.results.dead) return;
    t.match(rec.results.dead, { code: 1, out: { action: 'deny', reason: 'invalid_subject' } }, 'the dead subject is denied invalid_subject');
    t.match(rec.results.reused, { code: 1, out: { action: 'deny', reason: 'invalid_subject' } }, 'its start time under a live pid of the operation is denied invalid_subject');
    t.match(rec.results.live, { code: 0, out: { action: 'retry_after_lease' } }, 'control: the live subject gets the lease (so the denials are the subject check\'s)');
  },
});
