// SPDX-License-Identifier: Apache-2.0
// gs-floor: the floor under the resolver's numbers, measured on the same
// machine in the same `make bench` run. It performs the supervisor socket's
// exchange with nothing else in it: per request a client connects to a Unix
// stream socket, sends a 4-byte length and a ~150-byte body, and reads a
// ~120-byte answer; the server appends two evidence-sized lines (~920 bytes,
// what faults.jsonl holds per fault: its fault and resolution lines) to a
// file in DIR and fdatasyncs it before it answers — group commit, as gensee
// does: everything that arrived together shares one fdatasync. No decoding,
// no policy, no kernel lease, no MAC.
//
// What gensee adds on top of this is its own cost; what this costs is the
// disk and the socket round trip, which no resolver can go under while the
// resolution must be durable before the answer.
//
// With --intent (the floor of issue 15's resolver rows: the work gensee must
// do for a retry_after_lease), the server also looks the destination up in a
// BPF hash map of the lease map's key and value size (a miss), appends a
// lease_intent-sized line per request (~300 bytes) and fdatasyncs it (group
// commit), puts each lease into the map and reads it back, then writes the
// two lines and their own fdatasync: gensee's rule that a lease_intent is
// durable before its lease enters the kernel (issue "crash consistency"),
// and the resolution durable before the answer, makes that two dependent
// fdatasyncs per retry_after_lease batch.
//
//   gs-floor DIR CLIENTS TOTAL [--intent]
//   gs-floor DIR CLIENTS TOTAL --connect SOCKET
// prints one JSON line: {"clients","n","fps","p50_ns","p99_ns","syncs"}
//
// --connect runs the same clients against another server's SOCKET (the
// Node floor, bench/floor-node.ts) and serves nothing itself (syncs: -1).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../test/probe/common.h"
#include "gensee_abi.h"
#include "floor_io.h"

#define BODY 150
#define ANSWER 120
#define LINE 462
#define INTENT_LINE 300
#define MAX_BATCH 256

static struct sockaddr_un addr;
static int per_client;
static uint64_t *lat;

static void die(const char *what)
{
	fprintf(stderr, "gs-floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *client_main(void *arg)
{
	uint64_t *mine = lat + (size_t)(uintptr_t)arg * (size_t)per_client;
	uint8_t frame[4 + BODY], answer[ANSWER];

	memset(frame, 'f', sizeof(frame));
	frame[0] = 0, frame[1] = 0, frame[2] = 0, frame[3] = BODY;
	for (int i = 0; i < per_client; i++) {
		uint64_t t0 = now_ns();
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof(addr)))
			die("connect");
		if (write(s, frame, sizeof(frame)) != (ssize_t)sizeof(frame))
			die("send");
		if (read_full(s, answer, sizeof(answer)))
			die("answer");
		close(s);
		mine[i] = now_ns() - t0;
	}
	return NULL;
}

/* the latency slots and the client threads, started */
static pthread_t *start_clients(int clients, int total)
{
	lat = calloc((size_t)total, sizeof(*lat));
	pthread_t *th = calloc((size_t)clients, sizeof(*th));
	if (!lat || !th)
		die("calloc");
	for (int i = 0; i < clients; i++)
		if (pthread_create(&th[i], NULL, client_main, (void *)(uintptr_t)i))
			die("pthread_create");
	return th;
}

/* the one JSON line (latencies sorted in place) */
static void report(int clients, int total, double secs, long syncs)
{
	qsort(lat, (size_t)total, sizeof(*lat), cmp_u64);
	printf("{\"clients\":%d,\"n\":%d,\"fps\":%.0f,\"p50_ns\":%llu,\"p99_ns\":%llu,\"syncs\":%ld}\n", clients, total,
	       total / secs, (unsigned long long)lat[total / 2], (unsigned long long)lat[(size_t)total * 99 / 100],
	       syncs);
}

