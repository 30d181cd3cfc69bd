// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sat_rules.c - the saturation rules (bpf/sat_rules.h, the very file
 * the engine runs under the verdict's lock): the idle share and the service
 * time a tick brings (the default rules), the service time's smoothing and
 * baseline, the optional waits per send and their smoothing, the state after
 * each window of a sequence and its reasons, the dispersion rule with the
 * low-load baseline, the defaults a zero rule takes, rules turned off,
 * quiet, and the change count and times.
 */
#include <string.h>
#include "sat_rules.h"
#include "sf_test.h"

#define POLL SATFEED_STREAM_POLL
#define SEND SATFEED_STREAM_SEND
#define RECV SATFEED_STREAM_RECV
#define SHIFT 11	/* 2048-sample windows */

static struct satfeed_verdict v;
static __u64 now, polls;

/*
 * One window of stream closes with these figures, `waits` more waits having
 * ended since the previous window of any stream; returns the state.
 */
static __u32 win(const struct satfeed_sat_rules *r, __u32 stream, __u32 idle,
		 __u32 cv2, __u64 waits)
{
	__u64 changes = v.changes, since = v.since_ns;
	struct satfeed_sat_event e;
	__u32 before = v.state;
	int changed;

	now += 1000;
	polls += waits;
	e = (struct satfeed_sat_event){ .stream = stream, .shift = SHIFT,
					.idle_permille = idle,
					.cv2_permille = cv2,
					.poll_calls = polls, .now = now };
	changed = satfeed_sat_update(&v, r, &e);
	ASSERT_EQ(changed, v.state != before, "changed says whether it did");
	ASSERT_EQ(v.changes, changes + (v.state != before), "changes");
	ASSERT_EQ(v.since_ns, v.state != before ? now : since, "since_ns");
	ASSERT_EQ(v.updated_ns, now, "updated_ns");
	if (stream == SEND)
		ASSERT_EQ(v.poll_mark, polls, "poll mark at a send window");
	return v.state;
}

/*
 * A send window over which the server waited wps times per 1000 sends: the
 * fewest waits whose floor(1000 * waits / N) is wps.
 */
static __u32 send_win(const struct satfeed_sat_rules *r, __u32 wps)
{
	__u32 state = win(r, SEND, 0, 0, (((__u64)wps << SHIFT) + 999) / 1000);

	ASSERT_EQ(v.wps_permille, wps, "wps of the window");
	return state;
}

static void fresh(void)
{
	memset(&v, 0, sizeof(v));
	v.gen = 7;
	polls = 0;
}

/* the waits-per-send rules of ABI 4's defaults, off by default since 5 */
static const struct satfeed_sat_rules wps_rules = {
	.wps_near_permille = 150, .wps_full_permille = 30,
};

