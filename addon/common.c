// SPDX-License-Identifier: Apache-2.0
/* Addon-wide helpers (common.h): errors, clocks, threads. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
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

void gs_thread_name(pthread_t t, const char *what)
{
	char name[16]; /* the kernel's limit, with the NUL */
	size_t j = 0;

	/* "gs-" and the first word of what: visible in top -H and /proc/PID/task */
	memcpy(name, "gs-", 3);
	j = 3;
	for (const char *p = what; *p && *p != ' ' && j < sizeof(name) - 1; p++)
		name[j++] = *p;
	name[j] = 0;
	pthread_setname_np(t, name);
}

int gs_io_open(struct gs_io *io, struct gs_err *err, const char *what)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = io };

	io->epfd = epoll_create1(EPOLL_CLOEXEC);
	io->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (io->epfd < 0 || io->efd < 0)
		gs_errf(err, errno, io->epfd < 0 ? "epoll_create1" : "eventfd", "%s", what);
	else if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, io->efd, &ev))
		gs_errf(err, errno, "epoll_ctl", "%s eventfd", what);
	else
		return 0;
	gs_io_close(io);
	return -1;
}

int gs_io_start(struct gs_io *io, pthread_mutex_t *mu, void *(*fn)(void *), void *arg, struct gs_err *err,
		const char *what)
{
	int rc;

	pthread_mutex_init(mu, NULL);
	rc = pthread_create(&io->thread, NULL, fn, arg);
	if (!rc) {
		gs_thread_name(io->thread, what);
		return 0;
	}
	pthread_mutex_destroy(mu);
	gs_io_close(io);
	return gs_errf(err, rc, "pthread_create", "%s", what);
}

void gs_io_loop(struct gs_io *io, int (*timeout_ms)(void *arg), void (*ready)(void *arg, void *ptr),
		int (*round)(void *arg), void *arg)
{
	struct epoll_event evs[64];

	for (;;) {
		int n = epoll_wait(io->epfd, evs, 64, timeout_ms(arg));
		if (n < 0 && errno != EINTR)
			return;
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == io) {
				uint64_t v;
				/* a failed read leaves this round's other fds to the next wait */
				if (read(io->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					break;
				continue;
			}
			ready(arg, evs[i].data.ptr);
		}
		if (round(arg))
			return;
	}
}

void gs_io_wake(const struct gs_io *io)
{
	uint64_t one = 1;

	if (write(io->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, the thread is awake anyway */
	}
}

void gs_io_stop(struct gs_io *io, pthread_mutex_t *mu, int *stopping)
{
	pthread_mutex_lock(mu);
	*stopping = 1;
	pthread_mutex_unlock(mu);
	gs_io_wake(io);
	pthread_join(io->thread, NULL);
}

void gs_io_close(struct gs_io *io)
{
	if (io->epfd >= 0)
		close(io->epfd);
	if (io->efd >= 0)
		close(io->efd);
	io->epfd = io->efd = -1;
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
