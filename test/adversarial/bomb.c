// SPDX-License-Identifier: Apache-2.0
/*
 * bomb: the workload of test/adversarial/resources.test.ts. Each bomb stops
 * at its own CAP, so a run where gensee sets no limit cannot hurt the host.
 *
 * Usage: bomb MODE CAP [TAG] (TAG, ignored, lets a test find its processes).
 *
 *   bomb fork CAP   a fork bomb: every process forks until CAP processes
 *                   were made in all or fork fails, then sleeps; prints
 *                   {"bomb":"fork","forked":N,"failed":F,"errno":"E..."} and
 *                   exits once a line (or EOF) arrives on stdin, which ends
 *                   the pid namespace and every process in it
 *   bomb mem CAP_MIB
 *                   a memory bomb: a child touches 1 MiB after another up to
 *                   CAP_MIB; prints {"bomb":"mem","touched_mib":N,
 *                   "signal":S,"exit":E}: the signal that ended the child
 *                   (9 when the OOM killer did), or its exit status 0 when
 *                   it reached CAP_MIB
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024L * 1024L)
/* how long the fork bomb may take to settle */
#define SETTLE_S 60

struct shared {
	atomic_long made, failed, busy, touched_mib;
	atomic_int first_errno;
};

static struct shared *share(void)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED) {
		perror("bomb: mmap");
		exit(2);
	}
	memset(s, 0, sizeof(*s));
	return s;
}

/* Fork until the cap or a failure, in this process and in every child.
 * busy counts the processes still spreading: marked for a child before its
 * fork, so the count never drops to 0 while one is about to start. */
static void spread(struct shared *s, long cap)
{
	for (;;) {
		pid_t p;

		if (atomic_fetch_add(&s->made, 1) >= cap) {
			atomic_fetch_sub(&s->made, 1);
			break;
		}
		atomic_fetch_add(&s->busy, 1);
		p = fork();
		if (p < 0) {
			int zero = 0;

			atomic_compare_exchange_strong(&s->first_errno, &zero, errno);
			atomic_fetch_add(&s->failed, 1);
			atomic_fetch_sub(&s->made, 1);
			atomic_fetch_sub(&s->busy, 1);
			break;
		}
		/* the child spreads too, under the mark its parent made */
	}
	atomic_fetch_sub(&s->busy, 1);
}

static int fork_bomb(long cap)
{
	struct shared *s = share();
	pid_t root = getpid();
	struct timespec t0, now;
	char line[16];

	atomic_store(&s->busy, 1); /* this process */
	spread(s, cap);
	if (getpid() != root)
		for (;;)
			pause(); /* held until the pid namespace ends */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* every process has stopped spreading: nothing more will be made */
	do {
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (atomic_load(&s->busy) > 0 && now.tv_sec - t0.tv_sec < SETTLE_S);
	printf("{\"bomb\":\"fork\",\"forked\":%ld,\"failed\":%ld,\"errno\":\"%s\"}\n", atomic_load(&s->made),
	       atomic_load(&s->failed), s->first_errno ? strerrorname_np(s->first_errno) : "");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin)) {
		/* EOF: done all the same */
	}
	return 0;
}

static int mem_bomb(long cap_mib)
{
	struct shared *s = share();
	int status;
	pid_t p = fork();

	if (p < 0) {
		perror("bomb: fork");
		return 2;
	}
	if (p == 0) {
		for (long i = 0; i < cap_mib; i++) {
			char *b = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (b == MAP_FAILED)
				_exit(3);
			memset(b, 0xa5, MIB); /* touched: resident, charged */
			atomic_store(&s->touched_mib, i + 1);
		}
		_exit(0);
	}
	while (waitpid(p, &status, 0) < 0)
		if (errno != EINTR) {
			perror("bomb: waitpid");
			return 2;
		}
	printf("{\"bomb\":\"mem\",\"touched_mib\":%ld,\"signal\":%d,\"exit\":%d}\n", atomic_load(&s->touched_mib),
	       WIFSIGNALED(status) ? WTERMSIG(status) : 0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	long cap;

	if (argc < 3 || argc > 4 || (cap = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bomb fork CAP [TAG] | bomb mem CAP_MIB [TAG]\n");
		return 2;
	}
	if (!strcmp(argv[1], "fork"))
		return fork_bomb(cap);
	if (!strcmp(argv[1], "mem"))
		return mem_bomb(cap);
	fprintf(stderr, "bomb: unknown mode %s\n", argv[1]);
	return 2;
}
