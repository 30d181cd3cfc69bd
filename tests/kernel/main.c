// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_kernel.c - the engine's BPF code, run by the kernel.
 *
 *  window_feed:  adversarial and random sequences are fed, one getppid() per
 *                event, through the test-only program sf_test_feed
 *                (kernel/progs/satfeed_test.bpf.c) into the same locked
 *                sf_account() the syscall hooks use, writing the engine's
 *                sf_streams; every closed window must equal an unsigned
 *                __int128 reference exactly.
 *  concurrency:  the real tp_btf hooks watch this process while two threads
 *                pinned to different CPUs send and receive on socketpairs and
 *                a third reads the streams without pause; afterwards every
 *                call is counted and windows * N + pending == calls - 1
 *                exactly, every window read under BPF_F_LOCK is whole, and
 *                (x86-64) every lockless copy whose seq == seq_end too.
 *                Where the kernel skipped runs of the hooks (recursion
 *                misses: a run preempted on a CPU blocks the others there),
 *                the calls not counted must be covered by the misses that
 *                no understudy rescued, and with none such every call is
 *                counted.  It runs with the understudies as the loader
 *                would choose them here (sf_preempt.h), then as it would
 *                not, and prints both.
 *  stale_wait:   a wait that fails after its target's slot was reused does
 *                not count as the new target's failed wait.
 *  fd_high_bits: read/write with bits above 31 set in the fd are classified
 *                by the file the kernel uses (the low 32 bits).
 *  compat:       a 32-bit child's ia32 syscall numbers are not read as
 *                x86-64 ones (brk as recvfrom).
 *  proc_exit:    a watched child that exits is marked gone and unindexed.
 *
 * Uses the skeleton directly and pins nothing; its maps are read and
 * written through libsatfeed, as the tools do with the pins.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "sf_progstats.h"
#include "sf_engine.h"
#include "sf_preempt.h"
#include "satfeed.skel.h"
#include "satfeed_test.skel.h"
#include "window_math.h"
#include "sf_test.h"

typedef unsigned __int128 u128;

static int quiet_print(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

static struct satfeed_bpf *open_configured(__u32 shift)
{
	struct satfeed_bpf *skel = satfeed_bpf__open();

	if (!ASSERT_TRUE(skel, "open: %s", strerror(errno)))
		return NULL;
	skel->rodata->window_shift = shift;
	for (int i = 0; i < SATFEED_NR_SYSCALLS; i++)
		if (sf_syscalls[i].nr >= 0)
			skel->rodata->sc_index[sf_syscalls[i].nr] = i + 1;
	return skel;
}

/* Open the engine with only the named programs loaded. */
static struct satfeed_bpf *open_engine(__u32 shift, const char *const *progs)
{
	struct satfeed_bpf *skel;
	struct bpf_program *prog;
	int err;

	skel = open_configured(shift);
	if (!skel)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj) {
		bool on = false;

		for (int i = 0; progs[i]; i++)
			on |= !strcmp(bpf_program__name(prog), progs[i]);
		bpf_program__set_autoload(prog, on);
	}
	err = satfeed_bpf__load(skel);
	if (!ASSERT_OK(err, "load"))
		goto destroy;
	err = satfeed_bpf__attach(skel);
	if (!ASSERT_OK(err, "attach"))
		goto destroy;
	return skel;
destroy:
	satfeed_bpf__destroy(skel);
	return NULL;
}

/* The engine's tp_btf mode through the loader's own selection and order. */
static struct satfeed_bpf *start_engine(__u32 shift, bool understudies)
{
	struct satfeed_bpf *skel = open_configured(shift);
	char why[512] = "";
	int err;

