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
 * Each part's target is a child process running the part's threads
 * (struct target), so the thread here that polls the verdict is none of the
 * target's.  Each part checks the engine's figures against the definitions
 * in satfeed.h; the rules themselves are checked exactly in
 * tests/unit/test_sat_rules.c.
 */
#include "test_kernel.h"
#include <dirent.h>
#include <netinet/in.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <liburing.h>

#define TICK_T_NS	200000000ULL	/* T */

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
		/* a tick is 100 ms: four looks at each, light on a TCG
		 * guest's one instruction stream */
		usleep(25000);
	}
	return false;
}

/* What a thread of the target did not do: the call, its errno.  The
 * child makes no ASSERT_* checks (its counts stay in the child); the
 * parent reports these. */
struct thread_fail {
	const char *what;	/* a string literal: the same address in both */
	int err;
};

static void *thread_failed(struct thread_fail *f, const char *what)
{
	f->err = errno;
	f->what = what;
	return (void *)-1L;
}

struct server {
	struct thread_fail f;
	int c, lfd;		/* the client's end, the listener's */
	int ep;			/* an epoll set the busy thread polls */
	__u64 work_ns;		/* work per request before the answer */
	bool poll;		/* epoll_wait (timeout 0) after each request */
	bool uring;		/* or io_uring_enter(GETEVENTS) on a NOP */
	int cpu;		/* pinned to this CPU, -1: not pinned */
	__u32 pause_us;		/* asleep (nanosleep) after each answer */
	volatile bool stop;
	long served;
};

/* A server on a TCP connection: no fd yet, not pinned. */
#define SERVER_INIT { .c = -1, .lfd = -1, .ep = -1, .cpu = -1 }

/* The client's requests accepted, then answered back to back until stop
 * (the accept in the target: the service time is an accepted connection's,
 * bpf/satfeed_engine.bpf.h). */
static void *serve(void *arg)
{
	struct server *sv = arg;
	bool uring = sv->uring;
	struct epoll_event e;
	struct io_uring r;
	void *ret = NULL;
	cpu_set_t set;
	int s = -1;
	char b;

	if (sv->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(sv->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return thread_failed(&sv->f, "sched_setaffinity");
	}
	if (uring && io_uring_queue_init(8, &r, 0))
		return thread_failed(&sv->f, "io_uring_queue_init");
	s = accept(sv->lfd, NULL, NULL);
	if (s < 0) {
		ret = thread_failed(&sv->f, "accept");
		goto out;
	}
	while (!sv->stop) {
		if (write(sv->c, "q", 1) != 1 || read(s, &b, 1) != 1) {
			ret = thread_failed(&sv->f, "the request");
			break;
		}
		if (sv->work_ns)
			spin_ns(sv->work_ns);
		if (write(s, "a", 1) != 1 || read(sv->c, &b, 1) != 1) {
			ret = thread_failed(&sv->f, "the answer");
			break;
		}
		if (sv->pause_us)
			usleep(sv->pause_us);
		/* a little work between requests, then a look for more */
		if (sv->poll) {
			spin_ns(100000);
			epoll_wait(sv->ep, &e, 1, 0);
		}
		if (uring) {
			spin_ns(100000);
			io_uring_prep_nop(io_uring_get_sqe(&r));
			if (io_uring_submit_and_wait(&r, 1) != 1) {
				ret = thread_failed(&sv->f,
						    "io_uring_submit_and_wait");
				break;
			}
			io_uring_cq_advance(&r, 1);
		}
		sv->served++;
	}
	close(s);
out:
	if (uring)
		io_uring_queue_exit(&r);
	return ret;
}

struct sleeper {
	struct thread_fail f;
	int ep;			/* an epoll set with an eventfd in it */
};

static void *sleeper(void *arg)
{
	struct sleeper *sl = arg;
	struct epoll_event e;

	/* woken by the eventfd; the timeout only bounds a lost wakeup */
	if (epoll_wait(sl->ep, &e, 1, 20000) != 1)
		return thread_failed(&sl->f, "the sleeper's epoll_wait");
	return NULL;
}

struct unwaited {
	struct thread_fail f;
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
			return thread_failed(&u->f, "the busy thread's I/O");
	}
	return NULL;
}

