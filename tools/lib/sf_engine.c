// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_engine.c - the engine's startup settings, its programs per attach
 * mode, and their attach order (sf_engine.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "satfeed.h"
#include "sf_common.h"
#include "sf_engine.h"
#include "satfeed.skel.h"

#define SF_HOOK_FEXIT(name, NAME, family, fd, fn)			\
	{ SATFEED_FEXIT_PROG_NAME(name), SATFEED_FEXIT_UNDERSTUDY_NAME(name), \
	  #fn, SATFEED_HOOK_FEXIT + SATFEED_SC_##NAME,		\
	  SATFEED_ATTACH_FENTRY },
#define SF_HOOK_FENTRY(name, NAME, family, fd, fn)			\
	{ SATFEED_FENTRY_PROG_NAME(name),				\
	  SATFEED_FENTRY_UNDERSTUDY_NAME(name), #fn,			\
	  SATFEED_HOOK_FENTRY + SATFEED_SC_##NAME, SATFEED_ATTACH_FENTRY },
const struct sf_hook sf_hooks[] = {
	{ "sf_sys_enter", "sf_sys_enter_u", NULL, SATFEED_HOOK_SYS_ENTER,
	  SATFEED_ATTACH_TP_BTF },
	{ "sf_sys_exit", "sf_sys_exit_u", NULL, SATFEED_HOOK_SYS_EXIT,
	  SATFEED_ATTACH_TP_BTF },
	SATFEED_SYSCALLS(SF_HOOK_FEXIT)
	SATFEED_WAIT_SYSCALLS(SF_HOOK_FENTRY)
};
#undef SF_HOOK_FEXIT
#undef SF_HOOK_FENTRY
const int sf_nr_hooks = sizeof(sf_hooks) / sizeof(sf_hooks[0]);

static const struct sf_hook *hook_of(const char *name, bool *understudy)
{
	for (int i = 0; i < sf_nr_hooks; i++) {
		if (!strcmp(name, sf_hooks[i].primary)) {
			*understudy = false;
			return &sf_hooks[i];
		}
		if (!strcmp(name, sf_hooks[i].understudy)) {
			*understudy = true;
			return &sf_hooks[i];
		}
	}
	return NULL;
}

bool sf_engine_is_understudy(const char *name)
{
	bool understudy = false;

	return hook_of(name, &understudy) && understudy;
}

int sf_uring_probe(struct sf_uring_support *u, char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	__u32 n;

	*u = (struct sf_uring_support){};
	if (!btf) {
		snprintf(why, len, "cannot read the kernel's BTF: %s",
			 strerror(errno));
		return -errno;
	}
	u->tracepoints =
		btf__find_by_name_kind(btf, "btf_trace_io_uring_complete",
				       BTF_KIND_TYPEDEF) > 0 &&
		btf__find_by_name_kind(btf, "btf_trace_io_uring_submit_req",
				       BTF_KIND_TYPEDEF) > 0;
	u->task_add = btf__find_by_name_kind(btf,
					     "btf_trace_io_uring_task_add",
					     BTF_KIND_TYPEDEF) > 0;
	u->cqring_wait = btf__find_by_name_kind(btf,
						"btf_trace_io_uring_cqring_wait",
						BTF_KIND_TYPEDEF) > 0;
	u->enter_fn = btf__find_by_name_kind(btf, SATFEED_SYSCALL_PREFIX
					     "io_uring_enter",
					     BTF_KIND_FUNC) > 0;
	/* an enumerator of an anonymous enum: CO-RE cannot name it */
	n = btf__type_cnt(btf);
	for (__u32 id = 1; id < n && !u->ms_flag; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_is_enum(t)) {
			const struct btf_enum *e = btf_enum(t);

			for (int i = 0; i < btf_vlen(t); i++)
				if (!strcmp(btf__name_by_offset(btf,
								e[i].name_off),
					    "REQ_F_APOLL_MULTISHOT"))
					u->ms_flag = (__u32)e[i].val;
		} else if (btf_is_enum64(t)) {
			const struct btf_enum64 *e = btf_enum64(t);

			for (int i = 0; i < btf_vlen(t); i++)
				if (!strcmp(btf__name_by_offset(btf,
								e[i].name_off),
					    "REQ_F_APOLL_MULTISHOT"))
					u->ms_flag = btf_enum64_value(&e[i]);
		}
	}
	btf__free(btf);
	return 0;
}

const char *sf_uring_ms_gap(const struct sf_uring_support *u)
{
	if (!u->tracepoints)
		return NULL;
	if (!u->ms_flag)
		return "this kernel's BTF has no REQ_F_APOLL_MULTISHOT: the CQEs of a multishot io_uring receive are not counted, only its last";
	if (!u->task_add)
		return "this kernel has no io_uring_task_add tracepoint: a multishot io_uring receive armed before it was watched is not counted until it is armed again";
	return NULL;
}

const char *sf_uring_sleep_gap(const struct sf_uring_support *u)
{
	if (!u->tracepoints || u->cqring_wait)
		return NULL;
	return "this kernel has no io_uring_cqring_wait tracepoint: every io_uring_enter with GETEVENTS counts as a wait, also one that did not sleep";
}

/* io_uring is off for every process of the machine (kernel.io_uring_disabled
 * 2, from 6.6): no ring can be made while the engine runs, unless an
 * administrator turns it back on, when multishot receives go uncounted but
 * for their last CQE until the engine is loaded again */
static bool uring_disabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v == 2;
}

