// SPDX-License-Identifier: Apache-2.0
/*
 * race: the workload of test/adversarial/race.test.ts. THREADS threads each
 * open a TCP socket, meet at a barrier, and connect to ADDR:PORT at
 * once: racing first connects to a destination whose lease rule has
 * max_uses, each paused and answered on its own. Every socket stays open
 * until all threads are done (the listener counts what was accepted), then
 * one JSON line says how the connects ended:
 *
 *   race --addr IPV4 --port PORT [--threads N] [--stagger-us US] [--rounds R]
 *   {"attack":"race","threads":N,"rounds":R,"ok":K,"EPERM":E,"EACCES":A,"other":O,"first_other":"ERRNO"}
 *
 * --stagger-us: thread i connects i*US microseconds after the barrier, so
 * that later connects arrive while earlier ones are being answered (and
 * meet the lease those answers installed). --rounds: all of it R times in
 * a row (fresh threads and sockets each round), the counts summed.
 *
 * It exits 0 either way: the test decides.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

struct racer {
	pthread_t tid;
	struct in_addr addr;
	int port;
	long delay_ns;
	int fd;
	int err; /* 0: connected, else errno */
};

static pthread_barrier_t start;

static void *race(void *arg)
{
	struct racer *r = arg;
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)r->port);
	sa.sin_addr = r->addr;
	r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pthread_barrier_wait(&start);
	if (r->delay_ns) {
		struct timespec d = { r->delay_ns / 1000000000L, r->delay_ns % 1000000000L };

		nanosleep(&d, NULL);
	}
	if (r->fd < 0) {
		r->err = errno;
		return NULL;
	}
	r->err = connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : errno;
	return NULL;
}

struct tally {
	int ok, eperm, eacces, other, first_other;
};

/* one round: every thread's connect, counted; its sockets closed after all are done */
static int round_of(struct in_addr addr, int port, int threads, long stagger_us, struct tally *t)
{
	static struct racer racers[MAX_THREADS];

	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		racers[i].addr = addr;
		racers[i].port = port;
		racers[i].delay_ns = (long)i * stagger_us * 1000L;
		if (pthread_create(&racers[i].tid, NULL, race, &racers[i])) {
			perror("race: pthread_create");
			return -1;
		}
	}
	for (int i = 0; i < threads; i++)
		pthread_join(racers[i].tid, NULL);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < threads; i++) {
		int e = racers[i].err;

		if (e == 0)
			t->ok++;
		else if (e == EPERM)
			t->eperm++;
		else if (e == EACCES)
			t->eacces++;
		else if (t->other++ == 0)
			t->first_other = e;
		if (racers[i].fd >= 0)
			close(racers[i].fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tally t = { 0 };
	struct in_addr addr = { 0 };
	long stagger_us = 0;
	int port = 0, threads = 64, rounds = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port"))
			port = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--addr") && inet_pton(AF_INET, argv[i + 1], &addr) != 1)
			addr.s_addr = 0;
		else if (!strcmp(argv[i], "--threads"))
			threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--stagger-us"))
			stagger_us = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
	}
	if (!addr.s_addr || port <= 0 || port > 65535 || threads < 1 || threads > MAX_THREADS || stagger_us < 0 ||
	    stagger_us > 100000 || rounds < 1 || rounds > 100000) {
		fprintf(stderr,
			"usage: race --addr IPV4 --port PORT [--threads 1-%d] [--stagger-us 0-100000] [--rounds 1-100000]\n",
			MAX_THREADS);
		return 2;
	}
	for (int r = 0; r < rounds; r++)
		if (round_of(addr, port, threads, stagger_us, &t))
			return 1;
	printf("{\"attack\":\"race\",\"threads\":%d,\"rounds\":%d,\"ok\":%d,\"EPERM\":%d,\"EACCES\":%d,\"other\":%d,"
	       "\"first_other\":\"%s\"}\n",
	       threads, rounds, t.ok, t.eperm, t.eacces, t.other, t.first_other ? strerrorname_np(t.first_other) : "");
	return 0;
}
