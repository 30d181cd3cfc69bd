// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sat_rules.c - the saturation rules (bpf/sat_rules.h, the very file
 * the engine runs under the verdict's lock): the state after each window
 * of a sequence, the reasons, the low-load baseline, the defaults a zero
 * rule takes, rules turned off, and the change count and times.
 */
#include <string.h>
#include "sat_rules.h"
#include "sf_test.h"

#define POLL SATFEED_STREAM_POLL
#define SEND SATFEED_STREAM_SEND
#define RECV SATFEED_STREAM_RECV

static struct satfeed_verdict v;
static __u64 now;

/* One window of stream closes with these figures; returns the state. */
static __u32 win(const struct satfeed_sat_rules *r, __u32 stream, __u32 idle,
		 __u32 cv2)
{
	__u64 changes = v.changes, since = v.since_ns;
	__u32 before = v.state;
	int changed;

	now += 1000;
	changed = satfeed_sat_update(&v, r, stream, idle, cv2, now);
	ASSERT_EQ(changed, v.state != before, "changed says whether it did");
	ASSERT_EQ(v.changes, changes + (v.state != before), "changes");
	ASSERT_EQ(v.since_ns, v.state != before ? now : since, "since_ns");
	ASSERT_EQ(v.updated_ns, now, "updated_ns");
	return v.state;
}

static void fresh(void)
{
	memset(&v, 0, sizeof(v));
	v.gen = 7;
}

static void test_idle_rules(void)
{
	const struct satfeed_sat_rules r = { .idle_near_permille = 300,
					     .idle_full_permille = 100 };

	fresh();
	ASSERT_EQ(win(&r, SEND, 0, 5000), SATFEED_SAT_UNKNOWN,
		  "unknown before the first poll window");
	ASSERT_EQ(win(&r, RECV, 0, 5000), SATFEED_SAT_UNKNOWN,
		  "unknown before the first poll window");
	ASSERT_EQ(v.seen, SATFEED_SAT_SEEN_SEND | SATFEED_SAT_SEEN_RECV,
		  "seen: send and recv");
	ASSERT_EQ(v.send_cv2_permille, 5000, "send figure recorded");
	ASSERT_EQ(win(&r, POLL, 800, 0), SATFEED_SAT_OK, "idle 800");
	ASSERT_EQ(v.why, 0, "no reason at idle 800");
	ASSERT_EQ(win(&r, POLL, 300, 0), SATFEED_SAT_OK, "idle at near: ok");
	ASSERT_EQ(win(&r, POLL, 299, 0), SATFEED_SAT_NEAR, "idle below near");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_IDLE_NEAR, "why near");
	ASSERT_EQ(win(&r, POLL, 100, 0), SATFEED_SAT_NEAR, "idle at full");
	ASSERT_EQ(win(&r, POLL, 99, 0), SATFEED_SAT_FULL, "idle below full");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_IDLE_NEAR | SATFEED_SAT_WHY_IDLE_FULL,
		  "why full");
	ASSERT_EQ(v.idle_permille, 99, "idle figure recorded");
	/* other streams' windows re-evaluate with the last idle figure */
	ASSERT_EQ(win(&r, SEND, 0, 1), SATFEED_SAT_FULL, "send keeps it");
	ASSERT_EQ(win(&r, POLL, 0, 0), SATFEED_SAT_FULL, "idle 0");
	ASSERT_EQ(win(&r, POLL, 5000, 0), SATFEED_SAT_OK, "idle back up");
	ASSERT_EQ(v.changes, 4, "changes: to OK, NEAR, FULL, OK");
	ASSERT_EQ(v.gen, 7, "gen untouched");
}

static void test_defaults(void)
{
	const struct satfeed_sat_rules zero = {};
	struct satfeed_sat_rules eff;

	satfeed_sat_rules_effective(&zero, &eff);
	ASSERT_EQ(eff.idle_near_permille, SATFEED_SAT_IDLE_NEAR_DEFAULT,
		  "default near");
	ASSERT_EQ(eff.idle_full_permille, SATFEED_SAT_IDLE_FULL_DEFAULT,
		  "default full");
	ASSERT_EQ(eff.cv2_rise_permille, SATFEED_SAT_CV2_RISE_DEFAULT,
		  "default rise");
	fresh();
	win(&zero, POLL, SATFEED_SAT_IDLE_NEAR_DEFAULT, 0);
	ASSERT_EQ(v.state, SATFEED_SAT_OK, "at the default near: ok");
	win(&zero, POLL, SATFEED_SAT_IDLE_NEAR_DEFAULT - 1, 0);
	ASSERT_EQ(v.state, SATFEED_SAT_NEAR, "below the default near");
	win(&zero, POLL, SATFEED_SAT_IDLE_FULL_DEFAULT - 1, 0);
	ASSERT_EQ(v.state, SATFEED_SAT_FULL, "below the default full");
}