	if (!skel)
		return NULL;
	skel->rodata->with_understudies = understudies;
	err = sf_engine_select(skel->obj, SATFEED_ATTACH_TP_BTF, understudies,
			       why, sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	err = satfeed_bpf__load(skel);
	if (!ASSERT_OK(err, "load"))
		goto destroy;
	err = sf_engine_attach(skel->skeleton, SATFEED_ATTACH_TP_BTF, why,
			       sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	return skel;
destroy:
	satfeed_bpf__destroy(skel);
	return NULL;
}

/* The engine's maps as libsatfeed sees pins. */
static bool engine_maps(struct satfeed_bpf *skel, struct sf_pins *p)
{
	char why[256];
	int err = sf_pins_from_object(p, skel->obj, why, sizeof(why));

	return ASSERT_TRUE(!err, "engine maps: %s", why);
}

/* Locked through libsatfeed, or a lockless copy (the seq/seq_end check). */
static int read_stream(const struct sf_pins *p, __u32 slot, __u32 stream,
		       struct satfeed_stream *st, bool locked)
{
	__u32 key = satfeed_stream_key(slot, stream);

	if (locked)
		return sf_stream_read(p, slot, stream, st);
	return bpf_map_lookup_elem(p->streams_fd, &key, st) ? -errno : 0;
}

/* ---- window_feed ---- */

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

static void test_window_feed(__u32 shift)
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

/* ---- concurrency ---- */

#define PAIRS_PER_THREAD 60000

static volatile int running;

struct checker {
	struct sf_pins pins;
	int slot;			/* this process's target slot */
	__u32 shift;
	__u64 locked_windows, lockless_windows, lockless_torn, bad;
};

/* Is w internally consistent with how the engine builds a window? */
static bool window_whole(const struct satfeed_window *w, __u32 shift)
{
	__u64 mean, var, rate;

	if (w->seq != w->seq_end)
		return false;
	sf_window_stats(w->sum_ns, w->sumsq_lo, w->sumsq_hi, shift, &mean,
			&var, &rate);
	/* gaps telescope: a window spans exactly the sum of its gaps */
	return w->samples == 1U << shift && w->mean_ns == mean &&
	       w->var_ns2 == var && w->rate_milli == rate &&
	       w->end_ns - w->start_ns == w->sum_ns;
}

/*
 * A lockless bpf() lookup is a memcpy with no promised load order, so the
 * contract (satfeed.h) does not cover it; on x86-64 such copies are checked
 * anyway, a tripwire for a writer that stores a window out of order.
 */
#if defined(__x86_64__)
#define FIRST_READ 0	/* lockless, then locked */
#else
#define FIRST_READ 1	/* locked only */
#endif

static void *reader(void *arg)
{
	struct checker *c = arg;
	struct satfeed_stream st;

	while (running) {
		for (int locked = FIRST_READ; locked < 2; locked++) {
			if (read_stream(&c->pins, c->slot,
					SATFEED_STREAM_SEND, &st, locked))
				continue;
			for (int i = 0; i < SATFEED_HISTORY; i++) {
				const struct satfeed_window *w = &st.hist[i];

				if (!w->seq && !w->seq_end)
					continue;
				if (locked) {
					c->locked_windows++;
					c->bad += !window_whole(w, c->shift);
				} else if (w->seq != w->seq_end) {
					c->lockless_torn++;
				} else {
					c->lockless_windows++;
					c->bad += !window_whole(w, c->shift);
				}
			}
		}
	}
	return NULL;
}

static void *talker(void *arg)
{
	int cpu = (int)(long)arg, sv[2];
	char buf[64] = "request";
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % sysconf(_SC_NPROCESSORS_ONLN), &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return (void *)1;
	for (int i = 0; i < PAIRS_PER_THREAD; i++) {
		if (sendto(sv[0], buf, 16, 0, NULL, 0) != 16 ||
		    recvfrom(sv[1], buf, 16, MSG_WAITALL, NULL, NULL) != 16)
			return (void *)1;
		poll(NULL, 0, 0);
	}
	close(sv[0]);
	close(sv[1]);
	return NULL;
}

/* Watch this process through the same protocol as satfeedctl add. */
static int watch_self(const struct sf_pins *p, int *slot)
{
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	char why[512];
	int err;

	err = sf_target_add(p, &self, SATFEED_SC_ALL, slot, why, sizeof(why));
	if (err)
		fprintf(stderr, "watch self: %s\n", why);
	return err;
}

static __u64 recursion_misses(struct bpf_program *prog)
{
	struct sf_prog_stats ps = {};
	int err;

	if (!bpf_program__autoload(prog))
		return 0;
	err = sf_prog_stats_fd(bpf_program__fd(prog), &ps);
	ASSERT_TRUE(!err, "bpf_prog_info of %s: error %d",
		    bpf_program__name(prog), err);
	return ps.recursion_misses;
}

/*
 * What the kernel skipped of one hook's primary, what its understudy
 * rescued, and so what was lost.  A rescue of an event the primary did not
 * skip would count it twice: rescued never exceeds the misses.
 */
struct hook_account {
	__u64 misses, rescued, understudy_misses, lost;
};

static void account_hook(struct bpf_program *primary,
			 struct bpf_program *understudy, __u64 rescued,
			 struct hook_account *a)
{
	a->misses = recursion_misses(primary);
	a->understudy_misses = recursion_misses(understudy);
	a->rescued = rescued;
	ASSERT_TRUE(rescued <= a->misses,
		    "%s: %llu rescued of %llu misses (an event counted twice)",
		    bpf_program__name(understudy),
		    (unsigned long long)rescued,
		    (unsigned long long)a->misses);
	a->lost = a->misses > rescued ? a->misses - rescued : 0;
	printf("concurrency: %s: %llu recursion misses, %llu rescued by %s "
	       "(which missed %llu), %llu lost\n", bpf_program__name(primary),
	       (unsigned long long)a->misses, (unsigned long long)rescued,
	       bpf_program__name(understudy),
	       (unsigned long long)a->understudy_misses,
	       (unsigned long long)a->lost);
}

static void test_concurrency(bool understudies)
{
	const __u32 shift = SATFEED_WINDOW_SHIFT;
	const __u64 calls = 2ULL * PAIRS_PER_THREAD;
	struct checker c = { .shift = shift };
	__u64 lost[SATFEED_NR_STREAMS], rescued[SATFEED_NR_HOOKS] = {};
	struct hook_account enter, exit;
	const char *mode = understudies ? "on" : "off";
	struct satfeed_stream st;
	struct satfeed_bpf *skel;
	pthread_t t[2], r;
	void *rv;
	int fails = 0;

	printf("concurrency: understudies %s\n", mode);
	skel = start_engine(shift, understudies);
	if (!skel)
		return;
	if (!engine_maps(skel, &c.pins) ||
	    !ASSERT_OK(watch_self(&c.pins, &c.slot), "watch self"))
		goto destroy;
	running = 1;
	pthread_create(&r, NULL, reader, &c);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, talker, (void *)i);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], &rv);
		fails += rv != NULL;
	}
	running = 0;
	pthread_join(r, NULL);
	ASSERT_EQ(fails, 0, "talker syscalls");
	ASSERT_OK(sf_rescued_read(bpf_map__fd(skel->maps.sf_understudy),
				  rescued), "read sf_understudy");
	if (!understudies)
		ASSERT_EQ(rescued[SATFEED_HOOK_SYS_ENTER] +
			  rescued[SATFEED_HOOK_SYS_EXIT], 0,
			  "rescues without understudies");
	account_hook(skel->progs.sf_sys_enter, skel->progs.sf_sys_enter_u,
		     rescued[SATFEED_HOOK_SYS_ENTER], &enter);
	account_hook(skel->progs.sf_sys_exit, skel->progs.sf_sys_exit_u,
		     rescued[SATFEED_HOOK_SYS_EXIT], &exit);

	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		/* gap streams: the first event opens the trace, no sample */
		const __u64 opening = s == SATFEED_STREAM_POLL ? 0 : 1;
		char what[96];

		ASSERT_OK(read_stream(&c.pins, c.slot, s, &st, true), "read");
		printf("concurrency: %s: %llu of %llu calls counted\n",
		       sf_stream_names[s], (unsigned long long)st.calls,
		       (unsigned long long)calls);
		snprintf(what, sizeof(what), "%s calls counted, understudies %s",
			 sf_stream_names[s], mode);
		if (!enter.lost && !exit.lost)
			ASSERT_EQ(st.calls, calls, what);
		else
			ASSERT_TRUE(st.calls <= calls, "%s: %llu > %llu", what,
				    (unsigned long long)st.calls,
				    (unsigned long long)calls);
		lost[s] = calls - st.calls;
		snprintf(what, sizeof(what), "%s windows*N + pending",
			 sf_stream_names[s]);
		ASSERT_EQ((st.published << shift) + st.pending,
			  st.calls - opening, what);
		ASSERT_EQ(st.errors + st.eagain + st.zero_bytes, 0,
			  "no failed calls");
	}
	/*
	 * A lost run of sf_sys_exit loses at most one event of one stream
	 * (of this process or of another one); a lost sf_sys_enter at most
	 * the wait it would have started.
	 */
	ASSERT_TRUE(lost[SATFEED_STREAM_SEND] + lost[SATFEED_STREAM_RECV] <=
		    exit.lost,
		    "send + recv calls lost (%llu + %llu) exceed the lost runs "
		    "of sf_sys_exit (%llu)",
		    (unsigned long long)lost[SATFEED_STREAM_SEND],
		    (unsigned long long)lost[SATFEED_STREAM_RECV],
		    (unsigned long long)exit.lost);
	ASSERT_TRUE(lost[SATFEED_STREAM_SEND] + lost[SATFEED_STREAM_RECV] +
		    lost[SATFEED_STREAM_POLL] <= enter.lost + exit.lost,
		    "calls lost (%llu) exceed the lost runs (%llu)",
		    (unsigned long long)(lost[SATFEED_STREAM_SEND] +
					 lost[SATFEED_STREAM_RECV] +
					 lost[SATFEED_STREAM_POLL]),
		    (unsigned long long)(enter.lost + exit.lost));
	printf("concurrency: %llu windows checked under lock, %llu lockless "
	       "(%llu caught mid-write by seq != seq_end)\n",
	       (unsigned long long)c.locked_windows,
	       (unsigned long long)c.lockless_windows,
	       (unsigned long long)c.lockless_torn);
	ASSERT_TRUE(c.locked_windows > 0, "reader saw no window");
	ASSERT_EQ(c.bad, 0, "torn windows seen by the reader");
