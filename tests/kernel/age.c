// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * age.c - the age bound T (satfeed.h, SATFEED_MAX_AGE_NS_DEFAULT), with
 * T = 200 ms so that the test takes a second:
 *  - a target that sent and received, then went quiet: within 2 T of its
 *    last call its send and recv streams closed their last window by age
 *    (SATFEED_WIN_AGED, its figures exact over its samples) and then
 *    published an empty one (SATFEED_WIN_QUIET, rate 0); its verdict says
 *    quiet and is neither near nor full;
 *  - the wait in progress counts: one thread blocked in epoll_wait for the
 *    whole tick is a sleeper (ABI 5) and reads an idle share of 1000
 *    permille; eight blocked at once read 1000 too (normalized, not
 *    summed), and the tick counts eight sleepers.
 */
#include "test_kernel.h"
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#define AGE_T_NS	200000000ULL	/* T */
#define NR_CALLS	100

typedef unsigned __int128 u128;

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Threads blocked in epoll_wait until the eventfd is written. */
struct waiters {
	int ep, ev, n;
	pthread_t t[8];
};

static void *wait_thread(void *arg)
{
	struct waiters *w = arg;
	struct epoll_event e;

	/* woken by the eventfd; the timeout only bounds a lost wakeup */
	return (void *)(long)epoll_wait(w->ep, &e, 1, 10000);
}

/* This process's threads asleep in epoll_wait or epoll_pwait (their
 * /proc syscall line: the number, and not "running"). */
static int epoll_sleepers(void)
{
	char path[64], line[128];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	dir = opendir("/proc/self/task");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		long nr;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) &&
		    sscanf(line, "%ld", &nr) == 1 &&
		    (nr == SYS_epoll_wait || nr == SYS_epoll_pwait))
			n++;
		fclose(f);
	}
	closedir(dir);
	return n;
}

static bool waiters_start(struct waiters *w, int n)
{
	struct epoll_event e = { .events = EPOLLIN };

	w->n = 0;
	w->ep = epoll_create1(0);
	w->ev = eventfd(0, 0);
	if (!ASSERT_TRUE(w->ep >= 0 && w->ev >= 0, "epoll, eventfd") ||
	    !ASSERT_OK(epoll_ctl(w->ep, EPOLL_CTL_ADD, w->ev, &e), "ctl"))
		return false;
	/*
	 * One at a time, each asleep in its epoll_wait before the next
	 * starts: a fixed pause was too short for eight threads in a TCG
	 * guest, and eight entering at once on a kernel whose hooks are
	 * preemptible skip each other's wait start (recursion misses; this
	 * engine runs without understudies), which is concurrency.c's
	 * subject, not this file's: a 7.x guest counted 5 of 8 asleep.
	 */
	for (; w->n < n; w->n++) {
		int i;

		if (!ASSERT_OK(pthread_create(&w->t[w->n], NULL, wait_thread,
					      w), "pthread_create"))
			return false;
		for (i = 0; i < 1000 && epoll_sleepers() < w->n + 1; i++)
			usleep(10000);
		if (!ASSERT_EQ(epoll_sleepers(), w->n + 1,
			       "threads asleep in epoll_wait")) {
			w->n++;
			return false;
		}
	}
	return true;
}

