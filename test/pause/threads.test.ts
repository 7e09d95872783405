// Calls from threads that are not their process's main thread (issue 26).
// Before Linux 6.9 pidfd_open() takes only a thread-group leader, so
// addon/notify.c reads such a call through the leader's pidfd and checks the
// thread still belongs to it (see the top of addon/notify.c). Every case
// runs twice: with the kernel's PIDFD_THREAD (this host), and with the
// leader path forced (GENSEE_NO_PIDFD_THREAD=1, read when the notifier
// opens), which is what a 6.1 kernel takes.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as dgram from 'node:dgram';
import { spawn } from 'node:child_process';
import { requireKernel, testOp, tcpServer, uniqueName, GENSEE_BIN, PROBE, waitFor, sleep, timeScaled } from '../helpers/kernel';
import { shortStateDir, faultLines } from '../helpers/supervisor';
import { launchOnOp } from '../helpers/launch';
import { parseDestination } from '../../src/addr';
import type { PausedCall } from '../../src/pause/notifier';
import { doctor } from '../../src/doctor';

const { EACCES } = os.constants.errno;
const PYTHON = '/usr/bin/python3';
type Tap = Parameters<typeof testOp>[0];

// `leader`: the leader path is expected. Forced by the variable, or the
// kernel's own when it has no PIDFD_THREAD (before 6.9: make vmtest's 6.1)
const KERNEL_PIDFD_THREAD = doctor().findings.find((f) => f.name === 'pidfd_thread')?.status === 'present';
const MODES = [
  { name: KERNEL_PIDFD_THREAD ? 'PIDFD_THREAD' : 'leader pidfd (this kernel has no PIDFD_THREAD)', env: {} as Record<string, string>, leader: !KERNEL_PIDFD_THREAD },
  { name: 'leader pidfd (GENSEE_NO_PIDFD_THREAD=1)', env: { GENSEE_NO_PIDFD_THREAD: '1' } as Record<string, string>, leader: true },
];

interface RunResult {
  code: number | null;
  lines: Record<string, unknown>[];
  probe: Record<string, unknown>[];
  stderr: string;
}

