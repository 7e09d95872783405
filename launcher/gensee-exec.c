// SPDX-License-Identifier: Apache-2.0
/*
 * gensee-exec: places CMD in the operation's boundary before its first
 * instruction, and leaves it nothing it could use to step out, or to reach
 * gensee's own objects.
 *
 *   gensee-exec --cgroup DIR [--join-cgroup DIR1]...
 *               [--map-root UID:GID | --user USER | --host-root]
 *               [--notify-fd N] [--handle-fd N] [--allow-io-uring] [--allow-listen] [--no-unix]
 *               [--ro PATH]... [--hide PATH]...
 *               -- CMD ARGS...
 *
 * Identity (one of; the default is --map-root 65534:65534):
 *   --map-root UID:GID  CMD runs in a new user namespace whose uid/gid 0 are
 *                       the unprivileged host UID/GID: root in its own view,
 *                       nobody on the host (no host file, process, BPF object
 *                       or cgroup file is its own);
 *   --user USER         CMD runs as host USER (name or UID[:GID]);
 *   --host-root         CMD keeps host uid 0 (still without capabilities).
 *
 * Three processes. The *outer* one (the pid our parent spawned) joins the
 * cgroup and builds the namespaces; the *init* (pid 1 of a new pid
 * namespace) finishes the workload's view, becomes the workload's identity,
 * hands the seccomp listener over and stays as a reaper; CMD is pid 2.
 * In this order (each step needs the privilege the next one gives up):
 *   1. join DIR (write our pid to DIR/cgroup.procs), so every socket CMD
 *      ever creates is made inside the cgroup the eBPF hooks are attached to;
 *      then every --join-cgroup DIR1, a cgroup v1 directory (the operation's
 *      own cgroup in the v1 pids or memory hierarchy, on a hybrid layout
 *      where those controllers are not on cgroup2): CMD's pids.max and
 *      memory limit hold from its first instruction, and step 2's cgroup
 *      namespace roots each v1 hierarchy there too;
 *   2. unshare the mount, cgroup and pid namespaces: the cgroup namespace is
 *      rooted at DIR, so no cgroup outside the operation has a name CMD can
 *      resolve, and the kernel refuses migrations outside it
 *      (CLONE_INTO_CGROUP included) whatever fd CMD holds;
 *   3. the workload's mounts (MS_SLAVE|MS_REC on /, so nothing propagates
 *      out): every bpf mount detached (BPF_OBJ_GET checks only file modes,
 *      so a pin that can be named can be opened), every cgroup v1 and v2
 *      mount detached and one fresh read-only cgroup2 mounted at the cgroup2
 *      mount point (its root is DIR), every --hide PATH (the state
 *      directory) covered by an empty read-only tmpfs, and /sys, every --ro
 *      PATH read-only; with --resolv-conf, FILE (opened before any of this,
 *      a regular file, no symlink) bound read-only over /etc/resolv.conf, so
 *      CMD's resolver asks gensee's DNS stub; then checked against
 *      /proc/self/mountinfo;
 *   4. fork the init: pid 1 of the new pid namespace. When it exits, the
 *      kernel kills every process left in the namespace, so nothing CMD
 *      starts outlives it; the outer process forwards signals and exits
 *      with CMD's status (128+N for a signal), and the init kills the
 *      namespace if the outer process dies;
 *   5. (init) a fresh /proc for the new pid namespace (no host process is
 *      visible, the supervisor least of all), /proc/sys and
 *      /proc/sysrq-trigger read-only;
 *   6. (init) the identity: for --map-root, drop supplementary groups,
 *      unshare the user namespace and let the outer process (still root on
 *      the host) write setgroups=deny, uid_map "0 UID 1", gid_map "0 GID 1";
 *      then become 0:0 inside. The mount, cgroup and pid namespaces belong to
 *      the host's user namespace, so nothing CMD does inside its own can
 *      change them;
 *   7. drop the capability bounding set, lock the securebits, clear ambient;
 *      for --user, switch uid (setgroups, setgid, setuid); clear
 *      inheritable/permitted/effective; PR_SET_NO_NEW_PRIVS;
 *   8. install a seccomp filter that refuses socket families and syscalls no
 *      hook can see (see add_refusals: other families, io_uring unless
 *      --allow-io-uring, listen() unless --allow-listen); with --notify-fd
 *      it also returns USER_NOTIF for connect, sendto (unless the
 *      destination argument is NULL), sendmsg and sendmmsg and allows
 *      everything else; pass the listener fd over the
 *      unix socket N with SCM_RIGHTS (and, as JSON, the host uid/gid the
 *      workload runs as) and wait for a 1-byte ack (0x01);
 *   9. fork CMD, which closes every fd but 0, 1, 2 (an inherited socket made
 *      outside the cgroup would escape the hooks) and execs; the init reaps
 *      and forwards signals until CMD exits. With --handle-fd N, fd N
 *      (checked before step 1: an AF_UNIX SOCK_SEQPACKET or SOCK_STREAM
 *      socket, nothing else) is moved out of the way like the notify socket,
 *      and CMD gets it as fd 3, without close-on-exec; every fd from 4 up is
 *      still closed. That is the tool's capability handle: a unix socket to
 *      the executor, so no inet socket made outside the cgroup gets in. The
 *      outer process and the init close their copies.
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
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
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
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define EXIT_FAILED 126
#define EXIT_NOTFOUND 127
#define MAX_RO 64
#define MAX_JOIN 8
#define ACK_GO 0x01
/* lowest fd number the notify socket is moved to before the filter names it */
#define NOTIFY_FD_FLOOR 1000
/* where CMD finds its capability handle (--handle-fd) */
#define CMD_HANDLE_FD 3

