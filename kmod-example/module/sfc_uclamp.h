/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sfc_uclamp.h - the module's action: a target's demand level becomes the
 * uclamp.min of its threads, the utilization floor schedutil (and EAS) use
 * to pick a frequency for them.
 *
 * Level 0..100 maps to uclamp.min 0..SCHED_CAPACITY_SCALE (rounded up, so
 * any demand gives some floor).  Level 0 (a quiet server), an inactive or
 * gone target and "off" all release: the threads' uclamp.min is reset to
 * the system default they had (0, or the RT default for RT threads).
 *
 * Ownership: the module only touches a thread whose uclamp.min nobody set
 * (no user-defined clamp), and remembers the value it set per thread.  A
 * thread whose clamp someone else set, before or after the module, is left
 * alone from then on.  A thread created by a clamped thread inherits the
 * clamp; it is taken for the module's own when it carries the module's
 * current value.
 *
 * Only pid targets: a cgroup has its own cpu.uclamp.min
 * (CONFIG_UCLAMP_TASK_GROUP), which belongs to whoever manages the cgroup.
 *
 * Without CONFIG_UCLAMP_TASK the calls below do nothing and
 * sfc_uclamp_show() says so; the module refuses uclamp_action=1 there.
 */
#ifndef __SFC_UCLAMP_H
#define __SFC_UCLAMP_H

#include <linux/sysfs.h>
#include <linux/types.h>

#ifdef CONFIG_UCLAMP_TASK

void sfc_uclamp_init(void);
/*
 * Clamp tgid's threads to level (level 0: release them, tgid 0: stop
 * following the slot's process); call from process context.
 */
void sfc_uclamp_follow(u32 slot, pid_t tgid, u32 level);
/* Release every slot (module exit). */
void sfc_uclamp_release_all(void);
/* The sysfs table: one line per process followed. */
ssize_t sfc_uclamp_show(char *buf);

#else /* !CONFIG_UCLAMP_TASK */

static inline void sfc_uclamp_init(void)
{
}

static inline void sfc_uclamp_follow(u32 slot, pid_t tgid, u32 level)
{
}

static inline void sfc_uclamp_release_all(void)
{
}

static inline ssize_t sfc_uclamp_show(char *buf)
{
	return sysfs_emit(buf, "unsupported: kernel without CONFIG_UCLAMP_TASK\n");
}

#endif /* CONFIG_UCLAMP_TASK */

#endif /* __SFC_UCLAMP_H */
