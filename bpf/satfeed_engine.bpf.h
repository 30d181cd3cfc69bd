/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_engine.bpf.h - the syscall hooks' shared paths: what a traced
 * syscall means to a target.
 *
 * Design: this file runs the hooks' shared paths (waits, syscall returns,
 * which sends are responses, understudy receipts); which target an event
 * belongs to is satfeed_target.bpf.h's (one lookup, sf_find_target_of(),
 * for a syscall's caller and an io_uring request's owner alike), what the
 * event then does to the target's data satfeed_account.bpf.h's.
 * bpf/satfeed.bpf.c builds the shipped programs from it; a test-only BPF
 * object (tests/kernel/progs/) includes it too, so that the tests drive the
 * very code the syscall hooks run (sf_account(), the window update under
 * the stream lock) with chosen values.  Programs live in the .bpf.c files
 * only.
 */
#ifndef __SATFEED_ENGINE_BPF_H
#define __SATFEED_ENGINE_BPF_H

#include "satfeed_account.bpf.h"
#include "satfeed_target.bpf.h"

/*
 * ---- the response stream (satfeed.h, SATFEED_STREAM_RESP): which sends
 * answer a request ----
 *
 * Per connection, one small record, keyed by the socket: its struct sock
 * address, addresses and peer port (a socket freed and reallocated at the
 * same address for another connection has another peer).  A record
 * exists only for a target's client-facing connections:
 *  - a socket the target accepted: made at accept's return (tp_btf mode,
 *    sys_exit) or the kernel's inet_csk_accept() return (fentry mode,
 *    sf_accept), both in the accepting task, so a proxy's connect()ed
 *    backend sockets never have one;
 *  - an unconnected datagram socket, at its first receive.
 * A TCP connection's record is in sf_conn, a hash that holds it until the
 * connection's TCP_CLOSE (sf_conn_close, on the inet_sock_set_state
 * tracepoint); the others (datagram, AF_UNIX) are in the LRU sf_conn_other,
 * since nothing traces their close (satfeed_state.bpf.h).
 * A receive on such a connection marks it waiting (and keeps when the
 * request began, for the service time); the first send-family event on it
 * while waiting is a response: the mark is cleared and the response stream
 * gets an event.  Writes that continue the same response (headers, then a
 * body by writev or sendfile) find no mark and count once.
 *
 * A datagram socket's record also keeps the socket's drop count: at each
 * receive the growth since the last one goes to the target's verdict
 * (satfeed_verdict.drops), the queue overflow a UDP server past its
 * capacity shows instead of a growing queue.
 *
 * Cost, on a target's samples only: the socket of the fd (a few plain
 * loads; none for the read/write family, whose socket check found it)
 * and one hash lookup (a datagram receive: three more loads and a
 * compare, plus a compare-and-swap, a lookup and an atomic add when drops
 * grew; a TCP receive: two loads and a compare, plus a lookup and a compare
 * when it left bytes unread, ABI 10); a response adds the locked window
 * updates of the response and service-time streams, in a subprogram, and
 * one atomic add to its service-time histogram (sf_svc_hist).
 * Closing: every TCP state change of the machine runs sf_conn_close,
 * which returns at once unless the state is TCP_CLOSE, and then does one
 * hash lookup (a delete with it when the connection was a target's).
 */

#define SF_SOCK_DGRAM		2
#define SF_IPPROTO_TCP		6
#define SF_TCP_ESTABLISHED	1
#define SF_TCP_CLOSE		7
#define SF_E2BIG		7
#define SF_CONN_ACCEPTED	(1U << 0)	/* a TCP connection it accepted */
#define SF_CONN_DGRAM		(1U << 1)	/* an unconnected datagram socket */
#define SF_CONN_WAITING		(1U << 2)	/* received; not answered yet */
#define SF_CONN_TCP		(1U << 3)	/* accepted, TCP (ABI 10) */

/* The response stream, service time and per-connection state are kept;
 * false (satfeed-loader --no-responses, set between open and load): none
 * of this file runs, the verifier drops it, and sf_conn is one entry */
const volatile bool with_responses = true;

