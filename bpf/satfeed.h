/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed.h - the consumer contract.
 *
 * Everything a consumer of satfeed's pinned maps needs: the layout of every
 * map value, the pin names, and the meaning and unit of every field.  The BPF
 * engine, the loader, satfeedctl and kmod-example all include this one file.
 * Fields are fixed width and hold no pointers, so the same bytes mean the same
 * thing in BPF, in the kernel and in user space.
 *
 * Any change to a layout below bumps SATFEED_ABI_VERSION; consumers must
 * compare it with satfeed_info.abi_version before reading anything else.
 *
 * Clock: every *_ns timestamp is bpf_ktime_get_ns(), i.e. CLOCK_MONOTONIC in
 * nanoseconds, except satfeed_info.load_realtime_ns.
 */
#ifndef __SATFEED_H
#define __SATFEED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_spin_lock, struct bpf_timer */
#endif
#include "satfeed_syscalls.h"

/*
 * 2: the pinned sf_understudy map (satfeed_understudy), and a cgroup target
 * is marked SATFEED_STATE_GONE when its directory is removed.
 * 3: normalized figures in every window (wait and idle share, squared
 * coefficient of variation, run-queue time of waits), the saturation rules
 * of each target and its verdict (sf_verdict, with its seen bits), whose
 * main rule is the waits per send (wps: poll-family waits that ended per
 * 1000 sends, smoothed over send windows).  io_uring members of sc_mask
 * (SATFEED_SC_URING_FIRST and up: operations a target's rings complete,
 * and the io_uring_enter wait).
 * Also 3: sendfile and splice in the send family (counted when their output
 * fd is a socket), which renumbers the sc_mask bits from recvfrom on; the
 * discovery of a target's calls (SATFEED_SC_DISCOVER in sc_mask, pinned
 * sf_discover).
 * 4 (issue 20, the rules map): a target's saturation rules moved out of
 * satfeed_target into the pinned sf_rules map (struct satfeed_rules_slot),
 * which only user space writes: sf_targets is no longer rewritten while a
 * target is active, so nothing overwrites the state the engine sets.
 * Also 4 (issue 22, the signal): bounded age (satfeed_info.max_age_ns,
 * the pinned sf_age timer): a window closes at N samples or, with fewer (satfeed_window.samples, flag
 * SATFEED_WIN_AGED), once it is max_age_ns / 2 old at a tick of the
 * engine's timer; a stream without events for max_age_ns publishes an
 * empty window (SATFEED_WIN_QUIET) and the verdict of a quiet target
 * leaves near/full (SATFEED_SAT_WHY_QUIET).  The poll stream's idle and
 * wait shares are normalized to the threads that waited (0..1000), and
 * each tick publishes the target's slack with the waits in progress
 * (satfeed_verdict.slack_permille).
 * 5 (issue 23, the verdict): docs/contract.md, "ABI 5".
 * 6 (issue 24, memory): SATFEED_HISTORY 16 -> 8 closed windows per stream
 * (satfeed_stream is 1104 bytes, was 2064: the five streams of 64 targets
 * take 353 KB, not 660).  A consumer that reads every window must read a
 * stream at least once per 8 windows (at 2048 samples, 160 ms at 100k
 * events/s).  The engine's private sf_conn and sf_uring_ms became hash maps
 * without preallocation (memory per followed connection and multishot
 * receive, not 4096 of each at load); no layout a consumer reads changed
 * but the history.
 * 7 (issue 23, UDP drops): satfeed_verdict reports the datagrams the
 * target's datagram sockets dropped (drops, drop_permille per tick, in the
 * place of ABI 5's unused marks) and grows by 8 bytes (recv_mark): a UDP
 * server past its capacity overflows its socket's buffer instead of
 * queueing.  Two rules read it (drop_near, drop_full: satfeed_sat_rules is
 * 36 bytes), and the idle share's defaults are 150 and 50 (were 250 and
 * 100), both from the corpus.  docs/contract.md, "ABI 7".
 * 8 (issue 23, the CPU share): satfeed_verdict grows by 16 bytes: the CPU
 * time of the target's threads (cpu_ns), and at each tick the share of the
 * CPUs they may use that they used (cpu_permille, cpus).  The one figure
 * that sees more busy threads than CPUs, which the per-thread idle share
 * cannot.  No rule reads it yet.  docs/contract.md, "ABI 8".
 * 9 (issue 24, memory): SATFEED_HISTORY 8 -> 4 closed windows per stream
 * (satfeed_stream is 624 bytes, was 1104: the five streams of 64 targets
 * take 200 KB, not 353, and the engine's maps 0.47 MiB at 64 targets, not
 * 0.62).  A consumer that reads every window must read a stream at least
 * once per 4 windows (at 2048 samples, 80 ms at 100k events/s), or take
 * them from the push hook.  Two rules read the CPU share (cpu_near, off by
 * default, and cpu_full, 970: satfeed_sat_rules is 44 bytes), with their
 * reasons (SATFEED_SAT_WHY_CPU_NEAR, _FULL); the CPU share counts every
 * thread of the target, not only those that waited in a traced call (the
 * age tick makes the others' records).  docs/contract.md, "ABI 9".
 * 10 (issue 23, the receive queue): satfeed_verdict grows by 8 bytes: at
 * each tick the most bytes a receive on one of the target's accepted TCP
 * connections left unread in the tick's interval (unread_max), kept by the
 * hot path in unread_peak.  Requests queued in the server's sockets while
 * its threads sleep in a wait they do not serve from (a worker blocked on
 * EPOLLOUT towards a slow reader) read as slack to the idle share; they
 * show here.  docs/contract.md, "ABI 10".
 */
#define SATFEED_ABI_VERSION	10

/* Pin names, relative to the bpffs root (default SATFEED_DEFAULT_ROOT). */
#define SATFEED_DEFAULT_ROOT	"/sys/fs/bpf/satfeed"
#define SATFEED_PIN_INFO	"sf_info"	/* array[1] of satfeed_info */
#define SATFEED_PIN_TARGETS	"sf_targets"	/* array[max_targets] of satfeed_target */
#define SATFEED_PIN_STREAMS	"sf_streams"	/* array[max_targets * 3] of satfeed_stream */
#define SATFEED_PIN_PID_INDEX	"sf_pid_index"	/* hash: __u32 tgid -> satfeed_index */
#define SATFEED_PIN_CGRP_INDEX	"sf_cgrp_index"	/* hash: __u64 cgroup id -> satfeed_index */
#define SATFEED_PIN_CONFIG	"sf_config"	/* array[1] of satfeed_config */
#define SATFEED_PIN_POLL_START	"sf_poll_start"	/* task storage, engine private */
#define SATFEED_PIN_UNDERSTUDY	"sf_understudy"	/* per-CPU array[1] of satfeed_understudy */
#define SATFEED_PIN_VERDICT	"sf_verdict"	/* array[max_targets] of satfeed_verdict */
#define SATFEED_PIN_DISCOVER	"sf_discover"	/* hash (no prealloc) slot ->
						 * satfeed_discover, at most
						 * max_targets: a slot that
						 * was in discovery */
