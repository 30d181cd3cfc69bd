// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_pins.c - open satfeed's pinned maps, refuse any whose shape is not the
 * contract's, and read targets and streams.
 *
 * Pins are found by name, and anyone who can write to the pin root can put
 * any map there.  A lookup copies the map's whole value_size into the
 * caller's buffer, so a map of the right name but a larger value would
 * overrun a struct satfeed_info on the stack: the shape is checked first.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/file.h>
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_root.h"

struct pin_shape {
	const char *name;
	size_t fd_off;		/* where its fd lives in struct sf_pins */
	__u32 type;
	__u32 key_size;
	__u32 value_size;
	__u32 per_target;	/* entries per target slot; 0: exactly one */
};

#define FD_OFF(field) offsetof(struct sf_pins, field)

/* sf_info first: its content sizes the others. */
static const struct pin_shape shapes[] = {
	{ SATFEED_PIN_INFO, FD_OFF(info_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_info), 0 },
	{ SATFEED_PIN_CONFIG, FD_OFF(config_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_config), 0 },
	{ SATFEED_PIN_TARGETS, FD_OFF(targets_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_target), 1 },
	{ SATFEED_PIN_STREAMS, FD_OFF(streams_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_stream), SATFEED_NR_STREAMS },
	{ SATFEED_PIN_PID_INDEX, FD_OFF(pid_index_fd), BPF_MAP_TYPE_HASH,
	  sizeof(__u32), sizeof(struct satfeed_index), 1 },
	{ SATFEED_PIN_CGRP_INDEX, FD_OFF(cgrp_index_fd), BPF_MAP_TYPE_HASH,
	  sizeof(__u64), sizeof(struct satfeed_index), 1 },
	{ SATFEED_PIN_VERDICT, FD_OFF(verdict_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_verdict), 1 },
	{ SATFEED_PIN_DISCOVER, FD_OFF(discover_fd), BPF_MAP_TYPE_HASH,
	  sizeof(__u32), sizeof(struct satfeed_discover), 1 },
	{ SATFEED_PIN_RULES, FD_OFF(rules_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_rules_slot), 1 },
	{ SATFEED_PIN_RESPONSES, FD_OFF(responses_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_stream), 1 },
	{ SATFEED_PIN_SERVICE, FD_OFF(service_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_stream), 1 },
	{ SATFEED_PIN_SVC_HIST, FD_OFF(svc_hist_fd), BPF_MAP_TYPE_ARRAY,
	  sizeof(__u32), sizeof(struct satfeed_svc_hist), 1 },
};

#define NR_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

static int *shape_fd(struct sf_pins *p, const struct pin_shape *s)
{
	return (int *)((char *)p + s->fd_off);
}

static const char *map_type_name(__u32 type)
{
	const char *s = libbpf_bpf_map_type_str(type);

	return s ? s : "unknown";
}

/* What differs between map fd and shape s; 0 if nothing. */
static int shape_diff(int fd, const struct pin_shape *s, __u32 max_targets,
		      char *what, size_t len)
{
	struct bpf_map_info mi = {};
	__u32 ml = sizeof(mi), entries;

	if (bpf_map_get_info_by_fd(fd, &mi, &ml)) {
		snprintf(what, len, "not a BPF map (%s)", strerror(errno));
		return -1;
	}
	entries = s->per_target ? s->per_target * max_targets : 1;
	if (mi.type != s->type)
		snprintf(what, len, "map type %s, expected %s",
			 map_type_name(mi.type), map_type_name(s->type));
	else if (mi.key_size != s->key_size)
		snprintf(what, len, "key size %u, expected %u", mi.key_size,
			 s->key_size);
	else if (mi.value_size != s->value_size)
		snprintf(what, len, "value size %u, expected %u",
			 mi.value_size, s->value_size);
	else if (mi.max_entries != entries)
		snprintf(what, len, "max_entries %u, expected %u",
			 mi.max_entries, entries);
	else
		return 0;
	return -1;
}

static const struct pin_shape *find_shape(const char *name)
{
	for (size_t i = 0; i < NR_SHAPES; i++)
		if (!strcmp(shapes[i].name, name))
			return &shapes[i];
	return NULL;
}

