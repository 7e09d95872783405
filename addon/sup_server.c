// SPDX-License-Identifier: Apache-2.0
// The supervisor socket's I/O thread (see sup_server.h).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "peercred.h"
#include "subject.h"
#include "sup_server.h"
#include "dataplane.h" /* gs_lease_put_fd */

enum { L_NONE, L_IDLE, L_FRAME, L_DRAIN, L_COUNT };
enum { C_READ, C_HANDED, C_DRAIN };
/* why a connection came back from its answer to the I/O thread */
enum { B_NEXT, B_EARLY, B_DRAIN };

#define HASH_BUCKETS 1024

struct conn {
	struct conn *prev, *next; /* deadline list */
	int list;
	struct conn *hnext; /* handed table */
	struct gs_sup_server *s;
	int fd;
	int in_epoll;
	int state;
	uint64_t id;
	uint64_t deadline;
	uint8_t hdr[4];
	uint32_t hdr_n;
	uint8_t *body;
	uint32_t body_len, body_n;
	int has_cred;
	struct ucred cred;
	uint8_t *answer;
	size_t answer_len;
	uint64_t t_accept; /* CLOCK_MONOTONIC us: accept, then each later frame's first byte */
	int complete;      /* handed over with its whole frame read: the client is done sending */
	int closing;       /* close after this answer: a refusal, or bytes after the frame */
	int back;          /* B_*: what the I/O thread does with it after the answer */
	uint64_t served;   /* answers sent on this connection */
	/* gs_sup_server_answer_grant: the lease put before the answer, and
	 * its outcome for JavaScript (allocated up front) */
	struct gs_lease_key gkey;
	struct gs_lease_value gval;
	struct gs_sup_grant_done *gdone;
};

struct dlist {
	struct conn *head, *tail;
};

struct gs_sup_server {
	int listen_fd;
	struct gs_io io;
	uint32_t owner_uid;
	char cgroup_rel[4096];
	void (*ready)(void *ctx);
	void *ctx;
	struct gs_subject_cache *who; /* peers, on the I/O thread */
	uint64_t next_id;
	struct dlist lists[L_COUNT];

	pthread_mutex_t mu; /* everything below */
	struct gs_sup_request *rq_head, *rq_tail;
	struct conn *handed[HASH_BUCKETS];
	struct conn *back_q; /* answered, back to the I/O thread */
	uint64_t accepted;   /* connections admitted (atomic) */
	int stopping;
	int stopped;
	unsigned refs; /* answers waiting on a log */
	uint64_t lat[GS_LAT_BUCKETS];
	int lease_fd; /* gs_sup_server_lease_map's dup, -1 without */
	struct gs_sup_grant_done *done_head, *done_tail;
};

/* requests handed to JavaScript and not yet answered or dropped, in every
 * server of the process (gs_sup_server_busy: the fault log's siblings) */
static uint64_t busy_total;

uint64_t gs_sup_server_busy(void)
{
	return __atomic_load_n(&busy_total, __ATOMIC_RELAXED);
}

/* the epoll tag of the listening socket (the rest are connections) */
static char TAG_LISTEN;

static uint64_t mono_us(void)
{
	return gs_mono_ns() / 1000ULL;
}

static uint64_t mono_ms(void)
{
	return gs_mono_ns() / 1000000ULL;
}

static void list_del(struct gs_sup_server *s, struct conn *c)
{
	struct dlist *l;

	if (c->list == L_NONE)
		return;
	l = &s->lists[c->list];
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	c->list = L_NONE;
}

/* every list has one fixed timeout, so appending keeps it sorted */
static void list_put(struct gs_sup_server *s, struct conn *c, int which, uint64_t timeout_ms)
{
	struct dlist *l = &s->lists[which];

	list_del(s, c);
	c->deadline = mono_ms() + timeout_ms;
	c->list = which;
	c->prev = l->tail;
	c->next = NULL;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
}

