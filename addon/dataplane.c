// SPDX-License-Identifier: Apache-2.0
/*
 * Data plane over libbpf: load/attach/pin, re-open from pins, lease and
 * counter map access. Every failure fills a gs_err naming the call and the
 * map/program/path; the glue turns it into an errno exception.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <libgen.h>
#include <sys/file.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dataplane.h"
#include "gensee.skel.h"

/* Pinned links, one per program, in gs_dp_attach's order of programs. */
static const char *const gs_link_names[GS_LINKS] = {
	"link_connect4",   "link_connect6",     "link_sendmsg4",     "link_sendmsg6",
	"link_udp_egress", "link_sock_create",  "link_setsockopt",   "link_bind4",
	"link_bind6",      "link_connect_unix", "link_sendmsg_unix",
};
#define GS_MAPS 6
static const char *const gs_map_names[GS_MAPS] = {
	GS_MAP_LEASES, GS_MAP_COUNTERS, GS_MAP_EVENTS, GS_MAP_STATS, GS_MAP_LISTEN, GS_MAP_UNIX,
};

/* The guard's pinned links (a subset of the programs, in guard mode) and its
 * one pinned map, under GS_GUARD_PREFIX<parent cgroup id> beside the
 * operations' pin dirs (an operation id never starts with '_'). */
#define GS_GUARD_PREFIX "_guard-"
#define GS_GUARD_LINKS 7
static const char *const gs_guard_link_names[GS_GUARD_LINKS] = {
	"link_connect4",   "link_connect6",     "link_sendmsg4",     "link_sendmsg6",
	"link_udp_egress", "link_connect_unix", "link_sendmsg_unix",
};

/* the guard's pins: its links, then its two maps */
#define GS_GUARD_PINS (GS_GUARD_LINKS + 2)
static const char *gs_guard_pin_name(int i)
{
	return i < GS_GUARD_LINKS ? gs_guard_link_names[i] : i == GS_GUARD_LINKS ? GS_MAP_LIVE : GS_MAP_SK_OP;
}

/* attach types libbpf 1.1's headers do not name yet (Linux 6.7) */
#define GS_ATTACH_UNIX_CONNECT 49 /* BPF_CGROUP_UNIX_CONNECT */
#define GS_ATTACH_UNIX_SENDMSG 50 /* BPF_CGROUP_UNIX_SENDMSG */

int gs_dp_unix_hooks(void)
{
	static int known = -1;
	struct utsname u;
	int major = 0, minor = 0;
	const char *force = getenv("GENSEE_NO_UNIX_HOOKS");

	if (force && force[0] == '1')
		return 0; /* tests: behave as a kernel before 6.7 */
	if (known < 0)
		known = uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
			(major > 6 || (major == 6 && minor >= 7));
	return known;
}

/* the unix programs are the last two of both link lists: left out before 6.7 */
static int gs_links_n(void)
{
	return gs_dp_unix_hooks() ? GS_LINKS : GS_LINKS - 2;
}

static void gs_set_unix_attach(struct gensee_bpf *skel)
{
	if (!gs_dp_unix_hooks()) {
		bpf_program__set_autoload(skel->progs.gs_connect_unix, false);
		bpf_program__set_autoload(skel->progs.gs_sendmsg_unix, false);
		return;
	}
	bpf_program__set_expected_attach_type(skel->progs.gs_connect_unix,
					      (enum bpf_attach_type)GS_ATTACH_UNIX_CONNECT);
	bpf_program__set_expected_attach_type(skel->progs.gs_sendmsg_unix,
					      (enum bpf_attach_type)GS_ATTACH_UNIX_SENDMSG);
}

/* GENSEE_TRACE_STARTUP=1: the parts of an attach on stderr, one line
 * ("gensee-trace-attach: ..."), for a person profiling the start-up. */
static int gs_trace_on(void)
{
	const char *v = getenv("GENSEE_TRACE_STARTUP");

	return v && v[0] == '1' && v[1] == '\0';
}

static double gs_trace_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void gs_path(char *out, size_t n, const char *dir, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* Remove every pin we might have made; tolerate the ones that are gone. */
static int gs_unpin_all(const char *pin_dir, int detach_links, struct gs_err *err)
{
	char p[4352];
	int i, fd;

	for (i = 0; i < GS_LINKS; i++) {
		gs_path(p, sizeof(p), pin_dir, gs_link_names[i]);
		if (detach_links) {
			fd = bpf_obj_get(p);
			if (fd >= 0) {
				/* Detach explicitly: a stray fd elsewhere must not keep
				 * the program on the cgroup after an operator detaches. */
				if (bpf_link_detach(fd) && errno != EINVAL && errno != ENOLINK) {
					int e = errno;
					close(fd);
					return gs_errf(err, e, "bpf_link_detach", "%s", p);
				}
				close(fd);
			}
		}
		if (unlink(p) && errno != ENOENT)
			return gs_errf(err, errno, "unlink", "%s", p);
	}
	for (i = 0; i < GS_MAPS; i++) {
		gs_path(p, sizeof(p), pin_dir, gs_map_names[i]);
		if (unlink(p) && errno != ENOENT)
			return gs_errf(err, errno, "unlink", "%s", p);
	}
	if (rmdir(pin_dir) && errno != ENOENT)
		return gs_errf(err, errno, "rmdir", "%s", pin_dir);
	return 0;
}

/* The cgroup an operation's pinned links are attached to (0 if none is). */
static __u64 gs_pinned_cgroup_id(const char *pin_dir)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char p[4352];
	int fd;

	gs_path(p, sizeof(p), pin_dir, gs_link_names[0]);
	fd = bpf_obj_get(p);
	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_LINK_TYPE_CGROUP)
		info.cgroup.cgroup_id = 0;
	close(fd);
	return info.cgroup.cgroup_id;
}

