// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verdict_tick.c - the default saturation rules (bpf/sat_rules.h) as the
 * engine's age timer applies them, with T = 200 ms (a tick every 100 ms):
 *  - the idle share of the threads that woke: one thread asleep in
 *    epoll_wait all along (a listener) is a sleeper, left out; one thread
 *    that serves requests back to back and calls epoll_wait without
 *    sleeping reads an idle share below the default idle_full, and the
 *    verdict is full for it (SATFEED_SAT_WHY_IDLE_FULL), where the sleeper
 *    counted in would have read half idle;
 *  - the service time: requests on an accepted TCP connection answered at
 *    once set the baseline; answered after 2 ms of work each, the smoothed
 *    service time passes the default svc_full (6 times the baseline) and
 *    the verdict is full for
 *    it (SATFEED_SAT_WHY_SVC_FULL), with no wait syscall at all; quiet
 *    after the load, the average is back at the baseline and the verdict ok;
 *  - the CPU share (ABI 8) of the same busy thread: near all of one CPU,
 *    its CPU time within what the kernel's schedstat says the process
 *    ran; two busy threads pinned to one CPU share it (cpus 1), pinned
 *    to two they may use both (cpus 2: the union of their masks);
 *  - a thread that never waits in a traced call: the tick makes its record,
 *    so its CPU time counts, and a helper asleep in nanosleep beside it
 *    does not count as a second CPU; the process removed and added again,
 *    the new target takes the records over;
 *  - a busy io_uring server: the thread serves back to back and looks for
 *    completions with io_uring_enter(GETEVENTS), which finds them without
 *    sleeping; those are no waits (satfeed_uring.bpf.h), but the thread
 *    is still one that woke, with no slack, so the verdict is full for
 *    it, not blind to it.
 * Each part checks the engine's figures against the definitions in
 * satfeed.h; the rules themselves are checked exactly in
 * tests/unit/test_sat_rules.c.
 */
#include "test_kernel.h"
#include <dirent.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <liburing.h>

