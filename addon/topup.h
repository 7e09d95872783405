/* SPDX-License-Identifier: Apache-2.0 */
/* Add uses to a limited lease in place (bpf/lease_topup.bpf.c, run with
 * BPF_PROG_RUN): the kernel's own atomic add on the value its hooks spend
 * from, never a user-space read-modify-write of it. */
#ifndef GS_TOPUP_H
#define GS_TOPUP_H

#include "common.h"
#include "lease_topup.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lease_topup_bpf;

/* The loaded program, bound to one lease map; zeroed = not loaded. */
struct gs_topup {
	struct lease_topup_bpf *skel;
};

/* Load the program against the lease map leases_fd (once; a loaded one is kept). */
int gs_topup_load(struct gs_topup *t, int leases_fd, struct gs_err *err);
/* Run it on a: the enum gs_topup_status it returned, or -1 (err filled). */
int gs_topup_run(struct gs_topup *t, struct gs_topup_args *a, struct gs_err *err);
void gs_topup_close(struct gs_topup *t);

#ifdef __cplusplus
}
#endif
#endif
