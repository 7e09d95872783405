// gensee doctor --json on this host: each finding checked against the
// kernel's own answer, got independently here — stat, mountinfo, and a
// python3 script that makes the raw syscalls itself (ctypes: pidfd_open on
// a worker thread's tid, seccomp with each flag in a child, ...) and reads
// the kernel's own BTF for the BPF attach types it names.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { requireKernel, GENSEE_BIN } from '../helpers/kernel';
import { doctor, DoctorReport, Finding } from '../../src/doctor';
import { requireKernelFeatures } from '../../src/cli/doctor';

const PYTHON = '/usr/bin/python3';

// every probe by hand: 'ok' or the errno name
const KERNEL_SAYS = String.raw`
import ctypes, errno, fcntl, json, os, socket, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def res(r):
    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
out = {}
pfd = libc.syscall(434, os.getpid(), 0)                       # pidfd_open
out['pidfd_open'] = res(pfd)
g = libc.syscall(438, pfd, pfd, 0)                             # pidfd_getfd
out['pidfd_getfd'] = res(g)
buf = bytearray(64); struct.pack_into('Q', buf, 0, 1 | 4)      # PIDFD_INFO_PID | CGROUPID
try:
    fcntl.ioctl(pfd, 0xC040FF0B, buf); out['pidfd_get_info'] = 'ok'
except OSError as e:
    out['pidfd_get_info'] = errno.errorcode[e.errno]
def thr():
    tid = threading.get_native_id()
    r = libc.syscall(434, tid, 0o200)                            # PIDFD_THREAD (O_EXCL)
    out['pidfd_thread'] = res(r)
t = threading.Thread(target=thr); t.start(); t.join()
a, b = socket.socketpair()
try:
    a.getsockopt(socket.SOL_SOCKET, 77, 4); out['so_peerpidfd'] = 'ok'
except OSError as e:
    out['so_peerpidfd'] = errno.errorcode[e.errno]
def child(fn):
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(fn())
        except BaseException:
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
class Filter(ctypes.Structure):
    _fields_ = [('code', ctypes.c_ushort), ('jt', ctypes.c_ubyte), ('jf', ctypes.c_ubyte), ('k', ctypes.c_uint)]
class Prog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.POINTER(Filter))]
def seccomp(flags, then=None):
    def fn():
        libc.prctl(38, 1, 0, 0, 0)                             # PR_SET_NO_NEW_PRIVS
        f = Filter(0x06, 0, 0, 0x7fff0000)                     # RET ALLOW
        p = Prog(1, ctypes.pointer(f))
        fd = libc.syscall(317, 1, flags, ctypes.byref(p))      # SECCOMP_SET_MODE_FILTER
        if fd < 0:
            return ctypes.get_errno()
        return then(fd) if then else 0
    e = child(fn)
    return 'ok' if e == 0 else errno.errorcode.get(e, str(e))
out['seccomp_listener'] = seccomp(1 << 3)
out['wait_killable_recv'] = seccomp((1 << 3) | (1 << 5))
def sync(fd):
    r = libc.syscall(16, fd, 0x40082104, 1)                    # ioctl SECCOMP_IOCTL_NOTIF_SET_FLAGS
    return 0 if r == 0 else ctypes.get_errno()
out['sync_wake_up'] = seccomp(1 << 3, sync)
def userns():
    return 0 if libc.unshare(0x10000000) == 0 else ctypes.get_errno()
e = child(userns)
out['user_namespaces'] = 'ok' if e == 0 else errno.errorcode.get(e, str(e))
print(json.dumps(out))
`;

// the BPF attach/program types doctor loads, by the name the kernel's own BTF gives them
const BTF_NAMES: Record<string, string> = {
  bpf_connect4: 'BPF_CGROUP_INET4_CONNECT',
  bpf_connect6: 'BPF_CGROUP_INET6_CONNECT',
  bpf_sendmsg4: 'BPF_CGROUP_UDP4_SENDMSG',
  bpf_sendmsg6: 'BPF_CGROUP_UDP6_SENDMSG',
  bpf_bind4: 'BPF_CGROUP_INET4_BIND',
  bpf_bind6: 'BPF_CGROUP_INET6_BIND',
  bpf_skb_egress: 'BPF_CGROUP_INET_EGRESS',
  bpf_sock_create: 'BPF_CGROUP_INET_SOCK_CREATE',
  bpf_setsockopt: 'BPF_CGROUP_SETSOCKOPT',
  bpf_syscall: 'BPF_PROG_TYPE_SYSCALL',
  bpf_connect_unix: 'BPF_CGROUP_UNIX_CONNECT',
  bpf_sendmsg_unix: 'BPF_CGROUP_UNIX_SENDMSG',
};

const SYSCALL_FINDINGS: Record<string, string> = {
  pidfd_open: 'pidfd_open',
  pidfd_getfd: 'pidfd_getfd',
  pidfd_get_info: 'pidfd_get_info',
  pidfd_thread: 'pidfd_thread',
  so_peerpidfd: 'so_peerpidfd',
  seccomp_user_notif: 'seccomp_listener',
  seccomp_wait_killable_recv: 'wait_killable_recv',
  seccomp_sync_wake_up: 'sync_wake_up',
  user_namespaces: 'user_namespaces',
};

