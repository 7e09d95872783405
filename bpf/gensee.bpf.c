// SPDX-License-Identifier: GPL-2.0
/*
 * gensee enforcement point: cgroup sock_addr hooks for connect4/6 and
 * sendmsg4/6, and a cgroup_skb egress check of UDP datagrams. The four
 * hooks are thin wrappers around gs_decide(); the egress program shares its
 * key builders and its one liveness rule (gs_lease_verdict).
 *
 * The hooks run on the kernel's own copy of the destination (after the
 * sockaddr was copied in), so a thread that rewrites the user buffer after a
 * seccomp pause gains nothing: this is the check that counts.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in6.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "gensee_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* configuration, set by the loader before load */
const volatile __u8 gs_emit_events = 1;  /* ring-buffer fault events on deny */
const volatile __u8 gs_count_allows = 1; /* per-destination allow counters */

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

/* Copy the destination of lease key lk (family, protocol, port, address)
 * into *dst: a counter key, a rate-limit key or a fault event. */
#define GS_COPY_DEST(dst, lk)                                                   \
	do {                                                                    \
		(dst)->family = (lk)->family;                                   \
		(dst)->protocol = (lk)->protocol;                               \
		(dst)->port = (lk)->port;                                       \
		__builtin_memcpy((dst)->addr, (lk)->addr, sizeof((dst)->addr)); \
	} while (0)

static __always_inline void gs_count(const struct gs_lease_key *lk, __u8 verdict, __u64 generation)
{
	struct gs_counter_key ck = {};
	__u64 one = 1, *v;

	GS_COPY_DEST(&ck, lk);
	ck.verdict = verdict;
	ck.generation = generation;

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
	GS_COPY_DEST(&rk, lk);
	rk.reason = reason;
	rk.hook = hook;
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
	GS_COPY_DEST(e, lk);
	e->reason = reason;
	e->hook = hook;
	e->_pad[0] = 0;
	e->_pad[1] = 0;
	bpf_ringbuf_submit(e, 0);
}

/* The lease key of an IPv4 destination (address in network byte order). */
static __always_inline void gs_key_ip4(struct gs_lease_key *lk, __u8 protocol, __u16 port, __u32 addr)
{
	lk->family = GS_FAMILY_IPV4;
	lk->protocol = protocol;
	lk->port = port;
	__builtin_memcpy(lk->addr, &addr, 4);
}

/* The lease key of an IPv6 destination given as four network-order words. */
static __always_inline void gs_key_ip6(struct gs_lease_key *lk, __u8 protocol, __u16 port, __u32 w0, __u32 w1, __u32 w2,
				       __u32 w3)
{
	/* ::ffff:a.b.c.d on an AF_INET6 socket reaches an IPv4 peer:
	 * it must meet the IPv4 lease, never a separate v6 one. */
	if (w0 == 0 && w1 == 0 && w2 == bpf_htonl(0xffff)) {
		gs_key_ip4(lk, protocol, port, w3);
		return;
	}
	lk->family = GS_FAMILY_IPV6;
	lk->protocol = protocol;
	lk->port = port;
	__builtin_memcpy(lk->addr, &w0, 4);
	__builtin_memcpy(lk->addr + 4, &w1, 4);
	__builtin_memcpy(lk->addr + 8, &w2, 4);
	__builtin_memcpy(lk->addr + 12, &w3, 4);
}

/*
 * Whether a lease lets traffic through now: the one rule of it in the
 * kernel, used by the sock_addr hooks and the egress check alike. A lease
 * is live while it is in the map and before its CLOCK_BOOTTIME expiry
 * (0 = never). Uses left are not part of it: a use is a connect or a
 * sendmsg, spent by gs_decide, never a packet (so the datagram of the
 * sendmsg that spent the last use still leaves).
 */
static __always_inline __u8 gs_lease_verdict(const struct gs_lease_value *lv)
{
	if (!lv)
		return GS_DENY_NO_LEASE;
	if (gs_lease_expired(lv, bpf_ktime_get_boot_ns()))
		return GS_DENY_EXPIRED;
	return GS_ALLOW;
}