/* The key of socket sk (an untrusted pointer: plain fault-safe loads). */
static __always_inline void sf_conn_key_of(struct sock *sk,
					   struct sf_conn_key *k)
{
	struct sock *s = bpf_core_cast(sk, struct sock);

	k->sk = (__u64)sk;
	k->addrs = s->__sk_common.skc_addrpair;
	/* not the local port: a closing socket releases it (inet_put_port()
	 * zeroes skc_num) before inet_sock_set_state reports TCP_CLOSE */
	k->dport = s->__sk_common.skc_dport;
	k->pad = 0;
	k->pad2 = 0;
}

/*
 * The socket's drop count, sk_drops_read(): datagrams the kernel dropped
 * at it, most for a full receive buffer.  Until 6.17 sk->sk_drops; from
 * 6.18 on a UDP socket counts them per NUMA node half in the counters
 * sk_drop_counters points to, sk_drops then stays 0.  Both are read, the
 * second only where the field exists (CO-RE: the branch is dead on older
 * kernels).
 */
struct numa_drop_counters___sf {
	atomic_t drops0;
	atomic_t drops1;
} __attribute__((preserve_access_index));

struct sock___drops {
	atomic_t sk_drops;
	struct numa_drop_counters___sf *sk_drop_counters;
} __attribute__((preserve_access_index));

static __always_inline __u32 sf_sk_drops(struct sock *sk)
{
	struct sock___drops *s = (void *)bpf_core_cast(sk, struct sock);
	struct numa_drop_counters___sf *ndc;
	__u32 n = s->sk_drops.counter;

	if (bpf_core_field_exists(struct sock___drops, sk_drop_counters)) {
		ndc = s->sk_drop_counters;
		if (ndc)
			n += ndc->drops0.counter + ndc->drops1.counter;
	}
	return n;
}

/*
 * A receive of target hit on datagram socket sk, whose record c keeps the
 * drop count last seen: the growth since goes to the target's verdict
 * (satfeed_verdict.drops).  The record's count moves by compare-and-swap,
 * so threads receiving on one socket together add each drop once.  No
 * drop since (the common case): the socket's counters (one load, three
 * where sk_drop_counters exists) and a compare.  The sum is the kernel's
 * int: should it wrap (2^32 drops of one socket), the record's count is
 * above it and that socket's drops stop counting.
 */
static __always_inline void sf_conn_drops(struct sf_conn *c, struct sock *sk,
					  const struct sf_hit *hit)
{
	__u64 d = sf_sk_drops(sk), old = c->drops;
	struct satfeed_verdict *v;

	if (d <= old ||
	    __sync_val_compare_and_swap(&c->drops, old, d) != old)
		return;
	v = bpf_map_lookup_elem(&sf_verdict, &hit->slot);
	if (v && v->gen == hit->gen)
		__sync_fetch_and_add(&v->drops, d - old);
}

/*
 * A receive of target hit on its accepted TCP connection sk moved bytes
 * (ABI 10): the bytes still queued on sk after it, rcv_nxt - copied_seq
 * (tcp_inq()'s sum without the socket lock, which the receive has released:
 * a segment arriving meanwhile counts, as it would a moment later), raise
 * the verdict's unread_peak.  A server that keeps up reads its connection
 * empty: then two loads and a compare.  A connection read empty by another
 * thread meanwhile can read copied_seq past the rcv_nxt loaded first: that
 * difference wraps, above 2^30, and is dropped.
 */
static __always_inline void sf_conn_unread(struct sock *sk,
					   const struct sf_hit *hit)
{
	struct tcp_sock *tp = bpf_core_cast(sk, struct tcp_sock);
	__u32 u = tp->rcv_nxt - tp->copied_seq;
	struct satfeed_verdict *v;

	if (!u || u > (1U << 30))
		return;
	v = bpf_map_lookup_elem(&sf_verdict, &hit->slot);
	if (v && v->gen == hit->gen &&
	    u > *(volatile __u32 *)&v->unread_peak)
		*(volatile __u32 *)&v->unread_peak = u;
}

