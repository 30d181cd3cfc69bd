// SPDX-License-Identifier: GPL-2.0
/*
 * sfconsumer_pins.c - what sfconsumer's commands share (sfconsumer.h): the
 * command line's settings, the one way to fail (die(), which undoes an
 * attach under way), and our own pin directory.  The commands call down
 * into this file; it calls none of them.
 */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sf_common.h"
#include "sf_root_unpin.h"
#include "sfconsumer.h"

const char *const push_names[] = { "auto", "fentry", "freplace", "none" };

struct sfc_env env = {
	.root = SATFEED_DEFAULT_ROOT,
	.push = PUSH_AUTO,
	.pull = true,
};

void die(const char *fmt, ...)
{
	va_list ap;

	if (env.undo_on_error) {
		int removed;

		env.undo_on_error = false;
		remove_pins(&removed);
	}
	va_start(ap, fmt);
	sf_vmsg(fmt, ap);
	va_end(ap);
	exit(1);
}

/* ---- our pins ---- */

int pin_get(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

bool module_loaded(void)
{
	struct stat st;

	return !stat(SFC_SYSFS_DIR, &st) && S_ISDIR(st.st_mode);
}

int count_pins(void)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	d = opendir(env.pins);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static bool consumer_pin_name(const char *name)
{
	return !strcmp(name, PIN_PULL) ||
	       (!strncmp(name, PIN_PUSH, strlen(PIN_PUSH)) &&
		sf_engine_prog_name(name + strlen(PIN_PUSH)));
}

/*
 * Remove our pins, and nothing else, from our pin directory (sf_root_unpin.h).
 * Returns 0 when the directory is gone, -ENOENT when there was none, another
 * -errno (reported) otherwise; *removed counts the pins removed.
 */
int remove_pins(int *removed)
{
	static const struct sf_pin_dir layout[] = {
		{ NULL, consumer_pin_name },
	};
	char why[PATH_MAX + 128];
	struct sf_saferoot r;
	int err;

	*removed = 0;
	err = sf_saferoot_open(&r, "sfconsumer", env.pins, why, sizeof(why));
	if (err == -ENOENT)
		return err;
	if (err) {
		fprintf(stderr, "sfconsumer: %s\n", why);
		return err;
	}
	err = sf_saferoot_unpin(&r, layout, 1);
	*removed = r.removed;
	sf_saferoot_close(&r);
	return err;
}