let runs = 0;
/** bin/gensee run with --json-out FILE in the state dir: its lines from FILE, the probe's from stdout */
function gensee(args: string[], env: Record<string, string>): Promise<RunResult> {
  const file = path.join(args[args.indexOf('--state-dir') + 1], `run-${++runs}.jsonl`);
  return new Promise((resolve) => {
    const c = spawn(GENSEE_BIN, ['run', '--json-out', file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => {
      const json = (text: string) =>
        text.split('\n').flatMap((l) => {
          try {
            return l.trim().startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : [];
          } catch {
            return [];
          }
        });
      resolve({ code, lines: fs.existsSync(file) ? json(fs.readFileSync(file, 'utf8')) : [], probe: json(out), stderr: err });
    });
  });
}

function policyFile(dir: string, p: object): string {
  const f = path.join(dir, `policy-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(f, JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [], ...p }));
  return f;
}

const summaryOf = (r: RunResult) => (r.lines.find((l) => l.event === 'summary') ?? {}) as Record<string, number>;
const seccompFaults = (st: string, op: string) => faultLines(st, op).filter((l) => l.kind === 'fault' && (l.fault as { source: string }).source === 'seccomp_notify');

/** process.env for the notifier the test process opens itself (launchOnOp), restored at teardown */
function withEnv(t: Tap, env: Record<string, string>): void {
  const old: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) {
    old[k] = process.env[k];
    process.env[k] = v;
  }
  t.teardown(() => {
    for (const [k, v] of Object.entries(old)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

function lines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

// call(tag, fn) prints {"tag", "result": "ok" | errno name, "tid"}
const PRELUDE = `
import ctypes, errno, json, os, signal, socket, sys, threading
def call(tag, fn):
    try:
        fn()
        r = 'ok'
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(json.dumps({'tag': tag, 'result': r, 'tid': threading.get_native_id(), 'pid': os.getpid()}), flush=True)
`;

for (const mode of MODES) {
  t.test(`threads under gensee run, ${mode.name}`, async (t) => {
    if (!requireKernel(t)) return;

    await t.test('200 concurrent paused connects from 20 threads: all paused, all answered', async (t) => {
      const st = shortStateDir(t);
      const srv = await tcpServer(t);
      const op = uniqueName('gs-thr');
      // the default 5 s deadline, stretched with the machine (make vmtest's emulated 6.1):
      // each paused call must be answered by the resolver's deny, not by its deadline
      const slow = policyFile(st, { fault_deadline_ms: Math.min(60_000, timeScaled(5000)) });
      const r = await gensee(['--state-dir', st, '--op', op, '--policy', slow, '--', PROBE, '--threads', '20', '--repeat', '10', 'connect', 'tcp', '127.0.0.1', String(srv.port)], mode.env);
      t.equal(r.code, 0, `gensee run exits with the probe's code ${r.stderr}`);
      t.match(r.probe.find((l) => 'EACCES' in l), { ok: 0, EPERM: 0, EACCES: 200 }, 'all 200 refused by the resolver (EACCES): none went past the pause to the hook (EPERM)');
      const s = summaryOf(r);
      t.equal(s.paused, 200, 'all 200 were paused');
      t.equal(s.via_leader ?? 0, mode.leader ? 200 : 0, mode.leader ? "each was read through the leader's pidfd" : 'none needed the leader path');
      const f = seccompFaults(st, op);
      t.equal(f.length, 200, '200 fault lines');
      const pids = new Set(f.map((l) => (l.fault as { subject: { process: { pid: number } } }).subject.process.pid));
      t.equal(pids.size, 20, 'from 20 threads (20 distinct tids)');
      t.equal(srv.accepted(), 0, 'nothing reached the server');
    });

    await t.test('a worker thread connects to a granted destination: paused, let on, connected', async (t) => {
      const st = shortStateDir(t);
      const srv = await tcpServer(t);
      const op = uniqueName('gs-thg');
      const pol = policyFile(st, { grants: [{ network: { protocol: 'tcp', address: '127.0.0.1', port: srv.port } }] });
      const r = await gensee(['--state-dir', st, '--op', op, '--policy', pol, '--', PROBE, '--threads', '1', '--repeat', '1', 'connect', 'tcp', '127.0.0.1', String(srv.port)], mode.env);
      t.equal(r.code, 0, `gensee run exits 0 ${r.stderr}`);
      t.match(r.probe.find((l) => 'EACCES' in l), { ok: 1, EPERM: 0, EACCES: 0 }, 'the connect succeeded');
      const s = summaryOf(r);
      t.equal(s.paused, 1, 'it was paused (no lease before it)');
      t.equal(s.leases_installed + s.continued, 1, `the resolver let it on (${JSON.stringify(s)})`);
      t.equal(s.via_leader ?? 0, mode.leader ? 1 : 0, 'leader path taken exactly when expected');
      const f = seccompFaults(st, op);
      t.equal(f.length, 1, 'one fault');
      t.equal(srv.accepted(), 1, 'the server saw the connection');
    });

    await t.test('TOCTOU from a worker thread: the sockaddr rewritten after the pause still meets the hook', async (t) => {
      const st = shortStateDir(t);
      const a = await tcpServer(t);
      const b = await tcpServer(t);
      const op = uniqueName('gs-tht');
      const pol = policyFile(st, { leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(a.port) }, ttl_s: 300 }] });
      const r = await gensee(['--state-dir', st, '--op', op, '--policy', pol, '--', PROBE, '--in-thread', '--repeat', '100000', '--until', '10', 'toctou-connect', 'tcp', '127.0.0.1', `${a.port},${b.port}`], mode.env);
      t.equal(r.code, 0, `gensee run exits 0 ${r.stderr}`);
      const res = r.probe.find((l) => 'calls' in l) as { calls: number; ok: number; EPERM: number; EACCES: number; other: number } | undefined;
      t.ok(res, `probe result ${JSON.stringify(res)}`);
      if (!res) return;
      t.equal(res.other, 0, 'no call failed any other way');
      const s = summaryOf(r);
      t.equal(s.paused + s.fast_path, res.calls, `seccomp saw every call (${s.paused} raised, ${s.fast_path} fast)`);
      if (mode.leader) t.equal(s.via_leader, res.calls, "every call was read through the leader's pidfd");
      t.ok(res.EPERM >= 10, `the race happened ${res.EPERM} times in ${res.calls} calls and the hook refused each`);
      t.equal(b.accepted(), 0, 'the unleased port B was never reached');
      t.equal(b.bytes(), 0, 'the denied listener received 0 bytes');
      t.equal(a.accepted(), res.ok, 'every success went to the leased port A');
    });
  });

  t.test(`threads under the notifier, ${mode.name}`, async (t) => {
    if (!requireKernel(t)) return;
    if (!fs.existsSync(PYTHON)) {
      t.fail(`${PYTHON} is needed for the workload`);
      return;
    }
    withEnv(t, mode.env);

    await t.test("a thread with its own fd table: its fd N is not the leader's fd N", async (t) => {
      const o = testOp(t, 'gs-thf');
      const srv = await tcpServer(t);
      let datagrams = 0;
      const udp = dgram.createSocket('udp4');
      udp.on('message', () => datagrams++);
      await new Promise<void>((res) => udp.bind(0, '127.0.0.1', () => res()));
      t.teardown(() => new Promise<void>((res) => udp.close(() => res())));
      const uport = udp.address().port;
      // TCP to srv is leased; the leader's fd N is a TCP socket. The thread
      // unshares its fd table and puts a UDP socket at the same N, then sends
      // to uport (no lease). Read through the leader's table the call would
      // look like TCP; it must never be taken for it.
      o.dp.putLease({ tuple: parseDestination('tcp', `127.0.0.1:${srv.port}`), generation: 1n, ttlMs: 60_000 });
      o.dp.putLease({ tuple: parseDestination('tcp', `127.0.0.1:${uport}`), generation: 1n, ttlMs: 60_000 });
      const script = `
port, uport = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
call('leader-tcp', lambda: s.connect(('127.0.0.1', port)))
N = s.fileno()
def other():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x400) != 0:  # CLONE_FILES
        print(json.dumps({'tag': 'unshare', 'result': 'failed'}), flush=True)
        return
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    os.dup2(u.fileno(), N)  # in this thread's table only: the leader's N stays TCP
    v = socket.socket(fileno=N)
    call('thread-udp', lambda: v.sendto(b'x', ('127.0.0.1', uport)))
th = threading.Thread(target=other); th.start(); th.join()
`;
      const faults: PausedCall[] = [];
      const r = await launchOnOp(t, o, [PYTHON, '-c', PRELUDE + script, String(srv.port), String(uport)], (f, l) => {
        faults.push(f);
        l.notifier!.respond(f.id, EACCES);
      });
      t.equal(r.l.notifier!.pidfdThread, !mode.leader, `pidfdThread is ${!mode.leader}`);
      const done = await r.done;
      t.equal(done.code, 0, `workload ran: ${done.stderr}`);
      const ls = lines(done.stdout);
      t.same(
        ls.map((l) => [l.tag, l.result]),
        [
          ['leader-tcp', 'ok'],
          ['thread-udp', mode.leader ? 'EPERM' : 'EACCES'],
        ],
        mode.leader ? "the thread's UDP send could not be matched to the leader's socket: on to the hook, which refuses it" : 'the thread\'s UDP send is raised as UDP and refused',
      );
      t.ok(
        faults.every((f) => f.protocol === 'udp'),
        `no fault ever names TCP for the thread's UDP socket (${faults.map((f) => f.protocol).join(',') || 'none'})`,
      );
      const st = r.l.notifier!.stats();
      t.equal(st.fastPath, 1, "only the leader's leased connect took the fast path, not the thread's send");
      if (mode.leader) t.match(st, { uninspectable: 1, viaLeader: 1 }, "the leader's socket did not match the thread's fd: uninspectable");
      await sleep(50);
      t.equal(datagrams, 0, 'no datagram reached the UDP listener');
    });

    await t.test('a paused thread dies with its process, a new thread reuses its tid: the old answer applies to nobody', async (t) => {
      const o = testOp(t, 'gs-thr');
      const deny = await tcpServer(t);
      // One workload, one filter, one listener. Child A's worker thread
      // connects to `deny` and stays paused (the test holds the fault); the
      // test kills A. The parent reaps it and waits for SIGUSR1, which the
      // test sends once ns_last_pid is set so that child B's worker thread
      // most likely gets A's thread's tid; B's thread connects to `deny`.
      // While B's call is paused, the test answers A's old id 'continue'.
      const script = `
port = int(sys.argv[1])
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
def worker():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    call('connect', lambda: s.connect(('127.0.0.1', port)))
def child(tag):
    pid = os.fork()
    if pid == 0:
        th = threading.Thread(target=worker); th.start(); th.join()
        os._exit(0)
    os.waitpid(pid, 0)
    print(json.dumps({'tag': 'reaped-' + tag}), flush=True)
child('a')
signal.sigwait({signal.SIGUSR1})
child('b')
`;
      const faults: PausedCall[] = [];
      let oldAnswer: boolean | undefined;
      const r = await launchOnOp(t, o, [PYTHON, '-c', PRELUDE + script, String(deny.port)], (f, l) => {
        faults.push(f);
        if (faults.length === 1) return; // A's: held, unanswered
        oldAnswer = l.notifier!.respond(faults[0].id, 'continue');
        l.notifier!.respond(f.id, EACCES);
      });
      await waitFor(() => faults.length === 1, 15_000);
      const old = faults[0];
      t.ok(old.tgid && old.pid !== old.tgid, `paused in a worker thread (tid ${old.pid} of process ${old.tgid})`);
      process.kill(old.tgid!, 'SIGKILL');
      await waitFor(() => lines(r.stdout()).some((l) => l.tag === 'reaped-a'), 15_000);
      let canForce = true;
      try {
        fs.writeFileSync('/proc/sys/kernel/ns_last_pid', String(old.pid - 2)); // B gets tid-1, its thread tid
      } catch {
        canForce = false;
      }
      process.kill(r.l.cmdPid()!, 'SIGUSR1');
      const done = await r.done;
      t.equal(done.code, 0, `workload ran: ${done.stderr}`);
      const ls = lines(done.stdout);
      t.same(
        ls.filter((l) => l.tag === 'connect').map((l) => l.result),
        ['EACCES'],
        "only B's thread printed a result (A was killed paused), and it is its own fault's refusal, never the old answer",
      );
      t.equal(faults.length, 2, "two faults: A's thread and B's thread");
      const b = faults[1];
      t.comment(`A's thread tid ${old.pid}, B's thread tid ${b?.pid}${b?.pid === old.pid ? ' (reused)' : ''}${canForce ? '' : ' (ns_last_pid not writable)'}`);
      t.ok(b && b.tgid && b.pid !== b.tgid, `B's fault names B's worker thread (tid ${b?.pid} of ${b?.tgid}; A: ${old.pid} of ${old.tgid})`);
      t.not(b?.id, old.id, 'under a new notification id');
      t.equal(oldAnswer, false, "the answer to A's dead thread applied to nobody (gone)");
      t.match(r.l.notifier!.stats(), { gone: 1, continued: 0, refused: 1 });
      if (mode.leader) t.equal(r.l.notifier!.stats().viaLeader, 2, "both read through their leader's pidfd");
      t.equal(deny.accepted(), 0, 'nothing reached the denied listener');
      t.equal(deny.bytes(), 0, 'not one byte');
    });
  });
}
