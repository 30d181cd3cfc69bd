/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * loader.h - what satfeed-loader's files share: the parsed command line
 * (main.c), the three commands (load.c, unload.c, check.c), bringing the
 * engine up on this kernel, which load and check both do (engine.c), and
 * the pin root and its swap directory, which load and unload both go
 * through (swap.c).
 */
#ifndef SATFEED_LOADER_H
#define SATFEED_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "sf_preempt.h"
#include "sf_root_unpin.h"

#define PROG "satfeed-loader"

struct satfeed_bpf;

/* Everything the command line says (main.c). */
struct loader_env {
	bool verbose;
	bool replace;
	const char *root;
	const char *btf;
	__u32 attach;		/* SATFEED_ATTACH_NONE: auto */
	enum sf_understudy_choice understudy;
	__u32 window_shift;
	__u64 max_age_ns;
	bool no_responses;	/* --no-responses */
	const char *command;
};

extern struct loader_env env;

/* The commands: each returns an enum sf_exit. */
int cmd_load(void);
int cmd_unload(void);
int cmd_check(void);

/* ---- engine.c ---- */

/* The attach modes, cheapest first: auto takes the first that works. */
#define NR_ATTACH_ORDER 2
extern const __u32 attach_order[NR_ATTACH_ORDER];

/* Can the kernel's BTF (or --btf FILE) be read?  If not, why says why. */
bool have_btf(char *why, size_t len);

/* The root's parent must be a bpffs; mount the standard one if missing. */
int ensure_bpffs(char *why, size_t len);

/*
 * Open, configure and load the engine for one attach mode, then attach it.
 * Returns 0 with *out set, or a negative errno with a reason in why.
 */
int engine_start(__u32 mode, bool understudies, struct satfeed_bpf **out,
		 char *why, size_t len);

/* Fill the engine's sf_info: its ABI, mode, window and load time. */
int write_info(struct satfeed_bpf *skel, __u32 mode);

/* ---- swap.c ---- */

/* where a load pins, before it is renamed into place (sf_root.h) */
extern char swap_path[PATH_MAX];

/*
 * Open ROOT if it exists and can be trusted (sf_root_unpin.h).  Returns 0,
 * -ENOENT when there is none, or another -errno after saying why.
 */
int open_root(struct sf_saferoot *r);

/*
 * Remove what is in the swap directory: this load's pins after a failure, a
 * replaced or unloaded engine, or what a killed run left.  Returns 0 when
 * nothing is left there, -ENOTEMPTY when foreign entries went back to ROOT
 * (reported), another -errno after saying why.
 */
int retire_swap(int *removed);

/*
 * Can a load be swapped in for what ROOT holds?  Its progs/ and links/ must
 * be directories, where whatever else is there can be carried over.
 */
int check_pin_dirs(int root_fd);

/* Pin the engine's maps, programs and links into a new swap directory. */
int pin_everything(struct satfeed_bpf *skel);

/*
 * The last step of a load: the swap directory becomes ROOT in one rename.
 * When ROOT exists they trade places, and the old one is then retired.
 */
int swap_in(bool root_exists);

#endif /* SATFEED_LOADER_H */