int sf_pins_fd(const struct sf_pins *p, const char *name)
{
	const struct pin_shape *s = find_shape(name);

	return s ? *(const int *)((const char *)p + s->fd_off) : -ENOENT;
}

int sf_pin_check(int fd, const char *name, __u32 max_targets, char *why,
		 size_t len)
{
	const struct pin_shape *s = find_shape(name);
	char what[128];

	if (!s) {
		snprintf(why, len, "%s: not a map of the satfeed contract",
			 name);
		return -1;
	}
	if (!shape_diff(fd, s, max_targets, what, sizeof(what)))
		return 0;
	snprintf(why, len, "%s: %s", name, what);
	return -1;
}

static void pins_reset(struct sf_pins *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < NR_SHAPES; i++)
		*shape_fd(p, &shapes[i]) = -1;
	p->lock_fd = -1;
}

/* Open pin s under p->root and check its shape.  Returns an enum sf_exit. */
static int open_pin(struct sf_pins *p, const struct pin_shape *s,
		    __u32 max_targets, char *why, size_t len)
{
	char path[512], what[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", p->root, s->name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM) {
			snprintf(why, len, "%s needs root (CAP_BPF and CAP_SYS_ADMIN): cannot open %s: %s",
				 sf_prog, path, strerror(errno));
			return SF_EXIT_PERM;
		}
		if (errno == ENOENT) {
			char hint[300];

			snprintf(why, len, "satfeed is not loaded (no %s; run '%s')",
				 path, sf_load_hint(p->root, hint,
						    sizeof(hint)));
			return SF_EXIT_NOT_LOADED;
		}
		snprintf(why, len, "cannot open %s: %s", path,
			 strerror(errno));
		return SF_EXIT_ERROR;
	}
	*shape_fd(p, s) = fd;
	if (!shape_diff(fd, s, max_targets, what, sizeof(what)))
		return SF_EXIT_OK;
	snprintf(why, len, "pin %s does not match the satfeed contract (%s); refusing to read it",
		 path, what);
	return SF_EXIT_ABI;
}

int sf_pins_open(struct sf_pins *p, const char *root, char *why, size_t len)
{
	char parent[256], *slash;
	__u32 zero = 0;
	int err, fs;

	pins_reset(p);
	snprintf(p->root, sizeof(p->root), "%s", root);

	snprintf(parent, sizeof(parent), "%s", root);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	fs = sf_is_bpffs(parent);
	if (fs == -EACCES || fs == -EPERM) {
		snprintf(why, len, "%s needs root (CAP_BPF and CAP_SYS_ADMIN): cannot read %s: %s",
			 sf_prog, parent, strerror(-fs));
		return SF_EXIT_PERM;
	}
	if (fs <= 0) {
		char hint[300];

		snprintf(why, len, "satfeed is not loaded (no bpffs mounted at %s; run '%s')",
			 parent, sf_load_hint(root, hint, sizeof(hint)));
		return SF_EXIT_NOT_LOADED;
	}
	err = open_pin(p, &shapes[0], 0, why, len);
	if (err)
		goto close_pins;
	if (bpf_map_lookup_elem(p->info_fd, &zero, &p->info)) {
		snprintf(why, len, "cannot read %s/%s: %s", root,
			 SATFEED_PIN_INFO, strerror(errno));
		err = errno == EPERM ? SF_EXIT_PERM : SF_EXIT_ERROR;
		goto close_pins;
	}
	if (p->info.abi_version != SATFEED_ABI_VERSION) {
		snprintf(why, len, "ABI mismatch: the loaded engine speaks ABI %u, this tool ABI %u; use tools from the same build as the loader",
			 p->info.abi_version, SATFEED_ABI_VERSION);
		err = SF_EXIT_ABI;
		goto close_pins;
	}
	/* a slot number + 1 must fit satfeed_config.pid_slot's bytes */
	if (!p->info.max_targets || p->info.max_targets > SATFEED_MAX_TARGETS) {
		snprintf(why, len, "pin %s/%s does not match the satfeed contract (max_targets %u, expected 1 to %u); refusing to use it",
			 root, SATFEED_PIN_INFO, p->info.max_targets,
			 SATFEED_MAX_TARGETS);
		err = SF_EXIT_ABI;
		goto close_pins;
	}
	for (size_t i = 1; i < NR_SHAPES; i++) {
		err = open_pin(p, &shapes[i], p->info.max_targets, why, len);
		if (err)
			goto close_pins;
	}
	return SF_EXIT_OK;
close_pins:
	sf_pins_close(p);
	return err;
}

