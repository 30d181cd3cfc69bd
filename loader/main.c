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
#include "sf_root.h"
#include "loader.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SF_STR_(x) #x
#define SF_STR(x) SF_STR_(x)

struct loader_env env = {
	.root = SATFEED_DEFAULT_ROOT,
	.window_shift = SATFEED_WINDOW_SHIFT,
	.max_age_ns = SATFEED_MAX_AGE_NS_DEFAULT,
};

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
"  load and unload hold the root's lock, a file in " SF_ROOT_LOCK_DIR " that only\n"
"  root can make, which satfeedctl's changes take too: one change at a\n"
"  time, and a load that waited finds the winner's engine (exit 8).  No\n"
"  command waits for it more than " SF_STR(SF_ROOT_LOCK_TIMEOUT_S) " s (SATFEED_LOCK_TIMEOUT=SECONDS\n"
"  in the environment sets it): it gives up naming the holder's pid.\n"
"  Readers (satfeedctl show, targets, watch, export) take no lock.  What a\n"
"  killed load or unload leaves in ROOTNAME~swap is never live; the next\n"
"  load, unload, satfeedctl add or remove, or 'satfeedctl check --repair'\n"
"  removes it.  A root's name must not contain '~'.\n"
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
"  0 ok (and for --help), 1 runtime error, 2 bad argument, 3 not loaded\n"
"  (unload), 4 permission denied (not root), 8 already loaded (load\n"
"  without --replace).\n"
"\n"
"EXAMPLES\n"
"  satfeed-loader load\n"
"  satfeed-loader --attach tp_btf --window 4096 load\n"
"  satfeed-loader check\n"
"  satfeed-loader unload\n"
"  satfeed-loader load --help    (each command's own usage; does nothing)\n"
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
	{ "no-responses", 'N', NULL, 0,
	  "load: leave out the response stream, service time and "
	  "per-connection state (their streams stay empty): each traced send "
	  "and receive costs less, and 427 KB of maps less (what make bench "
	  "compares)", 0 },
	{ "replace", 'r', NULL, 0,
	  "load: replace an existing load, carrying its active targets over "
	  "(their windows start afresh)", 0 },
	{ "btf", 'B', "FILE", 0,
	  "kernel BTF to use instead of /sys/kernel/btf/vmlinux", 0 },
	{ "verbose", 'v', NULL, 0,
	  "print libbpf's debug output, and the verifier's log of a program "
	  "the kernel refuses", 0 },
	{ "help", 'h', NULL, 0,
	  "this text; after a command, that command's usage (does nothing)",
	  -1 },
	{ "version", 'V', NULL, 0, "version and ABI", -1 },
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
	case 'b': {
		char why[512];

		if (arg[0] != '/' || strlen(arg) > 200) {
			return bad("--bpffs needs an absolute path of at most 200 characters");
		}
		for (size_t n = strlen(arg); n > 1 && arg[n - 1] == '/';)
			arg[--n] = '\0';
		if (sf_root_name_check(arg, why, sizeof(why)))
			return bad("--bpffs %s", why);
		env.root = arg;
		break;
	}
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
	case 'N':
		env.no_responses = true;
		break;
	case 'B':
		env.btf = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case 'h':
	case 'V':
		break;	/* found before parsing: help_wanted() */
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

/* ---- --help: the whole usage, or one command's ---- */

struct cmd_help {
	const char *name;
	const char *synopsis;
	const char *text;
	const char *opts;	/* keys of the options it takes */
	const char *exits;
};

static const struct cmd_help cmd_helps[] = {
	{ "load",
	  "[--bpffs DIR] [--attach MODE] [--understudy WHEN] [--window N] [--no-responses] [--replace] [--btf FILE] [-v] load",
	  "Load the engine, attach it to the syscall hooks and pin its maps,\n"
	  "programs and links under ROOT (--bpffs), then exit: the engine keeps\n"
	  "running.  Refused if ROOT already holds a load, unless --replace.\n"
	  "Everything is pinned into ROOTNAME~swap next to ROOT and renamed into\n"
	  "place in one step, so ROOT is never half loaded.  --replace loads the\n"
	  "new engine, re-adds each active target of the old one with its\n"
	  "syscalls, and only then swaps it in: a replace that fails leaves the\n"
	  "old engine running.  Holds the root's lock (see --help).\n",
	  "bauwrBv",
	  "0 loaded, 1 runtime error (the reason on stderr), 2 bad argument,\n"
	  "  4 not root, 8 already loaded (without --replace)." },
	{ "unload",
	  "[--bpffs DIR] [-v] unload",
	  "Remove every pin load made under ROOT (--bpffs); this detaches the\n"
	  "engine.  ROOT is renamed away first, in one step, so nobody sees it\n"
	  "half unpinned; entries satfeed did not pin are left in place and\n"
	  "listed.  Holds the root's lock (see --help).\n",
	  "bv",
	  "0 unloaded, 1 runtime error, 2 bad argument, 3 not loaded, 4 not root." },
	{ "check",
	  "[--bpffs DIR] [--attach MODE] [--understudy WHEN] [--btf FILE] [-v] check",
	  "Report what the running kernel supports (BTF, bpffs, the preemption\n"
	  "model), which attach mode load would use and why each other mode is\n"
	  "refused (-v adds the verifier's log of a refused program), and for an\n"
	  "engine pinned under ROOT the runs of each of its programs the kernel\n"
	  "skipped since load (recursion misses).  Pins nothing, takes no lock;\n"
	  "probing the attach modes needs root.\n",
	  "bauBv",
	  "0 a mode works, 1 no mode works, 2 bad argument, 4 not root\n"
	  "  (the kernel part is still printed)." },
};