/* Add (live = 1) or remove an operation's cgroup in one guard's live map. */
static int gs_guard_mark(const char *guard_dir, __u64 cgid, int live, struct gs_err *err)
{
	char p[4352];
	__u8 one = 1;
	int fd, rc = 0;

	gs_path(p, sizeof(p), guard_dir, GS_MAP_LIVE);
	fd = bpf_obj_get(p);
	if (fd < 0) {
		if (!live && errno == ENOENT)
			return 0;
		return gs_errf(err, errno, "bpf_obj_get", "guard map %s", p);
	}
	if (live ? bpf_map_update_elem(fd, &cgid, &one, BPF_ANY) : bpf_map_delete_elem(fd, &cgid) && errno != ENOENT)
		rc = gs_errf(err, errno, live ? "bpf_map_update_elem" : "bpf_map_delete_elem", "guard map %s", p);
	close(fd);
	return rc;
}

/* Take the operation's cgroup out of every guard beside pin_dir: from now
 * on a socket born in it sends nothing. */
static int gs_guard_forget(const char *pin_dir, __u64 cgid, struct gs_err *err)
{
	char parent[4096], p[4352];
	struct dirent *d;
	DIR *dir;
	int rc = 0;

	if (!cgid)
		return 0;
	snprintf(parent, sizeof(parent), "%s", pin_dir);
	dir = opendir(dirname(parent));
	if (!dir)
		return 0;
	while (!rc && (d = readdir(dir))) {
		if (strncmp(d->d_name, GS_GUARD_PREFIX, strlen(GS_GUARD_PREFIX)))
			continue;
		gs_path(p, sizeof(p), parent, d->d_name);
		rc = gs_guard_mark(p, cgid, 0, err);
	}
	closedir(dir);
	return rc;
}

int gs_dp_detach(const char *pin_dir, struct gs_err *err)
{
	__u64 cgid = gs_pinned_cgroup_id(pin_dir);

	if (gs_unpin_all(pin_dir, 1, err))
		return -1;
	return gs_guard_forget(pin_dir, cgid, err);
}

/*
 * The guard of every operation below parent_cgroup: the egress and AF_UNIX
 * programs in guard mode, attached to the parent once and pinned in
 * guard_dir, with the live map each operation's attach writes to. Idempotent
 * and safe against a concurrent attach (flock on a lock file in /run); a
 * half-made guard (a killed attach) is removed and made again.
 */
/*
 * A guard is never removed by gensee: a socket that outlived its operation
 * may be held anywhere for any time, and the guard is what keeps it from
 * sending. gensee run leaves its parent cgroup in place for that reason.
 * Should someone remove the parent anyway, the next run makes a new parent
 * (a new id) and a new guard; the old one stays pinned, guarding whatever
 * still references the old parent.
 */
static int gs_guard_mark(const char *guard_dir, __u64 cgid, int live, struct gs_err *err);

static int gs_guard_ensure(const char *guard_dir, const char *parent_cgroup, __u32 op_level, __u64 cgid,
			   struct gs_err *err)
{
	struct gensee_bpf *skel = NULL;
	struct bpf_program *progs[GS_GUARD_LINKS];
	struct bpf_link *link = NULL;
	char p[4352];
	int lock = -1, cg_fd = -1, i, present = 1, rc = -1, fd;

