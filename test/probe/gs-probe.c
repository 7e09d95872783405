// SPDX-License-Identifier: Apache-2.0
/*
 * gs-probe: a real process that makes real network calls for the kernel
 * tests and benchmarks. It first moves itself into the given cgroup (so the
 * socket is created inside it), then performs one operation, optionally
 * repeated, and prints one JSON line per attempt (or a summary).
 *
 *   gs-probe [--cgroup DIR] [--repeat N] [--summary] [--v6sock] OP PROTO ADDR PORT
 *     OP: connect | sendto | sendmsg | uring-connect | bench-connect
 *   sendmsg: one datagram through sendmsg(2), the destination in msg_name
 *   --v6sock: use an AF_INET6 socket even for a v4-mapped address
 *   --interval MS: sleep between repeats; --until-ok: stop at the first success
 *   --threads T: T threads each make --repeat calls (implies --summary)
 *
 *   toctou-connect tcp ADDR PORTA,PORTB: one thread connects to PORTA in a
 *   loop while another keeps rewriting the same sockaddr buffer to PORTB and
 *   back; prints a line per refused call with its errno, then how many
 *   connects succeeded / got EPERM / EACCES / other. --until N: stop once
 *   N calls got EPERM (--repeat stays the cap). --in-thread: the connecting
 *   loop runs in a thread that is not the process's main thread.
 *
 *   connected-send tcp|udp ADDR PORT: connect one socket, then send()
 *   --repeat messages on it, --interval MS apart, without an address. Each
 *   message is 32 bytes, "SEQ T0\n", T0 its CLOCK_BOOTTIME send time. Prints
 *   the connect and then one line per send with t0/t1 (CLOCK_BOOTTIME ns
 *   before and after the call); --summary: counts and ns per send instead.
 *   --ipopts: IPv4 header options (NOPs) on the socket; --v6-dstopts: an
 *   IPv6 destination options header (PadN) on every datagram.
 *
 *   sendmmsg udp ADDR1 PORT1 [ADDR2 PORT2 ...]: one sendmmsg(2) call on one
 *   socket, message K ("gensee-mmsg-K") to destination K. Prints
 *   {"call":"sendmmsg","first":F,"n":N,"sent":S,"result":R,"errno":E}: R is
 *   ok (all N sent), partial (0 < S < N: the kernel stops at the first
 *   message that fails and reports how many went; that error is lost), or
 *   the errno's name when the call returned -1 (S is then 0).
 *   --resume: after a short call, call again from the first unsent message;
 *   a message a call fails on (-1) is skipped. One line per call.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static const char *errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENOSYS: return "ENOSYS";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENETUNREACH: return "ENETUNREACH";
	case EINVAL: return "EINVAL";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	default: return "EOTHER";
	}
}

struct target {
	struct sockaddr_storage ss;
	socklen_t len;
	int family;
	int type;
	int proto;
};

static int parse_target(struct target *t, const char *proto, const char *addr, const char *port, int v6sock)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&t->ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&t->ss;
	int p = atoi(port);

	memset(t, 0, sizeof(*t));
	if (!strcmp(proto, "tcp")) {
		t->type = SOCK_STREAM;
		t->proto = IPPROTO_TCP;
	} else if (!strcmp(proto, "udp")) {
		t->type = SOCK_DGRAM;
		t->proto = IPPROTO_UDP;
	} else {
		return -1;
	}
	if (!v6sock && inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)p);
		t->family = AF_INET;
		t->len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)p);
		t->family = AF_INET6;
		t->len = sizeof(*s6);
		return 0;
	}
	return -1;
}

static int do_connect(const struct target *t)
{
	int fd = socket(t->family, t->type | SOCK_CLOEXEC, t->proto), e = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, (const struct sockaddr *)&t->ss, t->len))
		e = errno;
	close(fd);
	return e;
}

static int do_sendto(const struct target *t)
{
	int fd = socket(t->family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP), e = 0;
	static const char msg[] = "gensee-probe";

	if (fd < 0)
		return errno;
	if (sendto(fd, msg, sizeof(msg) - 1, 0, (const struct sockaddr *)&t->ss, t->len) < 0)
		e = errno;
	close(fd);
	return e;
}

static int do_sendmsg(const struct target *t)
{
	int fd = socket(t->family, t->type | SOCK_CLOEXEC, t->proto), e = 0;
	static char msg[] = "gensee-probe";
	struct iovec iov = { msg, sizeof(msg) - 1 };
	struct msghdr mh = {
		.msg_name = (void *)&t->ss,
		.msg_namelen = t->len,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};

	if (fd < 0)
		return errno;
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		e = errno;
	close(fd);
	return e;
}

#define MMSG_MAX 16

static int do_sendmmsg(const char *cg, const char *proto, int nargs, char **args, int v6sock, int resume)
{
	struct target t[MMSG_MAX];
	struct mmsghdr mm[MMSG_MAX];
	struct iovec iov[MMSG_MAX];
	char body[MMSG_MAX][24];
	int n = nargs / 2, first = 0, fd, k;

	if (nargs % 2 || n < 1 || n > MMSG_MAX) {
		fprintf(stderr, "gs-probe: sendmmsg takes 1 to %d ADDR PORT pairs\n", MMSG_MAX);
		return 2;
	}
	memset(mm, 0, sizeof(mm));
	for (k = 0; k < n; k++) {
		if (parse_target(&t[k], proto, args[2 * k], args[2 * k + 1], v6sock) || t[k].family != t[0].family) {
			fprintf(stderr, "gs-probe: bad sendmmsg target %s %s (one family per call)\n", args[2 * k],
				args[2 * k + 1]);
			return 2;
		}
		snprintf(body[k], sizeof(body[k]), "gensee-mmsg-%d", k);
		iov[k].iov_base = body[k];
		iov[k].iov_len = strlen(body[k]);
		mm[k].msg_hdr.msg_name = &t[k].ss;
		mm[k].msg_hdr.msg_namelen = t[k].len;
		mm[k].msg_hdr.msg_iov = &iov[k];
		mm[k].msg_hdr.msg_iovlen = 1;
	}
	if (cg && join_cgroup(cg)) {
		fprintf(stderr, "gs-probe: join cgroup %s: %s\n", cg, strerror(errno));
		return 3;
	}
	printf("{\"pid\":%d}\n", getpid());
	fflush(stdout);
	fd = socket(t[0].family, t[0].type | SOCK_CLOEXEC, t[0].proto);
	if (fd < 0) {
		printf("{\"call\":\"socket\",\"result\":\"%s\",\"errno\":%d}\n", errname(errno), errno);
		return 0;
	}
	while (first < n) {
		int r = sendmmsg(fd, mm + first, (unsigned int)(n - first), MSG_NOSIGNAL), e = r < 0 ? errno : 0;

		printf("{\"call\":\"sendmmsg\",\"first\":%d,\"n\":%d,\"sent\":%d,\"result\":\"%s\",\"errno\":%d}\n",
		       first, n - first, r < 0 ? 0 : r,
		       r < 0            ? errname(e)
		       : r == n - first ? "ok"
					: "partial",
		       e);
		fflush(stdout);
		if (!resume)
			break;
		first += r > 0 ? r : 1;
	}
	close(fd);
	return 0;
}

static int do_uring_connect(const struct target *t)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int fd, r, e;

	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		return -r;
	fd = socket(t->family, t->type | SOCK_CLOEXEC, t->proto);
	if (fd < 0) {
		e = errno;
		io_uring_queue_exit(&ring);
		return e;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_connect(sqe, fd, (const struct sockaddr *)&t->ss, t->len);
	io_uring_submit(&ring);
	r = io_uring_wait_cqe(&ring, &cqe);
	e = r < 0 ? -r : (cqe->res < 0 ? -cqe->res : 0);
	if (r == 0)
		io_uring_cqe_seen(&ring, cqe);
	close(fd);
	io_uring_queue_exit(&ring);
	return e;
}

struct worker {
	const struct target *t;
	const char *op;
	long repeat;
	atomic_long *counts; /* indexed like codes[] in main */
	const int *codes;
};