int sf_engine_configure(struct satfeed_bpf *skel, __u32 window_shift,
			__u64 max_age_ns, bool understudies, bool responses,
			char *why, size_t len)
{
	struct sf_uring_support u;
	int err;

	skel->rodata->window_shift = window_shift;
	if (max_age_ns)
		skel->rodata->max_age_ns = max_age_ns;
	skel->rodata->with_understudies = understudies;
	/* the tp_btf mode's dispatch: syscall nr -> 1 + index in sf_syscalls */
	for (int i = 0; i < SATFEED_NR_SYSCALLS; i++) {
		long nr = sf_syscalls[i].nr;

		if (nr >= 0 && nr < (long)sizeof(skel->rodata->sc_index))
			skel->rodata->sc_index[nr] = i + 1;
	}
#ifdef SYS_io_uring_enter
	/* the io_uring wait, through the same dispatch */
	skel->rodata->sc_index[SYS_io_uring_enter] =
		SATFEED_SC_INDEX_URING_ENTER;
#endif
	skel->rodata->with_responses = responses;
	if (responses) {
		/* the connections a target accepts (tp_btf mode) */
		skel->rodata->sc_index[SYS_accept] = SATFEED_SC_INDEX_ACCEPT;
		skel->rodata->sc_index[SYS_accept4] = SATFEED_SC_INDEX_ACCEPT;
	} else {
		/* connections nobody follows: no close hook, no buckets */
		err = bpf_program__set_autoload(skel->progs.sf_conn_close,
						false);
		err = err ?: bpf_map__set_max_entries(skel->maps.sf_conn, 1);
		err = err ?: bpf_map__set_max_entries(skel->maps.sf_conn_other,
						      1);
		if (err) {
			snprintf(why, len, "cannot leave out sf_conn: %s",
				 strerror(-err));
			return err;
		}
	}
	err = sf_uring_probe(&u, why, len);
	if (err)
		return err;
	skel->rodata->uring_ms_flag = u.ms_flag;
	/* its bucket array (64 KB) only where a multishot receive can be
	 * followed at all */
	if (!u.tracepoints || !u.ms_flag || uring_disabled()) {
		err = bpf_map__set_max_entries(skel->maps.sf_uring_ms, 1);
		if (err) {
			snprintf(why, len, "cannot size sf_uring_ms: %s",
				 strerror(-err));
			return err;
		}
	}
	/* sf_engine_select() loads sf_uring_sleep where this holds */
	skel->rodata->uring_sleep_seen = u.tracepoints && u.cqring_wait;
	return 0;
}

