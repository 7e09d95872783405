// SPDX-License-Identifier: Apache-2.0
/* fd passing over AF_UNIX (SCM_RIGHTS); see fdpass.h. Shape from the
 * kernel's samples/seccomp/user-trap.c recv_fd: check the control length,
 * never keep an fd we did not ask for. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "fdpass.h"
#include "notify.h"

/* room for a few fds, so extra ones arrive (and get closed) rather than
 * being dropped by the kernel as MSG_CTRUNC */
#define GS_CMSG_FDS 8

int gs_socketpair(int out[2], struct gs_err *err)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, out))
		return gs_errf(err, errno, "socketpair", "AF_UNIX SOCK_SEQPACKET");
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Take the SCM_RIGHTS fds out of a received message: the first one into
 * *fd_out if it is still empty, every other one closed. -1 if truncated. */
static int take_fds(struct msghdr *mh, int *fd_out)
{
	struct cmsghdr *cm;
	int bad = (mh->msg_flags & MSG_CTRUNC) != 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t i, nfds;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		if (cm->cmsg_len < CMSG_LEN(0)) {
			bad = 1;
			continue;
		}
		nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfds; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*fd_out < 0 && !bad)
				*fd_out = fd;
			else
				close(fd);
		}
	}
	return bad ? -1 : 0;
}

int gs_recv_fd(int sock, int timeout_ms, int until_eof, size_t max_bytes, int *fd_out, uint8_t **data, size_t *len,
	       struct gs_err *err)
{
	int64_t deadline = timeout_ms > 0 ? mono_ms() + timeout_ms : 0;
	size_t cap = 4096, used = 0;
	uint8_t *buf;
	int got = 0, e;

	*fd_out = -1;
	*data = NULL;
	*len = 0;
	if (max_bytes == 0)
		max_bytes = 65536;
	buf = malloc(cap);
	if (!buf)
		return gs_errf(err, ENOMEM, "malloc", "recv buffer");
	for (;;) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int) * GS_CMSG_FDS)];
		} c;
		struct pollfd p = { .fd = sock, .events = POLLIN };
		struct iovec iov;
		struct msghdr mh;
		ssize_t r;
		int wait = timeout_ms < 0 ? -1 : 0;

		if (timeout_ms > 0) {
			int64_t left = deadline - mono_ms();
			wait = left > 0 ? (int)left : 0;
		}
		r = poll(&p, 1, wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			gs_errf(err, errno, "poll", "fd %d", sock);
			goto fail;
		}
		if (r == 0) {
			gs_errf(err, timeout_ms == 0 ? EAGAIN : ETIMEDOUT, "recvmsg", "fd %d: nothing within %d ms",
				sock, timeout_ms);
			goto fail;
		}
		if (used == cap) {
			uint8_t *nb;

			if (cap >= max_bytes + 1) {
				gs_errf(err, EMSGSIZE, "recvmsg", "fd %d: more than %zu bytes", sock, max_bytes);
				goto fail;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				gs_errf(err, ENOMEM, "realloc", "recv buffer");
				goto fail;
			}
			buf = nb;
		}
		memset(&mh, 0, sizeof(mh));
		memset(&c, 0, sizeof(c));
		iov.iov_base = buf + used;
		iov.iov_len = cap - used;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = c.b;
		mh.msg_controllen = sizeof(c.b);
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			gs_errf(err, errno, "recvmsg", "fd %d", sock);
			goto fail;
		}
		if (take_fds(&mh, fd_out)) {
			gs_errf(err, EPROTO, "recvmsg", "fd %d: truncated SCM_RIGHTS control message", sock);
			goto fail;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			gs_errf(err, EMSGSIZE, "recvmsg", "fd %d: message larger than %zu bytes", sock, cap - used);
			goto fail;
		}
		used += (size_t)r;
		if (used > max_bytes) {
			gs_errf(err, EMSGSIZE, "recvmsg", "fd %d: more than %zu bytes", sock, max_bytes);
			goto fail;
		}
		if (r > 0 || *fd_out >= 0)
			got = 1;
		if (r == 0 && *fd_out < 0 && !got) { /* closed before sending anything */
			free(buf);
			return 0;
		}
		if (!until_eof || r == 0)
			break;
	}
	*data = buf;
	*len = used;
	return 1;
fail:
	e = errno;
	if (*fd_out >= 0)
		close(*fd_out);
	*fd_out = -1;
	free(buf);
	errno = e;
	return -1;
}

long gs_send_fds(int sock, const int *fds, size_t nfds, const void *data, size_t len, struct gs_err *err)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * GS_CMSG_FDS)];
	} c;
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr mh;
	ssize_t r;

	if (nfds > GS_CMSG_FDS)
		return gs_errf(err, E2BIG, "sendmsg", "fd %d: more than %d fds", sock, GS_CMSG_FDS);
	memset(&mh, 0, sizeof(mh));
	memset(&c, 0, sizeof(c));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds) {
		struct cmsghdr *cm;

		mh.msg_control = c.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return gs_errf(err, errno, "sendmsg", "fd %d", sock);
	return (long)r;
}

int gs_unix_listen(const char *path, int backlog, struct gs_err *err)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return gs_errf(err, ENAMETOOLONG, "bind", "%s", path);
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gs_errf(err, errno, "socket", "AF_UNIX SOCK_STREAM");
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int e = errno;
		close(fd);
		return gs_errf(err, e, "bind", "%s", path);
	}
	if (listen(fd, backlog > 0 ? backlog : 64)) {
		int e = errno;
		close(fd);
		return gs_errf(err, e, "listen", "%s", path);
	}
	return fd;
}

int gs_accept(int fd, struct gs_err *err)
{
	int c;

	do
		c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	while (c < 0 && errno == EINTR);
	if (c < 0)
		return gs_errf(err, errno, "accept4", "fd %d", fd);
	return c;
}

int gs_unix_connect(const char *path, int type, struct gs_err *err)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	int fd, r;

	if (n >= sizeof(sun.sun_path) || n == 0)
		return gs_errf(err, ENAMETOOLONG, "connect", "%s", path);
	memcpy(sun.sun_path, path, n);
	if (path[0] == '@') /* the abstract namespace, as systemd writes it */
		sun.sun_path[0] = 0;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gs_errf(err, errno, "socket", "AF_UNIX");
	do
		r = connect(fd, (struct sockaddr *)&sun,
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] != '@')));
	while (r < 0 && errno == EINTR);
	if (r) {
		int e = errno;
		close(fd);
		return gs_errf(err, e, "connect", "%s", path);
	}
	return fd;
}