destroy:
	satfeed_bpf__destroy(skel);
}

/* ---- stale_wait ---- */

static int waiter_pipe[2];
static volatile pid_t waiter_tid;

static void on_wake(int sig)
{
}

/* Block in poll() until a signal interrupts it; return its errno. */
static void *waiter(void *arg)
{
	struct pollfd pfd = { .fd = waiter_pipe[0], .events = POLLIN };

	waiter_tid = gettid();
	return (void *)(long)(poll(&pfd, 1, -1) < 0 ? errno : 0);
}

/* Is thread tid blocked in syscall nr? */
static bool blocked_in(pid_t tid, long nr)
{
	char path[64];
	long cur = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%ld", &cur) != 1)
		cur = -1;
	fclose(f);
	return cur == nr;
}

/* Start the waiter; true once it sleeps inside poll(). */
static bool start_waiter(pthread_t *t)
{
	waiter_tid = 0;
	if (pthread_create(t, NULL, waiter, NULL))
		return false;
	for (int i = 0; i < 5000; i++) {
		if (waiter_tid && blocked_in(waiter_tid, SYS_poll))
			return true;
		usleep(1000);
	}
	return false;
}

/* Interrupt the waiter: the errno its poll() failed with. */
static int stop_waiter(pthread_t t)
{
	void *rv;

	pthread_kill(t, SIGUSR1);
	pthread_join(t, &rv);
	return (int)(long)rv;
}