static void test_rules_off(void)
{
	const struct satfeed_sat_rules off = {
		.idle_near_permille = SATFEED_SAT_RULE_OFF,
		.idle_full_permille = SATFEED_SAT_RULE_OFF,
		.cv2_rise_permille = SATFEED_SAT_RULE_OFF,
	};

	fresh();
	ASSERT_EQ(win(&off, POLL, 0, 0), SATFEED_SAT_OK, "all rules off");
	win(&off, RECV, 0, 1);
	ASSERT_EQ(v.base_cv2_permille, 1, "baseline with near off: any");
	ASSERT_EQ(win(&off, RECV, 0, 1000000), SATFEED_SAT_OK,
		  "rise off");
}

static void test_cv2_rise(void)
{
	const struct satfeed_sat_rules r = { .idle_near_permille = 300,
					     .idle_full_permille = 100,
					     .cv2_rise_permille = 500 };

	fresh();
	win(&r, RECV, 0, 100);
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_BASE, 0,
		  "no baseline before idle is known");
	win(&r, POLL, 200, 0);
	win(&r, RECV, 0, 100);
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_BASE, 0,
		  "no baseline while near by idle");
	win(&r, POLL, 900, 0);
	ASSERT_EQ(v.state, SATFEED_SAT_OK, "idle 900");
	win(&r, RECV, 0, 1200);
	ASSERT_EQ(v.base_cv2_permille, 1200, "first low-load baseline");
	win(&r, RECV, 0, 1000);
	ASSERT_EQ(v.base_cv2_permille, 1000, "baseline is the minimum");
	win(&r, RECV, 0, 1100);
	ASSERT_EQ(v.base_cv2_permille, 1000, "baseline does not rise");
	ASSERT_EQ(win(&r, RECV, 0, 1500), SATFEED_SAT_OK,
		  "at base + 50%: not above it");
	ASSERT_EQ(win(&r, RECV, 0, 1501), SATFEED_SAT_NEAR,
		  "above base + 50%");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_CV2_RISE, "why rise");
	ASSERT_EQ(v.base_cv2_permille, 1000, "a rise is not a baseline");
	/* the rise does not make it saturated, idle does */
	ASSERT_EQ(win(&r, POLL, 50, 0), SATFEED_SAT_FULL, "full wins");
	ASSERT_EQ(v.why, SATFEED_SAT_WHY_IDLE_NEAR | SATFEED_SAT_WHY_IDLE_FULL |
				 SATFEED_SAT_WHY_CV2_RISE, "every reason");
	win(&r, RECV, 0, 1);
	ASSERT_EQ(v.base_cv2_permille, 1000, "no baseline at high load");
	ASSERT_EQ(win(&r, POLL, 900, 0), SATFEED_SAT_OK,
		  "idle up, dispersion down");
	/* huge baseline and rise: no overflow */
	fresh();
	win(&r, POLL, 900, 0);
	win(&r, RECV, 0, 0xfffffffe);
	{
		const struct satfeed_sat_rules big = {
			.cv2_rise_permille = 0xfffffffe };

		ASSERT_EQ(win(&big, RECV, 0, 0xffffffff), SATFEED_SAT_OK,
			  "no overflow of the limit");
	}
	/* a zero baseline: any dispersion is a rise */
	fresh();
	win(&r, POLL, 900, 0);
	win(&r, RECV, 0, 0);
	ASSERT_EQ(v.seen & SATFEED_SAT_SEEN_BASE, SATFEED_SAT_SEEN_BASE,
		  "a zero baseline is a baseline");
	ASSERT_EQ(win(&r, RECV, 0, 1), SATFEED_SAT_NEAR, "over a zero baseline");
}

int main(void)
{
	test_idle_rules();
	test_defaults();
	test_rules_off();
	test_cv2_rise();
	return sf_test_summary("test_sat_rules");
}