static void test_wps(void)
{
	const struct satfeed_sat_rules def = wps_rules;
	__u32 avg;

	fresh();
	ASSERT_EQ(win(&def, POLL, 900, 0, 5), SATFEED_SAT_UNKNOWN,
		  "unknown before the first send window");
	ASSERT_EQ(win(&def, RECV, 0, 100, 0), SATFEED_SAT_UNKNOWN,
		  "unknown before the first send window");
	/* 5 waits so far, then 2043 more over the first send window */
	ASSERT_EQ(win(&def, SEND, 0, 0, 2043), SATFEED_SAT_OK,
		  "one wait per send: ok");
	ASSERT_EQ(v.wps_permille, 1000, "2048 waits per 2048 sends");
	ASSERT_EQ(v.wps_avg_permille, 1000, "the first send window's wps");
	ASSERT_EQ(v.why, 0, "no reason");
	/* wps exactly: floor(1000 * waits / N) */
	win(&def, SEND, 0, 0, 3);
	ASSERT_EQ(v.wps_permille, 1, "3 waits in 2048 sends");
	ASSERT_EQ(v.wps_avg_permille, (7 * 1000 + 1) >> 3, "smoothed");
	/* one saturated window is not saturation */
	ASSERT_EQ(v.state, SATFEED_SAT_OK, "one saturated window: still ok");
	avg = v.wps_avg_permille;
	while (v.state == SATFEED_SAT_OK) {
		send_win(&def, 0);
		avg = (7 * avg) >> 3;
		ASSERT_EQ(v.wps_avg_permille, avg, "EWMA 1/2");
	}
	ASSERT_EQ(v.state, SATFEED_SAT_NEAR, "sustained: near first");
	ASSERT_TRUE(v.wps_avg_permille < 150 && v.wps_avg_permille >= 30,
		    "near between the rules: %u", v.wps_avg_permille);
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_WPS_NEAR, "why near");
	while (v.state == SATFEED_SAT_NEAR)
		send_win(&def, 0);
	ASSERT_EQ(v.state, SATFEED_SAT_FULL, "then saturated");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_WPS_NEAR | SATFEED_SAT_WHY_WPS_FULL,
		  "why full");
	ASSERT_TRUE(v.wps_avg_permille < 30,
		    "full below the rule: %u", v.wps_avg_permille);
	/* the other streams re-evaluate with the same figures */
	ASSERT_EQ(win(&def, POLL, 0, 0, 0), SATFEED_SAT_FULL,
		  "a poll window's idle share is not the rules' (the tick's)");
	ASSERT_EQ(win(&def, RECV, 0, 99999, 0), SATFEED_SAT_FULL,
		  "dispersion alone changes nothing by default");
	/* back: a few windows of one wait per send */
	while (v.state != SATFEED_SAT_OK)
		send_win(&def, 1000);
	ASSERT_EQ(v.changes, 5, "changes: to OK, NEAR, FULL, NEAR, OK");
	ASSERT_EQ(v.gen, 7, "gen untouched");
	ASSERT_EQ(v.seen, SATFEED_SAT_SEEN_POLL | SATFEED_SAT_SEEN_RECV |
			  SATFEED_SAT_SEEN_SEND | SATFEED_SAT_SEEN_WPS |
			  SATFEED_SAT_SEEN_WAITS | SATFEED_SAT_SEEN_BASE,
		  "seen");

	/* no wait counted (no wait syscall, or a thread per connection) */
	fresh();
	ASSERT_EQ(win(&def, SEND, 0, 0, 0), SATFEED_SAT_UNKNOWN,
		  "no waits: unknown");
	ASSERT_EQ(v.wps_permille, 0, "wps 0");
	ASSERT_EQ(win(&def, SEND, 0, 0, 0), SATFEED_SAT_UNKNOWN,
		  "still no waits: unknown, not saturated");
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_WPS, 0, "no wps without waits");
	ASSERT_EQ(win(&def, SEND, 0, 0, 2048), SATFEED_SAT_OK,
		  "waits at last");
	ASSERT_EQ(v.wps_avg_permille, 1000,
		  "the average starts with the first window with waits");

	/* more waits than sends, and a poll count that went back */
	fresh();
	win(&def, SEND, 0, 0, 0xffffffffffffULL);
	ASSERT_EQ(v.wps_permille, 0xffffffffU, "wps saturates");
	win(&def, SEND, 0, 0, ~0ULL - polls);
	ASSERT_EQ(v.wps_permille, 0xffffffffU, "wps saturates, 2^64 waits");
	ASSERT_EQ(v.wps_avg_permille, 0xffffffffU, "no overflow");
	polls = 10;
	win(&def, SEND, 0, 0, 0);
	ASSERT_EQ(v.wps_permille, (10 * 1000) >> SHIFT,
		  "a poll count below the mark counts from 0");
	ASSERT_EQ(v.wps_avg_permille,
		  (__u32)((7ULL * 0xffffffffU + 4) >> 3), "no overflow");
}

/* A tick: the idle share (known or not) and a new service mean (0: none) */
static __u32 tick(const struct satfeed_sat_rules *r, int known, __u32 idle,
		  __u64 svc)
{
	__u64 changes = v.changes, since = v.since_ns;
	struct satfeed_sat_tick t;
	__u32 before = v.state;
	int changed;

	now += 1000;
	t = (struct satfeed_sat_tick){ .idle_permille = idle,
				       .idle_known = known,
				       .svc_mean_ns = svc, .now = now };
	changed = satfeed_sat_tick(&v, r, &t);
	ASSERT_EQ(changed, v.state != before, "tick: changed says whether it did");
	ASSERT_EQ(v.changes, changes + (v.state != before), "tick: changes");
	ASSERT_EQ(v.since_ns, v.state != before ? now : since, "tick: since_ns");
	ASSERT_EQ(v.updated_ns, now, "tick: updated_ns");
	return v.state;
}