	if (mkdir("/run/gensee", 0700) && errno != EEXIST)
		return gs_errf(err, errno, "mkdir", "/run/gensee");
	lock = open("/run/gensee/guard.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0)
		return gs_errf(err, errno, "open", "/run/gensee/guard.lock");
	if (flock(lock, LOCK_EX)) {
		gs_errf(err, errno, "flock", "/run/gensee/guard.lock");
		goto out;
	}
	for (i = 0; i < GS_GUARD_PINS && present; i++) {
		if (!gs_dp_unix_hooks() && i >= GS_GUARD_LINKS - 2 && i < GS_GUARD_LINKS)
			continue;
		gs_path(p, sizeof(p), guard_dir, gs_guard_pin_name(i));
		fd = bpf_obj_get(p);
		present = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	if (present)
		goto mark;
	/* half made (or never): start clean; the live map starts empty, and
	 * every operation attached later marks itself */
	for (i = 0; i < GS_GUARD_PINS; i++) {
		gs_path(p, sizeof(p), guard_dir, gs_guard_pin_name(i));
		fd = i < GS_GUARD_LINKS ? bpf_obj_get(p) : -1;
		if (fd >= 0) {
			bpf_link_detach(fd);
			close(fd);
		}
		if (unlink(p) && errno != ENOENT) {
			gs_errf(err, errno, "unlink", "%s", p);
			goto out;
		}
	}
	if (mkdir(guard_dir, 0700) && errno != EEXIST) {
		gs_errf(err, errno, "mkdir", "%s", guard_dir);
		goto out;
	}
	cg_fd = open(parent_cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		gs_errf(err, errno, "open", "cgroup %s", parent_cgroup);
		goto out;
	}
	skel = gensee_bpf__open();
	if (!skel) {
		gs_errf(err, errno, "bpf_object__open", "gensee.bpf.o (guard)");
		goto out;
	}
	skel->rodata->gs_guard = 1;
	skel->rodata->gs_op_level = op_level;
	skel->rodata->gs_emit_events = 0;
	gs_set_unix_attach(skel);
	if (gensee_bpf__load(skel)) {
		gs_errf(err, errno, "bpf_object__load", "gensee guard programs (verifier log above on stderr)");
		goto out;
	}
	gs_path(p, sizeof(p), guard_dir, GS_MAP_LIVE);
	if (bpf_map__pin(skel->maps.gs_live_v1, p)) {
		gs_errf(err, errno, "bpf_obj_pin", "map %s", p);
		goto out;
	}
	gs_path(p, sizeof(p), guard_dir, GS_MAP_SK_OP);
	if (bpf_map__pin(skel->maps.gs_sk_op_v1, p)) {
		gs_errf(err, errno, "bpf_obj_pin", "map %s", p);
		goto out;
	}
	progs[0] = skel->progs.gs_connect4;
	progs[1] = skel->progs.gs_connect6;
	progs[2] = skel->progs.gs_sendmsg4;
	progs[3] = skel->progs.gs_sendmsg6;
	progs[4] = skel->progs.gs_udp_egress;
	progs[5] = skel->progs.gs_connect_unix;
	progs[6] = skel->progs.gs_sendmsg_unix;
	for (i = 0; i < GS_GUARD_LINKS - (gs_dp_unix_hooks() ? 0 : 2); i++) {
		link = bpf_program__attach_cgroup(progs[i], cg_fd);
		if (!link) {
			gs_errf(err, errno, "bpf_link_create", "guard program %s on cgroup %s",
				bpf_program__name(progs[i]), parent_cgroup);
			goto out;
		}
		gs_path(p, sizeof(p), guard_dir, gs_guard_link_names[i]);
		if (bpf_link__pin(link, p)) {
			gs_errf(err, errno, "bpf_obj_pin", "link %s", p);
			bpf_link__destroy(link);
			goto out;
		}
		bpf_link__destroy(link); /* the pin holds it */
	}
mark:
	/* under the lock, so the guard a concurrent attach makes is the one marked */
	if (gs_guard_mark(guard_dir, cgid, 1, err))
		goto out;
	rc = 0;
out:
	if (rc && skel) {
		/* leave nothing half made: a guard is whole or absent */
		for (i = 0; i < GS_GUARD_PINS; i++) {
			gs_path(p, sizeof(p), guard_dir, gs_guard_pin_name(i));
			fd = i < GS_GUARD_LINKS ? bpf_obj_get(p) : -1;
			if (fd >= 0) {
				bpf_link_detach(fd);
				close(fd);
			}
			unlink(p);
		}
	}
	gensee_bpf__destroy(skel);
	if (cg_fd >= 0)
		close(cg_fd);
	close(lock); /* releases the flock */
	return rc;
}

int gs_dp_attach(const char *pin_dir, const char *cgroup_path, const struct gs_attach_opts *opts, struct gs_err *err)
{
	struct gensee_bpf *skel = NULL;
	struct bpf_program *progs[GS_LINKS];
	struct bpf_link *links[GS_LINKS] = {};
	struct bpf_map *maps[GS_MAPS];
	char p[4352];
	int cg_fd = -1, i, rc = -1;
	struct gs_err ignored;
	int trace = gs_trace_on();
	double t0 = trace ? gs_trace_ms() : 0, t_open = 0, t_guard = 0, t_load = 0, t_agg = 0, t_pins = 0;

	cg_fd = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0)
		return gs_errf(err, errno, "open", "cgroup %s", cgroup_path);
	if (mkdir(pin_dir, 0700)) {
		int e = errno;
		close(cg_fd);
		if (e == EEXIST)
			return gs_errf(err, e, "mkdir", "operation already attached: %s exists", pin_dir);
		return gs_errf(err, e, "mkdir", "%s", pin_dir);
	}

	skel = gensee_bpf__open();
	if (!skel) {
		gs_errf(err, errno, "bpf_object__open", "gensee.bpf.o (embedded skeleton)");
		goto out;
	}
	if (trace)
		t_open = gs_trace_ms();
	skel->rodata->gs_emit_events = opts->emit_events ? 1 : 0;
	skel->rodata->gs_count_allows = opts->count_allows ? 1 : 0;
	gs_set_unix_attach(skel);
	{
		struct stat cst;

		if (fstat(cg_fd, &cst)) {
			gs_errf(err, errno, "fstat", "cgroup %s", cgroup_path);
			goto out;
		}
		skel->rodata->gs_op_cgid = (__u64)cst.st_ino; /* a cgroup2 directory's inode is its id */
		skel->rodata->gs_op_level = opts->op_level;
		if (opts->guard_dir && opts->guard_dir[0]) {
			int sk_fd;

			if (gs_guard_ensure(opts->guard_dir, opts->guard_cgroup, opts->op_level, (__u64)cst.st_ino,
					    err))
				goto out;
			/* tag sockets in the guard's own storage (gs_guard_sock) */
			gs_path(p, sizeof(p), opts->guard_dir, GS_MAP_SK_OP);
			sk_fd = bpf_obj_get(p);
			if (sk_fd < 0) {
				gs_errf(err, errno, "bpf_obj_get", "guard map %s", p);
				goto out;
			}
			if (bpf_map__reuse_fd(skel->maps.gs_sk_op_v1, sk_fd)) {
				gs_errf(err, errno, "bpf_map__reuse_fd", "guard map %s", p);
				close(sk_fd);
				goto out;
			}
			close(sk_fd);
		}
	}
	if (trace)
		t_guard = gs_trace_ms();
	if (gensee_bpf__load(skel)) {
		gs_errf(err, errno, "bpf_object__load", "gensee programs (verifier log above on stderr)");
		goto out;
	}
	if (trace)
		t_load = gs_trace_ms();

	/* per-verdict aggregate counters: present before the first call, so a
	 * full map still counts every verdict (see gs_count) */
	{
		int ncpus = libbpf_num_possible_cpus();
		__u64 *zero = ncpus > 0 ? calloc((size_t)ncpus, sizeof(__u64)) : NULL;
		struct gs_counter_key agg;
		__u8 vd;

		if (!zero) {
			gs_errf(err, ncpus < 0 ? ncpus : ENOMEM, "calloc", "aggregate counters of %s", GS_MAP_COUNTERS);
			goto out;
		}
		for (vd = 0; vd < GS_VERDICT_MAX; vd++) {
			memset(&agg, 0, sizeof(agg));
			agg.verdict = vd;
			if (bpf_map_update_elem(bpf_map__fd(skel->maps.gs_counters_v1), &agg, zero, BPF_NOEXIST)) {
				gs_errf(err, errno, "bpf_map_update_elem", "aggregate counter in map %s",
					GS_MAP_COUNTERS);
				free(zero);
				goto out;
			}
		}
		free(zero);
	}
	if (trace)
		t_agg = gs_trace_ms();

	maps[0] = skel->maps.gs_leases_v1;
	maps[1] = skel->maps.gs_counters_v1;
	maps[2] = skel->maps.gs_events_v1;
	maps[3] = skel->maps.gs_stats_v1;
	maps[4] = skel->maps.gs_listen_v1;
	maps[5] = skel->maps.gs_unix_v1;
	for (i = 0; i < GS_MAPS; i++) {
		gs_path(p, sizeof(p), pin_dir, gs_map_names[i]);
		if (bpf_map__pin(maps[i], p)) {
			gs_errf(err, errno, "bpf_obj_pin", "map %s at %s", gs_map_names[i], p);
			goto out;
		}
	}
	if (trace)
		t_pins = gs_trace_ms();

	progs[0] = skel->progs.gs_connect4;
	progs[1] = skel->progs.gs_connect6;
	progs[2] = skel->progs.gs_sendmsg4;
	progs[3] = skel->progs.gs_sendmsg6;
	progs[4] = skel->progs.gs_udp_egress;
	progs[5] = skel->progs.gs_sock_create;
	progs[6] = skel->progs.gs_setsockopt;
	progs[7] = skel->progs.gs_bind4;
	progs[8] = skel->progs.gs_bind6;
	progs[9] = skel->progs.gs_connect_unix;
	progs[10] = skel->progs.gs_sendmsg_unix;
	for (i = 0; i < gs_links_n(); i++) {
		links[i] = bpf_program__attach_cgroup(progs[i], cg_fd);
		if (!links[i]) {
			gs_errf(err, errno, "bpf_link_create", "program %s on cgroup %s", bpf_program__name(progs[i]),
				cgroup_path);
			goto out;
		}
		gs_path(p, sizeof(p), pin_dir, gs_link_names[i]);
		if (bpf_link__pin(links[i], p)) {
			gs_errf(err, errno, "bpf_obj_pin", "link %s at %s", gs_link_names[i], p);
			goto out;
		}
	}
	rc = 0;
	if (trace) {
		double t_end = gs_trace_ms();

		fprintf(stderr,
			"gensee-trace-attach: open %.1f ms, guard %.1f ms, load (vmlinux BTF, maps, verifier) %.1f ms, "
			"aggregate counters %.1f ms, map pins %.1f ms, %d links attached and pinned %.1f ms; total %.1f ms\n",
			t_open - t0, t_guard - t_open, t_load - t_guard, t_agg - t_load, t_pins - t_agg, gs_links_n(),
			t_end - t_pins, t_end - t0);
	}
out:
	/* Closing our link fds leaves the pinned links attached: the boundary
	 * outlives this process by design. */
	for (i = 0; i < GS_LINKS; i++)
		if (links[i])
			bpf_link__destroy(links[i]);
	gensee_bpf__destroy(skel);
	close(cg_fd);
	if (rc)
		gs_unpin_all(pin_dir, 1, &ignored);
	return rc;
}

int gs_dp_links_present(const char *pin_dir)
{
	char p[4352];
	int i, fd;

	for (i = 0; i < gs_links_n(); i++) {
		gs_path(p, sizeof(p), pin_dir, gs_link_names[i]);
		fd = bpf_obj_get(p);
		if (fd < 0)
			return 0;
		close(fd);
	}
	return 1;
}

const char *gs_dp_link_name(int i)
{
	return i >= 0 && i < GS_LINKS ? gs_link_names[i] : NULL;
}

void gs_dp_close(struct gs_dp *dp)
{
	int *fds[GS_MAPS] = { &dp->leases_fd, &dp->counters_fd, &dp->events_fd,
			      &dp->stats_fd,  &dp->listen_fd,   &dp->unix_fd };
	int i;

	for (i = 0; i < GS_MAPS; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int gs_dp_open(struct gs_dp *dp, const char *pin_dir, struct gs_err *err)
{
	int *fds[GS_MAPS] = { &dp->leases_fd, &dp->counters_fd, &dp->events_fd,
			      &dp->stats_fd,  &dp->listen_fd,   &dp->unix_fd };
	char p[4352];
	int i, ncpus;

	for (i = 0; i < GS_MAPS; i++)
		*fds[i] = -1;
	snprintf(dp->pin_dir, sizeof(dp->pin_dir), "%s", pin_dir);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return gs_errf(err, ncpus, "libbpf_num_possible_cpus", "/sys/devices/system/cpu/possible");
	dp->ncpus = ncpus;
	for (i = 0; i < GS_MAPS; i++) {
		gs_path(p, sizeof(p), pin_dir, gs_map_names[i]);
		*fds[i] = bpf_obj_get(p);
		if (*fds[i] < 0) {
			int e = errno;
			gs_dp_close(dp);
			return gs_errf(err, e, "bpf_obj_get", "map %s", p);
		}
	}
	return 0;
}

static pthread_mutex_t lease_mu = PTHREAD_MUTEX_INITIALIZER;

void gs_lease_lock(void)
{
	pthread_mutex_lock(&lease_mu);
}

void gs_lease_unlock(void)
{
	pthread_mutex_unlock(&lease_mu);
}

int gs_dp_leases_fd(const struct gs_dp *dp)
{
	return dp->leases_fd;
}

int gs_lease_put_fd(int leases_fd, const struct gs_lease_key *k, const struct gs_lease_value *v,
		    struct gs_lease_value *back, struct gs_err *err)
{
	int rc = 0;

	gs_lease_lock();
	if (bpf_map_update_elem(leases_fd, k, v, BPF_ANY))
		rc = gs_errf(err, errno, "bpf_map_update_elem", "map %s", GS_MAP_LEASES);
	else if (bpf_map_lookup_elem(leases_fd, k, back))
		rc = gs_errf(err, errno, "bpf_map_lookup_elem", "map %s: the lease just put", GS_MAP_LEASES);
	gs_lease_unlock();
	return rc;
}

int gs_lease_put(struct gs_dp *dp, const struct gs_lease_key *k, const struct gs_lease_value *v,
		 struct gs_lease_value *back, struct gs_err *err)
{
	return gs_lease_put_fd(dp->leases_fd, k, v, back, err);
}

int gs_rule_set(struct gs_dp *dp, int kind, const void *key, int present, struct gs_err *err)
{
	int fd = kind == GS_RULE_LISTEN ? dp->listen_fd : dp->unix_fd;
	const char *name = kind == GS_RULE_LISTEN ? GS_MAP_LISTEN : GS_MAP_UNIX;
	__u8 one = 1;

	if (present ? bpf_map_update_elem(fd, key, &one, BPF_ANY) == 0 : bpf_map_delete_elem(fd, key) == 0)
		return 0;
	if (!present && errno == ENOENT)
		return 0;
	return gs_errf(err, errno, present ? "bpf_map_update_elem" : "bpf_map_delete_elem", "map %s", name);
}

int gs_rule_clear(struct gs_dp *dp, int kind, struct gs_err *err)
{
	int fd = kind == GS_RULE_LISTEN ? dp->listen_fd : dp->unix_fd;
	const char *name = kind == GS_RULE_LISTEN ? GS_MAP_LISTEN : GS_MAP_UNIX;
	struct gs_unix_key k; /* the larger of the two keys */

	/* always delete the first key: deleting while walking restarts anyway */
	while (bpf_map_get_next_key(fd, NULL, &k) == 0) {
		if (bpf_map_delete_elem(fd, &k) && errno != ENOENT)
			return gs_errf(err, errno, "bpf_map_delete_elem", "map %s", name);
	}
	if (errno != ENOENT)
		return gs_errf(err, errno, "bpf_map_get_next_key", "map %s", name);
	return 0;
}

int gs_lease_get(struct gs_dp *dp, const struct gs_lease_key *k, struct gs_lease_value *v, struct gs_err *err)
{
	if (bpf_map_lookup_elem(dp->leases_fd, k, v) == 0)
		return 1;
	if (errno == ENOENT)
		return 0;
	return gs_errf(err, errno, "bpf_map_lookup_elem", "map %s", GS_MAP_LEASES);
}

int gs_lease_del(struct gs_dp *dp, const struct gs_lease_key *k, struct gs_err *err)
{
	int rc, e;

	gs_lease_lock();
	rc = bpf_map_delete_elem(dp->leases_fd, k);
	e = errno;
	gs_lease_unlock();
	if (rc == 0)
		return 1;
	if (e == ENOENT)
		return 0;
	return gs_errf(err, e, "bpf_map_delete_elem", "map %s", GS_MAP_LEASES);
}

/* Double the room of a dump's keys and values: 0, or -1 out of memory (what
 * is held then stays for the caller to free). */
static int gs_dump_grow(char **keys, char **vals, size_t *cap, size_t ksize, size_t vsize)
{
	char *nk = realloc(*keys, *cap * 2 * ksize), *nv;

	if (!nk)
		return -1;
	*keys = nk;
	nv = realloc(*vals, *cap * 2 * vsize);
	if (!nv)
		return -1;
	*vals = nv;
	*cap *= 2;
	return 0;
}

/*
 * Generic hash-map dump. vsize is the per-element value size as the syscall
 * sees it (already multiplied by ncpus for per-CPU maps).
 */
static int gs_dump(int fd, const char *name, size_t ksize, size_t vsize, void **keys_out, void **vals_out,
		   size_t *n_out, struct gs_err *err)
{
	size_t cap = 1024, n = 0;
	char *keys = malloc(cap * ksize), *vals = malloc(cap * vsize);
	__u32 batch_in = 0, batch_out = 0;
	int first = 1, done = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (!keys || !vals)
		goto nomem;
	while (!done) {
		__u32 count;
		int r;

		if (cap - n < 256 && gs_dump_grow(&keys, &vals, &cap, ksize, vsize))
			goto nomem;
		count = (__u32)(cap - n);
		r = bpf_map_lookup_batch(fd, first ? NULL : &batch_in, &batch_out, keys + n * ksize, vals + n * vsize,
					 &count, &opts);
		if (r && errno != ENOENT) {
			if (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP)
				goto slow; /* kernel without batch ops for this map */
			if (errno == ENOSPC) {
				/* a bucket larger than our room: grow and retry */
				if (gs_dump_grow(&keys, &vals, &cap, ksize, vsize))
					goto nomem;
				continue;
			}
			gs_errf(err, errno, "bpf_map_lookup_batch", "map %s", name);
			goto fail;
		}
		n += count;
		if (r)
			done = 1; /* ENOENT: last batch */
		batch_in = batch_out;
		first = 0;
	}
	*keys_out = keys;
	*vals_out = vals;
	*n_out = n;
	return 0;

slow:
	n = 0;
	{
		char *cur = malloc(ksize), *next = malloc(ksize);
		int have = 0;

		if (!cur || !next) {
			free(cur);
			free(next);
			goto nomem;
		}
		for (;;) {
			if (bpf_map_get_next_key(fd, have ? cur : NULL, next)) {
				if (errno == ENOENT)
					break;
				gs_errf(err, errno, "bpf_map_get_next_key", "map %s", name);
				free(cur);
				free(next);
				goto fail;
			}
			if (n == cap && gs_dump_grow(&keys, &vals, &cap, ksize, vsize)) {
				free(cur);
				free(next);
				goto nomem;
			}
			if (bpf_map_lookup_elem(fd, next, vals + n * vsize) == 0) {
				memcpy(keys + n * ksize, next, ksize);
				n++;
			} /* else: deleted under us; skip */
			memcpy(cur, next, ksize);
			have = 1;
		}
		free(cur);
		free(next);
	}
	*keys_out = keys;
	*vals_out = vals;
	*n_out = n;
	return 0;
nomem:
	gs_errf(err, ENOMEM, "malloc", "dump of map %s", name);
fail:
	free(keys);
	free(vals);
	return -1;
}

int gs_lease_list(struct gs_dp *dp, struct gs_lease_key **keys, struct gs_lease_value **vals, size_t *n,
		  struct gs_err *err)
{
	return gs_dump(dp->leases_fd, GS_MAP_LEASES, sizeof(**keys), sizeof(**vals), (void **)keys, (void **)vals, n,
		       err);
}

int gs_lease_list_part(struct gs_dp *dp, int64_t cursor, size_t max, struct gs_lease_key **keys,
		       struct gs_lease_value **vals, size_t *n, int64_t *next, struct gs_err *err)
{
	size_t cap = max < 64 ? 64 : max;
	__u32 in = cursor < 0 ? 0 : (__u32)cursor, out = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	*keys = malloc(cap * sizeof(**keys));
	*vals = malloc(cap * sizeof(**vals));
	if (!*keys || !*vals)
		goto nomem;
	for (;;) {
		__u32 count = (__u32)cap;
		int r = bpf_map_lookup_batch(dp->leases_fd, cursor < 0 ? NULL : &in, &out, *keys, *vals, &count, &opts);

		if (r == 0 || errno == ENOENT) {
			*n = count;
			*next = r == 0 ? (int64_t)out : -1;
			return 0;
		}
		if (errno == ENOSPC) {
			/* one bucket larger than the room: grow and retry */
			char *k = (char *)*keys, *v = (char *)*vals;
			int g = gs_dump_grow(&k, &v, &cap, sizeof(**keys), sizeof(**vals));

			*keys = (struct gs_lease_key *)k;
			*vals = (struct gs_lease_value *)v;
			if (g)
				goto nomem;
			continue;
		}
		if (cursor < 0 && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP)) {
			/* kernel without batch ops for this map: the whole map, one part */
			free(*keys);
			free(*vals);
			*next = -1;
			return gs_lease_list(dp, keys, vals, n, err);
		}
		gs_errf(err, errno, "bpf_map_lookup_batch", "map %s", GS_MAP_LEASES);
		goto fail;
	}
nomem:
	gs_errf(err, ENOMEM, "malloc", "dump of map %s", GS_MAP_LEASES);
fail:
	free(*keys);
	free(*vals);
	*keys = NULL;
	*vals = NULL;
	return -1;
}

size_t gs_lease_del_if(struct gs_dp *dp, const struct gs_lease_key *keys, const struct gs_lease_value *expect, size_t n,
		       uint64_t now_boot_ns, uint8_t *out)
{
	size_t i, failed = 0;

	for (i = 0; i < n; i++) {
		const struct gs_lease_value *e = &expect[i];
		struct gs_lease_value v;

		/* the look and the delete under the lease lock: no put in between */
		gs_lease_lock();
		if (bpf_map_lookup_elem(dp->leases_fd, &keys[i], &v)) {
			out[i] = errno == ENOENT ? GS_DEL_IF_ABSENT : GS_DEL_IF_FAILED;
		} else if (v.generation != e->generation || v.expires_boot_ns != e->expires_boot_ns ||
			   v.flags != e->flags || !(gs_lease_expired(&v, now_boot_ns) || gs_lease_spent(&v))) {
			out[i] = GS_DEL_IF_KEPT;
		} else if (bpf_map_delete_elem(dp->leases_fd, &keys[i]) == 0) {
			out[i] = GS_DEL_IF_REMOVED;
		} else {
			out[i] = errno == ENOENT ? GS_DEL_IF_ABSENT : GS_DEL_IF_FAILED;
		}
		gs_lease_unlock();
		if (out[i] == GS_DEL_IF_FAILED)
			failed++;
	}
	return failed;
}

int gs_counters_read(struct gs_dp *dp, struct gs_counter_key **keys, uint64_t **sums, size_t *n, struct gs_err *err)
{
	uint64_t *percpu = NULL;
	size_t i, c, ncpus = (size_t)dp->ncpus;

	if (gs_dump(dp->counters_fd, GS_MAP_COUNTERS, sizeof(**keys), 8 * ncpus, (void **)keys, (void **)&percpu, n,
		    err))
		return -1;
	/* sum in place: sums[i] = Σ percpu[i*ncpus + c] */
	for (i = 0; i < *n; i++) {
		uint64_t s = 0;
		for (c = 0; c < ncpus; c++)
			s += percpu[i * ncpus + c];
		percpu[i] = s;
	}
	*sums = percpu;
	return 0;
}

int gs_counters_delete(struct gs_dp *dp, const struct gs_counter_key *keys, size_t n, size_t *deleted,
		       struct gs_err *err)
{
	size_t i;

	*deleted = 0;
	/* One key at a time: a batch delete stops at the first key that is
	 * already gone (ENOENT), and a counter that was never created or was
	 * deleted before is exactly that. n is small (one retired generation). */
	for (i = 0; i < n; i++) {
		if (bpf_map_delete_elem(dp->counters_fd, &keys[i]) == 0)
			(*deleted)++;
		else if (errno != ENOENT)
			return gs_errf(err, errno, "bpf_map_delete_elem", "map %s", GS_MAP_COUNTERS);
	}
	return 0;
}

int gs_stats_read(struct gs_dp *dp, uint64_t out[GS_STAT_MAX], struct gs_err *err)
{
	uint64_t *vals = calloc((size_t)dp->ncpus, 8);
	__u32 idx;
	int c;

	if (!vals)
		return gs_errf(err, ENOMEM, "calloc", "map %s", GS_MAP_STATS);
	for (idx = 0; idx < GS_STAT_MAX; idx++) {
		if (bpf_map_lookup_elem(dp->stats_fd, &idx, vals)) {
			int e = errno;
			free(vals);
			return gs_errf(err, e, "bpf_map_lookup_elem", "map %s", GS_MAP_STATS);
		}
		out[idx] = 0;
		for (c = 0; c < dp->ncpus; c++)
			out[idx] += vals[c];
	}
	free(vals);
	return 0;
}

/* The ring's consumer, without libbpf's ring_buffer: libbpf advances the
 * consumer position past each record as soon as its callback returns, so a
 * resolver killed between reading a record and writing its fault line lost
 * it without a trace (issue 28). Here the position the kernel may reuse
 * from (consumer_pos, in the map's first page, shared with every process
 * that maps it) moves only on gs_events_ack(), once the record's line is
 * durable; records read but not acked are read again by the next consumer
 * (the successor of a killed resolver replays them).
 *
 * Wake-ups: the kernel wakes the map's waiters when a record is committed
 * at the consumer position (adaptive notification), so while records are
 * read but not acked, later ones come without a wake-up. Each ack is
 * therefore followed by a read (gs_events_consume) that finds them. The map
 * fd is polled edge-triggered through an epoll fd of our own: polled level-
 * triggered it would be readable for as long as unacked records sit below
 * the producer position. */
struct gs_events {
	int epfd;
	size_t page;
	uint64_t mask;
	size_t data_sz;
	void *cons_map; /* rw: consumer_pos at offset 0 */
	void *prod_map; /* ro: producer_pos, then the data twice */
	uint64_t *cons_pos;
	uint64_t *prod_pos;
	uint8_t *data;
	uint64_t read_pos; /* next record to read (>= *cons_pos) */
	uint32_t map_id;
	gs_event_fn fn;
	void *arg;
};

struct gs_events *gs_events_open(struct gs_dp *dp, gs_event_fn fn, void *arg, struct gs_err *err)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	struct gs_events *ev = calloc(1, sizeof(*ev));

	if (!ev) {
		gs_errf(err, ENOMEM, "calloc", "ring buffer %s", GS_MAP_EVENTS);
		return NULL;
	}
	ev->epfd = -1;
	ev->fn = fn;
	ev->arg = arg;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(dp->events_fd, &info, &len)) {
		gs_errf(err, errno, "bpf_obj_get_info_by_fd", "map %s", GS_MAP_EVENTS);
		goto fail;
	}
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries || (info.max_entries & (info.max_entries - 1))) {
		gs_errf(err, EINVAL, "bpf_obj_get_info_by_fd", "map %s is not a ring buffer (type %u, size %u)",
			GS_MAP_EVENTS, info.type, info.max_entries);
		goto fail;
	}
	ev->map_id = info.id;
	ev->page = (size_t)sysconf(_SC_PAGESIZE);
	ev->data_sz = info.max_entries;
	ev->mask = info.max_entries - 1;
	ev->cons_map = mmap(NULL, ev->page, PROT_READ | PROT_WRITE, MAP_SHARED, dp->events_fd, 0);
	if (ev->cons_map == MAP_FAILED) {
		ev->cons_map = NULL;
		gs_errf(err, errno, "mmap", "consumer page of %s", GS_MAP_EVENTS);
		goto fail;
	}
	/* the data is mapped twice in a row: a record that wraps reads as one */
	ev->prod_map = mmap(NULL, ev->page + 2 * ev->data_sz, PROT_READ, MAP_SHARED, dp->events_fd, (off_t)ev->page);
	if (ev->prod_map == MAP_FAILED) {
		ev->prod_map = NULL;
		gs_errf(err, errno, "mmap", "data of %s", GS_MAP_EVENTS);
		goto fail;
	}
	ev->cons_pos = ev->cons_map;
	ev->prod_pos = ev->prod_map;
	ev->data = (uint8_t *)ev->prod_map + ev->page;
	ev->read_pos = __atomic_load_n(ev->cons_pos, __ATOMIC_ACQUIRE);
	ev->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ev->epfd < 0) {
		gs_errf(err, errno, "epoll_create1", "ring buffer %s", GS_MAP_EVENTS);
		goto fail;
	}
	if (epoll_ctl(ev->epfd, EPOLL_CTL_ADD, dp->events_fd, &e)) {
		gs_errf(err, errno, "epoll_ctl", "ring buffer %s", GS_MAP_EVENTS);
		goto fail;
	}
	return ev;