enum ident_mode {
	ID_MAP_ROOT, /* a user namespace: 0 inside is map_uid:map_gid on the host */
	ID_USER,     /* host uid USER */
	ID_HOST_ROOT,
};

struct opts {
	const char *cgroup;
	const char *join[MAX_JOIN];
	int njoin;
	enum ident_mode mode;
	int nmodes;
	const char *user;
	uid_t map_uid;
	gid_t map_gid;
	int notify_fd;
	int handle_fd;
	int allow_io_uring;
	int allow_listen;
	int no_unix;
	const char *resolv_conf;
	const char *ro[MAX_RO];
	int nro;
	const char *hide[MAX_RO];
	int nhide;
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
	fprintf(stderr,
		"gensee-exec: %s\nusage: gensee-exec --cgroup DIR [--join-cgroup DIR]... "
		"[--map-root UID:GID | --user USER | --host-root] "
		"[--notify-fd N] [--handle-fd N] [--allow-io-uring] [--allow-listen] [--no-unix] [--resolv-conf FILE] [--ro PATH]... "
		"[--hide PATH]... -- CMD ARGS...\n",
		msg);
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

/* "UID:GID", both unprivileged: 0 would map the workload's root to the host's */
static int parse_map(const char *s, uid_t *uid, gid_t *gid)
{
	char buf[64], *colon;
	long u, g;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return -1;
	*colon = 0;
	if (parse_int(buf, 1, 0x7ffffffe, &u) || parse_int(colon + 1, 1, 0x7ffffffe, &g))
		return -1;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	int i;
	long v;

	memset(o, 0, sizeof(*o));
	o->notify_fd = -1;
	o->handle_fd = -1;
	o->mode = ID_MAP_ROOT;
	o->map_uid = 65534;
	o->map_gid = 65534;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "--host-root")) {
			o->mode = ID_HOST_ROOT;
			o->nmodes++;
			continue;
		}
		if (!strcmp(a, "--allow-io-uring") || !strcmp(a, "--allow-listen")) {
			*(a[8] == 'i' ? &o->allow_io_uring : &o->allow_listen) = 1;
			continue;
		}
		if (!strcmp(a, "--no-unix")) {
			o->no_unix = 1;
			continue;
		}
		if (i + 1 >= argc)
			usage("missing value or CMD");
		if (!strcmp(a, "--cgroup")) {
			o->cgroup = argv[++i];
		} else if (!strcmp(a, "--join-cgroup")) {
			if (o->njoin == MAX_JOIN)
				usage("too many --join-cgroup directories");
			o->join[o->njoin++] = argv[++i];
		} else if (!strcmp(a, "--user")) {
			o->user = argv[++i];
			o->mode = ID_USER;
			o->nmodes++;
		} else if (!strcmp(a, "--map-root")) {
			if (parse_map(argv[++i], &o->map_uid, &o->map_gid))
				usage("--map-root must be UID:GID, both between 1 and 2147483646");
			o->mode = ID_MAP_ROOT;
			o->nmodes++;
		} else if (!strcmp(a, "--notify-fd")) {
			if (parse_int(argv[++i], 3, 0x7fffffff, &v))
				usage("--notify-fd must be an fd number >= 3");
			o->notify_fd = (int)v;
		} else if (!strcmp(a, "--handle-fd")) {
			if (parse_int(argv[++i], 3, 0x7fffffff, &v))
				usage("--handle-fd must be an fd number >= 3");
			o->handle_fd = (int)v;
		} else if (!strcmp(a, "--resolv-conf")) {
			o->resolv_conf = argv[++i];
		} else if (!strcmp(a, "--ro") || !strcmp(a, "--hide")) {
			int hide = a[2] == 'h';

			if ((hide ? o->nhide : o->nro) == MAX_RO)
				usage(hide ? "too many --hide paths" : "too many --ro paths");
			if (hide)
				o->hide[o->nhide++] = argv[++i];
			else
				o->ro[o->nro++] = argv[++i];
		} else {
			fprintf(stderr, "gensee-exec: unknown option %s\n", a);
			usage("bad usage");
		}
	}
	if (!o->cgroup)
		usage("--cgroup DIR is required");
	if (o->nmodes > 1)
		usage("--map-root, --user and --host-root exclude each other");
	if (o->handle_fd >= 0 && o->handle_fd == o->notify_fd)
		usage("--handle-fd and --notify-fd must be different fds");
	if (i >= argc)
		usage("missing -- CMD");
	o->argv = argv + i;
}

