// SPDX-License-Identifier: Apache-2.0
// Durable append for the evidence logs: write on the caller's thread (or,
// with GS_SYNCLOG_SYNCER_WRITES, queue for the syncer to write), fdatasync
// on a syncer thread (see synclog.h).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "synclog.h"

/* a write-ahead line nobody asked to sync is synced after this long */
#define LAZY_SYNC_NS (5ULL * 1000 * 1000)
/* a sync held for its siblings looks again this often (an answer that
 * leaves the count of requests being decided does not signal the log) */
#define SIBLING_POLL_NS (50ULL * 1000)

static const uint64_t hist_bounds_us[GS_SYNC_HIST - 1] = { GS_SYNC_HIST_BOUNDS };

struct waiter {
	struct waiter *next;
	uint64_t ticket;
	gs_durable_fn fn; /* NULL: a waiter in JavaScript (gs_synclog_expect) */
	void *arg;
};

struct gs_synclog {
	int fd;
	uint64_t delay_ns;
	void (*wake)(void *ctx);
	void *ctx;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t written;   /* tickets written to the file */
	uint64_t appended;  /* tickets handed out: written + queued */
	uint64_t requested; /* highest ticket somebody waits to be durable */
	uint64_t durable;
	uint64_t lazy_since; /* CLOCK_MONOTONIC ns of the oldest unsynced unrequested write, 0 = none */
	int failed;
	int stopping;
	/* the syncer sleeps until somebody wants a sync: only then is a
	 * writer's signal needed (it re-checks everything before it sleeps) */
	int waiting;
	/* JavaScript waits for durability: wake it after each sync (else only on failure) */
	int want_wake;
	struct waiter *head, *tail;
	/* gs_synclog_siblings: requests being decided, the hold, and the
	 * expect() waiters not yet covered by a sync */
	uint64_t (*busy)(void);
	uint64_t sib_delay_ns;
	uint64_t tokens;
	int sib_holding; /* the syncer holds a sync for siblings: signal it */
	struct gs_synclog_stats st;
	/* GS_SYNCLOG_SYNCER_WRITES: lines queued here, written by whoever
	 * holds io (the syncer before each fdatasync, or sync_now) in order */
	int queued_mode;
	char *q;
	size_t qlen, qcap;
	pthread_mutex_t io; /* taken before mu; held while queued lines are written and synced */
	/* gs_synclog_test_fail: the first fdatasync covering test_ticket is
	 * held test_ms, then counts as failed (EIO) */
	uint64_t test_ticket;
	uint32_t test_ms;
};

/*
 * fdatasync, and then a zero-length write: an fdatasync that returned 0 on a
 * filesystem that is read-only by now (ext4's errors=remount-ro after an
 * error: "emergency_ro", which statvfs does not show) may have raced with
 * the error, and its lines are not trusted as durable. A zero-length write
 * fails EROFS there and costs nothing anywhere else.
 * (test/adversarial/disk-ro.test.ts: with the error triggered while grants
 * were in flight, 2 of ~31 runs, three at a time, found a kernel lease whose
 * resolution line an fdatasync had returned 0 for missing from the disk
 * after e2fsck; 0 of 18 with this check.)
 * Returns 0, or the errno.
 */
static int sync_checked(int fd)
{
	if (fdatasync(fd))
		return errno ? errno : EIO;
	if (write(fd, "", 0) < 0)
		return errno ? errno : EIO;
	return 0;
}

/* under mu: detach the queued lines (the caller writes them, holding io) */
static char *take_queue(struct gs_synclog *l, size_t *len, uint64_t *lines)
{
	char *q = l->q;

	*len = l->qlen;
	*lines = l->appended - l->written;
	l->q = NULL;
	l->qlen = l->qcap = 0;
	return q;
}

/* write all of buf; 0 or errno (EIO for a write that made no progress) */
static int write_all(int fd, const char *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		off += (size_t)n;
	}
	return 0;
}

/* detach the waiters whose ticket is durable (all of them when err) */
static struct waiter *take_ready(struct gs_synclog *l, int all)
{
	struct waiter *first = l->head, *last = NULL, *w = l->head;

