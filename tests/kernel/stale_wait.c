// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stale_wait.c - a wait that fails after its target's slot was reused does
 * not count as the new target's failed wait.
 */
#include "test_kernel.h"

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
void test_stale_wait(void)
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
