/* SPDX-License-Identifier: Apache-2.0 */
/* Addon-wide helpers of the C code: the error every call fills, the
 * clocks, and the answer path's thread policy. /proc readers are proc.h. */
#ifndef GS_COMMON_H
#define GS_COMMON_H

#include <pthread.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An error as JS will see it: errno, the syscall/libbpf call that failed,
 * and the object (map, program, path) it failed on. */
struct gs_err {
	int errnum;
	char syscall[48];
	char what[256];
};

/* Fill err (errnum may be negative, as libbpf returns it); returns -1 with errno set. */
int gs_errf(struct gs_err *err, int errnum, const char *syscall, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Called first thing by the evidence syncer thread, which sends answers
 * the moment their lines are durable: SCHED_FIFO at a low real-time
 * priority when allowed (root), so that wake-up is not queued behind the
 * event loop and the workload on a busy machine (measured: the 1-client
 * p99 drops by about a third). It blocks in fdatasync between short
 * bursts; the kernel's RT throttling bounds it in any case. Not used for
 * the socket I/O and client threads (it cost ~15% of throughput at 8
 * clients) nor the seccomp loop (it slowed the fast path by ~10 us).
 * GENSEE_NO_RT=1 leaves it ordinary. Returns 0 if applied. */
/* Name a thread "gs-<first word of what>" (top -H, /proc/PID/task/TID/comm). */
void gs_thread_name(pthread_t t, const char *what);
int gs_thread_answer_path(void);

/* An addon I/O thread: it sleeps in an epoll set and is woken through an
 * eventfd registered there (under data.ptr = the struct gs_io itself).
 * Its owner keeps a mutex and a stopping flag under it. */
struct gs_io {
	int epfd;
	int efd; /* EFD_NONBLOCK */
	pthread_t thread;
};

/* Opens io's epoll set and eventfd, the eventfd in the set; what names
 * them in err. On failure both are closed and -1. */
int gs_io_open(struct gs_io *io, struct gs_err *err, const char *what);
/* Initialises mu (the owner's lock) and starts fn(arg) as io's thread;
 * what names it in err. On failure mu is destroyed and io closed. */
int gs_io_start(struct gs_io *io, pthread_mutex_t *mu, void *(*fn)(void *), void *arg, struct gs_err *err,
		const char *what);
/* The thread's loop: waits (up to timeout_ms(arg) ms, -1 for no limit),
 * drains the eventfd, passes every other ready fd's data.ptr to
 * ready(arg, ptr), then calls round(arg); returns when round says so
 * (nonzero) or epoll_wait fails. */
void gs_io_loop(struct gs_io *io, int (*timeout_ms)(void *arg), void (*ready)(void *arg, void *ptr),
		int (*round)(void *arg), void *arg);
/* Wakes io's thread (a saturated counter means it is awake anyway). */
void gs_io_wake(const struct gs_io *io);
/* Sets *stopping under mu, wakes io's thread and joins it. */
void gs_io_stop(struct gs_io *io, pthread_mutex_t *mu, int *stopping);
/* Closes what gs_io_open opened (those still open) and sets them to -1. */
void gs_io_close(struct gs_io *io);

/* CLOCK_BOOTTIME in ns (the clock of lease expiry and hook timestamps) */
uint64_t gs_boot_ns(void);
/* CLOCK_MONOTONIC in ns (deadlines and timings of the addon threads) */
uint64_t gs_mono_ns(void);

#ifdef __cplusplus
}
#endif

#endif
