// SPDX-License-Identifier: Apache-2.0
/*
 * seccomp user-notification loop logic (plain C); see notify.h.
 *
 * Per notification, the order that makes the read trustworthy enough
 * (kinvolk/seccompagent pkg/readarg, samples/seccomp/user-trap.c):
 *   RECV (request zeroed) → the caller's pidfd (kept, see below)
 *   → NOTIF_ID_VALID → read the sockaddr (process_vm_readv by pid) and look
 *   at the socket (pidfd_getfd) → NOTIF_ID_VALID again → decide → SEND.
 * The second NOTIF_ID_VALID is the proof: the call is still paused, so the
 * paused task was alive, and held its pid, through every read; a pid names
 * one live task at a time, so the reads by pid were of that task.
 * Another thread of the caller can still rewrite the sockaddr or swap the fd
 * after our read: that is why CONTINUE is never an allow. The retried call
 * meets the eBPF hook, which decides on the kernel's own copy.
 *
 * Protocol (TCP vs UDP) comes from the caller's socket itself, on every call:
 * pidfd_getfd() on args[0], then SO_PROTOCOL/SO_DOMAIN. It is exact and costs
 * 4 cheap syscalls, where /proc/PID/fdinfo doesn't carry the protocol at all
 * and the /proc/PID/net tables would mean scanning text by inode. Nothing of
 * the socket is cached: an fd number can be closed and reused for another
 * socket between two calls, and the only identity of the file the kernel
 * would vouch for (kcmp KCMP_FILE) needs a reference of ours to it, which
 * would keep the caller's socket open after the caller closed it.
 *
 * What is kept across calls: one pidfd per pid (pidfds[] below). A pidfd
 * names one struct pid; the kernel frees a pid number only once no task uses
 * that struct pid, and never reattaches it. So a kept pidfd either still
 * resolves to the task that holds that number now, or fails with ESRCH (its
 * process exited, whatever task holds the number now). On ESRCH the pidfd is
 * opened afresh and the look retried once; the NOTIF_ID_VALID after the look
 * proves the number was the paused task's throughout.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "notify.h"
#include "proc.h"
#include "gen/gensee/v2/fault.pb-c.h"

/* 6.6+: wake the supervisor's CPU synchronously, so the paused task and
 * the handler hand over on one core (measured ~2.7x → ~1.5x a bare connect) */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#if defined(__x86_64__)
#define GS_NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GS_NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#define GS_NATIVE_ARCH 0 /* not checked */
#endif

/* pidfds kept per pid (see the top of the file); a direct-mapped table */
#define GS_PIDFD_SLOTS 16

struct gs_pidfd_slot {
	uint32_t pid;
	int fd; /* -1: empty */
};

struct gs_notifier {
	int fd;
	int leases_fd;
	int sync_wake_up;
	struct seccomp_notif_sizes sizes;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	uint64_t *pending;
	size_t npending, cap;
	uint64_t seq;
	struct gs_notify_stats st;
	char *operation_id;
	char cgroup2[4096]; /* cgroup2 mount point, "" if none (cgroup_id stays 0) */
	int no_vm_readv;    /* no process_vm_readv (ENOSYS): read /proc/PID/mem */
	struct gs_pidfd_slot pidfds[GS_PIDFD_SLOTS];
	struct gs_refusal refusals[GS_REFUSALS_MAX];
	size_t nrefusals;
	/* step, respond, stats and the pending set run on the loop thread and
	 * on the answering one */
	pthread_mutex_t mu;
	/* the loop thread (gs_notifier_run) */
	pthread_t thread;
	int running;
	int wake_fd;
	struct gs_notify_loop loop;
};

/* outcome of looking at one paused call */
enum gs_verdict_kind {
	GS_V_FAULT, /* raise it */
	GS_V_FAST,  /* exact lease present */
	GS_V_PASS,  /* nothing for the boundary to decide */
	GS_V_UNINSPECTABLE,
	GS_V_GONE,
};

static void close_if(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* ---- kernel calls ------------------------------------------------------- */

static int id_valid(const struct gs_notifier *n, uint64_t id)
{
	return ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id);
}

