// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeedctl - the tiny CLI: watch targets and read satfeed's windows.
 *
 * Opens the pins only (no skeleton, no program loading).  Streams are read
 * with BPF_F_LOCK, i.e. under the same spin lock the engine holds while it
 * closes a window, so every window printed is whole.  add/remove serialise
 * on an flock of the pin root, so two satfeedctl never pick the same slot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "sf_common.h"
#include "sf_escape.h"

#define PROG "satfeedctl"

static const char usage[] =
"Usage: satfeedctl [--bpffs DIR] COMMAND [OPTIONS]\n"
"\n"
"Watch processes or cgroups with satfeed and read their request-level\n"
"feedback: RPS from the gaps between sends, saturation from the exact\n"
"variance of the gaps between sends and between receives, slack from the\n"
"mean duration of epoll/select/poll waits, each over windows of N samples.\n"
"The engine must be loaded first (satfeed-loader load).\n"
"\n"
"COMMANDS\n"
"  add --pid PID | --cgroup DIR [--send LIST] [--recv LIST] [--poll LIST]\n"
"        watch a process (all its threads) or a cgroup v2 directory (every\n"
"        task in it or below it).  LIST is a comma-separated set of syscalls\n"
"        of that family that count (default: all of them):\n"
"          send: sendto,sendmsg,sendmmsg,write,writev\n"
"          recv: recvfrom,recvmsg,recvmmsg,read,readv\n"
"          poll: epoll_wait,epoll_pwait,epoll_pwait2,select,pselect6,poll,ppoll\n"
"        read/readv/write/writev count only on sockets; 'send'/'recv' mean\n"
"        sendto/recvfrom (that is what libc's send()/recv() call).\n"
"  remove --pid PID | --cgroup DIR | --all\n"
"        stop watching; its windows are discarded.\n"
"  targets [--json]\n"
"        list the watched targets.\n"
"  show [--json] [--pid PID | --cgroup DIR]\n"
"        the latest closed window of each stream of each target.\n"
"  watch [--interval SECONDS] [--count N]\n"
"        refresh a view every SECONDS (default 1): one line per target and\n"
"        stream, with the trend of the last 8 windows; Ctrl-C ends it.\n"
"\n"
"OPTIONS\n"
"  -b, --bpffs DIR   pin root of the engine (default " SATFEED_DEFAULT_ROOT ")\n"
"  -h, --help        this text\n"
"\n"
"COLUMNS (show)\n"
"  WIN      windows closed so far (the latest one's sequence number)\n"
"  PEND     samples in the window in progress\n"
"  MEAN     mean of the latest window: gap (send/recv) or wait (poll), us\n"
"  SD       square root of its exact variance, us\n"
"  RATE     events per second of the latest window (send: RPS_obs)\n"
"  LAST     time since the stream's last event\n"
"\n"
"EXIT STATUS\n"
"  0 ok; 1 runtime error; 2 bad argument; 3 satfeed not loaded;\n"
"  4 permission denied; 5 ABI mismatch; 6 unknown or vanished target;\n"
"  7 target table full; 8 target already watched.\n"
"\n"
"EXAMPLES\n"
"  satfeedctl add --pid $(pidof memcached) --send sendmsg --recv read\n"
"  satfeedctl add --cgroup /sys/fs/cgroup/system.slice/nginx.service\n"
"  satfeedctl show --json\n";

static const char *root = SATFEED_DEFAULT_ROOT;
static char reason[512];

static int fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* ---- target selection ---- */

struct selector {
	__u32 kind;		/* SATFEED_TARGET_FREE: none given */
	__u64 id;
	int level;		/* cgroup depth below the cgroup2 root */
	char path[96];		/* cgroup path relative to the mount */
};

static int parse_pid(const char *arg, struct selector *sel)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v <= 0 || v > INT_MAX)
		return fail(SF_EXIT_USAGE, "'%s' is not a process id", arg);
	sel->kind = SATFEED_TARGET_PID;
	sel->id = v;
	return 0;
}