int sf_pins_open_locked(struct sf_pins *p, const char *root, int how,
			char *why, size_t len)
{
	int fd, err;

	fd = sf_root_lock_why(root, how, why, len);
	if (fd < 0) {
		pins_reset(p);
		return sf_lock_exit(fd);
	}
	err = sf_pins_open(p, root, why, len);
	if (err) {
		close(fd);
		return err;
	}
	p->lock_fd = fd;
	p->lock_how = how;
	return SF_EXIT_OK;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info mi = {};
	__u32 ml = sizeof(mi);

	return bpf_map_get_info_by_fd(fd, &mi, &ml) ? 0 : mi.id;
}

/* Is every pin p opened of the engine pinned at its root now? */
static bool pins_whole(const struct sf_pins *p)
{
	char path[512];
	__u32 id;
	int fd;

	/* sf_info is opened first: a load or unload since then changed it */
	snprintf(path, sizeof(path), "%s/%s", p->root, SATFEED_PIN_INFO);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	id = map_id(fd);
	close(fd);
	return id && id == map_id(p->info_fd);
}

int sf_pins_open_snapshot(struct sf_pins *p, const char *root, char *why,
			  size_t len)
{
	int err = SF_EXIT_OK;

	for (int i = 0; i < 8; i++) {
		err = sf_pins_open(p, root, why, len);
		if (err || pins_whole(p))
			return err;
		sf_pins_close(p);
		snprintf(why, len, "the engine at %s was replaced while being opened, 8 times in a row",
			 root);
		err = SF_EXIT_ERROR;
	}
	pins_reset(p);
	return err;
}

bool sf_pins_current(const struct sf_pins *p)
{
	char path[512];
	__u32 id;
	int fd;

	if (!p->root[0])
		return true;
	snprintf(path, sizeof(path), "%s/%s", p->root, SATFEED_PIN_TARGETS);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	id = map_id(fd);
	close(fd);
	return id && id == map_id(p->targets_fd);
}

int sf_pins_from_object(struct sf_pins *p, struct bpf_object *obj, char *why,
			size_t len)
{
	struct bpf_map *targets;

	pins_reset(p);
	targets = bpf_object__find_map_by_name(obj, SATFEED_PIN_TARGETS);
	if (!targets) {
		snprintf(why, len, "the object has no map %s",
			 SATFEED_PIN_TARGETS);
		return SF_EXIT_ERROR;
	}
	p->info.max_targets = bpf_map__max_entries(targets);
	if (!p->info.max_targets || p->info.max_targets > SATFEED_MAX_TARGETS) {
		snprintf(why, len, "map %s does not match the satfeed contract (max_entries %u, expected 1 to %u)",
			 SATFEED_PIN_TARGETS, p->info.max_targets,
			 SATFEED_MAX_TARGETS);
		return SF_EXIT_ABI;
	}
	for (size_t i = 0; i < NR_SHAPES; i++) {
		struct bpf_map *m;
		char what[128];
		int fd;

		m = bpf_object__find_map_by_name(obj, shapes[i].name);
		fd = m ? bpf_map__fd(m) : -1;
		if (fd < 0) {
			snprintf(why, len, "the object has no loaded map %s",
				 shapes[i].name);
			return SF_EXIT_ERROR;
		}
		if (shape_diff(fd, &shapes[i], p->info.max_targets, what,
			       sizeof(what))) {
			snprintf(why, len, "map %s does not match the satfeed contract (%s)",
				 shapes[i].name, what);
			return SF_EXIT_ABI;
		}
		*shape_fd(p, &shapes[i]) = fd;
	}
	return SF_EXIT_OK;
}