int main(int argc, char **argv)
{
	int intent = argc == 5 && !strcmp(argv[4], "--intent");
	const char *remote = argc == 6 && !strcmp(argv[4], "--connect") ? argv[5] : NULL;
	if (argc != 4 && !intent && !remote) {
		fprintf(stderr, "usage: gs-floor DIR CLIENTS TOTAL [--intent | --connect SOCKET]\n");
		return 2;
	}
	const char *dir = argv[1];
	int clients = atoi(argv[2]);
	int total = atoi(argv[3]);
	if (clients < 1 || clients > 64 || total < clients) {
		fprintf(stderr, "gs-floor: CLIENTS must be 1..64 and TOTAL >= CLIENTS\n");
		return 2;
	}
	per_client = total / clients;
	total = per_client * clients;

	char logpath[4096];
	addr.sun_family = AF_UNIX;
	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/floor.sock", dir) >= (int)sizeof(addr.sun_path) ||
	    snprintf(logpath, sizeof(logpath), "%s/floor.jsonl", dir) >= (int)sizeof(logpath)) {
		fprintf(stderr, "gs-floor: DIR too long\n");
		return 2;
	}
	if (remote) {
		if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", remote) >= (int)sizeof(addr.sun_path)) {
			fprintf(stderr, "gs-floor: SOCKET too long\n");
			return 2;
		}
		uint64_t t0 = now_ns();
		pthread_t *th = start_clients(clients, total);
		for (int i = 0; i < clients; i++)
			pthread_join(th[i], NULL);
		report(clients, total, (double)(now_ns() - t0) / 1e9, -1);
		return 0;
	}
	unlink(addr.sun_path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&addr, sizeof(addr)) || listen(l, 4096))
		die("listen");
	int log = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (log < 0)
		die("open log");

	/* --intent: a map of the lease map's shape, for the look-up, put and read-back */
	int leases = -1;
	uint32_t next_key = 0;
	if (intent) {
		leases = bpf_map_create(BPF_MAP_TYPE_HASH, "gs_floor_lease", sizeof(struct gs_lease_key),
					sizeof(struct gs_lease_value), (uint32_t)total + 16, NULL);
		if (leases < 0)
			die("bpf_map_create");
	}

	uint64_t t0 = now_ns();
	pthread_t *th = start_clients(clients, total);

	/* the server: this thread; everything pending is one batch, one fdatasync */
	char line[2 * LINE], iline[INTENT_LINE];
	uint8_t answer[ANSWER];
	int batch[MAX_BATCH];
	long served = 0, syncs = 0;
	memset(iline, 'i', sizeof(iline));
	iline[INTENT_LINE - 1] = '\n';
	memset(line, 'x', sizeof(line));
	line[LINE - 1] = line[2 * LINE - 1] = '\n';
	memset(answer, 'r', sizeof(answer));
	while (served < total) {
		int n = 0;
		while (n < MAX_BATCH) {
			int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
			if (c < 0) {
				if (errno == EINTR)
					continue;
				if (errno != EAGAIN)
					die("accept");
				if (n)
					break;
				/* idle: wait for the next client (no busy loop) */
				fd_set rf;
				FD_ZERO(&rf);
				FD_SET(l, &rf);
				if (select(l + 1, &rf, NULL, NULL, NULL) < 0 && errno != EINTR)
					die("select");
				continue;
			}
			uint8_t hdr[4], body[65536];
			if (read_full(c, hdr, 4))
				die("read header");
			uint32_t len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
			if (len > sizeof(body) || read_full(c, body, len))
				die("read body");
			if (intent) {
				/* a new destination: not leased yet */
				struct gs_lease_key k;
				struct gs_lease_value v;
				memset(&k, 0, sizeof(k));
				k.family = GS_FAMILY_IPV4;
				k.protocol = 6;
				uint32_t want = next_key + (uint32_t)n + 1; /* the key the put below gives it */
				memcpy(k.addr, &want, sizeof(want));
				if (bpf_map_lookup_elem(leases, &k, &v) == 0)
					die("lease present");
				if (write(log, iline, sizeof(iline)) != (ssize_t)sizeof(iline))
					die("write log");
			}
			if (!intent && write(log, line, sizeof(line)) != (ssize_t)sizeof(line))
				die("write log");
			batch[n++] = c;
		}
		if (intent) {
			/* the intents durable, the leases put and read back, then the resolutions */
			if (fdatasync(log))
				die("fdatasync");
			syncs++;
			for (int i = 0; i < n; i++) {
				struct gs_lease_key k;
				struct gs_lease_value v;
				memset(&k, 0, sizeof(k));
				memset(&v, 0, sizeof(v));
				k.family = GS_FAMILY_IPV4;
				k.protocol = 6;
				next_key++;
				memcpy(k.addr, &next_key, sizeof(next_key));
				v.generation = 1;
				if (bpf_map_update_elem(leases, &k, &v, BPF_ANY) || bpf_map_lookup_elem(leases, &k, &v))
					die("lease put");
			}
			for (int i = 0; i < n; i++)
				if (write(log, line, sizeof(line)) != (ssize_t)sizeof(line))
					die("write log");
		}
		if (fdatasync(log))
			die("fdatasync");
		syncs++;
		for (int i = 0; i < n; i++) {
			if (write(batch[i], answer, sizeof(answer)) != (ssize_t)sizeof(answer))
				die("answer");
			close(batch[i]);
		}
		served += n;
	}
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	report(clients, total, (double)(now_ns() - t0) / 1e9, syncs);
	close(log);
	close(l);
	unlink(addr.sun_path);
	unlink(logpath);
	return 0;
}