/*
 * A wait that ends with EINTR after its target was removed and the slot
 * given to a new target must not count as the new target's failed wait;
 * the same wait of the new target must.
 */
static void test_stale_wait(void)
{
	static const char *const progs[] = { "sf_sys_enter", "sf_sys_exit",
					     NULL };
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	struct sigaction sa = { .sa_handler = on_wake };	/* no restart */
	struct satfeed_target before, after;
	struct satfeed_stream st;
	struct satfeed_bpf *skel;
	int slot, again, n;
	struct sf_pins p;
	char why[512];
	pthread_t t;

	if (!ASSERT_OK(sigaction(SIGUSR1, &sa, NULL), "sigaction") ||
	    !ASSERT_OK(pipe(waiter_pipe), "pipe"))
		return;
	skel = open_engine(SATFEED_WINDOW_SHIFT, progs);
	if (!skel)
		goto close_pipe;
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(watch_self(&p, &slot), "watch self") ||
	    !ASSERT_OK(sf_target_read(&p, slot, &before), "read target"))
		goto destroy;
	if (!ASSERT_TRUE(start_waiter(&t), "waiter never blocked in poll"))
		goto destroy;
	ASSERT_TRUE(!sf_target_remove(&p, &self, &n, why, sizeof(why)),
		    "remove: %s", why);
	ASSERT_OK(watch_self(&p, &again), "watch self again");
	ASSERT_OK(sf_target_read(&p, again, &after), "read target");
	ASSERT_EQ(again, slot, "the slot is reused");
	ASSERT_EQ(after.gen, before.gen + 1, "a new generation");
	ASSERT_EQ(stop_waiter(t), EINTR, "stale wait interrupted");
	ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_POLL, &st, true),
		  "read");
	ASSERT_EQ(st.errors, 0, "a stale wait's EINTR counted in the new "
		  "target's poll errors");

	if (!ASSERT_TRUE(start_waiter(&t), "waiter never blocked in poll"))
		goto destroy;
	ASSERT_EQ(stop_waiter(t), EINTR, "wait interrupted");
	ASSERT_OK(read_stream(&p, slot, SATFEED_STREAM_POLL, &st, true),
		  "read");
	ASSERT_EQ(st.errors, 1, "the target's own failed wait");
