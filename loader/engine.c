// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * engine.c - bring satfeed's engine up on this kernel: its BTF, the bpffs
 * its root goes in, the programs of one attach mode configured, loaded and
 * attached, and its sf_info.  Both load and check do this (check to learn
 * which modes the kernel takes, and then destroys what it loaded), so it is
 * kept apart from either command and from the pinning that only load does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "sf_engine.h"
#include "sf_pins.h"
#include "loader.h"
#include "satfeed.skel.h"

const __u32 attach_order[NR_ATTACH_ORDER] = { SATFEED_ATTACH_FENTRY,
					      SATFEED_ATTACH_TP_BTF };

int engine_start(__u32 mode, bool understudies,
			struct satfeed_bpf **out, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, oopts, .kernel_log_level = 0);
	struct satfeed_bpf *skel;
	int err;

	oopts.btf_custom_path = env.btf;
	skel = satfeed_bpf__open_opts(&oopts);
	if (!skel) {
		err = -errno;
		snprintf(why, len, "cannot open the BPF object: %s",
			 strerror(-err));
		return err;
	}
	err = sf_engine_configure(skel, env.window_shift, env.max_age_ns,
				  understudies, !env.no_responses, why, len);
	if (err)
		goto destroy;
	err = sf_engine_select(skel->obj, mode, understudies, why, len);
	if (err)
		goto destroy;
	err = satfeed_bpf__load(skel);
	if (err) {
		/* EPERM is the kernel's policy: no program reached the
		 * verifier, so there is no log to promise */
		snprintf(why, len, "the kernel refused to load the %s programs: %s%s",
			 sf_attach_name(mode), strerror(-err),
			 err == -EPERM ? " (its policy: no program was verified)" :
			 env.verbose ? " (the verifier's log is above)" :
			 " (-v shows the verifier's log)");
		goto destroy;
	}
	err = sf_engine_attach(skel->skeleton, mode, why, len);
	if (err)
		goto destroy;
	err = sf_engine_start_age(skel->maps.sf_age, why, len);
	if (err)
		goto destroy;
	*out = skel;
	return 0;
destroy:
	satfeed_bpf__destroy(skel);
	return err;
}

int write_info(struct satfeed_bpf *skel, __u32 mode)
{
	struct satfeed_info info = {
		.abi_version = SATFEED_ABI_VERSION,
		.attach_mode = mode,
		.window_shift = env.window_shift,
		.window_samples = 1U << env.window_shift,
		.history = SATFEED_HISTORY,
		.max_targets = SATFEED_MAX_TARGETS,
		.sample_cap_ns = SATFEED_SAMPLE_CAP_NS,
		.loader_pid = getpid(),
		.max_age_ns = env.max_age_ns,
		.tick_ns = env.max_age_ns / 2,
	};
	struct timespec ts;
	__u32 zero = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	info.load_realtime_ns = (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	info.load_mono_ns = sf_now_mono_ns();
	return bpf_map__update_elem(skel->maps.sf_info, &zero, sizeof(zero),
				    &info, sizeof(info), 0);
}

bool have_btf(char *why, size_t len)
{
	const char *path = env.btf ? env.btf : "/sys/kernel/btf/vmlinux";
	struct btf *btf;

	if (access(path, R_OK)) {
		if (env.btf)
			snprintf(why, len, "cannot read BTF file %s: %s", path,
				 strerror(errno));
		else
			snprintf(why, len, "this kernel exposes no BTF (%s: %s); satfeed needs CONFIG_DEBUG_INFO_BTF=y, or --btf FILE",
				 path, strerror(errno));
		return false;
	}
	btf = btf__parse(path, NULL);
	if (!btf) {
		snprintf(why, len, "%s is not valid BTF: %s", path,
			 strerror(errno));
		return false;
	}
	btf__free(btf);
	return true;
}

/* The root's parent must be a bpffs; mount the standard one if missing. */
int ensure_bpffs(char *why, size_t len)
{
	char parent[PATH_MAX], *slash;
	int fs;

	snprintf(parent, sizeof(parent), "%s", env.root);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent) {
		snprintf(why, len, "%s: the pin root must be a directory inside a bpffs",
			 env.root);
		return -EINVAL;
	}
	*slash = '\0';
	fs = sf_is_bpffs(parent);
	if (fs == 1)
		return 0;
	if (!strcmp(parent, "/sys/fs/bpf")) {
		if (!mount("bpf", parent, "bpf", 0, "mode=0700"))
			return 0;
		snprintf(why, len, "cannot mount bpffs at %s: %s", parent,
			 strerror(errno));
		return -errno;
	}
	/*
	 * Never advise mounting a bpffs over an arbitrary directory (/tmp):
	 * the root belongs in the bpffs that is there for it.
	 */
	if (fs == -ENOENT)
		snprintf(why, len, "%s does not exist: the pin root must be a directory in a bpffs, such as /sys/fs/bpf/satfeed (--bpffs /sys/fs/bpf/NAME)",
			 parent);
	else if (fs < 0)
		snprintf(why, len, "%s: %s", parent, strerror(-fs));
	else
		snprintf(why, len, "%s is not a bpffs: the pin root must be a directory in a bpffs, such as /sys/fs/bpf/satfeed (--bpffs /sys/fs/bpf/NAME)",
			 parent);
	return fs < 0 ? fs : -ENOTDIR;
}