/* 1 sent, 0 gone (ENOENT: the target died or was interrupted), -1 error */
static int send_resp(struct gs_notifier *n, uint64_t id, int errnum, struct gs_err *err)
{
	struct seccomp_notif_resp *r = n->resp;

	memset(r, 0, n->sizes.seccomp_notif_resp);
	r->id = id;
	if (errnum) {
		r->error = -errnum;
	} else {
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	}
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_SEND, r) == 0)
		return 1;
	if (errno == ENOENT) {
		n->st.gone++;
		return 0;
	}
	return gs_errf(err, errno, "ioctl", "SECCOMP_IOCTL_NOTIF_SEND id %llu", (unsigned long long)id);
}

/* The caller's memory, by pid: process_vm_readv (no fd, one syscall), or
 * /proc/PID/mem where the kernel refuses that (opened on first use). */
struct gs_mem {
	struct gs_notifier *n;
	uint32_t pid;
	int memfd; /* -1 until needed */
};

static int read_exact(struct gs_mem *m, uint64_t addr, void *buf, size_t len)
{
	ssize_t r;

	if (addr > (uint64_t)INT64_MAX - len)
		return -1;
	if (!m->n->no_vm_readv) {
		struct iovec local = { .iov_base = buf, .iov_len = len };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

		r = syscall(SYS_process_vm_readv, (pid_t)m->pid, &local, 1UL, &remote, 1UL, 0UL);
		if (r == (ssize_t)len)
			return 0;
		if (r >= 0 || (errno != ENOSYS && errno != EPERM))
			return -1;
		/* EPERM: /proc/PID/mem checks the fs creds, not the real ones */
		if (errno == ENOSYS)
			m->n->no_vm_readv = 1;
	}
	if (m->memfd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%u/mem", m->pid);
		m->memfd = open(path, O_RDONLY | O_CLOEXEC);
		if (m->memfd < 0)
			return -1;
	}
	r = pread(m->memfd, buf, len, (off_t)addr);
	return r == (ssize_t)len ? 0 : -1;
}

/* ---- kept pidfds -------------------------------------------------------- */

static void pidfd_forget(struct gs_notifier *n, uint32_t pid)
{
	struct gs_pidfd_slot *s = &n->pidfds[pid % GS_PIDFD_SLOTS];

	if (s->fd >= 0 && s->pid == pid) {
		close(s->fd);
		s->fd = -1;
		s->pid = 0;
	}
}

/* The kept pidfd for pid, or a fresh one (then kept): -1 with errno. *kept
 * says which; a kept one may name an exited process (then it fails ESRCH). */
static int pidfd_for(struct gs_notifier *n, uint32_t pid, int *kept)
{
	struct gs_pidfd_slot *s = &n->pidfds[pid % GS_PIDFD_SLOTS];
	int fd;

	if (s->fd >= 0 && s->pid == pid) {
		*kept = 1;
		return s->fd;
	}
	*kept = 0;
	fd = gs_pidfd_open(pid);
	if (fd < 0)
		return -1;
	if (s->fd >= 0)
		close(s->fd);
	s->pid = pid;
	s->fd = fd;
	return fd;
}

static void pidfds_close(struct gs_notifier *n)
{
	for (int i = 0; i < GS_PIDFD_SLOTS; i++) {
		if (n->pidfds[i].fd >= 0)
			close(n->pidfds[i].fd);
		n->pidfds[i].fd = -1;
	}
}

/* ---- /proc readers (slow path only) ------------------------------------- */

