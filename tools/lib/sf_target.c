// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_target.c - add and remove satfeed targets: slot choice, generations,
 * stream reset, sf_config rebuild, index entries, the pin-root lock.
 *
 * The order of the writes is what keeps the hot path exact: a target's
 * streams are reset to its new generation before its index entry exists,
 * and a removal deletes the index entry before it frees the slot, so the
 * engine never counts an event into another target's windows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_target.h"

/* Cgroup depths the config can tell apart (satfeed_target.level % this). */
#define NR_LEVELS 64

int sf_root_lock(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int cgroup_id(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 cgid;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.cgid;
	return 0;
}

int sf_selector_cgroup(const char *arg, struct sf_selector *sel, char *why,
		       size_t len)
{
	char real[PATH_MAX], up[PATH_MAX], *slash;
	struct statfs sfs;
	struct stat st;
	int level = 0, err;

	if (!realpath(arg, real)) {
		snprintf(why, len, "%s: %s", arg, strerror(errno));
		return SF_EXIT_TARGET;
	}
	if (stat(real, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, len, "%s is not a directory", arg);
		return SF_EXIT_USAGE;
	}
	if (statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, len, "%s is not a cgroup v2 directory", arg);
		return SF_EXIT_USAGE;
	}
	/* depth: walk up while the parent is still the same cgroup2 mount */
	snprintf(up, sizeof(up), "%s", real);
	while ((slash = strrchr(up, '/')) && slash != up) {
		struct stat pst;

		*slash = '\0';
		if (statfs(up, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC ||
		    stat(up, &pst) || pst.st_dev != st.st_dev)
			break;
		level++;
	}
	err = cgroup_id(real, &sel->id);
	if (err) {
		snprintf(why, len, "cannot get the cgroup id of %s: %s", arg,
			 strerror(-err));
		return SF_EXIT_ERROR;
	}
	sel->kind = SATFEED_TARGET_CGROUP;
	sel->level = level;
	/* the part below the mount point: the last `level` components */
	slash = real + strlen(real);
	for (int i = 0; i < level && slash > real; i++)
		while (--slash > real && *slash != '/')
			;
	snprintf(sel->path, sizeof(sel->path), "%s", level ? slash : "/");
	return SF_EXIT_OK;
}

static int lock_if_rooted(const struct sf_pins *p, char *why, size_t len)
{
	int fd;

	if (!p->root[0])
		return -1;	/* a private object: nobody to race with */
	fd = sf_root_lock(p->root);
	if (fd < 0)
		snprintf(why, len, "cannot lock %s: %s", p->root,
			 strerror(-fd));
	return fd;
}

static void unlock(int lockfd)
{
	if (lockfd >= 0)
		close(lockfd);
}

int sf_config_build(const struct satfeed_target *t, __u32 n,
		    struct satfeed_config *cfg)
{
	bool levels[NR_LEVELS] = {};
	__u32 nr = 0;

	memset(cfg, 0, sizeof(*cfg));
	for (__u32 slot = 0; slot < n; slot++) {
		if (t[slot].kind == SATFEED_TARGET_PID) {
			__u32 bucket = t[slot].id % SATFEED_PID_SLOTS;
			__u8 *v = &cfg->pid_slot[bucket];

			cfg->nr_pid_targets++;
			*v = *v ? SATFEED_PID_SLOT_SHARED : slot + 1;
		} else if (t[slot].kind == SATFEED_TARGET_CGROUP) {
			cfg->nr_cgroup_targets++;
			levels[t[slot].level % NR_LEVELS] = true;
		}
	}
	/* deepest first */
	for (int l = NR_LEVELS - 1; l >= 0; l--) {
		if (!levels[l])
			continue;
		if (nr == SATFEED_MAX_CGROUP_LEVELS)
			return -E2BIG;
		cfg->cgroup_level[nr++] = l;
	}
	cfg->nr_cgroup_levels = nr;
	return 0;
}

int sf_config_rebuild(const struct sf_pins *p)
{
	struct satfeed_target t[SATFEED_MAX_TARGETS] = {};
	struct satfeed_config cfg;
	__u32 zero = 0;
	int err;

	for (__u32 slot = 0; slot < p->info.max_targets; slot++)
		if (sf_target_read(p, slot, &t[slot]))
			t[slot].kind = SATFEED_TARGET_FREE;
	err = sf_config_build(t, p->info.max_targets, &cfg);
	if (err)
		return err;
	return bpf_map_update_elem(p->config_fd, &zero, &cfg, 0) ? -errno : 0;
}

bool sf_pid_alive(__u64 pid)
{
	return !kill((pid_t)pid, 0) || errno == EPERM;
}

bool sf_target_gone(const struct satfeed_target *t)
{
	if (t->state == SATFEED_STATE_GONE)
		return true;
	return t->kind == SATFEED_TARGET_PID && !sf_pid_alive(t->id);
}

bool sf_target_matches(const struct satfeed_target *t,
		       const struct sf_selector *sel)
{
	return sel->kind == SATFEED_TARGET_FREE ||
	       (t->kind == sel->kind && t->id == sel->id);
}

int sf_target_find(const struct sf_pins *p, const struct sf_selector *sel,
		   struct satfeed_target *out)
{
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		int err = sf_target_read(p, slot, &t);

		if (err)
			return err;
		if (t.kind != SATFEED_TARGET_FREE && sel->kind &&
		    sf_target_matches(&t, sel)) {
			if (out)
				*out = t;
			return slot;
		}
	}
	return -ENOENT;
}