/* The map that holds sk's record: sf_conn for TCP, else sf_conn_other. */
static __always_inline void *sf_conn_map(struct sock *sk)
{
	if (bpf_core_cast(sk, struct sock)->sk_protocol == SF_IPPROTO_TCP)
		return &sf_conn;
	return &sf_conn_other;
}

/*
 * One event of the response stream (a gap) or one sample of the service
 * time, in a subprogram: one copy of the window code serves both.  No rule
 * reads these streams, so no verdict update: that call would put a third
 * frame under sf_sys_exit's, over the 512-byte stack that 6.12's verifier
 * allows for a call chain (256 + 224 + 96).
 */
static __noinline void sf_resp_account(__u32 slot, __u32 stream, __u32 gen,
				       __u64 now, __u64 sample)
{
	sf_account(slot, stream, gen, now, stream == SATFEED_STREAM_RESP,
		   sample, 0, NULL, false);
}

/*
 * A send or receive of target hit moved bytes on socket sk (NULL: the fd
 * was none) at now (stream: send or recv).
 */
static __always_inline void sf_response(struct sock *sk, __u32 stream,
					const struct sf_hit *hit, __u64 now)
{
	struct satfeed_svc_hist *h;
	struct sf_conn_key k;
	struct sf_conn *c;
	__u64 svc;

	if (!sk)
		return;
	sf_conn_key_of(sk, &k);
	c = bpf_map_lookup_elem(sf_conn_map(sk), &k);
	if (stream == SATFEED_STREAM_RECV) {
		if (!c) {
			struct sock *s = bpf_core_cast(sk, struct sock);
			struct sf_conn n = {
				.flags = SF_CONN_DGRAM | SF_CONN_WAITING,
				.slot = hit->slot,
				.recv_ns = now,
			};

			if (s->sk_type == SF_SOCK_DGRAM &&
			    s->__sk_common.skc_state != SF_TCP_ESTABLISHED) {
				/* drops from here on count */
				n.drops = sf_sk_drops(sk);
				bpf_map_update_elem(&sf_conn_other, &k, &n,
						    BPF_NOEXIST);
			}
			return;
		}
		if (c->flags & SF_CONN_DGRAM)
			sf_conn_drops(c, sk, hit);
		else if (c->flags & SF_CONN_TCP)
			sf_conn_unread(sk, hit);
		if (!(c->flags & SF_CONN_WAITING)) {
			c->recv_ns = now;
			c->flags |= SF_CONN_WAITING;
		}
		return;
	}
	if (!c || !(c->flags & SF_CONN_WAITING))
		return;
	c->flags &= ~SF_CONN_WAITING;
	/* a response at now to a request whose first receive returned at
	 * recv_ns: its event and its service time */
	sf_resp_account(hit->slot, SATFEED_STREAM_RESP, hit->gen, now, 0);
	svc = now > c->recv_ns ? now - c->recv_ns : 0;
	sf_resp_account(hit->slot, SATFEED_STREAM_SVC, hit->gen, now, svc);
	h = bpf_map_lookup_elem(&sf_svc_hist, &hit->slot);
	if (h && *(volatile __u32 *)&h->gen == hit->gen)
		__sync_fetch_and_add(&h->count[satfeed_svc_bucket(svc) &
					       (SATFEED_SVC_BUCKETS - 1)], 1);
}

/* The current task accepted newsk: a client-facing connection when the
 * task is a target's. */
static __always_inline void sf_conn_accepted(struct sock *newsk)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct satfeed_config *cfg = sf_config_get();
	struct sf_conn n = { .flags = SF_CONN_ACCEPTED };
	struct sf_conn_key k;
	struct sf_hit hit;

	if (!with_responses || !newsk || !cfg ||
	    !sf_find_target_of(cfg, task, true, &hit) ||
	    sf_compat_syscall(task))
		return;
	n.slot = hit.slot;
	sf_conn_key_of(newsk, &k);
	if (bpf_core_cast(newsk, struct sock)->sk_protocol == SF_IPPROTO_TCP)
		n.flags |= SF_CONN_TCP;
	if (bpf_map_update_elem(n.flags & SF_CONN_TCP ? (void *)&sf_conn :
						       (void *)&sf_conn_other,
				&k, &n, BPF_ANY) == -SF_E2BIG)
		__sync_fetch_and_add(&sf_conn_full, 1);
}

