/* SPDX-License-Identifier: Apache-2.0 */
/* Who a pid is, cheaply and without races: (start time, cgroup v2 path).
 *
 * The first look at a pid opens a pidfd, then reads /proc/PID/stat (start
 * time) and /proc/PID/cgroup, and asks the pidfd (PIDFD_GET_INFO, Linux
 * 6.13+) whether the process is still alive and in the same cgroup: if it
 * is, both reads were of that process (a live process's pid cannot be
 * reused). Later looks at the same pid cost one PIDFD_GET_INFO ioctl: alive
 * and the same cgroup id means the same answer. A pid that died, or moved,
 * is read again. Without PIDFD_GET_INFO every look reads /proc, with the
 * start time read before and after: the same start time both times means
 * the cgroup read between them was of the same process.
 *
 * Not thread-safe: one cache per thread that uses it. */
#ifndef GS_SUBJECT_H
#define GS_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gs_subject_cache;

struct gs_subject_cache *gs_subject_cache_new(void);
void gs_subject_cache_free(struct gs_subject_cache *c);

/* 0 with *start and cgroup (the "0::" path) filled; -1 if the process is
 * gone (or has no cgroup v2 path). */
int gs_subject_lookup(struct gs_subject_cache *c, uint32_t pid, uint64_t *start, char *cgroup, size_t cap);

/* Is `have` (a /proc/PID/cgroup path) `want` or below it? */
int gs_cgroup_within(const char *have, const char *want);

#ifdef __cplusplus
}
#endif
#endif
