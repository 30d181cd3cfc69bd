/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_account.bpf.h - what one event of a target does to its data: the
 * windowed streams, the verdict, the failure counters and the discovery
 * counts.  Design: it takes (slot, gen) of a target already found and knows
 * nothing of hooks or tasks, so the syscall and io_uring paths and the
 * tests' BPF object (tests/kernel/progs/) all reach the same code;
 * satfeed_engine.bpf.h, which finds the target, includes it.
 */
#ifndef __SATFEED_ACCOUNT_BPF_H
#define __SATFEED_ACCOUNT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "satfeed.h"
#include "satfeed_maps.bpf.h"
#include "satfeed_state.bpf.h"
#include "window_math.h"
#include "sat_rules.h"

#define SF_EAGAIN	11

#ifndef barrier
#define barrier()		asm volatile("" ::: "memory")
#endif
#ifndef READ_ONCE
#define READ_ONCE(x)		(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))
#endif

/* Set by the loader between open and load. */
const volatile __u32 window_shift = SATFEED_WINDOW_SHIFT;

/*
 * Push hook: called after every window closes, outside the lock, with a
 * copy of the window.  A no-op here; a consumer hooks it at run time (an
 * fentry program on it, in any attach mode, or an freplace of it in tp_btf
 * mode: see kmod-example/), so the engine neither needs the consumer nor is
 * rebuilt for it.  Keep the name and prototype: they are part of the contract.
 */
__noinline int satfeed_window_closed(__u32 slot, __u32 stream,
				     struct satfeed_window *w)
{
	/* keep every argument live: clang drops unused ones at call sites,
	 * and an freplace program must receive all three */
	asm volatile("" : : "r"(slot), "r"(stream), "r"(w) : "memory");
	return 0;
}

static __always_inline struct satfeed_stream *sf_stream(__u32 slot,
							__u32 stream)
{
	__u32 key = satfeed_stream_key(slot, stream);

	if (stream == SATFEED_STREAM_RESP)
		return bpf_map_lookup_elem(&sf_responses, &slot);
	if (stream == SATFEED_STREAM_SVC)
		return bpf_map_lookup_elem(&sf_service, &slot);
	return bpf_map_lookup_elem(&sf_streams, &key);
}

/* The wait syscalls, as an sc_mask. */
#define SF_SC_POLL_MASK							\
	(SATFEED_SC_ALL & ~((1U << SATFEED_SC_POLL_FIRST) - 1))

/*
 * The rules user space wrote for target (slot, gen) into *rules, else (a
 * slot being reused) the defaults: every field 0.  Read field by field
 * without a lock: user space writes a whole entry, and a change applies
 * from the next evaluation.
 */
static __always_inline void sf_rules_get(__u32 slot, __u32 gen,
					 struct satfeed_sat_rules *rules)
{
	struct satfeed_rules_slot *r;

	r = bpf_map_lookup_elem(&sf_rules, &slot);
	if (!r || READ_ONCE(r->gen) != gen)
		return;
	rules->idle_near_permille = READ_ONCE(r->rules.idle_near_permille);
	rules->idle_full_permille = READ_ONCE(r->rules.idle_full_permille);
	rules->cv2_rise_permille = READ_ONCE(r->rules.cv2_rise_permille);
	rules->wps_near_permille = READ_ONCE(r->rules.wps_near_permille);
	rules->wps_full_permille = READ_ONCE(r->rules.wps_full_permille);
	rules->svc_near_permille = READ_ONCE(r->rules.svc_near_permille);
	rules->svc_full_permille = READ_ONCE(r->rules.svc_full_permille);
	rules->drop_near_permille = READ_ONCE(r->rules.drop_near_permille);
	rules->drop_full_permille = READ_ONCE(r->rules.drop_full_permille);
	rules->cpu_near_permille = READ_ONCE(r->rules.cpu_near_permille);
	rules->cpu_full_permille = READ_ONCE(r->rules.cpu_full_permille);
}