/* sk (any TCP socket of the machine) changed state to newstate. */
static __always_inline void sf_conn_state(struct sock *sk, int newstate)
{
	struct sf_conn_key k;

	if (!with_responses || newstate != SF_TCP_CLOSE)
		return;
	sf_conn_key_of(sk, &k);
	/* the lookup takes no lock: most closing sockets are not targets' */
	if (bpf_map_lookup_elem(&sf_conn, &k))
		bpf_map_delete_elem(&sf_conn, &k);
}

/* tp_btf mode: accept or accept4 of the current task returned fd. */
static __always_inline void sf_conn_accepted_fd(unsigned int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct satfeed_config *cfg = sf_config_get();

	/* the common miss first, before the fd table */
	if (!cfg || !sf_maybe_target(cfg, task))
		return;
	sf_conn_accepted(sf_fd_sock(task, fd));
}

#define SF_MAX_CPUS	8192	/* CPUs an understudy searches for a receipt */
#define SF_IORING_ENTER_GETEVENTS	(1U << 0)

/* io_uring_enter(2) as a wait, the sc the engine gives it: its sc_mask bit,
 * above every syscall's, so sf_sys_return() takes it for a wait and
 * discovery counts it under its own source */
#define SF_SC_URING_WAIT	SATFEED_SC_URING_BIT(WAIT)
_Static_assert(SF_SC_URING_WAIT >= SATFEED_SC_POLL_FIRST,
	       "io_uring_enter is a wait");

/* understudies are loaded: the primaries leave receipts (the verifier
 * drops that code when they are not) */
const volatile bool with_understudies = false;

/* sf_uring_sleep is loaded (the io_uring_cqring_wait tracepoint exists):
 * an io_uring wait counts only when its thread went to sleep; false: every
 * io_uring_enter with GETEVENTS is a wait, as before */
const volatile bool uring_sleep_seen = false;

static __always_inline struct satfeed_understudy *sf_understudy_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sf_understudy, &zero);
}

/* Leave a receipt for the task of token, then run body as the primary. */
#define SF_PRIMARY(hook, token, body)					\
	({								\
		struct satfeed_understudy *u_ = NULL;			\
									\
		if (with_understudies)					\
			u_ = sf_understudy_get();			\
		if (u_) {						\
			__u64 old_ = READ_ONCE(u_->receipt[hook]);	\
									\
			WRITE_ONCE(u_->receipt[hook], (__u64)(token));	\
			if (old_ && old_ != (__u64)(token))		\
				WRITE_ONCE(u_->receipt_prev[hook], old_); \
		}							\
		barrier();	/* the receipt first */			\
		(body);							\
	})

struct sf_receipt_search {
	__u64 token;
	__u32 hook;
	bool found;
};

/* bpf_loop callback: take the receipt on CPU cpu, if it is there. */
static long sf_take_receipt_on(__u32 cpu, void *ctx)
{
	struct sf_receipt_search *q = ctx;
	__u64 token = q->token;
	struct satfeed_understudy *u;
	__u32 zero = 0, hook = q->hook;

	u = bpf_map_lookup_percpu_elem(&sf_understudy, &zero, cpu);
	if (!u || hook >= SATFEED_NR_HOOKS)
		return 1;	/* past the last CPU */
	if (__sync_val_compare_and_swap(&u->receipt[hook], token, 0) ==
		    token ||
	    __sync_val_compare_and_swap(&u->receipt_prev[hook], token, 0) ==
		    token) {
		q->found = true;
		return 1;
	}
	return 0;
}

/*
 * No receipt of this task here: did its primary run on another CPU (the
 * task migrated between its two programs)?  Only asked when the primary
 * left nothing here, so rarely.
 */
static __always_inline bool sf_receipt_elsewhere(__u32 hook, __u64 token)
{
	struct sf_receipt_search q = { .token = token, .hook = hook };

	bpf_loop(SF_MAX_CPUS, sf_take_receipt_on, &q, 0);
	return q.found;
}

