// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeed.c - satfeed as users load it: satfeed-loader and satfeedctl under a
 * private root, its pinned programs, the calls it counted, its map memory.
 */
#include "sfbench.h"

pid_t target_pids[MAX_TARGETS];
int nr_targets;

/*
 * The pinned program name of a hook: sf_sys_exit, or sf_x_<name>.  An
 * understudy (optional) is opened only when the load pinned it.
 */
static int satfeed_open_prog(struct progset *ps, const char *name,
			     bool optional)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", o.root, SATFEED_PIN_PROGS,
		 name);
	if (optional && access(path, F_OK))
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		msg("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	ps->fd[ps->n++] = fd;
	return 0;
}

int satfeed_load(void)
{
	const char *load[] = { o.loader, "--bpffs", o.root, "--attach",
			       attach_name[o.attach], "--understudy",
			       o.understudy ? o.understudy : "auto",
			       o.no_responses ? "--no-responses" : "load",
			       o.no_responses ? "load" : NULL, NULL };
	char name[64], pid[16];

	if (run_cmd(load))
		return -1;
	satfeed_loaded = true;
	for (int i = 0; i < nr_targets; i++) {
		const char *add[] = { o.ctl, "--bpffs", o.root, "add", "--pid",
				      pid, NULL };

		snprintf(pid, sizeof(pid), "%d", target_pids[i]);
		if (run_cmd(add))
			return -1;
	}
	for (int p = 0; p < NR_PR; p++) {
		const char *const *hooks, *const *understudies;
		int nh;

		if (o.attach == AT_TP_BTF) {
			snprintf(name, sizeof(name), "sf_sys_%s", pr_name[p]);
			if (satfeed_open_prog(&psets[CFG_SATFEED][p], name,
					      false))
				return -1;
			strcat(name, "_u");
			if (satfeed_open_prog(&psets[CFG_SATFEED][p], name,
					      true))
				return -1;
			continue;
		}
		hooks = p == PR_ENTER ? fentry_progs : fexit_progs;
		understudies = p == PR_ENTER ? fentry_understudies :
					       fexit_understudies;
		nh = p == PR_ENTER ? (int)ARRAY_SIZE(fentry_progs) :
				     (int)ARRAY_SIZE(fexit_progs);
		for (int i = 0; i < nh; i++) {
			if (satfeed_open_prog(&psets[CFG_SATFEED][p],
					      hooks[i], false) ||
			    satfeed_open_prog(&psets[CFG_SATFEED][p],
					      understudies[i], true))
				return -1;
		}
	}
	return 0;
}

void satfeed_close_fds(void)
{
	for (int p = 0; p < NR_PR; p++)
		progset_close(&psets[CFG_SATFEED][p]);
}

/* calls counted by satfeed on stream st of the traced worker, or -1 */
long long satfeed_calls(int st)
{
	struct sf_selector sel = { .kind = SATFEED_TARGET_PID, .id = W_T.pid };
	struct satfeed_stream *s = calloc(1, sizeof(*s));
	long long calls = -1;
	struct sf_pins pins;
	char why[256];
	int slot;

	if (s && !sf_pins_open(&pins, o.root, why, sizeof(why))) {
		slot = sf_target_find(&pins, &sel, NULL);
		if (slot >= 0 && !sf_stream_read(&pins, slot, st, s))
			calls = s->calls;
		sf_pins_close(&pins);
	}
	free(s);
	return calls;
}

/* targets in the pinned tgid index (to show the 64 are really there) */
int satfeed_nr_indexed(void)
{
	char path[256];
	__u32 key, next;
	int fd, n = 0;
	void *prev = NULL;

	snprintf(path, sizeof(path), "%s/%s", o.root, SATFEED_PIN_PID_INDEX);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	while (!bpf_map_get_next_key(fd, prev, &next) && n < 1000) {
		key = next;
		prev = &key;
		n++;
	}
	close(fd);
	return n;
}

/* ---- map memory ---- */

struct mapmem maps[MAX_MAPS];
int nr_maps;

static long long fd_memlock(int fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void add_map_id(__u32 id)
{
	struct bpf_map_info mi = {};
	__u32 ml = sizeof(mi);
	int fd;

	for (int i = 0; i < nr_maps; i++)
		if (maps[i].id == id)
			return;
	if (nr_maps >= MAX_MAPS)
		return;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return;
	if (!bpf_map_get_info_by_fd(fd, &mi, &ml)) {
		struct mapmem *m = &maps[nr_maps++];

		m->id = id;
		snprintf(m->name, sizeof(m->name), "%s", mi.name);
		m->type = mi.type;
		m->max_entries = mi.max_entries;
		m->value_size = mi.value_size;
		m->memlock = fd_memlock(fd);
	}
	close(fd);
}

/* Every map of the load: those its pinned programs use (.rodata, .bss
 * included) and every pinned map.  Returns the sum of memlock, or -1. */
long long satfeed_memory(void)
{
	char dir[256], path[512];
	struct dirent *de;
	long long sum = 0;
	DIR *d;

	nr_maps = 0;
	snprintf(dir, sizeof(dir), "%s/%s", o.root, SATFEED_PIN_PROGS);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct bpf_prog_info pi = {};
		__u32 pl = sizeof(pi), ids[MAX_MAPS];
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		pi.nr_map_ids = MAX_MAPS;
		pi.map_ids = (__u64)(unsigned long)ids;
		if (!bpf_prog_get_info_by_fd(fd, &pi, &pl))
			for (__u32 i = 0; i < pi.nr_map_ids && i < MAX_MAPS;
			     i++)
				add_map_id(ids[i]);
		close(fd);
	}
	closedir(d);
	d = opendir(o.root);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct bpf_map_info mi = {};
		__u32 ml = sizeof(mi);
		int fd;

		if (de->d_name[0] == '.' || de->d_type == DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", o.root, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!bpf_map_get_info_by_fd(fd, &mi, &ml))
			add_map_id(mi.id);
		close(fd);
	}
	closedir(d);
	for (int i = 0; i < nr_maps; i++) {
		if (maps[i].memlock < 0)
			return -1;
		sum += maps[i].memlock;
	}
	return sum;
}