static int cgroup_id(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 cgid;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.cgid;
	return 0;
}

static int parse_cgroup(const char *arg, struct selector *sel)
{
	char real[PATH_MAX], up[PATH_MAX], *slash;
	struct statfs sfs;
	struct stat st;
	int level = 0, err;

	if (!realpath(arg, real))
		return fail(SF_EXIT_TARGET, "%s: %s", arg, strerror(errno));
	if (stat(real, &st) || !S_ISDIR(st.st_mode))
		return fail(SF_EXIT_USAGE, "%s is not a directory", arg);
	if (statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
		return fail(SF_EXIT_USAGE, "%s is not a cgroup v2 directory",
			    arg);
	/* depth: walk up while the parent is still the same cgroup2 mount */
	snprintf(up, sizeof(up), "%s", real);
	while ((slash = strrchr(up, '/')) && slash != up) {
		struct stat pst;

		*slash = '\0';
		if (statfs(up, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC ||
		    stat(up, &pst) || pst.st_dev != st.st_dev)
			break;
		level++;
	}
	err = cgroup_id(real, &sel->id);
	if (err)
		return fail(SF_EXIT_ERROR, "cannot get the cgroup id of %s: %s",
			    arg, strerror(-err));
	sel->kind = SATFEED_TARGET_CGROUP;
	sel->level = level;
	/* the part below the mount point: the last `level` components */
	slash = real + strlen(real);
	for (int i = 0; i < level && slash > real; i++)
		while (--slash > real && *slash != '/')
			;
	snprintf(sel->path, sizeof(sel->path), "%s", level ? slash : "/");
	return 0;
}

static bool pid_alive(__u64 pid)
{
	return !kill((pid_t)pid, 0) || errno == EPERM;
}

/* ---- reading ---- */

static int read_target(struct sf_pins *p, __u32 slot, struct satfeed_target *t)
{
	return bpf_map_lookup_elem(p->targets_fd, &slot, t) ? -errno : 0;
}

static int read_stream(struct sf_pins *p, __u32 slot, __u32 stream,
		       struct satfeed_stream *s)
{
	__u32 key = slot * SATFEED_NR_STREAMS + stream;

	return bpf_map_lookup_elem_flags(p->streams_fd, &key, s, BPF_F_LOCK) ?
		       -errno : 0;
}

static const struct satfeed_window *latest(const struct satfeed_stream *s)
{
	if (!s->published)
		return NULL;
	return &s->hist[(s->published - 1) % SATFEED_HISTORY];
}

static bool target_gone(const struct satfeed_target *t)
{
	if (t->state == SATFEED_STATE_GONE)
		return true;
	return t->kind == SATFEED_TARGET_PID && !pid_alive(t->id);
}

static bool matches(const struct satfeed_target *t, const struct selector *sel)
{
	return sel->kind == SATFEED_TARGET_FREE ||
	       (t->kind == sel->kind && t->id == sel->id);
}

/* ---- config upkeep (caller holds the root lock) ---- */

static int rebuild_config(struct sf_pins *p)
{
	struct satfeed_config cfg = {};
	__u32 zero = 0, levels[64] = {};
	int n;

	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;

		if (read_target(p, slot, &t) || t.kind == SATFEED_TARGET_FREE)
			continue;
		if (t.kind == SATFEED_TARGET_PID) {
			cfg.nr_pid_targets++;
			__u8 *v = &cfg.pid_slot[t.id % SATFEED_PID_SLOTS];

			*v = *v ? SATFEED_PID_SLOT_SHARED : slot + 1;
		} else {
			cfg.nr_cgroup_targets++;
			levels[t.level % 64] = 1;
		}
	}
	n = 0;
	for (int l = 63; l >= 0; l--) {
		if (!levels[l])
			continue;
		if (n == SATFEED_MAX_CGROUP_LEVELS)
			return -E2BIG;
		cfg.cgroup_level[n++] = l;
	}
	cfg.nr_cgroup_levels = n;
	return bpf_map_update_elem(p->config_fd, &zero, &cfg, 0) ? -errno : 0;
}

static int lock_root(void)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int find_slot(struct sf_pins *p, const struct selector *sel,
		     struct satfeed_target *out)
{
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;

		if (read_target(p, slot, &t))
			return -errno;
		if (t.kind != SATFEED_TARGET_FREE && matches(&t, sel) &&
		    sel->kind) {
			if (out)
				*out = t;
			return slot;
		}
	}
	return -ENOENT;
}