t.test('gensee doctor --json: every finding is the kernel’s own answer', async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(PYTHON)) {
    t.fail(`${PYTHON} is needed for the independent probes`);
    return;
  }
  const t0 = process.hrtime.bigint();
  const r = spawnSync(GENSEE_BIN, ['doctor', '--json'], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  t.equal(r.status, 0, `exit 0: nothing required is missing on this host ${r.stderr}`);
  const rep = JSON.parse(r.stdout) as DoctorReport;
  const by = new Map(rep.findings.map((f) => [f.name, f]));
  const get = (n: string): Finding => by.get(n) ?? ({ name: n, status: 'missing', observed: '(absent from the report)' } as Finding);
  t.comment(`gensee doctor --json took ${ms.toFixed(0)} ms`);
  t.equal(rep.failing.length, 0, 'no required feature missing');
  t.ok(
    rep.findings.every((f) => ['present', 'fallback', 'missing'].includes(f.status) && f.since && f.what),
    'each finding says present / fallback / missing, what it is, and since which Linux',
  );
  t.ok(
    rep.findings.filter((f) => f.status !== 'present').every((f) => f.note.length > 0),
    'each finding not present says what happens instead',
  );

  // files and mounts
  const btf = '/sys/kernel/btf/vmlinux';
  t.equal(get('btf').status, fs.existsSync(btf) ? 'present' : 'missing', 'btf: as stat says');
  if (fs.existsSync(btf)) t.equal(get('btf').observed, `${fs.statSync(btf).size} bytes`, 'btf: its size');
  const mounts = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .trim()
    .split('\n')
    .map((l) => ({ mnt: l.split(' ')[4], type: l.split(' - ')[1].split(' ')[0], opts: l.split(' - ')[1].split(' ')[2] ?? '' }));
  const cg2 = mounts.find((m) => m.type === 'cgroup2');
  t.equal(get('cgroup2').observed, cg2?.mnt ?? 'no cgroup2 mount', 'cgroup2: the mount point mountinfo lists');
  const v1 = mounts.filter((m) => m.type === 'cgroup');
  t.equal(get('cgroup_layout').observed, cg2 ? (v1.length ? 'hybrid' : 'unified') : 'none', `layout: ${v1.length} cgroup v1 mounts beside cgroup2`);
  t.equal(get('bpffs').status, mounts.some((m) => m.type === 'bpf') ? 'present' : 'fallback', 'bpffs: as mountinfo says');
  const ctl = cg2 ? fs.readFileSync(path.join(cg2.mnt, 'cgroup.controllers'), 'utf8').trim().split(/\s+/) : [];
  for (const c of ['pids', 'memory']) {
    const want = ctl.includes(c) ? 'cgroup2' : v1.some((m) => m.opts.split(',').includes(c)) ? 'cgroup v1' : 'none';
    t.equal(get(`${c}_controller`).observed, want, `${c}: ${want}, from cgroup.controllers and the v1 mounts`);
  }
  t.equal(get('ping_group_range').observed, fs.readFileSync('/proc/sys/net/ipv4/ping_group_range', 'utf8').trim(), 'ping_group_range: the sysctl');

  // syscalls, made here by python3 itself
  const py = spawnSync(PYTHON, ['-c', KERNEL_SAYS], { encoding: 'utf8' });
  t.equal(py.status, 0, `the independent probe ran ${py.stderr}`);
  const says = JSON.parse(py.stdout) as Record<string, string>;
  for (const [finding, key] of Object.entries(SYSCALL_FINDINGS)) {
    t.equal(get(finding).observed, says[key], `${finding}: ${says[key]}, as the kernel answered the python probe`);
    t.equal(get(finding).status === 'present', says[key] === 'ok', `${finding}: present exactly when the kernel said ok`);
  }

  // BPF: a type the kernel's BTF names is one the verifier takes
  const btfBytes = fs.readFileSync(btf);
  for (const [finding, name] of Object.entries(BTF_NAMES)) {
    const known = btfBytes.includes(Buffer.from(`${name}\0`));
    t.equal(get(finding).status === 'present', known, `${finding}: ${known ? 'loaded' : 'refused'}, and the kernel's BTF ${known ? 'names' : 'lacks'} ${name}`);
  }
});

t.test('gensee run refuses with doctor’s finding when something required is missing', async (t) => {
  if (!requireKernel(t)) return;
  // a host without BTF, as far as the probe can tell: the same probes, another path
  const rep = doctor({ btf: '/nonexistent/btf/vmlinux' });
  t.same(rep.failing, ['btf'], 'doctor: btf missing and required, nothing else');
  t.throws(() => requireKernelFeatures(rep), { code: 'E_KERNEL', exitCode: 1, message: /btf \(kernel BTF .*Linux 5\.4: absent\); see gensee doctor/ }, 'run refuses, naming the feature and the version that brings it');
  t.doesNotThrow(() => requireKernelFeatures(doctor()), 'on this host it lets run go on');
  const t0 = process.hrtime.bigint();
  doctor();
  t.comment(`the probes gensee run makes took ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)} ms`);
});
