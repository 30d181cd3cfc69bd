// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * progs.c - bPF programs and their run-time statistics; the empty programs
 * (the floor of the attach mode) and attaching each configuration.
 */
#include "sfbench.h"

const char *const pr_name[NR_PR] = { "enter", "exit" };

struct progset psets[NR_CFG][NR_PR];

void progset_close(struct progset *ps)
{
	for (int i = 0; i < ps->n; i++)
		if (ps->fd[i] >= 0)
			close(ps->fd[i]);
	ps->n = 0;
}

struct pstat prog_stat(const struct progset *ps)
{
	struct pstat s = {};

	for (int i = 0; i < ps->n; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (ps->fd[i] >= 0 &&
		    !bpf_prog_get_info_by_fd(ps->fd[i], &info, &len)) {
			s.rt += info.run_time_ns;
			s.cnt += info.run_cnt;
		}
	}
	return s;
}

/* the hooks of a class in fentry mode: the waits' entry, every exit */
const char *const *fentry_hook_names(int p, int *n)
{
	if (p == PR_ENTER) {
		*n = ARRAY_SIZE(fentry_hooks);
		return fentry_hooks;
	}
	*n = ARRAY_SIZE(fexit_hooks);
	return fexit_hooks;
}

/* Does phase ph run configuration cfg's programs of class p?  Always, except
 * for empty and satfeed in fentry mode, where only the hooked syscalls do. */
bool hooked(int cfg, int ph, int p)
{
	if (o.attach != AT_FENTRY || (cfg != CFG_EMPTY && cfg != CFG_SATFEED))
		return true;
	return phases[ph].fentry_hooked & (1 << p);
}

__u32 prog_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_prog_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/* Programs on raw_syscalls sys_enter/sys_exit that are not ours: they make
 * the "none" configuration something else than no tracing. */
int foreign_hooks(char *buf, size_t len)
{
	__u32 ours[NR_CFG * NR_PR * 2 * MAX_HOOK_PROGS], id = 0;
	size_t off = 0;
	int n = 0, nours = 0;

	for (int c = 0; c < NR_CFG; c++)
		for (int p = 0; p < NR_PR; p++)
			for (int i = 0; i < psets[c][p].n; i++)
				ours[nours++] = prog_id(psets[c][p].fd[i]);
	buf[0] = '\0';
	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li = {};
		struct bpf_prog_info pi = {};
		__u32 ll = sizeof(li), pl = sizeof(pi);
		char tp[64] = "";
		bool mine = false;
		int fd, pfd;

		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		li.raw_tracepoint.tp_name = (__u64)(unsigned long)tp;
		li.raw_tracepoint.tp_name_len = sizeof(tp);
		if (bpf_link_get_info_by_fd(fd, &li, &ll) ||
		    li.type != BPF_LINK_TYPE_RAW_TRACEPOINT ||
		    (strcmp(tp, "sys_enter") && strcmp(tp, "sys_exit"))) {
			close(fd);
			continue;
		}
		close(fd);
		for (int i = 0; i < nours; i++)
			mine |= ours[i] && ours[i] == li.prog_id;
		if (mine)
			continue;
		n++;
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd >= 0 && !bpf_prog_get_info_by_fd(pfd, &pi, &pl))
			off += snprintf(buf + off, off < len ? len - off : 0,
					"%s%s(prog %u on %s)", off ? ", " : "",
					pi.name, li.prog_id, tp);
		if (pfd >= 0)
			close(pfd);
	}
	return n;
}

static bool prog_is_fentry(struct bpf_program *prog)
{
	enum bpf_attach_type t = bpf_program__expected_attach_type(prog);

	return t == BPF_TRACE_FENTRY || t == BPF_TRACE_FEXIT;
}

/* The kernel function the fentry hook of syscall name attaches to. */
static const char *hook_fn(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(fexit_hooks); i++)
		if (!strcmp(name, fexit_hooks[i]))
			return fexit_fns[i];
	return name;
}

