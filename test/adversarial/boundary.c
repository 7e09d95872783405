// SPDX-License-Identifier: Apache-2.0
/*
 * boundary: the ways out that are not a TCP or UDP connect/sendmsg, tried AS
 * the workload by test/adversarial/boundary.test.ts under `gensee run`.
 *
 *   boundary MODE [--port P] [--uport U] [--aport A] [--auport AU]
 *                 [--auport6 AU6] [--sink S] [--path F] [--dpath F]
 *                 [--abstract NAME] [--bport B] [--token T]
 *
 *   --port/--uport   a TCP / UDP port on 127.0.0.1 the policy denies
 *   --auport/--auport6  a UDP port on 127.0.0.1 / [::1] the policy allows
 *   --sink           a UDP-Lite port on 127.0.0.1 (the test's sink counts it)
 *   --path/--dpath   a host AF_UNIX stream / datagram socket no rule names
 *   --abstract       a host abstract AF_UNIX socket (name without the NUL)
 *   --apath          a host AF_UNIX stream socket a unix rule names (control)
 *   --bport          a port to bind: the policy names it in no listen rule
 *   --lport          a port a listen rule names (control)
 *
 * Modes:
 *   protocols  ping sockets, UDP-Lite, SCTP, MPTCP, DCCP, raw, io_uring
 *   families   every socket family but AF_UNIX/AF_INET/AF_INET6
 *   routing    IPv4 source routing and IPv6 routing headers, as socket
 *              options and as per-call ancillary data
 *   unix       host path, abstract and datagram sockets; relative names,
 *              symlinks; socketpair and a ruled path as controls
 *   bind       bind/listen on ports no listen rule names
 *   handoff    send a TCP and a UDP socket made here to --path (SCM_RIGHTS),
 *              then exit: the socket must stay policed after the operation
 *   relay      (outside the boundary, run by the test) receive those
 *              sockets on --path, wait for a line on stdin, then use them
 *   sink       (outside the boundary, run by the test) count what arrives
 *              carrying PAYLOAD: UDP-Lite on 127.0.0.1/[::1]:--sink, ICMP and
 *              ICMPv6 (raw sockets), AF_UNIX datagrams on --dpath; prints
 *              {"phase":"ready"}, counts until stdin closes, then reports
 *
 * One JSON line per mode, one write(2):
 *   {"attack":MODE,"attempts":{NAME:RESULT,...},"info":{...}}
 * An attempt is something that must not work: RESULT is "ok" when it did,
 * else the errno name. Exit 0 either way: the test decides.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef IPPROTO_UDPLITE
#define IPPROTO_UDPLITE 136
#endif
#ifndef IPV6_RTHDR
#define IPV6_RTHDR 57
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static const char PAYLOAD[] = "BOUNDARY-BYTES";

static struct {
	int port, uport, auport, auport6, sink, bport, lport;
	const char *path, *dpath, *abstract, *apath;
} o;

static char att[32768], inf[8192];
static size_t natt, ninf;

static void put(char *buf, size_t cap, size_t *n, const char *k, const char *v, int quote)
{
	int w = snprintf(buf + *n, cap - *n, "%s\"%s\":%s%s%s", *n ? "," : "", k, quote ? "\"" : "", v,
			 quote ? "\"" : "");

	if (w > 0 && (size_t)w < cap - *n)
		*n += (size_t)w;
}

/* r: 0 = it worked, else the errno */
static void attempt(const char *name, int r)
{
	char e[32];

	if (!r) {
		put(att, sizeof(att), &natt, name, "ok", 1);
		return;
	}
	snprintf(e, sizeof(e), "%s", strerrorname_np(r) ? strerrorname_np(r) : "E?");
	put(att, sizeof(att), &natt, name, e, 1);
}

static void info(const char *name, long long v)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", v);
	put(inf, sizeof(inf), &ninf, name, b, 0);
}

static void report(const char *mode)
{
	char line[sizeof(att) + sizeof(inf) + 128];
	int n = snprintf(line, sizeof(line), "{\"attack\":\"%s\",\"attempts\":{%s},\"info\":{%s}}\n", mode, att, inf);

	if (n > 0 && write(1, line, (size_t)n) < 0)
		exit(1);
}

