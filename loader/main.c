// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeed-loader - load the satfeed engine, attach it, pin its maps,
 * programs and links under a bpffs root, and exit; or undo exactly that.
 *
 * This file is the command line: the options, --help (the one place the
 * commands, locking, attach modes and exit codes are described to a user),
 * the one-line refusal of a bad argument, and the dispatch to the commands,
 * which live one to a file (load.c, unload.c, check.c) because none of them
 * needs another's code, and argp's tables need none of theirs.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "loader.h"

struct loader_env env = {
	.root = SATFEED_DEFAULT_ROOT,
	.window_shift = SATFEED_WINDOW_SHIFT,
	.max_age_ns = SATFEED_MAX_AGE_NS_DEFAULT,
};

static void print_version(FILE *f, struct argp_state *state)
{
	sf_print_version();
}

void (*argp_program_version_hook)(FILE *, struct argp_state *) =
	print_version;
static const char doc[] =
"Load satfeed's in-kernel saturation/slack engine and pin it in bpffs.\n"
"\n"
"COMMANDS\n"
"  load     load the engine, attach it to the syscall hooks and pin its maps,\n"
"           programs and links under ROOT, then exit: the engine keeps\n"
"           running.  Refused if ROOT already holds a load, unless --replace.\n"
"           Everything is pinned into ROOTNAME~swap next to ROOT and renamed\n"
"           into place in one step, so ROOT is never half loaded.  --replace\n"
"           loads the new engine, re-adds each active target of the old one\n"
"           with its syscalls, and only then swaps it in (RENAME_EXCHANGE):\n"
"           a replace that fails leaves the old engine running.\n"
"  unload   remove every pin load made under ROOT; this detaches the engine.\n"
"  check    report what the running kernel supports and which attach mode\n"
"           load would use, and for an engine pinned under ROOT the runs of\n"
"           each of its programs the kernel skipped since load (recursion\n"
"           misses: events missing from the windows).  Pins nothing.\n"
"\n"
"LOCKING AND CRASHES\n"
"  load and unload hold an flock of ROOT's parent directory, which\n"
"  satfeedctl takes too: one change at a time, and a load that waited finds\n"
"  the winner's engine (exit 8).  What a killed load or unload leaves in\n"
"  ROOTNAME~swap is never live; the next load, unload, satfeedctl add or\n"
"  remove, or 'satfeedctl check --repair' removes it.\n"
"\n"
"ATTACH MODES (cheapest first; auto picks the first that loads and attaches)\n"
"  fentry   fentry/fexit on the traced syscalls' entry points: only those\n"
"           syscalls pay.  Needs CONFIG_FUNCTION_TRACER and a kernel that\n"
"           permits fentry.\n"
"  tp_btf   BTF raw tracepoints raw_syscalls:sys_enter/sys_exit: every\n"
"           syscall of the machine runs a short filter.\n"
"\n"
"UNDERSTUDIES (--understudy)\n"
"  Where the kernel can preempt an engine program mid-run, it skips every\n"
"  other run of that program on the CPU until it resumes (the program's\n"
"  recursion_misses), and those events would be lost.  An understudy is a\n"
"  second program on the same hook that processes exactly those events;\n"
"  each rescue is counted in the pinned sf_understudy map.  It costs every\n"
"  event of the hook a short check, so auto attaches understudies only where\n"
"  the hooks can be preempted: a preempt=full, lazy or rt kernel, and in\n"
"  tp_btf mode only where the syscall tracepoints are faultable (7.x).\n"
"  `check` says which applies and why.\n"
"\n"
"EXIT STATUS\n"
"  0 ok, 1 runtime error, 2 bad argument, 3 not loaded (unload),\n"
"  4 permission denied, 8 already loaded (load without --replace).\n"
"\n"
"EXAMPLES\n"
"  satfeed-loader load\n"
"  satfeed-loader --attach tp_btf --window 4096 load\n"
"  satfeed-loader check\n"
"  satfeed-loader unload\n"
"\n"
"OPTIONS";

static const struct argp_option opts[] = {
	{ "bpffs", 'b', "DIR", 0,
	  "pin root (default " SATFEED_DEFAULT_ROOT "); its parent must be a "
	  "bpffs, and /sys/fs/bpf is mounted if it is not", 0 },
	{ "attach", 'a', "MODE", 0, "auto (default), fentry or tp_btf", 0 },
	{ "understudy", 'u', "WHEN", 0,
	  "auto (default: where the hooks can be preempted), on or off", 0 },
	{ "window", 'w', "N", 0,
	  "samples per window, a power of two from 2 to 65536 (default 2048)",
	  0 },
	{ "max-age", 'm', "MS", 0,
	  "the age bound T in milliseconds, 20 to 4294 (default 1000): a "
	  "window closes when it is T/2 old, a target without traffic for T "
	  "reads quiet", 0 },
	{ "replace", 'r', NULL, 0,
	  "load: replace an existing load, carrying its active targets over "
	  "(their windows start afresh)", 0 },
	{ "btf", 'B', "FILE", 0,
	  "kernel BTF to use instead of /sys/kernel/btf/vmlinux", 0 },
	{ "verbose", 'v', NULL, 0, "print libbpf's debug output", 0 },
	{},
};

