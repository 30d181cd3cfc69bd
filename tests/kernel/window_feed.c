// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * window_feed.c - adversarial and random sequences are fed, one getppid()
 * per event, through the test-only program sf_test_feed
 * (kernel/progs/satfeed_test.bpf.c) into the same locked sf_account() the
 * syscall hooks use, writing the engine's sf_streams and sf_verdict; every
 * closed window, its normalized figures included, must equal an unsigned
 * __int128 reference exactly, and the verdict must be what the rules
 * (sat_rules.h) make of the windows that closed, in the target's
 * generation only.
 */
#include "test_kernel.h"
#include "sat_rules.h"
#include "sf_ref.h"

static __u32 sat32(u128 v)
{
	return v > 0xffffffffULL ? 0xffffffffU : (__u32)v;
}

/* Load the test object's sf_test_feed on the engine's own sf_streams. */
static struct satfeed_test_bpf *open_feeder(struct satfeed_bpf *engine,
					    __u32 shift)
{
	struct satfeed_test_bpf *skel;
	int err;

	skel = satfeed_test_bpf__open();
	if (!ASSERT_TRUE(skel, "open test object: %s", strerror(errno)))
		return NULL;
	skel->rodata->window_shift = shift;
	skel->rodata->test_tgid = getpid();
	skel->rodata->test_nr = SYS_getppid;
	err = bpf_map__reuse_fd(skel->maps.sf_streams,
				bpf_map__fd(engine->maps.sf_streams)) ?:
	      bpf_map__reuse_fd(skel->maps.sf_targets,
				bpf_map__fd(engine->maps.sf_targets)) ?:
	      bpf_map__reuse_fd(skel->maps.sf_verdict,
				bpf_map__fd(engine->maps.sf_verdict)) ?:
	      bpf_map__reuse_fd(skel->maps.sf_rules,
				bpf_map__fd(engine->maps.sf_rules));
	if (!ASSERT_OK(err, "reuse sf_streams, sf_targets, sf_verdict, sf_rules"))
		goto destroy;
	err = satfeed_test_bpf__load(skel);
	if (!ASSERT_OK(err, "load test object"))
		goto destroy;
	err = satfeed_test_bpf__attach(skel);
	if (!ASSERT_OK(err, "attach test object"))
		goto destroy;
	return skel;
destroy:
	satfeed_test_bpf__destroy(skel);
	return NULL;
}

static void feed_gen(struct satfeed_test_bpf *feeder, __u32 slot,
		     __u32 stream, __u32 gen, bool raw, __u64 value)
{
	feeder->bss->sf_test_in.slot = slot;
	feeder->bss->sf_test_in.stream = stream;
	feeder->bss->sf_test_in.gen = gen;
	feeder->bss->sf_test_in.raw = raw;
	feeder->bss->sf_test_in.count = 0;
	feeder->bss->sf_test_in.value = value;
	feeder->bss->sf_test_in.now = 0;
	feeder->bss->sf_test_in.runq = 0;
	syscall(SYS_getppid);
}

static void feed(struct satfeed_test_bpf *feeder, __u32 slot, __u32 stream,
		 bool raw, __u64 value)
{
	feed_gen(feeder, slot, stream, 1, raw, value);
}

/* A wait of `value` that ended at time now, runq of it run delay. */
static void feed_wait(struct satfeed_test_bpf *feeder, __u32 slot, __u32 gen,
		      __u64 value, __u64 now, __u64 runq)
{
	feeder->bss->sf_test_in.slot = slot;
	feeder->bss->sf_test_in.stream = SATFEED_STREAM_POLL;
	feeder->bss->sf_test_in.gen = gen;
	feeder->bss->sf_test_in.raw = 1;
	feeder->bss->sf_test_in.count = 0;
	feeder->bss->sf_test_in.value = value;
	feeder->bss->sf_test_in.now = now;
	feeder->bss->sf_test_in.runq = runq;
	syscall(SYS_getppid);
}

