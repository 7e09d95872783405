// SPDX-License-Identifier: Apache-2.0
// Client side of the supervisor socket (see sup_client.h).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "gensee/v2/fault.pb-c.h"
#include "proc.h"
#include "sup_client.h"
#include "sup_server.h" /* GS_FRAME_MAX: one frame limit both ways */

enum { S_CONNECT, S_WRITE, S_READ };

/* a full backlog (EAGAIN on a unix connect) is retried this often */
#define CONNECT_RETRY_NS (200ULL * 1000)
#define REPLY_MAX GS_FRAME_MAX

/* an idle kept connection, and the resolver its peer was verified to be */
struct kept {
	struct kept *next;
	int fd;
	char path[108];
	int32_t pid;
	uint64_t start;
	uint64_t idle_until;
};

struct gs_sup_client {
	struct gs_io io;
	pthread_mutex_t mu;
	struct gs_submit *incoming;    /* under mu */
	int stopping;                  /* under mu */
	struct gs_submit *head, *tail; /* in flight, by deadline (thread-owned) */
	struct kept *kept;             /* idle kept connections, newest first (thread-owned) */
	unsigned n_kept;
	uint64_t connections; /* atomic */
};

void gs_submit_free(struct gs_submit *req)
{
	if (!req)
		return;
	free(req->body);
	free(req->reply);
	free(req);
}

/* ---- canonical MAC input (src/protocol/mac.ts) -------------------------- */

struct wbuf {
	uint8_t *p;
	size_t n, cap;
	int short_;
};

static void put(struct wbuf *w, const void *src, size_t len)
{
	if (w->n + len > w->cap) {
		w->short_ = 1;
		return;
	}
	memcpy(w->p + w->n, src, len);
	w->n += len;
}

static void put_be(struct wbuf *w, uint64_t v, int bytes)
{
	uint8_t b[8];

	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	put(w, b, (size_t)bytes);
}

static void put_str(struct wbuf *w, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	put_be(w, len, 4);
	put(w, s, len);
}

size_t gs_mac_input(const void *resolution, uint8_t *out, size_t cap)
{
	static const char tag[] = "gensee-resolution-mac-v1"; /* + its NUL: 25 bytes */
	const Gensee__V2__Resolution *r = resolution;
	struct wbuf w = { out, 0, cap, 0 };

	put(&w, tag, sizeof(tag));
	put_str(&w, r->fault_id);
	put_be(&w, (uint64_t)r->action, 1);
	put_str(&w, r->reason);
	if (r->lease) {
		const Gensee__V2__Lease *l = r->lease;
		put_be(&w, 1, 1);
		put_be(&w, l->generation, 8);
		put_be(&w, (uint64_t)l->family, 1);
		put_be(&w, (uint64_t)l->protocol, 1);
		put_str(&w, l->address);
		put_be(&w, l->port, 2);
		put_be(&w, l->expires_at_boot_ns, 8);
		put_be(&w, l->max_uses, 4);
	} else {
		put_be(&w, 0, 1);
	}
	put_str(&w, r->delegate_to);
	return w.short_ ? 0 : w.n;
}

/* ---- completion ---------------------------------------------------------- */

static void list_del(struct gs_sup_client *c, struct gs_submit *q)
{
	if (q->prev)
		q->prev->next = q->next;
	else if (c->head == q)
		c->head = q->next;
	if (q->next)
		q->next->prev = q->prev;
	else if (c->tail == q)
		c->tail = q->prev;
	q->next = q->prev = NULL;
}

/* by deadline; deadlines mostly arrive in order, so scan from the tail */
static void list_add(struct gs_sup_client *c, struct gs_submit *q)
{
	struct gs_submit *after = c->tail;

	while (after && after->deadline > q->deadline)
		after = after->prev;
	q->prev = after;
	q->next = after ? after->next : c->head;
	if (q->next)
		q->next->prev = q;
	else
		c->tail = q;
	if (after)
		after->next = q;
	else
		c->head = q;
}