/* --handle-fd: only a unix socket (to the executor) may follow CMD in. An
 * inet socket made outside the cgroup would escape the hooks; a file or a
 * pipe is not a handle. */
static void check_handle(int fd)
{
	int domain = 0, type = 0;
	socklen_t len = sizeof(domain);

	if (fcntl(fd, F_GETFD) < 0)
		fail(errno, "--handle-fd %d", fd);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		fail(errno, "--handle-fd %d: not an AF_UNIX socket", fd);
	if (domain != AF_UNIX)
		fail(EAFNOSUPPORT, "--handle-fd %d: socket family %d, not AF_UNIX", fd, domain);
	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		fail(errno, "--handle-fd %d: getsockopt SO_TYPE", fd);
	if (type != SOCK_SEQPACKET && type != SOCK_STREAM)
		fail(EPROTOTYPE, "--handle-fd %d: socket type %d, not SOCK_SEQPACKET or SOCK_STREAM", fd, type);
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

/* Write our pid to DIR/cgroup.procs, DIR on a filesystem of type magic
 * (what names it in messages), and read it back. */
static void join_one(const char *dir, unsigned long magic, const char *what)
{
	char path[4096], buf[32];
	struct statfs sf;
	int fd, n;

	if (statfs(dir, &sf))
		fail(errno, "%s %s", what, dir);
	if ((unsigned long)sf.f_type != magic)
		fail(ENOTDIR, "%s %s: not a %s directory", what, dir,
		     magic == CGROUP2_SUPER_MAGIC ? "cgroup2" : "cgroup v1");
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		fail(ENAMETOOLONG, "%s %s", what, dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fail(errno, "%s: open %s", what, path);
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, (size_t)n) != n)
		fail(errno, "%s: write %s", what, path);
	close(fd);
	/* read it back: a hierarchy mix-up must not leave us outside silently */
	if (pid_listed(path, getpid()) != 1)
		fail(errno ? errno : ESRCH, "%s: pid %d not in %s after joining", what, (int)getpid(), path);
}

static void join_cgroup(const struct opts *o)
{
	int i;

	join_one(o->cgroup, CGROUP2_SUPER_MAGIC, "cgroup");
	for (i = 0; i < o->njoin; i++)
		join_one(o->join[i], CGROUP_SUPER_MAGIC, "--join-cgroup");
}

/* ---- 2-3. namespaces and mounts ----------------------------------------- */

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
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
}

struct control_mounts {
	struct strv bpf, cgroup1, cgroup2;
};

/* Mount points of every bpf, cgroup and cgroup2 filesystem, as
 * /proc/self/mountinfo lists them (field 5; the type after " - "). */
static void kernel_control_mounts(struct control_mounts *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;

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
		unescape_octal(mnt);
		if (!strcmp(fstype, "bpf"))
			strv_add(&out->bpf, mnt);
		else if (!strcmp(fstype, "cgroup"))
			strv_add(&out->cgroup1, mnt);
		else if (!strcmp(fstype, "cgroup2"))
			strv_add(&out->cgroup2, mnt);
	}
	free(line);
	fclose(f);
}