/* a bad argument was reported (one line): main() adds nothing */
static bool said_usage;

static error_t bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static error_t bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sf_vmsg(fmt, ap);
	va_end(ap);
	said_usage = true;
	return EINVAL;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	unsigned long n;
	char *end;

	switch (key) {
	case 'b':
		if (arg[0] != '/' || strlen(arg) > 200) {
			return bad("--bpffs needs an absolute path of at most 200 characters");
		}
		for (size_t n = strlen(arg); n > 1 && arg[n - 1] == '/';)
			arg[--n] = '\0';
		env.root = arg;
		break;
	case 'a':
		if (sf_attach_parse(arg, &env.attach))
			return bad("unknown attach mode '%s' (auto, fentry, tp_btf)",
				   arg);
		break;
	case 'u':
		if (sf_understudy_parse(arg, &env.understudy))
			return bad("--understudy must be auto, on or off, not '%s'",
				   arg);
		break;
	case 'w':
		errno = 0;
		n = strtoul(arg, &end, 0);
		if (errno || *end || n < 2 || n > 65536 || (n & (n - 1)))
			return bad("--window must be a power of two from 2 to 65536, not '%s'",
				   arg);
		env.window_shift = __builtin_ctzl(n);
		break;
	case 'm':
		errno = 0;
		n = strtoul(arg, &end, 10);
		if (errno || *end || !*arg ||
		    n < SATFEED_MAX_AGE_NS_MIN / 1000000 ||
		    n > SATFEED_MAX_AGE_NS_MAX / 1000000)
			return bad("--max-age must be a number of milliseconds from 20 to 4294, not '%s'",
				   arg);
		env.max_age_ns = n * 1000000ULL;
		break;
	case 'r':
		env.replace = true;
		break;
	case 'B':
		env.btf = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (env.command)
			return bad("one command only (got '%s' after '%s')",
				   arg, env.command);
		if (strcmp(arg, "load") && strcmp(arg, "unload") &&
		    strcmp(arg, "check"))
			return bad("unknown command '%s' (load, unload, check)",
				   arg);
		env.command = arg;
		break;
	case ARGP_KEY_END:
		if (!env.command)
			return bad("a command is required (load, unload, check)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt,
			   va_list args)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The option argp refused (ARGP_NO_ERRS: it says nothing itself). */
static void unknown_option(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t n = strcspn(a + 2, "=");
		bool known = false;

		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || !a[1])
			continue;
		if (a[1] != '-') {
			for (const struct argp_option *o = opts; o->name; o++)
				known |= o->key == a[1];
			known |= a[1] == '?' || a[1] == 'V';
			if (!known) {
				sf_msg("unknown option '-%c'; see --help", a[1]);
				return;
			}
			continue;
		}
		for (const struct argp_option *o = opts; o->name; o++)
			known |= strlen(o->name) == n && !strncmp(o->name, a + 2, n);
		known |= !strcmp(a, "--help") || !strcmp(a, "--usage") ||
			 !strcmp(a, "--version");
		if (!known) {
			sf_msg("unknown option '%.*s'; see --help", (int)n + 2, a);
			return;
		}
	}
	sf_msg("an option lacks its value; see --help");
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.args_doc = "COMMAND",
		.doc = doc,
	};
	int err;

	sf_prog = PROG;
	argp_err_exit_status = SF_EXIT_USAGE;
	/* our own one-line messages: argp's add a second "Try" line */
	err = argp_parse(&argp, argc, argv, ARGP_NO_ERRS, NULL, NULL);
	if (err) {
		if (!said_usage)
			unknown_option(argc, argv);
		return SF_EXIT_USAGE;
	}
	libbpf_set_print(libbpf_print_fn);

	if (strcmp(env.command, "check") && geteuid() != 0) {
		sf_msg("%s needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)",
			env.command);
		return SF_EXIT_PERM;
	}
	if (!strcmp(env.command, "load"))
		return cmd_load();
	if (!strcmp(env.command, "unload"))
		return cmd_unload();
	return cmd_check();
}
