// SPDX-License-Identifier: GPL-2.0
/*
 * sfc_uclamp.c - a target's demand level as the uclamp.min of its threads.
 * See sfc_uclamp.h.  Built only with CONFIG_UCLAMP_TASK (Kbuild).
 *
 * sched_setattr_nocheck() may sleep (enabling the uclamp static key takes
 * the jump-label lock), so the threads are collected with references under
 * RCU and clamped after it; every call comes from the module's work or its
 * exit, in process context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <uapi/linux/sched/types.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sfc_policy.h"
#include "sfc_uclamp.h"

/* sched_util_min that resets a task's clamp to the system default */
#define SFC_UCLAMP_RESET	((u32)-1)
/* threads of one target clamped per pass at most; the rest wait a pass */
#define SFC_UCLAMP_MAX_THREADS	4096
/* room for threads created between counting and collecting them */
#define SFC_UCLAMP_SLACK	16

/*
 * An ownership entry: the value the module set on a thread, and the pass
 * that last saw the thread (entries of threads no pass sees any more are
 * dropped).
 */
#define SFC_ENT_VALUE_BITS	11	/* 0..SCHED_CAPACITY_SCALE */
#define SFC_ENT_VALUE_MASK	((1UL << SFC_ENT_VALUE_BITS) - 1)
#define SFC_ENT_PASS_MASK	0xffffUL

struct sfc_uclamp_slot {
	pid_t tgid;		/* the process clamped, 0: none */
	u32 value;		/* uclamp.min asked for its threads */
	unsigned long pass;	/* passes over this target so far */
	u32 threads;		/* threads at the module's value, last pass */
	u32 left_alone;		/* threads whose clamp is someone else's */
	u32 errors;		/* failed sets, last pass */
	struct xarray owned;	/* tid -> sfc_ent() */
};

/* sfc_uclamp_lock guards every slot. */
static DEFINE_MUTEX(sfc_uclamp_lock);
static struct sfc_uclamp_slot sfc_uclamp_slots[SFC_MAX_SLOTS];

static void *sfc_ent(u32 value, unsigned long pass)
{
	return xa_mk_value(value | (pass & SFC_ENT_PASS_MASK) <<
				   SFC_ENT_VALUE_BITS);
}

static u32 sfc_ent_value(void *ent)
{
	return xa_to_value(ent) & SFC_ENT_VALUE_MASK;
}

static unsigned long sfc_ent_pass(void *ent)
{
	return xa_to_value(ent) >> SFC_ENT_VALUE_BITS;
}

/* level 0..100 -> uclamp 0..1024, rounded up */
static u32 sfc_uclamp_value(u32 level)
{
	level = min_t(u32, level, SFC_LEVEL_MAX);
	return DIV_ROUND_UP(level * SCHED_CAPACITY_SCALE, SFC_LEVEL_MAX);
}

/* Set (or with SFC_UCLAMP_RESET reset) p's uclamp.min, nothing else. */
static int sfc_uclamp_set(struct task_struct *p, u32 util_min)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		/* keep the policy and its parameters */
		.sched_policy = (u32)-1,
		.sched_flags = SCHED_FLAG_KEEP_ALL | SCHED_FLAG_UTIL_CLAMP_MIN,
		.sched_util_min = util_min,
	};
	unsigned int policy = READ_ONCE(p->policy);

	/* the kernel checks a kept RT priority against the kept policy */
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		attr.sched_priority = READ_ONCE(p->rt_priority);
	return sched_setattr_nocheck(p, &attr);
}

/*
 * The threads of tgid, each with a reference, or NULL when the process is
 * gone (or on ENOMEM).  *nr is how many; the caller puts and frees them.
 */
static struct task_struct **sfc_uclamp_collect(pid_t tgid, unsigned int *nr)
{
	struct task_struct *leader, *t, **tasks;
	unsigned int room = 0, n = 0;