static struct sockaddr_in lo4(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static struct sockaddr_in6 lo6(int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };

	a.sin6_addr = in6addr_loopback;
	return a;
}

/* socket(af, type, proto), then (when it worked and to is given) a send of
 * PAYLOAD: the socket is one attempt, the send another */
static void sock_send(const char *name, int af, int type, int proto, const struct sockaddr *to, socklen_t len,
		      const void *buf, size_t n)
{
	char k[96];
	int fd = socket(af, type | SOCK_CLOEXEC, proto);

	snprintf(k, sizeof(k), "socket_%s", name);
	attempt(k, fd < 0 ? errno : 0);
	if (fd < 0 || !to)
		goto out;
	snprintf(k, sizeof(k), "%s_send", name);
	if (type == SOCK_STREAM)
		attempt(k, connect(fd, to, len) || send(fd, buf, n, MSG_NOSIGNAL) < 0 ? errno : 0);
	else
		attempt(k, sendto(fd, buf, n, 0, to, len) < 0 ? errno : 0);
out:
	if (fd >= 0)
		close(fd);
}

/* an ICMP echo request carrying PAYLOAD (a ping socket fills in the id and checksum) */
static size_t echo(unsigned char *b, size_t cap, int v6)
{
	size_t n = 8 + sizeof(PAYLOAD);

	if (n > cap)
		return 0;
	memset(b, 0, 8);
	b[0] = v6 ? 128 : 8;
	memcpy(b + 8, PAYLOAD, sizeof(PAYLOAD));
	return n;
}

static void mode_protocols(void)
{
	struct sockaddr_in d4 = lo4(0), s4 = lo4(o.sink), t4 = lo4(o.port);
	struct sockaddr_in6 d6 = lo6(0), s6 = lo6(o.sink);
	unsigned char e[64];
	struct io_uring ring;
	int r;

	sock_send("icmp4_ping", AF_INET, SOCK_DGRAM, IPPROTO_ICMP, (struct sockaddr *)&d4, sizeof(d4), e,
		  echo(e, sizeof(e), 0));
	sock_send("icmp6_ping", AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6, (struct sockaddr *)&d6, sizeof(d6), e,
		  echo(e, sizeof(e), 1));
	sock_send("udplite4", AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE, (struct sockaddr *)&s4, sizeof(s4), PAYLOAD,
		  sizeof(PAYLOAD));
	sock_send("udplite6", AF_INET6, SOCK_DGRAM, IPPROTO_UDPLITE, (struct sockaddr *)&s6, sizeof(s6), PAYLOAD,
		  sizeof(PAYLOAD));
	sock_send("sctp", AF_INET, SOCK_STREAM, IPPROTO_SCTP, (struct sockaddr *)&t4, sizeof(t4), PAYLOAD,
		  sizeof(PAYLOAD));
	sock_send("sctp_seqpacket", AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP, NULL, 0, NULL, 0);
	sock_send("mptcp", AF_INET, SOCK_STREAM, IPPROTO_MPTCP, (struct sockaddr *)&t4, sizeof(t4), PAYLOAD,
		  sizeof(PAYLOAD));
	sock_send("dccp", AF_INET, SOCK_DCCP, IPPROTO_DCCP, NULL, 0, NULL, 0);
	sock_send("raw_udp", AF_INET, SOCK_RAW, IPPROTO_UDP, NULL, 0, NULL, 0);
	sock_send("udp_proto_icmp", AF_INET, SOCK_DGRAM, IPPROTO_ICMP, NULL, 0, NULL, 0);
	/* io_uring: refused unless the policy allows it; if it works, its
	 * IORING_OP_SOCKET makes sockets without socket() */
	r = io_uring_queue_init(4, &ring, 0);
	attempt("io_uring_setup", r < 0 ? -r : 0);
	if (r >= 0) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_socket(sqe, AF_VSOCK, SOCK_STREAM, 0, 0);
		io_uring_submit(&ring);
		if (io_uring_wait_cqe(&ring, &cqe) == 0) {
			attempt("io_uring_socket_vsock", cqe->res < 0 ? -cqe->res : 0);
			if (cqe->res >= 0)
				close(cqe->res);
			io_uring_cqe_seen(&ring, cqe);
		}
		io_uring_queue_exit(&ring);
	}
	/* the control: a UDP socket is still the workload's */
	r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	info("udp_socket_ok", r >= 0);
	if (r >= 0)
		close(r);
	report("protocols");
}