static int do_op(const char *op, const struct target *t)
{
	if (!strcmp(op, "connect"))
		return do_connect(t);
	if (!strcmp(op, "sendto"))
		return do_sendto(t);
	if (!strcmp(op, "sendmsg"))
		return do_sendmsg(t);
	if (!strcmp(op, "uring-connect"))
		return do_uring_connect(t);
	return -1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long n;

	for (n = 0; n < w->repeat; n++) {
		int e = do_op(w->op, w->t), k;

		for (k = 0; k < 7 && w->codes[k] != e; k++)
			;
		atomic_fetch_add(&w->counts[k], 1);
	}
	return NULL;
}

struct flipper {
	struct sockaddr_in *sa;
	uint16_t a, b;
	atomic_int stop;
};

static void *flip_main(void *arg)
{
	struct flipper *f = arg;
	volatile uint16_t *port = &f->sa->sin_port;

	while (!atomic_load(&f->stop)) {
		*port = f->b;
		*port = f->a;
	}
	return NULL;
}

/*
 * connect() to A from a buffer another thread keeps flipping to B. Each
 * refused call is one line with its errno, told apart: EACCES is the
 * resolver's answer (seccomp read B), EPERM the eBPF hook's (the kernel's
 * own copy held B, whatever seccomp read). Stops after --until EPERMs,
 * at the latest after --repeat calls.
 */