static void strv_free(struct strv *s)
{
	for (int k = 0; k < s->n; k++)
		free(s->v[k]);
	free(s->v);
	memset(s, 0, sizeof(*s));
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
	static const struct {
		unsigned long st, ms;
	} kept[] = {
		{ ST_NOSUID, MS_NOSUID },   { ST_NODEV, MS_NODEV },           { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
	};
	struct statvfs sv;
	unsigned long f = 0;
	size_t i;

	if (statvfs(path, &sv))
		return 0;
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (sv.f_flag & kept[i].st)
			f |= kept[i].ms;
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

/* Detach every bpf/cgroup filesystem stacked on path (a mount point may
 * carry more than one); stop at the first other filesystem. */
static void detach_control_fs(const char *path)
{
	struct statfs sf;
	int k;

	for (k = 0; k < 16; k++) {
		if (statfs(path, &sf)) {
			if (errno == ENOENT || errno == ENOTDIR)
				return; /* under a mount detached before it */
			fail(errno, "mounts: statfs %s", path);
		}
		if ((unsigned long)sf.f_type != BPF_FS_MAGIC && (unsigned long)sf.f_type != CGROUP_SUPER_MAGIC &&
		    (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC)
			return;
		if (umount2(path, MNT_DETACH)) {
			if (errno == EINVAL)
				return; /* not a mount point: the filesystem is the parent's */
			fail(errno, "mounts: detach %s", path);
		}
	}
	fail(ELOOP, "mounts: %s: more than 16 stacked mounts", path);
}

/* --resolv-conf: a regular file, not a symlink. Opened in the new mount
 * namespace for the bind (a mount of another namespace cannot be the
 * source of a bind: EINVAL), and checked once before, to refuse early. */
static int open_resolv_conf(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		fail(errno, "--resolv-conf %s", path);
	if (fstat(fd, &st))
		fail(errno, "--resolv-conf %s: fstat", path);
	if (!S_ISREG(st.st_mode))
		fail(EINVAL, "--resolv-conf %s: not a regular file", path);
	return fd;
}

/* FILE over /etc/resolv.conf (wherever a symlink there leads), read-only */
static void bind_resolv_conf(int fd)
{
	char src[64], real[4096];

	if (!realpath("/etc/resolv.conf", real))
		fail(errno, "resolv.conf: /etc/resolv.conf");
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	if (mount(src, real, NULL, MS_BIND, NULL))
		fail(errno, "resolv.conf: bind over %s", real);
	if (mount(NULL, real, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		fail(errno, "resolv.conf: read-only %s", real);
	close(fd);
}

/* an empty, read-only directory over path: what was there has no name here */
static void hide_path(const char *path)
{
	char real[4096];

	if (!realpath(path, real))
		fail(errno, "hide %s", path);
	if (mount("gensee-hidden", real, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0555,size=4k,nr_inodes=1"))
		fail(errno, "hide %s: mount tmpfs", real);
}

/* Step 3's result, read back from the kernel: no bpffs, no cgroup v1, one
 * cgroup2 whose root is our cgroup namespace's. */
static void check_mounts(void)
{
	struct control_mounts m = { 0 };

	kernel_control_mounts(&m);
	if (m.bpf.n)
		fail(EEXIST, "mounts: bpf filesystem still mounted at %s", m.bpf.v[0]);
	if (m.cgroup1.n)
		fail(EEXIST, "mounts: cgroup filesystem still mounted at %s", m.cgroup1.v[0]);
	if (m.cgroup2.n != 1)
		fail(ENOENT, "mounts: %d cgroup2 mounts after remounting, expected 1", m.cgroup2.n);
	strv_free(&m.bpf);
	strv_free(&m.cgroup1);
	strv_free(&m.cgroup2);
}

static void private_mounts(const struct opts *o)
{
	struct control_mounts m = { 0 };
	char real[4096];
	int k;

	kernel_control_mounts(&m);
	if (!m.cgroup2.n)
		fail(ENOENT, "mounts: no cgroup2 mount in /proc/self/mountinfo");
	/* slave: host mounts still propagate in, ours never propagate out */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL))
		fail(errno, "mount / MS_SLAVE|MS_REC");
	/* bound before anything is hidden: FILE may live under a hidden path */
	if (o->resolv_conf)
		bind_resolv_conf(open_resolv_conf(o->resolv_conf));
	/* hidden first: a state directory under /sys would be read-only below */
	for (k = 0; k < o->nhide; k++)
		hide_path(o->hide[k]);
	for (k = 0; k < m.bpf.n; k++)
		detach_control_fs(m.bpf.v[k]);
	for (k = 0; k < m.cgroup1.n; k++)
		detach_control_fs(m.cgroup1.v[k]);
	for (k = 0; k < m.cgroup2.n; k++)
		detach_control_fs(m.cgroup2.v[k]);
	/* mounted from inside the cgroup namespace, its root is our cgroup */
	if (mount("cgroup2", m.cgroup2.v[0], "cgroup2", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		fail(errno, "mounts: cgroup2 at %s", m.cgroup2.v[0]);
	make_readonly("/sys", 1);
	for (k = 0; k < o->nro; k++) {
		if (!realpath(o->ro[k], real))
			fail(errno, "read-only %s", o->ro[k]);
		make_readonly(real, 0);
	}
	check_mounts();
	strv_free(&m.bpf);
	strv_free(&m.cgroup1);
	strv_free(&m.cgroup2);
}

/* ---- 5. the init's /proc ------------------------------------------------ */

static void private_proc(void)
{
	static const char *const fixed[] = { "/proc/sys", "/proc/sysrq-trigger" };
	size_t i;

	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		fail(errno, "mount /proc for the pid namespace");
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		make_readonly(fixed[i], 1);
}

/* ---- 6-7. identity and capabilities ------------------------------------ */

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
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
			  SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0))
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

/* ---- 8. seccomp pause --------------------------------------------------- */

static int high_fd(int fd)
{
	struct rlimit rl;
	long floor = NOTIFY_FD_FLOOR;
	int hi;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur <= floor + 1)
		floor = (long)rl.rlim_cur / 2;
	if (floor <= fd)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
	if (hi < 0)
		return fd; /* keep the low number: only the pause is affected */
	close(fd);
	return hi;
}

static void add_rule_act(scmp_filter_ctx ctx, uint32_t act, const char *name, unsigned n,
			 const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	int r;

	if (nr == __NR_SCMP_ERROR)
		fail(ENOSYS, "seccomp: resolve %s", name);
	r = seccomp_rule_add_array(ctx, act, nr, n, cmp);
	if (r)
		fail(-r, "seccomp: rule %s", name);
}

static void add_rule(scmp_filter_ctx ctx, const char *name, unsigned n, const struct scmp_arg_cmp *cmp)
{
	add_rule_act(ctx, SCMP_ACT_NOTIFY, name, n, cmp);
}

/*
 * Refuse, in every mode, what the eBPF hooks cannot see:
 * - socket() of any family but AF_UNIX, AF_INET and AF_INET6 (AF_VSOCK to a
 *   VM's host, AF_NETLINK, AF_PACKET, AF_TIPC, AF_RDS, AF_ALG, ... have no
 *   cgroup hook), and socketpair() of any family but AF_UNIX: EAFNOSUPPORT.
 *   The family is a register, so no thread can change it after the check;
 *   the upper half of the register does not hide one (anything above
 *   AF_INET6 as 64 bits is refused);
 * - io_uring (unless --allow-io-uring): its IORING_OP_SOCKET makes sockets
 *   without a socket() call, and io_uring is where sandboxes lose their
 *   syscall filters (Docker's default profile refuses it too): ENOSYS, so
 *   libraries fall back to plain syscalls;
 * - with --no-unix (a kernel before 6.7, without cgroup/connect_unix):
 *   socket(AF_UNIX) as well, since nothing would police its connects;
 *   socketpair() stays;
 * - listen() (unless --allow-listen, given when the policy has listen
 *   rules): a socket listening on a port the kernel picked never meets
 *   cgroup/bind4|6. EPERM.
 * With a listener (pause mode) these go to the supervisor, which answers
 * them with the same errno at once and records them; without one, the
 * filter answers them itself.
 */
static uint32_t refuse_act(int notify, int errnum)
{
	return notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO((uint32_t)errnum);
}

static void add_refusals(scmp_filter_ctx ctx, const struct opts *o, int notify)
{
	static const scmp_datum_t other_low[] = {
		0, 3, 4, 5, 6, 7, 8, 9, 1
	}; /* AF_UNSPEC .. AF_ROSE, not 2, 10; 1: --no-unix */
	struct scmp_arg_cmp cmp;
	size_t i;

	cmp = SCMP_A0(SCMP_CMP_GT, 10); /* AF_INET6 */
	add_rule_act(ctx, refuse_act(notify, EAFNOSUPPORT), "socket", 1, &cmp);
	for (i = 0; i < sizeof(other_low) / sizeof(other_low[0]) - (o->no_unix ? 0 : 1); i++) {
		cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, other_low[i]);
		add_rule_act(ctx, refuse_act(notify, EAFNOSUPPORT), "socket", 1, &cmp);
	}
	cmp = SCMP_A0(SCMP_CMP_GT, 1); /* AF_UNIX */
	add_rule_act(ctx, refuse_act(notify, EAFNOSUPPORT), "socketpair", 1, &cmp);
	cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0);
	add_rule_act(ctx, refuse_act(notify, EAFNOSUPPORT), "socketpair", 1, &cmp);
	if (!o->allow_io_uring) {
		add_rule_act(ctx, refuse_act(notify, ENOSYS), "io_uring_setup", 0, NULL);
		add_rule_act(ctx, SCMP_ACT_ERRNO(ENOSYS), "io_uring_enter", 0, NULL);
		add_rule_act(ctx, SCMP_ACT_ERRNO(ENOSYS), "io_uring_register", 0, NULL);
	}
	if (!o->allow_listen)
		add_rule_act(ctx, refuse_act(notify, EPERM), "listen", 0, NULL);
}

/* Build with libseccomp, load with seccomp(2) ourselves: libseccomp 2.5 has
 * no knob for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV. With it, once the
 * supervisor has received a notification, only a fatal signal interrupts the
 * paused call; otherwise every signal (Go's SIGURG preemption, SIGALRM...)
 * would restart it as a new fault. Without a notify socket (reject mode) the
 * filter carries the refusals only and has no listener (returns -1). */
static int install_filter(int notify_fd, int *killable, const struct opts *o)
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
	add_refusals(ctx, o, notify_fd >= 0);
	if (notify_fd >= 0) {
		add_rule(ctx, "connect", 0, NULL);
		add_rule(ctx, "sendto", 1, &to_addr);   /* NULL destination: a connected send */
		add_rule(ctx, "sendmsg", 1, &not_ours); /* all but the hand-over below */
		add_rule(ctx, "sendmmsg", 0, NULL);
	}

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
	if (notify_fd < 0) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			fail(errno, "seccomp: SECCOMP_SET_MODE_FILTER");
		munmap(buf, (size_t)st.st_size);
		close(mfd);
		return -1;
	}
	listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (listener < 0 && errno == EINVAL) { /* before 5.19 */
		*killable = 0;
		listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	}
	if (listener < 0)
		fail(errno, "seccomp: SECCOMP_SET_MODE_FILTER NEW_LISTENER");
	munmap(buf, (size_t)st.st_size);
	close(mfd);
	return listener;
}

