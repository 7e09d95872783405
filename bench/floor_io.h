/* SPDX-License-Identifier: Apache-2.0 */
/* Whole reads and writes on a socket or pipe, for the C floors
 * (bench/floor.c, bench/notify-floor.c): -1 on EOF or error. */
#ifndef GS_FLOOR_IO_H
#define GS_FLOOR_IO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

static inline int read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = read(fd, (char *)buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static inline int write_full(int fd, const void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

#endif
