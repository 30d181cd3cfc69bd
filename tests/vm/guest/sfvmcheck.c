// SPDX-License-Identifier: GPL-2.0
/*
 * sfvmcheck - guest-side checker for the vm test: compares what the
 * satfeed_consumer module received (its sysfs tables) with satfeed's pinned
 * sf_streams map, read under each stream's lock (BPF_F_LOCK).
 *
 *   sfvmcheck push SLOT    every stream that closed windows: the module got
 *                          each window exactly once (pushed == published -
 *                          first_seq + 1, no gap), its last one is the
 *                          engine's newest, with equal fields
 *   sfvmcheck pull SLOT    the last pull equals the pinned map: same
 *                          published count and the same window for that seq
 *   sfvmcheck level SLOT   print the target's demand level
 *   sfvmcheck published SLOT
 *                          print the engine's windows closed, per stream
 *   sfvmcheck settled SLOT no stream has samples pending or a chain of
 *                          gaps open: the age timer (ABI 4) closes and
 *                          publishes nothing more until the next event
 *   sfvmcheck uclamp PID   print the uclamp.min of every thread of PID
 *                          (sched_getattr), space separated; a thread whose
 *                          /proc/PID/task/TID/sched shows another
 *                          uclamp.min is a mismatch
 *
 *   sfvmcheck stale-bound  the module's quiet bound (sysfs stale_ns) is
 *                          twice the engine's age bound, sf_info.max_age_ns
 *                          (the module's stale_ms=0)
 *
 *   sfvmcheck now          print CLOCK_MONOTONIC in ns (the engine's clock)
 *   sfvmcheck rps SLOT SEQ0 T0 T1
 *                          RPS_obs of the send windows after window SEQ0
 *                          whose every sample lies in [T0, T1] (ns, as
 *                          printed by now), still in the history: prints
 *                          "WINDOWS RPS_MILLI" (windows x N x 1e12 / sum)
 *
 * --bpffs DIR as first argument for a non-default satfeed root.
 * Exit 0 when the check holds, 1 with one line per mismatch otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/sched/types.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "satfeed.h"

#define SYSFS "/sys/kernel/satfeed_consumer/"

static const char *const stream_names[SATFEED_NR_STREAMS] = {
	"send", "recv", "poll"
};
static const char *root = SATFEED_DEFAULT_ROOT;
static int mismatches;

static void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	mismatches++;
}

static void read_stream(unsigned int slot, int s, struct satfeed_stream *st)
{
	char path[512];
	__u32 key = satfeed_stream_key(slot, s);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, SATFEED_PIN_STREAMS);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fprintf(stderr, "sfvmcheck: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	if (bpf_map_lookup_elem_flags(fd, &key, st, BPF_F_LOCK)) {
		fprintf(stderr, "sfvmcheck: lookup %u: %s\n", key,
			strerror(errno));
		exit(2);
	}
	close(fd);
}

/* stale-bound: sysfs stale_ns == 2 x sf_info.max_age_ns */
static int check_stale_bound(void)
{
	unsigned long long stale = 0;
	struct satfeed_info info;
	char path[512];
	__u32 key = 0;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, SATFEED_PIN_INFO);
	fd = bpf_obj_get(path);
	if (fd < 0 || bpf_map_lookup_elem(fd, &key, &info)) {
		fprintf(stderr, "sfvmcheck: %s: %s\n", path, strerror(errno));
		return 2;
	}
	close(fd);
	f = fopen(SYSFS "stale_ns", "r");
	if (!f || fscanf(f, "%llu", &stale) != 1) {
		fprintf(stderr, "sfvmcheck: " SYSFS "stale_ns: unreadable\n");
		return 2;
	}
	fclose(f);
	printf("module stale_ns %llu, engine max_age_ns %llu\n", stale,
	       (unsigned long long)info.max_age_ns);
	if (stale != 2 * info.max_age_ns)
		bad("stale_ns is not 2 x max_age_ns");
	return mismatches ? 1 : 0;
}

/* Find "slot=N stream=NAME ..." in a sysfs table; copy the line. */
static bool find_line(const char *file, unsigned int slot, const char *stream,
		      char *line, size_t len)
{
	char want[64], path[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), SYSFS "%s", file);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "sfvmcheck: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	if (stream)
		snprintf(want, sizeof(want), "slot=%u stream=%s ", slot, stream);
	else
		snprintf(want, sizeof(want), "slot=%u ", slot);
	while (!found && fgets(line, len, f))
		found = !strncmp(line, want, strlen(want));
	fclose(f);
	return found;
}

