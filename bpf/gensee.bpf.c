// SPDX-License-Identifier: GPL-2.0
/*
 * gensee enforcement point: cgroup sock_addr hooks for connect4/6 and
 * sendmsg4/6. Each hook is a thin wrapper around gs_decide().
 *
 * The hooks run on the kernel's own copy of the destination (after the
 * sockaddr was copied in), so a thread that rewrites the user buffer after a
 * seccomp pause gains nothing: this is the check that counts.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "gensee_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* configuration, set by the loader before load */
const volatile __u8 gs_emit_events = 1;    /* ring-buffer fault events on deny */
const volatile __u8 gs_count_allows = 1;   /* per-destination allow counters */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_LEASES_MAX);
	__type(key, struct gs_lease_key);
	__type(value, struct gs_lease_value);
} gs_leases_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, GS_COUNTERS_MAX);
	__type(key, struct gs_counter_key);
	__type(value, __u64);
} gs_counters_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, GS_EVENTS_BYTES);
} gs_events_v1 SEC(".maps");

/* rate limit of gs_events_v1, see GS_FAULT_RL_WINDOW_NS */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, GS_FAULT_RL_MAX);
	__type(key, struct gs_fault_rl_key);
	__type(value, __u64);
} gs_fault_rl_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GS_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} gs_stats_v1 SEC(".maps");

static __always_inline void gs_stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&gs_stats_v1, &idx);

	if (v)
		*v += 1; /* per-CPU slot: no atomics needed */
}

static __always_inline void gs_count(const struct gs_lease_key *lk, __u8 verdict, __u64 generation)
{
	struct gs_counter_key ck = {};
	__u64 one = 1, *v;

	ck.family = lk->family;
	ck.protocol = lk->protocol;
	ck.port = lk->port;
	ck.verdict = verdict;
	ck.generation = generation;
	__builtin_memcpy(ck.addr, lk->addr, sizeof(ck.addr));

	v = bpf_map_lookup_elem(&gs_counters_v1, &ck);
	if (v) {
		*v += 1;
		return;
	}
	/* BPF_NOEXIST: another CPU may have created it, but this is a per-CPU
	 * map so our own slot is still zero there; fall back to lookup. */
	if (bpf_map_update_elem(&gs_counters_v1, &ck, &one, BPF_NOEXIST) == 0)
		return;
	v = bpf_map_lookup_elem(&gs_counters_v1, &ck);
	if (v) {
		*v += 1;
		return;
	}
	/* The map is full (e.g. a scan over many ports): count into the
	 * per-verdict aggregate key the loader created at attach time, so the
	 * per-reason totals stay exact; the destination is what is lost, and
	 * that is counted too. */
	gs_stat_inc(GS_STAT_COUNTER_FULL);
	__builtin_memset(&ck, 0, sizeof(ck));
	ck.verdict = verdict;
	v = bpf_map_lookup_elem(&gs_counters_v1, &ck);
	if (v)
		*v += 1;
}

/*
 * Claim the key's window: true when this denial is the first for the key in
 * GS_FAULT_RL_WINDOW_NS and so may emit. Concurrent denials on other CPUs
 * race through BPF_NOEXIST (a new key) or a compare-and-swap of the
 * timestamp (an old window), so exactly one of them wins a window.
 */
static __always_inline int gs_rl_claim(const struct gs_fault_rl_key *rk, __u64 now)
{
	__u64 *last, prev;

	last = bpf_map_lookup_elem(&gs_fault_rl_v1, rk);
	if (!last) {
		if (bpf_map_update_elem(&gs_fault_rl_v1, rk, &now, BPF_NOEXIST) == 0)
			return 1;
		last = bpf_map_lookup_elem(&gs_fault_rl_v1, rk);
		if (!last)
			return 1; /* evicted at once: an extra event, never a lost one */
	}
	prev = *last;
	if (now - prev < GS_FAULT_RL_WINDOW_NS)
		return 0;
	return __sync_val_compare_and_swap(last, prev, now) == prev;
}