static void test_defaults(void)
{
	const struct satfeed_sat_rules zero = {};
	struct satfeed_sat_rules eff;

	satfeed_sat_rules_effective(&zero, &eff);
	ASSERT_EQ(eff.idle_near_permille, 150, "default idle near");
	ASSERT_EQ(eff.idle_full_permille, 50, "default idle full");
	ASSERT_EQ(eff.svc_near_permille, 4000, "default service near: 4x");
	ASSERT_EQ(eff.svc_full_permille, 6000, "default service full: 6x");
	ASSERT_EQ(eff.cv2_rise_permille, SATFEED_SAT_RULE_OFF,
		  "dispersion rule off by default");
	ASSERT_EQ(eff.wps_near_permille, SATFEED_SAT_RULE_OFF,
		  "waits per send off by default");
	ASSERT_EQ(eff.wps_full_permille, SATFEED_SAT_RULE_OFF,
		  "waits per send off by default");
	fresh();
	ASSERT_EQ(tick(&zero, 1, 150, 0), SATFEED_SAT_OK, "at idle near: ok");
	ASSERT_EQ(tick(&zero, 1, 149, 0), SATFEED_SAT_NEAR, "below idle near");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_IDLE_NEAR, "why idle near");
	ASSERT_EQ(tick(&zero, 1, 50, 0), SATFEED_SAT_NEAR, "at idle full");
	ASSERT_EQ(tick(&zero, 1, 49, 0), SATFEED_SAT_FULL, "below idle full");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_IDLE_NEAR | SATFEED_SAT_WHY_IDLE_FULL,
		  "why idle full");
	ASSERT_EQ(tick(&zero, 0, 0, 0), SATFEED_SAT_FULL,
		  "a tick that measured nothing keeps the idle share");
	ASSERT_EQ(v.idle_permille, 49, "idle kept");
	ASSERT_EQ(tick(&zero, 1, 1000, 0), SATFEED_SAT_OK, "idle again");
	/* waits per send, off: a send window without waits changes nothing */
	ASSERT_EQ(send_win(&zero, 0), SATFEED_SAT_OK, "wps off by default");
	ASSERT_EQ(v.why, 0, "no reason");
}

static void test_unknown(void)
{
	const struct satfeed_sat_rules zero = {};

	fresh();
	ASSERT_EQ(win(&zero, SEND, 0, 0, 2048), SATFEED_SAT_UNKNOWN,
		  "windows alone, wps off: unknown");
	ASSERT_EQ(win(&zero, POLL, 900, 0, 5), SATFEED_SAT_UNKNOWN,
		  "a poll window alone: unknown");
	ASSERT_EQ(tick(&zero, 0, 0, 0), SATFEED_SAT_UNKNOWN,
		  "a tick with no thread waiting and no service: unknown");
	ASSERT_EQ(tick(&zero, 0, 0, 5000), SATFEED_SAT_OK,
		  "a service mean: judged");
	ASSERT_EQ(v.seen & (SATFEED_SAT_SEEN_IDLE | SATFEED_SAT_SEEN_SVC),
		  SATFEED_SAT_SEEN_SVC, "seen: service only");
	fresh();
	ASSERT_EQ(tick(&zero, 1, 0, 0), SATFEED_SAT_FULL,
		  "an idle share alone: judged");
	/* waits per send on, a send window with waits judges alone */
	fresh();
	ASSERT_EQ(send_win(&wps_rules, 1000), SATFEED_SAT_OK, "wps on: judged");
}

