// SPDX-License-Identifier: Apache-2.0
/*
 * gensee-fdkeep: keeps the seccomp listener fds of gensee's OCI listener
 * (and any other fd it is handed) alive while the resolver restarts, and
 * hands duplicates to the next resolver that proves itself. No Node, no
 * policy, nothing to upgrade often.
 *
 *   gensee-fdkeep SOCKET          serve on SOCKET (its directory: 0700, ours)
 *   gensee-fdkeep --nudge TID...  restart the system call each TID waits in
 *
 * While any fd of a seccomp filter's listener is open, a paused call waits
 * in the kernel; once the last one closes, the kernel answers it ENOSYS.
 * This process holding a duplicate is what keeps a container's calls
 * waiting, not failing, while no resolver reads them.
 *
 * Protocol: SOCK_SEQPACKET, one message each way, a text line first:
 *   KEEP <tag>\n<meta> + 1 fd   keep fd under tag     → OK KEEP <tag>
 *   DROP <tag>                  close it              → OK DROP <tag> <n>
 *   DROPOP <op>                 close every <op>/...  → OK DROPOP <op> <n>
 *   LIST                        → FD <tag> <pending_since_boot_ns>\n<meta> + fd, one per kept fd,
 *                                 CALL <tid> <nr> <arrived_boot_ns> <tag>, one per call received
 *                                 while no resolver was connected (reported once),
 *                                 REFUSED <boot_ns> <pid> <uid> <why>, one per refused peer
 *                                 (reported once), END <fds> <refused> <refusals_lost> <calls_lost>
 *   PING                        → PONG <pid> <fds>
 * pending_since: when no resolver was connected, the first moment the fd
 * had a paused call waiting (CLOCK_BOOTTIME ns; 0: none seen).
 *
 * CALL: while no resolver is connected, each seccomp listener fd kept is
 * read here (SECCOMP_IOCTL_NOTIF_RECV), only to note which thread made a
 * call and when it arrived; it is never answered, so the call keeps
 * waiting. The next resolver restarts it in place (--nudge) and serves the
 * fresh notification, knowing from CALL how long the call has waited
 * (fault_deadline_ms counts from the arrival, not from the restart).
 * Past MAX_CALLS arrivals are counted only (calls_lost); those calls still
 * wait and are served, their arrival unknown (pending_since bounds it).
 *
 * Admission (the rule supervisor.sock uses, addon/peercred.c): the peer's
 * SO_PEERCRED uid is 0 or ours, and it is in our own user, mount, network
 * and pid namespaces (/proc/PID/ns/KIND against /proc/self/ns/KIND, with the
 * peer's pidfd checked after). A refused peer is closed without a byte; the
 * refusal is logged on stderr and kept for the next resolver's LIST.
 *
 * --nudge: each TID blocked in a seccomp user notification that an earlier
 * resolver received but never answered would wait for ever (the kernel
 * delivers a notification once). PTRACE_SEIZE + PTRACE_INTERRUPT stops it
 * in place (no signal, no group stop, nothing its parent sees): its wait is
 * interrupted, the call is restarted after PTRACE_DETACH and raises a fresh
 * notification, which the new resolver receives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 32
#define MAX_KEPT 4096
#define MAX_REFUSED 64
#define MAX_MSG (72 * 1024)
#define MAX_TAG 200
#define MAX_CALLS 4096

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

struct kept {
	char tag[MAX_TAG + 1];
	int fd;
	char *meta;
	size_t meta_len;
	uint64_t pending_since;
	int hup;  /* every task using its filter is gone: nothing to watch */
	int sock; /* a socket (the OCI listening socket): watched, never read */
};

/* a call received while no resolver was connected: never answered */
struct call {
	char tag[MAX_TAG + 1];
	uint32_t tid;
	int nr;
	uint64_t arrived;
};

struct refusal {
	uint64_t boot_ns;
	int pid;
	unsigned uid;
	char why[200];
};

struct client {
	int fd;
	int resolver; /* sent KEEP or LIST: a resolver, not a probe */
};

static struct kept *kept[MAX_KEPT];
static size_t nkept;
static struct refusal refused[MAX_REFUSED];
static size_t nrefused, refused_lost;
static struct call calls[MAX_CALLS];
static size_t ncalls, calls_lost;
static struct client clients[MAX_CLIENTS];
static size_t nclients;
static volatile sig_atomic_t stop_sig;
static char msgbuf[MAX_MSG + 1];

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;

	fputs("gensee-fdkeep: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	stop_sig = sig;
}

/* ---- admission ---- */