/* The io_uring programs: which load, and the fentry pair's target. */
static int uring_select(struct bpf_program *prog, const char *name,
			__u32 mode, const struct sf_uring_support *u,
			char *why, size_t len)
{
	bool enter = !strcmp(name, "sf_uring_enter_e") ||
		     !strcmp(name, "sf_uring_enter_x");
	bool on = enter ? mode == SATFEED_ATTACH_FENTRY && u->enter_fn :
		  !strcmp(name, "sf_uring_task_add") ?
			  u->tracepoints && u->task_add && u->ms_flag :
		  !strcmp(name, "sf_uring_sleep") ?
			  u->tracepoints && u->cqring_wait :
			  u->tracepoints;
	int err;

	err = bpf_program__set_autoload(prog, on);
	if (!err && on && enter)
		err = bpf_program__set_attach_target(prog, 0,
						     SATFEED_SYSCALL_PREFIX
						     "io_uring_enter");
	if (err)
		snprintf(why, len, "cannot select %s: %s", name,
			 strerror(-err));
	return err;
}

int sf_engine_select(struct bpf_object *obj, __u32 mode, bool understudies,
		     char *why, size_t len)
{
	struct sf_uring_support u;
	struct bpf_program *prog;
	char fn[64];
	int err;

	err = sf_uring_probe(&u, why, len);
	if (err)
		return err;
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		const struct sf_hook *h;
		bool understudy, on;

		if (!strncmp(name, "sf_uring_", 9)) {
			err = uring_select(prog, name, mode, &u, why, len);
			if (err)
				return err;
			continue;
		}
		if (!strcmp(name, "sf_accept")) {
			/* tp_btf mode sees accept's return at sys_exit */
			err = bpf_program__set_autoload(prog,
					mode == SATFEED_ATTACH_FENTRY);
			if (err) {
				snprintf(why, len, "cannot select %s: %s",
					 name, strerror(-err));
				return err;
			}
			continue;
		}
		h = hook_of(name, &understudy);
		if (!h)		/* every mode runs it (sf_proc_exit); the
				 * configure step may have left it out */
			continue;
		on = h->mode == mode && (!understudy || understudies);
		err = bpf_program__set_autoload(prog, on);
		if (err) {
			snprintf(why, len, "cannot select %s: %s", name,
				 strerror(-err));
			return err;
		}
		if (!on || !h->syscall)
			continue;
		snprintf(fn, sizeof(fn), "%s%s", SATFEED_SYSCALL_PREFIX,
			 h->syscall);
		err = bpf_program__set_attach_target(prog, 0, fn);
		if (err) {
			snprintf(why, len, "no attach target %s: %s", fn,
				 strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * A tracepoint calls its probes in the order they were attached; a BPF
 * trampoline calls its fentry (fexit) programs newest first.  For each
 * event the primary must run before its understudy, which takes the
 * receipt the primary leaves (bpf/satfeed_engine.bpf.h).
 */
int sf_engine_attach(struct bpf_object_skeleton *s, __u32 mode, char *why,
		     size_t len)
{
	bool understudies_first = mode == SATFEED_ATTACH_FENTRY;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->prog_cnt; i++) {
			struct bpf_program *prog = *s->progs[i].prog;
			const char *name = bpf_program__name(prog);
			struct bpf_link *link;
			bool first;
			int err;

			if (!bpf_program__autoload(prog) || *s->progs[i].link)
				continue;
			first = sf_engine_is_understudy(name) ==
				understudies_first;
			if (first != (pass == 0))
				continue;
			link = bpf_program__attach(prog);
			if (!link) {
				err = -errno;
				snprintf(why, len, "cannot attach %s (%s mode): %s",
					 name, sf_attach_name(mode),
					 strerror(-err));
				return err;
			}
			*s->progs[i].link = link;
		}
	}
	return 0;
}

int sf_engine_start_age(struct bpf_map *age, char *why, size_t len)
{
	struct satfeed_age a;
	__u32 zero = 0;
	int status;
	pid_t pid;

	for (int i = 0; i < 100; i++) {
		if (bpf_map__lookup_elem(age, &zero, sizeof(zero), &a,
					 sizeof(a), 0)) {
			snprintf(why, len, "cannot read %s: %s",
				 SATFEED_PIN_AGE, strerror(errno));
			return -errno;
		}
		if (a.armed)
			return 0;
		pid = fork();
		if (pid < 0) {
			snprintf(why, len, "cannot fork to arm the age timer: %s",
				 strerror(errno));
			return -errno;
		}
		if (!pid)
			_exit(0);
		waitpid(pid, &status, 0);
		usleep(10000);
	}
	snprintf(why, len, "the age timer was not armed (sf_proc_exit did not run at a process exit)");
	return -ETIMEDOUT;
}
