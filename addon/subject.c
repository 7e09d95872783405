// SPDX-License-Identifier: Apache-2.0
// Who a pid is: (start time, cgroup path), cached behind a pidfd (see subject.h).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "proc.h"
#include "subject.h"

#define SLOTS 256

struct slot {
	uint32_t pid;
	int pidfd;
	uint64_t start;
	uint64_t cgroupid;
	char cgroup[512];
};

struct gs_subject_cache {
	int no_info; /* PIDFD_GET_INFO unsupported: no caching */
	struct slot s[SLOTS];
};

struct gs_subject_cache *gs_subject_cache_new(void)
{
	struct gs_subject_cache *c = calloc(1, sizeof(*c));

	if (c)
		for (int i = 0; i < SLOTS; i++)
			c->s[i].pidfd = -1;
	return c;
}

void gs_subject_cache_free(struct gs_subject_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < SLOTS; i++)
		if (c->s[i].pidfd >= 0)
			close(c->s[i].pidfd);
	free(c);
}

int gs_cgroup_within(const char *have, const char *want)
{
	size_t wl = strlen(want);

	if (!strcmp(want, "/"))
		return 1;
	return !strcmp(have, want) || (!strncmp(have, want, wl) && have[wl] == '/');
}

/* cgroup id of the pidfd's process; -1 if it is gone (or no PIDFD_GET_INFO: *unsupported) */
static int cgroupid_of(int pidfd, uint64_t *id, int *unsupported)
{
	int r = gs_pidfd_info(pidfd, NULL, id);

	if (r == -2)
		*unsupported = 1;
	return r ? -1 : 0;
}

/* without PIDFD_GET_INFO: the start time read before and after the cgroup */
static int read_twice(uint32_t pid, uint64_t *start, char *cgroup, size_t cap)
{
	uint64_t again;

	if (gs_proc_start_time(pid, start) || gs_proc_cgroup(pid, cgroup, cap))
		return -1;
	if (gs_proc_start_time(pid, &again) || again != *start)
		return -1;
	return 0;
}

static void drop(struct slot *sl)
{
	if (sl->pidfd >= 0)
		close(sl->pidfd);
	sl->pidfd = -1;
	sl->pid = 0;
}

static int lookup_once(struct gs_subject_cache *c, uint32_t pid, uint64_t *start, char *cgroup, size_t cap, int *moved);

int gs_subject_lookup(struct gs_subject_cache *c, uint32_t pid, uint64_t *start, char *cgroup, size_t cap)
{
	int moved = 0;
	int r = lookup_once(c, pid, start, cgroup, cap, &moved);

	if (r && moved) /* it moved between two reads: once more */
		r = lookup_once(c, pid, start, cgroup, cap, &moved);
	return r;
}

static int lookup_once(struct gs_subject_cache *c, uint32_t pid, uint64_t *start, char *cgroup, size_t cap, int *moved)
{
	struct slot *sl = &c->s[pid % SLOTS];
	uint64_t id, id2;
	int unsupported = 0;

	if (pid == 0)
		return -1;
	if (c->no_info)
		return read_twice(pid, start, cgroup, cap);
	if (sl->pid == pid && sl->pidfd >= 0) {
		if (cgroupid_of(sl->pidfd, &id, &unsupported) == 0 && id == sl->cgroupid && strlen(sl->cgroup) < cap) {
			*start = sl->start;
			strcpy(cgroup, sl->cgroup);
			return 0;
		}
		drop(sl); /* gone, or moved: look again */
	}
	int fd = gs_pidfd_open(pid);
	if (fd < 0)
		return errno == ESRCH ? -1 : read_twice(pid, start, cgroup, cap);
	if (cgroupid_of(fd, &id, &unsupported)) {
		close(fd);
		if (unsupported) {
			c->no_info = 1;
			return read_twice(pid, start, cgroup, cap);
		}
		return -1;
	}
	if (gs_proc_start_time(pid, start) || gs_proc_cgroup(pid, cgroup, cap) || cgroupid_of(fd, &id2, &unsupported) ||
	    id2 != id) {
		/* died, or moved while we read: no answer we could stand by */
		*moved = gs_proc_start_time(pid, &id2) == 0;
		close(fd);
		return -1;
	}
	drop(sl);
	sl->pid = pid;
	sl->pidfd = fd;
	sl->start = *start;
	sl->cgroupid = id;
	if (strlen(cgroup) < sizeof(sl->cgroup)) {
		strcpy(sl->cgroup, cgroup);
	} else {
		drop(sl); /* too long to keep: answer, but do not cache */
	}
	return 0;
}
