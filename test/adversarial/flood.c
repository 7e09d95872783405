// SPDX-License-Identifier: Apache-2.0
/*
 * flood: the workload of test/adversarial/flood.test.ts. It joins a cgroup,
 * then connects through io_uring (which seccomp never sees, so only the
 * eBPF hook can refuse it) to COUNT distinct IPv4 destinations: address
 * BASE+i, port PORT, i = 0..COUNT-1. It does that BURSTS times in a row and
 * prints one JSON line per burst: how each connect ended and when the burst
 * began and ended on CLOCK_BOOTTIME (the clock of the hook's rate limit).
 *
 *   flood --cgroup DIR --base A.B.C.D --port PORT --count N [--bursts B] [--gap-ms MS] [--scan ports]
 *
 * --scan ports: a port scan instead: address BASE, port PORT+i (PORT 0 and
 * count 65536 scan every port), as test/events/boundary.test.ts does.
 *
 * Connects are submitted BATCH at a time on fresh TCP sockets, so the
 * process never holds more than BATCH descriptors.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../probe/common.h"

#define BATCH 256

struct tally {
	long ok, eperm, other;
};

/* One batch: n sockets, n io_uring connects, n completions. */
static int batch(struct io_uring *ring, uint32_t base, long first, int n, long port, int scan, struct tally *t)
{
	struct sockaddr_in sa[BATCH];
	int fds[BATCH], i, r;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || !sqe) {
			fprintf(stderr, "flood: socket/sqe: %s\n", strerror(errno));
			return -1;
		}
		memset(&sa[i], 0, sizeof(sa[i]));
		sa[i].sin_family = AF_INET;
		sa[i].sin_port = htons((uint16_t)(scan ? port + first + i : port));
		sa[i].sin_addr.s_addr = htonl(scan ? base : base + (uint32_t)(first + i));
		io_uring_prep_connect(sqe, fds[i], (const struct sockaddr *)&sa[i], sizeof(sa[i]));
	}
	r = io_uring_submit_and_wait(ring, (unsigned)n);
	if (r < 0) {
		fprintf(stderr, "flood: io_uring_submit_and_wait: %s\n", strerror(-r));
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		r = io_uring_wait_cqe(ring, &cqe);
		if (r < 0) {
			fprintf(stderr, "flood: io_uring_wait_cqe: %s\n", strerror(-r));
			return -1;
		}
		if (cqe->res == 0)
			t->ok++;
		else if (cqe->res == -EPERM)
			t->eperm++;
		else
			t->other++;
		io_uring_cqe_seen(ring, cqe);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cg = NULL, *base_s = NULL;
	long count = 0, bursts = 1, gap_ms = 0, b, i;
	int port = 0, a, scan = 0;
	struct in_addr base;
	struct io_uring ring;

	for (a = 1; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "--cgroup"))
			cg = argv[a + 1];
		else if (!strcmp(argv[a], "--base"))
			base_s = argv[a + 1];
		else if (!strcmp(argv[a], "--port"))
			port = atoi(argv[a + 1]);
		else if (!strcmp(argv[a], "--count"))
			count = atol(argv[a + 1]);
		else if (!strcmp(argv[a], "--bursts"))
			bursts = atol(argv[a + 1]);
		else if (!strcmp(argv[a], "--gap-ms"))
			gap_ms = atol(argv[a + 1]);
		else if (!strcmp(argv[a], "--scan") && !strcmp(argv[a + 1], "ports"))
			scan = 1;
		else
			break;
	}
	if (a != argc || !cg || !base_s || inet_pton(AF_INET, base_s, &base) != 1 || port < (scan ? 0 : 1) ||
	    port > 65535 || count <= 0 || bursts <= 0 || (scan && port + count - 1 > 65535)) {
		fprintf(stderr,
			"usage: flood --cgroup DIR --base A.B.C.D --port PORT --count N [--bursts B] [--gap-ms MS] "
			"[--scan ports]\n");
		return 2;
	}
	if (join_cgroup(cg)) {
		fprintf(stderr, "flood: join cgroup %s: %s\n", cg, strerror(errno));
		return 3;
	}
	a = io_uring_queue_init(BATCH, &ring, 0);
	if (a < 0) {
		fprintf(stderr, "flood: io_uring_queue_init: %s\n", strerror(-a));
		return 4;
	}
	printf("{\"pid\":%d}\n", getpid());
	for (b = 0; b < bursts; b++) {
		struct tally t = { 0, 0, 0 };
		uint64_t t0, t1;

		if (b && gap_ms > 0) {
			struct timespec ts = { gap_ms / 1000, (gap_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		t0 = boot_ns();
		for (i = 0; i < count; i += BATCH) {
			int n = count - i < BATCH ? (int)(count - i) : BATCH;

			if (batch(&ring, ntohl(base.s_addr), i, n, port, scan, &t))
				return 5;
		}
		t1 = boot_ns();
		printf("{\"burst\":%ld,\"n\":%ld,\"ok\":%ld,\"EPERM\":%ld,\"other\":%ld,\"start_boot_ns\":%llu,\"end_boot_ns\":%llu}\n",
		       b, count, t.ok, t.eperm, t.other, (unsigned long long)t0, (unsigned long long)t1);
		fflush(stdout);
	}
	io_uring_queue_exit(&ring);
	return 0;
}