static uint32_t tgid_of(uint32_t pid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (gs_proc_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nTgid:");
	return p ? (uint32_t)strtoul(p + 6, NULL, 10) : 0;
}

/* On cgroup2 a cgroup directory's inode number is the kernel cgroup id.
 * (Only where the kernel has no PIDFD_GET_INFO: see subject_of.) */
static uint64_t cgroup_id_of(const struct gs_notifier *n, uint32_t pid)
{
	char rel[4096], full[8192];
	struct stat st;

	if (!n->cgroup2[0] || gs_proc_cgroup(pid, rel, sizeof(rel)))
		return 0;
	snprintf(full, sizeof(full), "%s%s", n->cgroup2, rel);
	return stat(full, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The caller's thread group and cgroup id, from the kept pidfd that inspect()
 * just used (one ioctl), else from /proc. Whoever calls it proves the answer
 * was of the paused task with a NOTIF_ID_VALID after it. */
static void subject_of(struct gs_notifier *n, uint32_t pid, uint32_t *tgid, uint64_t *cgroup_id)
{
	struct gs_pidfd_slot *s = &n->pidfds[pid % GS_PIDFD_SLOTS];

	if (s->fd >= 0 && s->pid == pid && gs_pidfd_info(s->fd, tgid, cgroup_id) == 0 && *tgid)
		return;
	*tgid = tgid_of(pid);
	*cgroup_id = cgroup_id_of(n, pid);
}

/* ---- pending set -------------------------------------------------------- */

static int pending_add(struct gs_notifier *n, uint64_t id)
{
	if (n->npending == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 64;
		uint64_t *p = realloc(n->pending, cap * sizeof(*p));

		if (!p)
			return -1;
		n->pending = p;
		n->cap = cap;
	}
	n->pending[n->npending++] = id;
	return 0;
}

static int pending_take(struct gs_notifier *n, uint64_t id)
{
	size_t i;

	for (i = 0; i < n->npending; i++) {
		if (n->pending[i] == id) {
			n->pending[i] = n->pending[--n->npending];
			return 1;
		}
	}
	return 0;
}

/* ---- open / close ------------------------------------------------------- */

static int is_listener(int fd)
{
	char path[64], target[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = readlink(path, target, sizeof(target) - 1);
	if (r < 0)
		return -1;
	target[r] = 0;
	return strcmp(target, "anon_inode:seccomp notify") == 0;
}

struct gs_notifier *gs_notifier_open(int listener_fd, const char *leases_pin, const struct gs_notify_opts *opts,
				     struct gs_err *err)
{
	struct gs_notifier *n;
	size_t reqsz, respsz;
	int r;

	r = is_listener(listener_fd);
	if (r < 0) {
		gs_errf(err, errno, "readlink", "/proc/self/fd/%d", listener_fd);
		return NULL;
	}
	if (r == 0) {
		gs_errf(err, EINVAL, "readlink", "fd %d is not a seccomp notify listener", listener_fd);
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		gs_errf(err, ENOMEM, "calloc", "notifier");
		return NULL;
	}
	n->fd = -1;
	n->leases_fd = -1;
	for (int i = 0; i < GS_PIDFD_SLOTS; i++)
		n->pidfds[i].fd = -1;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &n->sizes)) {
		gs_errf(err, errno, "seccomp", "SECCOMP_GET_NOTIF_SIZES");
		goto out;
	}
	/* the kernel's structs may be larger than our headers' (never smaller) */
	reqsz = n->sizes.seccomp_notif > sizeof(*n->req) ? n->sizes.seccomp_notif : sizeof(*n->req);
	respsz = n->sizes.seccomp_notif_resp > sizeof(*n->resp) ? n->sizes.seccomp_notif_resp : sizeof(*n->resp);
	n->sizes.seccomp_notif = (__u16)reqsz;
	n->sizes.seccomp_notif_resp = (__u16)respsz;
	n->req = calloc(1, reqsz);
	n->resp = calloc(1, respsz);
	n->operation_id = strdup(opts && opts->operation_id ? opts->operation_id : "");
	if (!n->req || !n->resp || !n->operation_id) {
		gs_errf(err, ENOMEM, "calloc", "notification buffers");
		goto out;
	}
	n->leases_fd = bpf_obj_get(leases_pin);
	if (n->leases_fd < 0) {
		gs_errf(err, errno, "bpf_obj_get", "map %s", leases_pin);
		goto out;
	}
	if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0) {
		n->sync_wake_up = 1;
	} else if (errno != EINVAL && errno != ENOTTY) {
		gs_errf(err, errno, "ioctl", "SECCOMP_IOCTL_NOTIF_SET_FLAGS fd %d", listener_fd);
		goto out;
	}
	gs_find_cgroup2("/proc/self/mountinfo", n->cgroup2, sizeof(n->cgroup2));
	pthread_mutex_init(&n->mu, NULL);
	n->wake_fd = -1;
	n->fd = listener_fd; /* owned from here on */
	return n;
out:
	close_if(n->leases_fd);
	free(n->req);
	free(n->resp);
	free(n->operation_id);
	free(n);
	return NULL;
}

int gs_notifier_fd(const struct gs_notifier *n)
{
	return n->fd;
}

int gs_notifier_sync_wake_up(const struct gs_notifier *n)
{
	return n->sync_wake_up;
}

size_t gs_notifier_pending(struct gs_notifier *n)
{
	size_t v;

	pthread_mutex_lock(&n->mu);
	v = n->npending;
	pthread_mutex_unlock(&n->mu);
	return v;
}

void gs_notifier_stats(struct gs_notifier *n, struct gs_notify_stats *out)
{
	pthread_mutex_lock(&n->mu);
	*out = n->st;
	pthread_mutex_unlock(&n->mu);
}

size_t gs_notifier_close(struct gs_notifier *n, int errnum)
{
	struct gs_err ignored;
	size_t i, answered = 0;

	if (!n)
		return 0;
	gs_notifier_halt(n);
	if (errnum <= 0)
		errnum = EACCES;
	for (i = 0; i < n->npending; i++) {
		if (send_resp(n, n->pending[i], errnum, &ignored) == 1) {
			n->st.refused++;
			answered++;
		}
	}
	n->npending = 0;
	close_if(n->fd);
	close_if(n->leases_fd);
	pidfds_close(n);
	free(n->pending);
	free(n->req);
	free(n->resp);
	free(n->operation_id);
	pthread_mutex_destroy(&n->mu);
	free(n);
	return answered;
}

/* ---- inspect one paused call -------------------------------------------- */

struct gs_call {
	int sys;
	struct gs_lease_key key;
	char address[48];
};

static int classify(const struct seccomp_data *d)
{
	if (GS_NATIVE_ARCH && d->arch != GS_NATIVE_ARCH)
		return 0;
	switch (d->nr) {
	case __NR_connect: return GS_NSYS_CONNECT;
	case __NR_sendto: return GS_NSYS_SENDTO;
	case __NR_sendmsg: return GS_NSYS_SENDMSG;
	case __NR_sendmmsg: return GS_NSYS_SENDMMSG;
	case __NR_socket: return GS_NSYS_SOCKET;
	case __NR_socketpair: return GS_NSYS_SOCKETPAIR;
	case __NR_io_uring_setup: return GS_NSYS_IO_URING_SETUP;
	case __NR_listen: return GS_NSYS_LISTEN;
	default: return 0;
	}
}

/* Where the destination sockaddr is, from registers and (for sendmsg and
 * sendmmsg) the msghdr in the caller's memory. 0 ok, 1 no address, -1 unreadable. */
static int locate_sockaddr(struct gs_mem *mem, int sys, const __u64 *a, uint64_t *ptr, uint64_t *len, int *flags)
{
	struct msghdr mh;
	struct mmsghdr mm;

	switch (sys) {
	case GS_NSYS_CONNECT:
		*ptr = a[1];
		*len = (uint32_t)a[2];
		*flags = 0;
		return 0;
	case GS_NSYS_SENDTO:
		*ptr = a[4];
		*len = (uint32_t)a[5];
		*flags = (int)a[3];
		return 0;
	case GS_NSYS_SENDMSG:
		if (read_exact(mem, a[1], &mh, sizeof(mh)))
			return -1;
		*ptr = (uint64_t)(uintptr_t)mh.msg_name;
		*len = mh.msg_namelen;
		*flags = (int)a[2];
		return 0;
	case GS_NSYS_SENDMMSG:
		/* only the first message is looked at; every message still
		 * meets the sendmsg hook on its own */
		if ((uint32_t)a[2] == 0)
			return 1;
		if (read_exact(mem, a[1], &mm, sizeof(mm)))
			return -1;
		*ptr = (uint64_t)(uintptr_t)mm.msg_hdr.msg_name;
		*len = mm.msg_hdr.msg_namelen;
		*flags = (int)a[3];
		return 0;
	}
	return 1;
}

static void fill_key_v4(struct gs_call *c, const void *addr4, uint16_t port_be)
{
	c->key.family = GS_FAMILY_IPV4;
	memcpy(c->key.addr, addr4, 4);
	c->key.port = ntohs(port_be);
	inet_ntop(AF_INET, addr4, c->address, sizeof(c->address));
}

/* The caller's socket args[0], through its pidfd: *sfd, or a verdict. A kept
 * pidfd that fails ESRCH named an exited process that held this pid before:
 * forget it, open one afresh, once. */
static int caller_socket(struct gs_notifier *n, const struct seccomp_notif *req, int *sfd, enum gs_verdict_kind *v)
{
	int kept, pidfd;

	for (int tries = 0; tries < 2; tries++) {
		pidfd = pidfd_for(n, req->pid, &kept);
		if (pidfd < 0) {
			*v = errno == ESRCH ? GS_V_GONE : GS_V_UNINSPECTABLE;
			return -1;
		}
		*sfd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)(uint32_t)req->data.args[0], 0);
		if (*sfd >= 0)
			return 0;
		if (errno != ESRCH || !kept)
			break;
		pidfd_forget(n, req->pid);
	}
	*v = errno == ESRCH ? GS_V_GONE : errno == EBADF ? GS_V_PASS : GS_V_UNINSPECTABLE;
	if (errno == ESRCH)
		pidfd_forget(n, req->pid);
	return -1;
}