static void empty_add(int p, struct bpf_program *prog)
{
	struct progset *ps = &psets[CFG_EMPTY][p];

	empty_progs[nr_empty_progs++] = prog;
	/* the skeleton owns the descriptor: never progset_close()d */
	ps->fd[ps->n++] = bpf_program__fd(prog);
}

/*
 * Open and load tests/bench/progs/sfbench_empty.bpf.c for the attach mode:
 * in tp_btf mode the floor sfb_enter / sfb_exit (and the probes unless
 * --no-probes); in fentry mode the floor sfb_e_<name> / sfb_x_<name> on
 * exactly satfeed's hooks (satfeed_syscalls.h), and nothing else.
 */
void empty_load(void)
{
	struct bpf_program *prog;
	char fn[64];
	int err;

	empty = sfbench_empty_bpf__open();
	if (!empty)
		die("cannot open the empty programs: %s", strerror(errno));
	empty->rodata->sfb_tgid = W_T.pid;
	bpf_object__for_each_program(prog, empty->obj) {
		bool load;

		if (o.attach == AT_FENTRY)
			load = prog_is_fentry(prog);
		else
			load = !prog_is_fentry(prog) &&
			       (o.probes || prog == empty->progs.sfb_enter ||
				prog == empty->progs.sfb_exit);
		bpf_program__set_autoload(prog, load);
		if (!load || !prog_is_fentry(prog))
			continue;
		/* sfb_x_sendto -> __x64_sys_sendto, sfb_x_sendfile ->
		 * __x64_sys_sendfile64, as satfeed-loader does */
		snprintf(fn, sizeof(fn), "%s%s", SATFEED_SYSCALL_PREFIX,
			 hook_fn(bpf_program__name(prog) + strlen("sfb_x_")));
		err = bpf_program__set_attach_target(prog, 0, fn);
		if (err)
			die("no attach target %s for %s: %s", fn,
			    bpf_program__name(prog), strerror(-err));
	}
	err = sfbench_empty_bpf__load(empty);
	if (err)
		die("cannot load the empty programs (%s mode): %s%s",
		    attach_name[o.attach], strerror(-err),
		    o.attach == AT_FENTRY && err == -EPERM ?
			    " (this kernel refuses fentry programs)" : "");
	if (o.attach == AT_TP_BTF) {
		empty_add(PR_ENTER, empty->progs.sfb_enter);
		empty_add(PR_EXIT, empty->progs.sfb_exit);
		return;
	}
	for (int p = 0; p < NR_PR; p++) {
		const char *const *hooks;
		char name[64];
		int nh;

		hooks = fentry_hook_names(p, &nh);
		for (int i = 0; i < nh; i++) {
			snprintf(name, sizeof(name), "sfb_%c_%s",
				 p == PR_ENTER ? 'e' : 'x', hooks[i]);
			prog = bpf_object__find_program_by_name(empty->obj,
								name);
			if (!prog)
				die("tests/bench/progs/sfbench_empty.bpf.c has no program %s",
				    name);
			empty_add(p, prog);
		}
	}
}

int setup(int cfg)
{
	int err;

	switch (cfg) {
	case CFG_EMPTY:
		for (int i = 0; i < nr_empty_progs; i++) {
			empty_links[i] = bpf_program__attach(empty_progs[i]);
			if (!empty_links[i]) {
				err = -errno;
				msg("cannot attach the empty program %s: %s",
				    bpf_program__name(empty_progs[i]),
				    strerror(errno));
				return err;
			}
		}
		return 0;
	case CFG_SATFEED:
		return satfeed_load();
	case CFG_BPFTRACE:
		return bt_start();
	}
	return 0;
}

int teardown(int cfg)
{
	switch (cfg) {
	case CFG_EMPTY:
		for (int i = 0; i < nr_empty_progs; i++) {
			bpf_link__destroy(empty_links[i]);
			empty_links[i] = NULL;
		}
		return 0;
	case CFG_SATFEED:
		satfeed_close_fds();
		return satfeed_unload();
	case CFG_BPFTRACE:
		return bt_stop();
	}
	return 0;
}
