// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include "peercred.h"

int gs_peercred(int fd, struct gs_peer *out, struct gs_err *err)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len)) {
		err->errnum = errno;
		snprintf(err->syscall, sizeof(err->syscall), "getsockopt");
		snprintf(err->what, sizeof(err->what), "SO_PEERCRED on fd %d", fd);
		return -1;
	}
	out->pid = uc.pid;
	out->uid = uc.uid;
	out->gid = uc.gid;
	return 0;
}
