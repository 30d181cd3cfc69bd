// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * discover: which calls does a server make?  The engine itself counts them:
 * the target is added with SATFEED_SC_DISCOVER in its sc_mask for a few
 * seconds (sf_discover[slot]: calls, bytes and failures per source), then
 * removed, on every way out (Ctrl-C included).  From the counts come the
 * family sets that track one sample per request and per response, and the
 * `satfeedctl add` line that watches them; add --auto adds it at once.
 *
 * A source is a syscall of the list or, from SATFEED_SRC_URING_FIRST on, an
 * io_uring op: everything below goes through src_name() and src_family(),
 * so another kind of source is one more case there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "satfeedctl.h"

/* Two counts "match" when they differ by at most 1/MATCH_DIV of the larger
 * (and 2 calls): a request or response in flight when the period ends. */
#define MATCH_DIV	10
/* A wait member used less than 1/RARE_DIV as often as the busiest is a
 * side thread's timer, not the server's event loop. */
#define RARE_DIV	10

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static const char *src_name(__u32 src)
{
	static char op[SATFEED_NR_SOURCES][24];

	if (src < SATFEED_SC_NR_BITS)	/* a member: syscall or io_uring */
		return sf_syscalls[src].name;
	if (src >= SATFEED_SRC_URING_FIRST && src < SATFEED_NR_SOURCES) {
		/* an io_uring operation that is not a member */
		snprintf(op[src], sizeof(op[src]), "io_uring_op%u",
			 src - SATFEED_SRC_URING_FIRST);
		return op[src];
	}
	return NULL;
}

static int src_family(__u32 src)
{
	if (src < SATFEED_SC_NR_BITS && sf_syscalls[src].name)
		return sf_syscalls[src].family;
	return -1;
}

/* The bit of src in sc_mask, 0 for a source that --send etc. cannot name. */
static __u32 src_bit(__u32 src)
{
	return src < SATFEED_SC_NR_BITS && sf_syscalls[src].name ?
	       1U << src : 0;
}

static bool src_seen(const struct satfeed_discover_count *c)
{
	return c->calls || c->not_socket;
}

static bool counts_match(__u64 a, __u64 b)
{
	__u64 hi = a > b ? a : b, d = a > b ? a - b : b - a;

	return d <= hi / MATCH_DIV || d <= 2;
}

static __u64 absdiff(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

struct recommend {
	__u32 mask[SATFEED_NR_STREAMS];	/* chosen members per family */
	__u64 count[SATFEED_NR_STREAMS]; /* their samples in the period */
	char why[SATFEED_NR_STREAMS][512];
	bool seen;			/* any traced call at all */
};

/* The sources of family f that moved bytes (waits: that ran). */
static __u32 family_used(const struct satfeed_discover *d, int f,
			 __u64 *total)
{
	__u32 mask = 0;

	*total = 0;
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
		const struct satfeed_discover_count *c = &d->src[s];
		__u64 n = f == SATFEED_STREAM_POLL ? c->calls : c->moved;

		if (src_family(s) != f || !n || !src_bit(s))
			continue;
		mask |= src_bit(s);
		*total += n;
	}
	return mask;
}

static __u64 mask_count(const struct satfeed_discover *d, int f, __u32 mask)
{
	__u64 n = 0;

	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
		if (src_bit(s) & mask)
			n += f == SATFEED_STREAM_POLL ? d->src[s].calls :
							d->src[s].moved;
	return n;
}

static size_t names_of(char *buf, size_t len, __u32 mask)
{
	sf_format_syscalls(mask, buf, len);
	return strlen(buf);
}

/*
 * Send or recv: the members that give one sample per response (request).
 * ref is the other direction's count, the number of requests (responses)
 * the period saw, 0 when unknown.  All the members that moved bytes when
 * together they match ref (or ref is unknown); else the one member whose
 * count matches ref best, most bytes first among equals (the body rather
 * than the headers), with the reason.
 */