	while (w && (all || w->ticket <= l->durable)) {
		if (!w->fn)
			l->tokens--;
		last = w;
		w = w->next;
	}
	if (!last)
		return NULL;
	l->head = w;
	if (!w)
		l->tail = NULL;
	last->next = NULL;
	return first;
}

static void run_waiters(struct waiter *w, int err)
{
	while (w) {
		struct waiter *next = w->next;

		if (w->fn)
			w->fn(w->arg, err);
		free(w);
		w = next;
	}
}

static void cond_wait_until(struct gs_synclog *l, uint64_t deadline_mono)
{
	struct timespec ts;

	/* the condvar runs on CLOCK_MONOTONIC (see gs_synclog_open) */
	ts.tv_sec = (time_t)(deadline_mono / 1000000000ULL);
	ts.tv_nsec = (long)(deadline_mono % 1000000000ULL);
	pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

static void *syncer(void *arg)
{
	struct gs_synclog *l = arg;

	gs_thread_answer_path();

	pthread_mutex_lock(&l->mu);
	for (;;) {
		if (l->failed)
			break;
		int want = l->requested > l->durable;
		int lazy = !want && l->appended > l->durable;
		if (!want && !lazy) {
			if (l->stopping)
				break;
			l->waiting = 1;
			pthread_cond_wait(&l->cv, &l->mu);
			l->waiting = 0;
			continue;
		}
		if (lazy && !l->stopping) {
			uint64_t due = l->lazy_since + LAZY_SYNC_NS;
			if (gs_mono_ns() < due) {
				l->waiting = 1;
				cond_wait_until(l, due);
				l->waiting = 0;
				continue;
			}
		}
		if (want && l->delay_ns && !l->stopping) {
			/* hold the sync for company; new requests do not cut it short */
			uint64_t due = gs_mono_ns() + l->delay_ns;
			while (!l->stopping && !l->failed && gs_mono_ns() < due)
				cond_wait_until(l, due);
		}
		if (want && l->busy && l->sib_delay_ns && !l->stopping) {
			/* siblings: requests being decided that neither wait for a
			 * ticket nor are answered will each ask for a sync of their
			 * own in a moment; hold this one (bounded) to cover them */
			uint64_t t0 = gs_mono_ns(), due = t0 + l->sib_delay_ns;
			int held = 0;
			while (!l->stopping && !l->failed && l->busy() > l->tokens) {
				uint64_t now = gs_mono_ns();
				if (now >= due)
					break;
				held = 1;
				l->sib_holding = 1;
				cond_wait_until(l, now + SIBLING_POLL_NS < due ? now + SIBLING_POLL_NS : due);
				l->sib_holding = 0;
			}
			if (held) {
				l->st.sibling_waits++;
				l->st.sibling_wait_ns += gs_mono_ns() - t0;
			}
		}
		char *q = NULL;
		size_t qlen = 0;
		uint64_t qlines = 0;
		if (l->queued_mode) {
			/* io before mu: sync_now may be writing; then take what is
			 * queued by now, so lines reach the file in ticket order */
			pthread_mutex_unlock(&l->mu);
			pthread_mutex_lock(&l->io);
			pthread_mutex_lock(&l->mu);
			q = take_queue(l, &qlen, &qlines);
		}
		uint64_t target = l->written + qlines;
		uint64_t test_ticket = l->test_ticket;
		pthread_mutex_unlock(&l->mu);

		int rc = 0, e = 0;
		if (qlen) {
			e = write_all(l->fd, q, qlen);
			rc = e ? -1 : 0;
		}
		free(q);
		uint64_t t0 = gs_mono_ns();
		if (!rc) {
			e = sync_checked(l->fd);
			rc = e ? -1 : 0;
		}
		uint64_t dt = gs_mono_ns() - t0;
		if (l->queued_mode)
			pthread_mutex_unlock(&l->io);
		if (!rc && test_ticket && target >= test_ticket) {
			/* (io released: a caller's drain or sync_now does not wait for the hold) */
			struct timespec hold = { .tv_sec = l->test_ms / 1000,
						 .tv_nsec = (long)(l->test_ms % 1000) * 1000000L };
			while (nanosleep(&hold, &hold) && errno == EINTR)
				;
			e = EIO;
			rc = -1;
		}

		pthread_mutex_lock(&l->mu);
		if (!rc)
			l->written += qlines;
		struct waiter *ready;
		if (rc) {
			l->failed = e ? e : EIO;
			ready = take_ready(l, 1);
		} else {
			l->st.syncs++;
			l->st.lines += target - l->durable;
			l->st.sync_ns += dt;
			if (dt > 1000000ULL)
				l->st.slow_syncs++;
			if (dt > l->st.max_sync_ns)
				l->st.max_sync_ns = dt;
			int b = 0;
			while (b < GS_SYNC_HIST - 1 && dt > hist_bounds_us[b] * 1000ULL)
				b++;
			l->st.hist[b]++;
			l->durable = target;
			if (l->appended == l->durable)
				l->lazy_since = 0;
			else if (l->requested <= l->durable)
				l->lazy_since = gs_mono_ns();
			ready = take_ready(l, 0);
		}
		int err = l->failed;
		int wake = l->want_wake || err;
		pthread_mutex_unlock(&l->mu);
		run_waiters(ready, err);
		if (l->wake && wake)
			l->wake(l->ctx);
		pthread_mutex_lock(&l->mu);
	}
	struct waiter *rest = take_ready(l, 1);
	int err = l->failed ? l->failed : ECANCELED;
	pthread_mutex_unlock(&l->mu);
	run_waiters(rest, err);
	if (l->wake)
		l->wake(l->ctx);
	return NULL;
}

struct gs_synclog *gs_synclog_open(int fd, uint32_t delay_us, unsigned flags, void (*wake)(void *ctx), void *ctx,
				   struct gs_err *err)
{
	struct gs_synclog *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	int rc;

	if (!l) {
		gs_errf(err, ENOMEM, "calloc", "evidence log");
		return NULL;
	}
	l->fd = fd;
	l->delay_ns = (uint64_t)delay_us * 1000ULL;
	l->queued_mode = (flags & GS_SYNCLOG_SYNCER_WRITES) != 0;
	pthread_mutex_init(&l->io, NULL);
	l->wake = wake;
	l->ctx = ctx;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&l->thread, NULL, syncer, l);
	if (!rc)
		gs_thread_name(l->thread, "synclog");
	if (rc) {
		gs_errf(err, rc, "pthread_create", "evidence log syncer");
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		pthread_mutex_destroy(&l->io);
		free(l);
		return NULL;
	}
	return l;
}

