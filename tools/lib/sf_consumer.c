// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_consumer.c - the user-space plumbing of a BPF consumer of satfeed's
 * pins: the root, the engine's maps in the consumer's object, libbpf's
 * messages (sf_consumer.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "sf_consumer.h"
#include "sf_pins.h"

/* satfeed-loader's limit: room in sf_pins.root for "/" and a pin name */
#define ROOT_MAX	200

void sf_consumer_option(int c, const char *arg, const char **root,
			bool *verbose, void (*usage)(FILE *f))
{
	switch (c) {
	case SF_OPT_BPFFS:
		if (arg[0] != '/' || strlen(arg) > ROOT_MAX)
			exit(sf_fail(SF_EXIT_USAGE,
				     "--bpffs needs an absolute path of at most %d characters",
				     ROOT_MAX));
		*root = arg;
		break;
	case 'v':
		*verbose = true;
		break;
	case 'h':
		usage(stdout);
		exit(SF_EXIT_OK);
	default:
		usage(stderr);
		exit(SF_EXIT_USAGE);
	}
}

static bool listed(const char *const *names, const char *name)
{
	for (; *names; names++)
		if (!strcmp(*names, name))
			return true;
	return false;
}

int sf_consumer_reuse(struct bpf_object *obj, const struct sf_pins *p,
		      const char *const *reads, char *why, size_t len)
{
	struct bpf_map *m;
	int fd, err;

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);

		fd = sf_pins_fd(p, name);
		if (fd == -ENOENT)
			continue;	/* the consumer's own map */
		if (!listed(reads, name)) {
			/* not read: no private copy of the engine's map */
			err = bpf_map__set_autocreate(m, false);
		} else if (fd < 0) {
			snprintf(why, len, "satfeed's %s is not open", name);
			return SF_EXIT_ERROR;
		} else {
			err = bpf_map__reuse_fd(m, fd);
		}
		if (err) {
			snprintf(why, len, "cannot %s %s: %s",
				 listed(reads, name) ? "reuse" : "leave out",
				 name, strerror(-err));
			return SF_EXIT_ERROR;
		}
	}
	for (; *reads; reads++) {
		if (!bpf_object__find_map_by_name(obj, *reads)) {
			snprintf(why, len, "no map %s in the BPF object",
				 *reads);
			return SF_EXIT_ERROR;
		}
	}
	return 0;
}

__u32 sf_consumer_pin_id(const char *root, const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_map_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

static int print_quiet(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	return 0;
}

static int print_stderr(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

void sf_consumer_verbose(bool verbose)
{
	libbpf_set_print(verbose ? print_stderr : print_quiet);
}
