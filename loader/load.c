// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * load.c - `satfeed-loader load` and `load --replace`: under the root lock,
 * retire what a killed run left, refuse a root that holds an engine (unless
 * --replace), start the engine in the cheapest attach mode that works,
 * carry the old engine's targets over (carry.h), pin everything into the
 * swap directory and swap it in (swap.c).  It is the order of those steps,
 * and what each failure leaves, that this file holds; the steps themselves
 * are engine.c's, swap.c's and libsatfeed's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "carry.h"
#include "sf_common.h"
#include "sf_engine.h"
#include "sf_preempt.h"
#include "sf_root.h"
#include "sf_root_unpin.h"
#include "loader.h"
#include "satfeed.skel.h"

int cmd_load(void)
{
	struct satfeed_bpf *skel = NULL;
	char why[512] = "", first[512] = "", uwhy[512];
	int err, lockfd, removed, carried = 0, dropped = 0;
	bool existing, root_exists, understudies = false;
	struct sf_saferoot root;
	struct sf_uring_support uring;
	char uring_why[256];
	struct sf_preempt pre;
	__u32 mode = 0;

	if (!have_btf(why, sizeof(why))) {
		sf_msg("%s", why);
		return SF_EXIT_ERROR;
	}
	if (ensure_bpffs(why, sizeof(why))) {
		sf_msg("%s", why);
		return SF_EXIT_ERROR;
	}
	lockfd = sf_root_lock_why(env.root, LOCK_EX, why, sizeof(why));
	if (lockfd < 0) {
		sf_msg("%s", why);
		return sf_lock_exit(lockfd);
	}
	/* what a killed load or unload left: never live, retired first */
	retire_swap(&removed);
	err = SF_EXIT_ERROR;
	if (sf_root_swap_pick(env.root, swap_path, sizeof(swap_path))) {
		sf_msg("%s: path too long", env.root);
		goto unlock;
	}
	if (open_root(&root) == -ENOENT) {
		root_exists = existing = false;
	} else if (root.fd >= 0) {
		root_exists = true;
		existing = sf_saferoot_holds(&root, sf_engine_layout,
					     SF_ENGINE_LAYOUT_LEN);
		err = check_pin_dirs(root.fd) ? SF_EXIT_ERROR : SF_EXIT_OK;
		sf_saferoot_close(&root);
		if (err)
			goto unlock;
	} else {
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	if (existing && !env.replace) {
		sf_msg("satfeed is already loaded at %s (use --replace, or 'unload' first)",
			env.root);
		err = SF_EXIT_EXISTS;
		goto unlock;
	}

	err = -ENOENT;
	sf_preempt_probe(&pre, env.btf);
	for (size_t i = 0; i < NR_ATTACH_ORDER; i++) {
		if (env.attach && env.attach != attach_order[i])
			continue;
		understudies = sf_understudy_wanted(&pre, attach_order[i],
						    env.understudy, uwhy,
						    sizeof(uwhy));
		err = engine_start(attach_order[i], understudies, &skel, why,
				   sizeof(why));
		if (!err) {
			mode = attach_order[i];
			break;
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s", why);
	}
	if (err && env.attach == SATFEED_ATTACH_FENTRY) {
		/* the kernel's policy (EPERM) or no fentry support */
		sf_msg("%s; --attach tp_btf (or auto, the default) works where fentry is refused ('satfeed-loader check' says which modes this kernel allows)",
			why);
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	if (err) {
		sf_msg("%s", env.attach ? why : first);
		if (!env.attach && strcmp(first, why))
			sf_msg("%s", why);
		/* as root, EPERM is the kernel's policy, not the caller's */
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	err = write_info(skel, mode);
	if (err) {
		sf_msg("cannot write %s: %s", SATFEED_PIN_INFO,
			strerror(-err));
		goto destroy;
	}
	/* the new engine runs; the old one keeps running until the swap */
	if (existing)
		sf_carry_targets(env.root, skel->obj, &carried, &dropped);
	err = pin_everything(skel);
	if (!err)
		err = swap_in(root_exists);
	if (err) {
		sf_msg("cannot pin under %s: %s", env.root, strerror(-err));
		retire_swap(&removed);
		goto destroy;
	}
	printf("satfeed loaded: attach %s, window %u samples, understudies %s, pinned at %s\n",
	       sf_attach_name(mode), 1U << env.window_shift,
	       understudies ? "on" : "off", env.root);
	if (env.no_responses)
		printf("responses, service time and per-connection state: off (--no-responses)\n");
	if (!sf_uring_probe(&uring, uring_why, sizeof(uring_why))) {
		if (sf_uring_ms_gap(&uring))
			sf_msg("note: %s", sf_uring_ms_gap(&uring));
		if (sf_uring_sleep_gap(&uring))
			sf_msg("note: %s", sf_uring_sleep_gap(&uring));
	}
	if (existing)
		printf("replaced the engine that was there: carried %d target%s over, dropped %d\n",
		       carried, carried == 1 ? "" : "s", dropped);
	/* the swap directory now holds what ROOT held: the old engine */
	if (root_exists && retire_swap(&removed))
		sf_msg("what %s held is left in %s; the next satfeed command retires it",
			env.root, swap_path);
destroy:
	satfeed_bpf__destroy(skel);
unlock:
	close(lockfd);
	return err ? (err > 0 ? err : SF_EXIT_ERROR) : SF_EXIT_OK;
}