static void conn_free(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->body);
	free(c->answer);
	free(c->gdone);
	free(c);
}

static void conn_close(struct gs_sup_server *s, struct conn *c)
{
	list_del(s, c);
	if (c->in_epoll)
		epoll_ctl(s->io.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	conn_free(c);
}

/* Is pid in cgroup_rel or below it (as /proc/PID/cgroup names it)? A pid
 * whose cgroup cannot be read is not inside (src/cgroup.ts pidInCgroupTree). */
static int pid_in_cgroup(struct gs_sup_server *s, int32_t pid)
{
	char have[4096];
	uint64_t start;

	if (pid <= 0 || gs_subject_lookup(s->who, (uint32_t)pid, &start, have, sizeof(have)))
		return 0;
	return gs_cgroup_within(have, s->cgroup_rel);
}

/* The connection becomes a request for JavaScript. */
static void hand(struct gs_sup_server *s, struct conn *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void hand(struct gs_sup_server *s, struct conn *c, int status, const char *fmt, ...)
{
	struct gs_sup_request *r = calloc(1, sizeof(*r));
	int wake;

	list_del(s, c);
	if (c->in_epoll) {
		epoll_ctl(s->io.epfd, EPOLL_CTL_DEL, c->fd, NULL);
		c->in_epoll = 0;
	}
	if (!r) {
		conn_close(s, c);
		return;
	}
	c->state = C_HANDED;
	c->complete = status == GS_RQ_FRAME;
	c->closing = status != GS_RQ_FRAME;
	r->id = c->id;
	r->status = status;
	r->has_cred = c->has_cred;
	r->pid = c->cred.pid;
	r->uid = c->cred.uid;
	r->gid = c->cred.gid;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
		va_end(ap);
	}
	if (status == GS_RQ_FRAME) {
		char b;
		r->body = c->body;
		r->len = c->body_len;
		c->body = NULL;
		r->trailing = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
		c->closing = r->trailing;
	}
	pthread_mutex_lock(&s->mu);
	c->hnext = s->handed[c->id % HASH_BUCKETS];
	s->handed[c->id % HASH_BUCKETS] = c;
	__atomic_fetch_add(&busy_total, 1, __ATOMIC_RELAXED);
	wake = s->rq_head == NULL;
	if (s->rq_tail)
		s->rq_tail->next = r;
	else
		s->rq_head = r;
	s->rq_tail = r;
	pthread_mutex_unlock(&s->mu);
	if (wake)
		s->ready(s->ctx);
}

static int on_read(struct gs_sup_server *s, struct conn *c);

static void on_accept(struct gs_sup_server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; /* EAGAIN, or out of fds: the backlog waits */
		}
		struct conn *c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->s = s;
		c->fd = fd;
		c->t_accept = mono_us();
		c->id = ++s->next_id;
		socklen_t sl = sizeof(c->cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &sl)) {
			hand(s, c, GS_RQ_PEER_REFUSED, "SO_PEERCRED failed: %s", strerror(errno));
			continue;
		}
		c->has_cred = 1;
		if (c->cred.uid != 0 && c->cred.uid != s->owner_uid) {
			hand(s, c, GS_RQ_PEER_REFUSED, "uid %u is neither root nor the operation owner", c->cred.uid);
			continue;
		}
		if (pid_in_cgroup(s, c->cred.pid)) {
			hand(s, c, GS_RQ_PEER_REFUSED, "pid %d is inside the operation's cgroup", c->cred.pid);
			continue;
		}
		char why[160];
		if (!gs_peer_in_our_namespaces(fd, c->cred.pid, why, sizeof(why))) {
			hand(s, c, GS_RQ_PEER_REFUSED, "%s", why);
			continue;
		}
		__atomic_fetch_add(&s->accepted, 1, __ATOMIC_RELAXED);
		c->state = C_READ;
		list_put(s, c, L_IDLE, GS_FRAME_IDLE_MS);
		/* a client sends its frame right after connecting: it is often
		 * here already, and then the connection never enters epoll */
		if (!on_read(s, c))
			continue;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
		if (epoll_ctl(s->io.epfd, EPOLL_CTL_ADD, fd, &ev)) {
			conn_close(s, c);
			continue;
		}
		c->in_epoll = 1;
	}
}

