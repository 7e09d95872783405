// What the notify loop keeps across calls, proven safe on the real kernel
// (issue 15). addon/notify.c keeps one pidfd per pid between calls and reads
// the caller's memory by pid (process_vm_readv); it keeps nothing of the
// socket (the protocol is asked of args[0] on every call) and nothing of the
// cgroup. Here, as an attacker would: the same fd number swapped to a UDP
// socket between two calls (by the same thread and by another one), a
// process that exits and a new one that reuses its fd number and, where the
// test can force it (ns_last_pid), its pid; and a process moved to another
// cgroup between two calls. Every such call must be looked at afresh: a UDP
// call where a TCP lease is present is raised as a UDP fault (a kept
// protocol would have answered it on the fast path), and no byte reaches a
// listener the policy denies.
//
// The workload is a small python3 script (fork, dup2, threads); each call
// prints one JSON line.
import t from 'tap';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { requireKernel, testOp, tcpServer, waitFor, sleep } from '../helpers/kernel';
import { launchOnOp } from '../helpers/launch';
import { parseDestination } from '../../src/addr';
import type { PausedCall } from '../../src/pause/notifier';
import type { Launched } from '../../src/pause/launch';

const { EACCES } = os.constants.errno;
const PYTHON = '/usr/bin/python3';

type Tap = Parameters<typeof testOp>[0];

/** a UDP listener on 127.0.0.1:port (0: any) counting what it receives */
async function udpListener(t: Tap, port = 0): Promise<{ port: number; got: () => number }> {
  let got = 0;
  const sock = dgram.createSocket('udp4');
  sock.on('message', () => got++);
  await new Promise<void>((res, rej) => {
    sock.once('error', rej);
    sock.bind(port, '127.0.0.1', () => res());
  });
  t.teardown(() => new Promise<void>((res) => sock.close(() => res())));
  return { port: sock.address().port, got: () => got };
}

/** A TCP server and a UDP listener on the same port number (retried until one is free for both). */
async function tcpAndUdp(t: Tap): Promise<{ port: number; accepted: () => number; datagrams: () => number }> {
  for (let i = 0; ; i++) {
    const tcp = await tcpServer(t);
    try {
      const udp = await udpListener(t, tcp.port);
      return { port: tcp.port, accepted: tcp.accepted, datagrams: udp.got };
    } catch (e) {
      if (i >= 20) throw e;
    }
  }
}

/** the workload's JSON lines */
function lines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A datagram in flight on loopback is queued by the time the call returns; give the event loop a turn. */
const settle = () => sleep(50);

// Shared by the scripts: call(tag, fn) prints {"tag", "result": "ok" | errno name}.
const PRELUDE = `
import errno, json, os, signal, socket, sys, threading
def call(tag, fn):
    try:
        fn()
        r = 'ok'
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(json.dumps({'tag': tag, 'result': r}), flush=True)
def tcp_connect(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    call('tcp', lambda: s.connect(('127.0.0.1', port)))
    return s
`;

