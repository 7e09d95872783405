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
#include "vmlinux.h" /* obj/vmlinux.h, from this kernel's BTF: the LSM hooks read kernel structs */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "gensee_abi.h"

/* uapi #defines that vmlinux.h (types only) does not carry */
#define GS_ETH_P_IP 0x0800
#define GS_ETH_P_IPV6 0x86DD
#define GS_AF_UNIX 1
#define GS_AF_INET 2
#define GS_AF_INET6 10
#define GS_SOCK_STREAM 1
#define GS_SOCK_DGRAM 2
#define GS_SOL_IP 0
#define GS_SOL_IPV6 41
#define GS_IP_OPTIONS 4
#define GS_IPV6_2292RTHDR 5
#define GS_IPV6_RTHDR 57
#define GS_IPPROTO_HOPOPTS 0
#define GS_IPPROTO_ROUTING 43
#define GS_IPPROTO_FRAGMENT 44
#define GS_IPPROTO_DSTOPTS 60
#define GS_IPPROTO_MH 135

char LICENSE[] SEC("license") = "GPL";

/* configuration, set by the loader before load */
const volatile __u8 gs_emit_events = 1;  /* ring-buffer fault events on deny */
const volatile __u8 gs_count_allows = 1; /* per-destination allow counters */
/* The operation's cgroup: its level below the cgroup2 root and its id. The
 * LSM hooks use them to tell a peer socket of the same operation from any
 * other. In the guard (gs_guard = 1, attached to the parent of every
 * operation's cgroup) gs_op_cgid is 0 and gs_op_level is the level the
 * operations' cgroups sit at. */
const volatile __u32 gs_op_level = 0;
const volatile __u64 gs_op_cgid = 0;
const volatile __u8 gs_guard = 0;

/* The lease and counter maps allocate their entries as they are added
 * (BPF_F_NO_PREALLOC), not all 65,536 at load: preallocating them cost
 * ~50 ms of every operation's start (the per-CPU counters most of it) and
 * their full size in kernel memory whether used or not. A lookup costs the
 * same; an entry deleted is freed only after an RCU grace period, so a
 * program that looked it up never reads another entry's value in its place.
 * A failed allocation is what a full map already was: a put the loader
 * reports (the grant is not answered), a counter the per-verdict aggregate
 * takes (gs_count). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, GS_LEASES_MAX);
	__type(key, struct gs_lease_key);
	__type(value, struct gs_lease_value);
} gs_leases_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
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
	/* always wake the consumer: it keeps records it has read in the ring
	 * until their lines are durable (addon/dataplane.c), and the kernel's
	 * adaptive wake-up only fires for a record at the consumer position */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
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

static __always_inline int gs_guard_sock(struct bpf_sock_addr *ctx);

/* The four sock_addr programs: gs_decide, told which hook it runs in (in
 * the guard: gs_guard_sock). */
#define GS_SOCK_ADDR_PROG(sec, name, hook)                                   \
	SEC(sec)                                                             \
	int name(struct bpf_sock_addr *ctx)                                  \
	{                                                                    \
		return gs_guard ? gs_guard_sock(ctx) : gs_decide(ctx, hook); \
	}

GS_SOCK_ADDR_PROG("cgroup/connect4", gs_connect4, GS_HOOK_CONNECT4)
GS_SOCK_ADDR_PROG("cgroup/connect6", gs_connect6, GS_HOOK_CONNECT6)
GS_SOCK_ADDR_PROG("cgroup/sendmsg4", gs_sendmsg4, GS_HOOK_SENDMSG4)
GS_SOCK_ADDR_PROG("cgroup/sendmsg6", gs_sendmsg6, GS_HOOK_SENDMSG6)

