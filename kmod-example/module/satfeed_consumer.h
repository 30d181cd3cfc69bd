/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * satfeed_consumer.h - the interface between the satfeed_consumer module and
 * its BPF programs (consumer.bpf.c, push.bpf.c) and attach tool (sfconsumer).
 *
 * Pull: the module defines the struct_ops type satfeed_consumer_ops.  Its
 * periodic work calls ops->query(slot, token) for every target slot; the BPF
 * implementation reads satfeed's pinned maps and hands the answer back with
 * the kfunc satfeed_consumer_answer(token, &answer, sizeof(answer)).
 *
 * Push: satfeed calls its global no-op satfeed_window_closed(slot, stream, w)
 * after each window closes; a program from push.bpf.c, attached to that
 * function in the running engine, forwards the window to the kfunc
 * satfeed_consumer_push(slot, stream, w).
 *
 * Include after satfeed.h.  Fixed-width fields only: the module, BPF and
 * user space see the same bytes.
 */
#ifndef __SATFEED_CONSUMER_H
#define __SATFEED_CONSUMER_H

#define SFC_NAME		"satfeed_consumer"
#define SFC_SYSFS_DIR		"/sys/kernel/satfeed_consumer"
/* bpffs directory of the consumer's links, beside satfeed's own root */
#define SFC_DEFAULT_PIN_ROOT	"/sys/fs/bpf/satfeed_consumer"
#define SFC_PUSH_FUNC		"satfeed_window_closed"
#define SFC_MAX_SLOTS		SATFEED_MAX_TARGETS

/* One stream of one target as the pull consumer saw it. */
struct sfc_stream_view {
	__u64 published;	/* windows closed so far (engine's seq) */
	__u64 last_ns;		/* time of the stream's last event, 0: none */
	__u64 pending;		/* samples in the in-progress window */
	/* the newest closed window (all zero while published == 0) */
	__u64 seq;
	__u64 start_ns;
	__u64 end_ns;
	__u64 sum_ns;
	__u64 mean_ns;
	__u64 var_ns2;
	__u64 rate_milli;	/* events per 1000 s (send: 1000 * RPS_obs) */
	__u32 samples;
	__u32 clamped;
	__u64 runq_ns;		/* poll: run delay inside the waits */
	__u32 idle_permille;	/* poll: waiting for work, share of the span */
	__u32 cv2_permille;	/* var / mean^2, permille */
};

/* The answer to one query, handed to satfeed_consumer_answer(). */
struct sfc_answer {
	__u32 slot;		/* the slot that was asked about */
	__u32 kind;		/* enum satfeed_target_kind */
	__u32 state;		/* enum satfeed_target_state */
	__u32 gen;		/* satfeed_target.gen */
	__u64 id;		/* tgid or cgroup id */
	__u64 engine_load_ns;	/* satfeed_info.load_mono_ns of the maps read */
	__u64 max_age_ns;	/* satfeed_info.max_age_ns of the same engine:
				 * its age bound T, ns (0: not read) */
	__u64 now_ns;		/* bpf_ktime_get_ns() when answered */
	struct sfc_stream_view s[SATFEED_NR_STREAMS];
};

/*
 * The struct_ops type.  query() returns 0 after answering, -ENOENT for a
 * free slot, another negative errno on failure.
 */
struct satfeed_consumer_ops {
	int (*query)(__u32 slot, __u64 token);
	char name[16];
};

#endif /* __SATFEED_CONSUMER_H */
