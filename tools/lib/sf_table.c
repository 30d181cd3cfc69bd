// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_table.c - the target table's derived entries (sf_config, the index)
 * and its invariants: find and repair target-table states that no
 * completed change leaves, what remains of a change that was killed
 * (sf_table.h).  The adds and removals that write them are sf_target.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "sf_common.h"
#include "sf_proc.h"
#include "sf_selector.h"
#include "sf_table.h"

int sf_config_build(const struct satfeed_target *t, __u32 n,
		    struct satfeed_config *cfg)
{
	bool levels[SF_CGROUP_LEVELS] = {};
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
			levels[t[slot].level % SF_CGROUP_LEVELS] = true;
		}
	}
	/* deepest first */
	for (int l = SF_CGROUP_LEVELS - 1; l >= 0; l--) {
		if (!levels[l])
			continue;
		if (nr == SATFEED_MAX_CGROUP_LEVELS)
			return -E2BIG;
		cfg->cgroup_level[nr++] = l;
	}
	cfg->nr_cgroup_levels = nr;
	return 0;
}

void sf_table_read_targets(const struct sf_pins *p, struct satfeed_target *t)
{
	for (__u32 slot = 0; slot < p->info.max_targets; slot++)
		if (sf_target_read(p, slot, &t[slot]))
			t[slot].kind = SATFEED_TARGET_FREE;
}

int sf_config_write(const struct sf_pins *p, const struct satfeed_target *t)
{
	struct satfeed_config cfg;
	__u32 zero = 0;
	int err;

	err = sf_config_build(t, p->info.max_targets, &cfg);
	if (err)
		return err;
	return bpf_map_update_elem(p->config_fd, &zero, &cfg, 0) ? -errno : 0;
}

int sf_config_rebuild(const struct sf_pins *p)
{
	struct satfeed_target t[SATFEED_MAX_TARGETS] = {};

	sf_table_read_targets(p, t);
	return sf_config_write(p, t);
}

int sf_index_delete(const struct sf_pins *p, __u32 kind, __u64 id)
{
	__u64 key64 = id;
	__u32 key32 = id;
	int err;

	if (kind == SATFEED_TARGET_PID)
		err = bpf_map_delete_elem(p->pid_index_fd, &key32);
	else
		err = bpf_map_delete_elem(p->cgrp_index_fd, &key64);
	return err ? -errno : 0;
}

struct check {
	const struct sf_pins *p;
	bool repair;
	FILE *out;
	int found;
	int repaired;
	int err;
};

/* One problem: say what it is and, when repairing, what err made of it. */
static void problem(struct check *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct check *c, int err, const char *fmt, ...)
{
	va_list ap;

	c->found++;
	if (c->repair && !err)
		c->repaired++;
	if (c->repair && err)
		c->err = c->err ?: err;
	if (!c->out)
		return;
	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	if (c->repair)
		fprintf(c->out, err ? "; not repaired: %s\n" : "; repaired\n",
			strerror(-err));
	else
		fputc('\n', c->out);
}

static int index_lookup(const struct sf_pins *p, __u32 kind, __u64 id,
			struct satfeed_index *ix)
{
	__u64 key64 = id;
	__u32 key32 = id;

	if (kind == SATFEED_TARGET_PID)
		return bpf_map_lookup_elem(p->pid_index_fd, &key32, ix);
	return bpf_map_lookup_elem(p->cgrp_index_fd, &key64, ix);
}

static bool pid_exited(__u64 pid)
{
	int fd = sf_proc_open(pid);
	bool exited;

	if (fd < 0)
		return fd == -ESRCH || fd == -EINVAL;
	exited = sf_proc_exiting(fd, pid);
	close(fd);
	return exited;
}

/*
 * Did process pid start after mono_ns (CLOCK_MONOTONIC)?  Then it is not
 * the process that was there at mono_ns, but one that reused its pid.
 * /proc gives the start in clock ticks of CLOCK_BOOTTIME, which runs ahead
 * of CLOCK_MONOTONIC by the time suspended: at most by as much as now, so
 * a start after mono_ns plus today's lead is surely after mono_ns.  False
 * when it cannot tell.
 */