/* host uid/gid the workload runs as: the map's for --map-root (inside, we
 * are 0:0), else our own */
static void host_ids(const struct opts *o, unsigned *uid, unsigned *gid)
{
	*uid = o->mode == ID_MAP_ROOT ? (unsigned)o->map_uid : (unsigned)getuid();
	*gid = o->mode == ID_MAP_ROOT ? (unsigned)o->map_gid : (unsigned)getgid();
}

static void hand_over(const struct opts *o, int sock, int listener, int killable, pid_t outer)
{
	char data[192];
	unsigned uid, gid;
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
	host_ids(o, &uid, &gid);
	iov.iov_len =
		(size_t)snprintf(data, sizeof(data),
				 "{\"gensee_exec\":1,\"pid\":%d,\"wait_killable\":%s,\"host_uid\":%u,\"host_gid\":%u}",
				 (int)outer, killable ? "true" : "false", uid, gid);
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

/* ---- 4. outer process and init: sync, signals, exit status ------------- */

#define SYNC_UNSHARED 'U' /* init -> outer: my user namespace exists, map it */
#define SYNC_MAPPED 'M'   /* outer -> init: mapped */

/* signals the outer process and the init pass on to CMD */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH };

static void block_signals(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(set, forwarded[i]);
	sigaddset(set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, set, NULL))
		fail(errno, "sigprocmask");
}