destroy:
	satfeed_bpf__destroy(skel);
close_pipe:
	close(waiter_pipe[0]);
	close(waiter_pipe[1]);
}

/* ---- fd_high_bits ---- */

/* Send and recv stream counters of slot, locked. */
static bool read_send_recv(const struct sf_pins *p, int slot,
			   struct satfeed_stream *st)
{
	return !read_stream(p, slot, SATFEED_STREAM_SEND, &st[0], true) &&
	       !read_stream(p, slot, SATFEED_STREAM_RECV, &st[1], true);
}

/*
 * read/write take the fd's low 32 bits (unsigned int fd): a call with high
 * bits set reaches the same file, and the engine must classify that file.
 */
static void test_fd_high_bits(void)
{
	static const char *const progs[] = { "sf_sys_enter", "sf_sys_exit",
					     NULL };
	static struct satfeed_stream before[2], after[2];
	const long high = 1L << 32;
	long wsock, rsock, wpipe;
	struct satfeed_bpf *skel;
	int sv[2], pp[2], slot;
	struct sf_pins p;
	char buf[8];

	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair") ||
	    !ASSERT_OK(pipe(pp), "pipe"))
		return;
	skel = open_engine(SATFEED_WINDOW_SHIFT, progs);
	if (!skel)
		goto close_fds;
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(watch_self(&p, &slot), "watch self") ||
	    !ASSERT_TRUE(read_send_recv(&p, slot, before), "read streams"))
		goto destroy;
	/* nothing but these three traced calls until the second read */
	wsock = syscall(SYS_write, sv[0] | high, "x", 1);
	rsock = syscall(SYS_read, sv[1] | high, buf, 1);
	wpipe = syscall(SYS_write, pp[1] | high, "x", 1);
	if (!ASSERT_TRUE(read_send_recv(&p, slot, after), "read streams"))
		goto destroy;
	ASSERT_EQ(wsock, 1, "write(socket | 1 << 32) wrote to the socket");
	ASSERT_EQ(rsock, 1, "read(socket | 1 << 32) read from the socket");
	ASSERT_EQ(wpipe, 1, "write(pipe | 1 << 32) wrote to the pipe");
	ASSERT_EQ(after[0].calls - before[0].calls, 1,
		  "write(socket | 1 << 32) counted as a send");
	ASSERT_EQ(after[1].calls - before[1].calls, 1,
		  "read(socket | 1 << 32) counted as a recv");
	ASSERT_EQ(after[0].not_socket - before[0].not_socket, 1,
		  "write(pipe | 1 << 32) counted as not a socket");
	ASSERT_EQ(after[1].not_socket - before[1].not_socket, 0,
		  "read(socket | 1 << 32) not counted as not a socket");
destroy:
	satfeed_bpf__destroy(skel);
close_fds:
	close(sv[0]);
	close(sv[1]);
	close(pp[0]);
	close(pp[1]);
}

/* ---- compat ---- */

#define COMPAT_ROUNDS "3000"

/*
 * Watch pid as satfeedctl would, minus its refusal of 32-bit programs: the
 * engine itself must not misread the calls of such a process.
 */
static int watch_raw(const struct sf_pins *p, __u32 slot, pid_t pid)
{
	struct satfeed_target t = { .kind = SATFEED_TARGET_PID, .id = pid,
				    .gen = 1, .sc_mask = SATFEED_SC_ALL };
	struct satfeed_index ix = { .slot = slot, .gen = 1,
				    .sc_mask = SATFEED_SC_ALL };
	__u32 key = pid;
	int err = 0;

	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		err = err ?: sf_stream_reset(p, slot, s, 1);
	if (err || bpf_map_update_elem(p->targets_fd, &slot, &t, 0) ||
	    sf_config_rebuild(p) ||
	    bpf_map_update_elem(p->pid_index_fd, &key, &ix, 0))
		return err ?: -errno;
	return 0;
}

/*
 * A 32-bit process's syscall numbers are ia32 ones (brk 45 is x86-64's
 * recvfrom, getgid 47 its recvmsg): none may be counted as an x86-64 call.
 */
