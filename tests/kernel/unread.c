// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unread.c - the receive queue (ABI 10, satfeed_verdict.unread_max): after
 * each receive on an accepted TCP connection of the target, the bytes still
 * queued on it, the most of them over a tick's interval, against the
 * kernel's own count of the socket (FIONREAD, tcp_inq()):
 *  - bytes queued, then read in parts by read() and recv(): the tick's
 *    unread_max is exactly what FIONREAD said after the first part (the
 *    most left), SATFEED_SAT_SEEN_UNREAD is set, and the default rules
 *    read it: saturated (SATFEED_SAT_WHY_UNREAD_FULL, 32 KiB or more);
 *  - the interval after, with no receive: 0, and no unread reason;
 *  - a connection read empty each time: 0;
 *  - a receive on this process's connect()ed socket (the client side,
 *    which has no record) leaving bytes unread: 0;
 *  - before any receive left bytes unread, the seen bit is clear.
 */
#include "test_kernel.h"
#include <netinet/in.h>
#include <sys/ioctl.h>

#define UNREAD_T_NS	200000000ULL	/* T: a tick every 100 ms */
/* bytes the client sends at once: more than SATFEED_SAT_UNREAD_FULL_DEFAULT
 * left after the first read */
#define QUEUED		80000
#define TRIES		3		/* a tick may split the reads */

/* Bytes queued on fd, the kernel's count (FIONREAD), or -1. */
static int inq(int fd)
{
	int n;

	return ioctl(fd, FIONREAD, &n) ? -1 : n;
}

/* Wait until fd holds n bytes (loopback: at once), false after a second. */
static bool queued(int fd, int n)
{
	for (int i = 0; i < 1000; i++) {
		if (inq(fd) == n)
			return true;
		usleep(1000);
	}
	return false;
}

/* Read exactly n bytes of fd in one call (read() or recv()). */
static bool take(int fd, size_t n, bool by_recv)
{
	static char buf[QUEUED];

	if (n > sizeof(buf))
		return false;
	return (size_t)(by_recv ? recv(fd, buf, n, 0) : read(fd, buf, n)) ==
	       n;
}

/*
 * Inside one tick's interval: the client sends QUEUED bytes, the server
 * reads 1000 by read(), then 3000 by recv(); *left gets FIONREAD after the
 * first read.  The verdict after the tick that ends that interval goes to
 * *v; false when a tick split it (try again) or something failed (*err).
 */
static bool queue_and_read(const struct sf_pins *p, int slot, int c, int s,
			   int *left, struct satfeed_verdict *v, bool *err)
{
	static char buf[QUEUED];
	struct satfeed_verdict v0;

	*err = true;
	if (!ASSERT_TRUE(next_tick(p, slot, UNREAD_T_NS, &v0), "a tick") ||
	    !ASSERT_EQ(write(c, buf, QUEUED), QUEUED, "client's write") ||
	    !ASSERT_TRUE(queued(s, QUEUED), "%d bytes queued", QUEUED) ||
	    !ASSERT_TRUE(take(s, 1000, false), "read 1000"))
		return false;
	*left = inq(s);
	if (!ASSERT_TRUE(take(s, 3000, true), "recv 3000") ||
	    !ASSERT_TRUE(next_tick(p, slot, UNREAD_T_NS, v), "the tick after"))
		return false;
	*err = false;
	return v->prev_tick_ns == v0.tick_ns;
}

static void check_unread(const struct sf_pins *p, int slot)
{
	struct satfeed_verdict v;
	int lfd, c, s, left = -1, i;
	bool err = false;

	if (!ASSERT_TRUE(tcp_accepted(&lfd, &c, &s),
			 "listen, connect, accept"))
		goto out;

	/* read empty each time: nothing left, nothing seen */
	for (i = 0; i < 4; i++)
		if (!ASSERT_EQ(write(c, "ping", 4), 4, "client's write") ||
		    !ASSERT_TRUE(queued(s, 4), "4 bytes queued") ||
		    !ASSERT_TRUE(take(s, 4, i & 1), "read all"))
			goto out;
	if (!ASSERT_TRUE(next_tick(p, slot, UNREAD_T_NS, &v), "a tick"))
		goto out;
	ASSERT_EQ(v.unread_max, 0, "a connection read empty: nothing left");
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_UNREAD, 0,
		  "not seen before bytes were left unread");

	/* the client's side: no record, so its queue does not count */
	if (!ASSERT_EQ(write(s, "pong pong pong", 14), 14, "server's write") ||
	    !ASSERT_TRUE(queued(c, 14), "14 bytes at the client") ||
	    !ASSERT_TRUE(take(c, 4, true), "client reads 4") ||
	    !ASSERT_TRUE(next_tick(p, slot, UNREAD_T_NS, &v), "a tick") ||
	    !ASSERT_TRUE(take(c, 10, false), "client reads the rest"))
		goto out;
	ASSERT_EQ(v.unread_max, 0, "the connect()ed side does not count");
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_UNREAD, 0,
		  "the connect()ed side: not seen");

	/* bytes left unread, within one interval */
	for (i = 0; i < TRIES; i++) {
		if (queue_and_read(p, slot, c, s, &left, &v, &err) || err)
			break;
		/* a tick came between: read the rest, try again */
		if (!ASSERT_TRUE(take(s, QUEUED - 4000, false), "the rest"))
			goto out;
	}
	if (err || !ASSERT_TRUE(i < TRIES, "reads inside one interval"))
		goto out;
	ASSERT_EQ(left, QUEUED - 1000, "FIONREAD after reading 1000");
	ASSERT_EQ(v.unread_max, (__u32)left,
		  "unread_max == the most FIONREAD showed after a receive");
	ASSERT_TRUE(v.seen & SATFEED_SAT_SEEN_UNREAD, "seen bit set");
	ASSERT_TRUE(v.state == SATFEED_SAT_FULL &&
		    (v.why & SATFEED_SAT_WHY_UNREAD_FULL) &&
		    (v.why & SATFEED_SAT_WHY_UNREAD_NEAR),
		    "the default unread rules: full at %u bytes (state %u why %#x)",
		    v.unread_max, v.state, v.why);
	printf("unread: %u bytes left unread at most (FIONREAD %d)\n",
	       v.unread_max, left);

	/* the rest read empty, then an interval without receives */
	if (!ASSERT_TRUE(take(s, QUEUED - 4000, true), "the rest") ||
	    !ASSERT_TRUE(next_tick(p, slot, UNREAD_T_NS, &v), "a tick") ||
	    !ASSERT_TRUE(next_tick(p, slot, UNREAD_T_NS, &v), "a quiet tick"))
		goto out;
	ASSERT_EQ(v.unread_max, 0, "an interval without receives: 0");
	ASSERT_TRUE(v.seen & SATFEED_SAT_SEEN_UNREAD, "seen stays set");
	ASSERT_EQ(v.why & (SATFEED_SAT_WHY_UNREAD_FULL |
			   SATFEED_SAT_WHY_UNREAD_NEAR), 0,
		  "nothing left unread: no unread reason");
out:
	tcp_close(lfd, c, s);
}

void test_unread(void)
{
	with_self_watched(UNREAD_T_NS, check_unread);
}