/*
 * The target's verdict, after one of its windows closed (w, a copy taken
 * under the stream lock): the window's figures, the poll stream's count of
 * waits and the target's rules (sf_rules, of its generation) go through
 * satfeed_sat_update()
 * (sat_rules.h) under the verdict's lock.  The poll count is read without
 * the poll stream's lock (a BPF program holds one lock at a time): it only
 * grows, and a 64-bit load is not torn.  A verdict of another generation is
 * left alone: the slot was reused (the library resets the verdict to the
 * new generation before the target's streams) or freed (reset to
 * generation 0, which no target has).  Not inlined: it runs once per closed
 * window, and one copy per program is enough; it is called with no lock
 * held, which any kernel allows.
 */
static __noinline void sf_verdict_update(__u32 slot, __u32 stream, __u32 gen,
					 const struct satfeed_window *w)
{
	struct satfeed_sat_rules rules = {};
	struct satfeed_sat_event e = {
		.stream = stream,
		.shift = window_shift,
		.samples = (w->flags & SATFEED_WIN_AGED) ? w->samples : 0,
		.idle_permille = w->idle_permille,
		.cv2_permille = w->cv2_permille,
		.now = w->end_ns,
	};
	struct satfeed_stream *poll;
	struct satfeed_verdict *v;
	struct satfeed_target *t;
	__u32 sc_mask = 0;

	t = bpf_map_lookup_elem(&sf_targets, &slot);
	if (!t)
		return;
	/* the defaults until the target of this generation is written, the
	 * last step of an add */
	if (READ_ONCE(t->gen) == gen)
		sc_mask = READ_ONCE(t->sc_mask);
	sf_rules_get(slot, gen, &rules);
	poll = sf_stream(slot, SATFEED_STREAM_POLL);
	if (poll && (sc_mask & SF_SC_POLL_MASK))
		e.poll_calls = READ_ONCE(poll->calls);
	v = bpf_map_lookup_elem(&sf_verdict, &slot);
	if (!v)
		return;
	bpf_spin_lock(&v->lock);
	if (v->gen == gen)
		satfeed_sat_update(v, &rules, &e);
	bpf_spin_unlock(&v->lock);
}

/* A thread's mark for window seq of target (slot, gen): unique enough that
 * a thread that waited in another target's window with the same number is
 * counted again (seq < 2^40: 2048-sample windows for 70 years at 10^9/s) */
static __always_inline __u64 sf_thread_mark(__u64 seq, __u32 slot, __u32 gen)
{
	return (seq & 0xffffffffffULL) | ((__u64)(slot & 0xff) << 40) |
	       ((__u64)(gen & 0xffff) << 48);
}

/*
 * Account one event of a target's stream at time now.  gap: the sample is the
 * time since the stream's previous event (send/recv); otherwise it is the
 * given wait duration, of which runq was spent runnable, not running.
 * mark (waits; NULL otherwise): the waiting thread's own word, which tells
 * whether it was counted among the in-progress window's threads already.
 * verdict: a closed window goes through the target's verdict (the send,
 * recv and poll streams; a constant at each call site).
 * Events that race on two CPUs can reach the lock out of time order; such a
 * gap is 0 and the previous-event time never goes back, so the window sums
 * still telescope to last - first.
 */
static __always_inline void sf_account(__u32 slot, __u32 stream, __u32 gen,
				       __u64 now, bool gap, __u64 sample,
				       __u64 runq, __u64 *mark, bool verdict)
{
	struct satfeed_window closed;
	struct satfeed_stream *s;
	int done = 0;

	s = sf_stream(slot, stream);
	if (!s)
		return;
	bpf_spin_lock(&s->lock);
	if (s->gen != gen) {
		/* the slot was reused since the event was attributed */
		bpf_spin_unlock(&s->lock);
		return;
	}
	s->calls++;
	if (gap) {
		__u64 last = s->last_ns;

		if (!last || now <= last) {
			sample = 0;
			if (last)
				now = last;
		} else {
			sample = now - last;
		}
		s->last_ns = now;
		if (!last) {
			bpf_spin_unlock(&s->lock);
			return;
		}
	} else {
		__u64 m = sf_thread_mark(s->published + 1, slot, gen);

		s->last_ns = now;
		if (mark && *mark != m) {
			*mark = m;
			s->acc_threads++;
		}
	}
	done = sf_window_add(s, sample, runq, now, window_shift,
			     stream == SATFEED_STREAM_POLL, &closed);
	bpf_spin_unlock(&s->lock);
	if (done) {
		if (verdict)
			sf_verdict_update(slot, stream, gen, &closed);
		satfeed_window_closed(slot, stream, &closed);
	}
}