void sf_pins_close(struct sf_pins *p)
{
	for (size_t i = 0; i < NR_SHAPES; i++) {
		int *fd = shape_fd(p, &shapes[i]);

		if (p->root[0] && *fd >= 0)
			close(*fd);
		*fd = -1;
	}
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	p->lock_fd = -1;
}

int sf_target_read(const struct sf_pins *p, __u32 slot,
		   struct satfeed_target *t)
{
	return bpf_map_lookup_elem(p->targets_fd, &slot, t) ? -errno : 0;
}

/* The map and key of a target's stream (SATFEED_STREAM_RESP included). */
static int stream_fd_key(const struct sf_pins *p, __u32 slot, __u32 stream,
			 __u32 *key)
{
	if (stream == SATFEED_STREAM_RESP || stream == SATFEED_STREAM_SVC) {
		*key = slot;
		return stream == SATFEED_STREAM_RESP ? p->responses_fd :
						       p->service_fd;
	}
	*key = satfeed_stream_key(slot, stream);
	return p->streams_fd;
}

int sf_stream_read(const struct sf_pins *p, __u32 slot, __u32 stream,
		   struct satfeed_stream *s)
{
	__u32 key;
	int fd = stream_fd_key(p, slot, stream, &key);

	return bpf_map_lookup_elem_flags(fd, &key, s, BPF_F_LOCK) ?
		       -errno : 0;
}

int sf_verdict_read(const struct sf_pins *p, __u32 slot,
		    struct satfeed_verdict *v)
{
	return bpf_map_lookup_elem_flags(p->verdict_fd, &slot, v, BPF_F_LOCK) ?
		       -errno : 0;
}

int sf_verdict_reset(const struct sf_pins *p, __u32 slot, __u32 gen)
{
	struct satfeed_verdict v = { .gen = gen };

	return bpf_map_update_elem(p->verdict_fd, &slot, &v, BPF_F_LOCK) ?
		       -errno : 0;
}

/* One pass over sf_targets into tab.  0 or -errno. */
static int target_table_pass(const struct sf_pins *p,
			     struct sf_target_table *tab)
{
	tab->nr = p->info.max_targets;
	if (tab->nr > SATFEED_MAX_TARGETS)
		return -E2BIG;
	for (__u32 slot = 0; slot < tab->nr; slot++) {
		int err = sf_target_read(p, slot, &tab->t[slot]);

		if (err)
			return err;
	}
	return 0;
}

static bool target_table_same(const struct sf_target_table *a,
			      const struct sf_target_table *b)
{
	for (__u32 slot = 0; slot < a->nr; slot++)
		if (a->t[slot].kind != b->t[slot].kind ||
		    a->t[slot].id != b->t[slot].id ||
		    a->t[slot].gen != b->t[slot].gen)
			return false;
	return true;
}

/* lock-free double reads before the table is read under LOCK_SH */
#define TARGET_TABLE_TRIES 4

int sf_target_table_read(const struct sf_pins *p, struct sf_target_table *tab,
			 char *why, size_t len)
{
	struct sf_target_table *prev;
	int err, lock_fd;

	if (p->lock_fd >= 0 || !p->root[0]) {
		err = target_table_pass(p, tab);
		goto out;
	}
	prev = malloc(sizeof(*prev));
	if (!prev) {
		err = -ENOMEM;
		goto out;
	}
	err = target_table_pass(p, prev);
	for (int i = 0; !err && i < TARGET_TABLE_TRIES; i++) {
		err = target_table_pass(p, tab);
		if (err || target_table_same(prev, tab))
			goto free_prev;
		memcpy(prev, tab, sizeof(*tab));
	}
	if (err)
		goto free_prev;
	/* a writer kept moving targets: wait for it once */
	lock_fd = sf_root_lock_why(p->root, LOCK_SH, why, len);
	if (lock_fd < 0) {
		free(prev);
		return lock_fd;	/* why says what held it */
	}
	err = target_table_pass(p, tab);
	close(lock_fd);
free_prev:
	free(prev);
out:
	if (err)
		snprintf(why, len, "cannot read sf_targets: %s",
			 strerror(-err));
	return err;
}