static int remove_slot(struct sf_pins *p, __u32 slot, struct satfeed_target *t)
{
	__u64 key64 = t->id;
	__u32 key32 = t->id;

	if (t->kind == SATFEED_TARGET_PID)
		bpf_map_delete_elem(p->pid_index_fd, &key32);
	else
		bpf_map_delete_elem(p->cgrp_index_fd, &key64);
	t->kind = SATFEED_TARGET_FREE;
	key32 = slot;
	return bpf_map_update_elem(p->targets_fd, &key32, t, 0) ? -errno : 0;
}

static int cmd_add(struct sf_pins *p, struct selector *sel, __u32 mask)
{
	struct satfeed_index ix;
	struct satfeed_target t;
	int lockfd, slot = -1, gone_slot = -1, err;
	__u64 key64;
	__u32 key32;

	if (sel->kind == SATFEED_TARGET_PID) {
		char path[64], line[256];
		long tgid = -1;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%llu/status",
			 (unsigned long long)sel->id);
		f = fopen(path, "r");
		if (!f)
			return fail(SF_EXIT_TARGET, "no process with pid %llu",
				    (unsigned long long)sel->id);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Tgid: %ld", &tgid) == 1)
				break;
		fclose(f);
		if (tgid != (long)sel->id)
			return fail(SF_EXIT_USAGE, "%llu is a thread of process %ld; watch %ld",
				    (unsigned long long)sel->id, tgid, tgid);
	}
	lockfd = lock_root();
	if (lockfd < 0)
		return fail(SF_EXIT_ERROR, "cannot lock %s: %s", root,
			    strerror(-lockfd));
	slot = find_slot(p, sel, &t);
	if (slot >= 0 && target_gone(&t)) {
		/* a pid that exited and came back: a new process, a new slot */
		if (remove_slot(p, slot, &t)) {
			err = fail(SF_EXIT_ERROR, "cannot free the slot of exited pid %llu: %s",
				   (unsigned long long)sel->id, strerror(errno));
			goto unlock;
		}
	} else if (slot >= 0) {
		err = fail(SF_EXIT_EXISTS, "%s %llu is already watched",
			   sel->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
			   (unsigned long long)sel->id);
		goto unlock;
	}
	slot = -1;
	for (__u32 i = 0; i < p->info.max_targets; i++) {
		if (read_target(p, i, &t)) {
			err = fail(SF_EXIT_ERROR, "cannot read targets: %s",
				   strerror(errno));
			goto unlock;
		}
		if (t.kind == SATFEED_TARGET_FREE) {
			slot = i;
			break;
		}
		/* a target whose process exited keeps its slot only while
		 * there is room: its final windows are still readable */
		if (gone_slot < 0 && target_gone(&t))
			gone_slot = i;
	}
	if (slot < 0 && gone_slot >= 0) {
		if (read_target(p, gone_slot, &t) ||
		    remove_slot(p, gone_slot, &t)) {
			err = fail(SF_EXIT_ERROR, "cannot free slot %d: %s",
				   gone_slot, strerror(errno));
			goto unlock;
		}
		slot = gone_slot;
	}
	if (slot < 0) {
		err = fail(SF_EXIT_FULL, "the target table is full (%u targets); remove one first",
			   p->info.max_targets);
		goto unlock;
	}
	t = (struct satfeed_target){
		.kind = sel->kind,
		.id = sel->id,
		.gen = t.gen + 1,
		.sc_mask = mask,
		.added_ns = sf_now_mono_ns(),
	};
	if (sel->kind == SATFEED_TARGET_PID) {
		sf_read_comm(sel->id, t.comm);
	} else {
		snprintf(t.path, sizeof(t.path), "%s", sel->path);
		t.level = sel->level;
	}
	/* fresh streams for the new generation, written under their locks */
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		struct satfeed_stream st = { .gen = t.gen };
		__u32 key = slot * SATFEED_NR_STREAMS + s;

		if (bpf_map_update_elem(p->streams_fd, &key, &st, BPF_F_LOCK)) {
			err = fail(SF_EXIT_ERROR, "cannot reset streams: %s",
				   strerror(errno));
			goto unlock;
		}
	}
	key32 = slot;
	if (bpf_map_update_elem(p->targets_fd, &key32, &t, 0)) {
		err = fail(SF_EXIT_ERROR, "cannot write target: %s",
			   strerror(errno));
		goto unlock;
	}
	err = rebuild_config(p);
	if (err) {
		if (err == -E2BIG)
			err = fail(SF_EXIT_USAGE, "cgroup targets may sit at %d distinct depths at most",
				   SATFEED_MAX_CGROUP_LEVELS);
		else
			err = fail(SF_EXIT_ERROR, "cannot write the config: %s",
				   strerror(-err));
		goto free_slot;
	}
	ix = (struct satfeed_index){ .slot = slot, .gen = t.gen,
				     .sc_mask = mask };
	if (sel->kind == SATFEED_TARGET_PID) {
		key32 = sel->id;
		err = bpf_map_update_elem(p->pid_index_fd, &key32, &ix,
					  BPF_NOEXIST);
	} else {
		key64 = sel->id;
		err = bpf_map_update_elem(p->cgrp_index_fd, &key64, &ix,
					  BPF_NOEXIST);
	}
	if (err) {
		err = fail(SF_EXIT_ERROR, "cannot index the target: %s",
			   strerror(errno));
		goto free_slot;
	}
	/* it may have exited before the index entry could see its exit */
	if (sel->kind == SATFEED_TARGET_PID && !pid_alive(sel->id)) {
		key32 = sel->id;
		bpf_map_delete_elem(p->pid_index_fd, &key32);
		err = fail(SF_EXIT_TARGET, "process %llu exited while being added",
			   (unsigned long long)sel->id);
		goto free_slot;
	}
	printf("watching %s %s%llu%s in slot %d\n",
	       sel->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
	       sel->kind == SATFEED_TARGET_PID ? "" : "id ",
	       (unsigned long long)sel->id,
	       sel->kind == SATFEED_TARGET_PID ? "" : "", slot);
	close(lockfd);
	return SF_EXIT_OK;