#define SATFEED_PIN_RULES	"sf_rules"	/* array[max_targets] of satfeed_rules_slot */
#define SATFEED_PIN_RESPONSES	"sf_responses"	/* array[max_targets] of
						 * satfeed_stream: the
						 * response stream */
#define SATFEED_PIN_SERVICE	"sf_service"	/* array[max_targets] of
						 * satfeed_stream: the
						 * service time */
#define SATFEED_PIN_SVC_HIST	"sf_svc_hist"	/* array[max_targets] of
						 * satfeed_svc_hist */
#define SATFEED_PIN_AGE		"sf_age"	/* array[1], engine private: the
						 * age timer (its ticks: sf_age_tick) */
#define SATFEED_PIN_PROGS	"progs"		/* directory of pinned programs */
#define SATFEED_PIN_LINKS	"links"		/* directory of pinned links */

#define SATFEED_MAX_TARGETS	64	/* default and maximum number of targets */
#define SATFEED_HISTORY		4	/* closed windows kept per stream */
#define SATFEED_WINDOW_SHIFT	11	/* default window: 1 << 11 = 2048 samples */
#define SATFEED_WINDOW_SHIFT_MIN 1
#define SATFEED_WINDOW_SHIFT_MAX 16
/*
 * A sample (inter-call gap or wait duration) longer than this is clamped to it
 * and counted in satfeed_window.clamped.  2^32 - 1 ns (4.29 s) keeps a squared
 * sample inside 64 bits, so the running sum of squares is an exact 128-bit
 * integer with one carry per sample.
 */
#define SATFEED_SAMPLE_CAP_NS	0xffffffffULL

/*
 * The age bound T (satfeed_info.max_age_ns; satfeed-loader --max-age).
 * The engine's timer ticks every T / 2 (satfeed_info.tick_ns) and at each
 * tick, for every target and stream:
 *  - a window in progress whose first sample began at least T / 2 ago
 *    closes with the samples it has (satfeed_window.samples < N, flag
 *    SATFEED_WIN_AGED), with the same exact figures as a full one: every
 *    event is in a published window at most T after it happened;
 *  - a stream with no event for at least T and no sample pending publishes
 *    one empty window (samples 0, SATFEED_WIN_QUIET: rate 0) and its next
 *    event starts a new chain of gaps (the quiet time is no sample): at
 *    most 1.5 T after a target's last event its newest windows say so.
 * A rate below 1 / T per second therefore reads as quiet.  The bound is
 * the engine's, for every consumer: a verdict whose tick_ns is older than
 * 2 T means the engine itself has stopped (unloaded or replaced), not that
 * the target is idle.  A window's end_ns is no such sign: a quiet stream
 * publishes its quiet window once, and it stays the newest while the
 * engine runs.
 */
#define SATFEED_MAX_AGE_NS_DEFAULT	1000000000ULL	/* 1 s */
#define SATFEED_MAX_AGE_NS_MIN		20000000ULL	/* 20 ms */
#define SATFEED_MAX_AGE_NS_MAX		SATFEED_SAMPLE_CAP_NS

/*
 * 2 T for an age bound T (max_age_ns; 0: unknown, the default's): the
 * engine's freshness bound that every consumer uses alike: a verdict whose
 * tick is older has no engine behind it, and a target with no event for
 * longer is quiet by the engine's word (its quiet windows are out by 1.5 T).
 */
static inline __attribute__((always_inline)) __u64
satfeed_stale_ns(__u64 max_age_ns)
{
	return 2 * (max_age_ns ? max_age_ns : SATFEED_MAX_AGE_NS_DEFAULT);
}

/* Streams, in the order they appear in sf_streams (slot * 3 + stream). */
enum satfeed_stream_id {
	SATFEED_STREAM_SEND = 0,	/* gap between successive sends */
	SATFEED_STREAM_RECV = 1,	/* gap between successive receives */
	SATFEED_STREAM_POLL = 2,	/* duration of each event wait */
	SATFEED_NR_STREAMS = 3,
};

/*
 * The response stream: the gap between successive responses of a target
 * (RPS_obs = its rate_milli / 1000), in sf_responses[slot] (not in
 * sf_streams, whose layout stays), with the same window and figures as the
 * others.  A response is the first send-family event (any member that
 * moved bytes: send*, write*, sendfile, splice) on a connection after a
 * receive on that connection.  Connections: the TCP sockets the target
 * accepted (accept/accept4, seen at the kernel's inet_csk_accept), not
 * those it connect()ed, so that a proxy's requests to its backends are no
 * responses; and its unconnected datagram sockets, where each datagram
 * received and then answered is one.  The send stream is unchanged: every
 * send.  The stream id 3 is what satfeed_window_closed() receives for it.
 */
#define SATFEED_STREAM_RESP	3

/*
 * The service-time stream: one sample per response, the time from the
 * return of the request's first receive on that connection (the first
 * after the previous response) to the return of the response's first
 * send, ns; in sf_service[slot].  Its windows' mean_ns and var_ns2 are the
 * exact mean and variance of the service time over their samples (their
 * rate_milli means nothing).  Stream id 4 for satfeed_window_closed().
 */
#define SATFEED_STREAM_SVC	4

/*
 * satfeed_svc_hist: sf_svc_hist[slot], every service time sample of the
 * target since it was added, counted in log-linear buckets: 4 per power of
 * two (each at most 25% wide), satfeed_svc_bucket() below.  A consumer
 * takes the p99 of an interval from the difference of two reads: the
 * bucket where the cumulative count reaches 99%, whose lower bound is
 * satfeed_svc_bucket_lo().  satfeedctl resets it for the target's
 * generation when it adds the target; the engine adds only to its own
 * generation's, atomically.
 */
#define SATFEED_SVC_BUCKETS	128	/* the last one: 2^33 ns (8.6 s) and up */
struct satfeed_svc_hist {
	__u32 gen;		/* satfeed_target.gen it belongs to */
	__u32 reserved;
	__u64 count[SATFEED_SVC_BUCKETS]; /* samples per bucket */
};