static void mode_families(void)
{
	static const int fams[] = { 0,  3,  4,  5,  6,  7,  8,  9,  11, 12, 16, 17, 19, 20, 21, 22, 23, 24, 25, 26,
				    27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46 };
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET };
	char k[64];
	size_t i, j;
	int fd, err;

	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		err = EAFNOSUPPORT;
		for (j = 0; j < sizeof(types) / sizeof(types[0]); j++) {
			fd = socket(fams[i], types[j] | SOCK_CLOEXEC, 0);
			if (fd >= 0) {
				close(fd);
				err = 0;
				break;
			}
			if (errno != EAFNOSUPPORT)
				err = errno; /* the most telling refusal */
		}
		snprintf(k, sizeof(k), "socket_af%d", fams[i]);
		attempt(k, err);
	}
	/* the family in the register's upper half, or with garbage above it */
	fd = (int)syscall(SYS_socket, (1UL << 32) | AF_VSOCK, SOCK_STREAM, 0);
	attempt("socket_af40_highbits", fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);
	fd = (int)syscall(SYS_socket, 0xffffffff00000000UL | AF_NETLINK, SOCK_RAW, 0);
	attempt("socket_af16_highbits", fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);
	{
		int sv[2];

		attempt("socketpair_inet", socketpair(AF_INET, SOCK_STREAM, 0, sv) ? errno : 0);
		attempt("socketpair_vsock", socketpair(AF_VSOCK, SOCK_STREAM, 0, sv) ? errno : 0);
		attempt("socketpair_netlink", socketpair(AF_NETLINK, SOCK_RAW, 0, sv) ? errno : 0);
		info("socketpair_unix_ok", socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	}
	/* a VM's host, if a vsock socket could be made at all */
	fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		struct {
			unsigned short family, reserved;
			unsigned int port, cid;
			unsigned char zero[4];
		} va = { AF_VSOCK, 0, 9, 2, { 0 } };

		attempt("vsock_connect_host", connect(fd, (struct sockaddr *)&va, sizeof(va)) ? errno : 0);
		close(fd);
	}
	report("families");
}

/* LSRR through 127.0.0.1: NOP, then type 131, length 7, pointer 4, one hop */
static void lsrr(unsigned char b[8])
{
	b[0] = 1;
	b[1] = 131;
	b[2] = 7;
	b[3] = 4;
	b[4] = 127;
	b[5] = 0;
	b[6] = 0;
	b[7] = 1;
}

/* a segment routing header (type 4) with one segment, ::1 */
static size_t srh(unsigned char *b)
{
	memset(b, 0, 24);
	b[1] = 2; /* 16 bytes after the first 8 */
	b[2] = 4; /* type 4: SRH */
	b[3] = 0; /* segments left */
	b[4] = 0; /* last entry */
	b[23] = 1;
	return 24;
}

static int send_cmsg(int fd, const struct sockaddr *to, socklen_t len, int level, int type, const void *data, size_t n)
{
	char cbuf[CMSG_SPACE(64)];
	struct iovec iov = { (void *)PAYLOAD, sizeof(PAYLOAD) };
	struct msghdr mh = { 0 };
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_name = (void *)to;
	mh.msg_namelen = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = CMSG_SPACE(n);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(n);
	memcpy(CMSG_DATA(c), data, n);
	return sendmsg(fd, &mh, 0) < 0 ? errno : 0;
}

