// What this kernel and host give gensee (issue 26): every feature probed by
// trying it — small real syscalls and a tiny BPF program of each type gensee
// loads (addon/features.c), stat and /proc/self/mountinfo for the rest —
// never by the kernel's version number. Each finding says whether the
// feature is there, what gensee does without it (a fallback), or that
// `gensee run` cannot work without it, and the Linux version that brought it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadAddon } from './addon';
import { cgroupLayout } from './resources';

export type Status = 'present' | 'fallback' | 'missing';

export interface Finding {
  /** stable key, e.g. "pidfd_thread" */
  name: string;
  /** what it is, in a few words */
  what: string;
  status: Status;
  /** missing and required: `gensee run` refuses */
  required: boolean;
  /** the Linux version that brought it (mainline) */
  since: string;
  /** what gensee does without it (status fallback) or what fails (missing) */
  note: string;
  /** what the probe saw: "ok" or the errno name, or the value read */
  observed: string;
}

export interface DoctorReport {
  kernel: string;
  findings: Finding[];
  /** names of the required findings that are missing */
  failing: string[];
}

function errnoName(e: number): string {
  if (e === 0) return 'ok';
  for (const [k, v] of Object.entries(os.constants.errno)) if (v === e) return k;
  return `errno ${e}`;
}

interface Spec {
  name: string;
  what: string;
  since: string;
  /** null: required (missing → run fails); else the fallback's description */
  fallback: string | null;
}

function finding(s: Spec, ok: boolean, observed: string, missingNote = 'gensee run cannot start without it'): Finding {
  return {
    name: s.name,
    what: s.what,
    since: s.since,
    required: s.fallback === null,
    status: ok ? 'present' : s.fallback === null ? 'missing' : 'fallback',
    note: ok ? '' : (s.fallback ?? missingNote),
    observed,
  };
}