/*
 * Per-packet check of everything an operation's sockets put on the wire
 * (loopback included).
 *
 * A connected UDP socket met gs_decide once, at connect(); its later
 * send()/write() carry no address, so cgroup/sendmsg4|6 never runs for
 * them. This program lets a UDP datagram go only while gs_lease_verdict()
 * finds the destination's lease live: an expired or revoked lease stops a
 * connected socket at its next datagram, and send() fails with EPERM.
 *
 * Every other packet is judged by what it is, not by its destination:
 * - TCP passes: a TCP connection is authorized once, at connect (and an
 *   established one is not cut when its lease ends);
 * - any other IP protocol is dropped (GS_DENY_PROTOCOL): gs_sock_create
 *   lets an operation make TCP and UDP sockets only, so this is the second
 *   line behind it (a socket handed in from outside, a raw socket);
 * - IPv4 with options (source routing: LSRR/SSRR) and IPv6 with a routing
 *   header (segment routing, type 0/2/3) are dropped (GS_DENY_OPTION): they
 *   send a leased connection's packets through a first hop nobody leased.
 *   gs_setsockopt refuses the socket options that set them; this catches
 *   the per-call ancillary data (IP_RETOPTS, IPV6_RTHDR cmsgs) too.
 *
 * What it does not do, on purpose:
 * - spend uses: a use is a connect or a sendmsg (gs_decide);
 * - count allows: the allow counters count uses, the calls a lease
 *   authorized, not packets;
 * - put events on the ring: a stream of datagrams would be a stream of
 *   faults; gs_count carries every drop, per destination and reason.
 *
 * Fail closed: a UDP datagram whose port cannot be read (an IPv4 fragment
 * after the first; IPv6 behind a fragment, AH, ESP or other header this
 * does not walk, or behind more than GS_V6_EXT_MAX option headers) is
 * dropped and counted as no_lease to port 0 of its destination. Local UDP
 * is fragmented after this hook, so only raw sockets make those.
 *
 * In the guard (gs_guard), attached to the parent of every operation's
 * cgroup, it asks one thing: does the packet's socket belong to an
 * operation that is still attached (gs_live_v1)? A socket born in an
 * operation that has ended (handed to another process with SCM_RIGHTS, or
 * held by a process that escaped the kill) sends nothing more.
 */
#define GS_V6_EXT_MAX 4

enum gs_pkt {
	GS_PKT_PASS = 0,   /* TCP, or not IP: allowed */
	GS_PKT_UDP = 1,    /* lk holds the destination */
	GS_PKT_OPAQUE = 2, /* maybe UDP, port unreadable: lk has port 0 */
	GS_PKT_PROTO = 3,  /* an IP protocol other than TCP and UDP: lk names it */
	GS_PKT_OPTION = 4, /* source routing: IPv4 options, an IPv6 routing header */
};

static __always_inline int gs_ip4_kind(struct __sk_buff *skb, struct gs_lease_key *lk)
{
	struct iphdr ip;
	struct udphdr uh;

	if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)))
		return GS_PKT_PASS; /* shorter than an IPv4 header: nothing the stack sends */
	gs_key_ip4(lk, ip.protocol, 0, ip.daddr);
	if (ip.ihl != 5)
		return GS_PKT_OPTION;
	if (ip.protocol == IPPROTO_TCP)
		return GS_PKT_PASS;
	if (ip.protocol != IPPROTO_UDP)
		return GS_PKT_PROTO;
	if ((ip.frag_off & bpf_htons(0x1fff)) || bpf_skb_load_bytes(skb, sizeof(ip), &uh, sizeof(uh)))
		return GS_PKT_OPAQUE;
	lk->port = bpf_ntohs(uh.dest);
	return GS_PKT_UDP;
}

static __always_inline int gs_ip6_kind(struct __sk_buff *skb, struct gs_lease_key *lk)
{
	struct ipv6hdr ip6;
	struct udphdr uh;
	__u32 w[4];
	__u32 off = sizeof(ip6);
	__u8 next;
	int i;

	if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)))
		return GS_PKT_PASS;
	__builtin_memcpy(w, &ip6.daddr, sizeof(w));
	next = ip6.nexthdr;
	gs_key_ip6(lk, next, 0, w[0], w[1], w[2], w[3]);
	/* hop-by-hop and destination options share one length format
	 * (8-octet units after the first 8); walk a few of them */
