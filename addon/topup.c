// SPDX-License-Identifier: Apache-2.0
/*
 * The lease top-up program's loader and runner. Loaded the first time a
 * grant finds a limited lease already there (a process that never tops up
 * never loads it), with its map pointed at the operation's pinned lease map.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "topup.h"
#include "dataplane.h" /* gs_lease_lock */
#include "lease_topup.skel.h"

int gs_topup_load(struct gs_topup *t, int leases_fd, struct gs_err *err)
{
	struct lease_topup_bpf *skel;
	int r;

	if (t->skel)
		return 0;
	skel = lease_topup_bpf__open();
	if (!skel)
		return gs_errf(err, errno, "bpf_object__open", "lease_topup");
	r = bpf_map__reuse_fd(skel->maps.gs_leases_v1, leases_fd);
	if (r) {
		lease_topup_bpf__destroy(skel);
		return gs_errf(err, r, "bpf_map__reuse_fd", "lease_topup: map %s", GS_MAP_LEASES);
	}
	r = lease_topup_bpf__load(skel);
	if (r) {
		lease_topup_bpf__destroy(skel);
		return gs_errf(err, r, "bpf_object__load", "lease_topup: program gs_lease_topup");
	}
	t->skel = skel;
	return 0;
}

int gs_topup_run(struct gs_topup *t, struct gs_topup_args *a, struct gs_err *err)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = a, .ctx_size_in = sizeof(*a));
	int r;

	if (!t->skel)
		return gs_errf(err, EBADF, "bpf_prog_test_run_opts", "lease_topup: not loaded");
	/* a syscall program's context is copied back to ctx_in */
	gs_lease_lock(); /* dataplane.h: every user-space writer of the lease map */
	r = bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.gs_lease_topup), &opts);
	gs_lease_unlock();
	if (r)
		return gs_errf(err, errno, "bpf_prog_test_run_opts", "lease_topup: program gs_lease_topup");
	return (int)opts.retval;
}

void gs_topup_close(struct gs_topup *t)
{
	if (t->skel)
		lease_topup_bpf__destroy(t->skel);
	t->skel = NULL;
}