uint64_t gs_synclog_write(struct gs_synclog *l, const void *buf, size_t len, uint32_t n_lines, int want_sync,
			  struct gs_err *err)
{
	const char *p = buf;
	uint64_t ticket;

	pthread_mutex_lock(&l->mu);
	if (l->failed) {
		int e = l->failed;
		pthread_mutex_unlock(&l->mu);
		gs_errf(err, e, "write", "evidence log failed earlier");
		return 0;
	}
	if (l->stopping) {
		pthread_mutex_unlock(&l->mu);
		gs_errf(err, EBADF, "write", "evidence log is closed");
		return 0;
	}
	if (l->queued_mode) {
		if (l->qlen + len > l->qcap) {
			size_t cap = l->qcap ? l->qcap : 4096;
			while (cap < l->qlen + len)
				cap *= 2;
			char *q = realloc(l->q, cap);
			if (!q) {
				pthread_mutex_unlock(&l->mu);
				gs_errf(err, ENOMEM, "realloc", "evidence log queue");
				return 0;
			}
			l->q = q;
			l->qcap = cap;
		}
		memcpy(l->q + l->qlen, p, len);
		l->qlen += len;
		l->appended += n_lines;
	} else {
		int e = write_all(l->fd, p, len);
		if (e) {
			/* a partial line may be in the file now: the chain in memory
			 * no longer matches it; fail (reopen recovers a torn line) */
			l->failed = e;
			pthread_cond_signal(&l->cv);
			pthread_mutex_unlock(&l->mu);
			gs_errf(err, e, "write", "evidence log");
			return 0;
		}
		l->written += n_lines;
		l->appended = l->written;
	}
	ticket = l->appended;
	int signal = 0;
	if (want_sync) {
		l->requested = ticket;
		signal = l->waiting || l->sib_holding;
	} else if (!l->lazy_since) {
		l->lazy_since = gs_mono_ns();
		signal = l->waiting;
	}
	pthread_mutex_unlock(&l->mu);
	/* after the unlock: the woken syncer does not run straight into the
	 * mutex this thread still holds (one wake-up, not two) */
	if (signal)
		pthread_cond_signal(&l->cv);
	return ticket;
}