static void test_svc(void)
{
	const struct satfeed_sat_rules zero = {};
	const struct satfeed_sat_rules r = { .svc_near_permille = 2000,
					     .svc_full_permille = 4000 };
	__u64 avg;

	fresh();
	tick(&zero, 1, 1000, 10000);
	ASSERT_EQ(v.svc_avg_ns, 10000, "first mean: the average");
	ASSERT_EQ(v.svc_base_ns, 10000, "first mean: the baseline");
	tick(&zero, 1, 1000, 8000);
	ASSERT_EQ(v.svc_avg_ns, 8000, "a lower mean: taken at once");
	ASSERT_EQ(v.svc_base_ns, 8000, "baseline: the lowest mean");
	tick(&zero, 1, 1000, 9000);
	ASSERT_EQ(v.svc_avg_ns, (8000 + 9000) >> 1, "a higher one: EWMA 1/2");
	ASSERT_EQ(v.svc_base_ns, 8000, "a higher mean is no baseline");
	tick(&zero, 1, 1000, 0);
	ASSERT_EQ(v.svc_avg_ns, (8000 + 9000) >> 1,
		  "no new window: the average stays");
	/* rise until near: 4x the baseline is not above it; means of 5x
	 * never make it full */
	avg = v.svc_avg_ns;
	for (int i = 0; i < 40; i++) {
		ASSERT_TRUE(v.state == (avg * 1000 / 8000 > 4000 ?
					SATFEED_SAT_NEAR : SATFEED_SAT_OK),
			    "near above 4x only: state %u, avg %llu",
			    v.state, (unsigned long long)avg);
		tick(&zero, 1, 1000, 40000);
		avg = (avg + 40000) >> 1;
		ASSERT_EQ(v.svc_avg_ns, avg, "EWMA 1/2");
	}
	ASSERT_EQ(v.state, SATFEED_SAT_NEAR, "service time up 5x: near");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_SVC_NEAR, "why service near");
	while (v.state == SATFEED_SAT_NEAR)
		tick(&zero, 1, 1000, 200000);
	ASSERT_EQ(v.state, SATFEED_SAT_FULL, "then saturated");
	ASSERT_TRUE(v.svc_avg_ns * 1000 / 8000 > 6000, "full above 6x");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_SVC_NEAR | SATFEED_SAT_WHY_SVC_FULL,
		  "why service full");
	ASSERT_EQ(v.svc_base_ns, 8000, "a rise is not a baseline");
	/* exact thresholds with set rules: avg = 2 * base is not above */
	fresh();
	tick(&r, 1, 1000, 1000);
	v.svc_avg_ns = 2000;
	ASSERT_EQ(tick(&r, 1, 1000, 0), SATFEED_SAT_OK, "at 2x: not above");
	v.svc_avg_ns = 2001;
	ASSERT_EQ(tick(&r, 1, 1000, 0), SATFEED_SAT_NEAR, "above 2x");
	v.svc_avg_ns = 4000;
	ASSERT_EQ(tick(&r, 1, 1000, 0), SATFEED_SAT_NEAR, "at 4x: near");
	v.svc_avg_ns = 4001;
	ASSERT_EQ(tick(&r, 1, 1000, 0), SATFEED_SAT_FULL, "above 4x: full");
	/* both rules: the idle share and the service time */
	ASSERT_EQ(tick(&r, 1, 49, 0), SATFEED_SAT_FULL, "both full");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_SVC_NEAR | SATFEED_SAT_WHY_SVC_FULL |
			 SATFEED_SAT_WHY_IDLE_NEAR | SATFEED_SAT_WHY_IDLE_FULL,
		  "why both");
	/* quiet: unknown stays unknown until a send or recv window closed,
	 * then becomes ok */
	fresh();
	ASSERT_EQ(satfeed_sat_quiet(&v, now), 0, "quiet, nothing seen: no change");
	ASSERT_EQ(v.state, SATFEED_SAT_UNKNOWN, "quiet, nothing seen: unknown");
	ASSERT_EQ(win(&zero, SEND, 0, 0, 0), SATFEED_SAT_UNKNOWN,
		  "a send window, no rule can judge it");
	ASSERT_EQ(satfeed_sat_quiet(&v, now), 1, "quiet after sends: a change");
	ASSERT_EQ(v.state, SATFEED_SAT_OK, "quiet after sends: ok");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_QUIET, "why quiet");
	ASSERT_EQ(satfeed_sat_quiet(&v, now), 0, "quiet again: no change");
	fresh();
	tick(&r, 1, 1000, 1000);
	v.svc_avg_ns = 4001;
	ASSERT_EQ(tick(&r, 1, 1000, 0), SATFEED_SAT_FULL, "full again");
	/* quiet: the average restarts from the baseline */
	ASSERT_EQ(satfeed_sat_quiet(&v, now), 1, "quiet leaves full");
	ASSERT_EQ(v.svc_avg_ns, v.svc_base_ns, "average back to the base");
	v.quiet_ns = now;
	ASSERT_EQ(tick(&r, 1, 0, 0), SATFEED_SAT_OK,
		  "a tick while quiet: no evaluation");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_QUIET, "still quiet");
	v.quiet_ns = 0;
	ASSERT_EQ(tick(&r, 1, 1000, 0), SATFEED_SAT_OK, "ok after quiet");
	ASSERT_EQ(v.why, 0, "active again: the rules judge");
	/* huge means: no overflow (capped at 2^53 ns) */
	fresh();
	tick(&zero, 1, 1000, 1);
	ASSERT_EQ(tick(&zero, 1, 1000, ~0ULL), SATFEED_SAT_FULL,
		  "a huge mean over a 1 ns baseline: full, no overflow");
	ASSERT_TRUE(v.svc_avg_ns <= (1ULL << 53), "average capped: %llu",
		    (unsigned long long)v.svc_avg_ns);
	fresh();
	tick(&zero, 1, 1000, ~0ULL);
	ASSERT_EQ(v.svc_base_ns, 1ULL << 53, "baseline capped");
	ASSERT_EQ(tick(&zero, 1, 1000, ~0ULL), SATFEED_SAT_OK,
		  "huge but steady: ok");
}

/* A tick with d datagrams dropped and r received in its interval. */
static __u32 drop_tick(const struct satfeed_sat_rules *r, __u64 d, __u64 rc)
{
	struct satfeed_sat_tick t = { .idle_permille = 1000, .idle_known = 1,
				      .drops = d, .recvs = rc };

	now += 1000;
	t.now = now;
	satfeed_sat_tick(&v, r, &t);
	return v.state;
}

