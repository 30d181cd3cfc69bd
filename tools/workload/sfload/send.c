// SPDX-License-Identifier: GPL-2.0
/*
 * send.c - the sender thread: each request at its scheduled time, open loop,
 * one send per request (--no-pipeline: on a connection with no reply
 * pending, waiting for one when none is free).
 */
#include "sfload.h"

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = t / NSEC, .tv_nsec = t % NSEC };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/*
 * --no-pipeline: the first connection from i mod C on with no reply
 * pending, marked pending; NULL when every connection's send failed, or
 * when the run stops or passes its hard deadline while every connection
 * still has one.  The acquire pairs with the receiver's release once it
 * has matched the reply.
 */
static struct conn *idle_conn(uint64_t i)
{
	struct timespec ts = { .tv_nsec = IDLE_POLL_NS };
	unsigned int k, dead, n = cfg.connections;
	struct conn *c;

	for (;;) {
		for (k = dead = 0; k < n; k++) {
			c = &run.conns[(i + k) % n];
			if (c->send_dead) {
				dead++;
				continue;
			}
			if (!atomic_load_explicit(&c->pending,
						  memory_order_acquire)) {
				atomic_store_explicit(&c->pending, true,
						      memory_order_relaxed);
				return c;
			}
		}
		if (dead == n ||
		    atomic_load_explicit(&run.stop, memory_order_relaxed))
			return NULL;
		if (sf_now_ns() > run.hard_deadline) {
			run.aborted = true;
			return NULL;
		}
		nanosleep(&ts, NULL);
	}
}

void *sender_run(void *arg)
{
	const unsigned char *value = arg;
	unsigned char *buf;
	uint64_t i = 0, t, d, count = 0, rng = cfg.seed;
	uint64_t one = 1;
	struct conn *c;
	size_t len;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	buf = malloc(cfg.value_size + REQ_EXTRA);
	if (!buf) {
		fprintf(stderr, "sfload: out of memory\n");
		goto out_done;
	}
	for (i = 0; i < run.n; i++) {
		d = run.start + run.sched[i];
		t = sf_now_ns();
		while (t + cfg.spin_ns < d &&
		       !atomic_load_explicit(&run.stop, memory_order_relaxed)) {
			sleep_until(d - cfg.spin_ns - t > SLEEP_CHUNK_NS ?
				    t + SLEEP_CHUNK_NS : d - cfg.spin_ns);
			t = sf_now_ns();
		}
		while (t < d)
			t = sf_now_ns();
		if (atomic_load_explicit(&run.stop, memory_order_relaxed))
			break;
		if (t > run.hard_deadline) {
			run.aborted = true;
			break;
		}
		if (cfg.no_pipeline) {
			c = idle_conn(i);
			if (!c)
				break;
			t = sf_now_ns();
		} else {
			c = &run.conns[i % cfg.connections];
			if (c->send_dead)
				continue;
		}
		len = build_request(buf, i, t, &rng, value);
		run.sent[i] = t;
		if (send_all(c->fd, buf, len)) {
			run.sent[i] = 0;
			atomic_store(&c->pending, false);
			if (atomic_load(&run.stop))
				break;
			if (errno == EAGAIN) {
				/* Blocked past the hard deadline. */
				run.aborted = true;
				break;
			}
			run.send_failed = true;
			fprintf(stderr, "sfload: connection %u: send failed: %s\n",
				c->index + 1, strerror(errno));
			c->send_dead = true;
			continue;
		}
		atomic_store_explicit(&run.nsent, ++count,
				      memory_order_relaxed);
	}
	free(buf);
out_done:
	run.stopped_at = i;
	run.sender_end = sf_now_ns();
	atomic_store_explicit(&run.sender_done, true, memory_order_release);
	if (write(run.done_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "sfload: eventfd: %s\n", strerror(errno));
	return NULL;
}