static enum gs_verdict_kind inspect(struct gs_notifier *n, const struct seccomp_notif *req, struct gs_call *c)
{
	const __u64 *a = req->data.args;
	union {
		struct sockaddr sa;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} sa;
	struct gs_mem mem = { .n = n, .pid = req->pid, .memfd = -1 };
	uint64_t ptr = 0, len = 0;
	int sfd = -1, flags = 0, domain = 0, proto = 0, r;
	socklen_t ol;
	enum gs_verdict_kind v;

	memset(c, 0, sizeof(*c));
	c->sys = classify(&req->data);
	if (!c->sys || c->sys >= GS_NSYS_SOCKET)
		return GS_V_PASS; /* not ours, or a socket()/socketpair() filter_refusal let go */
	if (c->sys != GS_NSYS_SENDTO && a[1] == 0)
		return GS_V_PASS; /* the kernel fails it (EFAULT/EINVAL) */

	/* the call is still paused: its task holds req->pid */
	if (id_valid(n, req->id))
		return GS_V_GONE;
	r = locate_sockaddr(&mem, c->sys, a, &ptr, &len, &flags);
	if (r) {
		v = r > 0 ? GS_V_PASS : GS_V_UNINSPECTABLE;
		goto out;
	}
	if (!ptr || len < sizeof(sa_family_t)) {
		v = GS_V_PASS; /* no destination: a connected send, or the kernel refuses it */
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	if (read_exact(&mem, ptr, &sa, len < sizeof(sa) ? (size_t)len : sizeof(sa))) {
		v = GS_V_UNINSPECTABLE;
		goto out;
	}
	/* too short for its family: the kernel returns EINVAL on its own */
	if (!(sa.sa.sa_family == AF_INET && len >= sizeof(sa.in4)) &&
	    !(sa.sa.sa_family == AF_INET6 && len >= 24 /* SIN6_LEN_RFC2133 */)) {
		v = GS_V_PASS; /* AF_UNIX, AF_NETLINK, AF_UNSPEC (disconnect)... */
		goto out;
	}
	if (caller_socket(n, req, &sfd, &v))
		goto out;
	ol = sizeof(proto);
	if (getsockopt(sfd, SOL_SOCKET, SO_PROTOCOL, &proto, &ol)) {
		v = errno == ENOTSOCK ? GS_V_PASS : GS_V_UNINSPECTABLE;
		goto out;
	}
	ol = sizeof(domain);
	if (getsockopt(sfd, SOL_SOCKET, SO_DOMAIN, &domain, &ol)) {
		v = GS_V_UNINSPECTABLE;
		goto out;
	}
	/* every read above (memory by pid, the socket by pidfd) was of the
	 * paused task: it is still paused, so it held req->pid throughout */
	if (id_valid(n, req->id)) {
		v = GS_V_GONE;
		goto out;
	}
	/* an AF_INET socket refuses a v6 address itself; an AF_INET6 one sends a
	 * v4 address as IPv4 (and meets the v4 hook), so that one counts */
	if ((domain != AF_INET && domain != AF_INET6) || (domain == AF_INET && sa.sa.sa_family == AF_INET6)) {
		v = GS_V_PASS;
		goto out;
	}
	if (proto == IPPROTO_TCP || proto == IPPROTO_MPTCP) {
		c->key.protocol = IPPROTO_TCP;
		/* a TCP send ignores the address unless it is a Fast Open
		 * connect (which meets the connect hook) */
		if (c->sys != GS_NSYS_CONNECT && !(flags & MSG_FASTOPEN)) {
			v = GS_V_PASS;
			goto out;
		}
	} else if (proto == IPPROTO_UDP) {
		c->key.protocol = IPPROTO_UDP;
	} else {
		v = GS_V_PASS; /* ping, raw, UDP-Lite: no lease can name them; the hook decides */
		goto out;
	}
	if (sa.sa.sa_family == AF_INET) {
		fill_key_v4(c, &sa.in4.sin_addr, sa.in4.sin_port);
	} else if (IN6_IS_ADDR_V4MAPPED(&sa.in6.sin6_addr)) {
		/* same mapping as the hook: ::ffff:a.b.c.d meets the IPv4 lease */
		fill_key_v4(c, &sa.in6.sin6_addr.s6_addr[12], sa.in6.sin6_port);
	} else {
		c->key.family = GS_FAMILY_IPV6;
		memcpy(c->key.addr, &sa.in6.sin6_addr, 16);
		c->key.port = ntohs(sa.in6.sin6_port);
		inet_ntop(AF_INET6, &sa.in6.sin6_addr, c->address, sizeof(c->address));
	}
	{
		struct gs_lease_value lv;

		/*
		 * Not for a lease with max uses: its uses may all be promised
		 * to calls the resolver answered and that have not run again
		 * yet (racing first connects); a call let through here would
		 * spend one of them. The resolver decides such a call, and a
		 * grant adds its own use.
		 */
		v = GS_V_FAULT;
		if (bpf_map_lookup_elem(n->leases_fd, &c->key, &lv) == 0 && !gs_lease_expired(&lv, gs_boot_ns()) &&
		    !(lv.flags & GS_LEASE_LIMITED))
			v = GS_V_FAST; /* the hook will count the use */
	}
out:
	close_if(sfd);
	close_if(mem.memfd);
	return v;
}

/* ---- fault encoding ----------------------------------------------------- */

static int encode_fault(const struct gs_notifier *n, struct gs_fault_info *f)
{
	Gensee__V2__ProcessSubject ps = GENSEE__V2__PROCESS_SUBJECT__INIT;
	Gensee__V2__Subject subj = GENSEE__V2__SUBJECT__INIT;
	Gensee__V2__NetworkEffect ne = GENSEE__V2__NETWORK_EFFECT__INIT;
	Gensee__V2__Effect eff = GENSEE__V2__EFFECT__INIT;
	Gensee__V2__CapabilityFault cf = GENSEE__V2__CAPABILITY_FAULT__INIT;
	size_t len;

	ps.pid = f->pid;
	ps.start_time_ticks = f->start_time_ticks;
	subj.kind_case = GENSEE__V2__SUBJECT__KIND_PROCESS;
	subj.process = &ps;
	ne.family = f->key.family == GS_FAMILY_IPV4 ? GENSEE__V2__FAMILY__FAMILY_IPV4 : GENSEE__V2__FAMILY__FAMILY_IPV6;
	ne.protocol = f->key.protocol == IPPROTO_TCP ? GENSEE__V2__PROTOCOL__PROTOCOL_TCP
						     : GENSEE__V2__PROTOCOL__PROTOCOL_UDP;
	ne.address = f->address;
	ne.port = f->key.port;
	eff.kind_case = GENSEE__V2__EFFECT__KIND_NETWORK;
	eff.network = &ne;
	cf.schema = 2;
	cf.operation_id = n->operation_id;
	cf.fault_id = f->fault_id;
	cf.subject = &subj;
	cf.effect = &eff;
	cf.source = GENSEE__V2__SOURCE__SOURCE_SECCOMP_NOTIFY;
	cf.observed_at_boot_ns = f->observed_at_boot_ns;
	cf.cgroup_id = f->cgroup_id;
	len = gensee__v2__capability_fault__get_packed_size(&cf);
	f->fault = malloc(len ? len : 1);
	if (!f->fault)
		return -1;
	f->fault_len = gensee__v2__capability_fault__pack(&cf, f->fault);
	return 0;
}

/* ---- the step ----------------------------------------------------------- */

/*
 * The errno of a call gensee-exec's filter sends only to be refused, 0 for
 * the others. The family is judged again here (a filter of someone else's,
 * an OCI runtime's, may send socket() for its own reasons): only a family
 * the filter itself refuses is refused. AF_UNIX is gensee-exec's to refuse
 * (--no-unix, before Linux 6.7), so a socket(AF_UNIX) that arrives was.
 */
static int filter_refusal(int sys, const __u64 *a)
{
	uint64_t fam = a[0];

	switch (sys) {
	case GS_NSYS_SOCKET: return fam == 2 || fam == 10 ? 0 : EAFNOSUPPORT; /* AF_INET, AF_INET6 */
	case GS_NSYS_SOCKETPAIR: return fam == 1 ? 0 : EAFNOSUPPORT;
	case GS_NSYS_IO_URING_SETUP: return ENOSYS;
	case GS_NSYS_LISTEN: return EPERM;
	default: return 0;
	}
}

/* Keep a filter refusal for the resolver (a repeat of the last one by the
 * same thread only counts); a full list counts what it could not keep. */
static void keep_refusal(struct gs_notifier *n, const struct seccomp_notif *req, int sys, int errnum)
{
	struct gs_refusal *last = n->nrefusals ? &n->refusals[n->nrefusals - 1] : NULL;

	n->st.filtered++;
	if (last && last->pid == req->pid && last->syscall == sys &&
	    !memcmp(last->args, req->data.args, sizeof(last->args))) {
		last->count++;
		return;
	}
	if (n->nrefusals == GS_REFUSALS_MAX) {
		n->st.filtered_lost++;
		return;
	}
	last = &n->refusals[n->nrefusals++];
	last->pid = req->pid;
	last->syscall = sys;
	last->errnum = errnum;
	memcpy(last->args, req->data.args, sizeof(last->args));
	last->count = 1;
	last->boot_ns = gs_boot_ns();
}

size_t gs_notifier_take_refusals(struct gs_notifier *n, struct gs_refusal *out, size_t cap)
{
	size_t k;

	pthread_mutex_lock(&n->mu);
	k = n->nrefusals < cap ? n->nrefusals : cap;
	memcpy(out, n->refusals, k * sizeof(*out));
	memmove(n->refusals, n->refusals + k, (n->nrefusals - k) * sizeof(*out));
	n->nrefusals -= k;
	pthread_mutex_unlock(&n->mu);
	return k;
}

static int step_locked(struct gs_notifier *n, struct gs_fault_info *f, struct gs_err *err)
{
	struct seccomp_notif *req = n->req;
	struct gs_call c;
	uint64_t observed;
	enum gs_verdict_kind v;
	int r;

	memset(req, 0, n->sizes.seccomp_notif);
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_RECV, req)) {
		/* ENOENT: the caller was killed, or its wait interrupted, between
		 * the wake-up and our receive */
		if (errno == ENOENT || errno == EINTR) {
			n->st.gone += errno == ENOENT;
			return 0;
		}
		return gs_errf(err, errno, "ioctl", "SECCOMP_IOCTL_NOTIF_RECV fd %d", n->fd);
	}
	observed = gs_boot_ns();
	{
		int sys = classify(&req->data), errnum = filter_refusal(sys, req->data.args);

		if (errnum) {
			/* the registers decided it: nothing to read, nothing to race */
			r = send_resp(n, req->id, errnum, err);
			if (r < 0)
				return -1;
			keep_refusal(n, req, sys, errnum);
			return 0;
		}
	}
	v = inspect(n, req, &c);
	if (v == GS_V_FAULT) {
		memset(f, 0, sizeof(*f));
		f->id = req->id;
		f->pid = req->pid;
		f->syscall = c.sys;
		f->key = c.key;
		memcpy(f->address, c.address, sizeof(f->address));
		f->observed_at_boot_ns = observed;
		subject_of(n, req->pid, &f->tgid, &f->cgroup_id);
		snprintf(f->fault_id, sizeof(f->fault_id), "sn-%u-%llu", req->pid, (unsigned long long)(n->seq + 1));
		/* the subject must be the paused task: ID_VALID after reading
		 * /proc/PID proves the pid was not recycled meanwhile */
		if (gs_proc_start_time(req->pid, &f->start_time_ticks) || id_valid(n, req->id)) {
			v = GS_V_GONE;
		} else if (encode_fault(n, f) == 0 && pending_add(n, req->id) == 0) {
			n->seq++;
			n->st.slow_path++;
			return 1;
		} else {
			v = GS_V_UNINSPECTABLE; /* out of memory: let the hook decide */
		}
		free(f->fault);
		f->fault = NULL;
	}
	/* Everything not raised is answered, even when the task looks gone: a
	 * misjudged "gone" must never leave a call paused with nobody owning
	 * it. If it really is gone, SEND says ENOENT and counts it. */
	r = send_resp(n, req->id, 0, err);
	if (r < 0)
		return -1;
	if (r == 1) {
		if (v == GS_V_FAST)
			n->st.fast_path++;
		else if (v == GS_V_PASS)
			n->st.passthrough++;
		else
			n->st.uninspectable++;
	}
	return 0;
}