static void test_drops(void)
{
	const struct satfeed_sat_rules zero = {}, off = {
		.drop_near_permille = SATFEED_SAT_RULE_OFF,
		.drop_full_permille = SATFEED_SAT_RULE_OFF,
	};
	static const __u64 adv[] = {
		0, 1, 2, 3, 9, 10, 999, 1000, 1001, 0xffffffffULL,
		0x100000000ULL, (1ULL << 52) + 1, (1ULL << 53) - 1, 1ULL << 53,
	};
	struct satfeed_sat_rules eff;

	satfeed_sat_rules_effective(&zero, &eff);
	ASSERT_EQ(eff.drop_near_permille, 10, "default drop near: 1%");
	ASSERT_EQ(eff.drop_full_permille, 50, "default drop full: 5%");
	fresh();
	ASSERT_EQ(drop_tick(&zero, 0, 0), SATFEED_SAT_OK, "no datagram: ok");
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_DROPS, 0,
		  "no datagram: the share is not known");
	ASSERT_EQ(drop_tick(&zero, 0, 1000), SATFEED_SAT_OK, "no drop: ok");
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_DROPS, 0,
		  "receives without a drop: not known (a TCP server's 0)");
	ASSERT_EQ(v.drop_permille, 0, "receives without a drop: 0");
	memset(&v, 0, sizeof(v));
	v.gen = 7;
	v.seen = SATFEED_SAT_SEEN_SEND | SATFEED_SAT_SEEN_RECV;
	{
		struct satfeed_sat_tick t = { .recvs = 1000, .now = ++now };

		satfeed_sat_tick(&v, &zero, &t);
		ASSERT_EQ(v.state, SATFEED_SAT_UNKNOWN,
			  "no idle, no service, no drop: unknown, not ok");
	}
	ASSERT_EQ(drop_tick(&zero, 1, 999), SATFEED_SAT_OK, "1 permille: ok");
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_DROPS, SATFEED_SAT_SEEN_DROPS,
		  "a drop: the share is known");
	ASSERT_EQ(drop_tick(&zero, 9, 991), SATFEED_SAT_OK, "9 permille: ok");
	ASSERT_EQ(drop_tick(&zero, 10, 990), SATFEED_SAT_NEAR,
		  "10 permille: near");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_DROP_NEAR, "why drop near");
	ASSERT_EQ(drop_tick(&zero, 49, 951), SATFEED_SAT_NEAR,
		  "49 permille: near");
	ASSERT_EQ(drop_tick(&zero, 50, 950), SATFEED_SAT_FULL,
		  "50 permille: full");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_DROP_NEAR | SATFEED_SAT_WHY_DROP_FULL,
		  "why drop full");
	ASSERT_EQ(drop_tick(&zero, 0, 0), SATFEED_SAT_OK,
		  "an interval with neither: 0, ok");
	ASSERT_EQ(v.drop_permille, 0, "an interval with neither reads 0");
	ASSERT_EQ(drop_tick(&off, 1000, 0), SATFEED_SAT_OK,
		  "drop rules off: ok at 1000 permille");
	ASSERT_EQ(v.drop_permille, 1000, "all dropped: 1000 permille");

	/* exact against a 128-bit reference, adversarial pairs */
	for (size_t i = 0; i < sizeof(adv) / sizeof(adv[0]); i++) {
		for (size_t j = 0; j < sizeof(adv) / sizeof(adv[0]); j++) {
			__u64 d = adv[i], rc = adv[j];
			unsigned __int128 want = d + rc ?
				(unsigned __int128)d * 1000 / (d + rc) : 0;

			fresh();
			drop_tick(&off, d, rc);
			ASSERT_EQ(v.drop_permille, (__u64)want,
				  "floor(1000 d / (d + r)), exact");
		}
	}
	/* past 2^53 of either: capped, no overflow, within 0..1000 */
	fresh();
	drop_tick(&off, ~0ULL, ~0ULL);
	ASSERT_EQ(v.drop_permille, 500, "2^64 - 1 each: capped alike, 500");
	drop_tick(&off, ~0ULL, 0);
	ASSERT_EQ(v.drop_permille, 1000, "2^64 - 1 dropped, none received");
	drop_tick(&off, 1, ~0ULL);
	ASSERT_EQ(v.drop_permille, 0, "1 dropped of 2^64 - 1");
}

/* A tick with c ns of CPU over interval ns on cpus CPUs, as the engine
 * takes it: the CPU, then the rules r (NULL: the defaults). */