void gs_synclog_want_wake(struct gs_synclog *l, int on)
{
	pthread_mutex_lock(&l->mu);
	l->want_wake = on;
	pthread_mutex_unlock(&l->mu);
}

void gs_synclog_request(struct gs_synclog *l)
{
	int signal = 0;

	pthread_mutex_lock(&l->mu);
	if (l->appended > l->requested) {
		l->requested = l->appended;
		signal = l->waiting || l->sib_holding;
	}
	pthread_mutex_unlock(&l->mu);
	if (signal) /* after the unlock, as in gs_synclog_write */
		pthread_cond_signal(&l->cv);
}

void gs_synclog_siblings(struct gs_synclog *l, uint64_t (*busy)(void), uint32_t delay_us)
{
	pthread_mutex_lock(&l->mu);
	l->busy = busy;
	l->sib_delay_ns = (uint64_t)delay_us * 1000ULL;
	pthread_mutex_unlock(&l->mu);
}

#define LOCKED_READ(field)            \
	uint64_t v;                   \
	pthread_mutex_lock(&l->mu);   \
	v = (uint64_t)(field);        \
	pthread_mutex_unlock(&l->mu); \
	return v

void gs_synclog_test_fail(struct gs_synclog *l, uint64_t ticket, uint32_t ms)
{
	pthread_mutex_lock(&l->mu);
	l->test_ticket = ticket;
	l->test_ms = ms;
	pthread_mutex_unlock(&l->mu);
}

uint64_t gs_synclog_written(struct gs_synclog *l)
{
	LOCKED_READ(l->appended);
}

uint64_t gs_synclog_durable(struct gs_synclog *l)
{
	LOCKED_READ(l->durable);
}

int gs_synclog_failed(struct gs_synclog *l)
{
	int v;

	pthread_mutex_lock(&l->mu);
	v = l->failed;
	pthread_mutex_unlock(&l->mu);
	return v;
}

uint64_t gs_synclog_progress(struct gs_synclog *l, int *failed)
{
	uint64_t v;

	pthread_mutex_lock(&l->mu);
	v = l->durable;
	*failed = l->failed;
	pthread_mutex_unlock(&l->mu);
	return v;
}

void gs_synclog_stats(struct gs_synclog *l, struct gs_synclog_stats *out)
{
	pthread_mutex_lock(&l->mu);
	*out = l->st;
	pthread_mutex_unlock(&l->mu);
}

