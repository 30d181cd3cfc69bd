// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * concurrency.c - the real tp_btf hooks watch this process while two
 * threads pinned to different CPUs send and receive on socketpairs and a
 * third reads the streams without pause; afterwards every call is counted
 * and windows * N + pending == calls - 1 exactly, every window read under
 * BPF_F_LOCK is whole, and (x86-64) every lockless copy whose
 * seq == seq_end too.  Where the kernel skipped runs of the hooks
 * (recursion misses: a run preempted on a CPU blocks the others there), the
 * calls not counted must be covered by the misses that no understudy
 * rescued, and with none such every call is counted.  It runs with the
 * understudies as the loader would choose them here (sf_preempt.h), then as
 * it would not, and prints both.
 */
#include "test_kernel.h"

#define PAIRS_PER_THREAD 60000

static volatile int running;

struct checker {
	struct sf_pins pins;
	int slot;			/* this process's target slot */
	__u32 shift;
	__u64 locked_windows, lockless_windows, lockless_torn;
	__u64 bad_locked, bad_lockless;
};

/* Is w internally consistent with how the engine builds a window? */
static bool window_whole(const struct satfeed_window *w, __u32 shift)
{
	__u64 mean, var, rate;

	if (w->seq != w->seq_end)
		return false;
	if (w->flags & SATFEED_WIN_QUIET)	/* the age timer's: empty */
		return w->samples == 0 && w->sum_ns == 0;
	if (w->flags & SATFEED_WIN_AGED) {	/* closed by age: fewer */
		struct satfeed_window x = *w;

		if (!w->samples || w->samples >= 1U << shift)
			return false;
		sf_window_figures_n(&x, w->samples, false);
		return x.mean_ns == w->mean_ns && x.var_ns2 == w->var_ns2 &&
		       x.rate_milli == w->rate_milli &&
		       w->end_ns - w->start_ns == w->sum_ns;
	}
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
 * anyway and the ones that are not whole printed, a tripwire for a writer
 * that stores a window out of order.
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
					c->bad_locked += !window_whole(w, c->shift);
				} else if (w->seq != w->seq_end) {
					c->lockless_torn++;
				} else {
					c->lockless_windows++;
					c->bad_lockless +=
						!window_whole(w, c->shift);
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

void test_concurrency(bool understudies)
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
	/*
	 * Only the copy under the lock is the contract's.  A lockless bpf()
	 * lookup is the kernel's memcpy, and on x86-64 that is a fast string
	 * copy (rep movsb), whose accesses the CPU may perform out of order
	 * (Intel SDM vol. 3A, "Fast-String Operation and Out-of-Order
	 * Stores"): seq == seq_end in such a copy proves nothing, and a run
	 * on a loaded machine saw one such copy in 1.8 million.  It is
	 * printed, as the tripwire it is, not asserted.
	 */
	if (c.bad_lockless)
		printf("concurrency: %llu lockless copies with seq == seq_end "
		       "were not whole (memcpy's order, outside the contract)\n",
		       (unsigned long long)c.bad_lockless);
	ASSERT_EQ(c.bad_locked, 0, "torn windows read under the lock");
destroy:
	satfeed_bpf__destroy(skel);
}