	rcu_read_lock();
	leader = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (leader)
		room = get_nr_threads(leader);
	rcu_read_unlock();
	if (!room)
		return NULL;
	room = min(room + SFC_UCLAMP_SLACK, SFC_UCLAMP_MAX_THREADS);
	tasks = kvmalloc_array(room, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return NULL;

	rcu_read_lock();
	leader = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (leader) {
		/* one list walk: break leaves it */
		for_each_thread(leader, t) {
			if (n == room)
				break;
			get_task_struct(t);
			tasks[n++] = t;
		}
	}
	rcu_read_unlock();
	*nr = n;
	return tasks;
}

/* One thread of a pass: clamp it to want, or release it. */
static void sfc_uclamp_thread(struct sfc_uclamp_slot *s, struct task_struct *t,
			      bool release, u32 want)
{
	struct uclamp_se min_req = t->uclamp_req[UCLAMP_MIN];
	struct uclamp_se max_req = t->uclamp_req[UCLAMP_MAX];
	pid_t tid = task_pid_nr(t);
	void *ent = xa_load(&s->owned, tid);
	bool mine;
	int ret;

	/*
	 * Read without the task's locks: a racing sched_setattr() from
	 * elsewhere either shows here or makes the value differ next pass,
	 * and the thread is then left alone.
	 */
	if (ent)
		mine = min_req.user_defined &&
		       min_req.value == sfc_ent_value(ent);
	else	/* inherited from one of ours? */
		mine = min_req.user_defined && s->value &&
		       min_req.value == s->value;

	if (min_req.user_defined && !mine) {
		if (ent)
			xa_erase(&s->owned, tid);
		s->left_alone++;
		return;
	}
	if (release) {
		if (mine) {
			ret = sfc_uclamp_set(t, SFC_UCLAMP_RESET);
			if (ret) {
				s->errors++;
				pr_warn_ratelimited("pid %d: cannot reset uclamp.min: %d\n",
						    tid, ret);
			}
		}
		if (ent)
			xa_erase(&s->owned, tid);
		return;
	}
	/* deadline tasks have their own bandwidth; no floor to add */
	if (READ_ONCE(t->policy) == SCHED_DEADLINE) {
		s->left_alone++;
		return;
	}

	/* never above the thread's own ceiling (the kernel refuses it) */
	want = min_t(u32, want, max_req.value);
	if (!ent && xa_reserve(&s->owned, tid, GFP_KERNEL)) {
		s->errors++;
		return;
	}
	if (!mine || min_req.value != want) {
		ret = sfc_uclamp_set(t, want);
		if (ret) {
			s->errors++;
			pr_warn_ratelimited("pid %d: cannot set uclamp.min %u: %d\n",
					    tid, want, ret);
			if (!mine) {
				xa_release(&s->owned, tid);
				return;
			}
			/* still ours, at the value it had */
			want = min_req.value;
		}
	}
	/* the index is reserved or occupied: this store allocates nothing */
	WARN_ON_ONCE(xa_is_err(xa_store(&s->owned, tid,
					sfc_ent(want, s->pass), GFP_KERNEL)));
	s->threads++;
}

/* One pass over the threads of s->tgid. */
static void sfc_uclamp_pass(struct sfc_uclamp_slot *s, bool release, u32 want)
{
	struct task_struct **tasks;
	unsigned int i, nr = 0;
	unsigned long tid;
	void *ent;

	lockdep_assert_held(&sfc_uclamp_lock);
	s->pass++;
	s->threads = 0;
	s->left_alone = 0;
	s->errors = 0;
	tasks = sfc_uclamp_collect(s->tgid, &nr);
	for (i = 0; i < nr; i++) {
		sfc_uclamp_thread(s, tasks[i], release, want);
		put_task_struct(tasks[i]);
	}
	kvfree(tasks);
	/* threads that exited: nothing of theirs to restore */
	xa_for_each(&s->owned, tid, ent)
		if (release ||
		    sfc_ent_pass(ent) != (s->pass & SFC_ENT_PASS_MASK))
			xa_erase(&s->owned, tid);
	s->value = release ? 0 : want;
}

/* Stop following s->tgid: every clamp the module set there is reset. */
static void sfc_uclamp_stop(struct sfc_uclamp_slot *s)
{
	lockdep_assert_held(&sfc_uclamp_lock);
	if (!s->tgid)
		return;
	sfc_uclamp_pass(s, true, 0);
	pr_info("pid %d: uclamp.min released\n", s->tgid);
	s->tgid = 0;
}

void sfc_uclamp_follow(u32 slot, pid_t tgid, u32 level)
{
	struct sfc_uclamp_slot *s;

	if (WARN_ON_ONCE(slot >= SFC_MAX_SLOTS))
		return;
	s = &sfc_uclamp_slots[slot];
	mutex_lock(&sfc_uclamp_lock);
	if (s->tgid && s->tgid != tgid)
		sfc_uclamp_stop(s);
	if (tgid > 0) {
		if (!s->tgid)
			pr_info("pid %d: uclamp.min follows its demand level\n",
				tgid);
		s->tgid = tgid;
		/*
		 * Level 0 (a quiet server) releases the threads but keeps
		 * following: their own clamp applies until demand returns.
		 */
		if (level)
			sfc_uclamp_pass(s, false, sfc_uclamp_value(level));
		else if (s->value || !xa_empty(&s->owned))
			sfc_uclamp_pass(s, true, 0);
	}
	mutex_unlock(&sfc_uclamp_lock);
}

void sfc_uclamp_release_all(void)
{
	u32 slot;

	mutex_lock(&sfc_uclamp_lock);
	for (slot = 0; slot < SFC_MAX_SLOTS; slot++) {
		sfc_uclamp_stop(&sfc_uclamp_slots[slot]);
		WARN_ON_ONCE(!xa_empty(&sfc_uclamp_slots[slot].owned));
		xa_destroy(&sfc_uclamp_slots[slot].owned);
	}
	mutex_unlock(&sfc_uclamp_lock);
}

void sfc_uclamp_init(void)
{
	u32 slot;

	for (slot = 0; slot < SFC_MAX_SLOTS; slot++)
		xa_init(&sfc_uclamp_slots[slot].owned);
}

ssize_t sfc_uclamp_show(char *buf)
{
	ssize_t n = 0;
	u32 slot;

	mutex_lock(&sfc_uclamp_lock);
	for (slot = 0; slot < SFC_MAX_SLOTS; slot++) {
		const struct sfc_uclamp_slot *s = &sfc_uclamp_slots[slot];

		if (!s->tgid)
			continue;
		if (n > PAGE_SIZE - 128)
			break;
		n += sysfs_emit_at(buf, n,
				   "slot=%u pid=%d uclamp_min=%u threads=%u left_alone=%u errors=%u\n",
				   slot, s->tgid, s->value, s->threads,
				   s->left_alone, s->errors);
	}
	mutex_unlock(&sfc_uclamp_lock);
	return n;
}
