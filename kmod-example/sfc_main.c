// SPDX-License-Identifier: GPL-2.0
/*
 * satfeed_consumer - a sample kernel consumer of satfeed's windows.
 *
 * Pull: the module defines the struct_ops type satfeed_consumer_ops
 * (satfeed_consumer.h).  A periodic work (module parameter period_ms,
 * default 10 ms) asks the attached BPF implementation (consumer.bpf.c) about
 * every target slot; the implementation reads satfeed's pinned maps and
 * answers through the kfunc satfeed_consumer_answer().
 *
 * Push: the kfunc satfeed_consumer_push() receives each window as it closes,
 * forwarded by a program from push.bpf.c attached to satfeed's global no-op
 * satfeed_window_closed() in the running engine.  satfeed itself never
 * references this module, so it loads and runs without it.
 *
 * Decision: per target, sfc_policy.c turns the pulled signals into a demand
 * level 0..100 with hysteresis and a rate limit, the way a governor would.
 *
 * Action (opt-in, uclamp_action=1, kernels with CONFIG_UCLAMP_TASK): each
 * pid target's level becomes the uclamp.min of its threads (sfc_uclamp.c),
 * released when the action is turned off, the target goes or turns quiet,
 * the consumer detaches or the module unloads.
 *
 * Visibility: /sys/kernel/satfeed_consumer/ (see the attribute comments).
 *
 * Lifetime: a struct_ops map of our type and a program that calls one of our
 * kfuncs each hold a reference on this module, so rmmod is refused (EBUSY)
 * while the consumer is attached; detach first (sfconsumer detach).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/version.h>
#include <linux/workqueue.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sfc_policy.h"
#include "sfc_uclamp.h"

/* ---- module parameters (each validated; bad values are refused) ---- */

/* An unsigned parameter with bounds; kp->arg points at one of these. */
struct sfc_uparam {
	unsigned int val;
	unsigned int min;
	unsigned int max;
};

static int sfc_param_set(const char *val, const struct kernel_param *kp)
{
	struct sfc_uparam *p = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < p->min || v > p->max) {
		pr_err("%s=%u refused: must be %u..%u\n", kp->name, v, p->min,
		       p->max);
		return -EINVAL;
	}
	WRITE_ONCE(p->val, v);
	return 0;
}

static int sfc_param_get(char *buf, const struct kernel_param *kp)
{
	const struct sfc_uparam *p = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(p->val));
}

static const struct kernel_param_ops sfc_param_ops = {
	.set = sfc_param_set,
	.get = sfc_param_get,
};

/* uclamp_action=1 needs CONFIG_UCLAMP_TASK: say so rather than do nothing */
static int sfc_uclamp_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v && !IS_ENABLED(CONFIG_UCLAMP_TASK)) {
		pr_err("%s=%u refused: this kernel has no CONFIG_UCLAMP_TASK\n",
		       kp->name, v);
		return -EOPNOTSUPP;
	}
	return sfc_param_set(val, kp);
}

static const struct kernel_param_ops sfc_uclamp_param_ops = {
	.set = sfc_uclamp_param_set,
	.get = sfc_param_get,
};

