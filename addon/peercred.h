/* SPDX-License-Identifier: Apache-2.0 */
#ifndef GS_PEERCRED_H
#define GS_PEERCRED_H
#include "dataplane.h"
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
#ifdef __cplusplus
}
#endif
#endif