/*
 * The stream of slot when it still belongs to generation gen, for the
 * counters updated without the lock.  A removed target's thread can still be
 * in a wait (or between sf_find_target_of() and here) when its slot is given
 * to a new target: its event must not reach the new target's counters.
 *
 * The check is one load before the atomic add, not the lock.  What remains:
 * a reuse that completes between this load and the add (satfeedctl's remove
 * and add: a dozen bpf() calls under the root's flock, among them the locked
 * reset of this very stream) still bumps one counter of the new target.  It
 * takes a run of this program stalled for that long between two adjacent
 * instructions (a preemptible hook, from 7.x, or a descheduled vCPU), costs
 * at most one count of a diagnostic counter per stalled run, and never
 * reaches a sample or a window (sf_account() checks under the lock).
 * Closing it would put the lock pair on every failed call, EAGAIN included:
 * one per request in a non-blocking server.
 */
static __always_inline struct satfeed_stream *sf_stream_of_gen(__u32 slot,
								__u32 stream,
								__u32 gen)
{
	struct satfeed_stream *s = sf_stream(slot, stream);

	if (!s || *(volatile __u32 *)&s->gen != gen)
		return NULL;
	return s;
}

static __always_inline void sf_count(__u32 slot, __u32 stream, __u32 gen,
				     long ret)
{
	struct satfeed_stream *s = sf_stream_of_gen(slot, stream, gen);

	if (!s)
		return;
	if (ret == -SF_EAGAIN)
		__sync_fetch_and_add(&s->eagain, 1);
	else if (ret < 0)
		__sync_fetch_and_add(&s->errors, 1);
	else
		__sync_fetch_and_add(&s->zero_bytes, 1);
}

/* ---- discovery: a target whose sc_mask has SATFEED_SC_DISCOVER ----
 *
 * Its calls reach here instead of its streams: per source (a syscall, or an
 * io_uring op from SATFEED_SRC_URING_FIRST on), how many returned, moved
 * bytes, failed, and how much they moved.  No lock and no window: atomic
 * adds only, and only for a target in discovery, which lasts seconds.  Every
 * other target and process pays nothing for it but the test of the bit
 * after its sc_mask check.
 *
 * One call of source src of the target (slot, gen) returned ret; a wait
 * took wait_ns.  not_socket: a socket-fd member whose fd was not a socket.
 */
static __always_inline void sf_discover_count(__u32 slot, __u32 gen,
					      __u32 src, long ret,
					      bool not_socket, __u64 wait_ns)
{
	struct satfeed_discover_count *c;
	struct satfeed_discover *d;

	d = bpf_map_lookup_elem(&sf_discover, &slot);
	if (!d || *(volatile __u32 *)&d->gen != gen ||
	    src >= SATFEED_NR_SOURCES)
		return;
	c = &d->src[src];
	if (not_socket) {
		__sync_fetch_and_add(&c->not_socket, 1);
		return;
	}
	__sync_fetch_and_add(&c->calls, 1);
	if (wait_ns)
		__sync_fetch_and_add(&c->wait_ns, wait_ns);
	if (ret > 0) {
		__sync_fetch_and_add(&c->moved, 1);
		__sync_fetch_and_add(&c->bytes, ret);
	} else if (ret == 0) {
		__sync_fetch_and_add(&c->zero, 1);
	} else if (ret == -SF_EAGAIN) {
		__sync_fetch_and_add(&c->eagain, 1);
	} else {
		__sync_fetch_and_add(&c->errors, 1);
	}
}

#endif /* __SATFEED_ACCOUNT_BPF_H */
