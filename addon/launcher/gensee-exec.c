// SPDX-License-Identifier: Apache-2.0
/*
 * gensee-exec: places CMD in the operation's boundary before its first
 * instruction, and leaves it nothing it could use to step out.
 *
 *   gensee-exec --cgroup DIR [--user USER] [--notify-fd N] [--ro PATH]... -- CMD ARGS...
 *
 * In this order (each step needs the privilege the next one gives up):
 *   1. join DIR (write our pid to DIR/cgroup.procs), so every socket CMD
 *      ever creates is made inside the cgroup the eBPF hooks are attached to;
 *   2. new mount namespace (MS_SLAVE|MS_REC on /), and read-only, recursively:
 *      every cgroup/cgroup2 and bpf mount (found in /proc/self/mountinfo),
 *      /sys, /proc/sys, /proc/sysrq-trigger and every --ro PATH. A uid-0
 *      process with no capabilities still passes DAC checks on root-owned
 *      files: without this it could write its pid into a parent cgroup.procs,
 *      or a sysctl, or sysrq;
 *   3. drop the capability bounding set, lock the securebits, clear ambient;
 *   4. optionally switch to USER (setgroups, setgid, setuid);
 *   5. clear inheritable/permitted/effective; PR_SET_NO_NEW_PRIVS;
 *   6. with --notify-fd: install a seccomp filter that returns USER_NOTIF for
 *      connect, sendto (unless the destination argument is NULL), sendmsg and
 *      sendmmsg and allows everything else; pass the listener fd over the
 *      unix socket N with SCM_RIGHTS and wait for a 1-byte ack (0x01);
 *   7. close every fd but 0, 1, 2 (an inherited socket made outside the
 *      cgroup would escape the hooks) and execvp CMD.
 * Children and threads of CMD inherit all of it. Without --notify-fd there is
 * no pause: CMD runs in reject mode (the hooks deny unleased destinations).
 *
 * The sendmsg that passes the listener must not itself be paused (nobody
 * holds the listener yet), so sendmsg on exactly the notify socket's fd
 * number is allowed by the filter. That fd is first moved to a high number
 * so CMD's own sockets rarely land on it after exec; if one does, its
 * sendmsg merely skips the *pause*. It never skips the eBPF hook, which
 * enforces on the kernel's copy of the address.
 *
 * Only the native syscall ABI is filtered; a foreign-ABI syscall (e.g. i386
 * int 0x80, whose socketcall() the filter could not inspect) kills the
 * process rather than bypass the pause.
 *
 * Any failure: "gensee-exec: <step>: <strerror>" on stderr, exit 126
 * (127 when CMD is not found), like a shell.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/filter.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define EXIT_FAILED 126
#define EXIT_NOTFOUND 127
#define MAX_RO 64
#define ACK_GO 0x01
/* lowest fd number the notify socket is moved to before the filter names it */
#define NOTIFY_FD_FLOOR 1000

struct opts {
	const char *cgroup;
	const char *user;
	int notify_fd;
	const char *ro[MAX_RO];
	int nro;
	char **argv;
};

static void fail(int err, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

static void fail(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("gensee-exec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	exit(EXIT_FAILED);
}

static void usage(const char *msg) __attribute__((noreturn));

static void usage(const char *msg)
{
	fprintf(stderr, "gensee-exec: %s\nusage: gensee-exec --cgroup DIR [--user USER] [--notify-fd N] "
			"[--ro PATH]... -- CMD ARGS...\n", msg);
	exit(EXIT_FAILED);
}

static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	int i;
	long v;

	memset(o, 0, sizeof(*o));
	o->notify_fd = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (i + 1 >= argc)
			usage("missing value or CMD");
		if (!strcmp(a, "--cgroup")) {
			o->cgroup = argv[++i];
		} else if (!strcmp(a, "--user")) {
			o->user = argv[++i];
		} else if (!strcmp(a, "--notify-fd")) {
			if (parse_int(argv[++i], 3, 0x7fffffff, &v))
				usage("--notify-fd must be an fd number >= 3");
			o->notify_fd = (int)v;
		} else if (!strcmp(a, "--ro")) {
			if (o->nro == MAX_RO)
				usage("too many --ro paths");
			o->ro[o->nro++] = argv[++i];
		} else {
			fprintf(stderr, "gensee-exec: unknown option %s\n", a);
			usage("bad usage");
		}
	}
	if (!o->cgroup)
		usage("--cgroup DIR is required");
	if (i >= argc)
		usage("missing -- CMD");
	o->argv = argv + i;
}