static bool started_after(__u64 pid, __u64 mono_ns)
{
	unsigned long long ticks;
	struct timespec boot, mono;
	char path[64], buf[1024], *p;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%llu/stat", (unsigned long long)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the comm may hold spaces and parentheses: fields follow the last ')' */
	p = strrchr(buf, ')');
	if (!p || hz <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u"
		   " %*d %*d %*d %*d %*d %*d %llu", &ticks) != 1)
		return false;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	mono_ns += (boot.tv_sec - mono.tv_sec) * 1000000000ULL +
		   boot.tv_nsec - mono.tv_nsec;
	return ticks * (1000000000ULL / hz) > mono_ns;
}

/*
 * Is the satfeedctl that runs the discovery of slot gone?  It removes its
 * target on every way out but SIGKILL.  Its pid may have been reused: a
 * process that started after the discovery began is not it.  An owner not
 * known (0) is never taken for gone.
 */
static bool discovery_orphaned(const struct sf_pins *p, __u32 slot,
			       const struct satfeed_target *t, __u32 *owner)
{
	struct satfeed_discover d;
	bool gone;
	int fd;

	*owner = 0;
	if (!(t->sc_mask & SATFEED_SC_DISCOVER) ||
	    sf_discover_read(p, slot, &d) || d.gen != t->gen || !d.owner)
		return false;
	*owner = d.owner;
	fd = sf_proc_open(d.owner);
	if (fd < 0)
		return fd == -ESRCH || fd == -EINVAL;
	gone = sf_proc_exiting(fd, d.owner) ||
	       started_after(d.owner, d.start_ns);
	close(fd);
	return gone;
}

static int write_target(const struct sf_pins *p, __u32 slot,
			const struct satfeed_target *t)
{
	return bpf_map_update_elem(p->targets_fd, &slot, t, 0) ? -errno : 0;
}

/* An active target: indexed, its streams in its generation, still alive. */
static void check_active(struct check *c, __u32 slot, struct satfeed_target *t)
{
	const struct sf_pins *p = c->p;
	const char *kind = t->kind == SATFEED_TARGET_PID ? "pid" : "cgroup";
	unsigned long long id = t->id;
	struct satfeed_index ix;
	struct satfeed_stream st;
	struct satfeed_verdict v;
	__u32 owner;
	int err = 0;

	if (t->kind == SATFEED_TARGET_PID &&
	    index_lookup(p, t->kind, t->id, &ix) &&
	    (pid_exited(t->id) || started_after(t->id, t->added_ns))) {
		/*
		 * The engine unindexes a process when it exits, and marks its
		 * target gone: a target listed active after that had its gone
		 * mark written over (a whole-entry write from an earlier read,
		 * as satfeedctl rules made before the rules had a map of
		 * their own).  Gone is what it is.
		 */
		bool reused = !pid_exited(t->id);

		if (c->repair) {
			t->state = SATFEED_STATE_GONE;
			t->gone_ns = sf_now_mono_ns();
			err = write_target(p, slot, t);
		}
		problem(c, err, "slot %u: pid %llu exited%s, but the target is listed active with no index entry: the engine's gone mark was written over (a write of the whole target from an earlier read, racing the exit)",
			slot, id, reused ? " and its pid now belongs to a process started after the target was added" : "");
		return;
	}
	if (index_lookup(p, t->kind, t->id, &ix) || ix.slot != slot ||
	    ix.gen != t->gen || ix.sc_mask != t->sc_mask) {
		/* a change killed between its first and last write */
		if (c->repair) {
			t->kind = SATFEED_TARGET_FREE;
			err = write_target(p, slot, t);
		}
		problem(c, err, "slot %u: %s %llu is listed active but has no index entry of its own (left by a killed add or remove)",
			slot, kind, id);
		return;
	}
	if (discovery_orphaned(p, slot, t, &owner)) {
		/* what the killed discover would have removed: all of it */
		if (c->repair) {
			__u32 was = t->kind;

			/* the slot first: then nothing points at it */
			t->kind = SATFEED_TARGET_FREE;
			err = write_target(p, slot, t);
			if (!err) {
				sf_index_delete(p, was, t->id);
				sf_verdict_reset(p, slot, 0);
				err = sf_config_rebuild(p);
			}
		}
		problem(c, err, "slot %u: %s %llu is in discovery, but the satfeedctl that ran it (pid %u) is gone (killed: it removes its target on any other way out)",
			slot, kind, id, owner);
		return;
	}
	if (t->kind == SATFEED_TARGET_PID && pid_exited(t->id)) {
		/* an add killed before it could see the exit the engine missed */
		if (c->repair) {
			t->state = SATFEED_STATE_GONE;
			t->gone_ns = sf_now_mono_ns();
			err = write_target(p, slot, t);
			if (!err)
				sf_index_delete(p, t->kind, t->id);
		}
		problem(c, err, "slot %u: pid %llu has exited but is listed active (its exit was not seen by the engine)",
			slot, id);
		return;
	}
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		if (sf_stream_read(p, slot, s, &st) || st.gen == t->gen)
			continue;
		if (c->repair)
			err = sf_stream_reset(p, slot, s, t->gen);
		problem(c, err, "slot %u: %s %llu: its %s stream is of generation %u, not %u",
			slot, kind, id, sf_stream_names[s], st.gen, t->gen);
	}
	if (!sf_verdict_read(p, slot, &v) && v.gen != t->gen) {
		if (c->repair)
			err = sf_verdict_reset(p, slot, t->gen);
		problem(c, err, "slot %u: %s %llu: its verdict is of generation %u, not %u",
			slot, kind, id, v.gen, t->gen);
	}
}