free_slot:
	key32 = slot;
	t.kind = SATFEED_TARGET_FREE;
	bpf_map_update_elem(p->targets_fd, &key32, &t, 0);
	rebuild_config(p);
unlock:
	close(lockfd);
	return err;
}

static int cmd_remove(struct sf_pins *p, struct selector *sel, bool all)
{
	struct satfeed_target t;
	int lockfd, slot, err = SF_EXIT_OK, n = 0;

	lockfd = lock_root();
	if (lockfd < 0)
		return fail(SF_EXIT_ERROR, "cannot lock %s: %s", root,
			    strerror(-lockfd));
	if (all) {
		for (__u32 i = 0; i < p->info.max_targets; i++) {
			if (read_target(p, i, &t) ||
			    t.kind == SATFEED_TARGET_FREE)
				continue;
			if (remove_slot(p, i, &t))
				err = SF_EXIT_ERROR;
			n++;
		}
	} else {
		slot = find_slot(p, sel, &t);
		if (slot < 0) {
			err = fail(SF_EXIT_TARGET, "%s %llu is not watched",
				   sel->kind == SATFEED_TARGET_PID ? "pid" :
								     "cgroup",
				   (unsigned long long)sel->id);
			goto unlock;
		}
		if (remove_slot(p, slot, &t))
			err = SF_EXIT_ERROR;
		n = 1;
	}
	if (rebuild_config(p))
		err = SF_EXIT_ERROR;
	if (err)
		fail(err, "cannot remove: %s", strerror(errno));
	else
		printf("removed %d target%s\n", n, n == 1 ? "" : "s");
unlock:
	close(lockfd);
	return err;
}