/* ---- kept connections ---------------------------------------------------- */

static void kept_close(struct kept *k)
{
	close(k->fd);
	free(k);
}

/* q's connection, its answer read to the last byte, waits for the next
 * submission. 0 when the pool is full (the caller closes it). */
static int keep_put(struct gs_sup_client *c, struct gs_submit *q)
{
	struct kept *k;

	if (c->n_kept >= GS_SUP_CLIENT_KEEP_MAX || !(k = calloc(1, sizeof(*k))))
		return 0;
	k->fd = q->fd;
	memcpy(k->path, q->path, sizeof(k->path));
	k->pid = q->expect_pid;
	k->start = q->expect_start;
	k->idle_until = gs_mono_ns() + GS_SUP_CLIENT_IDLE_MS * 1000000ULL;
	k->next = c->kept;
	c->kept = k;
	c->n_kept++;
	return 1;
}

/* An idle connection to q's resolver that is still open, or -1. A resolver
 * that closed it (it stopped, or restarted) has left an end of file. */
static int keep_take(struct gs_sup_client *c, struct gs_submit *q)
{
	struct kept **pp = &c->kept;

	while (*pp) {
		struct kept *k = *pp;
		char b;
		if (strcmp(k->path, q->path) || k->pid != q->expect_pid || k->start != q->expect_start) {
			pp = &k->next;
			continue;
		}
		*pp = k->next;
		c->n_kept--;
		ssize_t n = recv(k->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			int fd = k->fd;
			free(k);
			return fd;
		}
		/* closed, failed, or bytes nobody asked for: not a sequence to go on with */
		kept_close(k);
	}
	return -1;
}

static void keep_expire(struct gs_sup_client *c, uint64_t now)
{
	struct kept **pp = &c->kept;

	while (*pp) {
		struct kept *k = *pp;
		if (k->idle_until > now) {
			pp = &k->next;
			continue;
		}
		*pp = k->next;
		c->n_kept--;
		kept_close(k);
	}
}

static void finish(struct gs_sup_client *c, struct gs_submit *q, int status, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void finish(struct gs_sup_client *c, struct gs_submit *q, int status, int errnum, const char *fmt, ...)
{
	if (c)
		list_del(c, q);
	if (q->fd >= 0) {
		if (q->in_epoll && c)
			epoll_ctl(c->io.epfd, EPOLL_CTL_DEL, q->fd, NULL);
		/* only a sequence that went exactly as agreed goes on */
		if (!(c && q->keep && status == GS_SUB_OK && !fmt && keep_put(c, q)))
			close(q->fd);
		q->fd = -1;
	}
	q->status = status;
	q->errnum = errnum;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(q->detail, sizeof(q->detail), fmt, ap);
		va_end(ap);
	}
	q->elapsed_ns = gs_mono_ns() - q->t0;
	q->done(q, q->arg);
}

