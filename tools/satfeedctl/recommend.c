// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recommendation of discover and add --auto: from the counts of each
 * source, the members of each family that give one sample per request and
 * per response (and the waits of the event loop), with the reason, and the
 * `satfeedctl add` line that watches them.
 */
#include <stdio.h>
#include <string.h>
#include "sf_common.h"
#include "sf_pins.h"
#include "satfeedctl.h"
#include "discover.h"

/* Two counts "match" when they differ by at most 1/MATCH_DIV of the larger
 * (and 2 calls): a request or response in flight when the period ends. */
#define MATCH_DIV	10
/* A wait member used less than 1/RARE_DIV as often as the busiest is a
 * side thread's timer, not the server's event loop. */
#define RARE_DIV	10

const char *src_name(__u32 src)
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

int src_family(__u32 src)
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

bool src_seen(const struct satfeed_discover_count *c)
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

/* The samples source s of family f gave: calls that moved bytes (waits:
 * that ended). */
static __u64 samples_of(const struct satfeed_discover *d, int f, __u32 s)
{
	return f == SATFEED_STREAM_POLL ? d->src[s].calls : d->src[s].moved;
}

/* The sources of family f that moved bytes (waits: that ran). */
static __u32 family_used(const struct satfeed_discover *d, int f,
			 __u64 *total)
{
	__u32 mask = 0;

	*total = 0;
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
		__u64 n = samples_of(d, f, s);

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
			n += samples_of(d, f, s);
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
		__u64 n = samples_of(d, f, s);

		if (!(src_bit(s) & used))
			continue;
		if (!best || absdiff(n, ref) < absdiff(best_n, ref) ||
		    (absdiff(n, ref) == absdiff(best_n, ref) &&
		     d->src[s].bytes > best_bytes)) {
			best = src_bit(s);
			best_n = n;
			best_bytes = d->src[s].bytes;
		}
	}
	r->mask[f] = best;
	r->count[f] = best_n;
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++)
		if ((src_bit(s) & used) &&
		    counts_match(samples_of(d, f, s), ref))
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
		if ((src_bit(s) & used) && samples_of(d, f, s) > max)
			max = samples_of(d, f, s);
	for (__u32 s = 0; s < SATFEED_NR_SOURCES; s++) {
		if (!(src_bit(s) & used))
			continue;
		if (samples_of(d, f, s) * RARE_DIV < max)
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

void recommend(const struct satfeed_discover *d, struct recommend *r)
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
void add_line(char *buf, size_t len, const struct args *a,
	      const struct recommend *r)
{
	size_t off;

	off = snprintf(buf, len, PROG "%s%s add ",
		       strcmp(a->root, SATFEED_DEFAULT_ROOT) ? " --bpffs " : "",
		       strcmp(a->root, SATFEED_DEFAULT_ROOT) ? a->root : "");
	if (a->sel[0].kind == SATFEED_TARGET_PID)
		for (int i = 0; i < a->nr_sel && off < len; i++)
			off += snprintf(buf + off, len - off, "%s--pid %llu",
					i ? " " : "",
					(unsigned long long)a->sel[i].id);
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
__u32 recommended_mask(const struct recommend *r)
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