/* ---- 1. cgroup ---------------------------------------------------------- */

static int pid_listed(const char *procs, pid_t pid)
{
	FILE *f = fopen(procs, "re");
	long p;
	int found = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%ld", &p) == 1)
		if (p == pid)
			found = 1;
	fclose(f);
	return found;
}

static void join_cgroup(const char *dir)
{
	char path[4096], buf[32];
	struct statfs sf;
	int fd, n;

	if (statfs(dir, &sf))
		fail(errno, "cgroup %s", dir);
	if ((unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC)
		fail(ENOTDIR, "cgroup %s: not a cgroup2 directory", dir);
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		fail(ENAMETOOLONG, "cgroup %s", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fail(errno, "cgroup: open %s", path);
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, (size_t)n) != n)
		fail(errno, "cgroup: write %s", path);
	close(fd);
	/* read it back: a hierarchy mix-up must not leave us outside silently */
	if (pid_listed(path, getpid()) != 1)
		fail(errno ? errno : ESRCH, "cgroup: pid %d not in %s after joining", (int)getpid(), path);
}

/* ---- 2. mount namespace ------------------------------------------------- */

struct strv {
	char **v;
	int n, cap;
};

static void strv_add(struct strv *s, const char *p)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], p))
			return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = realloc(s->v, (size_t)s->cap * sizeof(*s->v));
		if (!s->v)
			fail(ENOMEM, "mounts");
	}
	s->v[s->n] = strdup(p);
	if (!s->v[s->n])
		fail(ENOMEM, "mounts");
	s->n++;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape_octal(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
}

/* Mount points of every cgroup, cgroup2 and bpf filesystem. */
static void kernel_control_mounts(struct strv *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int cgroup2 = 0;

	if (!f)
		fail(errno, "mounts: open /proc/self/mountinfo");
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok, *mnt = NULL, *fstype = NULL;
		int field = 0, after_sep = 0;

		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
			if (field == 4)
				mnt = tok;
			else if (after_sep) {
				fstype = tok;
				break;
			} else if (field > 5 && !strcmp(tok, "-"))
				after_sep = 1;
		}
		if (!mnt || !fstype)
			continue;
		if (!strcmp(fstype, "cgroup2") || !strcmp(fstype, "cgroup") || !strcmp(fstype, "bpf")) {
			unescape_octal(mnt);
			strv_add(out, mnt);
			cgroup2 |= !strcmp(fstype, "cgroup2");
		}
	}
	free(line);
	fclose(f);
	if (!cgroup2)
		fail(ENOENT, "mounts: no cgroup2 mount in /proc/self/mountinfo");
}

static int is_mount_root(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx))
		return -1;
	if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return 0; /* unknown: bind over it, which is always safe */
	return !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static unsigned long keep_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;

	if (statvfs(path, &sv))
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

/* Make path and everything mounted below it read-only in our namespace.
 * missing_ok: a default path this kernel/config doesn't have. */
static void make_readonly(const char *path, int missing_ok)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	int root = is_mount_root(path);

	if (root < 0) {
		if (missing_ok && (errno == ENOENT || errno == ENOTDIR))
			return;
		fail(errno, "read-only %s", path);
	}
	/* a path inside a mount becomes its own mount first, so the flag
	 * applies to it and not to the whole filesystem around it */
	if (!root && mount(path, path, NULL, MS_BIND | MS_REC, NULL))
		fail(errno, "read-only %s: bind", path);
	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr)) == 0)
		return;
	if (errno != ENOSYS)
		fail(errno, "read-only %s: mount_setattr", path);
	/* before 5.12: the top mount only; cgroup and bpf mounts are listed
	 * individually, so they are still covered */
	if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep_flags(path), NULL))
		fail(errno, "read-only %s: remount", path);
}

static void private_mounts(const struct opts *o)
{
	static const char *const fixed[] = { "/sys", "/proc/sys", "/proc/sysrq-trigger" };
	struct strv m = { 0 };
	char real[4096];
	size_t i;
	int k;

	kernel_control_mounts(&m);
	if (unshare(CLONE_NEWNS))
		fail(errno, "unshare mount namespace");
	/* slave: host mounts still propagate in, ours never propagate out */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL))
		fail(errno, "mount / MS_SLAVE|MS_REC");
	for (k = 0; k < m.n; k++)
		make_readonly(m.v[k], 1);
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		make_readonly(fixed[i], 1);
	for (k = 0; k < o->nro; k++) {
		if (!realpath(o->ro[k], real))
			fail(errno, "read-only %s", o->ro[k]);
		make_readonly(real, 0);
	}
	for (k = 0; k < m.n; k++)
		free(m.v[k]);
	free(m.v);
}

