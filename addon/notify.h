/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp user-notification loop (pause mode), plain C: no V8 here; the glue
 * is notify_glue.cc.
 *
 * One gs_notifier owns one listener fd (from gensee-exec or an OCI runtime).
 * gs_notifier_run() polls it on a thread of its own and calls
 * gs_notifier_step() whenever a notification waits (a caller may also do
 * that itself; step and respond are thread-safe).
 * Each step receives one notification and either answers it right away
 * (fast path: the exact lease is in the kernel map; pass-through: nothing the
 * boundary cares about) or returns it as a fault that stays pending until
 * gs_notifier_respond(). gs_notifier_close() answers every pending one with an
 * errno: a paused call never continues without an answer.
 *
 * CONTINUE is never an allow: the retried syscall meets the eBPF cgroup hook,
 * which decides on the kernel's own copy of the address. So whenever the
 * paused call cannot be inspected (unreadable memory, not a socket, unknown
 * protocol) the answer is CONTINUE and the hook decides; the read copy of the
 * address is advisory.
 */
#ifndef GS_NOTIFY_H
#define GS_NOTIFY_H
#include <stddef.h>
#include <stdint.h>
#include "dataplane.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gs_notify_syscall {
	GS_NSYS_CONNECT = 1,
	GS_NSYS_SENDTO = 2,
	GS_NSYS_SENDMSG = 3,
	GS_NSYS_SENDMMSG = 4,
	/* refused by the filter's own rule, answered at once, recorded (gs_refusal) */
	GS_NSYS_SOCKET = 5,
	GS_NSYS_SOCKETPAIR = 6,
	GS_NSYS_IO_URING_SETUP = 7,
	GS_NSYS_LISTEN = 8,
};

/* A call the filter sent only to be refused (another socket family,
 * io_uring, listen): answered with its errno in C, kept for the resolver to
 * record. Repeats of the same call by the same thread are one entry. */
struct gs_refusal {
	uint32_t pid;
	int syscall; /* enum gs_notify_syscall */
	int errnum;
	uint64_t args[3];
	uint64_t count;
	uint64_t boot_ns; /* the first */
};
#define GS_REFUSALS_MAX 256

struct gs_notify_stats {
	uint64_t fast_path;     /* exact lease present: CONTINUE without a JS hop */
	uint64_t slow_path;     /* raised as a fault */
	uint64_t passthrough;   /* not for the boundary (AF_UNIX, NULL address, connected send...) */
	uint64_t uninspectable; /* could not read the call: CONTINUE, the hook decides */
	uint64_t gone;          /* target died or the call was interrupted before the answer */
	uint64_t continued;     /* faults answered CONTINUE */
	uint64_t refused;       /* faults answered with an errno (incl. at close) */
	uint64_t filtered;      /* refused by the filter's own rule (gs_refusal) */
	uint64_t filtered_lost; /* of those, not kept (the list was full): counted only */
	uint64_t via_leader;    /* a non-leader thread's call read through its leader's pidfd (no PIDFD_THREAD) */
};

/* A paused call raised as a fault (slow path). */
struct gs_fault_info {
	uint64_t id;                  /* seccomp notification id */
	uint32_t pid;                 /* thread id of the caller */
	uint32_t tgid;                /* its process, 0 if unknown */
	int syscall;                  /* enum gs_notify_syscall */
	struct gs_lease_key key;      /* the exact tuple, as the eBPF hook keys it */
	char address[48];             /* textual (v4-mapped v6 shown as v4) */
	uint64_t start_time_ticks;    /* field 22 of /proc/PID/stat */
	uint64_t observed_at_boot_ns; /* CLOCK_BOOTTIME when received */
	uint64_t cgroup_id;           /* 0 if unknown */
	char fault_id[64];            /* sn-<pid>-<seq> */
	uint8_t *fault;               /* protobuf gensee.v2.CapabilityFault, malloc'd: free() it */
	size_t fault_len;
};

struct gs_notify_opts {
	const char *operation_id; /* copied into each fault; NULL = "" */
};

struct gs_notifier;

/* Callbacks of the loop thread (gs_notifier_run). fault(): a paused call
 * without a lease, pending until gs_notifier_respond (f->fault is malloc'd
 * and becomes the callee's). stopped(): the loop ended on its own: err NULL
 * when every task using the filter is gone, else why. */
struct gs_notify_loop {
	void (*fault)(void *ctx, struct gs_fault_info *f);
	void (*stopped)(void *ctx, const struct gs_err *err);
	void *ctx;
};

/* Takes ownership of listener_fd on success (closed by gs_notifier_close). */
struct gs_notifier *gs_notifier_open(int listener_fd, const char *leases_pin, const struct gs_notify_opts *opts,
				     struct gs_err *err);
int gs_notifier_fd(const struct gs_notifier *n);
/* 1 if SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP is on (6.6+) */
int gs_notifier_sync_wake_up(const struct gs_notifier *n);
/* 1 if pidfds of non-leader threads are used (PIDFD_THREAD, 6.9+); 0 if a
 * thread's calls go through its leader's pidfd (older kernels, or
 * GENSEE_NO_PIDFD_THREAD=1 in the environment when the notifier opened) */
int gs_notifier_pidfd_thread(const struct gs_notifier *n);

/* Receive and handle one notification. Returns 1 when *f was filled (a
 * fault now pending: free f->fault), 0 when it was answered or was gone,
 * -1 on error (err filled). Never blocks once poll() says the listener is
 * readable. */
int gs_notifier_step(struct gs_notifier *n, struct gs_fault_info *f, struct gs_err *err);

/* Answer a pending fault: errnum 0 = CONTINUE, else the errno the caller
 * sees. Returns 1 answered, 0 target gone (ENOENT, counted), -1 error
 * (EINVAL: id not pending). */
int gs_notifier_respond(struct gs_notifier *n, uint64_t id, int errnum, struct gs_err *err);

size_t gs_notifier_pending(struct gs_notifier *n);
void gs_notifier_stats(struct gs_notifier *n, struct gs_notify_stats *out);

/* Move up to cap kept refusals to out (oldest first); returns how many. */
size_t gs_notifier_take_refusals(struct gs_notifier *n, struct gs_refusal *out, size_t cap);

/* Answer every pending fault with errnum, close the listener and the lease
 * map, free n. Returns how many were answered. */
size_t gs_notifier_close(struct gs_notifier *n, int errnum);

/* Run the loop on a thread of its own: poll the listener, answer the fast
 * path in C, hand faults to loop->fault. At most once per notifier. */
int gs_notifier_run(struct gs_notifier *n, const struct gs_notify_loop *loop, struct gs_err *err);
/* Stop and join the loop thread (gs_notifier_close does it too). */
void gs_notifier_halt(struct gs_notifier *n);

#ifdef __cplusplus
}
#endif
#endif