static void sync_send(int fd, char c, const char *what)
{
	ssize_t n;

	do
		n = write(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		fail(n < 0 ? errno : EPIPE, "%s", what);
}

static void sync_recv(int fd, char want, const char *what)
{
	ssize_t n;
	char c = 0;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail(errno, "%s", what);
	if (n == 0 || c != want)
		fail(ECONNRESET, "%s: the other gensee-exec process is gone", what);
}

/* CMD's status as a shell reports it */
static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAILED;
}

static void write_proc(int procfd, pid_t pid, const char *file, const char *text)
{
	char path[64];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, file);
	fd = openat(procfd, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fail(errno, "user namespace: open /proc/%s", path);
	if (write(fd, text, len) != (ssize_t)len)
		fail(errno, "user namespace: write /proc/%s", path);
	close(fd);
}

/* 6, the outer half: only a process with CAP_SETUID on the host may map
 * the init's root to a uid other than its own */
static void map_identity(int procfd, pid_t init, const struct opts *o)
{
	char line[64];

	write_proc(procfd, init, "setgroups", "deny");
	snprintf(line, sizeof(line), "0 %u 1\n", (unsigned)o->map_uid);
	write_proc(procfd, init, "uid_map", line);
	snprintf(line, sizeof(line), "0 %u 1\n", (unsigned)o->map_gid);
	write_proc(procfd, init, "gid_map", line);
}

