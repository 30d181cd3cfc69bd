// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * run_delay.c - the run-queue time of real waits: this thread waits in
 * poll() while a second thread keeps the same CPU busy, so after each
 * timeout it waits for the CPU too.  The engine's hooks (tp_btf mode, the
 * loader's selection) must count some run-queue time, never more than the
 * thread's scheduler run delay grew by (/proc/thread-self/schedstat) nor
 * than the waits themselves, and the idle share must be the wait share
 * less exactly that time.  Then, with the waits alone on their CPU, the
 * idle share must come back near the wait share.
 */
#include "test_kernel.h"
#include <sys/resource.h>

#define WAITS	32	/* 1 ms waits: two windows of 16 */
#define SHIFT	4
#define HOG_TRIES	8	/* hog phases, until the run delay grew */

static volatile int hog_stop;

static void *hog(void *arg)
{
	cpu_set_t *cpu = arg;
	time_t end = time(NULL) + 5;	/* bounded, whatever happens */

	sched_setaffinity(0, sizeof(*cpu), cpu);
	/* a heavier weight than the waiter's, so that a waiter woken after
	 * its timeout does not preempt it at once but waits its turn */
	setpriority(PRIO_PROCESS, gettid(), -15);
	while (!hog_stop && time(NULL) < end)
		;
	return NULL;
}

/* This thread's scheduler run delay, ns (second field of schedstat). */
static __u64 run_delay_now(void)
{
	unsigned long long run = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &delay) != 2)
		delay = 0;
	fclose(f);
	return delay;
}

/*
 * The run-queue time of slot's poll windows closed since seq *next, and
 * checks; *next becomes the next one.  Every one of them must still be in
 * the stream's history (SATFEED_HISTORY windows).
 */
static __u64 closed_runq(const struct sf_pins *p, int slot, __u64 *next,
			 __u64 *waits)
{
	struct satfeed_stream st;
	__u64 runq = 0;

	*waits = 0;
	if (!ASSERT_OK(sf_stream_read(p, slot, SATFEED_STREAM_POLL, &st),
		       "read poll stream"))
		return 0;
	if (!ASSERT_TRUE(st.published < *next + SATFEED_HISTORY,
			 "windows %llu..%llu all in the history of %u",
			 (unsigned long long)*next,
			 (unsigned long long)st.published, SATFEED_HISTORY))
		return 0;
	for (__u64 seq = *next; seq <= st.published; seq++) {
		const struct satfeed_window *w;
		__u64 span;

		unsigned __int128 share;

		w = satfeed_window_by_seq(&st, seq);
		span = w->end_ns - w->start_ns;

		runq += w->runq_ns;
		*waits += w->sum_ns;
		ASSERT_TRUE(w->runq_ns <= w->sum_ns,
			    "window %llu: run-queue time %llu above its waits %llu",
			    (unsigned long long)seq,
			    (unsigned long long)w->runq_ns,
			    (unsigned long long)w->sum_ns);
		/* normalized to the window's threads, at most 1000 */
		share = (unsigned __int128)(w->sum_ns - w->runq_ns) * 1000 /
			((unsigned __int128)span * (w->threads ?: 1));
		ASSERT_EQ(w->idle_permille, share > 1000 ? 1000 : share,
			  "idle share of real waits");
		ASSERT_TRUE(w->idle_permille <= w->wait_permille,
			    "idle share %u above wait share %u",
			    w->idle_permille, w->wait_permille);
	}
	*next = st.published + 1;
	return runq;
}

static void wait_loop(void)
{
	for (int i = 0; i < WAITS; i++)
		poll(NULL, 0, 1);
}

void test_run_delay(void)
{
	struct satfeed_bpf *skel;
	cpu_set_t cpu, old;
	__u64 before, grew, runq, waits, runq2, waits2, next = 1;
	struct sf_pins p;
	pthread_t t;
	int slot = -1, tries;

	skel = start_engine(SHIFT, false);
	if (!skel || !engine_maps(skel, &p))
		goto out;
	if (!ASSERT_OK(watch_self(&p, &slot), "watch self"))
		goto out;
	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu(), &cpu);
	sched_setaffinity(0, sizeof(cpu), &cpu);
	/*
	 * The scheduler decides whether a waiter woken after its timeout
	 * preempts the hog (EEVDF's lag): in about one run in four here it did
	 * at every one of the 32 wakes, so the thread's run delay did not grow
	 * and there was nothing to count.  That is the premise, not the
	 * engine: take the phase again until the run delay grew.
	 */
	for (tries = 1; tries <= HOG_TRIES; tries++) {
		hog_stop = 0;
		if (!ASSERT_OK(pthread_create(&t, NULL, hog, &cpu),
			       "start hog"))
			goto restore;
		usleep(20000);	/* the hog is running on our CPU */
		before = run_delay_now();
		wait_loop();
		grew = run_delay_now() - before;
		hog_stop = 1;
		pthread_join(t, NULL);

		runq = closed_runq(&p, slot, &next, &waits);
		printf("run_delay: with a CPU hog (try %d): %llu ns of run-queue time in %llu ns of waits, run delay grew %llu ns\n",
		       tries, (unsigned long long)runq,
		       (unsigned long long)waits, (unsigned long long)grew);
		ASSERT_TRUE(waits > 0, "no poll window closed");
		ASSERT_TRUE(runq <= grew,
			    "run-queue time %llu above the thread's run delay growth %llu",
			    (unsigned long long)runq, (unsigned long long)grew);
		if (grew > 0)
			break;
	}
	if (!ASSERT_TRUE(grew > 0,
			 "the thread's run delay never grew behind a CPU hog in %d tries",
			 HOG_TRIES))
		goto restore;
	ASSERT_TRUE(runq > 0,
		    "no run-queue time counted behind a CPU hog (run delay grew %llu ns)",
		    (unsigned long long)grew);

	/* alone on the CPU: little run-queue time */
	wait_loop();
	runq2 = closed_runq(&p, slot, &next, &waits2);
	printf("run_delay: alone: %llu ns of run-queue time in %llu ns of waits\n",
	       (unsigned long long)runq2, (unsigned long long)waits2);
	ASSERT_TRUE(waits2 > 0, "no poll window closed");
	ASSERT_TRUE(runq2 < waits2 / 2,
		    "alone on its CPU, half of the waits counted as run-queue time (%llu of %llu)",
		    (unsigned long long)runq2, (unsigned long long)waits2);
restore:
	sched_setaffinity(0, sizeof(old), &old);
out:
	satfeed_bpf__destroy(skel);
}