/*
 * Run body as the understudy of hook for the task of token: only when the
 * task's primary left no receipt, i.e. the kernel skipped it.  The count is
 * per CPU and this program cannot run twice at once on a CPU, so a plain
 * increment is exact.
 */
#define SF_UNDERSTUDY(hook, token, body)				\
	({								\
		struct satfeed_understudy *u_ = sf_understudy_get();	\
		int ret_ = 0;						\
									\
		if (!u_) {						\
		} else if (READ_ONCE(u_->receipt[hook]) ==		\
			   (__u64)(token)) {				\
			WRITE_ONCE(u_->receipt[hook], 0);		\
		} else if (READ_ONCE(u_->receipt_prev[hook]) ==		\
			   (__u64)(token)) {				\
			WRITE_ONCE(u_->receipt_prev[hook], 0);		\
		} else if (!sf_receipt_elsewhere(hook,			\
						 (__u64)(token))) {	\
			u_->rescued[hook]++;				\
			ret_ = (body);					\
		}							\
		ret_;							\
	})

/*
 * The thread's total time runnable but not running (the scheduler's run
 * delay, CONFIG_SCHED_INFO, y in Debian's and this project's kernels): its
 * growth over a wait is the part of the wait spent waiting for a CPU, after
 * the wakeup or before the sleep.  0 where the kernel does not keep it.
 */
static __always_inline __u64 sf_run_delay(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->sched_info.run_delay))
		return 0;
	return task->sched_info.run_delay;
}

/*
 * A wait begins on the current thread: a wait syscall (poll family), or
 * with uring (then sc is SF_SC_URING_WAIT) a target's io_uring_enter(2)
 * with GETEVENTS (satfeed_uring.bpf.h), which discovery counts whatever
 * its bit says, as it does every io_uring operation.  regs: the syscall's.
 */