/*
 * A helper asleep in an untraced call (nanosleep), awake a few times a
 * second.  A TCG guest charges a thread the host's preemption of its vCPU
 * while it runs, so each wake-up can read milliseconds; the child's main
 * thread, blocked all along, is the helper that never runs.
 */
static void *nap_thread(void *arg)
{
	struct unwaited *u = arg;

	while (!u->stop)
		usleep(200000);
	return NULL;
}

/*
 * A part's target: a child process whose threads run the part's server,
 * its state in memory shared with this process.  This thread, which polls
 * the verdict, is then none of the target's threads: one that runs 5% of
 * an interval counts as a CPU the target may use (ABI 9), and the polling
 * did in a 7.x TCG guest (cpus 2 beside one busy thread).
 */
#define TARGET_THREADS	2

struct thread_spec {
	void *(*fn)(void *);
	void *arg;		/* in the shared memory */
};

struct target_shm {
	sem_t go;		/* the target is added: start the threads */
	sem_t joined;		/* every thread returned */
	sem_t quit;		/* the child may exit */
	int failed;		/* threads not started or that failed */
	struct sleeper sl;
	struct server sv[TARGET_THREADS];
	struct unwaited u;
};

struct target {
	const struct sf_pins *p;
	struct target_shm *m;
	pid_t pid;		/* the child, -1 before the fork or reaped */
	bool watched;		/* the engine watches pid, in slot */
	int slot;
};

static bool target_open(const struct sf_pins *p, struct target *t)
{
	t->p = p;
	t->pid = -1;
	t->watched = false;
	t->m = mmap(NULL, sizeof(*t->m), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(t->m != MAP_FAILED, "shared memory: %s",
			 strerror(errno))) {
		t->m = NULL;
		return false;
	}
	if (!ASSERT_TRUE(!sem_init(&t->m->go, 1, 0) &&
				 !sem_init(&t->m->joined, 1, 0) &&
				 !sem_init(&t->m->quit, 1, 0),
			 "sem_init: %s", strerror(errno))) {
		munmap(t->m, sizeof(*t->m));
		t->m = NULL;
		return false;
	}
	t->m->sl.ep = -1;
	for (int i = 0; i < TARGET_THREADS; i++)
		t->m->sv[i] = (struct server)SERVER_INIT;
	t->m->u.sv[0] = t->m->u.sv[1] = -1;
	return true;
}

static void sem_wait_intr(sem_t *s)
{
	while (sem_wait(s) && errno == EINTR)
		;
}

static void target_child(struct target_shm *m, const struct thread_spec *th,
			 int n, pid_t parent) __attribute__((noreturn));

/* The child: its threads, once the target is added; then it stays until
 * quit, the target alive after its threads are done.  Killed with its
 * parent: its threads stop only when the parent says so. */
static void target_child(struct target_shm *m, const struct thread_spec *th,
			 int n, pid_t parent)
{
	pthread_t t[TARGET_THREADS];
	void *ret;
	int i, failed;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	sem_wait_intr(&m->go);
	for (i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, th[i].fn, th[i].arg))
			break;
	}
	failed = n - i;
	while (i--) {
		pthread_join(t[i], &ret);
		failed += !!ret;
	}
	m->failed = failed;
	sem_post(&m->joined);
	sem_wait_intr(&m->quit);
	_exit(0);
}

/* Fork the target, watch it, then let its n threads start. */
static bool target_start(struct target *t, const struct thread_spec *th,
			 int n)
{
	struct sf_selector sel = { .kind = SATFEED_TARGET_PID };
	pid_t parent = getpid();
	char why[256];
	int err;

	if (!ASSERT_TRUE(n <= TARGET_THREADS, "%d threads", n))
		return false;
	/* nothing buffered twice (the child only _exits, but a helper
	 * that printed would) */
	fflush(NULL);
	t->pid = fork();
	if (!ASSERT_TRUE(t->pid >= 0, "fork: %s", strerror(errno)))
		return false;
	if (!t->pid)
		target_child(t->m, th, n, parent);
	sel.id = t->pid;
	err = sf_target_add(t->p, &sel, SATFEED_SC_ALL, &t->slot, why,
			    sizeof(why));
	if (!ASSERT_TRUE(!err, "watch the target %d: %s", (int)t->pid, why)) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		t->pid = -1;
		return false;
	}
	t->watched = true;
	sem_post(&t->m->go);
	return true;
}