fail:
	gs_events_close(ev);
	return NULL;
}

int gs_events_fd(struct gs_events *ev)
{
	return ev->epfd;
}

int gs_events_consume(struct gs_events *ev, struct gs_err *err)
{
	struct epoll_event e;
	uint64_t prod;
	int n = 0;

	/* clear the edge: the next wake-up makes the fd readable again */
	while (epoll_wait(ev->epfd, &e, 1, 0) > 0)
		;
	(void)err;
	prod = __atomic_load_n(ev->prod_pos, __ATOMIC_ACQUIRE);
	while (ev->read_pos < prod) {
		const uint8_t *rec = ev->data + (ev->read_pos & ev->mask);
		uint32_t hdr = __atomic_load_n((const uint32_t *)rec, __ATOMIC_ACQUIRE);
		uint32_t sz;
		uint64_t next;

		if (hdr & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet committed: its commit wakes us or an ack finds it */
		sz = hdr & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		next = ev->read_pos + ((sz + BPF_RINGBUF_HDR_SZ + 7) & ~7u);
		if (!(hdr & BPF_RINGBUF_DISCARD_BIT) && sz >= sizeof(struct gs_fault_event)) {
			ev->fn(ev->arg, ev->read_pos, next, (const struct gs_fault_event *)(rec + BPF_RINGBUF_HDR_SZ));
			n++;
		}
		/* a discarded or foreign record is passed over; it is acked with the next one */
		ev->read_pos = next;
		if (ev->read_pos >= prod)
			prod = __atomic_load_n(ev->prod_pos, __ATOMIC_ACQUIRE);
	}
	return n;
}

int gs_events_ack(struct gs_events *ev, uint64_t pos, struct gs_err *err)
{
	uint64_t cons = __atomic_load_n(ev->cons_pos, __ATOMIC_ACQUIRE);

	if (pos > ev->read_pos)
		return gs_errf(err, EINVAL, "gs_events_ack", "position %llu is past what was read (%llu)",
			       (unsigned long long)pos, (unsigned long long)ev->read_pos);
	if (pos <= cons)
		return 0; /* acked already (or by a predecessor) */
	__atomic_store_n(ev->cons_pos, pos, __ATOMIC_RELEASE);
	return 0;
}

void gs_events_state(struct gs_events *ev, struct gs_events_pos *out)
{
	out->map_id = ev->map_id;
	out->consumed = __atomic_load_n(ev->cons_pos, __ATOMIC_ACQUIRE);
	out->produced = __atomic_load_n(ev->prod_pos, __ATOMIC_ACQUIRE);
	out->read = ev->read_pos;
}

void gs_events_close(struct gs_events *ev)
{
	if (!ev)
		return;
	if (ev->epfd >= 0)
		close(ev->epfd);
	if (ev->prod_map)
		munmap(ev->prod_map, ev->page + 2 * ev->data_sz);
	if (ev->cons_map)
		munmap(ev->cons_map, ev->page);
	free(ev);
}