/* ---- output ---- */

/* s: a target's comm or path, up to max bytes (it may lack a NUL) */
static void json_str(const char *s, size_t max)
{
	char buf[SF_JSON_ESCAPED_LEN(sizeof(((struct satfeed_target *)0)->path))];

	sf_json_escape(buf, sizeof(buf), s, max);
	fputs(buf, stdout);
}

/* a target's comm or path for the terminal */
static const char *text_str(char *buf, size_t len, const char *s, size_t max)
{
	sf_text_escape(buf, len, s, max);
	return buf;
}

static void json_window(const struct satfeed_window *w)
{
	printf("{\"seq\":%llu,\"start_ns\":%llu,\"end_ns\":%llu,"
	       "\"sum_ns\":%llu,\"mean_ns\":%llu,\"var_ns2\":%llu,"
	       "\"rate\":%llu.%03llu,\"clamped\":%u}",
	       (unsigned long long)w->seq, (unsigned long long)w->start_ns,
	       (unsigned long long)w->end_ns, (unsigned long long)w->sum_ns,
	       (unsigned long long)w->mean_ns, (unsigned long long)w->var_ns2,
	       (unsigned long long)(w->rate_milli / 1000),
	       (unsigned long long)(w->rate_milli % 1000), w->clamped);
}

static void json_stream(const char *name, __u32 stream,
			const struct satfeed_stream *s, __u32 n)
{
	const struct satfeed_window *w = latest(s);
	__u64 first;

	printf("\"%s\":{\"seq\":%llu,\"samples\":%u,\"pending\":%llu,"
	       "\"calls\":%llu,\"last_ns\":%llu,",
	       name, (unsigned long long)s->published, n,
	       (unsigned long long)s->pending, (unsigned long long)s->calls,
	       (unsigned long long)s->last_ns);
	if (w) {
		printf("\"mean_ns\":%llu,\"var_ns2\":%llu,",
		       (unsigned long long)w->mean_ns,
		       (unsigned long long)w->var_ns2);
		if (stream != SATFEED_STREAM_POLL)
			printf("\"%s\":%llu.%03llu,",
			       stream == SATFEED_STREAM_SEND ? "rps" : "rate",
			       (unsigned long long)(w->rate_milli / 1000),
			       (unsigned long long)(w->rate_milli % 1000));
	} else {
		printf("\"mean_ns\":null,\"var_ns2\":null,");
		if (stream != SATFEED_STREAM_POLL)
			printf("\"%s\":null,",
			       stream == SATFEED_STREAM_SEND ? "rps" : "rate");
	}
	printf("\"errors\":%llu,\"eagain\":%llu,\"zero_bytes\":%llu,"
	       "\"not_socket\":%llu,\"windows\":[",
	       (unsigned long long)s->errors, (unsigned long long)s->eagain,
	       (unsigned long long)s->zero_bytes,
	       (unsigned long long)s->not_socket);
	first = s->published > SATFEED_HISTORY ?
			s->published - SATFEED_HISTORY + 1 : 1;
	for (__u64 seq = first; seq <= s->published; seq++) {
		if (seq != first)
			putchar(',');
		json_window(&s->hist[(seq - 1) % SATFEED_HISTORY]);
	}
	printf("]}");
}

static void json_target_head(__u32 slot, const struct satfeed_target *t)
{
	char mask[256];

	printf("{\"slot\":%u,", slot);
	if (t->kind == SATFEED_TARGET_PID) {
		printf("\"pid\":%llu,\"comm\":", (unsigned long long)t->id);
		json_str(t->comm, sizeof(t->comm));
	} else {
		printf("\"cgroup\":%llu,\"path\":", (unsigned long long)t->id);
		json_str(t->path, sizeof(t->path));
	}
	sf_format_syscalls(t->sc_mask, mask, sizeof(mask));
	printf(",\"state\":\"%s\",\"syscalls\":\"%s\"",
	       target_gone(t) ? "gone" : "active", mask);
}

