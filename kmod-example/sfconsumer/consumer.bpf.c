// SPDX-License-Identifier: GPL-2.0
/*
 * consumer.bpf.c - the pull side of kmod-example: the BPF implementation of
 * the module's struct_ops type satfeed_consumer_ops.
 *
 * What: the module's periodic work calls query(slot, token) for each target
 * slot; this program reads that slot of satfeed's pinned maps (sf_info,
 * sf_targets, sf_streams) and hands the module an sfc_answer through the
 * kfunc satfeed_consumer_answer().
 *
 * Why this way: the maps below only describe the layout.  sfconsumer swaps
 * in the pinned engine maps before loading (bpf_map__reuse_fd), so this
 * object reads the running engine's data and never needs the engine's code;
 * any other BPF consumer (a sched_ext scheduler, a cpufreq governor
 * prototype) can read satfeed the same way.  Each stream is copied under the
 * stream's own bpf_spin_lock, so the answer holds exactly what the pinned map
 * holds at that instant: never a torn window.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "satfeed.h"
#include "satfeed_maps.bpf.h"
#include "satfeed_consumer.h"

char LICENSE[] SEC("license") = "GPL";

#define SFC_ENOENT	2
#define SFC_EINVAL	22

extern int satfeed_consumer_answer(__u64 token, void *answer,
				   __u32 answer__sz) __ksym;

/* Copy one stream's counters and newest closed window, under its lock. */
static __always_inline void sfc_view(__u32 slot, __u32 stream, __u32 gen,
				     struct sfc_stream_view *v)
{
	__u32 key = satfeed_stream_key(slot, stream);
	const struct satfeed_window *w;
	struct satfeed_stream *st;

	st = bpf_map_lookup_elem(&sf_streams, &key);
	if (!st)
		return;
	bpf_spin_lock(&st->lock);
	if (st->gen == gen) {
		v->published = st->published;
		v->last_ns = st->last_ns;
		v->pending = st->pending;
		w = satfeed_newest_window(st);
		if (w) {
			v->seq = w->seq;
			v->start_ns = w->start_ns;
			v->end_ns = w->end_ns;
			v->sum_ns = w->sum_ns;
			v->mean_ns = w->mean_ns;
			v->var_ns2 = w->var_ns2;
			v->rate_milli = w->rate_milli;
			v->samples = w->samples;
			v->clamped = w->clamped;
			v->runq_ns = w->runq_ns;
			v->idle_permille = w->idle_permille;
			v->cv2_permille = w->cv2_permille;
		}
	}
	bpf_spin_unlock(&st->lock);
}

SEC("struct_ops/query")
int BPF_PROG(sfc_query, __u32 slot, __u64 token)
{
	struct sfc_answer a = {};
	struct satfeed_target *t;
	struct satfeed_info *info;
	__u32 zero = 0;

	if (slot >= SATFEED_MAX_TARGETS)
		return -SFC_EINVAL;
	t = bpf_map_lookup_elem(&sf_targets, &slot);
	if (!t || t->kind == SATFEED_TARGET_FREE)
		return -SFC_ENOENT;
	a.slot = slot;
	a.kind = t->kind;
	a.state = t->state;
	a.gen = t->gen;
	a.id = t->id;
	info = bpf_map_lookup_elem(&sf_info, &zero);
	if (info) {
		a.engine_load_ns = info->load_mono_ns;
		a.max_age_ns = info->max_age_ns;
	}
	sfc_view(slot, SATFEED_STREAM_SEND, a.gen, &a.s[SATFEED_STREAM_SEND]);
	sfc_view(slot, SATFEED_STREAM_RECV, a.gen, &a.s[SATFEED_STREAM_RECV]);
	sfc_view(slot, SATFEED_STREAM_POLL, a.gen, &a.s[SATFEED_STREAM_POLL]);
	a.now_ns = bpf_ktime_get_ns();
	return satfeed_consumer_answer(token, &a, sizeof(a));
}

SEC(".struct_ops.link")
struct satfeed_consumer_ops sfc_pull = {
	.query = (void *)sfc_query,
	.name = "sfc_pull",
};