/* floor(log2(v)) for v > 0, without a loop (BPF has no clz) */
static inline __attribute__((always_inline)) __u32 satfeed_log2(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

/* The bucket of a service time of v ns: v itself below 4, else
 * 4 * (e - 1) + the two bits after the leading one, e = floor(log2(v)) */
static inline __attribute__((always_inline)) __u32 satfeed_svc_bucket(__u64 v)
{
	__u32 e, b;

	if (v < 4)
		return (__u32)v;
	e = satfeed_log2(v);
	b = 4 * (e - 1) + (__u32)((v >> (e - 2)) & 3);
	return b < SATFEED_SVC_BUCKETS ? b : SATFEED_SVC_BUCKETS - 1;
}

/* The smallest service time (ns) bucket b holds. */
static inline __attribute__((always_inline)) __u64 satfeed_svc_bucket_lo(__u32 b)
{
	if (b < 4)
		return b;
	return (__u64)(4 + b % 4) << (b / 4 - 1);
}

/*
 * Syscalls satfeed can count, as bit numbers of satfeed_target.sc_mask, in
 * the order of the list in satfeed_syscalls.h.  A syscall always belongs to
 * the family of its name; the per-target mask chooses which members of each
 * family count.  read/readv/write/writev/sendfile/splice
 * (SATFEED_SC_SOCKET_FD) count only when their fd (the output fd for
 * sendfile and splice) is a socket.  libc's send()/recv() are
 * sendto/recvfrom.  The io_uring members follow below
 * (SATFEED_SC_URING_FIRST).
 */
#define SATFEED_SC_ENUM(name, NAME, family, fd, fn) SATFEED_SC_##NAME,
enum satfeed_syscall {
	SATFEED_SYSCALLS(SATFEED_SC_ENUM)
	SATFEED_NR_SYSCALLS,
};
#undef SATFEED_SC_ENUM

#define SATFEED_SC_SEND_FIRST	SATFEED_SC_SENDTO
#define SATFEED_SC_RECV_FIRST	SATFEED_SC_RECVFROM
#define SATFEED_SC_POLL_FIRST	SATFEED_SC_EPOLL_WAIT
#define SATFEED_SC_SYSCALLS	((1U << SATFEED_NR_SYSCALLS) - 1)

/*
 * io_uring members (satfeed_syscalls.h, SATFEED_URING_OPS): sc_mask bits
 * SATFEED_SC_URING_FIRST + enum satfeed_uring_op, at the top of the mask
 * below bit 31 (kept for a flag of the whole target, not a member), so
 * that adding syscalls renumbers none of them.  The bit of a member is
 * SATFEED_SC_URING_BIT(NAME), e.g. SATFEED_SC_URING_BIT(RECV).
 */
#define SATFEED_URING_ENUM(name, NAME, family, fd) SATFEED_URING_##NAME,
enum satfeed_uring_op {
	SATFEED_URING_OPS(SATFEED_URING_ENUM)
	SATFEED_NR_URING_OPS,
};
#undef SATFEED_URING_ENUM

#define SATFEED_SC_NR_BITS	32	/* bits of sc_mask */
#define SATFEED_SC_URING_FIRST	(SATFEED_SC_NR_BITS - 1 - SATFEED_NR_URING_OPS)
#define SATFEED_SC_URING_BIT(NAME) (SATFEED_SC_URING_FIRST + SATFEED_URING_##NAME)
#define SATFEED_SC_URING						\
	(((1U << SATFEED_NR_URING_OPS) - 1) << SATFEED_SC_URING_FIRST)
#define SATFEED_SC_ALL		(SATFEED_SC_SYSCALLS | SATFEED_SC_URING)
_Static_assert(SATFEED_NR_SYSCALLS <= SATFEED_SC_URING_FIRST,
	       "the syscalls and io_uring members do not fit in sc_mask");

/* The io_uring members that count only on a socket, as an sc_mask. */
#define SATFEED_UR_FD_ANY(NAME)		0
#define SATFEED_UR_FD_SOCKET(NAME)	(1U << SATFEED_SC_URING_BIT(NAME))
#define SATFEED_UR_FD_BIT(name, NAME, family, fd) | SATFEED_UR_##fd(NAME)
#define SATFEED_SC_URING_SOCKET_FD (0 SATFEED_URING_OPS(SATFEED_UR_FD_BIT))

/* io_uring families are runs too: send, recv, poll (the wait, last). */
#define SATFEED_URING_SEND_FIRST SATFEED_URING_SEND
#define SATFEED_URING_RECV_FIRST SATFEED_URING_RECV
#define SATFEED_URING_POLL_FIRST SATFEED_URING_WAIT
#define SATFEED_UR_FAMILY_CHECK(name, NAME, family, fd)			\
	_Static_assert((SATFEED_URING_##NAME >= SATFEED_URING_POLL_FIRST ? \
			SATFEED_STREAM_POLL :				\
			SATFEED_URING_##NAME >= SATFEED_URING_RECV_FIRST ? \
			SATFEED_STREAM_RECV : SATFEED_STREAM_SEND) ==	\
		       SATFEED_STREAM_##family,				\
		       "io_uring " #name " is listed outside its family's run");
SATFEED_URING_OPS(SATFEED_UR_FAMILY_CHECK)
#undef SATFEED_UR_FAMILY_CHECK

/*
 * The syscalls that count only on a socket fd, as an sc_mask, and of those
 * the ones whose socket fd is their third argument (splice's fd_out).
 */
#define SATFEED_SC_FD_ANY(NAME)		0
#define SATFEED_SC_FD_SOCKET0(NAME)	(1U << SATFEED_SC_##NAME)
#define SATFEED_SC_FD_SOCKET2(NAME)	(1U << SATFEED_SC_##NAME)
#define SATFEED_SC_FD_BIT(name, NAME, family, fd, fn) | SATFEED_SC_##fd(NAME)
#define SATFEED_SC_SOCKET_FD	(0 SATFEED_SYSCALLS(SATFEED_SC_FD_BIT))
#define SATFEED_SC_ARG2_FD_ANY(NAME)	 0
#define SATFEED_SC_ARG2_FD_SOCKET0(NAME) 0
#define SATFEED_SC_ARG2_FD_SOCKET2(NAME) (1U << SATFEED_SC_##NAME)
#define SATFEED_SC_ARG2_BIT(name, NAME, family, fd, fn)			\
	| SATFEED_SC_ARG2_##fd(NAME)
#define SATFEED_SC_FD_ARG2	(0 SATFEED_SYSCALLS(SATFEED_SC_ARG2_BIT))

/*
 * sc_mask bit 31, above every syscall: the target is being discovered
 * (satfeedctl discover).  The engine then counts each call of the syscalls
 * its other bits select (satfeedctl sets them all) in sf_discover[slot],
 * per syscall, and feeds none of its streams.  The hot path tests this bit
 * only after a call matched a target and its mask: nothing else pays.
 */
#define SATFEED_SC_DISCOVER	(1U << 31)
_Static_assert(SATFEED_NR_SYSCALLS <= 31, "sc_mask bits are full");

/* Each family is one run of the list, in the order send, recv, poll. */
#define SATFEED_SC_FAMILY_CHECK(name, NAME, family, fd, fn)		\
	_Static_assert((SATFEED_SC_##NAME >= SATFEED_SC_POLL_FIRST ?	\
			SATFEED_STREAM_POLL :				\
			SATFEED_SC_##NAME >= SATFEED_SC_RECV_FIRST ?	\
			SATFEED_STREAM_RECV : SATFEED_STREAM_SEND) ==	\
		       SATFEED_STREAM_##family,				\
		       #name " is listed outside its family's run");
SATFEED_SYSCALLS(SATFEED_SC_FAMILY_CHECK)
#undef SATFEED_SC_FAMILY_CHECK

/* Attach mechanisms, cheapest first (satfeed_info.attach_mode). */
enum satfeed_attach {
	SATFEED_ATTACH_NONE = 0,
	SATFEED_ATTACH_FENTRY = 1,	/* fentry/fexit on __<arch>_sys_* */
	SATFEED_ATTACH_TP_BTF = 2,	/* BTF raw tracepoints sys_enter/exit */
};

/*
 * Hooks: one per engine program that an understudy can stand in for (see
 * struct satfeed_understudy).  tp_btf mode: sys_enter and sys_exit; fentry
 * mode: the fexit program of each syscall and the fentry program of each
 * wait, at SATFEED_HOOK_FEXIT + sc and SATFEED_HOOK_FENTRY + sc.
 */
enum satfeed_hook {
	SATFEED_HOOK_SYS_ENTER = 0,
	SATFEED_HOOK_SYS_EXIT = 1,
	SATFEED_HOOK_FEXIT = 2,
	SATFEED_HOOK_FENTRY = SATFEED_HOOK_FEXIT + SATFEED_NR_SYSCALLS,
	SATFEED_NR_HOOKS = SATFEED_HOOK_FENTRY + SATFEED_NR_SYSCALLS,
};

/*
 * satfeed_understudy: per CPU, the engine's guard against the kernel
 * skipping a preempted program's other runs (bpf/satfeed.bpf.c, "Exactness
 * and preemption").  receipt and receipt_prev are engine private: which
 * tasks' runs of each hook's program have not been confirmed by their
 * understudy yet.  rescued[hook] counts the events the understudy
 * processed because the program did not run for them: runs the kernel
 * skipped (recursion_misses) that were not lost.  Summed over CPUs:
 * lost = misses - rescued.
 */
struct satfeed_understudy {
	__u64 receipt[SATFEED_NR_HOOKS];	/* engine private */
	__u64 receipt_prev[SATFEED_NR_HOOKS];	/* engine private */
	__u64 rescued[SATFEED_NR_HOOKS];
};

/* satfeed_info: written once by the loader, read-only afterwards. */
struct satfeed_info {
	__u32 abi_version;	/* SATFEED_ABI_VERSION of the engine */
	__u32 attach_mode;	/* enum satfeed_attach */
	__u32 window_shift;	/* log2 of window_samples */
	__u32 window_samples;	/* N: samples per window */
	__u32 history;		/* SATFEED_HISTORY */
	__u32 max_targets;	/* slots in sf_targets */
	__u64 sample_cap_ns;	/* SATFEED_SAMPLE_CAP_NS */
	__u64 load_realtime_ns;	/* CLOCK_REALTIME at load, ns since epoch */
	__u64 load_mono_ns;	/* CLOCK_MONOTONIC at load, ns */
	__u32 loader_pid;	/* pid of the loader that made this load */
	__u32 reserved;
	__u64 max_age_ns;	/* T, the age bound (SATFEED_MAX_AGE_NS_*) */
	__u64 tick_ns;		/* T / 2: the age timer's period, ns */
};

/*
 * satfeed_config: runtime settings shared by all targets, kept by satfeedctl.
 * pid_slot is a direct-mapped table indexed by tgid % 1024: the hot path
 * finds a pid target with one byte load and one array lookup (no helper
 * call), and drops every other process there.  Two pid targets with the same
 * tgid % 1024 share SATFEED_PID_SLOT_SHARED, which sends the lookup to
 * sf_pid_index.  Cgroup targets are found by asking for the current task's
 * ancestor at each level listed in cgroup_level[].
 */
#define SATFEED_PID_SLOTS	1024
#define SATFEED_PID_SLOT_SHARED	0xff
#define SATFEED_MAX_CGROUP_LEVELS 8
struct satfeed_config {
	__u32 nr_pid_targets;	/* targets of kind PID */
	__u32 nr_cgroup_targets; /* targets of kind CGROUP */
	__u32 nr_cgroup_levels;	/* entries used in cgroup_level[] */
	__u32 reserved;
	__u32 cgroup_level[SATFEED_MAX_CGROUP_LEVELS]; /* deepest first */
	__u8 pid_slot[SATFEED_PID_SLOTS]; /* tgid % 1024 -> slot + 1; 0: none;
					   * SATFEED_PID_SLOT_SHARED: several */
};

enum satfeed_target_kind {
	SATFEED_TARGET_FREE = 0,
	SATFEED_TARGET_PID = 1,		/* a process: every thread of a tgid */
	SATFEED_TARGET_CGROUP = 2,	/* every task in a cgroup v2 subtree */
};

enum satfeed_target_state {
	SATFEED_STATE_ACTIVE = 0,
	SATFEED_STATE_GONE = 1,		/* the process exited, the cgroup
					 * was removed */
};

/*
 * Saturation rules of one target (see struct satfeed_verdict; the rules
 * themselves are bpf/sat_rules.h, which BPF and user space share).  A zero
 * field takes the default below; SATFEED_SAT_RULE_OFF turns that rule off.
 * The defaults come from the server corpus (docs/validation.md, "Corpus"):
 * saturation is queueing, and the two signals that showed it on every
 * architecture there are the idle share of the threads that served (low:
 * the threads are busy or wait for a CPU, so work queues) and the growth
 * of the service time over its low-load baseline (work waits inside the
 * server between its receive and its answer: a thread per connection
 * behind a lock or a CPU); a UDP server, which does not queue inside but
 * overflows its socket's buffer, shows it in the share of its datagrams
 * dropped (ABI 7).  A target whose threads use (nearly) all of the CPUs
 * they may use is saturated, however idle each thread reads (ABI 9: more
 * busy threads than CPUs).  Waits per send measures the event loop's shape
 * as much as its load, and the dispersion peaks at mid load: off unless
 * set; so is a near rule on the CPU share, which three corpus runs did not
 * support (docs/validation.md, "Session 14").
 */
#define SATFEED_SAT_RULE_OFF		0xffffffffU
#define SATFEED_SAT_WPS_NEAR_DEFAULT	SATFEED_SAT_RULE_OFF
#define SATFEED_SAT_WPS_FULL_DEFAULT	SATFEED_SAT_RULE_OFF
#define SATFEED_SAT_IDLE_NEAR_DEFAULT	150	/* ABI 7; 250 before */
#define SATFEED_SAT_IDLE_FULL_DEFAULT	50	/* ABI 7; 100 before */
#define SATFEED_SAT_CV2_RISE_DEFAULT	SATFEED_SAT_RULE_OFF
#define SATFEED_SAT_SVC_NEAR_DEFAULT	4000
#define SATFEED_SAT_SVC_FULL_DEFAULT	6000
#define SATFEED_SAT_DROP_NEAR_DEFAULT	10
#define SATFEED_SAT_DROP_FULL_DEFAULT	50
#define SATFEED_SAT_CPU_NEAR_DEFAULT	SATFEED_SAT_RULE_OFF	/* ABI 9 */
#define SATFEED_SAT_CPU_FULL_DEFAULT	970			/* ABI 9 */
#define SATFEED_SAT_UNREAD_NEAR_DEFAULT	16384	/* ABI 10, bytes */
#define SATFEED_SAT_UNREAD_FULL_DEFAULT	32768	/* ABI 10, bytes */
struct satfeed_sat_rules {
	__u32 idle_near_permille; /* near below this idle share, permille */
	__u32 idle_full_permille; /* saturated below this idle share, permille */
	__u32 cv2_rise_permille; /* near when the recv dispersion exceeds the
				  * low-load baseline by this much, permille
				  * of the baseline (1000: doubled) */
	__u32 wps_near_permille; /* near below this many waits per 1000
				  * sends (smoothed, wps_avg_permille) */
	__u32 wps_full_permille; /* saturated below this many */
	__u32 svc_near_permille; /* near when the smoothed service time
				  * exceeds this many thousandths of its
				  * low-load baseline (4000: four times) */
	__u32 svc_full_permille; /* saturated above this many */
	__u32 drop_near_permille; /* (ABI 7) near when at least this many of
				   * 1000 datagrams that arrived at the
				   * target's datagram sockets over a tick
				   * were dropped (drop_permille) */
	__u32 drop_full_permille; /* (ABI 7) saturated at this many */
	__u32 cpu_near_permille; /* (ABI 9) near when the CPU share of a tick
				  * (cpu_permille) is at least this */
	__u32 cpu_full_permille; /* (ABI 9) saturated at this much */
	__u32 unread_near_bytes; /* (ABI 10) near when a tick's unread_max
				  * (the most bytes a receive on an accepted
				  * TCP connection left unread) is at least
				  * this many bytes */
	__u32 unread_full_bytes; /* (ABI 10) saturated at this many */
};

enum satfeed_sat_state {
	SATFEED_SAT_UNKNOWN = 0,	/* no window has closed yet */
	SATFEED_SAT_OK = 1,		/* not saturated */
	SATFEED_SAT_NEAR = 2,		/* near saturation */
	SATFEED_SAT_FULL = 3,		/* saturated */
};

/*
 * satfeed_target: one slot of sf_targets.  User space (satfeedctl) writes a
 * slot whole, and only to fill it (the last write of an add, which makes it
 * active) or to free it (kind FREE); it never rewrites an active target.
 * Once active, state and gone_ns are the engine's: it marks the target gone
 * when its process exits or its cgroup is removed, and the hot path counts
 * an event into a target only while it is active.  A target's rules, which
 * user space may change while it is active, are in sf_rules.
 */
struct satfeed_target {
	__u32 kind;		/* enum satfeed_target_kind */
	__u32 state;		/* enum satfeed_target_state, the
				 * engine's */
	__u64 id;		/* tgid, or cgroup v2 id (the directory's inode) */
	__u32 gen;		/* bumped each time the slot is reused */
	__u32 sc_mask;		/* bits of enum satfeed_syscall that count */
	__u64 added_ns;		/* when it was added, CLOCK_MONOTONIC:
				 * the engine counts a process only if
				 * it started before (a later one reuses
				 * the pid) */
	__u64 gone_ns;		/* when it exited or was removed, 0 before
				 * (the engine's) */
	__u32 level;		/* cgroup: depth below the cgroup2 root */
	__u32 reserved;
	char comm[16];		/* process name at add time ("" for cgroups) */
	char path[96];		/* cgroup path relative to the cgroup2 mount */
};

/* ---- ABI 4, issue 20: the rules map (kept apart for merging) ---- */

/*
 * satfeed_rules_slot: sf_rules[slot], the saturation rules of the target in
 * that slot.  Only user space writes it (satfeedctl add, before the target
 * is active, and satfeedctl rules, while it is), one whole entry per
 * change; the engine only reads it, field by field, each time a window of
 * the target closes and at each tick of its age timer, and uses it only
 * when gen equals the generation of the target (otherwise, while a slot is
 * being reused, the defaults: every field 0).  A change applies from the
 * next tick (at most max_age_ns / 2) or window that closes.
 */
struct satfeed_rules_slot {
	__u32 gen;		/* satfeed_target.gen these rules are for */
	__u32 reserved;		/* 0 */
	struct satfeed_sat_rules rules; /* permille each; 0: the default,
					 * SATFEED_SAT_RULE_OFF: off */
};

/* ---- end of the rules map ---- */

/*
 * satfeed_verdict: sf_verdict[slot], the saturation state of a target,
 * written by the engine under lock whenever one of the target's windows
 * closes and at each tick of its age timer (idle share, service time),
 * from the newest window of each stream and the target's rules
 * (bpf/sat_rules.h says how).  Readers take the lock (BPF_F_LOCK) like for a
 * stream (libsatfeed: sf_verdict_read()), and use it only when gen equals
 * the target's gen: satfeedctl resets it to the target's generation when it
 * adds one and to 0 (no target's) when it removes one.
 */
#define SATFEED_SAT_WHY_IDLE_NEAR	(1U << 0) /* idle share < idle_near */
#define SATFEED_SAT_WHY_IDLE_FULL	(1U << 1) /* idle share < idle_full */
#define SATFEED_SAT_WHY_CV2_RISE	(1U << 2) /* dispersion over baseline */
#define SATFEED_SAT_WHY_WPS_NEAR	(1U << 3) /* wps_avg < wps_near */
#define SATFEED_SAT_WHY_WPS_FULL	(1U << 4) /* wps_avg < wps_full */
#define SATFEED_SAT_WHY_QUIET		(1U << 5) /* no send or receive for
						   * max_age_ns: OK, and the
						   * wps and service time
						   * averages restart */
#define SATFEED_SAT_WHY_SVC_NEAR	(1U << 6) /* svc_avg > svc_near of
						   * svc_base */
#define SATFEED_SAT_WHY_SVC_FULL	(1U << 7) /* svc_avg > svc_full of
						   * svc_base */
#define SATFEED_SAT_WHY_DROP_NEAR	(1U << 8) /* drop_permille >=
						   * drop_near (ABI 7) */
#define SATFEED_SAT_WHY_DROP_FULL	(1U << 9) /* drop_permille >=
						   * drop_full (ABI 7) */
#define SATFEED_SAT_WHY_CPU_NEAR	(1U << 10) /* cpu_permille >=
						    * cpu_near (ABI 9) */
#define SATFEED_SAT_WHY_CPU_FULL	(1U << 11) /* cpu_permille >=
						    * cpu_full (ABI 9) */
#define SATFEED_SAT_WHY_UNREAD_NEAR	(1U << 12) /* unread_max >=
						    * unread_near (ABI 10) */
#define SATFEED_SAT_WHY_UNREAD_FULL	(1U << 13) /* unread_max >=
						    * unread_full (ABI 10) */
/* Bits of satfeed_verdict.seen: which figures are set. */
#define SATFEED_SAT_SEEN_SEND	(1U << SATFEED_STREAM_SEND)
#define SATFEED_SAT_SEEN_RECV	(1U << SATFEED_STREAM_RECV)
#define SATFEED_SAT_SEEN_POLL	(1U << SATFEED_STREAM_POLL)
#define SATFEED_SAT_SEEN_BASE	(1U << 3)	/* base_cv2_permille */
#define SATFEED_SAT_SEEN_WPS	(1U << 4)	/* wps_*_permille */
#define SATFEED_SAT_SEEN_WAITS	(1U << 5)	/* a wait was counted */
#define SATFEED_SAT_SEEN_IDLE	(1U << 6)	/* idle_permille: a tick
						 * measured the slack */
#define SATFEED_SAT_SEEN_SVC	(1U << 7)	/* svc_avg_ns, svc_base_ns */
#define SATFEED_SAT_SEEN_DROPS	(1U << 8)	/* drop_permille: a datagram
						 * was dropped in a tick's
						 * interval (ABI 7) */
#define SATFEED_SAT_SEEN_CPU	(1U << 9)	/* cpu_permille, cpus: a tick
						 * saw a thread at both ends
						 * of its interval (ABI 8) */
#define SATFEED_SAT_SEEN_UNREAD	(1U << 10)	/* unread_max: a receive
						 * on an accepted TCP
						 * connection left bytes
						 * unread (ABI 10) */
struct satfeed_verdict {
	struct bpf_spin_lock lock;
	__u32 gen;		/* satfeed_target.gen this verdict belongs to */
	__u32 state;		/* enum satfeed_sat_state */
	__u32 why;		/* SATFEED_SAT_WHY_* of the rules that hold */
	__u32 idle_permille;	/* the idle share the rules use: the newest
				 * tick's slack_permille of the threads that
				 * woke in its interval (below); 1000 when
				 * every waiting thread slept through it */
	__u32 send_cv2_permille; /* newest send window's cv2_permille */
	__u32 recv_cv2_permille; /* newest recv window's cv2_permille */
	__u32 base_cv2_permille; /* low-load baseline of the dispersion: the
				  * lowest recv cv2_permille while idle was at
				  * least idle_near */
	__u32 seen;		/* SATFEED_SAT_SEEN_*: 1 << stream: a window
				 * of it closed; which figures are set */
	__u64 since_ns;		/* when state last changed */
	__u64 updated_ns;	/* when it was last evaluated */
	__u64 changes;		/* how many times state changed */
	__u32 wps_permille;	/* waits per 1000 sends over the newest send
				 * window: floor(1000 * waits / N), waits =
				 * poll-family waits that ended since the
				 * previous send window closed; at most
				 * 0xffffffff */
	__u32 wps_avg_permille;	/* the same smoothed, what the rules use:
				 * the first send window's once a wait was
				 * counted, then (7 * wps_avg + wps) >> 3 at
				 * each one */
	__u64 poll_mark;	/* engine private: the poll stream's calls
				 * when the previous send window closed */
	/*
	 * Written at each tick of the age timer (every satfeed_info.tick_ns),
	 * over the interval since the previous tick (prev_tick_ns, tick_ns].
	 * The waited time of a thread is the time it spent inside a wait of
	 * the target in the interval, waits in progress at tick_ns included.
	 * The threads are the target's threads that waited in the interval (a
	 * wait of theirs ended in it or is in progress at its end) and were
	 * seen at the previous tick, less the sleepers (ABI 5): those that
	 * waited at least 95% of the interval.
	 */
	__u64 tick_ns;		/* when the timer last evaluated it, 0: never;
				 * older than 2 * max_age_ns: the engine is
				 * not running */
	__u64 prev_tick_ns;	/* the previous tick, 0: none */
	__u64 quiet_ns;		/* since when no send or receive was counted
				 * for max_age_ns, 0: active */
	__u32 slack_permille;	/* floor(1000 * (waited - runq) / (interval
				 * * threads)), the idle share with the
				 * waits in progress, 0..1000; runq: of the
				 * waited time, the time runnable but not
				 * running (satfeed_window.runq_ns); waited
				 * and threads leave the sleepers out (ABI
				 * 5); 1000 with sleepers only, 0 with no
				 * thread */
	__u32 wait_permille;	/* the same of waited, 0..1000 */
	__u32 threads;		/* the threads above, sleepers apart */
	__u32 drop_permille;	/* (ABI 7) datagrams the target's datagram
				 * sockets dropped per 1000 that arrived over
				 * the interval: floor(1000 * d / (d + r)),
				 * d the growth of drops, r the receives the
				 * recv stream counted; 0 when both are 0 */
	__u64 drops;		/* (ABI 7) atomic: datagrams the kernel
				 * dropped at the target's datagram sockets
				 * (mostly a full receive buffer: the growth
				 * of each socket's sk_drops, read at the
				 * target's receives on it, counted from its
				 * first), since the target was added */
	__u64 drop_mark;	/* engine private: drops at the previous
				 * tick */
	/*
	 * Service time (ABI 5), also written at each tick: the newest service
	 * window that closed since the previous tick with at least
	 * SATFEED_SAT_SVC_MIN_SAMPLES samples moves the average.
	 */
	__u64 svc_avg_ns;	/* smoothed service time: the first such
				 * window's mean_ns, then a lower mean_ns
				 * at once, a higher one (svc_avg +
				 * mean_ns) >> 1 (a rise shows within a
				 * few ticks, a fall at the next), ns */
	__u64 svc_base_ns;	/* its low-load baseline: the lowest such
				 * window's mean_ns since the target was
				 * added, ns */
	__u64 svc_seq;		/* engine private: seq of the newest service
				 * window used */
	__u32 sleepers;		/* threads that waited at least 95% of the
				 * interval, left out of slack_permille and
				 * threads: a listener that wakes once a
				 * second says nothing of the load, and a
				 * server is saturated when the threads
				 * that serve are */
	__u32 svc_reserved;
	__u64 recv_mark;	/* (ABI 7) engine private: the recv stream's
				 * calls at the previous tick */
	/*
	 * CPU (ABI 8), written at each tick for the target's threads that
	 * the previous tick saw too: since ABI 9 every thread of the target
	 * (a thread that waits has its record from its first wait in a
	 * traced call, any other from the first tick that finds it); in ABI
	 * 8 only those that had waited in a traced call.
	 */
	__u64 cpu_ns;		/* their CPU time since the target was added:
				 * the growth of each one's sum_exec_runtime
				 * from tick to tick, ns */
	__u32 cpu_permille;	/* the share of the CPUs they may use that
				 * they used over the interval:
				 * floor(1000 * c / (interval * cpus)), c the
				 * interval's growth of cpu_ns; at most 1000;
				 * 0 when no thread was seen; the cpu_near and
				 * cpu_full rules read it (ABI 9) */
	__u32 cpus;		/* those CPUs: the CPUs of the union of their
				 * affinity masks, at most one a thread that
				 * did not sleep through the interval (a
				 * thread that never waited in a traced call:
				 * that ran 5% of it; ABI 9) */
	/*
	 * The receive queue (ABI 10).  After each receive that moved bytes
	 * on one of the target's accepted TCP connections, the bytes that
	 * arrived in order and were still unread on it (rcv_nxt -
	 * copied_seq, what ss shows as Recv-Q): a server behind its load
	 * leaves requests queued behind the one it read.
	 */
	__u32 unread_peak;	/* engine private: the most of them since the
				 * previous tick; the hot path raises it
				 * without a lock (two receives racing may
				 * keep the smaller), the tick takes and
				 * zeroes it by an atomic exchange, bytes */
	__u32 unread_max;	/* at each tick: the most of them in its
				 * interval, 0 when every receive read its
				 * connection empty, bytes */
};

/* Fewer samples than this in a service window: too few to move the
 * service-time average or its baseline. */
#define SATFEED_SAT_SVC_MIN_SAMPLES	16

/* Value of sf_pid_index and sf_cgrp_index: where a target's data lives. */
struct satfeed_index {
	__u32 slot;		/* index into sf_targets; streams at slot * 3 */
	__u32 gen;		/* satfeed_target.gen at insertion */
	__u32 sc_mask;		/* copy of satfeed_target.sc_mask for the hot path */
};

/*
 * One closed window of N samples.  Immutable once published, until the
 * entry is reused SATFEED_HISTORY windows later.  Reading one:
 *
 * - Under the stream's lock, on every architecture: user space with
 *   bpf_map_lookup_elem_flags(..., BPF_F_LOCK) (libsatfeed's
 *   sf_stream_read(), satfeedctl), BPF code with bpf_spin_lock(&s->lock).
 *   The engine closes windows under that lock, so nothing else is needed.
 *
 * - Without the lock, from kernel code that holds a pointer to the entry:
 *   the engine stores seq_end first and seq last, each with a full barrier
 *   (a BPF atomic exchange), so the window's fields become visible after
 *   seq_end and before seq on any CPU.  The reader loads seq with acquire
 *   semantics (smp_load_acquire()), then the fields, then smp_rmb() and
 *   seq_end; the copy is whole iff seq == seq_end != 0.  Loads in that
 *   order are the reader's half: without them a weakly ordered CPU (arm64)
 *   may satisfy the check with a torn copy.
 *
 * - Not through a lockless bpf() lookup: the kernel copies the value with
 *   memcpy(), which promises no order among its loads, so seq == seq_end in
 *   such a copy proves nothing on a weakly ordered CPU (the tests see only
 *   whole ones on x86-64: not a promise).  bpftool map dump reads that way:
 *   fine for a look, not for a consumer.
 */
struct satfeed_window {
	__u64 seq;		/* 1-based window sequence number; 0: unused */
	__u64 start_ns;		/* time of the first event of the window */
	__u64 end_ns;		/* time of the event that closed it */
	__u64 sum_ns;		/* sum of the N samples, ns */
	__u64 sumsq_lo;		/* sum of squared samples, low 64 bits, ns^2 */
	__u64 sumsq_hi;		/* sum of squared samples, high 64 bits */
	__u64 mean_ns;		/* floor(sum_ns / N), ns */
	__u64 var_ns2;		/* floor(exact population variance), ns^2 */
	__u64 rate_milli;	/* floor(n * 10^12 / sum_ns): events per 1000 s;
				 * for send this is 1000 * RPS_obs; 0 for poll
				 * and when sum_ns == 0 */
	__u32 samples;		/* n: N, or fewer for a window closed by age
				 * (SATFEED_WIN_AGED), 0 for an empty one
				 * (SATFEED_WIN_QUIET).  Every figure is over
				 * these n samples: mean floor(sum / n),
				 * variance floor((n * S2 - S1^2) / n^2) */
	__u32 clamped;		/* samples clamped to sample_cap_ns */
	/*
	 * Normalized figures.  Span: end_ns - start_ns; for poll that is from
	 * the start of the first wait to the end of the last.
	 */
	__u64 runq_ns;		/* poll: of sum_ns, the time the waiting
				 * threads were runnable but not running: per
				 * wait, the growth of the thread's scheduler
				 * run delay (sched_info.run_delay) from entry
				 * to exit, at most the (clamped) wait, ns;
				 * 0 for send and recv, and on kernels
				 * without CONFIG_SCHED_INFO */
	__u32 wait_permille;	/* poll: floor(1000 * sum_ns / (span *
				 * threads)), the share of the span the
				 * threads that waited spent in waits, at
				 * most 1000; 0 for send/recv and span 0.
				 * A quiet window (SATFEED_WIN_QUIET) of the
				 * poll stream carries the tick's figures
				 * (satfeed_verdict: waits in progress
				 * included) */
	__u32 idle_permille;	/* poll: the same of sum_ns - runq_ns: waiting
				 * for work, not for a CPU */
	__u32 cv2_permille;	/* squared coefficient of variation, var /
				 * mean^2, in permille: exactly
				 * floor(1000 * (n * S2 - S1^2) / S1^2),
				 * at most 0xffffffff; 0 when S1 == 0 */
	__u32 flags;		/* SATFEED_WIN_* */
	__u32 threads;		/* poll: distinct threads whose waits are
				 * in it (a quiet window: the tick's); 0 for
				 * send/recv */
	__u32 reserved;
	__u64 seq_end;		/* equals seq when the entry is consistent */
};
#define SATFEED_WIN_AGED	(1U << 0) /* closed by age, samples < N */
#define SATFEED_WIN_QUIET	(1U << 1) /* empty: no event for max_age_ns
					   * (start_ns: the last event,
					   * end_ns: the tick) */

/*
 * One stream of one target: sf_streams[slot * 3 + stream].  The lock guards
 * every field except the counters marked "atomic".  The in-progress window is
 * acc_*; closed windows go to hist[(seq - 1) % SATFEED_HISTORY].
 */
struct satfeed_stream {
	struct bpf_spin_lock lock;
	__u32 gen;		/* satfeed_target.gen this data belongs to */
	__u64 published;	/* windows closed so far (seq of the newest) */
	__u64 last_ns;		/* time of the last counted event, 0: none yet,
				 * or a quiet window ended the chain of gaps
				 * (its start_ns is the last event) */
	__u64 calls;		/* counted calls (bytes moved / waits ended) */
	__u64 pending;		/* samples in the in-progress window (< N) */
	__u64 acc_start_ns;	/* in-progress window: time of first event */
	__u64 acc_sum_ns;	/* in-progress window: sum of samples */
	__u64 acc_sumsq_lo;	/* in-progress window: sum of squares, low */
	__u64 acc_sumsq_hi;	/* in-progress window: sum of squares, high */
	__u64 acc_clamped;	/* in-progress window: clamped samples */
	__u64 acc_runq_ns;	/* in-progress window: run-queue time (poll) */
	__u64 acc_threads;	/* in-progress window: distinct threads (poll) */
	__u64 wait_total_ns;	/* poll: sum of every counted wait (clamped),
				 * since the target was added, ns */
	__u64 runq_total_ns;	/* poll: the same of their run-queue time */
	__u64 errors;		/* atomic: calls that failed, other than EAGAIN */
	__u64 eagain;		/* atomic: calls that failed with EAGAIN */
	__u64 zero_bytes;	/* atomic: calls that returned 0 (moved nothing) */
	__u64 not_socket;	/* atomic: socket-fd members' calls (read/write
				 * family; sendfile, splice by output fd)
				 * on non-sockets */
	struct satfeed_window hist[SATFEED_HISTORY];
};

/*
 * satfeed_age: sf_age[0], the engine's age timer (see
 * SATFEED_MAX_AGE_NS_DEFAULT) and its scratch.  Engine private, pinned so
 * that the timer lives as long as the engine: a consumer reads at most
 * ticks and tick_ns, to see that the timer runs.  The engine arms it at
 * the first process exit after its load (the loader makes one).
 */
struct satfeed_age {
	struct bpf_timer timer;
	__u64 ticks;		/* ticks so far */
	__u64 tick_ns;		/* when the last one ran, 0: not armed */
	__u32 armed;		/* the timer was started */
	__u32 reserved;
	/* the tick in progress, per slot: over the interval since the
	 * previous tick, the time the threads that woke spent in waits (the
	 * waits in progress included; ns, and the run-queue ns of it), and
	 * those threads */
	__u64 waited_ns[SATFEED_MAX_TARGETS];
	__u64 runq_ns[SATFEED_MAX_TARGETS];
	__u32 threads[SATFEED_MAX_TARGETS];
	__u32 sleepers[SATFEED_MAX_TARGETS];	/* threads that waited at
						 * least 95% of the
						 * interval (not in
						 * threads) */
	/* (ABI 8) the same tick's CPU, per slot, over every thread seen at
	 * both ends of the interval: their CPU time in it (ns), their
	 * number, the union of their affinity masks' first 64 CPUs and
	 * the largest nr_cpus_allowed among them */
	__u64 cpu_ns[SATFEED_MAX_TARGETS];
	__u64 cpu_mask[SATFEED_MAX_TARGETS];
	__u32 cpu_threads[SATFEED_MAX_TARGETS];
	__u32 cpu_allowed[SATFEED_MAX_TARGETS];
};

/*
 * satfeed_discover: sf_discover[slot], what a target in discovery
 * (SATFEED_SC_DISCOVER) did, per source of events.  A source is a syscall
 * of the list (enum satfeed_syscall, 0 to SATFEED_NR_SYSCALLS - 1) or,
 * from SATFEED_SRC_URING_FIRST on, an io_uring operation, so that each
 * hook adds its own sources without a change of layout.  satfeedctl
 * resets the entry for the target's generation when it adds the target;
 * the engine adds to the counters of its generation only, atomically.
 */
#define SATFEED_SRC_URING_FIRST	32	/* io_uring op N is source 32 + N */
#define SATFEED_NR_SOURCES	96
struct satfeed_discover_count {
	__u64 calls;		/* calls that returned (waits: ended) */
	__u64 moved;		/* of them, returned > 0: moved at least one
				 * byte (waits: returned events) */
	__u64 bytes;		/* sum of those returns: bytes moved (waits:
				 * events, or ready fds) */
	__u64 zero;		/* returned 0: nothing moved (waits: timed
				 * out) */
	__u64 eagain;		/* failed with EAGAIN */
	__u64 errors;		/* failed otherwise */
	__u64 not_socket;	/* socket-fd members: calls whose fd (the
				 * output for sendfile, splice) was not a
				 * socket; not in the counts above */
	__u64 wait_ns;		/* waits: time spent in them, ns */
};

struct satfeed_discover {
	__u32 gen;		/* satfeed_target.gen it belongs to */
	__u32 owner;		/* pid of the satfeedctl that reset it (as its
				 * pid namespace), 0: not known; the engine
				 * never reads it.  A discovery whose owner
				 * was killed is swept (sf_table.h) */
	__u64 start_ns;		/* when satfeedctl reset it */
	struct satfeed_discover_count src[SATFEED_NR_SOURCES];
};

/*
 * Helpers for the two index computations every consumer needs.  They are
 * always inlined so that BPF code may call them while it holds a stream's
 * lock (no function calls are allowed there), and they compile unchanged in
 * the kernel and in user space.
 */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Key of stream `stream` (enum satfeed_stream_id) of target slot `slot`. */
static __always_inline __u32 satfeed_stream_key(__u32 slot, __u32 stream)
{
	return slot * SATFEED_NR_STREAMS + stream;
}

/*
 * Index into hist[] of window number seq (seq >= 1).  It holds that window
 * only while published - seq < SATFEED_HISTORY; older ones are overwritten.
 */
static __always_inline __u32 satfeed_hist_index(__u64 seq)
{
	return (seq - 1) % SATFEED_HISTORY;
}

/* The hist entry of window number seq (see satfeed_hist_index). */
static __always_inline const struct satfeed_window *
satfeed_window_by_seq(const struct satfeed_stream *s, __u64 seq)
{
	return &s->hist[satfeed_hist_index(seq)];
}

/* The newest closed window of s, or NULL while none has closed. */
static __always_inline const struct satfeed_window *
satfeed_newest_window(const struct satfeed_stream *s)
{
	return s->published ? satfeed_window_by_seq(s, s->published) : NULL;
}

#endif /* __SATFEED_H */
