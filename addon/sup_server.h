/* SPDX-License-Identifier: Apache-2.0 */
/* The supervisor socket's I/O, on its own thread (src/resolver/server.ts
 * decides; this file only moves bytes and enforces the wire rules).
 *
 * A connection carries a sequence of request/answer pairs (DESIGN.md "Wire
 * formats"): each request is a 4-byte big-endian length and a body of
 * 1..65536 bytes, the whole frame within 2 s of its first byte; after its
 * answer is sent the next frame is read. No bytes may follow a frame before
 * its answer is sent: bytes after the frame, or a next frame that arrived
 * early, are refused and end the sequence. A connection idle for 30 s is
 * closed (refused if it never sent a frame). Peers are authenticated at
 * accept with SO_PEERCRED: uid root or the owner, never a process inside
 * the operation's cgroup, and in gensee's own user and mount namespaces.
 *
 * Each frame, and each refusal (bad peer, bad frame) with its code, becomes
 * one request handed to JavaScript. JS answers each with gs_sup_server_answer();
 * the answer leaves only once the evidence line it names (a synclog ticket)
 * is durable, straight from the syncer thread, with no JavaScript in
 * between. After answering a refusal the socket is half-closed and whatever
 * the client still sends is read and dropped until it closes (closing with
 * unread input would reset the client and it could lose the answer), for
 * at most 2 s.
 */
#ifndef GS_SUP_SERVER_H
#define GS_SUP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "common.h" /* struct gs_err, clocks */
#include "synclog.h"
#include "gensee_abi.h" /* struct gs_lease_key, gs_lease_value */

#ifdef __cplusplus
extern "C" {
#endif

#define GS_FRAME_MAX 65536
#define GS_FRAME_TIMEOUT_MS 2000
#define GS_FRAME_IDLE_MS 30000
#define GS_DRAIN_MS 2000

enum gs_sup_server_status {
	GS_RQ_FRAME = 0,    /* body holds one complete frame */
	GS_RQ_PEER_REFUSED, /* unauthenticated_peer (detail says why) */
	GS_RQ_FRAME_OVERSIZE,
	GS_RQ_FRAME_TRUNCATED,
	GS_RQ_FRAME_TIMEOUT,
	GS_RQ_FRAME_TRAILING,
	GS_RQ_FRAME_EMPTY,
};

struct gs_sup_request {
	struct gs_sup_request *next;
	uint64_t id;
	int status;
	int has_cred;
	int32_t pid;
	uint32_t uid, gid;
	/* bytes arrived after the frame before it was handed over */
	int trailing;
	char detail[200];
	uint8_t *body;
	uint32_t len;
};

struct gs_sup_server;

/* Serve listen_fd (non-blocking; the caller keeps ownership and closes it
 * after gs_sup_server_stop). cgroup_rel: the operation's cgroup as /proc/PID/cgroup
 * names it ("/gensee/op"). ready(ctx) is called from the I/O thread when
 * requests are waiting for gs_sup_server_take(). */
struct gs_sup_server *gs_sup_server_start(int listen_fd, uint32_t owner_uid, const char *cgroup_rel,
					  void (*ready)(void *ctx), void *ctx, struct gs_err *err);

/* Take every waiting request (a list; free each with gs_sup_request_free). */
struct gs_sup_request *gs_sup_server_take(struct gs_sup_server *s);
void gs_sup_request_free(struct gs_sup_request *r);

/* Answer request id with one frame (length prefix included) once `ticket`
 * of `log` is durable (log NULL: now). If the log fails first, the
 * connection is closed without an answer: nothing is said that is not on
 * record. request: ask for the covering sync now (else the caller does,
 * gs_synclog_request, once a whole batch is queued). Returns 0, or -1 with
 * errno (ENOENT: no such request). */
int gs_sup_server_answer(struct gs_sup_server *s, uint64_t id, const void *frame, size_t len, struct gs_synclog *log,
			 uint64_t ticket, int request);

/* The commit path of a grant, after its decision (issue 31: no turn of the
 * event loop between a grant's durable line and its answer).
 *
 * gs_sup_server_lease_map: the lease map grants are put into (a dup of
 * leases_fd, closed with the server). 0, or -1 with errno.
 *
 * gs_sup_server_answer_grant: once `ticket` of `log` is durable (the
 * lease_intent and resolution lines that grant the lease, and every line
 * before them), on the syncer thread: put the lease (k, v) in the kernel
 * and read it back under the lease lock (dataplane.h), and only if it
 * reads back as put, send frame. If the log fails first, or the put
 * fails, or the entry reads back otherwise, nothing is put (or what the
 * kernel holds is left) and the connection is closed without an answer:
 * the client denies the call. Each grant's outcome is queued for
 * gs_sup_server_take_done (token: the caller's), not signalled (JavaScript
 * polls for outcomes while grants are in flight, off the answer's path):
 * it records the installed lease (the network record), or the failure. Returns 0, or -1 with errno (ENOENT: no such request; EBADF:
 * no lease map) with nothing queued. Plain leases only (no use limit: a
 * limited grant may add to a live entry, which JavaScript decides). */
enum gs_grant_outcome {
	GS_GRANT_INSTALLED = 0, /* put, read back as put, answer sent (or the client was gone) */
	GS_GRANT_NOT_DURABLE,   /* the log failed or closed first: nothing put, no answer */
	GS_GRANT_NOT_INSTALLED, /* the put failed or read back otherwise: no answer */
	GS_GRANT_STOPPED,       /* the server stopped first: nothing put, no answer */
};

struct gs_sup_grant_done {
	struct gs_sup_grant_done *next;
	uint64_t token;
	int outcome;
	int err; /* errno, for NOT_DURABLE and NOT_INSTALLED */
	char detail[320];
	struct gs_lease_value back; /* INSTALLED: as read back */
};

int gs_sup_server_lease_map(struct gs_sup_server *s, int leases_fd);
int gs_sup_server_answer_grant(struct gs_sup_server *s, uint64_t id, const void *frame, size_t len,
			       struct gs_synclog *log, uint64_t ticket, const struct gs_lease_key *k,
			       const struct gs_lease_value *v, uint64_t token, int request);
/* every outcome queued so far, oldest first (free each with free()) */
struct gs_sup_grant_done *gs_sup_server_take_done(struct gs_sup_server *s);

/* Close request id's connection without an answer. */
int gs_sup_server_drop(struct gs_sup_server *s, uint64_t id);

/* accept → answer sent, in 10 us buckets up to 50 ms (the last takes the rest) */
#define GS_LAT_BUCKETS 5000
#define GS_LAT_BUCKET_US 10

/* Copy the latency histogram (GS_LAT_BUCKETS counts) and, with reset, start a new one. */
void gs_sup_server_latency(struct gs_sup_server *s, uint64_t *out, int reset);

/* Connections admitted so far (past the peer checks). */
uint64_t gs_sup_server_accepted(struct gs_sup_server *s);

/* Stop the thread and close every connection. Answers already waiting on
 * the log are still sent when their ticket becomes durable; the last of
 * them frees what is left. */
void gs_sup_server_stop(struct gs_sup_server *s);

/* requests handed to JavaScript and not yet answered or dropped, over every
 * server of the process: the siblings the fault log's group commit waits
 * for (gs_synclog_siblings) */
uint64_t gs_sup_server_busy(void);

#ifdef __cplusplus
}
#endif
#endif