static unsigned long long field(const char *line, const char *key)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), " %s=", key);
	p = strstr(line, want);
	if (!p) {
		fprintf(stderr, "sfvmcheck: no %s in: %s", key, line);
		exit(2);
	}
	return strtoull(p + strlen(want), NULL, 10);
}

static const struct satfeed_window *hist(const struct satfeed_stream *st,
					 __u64 seq)
{
	const struct satfeed_window *w;

	if (!seq || seq > st->published ||
	    st->published - seq >= SATFEED_HISTORY)
		return NULL;
	w = satfeed_window_by_seq(st, seq);
	return w->seq == seq ? w : NULL;
}

static void same_window(const char *what, int s, const char *line,
			const struct satfeed_window *w)
{
	static const char *const keys[] = { "mean_ns", "var_ns2", "rate_milli" };
	__u64 vals[] = { w->mean_ns, w->var_ns2, w->rate_milli };

	for (int i = 0; i < 3; i++)
		if (field(line, keys[i]) != vals[i])
			bad("%s %s window %llu: %s %llu, pinned map %llu", what,
			    stream_names[s], (unsigned long long)w->seq, keys[i],
			    field(line, keys[i]), (unsigned long long)vals[i]);
}

static int check_push(unsigned int slot)
{
	char line[512];

	for (int s = 0; s < SATFEED_NR_STREAMS; s++) {
		struct satfeed_stream st;
		const struct satfeed_window *w;
		unsigned long long pushed, first, seq;

		read_stream(slot, s, &st);
		if (!st.published)
			continue;
		if (!find_line("last_push", slot, stream_names[s], line,
			       sizeof(line))) {
			bad("push %s: engine closed %llu windows, module got none",
			    stream_names[s], (unsigned long long)st.published);
			continue;
		}
		pushed = field(line, "pushed");
		first = field(line, "first_seq");
		seq = field(line, "seq");
		if (seq != st.published)
			bad("push %s: last window pushed %llu, engine's newest %llu",
			    stream_names[s], seq,
			    (unsigned long long)st.published);
		if (field(line, "gaps") || pushed != seq - first + 1)
			bad("push %s: %llu windows pushed for seq %llu..%llu (gaps %llu)",
			    stream_names[s], pushed, first, seq,
			    field(line, "gaps"));
		w = hist(&st, seq);
		if (w)
			same_window("push", s, line, w);
		printf("push %s: %llu windows (seq %llu..%llu), engine published %llu\n",
		       stream_names[s], pushed, first, seq,
		       (unsigned long long)st.published);
	}
	return mismatches ? 1 : 0;
}

static int check_pull(unsigned int slot)
{
	char line[512];

	for (int s = 0; s < SATFEED_NR_STREAMS; s++) {
		struct satfeed_stream st;
		const struct satfeed_window *w;
		unsigned long long seq;

		read_stream(slot, s, &st);
		if (!find_line("last_pull", slot, stream_names[s], line,
			       sizeof(line))) {
			bad("pull %s: the module has no pull for slot %u",
			    stream_names[s], slot);
			continue;
		}
		seq = field(line, "seq");
		if (field(line, "published") != st.published)
			bad("pull %s: published %llu, pinned map %llu",
			    stream_names[s], field(line, "published"),
			    (unsigned long long)st.published);
		if (field(line, "pending") != st.pending)
			bad("pull %s: pending %llu, pinned map %llu",
			    stream_names[s], field(line, "pending"),
			    (unsigned long long)st.pending);
		w = hist(&st, seq);
		if (seq && !w)
			bad("pull %s: window %llu is not in the map's history",
			    stream_names[s], seq);
		if (w) {
			same_window("pull", s, line, w);
			if (field(line, "sum_ns") != w->sum_ns)
				bad("pull %s: sum_ns %llu, pinned map %llu",
				    stream_names[s], field(line, "sum_ns"),
				    (unsigned long long)w->sum_ns);
		}
		printf("pull %s: seq %llu published %llu equal to the pinned map\n",
		       stream_names[s], seq, (unsigned long long)st.published);
	}
	return mismatches ? 1 : 0;
}