function readOr(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Probe everything; nothing is changed on the host (child processes and programs are gone when this returns). */
export function doctor(o: { mountinfo?: string; btf?: string; proc?: string } = {}): DoctorReport {
  const mountinfo = o.mountinfo ?? '/proc/self/mountinfo';
  const btf = o.btf ?? '/sys/kernel/btf/vmlinux';
  const proc = o.proc ?? '/proc';
  const f: Finding[] = [];

  f.push(finding({ name: 'btf', what: 'kernel BTF (/sys/kernel/btf/vmlinux), for the CO-RE eBPF programs', since: '5.4', fallback: null }, fs.existsSync(btf), fs.existsSync(btf) ? `${fs.statSync(btf).size} bytes` : 'absent'));

  // mounts
  const mounts = fs
    .readFileSync(mountinfo, 'utf8')
    .split('\n')
    .map((l) => {
      const sep = l.indexOf(' - ');
      return sep < 0 ? null : { mnt: l.split(' ')[4], fstype: l.slice(sep + 3).split(' ')[0] };
    })
    .filter((m): m is { mnt: string; fstype: string } => m !== null);
  const cg2 = mounts.find((m) => m.fstype === 'cgroup2');
  const v1 = mounts.filter((m) => m.fstype === 'cgroup');
  f.push(finding({ name: 'cgroup2', what: 'a cgroup2 mount (the hooks attach to a cgroup2 cgroup)', since: '4.5', fallback: null }, !!cg2, cg2 ? cg2.mnt : 'no cgroup2 mount'));
  f.push({
    name: 'cgroup_layout',
    what: 'cgroup layout: unified (cgroup2 only) or hybrid (cgroup v1 hierarchies beside it)',
    since: '-',
    required: false,
    status: !cg2 ? 'missing' : v1.length ? 'fallback' : 'present',
    note: !cg2 ? 'no cgroup2' : v1.length ? `hybrid: controllers on v1 are used there (${v1.length} v1 mounts)` : '',
    observed: !cg2 ? 'none' : v1.length ? 'hybrid' : 'unified',
  });
  const bpffs = mounts.find((m) => m.fstype === 'bpf');
  f.push(finding({ name: 'bpffs', what: 'bpffs mounted (pins outlive the supervisor)', since: '4.4', fallback: 'gensee mounts it at /sys/fs/bpf itself' }, !!bpffs, bpffs ? bpffs.mnt : 'not mounted'));

  // controllers, where resources.ts will look
  let layout: ReturnType<typeof cgroupLayout> | null = null;
  try {
    layout = cgroupLayout(mountinfo);
  } catch {
    /* no cgroup2: reported above */
  }
  const v2ctl = layout ? (readOr(path.join(layout.cgroup2, 'cgroup.controllers')) ?? '').split(/\s+/) : [];
  for (const c of ['pids', 'memory'] as const) {
    const on2 = v2ctl.includes(c);
    const on1 = layout?.v1.has(c) ?? false;
    f.push({
      name: `${c}_controller`,
      what: `the ${c} controller (${c === 'pids' ? 'pids.max' : 'memory.max'} for the operation)`,
      since: c === 'pids' ? '4.5 (cgroup2)' : '4.5 (cgroup2)',
      required: false,
      status: on2 ? 'present' : on1 ? 'fallback' : 'missing',
      note: on2 ? '' : on1 ? `cgroup v1 ${c} hierarchy at ${layout!.v1.get(c)} is used` : `no ${c} limit: a policy that sets one is refused, the default is recorded as not applied`,
      observed: on2 ? 'cgroup2' : on1 ? 'cgroup v1' : 'none',
    });
  }

  const k = loadAddon().kernelFeatures();
  const ok = (n: keyof KernelFeatures) => k[n] === 0;
  const obs = (n: keyof KernelFeatures) => errnoName(k[n]);
  const specs: [keyof KernelFeatures, Spec][] = [
    ['prog_connect4', { name: 'bpf_connect4', what: 'BPF cgroup/connect4', since: '4.17', fallback: null }],
    ['prog_connect6', { name: 'bpf_connect6', what: 'BPF cgroup/connect6', since: '4.17', fallback: null }],
    ['prog_sendmsg4', { name: 'bpf_sendmsg4', what: 'BPF cgroup/sendmsg4', since: '4.18', fallback: null }],
    ['prog_sendmsg6', { name: 'bpf_sendmsg6', what: 'BPF cgroup/sendmsg6', since: '4.18', fallback: null }],
    ['prog_bind4', { name: 'bpf_bind4', what: 'BPF cgroup/bind4', since: '4.17', fallback: null }],
    ['prog_bind6', { name: 'bpf_bind6', what: 'BPF cgroup/bind6', since: '4.17', fallback: null }],
    ['prog_skb_egress', { name: 'bpf_skb_egress', what: 'BPF cgroup_skb/egress', since: '4.10', fallback: null }],
    ['prog_sock_create', { name: 'bpf_sock_create', what: 'BPF cgroup/sock_create', since: '4.10', fallback: null }],
    ['prog_setsockopt', { name: 'bpf_setsockopt', what: 'BPF cgroup/setsockopt', since: '5.3', fallback: null }],
    ['prog_syscall', { name: 'bpf_syscall', what: 'BPF syscall program (lease top-up in one call)', since: '5.14', fallback: null }],
    ['prog_connect_unix', { name: 'bpf_connect_unix', what: 'BPF cgroup/connect_unix', since: '6.7', fallback: "gensee-exec's seccomp filter refuses socket(AF_UNIX) instead (--no-unix)" }],
    ['prog_sendmsg_unix', { name: 'bpf_sendmsg_unix', what: 'BPF cgroup/sendmsg_unix', since: '6.7', fallback: "gensee-exec's seccomp filter refuses socket(AF_UNIX) instead (--no-unix)" }],
    ['seccomp_listener', { name: 'seccomp_user_notif', what: 'seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER)', since: '5.0', fallback: null }],
    ['addfd', { name: 'seccomp_addfd', what: 'SECCOMP_IOCTL_NOTIF_ADDFD', since: '5.9', fallback: 'not used by the pause itself; reported for completeness' }],
    ['wait_killable_recv', { name: 'seccomp_wait_killable_recv', what: 'SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV', since: '5.19', fallback: 'a signal can interrupt a paused call; it is asked again as a new notification' }],
    ['sync_wake_up', { name: 'seccomp_sync_wake_up', what: 'SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP', since: '6.6', fallback: 'the pause hands over between cores: slower (about 2.7x a bare connect instead of 1.5x)' }],
    ['pidfd_open', { name: 'pidfd_open', what: 'pidfd_open()', since: '5.3', fallback: null }],
    ['pidfd_getfd', { name: 'pidfd_getfd', what: "pidfd_getfd() (the paused call's socket)", since: '5.6', fallback: null }],
    ['pidfd_thread', { name: 'pidfd_thread', what: 'PIDFD_THREAD (a pidfd for any thread)', since: '6.9', fallback: "a worker thread's call is read through its leader's pidfd, checked to be the thread's own (docs/design.md)" }],
    ['so_peerpidfd', { name: 'so_peerpidfd', what: 'SO_PEERPIDFD', since: '6.5', fallback: 'the peer is named by SO_PEERCRED and its /proc start time' }],
    ['pidfd_get_info', { name: 'pidfd_get_info', what: 'PIDFD_GET_INFO (thread group and cgroup id in one ioctl)', since: '6.13', fallback: 'read from /proc/PID/status and /proc/PID/cgroup' }],
    ['user_namespaces', { name: 'user_namespaces', what: 'user namespaces (the workload runs as an unprivileged uid)', since: '3.8', fallback: null }],
  ];
  for (const [key, s] of specs) f.push(finding(s, ok(key), obs(key)));
  const pgr = readOr(path.join(proc, 'sys/net/ipv4/ping_group_range'));
  const [lo, hi] = (pgr ?? '1 0').split(/\s+/).map(Number);
  f.push({
    name: 'ping_group_range',
    what: 'net.ipv4.ping_group_range (who may open ping sockets)',
    since: '3.0',
    required: false,
    status: 'present',
    note: lo <= hi ? 'ping sockets are open to some groups; the sock_create hook refuses them inside an operation all the same' : '',
    observed: pgr ?? 'absent',
  });
  return { kernel: os.release(), findings: f, failing: f.filter((x) => x.required && x.status === 'missing').map((x) => x.name) };
}

export interface KernelFeatures {
  pidfd_open: number;
  pidfd_getfd: number;
  pidfd_get_info: number;
  pidfd_thread: number;
  pidfd_nonleader_errno: number;
  so_peerpidfd: number;
  seccomp_listener: number;
  wait_killable_recv: number;
  sync_wake_up: number;
  addfd: number;
  user_namespaces: number;
  prog_connect4: number;
  prog_connect6: number;
  prog_sendmsg4: number;
  prog_sendmsg6: number;
  prog_bind4: number;
  prog_bind6: number;
  prog_connect_unix: number;
  prog_sendmsg_unix: number;
  prog_skb_egress: number;
  prog_sock_create: number;
  prog_setsockopt: number;
  prog_syscall: number;
}