#pragma unroll
	for (i = 0; i < GS_V6_EXT_MAX; i++) {
		__u8 h[2];

		if (next == GS_IPPROTO_ROUTING)
			return GS_PKT_OPTION;
		if (next != GS_IPPROTO_HOPOPTS && next != GS_IPPROTO_DSTOPTS)
			break;
		if (bpf_skb_load_bytes(skb, off, h, sizeof(h)))
			return GS_PKT_OPAQUE;
		next = h[0];
		off += ((__u32)h[1] + 1) * 8;
	}
	lk->protocol = next;
	switch (next) {
	case IPPROTO_TCP: return GS_PKT_PASS;
	case IPPROTO_UDP:
		if (bpf_skb_load_bytes(skb, off, &uh, sizeof(uh)))
			return GS_PKT_OPAQUE;
		lk->port = bpf_ntohs(uh.dest);
		return GS_PKT_UDP;
	case GS_IPPROTO_ROUTING: return GS_PKT_OPTION;
	case GS_IPPROTO_HOPOPTS: /* more than GS_V6_EXT_MAX headers */
	case GS_IPPROTO_DSTOPTS:
	case GS_IPPROTO_FRAGMENT:
	case IPPROTO_AH:
	case IPPROTO_ESP:
	case GS_IPPROTO_MH:
	case 139: /* HIP */
	case 140: /* shim6 */
	case 253: /* experimentation (RFC 3692) */
	case 254: lk->protocol = IPPROTO_UDP; return GS_PKT_OPAQUE;
	default: return GS_PKT_PROTO;
	}
}

/* operations whose hooks are attached now: cgroup id -> 1 (the guard's map;
 * each operation's attach adds its cgroup, its detach removes it) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_LIVE_MAX);
	__type(key, __u64);
	__type(value, __u8);
} gs_live_v1 SEC(".maps");

static __always_inline int gs_guard_live(__u64 op_cgid)
{
	return op_cgid && bpf_map_lookup_elem(&gs_live_v1, &op_cgid);
}

/* socket -> the cgroup id of the operation it was born in (the guard's map,
 * shared with every operation's programs; see gs_guard_sock) */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} gs_sk_op_v1 SEC(".maps");

