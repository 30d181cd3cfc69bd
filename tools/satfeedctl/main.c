// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeedctl - the tiny CLI: watch targets and read satfeed's windows.
 *
 * Opens the pins only (no skeleton, no program loading), through libsatfeed
 * (tools/lib): every pin's shape is checked before it is read, streams are
 * read under the engine's spin lock so every window printed is whole, and
 * add/remove run the target protocol under the pin root's lock.  Every
 * change holds that lock exclusively while it runs; readers take none
 * (sf_pins_open_snapshot()), so a loop of loads never starves them.  This
 * file is the command table and main(): which command runs, with which
 * lock; the usage
 * is usage.c, the options args.c, and each command lives in a file of its
 * own concern (satfeedctl.h).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "sf_common.h"
#include "export.h"
#include "sf_pins.h"
#include "satfeedctl.h"

/* ---- export: the server is export.c ---- */

static int cmd_export(struct sf_pins *p, const struct args *a)
{
	struct sf_export_opts o = {
		.root = a->root,
		.listen = a->listen,
		.allow_remote = a->allow_remote,
		.textfile = a->textfile,
		.interval = a->interval,
	};

	if (!o.listen && !o.textfile)
		o.listen = SF_EXPORT_DEFAULT_LISTEN;
	return sf_export_run(&o);
}

/* ---- the command table ---- */

static const struct cmd cmds[] = {
	{ "add", cmd_add, CMD_TARGET | CMD_SELECT | CMD_FAMILIES | CMD_WRITE |
			  CMD_AUTO | CMD_SECONDS | CMD_RULES },
	{ "discover", cmd_discover,
	  CMD_TARGET | CMD_SELECT | CMD_SECONDS | CMD_JSON | CMD_EACH_VIEW },
	{ "remove", cmd_remove,
	  CMD_TARGET | CMD_SELECT | CMD_ALL | CMD_VANISHED | CMD_WRITE },
	{ "targets", cmd_targets, CMD_JSON },
	{ "rules", cmd_rules, CMD_TARGET | CMD_SELECT | CMD_ALL |
			      CMD_VANISHED | CMD_WRITE | CMD_RULES },
	{ "show", cmd_show, CMD_SELECT | CMD_RAW | CMD_JSON | CMD_VANISHED },
	{ "watch", cmd_watch,
	  CMD_EACH_VIEW | CMD_JSON | CMD_INTERVAL | CMD_COUNT },
	{ "export", cmd_export, CMD_EXPORT | CMD_INTERVAL },
	{ "check", cmd_check, CMD_OWN_LOCK | CMD_REPAIR },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct cmd *cmd_select(const char *name)
{
	for (size_t i = 0; i < NR_CMDS; i++)
		if (!strcmp(cmds[i].cmd, name))
			return &cmds[i];
	return NULL;
}

static int no_command(void)
{
	char list[128] = "";
	size_t off = 0;

	for (size_t i = 0; i < NR_CMDS && off < sizeof(list); i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%s",
				i ? ", " : "", cmds[i].cmd);
	return fail(SF_EXIT_USAGE, "a command is required (%s); see --help",
		    list);
}

int main(int argc, char **argv)
{
	struct args a = { .interval = 1.0, .slot = -1,
			  .root = SATFEED_DEFAULT_ROOT };
	const struct cmd *c;
	int (*func)(struct sf_pins *p, const struct args *a);
	struct sf_pins pins;
	unsigned int flags;
	char why[512];
	int err;

	sf_prog = PROG;
	err = parse_global(argc, argv, &a);
	if (err >= 0)
		return err;
	if (optind >= argc)
		return no_command();
	c = cmd_select(argv[optind]);
	if (!c)
		return fail(SF_EXIT_USAGE, "unknown command '%s'; see --help",
			    argv[optind]);
	optind++;
	/* COMMAND --help does nothing else, whatever the other options say */
	if (help_asked(argc, argv, optind))
		return cmd_help(c->cmd);
	err = parse_args(argc, argv, c, &a);
	if (err >= 0)
		return err;
	if (geteuid() != 0)
		return fail(SF_EXIT_PERM, "%s needs root (CAP_BPF and CAP_SYS_ADMIN)",
			    c->cmd);
	if (c->flags & CMD_EXPORT)
		return c->func(NULL, &a);

	if (c->flags & CMD_OWN_LOCK)
		return c->func(NULL, &a);
	if (!a.seconds)
		a.seconds = 5.0;
	func = c->func;
	flags = c->flags;
	if (a.autoadd) {
		/* discovery takes the lock for its own add and remove only:
		 * the table stays readable and writable while it counts */
		func = cmd_add_auto;
		flags = (flags & ~CMD_WRITE) | CMD_EACH_VIEW;
	}
	/* readers take no lock: a change never makes them wait */
	if (flags & CMD_WRITE)
		err = sf_pins_open_locked(&pins, a.root, LOCK_EX, why,
					  sizeof(why));
	else
		err = sf_pins_open_snapshot(&pins, a.root, why, sizeof(why));
	if (err == SF_EXIT_NOT_LOADED && func == cmd_watch)
		err = 0;	/* watch waits for a load, saying so */
	if (err)
		return fail(err, "%s", why);
	err = func(&pins, &a);
	sf_pins_close(&pins);
	return err;
}