static int same_ns(int pid, const char *kind, char *why, size_t n)
{
	char p[64];
	struct stat mine, theirs;

	snprintf(p, sizeof(p), "/proc/self/ns/%s", kind);
	if (stat(p, &mine)) {
		snprintf(why, n, "cannot read %s: %s", p, strerror(errno));
		return 0;
	}
	snprintf(p, sizeof(p), "/proc/%d/ns/%s", pid, kind);
	if (stat(p, &theirs)) {
		snprintf(why, n, "cannot read %s: %s", p, strerror(errno));
		return 0;
	}
	if (mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino) {
		snprintf(why, n, "pid %d is not in the holder's %s namespace", pid, kind);
		return 0;
	}
	return 1;
}

static int admit(int fd, struct ucred *uc, char *why, size_t n)
{
	socklen_t len = sizeof(*uc);
	int pidfd = -1, ok;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len)) {
		snprintf(why, n, "SO_PEERCRED: %s", strerror(errno));
		uc->pid = 0;
		uc->uid = (uid_t)-1;
		return 0;
	}
	if (uc->uid != 0 && uc->uid != getuid()) {
		snprintf(why, n, "peer uid %u is neither root nor the holder's uid %u", (unsigned)uc->uid,
			 (unsigned)getuid());
		return 0;
	}
	if (uc->pid <= 0) {
		snprintf(why, n, "peer pid %d is not visible from the holder's pid namespace", uc->pid);
		return 0;
	}
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len))
		pidfd = -1;
	ok = same_ns(uc->pid, "user", why, n) && same_ns(uc->pid, "mnt", why, n) && same_ns(uc->pid, "net", why, n) &&
	     same_ns(uc->pid, "pid", why, n);
	/* a peer that exited while we looked, its pid reused by one of ours */
	if (ok && pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) && errno == ESRCH) {
		snprintf(why, n, "pid %d exited while its namespaces were checked", uc->pid);
		ok = 0;
	}
	if (pidfd >= 0)
		close(pidfd);
	return ok;
}

static void record_refusal(const struct ucred *uc, const char *why)
{
	struct refusal *r;

	logf_("refused pid %d uid %d: %s", uc->pid, (int)uc->uid, why);
	if (nrefused == MAX_REFUSED) {
		refused_lost++;
		return;
	}
	r = &refused[nrefused++];
	r->boot_ns = boot_ns();
	r->pid = uc->pid;
	r->uid = (unsigned)uc->uid;
	snprintf(r->why, sizeof(r->why), "%s", why);
}

/* ---- the kept fds ---- */

static int owned(void)
{
	size_t i;

	for (i = 0; i < nclients; i++)
		if (clients[i].resolver)
			return 1;
	return 0;
}

static void drop_at(size_t i)
{
	close(kept[i]->fd);
	free(kept[i]->meta);
	free(kept[i]);
	kept[i] = kept[--nkept];
}

static size_t drop_matching(const char *tag, int prefix)
{
	size_t i = 0, n = 0, len = strlen(tag);

	while (i < nkept) {
		if (prefix ? (strncmp(kept[i]->tag, tag, len) == 0 && kept[i]->tag[len] == '/')
			   : !strcmp(kept[i]->tag, tag)) {
			drop_at(i);
			n++;
		} else {
			i++;
		}
	}
	return n;
}

static int valid_tag(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > MAX_TAG)
		return 0;
	for (; *t; t++)
		if (*t <= 0x20 || *t >= 0x7f)
			return 0;
	return 1;
}

/* ---- messages ---- */

static int send_msg(int sock, int fd, const char *head, const char *body, size_t body_len)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov[2];
	struct msghdr mh;
	ssize_t r;

	memset(&mh, 0, sizeof(mh));
	memset(&c, 0, sizeof(c));
	iov[0].iov_base = (void *)head;
	iov[0].iov_len = strlen(head);
	iov[1].iov_base = (void *)body;
	iov[1].iov_len = body_len;
	mh.msg_iov = iov;
	mh.msg_iovlen = body_len ? 2 : 1;
	if (fd >= 0) {
		struct cmsghdr *cm;

		mh.msg_control = c.b;
		mh.msg_controllen = sizeof(c.b);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -1 : 0;
}