static __u32 cpu_tick_rules(const struct satfeed_sat_rules *r, __u64 c,
			    __u64 interval, __u32 cpus)
{
	struct satfeed_sat_tick t = { .idle_permille = 1000, .idle_known = 1 };

	now += 1000;
	t.now = now;
	satfeed_sat_cpu(&v, c, interval, cpus);
	satfeed_sat_tick(&v, r ?: &(const struct satfeed_sat_rules){}, &t);
	return v.state;
}

static void cpu_tick(__u64 c, __u64 interval, __u32 cpus)
{
	cpu_tick_rules(NULL, c, interval, cpus);
}

/* The CPU share (ABI 8) exact against 128 bits, and its rules (ABI 9). */
static void test_cpu(void)
{
	static const __u64 adv[] = {
		0, 1, 2, 999, 1000, 1001, 499999999, 500000000, 500000001,
		0xffffffffULL, 0x100000000ULL, (1ULL << 52) + 1,
		(1ULL << 53) - 1, 1ULL << 53, ~0ULL,
	};
	static const __u32 ncpu[] = { 1, 2, 3, 7, 64, 4096, 0xffffffffU };

	fresh();
	cpu_tick(0, 0, 0);
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_CPU, 0, "no thread: not known");
	ASSERT_EQ(v.cpu_permille, 0, "no thread: 0");
	cpu_tick(250000000, 500000000, 1);
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_CPU, SATFEED_SAT_SEEN_CPU,
		  "a thread seen over an interval: known");
	ASSERT_EQ(v.cpu_permille, 500, "half a CPU: 500");
	ASSERT_EQ(v.cpus, 1, "cpus as the tick gave");
	ASSERT_EQ(v.state, SATFEED_SAT_OK, "half a CPU, idle 1000: ok");
	cpu_tick(750000000, 500000000, 2);
	ASSERT_EQ(v.cpu_permille, 750, "1.5 of 2 CPUs: 750");
	ASSERT_EQ(v.cpu_ns, 1000000000, "cpu_ns adds every tick's");
	cpu_tick(600000000, 500000000, 1);
	ASSERT_EQ(v.cpu_permille, 1000, "more than the CPUs (skew): 1000");
	ASSERT_EQ(v.state, SATFEED_SAT_FULL,
		  "a full CPU, idle 1000 per thread: full (ABI 9)");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_CPU_FULL, "why: cpu full alone");
	{
		const struct satfeed_sat_rules zero = {}, near = {
			.cpu_near_permille = 930 }, off = {
			.cpu_near_permille = SATFEED_SAT_RULE_OFF,
			.cpu_full_permille = SATFEED_SAT_RULE_OFF };
		struct satfeed_sat_rules eff;

		satfeed_sat_rules_effective(&zero, &eff);
		ASSERT_EQ(eff.cpu_near_permille, SATFEED_SAT_RULE_OFF,
			  "default cpu near: off");
		ASSERT_EQ(eff.cpu_full_permille, 970, "default cpu full: 970");
		fresh();
		ASSERT_EQ(cpu_tick_rules(NULL, 969, 1000, 1), SATFEED_SAT_OK,
			  "969 permille: ok");
		ASSERT_EQ(cpu_tick_rules(NULL, 970, 1000, 1), SATFEED_SAT_FULL,
			  "970 permille: full");
		ASSERT_EQ(cpu_tick_rules(NULL, 1940, 1000, 2),
			  SATFEED_SAT_FULL, "1.94 of 2 CPUs: full");
		ASSERT_EQ(cpu_tick_rules(NULL, 1938, 1000, 2), SATFEED_SAT_OK,
			  "1.938 of 2 CPUs (969): ok");
		ASSERT_EQ(cpu_tick_rules(&near, 929, 1000, 1), SATFEED_SAT_OK,
			  "near 930 set: 929 ok");
		ASSERT_EQ(cpu_tick_rules(&near, 930, 1000, 1),
			  SATFEED_SAT_NEAR, "near 930 set: 930 near");
		ASSERT_EQ(v.why, SATFEED_SAT_WHY_CPU_NEAR, "why: cpu near");
		ASSERT_EQ(cpu_tick_rules(&near, 990, 1000, 1),
			  SATFEED_SAT_FULL, "near 930 set: 990 full");
		ASSERT_EQ(v.why,
			  SATFEED_SAT_WHY_CPU_NEAR | SATFEED_SAT_WHY_CPU_FULL,
			  "why: both cpu rules");
		ASSERT_EQ(cpu_tick_rules(&off, 1000, 1000, 1), SATFEED_SAT_OK,
			  "cpu rules off: ok at 1000");
		/* known only with the figure: no tick saw a thread */
		fresh();
		{
			struct satfeed_sat_tick t = { .now = ++now };

			satfeed_sat_cpu(&v, 0, 0, 0);
			satfeed_sat_tick(&v, &zero, &t);
			ASSERT_EQ(v.state, SATFEED_SAT_UNKNOWN,
				  "no figure known: unknown");
			satfeed_sat_cpu(&v, 990, 1000, 1);
			t.now = ++now;
			satfeed_sat_tick(&v, &zero, &t);
			ASSERT_EQ(v.state, SATFEED_SAT_FULL,
				  "the CPU share alone is enough to judge");
		}
	}

	for (size_t i = 0; i < sizeof(adv) / sizeof(adv[0]); i++)
		for (size_t j = 1; j < sizeof(adv) / sizeof(adv[0]); j++)
			for (size_t k = 0; k < sizeof(ncpu) / sizeof(ncpu[0]);
			     k++) {
				__u64 c = adv[i] > (1ULL << 53) ? 1ULL << 53 :
								  adv[i];
				unsigned __int128 want =
					(unsigned __int128)c * 1000 /
					((unsigned __int128)adv[j] * ncpu[k]);

				if (want > 1000)
					want = 1000;
				__u32 got = satfeed_sat_cpu_permille(adv[i],
								     adv[j],
								     ncpu[k]);

				ASSERT_TRUE(got == (__u64)want,
					    "floor(1000 c / (interval cpus)) of c %llu, interval %llu, cpus %u: got %u, want %llu",
					    (unsigned long long)adv[i],
					    (unsigned long long)adv[j], ncpu[k],
					    got, (unsigned long long)want);
			}
}