static void mode_routing(void)
{
	struct sockaddr_in a4 = lo4(o.auport);
	struct sockaddr_in6 a6 = lo6(o.auport6);
	unsigned char opt[8], rh[24];
	int fd4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int sent = 0, r4, r6;

	lsrr(opt);
	srh(rh);
	/* the controls: plain datagrams to the allowed ports arrive */
	sent += sendto(fd4, PAYLOAD, sizeof(PAYLOAD), 0, (struct sockaddr *)&a4, sizeof(a4)) > 0;
	sent += sendto(fd6, PAYLOAD, sizeof(PAYLOAD), 0, (struct sockaddr *)&a6, sizeof(a6)) > 0;
	info("control_sent", sent);
	attempt("cmsg_ip_retopts_lsrr",
		send_cmsg(fd4, (struct sockaddr *)&a4, sizeof(a4), IPPROTO_IP, IP_RETOPTS, opt, sizeof(opt)));
	attempt("cmsg_ipv6_rthdr_srh",
		send_cmsg(fd6, (struct sockaddr *)&a6, sizeof(a6), IPPROTO_IPV6, IPV6_RTHDR, rh, srh(rh)));
	r4 = setsockopt(fd4, IPPROTO_IP, IP_OPTIONS, opt, sizeof(opt)) ? errno : 0;
	r6 = setsockopt(fd6, IPPROTO_IPV6, IPV6_RTHDR, rh, srh(rh)) ? errno : 0;
	attempt("setsockopt_ip_options_lsrr", r4);
	attempt("setsockopt_ipv6_rthdr_srh", r6);
	/* had an option stuck, a datagram after it must not leave either; had
	 * it not, the datagram is a plain one and counts as a control */
	if (!r4)
		attempt("send_with_ip_options",
			sendto(fd4, PAYLOAD, sizeof(PAYLOAD), 0, (struct sockaddr *)&a4, sizeof(a4)) < 0 ? errno : 0);
	if (!r6)
		attempt("send_with_ipv6_rthdr",
			sendto(fd6, PAYLOAD, sizeof(PAYLOAD), 0, (struct sockaddr *)&a6, sizeof(a6)) < 0 ? errno : 0);
	close(fd4);
	close(fd6);
	report("routing");
}

static socklen_t un_addr(struct sockaddr_un *u, const char *name, int abstract)
{
	size_t n = strlen(name);

	memset(u, 0, sizeof(*u));
	u->sun_family = AF_UNIX;
	if (n > sizeof(u->sun_path) - 2)
		n = sizeof(u->sun_path) - 2;
	memcpy(u->sun_path + (abstract ? 1 : 0), name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0) + (abstract ? 0 : 1));
}

static int un_connect_send(const char *name, int abstract)
{
	struct sockaddr_un u;
	socklen_t len = un_addr(&u, name, abstract);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&u, len) || send(fd, PAYLOAD, sizeof(PAYLOAD), MSG_NOSIGNAL) < 0)
		r = errno;
	close(fd);
	return r;
}

static void mode_unix(void)
{
	struct sockaddr_un u;
	char dir[512], base[256], link[600];
	const char *slash = strrchr(o.path, '/');
	int fd, sv[2];

	attempt("connect_path", un_connect_send(o.path, 0));
	attempt("connect_abstract", un_connect_send(o.abstract, 1));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	attempt("sendto_dgram",
		sendto(fd, PAYLOAD, sizeof(PAYLOAD), 0, (struct sockaddr *)&u, un_addr(&u, o.dpath, 0)) < 0 ? errno
													    : 0);
	close(fd);
	/* the same socket by other names: relative, through a symlink, with
	 * bytes after a NUL */
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o.path), o.path);
	snprintf(base, sizeof(base), "%s", slash + 1);
	if (chdir(dir) == 0)
		attempt("connect_relative", un_connect_send(base, 0));
	snprintf(link, sizeof(link), "/tmp/gs-boundary-link-%d", (int)getpid());
	if (symlink(o.path, link) == 0) {
		attempt("connect_symlink", un_connect_send(link, 0));
		unlink(link);
	}
	if (o.apath) {
		char padded[300];

		/* a ruled name followed by a NUL and the real target */
		snprintf(padded, sizeof(padded), "%s", o.apath);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		memset(&u, 0, sizeof(u));
		u.sun_family = AF_UNIX;
		snprintf(u.sun_path, sizeof(u.sun_path), "%s", o.path);
		attempt("connect_path_nul_suffix",
			connect(fd, (struct sockaddr *)&u, sizeof(u)) ? errno : 0); /* o.path, padded to 108 */
		close(fd);
		info("ruled_connect_ok", un_connect_send(padded, 0) == 0);
	}
	info("socketpair_ok", socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	report("unix");
}