/* Why the target's threads failed: each failed call and its errno. */
static const char *target_fails(const struct target *t, char *buf, size_t len)
{
	const struct thread_fail *f[] = { &t->m->sl.f, &t->m->sv[0].f,
					  &t->m->sv[1].f, &t->m->u.f };
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]) && used < len; i++) {
		if (f[i]->what)
			used += snprintf(buf + used, len - used, " %s: %s;",
					 f[i]->what, strerror(f[i]->err));
	}
	return buf;
}

/*
 * The target's threads, told to stop, have all returned NULL.  Waits 30 s
 * at most (the sleeper's own timeout is 20 s), on the monotonic clock; a
 * child that does not answer is killed.
 */
static bool target_joined(struct target *t, const char *what)
{
	struct timespec ts;
	char why[256];

	if (!ASSERT_TRUE(t->pid > 0, "%s: no target", what))
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 30;
	while (sem_clockwait(&t->m->joined, CLOCK_MONOTONIC, &ts)) {
		if (errno == EINTR)
			continue;
		ASSERT_TRUE(false, "%s: the target's threads did not return "
			    "in 30 s: killed", what);
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		t->pid = -1;
		t->watched = false;
		return false;
	}
	return ASSERT_TRUE(!t->m->failed, "%s: %d thread(s) failed:%s", what,
			   t->m->failed, target_fails(t, why, sizeof(why)));
}

/* Stop watching the target, then let it exit (the engine forgets a
 * removed target's threads; an exiting target's would go through its exit
 * path, not this test's subject) and reap it. */
static void target_close(struct target *t)
{
	struct sf_selector sel = { .kind = SATFEED_TARGET_PID, .id = t->pid };
	int removed = 0, status = 0;
	char why[256];

	if (t->watched &&
	    ASSERT_TRUE(!sf_target_remove(t->p, &sel, &removed, why,
					  sizeof(why)),
			"stop watching the target: %s", why))
		ASSERT_EQ(removed, 1, "targets removed");
	if (t->pid > 0) {
		sem_post(&t->m->quit);
		ASSERT_EQ(waitpid(t->pid, &status, 0), t->pid,
			  "the target reaped");
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status),
			    "the target exited (status %#x)", status);
	}
	if (t->m)
		munmap(t->m, sizeof(*t->m));
}

/* A listener and a client connected to it, for the target to accept. */
static bool tcp_pair(struct server *sv)
{
	struct sockaddr_in a;

	sv->lfd = listen_tcp(&a);
	if (!ASSERT_TRUE(sv->lfd >= 0, "listen"))
		return false;
	sv->c = connect_tcp(&a);
	return ASSERT_TRUE(sv->c >= 0, "connect");
}

static void server_close(struct server *sv)
{
	if (sv->c >= 0)
		close(sv->c);
	if (sv->lfd >= 0)
		close(sv->lfd);
	if (sv->ep >= 0)
		close(sv->ep);
}

/* The time the threads of process pid ran so far (schedstat), ns; 0 if
 * not readable. */
static __u64 process_run_ns(pid_t pid)
{
	unsigned long long run, sum = 0;
	char path[64];
	struct dirent *e;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat",
			 (int)pid, e->d_name);
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

/*
 * The CPU share of a target with one thread busy all along, over the ticks
 * from v0 to v: one CPU, most of it, and its time within what the target's
 * threads ran (schedstat) from r0, read before v0's tick, to r1, read
 * after v's, and at least half the time between the ticks.
 */