static __always_inline void gs_tag(struct bpf_sock *sk)
{
	__u64 *op;

	if (gs_guard || !sk)
		return;
	op = bpf_sk_storage_get(&gs_sk_op_v1, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (op && !*op)
		*op = gs_op_cgid;
}

SEC("cgroup_skb/egress")
int gs_udp_egress(struct __sk_buff *skb)
{
	struct gs_lease_key lk = {};
	__u8 verdict;
	int kind;

	if (gs_guard) {
		if (gs_guard_live(bpf_skb_ancestor_cgroup_id(skb, (int)gs_op_level)))
			return 1; /* the operation's own program decides */
		gs_stat_inc(GS_STAT_GUARD_DROPS);
		return 0;
	}
	if (skb->protocol == bpf_htons(GS_ETH_P_IP))
		kind = gs_ip4_kind(skb, &lk);
	else if (skb->protocol == bpf_htons(GS_ETH_P_IPV6))
		kind = gs_ip6_kind(skb, &lk);
	else
		return 1;

	switch (kind) {
	case GS_PKT_PASS: return 1;
	case GS_PKT_UDP: verdict = gs_lease_verdict(bpf_map_lookup_elem(&gs_leases_v1, &lk)); break;
	case GS_PKT_PROTO: verdict = GS_DENY_PROTOCOL; break;
	case GS_PKT_OPTION: verdict = GS_DENY_OPTION; break;
	default: verdict = GS_DENY_NO_LEASE; break;
	}
	if (verdict == GS_ALLOW)
		return 1;
	gs_count(&lk, verdict, 0);
	return 0;
}

/* ---- the kinds of socket, their options, bind and listen ---------------- */

/*
 * A refusal that has no destination (a socket that may not be made, an
 * option that may not be set) still goes on the ring, in the fault event's
 * "socket" form: family 0, port = the address family (AF_*), protocol =
 * the protocol number (255 when above it), addr[0..1] = the socket type,
 * addr[2..5] = the full protocol number, addr[6..9] = the option (level in
 * the upper half, name in the lower) for GS_HOOK_SETSOCKOPT.
 */
static __always_inline void gs_refuse_socket(__u16 af, __u32 type, __u32 protocol, __u32 opt, __u8 reason, __u8 hook)
{
	struct gs_lease_key lk = {};
	__u16 t = (__u16)type;

	lk.family = 0;
	lk.protocol = protocol > 255 ? 255 : (__u8)protocol;
	lk.port = af;
	__builtin_memcpy(lk.addr, &t, 2);
	__builtin_memcpy(lk.addr + 2, &protocol, 4);
	__builtin_memcpy(lk.addr + 6, &opt, 4);
	gs_stat_inc(GS_STAT_SOCKET_REFUSED);
	if (gs_emit_events)
		gs_emit(&lk, reason, hook);
}

/*
 * Which IP sockets an operation may make: TCP (SOCK_STREAM) and UDP
 * (SOCK_DGRAM), the two protocols a lease can name. Ping sockets
 * (IPPROTO_ICMP/ICMPV6, open to every group where ping_group_range says
 * so), UDP-Lite, SCTP, MPTCP, DCCP and raw sockets are refused with EPERM
 * at socket() — io_uring's IORING_OP_SOCKET included: this runs in
 * inet_create itself.
 */
SEC("cgroup/sock_create")
int gs_sock_create(struct bpf_sock *sk)
{
	__u32 family = sk->family, type = sk->type, protocol = sk->protocol;

	if (gs_guard)
		return 1;
	if (family != GS_AF_INET && family != GS_AF_INET6)
		return 1; /* the other families: gs_socket_post_create */
	if ((type == GS_SOCK_STREAM && protocol == IPPROTO_TCP) || (type == GS_SOCK_DGRAM && protocol == IPPROTO_UDP)) {
		gs_tag(sk);
		return 1;
	}
	gs_refuse_socket((__u16)family, type, protocol, 0, GS_DENY_PROTOCOL, GS_HOOK_SOCKET);
	return 0;
}

/*
 * Socket options that change where a packet goes: IPv4 source routing
 * (IP_OPTIONS) and IPv6 routing headers (IPV6_RTHDR, open to every user;
 * the other IPv6 option headers need CAP_NET_RAW). Refused with EPERM.
 */
SEC("cgroup/setsockopt")
int gs_setsockopt(struct bpf_sockopt *ctx)
{
	__s32 level = ctx->level, name = ctx->optname;

	if (gs_guard)
		return 1;
	if ((level == GS_SOL_IP && name == GS_IP_OPTIONS) ||
	    (level == GS_SOL_IPV6 && (name == GS_IPV6_RTHDR || name == GS_IPV6_2292RTHDR))) {
		__u32 af = ctx->sk ? ctx->sk->family : 0;

		gs_refuse_socket((__u16)af, 0, ctx->sk ? ctx->sk->protocol : 0,
				 ((__u32)level << 16) | ((__u32)name & 0xffff), GS_DENY_OPTION, GS_HOOK_SETSOCKOPT);
		return 0;
	}
	return 1;
}

/* listen rules: (protocol, port) -> 1; port 0 = a kernel-chosen port */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_LISTEN_MAX);
	__type(key, struct gs_listen_key);
	__type(value, __u8);
} gs_listen_v1 SEC(".maps");

static __always_inline int gs_listen_allowed(__u8 protocol, __u16 port)
{
	struct gs_listen_key k = {};

	k.protocol = protocol;
	k.port = port;
	return bpf_map_lookup_elem(&gs_listen_v1, &k) != 0;
}

/*
 * bind() to a port: only a port a `listen` rule names. A socket bound to a
 * port receives what is sent to it: a deny-all operation that binds a
 * loopback port another operation's policy grants would receive that
 * operation's bytes. Port 0 (the kernel picks) passes here; listen() on it
 * meets gs_socket_listen.
 */
static __always_inline int gs_bind(struct bpf_sock_addr *ctx, __u8 hook)
{
	struct gs_lease_key lk = {};
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u8 protocol = (__u8)ctx->protocol;

	if (gs_guard || port == 0 || gs_listen_allowed(protocol, port))
		return 1;
	if (hook == GS_HOOK_BIND4)
		gs_key_ip4(&lk, protocol, port, ctx->user_ip4);
	else
		gs_key_ip6(&lk, protocol, port, ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3]);
	gs_count(&lk, GS_DENY_NO_RULE, 0);
	if (gs_emit_events)
		gs_emit(&lk, GS_DENY_NO_RULE, hook);
	return 0;
}

SEC("cgroup/bind4")
int gs_bind4(struct bpf_sock_addr *ctx)
{
	return gs_bind(ctx, GS_HOOK_BIND4);
}