static void on_drain(struct gs_sup_server *s, struct conn *c)
{
	char buf[4096];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		conn_close(s, c); /* the client closed (or failed): done */
		return;
	}
}

/* 1 while the frame is still incomplete; 0 once the connection was handed over or closed */
static int on_read(struct gs_sup_server *s, struct conn *c)
{
	uint8_t buf[8192];

	for (;;) {
		uint32_t got = c->hdr_n + c->body_n;
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 1;
			if (c->served && !got) { /* gone between frames: nothing to refuse */
				conn_close(s, c);
				return 0;
			}
			hand(s, c, GS_RQ_FRAME_TRUNCATED, "connection failed after %u bytes: %s", got, strerror(errno));
			return 0;
		}
		if (n == 0) {
			if (c->served && !got) {
				/* the client is done with its sequence */
				conn_close(s, c);
				return 0;
			}
			if (c->body)
				hand(s, c, GS_RQ_FRAME_TRUNCATED, "connection ended after %u bytes of %u", got,
				     4 + c->body_len);
			else
				hand(s, c, GS_RQ_FRAME_TRUNCATED, "connection ended after %u bytes of a frame", got);
			return 0;
		}
		if (c->list == L_IDLE) { /* first byte: the frame clock starts */
			list_put(s, c, L_FRAME, GS_FRAME_TIMEOUT_MS);
			if (c->served)
				c->t_accept = mono_us();
		}
		size_t off = 0;
		if (!c->body) {
			size_t k = 4 - c->hdr_n;
			if (k > (size_t)n)
				k = (size_t)n;
			memcpy(c->hdr + c->hdr_n, buf, k);
			c->hdr_n += (uint32_t)k;
			off = k;
			if (c->hdr_n < 4)
				continue;
			uint32_t len = (uint32_t)c->hdr[0] << 24 | (uint32_t)c->hdr[1] << 16 |
				       (uint32_t)c->hdr[2] << 8 | c->hdr[3];
			if (len == 0) {
				hand(s, c, GS_RQ_FRAME_EMPTY, "zero-length frame");
				return 0;
			}
			if (len > GS_FRAME_MAX) {
				hand(s, c, GS_RQ_FRAME_OVERSIZE, "declared length %u exceeds %u bytes", len,
				     GS_FRAME_MAX);
				return 0;
			}
			c->body = malloc(len);
			if (!c->body) {
				conn_close(s, c);
				return 0;
			}
			c->body_len = len;
		}
		size_t k = c->body_len - c->body_n;
		if (k > (size_t)n - off)
			k = (size_t)n - off;
		memcpy(c->body + c->body_n, buf + off, k);
		c->body_n += (uint32_t)k;
		off += k;
		if (c->body_n < c->body_len)
			continue;
		if (off < (size_t)n) {
			hand(s, c, GS_RQ_FRAME_TRAILING, "%zu bytes after the frame", (size_t)n - off);
			return 0;
		}
		hand(s, c, GS_RQ_FRAME, NULL);
		return 0;
	}
}

static void expire(struct gs_sup_server *s)
{
	uint64_t now = mono_ms();
	struct conn *c;

	while ((c = s->lists[L_IDLE].head) && c->deadline <= now) {
		if (c->served) /* an idle sequence: closed, nothing refused */
			conn_close(s, c);
		else
			hand(s, c, GS_RQ_FRAME_TIMEOUT, "no frame within %d ms", GS_FRAME_IDLE_MS);
	}
	while ((c = s->lists[L_FRAME].head) && c->deadline <= now)
		hand(s, c, GS_RQ_FRAME_TIMEOUT, "frame not complete within %d ms of its first byte (%u bytes)",
		     GS_FRAME_TIMEOUT_MS, c->hdr_n + c->body_n);
	while ((c = s->lists[L_DRAIN].head) && c->deadline <= now)
		conn_close(s, c);
}