static int reply(int sock, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reply(int sock, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return send_msg(sock, -1, line, NULL, 0);
}

static int do_list(int sock)
{
	char head[MAX_TAG + 64];
	size_t i, nref = nrefused;

	for (i = 0; i < nkept; i++) {
		snprintf(head, sizeof(head), "FD %s %llu\n", kept[i]->tag, (unsigned long long)kept[i]->pending_since);
		if (send_msg(sock, kept[i]->fd, head, kept[i]->meta, kept[i]->meta_len))
			return -1;
		kept[i]->pending_since = 0;
	}
	for (i = 0; i < ncalls; i++)
		if (reply(sock, "CALL %u %d %llu %s", calls[i].tid, calls[i].nr, (unsigned long long)calls[i].arrived,
			  calls[i].tag))
			return -1;
	for (i = 0; i < nrefused; i++)
		if (reply(sock, "REFUSED %llu %d %u %s", (unsigned long long)refused[i].boot_ns, refused[i].pid,
			  refused[i].uid, refused[i].why))
			return -1;
	if (reply(sock, "END %zu %zu %zu %zu", nkept, nref, refused_lost, calls_lost))
		return -1;
	ncalls = 0; /* reported once: the resolver serves them */
	calls_lost = 0;
	nrefused = 0; /* reported once: the resolver records them */
	refused_lost = 0;
	return 0;
}

/* one message from client c; -1: close the connection */
static int on_message(struct client *c)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * 4)];
	} cb;
	struct iovec iov = { .iov_base = msgbuf, .iov_len = MAX_MSG };
	struct msghdr mh;
	struct cmsghdr *cm;
	ssize_t r;
	int fd = -1, extra = 0;
	char *nl, *arg;
	size_t body_len = 0;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cb.b;
	mh.msg_controllen = sizeof(cb.b);
	do
		r = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN ? 0 : -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t i, n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = f;
			else {
				close(f);
				extra = 1;
			}
		}
	}
	if (r == 0 && fd < 0)
		return -1; /* peer closed */
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || extra) {
		if (fd >= 0)
			close(fd);
		reply(c->fd, "ERR message too large or more than one fd");
		return 0;
	}
	msgbuf[r] = 0;
	nl = memchr(msgbuf, '\n', (size_t)r);
	if (nl) {
		*nl = 0;
		body_len = (size_t)r - (size_t)(nl + 1 - msgbuf);
	}
	arg = strchr(msgbuf, ' ');
	if (arg)
		*arg++ = 0;
	if (!strcmp(msgbuf, "KEEP")) {
		struct kept *k = NULL;

		c->resolver = 1;
		if (fd < 0 || !arg || !valid_tag(arg)) {
			if (fd >= 0)
				close(fd);
			return reply(c->fd, "ERR KEEP needs a tag (printable, no space, at most %d bytes) and one fd",
				     MAX_TAG)
				       ? -1
				       : 0;
		}
		drop_matching(arg, 0);
		if (nkept == MAX_KEPT || !(k = calloc(1, sizeof(*k))) || !(k->meta = malloc(body_len + 1))) {
			free(k);
			close(fd);
			logf_("cannot keep %s: %s", arg, nkept == MAX_KEPT ? "holder full" : "out of memory");
			return reply(c->fd, "ERR cannot keep %s", arg) ? -1 : 0;
		}
		snprintf(k->tag, sizeof(k->tag), "%s", arg);
		k->fd = fd;
		{
			struct stat st;

			k->sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
		}
		memcpy(k->meta, nl ? nl + 1 : "", body_len);
		k->meta_len = body_len;
		kept[nkept++] = k;
		return reply(c->fd, "OK KEEP %s", arg) ? -1 : 0;
	}
	if (fd >= 0)
		close(fd);
	if (!strcmp(msgbuf, "DROP") && arg && valid_tag(arg))
		return reply(c->fd, "OK DROP %s %zu", arg, drop_matching(arg, 0)) ? -1 : 0;
	if (!strcmp(msgbuf, "DROPOP") && arg && valid_tag(arg))
		return reply(c->fd, "OK DROPOP %s %zu", arg, drop_matching(arg, 1)) ? -1 : 0;
	if (!strcmp(msgbuf, "LIST")) {
		c->resolver = 1;
		return do_list(c->fd);
	}
	if (!strcmp(msgbuf, "PING"))
		return reply(c->fd, "PONG %d %zu", (int)getpid(), nkept) ? -1 : 0;
	return reply(c->fd, "ERR unknown request") ? -1 : 0;
}

/* ---- calls that arrive while no resolver reads ---- */

/* Receive one notification of k, only to note it (never answered: the call
 * keeps waiting until the next resolver restarts it). */