/* The reply is complete: decode, authenticate, report. */
static void judge(struct gs_sup_client *c, struct gs_submit *q)
{
	Gensee__V2__Resolution *r = gensee__v2__resolution__unpack(NULL, q->rlen, q->reply);
	uint8_t in[4096], mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	size_t n;

	if (!r) {
		finish(c, q, GS_SUB_UNAUTH, 0, "malformed resolution: not a gensee.v2.Resolution");
		return;
	}
	if (r->base.n_unknown_fields || (r->lease && r->lease->base.n_unknown_fields)) {
		gensee__v2__resolution__free_unpacked(r, NULL);
		finish(c, q, GS_SUB_UNAUTH, 0, "malformed resolution: unknown fields");
		return;
	}
	n = gs_mac_input(r, in, sizeof(in));
	if (!n || r->mac.len != GS_MAC_BYTES || !HMAC(EVP_sha256(), q->key, GS_KEY_BYTES, in, n, mac, &mac_len) ||
	    mac_len != GS_MAC_BYTES || CRYPTO_memcmp(mac, r->mac.data, GS_MAC_BYTES)) {
		gensee__v2__resolution__free_unpacked(r, NULL);
		finish(c, q, GS_SUB_UNAUTH, 0, "resolution MAC does not verify under the operation key");
		return;
	}
	q->action = (int)r->action;
	snprintf(q->reason, sizeof(q->reason), "%s", r->reason ? r->reason : "");
	snprintf(q->res_fault_id, sizeof(q->res_fault_id), "%s", r->fault_id ? r->fault_id : "");
	if (r->lease) {
		q->has_lease = 1;
		q->l_generation = r->lease->generation;
		q->l_family = (int)r->lease->family;
		q->l_protocol = (int)r->lease->protocol;
		snprintf(q->l_address, sizeof(q->l_address), "%s", r->lease->address ? r->lease->address : "");
		q->l_port = r->lease->port;
		q->l_expires = r->lease->expires_at_boot_ns;
		q->l_max_uses = r->lease->max_uses;
	}
	if (r->delegate_to && r->delegate_to[0]) {
		q->has_delegate = 1;
		snprintf(q->delegate_to, sizeof(q->delegate_to), "%s", r->delegate_to);
	}
	if (strcmp(r->fault_id, q->fault_id)) {
		/* a refusal of our frame before it parsed carries the resolver's own
		 * id; anything but a deny for another fault id is not ours to act on */
		if (r->action == GENSEE__V2__ACTION__ACTION_DENY) {
			char other[128];
			snprintf(other, sizeof(other), "%s", r->fault_id);
			gensee__v2__resolution__free_unpacked(r, NULL);
			finish(c, q, GS_SUB_OK, 0, "refused as %s", other);
			return;
		}
		char other[128];
		snprintf(other, sizeof(other), "%s", r->fault_id);
		gensee__v2__resolution__free_unpacked(r, NULL);
		finish(c, q, GS_SUB_UNAUTH, 0, "resolution is for fault %s, not %s", other, q->fault_id);
		return;
	}
	gensee__v2__resolution__free_unpacked(r, NULL);
	finish(c, q, GS_SUB_OK, 0, NULL);
}

static int watch(struct gs_sup_client *c, struct gs_submit *q, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = q };

	if (epoll_ctl(c->io.epfd, q->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, q->fd, &ev))
		return -1;
	q->in_epoll = 1;
	return 0;
}

static void do_read(struct gs_sup_client *c, struct gs_submit *q)
{
	for (;;) {
		ssize_t n;
		if (q->hdr_n < 4) {
			n = recv(q->fd, q->hdr + q->hdr_n, 4 - q->hdr_n, 0);
		} else {
			n = recv(q->fd, q->reply + q->rgot, q->rlen - q->rgot, 0);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			finish(c, q, GS_SUB_ERROR, errno, "reading the resolution: %s", strerror(errno));
			return;
		}
		if (n == 0) {
			finish(c, q, GS_SUB_ERROR, ECONNRESET, "the resolver closed the connection without an answer");
			return;
		}
		if (q->hdr_n < 4) {
			q->hdr_n += (uint32_t)n;
			if (q->hdr_n < 4)
				continue;
			q->rlen = (uint32_t)q->hdr[0] << 24 | (uint32_t)q->hdr[1] << 16 | (uint32_t)q->hdr[2] << 8 |
				  q->hdr[3];
			if (q->rlen == 0 || q->rlen > REPLY_MAX) {
				finish(c, q, GS_SUB_UNAUTH, 0, "malformed resolution: frame of %u bytes", q->rlen);
				return;
			}
			q->reply = malloc(q->rlen);
			if (!q->reply) {
				finish(c, q, GS_SUB_ERROR, ENOMEM, "out of memory");
				return;
			}
			continue;
		}
		q->rgot += (uint32_t)n;
		if (q->rgot == q->rlen) {
			q->reply_len = q->rlen;
			judge(c, q);
			return;
		}
	}
}