static void fmt_us(char *buf, size_t len, const struct satfeed_window *w,
		   bool sd)
{
	double v;

	if (!w) {
		snprintf(buf, len, "-");
		return;
	}
	/* display only: the exact integers are in --json */
	v = sd ? __builtin_sqrt((double)w->var_ns2) : (double)w->mean_ns;
	snprintf(buf, len, "%.1f", v / 1000.0);
}

static void target_label(char *buf, size_t len, const struct satfeed_target *t)
{
	char name[SF_TEXT_ESCAPED_LEN(sizeof(t->path))];

	if (t->kind == SATFEED_TARGET_PID)
		snprintf(buf, len, "pid %llu %s%s", (unsigned long long)t->id,
			 text_str(name, sizeof(name), t->comm, sizeof(t->comm)),
			 target_gone(t) ? " (gone)" : "");
	else
		snprintf(buf, len, "cgroup %s",
			 text_str(name, sizeof(name), t->path, sizeof(t->path)));
}

static void ago(char *buf, size_t len, __u64 last)
{
	__u64 now = sf_now_mono_ns();

	if (!last)
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%.1fs", now > last ? (now - last) / 1e9 : 0);
}

static int show(struct sf_pins *p, const struct selector *sel, bool json,
		bool trend)
{
	static const char spark[] = " .:-=+*#%@";
	bool any = false, first = true;

	if (json)
		printf("{\"abi_version\":%u,\"attach_mode\":\"%s\","
		       "\"window_samples\":%u,\"history\":%u,\"targets\":[",
		       p->info.abi_version,
		       sf_attach_name(p->info.attach_mode),
		       p->info.window_samples, p->info.history);
	else if (!trend)
		printf("%-28s %-6s %6s %6s %10s %10s %11s %7s\n", "TARGET",
		       "STREAM", "WIN", "PEND", "MEAN(us)", "SD(us)", "RATE/s",
		       "LAST");
	else
		printf("%-28s %-6s %6s %10s %11s  %s\n", "TARGET", "STREAM",
		       "WIN", "MEAN(us)", "RATE/s", "TREND (last 8 windows)");
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_stream st[SATFEED_NR_STREAMS];
		struct satfeed_target t;
		char label[160];

		if (read_target(p, slot, &t))
			return fail(SF_EXIT_ERROR, "cannot read targets: %s",
				    strerror(errno));
		if (t.kind == SATFEED_TARGET_FREE || !matches(&t, sel))
			continue;
		for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
			if (read_stream(p, slot, s, &st[s]))
				return fail(SF_EXIT_ERROR,
					    "cannot read streams: %s",
					    strerror(errno));
		if (st[0].gen != t.gen)	/* being re-added right now */
			continue;
		any = true;
		if (json) {
			printf("%s", first ? "" : ",");
			first = false;
			json_target_head(slot, &t);
			for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
				putchar(',');
				json_stream(sf_stream_names[s], s, &st[s],
					    p->info.window_samples);
			}
			putchar('}');
			continue;
		}
		target_label(label, sizeof(label), &t);
		for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
			const struct satfeed_window *w = latest(&st[s]);
			char mean[32], sd[32], rate[32], last[32];

			fmt_us(mean, sizeof(mean), w, false);
			fmt_us(sd, sizeof(sd), w, true);
			ago(last, sizeof(last), st[s].last_ns);
			if (w && s != SATFEED_STREAM_POLL)
				snprintf(rate, sizeof(rate), "%.1f",
					 w->rate_milli / 1000.0);
			else
				snprintf(rate, sizeof(rate), "-");
			if (!trend) {
				printf("%-28.28s %-6s %6llu %6llu %10s %10s %11s %7s\n",
				       s ? "" : label, sf_stream_names[s],
				       (unsigned long long)st[s].published,
				       (unsigned long long)st[s].pending, mean,
				       sd, rate, last);
				continue;
			}
			/* trend: the metric each stream is read for */
			char bars[9] = "";
			__u64 v[8], hi = 0, lo = ~0ULL;
			int n = 0;

			for (__u64 q = st[s].published > 8 ?
					       st[s].published - 7 : 1;
			     q && q <= st[s].published; q++) {
				const struct satfeed_window *h =
					&st[s].hist[(q - 1) % SATFEED_HISTORY];

				v[n] = s == SATFEED_STREAM_POLL ? h->mean_ns :
								  h->rate_milli;
				hi = v[n] > hi ? v[n] : hi;
				lo = v[n] < lo ? v[n] : lo;
				n++;
			}
			for (int i = 0; i < n; i++)
				bars[i] = spark[hi == lo ? 5 :
					(int)((v[i] - lo) * 9 / (hi - lo))];
			bars[n] = '\0';
			printf("%-28.28s %-6s %6llu %10s %11s  [%-8s] %s\n",
			       s ? "" : label, sf_stream_names[s],
			       (unsigned long long)st[s].published, mean, rate,
			       bars, s == SATFEED_STREAM_POLL ? "mean wait" :
							       "rate");
		}
	}
	if (json)
		printf("]}\n");
	if (sel->kind && !any)
		return fail(SF_EXIT_TARGET, "%s %llu is not watched",
			    sel->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
			    (unsigned long long)sel->id);
	if (sel->kind == SATFEED_TARGET_PID && !pid_alive(sel->id))
		return fail(SF_EXIT_TARGET, "pid %llu has exited",
			    (unsigned long long)sel->id);
	return SF_EXIT_OK;
}

