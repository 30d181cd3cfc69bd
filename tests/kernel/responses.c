// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * responses.c - the response stream (satfeed.h, SATFEED_STREAM_RESP)
 * counts answered requests, exactly, whatever number of sends answer each:
 *  - on a TCP connection this process accepted, K requests answered by 1
 *    send (write), by 2 (write + write) and by 3 (write + writev +
 *    sendfile): K responses each, while the send stream counts every send;
 *  - a proxy: requests in on the accepted connection, forwarded to a
 *    backend (another process) over a connection this process connect()ed,
 *    its answer sent back: K responses, not 2 K;
 *  - UDP: K datagrams received and answered on an unconnected socket;
 *  - the service time (SATFEED_STREAM_SVC): K samples, one per response,
 *    whose sum lies between the bounds the test's own clock readings
 *    around each receive and send give; its histogram (sf_svc_hist) counts
 *    K more, each in a bucket those bounds allow.
 *  - the connections' records (sf_conn): one per accepted TCP connection
 *    while it is open, none once it closed, by an orderly close (FIN) or
 *    an abort (RST); the client's connect()ed sockets have none.
 * The client side runs in this process too: its connect()ed sockets must
 * never count.
 */
#include "test_kernel.h"
#include <fcntl.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/uio.h>

#define K	20

/* The response and send streams' counted calls. */
static bool counts(const struct sf_pins *p, int slot, __u64 *resp,
		   __u64 *send)
{
	struct satfeed_stream st;

	if (read_stream(p, slot, SATFEED_STREAM_RESP, &st, true))
		return false;
	*resp = st.calls;
	if (read_stream(p, slot, SATFEED_STREAM_SEND, &st, true))
		return false;
	*send = st.calls;
	return true;
}

/* Read exactly n bytes. */
static bool read_n(int fd, size_t n)
{
	char buf[64];

	while (n) {
		ssize_t r = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));

		if (r <= 0)
			return false;
		n -= r;
	}
	return true;
}

/* K requests on client c, answered on server s with `sends` sends each. */
static bool serve(int c, int s, int file, int sends)
{
	struct iovec iov[2] = { { "b", 1 }, { "c", 1 } };
	off_t off;

	for (int i = 0; i < K; i++) {
		size_t n = 1;

		if (write(c, "q", 1) != 1 || !read_n(s, 1) ||
		    write(s, "a", 1) != 1)
			return false;
		if (sends >= 2) {
			if ((sends == 2 ? write(s, "b", 1) :
					  writev(s, iov, 2)) < 1)
				return false;
			n += sends == 2 ? 1 : 2;
		}
		if (sends == 3) {
			off = 0;
			if (sendfile(s, file, &off, 3) != 3)
				return false;
			n += 3;
		}
		if (!read_n(c, n))
			return false;
	}
	return true;
}

/* The backend: echo each byte until EOF (another process: not watched). */
static void backend(int lfd)
{
	int fd = accept(lfd, NULL, NULL);
	char b;

	while (fd >= 0 && read(fd, &b, 1) == 1 && write(fd, &b, 1) == 1)
		;
	_exit(0);
}

static void check_tcp(const struct sf_pins *p, int slot)
{
	char tmpl[] = "/tmp/sf-responses-XXXXXX";
	int lfd, c = -1, s = -1, file;
	struct sockaddr_in a;
	__u64 r0, s0, r1, s1;

	file = mkstemp(tmpl);
	if (!ASSERT_TRUE(file >= 0, "mkstemp"))
		return;
	unlink(tmpl);
	lfd = listen_tcp(&a);
	if (!ASSERT_TRUE(lfd >= 0, "listen") ||
	    !ASSERT_EQ(write(file, "xyz", 3), 3, "fill file"))
		goto out;
	c = connect_tcp(&a);
	s = accept(lfd, NULL, NULL);
	if (!ASSERT_TRUE(c >= 0 && s >= 0, "connect, accept"))
		goto out;
	for (int sends = 1; sends <= 3; sends++) {
		if (!ASSERT_TRUE(counts(p, slot, &r0, &s0), "read counts") ||
		    !ASSERT_TRUE(serve(c, s, file, sends), "serve, %d sends",
				 sends) ||
		    !ASSERT_TRUE(counts(p, slot, &r1, &s1), "read counts"))
			goto out;
		ASSERT_EQ(r1 - r0, K, sends == 1 ? "responses of 1 send" :
				      sends == 2 ? "responses of 2 sends" :
						   "responses of 3 sends");
		/* the client's request and the server's sends */
		ASSERT_EQ(s1 - s0, K * (1 + sends), "sends counted");
	}
out:
	tcp_close(lfd, c, s);
	close(file);
}