static void do_write(struct gs_sup_client *c, struct gs_submit *q)
{
	uint8_t hdr[4] = { (uint8_t)(q->body_len >> 24), (uint8_t)(q->body_len >> 16), (uint8_t)(q->body_len >> 8),
			   (uint8_t)q->body_len };

	while (q->sent < 4 + q->body_len) {
		struct iovec iov[2];
		int k = 0;
		if (q->sent < 4)
			iov[k++] = (struct iovec){ hdr + q->sent, 4 - q->sent };
		size_t boff = q->sent < 4 ? 0 : q->sent - 4;
		iov[k++] = (struct iovec){ q->body + boff, q->body_len - boff };
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)k };
		ssize_t n = sendmsg(q->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (watch(c, q, EPOLLOUT))
				finish(c, q, GS_SUB_ERROR, errno, "epoll_ctl: %s", strerror(errno));
			return;
		}
		if (n < 0) {
			finish(c, q, GS_SUB_ERROR, errno, "sending the fault: %s", strerror(errno));
			return;
		}
		q->sent += (size_t)n;
	}
	q->state = S_READ;
	if (watch(c, q, EPOLLIN | EPOLLRDHUP))
		finish(c, q, GS_SUB_ERROR, errno, "epoll_ctl: %s", strerror(errno));
	else
		do_read(c, q);
}

static void do_connect(struct gs_sup_client *c, struct gs_submit *q)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	if (q->fd < 0 && q->keep && (q->fd = keep_take(c, q)) >= 0) {
		q->reused = 1;
		q->state = S_WRITE;
		do_write(c, q);
		return;
	}
	if (q->fd < 0) {
		q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (q->fd < 0) {
			finish(c, q, GS_SUB_ERROR, errno, "socket: %s", strerror(errno));
			return;
		}
	}
	memcpy(sun.sun_path, q->path, sizeof(q->path));
	if (connect(q->fd, (struct sockaddr *)&sun, sizeof(sun))) {
		if (errno == EINTR || errno == EAGAIN) {
			/* backlog full: try again shortly (until the deadline) */
			q->retry_at = gs_mono_ns() + CONNECT_RETRY_NS;
			return;
		}
		finish(c, q, GS_SUB_ERROR, errno, "connect %s: %s", q->path, strerror(errno));
		return;
	}
	q->retry_at = 0;
	__atomic_fetch_add(&c->connections, 1, __ATOMIC_RELAXED);
	if (q->expect_pid) {
		struct ucred cr;
		socklen_t sl = sizeof(cr);
		uint64_t st;
		if (getsockopt(q->fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl)) {
			finish(c, q, GS_SUB_UNAUTH, 0, "SO_PEERCRED on the resolver socket failed: %s",
			       strerror(errno));
			return;
		}
		if (cr.pid != q->expect_pid) {
			finish(c, q, GS_SUB_UNAUTH, 0,
			       "socket peer pid %d is not the resolver pid %d of operation.json", cr.pid,
			       q->expect_pid);
			return;
		}
		if (gs_proc_start_time((uint32_t)cr.pid, &st) || st != q->expect_start) {
			finish(c, q, GS_SUB_UNAUTH, 0, "resolver pid %d start time does not match operation.json",
			       cr.pid);
			return;
		}
	}
	q->state = S_WRITE;
	do_write(c, q);
}

static void expire(struct gs_sup_client *c)
{
	uint64_t now = gs_mono_ns();
	struct gs_submit *q, *next;

	while ((q = c->head) && q->deadline <= now)
		finish(c, q, GS_SUB_TIMEOUT, ETIMEDOUT, "no answer within %u ms", q->timeout_ms);
	keep_expire(c, now);
	for (q = c->head; q; q = next) {
		next = q->next;
		if (q->retry_at && q->retry_at <= now)
			do_connect(c, q);
	}
}

static int next_timeout_ms(struct gs_sup_client *c)
{
	uint64_t now = gs_mono_ns(), best = UINT64_MAX;

	if (c->head)
		best = c->head->deadline;
	for (struct kept *k = c->kept; k; k = k->next)
		if (k->idle_until < best)
			best = k->idle_until;
	for (struct gs_submit *q = c->head; q; q = q->next)
		if (q->retry_at && q->retry_at < best)
			best = q->retry_at;
	if (best == UINT64_MAX)
		return -1;
	if (best <= now)
		return 0;
	return (int)((best - now + 999999ULL) / 1000000ULL);
}

