// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeedctl's command line: the options before the command (--bpffs,
 * --help, --version) and after it, each checked against what the command
 * takes (its CMD_* flags), into struct args before any pin is opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_root.h"
#include "sf_selector.h"
#include "sf_target.h"
#include "satfeedctl.h"

/* ---- target selection ---- */

/* vanished_ok: a removed directory may name its gone target (remove) */
static int parse_cgroup(const char *arg, struct args *a, bool vanished_ok)
{
	struct sf_selector *sel = &a->sel[0];
	char why[512], *end;
	unsigned long long id;
	int err;

	err = sf_selector_cgroup(arg, sel, why, sizeof(why));
	if (!err)
		return 0;
	if (vanished_ok && access(arg, F_OK) && errno == ENOENT) {
		/* a cgroup id (the directory's inode), for one removed since */
		errno = 0;
		id = strtoull(arg, &end, 10);
		if (arg[0] >= '0' && arg[0] <= '9' && !*end && !errno) {
			memset(sel, 0, sizeof(*sel));
			sel->kind = SATFEED_TARGET_CGROUP;
			sel->id = id;
			return 0;
		}
		memset(sel, 0, sizeof(*sel));
		sel->kind = SATFEED_TARGET_CGROUP;
		a->vanished = arg;
		return 0;
	}
	return fail(err, "%s", why);
}

#ifdef SATFEED_SAT_RULE_OFF
#define RULE_OFF_WORD " or off"
#else
#define RULE_OFF_WORD ""
#endif

/*
 * A rule in permille, 0 (the default) to max: waits per 1000 sends above
 * 1000 would call a server near saturation while it waits once per request
 * (its low-load figure); an idle share or a dispersion rise may exceed
 * 1000 (several threads waiting at once; more than doubled).
 */
static int parse_permille(const char *opt, const char *arg, __u32 max,
			  __u32 *v)
{
	char *end;
	unsigned long n;

#ifdef SATFEED_SAT_RULE_OFF
	if (!strcmp(arg, "off")) {
		*v = SATFEED_SAT_RULE_OFF;
		return 0;
	}
#endif
	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || arg[0] < '0' || arg[0] > '9' || n > max) {
		if (max == SF_RULE_UNREAD_MAX)
			return fail(SF_EXIT_USAGE, "--%s takes bytes from 0 (the default) to %u%s, not '%s'",
				    opt, max, RULE_OFF_WORD, arg);
		return fail(SF_EXIT_USAGE, "--%s takes permille from 0 (the default) to %u (e.g. 150 for 15%%)%s, not '%s'",
			    opt, max, RULE_OFF_WORD, arg);
	}
	*v = n;
	return 0;
}

static const struct option long_opts[] = {
	{ "bpffs", required_argument, NULL, 'b' },
	{ "pid", required_argument, NULL, 'p' },
	{ "cgroup", required_argument, NULL, 'c' },
	{ "send", required_argument, NULL, 'S' },
	{ "recv", required_argument, NULL, 'R' },
	{ "poll", required_argument, NULL, 'P' },
	{ "json", no_argument, NULL, 'j' },
	{ "all", no_argument, NULL, 'a' },
	{ "repair", no_argument, NULL, 'r' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "listen", required_argument, NULL, 'l' },
	{ "allow-remote", no_argument, NULL, 'A' },
	{ "textfile", required_argument, NULL, 't' },
	{ "slot", required_argument, NULL, 's' },
	{ "raw", no_argument, NULL, 'L' },
	{ "force", no_argument, NULL, 'F' },
	{ "idle-near", required_argument, NULL, 1001 },
	{ "idle-full", required_argument, NULL, 1002 },
	{ "cv2-rise", required_argument, NULL, 1003 },
	{ "wps-near", required_argument, NULL, 1004 },
	{ "wps-full", required_argument, NULL, 1005 },
	{ "svc-near", required_argument, NULL, 1008 },
	{ "svc-full", required_argument, NULL, 1009 },
	{ "drop-near", required_argument, NULL, 1010 },
	{ "drop-full", required_argument, NULL, 1011 },
	{ "cpu-near", required_argument, NULL, 1012 },
	{ "cpu-full", required_argument, NULL, 1013 },
	{ "unread-near", required_argument, NULL, 1014 },
	{ "unread-full", required_argument, NULL, 1015 },
	{ "version", no_argument, NULL, 'V' },
	{ "seconds", required_argument, NULL, 1006 },
	{ "auto", no_argument, NULL, 1007 },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* --bpffs DIR, before or after the command: -1, or the exit status */
static int set_root(struct args *a, char *dir)
{
	char why[512];

	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/';)
		dir[--n] = '\0';
	if (dir[0] == '/' && sf_root_name_check(dir, why, sizeof(why)))
		return fail(SF_EXIT_USAGE, "--bpffs %s", why);
	a->root = dir;
	return -1;
}

bool help_asked(int argc, char **argv, int from)
{
	for (int i = from; i < argc; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "--"))
			return false;
		if (!strcmp(w, "-h") || !strcmp(w, "--help"))
			return true;
		if (w[0] != '-' || w[1] != '-' || strchr(w, '='))
			continue;
		/* an option's value is not a help request: --cgroup -h */
		for (const struct option *o = long_opts; o->name; o++)
			if (o->has_arg == required_argument &&
			    !strcmp(w + 2, o->name))
				i++;
	}
	return false;
}