static void check_cpu_busy(const struct satfeed_verdict *v0,
			   const struct satfeed_verdict *v, __u64 r0,
			   __u64 r1, const char *who)
{
	ASSERT_TRUE(v->seen & SATFEED_SAT_SEEN_CPU, "%s: seen cpu (seen %#x)",
		    who, v->seen);
	ASSERT_TRUE(v->cpus == 1, "%s: cpus %u, want 1", who, v->cpus);
	ASSERT_TRUE(v->cpu_permille >= 600, "%s: cpu %u permille, want >= 600",
		    who, v->cpu_permille);
	ASSERT_TRUE(v->cpu_ns > v0->cpu_ns && v->cpu_ns - v0->cpu_ns <= r1 - r0,
		    "%s: cpu_ns grew %llu ns, the target ran %llu", who,
		    (unsigned long long)(v->cpu_ns - v0->cpu_ns),
		    (unsigned long long)(r1 - r0));
	ASSERT_TRUE(v->cpu_ns - v0->cpu_ns >= (v->tick_ns - v0->tick_ns) / 2,
		    "%s: cpu_ns grew %llu ns in %llu ns of ticks", who,
		    (unsigned long long)(v->cpu_ns - v0->cpu_ns),
		    (unsigned long long)(v->tick_ns - v0->tick_ns));
}

/* r0, then a tick (v0), then two more (v) and r1: the CPU window */
static bool cpu_window(struct target *t, struct satfeed_verdict *v0,
		       struct satfeed_verdict *v, __u64 *r0, __u64 *r1)
{
	*r0 = process_run_ns(t->pid);
	if (!ASSERT_TRUE(ticks(t->p, t->slot, 1, v0), "a tick") ||
	    !ASSERT_TRUE(ticks(t->p, t->slot, 2, v), "two more"))
		return false;
	*r1 = process_run_ns(t->pid);
	return ASSERT_TRUE(*r0 && *r1 >= *r0, "schedstat of %d: %llu, %llu ns",
			   (int)t->pid, (unsigned long long)*r0,
			   (unsigned long long)*r1);
}

static void check_idle(const struct sf_pins *p)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct thread_spec th[2];
	struct satfeed_verdict v, v0;
	__u64 one = 1, r0, r1;
	struct server *sv;
	struct target t;
	int ev;

	if (!target_open(p, &t))
		return;
	sv = &t.m->sv[0];
	sv->poll = true;
	th[0] = (struct thread_spec){ .fn = sleeper, .arg = &t.m->sl };
	th[1] = (struct thread_spec){ .fn = serve, .arg = sv };
	t.m->sl.ep = epoll_create1(0);
	ev = eventfd(0, 0);
	sv->ep = epoll_create1(0);
	if (!ASSERT_TRUE(t.m->sl.ep >= 0 && ev >= 0 && sv->ep >= 0, "epoll") ||
	    !ASSERT_OK(epoll_ctl(t.m->sl.ep, EPOLL_CTL_ADD, ev, &e), "ctl") ||
	    !tcp_pair(sv) || !target_start(&t, th, 2))
		goto close;
	/* a tick to start from, then two whole intervals */
	if (ASSERT_TRUE(ticks(p, t.slot, 3, &v), "the timer ticks"))
		check_busy_full(&v, 1, "busy thread beside a listener");
	/* its CPU: the busy thread's, the sleeper's next to nothing */
	if (cpu_window(&t, &v0, &v, &r0, &r1))
		check_cpu_busy(&v0, &v, r0, r1,
			       "one thread that did not sleep");
	sv->stop = true;
	ASSERT_EQ(write(ev, &one, sizeof(one)), sizeof(one), "wake");
	target_joined(&t, "the server and the sleeper ran");
	ASSERT_TRUE(sv->served > 100, "served %ld requests", sv->served);
close:
	server_close(sv);
	if (t.m->sl.ep >= 0)
		close(t.m->sl.ep);
	if (ev >= 0)
		close(ev);
	target_close(&t);
}

