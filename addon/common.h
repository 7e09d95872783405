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
int gs_thread_answer_path(void);

/* An addon I/O thread: it sleeps in an epoll set and is woken through an
 * eventfd registered there under data.ptr = the caller's tag. */
struct gs_io {
	int epfd;
	int efd; /* EFD_NONBLOCK */
	pthread_t thread;
};

/* Opens io's epoll set and eventfd, the eventfd in the set under tag; what
 * names them in err. On failure both are closed and -1. */
int gs_io_open(struct gs_io *io, void *tag, struct gs_err *err, const char *what);
/* Starts fn(arg) as io's thread; what names it in err. */
int gs_io_start(struct gs_io *io, void *(*fn)(void *), void *arg, struct gs_err *err, const char *what);
/* Wakes io's thread (a saturated counter means it is awake anyway). */
void gs_io_wake(const struct gs_io *io);
/* On the thread, when the eventfd is readable: -1 if reading it failed. */
int gs_io_drain(const struct gs_io *io);
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