static void check_proxy(const struct sf_pins *p, int slot)
{
	int lfd, blfd, c = -1, s = -1, b = -1, status;
	struct sockaddr_in a, ba;
	__u64 r0, s0, r1, s1;
	pid_t pid = -1;
	bool ok = true;

	lfd = listen_tcp(&a);
	blfd = listen_tcp(&ba);
	if (!ASSERT_TRUE(lfd >= 0 && blfd >= 0, "listen"))
		goto out;
	pid = fork();
	if (!pid)
		backend(blfd);
	if (!ASSERT_TRUE(pid > 0, "fork the backend"))
		goto out;
	c = connect_tcp(&a);
	s = accept(lfd, NULL, NULL);
	b = connect_tcp(&ba);
	if (!ASSERT_TRUE(c >= 0 && s >= 0 && b >= 0, "connections") ||
	    !ASSERT_TRUE(counts(p, slot, &r0, &s0), "read counts"))
		goto out;
	for (int i = 0; ok && i < K; i++)
		ok = write(c, "q", 1) == 1 && read_n(s, 1) &&
		     write(b, "q", 1) == 1 && read_n(b, 1) &&
		     write(s, "a", 1) == 1 && read_n(c, 1);
	if (!ASSERT_TRUE(ok, "proxy round trips") ||
	    !ASSERT_TRUE(counts(p, slot, &r1, &s1), "read counts"))
		goto out;
	ASSERT_EQ(r1 - r0, K, "a proxy's responses: the accepted side only");
	ASSERT_EQ(s1 - s0, 3 * K, "a proxy's sends: client, backend, answer");
out:
	if (b >= 0)
		close(b);
	if (pid > 0)
		waitpid(pid, &status, 0);
	tcp_close(lfd, c, s);
	if (blfd >= 0)
		close(blfd);
}

static void check_udp(const struct sf_pins *p, int slot)
{
	struct sockaddr_in from;
	socklen_t l;
	int s, c;
	__u64 r0, s0, r1, s1;
	bool ok = true;
	char buf[8];

	if (!ASSERT_OK(udp_pair(0, &s, &c), "a UDP socket and its client"))
		return;
	if (!ASSERT_TRUE(counts(p, slot, &r0, &s0), "read counts"))
		goto out;
	for (int i = 0; ok && i < K; i++) {
		l = sizeof(from);
		ok = send(c, "q", 1, 0) == 1 &&
		     recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			      &l) == 1 &&
		     sendto(s, "a", 1, 0, (struct sockaddr *)&from, l) == 1 &&
		     recv(c, buf, sizeof(buf), 0) == 1;
	}
	if (!ASSERT_TRUE(ok, "udp round trips") ||
	    !ASSERT_TRUE(counts(p, slot, &r1, &s1), "read counts"))
		goto out;
	ASSERT_EQ(r1 - r0, K, "datagrams answered");
	ASSERT_EQ(s1 - s0, 2 * K, "udp sends: request and answer");
out:
	close(c);
	close(s);
}

static __u64 mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Samples and sum of every service time so far (closed and pending). */
static bool svc_total(const struct sf_pins *p, int slot, __u64 *n,
		      __u64 *sum)
{
	struct satfeed_stream st;

	if (read_stream(p, slot, SATFEED_STREAM_SVC, &st, true) ||
	    !ASSERT_TRUE(st.published <= SATFEED_HISTORY,
			 "all service windows still in the history"))
		return false;
	*n = st.pending;
	*sum = st.acc_sum_ns;
	for (__u64 q = 1; q <= st.published; q++) {
		*n += satfeed_window_by_seq(&st, q)->samples;
		*sum += satfeed_window_by_seq(&st, q)->sum_ns;
	}
	return true;
}