static int index_delete(const struct sf_pins *p, __u32 kind, __u64 id)
{
	__u64 key64 = id;
	__u32 key32 = id;

	if (kind == SATFEED_TARGET_PID)
		return bpf_map_delete_elem(p->pid_index_fd, &key32);
	return bpf_map_delete_elem(p->cgrp_index_fd, &key64);
}

/* Unindex the target in slot, then free the slot (its gen is kept). */
static int free_slot(const struct sf_pins *p, __u32 slot,
		     struct satfeed_target *t)
{
	index_delete(p, t->kind, t->id);
	t->kind = SATFEED_TARGET_FREE;
	return bpf_map_update_elem(p->targets_fd, &slot, t, 0) ? -errno : 0;
}

static const char *kind_name(__u32 kind)
{
	return kind == SATFEED_TARGET_PID ? "pid" : "cgroup";
}

/* A pid target must be a process, not one of its threads. */
static int check_tgid(__u64 pid, char *why, size_t len)
{
	char path[64], line[256];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%llu/status",
		 (unsigned long long)pid);
	f = fopen(path, "r");
	if (!f) {
		snprintf(why, len, "no process with pid %llu",
			 (unsigned long long)pid);
		return SF_EXIT_TARGET;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	if (tgid != (long)pid) {
		snprintf(why, len, "%llu is a thread of process %ld; watch %ld",
			 (unsigned long long)pid, tgid, tgid);
		return SF_EXIT_USAGE;
	}
	return SF_EXIT_OK;
}

/*
 * A free slot for a new target, freeing the slot of one whose process exited
 * when there is no other: such a target keeps its final windows readable
 * only while there is room.  *t is the slot's old entry (its gen counts on).
 */
static int pick_slot(const struct sf_pins *p, struct satfeed_target *t,
		     char *why, size_t len)
{
	int gone_slot = -1, err;

	for (__u32 i = 0; i < p->info.max_targets; i++) {
		err = sf_target_read(p, i, t);
		if (err) {
			snprintf(why, len, "cannot read targets: %s",
				 strerror(-err));
			return -SF_EXIT_ERROR;
		}
		if (t->kind == SATFEED_TARGET_FREE)
			return i;
		if (gone_slot < 0 && sf_target_gone(t))
			gone_slot = i;
	}
	if (gone_slot < 0) {
		snprintf(why, len, "the target table is full (%u targets); remove one first",
			 p->info.max_targets);
		return -SF_EXIT_FULL;
	}
	err = sf_target_read(p, gone_slot, t);
	if (!err)
		err = free_slot(p, gone_slot, t);
	if (err) {
		snprintf(why, len, "cannot free slot %d: %s", gone_slot,
			 strerror(-err));
		return -SF_EXIT_ERROR;
	}
	return gone_slot;
}

static void target_fill(struct satfeed_target *t,
			const struct sf_selector *sel, __u32 gen,
			__u32 sc_mask)
{
	*t = (struct satfeed_target){
		.kind = sel->kind,
		.id = sel->id,
		.gen = gen,
		.sc_mask = sc_mask,
		.added_ns = sf_now_mono_ns(),
	};
	if (sel->kind == SATFEED_TARGET_PID) {
		sf_read_comm(sel->id, t->comm);
	} else {
		snprintf(t->path, sizeof(t->path), "%s", sel->path);
		t->level = sel->level;
	}
}

static int index_insert(const struct sf_pins *p, const struct sf_selector *sel,
			const struct satfeed_index *ix)
{
	__u64 key64 = sel->id;
	__u32 key32 = sel->id;

	if (sel->kind == SATFEED_TARGET_PID)
		return bpf_map_update_elem(p->pid_index_fd, &key32, ix,
					   BPF_NOEXIST) ? -errno : 0;
	return bpf_map_update_elem(p->cgrp_index_fd, &key64, ix,
				   BPF_NOEXIST) ? -errno : 0;
}

