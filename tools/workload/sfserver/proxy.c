// SPDX-License-Identifier: GPL-2.0
/*
 * proxy.c - --proxy HOST:PORT: sfserver as a reverse proxy.  Every
 * connection it accepts gets its own connection to the backend, opened by
 * sfserver itself (connect(2), blocking); each complete request received
 * from the client is sent on to the backend with send(2), the backend's
 * 32-byte answer read back with recv(2), and that answer is the response
 * the client gets, sent the way --io says.  A proxy thus sends twice per
 * request (once to the backend, once to the client) and receives twice, as
 * a reverse proxy does; only the client-facing connection, the one it
 * accepted, carries its responses.  The forward is synchronous: the worker
 * waits in recv(2) for the backend, as a thread-per-request proxy does.
 */
#include "sfserver.h"

/* --proxy HOST:PORT: a numeric IPv4 address or a bracketed IPv6 one */
void parse_proxy(const char *arg)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg.proxy_ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg.proxy_ss;
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(arg, ':');
	size_t hlen = colon ? (size_t)(colon - arg) : 0;
	unsigned long long port;
	char *end;

	if (!colon || !hlen || hlen >= sizeof(host) || !colon[1])
		goto bad;
	memcpy(host, arg, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtoull(colon + 1, &end, 10);
	if (errno || *end || colon[1] < '0' || colon[1] > '9' || !port ||
	    port > 65535)
		goto bad;
	if (host[0] == '[' && host[hlen - 1] == ']') {
		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			goto bad;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		cfg.proxy_sslen = sizeof(*sin6);
	} else if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		cfg.proxy_sslen = sizeof(*sin);
	} else {
		goto bad;
	}
	cfg.proxy = arg;
	return;
bad:
	sf_die_usage("invalid --proxy '%s': expected ADDR:PORT, ADDR a numeric IPv4 address or [IPv6], PORT 1..65535",
		     arg);
}

/* A new blocking connection to the backend, or -1 with a message. */
int proxy_connect(void)
{
	int fd, one = 1;

	fd = socket(cfg.proxy_ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&cfg.proxy_ss,
			      cfg.proxy_sslen)) {
		fprintf(stderr, "sfserver: cannot connect to the backend %s: %s\n",
			cfg.proxy, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * Forward the request at req (SF_MSG_SIZE bytes) on c's backend connection
 * and read the backend's answer into out.  0, or -1 when the backend failed
 * or closed (the client's connection is then closed too).
 */
int proxy_forward(struct conn *c, const unsigned char *req,
		  unsigned char *out)
{
	size_t done = 0;
	ssize_t n;

	while (done < SF_MSG_SIZE) {
		n = send(c->backend_fd, req + done, SF_MSG_SIZE - done,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		done += n;
	}
	for (done = 0; done < SF_MSG_SIZE; done += n) {
		n = recv(c->backend_fd, out + done, SF_MSG_SIZE - done, 0);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0)
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "sfserver: backend %s: %s\n", cfg.proxy,
		n < 0 ? strerror(errno) : "closed the connection");
	return -1;
}
