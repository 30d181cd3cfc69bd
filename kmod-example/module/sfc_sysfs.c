// SPDX-License-Identifier: GPL-2.0
/*
 * sfc_sysfs.c - /sys/kernel/satfeed_consumer/: the module's counters, the
 * attached pull consumer, each target's level, the last window pushed and
 * pulled, and the uclamp action's table (see the attribute comments).
 */
#include <linux/atomic.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sfc_module.h"
#include "sfc_uclamp.h"

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

#define SFC_COUNTER_ATTR(name)						\
static ssize_t name##_show(struct kobject *k, struct kobj_attribute *a,\
			   char *buf)					\
{									\
	return sysfs_emit(buf, "%lld\n", atomic64_read(&sfc_count.name));	\
}									\
static struct kobj_attribute sfc_attr_##name = SFC_ATTR_RO(name)

/* windows received through satfeed_consumer_push() */
SFC_COUNTER_ATTR(windows_pushed);
/* push calls refused (bad slot or stream) */
SFC_COUNTER_ATTR(push_rejected);
/* answered queries */
SFC_COUNTER_ATTR(pulls);
/* queries that failed or were not answered */
SFC_COUNTER_ATTR(pull_errors);
/* level moves, all targets */
SFC_COUNTER_ATTR(level_changes);
/* struct_ops registrations so far */
SFC_COUNTER_ATTR(attaches);

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

/*
 * The quiet bound the policy used at the last pull, ns: stale_ms, or with
 * stale_ms=0 twice the attached engine's age bound (sf_info.max_age_ns);
 * 0 before any pull.
 */
static ssize_t stale_ns_show(struct kobject *k, struct kobj_attribute *a,
			     char *buf)
{
	ssize_t n;

	mutex_lock(&sfc_mutex);
	n = sysfs_emit(buf, "%llu\n", sfc_stale_ns);
	mutex_unlock(&sfc_mutex);
	return n;
}
static struct kobj_attribute sfc_attr_stale_ns = SFC_ATTR_RO(stale_ns);

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
	&sfc_attr_stale_ns.attr,
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

int sfc_sysfs_init(void)
{
	int ret;

	sfc_kobj = kobject_create_and_add(SFC_NAME, kernel_kobj);
	if (!sfc_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(sfc_kobj, &sfc_attr_group);
	if (ret)
		goto put_kobj;
	return 0;

put_kobj:
	kobject_put(sfc_kobj);
	return ret;
}

void sfc_sysfs_exit(void)
{
	sysfs_remove_group(sfc_kobj, &sfc_attr_group);
	kobject_put(sfc_kobj);
}
