// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
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

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* /proc/PID/ns/KIND and /proc/self/ns/KIND name the same namespace? */
static int same_ns(int pid, const char *kind, char *why, size_t n)
{
	char path[64];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	if (stat(path, &mine)) {
		snprintf(why, n, "cannot read %s: %s", path, strerror(errno));
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, kind);
	if (stat(path, &theirs)) {
		snprintf(why, n, "cannot read %s: %s", path, strerror(errno));
		return 0;
	}
	if (mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino) {
		snprintf(why, n, "pid %d is not in gensee's own %s namespace", pid, kind);
		return 0;
	}
	return 1;
}

int gs_peer_in_our_namespaces(int fd, int pid, char *why, size_t n)
{
	int pidfd = -1, ok;
	socklen_t len = sizeof(pidfd);

	if (pid <= 0) {
		snprintf(why, n, "peer pid %d is not visible from gensee's pid namespace", pid);
		return 0;
	}
	/* the peer's pidfd, taken at connect(): before Linux 6.5 the pid alone */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len))
		pidfd = -1;
	ok = same_ns(pid, "user", why, n) && same_ns(pid, "mnt", why, n);
	/* had the peer exited and its pid been reused by a process of ours
	 * while we looked, its pidfd would say so */
	if (ok && pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) && errno == ESRCH) {
		snprintf(why, n, "pid %d exited while its namespaces were checked", pid);
		ok = 0;
	}
	if (pidfd >= 0)
		close(pidfd);
	return ok;
}