static int next_timeout(struct gs_sup_server *s)
{
	uint64_t now = mono_ms(), best = UINT64_MAX;

	for (int i = L_IDLE; i < L_COUNT; i++)
		if (s->lists[i].head && s->lists[i].head->deadline < best)
			best = s->lists[i].head->deadline;
	if (best == UINT64_MAX)
		return -1;
	return best <= now ? 0 : (int)(best - now + 1);
}

/* Answered connections come back here: to read the next frame of their
 * sequence, to have an early one refused, or to be drained and closed. */
static void take_back(struct gs_sup_server *s)
{
	struct conn *c;

	pthread_mutex_lock(&s->mu);
	c = s->back_q;
	s->back_q = NULL;
	pthread_mutex_unlock(&s->mu);
	while (c) {
		struct conn *next = c->hnext;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
		c->hnext = NULL;
		free(c->answer);
		c->answer = NULL;
		if (c->back == B_EARLY) {
			hand(s, c, GS_RQ_FRAME_TRAILING,
			     "bytes of a next frame arrived before the answer to the previous one was sent");
		} else if (epoll_ctl(s->io.epfd, EPOLL_CTL_ADD, c->fd, &ev)) {
			conn_close(s, c);
		} else if (c->back == B_DRAIN) {
			c->state = C_DRAIN;
			c->in_epoll = 1;
			list_put(s, c, L_DRAIN, GS_DRAIN_MS);
		} else {
			c->state = C_READ;
			c->in_epoll = 1;
			c->hdr_n = 0;
			c->body_len = c->body_n = 0;
			free(c->body);
			c->body = NULL;
			list_put(s, c, L_IDLE, GS_FRAME_IDLE_MS);
			/* the next frame may be here already */
			on_read(s, c);
		}
		c = next;
	}
}

static int io_timeout(void *arg)
{
	return next_timeout(arg);
}

static void io_ready(void *arg, void *p)
{
	struct gs_sup_server *s = arg;
	struct conn *c = p;

	if (p == &TAG_LISTEN)
		on_accept(s);
	else if (c->state == C_DRAIN)
		on_drain(s, c);
	else if (c->state == C_READ)
		on_read(s, c);
}

/* takes back answered connections; 1 once stopping */
static int io_round(void *arg)
{
	struct gs_sup_server *s = arg;

	pthread_mutex_lock(&s->mu);
	int stop = s->stopping;
	pthread_mutex_unlock(&s->mu);
	if (stop)
		return 1;
	take_back(s);
	expire(s);
	return 0;
}

static void *io_thread(void *arg)
{
	struct gs_sup_server *s = arg;

	gs_io_loop(&s->io, io_timeout, io_ready, io_round, s);
	/* close everything this thread owns */
	take_back(s);
	for (int i = L_IDLE; i < L_COUNT; i++)
		while (s->lists[i].head)
			conn_close(s, s->lists[i].head);
	return NULL;
}