#define TICK_T_NS	200000000ULL	/* T */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void spin_ns(__u64 ns)
{
	__u64 end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* Wait for n more ticks of slot's verdict, then read it. */
static bool ticks(const struct sf_pins *p, int slot, int n,
		  struct satfeed_verdict *v)
{
	__u64 last = 0, deadline = now_ns() + (n + 4) * TICK_T_NS;
	int seen = -1;

	while (now_ns() < deadline) {
		if (sf_verdict_read(p, slot, v))
			return false;
		if (v->tick_ns != last) {
			last = v->tick_ns;
			if (++seen == n)
				return true;
		}
		/* light: this thread is one of the target's too, and one
		 * that runs 5% of an interval counts as a CPU the target
		 * may use (ABI 9); polling every 10 ms did in a TCG guest */
		usleep(25000);
	}
	return false;
}

struct server {
	int c, s;		/* client and accepted ends */
	int ep;			/* an epoll set the busy thread polls */
	__u64 work_ns;		/* work per request before the answer */
	bool poll;		/* epoll_wait (timeout 0) after each request */
	struct io_uring *ring;	/* or io_uring_enter(GETEVENTS) on a NOP */
	int cpu;		/* pinned to this CPU, -1: not pinned */
	__u32 pause_us;		/* asleep (nanosleep) after each answer */
	volatile bool stop;
	long served;
};

/* Requests answered back to back until stop. */
static void *serve(void *arg)
{
	struct server *sv = arg;
	struct epoll_event e;
	cpu_set_t set;
	char b;

	if (sv->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(sv->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return (void *)-1L;
	}
	while (!sv->stop) {
		if (write(sv->c, "q", 1) != 1 || read(sv->s, &b, 1) != 1)
			return (void *)-1L;
		if (sv->work_ns)
			spin_ns(sv->work_ns);
		if (write(sv->s, "a", 1) != 1 || read(sv->c, &b, 1) != 1)
			return (void *)-1L;
		if (sv->pause_us)
			usleep(sv->pause_us);
		/* a little work between requests, then a look for more */
		if (sv->poll) {
			spin_ns(100000);
			epoll_wait(sv->ep, &e, 1, 0);
		}
		if (sv->ring) {
			spin_ns(100000);
			io_uring_prep_nop(io_uring_get_sqe(sv->ring));
			if (io_uring_submit_and_wait(sv->ring, 1) != 1)
				return (void *)-1L;
			io_uring_cq_advance(sv->ring, 1);
		}
		sv->served++;
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	struct epoll_event e;

	/* woken by the eventfd; the timeout only bounds a lost wakeup */
	return (void *)(long)epoll_wait(*(int *)arg, &e, 1, 20000);
}

static bool tcp_pair(struct server *sv)
{
	struct sockaddr_in a;
	int lfd = listen_tcp(&a);

	sv->c = sv->s = -1;
	if (!ASSERT_TRUE(lfd >= 0, "listen"))
		return false;
	sv->c = connect_tcp(&a);
	sv->s = accept(lfd, NULL, NULL);
	close(lfd);
	return ASSERT_TRUE(sv->c >= 0 && sv->s >= 0, "connect, accept");
}

static void tcp_close(struct server *sv)
{
	if (sv->c >= 0)
		close(sv->c);
	if (sv->s >= 0)
		close(sv->s);
}

/* The time this process's threads ran so far (schedstat), ns; 0 if not
 * readable. */
static __u64 process_run_ns(void)
{
	unsigned long long run, sum = 0;
	char path[64];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	FILE *f;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
			 e->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%llu", &run) == 1)
			sum += run;
		if (f)
			fclose(f);
	}
	closedir(d);
	return sum;
}

/* One busy thread (and `sleepers` sleepers) at the tick: full by idle. */
static void check_busy_full(const struct satfeed_verdict *v, __u32 sleepers,
			    const char *who)
{
	ASSERT_TRUE(v->sleepers == sleepers, "%s: sleepers %u, want %u", who,
		    v->sleepers, sleepers);
	ASSERT_TRUE(v->threads == 1, "%s: threads that woke %u, want 1", who,
		    v->threads);
	ASSERT_TRUE(v->slack_permille < SATFEED_SAT_IDLE_FULL_DEFAULT,
		    "%s: slack %u permille, below %u", who, v->slack_permille,
		    SATFEED_SAT_IDLE_FULL_DEFAULT);
	ASSERT_EQ(v->idle_permille, v->slack_permille,
		  "the rules judge the tick's slack");
	ASSERT_TRUE(v->seen & SATFEED_SAT_SEEN_IDLE, "seen idle");
	ASSERT_TRUE(v->state == SATFEED_SAT_FULL, "%s: state %u, want full",
		    who, v->state);
	ASSERT_TRUE(v->why & SATFEED_SAT_WHY_IDLE_FULL,
		    "why %#x has idle full", v->why);
}

static void check_idle(const struct sf_pins *p, int slot)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct server sv = { .poll = true, .cpu = -1 };
	pthread_t busy, sleep_t;
	struct satfeed_verdict v, v0;
	int ep = epoll_create1(0), ev = eventfd(0, 0);
	__u64 one = 1, r0, r1;

	sv.ep = epoll_create1(0);
	if (!ASSERT_TRUE(ep >= 0 && ev >= 0 && sv.ep >= 0, "epoll") ||
	    !ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e), "ctl") ||
	    !tcp_pair(&sv))
		goto close;
	if (!ASSERT_OK(pthread_create(&sleep_t, NULL, sleeper, &ep),
		       "sleeper"))
		goto close;
	if (!ASSERT_OK(pthread_create(&busy, NULL, serve, &sv), "busy")) {
		sv.stop = true;
		goto wake;
	}
	/* a tick to start from, then two whole intervals */
	if (ASSERT_TRUE(ticks(p, slot, 3, &v), "the timer ticks"))
		check_busy_full(&v, 1, "busy thread beside a listener");
	/* its CPU: the busy thread's, the sleeper's next to nothing, within
	 * what every thread of the process ran from before the first tick
	 * counted to after the last */
	r0 = process_run_ns();
	if (ASSERT_TRUE(ticks(p, slot, 1, &v0), "a tick") &&
	    ASSERT_TRUE(ticks(p, slot, 2, &v), "two more")) {
		r1 = process_run_ns();
		ASSERT_TRUE(v.seen & SATFEED_SAT_SEEN_CPU, "seen cpu");
		ASSERT_TRUE(v.cpus == 1,
			    "one thread that did not sleep: cpus %u, want 1",
			    v.cpus);
		ASSERT_TRUE(v.cpu_permille >= 600,
			    "a thread busy all along: cpu %u permille",
			    v.cpu_permille);
		ASSERT_TRUE(v.cpu_ns > v0.cpu_ns &&
			    v.cpu_ns - v0.cpu_ns <= r1 - r0,
			    "cpu_ns grew %llu ns, the process ran %llu",
			    (unsigned long long)(v.cpu_ns - v0.cpu_ns),
			    (unsigned long long)(r1 - r0));
		ASSERT_TRUE(v.cpu_ns - v0.cpu_ns >=
				    (v.tick_ns - v0.tick_ns) / 2,
			    "cpu_ns grew %llu ns in %llu ns of ticks",
			    (unsigned long long)(v.cpu_ns - v0.cpu_ns),
			    (unsigned long long)(v.tick_ns - v0.tick_ns));
	}
	sv.stop = true;
	pthread_join(busy, NULL);
	ASSERT_TRUE(sv.served > 100, "served %ld requests", sv.served);