int sf_target_view_next(const struct sf_pins *p,
			const struct sf_target_table *tab, __u32 *slot,
			struct sf_target_view *v)
{
	for (; *slot < tab->nr; (*slot)++) {
		bool whole = true;
		int err;

		v->t = tab->t[*slot];
		if (v->t.kind == SATFEED_TARGET_FREE)
			continue;
		for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
			err = sf_stream_read(p, *slot, s, &v->st[s]);
			if (err)
				return err;
			whole = whole && v->st[s].gen == v->t.gen;
		}
		if (!whole)	/* reused since tab was read */
			continue;
		err = sf_verdict_read(p, *slot, &v->verdict);
		if (err)
			return err;
		if (v->verdict.gen != v->t.gen)
			memset(&v->verdict, 0, sizeof(v->verdict));
		err = sf_stream_read(p, *slot, SATFEED_STREAM_RESP, &v->resp) ?:
		      sf_stream_read(p, *slot, SATFEED_STREAM_SVC, &v->svc) ?:
		      sf_svc_hist_read(p, *slot, &v->hist);
		if (err)
			return err;
		if (v->resp.gen != v->t.gen)
			memset(&v->resp, 0, sizeof(v->resp));
		if (v->svc.gen != v->t.gen)
			memset(&v->svc, 0, sizeof(v->svc));
		if (v->hist.gen != v->t.gen)
			memset(&v->hist, 0, sizeof(v->hist));
		v->slot = *slot;
		return 1;
	}
	return 0;
}

int sf_stream_reset(const struct sf_pins *p, __u32 slot, __u32 stream,
		    __u32 gen)
{
	struct satfeed_stream s = { .gen = gen };
	__u32 key;
	int fd = stream_fd_key(p, slot, stream, &key);

	return bpf_map_update_elem(fd, &key, &s, BPF_F_LOCK) ? -errno : 0;
}

int sf_svc_hist_read(const struct sf_pins *p, __u32 slot,
		     struct satfeed_svc_hist *h)
{
	return bpf_map_lookup_elem(p->svc_hist_fd, &slot, h) ? -errno : 0;
}

int sf_svc_hist_reset(const struct sf_pins *p, __u32 slot, __u32 gen)
{
	struct satfeed_svc_hist h = { .gen = gen };

	return bpf_map_update_elem(p->svc_hist_fd, &slot, &h, 0) ? -errno : 0;
}

int sf_discover_read(const struct sf_pins *p, __u32 slot,
		     struct satfeed_discover *d)
{
	return bpf_map_lookup_elem(p->discover_fd, &slot, d) ? -errno : 0;
}

int sf_rules_read(const struct sf_pins *p, __u32 slot, __u32 gen,
		  struct satfeed_sat_rules *r)
{
	struct satfeed_rules_slot rs;

	memset(r, 0, sizeof(*r));
	if (bpf_map_lookup_elem(p->rules_fd, &slot, &rs))
		return -errno;
	if (rs.gen == gen)
		*r = rs.rules;
	return 0;
}

int sf_rules_write(const struct sf_pins *p, __u32 slot, __u32 gen,
		   const struct satfeed_sat_rules *r)
{
	struct satfeed_rules_slot rs = { .gen = gen };

	if (r)
		rs.rules = *r;
	return bpf_map_update_elem(p->rules_fd, &slot, &rs, 0) ? -errno : 0;
}

int sf_discover_reset(const struct sf_pins *p, __u32 slot, __u32 gen)
{
	/* the owner: a discovery that outlives it was killed (sf_table.c) */
	struct satfeed_discover d = { .gen = gen, .owner = getpid(),
				      .start_ns = sf_now_mono_ns() };

	return bpf_map_update_elem(p->discover_fd, &slot, &d, 0) ? -errno : 0;
}

int sf_discover_drop(const struct sf_pins *p, __u32 slot)
{
	if (bpf_map_delete_elem(p->discover_fd, &slot) && errno != ENOENT)
		return -errno;
	return 0;
}