/* A failed or empty call of generation gen returning ret, to sf_count(). */
static void feed_count(struct satfeed_test_bpf *feeder, __u32 slot,
		       __u32 stream, __u32 gen, long ret)
{
	feeder->bss->sf_test_in.slot = slot;
	feeder->bss->sf_test_in.stream = stream;
	feeder->bss->sf_test_in.gen = gen;
	feeder->bss->sf_test_in.count = 1;
	feeder->bss->sf_test_in.value = (__u64)ret;
	syscall(SYS_getppid);
}

/*
 * Compare a closed window with the __int128 reference of its samples x and
 * run-queue times rq (NULL: a send or recv window, no shares), the window
 * spanning start to end.
 */
static bool window_matches(const struct satfeed_window *w, const __u64 *x,
			   const __u64 *rq, __u64 start, __u64 end,
			   __u32 shift, const char *name)
{
	__u32 n = 1U << shift;
	u128 s1 = 0, s2 = 0;
	__u64 clamped = 0, var, rate, runq = 0, cv2;
	bool ok = true;

	for (__u32 i = 0; i < n; i++) {
		__u64 v = x[i];

		if (v > SATFEED_SAMPLE_CAP_NS) {
			v = SATFEED_SAMPLE_CAP_NS;
			clamped++;
		}
		s1 += v;
		s2 += (u128)v * v;
		if (rq)
			runq += rq[i] < v ? rq[i] : v;
	}
	var = (__u64)(((u128)n * s2 - s1 * s1) / ((u128)n * n));
	rate = s1 ? (__u64)((u128)n * 1000000000000ULL / s1) : 0;
	ok &= ASSERT_EQ(w->seq, w->seq_end, name);
	ok &= ASSERT_EQ(w->samples, n, name);
	ok &= ASSERT_EQ(w->sum_ns, (__u64)s1, name);
	ok &= ASSERT_EQ(w->sumsq_lo, (__u64)s2, name);
	ok &= ASSERT_EQ(w->sumsq_hi, (__u64)(s2 >> 64), name);
	ok &= ASSERT_EQ(w->mean_ns, (__u64)(s1 / n), name);
	ok &= ASSERT_EQ(w->var_ns2, var, name);
	ok &= ASSERT_EQ(w->rate_milli, rate, name);
	ok &= ASSERT_EQ(w->clamped, clamped, name);
	cv2 = s1 ? sat32(1000 * ((u128)n * s2 - s1 * s1) / (s1 * s1)) : 0;
	ok &= ASSERT_EQ(w->cv2_permille, cv2, name);
	ok &= ASSERT_EQ(w->runq_ns, runq, name);
	ok &= ASSERT_EQ(w->wait_permille,
			rq ? ref_share((__u64)s1, start, end) : 0, name);
	ok &= ASSERT_EQ(w->idle_permille,
			rq ? ref_share((__u64)s1 - runq, start, end) : 0, name);
	if (rq) {
		ok &= ASSERT_EQ(w->start_ns, start, name);
		ok &= ASSERT_EQ(w->end_ns, end, name);
	}
	return ok;
}

static __u64 rnd64(void)
{
	return ((__u64)random() << 42) ^ ((__u64)random() << 21) ^ random();
}

enum seq_kind {
	ZEROS, AT_CAP, ALTERNATING, OUTLIER, INCREASING, OVER_CAP, EQUAL,
	HUGE_TINY, RANDOM, NR_KINDS
};

static const char *const kind_names[] = {
	"all zeros", "all at the cap (S1 near 2^48 at N=2^16)",
	"alternating extremes", "one outlier among equal values",
	"strictly increasing", "over the cap (clamped)", "all equal (cv2 0)",
	"one huge, the rest tiny", "random",
};