static int respond_locked(struct gs_notifier *n, uint64_t id, int errnum, struct gs_err *err)
{
	int r;

	if (!pending_take(n, id))
		return gs_errf(err, EINVAL, "respond", "notification %llu is not pending", (unsigned long long)id);
	if (id_valid(n, id)) {
		if (errno != ENOENT) {
			gs_errf(err, errno, "ioctl", "SECCOMP_IOCTL_NOTIF_ID_VALID id %llu", (unsigned long long)id);
			pending_add(n, id); /* still ours to answer, at the latest by close */
			return -1;
		}
		n->st.gone++;
		return 0;
	}
	r = send_resp(n, id, errnum, err);
	if (r < 0)
		pending_add(n, id);
	if (r == 1) {
		if (errnum)
			n->st.refused++;
		else
			n->st.continued++;
	}
	return r;
}

int gs_notifier_step(struct gs_notifier *n, struct gs_fault_info *f, struct gs_err *err)
{
	int r;

	pthread_mutex_lock(&n->mu);
	r = step_locked(n, f, err);
	pthread_mutex_unlock(&n->mu);
	return r;
}

int gs_notifier_respond(struct gs_notifier *n, uint64_t id, int errnum, struct gs_err *err)
{
	int r;

	pthread_mutex_lock(&n->mu);
	r = respond_locked(n, id, errnum, err);
	pthread_mutex_unlock(&n->mu);
	return r;
}