static void check_uring(const struct sf_pins *p)
{
	struct thread_spec th;
	struct satfeed_verdict v;
	struct server *sv;
	struct target t;

	if (!target_open(p, &t))
		return;
	sv = &t.m->sv[0];
	sv->uring = true;
	th = (struct thread_spec){ .fn = serve, .arg = sv };
	if (!tcp_pair(sv) || !target_start(&t, &th, 1))
		goto close;
	if (ASSERT_TRUE(ticks(p, t.slot, 3, &v), "the timer ticks"))
		check_busy_full(&v, 0, "busy io_uring thread");
	sv->stop = true;
	target_joined(&t, "the io_uring server ran");
	ASSERT_TRUE(sv->served > 100, "served %ld requests", sv->served);
close:
	server_close(sv);
	target_close(&t);
}

static void check_service(const struct sf_pins *p)
{
	struct thread_spec th;
	struct satfeed_verdict v;
	struct server *sv;
	struct target t;
	__u64 base = 0;

	if (!target_open(p, &t))
		return;
	/* a pause after each answer keeps the thread's CPU share (ABI 9
	 * sees a thread that never waits) below cpu_full: the service
	 * time is judged alone */
	sv = &t.m->sv[0];
	sv->pause_us = 2000;
	th = (struct thread_spec){ .fn = serve, .arg = sv };
	if (!tcp_pair(sv) || !target_start(&t, &th, 1))
		goto close;
	/* answered at once: the baseline */
	if (ASSERT_TRUE(ticks(p, t.slot, 3, &v), "the timer ticks")) {
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
	sv->work_ns = 2000000;
	if (ASSERT_TRUE(ticks(p, t.slot, 6, &v), "the timer ticks")) {
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
	sv->stop = true;
	target_joined(&t, "the server ran");
	/* quiet (the target alive, its server done): ok, and the average
	 * back at the baseline */
	if (ASSERT_TRUE(ticks(p, t.slot, 5, &v), "the timer ticks")) {
		ASSERT_TRUE(v.why & SATFEED_SAT_WHY_QUIET, "why %#x: quiet",
			    v.why);
		ASSERT_EQ(v.state, SATFEED_SAT_OK, "quiet: ok");
		ASSERT_EQ(v.svc_avg_ns, v.svc_base_ns,
			  "quiet: the average restarts at the baseline");
	}
close:
	server_close(sv);
	target_close(&t);
}

/*
 * Two busy threads on CPUs cpu0 and cpu1: the CPUs they may use are the
 * union of their masks, want of them, and they keep them busy.
 */
static void check_two_busy(const struct sf_pins *p, int cpu0, int cpu1,
			   __u32 want)
{
	struct thread_spec th[2];
	struct satfeed_verdict v;
	struct server *sv;
	struct target t;

	if (!target_open(p, &t))
		return;
	sv = t.m->sv;
	for (int i = 0; i < 2; i++) {
		th[i] = (struct thread_spec){ .fn = serve, .arg = &sv[i] };
		sv[i].poll = true;
		sv[i].cpu = i ? cpu1 : cpu0;
		sv[i].ep = epoll_create1(0);
		if (!ASSERT_TRUE(sv[i].ep >= 0, "epoll") || !tcp_pair(&sv[i]))
			goto close;
	}
	if (!target_start(&t, th, 2))
		goto close;
	if (ASSERT_TRUE(ticks(p, t.slot, 3, &v), "the timer ticks")) {
		ASSERT_TRUE(v.cpus == want,
			    "busy on CPUs %d and %d: cpus %u, want %u", cpu0,
			    cpu1, v.cpus, want);
		ASSERT_TRUE(v.cpu_permille >= 600,
			    "busy on CPUs %d and %d: cpu %u permille", cpu0,
			    cpu1, v.cpu_permille);
	}
	sv[0].stop = sv[1].stop = true;
	target_joined(&t, "both busy threads ran");
close:
	for (int i = 0; i < 2; i++)
		server_close(&sv[i]);
	target_close(&t);
}

/*
 * A thread that never waits in a traced call (as one per connection blocked
 * in its receive, or busy): the tick gives it a record, and its CPU time
 * counts; a helper asleep in nanosleep beside it runs too little to count
 * as a CPU the target may use.  The engine without those records saw
 * neither thread (no SATFEED_SAT_SEEN_CPU).
 */
static void check_unwaited(const struct sf_pins *p)
{
	struct sf_selector sel = { .kind = SATFEED_TARGET_PID };
	struct thread_spec th[2];
	struct satfeed_verdict v, v0;
	struct unwaited *u;
	struct target t;
	int removed = 0;
	char why[256];
	__u64 r0, r1;

	if (!target_open(p, &t))
		return;
	u = &t.m->u;
	th[0] = (struct thread_spec){ .fn = spin_thread, .arg = u };
	th[1] = (struct thread_spec){ .fn = nap_thread, .arg = u };
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, u->sv),
		       "socketpair") ||
	    !target_start(&t, th, 2))
		goto close;
	/* the tick that makes their records, then one that sees them */
	ASSERT_TRUE(ticks(p, t.slot, 2, &v), "the timer ticks");
	if (cpu_window(&t, &v0, &v, &r0, &r1)) {
		check_cpu_busy(&v0, &v, r0, r1,
			       "a busy thread and a napping helper");
		ASSERT_EQ(v.threads + v.sleepers, 0,
			  "no thread waited in a traced call");
		ASSERT_EQ(!!(v.why & SATFEED_SAT_WHY_CPU_FULL),
			  v.cpu_permille >= SATFEED_SAT_CPU_FULL_DEFAULT,
			  "the CPU rule judges it (why has cpu_full)");
		ASSERT_EQ(v.state == SATFEED_SAT_FULL,
			  v.cpu_permille >= SATFEED_SAT_CPU_FULL_DEFAULT,
			  "the CPU rule judges it (state full)");
	}
	/* removed and added again: the new target takes the old one's
	 * records over (no thread here waits, so none would otherwise) */
	sel.id = t.pid;
	t.watched = !ASSERT_TRUE(!sf_target_remove(p, &sel, &removed, why,
						   sizeof(why)),
				 "remove the target: %s", why);
	if (!t.watched && ASSERT_EQ(removed, 1, "targets removed"))
		t.watched = ASSERT_TRUE(!sf_target_add(p, &sel, SATFEED_SC_ALL,
						       &t.slot, why,
						       sizeof(why)),
					"watch it again: %s", why);
	/* the tick that takes the records over, one that sees them (v0),
	 * and the busy thread's time over the next interval: how many CPUs
	 * the threads may use is the first part's check */
	if (t.watched && ASSERT_TRUE(ticks(p, t.slot, 2, &v0), "the ticks") &&
	    ASSERT_TRUE(ticks(p, t.slot, 1, &v), "one more")) {
		ASSERT_TRUE(v.seen & SATFEED_SAT_SEEN_CPU,
			    "added again: seen cpu (seen %#x)", v.seen);
		ASSERT_TRUE(v.cpu_ns - v0.cpu_ns >=
				    (v.tick_ns - v0.tick_ns) / 2,
			    "added again: cpu_ns grew %llu ns in %llu ns",
			    (unsigned long long)(v.cpu_ns - v0.cpu_ns),
			    (unsigned long long)(v.tick_ns - v0.tick_ns));
	}
	u->stop = true;
	target_joined(&t, "the busy thread's sends and receives");
close:
	if (u->sv[0] >= 0)
		close(u->sv[0]);
	if (u->sv[1] >= 0)
		close(u->sv[1]);
	target_close(&t);
}

static void check_cpus(const struct sf_pins *p)
{
	check_two_busy(p, 0, 0, 1);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		check_two_busy(p, 0, 1, 2);
}

void test_verdict_tick(void)
{
	struct satfeed_bpf *skel;
	struct sf_pins p;

	/* one engine per part: one part's idle figures stay out of the
	 * next's */
	for (int part = 0; part < 5; part++) {
		test_max_age_ns = TICK_T_NS;
		skel = start_engine(SATFEED_WINDOW_SHIFT, false);
		test_max_age_ns = 0;
		if (!skel)
			return;
		if (engine_maps(skel, &p)) {
			if (part == 0)
				check_idle(&p);
			else if (part == 1)
				check_service(&p);
			else if (part == 2)
				check_uring(&p);
			else if (part == 3)
				check_cpus(&p);
			else
				check_unwaited(&p);
		}
		satfeed_bpf__destroy(skel);
	}
}
