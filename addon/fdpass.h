/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fd passing over AF_UNIX sockets (SCM_RIGHTS), plain C; glue in
 * notify_glue.cc. Used for the seccomp listener handed over by gensee-exec
 * (SOCK_SEQPACKET socketpair) and by OCI runtimes: runc's
 * linux.seccomp.listenerPath connects to a SOCK_STREAM unix socket, sends the
 * container state JSON with the notify fd attached, and closes. The listener
 * side is gs_unix_listen → (poll) gs_accept → (poll) gs_recv_fd(until_eof).
 */
#ifndef GS_FDPASS_H
#define GS_FDPASS_H
#include <stddef.h>
#include <stdint.h>
#include "common.h" /* struct gs_err, clocks */

#ifdef __cplusplus
extern "C" {
#endif

/* AF_UNIX SOCK_SEQPACKET pair, both ends close-on-exec. */
int gs_socketpair(int out[2], struct gs_err *err);

/* Receive data with at most one SCM_RIGHTS fd (received close-on-exec; any
 * other fd that arrives is closed, a truncated control message is an
 * error). timeout_ms < 0 waits forever, 0 only takes what is there (EAGAIN
 * otherwise). until_eof: keep reading until the peer closes (stream
 * sockets, the OCI case), else return after the first message.
 * Returns 1 with *fd_out (-1 if no fd came) and a malloc'd *data (free it),
 * 0 when the peer closed having sent nothing, -1 on error (ETIMEDOUT,
 * EMSGSIZE past max_bytes, EPROTO for a truncated control message). */
int gs_recv_fd(int sock, int timeout_ms, int until_eof, size_t max_bytes, int *fd_out, uint8_t **data, size_t *len,
	       struct gs_err *err);

/* Send data with nfds fds attached (SCM_RIGHTS), one sendmsg, MSG_NOSIGNAL.
 * Returns bytes sent or -1. */
long gs_send_fds(int sock, const int *fds, size_t nfds, const void *data, size_t len, struct gs_err *err);

/* Non-blocking, close-on-exec SOCK_STREAM listener bound at path (which
 * must not exist). The caller sets the path's mode/owner. */
int gs_unix_listen(const char *path, int backlog, struct gs_err *err);
/* Accept one connection (non-blocking, close-on-exec). -1 with errnum
 * EAGAIN when none is waiting. */
int gs_accept(int fd, struct gs_err *err);
/* Connect a socket of type (SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM) to the
 * unix socket at path, '@' first for the abstract namespace (blocking,
 * close-on-exec). The fd, or -1. */
int gs_unix_connect(const char *path, int type, struct gs_err *err);

#ifdef __cplusplus
}
#endif
#endif
