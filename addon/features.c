// SPDX-License-Identifier: Apache-2.0
/*
 * Kernel features gensee uses, probed by trying them (see features.h):
 * small real syscalls, never a version number. Used by `gensee doctor`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "features.h"
#include "proc.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* 6.5 */
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5) /* 5.19 */
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64) /* 6.6 */
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#define GS_PIDFD_THREAD O_EXCL /* 6.9 */

/* 0 present, else the errno that says why not */
static int result(int ok)
{
	return ok ? 0 : (errno ? errno : EINVAL);
}

struct thread_probe {
	int plain, thread; /* results of pidfd_open(tid, 0) and (tid, PIDFD_THREAD) */
	int go;
};

static void *thread_main(void *arg)
{
	struct thread_probe *p = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int fd = (int)syscall(SYS_pidfd_open, tid, 0);

	p->plain = result(fd >= 0);
	if (fd >= 0)
		close(fd);
	fd = (int)syscall(SYS_pidfd_open, tid, GS_PIDFD_THREAD);
	p->thread = result(fd >= 0);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void probe_pidfd(struct gs_features *f)
{
	struct thread_probe tp = { 0, 0, 0 };
	pthread_t th;
	int one = 1, sv[2], fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	socklen_t ol;
	uint64_t cg;

	f->pidfd_open = result(fd >= 0);
	if (fd >= 0) {
		int got = (int)syscall(SYS_pidfd_getfd, fd, fd, 0);

		f->pidfd_getfd = result(got >= 0);
		if (got >= 0)
			close(got);
		/* the kernel's own answer: before 6.13 the ioctl is ENOTTY; a
		 * success without the cgroup id in its mask is not enough */
		errno = 0;
		f->pidfd_get_info = gs_pidfd_info(fd, NULL, &cg) == 0 ? 0 : errno ? errno : EOPNOTSUPP;
		close(fd);
	} else {
		f->pidfd_getfd = f->pidfd_get_info = f->pidfd_open;
	}
	if (pthread_create(&th, NULL, thread_main, &tp) == 0) {
		pthread_join(th, NULL);
		f->pidfd_thread = tp.thread;
		f->pidfd_nonleader_errno = tp.plain;
	} else {
		f->pidfd_thread = f->pidfd_nonleader_errno = EAGAIN;
	}
	(void)one;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		int pfd = -1;

		ol = sizeof(pfd);
		f->so_peerpidfd = result(getsockopt(sv[0], SOL_SOCKET, SO_PEERPIDFD, &pfd, &ol) == 0);
		if (pfd >= 0)
			close(pfd);
		close(sv[0]);
		close(sv[1]);
	} else {
		f->so_peerpidfd = errno;
	}
}

/*
 * A child installs an allow-everything filter with a listener (a filter can
 * never be removed, so never in this process) and reports by its exit code:
 * bit 0 NEW_LISTENER refused, bit 1 WAIT_KILLABLE_RECV refused, bit 2
 * SYNC_WAKE_UP refused, bit 3 ADDFD unknown. Only raw syscalls after fork.
 */
static void probe_seccomp(struct gs_features *f)
{
	struct sock_filter insns[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, insns };
	int status = 0;
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);

	if (pid < 0) {
		f->seccomp_listener = f->wait_killable_recv = f->sync_wake_up = f->addfd = errno;
		return;
	}
	if (pid == 0) {
		int code = 0, lfd;
		struct seccomp_notif_addfd add;

		syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				   SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
		if (lfd < 0) {
			code |= 2;
			lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
					   &prog);
		}
		if (lfd < 0)
			syscall(SYS_exit_group, 1 | 2 | 4 | 8);
		if (syscall(SYS_ioctl, lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP))
			code |= 4;
		memset(&add, 0, sizeof(add));
		add.id = 0x7fffffffffffffffULL; /* no such notification: ENOENT where ADDFD is known */
		add.srcfd = 0;
		if (syscall(SYS_ioctl, lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) == 0 || errno != ENOENT)
			code |= 8;
		syscall(SYS_exit_group, code);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status)) {
		f->seccomp_listener = f->wait_killable_recv = f->sync_wake_up = f->addfd = ECHILD;
		return;
	}
	status = WEXITSTATUS(status);
	f->seccomp_listener = status & 1 ? EINVAL : 0;
	f->wait_killable_recv = status & 2 ? EINVAL : 0;
	f->sync_wake_up = status & 4 ? EINVAL : 0;
	f->addfd = status & 8 ? EINVAL : 0;
}

static void probe_userns(struct gs_features *f)
{
	int status = 0;
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);

	if (pid < 0) {
		f->user_namespaces = errno;
		return;
	}
	if (pid == 0)
		syscall(SYS_exit_group, syscall(SYS_unshare, CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	f->user_namespaces = WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD;
}

/* a two-instruction program of this type: the verifier's yes or no */
static int try_prog(enum bpf_prog_type type, int attach, int sleepable)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .imm = type == BPF_PROG_TYPE_SYSCALL ? 0 : 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = (enum bpf_attach_type)attach,
		    .prog_flags = sleepable ? BPF_F_SLEEPABLE : 0);
	int fd = bpf_prog_load(type, "gs_doctor", "GPL", insns, 2, &o);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd > 0 ? -fd : (errno ? errno : EINVAL);
}

static void probe_bpf(struct gs_features *f)
{
	static const struct {
		enum bpf_prog_type type;
		int attach, sleepable;
	} p[GS_FEATURE_PROGS] = {
		[GS_PROG_CONNECT4] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, 0 },
		[GS_PROG_CONNECT6] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_CONNECT, 0 },
		[GS_PROG_SENDMSG4] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_SENDMSG, 0 },
		[GS_PROG_SENDMSG6] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_SENDMSG, 0 },
		[GS_PROG_BIND4] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_BIND, 0 },
		[GS_PROG_BIND6] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_BIND, 0 },
		[GS_PROG_CONNECT_UNIX] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, 49 /* BPF_CGROUP_UNIX_CONNECT */, 0 },
		[GS_PROG_SENDMSG_UNIX] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, 50 /* BPF_CGROUP_UNIX_SENDMSG */, 0 },
		[GS_PROG_SKB_EGRESS] = { BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, 0 },
		[GS_PROG_SOCK_CREATE] = { BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE, 0 },
		[GS_PROG_SETSOCKOPT] = { BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_SETSOCKOPT, 0 },
		[GS_PROG_SYSCALL] = { BPF_PROG_TYPE_SYSCALL, 0, 1 },
	};

	for (int i = 0; i < GS_FEATURE_PROGS; i++)
		f->progs[i] = try_prog(p[i].type, p[i].attach, p[i].sleepable);
}

void gs_features_probe(struct gs_features *f)
{
	memset(f, 0, sizeof(*f));
	probe_pidfd(f);
	probe_seccomp(f);
	probe_userns(f);
	probe_bpf(f);
}
