// SPDX-License-Identifier: GPL-2.0
/*
 * sfconsumer - attach kmod-example's BPF side to a running satfeed engine.
 *
 *   sfconsumer attach [--push auto|fentry|freplace|none] [--no-pull] [--replace]
 *   sfconsumer detach
 *   sfconsumer status
 *
 * attach: loads consumer.bpf.c with the satfeed pinned maps it reads swapped
 * in (bpf_map__reuse_fd; the one it does not read, sf_verdict, is not
 * created) and registers it as the module's struct_ops (pull);
 * then, for every pinned engine program that contains satfeed's push hook
 * satfeed_window_closed(), loads a program from push.bpf.c against it and
 * attaches it (push).  Every link is pinned under the consumer's own bpffs
 * directory (default /sys/fs/bpf/satfeed_consumer), never under satfeed's
 * root, so satfeed-loader unload stays exact.  detach removes those pins,
 * which detaches everything.  status tells whether the links still point at
 * the running engine (an engine reload leaves them on the old one: attach
 * --replace then).
 *
 * Both BPF objects are compiled into this binary.  This file: the command
 * line and detach; sfconsumer_pins.c: the settings, die() and our pin
 * directory, which every command uses; sfconsumer_attach.c: attach;
 * sfconsumer_status.c: status.
 */
#include <errno.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sf_common.h"
#include "sf_consumer.h"
#include "sf_pins.h"
#include "sf_root_unpin.h"
#include "sfconsumer.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfconsumer [OPTIONS] attach|detach|status\n"
"\n"
"Attach kmod-example's BPF programs to the running satfeed engine: the pull\n"
"consumer (struct_ops satfeed_consumer_ops) and the push forwarders (one per\n"
"engine program that calls satfeed_window_closed()).  Needs the module\n"
"satfeed_consumer loaded and satfeed loaded (satfeed-loader load).\n"
"\n"
"  attach    load and attach; refused if already attached (see --replace)\n"
"  detach    remove our pins, which detaches everything\n"
"  status    show what is attached and whether it still follows the\n"
"            running engine (exit 3 if stale: re-run attach --replace)\n"
"\n"
"  --bpffs DIR    satfeed's pin root (default " SATFEED_DEFAULT_ROOT ")\n"
"  --pins DIR     our pin directory (default " SFC_DEFAULT_PIN_ROOT ",\n"
"                 or DIR_consumer beside a non-default --bpffs DIR)\n"
"  --push MODE    auto (default): freplace where the kernel allows it\n"
"                 (tp_btf engine programs), fentry elsewhere (fentry/fexit\n"
"                 engine programs cannot be extended); fentry; freplace;\n"
"                 none\n"
"  --no-pull      do not attach the struct_ops consumer\n"
"  --replace      attach: detach a previous attach first\n"
"  -v, --verbose  libbpf's messages (verifier logs)\n");
}

static int cmd_detach(void)
{
	int n, err = remove_pins(&n);

	if (err == -ENOENT) {
		fprintf(stderr, "sfconsumer: nothing attached (no %s)\n",
			env.pins);
		return 1;
	}
	if (err == -ENOTEMPTY)
		fprintf(stderr, "sfconsumer: removed %d pins; %s is left in place with the entries listed above, which sfconsumer did not pin\n",
			n, env.pins);
	if (err)
		return 1;
	printf("sfconsumer detached: removed %d pins from %s\n", n, env.pins);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pins", required_argument, NULL, 'p' },
		{ "push", required_argument, NULL, 'P' },
		{ "no-pull", no_argument, NULL, 'n' },
		{ "replace", no_argument, NULL, 'r' },
		SF_CONSUMER_OPTIONS,
		{}
	};
	const char *pins = NULL, *cmd;
	int c;

	sf_prog = "sfconsumer";
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pins = optarg;
			break;
		case 'P':
			for (c = 0; c < 4 && strcmp(optarg, push_names[c]); c++)
				;
			if (c == 4)
				die("unknown --push mode '%s' (auto, fentry, freplace, none)",
				    optarg);
			env.push = c;
			break;
		case 'n':
			env.pull = false;
			break;
		case 'r':
			env.replace = true;
			break;
		default:
			sf_consumer_option(c, optarg, &env.root, &env.verbose,
					   usage);
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return SF_EXIT_USAGE;
	}
	cmd = argv[optind];
	if (pins)
		snprintf(env.pins, sizeof(env.pins), "%s", pins);
	else if (!strcmp(env.root, SATFEED_DEFAULT_ROOT))
		snprintf(env.pins, sizeof(env.pins), "%s", SFC_DEFAULT_PIN_ROOT);
	else
		snprintf(env.pins, sizeof(env.pins), "%s_consumer", env.root);
	/* quiet by default: --push auto expects some loads to fail */
	sf_consumer_verbose(env.verbose);

	if (!strcmp(cmd, "attach"))
		return cmd_attach();
	if (!strcmp(cmd, "detach"))
		return cmd_detach();
	if (!strcmp(cmd, "status"))
		return cmd_status();
	usage(stderr);
	return SF_EXIT_USAGE;
}
