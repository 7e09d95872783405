// SPDX-License-Identifier: Apache-2.0
/*
 * fsshutdown: make a mounted filesystem fail every later write, as a disk
 * that went away does, for test/resolver/diskerror.test.ts. The generic
 * FS_IOC_SHUTDOWN ioctl (ext4, xfs, f2fs): after it, writes and fsyncs on
 * the filesystem fail (EIO) until it is unmounted.
 *
 *   fsshutdown PATH     (any file or directory on the filesystem; root)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#ifndef FS_IOC_SHUTDOWN
#define FS_IOC_SHUTDOWN _IOR('X', 125, uint32_t)
#endif
/* no flush of the journal or the data: the disk is simply gone */
#define GOING_FLAGS_NOLOGFLUSH 0x2

int main(int argc, char **argv)
{
	uint32_t flags = GOING_FLAGS_NOLOGFLUSH;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: fsshutdown PATH\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FS_IOC_SHUTDOWN, &flags)) {
		fprintf(stderr, "fsshutdown %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}