/* Every entry of one index map belongs to an active target. */
static void check_index(struct check *c, __u32 kind,
			const struct satfeed_target *t)
{
	const struct sf_pins *p = c->p;
	int fd = kind == SATFEED_TARGET_PID ? p->pid_index_fd :
					      p->cgrp_index_fd;
	__u64 keys[SATFEED_MAX_TARGETS * 4];
	union { __u32 k32; __u64 k64; } key, next;
	struct satfeed_index ix;
	void *prev = NULL;
	int n = 0;

	/* collect first: deleting while iterating restarts the walk */
	while (n < (int)(sizeof(keys) / sizeof(keys[0])) &&
	       !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		keys[n++] = kind == SATFEED_TARGET_PID ? key.k32 : key.k64;
	}
	for (int i = 0; i < n; i++) {
		const struct satfeed_target *o;
		int err = 0;

		if (index_lookup(p, kind, keys[i], &ix))
			continue;
		o = ix.slot < p->info.max_targets ? &t[ix.slot] : NULL;
		if (o && o->kind == kind && o->id == keys[i] &&
		    o->gen == ix.gen && o->state == SATFEED_STATE_ACTIVE)
			continue;
		if (c->repair)
			err = sf_index_delete(p, kind, keys[i]);
		problem(c, err, "index entry of %s %llu points at slot %u generation %u, which does not hold it (left by a killed add or remove)",
			kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
			(unsigned long long)keys[i], ix.slot, ix.gen);
	}
}

int sf_table_check(const struct sf_pins *p, bool repair, FILE *out,
		   int *found, int *repaired)
{
	struct satfeed_target t[SATFEED_MAX_TARGETS] = {};
	struct satfeed_config cfg, want;
	struct check c = { .p = p, .repair = repair, .out = out };
	__u32 zero = 0;
	int err = 0;

	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		if (sf_target_read(p, slot, &t[slot])) {
			err = -errno;
			goto count;
		}
		if (t[slot].kind != SATFEED_TARGET_FREE &&
		    t[slot].state == SATFEED_STATE_ACTIVE)
			check_active(&c, slot, &t[slot]);
	}
	check_index(&c, SATFEED_TARGET_PID, t);
	check_index(&c, SATFEED_TARGET_CGROUP, t);
	if (bpf_map_lookup_elem(p->config_fd, &zero, &cfg)) {
		err = -errno;
		goto count;
	}
	if (!sf_config_build(t, p->info.max_targets, &want) &&
	    memcmp(&cfg, &want, sizeof(cfg))) {
		err = 0;
		if (repair && bpf_map_update_elem(p->config_fd, &zero, &want, 0))
			err = -errno;
		problem(&c, err, "%s is not the config its targets make (left by a killed add or remove)",
			SATFEED_PIN_CONFIG);
		err = 0;
	}
count:
	if (found)
		*found = c.found;
	if (repaired)
		*repaired = c.repaired;
	return err ?: c.err;
}