/* "uclamp.min   :   N" of a thread's sched file, -1 when it has none */
static long long proc_uclamp_min(const char *pid, const char *tid)
{
	char path[512], line[256];
	long long v = -1;
	const char *colon;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/task/%s/sched", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "uclamp.min ", 11))
			continue;
		colon = strchr(line, ':');
		if (colon)
			v = strtoll(colon + 1, NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

static int check_uclamp(const char *pid)
{
	char path[256];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "sfvmcheck: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while ((de = readdir(d))) {
		struct sched_attr attr = { 0 };
		long long from_proc;

		if (de->d_name[0] == '.')
			continue;
		if (syscall(SYS_sched_getattr, atoi(de->d_name), &attr,
			    sizeof(attr), 0)) {
			if (errno == ESRCH)	/* the thread just exited */
				continue;
			fprintf(stderr, "sfvmcheck: sched_getattr %s: %s\n",
				de->d_name, strerror(errno));
			closedir(d);
			return 2;
		}
		printf("%s%u", n++ ? " " : "", attr.sched_util_min);
		from_proc = proc_uclamp_min(pid, de->d_name);
		if (from_proc >= 0 && from_proc != attr.sched_util_min) {
			fprintf(stderr, "thread %s: uclamp.min %u, %s shows %lld\n",
				de->d_name, attr.sched_util_min, path,
				from_proc);
			mismatches++;
		}
	}
	closedir(d);
	putchar('\n');
	return mismatches ? 1 : 0;
}

/* RPS_obs of the send windows closed inside [t0, t1] after seq0. */
static int print_rps(unsigned int slot, __u64 seq0, __u64 t0, __u64 t1)
{
	unsigned __int128 samples = 0, sum = 0;
	struct satfeed_stream st;
	unsigned int k = 0;

	read_stream(slot, SATFEED_STREAM_SEND, &st);
	for (__u64 q = seq0 + 1; q <= st.published; q++) {
		const struct satfeed_window *w = satfeed_window_by_seq(&st, q);

		if (st.published - q >= SATFEED_HISTORY || w->seq != q ||
		    w->start_ns < t0 || w->end_ns > t1)
			continue;
		samples += w->samples;
		sum += w->sum_ns;
		k++;
	}
	printf("%u %llu\n", k,
	       sum ? (unsigned long long)(samples * 1000000000000ULL / sum) :
		     0ULL);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int slot;
	char line[512];
	struct timespec ts;

	if (argc > 2 && !strcmp(argv[1], "--bpffs")) {
		root = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc == 2 && !strcmp(argv[1], "now")) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%llu\n", (unsigned long long)ts.tv_sec * 1000000000ULL +
		       ts.tv_nsec);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "stale-bound"))
		return check_stale_bound();
	if (argc == 6 && !strcmp(argv[1], "rps")) {
		slot = strtoul(argv[2], NULL, 10);
		if (slot >= SATFEED_MAX_TARGETS)
			return 2;
		return print_rps(slot, strtoull(argv[3], NULL, 10),
				 strtoull(argv[4], NULL, 10),
				 strtoull(argv[5], NULL, 10));
	}
	if (argc != 3) {
		fprintf(stderr, "usage: sfvmcheck [--bpffs DIR] push|pull|level|published|settled SLOT\n"
				"       sfvmcheck uclamp PID | now | stale-bound | rps SLOT SEQ0 T0 T1\n");
		return 2;
	}
	if (!strcmp(argv[1], "uclamp"))
		return check_uclamp(argv[2]);
	slot = strtoul(argv[2], NULL, 10);
	if (slot >= SATFEED_MAX_TARGETS)
		return 2;
	if (!strcmp(argv[1], "push"))
		return check_push(slot);
	if (!strcmp(argv[1], "pull"))
		return check_pull(slot);
	if (!strcmp(argv[1], "level")) {
		if (!find_line("levels", slot, NULL, line, sizeof(line)))
			return 1;
		printf("%llu\n", field(line, "level"));
		return 0;
	}
	if (!strcmp(argv[1], "settled")) {
		for (int s = 0; s < SATFEED_NR_STREAMS; s++) {
			struct satfeed_stream st;

			read_stream(slot, s, &st);
			if (st.pending || st.last_ns)
				bad("%s: %llu samples pending, last event at %llu ns",
				    stream_names[s],
				    (unsigned long long)st.pending,
				    (unsigned long long)st.last_ns);
		}
		return mismatches ? 1 : 0;
	}
	if (!strcmp(argv[1], "published")) {
		for (int s = 0; s < SATFEED_NR_STREAMS; s++) {
			struct satfeed_stream st;

			read_stream(slot, s, &st);
			printf("%s%llu", s ? " " : "",
			       (unsigned long long)st.published);
		}
		putchar('\n');
		return 0;
	}
	return 2;
}