wake:
	ASSERT_EQ(write(ev, &one, sizeof(one)), sizeof(one), "wake");
	pthread_join(sleep_t, NULL);
close:
	tcp_close(&sv);
	close(sv.ep);
	close(ep);
	close(ev);
}

static void check_uring(const struct sf_pins *p, int slot)
{
	struct server sv = { .ep = -1, .cpu = -1 };
	struct satfeed_verdict v;
	struct io_uring r;
	void *ret = NULL;
	pthread_t t;

	if (!ASSERT_OK(io_uring_queue_init(8, &r, 0), "io_uring_queue_init"))
		return;
	sv.ring = &r;
	if (!tcp_pair(&sv))
		goto close;
	if (!ASSERT_OK(pthread_create(&t, NULL, serve, &sv), "serve"))
		goto close;
	if (ASSERT_TRUE(ticks(p, slot, 3, &v), "the timer ticks"))
		check_busy_full(&v, 0, "busy io_uring thread");
	sv.stop = true;
	pthread_join(t, &ret);
	ASSERT_TRUE(!ret && sv.served > 100, "served %ld requests", sv.served);
close:
	tcp_close(&sv);
	io_uring_queue_exit(&r);
}

static void check_service(const struct sf_pins *p, int slot)
{
	/* a pause after each answer keeps the thread's CPU share (ABI 9
	 * sees a thread that never waits) below cpu_full: the service
	 * time is judged alone */
	struct server sv = { .ep = -1, .cpu = -1, .pause_us = 2000 };
	struct satfeed_verdict v;
	__u64 base = 0;
	pthread_t t;

	if (!tcp_pair(&sv))
		goto close;
	if (!ASSERT_OK(pthread_create(&t, NULL, serve, &sv), "serve"))
		goto close;
	/* answered at once: the baseline */
	if (ASSERT_TRUE(ticks(p, slot, 3, &v), "the timer ticks")) {
		ASSERT_TRUE(v.seen & SATFEED_SAT_SEEN_SVC, "seen service");
		ASSERT_TRUE(v.svc_base_ns > 0 && v.svc_base_ns < 1000000,
			    "baseline %llu ns",
			    (unsigned long long)v.svc_base_ns);
		ASSERT_TRUE(v.cpu_permille < SATFEED_SAT_CPU_FULL_DEFAULT,
			    "paused: cpu %u permille", v.cpu_permille);
		ASSERT_EQ(v.state, SATFEED_SAT_OK, "answered at once: ok");
		base = v.svc_base_ns;
	}
	/* 2 ms of work per request: far more than 6 times a loopback base */
	sv.work_ns = 2000000;
	if (ASSERT_TRUE(ticks(p, slot, 6, &v), "the timer ticks")) {
		ASSERT_TRUE(v.svc_base_ns <= base, "the baseline does not rise");
		ASSERT_TRUE(v.svc_base_ns &&
			    v.svc_avg_ns * 1000 / v.svc_base_ns >
				    SATFEED_SAT_SVC_FULL_DEFAULT,
			    "service %llu ns over %u permille of %llu",
			    (unsigned long long)v.svc_avg_ns,
			    SATFEED_SAT_SVC_FULL_DEFAULT,
			    (unsigned long long)v.svc_base_ns);
		ASSERT_EQ(v.state, SATFEED_SAT_FULL, "slow answers: full");
		ASSERT_TRUE(v.why & SATFEED_SAT_WHY_SVC_FULL,
			    "why %#x has service full", v.why);
		ASSERT_EQ(v.why & (SATFEED_SAT_WHY_IDLE_NEAR |
				   SATFEED_SAT_WHY_IDLE_FULL), 0,
			  "no wait syscall: no idle reason");
	}
	sv.stop = true;
	pthread_join(t, NULL);
	/* quiet: ok, and the average back at the baseline */
	if (ASSERT_TRUE(ticks(p, slot, 5, &v), "the timer ticks")) {
		ASSERT_TRUE(v.why & SATFEED_SAT_WHY_QUIET, "why %#x: quiet",
			    v.why);
		ASSERT_EQ(v.state, SATFEED_SAT_OK, "quiet: ok");
		ASSERT_EQ(v.svc_avg_ns, v.svc_base_ns,
			  "quiet: the average restarts at the baseline");
	}
close:
	tcp_close(&sv);
}

