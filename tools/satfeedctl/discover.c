// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * discover: which calls does a server make?  The engine itself counts them:
 * the target is added with SATFEED_SC_DISCOVER in its sc_mask for a few
 * seconds (sf_discover[slot]: calls, bytes and failures per source), then
 * removed, on every way out (Ctrl-C included).  From the counts come the
 * family sets that track one sample per request and per response, and the
 * `satfeedctl add` line that watches them (recommend.c); add --auto adds
 * it at once.  The report: a table row or a JSON object per source that
 * was called, grouped by family (count_cols, group_names).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "satfeedctl.h"
#include "discover.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * The group of src in the table: its family, or NR_GROUPS - 1 for an
 * io_uring operation of no family ("other").
 */
#define NR_GROUPS	(SATFEED_NR_STREAMS + 1)
static const char *const group_names[NR_GROUPS] = {
	[SATFEED_STREAM_SEND] = "send",
	[SATFEED_STREAM_RECV] = "recv",
	[SATFEED_STREAM_POLL] = "poll",
	[SATFEED_NR_STREAMS] = "other",
};

static int src_group(__u32 src)
{
	int f = src_family(src);

	return f >= 0 ? f : SATFEED_NR_STREAMS;
}

/* The counts of a source, as the table (width 0: not a column) and the
 * JSON name them, in their order. */
static const struct count_col {
	const char *head;
	const char *key;
	int width;
	size_t off;
} count_cols[] = {
#define COUNT_COL(head, field, width) \
	{ head, #field, width, offsetof(struct satfeed_discover_count, field) }
	COUNT_COL("CALLS", calls, 10),
	COUNT_COL("MOVED", moved, 10),
	COUNT_COL("BYTES", bytes, 12),
	COUNT_COL("ZERO", zero, 8),
	COUNT_COL("EAGAIN", eagain, 8),
	COUNT_COL("ERRORS", errors, 8),
	COUNT_COL("NOT-SOCKET", not_socket, 10),
	COUNT_COL(NULL, wait_ns, 0),
#undef COUNT_COL
};

#define NR_COUNT_COLS	(sizeof(count_cols) / sizeof(count_cols[0]))

static unsigned long long count_of(const struct satfeed_discover_count *c,
				   size_t col)
{
	return *(const __u64 *)((const char *)c + count_cols[col].off);
}

static const char cannot_see[] =
	"satfeed sees the send family (sendto, sendmsg, sendmmsg; write,\n"
	"writev, sendfile, splice to a socket), the recv family (recvfrom,\n"
	"recvmsg, recvmmsg; read, readv from a socket) and the waits\n"
	"(epoll_wait, epoll_pwait, epoll_pwait2, select, pselect6, poll,\n"
	"ppoll) of the target's threads, and the operations its io_uring\n"
	"rings complete and its io_uring_enter waits.  It cannot see: 32-bit\n"
	"(compat) calls, other syscalls (recv into a pipe by splice,\n"
	"vmsplice, tee, aio), work done by another process (a worker outside a\n"
	"--pid target: watch its cgroup instead), or a server that was idle:\n"
	"send it requests while discovering.\n";

static void print_text(const struct discovery *dv,
		       const struct satfeed_target *t,
		       const struct satfeed_discover *d, double secs,
		       const struct recommend *r)
{
	char name[SF_TEXT_ESCAPED_LEN(sizeof(t->path))], line[1024];

	printf("%s %s%llu (%s): %.2f s\n",
	       t->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
	       t->kind == SATFEED_TARGET_PID ? "" : "id ",
	       (unsigned long long)t->id,
	       t->kind == SATFEED_TARGET_PID ?
		       text_str(name, sizeof(name), t->comm, sizeof(t->comm)) :
		       text_str(name, sizeof(name), t->path, sizeof(t->path)),
	       secs);
	master_say(dv, stdout);
	if (!r->seen) {
		printf("no traced call in %.2f s%s.\n%s", secs,
		       dv->n > 1 ? " (nor by its child processes)" : "",
		       cannot_see);
		return;
	}
	printf("%-6s %-19s", "FAMILY", "CALL");
	for (size_t i = 0; i < NR_COUNT_COLS; i++)
		if (count_cols[i].width)
			printf(" %*s", count_cols[i].width, count_cols[i].head);
	printf(" %9s\n", "PER-S");
	for (int g = 0; g < NR_GROUPS; g++) {
		for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
			const struct satfeed_discover_count *c = &d->src[s];

			if (src_group(s) != g || !src_name(s) || !src_seen(c))
				continue;
			printf("%-6s %-19s", group_names[g], src_name(s));
			for (size_t i = 0; i < NR_COUNT_COLS; i++)
				if (count_cols[i].width)
					printf(" %*llu", count_cols[i].width,
					       count_of(c, i));
			printf(" %9.1f", secs > 0 ? c->calls / secs : 0.0);
			if (g == SATFEED_STREAM_POLL && c->calls)
				printf("  mean wait %.0f us",
				       c->wait_ns / 1e3 / c->calls);
			putchar('\n');
		}
	}
	printf("(MOVED: calls that moved bytes, one sample each; waits: that "
	       "returned events.\n NOT-SOCKET: calls on other files, never "
	       "counted.)\n\nrecommended:\n");
	for (int f = 0; f < SATFEED_NR_STREAMS; f++)
		printf("  %s: %s\n", sf_stream_names[f], r->why[f]);
	add_line(line, sizeof(line), &dv->add, r);
	printf("  %s\n", line);
}