static void make_seq(enum seq_kind k, __u64 *x, __u32 n)
{
	const __u64 cap = SATFEED_SAMPLE_CAP_NS;

	for (__u32 i = 0; i < n; i++) {
		switch (k) {
		case ZEROS:
			x[i] = 0;
			break;
		case AT_CAP:
			x[i] = cap;
			break;
		case ALTERNATING:
			x[i] = i & 1 ? cap : 0;
			break;
		case OUTLIER:
			x[i] = i == n / 3 ? cap : 4242;
			break;
		case INCREASING:
			x[i] = i * 1000003ULL;
			break;
		case OVER_CAP:
			x[i] = i & 1 ? cap + 1 + rnd64() % 1000 : 17;
			break;
		case EQUAL:
			x[i] = 31337;
			break;
		case HUGE_TINY:
			x[i] = i == n - 1 ? cap : 1;
			break;
		default:
			x[i] = rnd64() >> (random() % 40);
		}
	}
}

/* A poll window of n waits of 1000 ns back to back, r of each run delay. */
static void poll_window(struct satfeed_test_bpf *feeder, __u32 slot, __u32 gen,
			__u32 n, __u64 r, __u64 *now)
{
	for (__u32 i = 0; i < n; i++) {
		*now += 1000;
		feed_wait(feeder, slot, gen, 1000, *now, r);
	}
}

/* A recv window of n gaps alternating 1000 - d and 1000 + d ns. */
static void recv_window(struct satfeed_test_bpf *feeder, __u32 slot, __u32 gen,
			__u32 n, __u64 d, __u64 *now)
{
	for (__u32 i = 0; i < n; i++) {
		*now += i & 1 ? 1000 + d : 1000 - d;
		feed_gen(feeder, slot, SATFEED_STREAM_RECV, gen, false, *now);
	}
}

/* The verdict as the engine wrote it equals want, field by field. */
static void verdict_matches(const struct sf_pins *p, __u32 slot,
			    const struct satfeed_verdict *want,
			    const char *name)
{
	struct satfeed_verdict v;

	if (!ASSERT_OK(sf_verdict_read(p, slot, &v), "read verdict"))
		return;
	ASSERT_EQ(v.gen, want->gen, name);
	ASSERT_EQ(v.state, want->state, name);
	ASSERT_EQ(v.why, want->why, name);
	ASSERT_EQ(v.idle_permille, want->idle_permille, name);
	ASSERT_EQ(v.send_cv2_permille, want->send_cv2_permille, name);
	ASSERT_EQ(v.recv_cv2_permille, want->recv_cv2_permille, name);
	ASSERT_EQ(v.base_cv2_permille, want->base_cv2_permille, name);
	ASSERT_EQ(v.seen, want->seen, name);
	ASSERT_EQ(v.since_ns, want->since_ns, name);
	ASSERT_EQ(v.updated_ns, want->updated_ns, name);
	ASSERT_EQ(v.changes, want->changes, name);
}

/* A send window of n sends 1000 ns apart. */
static void send_window(struct satfeed_test_bpf *feeder, __u32 slot,
			__u32 gen, __u32 n, __u64 *now)
{
	for (__u32 i = 0; i < n; i++) {
		*now += 1000;
		feed_gen(feeder, slot, SATFEED_STREAM_SEND, gen, false, *now);
	}
}

/*
 * The verdict through the engine's code: windows of chosen idle share,
 * dispersion and waits per send close in sf_account(), and the verdict must
 * be what satfeed_sat_update() makes of the same windows here, under the
 * target's own rules; the states are the ones the rules say.  A verdict of
 * another generation is left alone.
 */
