/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel features gensee uses, each probed by trying it (a small real
 * syscall, a two-instruction BPF program of each type it loads), never by
 * the kernel's version number. Each field is 0 when present, else the errno
 * the kernel answered. For `gensee doctor` (src/doctor.ts).
 */
#ifndef GS_FEATURES_H
#define GS_FEATURES_H

#ifdef __cplusplus
extern "C" {
#endif

enum gs_feature_prog {
	GS_PROG_CONNECT4,
	GS_PROG_CONNECT6,
	GS_PROG_SENDMSG4,
	GS_PROG_SENDMSG6,
	GS_PROG_BIND4,
	GS_PROG_BIND6,
	GS_PROG_CONNECT_UNIX,
	GS_PROG_SENDMSG_UNIX,
	GS_PROG_SKB_EGRESS,
	GS_PROG_SOCK_CREATE,
	GS_PROG_SETSOCKOPT,
	GS_PROG_SYSCALL,
	GS_FEATURE_PROGS,
};

struct gs_features {
	int pidfd_open, pidfd_getfd, pidfd_get_info, pidfd_thread, so_peerpidfd;
	int pidfd_nonleader_errno; /* pidfd_open(tid, 0) of a non-leader: EINVAL before 6.9, ENOENT after */
	int seccomp_listener, wait_killable_recv, sync_wake_up, addfd;
	int user_namespaces;
	int progs[GS_FEATURE_PROGS];
};

void gs_features_probe(struct gs_features *f);

#ifdef __cplusplus
}
#endif
#endif
