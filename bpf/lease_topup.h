/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lease top-up program's argument (bpf/lease_topup.bpf.c): its context
 * under BPF_PROG_RUN, filled by addon/lease_topup.c and copied back out.
 */
#ifndef GS_LEASE_TOPUP_H
#define GS_LEASE_TOPUP_H

#include "gensee_abi.h"

/* the program's return value */
enum gs_topup_status {
	GS_TOPUP_ADDED = 0,     /* uses added (and the expiry moved later, if asked) */
	GS_TOPUP_ABSENT = 1,    /* no lease for the key */
	GS_TOPUP_UNLIMITED = 2, /* the lease has no max uses: nothing to add to */
	GS_TOPUP_EXPIRED = 3,   /* expired at now_boot_ns: a new lease, not a top-up */
};

struct gs_topup_args {
	struct gs_lease_key key;
	__s64 uses;            /* in: uses to add (> 0) */
	__u64 now_boot_ns;     /* in: the caller's now, for the expiry test */
	__u64 expires_boot_ns; /* in: the grant's expiry (0: never); out: the lease's */
	__s64 uses_left;       /* out: right after the add */
	__u64 generation;      /* in: the grant's generation, the lease's from now (0: keep); out: the lease's */
};

_Static_assert(sizeof(struct gs_topup_args) == 64, "gs_topup_args layout");

#endif