static int cmd_targets(struct sf_pins *p, bool json)
{
	bool first = true;

	if (json)
		printf("{\"targets\":[");
	else
		printf("%-5s %-7s %-20s %-16s %-7s %s\n", "SLOT", "KIND", "ID",
		       "NAME", "STATE", "SYSCALLS");
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		char mask[256], name[SF_TEXT_ESCAPED_LEN(sizeof(t.path))];

		if (read_target(p, slot, &t))
			return fail(SF_EXIT_ERROR, "cannot read targets: %s",
				    strerror(errno));
		if (t.kind == SATFEED_TARGET_FREE)
			continue;
		if (json) {
			printf("%s", first ? "" : ",");
			first = false;
			json_target_head(slot, &t);
			putchar('}');
			continue;
		}
		sf_format_syscalls(t.sc_mask, mask, sizeof(mask));
		printf("%-5u %-7s %-20llu %-16s %-7s %s\n", slot,
		       t.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
		       (unsigned long long)t.id,
		       t.kind == SATFEED_TARGET_PID ?
			       text_str(name, sizeof(name), t.comm,
					sizeof(t.comm)) :
			       text_str(name, sizeof(name), t.path,
					sizeof(t.path)),
		       target_gone(&t) ? "gone" : "active", mask);
	}
	if (json)
		printf("]}\n");
	return SF_EXIT_OK;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int cmd_watch(struct sf_pins *p, double interval, long count)
{
	struct selector all = {};
	struct timespec ts = {
		.tv_sec = (time_t)interval,
		.tv_nsec = (long)((interval - (time_t)interval) * 1e9),
	};
	int err = 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long i = 0; !stop && (count <= 0 || i < count); i++) {
		if (isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		printf("satfeed %s, window %u samples — %s\n",
		       sf_attach_name(p->info.attach_mode),
		       p->info.window_samples, root);
		err = show(p, &all, false, true);
		fflush(stdout);
		if (err)
			break;
		if (count <= 0 || i + 1 < count)
			nanosleep(&ts, NULL);
	}
	return err;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "bpffs", required_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "send", required_argument, NULL, 'S' },
		{ "recv", required_argument, NULL, 'R' },
		{ "poll", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	__u32 fam_mask[SATFEED_NR_STREAMS], mask = 0;
	bool json = false, all = false, fam_set[SATFEED_NR_STREAMS] = {};
	struct selector sel = {};
	double interval = 1.0;
	const char *cmd = NULL;
	struct sf_pins pins;
	long count = 0;
	char *end;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "+b:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			for (size_t n = strlen(optarg);
			     n > 1 && optarg[n - 1] == '/';)
				optarg[--n] = '\0';
			root = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return SF_EXIT_OK;
		default:
			fputs("Try 'satfeedctl --help'.\n", stderr);
			return SF_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fail(SF_EXIT_USAGE, "a command is required (add, remove, targets, show, watch); see --help");
	cmd = argv[optind];
	if (strcmp(cmd, "add") && strcmp(cmd, "remove") &&
	    strcmp(cmd, "targets") && strcmp(cmd, "show") &&
	    strcmp(cmd, "watch"))
		return fail(SF_EXIT_USAGE, "unknown command '%s'; see --help",
			    cmd);
	optind++;
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		int fam = -1;

		switch (opt) {
		case 'p':
		case 'c':
			if (sel.kind)
				return fail(SF_EXIT_USAGE, "give one --pid or --cgroup");
			err = opt == 'p' ? parse_pid(optarg, &sel) :
					   parse_cgroup(optarg, &sel);
			if (err)
				return err;
			break;
		case 'S':
			fam = SATFEED_STREAM_SEND;
			break;
		case 'R':
			fam = SATFEED_STREAM_RECV;
			break;
		case 'P':
			fam = SATFEED_STREAM_POLL;
			break;
		case 'j':
			json = true;
			break;
		case 'a':
			all = true;
			break;
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || !(interval >= 0.05 && interval <= 3600))
				return fail(SF_EXIT_USAGE, "--interval must be 0.05 to 3600 seconds");
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || count < 1)
				return fail(SF_EXIT_USAGE, "--count must be a positive integer");
			break;
		case 'h':
			fputs(usage, stdout);
			return SF_EXIT_OK;
		default:
			fputs("Try 'satfeedctl --help'.\n", stderr);
			return SF_EXIT_USAGE;
		}
		if (fam >= 0) {
			if (sf_parse_syscalls(PROG, optarg, fam, &fam_mask[fam]))
				return SF_EXIT_USAGE;
			fam_set[fam] = true;
		}
	}
	if (optind < argc)
		return fail(SF_EXIT_USAGE, "unexpected argument '%s'",
			    argv[optind]);
	if (!strcmp(cmd, "add") || !strcmp(cmd, "remove")) {
		if (!sel.kind && !(all && !strcmp(cmd, "remove")))
			return fail(SF_EXIT_USAGE, "%s needs --pid PID or --cgroup DIR",
				    cmd);
	}
	for (int f = 0; f < SATFEED_NR_STREAMS; f++) {
		if (fam_set[f] && strcmp(cmd, "add"))
			return fail(SF_EXIT_USAGE, "--%s only applies to add",
				    sf_stream_names[f]);
		for (int i = 0; i < SATFEED_NR_SYSCALLS; i++)
			if (sf_syscalls[i].family == f && sf_syscalls[i].nr >= 0 &&
			    (!fam_set[f] || (fam_mask[f] & (1U << i))))
				mask |= 1U << i;
	}

	err = sf_pins_open(&pins, root, reason, sizeof(reason));
	if (err)
		return fail(err, "%s", reason);
	if (!strcmp(cmd, "add"))
		err = cmd_add(&pins, &sel, mask);
	else if (!strcmp(cmd, "remove"))
		err = cmd_remove(&pins, &sel, all);
	else if (!strcmp(cmd, "targets"))
		err = cmd_targets(&pins, json);
	else if (!strcmp(cmd, "show"))
		err = show(&pins, &sel, json, false);
	else
		err = cmd_watch(&pins, interval, count);
	sf_pins_close(&pins);
	return err;
}