static void choose_io(const struct satfeed_discover *d, int f, __u64 ref,
		      const char *ref_what, struct recommend *r)
{
	char names[256], one[64], all[256];
	__u64 total, best_n = 0, best_bytes = 0;
	__u32 used = family_used(d, f, &total), best = 0, matching = 0;
	const char *fam = sf_stream_names[f];
	int nr = __builtin_popcount(used);

	if (!used) {
		snprintf(r->why[f], sizeof(r->why[f]),
			 "no %s-family call moved a byte: left at every member",
			 fam);
		return;
	}
	names_of(names, sizeof(names), used);
	if (nr == 1 || !ref || counts_match(total, ref)) {
		r->mask[f] = used;
		r->count[f] = total;
		if (nr == 1)
			snprintf(r->why[f], sizeof(r->why[f]),
				 "%s is the only %s-family call that moved bytes (%llu calls)",
				 names, fam, (unsigned long long)total);
		else
			snprintf(r->why[f], sizeof(r->why[f]),
				 "%s together: %llu calls%s%s%s",
				 names, (unsigned long long)total,
				 ref ? ", as many as the " : "",
				 ref ? ref_what : "",
				 ref ? "" : " (nothing to compare with)");
		return;
	}
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
		const struct satfeed_discover_count *c = &d->src[s];

		if (!(src_bit(s) & used))
			continue;
		if (!best || absdiff(c->moved, ref) < absdiff(best_n, ref) ||
		    (absdiff(c->moved, ref) == absdiff(best_n, ref) &&
		     c->bytes > best_bytes)) {
			best = src_bit(s);
			best_n = c->moved;
			best_bytes = c->bytes;
		}
	}
	r->mask[f] = best;
	r->count[f] = best_n;
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
		if ((src_bit(s) & used) && counts_match(d->src[s].moved, ref))
			matching |= src_bit(s);
	names_of(one, sizeof(one), best);
	names_of(all, sizeof(all), matching);
	snprintf(r->why[f], sizeof(r->why[f]),
		 "%s made %llu calls for %llu %s, %.1f per %s: two streams' worth of samples; %s alone made %llu (%s %s), one sample per %s%s%s%s",
		 names, (unsigned long long)total, (unsigned long long)ref,
		 ref_what, (double)total / ref,
		 f == SATFEED_STREAM_SEND ? "response" : "request", one,
		 (unsigned long long)best_n,
		 counts_match(best_n, ref) ? "matching the" : "closest to the",
		 ref_what, f == SATFEED_STREAM_SEND ? "response" : "request",
		 __builtin_popcount(matching) > 1 ? " (" : "",
		 __builtin_popcount(matching) > 1 ? all : "",
		 __builtin_popcount(matching) > 1 ?
			 " each match: either does; kept the one that moved the most bytes, else the first listed)" :
			 "");
}

/* Poll: every wait member but those a side thread calls now and then. */
static void choose_poll(const struct satfeed_discover *d,
			struct recommend *r)
{
	const int f = SATFEED_STREAM_POLL;
	__u64 total, max = 0;
	__u32 used = family_used(d, f, &total), keep = 0, rare = 0;
	char names[256], rnames[256];

	if (!used) {
		snprintf(r->why[f], sizeof(r->why[f]),
			 "no wait (epoll/select/poll) seen: left at every member");
		return;
	}
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
		if ((src_bit(s) & used) && d->src[s].calls > max)
			max = d->src[s].calls;
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
		if (!(src_bit(s) & used))
			continue;
		if (d->src[s].calls * RARE_DIV < max)
			rare |= src_bit(s);
		else
			keep |= src_bit(s);
	}
	r->mask[f] = keep;
	r->count[f] = mask_count(d, f, keep);
	names_of(names, sizeof(names), keep);
	names_of(rnames, sizeof(rnames), rare);
	snprintf(r->why[f], sizeof(r->why[f]), "%s: %llu waits%s%s%s",
		 names, (unsigned long long)r->count[f],
		 rare ? "; left out " : "", rare ? rnames : "",
		 rare ? ", under a tenth as many (a timer, not the event loop)" :
			"");
}

static void recommend(const struct satfeed_discover *d, struct recommend *r)
{
	__u64 recv_total, send_total;

	memset(r, 0, sizeof(*r));
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
		if (src_name(s) && src_seen(&d->src[s]))
			r->seen = true;
	family_used(d, SATFEED_STREAM_RECV, &recv_total);
	/* requests: the receives; responses are counted against them */
	choose_io(d, SATFEED_STREAM_SEND, recv_total, "requests (receives)",
		  r);
	family_used(d, SATFEED_STREAM_SEND, &send_total);
	choose_io(d, SATFEED_STREAM_RECV,
		  r->mask[SATFEED_STREAM_SEND] ? r->count[SATFEED_STREAM_SEND] :
						 send_total,
		  "responses (chosen sends)", r);
	choose_poll(d, r);
}