/* print text wrapped at 79 columns, each line indented by ind */
static void wrap(const char *text, int ind, int first)
{
	int col = first;
	const char *w = text;

	while (*w) {
		size_t n = strcspn(w, " ");

		if (col > ind && col + 1 + (int)n > 79) {
			printf("\n%*s", ind, "");
			col = ind;
		} else if (col > ind) {
			putchar(' ');
			col++;
		}
		printf("%.*s", (int)n, w);
		col += n;
		w += n;
		while (*w == ' ')
			w++;
	}
	putchar('\n');
}

static void cmd_usage(const struct cmd_help *h)
{
	printf("Usage: " PROG " %s\n\n%s\nOPTIONS\n", h->synopsis, h->text);
	for (const char *k = h->opts; *k; k++) {
		for (const struct argp_option *o = opts; o->name; o++) {
			char head[64];
			int n;

			if (o->key != *k)
				continue;
			n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->key,
				     o->name, o->arg ? "=" : "",
				     o->arg ? o->arg : "");
			printf("%s%*s", head, n < 22 ? 22 - n : 1, "");
			wrap(o->doc, 22, n < 22 ? 22 : n + 1);
		}
	}
	printf("  -h, --help          this text (does nothing else)\n"
	       "\nEXIT STATUS\n  %s\n\n'" PROG " --help' describes every command, the attach modes,\n"
	       "understudies and the root's lock.\n", h->exits);
}

/*
 * -h, --help, -? or --usage anywhere before "--": print the usage of the
 * command named (or the whole one) and do nothing else; -V or --version
 * before any of them: the version.  Options that take
 * a value are skipped with it, so --bpffs -h is not a help request.
 */
static bool help_wanted(int argc, char **argv, const struct argp *argp)
{
	const char *cmd = NULL;
	bool help = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help") ||
		    !strcmp(a, "-?") || !strcmp(a, "--usage")) {
			help = true;
			continue;
		}
		if (!help && (!strcmp(a, "-V") || !strcmp(a, "--version"))) {
			sf_print_version();
			return true;
		}
		if (a[0] != '-') {
			if (!cmd)
				cmd = a;
			continue;
		}
		/* "-b DIR", "--bpffs DIR": the value is the next word */
		for (const struct argp_option *o = opts; o->name; o++) {
			if (!o->arg)
				continue;
			if ((a[1] == o->key && !a[2]) ||
			    (a[1] == '-' && !strcmp(a + 2, o->name)))
				i++;
		}
	}
	if (!help)
		return false;
	for (size_t i = 0; cmd && i < ARRAY_SIZE(cmd_helps); i++) {
		if (!strcmp(cmd, cmd_helps[i].name)) {
			cmd_usage(&cmd_helps[i]);
			return true;
		}
	}
	argp_help(argp, stdout, ARGP_HELP_SHORT_USAGE | ARGP_HELP_LONG |
				ARGP_HELP_DOC, (char *)PROG);
	return true;
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
	if (help_wanted(argc, argv, &argp))
		return SF_EXIT_OK;
	/* our own one-line messages: argp's add a second "Try" line */
	err = argp_parse(&argp, argc, argv, ARGP_NO_ERRS | ARGP_NO_HELP, NULL,
			 NULL);
	if (err) {
		if (!said_usage)
			unknown_option(argc, argv);
		return SF_EXIT_USAGE;
	}
	libbpf_set_print(libbpf_print_fn);

	if (strcmp(env.command, "check") && geteuid() != 0) {
		sf_msg("%s needs root (CAP_BPF and CAP_SYS_ADMIN)",
			env.command);
		return SF_EXIT_PERM;
	}
	if (!strcmp(env.command, "load"))
		return cmd_load();
	if (!strcmp(env.command, "unload"))
		return cmd_unload();
	return cmd_check();
}
