/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gensee kernel ABI, version 1.
 *
 * Every struct that crosses the kernel/user boundary lives here and nowhere
 * else. It is included by the BPF program (bpf/gensee.bpf.c), by the addon's
 * plain-C data plane (addon/dataplane.c) and mirrored in TypeScript by
 * src/abi.ts (test/abi.test.ts checks the mirror against GS_ABI_* sizes the
 * addon reports). Fields are fixed width with explicit padding so the layout
 * is identical for clang -target bpf and the host compiler.
 *
 * Addresses are stored in network byte order in a 16-byte field; IPv4 uses
 * the first 4 bytes and leaves the rest zero. Ports are in host byte order.
 */
#ifndef GENSEE_ABI_H
#define GENSEE_ABI_H

#ifdef __BPF__
/* linux/types.h is already pulled in by the BPF program */
#else
#include <linux/types.h>
#endif

#define GS_ABI_VERSION 1

#define GS_FAMILY_IPV4 4
#define GS_FAMILY_IPV6 6
/* fault events only: an AF_UNIX name (protocol 0, port = the name's length
 * in bytes, addr = its first 16 bytes) */
#define GS_FAMILY_UNIX 1

/* verdict/reason codes, also the counter key's `verdict` */
enum gs_verdict {
	GS_ALLOW = 0,
	GS_DENY_NO_LEASE = 1,
	GS_DENY_EXPIRED = 2,
	GS_DENY_EXHAUSTED = 3,
	GS_DENY_PROTOCOL = 4, /* a socket family or IP protocol no rule kind names */
	GS_DENY_OPTION = 5,   /* an option that reroutes packets (source routing) */
	GS_DENY_NO_RULE = 6,  /* a bind or an AF_UNIX name that no rule names */
	GS_VERDICT_MAX = 7,
};

/* which hook saw the operation */
enum gs_hook {
	GS_HOOK_CONNECT4 = 1,
	GS_HOOK_CONNECT6 = 2,
	GS_HOOK_SENDMSG4 = 3,
	GS_HOOK_SENDMSG6 = 4,
	GS_HOOK_SOCKET = 5, /* cgroup/sock_create, lsm socket_post_create */
	GS_HOOK_SETSOCKOPT = 6,
	GS_HOOK_BIND4 = 7,
	GS_HOOK_BIND6 = 8,
	GS_HOOK_UNIX_CONNECT = 9,  /* cgroup/connect_unix */
	GS_HOOK_UNIX_SENDMSG = 10, /* cgroup/sendmsg_unix */
};

/* gs_stats_v1 (per-CPU array) indexes */
enum gs_stat {
	GS_STAT_LOST_EVENTS = 0,    /* ring buffer reserve failed */
	GS_STAT_COUNTER_FULL = 1,   /* counter map full: a count could not be keyed */
	GS_STAT_SOCKET_REFUSED = 2, /* socket()/setsockopt() refused (no destination to count by) */
	GS_STAT_UNIX_REFUSED = 3,   /* AF_UNIX connects/datagrams refused */
	GS_STAT_GUARD_DROPS = 4,    /* the guard's: packets/datagrams of ended operations */
	GS_STAT_MAX = 5,
};

/* lease flags */
#define GS_LEASE_LIMITED 1u /* uses_left is enforced */

/* key of gs_leases_v1: the exact destination tuple */
struct gs_lease_key {
	__u8 family;   /* GS_FAMILY_IPV4 / GS_FAMILY_IPV6 */
	__u8 protocol; /* IPPROTO_TCP / IPPROTO_UDP */
	__u16 port;    /* host byte order */
	__u32 _pad;    /* must be zero */
	__u8 addr[16]; /* network byte order; IPv4 in addr[0..3] */
};

/* value of gs_leases_v1 */
struct gs_lease_value {
	__u64 generation;
	__u64 expires_boot_ns; /* CLOCK_BOOTTIME, 0 = never */
	__s64 uses_left;       /* meaningful only with GS_LEASE_LIMITED */
	__u32 flags;
	__u32 _pad;
};

/* key of gs_counters_v1 (per-CPU hash, value __u64 count). A key with
 * family 0 (everything zero but `verdict`) is the per-verdict aggregate that
 * counts what could not be keyed by destination because the map was full;
 * the loader creates the GS_VERDICT_MAX aggregates before attaching. */
struct gs_counter_key {
	__u8 family;
	__u8 protocol;
	__u16 port;
	__u8 verdict; /* enum gs_verdict */
	__u8 _pad[3];
	__u64 generation; /* lease generation for allows, 0 for denies */
	__u8 addr[16];
};

/* Where and how a call was denied, without who or when: the same fields, in
 * the same order, end gs_fault_event and gs_fault_rl_key. */
#define GS_FAULT_WHERE_FIELDS              \
	__u8 family;                       \
	__u8 protocol;                     \
	__u16 port;                        \
	__u8 reason; /* enum gs_verdict */ \
	__u8 hook;   /* enum gs_hook */    \
	__u8 _pad[2];                      \
	__u8 addr[16]

/* record on gs_events_v1 (ring buffer), one per denied operation */
struct gs_fault_event {
	__u64 cgroup_id;
	__u64 boot_ns;
	__u32 tgid;
	__u32 pid; /* thread id */
	GS_FAULT_WHERE_FIELDS;
};

/* key of gs_fault_rl_v1 (LRU hash, value __u64 = CLOCK_BOOTTIME of the
 * last event emitted for the key): what a fault event says about where and
 * how, without who or when. Two denials with the same key inside
 * GS_FAULT_RL_WINDOW_NS put one event on the ring; the counters count both.
 * Kernel-only today; here so its layout is checked like the others. */