/* ---- the loop thread ---------------------------------------------------- */

/* poll(), not epoll: with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP the kernel wakes
 * a poll() waiter on the paused task's own CPU (WF_CURRENT_CPU); the wake-up
 * of an epoll waiter loses that, and the event loop adds a turn of its own. */
static void *loop_thread(void *arg)
{
	struct gs_notifier *n = arg;
	struct gs_err err;

	/* not here: a real-time wake-up costs the fast path ~10 us (measured) */

	for (;;) {
		struct pollfd p[2] = { { .fd = n->fd, .events = POLLIN }, { .fd = n->wake_fd, .events = POLLIN } };
		int r = poll(p, 2, -1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			gs_errf(&err, errno, "poll", "seccomp listener fd %d", n->fd);
			n->loop.stopped(n->loop.ctx, &err);
			return NULL;
		}
		if (p[1].revents)
			return NULL; /* halt */
		if (p[0].revents & POLLIN) {
			struct gs_fault_info f;
			memset(&err, 0, sizeof(err));
			r = gs_notifier_step(n, &f, &err);
			if (r < 0) {
				n->loop.stopped(n->loop.ctx, &err);
				return NULL;
			}
			if (r == 1)
				n->loop.fault(n->loop.ctx, &f);
			continue;
		}
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			n->loop.stopped(n->loop.ctx, NULL); /* every task using the filter is gone */
			return NULL;
		}
	}
}

int gs_notifier_run(struct gs_notifier *n, const struct gs_notify_loop *loop, struct gs_err *err)
{
	int rc;

	if (n->running)
		return gs_errf(err, EBUSY, "gs_notifier_run", "already running");
	n->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->wake_fd < 0)
		return gs_errf(err, errno, "eventfd", "notifier loop");
	n->loop = *loop;
	rc = pthread_create(&n->thread, NULL, loop_thread, n);
	if (rc) {
		close(n->wake_fd);
		n->wake_fd = -1;
		return gs_errf(err, rc, "pthread_create", "notifier loop");
	}
	n->running = 1;
	return 0;
}

void gs_notifier_halt(struct gs_notifier *n)
{
	uint64_t one = 1;

	if (!n->running)
		return;
	if (write(n->wake_fd, &one, sizeof(one)) < 0) {
		/* cannot fail for an eventfd below its limit */
	}
	if (!pthread_equal(pthread_self(), n->thread))
		pthread_join(n->thread, NULL);
	else
		pthread_detach(n->thread);
	close(n->wake_fd);
	n->wake_fd = -1;
	n->running = 0;
}