static void test_rules_off(void)
{
	const struct satfeed_sat_rules off = {
		.idle_near_permille = SATFEED_SAT_RULE_OFF,
		.idle_full_permille = SATFEED_SAT_RULE_OFF,
		.cv2_rise_permille = SATFEED_SAT_RULE_OFF,
		.wps_near_permille = SATFEED_SAT_RULE_OFF,
		.wps_full_permille = SATFEED_SAT_RULE_OFF,
		.svc_near_permille = SATFEED_SAT_RULE_OFF,
		.svc_full_permille = SATFEED_SAT_RULE_OFF,
		.drop_near_permille = SATFEED_SAT_RULE_OFF,
		.drop_full_permille = SATFEED_SAT_RULE_OFF,
		.cpu_near_permille = SATFEED_SAT_RULE_OFF,
		.cpu_full_permille = SATFEED_SAT_RULE_OFF,
		.unread_near_bytes = SATFEED_SAT_RULE_OFF,
		.unread_full_bytes = SATFEED_SAT_RULE_OFF,
	};

	fresh();
	ASSERT_EQ(win(&off, SEND, 0, 0, 0), SATFEED_SAT_OK,
		  "every rule off: ok once a window closed");
	fresh();
	tick(&off, 1, 1000, 1000);
	send_win(&off, 1000);
	send_win(&off, 0);
	ASSERT_EQ(tick(&off, 1, 0, 1000000), SATFEED_SAT_OK, "all rules off");
	win(&off, RECV, 0, 1, 0);
	ASSERT_EQ(v.base_cv2_permille, 1, "baseline with the rules off: any");
	ASSERT_EQ(win(&off, RECV, 0, 1000000, 0), SATFEED_SAT_OK, "rise off");
}

static void test_cv2_rise(void)
{
	const struct satfeed_sat_rules r = { .cv2_rise_permille = 500,
					     .wps_near_permille = 150,
					     .wps_full_permille = 30 };

	fresh();
	send_win(&r, 1000);
	win(&r, RECV, 0, 1200, 0);
	ASSERT_EQ(v.base_cv2_permille, 1200, "first low-load baseline");
	win(&r, RECV, 0, 1000, 0);
	ASSERT_EQ(v.base_cv2_permille, 1000, "baseline is the minimum");
	win(&r, RECV, 0, 1100, 0);
	ASSERT_EQ(v.base_cv2_permille, 1000, "baseline does not rise");
	ASSERT_EQ(win(&r, RECV, 0, 1500, 0), SATFEED_SAT_OK,
		  "at base + 50%: not above it");
	ASSERT_EQ(win(&r, RECV, 0, 1501, 0), SATFEED_SAT_NEAR,
		  "above base + 50%");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_CV2_RISE, "why rise");
	ASSERT_EQ(v.base_cv2_permille, 1000, "a rise is not a baseline");
	/* near by waits: no baseline */
	while (v.wps_avg_permille >= 150)
		send_win(&r, 0);
	win(&r, RECV, 0, 1, 0);
	ASSERT_EQ(v.base_cv2_permille, 1000, "no baseline while near");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_WPS_NEAR, "near by waits only");
	/* huge baseline and rise: no overflow */
	fresh();
	send_win(&r, 1000);
	win(&r, RECV, 0, 0xfffffffe, 0);
	{
		const struct satfeed_sat_rules big = {
			.cv2_rise_permille = 0xfffffffe,
			.wps_near_permille = 150, .wps_full_permille = 30 };

		ASSERT_EQ(win(&big, RECV, 0, 0xffffffff, 0), SATFEED_SAT_OK,
			  "no overflow of the limit");
	}
	/* a zero baseline: any dispersion is a rise */
	fresh();
	send_win(&r, 1000);
	win(&r, RECV, 0, 0, 0);
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_BASE, SATFEED_SAT_SEEN_BASE,
		  "a zero baseline is a baseline");
	ASSERT_EQ(win(&r, RECV, 0, 1, 0), SATFEED_SAT_NEAR,
		  "over a zero baseline");
}

