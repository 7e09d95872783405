/* SPDX-License-Identifier: Apache-2.0 */
/* /proc readers and pidfds shared by every addon thread: the seccomp loop
 * (notify.c), the subject cache (subject.c), the supervisor client (sup_client.c). */
#ifndef GS_PROC_H
#define GS_PROC_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#ifdef __cplusplus
extern "C" {
#endif
/* read a small /proc file whole, NUL-terminated: bytes read, or -1 */
ssize_t gs_proc_read(const char *path, char *buf, size_t cap);
/* Field 22 (starttime, clock ticks since boot) of /proc/PID/stat: 0, or -1 if
 * the process is gone. */
int gs_proc_start_time(uint32_t pid, uint64_t *out);
/* The cgroup v2 path of PID as /proc/PID/cgroup names it ("0::" line): 0,
 * or -1 if the process is gone or has none. The one parser of that file. */
int gs_proc_cgroup(uint32_t pid, char *out, size_t cap);
/* The cgroup2 mount point named in a mountinfo file (/proc/self/mountinfo):
 * the first cgroup2 mount of the hierarchy's root ("/", not a subtree
 * mounted on its own, which /proc/PID/cgroup paths cannot be joined to),
 * with the octal escapes mountinfo writes (\040 for a space) undone. 0; -1
 * if there is none or it does not fit in cap. The one parser of that file:
 * src/cgroup.ts asks it through the addon. */
int gs_find_cgroup2(const char *mountinfo, char *out, size_t cap);
/* A pidfd for PID, a thread too where the kernel allows (6.9+), else for a
 * thread-group leader; -1 with errno. */
int gs_pidfd_open(uint32_t pid);
/* What the kernel says of a pidfd's task (PIDFD_GET_INFO, 6.13+): its thread
 * group id (0 if not told) and its cgroup v2 id, both as of now. 0; -1 with
 * errno if the task is gone (ESRCH); -2 if the kernel cannot tell. */
int gs_pidfd_info(int pidfd, uint32_t *tgid, uint64_t *cgroupid);
#ifdef __cplusplus
}
#endif
#endif