static void test_compat(void)
{
	static const char *const progs[] = { "sf_sys_enter", "sf_sys_exit",
					     NULL };
	char exe[PATH_MAX], line[64] = "";
	int in[2], out[2], status;
	struct satfeed_stream st;
	struct satfeed_bpf *skel;
	const __u32 slot = 7;
	struct sf_pins p;
	ssize_t n = -1;
	pid_t child;
	char *slash;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
	if (!ASSERT_TRUE(n > 0, "readlink /proc/self/exe"))
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	strcpy(slash + 1, "sfcompat32");
	if (!ASSERT_OK(access(exe, X_OK), "the 32-bit helper is built") ||
	    !ASSERT_OK(pipe(in), "pipe") || !ASSERT_OK(pipe(out), "pipe"))
		return;
	skel = open_engine(SATFEED_WINDOW_SHIFT, progs);
	if (!skel)
		return;
	child = fork();
	if (child == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(exe, "sfcompat32", COMPAT_ROUNDS, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(watch_raw(&p, slot, child), "watch the 32-bit child"))
		goto kill_child;
	write(in[1], "x", 1);
	n = read(out[0], line, sizeof(line) - 1);
	ASSERT_TRUE(n > 0 && !strncmp(line, "done", 4),
		    "the 32-bit child made its calls (read %zd)", n);
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		char what[96];

		ASSERT_OK(read_stream(&p, slot, s, &st, true), "read");
		snprintf(what, sizeof(what),
			 "32-bit calls read as x86-64 %s calls",
			 sf_stream_names[s]);
		ASSERT_EQ(st.calls + st.errors + st.eagain + st.zero_bytes +
				  st.not_socket, 0, what);
	}
kill_child:
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	close(in[1]);
	close(out[0]);
	satfeed_bpf__destroy(skel);
}

/* ---- proc_exit ---- */

static void test_proc_exit(void)
{
	static const char *const progs[] = { "sf_proc_exit", NULL };
	struct satfeed_index ix = { .slot = 3, .gen = 7 };
	struct satfeed_target t = { .kind = SATFEED_TARGET_PID, .gen = 7 };
	struct satfeed_bpf *skel;
	int pipefd[2], status;
	__u32 slot = 3, tgid;
	pid_t child;
	char c;

	skel = open_engine(SATFEED_WINDOW_SHIFT, progs);
	if (!skel || pipe(pipefd))
		goto out;
	child = fork();
	if (child == 0) {
		read(pipefd[0], &c, 1);
		_exit(0);
	}
	tgid = child;
	t.id = child;
	ASSERT_OK(bpf_map__update_elem(skel->maps.sf_targets, &slot, 4, &t,
				       sizeof(t), 0), "target");
	ASSERT_OK(bpf_map__update_elem(skel->maps.sf_pid_index, &tgid, 4, &ix,
				       sizeof(ix), 0), "index");
	write(pipefd[1], "x", 1);
	waitpid(child, &status, 0);
	ASSERT_OK(bpf_map__lookup_elem(skel->maps.sf_targets, &slot, 4, &t,
				       sizeof(t), 0), "read target");
	ASSERT_EQ(t.state, SATFEED_STATE_GONE, "exited process marked gone");
	ASSERT_TRUE(t.gone_ns > 0, "gone_ns set");
	ASSERT_TRUE(bpf_map__lookup_elem(skel->maps.sf_pid_index, &tgid, 4,
					 &ix, sizeof(ix), 0) != 0,
		    "exited process still indexed");
	close(pipefd[0]);
	close(pipefd[1]);
out:
	satfeed_bpf__destroy(skel);
}

int main(int argc, char **argv)
{
	struct sf_preempt pre;
	bool understudies;
	char why[512];

	if (geteuid()) {
		fprintf(stderr, "test_kernel: needs root\n");
		printf("test_kernel: 0 passed, 1 failed\n");
		return 1;
	}
	libbpf_set_print(quiet_print);
	srandom(0xfeed5a7);
	test_window_feed(4);
	test_window_feed(SATFEED_WINDOW_SHIFT);
	test_window_feed(SATFEED_WINDOW_SHIFT_MAX);
	sf_preempt_probe(&pre, NULL);
	understudies = sf_understudy_wanted(&pre, SATFEED_ATTACH_TP_BTF,
					    SF_UNDERSTUDY_AUTO, why,
					    sizeof(why));
	printf("concurrency: the loader's choice here: understudies %s\n", why);
	test_concurrency(understudies);
	test_concurrency(!understudies);
	test_stale_wait();
	test_fd_high_bits();
	test_compat();
	test_proc_exit();
	return sf_test_summary("test_kernel");
}