/* ---- 3-5. credentials --------------------------------------------------- */

struct ident {
	uid_t uid;
	gid_t gid;
	gid_t groups[256];
	int ngroups;
};

static void lookup_user(const char *user, struct ident *id)
{
	struct passwd *pw;
	long v;
	char *colon;

	errno = 0;
	pw = getpwnam(user);
	if (pw) {
		id->uid = pw->pw_uid;
		id->gid = pw->pw_gid;
		id->ngroups = (int)(sizeof(id->groups) / sizeof(id->groups[0]));
		if (getgrouplist(user, pw->pw_gid, id->groups, &id->ngroups) < 0)
			fail(E2BIG, "user %s: too many supplementary groups", user);
		return;
	}
	/* numeric UID[:GID] for users without a passwd entry */
	colon = strchr(user, ':');
	if (colon)
		*colon = 0;
	if (parse_int(user, 0, 0x7ffffffe, &v))
		fail(errno ? errno : ENOENT, "user %s", user);
	id->uid = (uid_t)v;
	id->gid = (gid_t)v;
	if (colon) {
		if (parse_int(colon + 1, 0, 0x7ffffffe, &v))
			fail(EINVAL, "user %s: bad gid %s", user, colon + 1);
		id->gid = (gid_t)v;
	}
	id->groups[0] = id->gid;
	id->ngroups = 1;
}

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = -1;

	if (!f)
		fail(errno, "capabilities: open /proc/sys/kernel/cap_last_cap");
	if (fscanf(f, "%d", &n) != 1 || n < 0 || n > 63)
		fail(EINVAL, "capabilities: parse /proc/sys/kernel/cap_last_cap");
	fclose(f);
	return n;
}

static void drop_bounding(int last)
{
	int c;

	for (c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
			fail(errno, "capabilities: PR_CAPBSET_DROP %d", c);
	/* root gets no special treatment at exec, ever, and it can't be undone */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			  SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0))
		fail(errno, "capabilities: PR_SET_SECUREBITS");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
		fail(errno, "capabilities: PR_CAP_AMBIENT_CLEAR_ALL");
}

static void switch_user(const struct ident *id)
{
	uid_t r, e, s;

	if (setgroups((size_t)id->ngroups, id->groups))
		fail(errno, "user: setgroups");
	if (setresgid(id->gid, id->gid, id->gid))
		fail(errno, "user: setgid %u", (unsigned)id->gid);
	if (setresuid(id->uid, id->uid, id->uid))
		fail(errno, "user: setuid %u", (unsigned)id->uid);
	if (getresuid(&r, &e, &s) || r != id->uid || e != id->uid || s != id->uid)
		fail(EPERM, "user: uid is not %u after setuid", (unsigned)id->uid);
}

static void drop_caps(int last)
{
	cap_t none = cap_init(); /* all three sets empty */
	int c;

	if (!none)
		fail(errno, "capabilities: cap_init");
	if (cap_set_proc(none))
		fail(errno, "capabilities: cap_set_proc");
	cap_free(none);
	for (c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			fail(EPERM, "capabilities: %d still in the bounding set", c);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail(errno, "PR_SET_NO_NEW_PRIVS");
}

/* ---- 6. seccomp pause --------------------------------------------------- */

static int high_fd(int fd)
{
	struct rlimit rl;
	long floor = NOTIFY_FD_FLOOR;
	int hi;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (long)rl.rlim_cur <= floor + 1)
		floor = (long)rl.rlim_cur / 2;
	if (floor <= fd)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
	if (hi < 0)
		return fd; /* keep the low number: only the pause is affected */
	close(fd);
	return hi;
}

static void add_rule(scmp_filter_ctx ctx, const char *name, unsigned n, const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	int r;

	if (nr == __NR_SCMP_ERROR)
		fail(ENOSYS, "seccomp: resolve %s", name);
	r = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, n, cmp);
	if (r)
		fail(-r, "seccomp: rule %s", name);
}