static __always_inline void gs_emit(const struct gs_lease_key *lk, __u8 reason, __u8 hook)
{
	struct gs_fault_rl_key rk = {};
	struct gs_fault_event *e;
	__u64 id, now;

	rk.cgroup_id = bpf_get_current_cgroup_id();
	rk.family = lk->family;
	rk.protocol = lk->protocol;
	rk.port = lk->port;
	rk.reason = reason;
	rk.hook = hook;
	__builtin_memcpy(rk.addr, lk->addr, sizeof(rk.addr));
	now = bpf_ktime_get_boot_ns();
	if (!gs_rl_claim(&rk, now))
		return; /* the window's event is on the ring; gs_count counted this one */

	e = bpf_ringbuf_reserve(&gs_events_v1, sizeof(*e), 0);
	if (!e) {
		gs_stat_inc(GS_STAT_LOST_EVENTS);
		/* give the window back: the next denial tries the ring again */
		bpf_map_delete_elem(&gs_fault_rl_v1, &rk);
		return;
	}
	id = bpf_get_current_pid_tgid();
	e->cgroup_id = rk.cgroup_id;
	e->boot_ns = now;
	e->tgid = id >> 32;
	e->pid = (__u32)id;
	e->family = lk->family;
	e->protocol = lk->protocol;
	e->port = lk->port;
	e->reason = reason;
	e->hook = hook;
	e->_pad[0] = 0;
	e->_pad[1] = 0;
	__builtin_memcpy(e->addr, lk->addr, sizeof(e->addr));
	bpf_ringbuf_submit(e, 0);
}

/* 1 = allow, 0 = reject (the kernel turns 0 into EPERM) */
static __always_inline int gs_decide(struct bpf_sock_addr *ctx, __u8 hook)
{
	struct gs_lease_key lk = {};
	struct gs_lease_value *lv;
	__u8 verdict;

	lk.protocol = (__u8)ctx->protocol;
	lk.port = bpf_ntohs((__u16)ctx->user_port);

	if (hook == GS_HOOK_CONNECT4 || hook == GS_HOOK_SENDMSG4) {
		__u32 a = ctx->user_ip4;

		lk.family = GS_FAMILY_IPV4;
		__builtin_memcpy(lk.addr, &a, 4);
	} else {
		__u32 w0 = ctx->user_ip6[0], w1 = ctx->user_ip6[1];
		__u32 w2 = ctx->user_ip6[2], w3 = ctx->user_ip6[3];

		/* ::ffff:a.b.c.d on an AF_INET6 socket reaches an IPv4 peer:
		 * it must meet the IPv4 lease, never a separate v6 one. */
		if (w0 == 0 && w1 == 0 && w2 == bpf_htonl(0xffff)) {
			lk.family = GS_FAMILY_IPV4;
			__builtin_memcpy(lk.addr, &w3, 4);
		} else {
			lk.family = GS_FAMILY_IPV6;
			__builtin_memcpy(lk.addr, &w0, 4);
			__builtin_memcpy(lk.addr + 4, &w1, 4);
			__builtin_memcpy(lk.addr + 8, &w2, 4);
			__builtin_memcpy(lk.addr + 12, &w3, 4);
		}
	}

	lv = bpf_map_lookup_elem(&gs_leases_v1, &lk);
	if (!lv) {
		verdict = GS_DENY_NO_LEASE;
	} else if (lv->expires_boot_ns && bpf_ktime_get_boot_ns() >= lv->expires_boot_ns) {
		verdict = GS_DENY_EXPIRED;
	} else if (lv->flags & GS_LEASE_LIMITED) {
		/* fetch-and-sub so concurrent callers can never overspend */
		__s64 before = __sync_fetch_and_add(&lv->uses_left, -1);

		if (before > 0) {
			verdict = GS_ALLOW;
		} else {
			__sync_fetch_and_add(&lv->uses_left, 1);
			verdict = GS_DENY_EXHAUSTED;
		}
	} else {
		verdict = GS_ALLOW;
	}

	if (verdict == GS_ALLOW) {
		if (gs_count_allows)
			gs_count(&lk, GS_ALLOW, lv ? lv->generation : 0);
		return 1;
	}
	gs_count(&lk, verdict, 0);
	if (gs_emit_events)
		gs_emit(&lk, verdict, hook);
	return 0;
}

SEC("cgroup/connect4")
int gs_connect4(struct bpf_sock_addr *ctx) { return gs_decide(ctx, GS_HOOK_CONNECT4); }

SEC("cgroup/connect6")
int gs_connect6(struct bpf_sock_addr *ctx) { return gs_decide(ctx, GS_HOOK_CONNECT6); }

SEC("cgroup/sendmsg4")
int gs_sendmsg4(struct bpf_sock_addr *ctx) { return gs_decide(ctx, GS_HOOK_SENDMSG4); }

SEC("cgroup/sendmsg6")
int gs_sendmsg6(struct bpf_sock_addr *ctx) { return gs_decide(ctx, GS_HOOK_SENDMSG6); }
