/* SPDX-License-Identifier: Apache-2.0 */
/* Durable append for the hash-chained evidence logs (src/evidence/chain.ts).
 *
 * Lines are written to the file on the caller's thread at once (in the page
 * cache: they survive the process being killed) and made durable by a
 * syncer thread that runs fdatasync whenever somebody waits for durability.
 * With GS_SYNCLOG_SYNCER_WRITES the caller only queues them and the syncer
 * writes what is queued, in order, right before each fdatasync (or 5 ms
 * after a line nobody waits for): the caller's thread then never waits for
 * the file either — a write(2) to a file whose journal is committing can
 * block for as long as the commit. A queued line is in no file until then:
 * use it for a log whose lines are acted on only once durable.
 * Every line written while one fdatasync runs is covered by the next one:
 * group commit without a window, and the caller's thread never blocks on
 * the disk.
 *
 * Tickets: the n-th line written has ticket n (1-based, per open log).
 * gs_synclog_durable() is the highest ticket known to be on stable storage.
 * Work that must wait for a ticket (an answer that may only leave once its
 * resolution line is durable) is queued with gs_synclog_when_durable() and
 * runs on the syncer thread right after the fdatasync that covers it.
 */
#ifndef GS_SYNCLOG_H
#define GS_SYNCLOG_H

#include <stddef.h>
#include <stdint.h>
#include "common.h" /* struct gs_err, clocks */

#ifdef __cplusplus
extern "C" {
#endif

struct gs_synclog;

/* fn(arg, 0) once the ticket is durable; fn(arg, errno) if the log failed
 * or closed before it became durable. Runs on the syncer thread (or on the
 * caller's, when the ticket is durable already). */
typedef void (*gs_durable_fn)(void *arg, int err);

/* upper bounds (us) of the fdatasync latency histogram's buckets; one more
 * bucket counts the rest */
#define GS_SYNC_HIST_BOUNDS 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000
#define GS_SYNC_HIST 13

struct gs_synclog_stats {
	uint64_t syncs;   /* fdatasync calls */
	uint64_t lines;   /* lines made durable by them */
	uint64_t sync_ns; /* time spent in fdatasync */
	uint64_t max_sync_ns;
	uint64_t slow_syncs;         /* fdatasync calls that took over 1 ms */
	uint64_t hist[GS_SYNC_HIST]; /* fdatasync calls by latency (GS_SYNC_HIST_BOUNDS) */
	uint64_t sibling_waits;      /* syncs held for siblings (gs_synclog_siblings) */
	uint64_t sibling_wait_ns;    /* time they were held */
};

/* Start the syncer for fd (open O_APPEND; not owned: the caller closes it
 * after gs_synclog_close). wake(ctx) is called from the syncer thread on
 * failure, and after each fdatasync while gs_synclog_want_wake is on. delay_us: hold a requested sync this long
 * for company (0 for the fault log; counters use a window). */
#define GS_SYNCLOG_SYNCER_WRITES 1u
struct gs_synclog *gs_synclog_open(int fd, uint32_t delay_us, unsigned flags, void (*wake)(void *ctx), void *ctx,
				   struct gs_err *err);

/* Write (or queue) one or more whole lines now. want_sync=0: no fdatasync
 * is asked for (a write-ahead line; the next sync or at the latest 5 ms
 * covers it). Returns the ticket of the last line (n_lines of them), or 0
 * with err set (the log is failed from then on). */
uint64_t gs_synclog_write(struct gs_synclog *l, const void *buf, size_t len, uint32_t n_lines, int want_sync,
			  struct gs_err *err);

/* Whether wake() is wanted after each fdatasync (somebody in JS waits). */
void gs_synclog_want_wake(struct gs_synclog *l, int on);

/* Ask for a sync covering everything written so far. */
void gs_synclog_request(struct gs_synclog *l);
/* tickets handed out so far (lines written, and queued) */
uint64_t gs_synclog_written(struct gs_synclog *l);
uint64_t gs_synclog_durable(struct gs_synclog *l);
/* errno of the write or fdatasync that failed the log, 0 while healthy */
int gs_synclog_failed(struct gs_synclog *l);
/* the durable ticket and the failure (errno, 0 while healthy) under one
 * lock: what a waiter needs after each wake-up */
uint64_t gs_synclog_progress(struct gs_synclog *l, int *failed);
void gs_synclog_stats(struct gs_synclog *l, struct gs_synclog_stats *out);

/* Run fn(arg, 0) once `ticket` is durable (at once if it is). With
 * request, a sync covering it is asked for now; without, the caller asks
 * (gs_synclog_request) once it has queued everything that can share it.
 * Returns 0, or -1 with errno if the log failed or is closing (fn is not
 * called). */
int gs_synclog_when_durable(struct gs_synclog *l, uint64_t ticket, gs_durable_fn fn, void *arg, int request);

/* Group commit that waits for its siblings (PostgreSQL's commit_delay
 * with commit_siblings): busy() counts the requests being decided (handed
 * to the resolver, not yet answered); each one that waits for a ticket of
 * this log registers with gs_synclog_expect(). When a sync is asked for
 * while some of them are neither answered nor waiting (so each will ask
 * for a sync of its own very soon), the syncer holds the sync until they
 * all wait or delay_us has passed, so that one fdatasync covers them. A
 * lone request (busy() <= waiting) never waits. delay_us 0: off. */
void gs_synclog_siblings(struct gs_synclog *l, uint64_t (*busy)(void), uint32_t delay_us);

/* One waiter for `ticket` that runs nothing: somebody (in JavaScript)
 * waits for it, and learns of it by gs_synclog_durable(). Counted for
 * gs_synclog_siblings until a sync covers it. No sync is asked for. 0, or
 * -1 with errno (failed or closing). */
int gs_synclog_expect(struct gs_synclog *l, uint64_t ticket);

/* Tests only (GENSEE_TEST_FAIL_RESOLUTION_SYNC, src/evidence/chain.ts):
 * the first fdatasync that covers `ticket` is held `ms` once it returned,
 * then counts as failed with EIO, as if fdatasync had: nothing it covered
 * is durable, every waiter fails, the log is failed. */
void gs_synclog_test_fail(struct gs_synclog *l, uint64_t ticket, uint32_t ms);

/* Write what is queued and fdatasync, on the caller's thread now (shutdown
 * paths, and whoever must see every line in the file). */
int gs_synclog_sync_now(struct gs_synclog *l, struct gs_err *err);

/* Write what is queued, on the caller's thread now, without an fdatasync:
 * afterwards every line handed out so far is in the file (a reader that
 * must find them there, e.g. a live stream's replay). 0, or -1 with err. */
int gs_synclog_drain(struct gs_synclog *l, struct gs_err *err);

/* Sync what is written, run or fail every waiter, stop and join the
 * syncer, free. The fd stays open. */
void gs_synclog_close(struct gs_synclog *l);

#ifdef __cplusplus
}
#endif
#endif
