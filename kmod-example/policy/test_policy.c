// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_policy.c - host unit test of the consumer's governor policy
 * (sfc_policy.c, the very file the module compiles).
 *
 * Prints one "ok N - ..." / "not ok N - ..." line per check and closes with
 * "test_policy: P passed, F failed"; exits non-zero on any failure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../test_check.h"

#include "sfc_policy.h"

#define MS	1000000ULL
#define SEC	1000000000ULL

static const struct sfc_policy_params P = {
	.hysteresis = 5,
	.max_step = 25,
	.min_interval_ns = 50 * MS,
	.stale_ns = 1 * SEC,
};

/* A target that waited for work idle_pct of the wall time. */
static struct sfc_signals sig(u64 now, u32 idle_pct)
{
	struct sfc_signals s = {
		.now_ns = now,
		.last_event_ns = now,
		.poll_seq = 5,
		.poll_idle_permille = idle_pct * 10,
		.recv_seq = 5,
		.recv_cv2_permille = 1000,	/* cv^2 = 1: no burst */
	};
	return s;
}

/*
 * idle_permille as satfeed's engine computes it for a poll window (satfeed.h):
 * floor(1000 * (sum_ns - runq_ns) / span)
 */
static u32 idle_permille(u64 sum_ns, u64 runq_ns, u64 span_ns)
{
	return (u32)(1000 * (sum_ns - runq_ns) / span_ns);
}

static void test_demand(void)
{
	struct sfc_signals s;
	int prev = 101, d, idle;
	bool mono = true;

	s = sig(10 * SEC, 50);
	s.poll_seq = s.recv_seq = 0;
	CHECK(sfc_policy_demand(&P, &s) == -1, "no window yet: no information");

	s = sig(10 * SEC, 50);
	s.last_event_ns = 10 * SEC - 2 * SEC;
	CHECK(sfc_policy_demand(&P, &s) == 0, "quiet for 2 s (> stale): demand 0");

	s = sig(10 * SEC, 50);
	s.last_event_ns = 0;
	CHECK(sfc_policy_demand(&P, &s) == 0, "no event ever: demand 0");

	s = sig(10 * SEC, 95);
	CHECK(sfc_policy_demand(&P, &s) == 5, "95%% idle: demand 5 (got %d)",
	      sfc_policy_demand(&P, &s));
	s = sig(10 * SEC, 10);
	CHECK(sfc_policy_demand(&P, &s) == 90, "10%% idle: demand 90 (got %d)",
	      sfc_policy_demand(&P, &s));

	prev = -1;
	for (idle = 100; idle >= 0; idle--) {
		s = sig(10 * SEC, idle);
		d = sfc_policy_demand(&P, &s);
		if (d < prev)
			mono = false;
		prev = d;
	}
	CHECK(mono, "demand never falls as slack falls");

	s = sig(10 * SEC, 50);
	d = sfc_policy_demand(&P, &s);
	s.recv_cv2_permille = 4000;	/* cv^2 = 4 */
	CHECK(sfc_policy_demand(&P, &s) == d + SFC_BURST_MAX,
	      "bursty recv gaps (cv^2 = 4) raise demand (%d -> %d)", d,
	      sfc_policy_demand(&P, &s));
	s.recv_cv2_permille = 1500;	/* cv^2 = 1.5: 5 points */
	CHECK(sfc_policy_demand(&P, &s) == d + 5,
	      "cv^2 = 1.5 adds 5 (%d -> %d)", d, sfc_policy_demand(&P, &s));
	s.recv_cv2_permille = 999;
	CHECK(sfc_policy_demand(&P, &s) == d,
	      "cv^2 below 1 adds nothing (%d)", sfc_policy_demand(&P, &s));
	s.recv_cv2_permille = ~0U;
	CHECK(sfc_policy_demand(&P, &s) == 50 + SFC_BURST_MAX,
	      "burst is capped at %d", SFC_BURST_MAX);

	s = sig(10 * SEC, 0);
	s.recv_cv2_permille = ~0U;
	CHECK(sfc_policy_demand(&P, &s) == 100, "demand is capped at 100");

	/* several threads waiting at once: the share sums above 1000 */
	s = sig(10 * SEC, 50);
	s.poll_idle_permille = 1400;
	CHECK(sfc_policy_demand(&P, &s) == 0,
	      "idle share above 1000 (two waiting threads): demand %d",
	      sfc_policy_demand(&P, &s));
	s.poll_idle_permille = ~0U;
	CHECK(sfc_policy_demand(&P, &s) == 0, "idle share 2^32 - 1: demand %d",
	      sfc_policy_demand(&P, &s));
	s.poll_idle_permille = 999;
	CHECK(sfc_policy_demand(&P, &s) == 1, "idle share 999: demand %d",
	      sfc_policy_demand(&P, &s));

	/*
	 * The failure this figure fixes (scx guest test, fresh machine): the
	 * server's waits filled 90% of the span, but 50 points of it were run
	 * delay behind CPU-bound tasks.  Wait share alone read 10; without
	 * the run delay it reads 60.
	 */
	s = sig(10 * SEC, 0);
	s.poll_idle_permille = idle_permille(900 * MS, 0, 1000 * MS);
	CHECK(sfc_policy_demand(&P, &s) == 10,
	      "waits 90%% of the span, no run delay: demand %d",
	      sfc_policy_demand(&P, &s));
	s.poll_idle_permille = idle_permille(900 * MS, 500 * MS, 1000 * MS);
	CHECK(sfc_policy_demand(&P, &s) == 60,
	      "waits 90%%, 50%% of it runnable behind others: demand %d",
	      sfc_policy_demand(&P, &s));

	s = sig(10 * SEC, 30);
	s.poll_seq = 0;
	d = sfc_policy_demand(&P, &s);
	CHECK(d == 0, "recv only, Poisson-like: demand %d (no slack signal)", d);
}