/* "satfeedctl [--bpffs ROOT] add --pid N --send ... " */
static void add_line(char *buf, size_t len, const struct args *a,
		     const struct recommend *r)
{
	size_t off;

	off = snprintf(buf, len, PROG "%s%s add ",
		       strcmp(a->root, SATFEED_DEFAULT_ROOT) ? " --bpffs " : "",
		       strcmp(a->root, SATFEED_DEFAULT_ROOT) ? a->root : "");
	if (a->sel[0].kind == SATFEED_TARGET_PID)
		off += snprintf(buf + off, len - off, "--pid %llu",
				(unsigned long long)a->sel[0].id);
	else
		off += snprintf(buf + off, len - off, "--cgroup %s",
				a->target_arg);
	for (int f = 0; f < SATFEED_NR_STREAMS && off < len; f++) {
		char names[256];

		if (!r->mask[f])
			continue;
		names_of(names, sizeof(names), r->mask[f]);
		off += snprintf(buf + off, len - off, " --%s %s",
				sf_stream_names[f], names);
	}
}

/* The recommended sc_mask: a family with no choice keeps every member. */
static __u32 recommended_mask(const struct recommend *r)
{
	__u32 mask = 0;

	for (int f = 0; f < SATFEED_NR_STREAMS; f++) {
		if (r->mask[f]) {
			mask |= r->mask[f];
			continue;
		}
		for (int i = 0; i < SATFEED_SC_NR_BITS; i++)
			if (sf_syscalls[i].name &&
			    sf_syscalls[i].family == f && sf_syscalls[i].nr != -1)
				mask |= 1U << i;
	}
	return mask;
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

static void print_text(const struct args *a, const struct satfeed_target *t,
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
	if (!r->seen) {
		printf("no traced call in %.2f s.\n%s", secs, cannot_see);
		return;
	}
	printf("%-6s %-19s %10s %10s %12s %8s %8s %8s %10s %9s\n", "FAMILY",
	       "CALL", "CALLS", "MOVED", "BYTES", "ZERO", "EAGAIN", "ERRORS",
	       "NOT-SOCKET", "PER-S");
	/* f == SATFEED_NR_STREAMS: the io_uring operations of no family */
	for (int f = 0; f <= SATFEED_NR_STREAMS; f++) {
		for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
			const struct satfeed_discover_count *c = &d->src[s];

			if ((f < SATFEED_NR_STREAMS ? src_family(s) != f :
						      src_family(s) >= 0) ||
			    !src_name(s) || !src_seen(c))
				continue;
			printf("%-6s %-19s %10llu %10llu %12llu %8llu %8llu %8llu %10llu %9.1f",
			       f < SATFEED_NR_STREAMS ? sf_stream_names[f] :
							"other",
			       src_name(s),
			       (unsigned long long)c->calls,
			       (unsigned long long)c->moved,
			       (unsigned long long)c->bytes,
			       (unsigned long long)c->zero,
			       (unsigned long long)c->eagain,
			       (unsigned long long)c->errors,
			       (unsigned long long)c->not_socket,
			       secs > 0 ? c->calls / secs : 0.0);
			if (f == SATFEED_STREAM_POLL && c->calls)
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
	add_line(line, sizeof(line), a, r);
	printf("  %s\n", line);
}

static void print_json(const struct args *a, const struct satfeed_target *t,
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
	for (__u32 i = 0; i < SATFEED_NR_SOURCES; i++) {
		const struct satfeed_discover_count *c = &d->src[i];

		if (!src_name(i) || !src_seen(c))
			continue;
		printf("%s{\"name\":\"%s\",\"family\":\"%s\",\"calls\":%llu,"
		       "\"moved\":%llu,\"bytes\":%llu,\"zero\":%llu,"
		       "\"eagain\":%llu,\"errors\":%llu,\"not_socket\":%llu,"
		       "\"wait_ns\":%llu}",
		       first ? "" : ",", src_name(i),
		       src_family(i) >= 0 ? sf_stream_names[src_family(i)] : "other",
		       (unsigned long long)c->calls,
		       (unsigned long long)c->moved,
		       (unsigned long long)c->bytes,
		       (unsigned long long)c->zero,
		       (unsigned long long)c->eagain,
		       (unsigned long long)c->errors,
		       (unsigned long long)c->not_socket,
		       (unsigned long long)c->wait_ns);
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
	add_line(line, sizeof(line), a, r);
	sf_json_escape(s, sizeof(s), line, sizeof(line));
	printf("},\"add\":%s}\n", r->seen ? s : "null");
}

/* Is slot still our discovery target (not removed and re-added)? */
static bool still_ours(const struct sf_pins *p, int slot, __u32 gen)
{
	struct satfeed_target t;

	return !sf_target_read(p, slot, &t) && t.gen == gen &&
	       t.kind != SATFEED_TARGET_FREE &&
	       (t.sc_mask & SATFEED_SC_DISCOVER);
}

/*
 * Watch a->sel in discovery for a->seconds, then read its counts into *d
 * and *t and remove it.  Returns an enum sf_exit.
 */
static int run_discovery(struct sf_pins *p, const struct args *a,
			 struct satfeed_target *t, struct satfeed_discover *d,
			 double *secs)
{
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct timespec left;
	char why[512];
	int slot, err, n;
	__u64 end_ns;

	/* the handlers first: from the add on, every way out removes it */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	err = sf_target_add(p, &a->sel[0], SATFEED_SC_DISCOVER | SATFEED_SC_ALL,
			    &slot, why, sizeof(why));
	if (err) {
		fail(err, "%s", why);
		goto restore;
	}
	if (sf_target_read(p, slot, t)) {
		err = fail(SF_EXIT_ERROR, "cannot read the target: %s",
			   strerror(errno));
		goto remove;
	}
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
	if (sf_discover_read(p, slot, d) || d->gen != t->gen) {
		err = fail(SF_EXIT_ERROR, "cannot read the discovery counts%s",
			   d->gen != t->gen ? " (the slot was reused)" : "");
		goto remove;
	}
	*secs = (sf_now_mono_ns() - d->start_ns) / 1e9;
	err = SF_EXIT_OK;
remove:
	if (still_ours(p, slot, t->gen)) {
		int rerr = sf_target_remove(p, &a->sel[0], &n, why, sizeof(why));

		if (rerr && rerr != SF_EXIT_TARGET) {
			fail(rerr, "cannot remove the discovery target: %s",
			     why);
			err = err ?: rerr;
		}
	}
restore:
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	return err;
}

int cmd_discover(struct sf_pins *p, const struct args *a)
{
	struct satfeed_discover *d = calloc(1, sizeof(*d));
	struct satfeed_target t = {};
	struct recommend r;
	double secs = 0;
	int err;

	if (!d)
		return fail(SF_EXIT_ERROR, "out of memory");
	err = run_discovery(p, a, &t, d, &secs);
	if (!err) {
		recommend(d, &r);
		if (a->json)
			print_json(a, &t, d, secs, &r);
		else
			print_text(a, &t, d, secs, &r);
	}
	free(d);
	return err;
}

int cmd_add_auto(struct sf_pins *p, const struct args *a)
{
	struct satfeed_discover *d = calloc(1, sizeof(*d));
	struct satfeed_target t = {};
	struct args aa = *a;
	struct recommend r;
	char line[1024];
	double secs = 0;
	int err;

	if (!d)
		return fail(SF_EXIT_ERROR, "out of memory");
	err = run_discovery(p, a, &t, d, &secs);
	if (err)
		goto out;
	recommend(d, &r);
	if (!r.seen) {
		err = fail(SF_EXIT_TARGET, "%s %llu made no traced call in %.1f s: nothing to recommend, not added (see 'satfeedctl discover')",
			   a->sel[0].kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
			   (unsigned long long)a->sel[0].id, secs);
		goto out;
	}
	for (int f = 0; f < SATFEED_NR_STREAMS; f++)
		printf("%s: %s\n", sf_stream_names[f], r.why[f]);
	add_line(line, sizeof(line), a, &r);
	printf("running: %s\n", line);
	aa.sc_mask = recommended_mask(&r);
	err = cmd_add(p, &aa);
out:
	free(d);
	return err;
}
