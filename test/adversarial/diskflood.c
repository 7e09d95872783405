// SPDX-License-Identifier: Apache-2.0
/*
 * diskflood: the workload of test/adversarial/disk.test.ts.
 *
 *   diskflood flood --port P --span N --ms MS
 *     For MS milliseconds, connect() fresh TCP sockets to 127.0.0.1:P+i
 *     (i cycling through 0..N-1): plain syscalls, each one paused by
 *     seccomp and refused by gensee's resolver. Prints one JSON line:
 *     {"attempts":A,"ok":O,"EACCES":X,"EPERM":Y,"ECONNREFUSED":R,"other":Z}
 *     With --every MS, also such a line (cumulative, with "t": ms since
 *     start) every MS milliseconds, flushed at once.
 *   diskflood connect --port P
 *     connect() to 127.0.0.1:P and write "granted\n"; prints
 *     {"connect":"ok"} or {"connect":"<errno name>"}; exit 0 only on ok.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(int port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r, e;

	if (fd < 0)
		return errno;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = r ? errno : 0;
	if (!r) {
		static const char msg[] = "granted\n";
		if (write(fd, msg, sizeof(msg) - 1) != (ssize_t)(sizeof(msg) - 1))
			e = errno ? errno : EIO;
	}
	close(fd);
	return e;
}

static long arg(int argc, char **argv, const char *name, long dflt)
{
	for (int i = 2; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtol(argv[i + 1], NULL, 10);
	return dflt;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: diskflood flood|connect --port P [--span N --ms MS]\n");
		return 2;
	}
	long port = arg(argc, argv, "--port", 0);
	if (port <= 0 || port > 65535) {
		fprintf(stderr, "diskflood: --port is required\n");
		return 2;
	}
	if (!strcmp(argv[1], "connect")) {
		int e = dial((int)port);
		printf("{\"connect\":\"%s\"}\n", e ? strerrorname_np(e) : "ok");
		return e ? 1 : 0;
	}
	if (strcmp(argv[1], "flood")) {
		fprintf(stderr, "diskflood: unknown mode %s\n", argv[1]);
		return 2;
	}
	long span = arg(argc, argv, "--span", 1000), ms = arg(argc, argv, "--ms", 3000);
	long attempts = 0, ok = 0, eacces = 0, eperm = 0, refused = 0, other = 0;
	long every = arg(argc, argv, "--every", 0);
	long start = now_ms(), end = start + ms, next = start + every;
	while (now_ms() < end) {
		if (every > 0 && now_ms() >= next) {
			printf("{\"t\":%ld,\"attempts\":%ld,\"ok\":%ld,\"EACCES\":%ld,\"EPERM\":%ld,\"ECONNREFUSED\":%ld,\"other\":%ld}\n",
			       now_ms() - start, attempts, ok, eacces, eperm, refused, other);
			fflush(stdout);
			next += every;
		}
		long p = port + attempts % span;
		int e = dial((int)(p > 65535 ? port : p));
		attempts++;
		if (!e)
			ok++;
		else if (e == EACCES)
			eacces++;
		else if (e == EPERM)
			eperm++;
		else if (e == ECONNREFUSED)
			refused++;
		else
			other++;
	}
	printf("{\"attempts\":%ld,\"ok\":%ld,\"EACCES\":%ld,\"EPERM\":%ld,\"ECONNREFUSED\":%ld,\"other\":%ld}\n",
	       attempts, ok, eacces, eperm, refused, other);
	return 0;
}
