// SPDX-License-Identifier: GPL-2.0
/*
 * sfc_bpf.c - the module's BPF interface: the kfuncs satfeed_consumer_push()
 * (push) and satfeed_consumer_answer() (pull), the struct_ops type
 * satfeed_consumer_ops that the pull consumer registers as, and the query
 * the pull work asks it through.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sfc_module.h"

/* The query in flight: only the work's own calls may answer. */
static struct task_struct *sfc_query_task;
static u64 sfc_query_token;
static u32 sfc_query_slot;
static bool sfc_answered;
static struct sfc_answer sfc_staging;

/* ---- kfuncs ---- */

__bpf_kfunc_start_defs();

/**
 * satfeed_consumer_push - receive one closed window (push path)
 * @slot: target slot in satfeed's maps
 * @stream: enum satfeed_stream_id
 * @w: the window, as published in sf_streams
 *
 * Callable from tracing (fentry, tp_btf) and struct_ops programs, in any
 * context that BPF programs run in.  Returns 0, or -EINVAL for a bad slot
 * or stream.
 */
__bpf_kfunc int satfeed_consumer_push(u32 slot, u32 stream,
				      struct satfeed_window *w)
{
	struct sfc_target *t;
	unsigned long flags;
	u64 last;

	if (slot >= SFC_MAX_SLOTS || stream >= SATFEED_NR_STREAMS || !w) {
		atomic64_inc(&sfc_count.push_rejected);
		return -EINVAL;
	}
	/* an NMI could interrupt a holder of push_lock on this CPU */
	if (in_nmi()) {
		atomic64_inc(&sfc_count.push_rejected);
		return -EBUSY;
	}
	t = &sfc_targets[slot];
	raw_spin_lock_irqsave(&t->push_lock, flags);
	last = t->push_win[stream].seq;
	if (!t->pushed[stream] || w->seq == 1) {
		/* first window, or the slot was reused (a reused slot's
		 * stream always restarts at seq 1): start over */
		t->pushed[stream] = 0;
		t->gaps[stream] = 0;
		t->first_seq[stream] = w->seq;
	} else if (w->seq > last + 1) {
		t->gaps[stream]++;
	}
	/*
	 * The engine pushes after dropping its stream lock, so two windows of
	 * one stream closing on two CPUs can arrive newest first: count the
	 * older one, but keep the newest as the last window.
	 */
	if (w->seq > last || !t->pushed[stream])
		t->push_win[stream] = *w;
	t->pushed[stream]++;
	raw_spin_unlock_irqrestore(&t->push_lock, flags);
	atomic64_inc(&sfc_count.windows_pushed);
	return 0;
}

/**
 * satfeed_consumer_answer - answer the query in flight (pull path)
 * @token: the token the module passed to ops->query()
 * @answer: a struct sfc_answer
 * @answer__sz: its size, which must be sizeof(struct sfc_answer)
 *
 * Only the module's own query may be answered: a call from anywhere else
 * (another program, another task, a stale token) gets -EPERM.  (A void
 * pointer with a size: the verifier passes a struct by kfunc argument only
 * when it holds no array of structs, which sfc_answer does.)
 */
__bpf_kfunc int satfeed_consumer_answer(u64 token, void *answer,
					u32 answer__sz)
{
	const struct sfc_answer *a = answer;

	/* only the module's worker, in task context, asks */
	if (in_interrupt() || READ_ONCE(sfc_query_task) != current ||
	    token != sfc_query_token)
		return -EPERM;
	/* the verifier lets a possibly-NULL pointer through with a size */
	if (!a || answer__sz != sizeof(*a) || a->slot != sfc_query_slot)
		return -EINVAL;
	memcpy(&sfc_staging, a, sizeof(sfc_staging));
	sfc_answered = true;
	return 0;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(sfc_kfunc_ids)
BTF_ID_FLAGS(func, satfeed_consumer_push)
BTF_ID_FLAGS(func, satfeed_consumer_answer)
BTF_KFUNCS_END(sfc_kfunc_ids)

static const struct btf_kfunc_id_set sfc_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &sfc_kfunc_ids,
};

/* ---- the query ---- */

int sfc_query(struct satfeed_consumer_ops *ops, u32 slot,
	      struct sfc_answer *out)
{
	int ret;

	lockdep_assert_held(&sfc_mutex);
	sfc_query_token++;
	sfc_query_slot = slot;
	sfc_answered = false;
	WRITE_ONCE(sfc_query_task, current);
	ret = ops->query(slot, sfc_query_token);
	WRITE_ONCE(sfc_query_task, NULL);

	if (ret)
		return ret;
	if (!sfc_answered)
		return -ENODATA;
	*out = sfc_staging;
	return 0;
}

/* ---- struct_ops ---- */

static int sfc_ops_init(struct btf *btf)
{
	return 0;
}