SEC("cgroup/bind6")
int gs_bind6(struct bpf_sock_addr *ctx)
{
	return gs_bind(ctx, GS_HOOK_BIND6);
}

/* ---- AF_UNIX: cgroup/connect_unix and cgroup/sendmsg_unix (Linux 6.7) --- */

/* weak: before 6.2 the kernel has neither kfunc, and before 6.7 the loader
 * leaves the two unix programs out (addon/dataplane.c), so an unresolved
 * one must not fail the whole object's load (seen on Debian 12's 6.1) */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* unix rules: a name an AF_UNIX peer may be reached by (sun_path,
 * zero-padded; an abstract name starts with a NUL) -> 1 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_UNIX_MAX);
	__type(key, struct gs_unix_key);
	__type(value, __u8);
} gs_unix_v1 SEC(".maps");

/*
 * An AF_UNIX connect, or a datagram sent to a name: only to a name a `unix`
 * rule gives. This runs on the kernel's own copy of the address, before the
 * name is looked up, so a thread that rewrites the buffer gains nothing.
 * Refused with EPERM: every path socket of the host (/run, /tmp, the
 * container runtime's, another operation's), every abstract socket of the
 * host's network namespace, every relative name. socketpair() needs no
 * name and is not affected: a workload's own IPC goes on.
 *
 * A path name is what the kernel itself reads: up to its first NUL. An
 * abstract name is its whole length, NULs included.
 */
static __always_inline int gs_unix(struct bpf_sock_addr *ctx, __u8 hook)
{
	gs_tag(ctx->sk);
	{
		struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
		struct sockaddr_un *un = bpf_rdonly_cast(sa->uaddr, bpf_core_type_id_kernel(struct sockaddr_un));
		struct gs_unix_key k = {};
		struct gs_lease_key lk = {};
		int len = (int)sa->uaddrlen - 2, i, end = 0;

		if (len > (int)sizeof(k.path))
			len = sizeof(k.path);
		if (len > 0)
			bpf_probe_read_kernel(k.path, len & 0x7f, un->sun_path);
		if (len > 0 && k.path[0]) {
			for (i = 1; i < (int)sizeof(k.path); i++) {
				if (!k.path[i])
					end = 1;
				if (end)
					k.path[i] = 0;
			}
		}
		if (len > 0 && bpf_map_lookup_elem(&gs_unix_v1, &k))
			return 1;
		lk.family = GS_FAMILY_UNIX;
		lk.protocol = 0;
		lk.port = len > 0 ? (__u16)len : 0;
		__builtin_memcpy(lk.addr, k.path, sizeof(lk.addr));
		gs_stat_inc(GS_STAT_UNIX_REFUSED);
		if (gs_emit_events)
			gs_emit(&lk, GS_DENY_NO_RULE, hook);
		return 0;
	}
}

/*
 * In the guard: the socket belongs to an operation still attached, or it
 * reaches nothing (its own programs are gone with its operation). A
 * sock_addr program cannot ask a socket's cgroup, so every operation's own
 * programs tag the sockets they see (gs_tag: at creation, and an AF_UNIX
 * socket at its first connect or send) with the operation's cgroup id, in
 * the guard's socket storage; a socket without a tag has never been seen
 * by a live operation's programs and reaches nothing either.
 */
static __always_inline int gs_guard_sock(struct bpf_sock_addr *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	__u64 *op = sk ? bpf_sk_storage_get(&gs_sk_op_v1, sk, 0, 0) : 0;

	if (op && gs_guard_live(*op))
		return 1;
	gs_stat_inc(GS_STAT_GUARD_DROPS);
	return 0;
}

/* libbpf 1.1 does not know these section names: the loader sets the
 * attach types (BPF_CGROUP_UNIX_CONNECT, BPF_CGROUP_UNIX_SENDMSG) */
SEC("cgroup/connect4")
int gs_connect_unix(struct bpf_sock_addr *ctx)
{
	return gs_guard ? gs_guard_sock(ctx) : gs_unix(ctx, GS_HOOK_UNIX_CONNECT);
}

SEC("cgroup/sendmsg4")
int gs_sendmsg_unix(struct bpf_sock_addr *ctx)
{
	return gs_guard ? gs_guard_sock(ctx) : gs_unix(ctx, GS_HOOK_UNIX_SENDMSG);
}