static void waiters_stop(struct waiters *w)
{
	__u64 one = 1;

	if (w->ev >= 0 && write(w->ev, &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, "age: cannot wake the waiters\n");
	for (int i = 0; i < w->n; i++)
		pthread_join(w->t[i], NULL);
	close(w->ep);
	close(w->ev);
}

/* The figures of w recomputed from its sums in 128 bits. */
static void check_exact(const struct satfeed_window *w, const char *what)
{
	u128 s2 = ((u128)w->sumsq_hi << 64) | w->sumsq_lo;
	__u64 n = w->samples, s1 = w->sum_ns;

	if (!ASSERT_TRUE(n > 0, "%s: an aged window has samples", what))
		return;
	ASSERT_EQ(w->mean_ns, s1 / n, "aged window mean");
	ASSERT_EQ(w->var_ns2,
		  (__u64)(((u128)n * s2 - (u128)s1 * s1) / ((u128)n * n)),
		  "aged window variance");
	ASSERT_EQ(w->rate_milli, s1 ? (__u64)((u128)n * 1000000000000ULL / s1) :
				      0, "aged window rate");
}

/* Wait until the newest window of stream is quiet, or until deadline. */
static bool wait_quiet(const struct sf_pins *p, int slot, __u32 stream,
		       __u64 deadline, struct satfeed_stream *st)
{
	const struct satfeed_window *w;

	do {
		if (read_stream(p, slot, stream, st, true))
			return false;
		w = satfeed_newest_window(st);
		if (w && (w->flags & SATFEED_WIN_QUIET))
			return true;
		usleep(5000);
	} while (mono_ns() < deadline);
	return false;
}

static void check_stream_quiet(const struct sf_pins *p, int slot,
			       __u32 stream, __u32 samples, __u64 deadline,
			       const char *what)
{
	const struct satfeed_window *q, *aged;
	struct satfeed_stream st;

	if (!ASSERT_TRUE(wait_quiet(p, slot, stream, deadline, &st),
			 "%s: no quiet window within 2 T of the last call",
			 what))
		return;
	q = satfeed_newest_window(&st);
	ASSERT_EQ(q->samples, 0, "a quiet window has no sample");
	ASSERT_EQ(q->rate_milli, 0, "a quiet window's rate");
	if (!ASSERT_TRUE(st.published >= 2, "%s: an aged window first", what))
		return;
	aged = satfeed_window_by_seq(&st, st.published - 1);
	ASSERT_EQ(aged->flags, SATFEED_WIN_AGED, "the window before: aged");
	ASSERT_EQ(aged->samples, samples, "the aged window's samples");
	check_exact(aged, what);
	ASSERT_EQ(st.last_ns, 0, "a quiet stream's chain of gaps ended");
}

/* Wait for two more ticks of the verdict of slot, then read it. */
static bool two_ticks(const struct sf_pins *p, int slot,
		      struct satfeed_verdict *v)
{
	__u64 first = 0, deadline = mono_ns() + 4 * AGE_T_NS;
	int seen = 0;

	while (mono_ns() < deadline) {
		if (sf_verdict_read(p, slot, v))
			return false;
		if (v->tick_ns != first) {
			first = v->tick_ns;
			if (++seen == 3)
				return true;
		}
		usleep(5000);
	}
	return false;
}

void test_age(void)
{
	struct satfeed_verdict v;
	struct satfeed_bpf *skel;
	struct waiters w = { .ep = -1, .ev = -1 };
	struct sf_pins p;
	__u64 last, deadline;
	char buf[NR_CALLS];
	int sv[2], slot;

	test_max_age_ns = AGE_T_NS;
	skel = start_engine(SATFEED_WINDOW_SHIFT, false);
	test_max_age_ns = 0;
	if (!skel)
		return;
	if (!engine_maps(skel, &p) || !ASSERT_OK(watch_self(&p, &slot),
						 "watch self"))
		goto destroy;
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair"))
		goto destroy;
	if (!waiters_start(&w, 1))
		goto close;
	for (int i = 0; i < NR_CALLS; i++) {
		if (write(sv[0], "x", 1) != 1 || read(sv[1], buf, 1) != 1) {
			ASSERT_TRUE(false, "call %d failed: %s", i,
				    strerror(errno));
			goto stop;
		}
	}
	last = mono_ns();
	deadline = last + 2 * AGE_T_NS;
	/* N - 1 gaps between N calls, each stream */
	check_stream_quiet(&p, slot, SATFEED_STREAM_SEND, NR_CALLS - 1,
			   deadline, "send");
	check_stream_quiet(&p, slot, SATFEED_STREAM_RECV, NR_CALLS - 1,
			   deadline, "recv");
	if (ASSERT_OK(sf_verdict_read(&p, slot, &v), "verdict")) {
		ASSERT_TRUE(v.quiet_ns && v.quiet_ns <= deadline,
			    "quiet_ns %llu, deadline %llu",
			    (unsigned long long)v.quiet_ns,
			    (unsigned long long)deadline);
		ASSERT_TRUE(v.why & SATFEED_SAT_WHY_QUIET, "why %#x", v.why);
		ASSERT_TRUE(v.state != SATFEED_SAT_NEAR &&
			    v.state != SATFEED_SAT_FULL, "state %u", v.state);
	}
	/* one thread asleep in epoll_wait for the whole tick: ~100% */
	if (ASSERT_TRUE(two_ticks(&p, slot, &v), "the timer ticks")) {
		ASSERT_EQ(v.sleepers, 1, "one thread asleep all along");
		ASSERT_EQ(v.threads, 0, "no thread woke");
		ASSERT_EQ(v.slack_permille, 1000,
			  "sleepers only: slack 1000 permille");
		ASSERT_TRUE(v.wait_permille >= v.slack_permille,
			    "wait %u >= slack %u", v.wait_permille,
			    v.slack_permille);
	}
stop:
	waiters_stop(&w);
	/* eight at once: normalized, at most 1000 */
	if (!waiters_start(&w, 8))
		goto stop8;
	if (ASSERT_TRUE(two_ticks(&p, slot, &v), "the timer ticks")) {
		ASSERT_EQ(v.sleepers, 8, "eight threads asleep all along");
		ASSERT_EQ(v.threads, 0, "no thread woke");
		ASSERT_EQ(v.slack_permille, 1000,
			  "sleepers only: slack 1000 permille");
		ASSERT_TRUE(v.wait_permille <= 1000, "wait %u permille",
			    v.wait_permille);
	}
stop8:
	waiters_stop(&w);
close:
	close(sv[0]);
	close(sv[1]);
destroy:
	satfeed_bpf__destroy(skel);
}