static void test_step(void)
{
	struct sfc_policy_state st = { 0 };
	struct sfc_signals s;
	u64 t = 10 * SEC;
	int moved, flaps, i;

	s = sig(t, 20);			/* demand 80 */
	moved = sfc_policy_step(&P, &st, &s);
	CHECK(moved && st.level == 25, "first move is limited to max_step (level %u)",
	      st.level);
	s.now_ns = t + 10 * MS;
	moved = sfc_policy_step(&P, &st, &s);
	CHECK(!moved && st.level == 25, "no second move inside the rate limit");
	s.now_ns = t + 60 * MS;
	moved = sfc_policy_step(&P, &st, &s);
	CHECK(moved && st.level == 50, "moves again after the rate limit (level %u)",
	      st.level);
	for (i = 0; i < 10; i++) {
		s.now_ns += 60 * MS;
		sfc_policy_step(&P, &st, &s);
	}
	CHECK(st.level == 80, "converges to the demand (level %u)", st.level);

	/* jitter of +-4 around 80 does not flap the level */
	flaps = 0;
	for (i = 0; i < 100; i++) {
		s = sig(s.now_ns + 60 * MS, (i & 1) ? 16 : 24);
		flaps += sfc_policy_step(&P, &st, &s);
	}
	CHECK(flaps == 0 && st.level == 80,
	      "jitter within the hysteresis: %d moves, level %u", flaps,
	      st.level);

	/* a real drop is followed, down too */
	for (i = 0; i < 10; i++) {
		s = sig(s.now_ns + 60 * MS, 90);
		sfc_policy_step(&P, &st, &s);
	}
	CHECK(st.level == 10, "falls with the demand (level %u)", st.level);
	CHECK(st.changes >= 6, "moves are counted (%llu)",
	      (unsigned long long)st.changes);

	/* no information keeps the level */
	s = sig(s.now_ns + 60 * MS, 50);
	s.poll_seq = s.recv_seq = 0;
	moved = sfc_policy_step(&P, &st, &s);
	CHECK(!moved && st.level == 10, "no information: level kept");

	/* a target that went quiet decays to 0 */
	s = sig(s.now_ns + 5 * SEC, 50);
	s.last_event_ns = s.now_ns - 5 * SEC;
	moved = sfc_policy_step(&P, &st, &s);
	CHECK(moved && st.level == 0, "stale target: level 0");

	/* hysteresis 0 and rate limit 0 follow the demand at once */
	{
		struct sfc_policy_params q = P;

		q.hysteresis = 0;
		q.min_interval_ns = 0;
		q.max_step = 100;
		memset(&st, 0, sizeof(st));
		s = sig(t, 37);
		sfc_policy_step(&q, &st, &s);
		CHECK(st.level == 63, "no hysteresis, no limit: level = demand (%u)",
		      st.level);
	}
}

