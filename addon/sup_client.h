/* SPDX-License-Identifier: Apache-2.0 */
/* Client side of the supervisor socket, on its own thread: the one client
 * every submitter uses (the pause adapter in C, `gensee run fault` and the
 * library through src/resolver/client.ts).
 *
 * It authenticates the resolver before acting on anything it says: the
 * socket's SO_PEERCRED pid and that pid's start time must equal the
 * resolver identity of operation.json, and the Resolution's HMAC-SHA256
 * must verify under the operation key over the canonical input of
 * src/protocol/mac.ts. A Resolution that fails any of that is reported as
 * GS_SUB_UNAUTH, never as what it says.
 *
 * A submission with `keep` set (the pause adapter's) goes on a connection
 * the engine keeps open: a connection carries a sequence of request/answer
 * pairs (DESIGN.md "Wire formats"), so after an authenticated answer to its
 * own fault the connection waits, idle, for the next such submission to the
 * same resolver. A new connection is made when none is idle (concurrent
 * faults each take one), and its peer is verified as above; a connection
 * that fails during a request fails that request (never a silent allow).
 * Idle connections are closed after GS_SUP_CLIENT_IDLE_MS, before the resolver's
 * own 30 s idle limit would close them under a request.
 */
#ifndef GS_SUP_CLIENT_H
#define GS_SUP_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include "common.h" /* struct gs_err, clocks */

#ifdef __cplusplus
extern "C" {
#endif

#define GS_KEY_BYTES 32
#define GS_MAC_BYTES 32
#define GS_SUP_CLIENT_IDLE_MS 20000
#define GS_SUP_CLIENT_KEEP_MAX 16 /* idle connections kept */

enum gs_submit_status {
	GS_SUB_OK = 0,  /* an authenticated Resolution for this fault */
	GS_SUB_UNAUTH,  /* the resolver or its answer failed authentication */
	GS_SUB_TIMEOUT, /* no answer within timeout_ms */
	GS_SUB_ERROR,   /* could not connect, or the connection failed (errnum) */
};

struct gs_submit {
	/* in */
	char path[108];
	uint8_t *body; /* encoded CapabilityFault, malloc'd; the engine frees it */
	size_t body_len;
	char fault_id[128];
	uint8_t key[GS_KEY_BYTES];
	int32_t expect_pid; /* 0: skip the identity check (tests only) */
	uint64_t expect_start;
	uint32_t timeout_ms;
	int keep; /* use and return a kept connection */
	/* called once, on the engine's thread (or the stopping one); owns req after */
	void (*done)(struct gs_submit *req, void *arg);
	void *arg;

	/* out */
	int status; /* enum gs_submit_status */
	int errnum;
	int action; /* proto Action number when status is OK */
	char reason[96];
	char detail[256];
	char res_fault_id[128]; /* the Resolution as decoded, when OK */
	int has_lease;
	uint64_t l_generation, l_expires;
	int l_family, l_protocol;
	char l_address[64];
	uint32_t l_port, l_max_uses;
	int has_delegate;
	char delegate_to[128];
	uint8_t *reply; /* the Resolution body as received (malloc'd) */
	uint32_t reply_len;
	uint64_t elapsed_ns;

	/* engine-private */
	struct gs_submit *next, *prev;
	int fd, state, in_epoll;
	uint64_t t0, deadline, retry_at;
	size_t sent;
	uint8_t hdr[4];
	uint32_t hdr_n, rlen, rgot;
	int reused; /* the connection was a kept one */
};

struct gs_sup_client;

struct gs_sup_client *gs_sup_client_start(struct gs_err *err);
/* Hand req over; done() will be called exactly once. */
void gs_sup_client_submit(struct gs_sup_client *c, struct gs_submit *req);
/* Connections opened so far (kept or not). */
uint64_t gs_sup_client_connections(struct gs_sup_client *c);
/* Fail everything in flight (GS_SUB_ERROR, ECANCELED), stop, free. */
void gs_sup_client_stop(struct gs_sup_client *c);
void gs_submit_free(struct gs_submit *req);

/* The canonical MAC input of src/protocol/mac.ts, and the check. Exposed
 * for the cross-check test. Returns bytes written, or 0 if cap is short. */
size_t gs_mac_input(const void *resolution /* Gensee__V2__Resolution */, uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