/* --pid, --cgroup and --slot name targets three ways: one at a time */
static int one_kind(void)
{
	return fail(SF_EXIT_USAGE, "give --pid, --cgroup or --slot, not more than one kind (one --cgroup, one --slot, or any number of pids)");
}

/* an option this command does not take */
static int not_for(const struct cmd *c, const char *opt, const char *which)
{
	return fail(SF_EXIT_USAGE, "%s does not take --%s (%s)", c->cmd, opt,
		    which);
}

/* What getopt refused (opterr is 0: the message is ours, one line). */
static int bad_option(int opt, char **argv)
{
	const char *word = argv[optind - 1];

	if (opt == ':')
		return fail(SF_EXIT_USAGE, "%s needs a value; see --help", word);
	if (optopt)
		return fail(SF_EXIT_USAGE, "unknown option '-%c'; see --help",
			    optopt);
	return fail(SF_EXIT_USAGE, "unknown option '%s'; see --help", word);
}

/*
 * The options after the command.  Returns -1 when they are all good, else
 * the exit status (0 for --help).
 */
int parse_args(int argc, char **argv, const struct cmd *c,
	       struct args *a)
{
	__u32 fam_mask[SATFEED_NR_STREAMS];
	bool fam_set[SATFEED_NR_STREAMS] = {}, rules = false;
	bool pid = false, cgroup = false;
	char *end, why[512];
	int opt, err;

