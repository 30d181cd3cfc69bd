// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * master.c - a process whose child processes do the I/O (nginx's master
 * and its workers, a prefork server, gunicorn): its workers, and whether
 * its cgroup is its own (holds it and its descendants only), in which
 * case the cgroup is the target to watch: workers started later are in it
 * too.  discover.c discovers the master with its workers and chooses.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "sf_escape.h"
#include "sf_selector.h"
#include "discover.h"

/* The parent of process pid, 0 when it cannot be read. */
static __u64 parent_of(__u64 pid)
{
	char path[64], buf[512], *p;
	unsigned long long ppid;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%llu/stat",
		 (unsigned long long)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) state ppid": comm may hold anything, even ") " */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %llu", &ppid) != 1)
		return 0;
	return ppid;
}

/* Is process q top or one of its descendants? */
static bool descends(__u64 q, __u64 top)
{
	for (int depth = 0; depth < 256 && q > 1; depth++) {
		if (q == top)
			return true;
		q = parent_of(q);
	}
	return q == top;
}

/*
 * Does the cgroup directory dir (and every cgroup below it) hold only top
 * and its descendants?
 */
static bool holds_only(const char *dir, __u64 top, int depth)
{
	char path[PATH_MAX];
	unsigned long long q;
	struct dirent *de;
	bool own = true;
	DIR *d;
	FILE *f;

	if (depth > 16 ||
	    snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >=
		    (int)sizeof(path))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (own && fscanf(f, "%llu", &q) == 1)
		own = descends(q, top);
	fclose(f);
	d = opendir(dir);
	if (!d)
		return false;
	while (own && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			own = false;
		else
			own = holds_only(path, top, depth + 1);
	}
	closedir(d);
	return own;
}

bool master_own_cgroup(__u64 pid, char *path, size_t len)
{
	char rel[PATH_MAX], mnt[256], dir[PATH_MAX + 256];

	sf_cgroup2_mount(mnt, sizeof(mnt));
	if (!mnt[0] || sf_proc_cgroup(pid, rel, sizeof(rel)) ||
	    !strcmp(rel, "/"))
		return false;
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	if (!holds_only(dir, pid, 0))
		return false;
	snprintf(path, len, "%s", dir);
	return true;
}

void master_add_workers(struct discovery *dv)
{
	__u64 kids[MAX_WORKERS];
	int n = sf_proc_children(dv->sel[0].id, kids, MAX_WORKERS);

	dv->nr_children = n;
	for (int i = 0; i < n && i < MAX_WORKERS; i++) {
		dv->sel[dv->n].kind = SATFEED_TARGET_PID;
		dv->sel[dv->n].id = kids[i];
		dv->n++;
	}
}

bool master_seen(const struct satfeed_discover *d)
{
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
		if (src_name(s) && src_family(s) >= 0 && d->src[s].calls)
			return true;
	return false;
}

static __u64 calls_of(const struct satfeed_discover *d)
{
	__u64 n = 0;

	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
		if (src_name(s) && src_family(s) >= 0)
			n += d->src[s].calls;
	return n;
}

/* a worker discovered (added, counted) */
static bool discovered(const struct discovery *dv, int i)
{
	return dv->slot[i] >= 0;
}

int master_choose(const struct args *a, struct discovery *dv)
{
	bool workers = false;
	char why[512];

	dv->add = *a;
	dv->watch = WATCH_ASKED;
	for (int i = 1; i < dv->n; i++)
		workers |= discovered(dv, i) && master_seen(&dv->d[i]);
	if (!workers)
		return SF_EXIT_OK;
	if (master_own_cgroup(dv->sel[0].id, dv->cgroup, sizeof(dv->cgroup)) &&
	    !sf_selector_cgroup(dv->cgroup, &dv->add.sel[0], why,
				sizeof(why))) {
		dv->watch = WATCH_CGROUP;
		dv->add.nr_sel = 1;
		dv->add.target_arg = dv->cgroup;
		return SF_EXIT_OK;
	}
	dv->cgroup[0] = '\0';
	/* the workers, and the master too if it did I/O itself */
	dv->watch = WATCH_WORKERS;
	dv->add.nr_sel = 0;
	for (int i = master_seen(&dv->d[0]) ? 0 : 1; i < dv->n; i++)
		if (discovered(dv, i))
			dv->add.sel[dv->add.nr_sel++] = dv->sel[i];
	return SF_EXIT_OK;
}

void master_say(const struct discovery *dv, FILE *f)
{
	char name[SF_TEXT_ESCAPED_LEN(sizeof(dv->t[0].comm))];

	if (dv->n < 2)
		return;
	fprintf(f, "pid %llu has %d child process%s%s; traced calls of each:\n",
		(unsigned long long)dv->sel[0].id, dv->nr_children,
		dv->nr_children == 1 ? "" : "es",
		dv->nr_children > MAX_WORKERS ? " (the first 16 discovered)" :
						"");
	for (int i = 0; i < dv->n; i++) {
		if (!discovered(dv, i)) {
			fprintf(f, "  pid %llu: not discovered\n",
				(unsigned long long)dv->sel[i].id);
			continue;
		}
		sf_text_escape(name, sizeof(name), dv->t[i].comm,
			       sizeof(dv->t[i].comm));
		fprintf(f, "  pid %llu %s (%s): %llu\n",
			(unsigned long long)dv->sel[i].id, name,
			i ? "worker" : "master",
			(unsigned long long)calls_of(&dv->d[i]));
	}
	if (dv->watch == WATCH_CGROUP)
		fprintf(f, "the workers do the I/O, and cgroup %s holds pid %llu and its descendants only: watch the cgroup (workers started later are in it too)\n",
			dv->cgroup, (unsigned long long)dv->sel[0].id);
	else if (dv->watch == WATCH_WORKERS)
		fprintf(f, "the workers do the I/O, and pid %llu's cgroup holds other processes too: watch the workers, one target each (one started later is not watched: give the server a cgroup of its own to follow those)\n",
			(unsigned long long)dv->sel[0].id);
}

void master_json(const struct discovery *dv)
{
	static const char *const what[] = {
		[WATCH_ASKED] = "asked", [WATCH_CGROUP] = "cgroup",
		[WATCH_WORKERS] = "workers",
	};
	char name[SF_JSON_ESCAPED_LEN(sizeof(dv->t[0].comm))];
	char path[SF_JSON_ESCAPED_LEN(sizeof(dv->cgroup))];

	printf("\"children\":%d,\"workers\":[",
	       dv->n > 1 ? dv->nr_children : 0);
	for (int i = 1; i < dv->n; i++) {
		printf("%s{\"pid\":%llu,", i > 1 ? "," : "",
		       (unsigned long long)dv->sel[i].id);
		if (!discovered(dv, i)) {
			printf("\"discovered\":false}");
			continue;
		}
		sf_json_escape(name, sizeof(name), dv->t[i].comm,
			       sizeof(dv->t[i].comm));
		printf("\"discovered\":true,\"comm\":%s,\"calls\":%llu}", name,
		       (unsigned long long)calls_of(&dv->d[i]));
	}
	sf_json_escape(path, sizeof(path), dv->cgroup, sizeof(dv->cgroup));
	printf("],\"watch\":\"%s\",\"cgroup\":%s", what[dv->watch],
	       dv->watch == WATCH_CGROUP ? path : "null");
}
