// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udp_drops.c - the datagrams a target's UDP socket drops (ABI 7,
 * satfeed_verdict.drops and drop_permille), against the kernel's own count
 * of the socket (SO_MEMINFO's SK_MEMINFO_DROPS, sk_drops_read()):
 *  - drops before the target's first receive on the socket do not count
 *    (the first receive takes the socket's count as its start);
 *  - a flood into a socket with the smallest receive buffer, then the
 *    queue read out: the verdict's drops grow by exactly the kernel's;
 *  - the tick after: drop_permille is floor(1000 * d / (d + r)) over its
 *    interval, d those drops and r the receives, exactly the datagrams
 *    read (the marks the tick leaves say the interval's d and r), and the
 *    default rules read it: saturated (SATFEED_SAT_WHY_DROP_FULL, 50
 *    permille or more), then not by drops in an interval without any.
 * The sender is this process too: its connected socket never receives, so
 * it has no record.
 */
#include "test_kernel.h"
#include <time.h>
#include <netinet/in.h>
#include <linux/sock_diag.h>

#define DROPS_T_NS	200000000ULL	/* T: a tick every 100 ms */
#define FLOOD		300		/* datagrams sent per flood */

/* The kernel's drop count of socket fd, or -1. */
static long long kernel_drops(int fd)
{
	__u32 mem[SK_MEMINFO_VARS];
	socklen_t l = sizeof(mem);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &l) ||
	    l <= SK_MEMINFO_DROPS * sizeof(__u32))
		return -1;
	return mem[SK_MEMINFO_DROPS];
}

/* Send FLOOD datagrams of 1000 bytes on c without reading. */
static bool flood(int c)
{
	char buf[1000] = { 0 };

	for (int i = 0; i < FLOOD; i++)
		if (send(c, buf, sizeof(buf), 0) != sizeof(buf))
			return false;
	return true;
}

/* Read every queued datagram of s: how many, or -1. */
static long drain(int s)
{
	char buf[2000];
	long n = 0;
	ssize_t r;

	while ((r = recv(s, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		n++;
	return r < 0 && errno == EAGAIN ? n : -1;
}

static void check_drops(const struct sf_pins *p, int slot)
{
	struct satfeed_verdict v0, v1, v2;
	long long k0, k1, k2;
	int s, c;
	__u64 d, r;
	long got;

	/* SO_RCVBUF 1: the kernel's least buffer, a few datagrams */
	if (!ASSERT_OK(udp_pair(1, &s, &c),
		       "a UDP socket with the smallest SO_RCVBUF, its client"))
		return;

	/* drops before the first receive: the socket's count starts there */
	if (!ASSERT_TRUE(flood(c), "first flood") ||
	    !ASSERT_TRUE(drain(s) > 0, "first flood read") ||
	    !ASSERT_OK(sf_verdict_read(p, slot, &v0), "read verdict"))
		goto out;
	k0 = kernel_drops(s);
	if (!ASSERT_TRUE(k0 > 0, "the first flood dropped datagrams (%lld)",
			 k0))
		goto out;
	ASSERT_EQ(v0.drops, 0, "drops before the first receive do not count");

	/* a flood inside one tick's interval */
	if (!ASSERT_TRUE(next_tick(p, slot, DROPS_T_NS, &v1), "a tick"))
		goto out;
	if (!ASSERT_TRUE(flood(c), "second flood"))
		goto out;
	got = drain(s);
	k1 = kernel_drops(s);
	if (!ASSERT_TRUE(got > 0, "second flood read") ||
	    !ASSERT_TRUE(k1 > k0, "the second flood dropped datagrams") ||
	    !ASSERT_TRUE(next_tick(p, slot, DROPS_T_NS, &v2), "the tick after"))
		goto out;
	ASSERT_EQ(v2.drops - v1.drops, (__u64)(k1 - k0),
		  "drops == the kernel's SK_MEMINFO_DROPS growth");
	if (ASSERT_EQ(v2.prev_tick_ns, v1.tick_ns,
		      "flood and read inside one interval")) {
		d = v2.drop_mark - v1.drop_mark;
		r = v2.recv_mark - v1.recv_mark;
		ASSERT_EQ(d, (__u64)(k1 - k0), "the interval's drops");
		ASSERT_EQ(r, (__u64)got, "the interval's receives");
		ASSERT_EQ(v2.drop_permille, (__u32)(1000 * d / (d + r)),
			  "drop_permille == floor(1000 d / (d + r))");
		ASSERT_TRUE(v2.drop_permille < SATFEED_SAT_DROP_FULL_DEFAULT ||
			    (v2.state == SATFEED_SAT_FULL &&
			     (v2.why & SATFEED_SAT_WHY_DROP_FULL)),
			    "the default drop rule: full at %u permille (state %u why %#x)",
			    v2.drop_permille, v2.state, v2.why);
		printf("udp_drops: %llu dropped, %llu received: %u permille\n",
		       (unsigned long long)d, (unsigned long long)r,
		       v2.drop_permille);
	}

	/* the next interval without drops reads 0 */
	if (ASSERT_TRUE(next_tick(p, slot, DROPS_T_NS, &v2),
			"a tick without drops")) {
		k2 = kernel_drops(s);
		ASSERT_EQ(v2.drop_permille, 0, "no drop, 0 permille");
		ASSERT_EQ(v2.why & (SATFEED_SAT_WHY_DROP_FULL |
				    SATFEED_SAT_WHY_DROP_NEAR), 0,
			  "no drop: no drop reason");
		ASSERT_EQ(v2.drops - v1.drops, (__u64)(k2 - k0),
			  "drops still the kernel's");
	}
out:
	close(c);
	close(s);
}

void test_udp_drops(void)
{
	with_self_watched(DROPS_T_NS, check_drops);
}