#define __SFC_PARAM(name, ops, def, lo, hi, desc)			\
	static struct sfc_uparam sfc_p_##name = { def, lo, hi };	\
	module_param_cb(name, ops, &sfc_p_##name, 0644);		\
	MODULE_PARM_DESC(name, desc " (" #lo ".." #hi ", default " #def ")")
#define SFC_PARAM(name, def, lo, hi, desc)				\
	__SFC_PARAM(name, &sfc_param_ops, def, lo, hi, desc)

SFC_PARAM(period_ms, 10, 1, 10000, "sampling period of the pull work, ms");
SFC_PARAM(hysteresis, 5, 0, 50, "least demand change that moves a level");
SFC_PARAM(max_step, 25, 1, 100, "largest level move at once");
SFC_PARAM(rate_limit_ms, 50, 0, 60000, "least time between two moves, ms");
SFC_PARAM(stale_ms, 1000, 1, 600000,
	  "a target quiet this long has demand 0, ms");
__SFC_PARAM(uclamp_action, &sfc_uclamp_param_ops, 0, 0, 1,
	    "1: a pid target's level is the uclamp.min of its threads");

#define SFC_P(name) READ_ONCE(sfc_p_##name.val)

/* ---- state ---- */

struct sfc_target {
	/* push side, written by the kfunc from any CPU */
	raw_spinlock_t push_lock;		/* raw: pushes may come from any
					 * non-NMI context, also on RT */
	u64 pushed[SATFEED_NR_STREAMS];		/* windows received */
	u64 first_seq[SATFEED_NR_STREAMS];	/* seq of the first one */
	u64 gaps[SATFEED_NR_STREAMS];		/* seq jumps seen */
	struct satfeed_window push_win[SATFEED_NR_STREAMS];

	/* pull side, owned by the work under sfc_mutex */
	bool valid;				/* an active target answered */
	struct sfc_answer pull;
	struct sfc_policy_state pol;
};

static struct sfc_target sfc_targets[SFC_MAX_SLOTS];

/* sfc_mutex guards sfc_ops and every pull-side field above. */
static DEFINE_MUTEX(sfc_mutex);
static struct satfeed_consumer_ops *sfc_ops;
static char sfc_ops_name[16];

/* The query in flight: only the work's own calls may answer. */
static struct task_struct *sfc_query_task;
static u64 sfc_query_token;
static u32 sfc_query_slot;
static bool sfc_answered;
static struct sfc_answer sfc_staging;

static atomic64_t sfc_windows_pushed = ATOMIC64_INIT(0);
static atomic64_t sfc_push_rejected = ATOMIC64_INIT(0);
static atomic64_t sfc_pulls = ATOMIC64_INIT(0);
static atomic64_t sfc_pull_errors = ATOMIC64_INIT(0);
static atomic64_t sfc_level_changes = ATOMIC64_INIT(0);
static atomic64_t sfc_attaches = ATOMIC64_INIT(0);

/*
 * The unbound system workqueue: system_dfl_wq from 6.17 on, where 7.x
 * logs the older name as deprecated.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define SFC_WQ system_dfl_wq
#else
#define SFC_WQ system_unbound_wq
#endif
static struct delayed_work sfc_dwork;
static bool sfc_stopping;

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
		atomic64_inc(&sfc_push_rejected);
		return -EINVAL;
	}
	/* an NMI could interrupt a holder of push_lock on this CPU */
	if (in_nmi()) {
		atomic64_inc(&sfc_push_rejected);
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
	atomic64_inc(&sfc_windows_pushed);
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

/* ---- the pull work ---- */

static void sfc_signals_from(const struct sfc_answer *a, struct sfc_signals *s)
{
	const struct sfc_stream_view *recv = &a->s[SATFEED_STREAM_RECV];
	const struct sfc_stream_view *poll = &a->s[SATFEED_STREAM_POLL];
	int i;

	memset(s, 0, sizeof(*s));
	s->now_ns = a->now_ns;
	for (i = 0; i < SATFEED_NR_STREAMS; i++)
		s->last_event_ns = max(s->last_event_ns, a->s[i].last_ns);
	s->recv_seq = recv->seq;
	s->recv_cv2_permille = recv->cv2_permille;
	s->poll_seq = poll->seq;
	s->poll_idle_permille = poll->idle_permille;
}

static void sfc_decide(struct sfc_target *t)
{
	struct sfc_policy_params p = {
		.hysteresis = SFC_P(hysteresis),
		.max_step = SFC_P(max_step),
		.min_interval_ns = (u64)SFC_P(rate_limit_ms) * NSEC_PER_MSEC,
		.stale_ns = (u64)SFC_P(stale_ms) * NSEC_PER_MSEC,
	};
	struct sfc_signals s;
	u32 old = t->pol.level;

	sfc_signals_from(&t->pull, &s);
	if (!sfc_policy_step(&p, &t->pol, &s))
		return;
	atomic64_inc(&sfc_level_changes);
	pr_info_ratelimited("slot %u (%s %llu): level %u -> %u (demand %u)\n",
			    t->pull.slot,
			    t->pull.kind == SATFEED_TARGET_CGROUP ? "cgroup" : "pid",
			    t->pull.id, old, t->pol.level, t->pol.demand);
}

static void sfc_pull_one(struct satfeed_consumer_ops *ops, u32 slot)
{
	struct sfc_target *t = &sfc_targets[slot];
	int ret;

	sfc_query_token++;
	sfc_query_slot = slot;
	sfc_answered = false;
	WRITE_ONCE(sfc_query_task, current);
	ret = ops->query(slot, sfc_query_token);
	WRITE_ONCE(sfc_query_task, NULL);

	if (ret == -ENOENT) {
		t->valid = false;
		return;
	}
	if (ret || !sfc_answered) {
		atomic64_inc(&sfc_pull_errors);
		return;
	}
	atomic64_inc(&sfc_pulls);
	if (!t->valid || t->pull.gen != sfc_staging.gen ||
	    t->pull.id != sfc_staging.id) {
		/* a new target in this slot: fresh policy state */
		memset(&t->pol, 0, sizeof(t->pol));
	}
	t->pull = sfc_staging;
	t->valid = true;
	sfc_decide(t);
}

/*
 * The action: an active pid target's level as its threads' uclamp.min, or
 * released (action off, no consumer, slot free, process gone, a cgroup).
 */
static void sfc_act(u32 slot)
{
	const struct sfc_target *t = &sfc_targets[slot];
	bool act = SFC_P(uclamp_action) && t->valid &&
		   t->pull.kind == SATFEED_TARGET_PID &&
		   t->pull.state == SATFEED_STATE_ACTIVE;

	sfc_uclamp_follow(slot, act ? (pid_t)t->pull.id : 0,
			  act ? t->pol.level : 0);
}

static void sfc_work_fn(struct work_struct *work)
{
	u32 slot;

	/* unreg takes sfc_mutex too, so sfc_ops stays valid in the loop */
	mutex_lock(&sfc_mutex);
	for (slot = 0; slot < SFC_MAX_SLOTS; slot++) {
		if (sfc_ops)
			sfc_pull_one(sfc_ops, slot);
		sfc_act(slot);
	}
	mutex_unlock(&sfc_mutex);
	if (!READ_ONCE(sfc_stopping))
		queue_delayed_work(SFC_WQ, &sfc_dwork,
				   msecs_to_jiffies(SFC_P(period_ms)));
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
		atomic64_inc(&sfc_attaches);
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
		atomic64_inc(&sfc_attaches);
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

/* ---- sysfs: /sys/kernel/satfeed_consumer/ ---- */

/* Table files stop before a line could be cut at the end of the page. */
#define SFC_SYSFS_ROOM	(PAGE_SIZE - 512)

/*
 * Root only: the files name the watched pids and cgroups and show their
 * request rates, which other users have no business reading.
 */
#define SFC_ATTR_RO(name) __ATTR_RO_MODE(name, 0400)

static const char *const sfc_stream_names[SATFEED_NR_STREAMS] = {
	"send", "recv", "poll"
};

#define SFC_COUNTER_ATTR(name, var)					\
static ssize_t name##_show(struct kobject *k, struct kobj_attribute *a,\
			   char *buf)					\
{									\
	return sysfs_emit(buf, "%lld\n", atomic64_read(&var));		\
}									\
static struct kobj_attribute sfc_attr_##name = SFC_ATTR_RO(name)

/* windows received through satfeed_consumer_push() */
SFC_COUNTER_ATTR(windows_pushed, sfc_windows_pushed);
/* push calls refused (bad slot or stream) */
SFC_COUNTER_ATTR(push_rejected, sfc_push_rejected);
/* answered queries */
SFC_COUNTER_ATTR(pulls, sfc_pulls);
/* queries that failed or were not answered */
SFC_COUNTER_ATTR(pull_errors, sfc_pull_errors);
/* level moves, all targets */
SFC_COUNTER_ATTR(level_changes, sfc_level_changes);
/* struct_ops registrations so far */
SFC_COUNTER_ATTR(attaches, sfc_attaches);

/* "name" of the attached pull consumer, or "none" */
static ssize_t attached_show(struct kobject *k, struct kobj_attribute *a,
			     char *buf)
{
	ssize_t n;

	mutex_lock(&sfc_mutex);
	n = sysfs_emit(buf, "%s\n", sfc_ops ? sfc_ops_name : "none");
	mutex_unlock(&sfc_mutex);
	return n;
}
static struct kobj_attribute sfc_attr_attached = SFC_ATTR_RO(attached);

/* One line per target seen by pull: slot kind id level demand changes */
static ssize_t levels_show(struct kobject *k, struct kobj_attribute *a,
			   char *buf)
{
	ssize_t n = 0;
	u32 i;

	mutex_lock(&sfc_mutex);
	for (i = 0; i < SFC_MAX_SLOTS; i++) {
		struct sfc_target *t = &sfc_targets[i];

		if (!t->valid)
			continue;
		if (n > SFC_SYSFS_ROOM)
			break;
		n += sysfs_emit_at(buf, n,
				   "slot=%u kind=%s id=%llu level=%u demand=%u changes=%llu\n",
				   i, t->pull.kind == SATFEED_TARGET_CGROUP ?
				   "cgroup" : "pid", t->pull.id, t->pol.level,
				   t->pol.demand, t->pol.changes);
	}
	mutex_unlock(&sfc_mutex);
	return n;
}
static struct kobj_attribute sfc_attr_levels = SFC_ATTR_RO(levels);

/* One line per (slot, stream) that received pushes: the last window. */
static ssize_t last_push_show(struct kobject *k, struct kobj_attribute *a,
			      char *buf)
{
	ssize_t n = 0;
	u32 i, j;

	for (i = 0; i < SFC_MAX_SLOTS; i++) {
		struct sfc_target *t = &sfc_targets[i];

		for (j = 0; j < SATFEED_NR_STREAMS; j++) {
			struct satfeed_window w;
			unsigned long flags;
			u64 pushed, first, gaps;

			raw_spin_lock_irqsave(&t->push_lock, flags);
			pushed = t->pushed[j];
			first = t->first_seq[j];
			gaps = t->gaps[j];
			w = t->push_win[j];
			raw_spin_unlock_irqrestore(&t->push_lock, flags);
			if (!pushed || n > SFC_SYSFS_ROOM)
				continue;
			n += sysfs_emit_at(buf, n,
					   "slot=%u stream=%s pushed=%llu first_seq=%llu gaps=%llu seq=%llu mean_ns=%llu var_ns2=%llu rate_milli=%llu samples=%u\n",
					   i, sfc_stream_names[j], pushed, first,
					   gaps, w.seq, w.mean_ns, w.var_ns2,
					   w.rate_milli, w.samples);
		}
	}
	return n;
}
static struct kobj_attribute sfc_attr_last_push = SFC_ATTR_RO(last_push);

/* One line per (slot, stream) of the last pull: the newest window seen. */
static ssize_t last_pull_show(struct kobject *k, struct kobj_attribute *a,
			      char *buf)
{
	ssize_t n = 0;
	u32 i, j;

	mutex_lock(&sfc_mutex);
	for (i = 0; i < SFC_MAX_SLOTS; i++) {
		struct sfc_target *t = &sfc_targets[i];

		if (!t->valid)
			continue;
		for (j = 0; j < SATFEED_NR_STREAMS && n <= SFC_SYSFS_ROOM; j++) {
			const struct sfc_stream_view *v = &t->pull.s[j];

			n += sysfs_emit_at(buf, n,
					   "slot=%u stream=%s published=%llu seq=%llu mean_ns=%llu var_ns2=%llu rate_milli=%llu sum_ns=%llu runq_ns=%llu idle_permille=%u cv2_permille=%u pending=%llu engine=%llu\n",
					   i, sfc_stream_names[j], v->published,
					   v->seq, v->mean_ns, v->var_ns2,
					   v->rate_milli, v->sum_ns, v->runq_ns,
					   v->idle_permille, v->cv2_permille,
					   v->pending, t->pull.engine_load_ns);
		}
	}
	mutex_unlock(&sfc_mutex);
	return n;
}
static struct kobj_attribute sfc_attr_last_pull = SFC_ATTR_RO(last_pull);

/*
 * One line per target whose threads the action clamps:
 * slot pid uclamp_min threads left_alone errors ("unsupported" without
 * CONFIG_UCLAMP_TASK)
 */
static ssize_t uclamp_show(struct kobject *k, struct kobj_attribute *a,
			   char *buf)
{
	return sfc_uclamp_show(buf);
}
static struct kobj_attribute sfc_attr_uclamp = SFC_ATTR_RO(uclamp);

static struct attribute *sfc_attrs[] = {
	&sfc_attr_windows_pushed.attr,
	&sfc_attr_push_rejected.attr,
	&sfc_attr_pulls.attr,
	&sfc_attr_pull_errors.attr,
	&sfc_attr_level_changes.attr,
	&sfc_attr_attaches.attr,
	&sfc_attr_attached.attr,
	&sfc_attr_levels.attr,
	&sfc_attr_last_push.attr,
	&sfc_attr_last_pull.attr,
	&sfc_attr_uclamp.attr,
	NULL,
};

static const struct attribute_group sfc_attr_group = {
	.attrs = sfc_attrs,
};

static struct kobject *sfc_kobj;

/* ---- module init / exit ---- */

static int __init sfc_init(void)
{
	int i, ret;

	for (i = 0; i < SFC_MAX_SLOTS; i++)
		raw_spin_lock_init(&sfc_targets[i].push_lock);
	sfc_uclamp_init();

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
	if (ret) {
		pr_err("cannot register struct_ops satfeed_consumer_ops: %d\n",
		       ret);
		return ret;
	}

	sfc_kobj = kobject_create_and_add(SFC_NAME, kernel_kobj);
	if (!sfc_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(sfc_kobj, &sfc_attr_group);
	if (ret) {
		kobject_put(sfc_kobj);
		return ret;
	}

	INIT_DELAYED_WORK(&sfc_dwork, sfc_work_fn);
	queue_delayed_work(SFC_WQ, &sfc_dwork,
			   msecs_to_jiffies(SFC_P(period_ms)));
	pr_info("loaded: period %u ms, hysteresis %u, rate limit %u ms, uclamp action %s\n",
		SFC_P(period_ms), SFC_P(hysteresis), SFC_P(rate_limit_ms),
		!IS_ENABLED(CONFIG_UCLAMP_TASK) ? "unsupported" :
		SFC_P(uclamp_action) ? "on" : "off");
	return 0;
}

static void __exit sfc_exit(void)
{
	WRITE_ONCE(sfc_stopping, true);
	cancel_delayed_work_sync(&sfc_dwork);
	/* the work is stopped: whatever it clamped is restored here */
	sfc_uclamp_release_all();
	sysfs_remove_group(sfc_kobj, &sfc_attr_group);
	kobject_put(sfc_kobj);
	pr_info("unloaded: %lld windows pushed, %lld pulls, %lld level changes\n",
		atomic64_read(&sfc_windows_pushed), atomic64_read(&sfc_pulls),
		atomic64_read(&sfc_level_changes));
}

module_init(sfc_init);
module_exit(sfc_exit);

MODULE_DESCRIPTION("satfeed sample consumer: struct_ops pull, kfunc push, governor-style demand level");
MODULE_LICENSE("GPL");