static int toctou(const char *addr, const char *ports, long repeat, long until)
{
	struct sockaddr_in *sa = calloc(1, sizeof(*sa));
	struct flipper f = { 0 };
	pthread_t th;
	long ok = 0, eperm = 0, eacces = 0, other = 0, n;
	int pa, pb;

	if (!sa || sscanf(ports, "%d,%d", &pa, &pb) != 2)
		return 2;
	/* a line per write: stdout may be a pipe the supervisor writes to too */
	setvbuf(stdout, NULL, _IOLBF, 0);
	sa->sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sa->sin_addr);
	sa->sin_port = htons((uint16_t)pa);
	f.sa = sa;
	f.a = htons((uint16_t)pa);
	f.b = htons((uint16_t)pb);
	pthread_create(&th, NULL, flip_main, &f);
	for (n = 0; n < repeat && (until <= 0 || eperm < until); n++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0;

		if (connect(fd, (struct sockaddr *)sa, sizeof(*sa)))
			e = errno;
		close(fd);
		if (e == 0) {
			ok++;
			continue;
		}
		if (e == EPERM)
			eperm++;
		else if (e == EACCES)
			eacces++;
		else
			other++;
		printf("{\"call\":%ld,\"result\":\"%s\",\"errno\":%d}\n", n, errname(e), e);
	}
	atomic_store(&f.stop, 1);
	pthread_join(th, NULL);
	printf("{\"calls\":%ld,\"ok\":%ld,\"EPERM\":%ld,\"EACCES\":%ld,\"other\":%ld}\n", n, ok, eperm, eacces, other);
	return 0;
}

struct toctou_args {
	const char *addr, *ports;
	long repeat, until;
	int rc;
};

static void *toctou_main(void *arg)
{
	struct toctou_args *a = arg;

	a->rc = toctou(a->addr, a->ports, a->repeat, a->until);
	return NULL;
}