/* A tick whose receives left at most u bytes unread, rules r (NULL: the
 * defaults), the idle share 1000: only the unread rules can hold. */
static __u32 unread_tick(const struct satfeed_sat_rules *r, __u32 u)
{
	struct satfeed_sat_tick t = { .idle_permille = 1000, .idle_known = 1,
				      .unread = u };

	t.now = ++now;
	satfeed_sat_tick(&v, r ?: &(const struct satfeed_sat_rules){}, &t);
	return v.state;
}

/* The receive queue (ABI 10): the tick's figure as given, its rules, and
 * known from the first bytes left unread. */
static void test_unread(void)
{
	const struct satfeed_sat_rules set = { .unread_near_bytes = 100,
					       .unread_full_bytes = 1000 },
		off = { .unread_near_bytes = SATFEED_SAT_RULE_OFF,
			.unread_full_bytes = SATFEED_SAT_RULE_OFF },
		zero = {};
	struct satfeed_sat_rules eff;

	satfeed_sat_rules_effective(&zero, &eff);
	ASSERT_EQ(eff.unread_near_bytes, 16384, "default unread near: 16 KiB");
	ASSERT_EQ(eff.unread_full_bytes, 32768, "default unread full: 32 KiB");

	/* not known until bytes were left: unknown, not ok */
	fresh();
	{
		struct satfeed_sat_tick t = { .now = ++now };

		satfeed_sat_tick(&v, &zero, &t);
		ASSERT_EQ(v.state, SATFEED_SAT_UNKNOWN,
			  "nothing left unread, nothing else known: unknown");
		ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_UNREAD, 0, "not seen");
		t.unread = 20000;
		t.now = ++now;
		satfeed_sat_tick(&v, &zero, &t);
		ASSERT_EQ(v.state, SATFEED_SAT_NEAR,
			  "the unread figure alone is enough to judge");
		ASSERT_EQ(v.why, SATFEED_SAT_WHY_UNREAD_NEAR, "why: unread near");
	}

	fresh();
	ASSERT_EQ(unread_tick(NULL, 16383), SATFEED_SAT_OK, "16383: ok");
	ASSERT_EQ(v.unread_max, 16383, "unread_max: the tick's");
	ASSERT_EQ(unread_tick(NULL, 16384), SATFEED_SAT_NEAR, "16384: near");
	ASSERT_EQ(unread_tick(NULL, 32767), SATFEED_SAT_NEAR, "32767: near");
	ASSERT_EQ(unread_tick(NULL, 32768), SATFEED_SAT_FULL, "32768: full");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_UNREAD_NEAR |
			 SATFEED_SAT_WHY_UNREAD_FULL, "why: both unread rules");
	ASSERT_EQ(unread_tick(NULL, 0xffffffffU), SATFEED_SAT_FULL,
		  "the largest: full");
	ASSERT_EQ(unread_tick(NULL, 0), SATFEED_SAT_OK,
		  "an interval read empty: 0, ok");
	ASSERT_EQ(v.unread_max, 0, "unread_max 0");
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_UNREAD, SATFEED_SAT_SEEN_UNREAD,
		  "seen stays");
	ASSERT_EQ(unread_tick(&set, 99), SATFEED_SAT_OK, "set 100: 99 ok");
	ASSERT_EQ(unread_tick(&set, 100), SATFEED_SAT_NEAR, "set 100: near");
	ASSERT_EQ(unread_tick(&set, 1000), SATFEED_SAT_FULL, "set 1000: full");
	ASSERT_EQ(unread_tick(&off, 0xffffffffU), SATFEED_SAT_OK,
		  "unread rules off: ok at any figure");
}

int main(void)
{
	test_wps();
	test_defaults();
	test_unknown();
	test_svc();
	test_rules_off();
	test_cv2_rise();
	test_drops();
	test_cpu();
	test_unread();
	return sf_test_summary("test_sat_rules");
}
