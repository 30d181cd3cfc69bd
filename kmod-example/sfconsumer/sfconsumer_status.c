// SPDX-License-Identifier: GPL-2.0
/*
 * sfconsumer_status.c - sfconsumer status: what is attached, and whether
 * each link still follows the running engine (a reload of the engine
 * leaves them on the old one).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "satfeed.h"
#include "sf_consumer.h"
#include "sfconsumer.h"

/* Is program id one of satfeed's pinned programs? */
static bool engine_has_prog(__u32 id)
{
	struct bpf_prog_info info;
	char dir[512];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", env.root, SATFEED_PIN_PROGS);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		__u32 len = sizeof(info);
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = pin_get(dir, de->d_name);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_prog_get_info_by_fd(fd, &info, &len))
			found = info.id == id;
		close(fd);
	}
	closedir(d);
	return found;
}

/*
 * Does the pull consumer read the engine's current sf_streams?  The
 * struct_ops program (sfc_query) lists the maps it uses.
 */
static bool pull_is_current(void)
{
	__u32 streams = sf_consumer_pin_id(env.root, SATFEED_PIN_STREAMS);
	__u32 id = 0, ids[16];
	bool cur = false;

	if (!streams)
		return false;
	while (!cur && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi), nr = sizeof(ids) / sizeof(ids[0]);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		pi.nr_map_ids = nr;
		pi.map_ids = (__u64)(unsigned long)ids;
		if (!bpf_prog_get_info_by_fd(fd, &pi, &len) &&
		    pi.type == BPF_PROG_TYPE_STRUCT_OPS &&
		    !strcmp(pi.name, "sfc_query"))
			for (__u32 i = 0; i < pi.nr_map_ids && i < nr; i++)
				cur |= ids[i] == streams;
		close(fd);
	}
	return cur;
}

int cmd_status(void)
{
	char path[512];
	struct dirent *de;
	int stale = 0, n = 0;
	DIR *d;

	printf("module:  %s\n", module_loaded() ? "loaded" : "not loaded");
	printf("engine:  %s\n", sf_consumer_pin_id(env.root, SATFEED_PIN_INFO) ?
	       "loaded" : "not loaded");
	d = opendir(env.pins);
	if (!d) {
		printf("consumer: not attached\n");
		return 0;
	}
	while ((de = readdir(d))) {
		struct bpf_link_info li = {};
		__u32 len = sizeof(li);
		bool cur;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", env.pins, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0 || bpf_link_get_info_by_fd(fd, &li, &len)) {
			printf("  %-28s unreadable\n", de->d_name);
			stale++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (li.type == BPF_LINK_TYPE_STRUCT_OPS)
			cur = pull_is_current();
		else
			cur = engine_has_prog(li.tracing.target_obj_id);
		printf("  %-28s link %u %s\n", de->d_name, li.id,
		       cur ? "current" : "STALE (engine reloaded or gone)");
		stale += !cur;
		close(fd);
	}
	closedir(d);
	printf("consumer: %d links, %d stale\n", n, stale);
	return stale ? 3 : 0;
}