struct gs_sup_server *gs_sup_server_start(int listen_fd, uint32_t owner_uid, const char *cgroup_rel,
					  void (*ready)(void *ctx), void *ctx, struct gs_err *err)
{
	struct gs_sup_server *s = calloc(1, sizeof(*s));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &TAG_LISTEN };

	if (!s) {
		gs_errf(err, ENOMEM, "calloc", "supervisor socket");
		return NULL;
	}
	if (strlen(cgroup_rel) >= sizeof(s->cgroup_rel) || cgroup_rel[0] != '/') {
		free(s);
		gs_errf(err, EINVAL, "gs_sup_server_start", "cgroup path %s", cgroup_rel);
		return NULL;
	}
	snprintf(s->cgroup_rel, sizeof(s->cgroup_rel), "%s", cgroup_rel);
	s->listen_fd = listen_fd;
	s->lease_fd = -1;
	s->owner_uid = owner_uid;
	s->ready = ready;
	s->ctx = ctx;
	s->who = gs_subject_cache_new();
	if (!s->who) {
		gs_errf(err, ENOMEM, "calloc", "peer cache");
		goto fail;
	}
	if (gs_io_open(&s->io, err, "supervisor socket"))
		goto fail;
	if (epoll_ctl(s->io.epfd, EPOLL_CTL_ADD, listen_fd, &ev)) {
		gs_errf(err, errno, "epoll_ctl", "listening socket fd %d", listen_fd);
		gs_io_close(&s->io);
		goto fail;
	}
	if (gs_io_start(&s->io, &s->mu, io_thread, s, err, "supervisor socket I/O"))
		goto fail;
	return s;
fail:
	gs_subject_cache_free(s->who);
	free(s);
	return NULL;
}

struct gs_sup_request *gs_sup_server_take(struct gs_sup_server *s)
{
	struct gs_sup_request *r;

	pthread_mutex_lock(&s->mu);
	r = s->rq_head;
	s->rq_head = s->rq_tail = NULL;
	pthread_mutex_unlock(&s->mu);
	return r;
}

void gs_sup_request_free(struct gs_sup_request *r)
{
	if (!r)
		return;
	free(r->body);
	free(r);
}

/* under s->mu */
static struct conn *unhand(struct gs_sup_server *s, uint64_t id)
{
	struct conn **pp = &s->handed[id % HASH_BUCKETS];

	for (; *pp; pp = &(*pp)->hnext) {
		if ((*pp)->id == id) {
			struct conn *c = *pp;
			*pp = c->hnext;
			c->hnext = NULL;
			__atomic_fetch_sub(&busy_total, 1, __ATOMIC_RELAXED);
			return c;
		}
	}
	return NULL;
}