struct gs_fault_rl_key {
	__u64 cgroup_id;
	GS_FAULT_WHERE_FIELDS;
};

/* key of gs_listen_v1: a port an operation may bind and listen on */
struct gs_listen_key {
	__u8 protocol; /* IPPROTO_TCP / IPPROTO_UDP */
	__u8 _pad;
	__u16 port; /* host byte order; 0 = a port the kernel picks */
};

/* key of gs_unix_v1: an AF_UNIX name as connect()/sendto() give it,
 * zero-padded (a path up to its first NUL; an abstract name starts with a
 * NUL byte and is its whole length) */
struct gs_unix_key {
	char path[108];
};

#ifdef __cplusplus
#define _Static_assert static_assert
#endif

#define GS_ABI_LEASE_KEY_SIZE 24
#define GS_ABI_LEASE_VALUE_SIZE 32
#define GS_ABI_COUNTER_KEY_SIZE 32
#define GS_ABI_FAULT_EVENT_SIZE 48
#define GS_ABI_FAULT_RL_KEY_SIZE 32
#define GS_ABI_LISTEN_KEY_SIZE 4
#define GS_ABI_UNIX_KEY_SIZE 108

_Static_assert(sizeof(struct gs_lease_key) == GS_ABI_LEASE_KEY_SIZE, "gs_lease_key layout");
/*
 * The lease rules, for the hooks and every user-space C reader
 * (addon/notify.c's fast path); leaseExpired/leaseSpent in src/abi.ts are
 * their TypeScript twins. Expired: on or after its CLOCK_BOOTTIME expiry
 * (0 = never). Spent: limited and no use left. The hooks spend a use
 * atomically themselves, so they test spent on the value they decrement.
 */
static inline int gs_lease_expired(const struct gs_lease_value *v, __u64 now_boot_ns)
{
	return v->expires_boot_ns && now_boot_ns >= v->expires_boot_ns;
}

static inline int gs_lease_spent(const struct gs_lease_value *v)
{
	return (v->flags & GS_LEASE_LIMITED) && v->uses_left <= 0;
}

_Static_assert(sizeof(struct gs_lease_value) == GS_ABI_LEASE_VALUE_SIZE, "gs_lease_value layout");
_Static_assert(sizeof(struct gs_counter_key) == GS_ABI_COUNTER_KEY_SIZE, "gs_counter_key layout");
_Static_assert(sizeof(struct gs_fault_event) == GS_ABI_FAULT_EVENT_SIZE, "gs_fault_event layout");
_Static_assert(sizeof(struct gs_fault_rl_key) == GS_ABI_FAULT_RL_KEY_SIZE, "gs_fault_rl_key layout");
_Static_assert(sizeof(struct gs_listen_key) == GS_ABI_LISTEN_KEY_SIZE, "gs_listen_key layout");
_Static_assert(sizeof(struct gs_unix_key) == GS_ABI_UNIX_KEY_SIZE, "gs_unix_key layout");

/* map and program names (pins use the same names) */
#define GS_MAP_LEASES "gs_leases_v1"
#define GS_MAP_COUNTERS "gs_counters_v1"
#define GS_MAP_EVENTS "gs_events_v1"
#define GS_MAP_STATS "gs_stats_v1"
#define GS_MAP_FAULT_RL "gs_fault_rl_v1" /* not pinned: it lives as long as the programs */
#define GS_MAP_LISTEN "gs_listen_v1"
#define GS_MAP_UNIX "gs_unix_v1"
#define GS_MAP_LIVE "gs_live_v1"   /* pinned in the guard's directory only */
#define GS_MAP_SK_OP "gs_sk_op_v1" /* the guard's; every guarded operation reuses it */

#define GS_LISTEN_MAX 1024
#define GS_UNIX_MAX 1024
#define GS_LIVE_MAX 16384

#define GS_LEASES_MAX 65536
#define GS_COUNTERS_MAX 65536

/*
 * The ring must carry one event per distinct destination for a whole burst
 * even when its consumer (the supervisor's event loop, busy writing the
 * faults it already has) drains nothing meanwhile: the rate limit bounds the
 * ring's load by distinct destinations per window, not by attempts. Each
 * record costs its 8-byte ringbuf header plus the event, rounded to 8:
 * 56 bytes. 1 MiB (a power of two, as BPF_MAP_TYPE_RINGBUF requires) holds
 * 18,724 of them: 10,000 distinct destinations inside one window with 87%
 * headroom. What still does not fit is counted (GS_STAT_LOST_EVENTS).
 */
#define GS_RINGBUF_HDR_BYTES 8
#define GS_EVENT_RECORD_BYTES ((GS_RINGBUF_HDR_BYTES + GS_ABI_FAULT_EVENT_SIZE + 7) / 8 * 8)
#define GS_EVENTS_BYTES (1024 * 1024)
_Static_assert(GS_EVENTS_BYTES / GS_EVENT_RECORD_BYTES >= 10000 * 3 / 2,
	       "gs_events_v1 holds a 10,000-destination burst with 50% headroom");

/*
 * One ring event per rate-limit key per second. Why 1 s: it is the counter
 * sampling period (counters.jsonl already says each second how often each
 * destination was denied), it bounds the ring's load to distinct
 * destinations per second whatever the attempt rate, and it is short enough
 * that a reject-mode retry whose first event was muted (another process of
 * the operation hit the same destination just before) meets a fresh fault
 * within a second.
 */
#define GS_FAULT_RL_WINDOW_NS 1000000000ull
/* Distinct keys remembered. Only an extra event, never a lost one, follows
 * an eviction, so this needs to cover what the ring carries per window
 * (18,724), not every destination ever seen. */
#define GS_FAULT_RL_MAX 32768

#endif