/*
 * Two busy threads on CPUs cpu0 and cpu1: the CPUs they may use are the
 * union of their masks, want of them, and they keep them busy.
 */
static void check_two_busy(const struct sf_pins *p, int slot, int cpu0,
			   int cpu1, __u32 want)
{
	struct server sv[2] = {
		{ .c = -1, .s = -1, .ep = -1, .poll = true, .cpu = cpu0 },
		{ .c = -1, .s = -1, .ep = -1, .poll = true, .cpu = cpu1 },
	};
	struct satfeed_verdict v;
	pthread_t t[2];
	int n = 0;

	for (int i = 0; i < 2; i++) {
		sv[i].ep = epoll_create1(0);
		if (!ASSERT_TRUE(sv[i].ep >= 0, "epoll") || !tcp_pair(&sv[i]))
			goto stop;
	}
	for (; n < 2; n++)
		if (!ASSERT_OK(pthread_create(&t[n], NULL, serve, &sv[n]),
			       "busy thread"))
			goto stop;
	if (ASSERT_TRUE(ticks(p, slot, 3, &v), "the timer ticks")) {
		ASSERT_TRUE(v.cpus == want,
			    "busy on CPUs %d and %d: cpus %u, want %u", cpu0,
			    cpu1, v.cpus, want);
		ASSERT_TRUE(v.cpu_permille >= 600,
			    "busy on CPUs %d and %d: cpu %u permille", cpu0,
			    cpu1, v.cpu_permille);
	}
stop:
	for (int i = 0; i < 2; i++)
		sv[i].stop = true;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		tcp_close(&sv[i]);
		if (sv[i].ep >= 0)
			close(sv[i].ep);
	}
}

struct unwaited {
	int sv[2];
	volatile bool stop;
};

/* busy, a send and a receive every millisecond (the target is not
 * quiet), never a wait */
static void *spin_thread(void *arg)
{
	struct unwaited *u = arg;
	char b;

	while (!u->stop) {
		spin_ns(1000000);
		if (write(u->sv[0], "x", 1) != 1 || read(u->sv[1], &b, 1) != 1)
			return (void *)-1L;
	}
	return NULL;
}

/* a helper asleep in an untraced call (nanosleep) */
static void *nap_thread(void *arg)
{
	struct unwaited *u = arg;

	while (!u->stop)
		usleep(50000);
	return NULL;
}

/*
 * A thread that never waits in a traced call (as one per connection blocked
 * in its receive, or busy): the tick gives it a record, and its CPU time
 * counts; a helper asleep in nanosleep beside it runs too little to count
 * as a CPU the target may use.  The engine without those records saw
 * neither thread (no SATFEED_SAT_SEEN_CPU).
 */