/* Build with libseccomp, load with seccomp(2) ourselves: libseccomp 2.5 has
 * no knob for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV. With it, once the
 * supervisor has received a notification, only a fatal signal interrupts the
 * paused call; otherwise every signal (Go's SIGURG preemption, SIGALRM...)
 * would restart it as a new fault. */
static int install_filter(int notify_fd, int *killable)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct scmp_arg_cmp to_addr = SCMP_A4(SCMP_CMP_NE, 0);
	struct scmp_arg_cmp not_ours = SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)notify_fd);
	struct sock_fprog prog;
	struct stat st;
	void *buf;
	int mfd, r, listener;

	if (!ctx)
		fail(ENOMEM, "seccomp: seccomp_init");
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r)
		fail(-r, "seccomp: SCMP_FLTATR_ACT_BADARCH");
	add_rule(ctx, "connect", 0, NULL);
	add_rule(ctx, "sendto", 1, &to_addr);       /* NULL destination: a connected send */
	add_rule(ctx, "sendmsg", 1, &not_ours);     /* all but the hand-over below */
	add_rule(ctx, "sendmmsg", 0, NULL);

	mfd = memfd_create("gensee-filter", MFD_CLOEXEC);
	if (mfd < 0)
		fail(errno, "seccomp: memfd_create");
	r = seccomp_export_bpf(ctx, mfd);
	if (r)
		fail(-r, "seccomp: seccomp_export_bpf");
	seccomp_release(ctx);
	if (fstat(mfd, &st))
		fail(errno, "seccomp: fstat filter");
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > 0xffff)
		fail(EINVAL, "seccomp: exported filter size %lld", (long long)st.st_size);
	buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, mfd, 0);
	if (buf == MAP_FAILED)
		fail(errno, "seccomp: mmap filter");
	prog.len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	prog.filter = buf;

	*killable = 1;
	listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (listener < 0 && errno == EINVAL) { /* before 5.19 */
		*killable = 0;
		listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
					SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	}
	if (listener < 0)
		fail(errno, "seccomp: SECCOMP_SET_MODE_FILTER NEW_LISTENER");
	munmap(buf, (size_t)st.st_size);
	close(mfd);
	return listener;
}

static void hand_over(int sock, int listener, int killable)
{
	char data[128];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	ssize_t n;
	unsigned char ack = 0;

	memset(&c, 0, sizeof(c));
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = data;
	iov.iov_len = (size_t)snprintf(data, sizeof(data), "{\"gensee_exec\":1,\"pid\":%d,\"wait_killable\":%s}",
				       (int)getpid(), killable ? "true" : "false");
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = c.buf;
	mh.msg_controllen = sizeof(c.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &listener, sizeof(int));
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail(errno, "notify: send listener on fd %d", sock);
	do
		n = recv(sock, &ack, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail(errno, "notify: wait for ack");
	if (n == 0)
		fail(ECONNRESET, "notify: supervisor closed the socket before ack");
	if (ack != ACK_GO)
		fail(ECANCELED, "notify: supervisor refused (ack byte 0x%02x)", ack);
}

/* ---- 7. exec ------------------------------------------------------------ */

static void close_inherited(void)
{
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
	if (errno != ENOSYS && errno != EINVAL)
		fail(errno, "close_range");
	for (int fd = 3; fd < 65536; fd++) /* before 5.9 */
		close(fd);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ident id;
	int last, sock = -1, listener = -1, killable = 0;

	parse_opts(argc, argv, &o);
	if (o.user)
		lookup_user(o.user, &id);
	if (o.notify_fd >= 0) {
		if (fcntl(o.notify_fd, F_GETFD) < 0)
			fail(errno, "notify: fd %d", o.notify_fd);
		sock = high_fd(o.notify_fd);
	}
	last = last_cap();

	join_cgroup(o.cgroup);
	private_mounts(&o);
	drop_bounding(last);
	if (o.user)
		switch_user(&id);
	drop_caps(last);
	if (sock >= 0) {
		listener = install_filter(sock, &killable);
		hand_over(sock, listener, killable);
	}
	close_inherited();
	execvp(o.argv[0], o.argv);
	{
		int e = errno;

		fprintf(stderr, "gensee-exec: exec %s: %s\n", o.argv[0], strerror(e));
		return e == ENOENT ? EXIT_NOTFOUND : EXIT_FAILED;
	}
}