/* Nothing left to do as root but pass signals on to an init that is no
 * longer our uid: CAP_KILL is the one capability kept. */
static void outer_keep_kill(void)
{
	cap_t c = cap_init();
	cap_value_t kill_cap = CAP_KILL;

	if (!c || cap_set_flag(c, CAP_PERMITTED, 1, &kill_cap, CAP_SET) ||
	    cap_set_flag(c, CAP_EFFECTIVE, 1, &kill_cap, CAP_SET) || cap_set_proc(c))
		fail(errno, "capabilities: keep only CAP_KILL");
	cap_free(c);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail(errno, "PR_SET_NO_NEW_PRIVS");
}

/* The outer process waits: signals go to the init, the init's status is ours. */
static void __attribute__((noreturn)) outer_wait(pid_t init, const sigset_t *set)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si), status;
		pid_t r;

		if (sig < 0) {
			if (errno == EINTR)
				continue;
			fail(errno, "sigwaitinfo");
		}
		if (sig != SIGCHLD) {
			kill(init, sig);
			continue;
		}
		r = waitpid(init, &status, WNOHANG);
		if (r == init) {
			if (WIFSIGNALED(status)) { /* die the same way, so our parent sees it */
				signal(WTERMSIG(status), SIG_DFL);
				sigprocmask(SIG_UNBLOCK, set, NULL);
				raise(WTERMSIG(status));
			}
			exit(exit_code(status));
		}
	}
}

/* 9, the init half: reap everything, pass signals on to CMD, leave with
 * CMD's status. Leaving kills the whole pid namespace; so does the outer
 * process going away (EOF on the sync socket). */
static void __attribute__((noreturn)) init_wait(pid_t cmd, const sigset_t *set, int sync_fd)
{
	int sfd = signalfd(-1, set, SFD_CLOEXEC);

	if (sfd < 0)
		fail(errno, "signalfd");
	for (;;) {
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN }, { .fd = sync_fd, .events = POLLIN } };
		struct signalfd_siginfo si;
		int status;
		pid_t r;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail(errno, "poll");
		}
		if (pf[1].revents) {
			char c;

			if (read(sync_fd, &c, 1) <= 0)
				_exit(EXIT_FAILED); /* the outer process died: so does everything here */
		}
		if (!(pf[0].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(cmd, (int)si.ssi_signo);
			continue;
		}
		while ((r = waitpid(-1, &status, WNOHANG)) > 0)
			if (r == cmd)
				_exit(exit_code(status));
	}
}

/* ---- 9. exec ------------------------------------------------------------ */

/* every fd from first up */
static void close_inherited(int first)
{
	if (syscall(SYS_close_range, (unsigned)first, ~0U, 0U) == 0)
		return;
	if (errno != ENOSYS && errno != EINVAL)
		fail(errno, "close_range");
	for (int fd = first; fd < 65536; fd++) /* before 5.9 */
		close(fd);
}

/* the capability handle as CMD's fd 3, kept across exec */
static void handle_to_fd3(int handle)
{
	if (handle != CMD_HANDLE_FD) {
		if (dup2(handle, CMD_HANDLE_FD) < 0) /* the copy is not close-on-exec */
			fail(errno, "--handle-fd: dup2 to fd %d", CMD_HANDLE_FD);
		close(handle);
	} else if (fcntl(handle, F_SETFD, 0)) {
		fail(errno, "--handle-fd: clear close-on-exec on fd %d", CMD_HANDLE_FD);
	}
}

/* execvp, except that a PATH directory the workload may not search (root's
 * own, say: it is nobody on the host) counts as "not there", so a command
 * found nowhere is ENOENT (127), as a shell reports it. Returns errno. */
