/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_state.bpf.h - the engine's private maps: every map that a BPF
 * consumer does not read (those are in satfeed_maps.bpf.h), with the
 * records they hold.  Some are pinned for satfeedctl and the loader to
 * write (sf_config, the indexes, sf_rules, sf_discover) or to inspect
 * (sf_poll_start, sf_age: satfeed.h, SATFEED_PIN_*); the rest live only as
 * long as the engine.  One place, so that what the engine keeps, and what
 * it costs in memory (docs/performance.md, "map memory"), reads from one
 * file; the code that uses each map says how.
 *
 * Included by satfeed_account.bpf.h, so every engine header and the tests'
 * BPF object (tests/kernel/progs/) see the same maps.
 */
#ifndef __SATFEED_STATE_BPF_H
#define __SATFEED_STATE_BPF_H

#include "satfeed.h"

/* ---- which target an event belongs to (satfeed_engine.bpf.h) ---- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct satfeed_config);
} sf_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_index);
} sf_pid_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u64);
	__type(value, struct satfeed_index);
} sf_cgrp_index SEC(".maps");

/* ---- per target: rules and discovery counts (satfeed_account.bpf.h) ---- */

/*
 * Discovery counts (satfeed.h, struct satfeed_discover), by slot.  A hash
 * without preallocation: an entry (6 KiB) exists only for a slot that was
 * in discovery since the load (satfeedctl makes it when it starts one),
 * where an array took 395 KB at 64 targets whether anyone discovered or
 * not.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_discover);
} sf_discover SEC(".maps");

/* Saturation rules per slot, written by user space only (satfeed.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_rules_slot);
} sf_rules SEC(".maps");

/* ---- per thread of a target: its wait in progress ---- */

/* A wait in progress on one thread of a watched target. */
struct sf_wait {
	__u64 start_ns;		/* 0: no wait in progress */
	__u32 slot;
	__u32 gen;
	__u64 run_delay;	/* the thread's sched_info.run_delay at entry */
	__u32 discover;		/* the target is in discovery */
	__u32 unslept;		/* an io_uring wait that has not gone to
				 * sleep (yet): it counts only once it
				 * has (satfeed_uring.bpf.h, sf_uring_sleep) */
	__u64 end_ns;		/* when its last counted wait ended, or
				 * an unslept io_uring wait began */
	__u64 mark;		/* sf_account(): counted among the threads of
				 * this poll window (sf_thread_mark()) */
	/* the thread's own slack, for the age tick (satfeed_age.bpf.h) */
	__u64 waited_ns;	/* its counted waits so far, ns */
	__u64 runq_ns;		/* their run-queue time, ns */
	__u64 tick_waited;	/* waited_ns + the wait in progress, at the
				 * tick tick_ns */
	__u64 tick_runq;	/* the same of runq_ns */
	__u64 tick_ns;		/* the tick that last saw the thread */
	__u64 tick_exec;	/* its se.sum_exec_runtime then (ABI 8) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sf_wait);
} sf_poll_start SEC(".maps");

/* ---- per CPU: the understudies' receipts (satfeed.bpf.c) ---- */

/*
 * The understudy protocol (bpf/satfeed.bpf.c, "Exactness and preemption"):
 * a primary program's first action leaves a receipt for its task on this
 * CPU (the syscall's pt_regs pointer, which every hook receives first);
 * the understudy, which runs after it for the same event, takes its task's
 * receipt, and finding none knows the kernel skipped the primary.  A
 * primary that finds another task's receipt not taken yet (that task is
 * between its two programs) keeps it in receipt_prev.  The per-CPU array
 * lookup is inlined by the verifier (6.10 on), and a value per CPU keeps
 * every CPU's receipts on its own cache lines.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct satfeed_understudy);
} sf_understudy SEC(".maps");

/* ---- the age timer (satfeed_age.bpf.h) ---- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct satfeed_age);
} sf_age SEC(".maps");

/* ---- per connection: the response stream (satfeed_engine.bpf.h) ---- */

#define SF_CONN_MAX		4096		/* TCP connections followed */
#define SF_CONN_OTHER_MAX	256		/* other sockets followed */

struct sf_conn_key {
	__u64 sk;		/* struct sock address */
	__u64 addrs;		/* skc_addrpair */
	__u16 dport;		/* skc_dport, the peer's port */
	__u16 pad;
	__u32 pad2;
};

struct sf_conn {
	__u32 flags;		/* SF_CONN_* */
	__u32 slot;		/* the target's, when it was made */
	__u64 recv_ns;		/* when the request's first receive returned */
	__u64 drops;		/* datagram socket: its drop count (sk_drops)
				 * at the last receive seen; it only grows,
				 * by compare-and-swap (sf_conn_drops()) */
};

/*
 * A target's accepted TCP connections.  A hash without preallocation: an
 * entry (about 100 bytes) exists from the accept to the connection's
 * TCP_CLOSE (sf_conn_close), so an engine whose targets hold no
 * connection keeps only the bucket array (16 bytes an entry of
 * max_entries), where a preallocated LRU took 427 KB at load.  Full (4096
 * connections of targets open at once): a new connection is not followed
 * until one closes (sf_conn_full counts them).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SF_CONN_MAX);
	__type(key, struct sf_conn_key);
	__type(value, struct sf_conn);
} sf_conn SEC(".maps");

/*
 * The other sockets a target answers on: its unconnected datagram sockets
 * and the non-TCP streams it accepts (AF_UNIX).  No tracepoint says when
 * one closes, so an LRU: a closed one's entry ages out.  There are few
 * (a UDP server has one socket a port, not one a client), so 256 entries
 * (27 KB) hold them; a unix-socket server with more connections than that
 * sees its oldest idle ones evicted, and their next request counts no
 * response.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SF_CONN_OTHER_MAX);
	__type(key, struct sf_conn_key);
	__type(value, struct sf_conn);
} sf_conn_other SEC(".maps");

/* Accepted TCP connections of targets not followed: sf_conn was full. */
__u64 sf_conn_full = 0;

/* ---- per multishot receive: io_uring (satfeed_uring.bpf.h) ---- */

/* A target's multishot receive, by ring and user_data. */
struct sf_uring_ms_key {
	__u64 ring;		/* struct io_ring_ctx address */
	__u64 user_data;
};

struct sf_uring_ms {
	__u32 slot;
	__u32 gen;
	__u32 discover_src;	/* discovery: its source; 0: its stream */
	__u32 reserved;
};

/*
 * A hash without preallocation: an entry exists from the receive's arming
 * to its last CQE (one without IORING_CQE_F_MORE; a cancellation posts
 * one too), so memory follows the multishot receives in flight; the
 * bucket array (64 KB) stays.  An entry whose last CQE is never seen
 * stays until the engine is unloaded (sf_uring_ms_armed counts it).
 * sf_engine_configure() makes it one entry where no multishot receive can
 * be followed (no io_uring tracepoints or REQ_F_APOLL_MULTISHOT, or
 * io_uring disabled on the machine).  Engine private, not pinned.  Full: a
 * receive armed then is not followed (its CQEs count as the request-less
 * ones do).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct sf_uring_ms_key);
	__type(value, struct sf_uring_ms);
} sf_uring_ms SEC(".maps");

/*
 * Multishot receives of targets in flight (armed minus ended; one whose
 * last CQE was missed stays counted): 0 lets
 * request-less CQEs skip the hash.
 */
__u64 sf_uring_ms_armed = 0;

#endif /* __SATFEED_STATE_BPF_H */
