// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * common.c - the setup every topic of test_kernel shares: the engine opened
 * from its skeleton with the programs a topic needs, or as the loader would
 * start it; its maps as libsatfeed sees pins; this process watched as a
 * target.
 */
#include "test_kernel.h"

__u64 test_max_age_ns;

static struct satfeed_bpf *open_configured(__u32 shift)
{
	struct satfeed_bpf *skel = satfeed_bpf__open();
	struct sf_uring_support u;
	char why[256];

	if (!ASSERT_TRUE(skel, "open: %s", strerror(errno)))
		return NULL;
	skel->rodata->window_shift = shift;
	if (test_max_age_ns)
		skel->rodata->max_age_ns = test_max_age_ns;
	for (int i = 0; i < SATFEED_NR_SYSCALLS; i++)
		if (sf_syscalls[i].nr >= 0)
			skel->rodata->sc_index[sf_syscalls[i].nr] = i + 1;
	/* the io_uring settings, as the loader makes them */
	skel->rodata->sc_index[SYS_io_uring_enter] =
		SATFEED_SC_INDEX_URING_ENTER;
	skel->rodata->sc_index[SYS_accept] = SATFEED_SC_INDEX_ACCEPT;
	skel->rodata->sc_index[SYS_accept4] = SATFEED_SC_INDEX_ACCEPT;
	if (!sf_uring_probe(&u, why, sizeof(why)))
		skel->rodata->uring_ms_flag = u.ms_flag;
	return skel;
}

/* Open the engine with only the named programs loaded. */
struct satfeed_bpf *open_engine(__u32 shift, const char *const *progs)
{
	struct satfeed_bpf *skel;
	struct bpf_program *prog;
	int err;

	skel = open_configured(shift);
	if (!skel)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj) {
		bool on = false;

		for (int i = 0; progs[i]; i++)
			on |= !strcmp(bpf_program__name(prog), progs[i]);
		bpf_program__set_autoload(prog, on);
	}
	err = satfeed_bpf__load(skel);
	if (!ASSERT_OK(err, "load"))
		goto destroy;
	err = satfeed_bpf__attach(skel);
	if (!ASSERT_OK(err, "attach"))
		goto destroy;
	return skel;
destroy:
	satfeed_bpf__destroy(skel);
	return NULL;
}

/* The engine's tp_btf mode through the loader's own selection and order. */
struct satfeed_bpf *start_engine(__u32 shift, bool understudies)
{
	struct satfeed_bpf *skel = open_configured(shift);
	char why[512] = "";
	int err;

	if (!skel)
		return NULL;
	skel->rodata->with_understudies = understudies;
	err = sf_engine_select(skel->obj, SATFEED_ATTACH_TP_BTF, understudies,
			       why, sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	err = satfeed_bpf__load(skel);
	if (!ASSERT_OK(err, "load"))
		goto destroy;
	err = sf_engine_attach(skel->skeleton, SATFEED_ATTACH_TP_BTF, why,
			       sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	err = sf_engine_start_age(skel->maps.sf_age, why, sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	return skel;
destroy:
	satfeed_bpf__destroy(skel);
	return NULL;
}

/* The engine's maps as libsatfeed sees pins. */
bool engine_maps(struct satfeed_bpf *skel, struct sf_pins *p)
{
	char why[256];
	int err = sf_pins_from_object(p, skel->obj, why, sizeof(why));

	return ASSERT_TRUE(!err, "engine maps: %s", why);
}

/* Locked through libsatfeed, or a lockless copy (the seq/seq_end check). */
int read_stream(const struct sf_pins *p, __u32 slot, __u32 stream,
		struct satfeed_stream *st, bool locked)
{
	__u32 key = satfeed_stream_key(slot, stream);

	if (locked)
		return sf_stream_read(p, slot, stream, st);
	return bpf_map_lookup_elem(p->streams_fd, &key, st) ? -errno : 0;
}

/* Watch this process through the same protocol as satfeedctl add. */
int watch_self(const struct sf_pins *p, int *slot)
{
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	char why[512];
	int err;

	err = sf_target_add(p, &self, SATFEED_SC_ALL, slot, why, sizeof(why));
	if (err)
		fprintf(stderr, "watch self: %s\n", why);
	return err;
}
