/* SPDX-License-Identifier: Apache-2.0 */
#ifndef GS_PEERCRED_H
#define GS_PEERCRED_H
#include "common.h" /* struct gs_err, clocks */
#ifdef __cplusplus
extern "C" {
#endif
struct gs_peer {
	int pid;
	unsigned uid;
	unsigned gid;
};
/* SO_PEERCRED of a connected AF_UNIX socket */
int gs_peercred(int fd, struct gs_peer *out, struct gs_err *err);
/*
 * The admission rule every gensee socket shares with SO_PEERCRED's uid: the
 * peer (pid from SO_PEERCRED on fd) is in gensee's own user AND mount
 * namespaces. A workload never is: gensee-exec gives it a mount namespace of
 * its own whatever uid it runs as, so neither it nor anything it leaves
 * behind is admitted. 1: admitted; 0: refused, why says why.
 */
int gs_peer_in_our_namespaces(int fd, int pid, char *why, size_t n);
#ifdef __cplusplus
}
#endif
#endif