static void mode_bind(void)
{
	struct sockaddr_in b4 = lo4(o.bport);
	struct sockaddr_in6 b6 = lo6(o.bport);
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	attempt("bind_tcp4", bind(fd, (struct sockaddr *)&b4, sizeof(b4)) ? errno : 0);
	attempt("listen_tcp4", listen(fd, 4) ? errno : 0);
	close(fd);
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	attempt("bind_tcp6", bind(fd, (struct sockaddr *)&b6, sizeof(b6)) ? errno : 0);
	close(fd);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	attempt("bind_udp4", bind(fd, (struct sockaddr *)&b4, sizeof(b4)) ? errno : 0);
	close(fd);
	/* a port the kernel picks: no bind hook sees it */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	attempt("listen_ephemeral", listen(fd, 4) ? errno : 0);
	close(fd);
	if (o.lport) {
		struct sockaddr_in l4 = lo4(o.lport);

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		info("ruled_listen_ok", bind(fd, (struct sockaddr *)&l4, sizeof(l4)) == 0 && listen(fd, 4) == 0);
		close(fd);
	}
	report("bind");
}

static int send_fds(int sock, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { (void *)"F", 1 };
	struct msghdr mh = { 0 };
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	return sendmsg(sock, &mh, 0) < 0 ? errno : 0;
}

/* a TCP and a UDP socket born here, handed out over a ruled unix socket */
static void mode_handoff(void)
{
	struct sockaddr_un u;
	socklen_t len = un_addr(&u, o.path, 0);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int fds[2] = { socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) };
	int r = connect(s, (struct sockaddr *)&u, len) ? errno : send_fds(s, fds, 2);

	info("handed_over", r == 0);
	info("handoff_errno", r);
	report("handoff");
}

/* outside the boundary: take the sockets, wait for the go (the operation
 * has ended), then try them */
static void mode_relay(void)
{
	struct sockaddr_un u;
	socklen_t len = un_addr(&u, o.path, 0);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), c, fds[2] = { -1, -1 };
	char buf[8], cbuf[CMSG_SPACE(sizeof(int) * 2)], line[16];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	struct sockaddr_in t4 = lo4(o.port), u4 = lo4(o.uport);

	unlink(o.path);
	if (bind(l, (struct sockaddr *)&u, len) || listen(l, 1) || chmod(o.path, 0777)) {
		info("relay_setup_errno", errno);
		report("relay");
		return;
	}
	if (write(1, "{\"attack\":\"relay\",\"phase\":\"listening\"}\n", 39) < 0)
		return;
	c = accept(l, NULL, NULL);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (c >= 0 && recvmsg(c, &mh, 0) > 0) {
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	}
	info("received", fds[0] >= 0 && fds[1] >= 0);
	if (write(1, "{\"attack\":\"relay\",\"phase\":\"ready\"}\n", 35) < 0)
		return;
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	if (fds[0] >= 0)
		attempt("relay_tcp_connect", connect(fds[0], (struct sockaddr *)&t4, sizeof(t4)) ||
							     send(fds[0], PAYLOAD, sizeof(PAYLOAD), MSG_NOSIGNAL) < 0
						     ? errno
						     : 0);
	if (fds[1] >= 0)
		attempt("relay_udp_sendto",
			sendto(fds[1], PAYLOAD, sizeof(PAYLOAD), 0, (struct sockaddr *)&u4, sizeof(u4)) < 0 ? errno
													    : 0);
	unlink(o.path);
	report("relay");
}

