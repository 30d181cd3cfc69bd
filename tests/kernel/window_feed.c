// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * window_feed.c - adversarial and random sequences are fed, one getppid()
 * per event, through the test-only program sf_test_feed
 * (kernel/progs/satfeed_test.bpf.c) into the same locked sf_account() the
 * syscall hooks use, writing the engine's sf_streams; every closed window
 * must equal an unsigned __int128 reference exactly.
 */
#include "test_kernel.h"

typedef unsigned __int128 u128;

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
				bpf_map__fd(engine->maps.sf_streams));
	if (!ASSERT_OK(err, "reuse sf_streams"))
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

static void feed(struct satfeed_test_bpf *feeder, __u32 slot, __u32 stream,
		 bool raw, __u64 value)
{
	feeder->bss->sf_test_in.slot = slot;
	feeder->bss->sf_test_in.stream = stream;
	feeder->bss->sf_test_in.gen = 1;
	feeder->bss->sf_test_in.raw = raw;
	feeder->bss->sf_test_in.count = 0;
	feeder->bss->sf_test_in.value = value;
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

/* Compare a closed window with the __int128 reference of its samples. */
static bool window_matches(const struct satfeed_window *w, const __u64 *x,
			   __u32 shift, const char *name)
{
	__u32 n = 1U << shift;
	u128 s1 = 0, s2 = 0;
	__u64 clamped = 0, var, rate;
	bool ok = true;

	for (__u32 i = 0; i < n; i++) {
		__u64 v = x[i];

		if (v > SATFEED_SAMPLE_CAP_NS) {
			v = SATFEED_SAMPLE_CAP_NS;
			clamped++;
		}
		s1 += v;
		s2 += (u128)v * v;
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
	return ok;
}

static __u64 rnd64(void)
{
	return ((__u64)random() << 42) ^ ((__u64)random() << 21) ^ random();
}

enum seq_kind {
	ZEROS, AT_CAP, ALTERNATING, OUTLIER, INCREASING, OVER_CAP, RANDOM,
	NR_KINDS
};

static const char *const kind_names[] = {
	"all zeros", "all at the cap", "alternating extremes",
	"one outlier among equal values", "strictly increasing",
	"over the cap (clamped)", "random",
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
		default:
			x[i] = rnd64() >> (random() % 40);
		}
	}
}

void test_window_feed(__u32 shift)
{
	static const char *const progs[] = { NULL };	/* maps only */
	struct satfeed_test_bpf *feeder = NULL;
	__u32 n = 1U << shift, slot = 5;
	struct satfeed_stream st;
	struct satfeed_bpf *skel;
	struct sf_pins p;
	__u64 *x, now;
	char name[96];

	x = calloc(n, sizeof(*x));
	skel = open_engine(shift, progs);
	if (skel)
		feeder = open_feeder(skel, shift);
	if (!feeder || !x || !engine_maps(skel, &p))
		goto out;
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		ASSERT_OK(sf_stream_reset(&p, slot, s, 1), "reset");

	for (int k = 0; k < NR_KINDS; k++) {
		/* as wait durations (poll stream: the sample is given) */
		make_seq(k, x, n);
		for (__u32 i = 0; i < n; i++)
			feed(feeder, slot, SATFEED_STREAM_POLL, true, x[i]);
		ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_POLL, &st,
				      true), "read");
		snprintf(name, sizeof(name), "poll, %s, N=%u", kind_names[k],
			 n);
		ASSERT_EQ(st.published, k + 1, name);
		window_matches(satfeed_window_by_seq(&st, k + 1), x, shift,
			       name);

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
			       shift, name);
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
out:
	satfeed_test_bpf__destroy(feeder);
	satfeed_bpf__destroy(skel);
	free(x);
}
