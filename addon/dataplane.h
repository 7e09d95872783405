/* SPDX-License-Identifier: Apache-2.0 */
/* Plain-C data plane over libbpf: no V8 here (its nan glue is dataplane_glue.cc). */
#ifndef GS_DATAPLANE_H
#define GS_DATAPLANE_H

#include <stddef.h>
#include <stdint.h>
#include "../bpf/gensee_abi.h"
#include "common.h" /* struct gs_err, clocks */

#ifdef __cplusplus
extern "C" {
#endif

struct gs_attach_opts {
	int emit_events;
	int count_allows;
	/* the cgroup's level below the cgroup2 root (its parent's + 1) */
	unsigned op_level;
	/* when set: the guard's pin dir and the parent cgroup it is attached
	 * to (made on first use); the operation's cgroup is marked live in it */
	const char *guard_dir;
	const char *guard_cgroup;
};

/* An operation's data plane, opened from its pins. */
struct gs_dp {
	int leases_fd;
	int counters_fd;
	int events_fd;
	int stats_fd;
	int listen_fd;
	int unix_fd;
	int ncpus;
	char pin_dir[4096];
};

/* Programs attached to an operation's cgroup, each held by a pinned link:
 * cgroup/connect4|6, cgroup/sendmsg4|6, cgroup_skb/egress, cgroup/sock_create,
 * cgroup/setsockopt, cgroup/bind4|6, cgroup/connect_unix, cgroup/sendmsg_unix. */
#define GS_LINKS 11

/* Load the programs, pin maps and links under pin_dir, attach to cgroup. */
int gs_dp_attach(const char *pin_dir, const char *cgroup_path, const struct gs_attach_opts *opts, struct gs_err *err);
/* Detach the links pinned under pin_dir, unpin everything, remove pin_dir.
 * Missing pins are tolerated (a killed run may have left half of them). */
int gs_dp_detach(const char *pin_dir, struct gs_err *err);
/* Open an attached operation's maps from its pins. */
int gs_dp_open(struct gs_dp *dp, const char *pin_dir, struct gs_err *err);
void gs_dp_close(struct gs_dp *dp);
/* 1 when the kernel has cgroup/connect_unix and cgroup/sendmsg_unix (6.7);
 * before, those two programs are neither loaded nor attached, and gensee
 * run refuses AF_UNIX sockets instead (socketpair() stays) */
int gs_dp_unix_hooks(void);
/* 1 if all GS_LINKS links (but the unix ones before 6.7) are pinned */
int gs_dp_links_present(const char *pin_dir);
/* The pin name of link i (0 <= i < GS_LINKS) under an operation's pin dir. */
const char *gs_dp_link_name(int i);

/* Every user-space write of an operation's lease map (a put, a top-up, a
 * removal, the sweep's compare-and-delete) holds this process-wide lock: a
 * grant's put runs on the fault log's syncer thread (sup_server.c
 * gs_sup_server_answer_grant), the others on the event loop, and a
 * compare-and-delete must not remove an entry put between its look and
 * its delete, nor a put's read-back see another writer's entry. The hooks
 * only spend and give back uses of an entry; they never take it. */
void gs_lease_lock(void);
void gs_lease_unlock(void);

/* Put (insert or replace) an exact lease and read it back, under the
 * lock: 0 with *back the entry as the kernel holds it right after, -1
 * with err (ENOENT: not found after the put). */
int gs_lease_put_fd(int leases_fd, const struct gs_lease_key *k, const struct gs_lease_value *v,
		    struct gs_lease_value *back, struct gs_err *err);
int gs_lease_put(struct gs_dp *dp, const struct gs_lease_key *k, const struct gs_lease_value *v,
		 struct gs_lease_value *back, struct gs_err *err);
/* the lease map's fd of an open dp (owned by dp) */
int gs_dp_leases_fd(const struct gs_dp *dp);
/* listen and unix rules (gs_listen_key / gs_unix_key): add or remove one */
#define GS_RULE_LISTEN 0
#define GS_RULE_UNIX 1
int gs_rule_set(struct gs_dp *dp, int kind, const void *key, int present, struct gs_err *err);
/* remove every rule of a kind */
int gs_rule_clear(struct gs_dp *dp, int kind, struct gs_err *err);

/* 1 found, 0 absent, -1 error */
int gs_lease_get(struct gs_dp *dp, const struct gs_lease_key *k, struct gs_lease_value *v, struct gs_err *err);
/* 1 removed, 0 absent, -1 error */
int gs_lease_del(struct gs_dp *dp, const struct gs_lease_key *k, struct gs_err *err);

/* Dump a hash map into caller-owned arrays (malloc'd; caller frees).
 * Uses BPF_MAP_LOOKUP_BATCH, falling back to get_next_key where the
 * kernel lacks it. */
int gs_lease_list(struct gs_dp *dp, struct gs_lease_key **keys, struct gs_lease_value **vals, size_t *n,
		  struct gs_err *err);
/* One part of a lease-map dump, for a reading split over several turns of
 * the event loop (src/envelope/lease-scan.ts): at most about max entries
 * (whole hash buckets; more when one bucket is larger), from cursor (-1: the
 * start) on. *next is the cursor of the next part, -1 after the last. Parts
 * taken at different instants are no snapshot: an entry added or removed in
 * between may be missed, none is seen twice (a bucket is read whole, and an
 * entry never changes bucket). Without batch lookups in the kernel the first
 * part is the whole map. */
int gs_lease_list_part(struct gs_dp *dp, int64_t cursor, size_t max, struct gs_lease_key **keys,
		       struct gs_lease_value **vals, size_t *n, int64_t *next, struct gs_err *err);
/* gs_lease_del_if's outcome for each key */
#define GS_DEL_IF_ABSENT 0  /* no entry for the key */
#define GS_DEL_IF_REMOVED 1 /* it was the expected one, dead: removed */
#define GS_DEL_IF_KEPT 2    /* not the expected entry, or alive: left alone */
#define GS_DEL_IF_FAILED 3  /* the lookup or the delete failed: left alone */
/* Compare-and-delete, for the expiry sweep: remove each keys[i] whose entry
 * still has expect[i]'s generation, expiry and flags and is dead at
 * now_boot_ns (gs_lease_expired or gs_lease_spent, on the value read now).
 * The hooks only spend and give back uses, which never revives a dead
 * entry; every other writer holds the lease lock, taken here from each
 * look to its delete, so nothing replaces the entry in between. out[i]: GS_DEL_IF_*. Returns how many failed. */
size_t gs_lease_del_if(struct gs_dp *dp, const struct gs_lease_key *keys, const struct gs_lease_value *expect, size_t n,
		       uint64_t now_boot_ns, uint8_t *out);
/* Counters with per-CPU values summed. */
int gs_counters_read(struct gs_dp *dp, struct gs_counter_key **keys, uint64_t **sums, size_t *n, struct gs_err *err);
/* Delete counters (of a retired generation, after its final harvest). */
int gs_counters_delete(struct gs_dp *dp, const struct gs_counter_key *keys, size_t n, size_t *deleted,
		       struct gs_err *err);
int gs_stats_read(struct gs_dp *dp, uint64_t out[GS_STAT_MAX], struct gs_err *err);

/* Ring-buffer fault events. fn is called once per gs_fault_event during
 * gs_events_consume(), with the record's ring position and the position
 * after it; poll gs_events_fd() for readiness. Nothing read is released to
 * the kernel until gs_events_ack() names the position after it: a consumer
 * that dies first leaves it to the next (see dataplane.c). */
typedef void (*gs_event_fn)(void *arg, uint64_t pos, uint64_t end, const struct gs_fault_event *ev);
struct gs_events;
struct gs_events_pos {
	uint32_t map_id;   /* the ring map's id: positions are the map's own */
	uint64_t consumed; /* the kernel's consumer position (acked) */
	uint64_t produced; /* the producer position */
	uint64_t read;     /* read by this consumer */
};
struct gs_events *gs_events_open(struct gs_dp *dp, gs_event_fn fn, void *arg, struct gs_err *err);
int gs_events_fd(struct gs_events *ev);
int gs_events_consume(struct gs_events *ev, struct gs_err *err);
/* Release everything before pos (the end of a record read) to the kernel. */
int gs_events_ack(struct gs_events *ev, uint64_t pos, struct gs_err *err);
void gs_events_state(struct gs_events *ev, struct gs_events_pos *out);
void gs_events_close(struct gs_events *ev);

#ifdef __cplusplus
}
#endif
#endif