static int add_waiter(struct gs_synclog *l, uint64_t ticket, gs_durable_fn fn, void *arg, int request)
{
	struct waiter *w;

	pthread_mutex_lock(&l->mu);
	if (l->failed || l->stopping) {
		int e = l->failed ? l->failed : ECANCELED;
		pthread_mutex_unlock(&l->mu);
		errno = e;
		return -1;
	}
	if (ticket <= l->durable) {
		pthread_mutex_unlock(&l->mu);
		if (fn)
			fn(arg, 0);
		return 0;
	}
	w = malloc(sizeof(*w));
	if (!w) {
		pthread_mutex_unlock(&l->mu);
		errno = ENOMEM;
		return -1;
	}
	w->ticket = ticket;
	w->fn = fn;
	w->arg = arg;
	w->next = NULL;
	if (!l->tail || l->tail->ticket <= ticket) {
		if (l->tail)
			l->tail->next = w;
		else
			l->head = w;
		l->tail = w;
	} else {
		struct waiter **pp = &l->head;
		while (*pp && (*pp)->ticket <= ticket)
			pp = &(*pp)->next;
		w->next = *pp;
		*pp = w;
	}
	if (!fn)
		l->tokens++;
	if (request && ticket > l->requested) {
		l->requested = ticket > l->appended ? l->appended : ticket;
		if (l->waiting || l->sib_holding)
			pthread_cond_signal(&l->cv);
	} else if (l->sib_holding) {
		pthread_cond_signal(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	return 0;
}

int gs_synclog_when_durable(struct gs_synclog *l, uint64_t ticket, gs_durable_fn fn, void *arg, int request)
{
	return add_waiter(l, ticket, fn, arg, request);
}

int gs_synclog_expect(struct gs_synclog *l, uint64_t ticket)
{
	return add_waiter(l, ticket, NULL, NULL, 0);
}

int gs_synclog_sync_now(struct gs_synclog *l, struct gs_err *err)
{
	uint64_t target, qlines = 0;
	struct waiter *ready;
	char *q = NULL;
	size_t qlen = 0;
	int e = 0;

	if (l->queued_mode)
		pthread_mutex_lock(&l->io);
	pthread_mutex_lock(&l->mu);
	if (l->failed) {
		e = l->failed;
		pthread_mutex_unlock(&l->mu);
		if (l->queued_mode)
			pthread_mutex_unlock(&l->io);
		return gs_errf(err, e, "fdatasync", "evidence log failed earlier");
	}
	if (l->queued_mode)
		q = take_queue(l, &qlen, &qlines);
	target = l->written + qlines;
	pthread_mutex_unlock(&l->mu);
	const char *what = "write";
	if (qlen)
		e = write_all(l->fd, q, qlen);
	free(q);
	if (!e) {
		e = sync_checked(l->fd);
		if (e)
			what = "fdatasync";
	}
	if (l->queued_mode)
		pthread_mutex_unlock(&l->io);
	if (e) {
		pthread_mutex_lock(&l->mu);
		l->failed = e;
		pthread_cond_signal(&l->cv);
		pthread_mutex_unlock(&l->mu);
		return gs_errf(err, e, what, "evidence log");
	}
	pthread_mutex_lock(&l->mu);
	l->written += qlines;
	if (target > l->durable)
		l->durable = target;
	if (l->appended == l->durable)
		l->lazy_since = 0;
	ready = take_ready(l, 0);
	pthread_mutex_unlock(&l->mu);
	run_waiters(ready, 0);
	return 0;
}

int gs_synclog_drain(struct gs_synclog *l, struct gs_err *err)
{
	uint64_t qlines = 0;
	size_t qlen = 0;
	char *q;
	int e;

	if (!l->queued_mode)
		return 0;
	pthread_mutex_lock(&l->io);
	pthread_mutex_lock(&l->mu);
	if (l->failed) {
		e = l->failed;
		pthread_mutex_unlock(&l->mu);
		pthread_mutex_unlock(&l->io);
		return gs_errf(err, e, "write", "evidence log failed earlier");
	}
	q = take_queue(l, &qlen, &qlines);
	pthread_mutex_unlock(&l->mu);
	e = qlen ? write_all(l->fd, q, qlen) : 0;
	free(q);
	pthread_mutex_unlock(&l->io);
	pthread_mutex_lock(&l->mu);
	if (e) {
		l->failed = e;
		pthread_cond_signal(&l->cv);
	} else {
		l->written += qlines;
	}
	pthread_mutex_unlock(&l->mu);
	return e ? gs_errf(err, e, "write", "evidence log") : 0;
}

void gs_synclog_close(struct gs_synclog *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = 1;
	if (l->appended > l->requested)
		l->requested = l->appended;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	pthread_mutex_destroy(&l->io);
	free(l->q);
	free(l);
}
