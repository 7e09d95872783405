// SPDX-License-Identifier: Apache-2.0
// gs-notify-floor: the floor under the pause bench's rows (issue 15), measured
// on the same machine in the same `make bench` run. It runs CMD (the same
// gs-probe binary the bare and the gensee rounds run) under a seccomp
// USER_NOTIF filter on connect, sendto, sendmsg and sendmmsg, and answers
// each paused call as the smallest correct C supervisor would:
//
//   fast path, per call (issue 15's list, plus the protocol):
//     RECV → NOTIF_ID_VALID (the kept pidfd names the paused task) → read the
//     sockaddr from the target's memory (process_vm_readv) → the socket's
//     protocol and domain (pidfd_getfd + SO_PROTOCOL + SO_DOMAIN: the lease
//     key needs the protocol, and other socket types report 6 or 17 too;
//     gensee must know both, so the floor asks too) → NOTIF_ID_VALID → one lookup
//     in the operation's pinned lease map → SEND CONTINUE.
//     SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP is set on the listener, and the
//     loop polls before RECV so that the wake-up is synchronous. The pidfd is
//     opened once per process and kept (safe: a pidfd names one process, and
//     ID_VALID after its use proves the paused task is that process).
//   --slow DIR, a call whose lease is missing (first connect): the fast path
//     above, then the socket exchange with a resolver thread over one
//     connection kept open (4-byte length + a ~150-byte frame out, a ~120-byte
//     answer back; the server appends a lease_intent-sized line (~300 bytes)
//     to DIR/notify-floor.jsonl and fdatasyncs, then two evidence-sized lines
//     (~920 bytes) and fdatasyncs again before it answers, group commit:
//     every frame that is pending shares each fdatasync), then the lease put
//     into the kernel map and its read-back, then SEND CONTINUE. The retried
//     call meets the eBPF hook and its lease, as under gensee. Added to the
//     issue's list because gensee must do them: the lease put and read-back,
//     and the durable lease_intent before the lease enters the kernel (issue
//     "crash consistency": no kernel lease without a durable record), which
//     makes two dependent fdatasyncs per first connect.
//
// No policy, no decoding, no MAC, no logs beyond the evidence bytes: what
// gensee adds on top of this is its own cost.
//
//   --connect SOCKET, with --slow: the same exchange over one connection to
//     another server's Unix socket (the Node floor, bench/floor-node.ts),
//     which makes the lines durable instead of the resolver thread.
//
//   gs-notify-floor LEASES_PIN [--slow DIR [--connect SOCKET]] -- CMD [ARG...]
// exits with CMD's status; CMD's stdout is its own.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "gensee_abi.h"
#include "floor_io.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#if defined(__x86_64__)
#define FLOOR_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FLOOR_ARCH AUDIT_ARCH_AARCH64
#else
#error "gs-notify-floor: unsupported architecture"
#endif

#define BODY 150
#define ANSWER 120
#define LINE 462
#define INTENT_LINE 300