/*
 * The quiet bound derived from the engine's age bound T (stale_ms=0): the
 * module's default.  The engine's newest windows say quiet at most 1.5 T
 * after the last event (satfeed.h), so a target quiet for less than 2 T
 * still counts, and one quiet for longer has demand 0.
 */
static void test_stale_bound(void)
{
	static const u64 ts[] = { SATFEED_MAX_AGE_NS_MIN, 250 * MS,
				  SATFEED_MAX_AGE_NS_DEFAULT, 3 * SEC,
				  SATFEED_MAX_AGE_NS_MAX };
	struct sfc_policy_params q = P;
	struct sfc_signals s;
	unsigned int i;
	bool ok = true;

	CHECK(sfc_policy_stale_ns(0, SATFEED_MAX_AGE_NS_DEFAULT) == 2 * SEC,
	      "stale_ms=0, T 1 s (the engine's default): 2 s");
	CHECK(sfc_policy_stale_ns(0, 20 * MS) == 40 * MS,
	      "stale_ms=0, T 20 ms: 40 ms (got %llu)",
	      (unsigned long long)sfc_policy_stale_ns(0, 20 * MS));
	CHECK(sfc_policy_stale_ns(0, SATFEED_MAX_AGE_NS_MAX) ==
	      2 * SATFEED_MAX_AGE_NS_MAX,
	      "stale_ms=0, the largest T: 2 T, no overflow");
	CHECK(sfc_policy_stale_ns(0, 0) == 2 * SATFEED_MAX_AGE_NS_DEFAULT,
	      "stale_ms=0, T not read: 2 x the engine's default T");
	CHECK(sfc_policy_stale_ns(1500, 20 * MS) == 1500 * MS,
	      "stale_ms=1500 overrides T 20 ms: 1.5 s");
	CHECK(sfc_policy_stale_ns(1, SATFEED_MAX_AGE_NS_DEFAULT) == 1 * MS,
	      "stale_ms=1 overrides T 1 s: 1 ms");
	CHECK(sfc_policy_stale_ns(600000, 0) == 600 * SEC,
	      "stale_ms=600000 (the largest): 600 s");

	/* the policy with the derived bound, for each T */
	for (i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		u64 now = 100 * SEC;

		q.stale_ns = sfc_policy_stale_ns(0, ts[i]);
		s = sig(now, 50);
		s.last_event_ns = now - ts[i] - ts[i] / 2;	/* 1.5 T */
		if (sfc_policy_demand(&q, &s) != 50) {
			ok = false;
			printf("# T %llu ns, quiet 1.5 T: demand %d, not 50\n",
			       (unsigned long long)ts[i],
			       sfc_policy_demand(&q, &s));
		}
		s.last_event_ns = now - 2 * ts[i];		/* 2 T */
		if (sfc_policy_demand(&q, &s) != 50) {
			ok = false;
			printf("# T %llu ns, quiet 2 T: demand %d, not 50\n",
			       (unsigned long long)ts[i],
			       sfc_policy_demand(&q, &s));
		}
		s.last_event_ns = now - 2 * ts[i] - 1;	/* past 2 T */
		if (sfc_policy_demand(&q, &s) != 0) {
			ok = false;
			printf("# T %llu ns, quiet 2 T + 1 ns: demand %d, not 0\n",
			       (unsigned long long)ts[i],
			       sfc_policy_demand(&q, &s));
		}
	}
	CHECK(ok, "derived bound: quiet up to 2 T keeps the demand, past 2 T it is 0 (T 20 ms .. 4.3 s)");
}

int main(void)
{
	test_demand();
	test_step();
	test_stale_bound();
	printf("test_policy: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