static void check_service(const struct sf_pins *p, int slot)
{
	__u64 n0, sum0, n1, sum1, lo = 0, hi = 0, r0, r1, s0, s1, got = 0;
	__u32 bmin = SATFEED_SVC_BUCKETS, bmax = 0;
	struct satfeed_svc_hist h0, h1;
	int lfd, c, s;
	bool ok = true;

	if (!ASSERT_TRUE(tcp_accepted(&lfd, &c, &s),
			 "listen, connect, accept") ||
	    !svc_total(p, slot, &n0, &sum0) ||
	    !ASSERT_OK(bpf_map_lookup_elem(p->svc_hist_fd, &slot, &h0),
		       "read the service-time histogram"))
		goto out;
	for (int i = 0; ok && i < K; i++) {
		ok = write(c, "q", 1) == 1;
		r0 = mono();
		ok = ok && read_n(s, 1);
		r1 = mono();
		usleep(1000);	/* the work */
		s0 = mono();
		ok = ok && write(s, "a", 1) == 1;
		s1 = mono();
		ok = ok && read_n(c, 1);
		lo += s0 - r1;
		hi += s1 - r0;
		/* the buckets this sample can be in */
		if (satfeed_svc_bucket(s0 - r1) < bmin)
			bmin = satfeed_svc_bucket(s0 - r1);
		if (satfeed_svc_bucket(s1 - r0) > bmax)
			bmax = satfeed_svc_bucket(s1 - r0);
	}
	if (!ASSERT_TRUE(ok, "round trips") ||
	    !svc_total(p, slot, &n1, &sum1))
		goto out;
	ASSERT_EQ(n1 - n0, K, "service time samples, one per response");
	ASSERT_TRUE(sum1 - sum0 >= lo && sum1 - sum0 <= hi,
		    "service time sum %llu outside the test's bounds [%llu, %llu]",
		    (unsigned long long)(sum1 - sum0),
		    (unsigned long long)lo, (unsigned long long)hi);
	if (!ASSERT_OK(bpf_map_lookup_elem(p->svc_hist_fd, &slot, &h1),
		       "read the service-time histogram"))
		goto out;
	for (__u32 b = 0; b < SATFEED_SVC_BUCKETS; b++) {
		__u64 d = h1.count[b] - h0.count[b];

		got += d;
		ASSERT_TRUE(!d || (b >= bmin && b <= bmax),
			    "%llu samples in bucket %u, outside [%u, %u]",
			    (unsigned long long)d, b, bmin, bmax);
	}
	ASSERT_EQ(got, K, "histogram: one count per response");
out:
	tcp_close(lfd, c, s);
}

/* Wait up to 2 s for fd's map to hold want entries; what it held. */
static long entries_settle(int fd, long want)
{
	long n = map_entries(fd);

	for (int i = 0; i < 200 && n != want; i++) {
		usleep(10000);
		n = map_entries(fd);
	}
	return n;
}

#define CONNS	8

/* Accept CONNS connections, then close half orderly, half by reset. */
static void check_conn_life(struct satfeed_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.sf_conn);
	int lfd, c[CONNS], s[CONNS];
	struct sockaddr_in a;
	long base;

	for (int i = 0; i < CONNS; i++)
		c[i] = s[i] = -1;
	base = entries_settle(fd, 0);
	if (!ASSERT_EQ(base, 0, "sf_conn: no records before the connections"))
		return;
	lfd = listen_tcp(&a);
	if (!ASSERT_TRUE(lfd >= 0, "listen"))
		return;
	for (int i = 0; i < CONNS; i++) {
		c[i] = connect_tcp(&a);
		s[i] = accept(lfd, NULL, NULL);
		if (!ASSERT_TRUE(c[i] >= 0 && s[i] >= 0, "connect, accept %d",
				 i))
			goto out;
	}
	ASSERT_EQ(map_entries(fd), CONNS,
		  "sf_conn: one record per accepted connection, none per connect()");
	for (int i = 0; i < CONNS; i++) {
		if (i & 1) {
			struct linger l = { .l_onoff = 1, .l_linger = 0 };

			/* close with RST: TCP_CLOSE at once */
			setsockopt(s[i], SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		}
		close(s[i]);
		close(c[i]);
		s[i] = c[i] = -1;
	}
	ASSERT_EQ(entries_settle(fd, 0), 0,
		  "sf_conn: the closed connections' records are gone");
	ASSERT_EQ(skel->bss->sf_conn_full, 0, "sf_conn never full");
out:
	for (int i = 0; i < CONNS; i++) {
		if (c[i] >= 0)
			close(c[i]);
		if (s[i] >= 0)
			close(s[i]);
	}
	close(lfd);
}

void test_responses(void)
{
	struct satfeed_bpf *skel;
	struct sf_pins p;
	int slot;

	skel = start_engine(SATFEED_WINDOW_SHIFT, false);
	if (!skel)
		return;
	if (engine_maps(skel, &p) &&
	    ASSERT_OK(watch_self(&p, &slot), "watch self")) {
		check_tcp(&p, slot);
		check_proxy(&p, slot);
		check_udp(&p, slot);
		check_service(&p, slot);
		check_conn_life(skel);
	}
	satfeed_bpf__destroy(skel);
}