static int engine_timeout(void *arg)
{
	return next_timeout_ms(arg);
}

static void engine_ready(void *arg, void *ptr)
{
	struct gs_sup_client *c = arg;
	struct gs_submit *q = ptr;

	if (q->state == S_WRITE)
		do_write(c, q);
	else if (q->state == S_READ)
		do_read(c, q);
}

/* starts what was submitted since the last round; 1 once stopping */
static int engine_round(void *arg)
{
	struct gs_sup_client *c = arg;

	pthread_mutex_lock(&c->mu);
	struct gs_submit *in = c->incoming;
	int stop = c->stopping;
	c->incoming = NULL;
	pthread_mutex_unlock(&c->mu);
	/* the incoming stack is newest first: start them oldest first */
	struct gs_submit *rev = NULL;
	while (in) {
		struct gs_submit *next = in->next;
		in->next = rev;
		rev = in;
		in = next;
	}
	while (rev) {
		struct gs_submit *q = rev;
		rev = rev->next;
		q->next = q->prev = NULL;
		list_add(c, q);
		do_connect(c, q);
	}
	if (stop)
		return 1;
	expire(c);
	return 0;
}

static void *engine(void *arg)
{
	struct gs_sup_client *c = arg;

	gs_io_loop(&c->io, engine_timeout, engine_ready, engine_round, c);
	while (c->head)
		finish(c, c->head, GS_SUB_ERROR, ECANCELED, "the client was stopped");
	while (c->kept) {
		struct kept *k = c->kept;
		c->kept = k->next;
		kept_close(k);
	}
	c->n_kept = 0;
	return NULL;
}

struct gs_sup_client *gs_sup_client_start(struct gs_err *err)
{
	struct gs_sup_client *c = calloc(1, sizeof(*c));

	if (!c) {
		gs_errf(err, ENOMEM, "calloc", "supervisor client");
		return NULL;
	}
	if (gs_io_open(&c->io, err, "supervisor client") ||
	    gs_io_start(&c->io, &c->mu, engine, c, err, "supervisor client")) {
		free(c);
		return NULL;
	}
	return c;
}

void gs_sup_client_submit(struct gs_sup_client *c, struct gs_submit *q)
{
	int stopping;

	q->fd = -1;
	q->in_epoll = 0;
	q->reused = 0;
	q->state = S_CONNECT;
	q->t0 = gs_mono_ns();
	q->deadline = q->t0 + (uint64_t)q->timeout_ms * 1000000ULL;
	q->path[sizeof(q->path) - 1] = 0;
	q->fault_id[sizeof(q->fault_id) - 1] = 0;
	pthread_mutex_lock(&c->mu);
	stopping = c->stopping;
	if (!stopping) {
		q->next = c->incoming;
		c->incoming = q;
	}
	pthread_mutex_unlock(&c->mu);
	if (stopping) {
		finish(NULL, q, GS_SUB_ERROR, ECANCELED, "the client was stopped");
		return;
	}
	gs_io_wake(&c->io);
}

uint64_t gs_sup_client_connections(struct gs_sup_client *c)
{
	return __atomic_load_n(&c->connections, __ATOMIC_RELAXED);
}

void gs_sup_client_stop(struct gs_sup_client *c)
{
	struct gs_submit *in;

	if (!c)
		return;
	gs_io_stop(&c->io, &c->mu, &c->stopping);
	pthread_mutex_lock(&c->mu);
	in = c->incoming;
	c->incoming = NULL;
	pthread_mutex_unlock(&c->mu);
	while (in) {
		struct gs_submit *next = in->next;
		in->fd = -1;
		finish(NULL, in, GS_SUB_ERROR, ECANCELED, "the client was stopped");
		in = next;
	}
	gs_io_close(&c->io);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
