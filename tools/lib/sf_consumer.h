/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_consumer.h - what the user space of a BPF consumer of satfeed's pins
 * (kmod-example's sfconsumer, the sched_ext scheduler scx_satfeed) shares:
 * the pin root from its command line, the engine's maps swapped into its
 * object before load, and libbpf's messages.
 *
 *	static const char *const reads[] = {
 *		SATFEED_PIN_TARGETS, SATFEED_PIN_STREAMS, NULL
 *	};
 *
 *	err = sf_consumer_root(optarg, why, sizeof(why));	// --bpffs
 *	err = sf_pins_open(&pins, root, why, sizeof(why));
 *	obj = bpf_object__open_mem(...);
 *	err = sf_consumer_reuse(obj, &pins, reads, why, sizeof(why));
 *	err = bpf_object__load(obj);
 *
 * A consumer's BPF side declares the engine's maps through
 * satfeed_maps.bpf.h, all of them, whether it reads them or not; libbpf
 * would create every one it is not told about as an empty private map.
 */
#ifndef __SF_CONSUMER_H
#define __SF_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct bpf_object;
struct sf_pins;

/*
 * The options every consumer tool takes, for its getopt_long() table (its
 * own long-only options number from SF_OPT_NEXT on):
 *	--bpffs DIR	satfeed's pin root: an absolute path of at most 200
 *			characters, as satfeed-loader takes
 *	-v, --verbose	libbpf's messages
 *	-h, --help
 */
#define SF_OPT_BPFFS	256
#define SF_OPT_NEXT	257
#define SF_CONSUMER_OPTIONS					\
	{ "bpffs", required_argument, NULL, SF_OPT_BPFFS },	\
	{ "verbose", no_argument, NULL, 'v' },			\
	{ "help", no_argument, NULL, 'h' }

/*
 * Take option c (with its argument arg) that the tool itself does not: one
 * of the above, into *root or *verbose; --help prints usage on stdout and
 * exits 0; a bad --bpffs or an unknown option exits SF_EXIT_USAGE (usage on
 * stderr for the latter).
 */
void sf_consumer_option(int c, const char *arg, const char **root,
			bool *verbose, void (*usage)(FILE *f));

/*
 * Before load: every map of obj named after one of satfeed's pins
 * (SATFEED_PIN_*) is the engine's map from p when its name is in reads
 * (NULL-terminated), and is not created at all otherwise (a program that
 * used it anyway fails to load: libbpf names the map).  Every name in reads
 * must be a map of obj.  0, or an enum sf_exit with a reason in *why.
 */
int sf_consumer_reuse(struct bpf_object *obj, const struct sf_pins *p,
		      const char *const *reads, char *why, size_t len);

/* The id of the map pinned as root/name; 0 when there is none. */
__u32 sf_consumer_pin_id(const char *root, const char *name);

/*
 * libbpf's messages (verifier logs, and the failures a consumer expects
 * while it probes, such as a refused freplace): on stderr when verbose,
 * else none.
 */
void sf_consumer_verbose(bool verbose);

#endif /* __SF_CONSUMER_H */