static const struct bpf_func_proto *
sfc_get_func_proto(enum bpf_func_id func_id, const struct bpf_prog *prog)
{
	return bpf_base_func_proto(func_id, prog);
}

static bool sfc_is_valid_access(int off, int size, enum bpf_access_type type,
				const struct bpf_prog *prog,
				struct bpf_insn_access_aux *info)
{
	return bpf_tracing_btf_ctx_access(off, size, type, prog, info);
}

static const struct bpf_verifier_ops sfc_verifier_ops = {
	.get_func_proto = sfc_get_func_proto,
	.is_valid_access = sfc_is_valid_access,
};

static int sfc_ops_init_member(const struct btf_type *t,
			       const struct btf_member *member,
			       void *kdata, const void *udata)
{
	const struct satfeed_consumer_ops *uops = udata;
	struct satfeed_consumer_ops *ops = kdata;

	if (member->offset == offsetof(struct satfeed_consumer_ops, name) * 8) {
		if (!memchr(uops->name, '\0', sizeof(uops->name)))
			return -EINVAL;
		memcpy(ops->name, uops->name, sizeof(ops->name));
		return 1;
	}
	return 0;
}

static int sfc_ops_validate(void *kdata)
{
	struct satfeed_consumer_ops *ops = kdata;

	return ops->query ? 0 : -EINVAL;
}

static int sfc_ops_reg(void *kdata, struct bpf_link *link)
{
	struct satfeed_consumer_ops *ops = kdata;
	int ret = 0;

	mutex_lock(&sfc_mutex);
	if (sfc_ops) {
		ret = -EEXIST;
	} else {
		sfc_ops = ops;
		strscpy(sfc_ops_name, ops->name[0] ? ops->name : "?",
			sizeof(sfc_ops_name));
		atomic64_inc(&sfc_count.attaches);
	}
	mutex_unlock(&sfc_mutex);
	if (ret)
		pr_warn_ratelimited("a consumer (%s) is already attached\n",
				    sfc_ops_name);
	else
		pr_info("pull consumer '%s' attached\n", sfc_ops_name);
	return ret;
}

static void sfc_ops_unreg(void *kdata, struct bpf_link *link)
{
	/* sfc_mutex waits for a query in flight */
	mutex_lock(&sfc_mutex);
	if (sfc_ops == kdata) {
		sfc_ops = NULL;
		/* nothing answers any more: stop showing old answers */
		for (int i = 0; i < SFC_MAX_SLOTS; i++)
			sfc_targets[i].valid = false;
		pr_info("pull consumer '%s' detached\n", sfc_ops_name);
	}
	mutex_unlock(&sfc_mutex);
}

static int sfc_ops_update(void *kdata, void *old_kdata, struct bpf_link *link)
{
	struct satfeed_consumer_ops *ops = kdata;
	int ret = 0;

	mutex_lock(&sfc_mutex);
	if (sfc_ops != old_kdata) {
		ret = -ENOENT;
	} else {
		sfc_ops = kdata;
		strscpy(sfc_ops_name, ops->name[0] ? ops->name : "?",
			sizeof(sfc_ops_name));
		atomic64_inc(&sfc_count.attaches);
	}
	mutex_unlock(&sfc_mutex);
	return ret;
}

/* cfi_stubs: what the kernel calls through when checking the type */
static int sfc_query_stub(u32 slot, u64 token)
{
	return -ENOENT;
}

static struct satfeed_consumer_ops sfc_stub_ops = {
	.query = sfc_query_stub,
};

static struct bpf_struct_ops sfc_bpf_ops = {
	.verifier_ops = &sfc_verifier_ops,
	.init = sfc_ops_init,
	.init_member = sfc_ops_init_member,
	.validate = sfc_ops_validate,
	.reg = sfc_ops_reg,
	.unreg = sfc_ops_unreg,
	.update = sfc_ops_update,
	.cfi_stubs = &sfc_stub_ops,
	.name = "satfeed_consumer_ops",
	.owner = THIS_MODULE,
};

int sfc_bpf_register(void)
{
	int ret;

	/*
	 * TRACING covers fentry and tp_btf programs, and freplace programs
	 * that replace a function of one; STRUCT_OPS covers our pull
	 * implementation.  Not RAW_TRACEPOINT: on 6.12 that fails and drops
	 * the sets registered before it.
	 */
	ret = register_btf_kfunc_id_set(BPF_PROG_TYPE_TRACING, &sfc_kfunc_set);
	if (!ret)
		ret = register_btf_kfunc_id_set(BPF_PROG_TYPE_STRUCT_OPS,
						&sfc_kfunc_set);
	if (ret) {
		pr_err("cannot register kfuncs: %d (module BTF missing?)\n", ret);
		return ret;
	}
	ret = register_bpf_struct_ops(&sfc_bpf_ops, satfeed_consumer_ops);
	if (ret)
		pr_err("cannot register struct_ops satfeed_consumer_ops: %d\n",
		       ret);
	return ret;
}