int sf_target_add(const struct sf_pins *p, const struct sf_selector *sel,
		  __u32 sc_mask, int *slot_out, char *why, size_t len)
{
	struct satfeed_index ix;
	struct satfeed_target t;
	int lockfd, slot, err;
	__u32 key;

	if (sel->kind == SATFEED_TARGET_PID) {
		err = check_tgid(sel->id, why, len);
		if (err)
			return err;
	}
	lockfd = lock_if_rooted(p, why, len);
	if (lockfd < 0 && p->root[0])
		return SF_EXIT_ERROR;
	slot = sf_target_find(p, sel, &t);
	if (slot >= 0 && sf_target_gone(&t)) {
		/* a pid that exited and came back: a new process, a new slot */
		err = free_slot(p, slot, &t);
		if (err) {
			snprintf(why, len, "cannot free the slot of exited pid %llu: %s",
				 (unsigned long long)sel->id, strerror(-err));
			err = SF_EXIT_ERROR;
			goto unlock;
		}
	} else if (slot >= 0) {
		snprintf(why, len, "%s %llu is already watched",
			 kind_name(sel->kind), (unsigned long long)sel->id);
		err = SF_EXIT_EXISTS;
		goto unlock;
	}
	slot = pick_slot(p, &t, why, len);
	if (slot < 0) {
		err = -slot;
		goto unlock;
	}
	target_fill(&t, sel, t.gen + 1, sc_mask);
	/* fresh streams for the new generation, written under their locks */
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		err = sf_stream_reset(p, slot, s, t.gen);
		if (err) {
			snprintf(why, len, "cannot reset streams: %s",
				 strerror(-err));
			err = SF_EXIT_ERROR;
			goto unlock;
		}
	}
	key = slot;
	if (bpf_map_update_elem(p->targets_fd, &key, &t, 0)) {
		snprintf(why, len, "cannot write target: %s", strerror(errno));
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	err = sf_config_rebuild(p);
	if (err == -E2BIG) {
		snprintf(why, len, "cgroup targets may sit at %d distinct depths at most",
			 SATFEED_MAX_CGROUP_LEVELS);
		err = SF_EXIT_USAGE;
		goto release_slot;
	} else if (err) {
		snprintf(why, len, "cannot write the config: %s",
			 strerror(-err));
		err = SF_EXIT_ERROR;
		goto release_slot;
	}
	ix = (struct satfeed_index){ .slot = slot, .gen = t.gen,
				     .sc_mask = sc_mask };
	err = index_insert(p, sel, &ix);
	if (err) {
		snprintf(why, len, "cannot index the target: %s",
			 strerror(-err));
		err = SF_EXIT_ERROR;
		goto release_slot;
	}
	/* it may have exited before the index entry could see its exit */
	if (sel->kind == SATFEED_TARGET_PID && !sf_pid_alive(sel->id)) {
		index_delete(p, sel->kind, sel->id);
		snprintf(why, len, "process %llu exited while being added",
			 (unsigned long long)sel->id);
		err = SF_EXIT_TARGET;
		goto release_slot;
	}
	if (slot_out)
		*slot_out = slot;
	unlock(lockfd);
	return SF_EXIT_OK;
release_slot:
	key = slot;
	t.kind = SATFEED_TARGET_FREE;
	bpf_map_update_elem(p->targets_fd, &key, &t, 0);
	sf_config_rebuild(p);
unlock:
	unlock(lockfd);
	return err;
}

int sf_target_remove(const struct sf_pins *p, const struct sf_selector *sel,
		     int *removed, char *why, size_t len)
{
	struct satfeed_target t;
	int lockfd, slot, err = 0, n = 0;

	*removed = 0;
	lockfd = lock_if_rooted(p, why, len);
	if (lockfd < 0 && p->root[0])
		return SF_EXIT_ERROR;
	if (sel->kind == SATFEED_TARGET_FREE) {
		for (__u32 i = 0; i < p->info.max_targets; i++) {
			if (sf_target_read(p, i, &t) ||
			    t.kind == SATFEED_TARGET_FREE)
				continue;
			err = free_slot(p, i, &t) ?: err;
			n++;
		}
	} else {
		slot = sf_target_find(p, sel, &t);
		if (slot < 0) {
			snprintf(why, len, "%s %llu is not watched",
				 kind_name(sel->kind),
				 (unsigned long long)sel->id);
			unlock(lockfd);
			return SF_EXIT_TARGET;
		}
		err = free_slot(p, slot, &t);
		n = 1;
	}
	err = sf_config_rebuild(p) ?: err;
	unlock(lockfd);
	*removed = n;
	if (!err)
		return SF_EXIT_OK;
	snprintf(why, len, "cannot remove: %s", strerror(-err));
	return SF_EXIT_ERROR;
}