static void note_call(struct kept *k)
{
	struct seccomp_notif n;
	uint64_t now;

	memset(&n, 0, sizeof(n));
	if (ioctl(k->fd, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0) {
		if (errno != ENOENT && errno != EINTR) {
			logf_("%s: reading a paused call: %s (no longer watched)", k->tag, strerror(errno));
			k->hup = 1;
		}
		return;
	}
	now = boot_ns();
	if (ncalls == MAX_CALLS) {
		calls_lost++;
		return;
	}
	snprintf(calls[ncalls].tag, sizeof(calls[ncalls].tag), "%s", k->tag);
	calls[ncalls].tid = n.pid;
	calls[ncalls].nr = n.data.nr;
	calls[ncalls].arrived = now;
	ncalls++;
}

/* ---- the socket ---- */

static int check_dir(const char *sock)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", sock);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir) {
		logf_("%s: give an absolute path in a directory of its own", sock);
		return -1;
	}
	*slash = 0;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		logf_("mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st)) {
		logf_("%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		logf_("%s must be a directory owned by uid %u with mode 0700 (is %o, uid %u); refusing to serve there",
		      dir, (unsigned)geteuid(), (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return -1;
	}
	return 0;
}

static int listen_on(const char *p)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(p) >= sizeof(sun.sun_path)) {
		logf_("%s: longer than a unix socket path may be", p);
		return -1;
	}
	strcpy(sun.sun_path, p);
	if (!lstat(p, &st)) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			logf_("%s exists and is not a socket", p);
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (probe >= 0 && !connect(probe, (struct sockaddr *)&sun, sizeof(sun))) {
			close(probe);
			logf_("%s: another holder is serving there", p);
			return -2;
		}
		if (probe >= 0)
			close(probe);
		unlink(p);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		logf_("socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 16)) {
		umask(old);
		logf_("bind %s: %s", p, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

static void on_accept(int lfd)
{
	for (;;) {
		struct ucred uc;
		char why[200];
		int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (c < 0)
			return;
		if (!admit(c, &uc, why, sizeof(why))) {
			record_refusal(&uc, why);
			close(c);
			continue;
		}
		if (nclients == MAX_CLIENTS) {
			logf_("pid %d: too many connections (%d)", uc.pid, MAX_CLIENTS);
			close(c);
			continue;
		}
		clients[nclients].fd = c;
		clients[nclients].resolver = 0;
		nclients++;
	}
}

static int serve(const char *sock)
{
	static struct pollfd pfd[1 + MAX_CLIENTS + MAX_KEPT];
	static size_t watch[MAX_KEPT];
	int lfd;

	if (check_dir(sock))
		return 2;
	lfd = listen_on(sock);
	if (lfd < 0)
		return lfd == -2 ? 3 : 2;
	logf_("holding fds on %s (pid %d)", sock, (int)getpid());
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!stop_sig) {
		size_t i, n = 0, nw = 0, ncl = nclients;
		int own = owned(), r;

		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < ncl; i++)
			pfd[n++] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
		/* no resolver reads them: note when a paused call first waits,
		 * and (seccomp fds) which thread's call arrived when */
		if (!own)
			for (i = 0; i < nkept; i++)
				if ((!kept[i]->pending_since || !kept[i]->sock) && !kept[i]->hup) {
					watch[nw++] = i;
					pfd[n++] = (struct pollfd){ .fd = kept[i]->fd, .events = POLLIN };
				}
		r = poll(pfd, n, -1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			logf_("poll: %s", strerror(errno));
			return 1;
		}
		for (i = 0; i < nw; i++) {
			short ev = pfd[1 + ncl + i].revents;

			if (ev & POLLIN) {
				struct kept *k = kept[watch[i]];

				if (!k->pending_since)
					k->pending_since = boot_ns();
				if (!k->sock)
					note_call(k);
			} else if (ev)
				kept[watch[i]]->hup = 1;
		}
		/* clients, from the last: closing one moves the last into its slot */
		for (i = ncl; i-- > 0;) {
			if (!pfd[1 + i].revents)
				continue;
			if (on_message(&clients[i])) {
				close(clients[i].fd);
				clients[i] = clients[--nclients];
			}
		}
		if (pfd[0].revents & POLLIN)
			on_accept(lfd);
	}
	logf_("signal %d: closing %zu kept fds (their paused calls now fail ENOSYS)", (int)stop_sig, nkept);
	unlink(sock);
	return 0;
}

/* ---- --nudge ---- */

static int nudge(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		int e = errno;

		ptrace(PTRACE_DETACH, tid, 0, 0);
		return e;
	}
	for (;;) {
		pid_t w = waitpid(tid, &st, __WALL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return ESRCH;
		if (WIFSTOPPED(st))
			break;
	}
	if (ptrace(PTRACE_DETACH, tid, 0, 0))
		return errno;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	if (argc >= 2 && !strcmp(argv[1], "--nudge")) {
		int i, bad = 0;

		for (i = 2; i < argc; i++) {
			char *end;
			long tid = strtol(argv[i], &end, 10);
			int e;

			if (*end || tid <= 0 || tid > INT_MAX) {
				logf_("--nudge: %s is not a thread id", argv[i]);
				bad = 1;
				continue;
			}
			e = nudge((pid_t)tid);
			printf("%ld %d\n", tid, e);
			if (e && e != ESRCH)
				bad = 1;
		}
		return bad;
	}
	if (argc != 2 || argv[1][0] != '/') {
		fprintf(stderr, "usage: gensee-fdkeep /ABSOLUTE/DIR/SOCKET | gensee-fdkeep --nudge TID...\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	return serve(argv[1]);
}