static void sup_server_free(struct gs_sup_server *s)
{
	while (s->done_head) {
		struct gs_sup_grant_done *d = s->done_head;
		s->done_head = d->next;
		free(d);
	}
	if (s->lease_fd >= 0)
		close(s->lease_fd);
	gs_subject_cache_free(s->who);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* runs once the answer's ticket is durable (syncer thread, or inline) */
static void send_answer(void *arg, int err)
{
	struct conn *c = arg;
	struct gs_sup_server *s = c->s;
	int last, early = 0, sent = 0;
	char b;

	if (!err) {
		size_t off = 0;
		/* Bytes waiting before the answer leaves belong to a frame sent
		 * before it: refused, and the sequence ends there. Looked at
		 * before sending, since a client may send its next frame as soon
		 * as it has read this answer. */
		early = !c->closing && recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
		while (off < c->answer_len) {
			ssize_t n = send(c->fd, c->answer + off, c->answer_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break; /* the client went away; the evidence is written */
			off += (size_t)n;
		}
		sent = off == c->answer_len;
		c->served++;
		uint64_t bk = (mono_us() - c->t_accept) / GS_LAT_BUCKET_US;
		__atomic_fetch_add(&s->lat[bk < GS_LAT_BUCKETS ? bk : GS_LAT_BUCKETS - 1], 1, __ATOMIC_RELAXED);
	}
	if (!err && sent && !c->closing) {
		c->back = early ? B_EARLY : B_NEXT;
	} else if (!err) {
		/* The sequence ends: half-close. A whole frame and nothing unread
		 * (the usual case): the client is done sending, closing now cannot
		 * reset it, and it reads the answer at its pace. Otherwise (a
		 * refused or trickling client, bytes after the frame) drain first:
		 * closing with unread input, or under a client still writing,
		 * would reset it and it could lose the answer. */
		shutdown(c->fd, SHUT_WR);
		c->back = (!c->complete || recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0) ? B_DRAIN : -1;
	}
	pthread_mutex_lock(&s->mu);
	if (err || c->back < 0 || s->stopped || s->stopping) {
		conn_free(c);
	} else {
		c->hnext = s->back_q;
		s->back_q = c;
		gs_io_wake(&s->io);
	}
	s->refs--;
	last = s->stopped && s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (last)
		sup_server_free(s);
}

/* Request id, taken out of the handed table to be answered with frame
 * (copied first: a failed allocation leaves the request handed), with a
 * reference held until its answer is sent or dropped. NULL with errno:
 * ENOMEM, ENOENT (no such request, or stopped), EBADF (lease_map asked for
 * and none set). */
static struct conn *claim(struct gs_sup_server *s, uint64_t id, const void *frame, size_t len, int lease_map)
{
	uint8_t *answer = malloc(len ? len : 1);
	struct conn *c = NULL;
	int e = ENOENT;

	if (!answer) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&s->mu);
	if (lease_map && s->lease_fd < 0)
		e = EBADF;
	else if (!s->stopped)
		c = unhand(s, id);
	if (c)
		s->refs++;
	pthread_mutex_unlock(&s->mu);
	if (!c) {
		free(answer);
		errno = e;
		return NULL;
	}
	memcpy(answer, frame, len);
	c->answer = answer;
	c->answer_len = len;
	return c;
}

int gs_sup_server_answer(struct gs_sup_server *s, uint64_t id, const void *frame, size_t len, struct gs_synclog *log,
			 uint64_t ticket, int request)
{
	struct conn *c = claim(s, id, frame, len, 0);

	if (!c)
		return -1;
	if (!log) {
		send_answer(c, 0);
		return 0;
	}
	if (gs_synclog_when_durable(log, ticket, send_answer, c, request)) {
		int e = errno;
		send_answer(c, e);
		errno = e;
		return -1;
	}
	return 0;
}

int gs_sup_server_lease_map(struct gs_sup_server *s, int leases_fd)
{
	int fd = fcntl(leases_fd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	pthread_mutex_lock(&s->mu);
	int old = s->lease_fd;
	s->lease_fd = fd;
	pthread_mutex_unlock(&s->mu);
	if (old >= 0)
		close(old);
	return 0;
}

/* Runs once a grant's ticket is durable (syncer thread, or inline): the
 * put and its read-back, then the answer only if the lease is there as
 * granted; the outcome queued for JavaScript before the answer leaves (the
 * network record may learn of a lease before the workload does, never
 * after it has used it unrecorded for long). */
static void grant_durable(void *arg, int err)
{
	struct conn *c = arg;
	struct gs_sup_server *s = c->s;
	struct gs_sup_grant_done *d = c->gdone;
	int fd, stop;

	c->gdone = NULL;
	pthread_mutex_lock(&s->mu);
	stop = s->stopping || s->stopped;
	fd = s->lease_fd;
	pthread_mutex_unlock(&s->mu);
	if (err) {
		d->outcome = GS_GRANT_NOT_DURABLE;
		d->err = err;
		snprintf(d->detail, sizeof(d->detail), "its resolution line never became durable: %s", strerror(err));
	} else if (stop) {
		d->outcome = GS_GRANT_STOPPED;
		err = ECANCELED;
	} else {
		struct gs_err e = { 0 };
		if (gs_lease_put_fd(fd, &c->gkey, &c->gval, &d->back, &e)) {
			d->outcome = GS_GRANT_NOT_INSTALLED;
			d->err = e.errnum ? e.errnum : EIO;
			snprintf(d->detail, sizeof(d->detail), "%s: %s: %s", e.syscall, e.what, strerror(d->err));
		} else if (d->back.generation != c->gval.generation ||
			   d->back.expires_boot_ns != c->gval.expires_boot_ns || d->back.flags != c->gval.flags) {
			d->outcome = GS_GRANT_NOT_INSTALLED;
			d->err = EIO;
			snprintf(d->detail, sizeof(d->detail), "lease read back differs from what was installed");
		} else {
			d->outcome = GS_GRANT_INSTALLED;
		}
		if (d->outcome != GS_GRANT_INSTALLED)
			err = d->err;
	}
	/* queued, not signalled: JavaScript takes outcomes on a timer of its
	 * own (src/resolver/server.ts). A wake-up here would run the event
	 * loop at the very moment the answer reaches the client and the I/O
	 * thread takes the connection back; on 2 CPUs that cost the 1-client
	 * round trip ~190 us p50 (measured). The network record may lag the
	 * kernel by that timer; the lease sweep leaves keys in flight alone. */
	pthread_mutex_lock(&s->mu);
	if (s->stopping || s->stopped) {
		free(d); /* JavaScript takes nothing more */
	} else {
		if (s->done_tail)
			s->done_tail->next = d;
		else
			s->done_head = d;
		s->done_tail = d;
	}
	pthread_mutex_unlock(&s->mu);
	send_answer(c, err);
}

int gs_sup_server_answer_grant(struct gs_sup_server *s, uint64_t id, const void *frame, size_t len,
			       struct gs_synclog *log, uint64_t ticket, const struct gs_lease_key *k,
			       const struct gs_lease_value *v, uint64_t token, int request)
{
	struct gs_sup_grant_done *d;
	struct conn *c;

	if (!log) {
		errno = EINVAL;
		return -1;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return -1;
	}
	c = claim(s, id, frame, len, 1);
	if (!c) {
		int e = errno;
		free(d);
		errno = e;
		return -1;
	}
	d->token = token;
	c->gdone = d;
	c->gkey = *k;
	c->gval = *v;
	if (gs_synclog_when_durable(log, ticket, grant_durable, c, request))
		grant_durable(c, errno ? errno : EIO);
	return 0;
}

struct gs_sup_grant_done *gs_sup_server_take_done(struct gs_sup_server *s)
{
	struct gs_sup_grant_done *d;

	pthread_mutex_lock(&s->mu);
	d = s->done_head;
	s->done_head = s->done_tail = NULL;
	pthread_mutex_unlock(&s->mu);
	return d;
}

int gs_sup_server_drop(struct gs_sup_server *s, uint64_t id)
{
	struct conn *c;

	pthread_mutex_lock(&s->mu);
	c = unhand(s, id);
	pthread_mutex_unlock(&s->mu);
	if (!c) {
		errno = ENOENT;
		return -1;
	}
	conn_free(c);
	return 0;
}

void gs_sup_server_latency(struct gs_sup_server *s, uint64_t *out, int reset)
{
	for (int i = 0; i < GS_LAT_BUCKETS; i++)
		out[i] = reset ? __atomic_exchange_n(&s->lat[i], 0, __ATOMIC_RELAXED)
			       : __atomic_load_n(&s->lat[i], __ATOMIC_RELAXED);
}

uint64_t gs_sup_server_accepted(struct gs_sup_server *s)
{
	return __atomic_load_n(&s->accepted, __ATOMIC_RELAXED);
}

void gs_sup_server_stop(struct gs_sup_server *s)
{
	struct gs_sup_request *r;
	int last;

	if (!s)
		return;
	gs_io_stop(&s->io, &s->mu, &s->stopping);
	r = gs_sup_server_take(s);
	while (r) {
		struct gs_sup_request *next = r->next;
		gs_sup_request_free(r);
		r = next;
	}
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < HASH_BUCKETS; i++) {
		while (s->handed[i]) {
			struct conn *c = s->handed[i];
			s->handed[i] = c->hnext;
			__atomic_fetch_sub(&busy_total, 1, __ATOMIC_RELAXED);
			conn_free(c);
		}
	}
	gs_io_close(&s->io);
	s->stopped = 1;
	last = s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (last)
		sup_server_free(s);
}
