// SPDX-License-Identifier: GPL-2.0
/*
 * conn.c - the target policy (loopback only unless --allow-addr) and the
 * connections, opened within CONNECT_TIMEOUT_NS, and the blocking send on
 * one that the sender and the memcached preload share.
 */
#include "sfload.h"

static bool addr_is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET)
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) &&
	       s6->sin6_addr.s6_addr[12] == 127;
}

static bool addr_is_allowed(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	unsigned char a[sizeof(struct in6_addr)];

	if (addr_is_loopback(sa) || cfg.allow_any)
		return true;
	if (!cfg.allow_addr)
		return false;
	if (sa->sa_family == AF_INET &&
	    inet_pton(AF_INET, cfg.allow_addr, a) == 1)
		return !memcmp(a, &s4->sin_addr, sizeof(s4->sin_addr));
	if (sa->sa_family == AF_INET6 &&
	    inet_pton(AF_INET6, cfg.allow_addr, a) == 1)
		return !memcmp(a, &s6->sin6_addr, sizeof(s6->sin6_addr));
	return false;
}

static void addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	if (getnameinfo(sa, sa->sa_family == AF_INET ?
			sizeof(struct sockaddr_in) :
			sizeof(struct sockaddr_in6),
			buf, len, NULL, 0, NI_NUMERICHOST))
		snprintf(buf, len, "?");
}

/* Non-blocking connect bounded by deadline; returns a blocking socket. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline)
{
	struct timeval tv = { .tv_usec = SEND_TIMEOUT_US };
	struct pollfd pfd;
	socklen_t elen = sizeof(int);
	int fd, err = 0, one = 1, udp_rcvbuf = 4 << 20;
	uint64_t now;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		if (errno != EINPROGRESS)
			goto err_close;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		for (;;) {
			now = sf_now_ns();
			if (now >= deadline) {
				errno = ETIMEDOUT;
				goto err_close;
			}
			err = poll(&pfd, 1, (deadline - now) / 1000000 + 1);
			if (err > 0)
				break;
			if (err < 0 && errno != EINTR)
				goto err_close;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			goto err_close;
		if (err) {
			errno = err;
			goto err_close;
		}
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) ||
	    (ai->ai_socktype == SOCK_STREAM &&
	     setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		goto err_close;
	/* UDP: room for a burst of answers, or sfload itself drops them */
	if (ai->ai_socktype == SOCK_DGRAM)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &udp_rcvbuf,
			   sizeof(udp_rcvbuf));
	return fd;

err_close:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/*
 * Resolve the target, apply the loopback policy, and open every connection
 * to the first allowed address that accepts one.  Returns 0, or the exit
 * status after printing why: EXIT_BADARGS for a name that does not resolve
 * or a target that is not allowed, EXIT_RUNTIME when it cannot connect.
 */
int open_connections(void)
{
	struct addrinfo hints = { .ai_socktype = cfg.proto == PROTO_DNS ?
						 SOCK_DGRAM : SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai, *good = NULL;
	uint64_t deadline = sf_now_ns() + CONNECT_TIMEOUT_NS;
	char refused[INET6_ADDRSTRLEN] = "";
	unsigned int i, allowed = 0;
	int fd = -1, err, ret = EXIT_RUNTIME;

	err = getaddrinfo(cfg.host, cfg.port, &hints, &res);
	if (err) {
		fprintf(stderr, "sfload: cannot resolve '%s': %s\n", cfg.host,
			gai_strerror(err));
		return EXIT_BADARGS;
	}
	err = ETIMEDOUT;
	for (ai = res; ai && !good; ai = ai->ai_next) {
		if (!addr_is_allowed(ai->ai_addr)) {
			addr_str(ai->ai_addr, refused, sizeof(refused));
			continue;
		}
		allowed++;
		fd = connect_one(ai, deadline);
		if (fd >= 0)
			good = ai;
		else
			err = errno;
	}
	if (!allowed) {
		fprintf(stderr,
			"sfload: refusing non-loopback target %s: sfload only loads 127.0.0.0/8 and ::1 unless --allow-addr is given\n",
			refused);
		ret = EXIT_BADARGS;
		goto out_free_res;
	}
	if (!good) {
		fprintf(stderr, "sfload: cannot connect to %s: %s\n",
			cfg.target, strerror(err));
		goto out_free_res;
	}
	run.conns[0].fd = fd;
	for (i = 1; i < cfg.connections; i++) {
		run.conns[i].fd = connect_one(good, deadline);
		if (run.conns[i].fd < 0) {
			fprintf(stderr,
				"sfload: cannot open connection %u to %s: %s\n",
				i + 1, cfg.target, strerror(errno));
			goto out_free_res;
		}
	}
	ret = 0;
out_free_res:
	freeaddrinfo(res);
	return ret;
}

/*
 * Blocking send of all len bytes.  Fails with errno EAGAIN when blocked past
 * the hard deadline or asked to stop, or with the error of send(2).
 */
int send_all(int fd, const unsigned char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (atomic_load(&run.stop) ||
				    sf_now_ns() > run.hard_deadline) {
					errno = EAGAIN;
					return -1;
				}
				continue;
			}
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}
