// SPDX-License-Identifier: Apache-2.0
/* Addon-wide helpers (common.h): errors, clocks, thread policy. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "common.h"

/* The one error helper of the addon's C code (common.h): libbpf's
 * negative error codes are accepted as well as errno values. */
int gs_errf(struct gs_err *err, int errnum, const char *syscall, const char *fmt, ...)
{
	va_list ap;

	if (errnum < 0)
		errnum = -errnum;
	if (errnum == 0)
		errnum = EIO;
	err->errnum = errnum;
	snprintf(err->syscall, sizeof(err->syscall), "%s", syscall);
	va_start(ap, fmt);
	vsnprintf(err->what, sizeof(err->what), fmt, ap);
	va_end(ap);
	errno = errnum;
	return -1;
}

int gs_thread_answer_path(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	const char *no = getenv("GENSEE_NO_RT");

	if (no && no[0] == '1')
		return -1;
	return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) ? -1 : 0;
}

uint64_t gs_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t gs_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