/* 1 = allow, 0 = reject (the kernel turns 0 into EPERM) */
static __always_inline int gs_decide(struct bpf_sock_addr *ctx, __u8 hook)
{
	struct gs_lease_key lk = {};
	struct gs_lease_value *lv;
	__u8 protocol = (__u8)ctx->protocol;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u8 verdict;

	if (hook == GS_HOOK_CONNECT4 || hook == GS_HOOK_SENDMSG4)
		gs_key_ip4(&lk, protocol, port, ctx->user_ip4);
	else
		gs_key_ip6(&lk, protocol, port, ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3]);

	lv = bpf_map_lookup_elem(&gs_leases_v1, &lk);
	verdict = gs_lease_verdict(lv);
	if (verdict == GS_ALLOW && lv && (lv->flags & GS_LEASE_LIMITED)) {
		/* fetch-and-sub so concurrent callers can never overspend */
		__s64 before = __sync_fetch_and_add(&lv->uses_left, -1);

		if (before <= 0) {
			__sync_fetch_and_add(&lv->uses_left, 1);
			verdict = GS_DENY_EXHAUSTED;
		}
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

/* The four sock_addr programs: gs_decide, told which hook it runs in. */
#define GS_SOCK_ADDR_PROG(sec, name, hook)   \
	SEC(sec)                             \
	int name(struct bpf_sock_addr *ctx)  \
	{                                    \
		return gs_decide(ctx, hook); \
	}

GS_SOCK_ADDR_PROG("cgroup/connect4", gs_connect4, GS_HOOK_CONNECT4)
GS_SOCK_ADDR_PROG("cgroup/connect6", gs_connect6, GS_HOOK_CONNECT6)
GS_SOCK_ADDR_PROG("cgroup/sendmsg4", gs_sendmsg4, GS_HOOK_SENDMSG4)
GS_SOCK_ADDR_PROG("cgroup/sendmsg6", gs_sendmsg6, GS_HOOK_SENDMSG6)

/*
 * Per-packet check of UDP egress.
 *
 * A connected UDP socket met gs_decide once, at connect(); its later
 * send()/write() carry no address, so cgroup/sendmsg4|6 never runs for
 * them. This program sees every datagram the operation's sockets put on the
 * wire (loopback included) and lets it go only while gs_lease_verdict()
 * finds the destination's lease live: an expired or revoked lease stops a
 * connected socket at its next datagram, and send() fails with EPERM.
 *
 * What it does not do, on purpose:
 * - spend uses: a use is a connect or a sendmsg (gs_decide);
 * - count allows: the allow counters count uses, the calls a lease
 *   authorized, not packets;
 * - put events on the ring: a stream of datagrams would be a stream of
 *   faults; gs_count carries every drop, per destination and reason;
 * - look at TCP or anything else not UDP: a TCP connection is authorized
 *   once, at connect, and an established one is not cut when its lease ends.
 *
 * Fail closed: a UDP datagram whose port cannot be read (an IPv4 fragment
 * after the first; IPv6 behind a fragment, AH, ESP or other header this
 * does not walk, or behind more than GS_V6_EXT_MAX options/routing headers)
 * is dropped and counted as no_lease to port 0 of its destination. Local
 * UDP is fragmented after this hook, so only raw sockets make those.
 */
#define GS_V6_EXT_MAX 4

enum gs_pkt {
	GS_PKT_OTHER = 0, /* not UDP: allowed */
	GS_PKT_UDP = 1,   /* lk holds the destination */
	GS_PKT_OPAQUE = 2 /* maybe UDP, port unreadable: lk has port 0 */
};

static __always_inline int gs_udp4_dest(struct __sk_buff *skb, struct gs_lease_key *lk)
{
	struct iphdr ip;
	struct udphdr uh;

	if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)))
		return GS_PKT_OTHER; /* shorter than an IPv4 header: not a datagram */
	if (ip.protocol != IPPROTO_UDP)
		return GS_PKT_OTHER;
	gs_key_ip4(lk, IPPROTO_UDP, 0, ip.daddr);
	if ((ip.frag_off & bpf_htons(0x1fff)) || ip.ihl < 5 || bpf_skb_load_bytes(skb, ip.ihl * 4, &uh, sizeof(uh)))
		return GS_PKT_OPAQUE;
	lk->port = bpf_ntohs(uh.dest);
	return GS_PKT_UDP;
}

static __always_inline int gs_udp6_dest(struct __sk_buff *skb, struct gs_lease_key *lk)
{
	struct ipv6hdr ip6;
	struct udphdr uh;
	__u32 w[4];
	__u32 off = sizeof(ip6);
	__u8 next;
	int i;

	if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)))
		return GS_PKT_OTHER;
	__builtin_memcpy(w, &ip6.daddr, sizeof(w));
	gs_key_ip6(lk, IPPROTO_UDP, 0, w[0], w[1], w[2], w[3]);
	next = ip6.nexthdr;
	/* hop-by-hop, routing and destination options share one length
	 * format (8-octet units after the first 8); walk a few of them */
#pragma unroll
	for (i = 0; i < GS_V6_EXT_MAX; i++) {
		__u8 h[2];

		if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING && next != IPPROTO_DSTOPTS)
			break;
		if (bpf_skb_load_bytes(skb, off, h, sizeof(h)))
			return GS_PKT_OPAQUE;
		next = h[0];
		off += ((__u32)h[1] + 1) * 8;
	}
	switch (next) {
	case IPPROTO_UDP:
		if (bpf_skb_load_bytes(skb, off, &uh, sizeof(uh)))
			return GS_PKT_OPAQUE;
		lk->port = bpf_ntohs(uh.dest);
		return GS_PKT_UDP;
	case IPPROTO_HOPOPTS: /* more than GS_V6_EXT_MAX headers */
	case IPPROTO_ROUTING:
	case IPPROTO_DSTOPTS:
	case IPPROTO_FRAGMENT:
	case IPPROTO_AH:
	case IPPROTO_ESP:
	case IPPROTO_MH:
	case 139: /* HIP */
	case 140: /* shim6 */
	case 253: /* experimentation (RFC 3692) */
	case 254: return GS_PKT_OPAQUE;
	default: return GS_PKT_OTHER;
	}
}

SEC("cgroup_skb/egress")
int gs_udp_egress(struct __sk_buff *skb)
{
	struct gs_lease_key lk = {};
	__u8 verdict;
	int kind;

	if (skb->protocol == bpf_htons(ETH_P_IP))
		kind = gs_udp4_dest(skb, &lk);
	else if (skb->protocol == bpf_htons(ETH_P_IPV6))
		kind = gs_udp6_dest(skb, &lk);
	else
		return 1;

	if (kind == GS_PKT_OTHER)
		return 1;
	if (kind == GS_PKT_OPAQUE)
		verdict = GS_DENY_NO_LEASE;
	else
		verdict = gs_lease_verdict(bpf_map_lookup_elem(&gs_leases_v1, &lk));
	if (verdict == GS_ALLOW)
		return 1;
	gs_count(&lk, verdict, 0);
	return 0;
}