static void print_json(const struct discovery *dv,
		       const struct satfeed_target *t,
		       const struct satfeed_discover *d, double secs,
		       const struct recommend *r)
{
	char s[SF_JSON_ESCAPED_LEN(1024)], line[1024];
	bool first = true;

	printf("{\"target\":{\"kind\":\"%s\",\"id\":%llu,",
	       t->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
	       (unsigned long long)t->id);
	if (t->kind == SATFEED_TARGET_PID)
		sf_json_escape(s, sizeof(s), t->comm, sizeof(t->comm));
	else
		sf_json_escape(s, sizeof(s), t->path, sizeof(t->path));
	printf("\"%s\":%s},\"seconds\":%.3f,\"seen\":%s,\"sources\":[",
	       t->kind == SATFEED_TARGET_PID ? "comm" : "path", s, secs,
	       r->seen ? "true" : "false");
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
		const struct satfeed_discover_count *c = &d->src[s];

		if (!src_name(s) || !src_seen(c))
			continue;
		printf("%s{\"name\":\"%s\",\"family\":\"%s\"",
		       first ? "" : ",", src_name(s),
		       group_names[src_group(s)]);
		for (size_t i = 0; i < NR_COUNT_COLS; i++)
			printf(",\"%s\":%llu", count_cols[i].key,
			       count_of(c, i));
		putchar('}');
		first = false;
	}
	printf("],\"recommended\":{");
	for (int f = 0; f < SATFEED_NR_STREAMS; f++) {
		char why[SF_JSON_ESCAPED_LEN(sizeof(r->why[f]))];
		bool one = true;

		printf("%s\"%s\":{\"syscalls\":[", f ? "," : "",
		       sf_stream_names[f]);
		for (int i = 0; i < SATFEED_SC_NR_BITS; i++) {
			if (!(r->mask[f] & (1U << i)) || !sf_syscalls[i].name)
				continue;
			printf("%s\"%s\"", one ? "" : ",", sf_syscalls[i].name);
			one = false;
		}
		sf_json_escape(why, sizeof(why), r->why[f], sizeof(r->why[f]));
		printf("],\"samples\":%llu,\"why\":%s}",
		       (unsigned long long)r->count[f], why);
	}
	add_line(line, sizeof(line), &dv->add, r);
	sf_json_escape(s, sizeof(s), line, sizeof(line));
	printf("},");
	master_json(dv);
	printf(",\"add\":%s}\n", r->seen ? s : "null");
}

/* Is slot still our discovery target (not removed and re-added)? */
static bool still_ours(const struct sf_pins *p, int slot, __u32 gen)
{
	struct satfeed_target t;

	return !sf_target_read(p, slot, &t) && t.gen == gen &&
	       t.kind != SATFEED_TARGET_FREE &&
	       (t.sc_mask & SATFEED_SC_DISCOVER);
}

/* Remove discovery target i of dv if it is still ours; an enum sf_exit. */
static int remove_one(struct sf_pins *p, struct discovery *dv, int i)
{
	char why[512];
	int n, err;

	if (dv->slot[i] < 0 || !still_ours(p, dv->slot[i], dv->t[i].gen))
		return SF_EXIT_OK;
	err = sf_target_remove(p, &dv->sel[i], &n, why, sizeof(why));
	if (err && err != SF_EXIT_TARGET)
		return fail(err, "cannot remove the discovery target: %s", why);
	return SF_EXIT_OK;
}

/*
 * Watch dv->sel[0..n) in discovery for a->seconds, then read their counts
 * and remove them.  A worker that cannot be added (it exited, the table
 * is full) is left out with a note; sel[0] must be.  Returns an enum
 * sf_exit.
 */
static int run_discovery(struct sf_pins *p, const struct args *a,
			 struct discovery *dv, double *secs)
{
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct timespec left;
	char why[512];
	int err = SF_EXIT_OK, rerr;
	__u64 end_ns;

