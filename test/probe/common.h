// SPDX-License-Identifier: Apache-2.0
/*
 * What the C programs of the tests and the bench (gs-probe,
 * test/adversarial/flood.c, bench/floor.c) do the same way: move themselves
 * into the cgroup under test, read the clocks, and sort latencies.
 */
#ifndef GS_PROBE_COMMON_H
#define GS_PROBE_COMMON_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* write our pid to DIR/cgroup.procs: 0, or -1 with errno set */
static inline int join_cgroup(const char *dir)
{
	char path[4096], buf[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d", getpid());
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the clock of the eBPF hook's rate limit and of fault records */
static inline uint64_t boot_ns(void)
{
	return clock_ns(CLOCK_BOOTTIME);
}

/* for latencies */
static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* qsort order of uint64_t (latencies, for percentiles) */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
