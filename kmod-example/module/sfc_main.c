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
 *
 * This file: the parameters, the pull work and the module's lifetime;
 * sfc_bpf.c: the kfuncs and the struct_ops type; sfc_sysfs.c: the sysfs
 * files; sfc_module.h: the state they share.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/version.h>
#include <linux/workqueue.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sfc_module.h"
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
SFC_PARAM(stale_ms, 0, 0, 600000,
	  "a target quiet this long has demand 0, ms; 0: twice the engine's age bound (sf_info.max_age_ns)");
__SFC_PARAM(uclamp_action, &sfc_uclamp_param_ops, 0, 0, 1,
	    "1: a pid target's level is the uclamp.min of its threads");

#define SFC_P(name) READ_ONCE(sfc_p_##name.val)

/* ---- state (sfc_module.h) ---- */

struct sfc_target sfc_targets[SFC_MAX_SLOTS];
DEFINE_MUTEX(sfc_mutex);
struct satfeed_consumer_ops *sfc_ops;
char sfc_ops_name[16];
u64 sfc_stale_ns;
struct sfc_counters sfc_count = {
	.windows_pushed = ATOMIC64_INIT(0),
	.push_rejected = ATOMIC64_INIT(0),
	.pulls = ATOMIC64_INIT(0),
	.pull_errors = ATOMIC64_INIT(0),
	.level_changes = ATOMIC64_INIT(0),
	.attaches = ATOMIC64_INIT(0),
};

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
		/* the engine's own bound, from the answer: it follows a
		 * reloaded engine's --max-age */
		.stale_ns = sfc_policy_stale_ns(SFC_P(stale_ms),
						t->pull.max_age_ns),
	};
	struct sfc_signals s;
	u32 old = t->pol.level;

	sfc_stale_ns = p.stale_ns;
	sfc_signals_from(&t->pull, &s);
	if (!sfc_policy_step(&p, &t->pol, &s))
		return;
	atomic64_inc(&sfc_count.level_changes);
	pr_info_ratelimited("slot %u (%s %llu): level %u -> %u (demand %u)\n",
			    t->pull.slot,
			    t->pull.kind == SATFEED_TARGET_CGROUP ? "cgroup" : "pid",
			    t->pull.id, old, t->pol.level, t->pol.demand);
}

static void sfc_pull_one(struct satfeed_consumer_ops *ops, u32 slot)
{
	static struct sfc_answer a;	/* under sfc_mutex, off the stack */
	struct sfc_target *t = &sfc_targets[slot];
	int ret;

	ret = sfc_query(ops, slot, &a);
	if (ret == -ENOENT) {
		t->valid = false;
		return;
	}
	if (ret) {
		atomic64_inc(&sfc_count.pull_errors);
		return;
	}
	atomic64_inc(&sfc_count.pulls);
	if (!t->valid || t->pull.gen != a.gen || t->pull.id != a.id) {
		/* a new target in this slot: fresh policy state */
		memset(&t->pol, 0, sizeof(t->pol));
	}
	t->pull = a;
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

/* ---- module init / exit ---- */

static int __init sfc_init(void)
{
	int i, ret;

	for (i = 0; i < SFC_MAX_SLOTS; i++)
		raw_spin_lock_init(&sfc_targets[i].push_lock);
	sfc_uclamp_init();

	ret = sfc_bpf_register();
	if (ret)
		return ret;
	ret = sfc_sysfs_init();
	if (ret)
		return ret;

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
	sfc_sysfs_exit();
	pr_info("unloaded: %lld windows pushed, %lld pulls, %lld level changes\n",
		atomic64_read(&sfc_count.windows_pushed),
		atomic64_read(&sfc_count.pulls),
		atomic64_read(&sfc_count.level_changes));
}

module_init(sfc_init);
module_exit(sfc_exit);

MODULE_DESCRIPTION("satfeed sample consumer: struct_ops pull, kfunc push, governor-style demand level");
MODULE_LICENSE("GPL");