	while ((opt = getopt_long(argc, argv, ":b:hV", long_opts, NULL)) != -1) {
		int fam = -1;

		switch (opt) {
		case 'b':
			err = set_root(a, optarg);
			if (err >= 0)
				return err;
			break;
		case 'p':
			if (!(c->flags & CMD_SELECT))
				return not_for(c, "pid", "it covers every target");
			if (cgroup || a->slot >= 0)
				return one_kind();
			pid = true;
			err = sf_select_pids(optarg, a->sel, &a->nr_sel,
					     MAX_SEL, why, sizeof(why));
			if (err)
				return fail(err, "%s", why);
			a->target_arg = optarg;
			break;
		case 'c':
			if (!(c->flags & CMD_SELECT))
				return not_for(c, "cgroup", "it covers every target");
			if (pid || cgroup || a->slot >= 0)
				return one_kind();
			cgroup = true;
			err = parse_cgroup(optarg, a, c->flags & CMD_VANISHED);
			if (err)
				return err;
			a->nr_sel = 1;
			a->target_arg = optarg;
			break;
		case 1006:
			if (!(c->flags & CMD_SECONDS))
				return fail(SF_EXIT_USAGE, "--seconds only applies to discover and add --auto");
			a->seconds = strtod(optarg, &end);
			if (*end || end == optarg ||
			    !(a->seconds >= 0.1 && a->seconds <= 3600))
				return fail(SF_EXIT_USAGE, "--seconds must be 0.1 to 3600 (got '%s')",
					    optarg);
			break;
		case 1007:
			if (!(c->flags & CMD_AUTO))
				return fail(SF_EXIT_USAGE, "--auto only applies to add");
			a->autoadd = true;
			break;
		case 's':
			if (!(c->flags & CMD_SELECT) || !(c->flags & CMD_VANISHED))
				return not_for(c, "slot", "remove and show take it");
			if (pid || cgroup || a->slot >= 0)
				return one_kind();
			errno = 0;
			a->slot = strtol(optarg, &end, 10);
			if (errno || *end || optarg[0] < '0' || optarg[0] > '9' ||
			    a->slot >= SATFEED_MAX_TARGETS)
				return fail(SF_EXIT_USAGE, "--slot takes a slot number, 0 to %d (satfeedctl targets lists them), not '%s'",
					    SATFEED_MAX_TARGETS - 1, optarg);
			break;
		case 'S':
			fam = SATFEED_STREAM_SEND;
			break;
		case 'R':
			fam = SATFEED_STREAM_RECV;
			break;
		case 'P':
			fam = SATFEED_STREAM_POLL;
			break;
		case 'j':
			if (!(c->flags & CMD_JSON))
				return not_for(c, "json", "show, watch and targets take it");
			a->json = true;
			break;
		case 'L':
			if (!(c->flags & CMD_RAW))
				return not_for(c, "raw", "show takes it");
			a->raw = true;
			break;
		case 'F':
			if (!(c->flags & CMD_FAMILIES))
				return not_for(c, "force", "add takes it");
			a->force = true;
			break;
		case 1001:
		case 1002:
		case 1003:
		case 1004:
		case 1005:
		case 1008:
		case 1009:
		case 1010:
		case 1011:
		case 1012:
		case 1013:
		case 1014:
		case 1015: {
			static const char *const names[] = {
				"idle-near", "idle-full", "cv2-rise",
				"wps-near", "wps-full", "svc-near", "svc-full",
				"drop-near", "drop-full", "cpu-near",
				"cpu-full", "unread-near", "unread-full",
			};
			static const __u32 max[] = {
				SF_RULE_IDLE_MAX, SF_RULE_IDLE_MAX,
				SF_RULE_CV2_RISE_MAX, SF_RULE_WPS_MAX,
				SF_RULE_WPS_MAX, SF_RULE_SVC_MAX,
				SF_RULE_SVC_MAX, SF_RULE_DROP_MAX,
				SF_RULE_DROP_MAX, SF_RULE_CPU_MAX,
				SF_RULE_CPU_MAX, SF_RULE_UNREAD_MAX,
				SF_RULE_UNREAD_MAX,
			};
			__u32 *field[] = {
				&a->rules.idle_near_permille,
				&a->rules.idle_full_permille,
				&a->rules.cv2_rise_permille,
				&a->rules.wps_near_permille,
				&a->rules.wps_full_permille,
				&a->rules.svc_near_permille,
				&a->rules.svc_full_permille,
				&a->rules.drop_near_permille,
				&a->rules.drop_full_permille,
				&a->rules.cpu_near_permille,
				&a->rules.cpu_full_permille,
				&a->rules.unread_near_bytes,
				&a->rules.unread_full_bytes,
			};
			/* 1001..1005, then 1008..1015: SF_RULE_* order */
			int k = opt >= 1008 ? opt - 1008 + 5 : opt - 1001;

			if (!(c->flags & CMD_RULES))
				return not_for(c, names[k], "add and rules take it");
			err = parse_permille(names[k], optarg,
					     max[k],
					     field[k]);
			if (err)
				return err;
			/* names[] is in SF_RULE_* order */
			a->rules_given |= 1U << k;
			rules = true;
			break;
		}
		case 'a':
			a->all = true;
			break;
		case 'r':
			if (!(c->flags & CMD_REPAIR))
				return fail(SF_EXIT_USAGE, "--repair only applies to check");
			a->repair = true;
			break;
		case 'i':
			if (!(c->flags & CMD_INTERVAL))
				return not_for(c, "interval", "watch and export take it");
			a->interval = strtod(optarg, &end);
			if (*end ||
			    !(a->interval >= 0.05 && a->interval <= 3600))
				return fail(SF_EXIT_USAGE, "--interval must be 0.05 to 3600 seconds");
			break;
		case 'n':
			if (!(c->flags & CMD_COUNT))
				return not_for(c, "count", "watch takes it");
			a->count = strtol(optarg, &end, 10);
			if (*end || a->count < 1)
				return fail(SF_EXIT_USAGE, "--count must be a positive integer");
			break;
		case 'l':
		case 'A':
		case 't':
			if (!(c->flags & CMD_EXPORT))
				return fail(SF_EXIT_USAGE, "--%s only applies to export",
					    opt == 'l' ? "listen" :
					    opt == 'A' ? "allow-remote" : "textfile");
			if (opt == 'l')
				a->listen = optarg;
			else if (opt == 'A')
				a->allow_remote = true;
			else
				a->textfile = optarg;
			break;
		case 'h':
			return cmd_help(c->cmd);
		case 'V':
			return help_or_usage(opt);
		default:
			return bad_option(opt, argv);
		}
		if (fam >= 0) {
			if (sf_parse_syscalls(PROG, optarg, fam,
					      &fam_mask[fam]))
				return SF_EXIT_USAGE;
			fam_set[fam] = true;
		}
	}
	if (optind < argc)
		return fail(SF_EXIT_USAGE, "unexpected argument '%s'%s",
			    argv[optind],
			    pid ? " (several pids go in one quoted --pid, or one --pid each)" : "");
	if (a->all && !(c->flags & CMD_ALL))
		return fail(SF_EXIT_USAGE, "--all only applies to remove and rules");
	if (a->all && (a->nr_sel || a->slot >= 0))
		return fail(SF_EXIT_USAGE, "give --pid, --cgroup, --slot or --all, not more than one");
	if ((!strcmp(c->cmd, "add") || !strcmp(c->cmd, "discover")) &&
	    !a->nr_sel)
		return fail(SF_EXIT_USAGE, "%s needs --pid PID or --cgroup DIR",
			    c->cmd);
	if ((c->flags & CMD_TARGET) && !a->nr_sel && a->slot < 0 && !a->all)
		return fail(SF_EXIT_USAGE, "%s needs --pid PID, --cgroup DIR, --slot N or --all (every target)",
			    c->cmd);
	if (rules && a->rules.idle_full_permille &&
	    a->rules.idle_near_permille &&
	    a->rules.idle_full_permille <= 100000 &&
	    a->rules.idle_near_permille <= 100000 &&
	    a->rules.idle_full_permille > a->rules.idle_near_permille)
		return fail(SF_EXIT_USAGE, "--idle-full (%u) must not be above --idle-near (%u): saturated is the lower idle share",
			    a->rules.idle_full_permille,
			    a->rules.idle_near_permille);
	if ((c->flags & CMD_AUTO) && !a->autoadd && a->seconds)
		return fail(SF_EXIT_USAGE, "--seconds only applies to discover and add --auto");
	if (a->autoadd && (fam_set[SATFEED_STREAM_SEND] ||
			   fam_set[SATFEED_STREAM_RECV] ||
			   fam_set[SATFEED_STREAM_POLL]))
		return fail(SF_EXIT_USAGE, "add --auto chooses the families itself: give no --send, --recv or --poll");
	if ((a->autoadd || (c->flags & CMD_SECONDS && !(c->flags & CMD_AUTO))) &&
	    (a->nr_sel != 1 || a->slot >= 0))
		return fail(SF_EXIT_USAGE, "%s%s takes one --pid PID or --cgroup DIR",
			    c->cmd, a->autoadd ? " --auto" : "");
	for (int f = 0; f < SATFEED_NR_STREAMS; f++) {
		if (fam_set[f] && !(c->flags & CMD_FAMILIES))
			return fail(SF_EXIT_USAGE, "--%s only applies to add",
				    sf_stream_names[f]);
		for (int i = 0; i < SATFEED_SC_NR_BITS; i++)
			if (sf_syscalls[i].name &&
			    sf_syscalls[i].family == f &&
			    sf_syscalls[i].nr != -1 &&
			    (!fam_set[f] || (fam_mask[f] & (1U << i))))
				a->sc_mask |= 1U << i;
	}
	return -1;
}

/*
 * The options before the command: --bpffs, --help, --version.  Returns -1
 * when they are all good, else the exit status (0 for --help).
 */
int parse_global(int argc, char **argv, struct args *a)
{
	int opt, li = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:b:hV", long_opts, &li)) != -1) {
		switch (opt) {
		case 'b':
			if (set_root(a, optarg) >= 0)
				return SF_EXIT_USAGE;
			break;
		case 'h':
		case 'V':
			return help_or_usage(opt);
		default:
			if (opt == ':' || opt == '?')
				return bad_option(opt, argv);
			return fail(SF_EXIT_USAGE, "--%s comes after the command; see --help",
				    long_opts[li].name);
		}
	}
	return -1;
}
