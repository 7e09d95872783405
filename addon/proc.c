// SPDX-License-Identifier: Apache-2.0
// /proc readers and pidfds for every addon thread (see proc.h).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/types.h>
#include "proc.h"

#ifndef PIDFD_GET_INFO
/* Linux 6.13 uapi (include/uapi/linux/pidfd.h); older headers lack it */
struct pidfd_info {
	__u64 mask;
	__u64 cgroupid;
	__u32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	__u32 spare0[1];
};
#define PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info)
#define PIDFD_INFO_PID (1UL << 0)
#define PIDFD_INFO_CGROUPID (1UL << 2)
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* 6.9+: a pidfd for a thread, not only a leader */
#endif

int gs_pidfd_open(uint32_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, PIDFD_THREAD);

	if (fd < 0 && errno == EINVAL) /* before 6.9: leaders only */
		fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	return fd;
}

int gs_pidfd_info(int pidfd, uint32_t *tgid, uint64_t *cgroupid)
{
	struct pidfd_info info;

	memset(&info, 0, sizeof(info));
	info.mask = PIDFD_INFO_PID | PIDFD_INFO_CGROUPID;
	if (ioctl(pidfd, PIDFD_GET_INFO, &info)) {
		if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP)
			return -2;
		return -1;
	}
	if (!(info.mask & PIDFD_INFO_CGROUPID))
		return -2;
	if (tgid)
		*tgid = (info.mask & PIDFD_INFO_PID) ? info.tgid : 0;
	if (cgroupid)
		*cgroupid = info.cgroupid;
	return 0;
}

ssize_t gs_proc_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, cap - 1);
	close(fd);
	if (r >= 0)
		buf[r] = 0;
	return r;
}

/* field 22 of /proc/PID/stat; the comm (field 2) may hold spaces and ')' */
int gs_proc_start_time(uint32_t pid, uint64_t *out)
{
	char path[64], buf[1024], *p, *save = NULL, *tok;
	int field = 3;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (gs_proc_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 22) {
			*out = strtoull(tok, NULL, 10);
			return 0;
		}
	}
	return -1;
}

int gs_proc_cgroup(uint32_t pid, char *out, size_t cap)
{
	char path[64], buf[4096], *line, *save = NULL;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (gs_proc_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3))
			continue;
		if (strlen(line + 3) >= cap)
			return -1;
		strcpy(out, line + 3);
		return 0;
	}
	return -1;
}

/* undo mountinfo's octal escapes (\ooo) in place */
static void unescape_mount(char *s)
{
	char *w = s;
	const char *r = s;

	while (*r) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
}

int gs_find_cgroup2(const char *mountinfo, char *out, size_t cap)
{
	FILE *f = fopen(mountinfo, "re");
	char *line = NULL;
	size_t lcap = 0;
	int found = -1;

	if (cap)
		out[0] = 0;
	if (!f)
		return -1;
	while (found < 0 && getline(&line, &lcap, f) > 0) {
		char root[4096], mnt[4096], fstype[64];
		/* the optional fields end at " - "; escapes keep it out of paths */
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		unescape_mount(root);
		if (strcmp(root, "/"))
			continue;
		unescape_mount(mnt);
		if (strlen(mnt) < cap) {
			memcpy(out, mnt, strlen(mnt) + 1);
			found = 0;
		}
	}
	free(line);
	fclose(f);
	return found;
}