static int exec_search(char **argv)
{
	const char *name = argv[0], *p = getenv("PATH");
	char path[4096];
	int found_err = 0;

	if (strchr(name, '/')) {
		execv(name, argv);
		return errno;
	}
	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		const char *end = strchrnul(p, ':');
		int len = (int)(end - p);
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), "%.*s%s%s", len, p, len ? "/" : "", name) < sizeof(path)) {
			execv(path, argv);
			if (errno != ENOENT && errno != ENOTDIR && !(errno == EACCES && stat(path, &st)))
				found_err = errno; /* there, but not runnable: say why unless found later */
		}
		p = *end ? end + 1 : end;
	}
	return found_err ? found_err : ENOENT;
}

static void __attribute__((noreturn)) exec_cmd(char **argv, int handle, const sigset_t *set)
{
	int e;

	if (handle >= 0) {
		handle_to_fd3(handle);
		close_inherited(CMD_HANDLE_FD + 1);
	} else {
		close_inherited(3);
	}
	if (sigprocmask(SIG_UNBLOCK, set, NULL))
		fail(errno, "sigprocmask");
	e = exec_search(argv);
	fprintf(stderr, "gensee-exec: exec %s: %s\n", argv[0], strerror(e));
	_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_FAILED);
}

/* ---- the init (pid 1): steps 5-9 ---------------------------------------- */

static void __attribute__((noreturn)) run_init(const struct opts *o, const struct ident *id, int last, int sock,
					       int handle, int sync_fd, pid_t outer, const sigset_t *set)
{
	int listener, killable = 0;
	pid_t cmd;

	private_proc();
	if (o->mode == ID_MAP_ROOT) {
		/* host root's groups would follow us in, unmapped but still honoured */
		if (setgroups(0, NULL))
			fail(errno, "user namespace: setgroups");
		if (unshare(CLONE_NEWUSER))
			fail(errno, "unshare user namespace");
		sync_send(sync_fd, SYNC_UNSHARED, "user namespace: ask for the map");
		sync_recv(sync_fd, SYNC_MAPPED, "user namespace: wait for the map");
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			fail(errno, "user namespace: become 0:0");
	}
	drop_bounding(last);
	if (o->mode == ID_USER)
		switch_user(id);
	drop_caps(last);
	listener = install_filter(sock, &killable, o);
	if (sock >= 0) {
		hand_over(o, sock, listener, killable, outer);
		close(listener);
		close(sock);
	}
	cmd = fork();
	if (cmd < 0)
		fail(errno, "fork CMD");
	if (cmd == 0)
		exec_cmd(o->argv, handle, set);
	if (handle >= 0)
		close(handle); /* CMD's alone: its peer sees EOF when CMD and its children are gone */
	init_wait(cmd, set, sync_fd);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ident id;
	int last, sock = -1, handle = -1, procfd, sv[2];
	pid_t outer = getpid(), parent = getppid(), init;
	sigset_t set;

	parse_opts(argc, argv, &o);
	if (o.mode == ID_USER)
		lookup_user(o.user, &id);
	if (o.notify_fd >= 0) {
		if (fcntl(o.notify_fd, F_GETFD) < 0)
			fail(errno, "notify: fd %d", o.notify_fd);
		sock = high_fd(o.notify_fd);
	}
	if (o.handle_fd >= 0) {
		check_handle(o.handle_fd);
		handle = high_fd(o.handle_fd);
	}
	if (o.resolv_conf) /* refused here, before anything changes; opened again in step 3 */
		close(open_resolv_conf(o.resolv_conf));
	last = last_cap();
	/* the supervisor that started us gone: so are we, and with us the init */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		fail(errno, "PR_SET_PDEATHSIG");
	if (getppid() != parent)
		fail(ESRCH, "parent exited before we started");

	join_cgroup(&o);
	if (unshare(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWPID))
		fail(errno, "unshare mount, cgroup and pid namespaces");
	private_mounts(&o);
	procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC); /* the host's, before the init mounts its own */
	if (procfd < 0)
		fail(errno, "open /proc");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		fail(errno, "socketpair");
	block_signals(&set);

	init = fork();
	if (init < 0)
		fail(errno, "fork the pid namespace's init");
	if (init == 0) {
		close(sv[0]);
		close(procfd);
		run_init(&o, &id, last, sock, handle, sv[1], outer, &set);
	}
	close(sv[1]);
	if (sock >= 0)
		close(sock);
	if (handle >= 0)
		close(handle);
	if (o.mode == ID_MAP_ROOT) {
		sync_recv(sv[0], SYNC_UNSHARED, "user namespace: wait for the init");
		map_identity(procfd, init, &o);
		sync_send(sv[0], SYNC_MAPPED, "user namespace: release the init");
	}
	close(procfd);
	outer_keep_kill();
	outer_wait(init, &set);
}