	/* the handlers first: from the add on, every way out removes it */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	for (int i = 0; i < dv->n; i++)
		dv->slot[i] = -1;
	for (int i = 0; i < dv->n && !stop_signal; i++) {
		err = sf_target_add(p, &dv->sel[i],
				    SATFEED_SC_DISCOVER | SATFEED_SC_ALL,
				    &dv->slot[i], why, sizeof(why));
		if (err && !i) {
			fail(err, "%s", why);
			goto remove;
		}
		if (err) {
			sf_msg("note: worker pid %llu left out of the discovery: %s",
			       (unsigned long long)dv->sel[i].id, why);
			dv->slot[i] = -1;
			err = SF_EXIT_OK;
			continue;
		}
		if (sf_target_read(p, dv->slot[i], &dv->t[i])) {
			err = fail(SF_EXIT_ERROR, "cannot read the target: %s",
				   strerror(errno));
			goto remove;
		}
	}
	uring_ms_note(p, SATFEED_SC_ALL);
	if (!a->json && isatty(STDERR_FILENO))
		fprintf(stderr, PROG ": discovering for %.1f s (Ctrl-C stops)...\n",
			a->seconds);
	end_ns = sf_now_mono_ns() + (__u64)(a->seconds * 1e9);
	while (!stop_signal) {
		__u64 now = sf_now_mono_ns();

		if (now >= end_ns)
			break;
		left.tv_sec = (end_ns - now) / 1000000000ULL;
		left.tv_nsec = (end_ns - now) % 1000000000ULL;
		nanosleep(&left, NULL);	/* a signal ends it early */
	}
	if (stop_signal) {
		err = fail(SF_EXIT_ERROR, "interrupted (signal %d): discovery stopped, nothing reported",
			   (int)stop_signal);
		goto remove;
	}
	for (int i = 0; i < dv->n; i++) {
		struct satfeed_discover *d = &dv->d[i];

		if (dv->slot[i] < 0)
			continue;
		if (sf_discover_read(p, dv->slot[i], d) ||
		    d->gen != dv->t[i].gen) {
			err = fail(SF_EXIT_ERROR, "cannot read the discovery counts%s",
				   d->gen != dv->t[i].gen ?
					   " (the slot was reused)" : "");
			goto remove;
		}
	}
	*secs = (sf_now_mono_ns() - dv->d[0].start_ns) / 1e9;
remove:
	for (int i = 0; i < dv->n; i++) {
		rerr = remove_one(p, dv, i);
		err = err ?: rerr;
	}
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	return err;
}

/*
 * Discover a->sel[0] and, when it is a process with children, its
 * workers with it; recommend the sets from all their counts into *r, and
 * choose what to watch (master_choose()).  *dvp is to free.  Returns an
 * enum sf_exit.
 */
static int discover(struct sf_pins *p, const struct args *a,
		    struct discovery **dvp, double *secs, struct recommend *r)
{
	struct discovery *dv;
	int err;

	*secs = 0;
	*dvp = dv = calloc(1, sizeof(*dv));
	if (!dv)
		return fail(SF_EXIT_ERROR, "out of memory");
	dv->n = 1;
	dv->sel[0] = a->sel[0];
	if (a->sel[0].kind == SATFEED_TARGET_PID)
		master_add_workers(dv);
	err = run_discovery(p, a, dv, secs);
	if (err)
		return err;
	for (int i = 0; i < dv->n; i++)
		for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
			for (size_t c = 0; c < NR_COUNT_COLS; c++)
				*(__u64 *)((char *)&dv->sum.src[s] +
					   count_cols[c].off) +=
					count_of(&dv->d[i].src[s], c);
	recommend(&dv->sum, r);
	return master_choose(a, dv);
}

int cmd_discover(struct sf_pins *p, const struct args *a)
{
	struct discovery *dv;
	struct recommend r;
	double secs;
	int err;

	err = discover(p, a, &dv, &secs, &r);
	if (!err && a->json)
		print_json(dv, &dv->t[0], &dv->sum, secs, &r);
	else if (!err)
		print_text(dv, &dv->t[0], &dv->sum, secs, &r);
	free(dv);
	return err;
}

int cmd_add_auto(struct sf_pins *p, const struct args *a)
{
	struct discovery *dv;
	struct recommend r;
	char line[1024];
	double secs;
	int err;

	err = discover(p, a, &dv, &secs, &r);
	if (err)
		goto out;
	if (!r.seen) {
		err = fail(SF_EXIT_TARGET, "%s %llu made no traced call in %.1f s%s: nothing to recommend, not added (see 'satfeedctl discover')",
			   a->sel[0].kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
			   (unsigned long long)a->sel[0].id, secs,
			   dv->n > 1 ? ", nor did its child processes" : "");
		goto out;
	}
	master_say(dv, stdout);
	for (int f = 0; f < SATFEED_NR_STREAMS; f++)
		printf("%s: %s\n", sf_stream_names[f], r.why[f]);
	add_line(line, sizeof(line), &dv->add, &r);
	printf("running: %s\n", line);
	dv->add.sc_mask = recommended_mask(&r);
	err = cmd_add(p, &dv->add);
out:
	free(dv);
	return err;
}