t.test('the notify loop keeps nothing a caller could swap under it', async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(PYTHON)) {
    t.fail(`${PYTHON} is needed for the workload`);
    return;
  }

  /** python3 -c script under op's boundary; TCP faults to `leased` are leased and continued, every other fault refused (EACCES) */
  async function run(
    t: Tap,
    o: ReturnType<typeof testOp>,
    script: string,
    args: string[],
    hooks: { onFault?: (f: PausedCall, l: Launched) => void; onLine?: (line: Record<string, unknown>, l: Launched) => void } = {},
  ) {
    const faults: PausedCall[] = [];
    const r = await launchOnOp(t, o, [PYTHON, '-c', PRELUDE + script, ...args], (f, l) => {
      faults.push(f);
      hooks.onFault?.(f, l);
      l.notifier!.respond(f.id, EACCES); // false: the caller is gone, nothing to refuse
    });
    // whatever happens, nothing of the workload outlives the test
    let cmd: number | null = null;
    const poll = setInterval(() => (cmd ??= r.l.cmdPid()), 5);
    t.teardown(() => {
      clearInterval(poll);
      if (cmd)
        try {
          process.kill(cmd, 'SIGKILL');
        } catch {
          /* gone */
        }
    });
    let seen = 0;
    const watch = setInterval(() => {
      const ls = lines(r.stdout());
      for (; seen < ls.length; seen++) hooks.onLine?.(ls[seen], r.l);
    }, 5);
    const done = await r.done;
    clearInterval(watch);
    clearInterval(poll);
    const ls = lines(done.stdout);
    for (; seen < ls.length; seen++) hooks.onLine?.(ls[seen], r.l);
    await settle();
    return { faults, lines: ls, stderr: done.stderr, code: done.code, l: r.l };
  }

  await t.test('dup2 of a UDP socket over a connected TCP fd, by the same thread and by another', async (t) => {
    const o = testOp(t, 'gs-fpc');
    const srv = await tcpAndUdp(t);
    o.dp.putLease({ tuple: parseDestination('tcp', `127.0.0.1:${srv.port}`), generation: 1n, ttlMs: 60_000 });
    const script = `
port = int(sys.argv[1])
s = tcp_connect(port)
fd = s.fileno()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
os.dup2(u.fileno(), fd)  # the TCP socket behind fd is gone; fd is a UDP socket now
call('udp-same-thread', lambda: s.sendto(b'same', ('127.0.0.1', port)))
def other():
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    call('tcp-other-thread', lambda: t.connect(('127.0.0.1', port)))
    os.dup2(u.fileno(), t.fileno())
    call('udp-other-thread', lambda: t.sendto(b'other', ('127.0.0.1', port)))
th = threading.Thread(target=other); th.start(); th.join()
call('udp-same-thread-again', lambda: s.sendto(b'again', ('127.0.0.1', port)))
`;
    const r = await run(t, o, script, [String(srv.port)]);
    t.equal(r.code, 0, `workload ran: ${r.stderr}`);
    t.same(
      r.lines.map((l) => [l.tag, l.result]),
      [
        ['tcp', 'ok'],
        ['udp-same-thread', 'EACCES'],
        ['tcp-other-thread', 'ok'],
        ['udp-other-thread', 'EACCES'],
        ['udp-same-thread-again', 'EACCES'],
      ],
      'TCP connects on the fast path; each UDP send behind the same fd number is raised and refused',
    );
    t.equal(r.faults.length, 3, 'three faults: the UDP sends, none of the leased TCP connects');
    t.ok(
      r.faults.every((f) => f.protocol === 'udp' && f.syscall === 'sendto' && f.port === srv.port),
      'every fault names UDP: the protocol came from the socket behind the fd at that call',
    );
    t.equal(new Set(r.faults.map((f) => f.pid)).size, 2, 'from two threads (two pids, two kept pidfds)');
    t.match(r.l.notifier!.stats(), { fastPath: 2, slowPath: 3 });
    await waitFor(() => srv.accepted() === 2, 2000).catch(() => undefined);
    t.equal(srv.accepted(), 2, 'the TCP server saw the two leased connects');
    t.equal(srv.datagrams(), 0, 'no datagram reached the UDP listener the policy denies');
  });

  await t.test('a process exits; a new one reuses its fd number, and its pid where ns_last_pid lets the test force it', async (t) => {
    const o = testOp(t, 'gs-fpc');
    const srv = await tcpAndUdp(t);
    const deny = await udpListener(t);
    o.dp.putLease({ tuple: parseDestination('tcp', `127.0.0.1:${srv.port}`), generation: 1n, ttlMs: 60_000 });
    const rounds = 8;
    // each round: child A sends to `deny` (a fault: the test learns A's host
    // pid P, and the loop keeps a pidfd for P), then connects over TCP on the
    // same fd number (fast path, through that pidfd), then exits. The parent
    // reaps it and waits for SIGUSR1, which the test sends once it has set
    // ns_last_pid to P-1: child B most likely gets pid P, and sends UDP to
    // the TCP-leased port on the same fd number.
    const script = `
port, deny, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
def child(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
def a(r):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    fd = u.fileno()
    call('a-deny-%d' % r, lambda: u.sendto(b'a', ('127.0.0.1', deny)))
    u.close()
    s = tcp_connect(port)
    print(json.dumps({'tag': 'a-fd-%d' % r, 'result': 'ok' if s.fileno() == fd else 'other fd'}), flush=True)
def b(r):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    call('b-udp-%d' % r, lambda: u.sendto(b'b', ('127.0.0.1', port)))
for r in range(rounds):
    child(lambda: a(r))
    print(json.dumps({'tag': 'reaped-%d' % r, 'result': 'ok'}), flush=True)
    signal.sigwait({signal.SIGUSR1})
    child(lambda: b(r))
`;
    const aPid: number[] = [];
    let forced = 0;
    let canForce = true;
    const r = await run(t, o, script, [String(srv.port), String(deny.port), String(rounds)], {
      onFault: (f) => {
        if (f.port === deny.port) aPid.push(f.pid);
      },
      onLine: (line, l) => {
        const m = /^reaped-(\d+)$/.exec(String(line.tag));
        if (!m) return;
        const p = aPid[Number(m[1])];
        try {
          if (p) fs.writeFileSync('/proc/sys/kernel/ns_last_pid', String(p - 1));
        } catch {
          canForce = false; // not allowed here: the round still runs, with a new pid
        }
        const cmd = l.cmdPid();
        if (cmd) process.kill(cmd, 'SIGUSR1');
      },
    });
    t.equal(r.code, 0, `workload ran: ${r.stderr}`);
    const want: [unknown, unknown][] = [];
    for (let i = 0; i < rounds; i++) want.push([`a-deny-${i}`, 'EACCES'], ['tcp', 'ok'], [`a-fd-${i}`, 'ok'], [`reaped-${i}`, 'ok'], [`b-udp-${i}`, 'EACCES']);
    t.same(
      r.lines.map((l) => [l.tag, l.result]),
      want,
      "A's TCP connect rides the fast path; B's UDP send on the same fd number is raised and refused",
    );
    const bFaults = r.faults.filter((f) => f.port === srv.port);
    t.equal(bFaults.length, rounds, 'one fault per B');
    t.ok(
      bFaults.every((f) => f.protocol === 'udp' && f.syscall === 'sendto'),
      "each names UDP, not the TCP of the exited process's socket",
    );
    for (let i = 0; i < rounds && i < bFaults.length; i++) if (bFaults[i].pid === aPid[i]) forced++;
    t.comment(`pid reused by B in ${forced} of ${rounds} rounds (the kept pidfd of A met B's call)`);
    // another process may take the pid first now and then, not every time
    if (canForce) t.ok(forced >= 1, "B got A's pid at least once: the kept pidfd of an exited process met a new one's call");
    t.match(r.l.notifier!.stats(), { fastPath: rounds, slowPath: 2 * rounds });
    await waitFor(() => srv.accepted() === rounds, 2000).catch(() => undefined);
    t.equal(srv.accepted(), rounds, 'the TCP server saw the leased connects');
    t.equal(srv.datagrams(), 0, 'no datagram reached the UDP listener the policy denies');
    t.equal(deny.got(), 0, 'nor the other one');
  });

  await t.test('a process moved to another cgroup between two calls', async (t) => {
    const a = testOp(t, 'gs-fpc');
    const b = testOp(t, 'gs-fpc'); // hooks, no lease
    const srv = await tcpServer(t);
    const other = await tcpServer(t);
    a.dp.putLease({ tuple: parseDestination('tcp', `127.0.0.1:${srv.port}`), generation: 1n, ttlMs: 60_000 });
    const script = `
port, other = int(sys.argv[1]), int(sys.argv[2])
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
tcp_connect(port)
print(json.dumps({'tag': 'moved?', 'result': 'ok'}), flush=True)
signal.sigwait({signal.SIGUSR1})
tcp_connect(port)
tcp_connect(other)
`;
    let moved = false;
    const r = await run(t, a, script, [String(srv.port), String(other.port)], {
      onLine: (line, l) => {
        if (line.tag !== 'moved?') return;
        const cmd = l.cmdPid();
        if (cmd) {
          fs.writeFileSync(path.join(b.cgroup, 'cgroup.procs'), String(cmd));
          moved = true;
          process.kill(cmd, 'SIGUSR1');
        }
      },
    });
    t.ok(moved, 'moved between the calls');
    t.equal(r.code, 0, `workload ran: ${r.stderr}`);
    t.same(
      r.lines.map((l) => [l.tag, l.result]),
      [
        ['tcp', 'ok'],
        ['moved?', 'ok'],
        ['tcp', 'EPERM'],
        ['tcp', 'EACCES'],
      ],
      "in A's cgroup the leased connect succeeds; moved to B, the same connect (A's lease still in A's map: fast path) meets B's hook and is refused",
    );
    t.equal(r.faults.length, 1, 'one fault: the unleased destination');
    t.equal(r.faults[0]?.cgroupId, BigInt(fs.statSync(b.cgroup).ino), "the fault names the cgroup the caller is in now, B's");
    await waitFor(() => srv.accepted() === 1, 2000).catch(() => undefined);
    t.equal(srv.accepted(), 1, 'one connection reached the server: the one made from A');
    t.equal(other.accepted(), 0, 'none reached the denied one');
  });
});
