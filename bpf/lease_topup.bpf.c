// SPDX-License-Identifier: GPL-2.0
/*
 * Add uses to a limited lease in place, for a grant on a destination whose
 * lease is still there (racing first connects, each answered with a lease
 * of its own). Run by the resolver with BPF_PROG_RUN (addon/lease_topup.c),
 * never attached.
 *
 * Why a program and not a map update from user space: the hooks spend a use
 * with a fetch-and-sub on the value in the map (gs_decide). A user-space
 * read-modify-write (lookup, add, update) replaces the element: a use spent
 * between the lookup and the update is given back, and a hook still holding
 * the old element spends from a copy that no longer counts. Here the add is
 * one atomic instruction on the same value the hooks decrement, so it
 * composes with every concurrent fetch-and-sub (and with the hook's give-back
 * of a use it could not take): none is lost, none is given back.
 *
 * The expiry is only ever moved later (0, never, stays never), and the
 * generation tag becomes the grant's. The kernel never writes either; their
 * user-space writers are the resolver process's one thread, which also runs
 * this program, so plain stores suffice (an aligned 64-bit store is never
 * seen torn by a hook reading it).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "lease_topup.h"

char LICENSE[] SEC("license") = "GPL";

/* the operation's pinned lease map: the loader reuses its fd for this one */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* as gensee.bpf.c's; reuse_fd takes the pinned map's own */
	__uint(max_entries, GS_LEASES_MAX);
	__type(key, struct gs_lease_key);
	__type(value, struct gs_lease_value);
} gs_leases_v1 SEC(".maps");

SEC("syscall")
int gs_lease_topup(struct gs_topup_args *a)
{
	struct gs_lease_key k;
	struct gs_lease_value *v;
	__u64 exp;

	__builtin_memcpy(&k, &a->key, sizeof(k));
	v = bpf_map_lookup_elem(&gs_leases_v1, &k);
	if (!v)
		return GS_TOPUP_ABSENT;
	if (!(v->flags & GS_LEASE_LIMITED))
		return GS_TOPUP_UNLIMITED;
	if (gs_lease_expired(v, a->now_boot_ns))
		return GS_TOPUP_EXPIRED;
	a->uses_left = __sync_fetch_and_add(&v->uses_left, a->uses) + a->uses;
	exp = v->expires_boot_ns;
	if (exp && (!a->expires_boot_ns || a->expires_boot_ns > exp)) {
		v->expires_boot_ns = a->expires_boot_ns;
		exp = a->expires_boot_ns;
	}
	a->expires_boot_ns = exp;
	/* counted under the new grant from now on, as a replaced lease would be */
	if (a->generation)
		v->generation = a->generation;
	a->generation = v->generation;
	return GS_TOPUP_ADDED;
}