static int has_payload(const char *b, ssize_t n)
{
	return n > 0 && memmem(b, (size_t)n, PAYLOAD, sizeof(PAYLOAD) - 1) != NULL;
}

static void mode_sink(void)
{
	struct sockaddr_in s4 = lo4(o.sink);
	struct sockaddr_in6 s6 = lo6(o.sink);
	struct sockaddr_un u;
	struct pollfd p[6];
	const char *names[6] = { "udplite4", "udplite6", "icmp4", "icmp6", "unix_dgram", "stdin" };
	long long counts[6] = { 0 };
	char buf[2048];
	int i, n = 0;

	p[0].fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDPLITE);
	p[1].fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDPLITE);
	p[2].fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	p[3].fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	p[4].fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	p[5].fd = 0;
	if (p[0].fd < 0 || bind(p[0].fd, (struct sockaddr *)&s4, sizeof(s4)))
		info("udplite4_setup_errno", errno);
	if (p[1].fd < 0 || setsockopt(p[1].fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int){ 1 }, sizeof(int)) ||
	    bind(p[1].fd, (struct sockaddr *)&s6, sizeof(s6)))
		info("udplite6_setup_errno", errno);
	if (o.dpath) {
		unlink(o.dpath);
		if (bind(p[4].fd, (struct sockaddr *)&u, un_addr(&u, o.dpath, 0)) || chmod(o.dpath, 0777))
			info("unix_setup_errno", errno);
	}
	for (i = 0; i < 6; i++)
		p[i].events = POLLIN;
	if (write(1, "{\"attack\":\"sink\",\"phase\":\"ready\"}\n", 34) < 0)
		return;
	while (poll(p, 6, -1) > 0 || errno == EINTR) {
		for (i = 0; i < 5; i++) {
			if (p[i].fd >= 0 && (p[i].revents & POLLIN)) {
				ssize_t r = recv(p[i].fd, buf, sizeof(buf), 0);

				counts[i] += has_payload(buf, r);
			}
		}
		if (p[5].revents & (POLLIN | POLLHUP)) {
			ssize_t r = read(0, buf, sizeof(buf));

			if (r <= 0)
				break;
		}
		n++;
	}
	for (i = 0; i < 5; i++)
		info(names[i], counts[i]);
	if (o.dpath)
		unlink(o.dpath);
	report("sink");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} modes[] = {
		{ "protocols", mode_protocols }, { "families", mode_families }, { "routing", mode_routing },
		{ "unix", mode_unix },           { "bind", mode_bind },         { "handoff", mode_handoff },
		{ "relay", mode_relay },         { "sink", mode_sink },
	};
	size_t i;
	int a;

	if (argc < 2) {
		fprintf(stderr, "usage: boundary MODE [options]\n");
		return 2;
	}
	for (a = 2; a + 1 < argc; a += 2) {
		const char *k = argv[a], *v = argv[a + 1];

		if (!strcmp(k, "--port"))
			o.port = atoi(v);
		else if (!strcmp(k, "--uport"))
			o.uport = atoi(v);
		else if (!strcmp(k, "--auport"))
			o.auport = atoi(v);
		else if (!strcmp(k, "--auport6"))
			o.auport6 = atoi(v);
		else if (!strcmp(k, "--sink"))
			o.sink = atoi(v);
		else if (!strcmp(k, "--bport"))
			o.bport = atoi(v);
		else if (!strcmp(k, "--lport"))
			o.lport = atoi(v);
		else if (!strcmp(k, "--path"))
			o.path = v;
		else if (!strcmp(k, "--dpath"))
			o.dpath = v;
		else if (!strcmp(k, "--apath"))
			o.apath = v;
		else if (!strcmp(k, "--abstract"))
			o.abstract = v;
		else if (strcmp(k, "--token")) {
			fprintf(stderr, "boundary: unknown option %s\n", k);
			return 2;
		}
	}
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name)) {
			modes[i].fn();
			return 0;
		}
	fprintf(stderr, "boundary: unknown mode %s\n", argv[1]);
	return 2;
}