static void die(const char *what)
{
	fprintf(stderr, "gs-notify-floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the resolver's floor: frames in, evidence durable, answers out ----- */

static int log_fd = -1;

static void *server_main(void *arg)
{
	int s = (int)(intptr_t)arg;
	char line[2 * LINE], iline[INTENT_LINE];
	uint8_t answer[ANSWER];

	memset(line, 'x', sizeof(line));
	line[LINE - 1] = line[2 * LINE - 1] = '\n';
	memset(iline, 'i', sizeof(iline));
	iline[INTENT_LINE - 1] = '\n';
	memset(answer, 'r', sizeof(answer));
	for (;;) {
		int pending = 0;
		/* everything pending is one batch, one fdatasync */
		do {
			uint8_t hdr[4], body[4096];
			if (read_full(s, hdr, 4))
				return NULL; /* the supervisor is gone */
			uint32_t len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
			if (len > sizeof(body) || read_full(s, body, len))
				die("read frame");
			if (write(log_fd, iline, sizeof(iline)) != (ssize_t)sizeof(iline))
				die("write log");
			pending++;
			struct pollfd p = { .fd = s, .events = POLLIN };
			if (poll(&p, 1, 0) <= 0)
				break;
		} while (1);
		/* the intents durable (gensee puts the leases here), then the two lines of each */
		if (fdatasync(log_fd))
			die("fdatasync");
		for (int i = 0; i < pending; i++)
			if (write(log_fd, line, sizeof(line)) != (ssize_t)sizeof(line))
				die("write log");
		if (fdatasync(log_fd))
			die("fdatasync");
		for (int i = 0; i < pending; i++)
			if (write_full(s, answer, sizeof(answer)))
				die("answer");
	}
}

/* ---- the paused task ----------------------------------------------------- */

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FLOOR_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendto, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmmsg, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static pid_t child;

static void *waiter_main(void *arg)
{
	int status;

	(void)arg;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	fflush(stdout);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

int main(int argc, char **argv)
{
	const char *pin, *dir = NULL;
	int i = 2;

	if (argc < 4)
		goto usage;
	pin = argv[1];
	const char *remote = NULL;
	if (!strcmp(argv[i], "--slow") && i + 1 < argc) {
		dir = argv[i + 1];
		i += 2;
		if (i + 1 < argc && !strcmp(argv[i], "--connect")) {
			remote = argv[i + 1];
			i += 2;
		}
	}
	if (i >= argc || strcmp(argv[i], "--"))
		goto usage;
	i++;
	if (i >= argc)
		goto usage;

	int leases = bpf_obj_get(pin);
	if (leases < 0)
		die("bpf_obj_get");
	int conn[2] = { -1, -1 };
	if (remote) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", remote) >= (int)sizeof(sa.sun_path)) {
			fprintf(stderr, "gs-notify-floor: SOCKET too long\n");
			return 2;
		}
		conn[0] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (conn[0] < 0 || connect(conn[0], (struct sockaddr *)&sa, sizeof(sa)))
			die("connect");
	} else if (dir) {
		char path[4096];
		if (snprintf(path, sizeof(path), "%s/notify-floor.jsonl", dir) >= (int)sizeof(path)) {
			fprintf(stderr, "gs-notify-floor: DIR too long\n");
			return 2;
		}
		log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
		if (log_fd < 0)
			die("open log");
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, conn))
			die("socketpair");
		pthread_t srv;
		if (pthread_create(&srv, NULL, server_main, (void *)(intptr_t)conn[1]))
			die("pthread_create");
	}

	/* the child reports its listener's number, then waits for the go */
	int up[2], go[2];
	if (pipe2(up, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		int l = install_filter();
		char c;
		if (l < 0 || write(up[1], &l, sizeof(l)) != (ssize_t)sizeof(l) || read(go[0], &c, 1) != 1)
			_exit(126);
		close(l);
		execvp(argv[i], argv + i);
		_exit(127);
	}
	int lnum;
	if (read_full(up[0], &lnum, sizeof(lnum)))
		die("child's listener");
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	if (pidfd < 0)
		die("pidfd_open");
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, lnum, 0);
	if (fd < 0)
		die("pidfd_getfd listener");
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP))
		die("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP");
	pthread_t w;
	if (pthread_create(&w, NULL, waiter_main, NULL))
		die("pthread_create");
	if (write(go[1], "g", 1) != 1)
		die("go");

	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	uint8_t frame[4 + BODY], answer[ANSWER];
	pid_t kept_pid = child; /* the pidfd kept for the last process seen */
	memset(frame, 'f', sizeof(frame));
	frame[0] = 0, frame[1] = 0, frame[2] = 0, frame[3] = BODY;
	for (;;) {
		/* poll, then RECV, as gensee does: SYNC_WAKE_UP wakes a poller on
		 * the paused task's CPU; a task blocked in RECV is woken as usual */
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pf.revents & POLLHUP)
			pause(); /* no task left: the waiter exits with the child's status */
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			die("SECCOMP_IOCTL_NOTIF_RECV");
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if ((pid_t)req.pid != kept_pid) {
			close(pidfd);
			kept_pid = (pid_t)req.pid;
			pidfd = (int)syscall(SYS_pidfd_open, kept_pid, 0);
		}
		if (pidfd < 0 || ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id))
			goto send; /* gone */
		if (req.data.nr != __NR_connect)
			goto send; /* the probe only connects */
		struct sockaddr_in sa;
		struct iovec local = { .iov_base = &sa, .iov_len = sizeof(sa) };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)req.data.args[1], .iov_len = sizeof(sa) };
		if ((uint32_t)req.data.args[2] < sizeof(sa) ||
		    syscall(SYS_process_vm_readv, req.pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(sa) ||
		    sa.sin_family != AF_INET)
			goto send;
		int sfd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)req.data.args[0], 0);
		int proto = 0;
		socklen_t ol = sizeof(proto);
		if (sfd < 0)
			goto send;
		if (getsockopt(sfd, SOL_SOCKET, SO_PROTOCOL, &proto, &ol))
			proto = 0;
		/* and its domain: other socket types report 6 or 17 too (gensee asks) */
		int domain = 0;
		ol = sizeof(domain);
		if (getsockopt(sfd, SOL_SOCKET, SO_DOMAIN, &domain, &ol) || domain != AF_INET)
			proto = 0;
		close(sfd);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id))
			goto send;
		struct gs_lease_key key;
		struct gs_lease_value v;
		memset(&key, 0, sizeof(key));
		key.family = GS_FAMILY_IPV4;
		key.protocol = (__u8)proto;
		key.port = ntohs(sa.sin_port);
		memcpy(key.addr, &sa.sin_addr, 4);
		if (bpf_map_lookup_elem(leases, &key, &v) == 0 || !dir)
			goto send;
		/* the first connect: the resolver's exchange, durable, then the lease */
		if (write_full(conn[0], frame, sizeof(frame)) || read_full(conn[0], answer, sizeof(answer)))
			die("resolver exchange");
		memset(&v, 0, sizeof(v));
		v.generation = 1;
		if (bpf_map_update_elem(leases, &key, &v, BPF_ANY))
			die("lease put");
		if (bpf_map_lookup_elem(leases, &key, &v))
			die("lease read-back");
	send:
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) && errno != ENOENT)
			die("SECCOMP_IOCTL_NOTIF_SEND");
	}
usage:
	fprintf(stderr, "usage: gs-notify-floor LEASES_PIN [--slow DIR [--connect SOCKET]] -- CMD [ARG...]\n");
	return 2;
}