static void check_unwaited(const struct sf_pins *p, int slot)
{
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	struct unwaited u = {};
	struct satfeed_verdict v, v0;
	int removed = 0, again;
	pthread_t spin, nap;
	void *ret = NULL;
	char why[256];
	__u64 r0, r1;

	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, u.sv),
		       "socketpair"))
		return;
	if (!ASSERT_OK(pthread_create(&spin, NULL, spin_thread, &u),
		       "spin"))
		goto close;
	if (!ASSERT_OK(pthread_create(&nap, NULL, nap_thread, &u), "nap")) {
		u.stop = true;
		pthread_join(spin, NULL);
		goto close;
	}
	/* the tick that makes their records, then one that sees them */
	ASSERT_TRUE(ticks(p, slot, 2, &v), "the timer ticks");
	r0 = process_run_ns();
	if (ASSERT_TRUE(ticks(p, slot, 1, &v0), "a tick") &&
	    ASSERT_TRUE(ticks(p, slot, 2, &v), "two more")) {
		r1 = process_run_ns();
		ASSERT_TRUE(v.seen & SATFEED_SAT_SEEN_CPU,
			    "a thread that never waits: seen cpu (seen %#x)",
			    v.seen);
		ASSERT_EQ(v.threads + v.sleepers, 0,
			  "no thread waited in a traced call");
		ASSERT_TRUE(v.cpus == 1,
			    "a busy thread and a napping helper: cpus %u, want 1",
			    v.cpus);
		ASSERT_TRUE(v.cpu_permille >= 600,
			    "a thread busy all along: cpu %u permille",
			    v.cpu_permille);
		ASSERT_TRUE(v.cpu_ns > v0.cpu_ns &&
			    v.cpu_ns - v0.cpu_ns <= r1 - r0,
			    "cpu_ns grew %llu ns, the process ran %llu",
			    (unsigned long long)(v.cpu_ns - v0.cpu_ns),
			    (unsigned long long)(r1 - r0));
		ASSERT_EQ(!!(v.why & SATFEED_SAT_WHY_CPU_FULL),
			  v.cpu_permille >= SATFEED_SAT_CPU_FULL_DEFAULT,
			  "the CPU rule judges it (why has cpu_full)");
		ASSERT_EQ(v.state == SATFEED_SAT_FULL,
			  v.cpu_permille >= SATFEED_SAT_CPU_FULL_DEFAULT,
			  "the CPU rule judges it (state full)");
	}
	/* removed and added again: the new target takes the old one's
	 * records over (no thread here waits, so none would otherwise) */
	if (ASSERT_OK(sf_target_remove(p, &self, &removed, why, sizeof(why)),
		      "remove self") &&
	    ASSERT_EQ(removed, 1, "targets removed") &&
	    ASSERT_OK(watch_self(p, &again), "watch self again") &&
	    ASSERT_TRUE(ticks(p, again, 3, &v), "the timer ticks")) {
		ASSERT_TRUE(v.seen & SATFEED_SAT_SEEN_CPU,
			    "added again: seen cpu (seen %#x)", v.seen);
		/* what the share reads is the first part's check; here,
		 * that the busy thread's time counts at all (none would
		 * without the take-over).  A 7.x TCG guest read 546
		 * permille here: the add's own work in this thread can
		 * make it a second CPU for a tick */
		ASSERT_TRUE(v.cpu_ns > 0 && v.cpu_permille > 0,
			    "added again: cpu_ns %llu, cpu %u permille of %u CPUs",
			    (unsigned long long)v.cpu_ns, v.cpu_permille,
			    v.cpus);
	}
	u.stop = true;
	pthread_join(spin, &ret);
	pthread_join(nap, NULL);
	ASSERT_TRUE(!ret, "the busy thread's sends and receives");
close:
	close(u.sv[0]);
	close(u.sv[1]);
}

static void check_cpus(const struct sf_pins *p, int slot)
{
	check_two_busy(p, slot, 0, 0, 1);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		check_two_busy(p, slot, 0, 1, 2);
}

void test_verdict_tick(void)
{
	struct satfeed_bpf *skel;
	struct sf_pins p;
	int slot;

	/* one engine per part: one part's idle figures stay out of the
	 * next's */
	for (int part = 0; part < 5; part++) {
		test_max_age_ns = TICK_T_NS;
		skel = start_engine(SATFEED_WINDOW_SHIFT, false);
		test_max_age_ns = 0;
		if (!skel)
			return;
		if (engine_maps(skel, &p) &&
		    ASSERT_OK(watch_self(&p, &slot), "watch self")) {
			if (part == 0)
				check_idle(&p, slot);
			else if (part == 1)
				check_service(&p, slot);
			else if (part == 2)
				check_uring(&p, slot);
			else if (part == 3)
				check_cpus(&p, slot);
			else
				check_unwaited(&p, slot);
		}
		satfeed_bpf__destroy(skel);
	}
}