static void test_verdict_feed(struct satfeed_test_bpf *feeder,
			      const struct sf_pins *p, __u32 shift)
{
	const struct {
		__u32 stream;
		__u64 arg;	/* poll: run delay per 1000 ns wait;
				 * recv: gap deviation */
		__u32 state, why;
		const char *name;
	} steps[] = {
		{ SATFEED_STREAM_POLL, 100, SATFEED_SAT_UNKNOWN, 0,
		  "idle 900 before any send window: unknown" },
		{ SATFEED_STREAM_SEND, 0, SATFEED_SAT_OK, 0,
		  "one wait per send (16 waits): ok" },
		{ SATFEED_STREAM_RECV, 500, SATFEED_SAT_OK, 0,
		  "recv cv2 250 at low load: the baseline" },
		{ SATFEED_STREAM_SEND, 0, SATFEED_SAT_NEAR,
		  SATFEED_SAT_WHY_WPS_NEAR, "no waits: wps_avg 875, near" },
		{ SATFEED_STREAM_RECV, 100, SATFEED_SAT_NEAR,
		  SATFEED_SAT_WHY_WPS_NEAR,
		  "recv cv2 10 while near: not a baseline" },
		{ SATFEED_STREAM_POLL, 650, SATFEED_SAT_NEAR,
		  SATFEED_SAT_WHY_WPS_NEAR,
		  "a poll window of idle 350: the rules take the tick's" },
		{ SATFEED_STREAM_POLL, 100, SATFEED_SAT_NEAR,
		  SATFEED_SAT_WHY_WPS_NEAR, "idle 900 again" },
		{ SATFEED_STREAM_SEND, 0, SATFEED_SAT_OK, 0,
		  "two waits per send: wps_avg 1015, ok" },
		{ SATFEED_STREAM_RECV, 900, SATFEED_SAT_NEAR,
		  SATFEED_SAT_WHY_CV2_RISE, "recv cv2 810 over 250 * 1.5: near" },
		{ SATFEED_STREAM_POLL, 900, SATFEED_SAT_NEAR,
		  SATFEED_SAT_WHY_CV2_RISE,
		  "a poll window of idle 100: still the rise alone" },
	};
	struct satfeed_target t = {
		.kind = SATFEED_TARGET_PID, .id = 999999, .gen = 3,
		.sc_mask = SATFEED_SC_ALL,
	};
	const struct satfeed_sat_rules rules = {
		.idle_near_permille = 400,
		.idle_full_permille = 150,
		.cv2_rise_permille = 500,
		.wps_near_permille = 900,
		.wps_full_permille = 500,
	};
	struct satfeed_verdict want = { .gen = 3 };
	__u32 slot = 9, n = 1U << shift;
	struct satfeed_stream st, poll;
	const struct satfeed_window *w;
	/* one clock per stream: a recv gap must not span a poll window */
	__u64 now = 1ULL << 40, rnow = 1ULL << 41, snow = 1ULL << 42;

	ASSERT_OK(sf_rules_write(p, slot, t.gen, &rules), "write rules");
	ASSERT_OK(bpf_map_update_elem(p->targets_fd, &slot, &t, 0),
		  "write target");
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		ASSERT_OK(sf_stream_reset(p, slot, s, t.gen), "reset");
	ASSERT_OK(sf_verdict_reset(p, slot, t.gen), "reset verdict");
	/* the first recv and send events open their traces */
	feed_gen(feeder, slot, SATFEED_STREAM_RECV, t.gen, false, rnow);
	feed_gen(feeder, slot, SATFEED_STREAM_SEND, t.gen, false, snow);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		__u32 stream = steps[i].stream;
		struct satfeed_sat_event e;

		if (stream == SATFEED_STREAM_POLL)
			poll_window(feeder, slot, t.gen, n, steps[i].arg, &now);
		else if (stream == SATFEED_STREAM_RECV)
			recv_window(feeder, slot, t.gen, n, steps[i].arg,
				    &rnow);
		else
			send_window(feeder, slot, t.gen, n, &snow);
		if (!ASSERT_OK(sf_stream_read(p, slot, stream, &st), "read") ||
		    !ASSERT_OK(sf_stream_read(p, slot, SATFEED_STREAM_POLL,
					      &poll), "read"))
			return;
		w = satfeed_newest_window(&st);
		if (!ASSERT_TRUE(w && w->seq == st.published && !st.pending,
				 "%s: a window closed", steps[i].name))
			return;
		e = (struct satfeed_sat_event){
			.stream = stream, .shift = shift,
			.idle_permille = w->idle_permille,
			.cv2_permille = w->cv2_permille,
			.poll_calls = poll.calls, .now = w->end_ns,
		};
		satfeed_sat_update(&want, &rules, &e);
		verdict_matches(p, slot, &want, steps[i].name);
		ASSERT_EQ(want.state, steps[i].state, steps[i].name);
		ASSERT_EQ(want.why, steps[i].why, steps[i].name);
	}
	ASSERT_EQ(want.idle_permille, 0,
		  "a poll window leaves the idle share to the tick");
	ASSERT_EQ(want.base_cv2_permille, 250, "baseline");
	ASSERT_EQ(want.recv_cv2_permille, 810, "recv cv2 of the last window");
	ASSERT_EQ(want.wps_permille, 2000, "waits per send, last window");
	ASSERT_EQ(want.wps_avg_permille, 1015, "smoothed");
	ASSERT_EQ(want.changes, 4, "changes: OK, NEAR, OK, NEAR");

	/* the slot's verdict now belongs to generation 4: left alone */
	ASSERT_OK(sf_verdict_reset(p, slot, 4), "reset verdict");
	poll_window(feeder, slot, t.gen, n, 0, &now);
	send_window(feeder, slot, t.gen, n, &snow);
	memset(&want, 0, sizeof(want));
	want.gen = 4;
	verdict_matches(p, slot, &want, "verdict of another generation");
	ASSERT_OK(sf_stream_read(p, slot, SATFEED_STREAM_POLL, &st), "read");
	ASSERT_EQ(st.published, 5, "the window did close");
	t.kind = SATFEED_TARGET_FREE;
	bpf_map_update_elem(p->targets_fd, &slot, &t, 0);
}