static __always_inline int sf_wait_enter_of(struct task_struct *task,
					    struct satfeed_config *cfg,
					    __u32 sc, struct pt_regs *regs,
					    bool uring)
{
	struct sf_hit hit;
	struct sf_wait *w;

	if (uring && !(sf_regs_arg(regs, 3) & SF_IORING_ENTER_GETEVENTS))
		return 0;
	if (!sf_find_target_of(cfg, task, true, &hit) ||
	    (!(hit.sc_mask & (1U << sc)) &&
	     !(uring && (hit.sc_mask & SATFEED_SC_DISCOVER))) ||
	    sf_compat_syscall(task))
		return 0;
	w = bpf_task_storage_get(&sf_poll_start, task, NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* the age tick made the record at the same moment (the first wait of
	 * a thread it adopts): the loser of the creation gets NULL */
	if (!w)
		w = bpf_task_storage_get(&sf_poll_start, task, NULL, 0);
	if (!w)
		return 0;
	w->slot = hit.slot;
	w->gen = hit.gen;
	w->run_delay = sf_run_delay(task);
	w->discover = !!(hit.sc_mask & SATFEED_SC_DISCOVER);
	w->unslept = uring && uring_sleep_seen;
	w->start_ns = bpf_ktime_get_ns();
	return 0;
}

/* The same, for the current task: sf_wait_enter_of() with its task and
 * the engine's configuration. */
static __always_inline int sf_wait_enter(__u32 sc, struct pt_regs *regs,
					 bool uring)
{
	struct satfeed_config *cfg = sf_config_get();

	if (!cfg)
		return 0;
	return sf_wait_enter_of(bpf_get_current_task_btf(), cfg, sc, regs,
				uring);
}

/* Any traced syscall returns on the current thread, task, with the
 * engine's configuration cfg (SF_SC_URING_WAIT: io_uring_enter, which only
 * a wait begun by sf_wait_enter() counts). */
static __always_inline int sf_sys_return_of(struct task_struct *task,
					    struct satfeed_config *cfg,
					    __u32 sc, struct pt_regs *regs,
					    long ret)
{
	__u64 now, sample = 0, runq = 0, *mark = NULL;
	struct sock *sk = NULL;
	struct sf_hit hit;
	bool gap = true;
	__u32 stream;

	if (sc >= SATFEED_SC_POLL_FIRST) {
		struct sf_wait *w;
		__u64 start;

		/* most waits on a machine are not a target's: skip the
		 * task storage lookup for them */
		if (!sf_maybe_target(cfg, task) || sf_compat_syscall(task))
			return 0;
		w = bpf_task_storage_get(&sf_poll_start, task, NULL, 0);
		if (!w || !w->start_ns)
			return 0;
		start = w->start_ns;
		w->start_ns = 0;
		mark = &w->mark;
		if (w->discover) {
			sf_discover_count(w->slot, w->gen, sc, ret, false,
					  bpf_ktime_get_ns() - start);
			return 0;
		}
		if (ret < 0) {
			sf_count(w->slot, SATFEED_STREAM_POLL, w->gen, ret);
			return 0;
		}
		/* an io_uring wait that found its completions there without
		 * going to sleep is not slack, and not a wait: past capacity
		 * every call finds some (sc is a constant at each call site:
		 * the other waits do not test it); the thread was busy, so
		 * the age tick still counts it, with no slack: its start
		 * stands in for the end (no clock read) */
		if (sc == SF_SC_URING_WAIT && w->unslept) {
			w->end_ns = start;
			return 0;
		}
		now = bpf_ktime_get_ns();
		w->end_ns = now;
		hit.slot = w->slot;
		hit.gen = w->gen;
		stream = SATFEED_STREAM_POLL;
		gap = false;
		sample = now - start;
		runq = sf_run_delay(task) - w->run_delay;
		/* the thread's own totals, which the age tick reads */
		w->waited_ns += sample;
		w->runq_ns += runq < sample ? runq : sample;
	} else {
		if (!sf_find_target_of(cfg, task, true, &hit) ||
		    !(hit.sc_mask & (1U << sc)) || sf_compat_syscall(task))
			return 0;
		stream = sc >= SATFEED_SC_RECV_FIRST ? SATFEED_STREAM_RECV :
						       SATFEED_STREAM_SEND;
		/* the socket check of the read/write family finds the
		 * socket the response stream needs: one walk of the fd table
		 * serves both (the others walk it only once they moved bytes,
		 * not for each EAGAIN) */
		if (SATFEED_SC_SOCKET_FD & (1U << sc)) {
			sk = sf_fd_sock(task, sf_socket_fd(sc, regs));
			if (!sk) {
				struct satfeed_stream *s;

				if (hit.sc_mask & SATFEED_SC_DISCOVER) {
					sf_discover_count(hit.slot, hit.gen,
							  sc, ret, true, 0);
					return 0;
				}
				s = sf_stream_of_gen(hit.slot, stream,
						     hit.gen);
				if (s)
					__sync_fetch_and_add(&s->not_socket,
							     1);
				return 0;
			}
		}
		if (hit.sc_mask & SATFEED_SC_DISCOVER) {
			sf_discover_count(hit.slot, hit.gen, sc, ret, false,
					  0);
			return 0;
		}
		if (ret <= 0) {
			sf_count(hit.slot, stream, hit.gen, ret);
			return 0;
		}
		now = bpf_ktime_get_ns();
		if (with_responses) {
			if (!sk)
				sk = sf_fd_sock(task, sf_socket_fd(sc, regs));
			sf_response(sk, stream, &hit, now);
		}
	}
	/* one call site, so that tp_btf's sf_sys_exit, which serves every
	 * family, holds one copy of the window code, not two */
	sf_account(hit.slot, stream, hit.gen, now, gap, sample, runq, mark,
		   true);
	return 0;
}

/* The same, for the current task. */
static __always_inline int sf_sys_return(__u32 sc, struct pt_regs *regs,
					 long ret)
{
	struct satfeed_config *cfg = sf_config_get();

	if (!cfg)
		return 0;
	return sf_sys_return_of(bpf_get_current_task_btf(), cfg, sc, regs,
				ret);
}

#endif /* __SATFEED_ENGINE_BPF_H */