static int connected_send(const struct target *t, long repeat, long interval_ms, int summary, int ipopts,
			  int v6_dstopts)
{
	/* 4 NOPs: the UDP header then starts at byte 24, not 20 */
	static const unsigned char nops[4] = { 1, 1, 1, 1 };
	/* next header (filled by the kernel), length 0 (8 bytes), PadN of 4 */
	static const unsigned char dstopts[8] = { 0, 0, 1, 4, 0, 0, 0, 0 };
	char msg[48]; /* 32 used: n < 10^10, t0 < 10^20 */
	long n, ok = 0, eperm = 0, other = 0;
	uint64_t start;
	int fd = socket(t->family, t->type | SOCK_CLOEXEC, t->proto), e = 0;

	if (fd < 0)
		return errno;
	if (ipopts && setsockopt(fd, IPPROTO_IP, IP_OPTIONS, nops, sizeof(nops)))
		e = errno;
	if (!e && v6_dstopts && setsockopt(fd, IPPROTO_IPV6, IPV6_DSTOPTS, dstopts, sizeof(dstopts)))
		e = errno;
	if (!e && connect(fd, (const struct sockaddr *)&t->ss, t->len))
		e = errno;
	printf("{\"call\":\"connect\",\"result\":\"%s\",\"errno\":%d}\n", errname(e), e);
	fflush(stdout);
	if (e) {
		close(fd);
		return 0;
	}
	start = now_ns();
	for (n = 0; n < repeat; n++) {
		uint64_t t0 = boot_ns(), t1;

		snprintf(msg, sizeof(msg), "%010ld %020llu\n", n, (unsigned long long)t0);
		e = send(fd, msg, 32, MSG_NOSIGNAL) < 0 ? errno : 0;
		t1 = boot_ns();
		if (e == 0)
			ok++;
		else if (e == EPERM)
			eperm++;
		else
			other++;
		if (!summary) {
			printf("{\"call\":\"send\",\"seq\":%ld,\"result\":\"%s\",\"errno\":%d,\"t0\":\"%llu\",\"t1\":\"%llu\"}\n",
			       n, errname(e), e, (unsigned long long)t0, (unsigned long long)t1);
			fflush(stdout);
		}
		if (interval_ms > 0 && n + 1 < repeat) {
			struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	if (summary)
		printf("{\"ok\":%ld,\"EPERM\":%ld,\"other\":%ld,\"ns_per_send\":%.1f}\n", ok, eperm, other,
		       repeat > 0 ? (double)(now_ns() - start) / (double)repeat : 0.0);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cg = NULL, *op, *proto, *addr, *port;
	long repeat = 1;
	int summary = 0, v6sock = 0, until_ok = 0, ipopts = 0, v6_dstopts = 0, resume = 0, i;
	long threads = 0;
	long interval_ms = 0;
	long until = 0;
	int in_thread = 0;
	struct target t;
	long counts[8] = { 0 };
	int codes[8] = { 0, EPERM, ECONNREFUSED, EACCES, ENOSYS, ETIMEDOUT, EINVAL, -1 };

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--cgroup") && i + 1 < argc)
			cg = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atol(argv[++i]);
		else if (!strcmp(argv[i], "--summary"))
			summary = 1;
		else if (!strcmp(argv[i], "--v6sock"))
			v6sock = 1;
		else if (!strcmp(argv[i], "--until-ok"))
			until_ok = 1;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atol(argv[++i]);
		else if (!strcmp(argv[i], "--until") && i + 1 < argc)
			until = atol(argv[++i]);
		else if (!strcmp(argv[i], "--interval") && i + 1 < argc)
			interval_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--ipopts"))
			ipopts = 1;
		else if (!strcmp(argv[i], "--v6-dstopts"))
			v6_dstopts = 1;
		else if (!strcmp(argv[i], "--resume"))
			resume = 1;
		else if (!strcmp(argv[i], "--in-thread"))
			in_thread = 1;
		else {
			fprintf(stderr, "gs-probe: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (argc - i >= 4 && !strcmp(argv[i], "sendmmsg"))
		return do_sendmmsg(cg, argv[i + 1], argc - i - 2, argv + i + 2, v6sock, resume);
	if (argc - i != 4) {
		fprintf(stderr,
			"usage: gs-probe [--cgroup DIR] [--repeat N] [--summary] [--v6sock] [--interval MS] [--until-ok] [--ipopts] [--v6-dstopts] "
			"connect|sendto|sendmsg|uring-connect|bench-connect|connected-send tcp|udp ADDR PORT\n"
			"       gs-probe [--cgroup DIR] [--resume] sendmmsg udp ADDR1 PORT1 [ADDR2 PORT2 ...]\n");
		return 2;
	}
	op = argv[i];
	proto = argv[i + 1];
	addr = argv[i + 2];
	port = argv[i + 3];
	if (!strcmp(op, "toctou-connect")) {
		if (cg && join_cgroup(cg))
			return 3;
		printf("{\"pid\":%d}\n", getpid());
		fflush(stdout);
		if (in_thread) {
			struct toctou_args ta = { addr, port, repeat, until, 2 };
			pthread_t th;

			pthread_create(&th, NULL, toctou_main, &ta);
			pthread_join(th, NULL);
			return ta.rc;
		}
		return toctou(addr, port, repeat, until);
	}
	if (parse_target(&t, proto, addr, port, v6sock)) {
		fprintf(stderr, "gs-probe: bad target %s %s %s\n", proto, addr, port);
		return 2;
	}
	if (cg && join_cgroup(cg)) {
		fprintf(stderr, "gs-probe: join cgroup %s: %s\n", cg, strerror(errno));
		return 3;
	}
	printf("{\"pid\":%d}\n", getpid());
	fflush(stdout);

	if (!strcmp(op, "connected-send"))
		return connected_send(&t, repeat, interval_ms, summary, ipopts, v6_dstopts);

	if (threads > 0) {
		pthread_t *th = calloc((size_t)threads, sizeof(*th));
		struct worker w = { &t, op, repeat, NULL, codes };
		atomic_long ac[8];

		for (i = 0; i < 8; i++)
			atomic_init(&ac[i], 0);
		w.counts = ac;
		for (i = 0; i < threads; i++)
			pthread_create(&th[i], NULL, worker_main, &w);
		for (i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		printf("{\"ok\":%ld,\"EPERM\":%ld,\"ECONNREFUSED\":%ld,\"EACCES\":%ld,\"ENOSYS\":%ld,"
		       "\"ETIMEDOUT\":%ld,\"EINVAL\":%ld,\"other\":%ld}\n",
		       atomic_load(&ac[0]), atomic_load(&ac[1]), atomic_load(&ac[2]), atomic_load(&ac[3]),
		       atomic_load(&ac[4]), atomic_load(&ac[5]), atomic_load(&ac[6]), atomic_load(&ac[7]));
		free(th);
		return 0;
	}

	if (!strcmp(op, "bench-connect") || !strcmp(op, "bench-ports")) {
		/* bench-ports: each call dials the next port (a new destination) */
		int step = !strcmp(op, "bench-ports");
		uint64_t t0 = now_ns(), t1, *lat = calloc((size_t)repeat, sizeof(uint64_t));
		long ok = 0, refused = 0, err = 0, n;
		int base = atoi(port);

		for (n = 0; n < repeat; n++) {
			uint64_t a = now_ns();
			int e;

			if (step)
				((struct sockaddr_in *)&t.ss)->sin_port = htons((uint16_t)(base + n));
			e = do_connect(&t);
			lat[n] = now_ns() - a;
			if (e == 0)
				ok++;
			else if (e == ECONNREFUSED)
				refused++;
			else
				err++;
		}
		t1 = now_ns();
		/* the first call alone: a fresh supervisor's first fault (bench/startup.ts) */
		uint64_t first = lat[0];
		qsort(lat, (size_t)repeat, sizeof(uint64_t), cmp_u64);
		printf("{\"n\":%ld,\"ok\":%ld,\"refused\":%ld,\"err\":%ld,\"ns_per_op\":%.1f,\"p50_ns\":%llu,\"p99_ns\":%llu,"
		       "\"first_ns\":%llu}\n",
		       repeat, ok, refused, err, (double)(t1 - t0) / (double)repeat,
		       (unsigned long long)lat[repeat / 2], (unsigned long long)lat[(repeat * 99) / 100],
		       (unsigned long long)first);
		free(lat);
		return 0;
	}

	for (long n = 0; n < repeat; n++) {
		int e;

		if (!strcmp(op, "connect"))
			e = do_connect(&t);
		else if (!strcmp(op, "sendto"))
			e = do_sendto(&t);
		else if (!strcmp(op, "sendmsg"))
			e = do_sendmsg(&t);
		else if (!strcmp(op, "uring-connect"))
			e = do_uring_connect(&t);
		else {
			fprintf(stderr, "gs-probe: unknown op %s\n", op);
			return 2;
		}
		if (summary) {
			int k;
			for (k = 0; k < 7 && codes[k] != e; k++)
				;
			counts[k]++;
		} else {
			printf("{\"result\":\"%s\",\"errno\":%d}\n", errname(e), e);
			fflush(stdout);
		}
		if (until_ok && e == 0)
			break;
		if (interval_ms > 0 && n + 1 < repeat) {
			struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	if (summary) {
		printf("{\"ok\":%ld,\"EPERM\":%ld,\"ECONNREFUSED\":%ld,\"EACCES\":%ld,\"ENOSYS\":%ld,"
		       "\"ETIMEDOUT\":%ld,\"EINVAL\":%ld,\"other\":%ld}\n",
		       counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7]);
	}
	return 0;
}