void test_window_feed(__u32 shift)
{
	static const char *const progs[] = { NULL };	/* maps only */
	struct satfeed_test_bpf *feeder = NULL;
	__u32 n = 1U << shift, slot = 5;
	struct satfeed_stream st;
	struct satfeed_verdict v;
	struct satfeed_bpf *skel;
	struct sf_pins p;
	__u64 *x, *rq, now;
	char name[96];

	x = calloc(n, sizeof(*x));
	rq = calloc(n, sizeof(*rq));
	skel = open_engine(shift, progs);
	if (skel)
		feeder = open_feeder(skel, shift);
	if (!feeder || !x || !rq || !engine_maps(skel, &p))
		goto out;
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		ASSERT_OK(sf_stream_reset(&p, slot, s, 1), "reset");
	/* no target of this generation in the slot: default rules */
	ASSERT_OK(sf_verdict_reset(&p, slot, 1), "reset verdict");

	for (int k = 0; k < NR_KINDS; k++) {
		__u64 start, end;

		/* as wait durations (poll stream: the sample is given), that
		 * follow each other (even kinds) or overlap eight at a time
		 * (odd kinds: shares near 8000), with run-queue times from
		 * none to half again the wait (clamped to it) */
		make_seq(k, x, n);
		now = 1ULL << 62;
		start = now - x[0];
		for (__u32 i = 0; i < n; i++) {
			if (i)
				now += (x[i] % (1ULL << 40)) / (k & 1 ? 8 : 1);
			rq[i] = k == ZEROS ? i : rnd64() % (x[i] / 2 * 3 + 1);
			feed_wait(feeder, slot, 1, x[i], now, rq[i]);
		}
		end = now;
		ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_POLL, &st,
				      true), "read");
		snprintf(name, sizeof(name), "poll, %s, N=%u", kind_names[k],
			 n);
		ASSERT_EQ(st.published, k + 1, name);
		window_matches(satfeed_window_by_seq(&st, k + 1), x, rq, start,
			       end, shift, name);

		/* as gaps between event times (send stream) */
		if (k == OVER_CAP)
			continue;	/* times would wrap; covered above */
		if (k == 0)
			feed(feeder, slot, SATFEED_STREAM_SEND, false, 1000000);
		/* event times must not wrap: gaps below 2^36 ns (still over
		 * the cap, so clamping is exercised here too) */
		for (__u32 i = 0; i < n; i++)
			x[i] %= 1ULL << 36;
		ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_SEND, &st,
				      true), "read");
		now = st.last_ns;
		for (__u32 i = 0; i < n; i++) {
			now += x[i];
			feed(feeder, slot, SATFEED_STREAM_SEND, false, now);
		}
		ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_SEND, &st,
				      true), "read");
		snprintf(name, sizeof(name), "send gaps, %s, N=%u",
			 kind_names[k], n);
		window_matches(satfeed_window_by_seq(&st, st.published), x,
			       NULL, 0, 0, shift, name);
		ASSERT_EQ(st.pending, 0, name);
	}

	/* an event older than the previous one is a zero gap, not a wrap */
	ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_RECV, &st, true),
		  "read");
	feed(feeder, slot, SATFEED_STREAM_RECV, false, 5000000);
	feed(feeder, slot, SATFEED_STREAM_RECV, false, 4000000);
	ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_RECV, &st, true),
		  "read");
	ASSERT_EQ(st.last_ns, 5000000, "time never goes back");
	ASSERT_EQ(st.acc_sum_ns, 0, "out-of-order gap counts as 0");
	ASSERT_EQ(st.pending, 1, "out-of-order event still a sample");
	/* a stale generation (slot reused) is ignored */
	feeder->bss->sf_test_in.gen = 2;
	syscall(SYS_getppid);
	ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_RECV, &st, true),
		  "read");
	ASSERT_EQ(st.calls, 2, "stale generation ignored");
	/* nor does it reach the counters kept outside the lock */
	feed_count(feeder, slot, SATFEED_STREAM_RECV, 2, 0);
	feed_count(feeder, slot, SATFEED_STREAM_RECV, 2, -EAGAIN);
	feed_count(feeder, slot, SATFEED_STREAM_RECV, 2, -EINTR);
	ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_RECV, &st, true),
		  "read");
	ASSERT_EQ(st.zero_bytes + st.eagain + st.errors, 0,
		  "stale generation counted as a failed or empty call");
	feed_count(feeder, slot, SATFEED_STREAM_RECV, 1, 0);
	feed_count(feeder, slot, SATFEED_STREAM_RECV, 1, -EAGAIN);
	feed_count(feeder, slot, SATFEED_STREAM_RECV, 1, -EINTR);
	ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_RECV, &st, true),
		  "read");
	ASSERT_EQ(st.zero_bytes, 1, "empty call of the current generation");
	ASSERT_EQ(st.eagain, 1, "EAGAIN of the current generation");
	ASSERT_EQ(st.errors, 1, "error of the current generation");
	ASSERT_OK(sf_verdict_read(&p, slot, &v), "read verdict");
	ASSERT_EQ(v.gen, 1, "verdict generation");
	/* no target written: its syscalls (no wait among them) unknown */
	ASSERT_EQ(v.seen, SATFEED_SAT_SEEN_POLL | SATFEED_SAT_SEEN_SEND,
		  "verdict follows windows even without a target entry");
	ASSERT_EQ(v.state, SATFEED_SAT_UNKNOWN, "no target entry: unknown");
	if (shift == 4)
		test_verdict_feed(feeder, &p, shift);
out:
	satfeed_test_bpf__destroy(feeder);
	satfeed_bpf__destroy(skel);
	free(x);
	free(rq);
}
