/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_pins.h - the read side of satfeed's consumer contract for user space:
 * open the pinned maps, check each one's shape and the ABI version before
 * anything is read, and read targets and streams.
 *
 *	struct sf_pins p;
 *	char why[512];
 *	int err = sf_pins_open(&p, SATFEED_DEFAULT_ROOT, why, sizeof(why));
 *
 *	if (err)
 *		errx(err, "%s", why);		// err is an enum sf_exit
 *	sf_stream_read(&p, slot, SATFEED_STREAM_SEND, &st);
 *	w = satfeed_newest_window(&st);
 *	sf_pins_close(&p);
 *
 * A program that loads the engine itself (a test, a benchmark) fills the same
 * struct from its bpf_object with sf_pins_from_object() and then uses every
 * call here and in sf_target.h unchanged.
 */
#ifndef __SF_PINS_H
#define __SF_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include "satfeed.h"

struct bpf_object;

/* satfeed's maps, opened by path only: no skeleton, no program loading. */
struct sf_pins {
	char root[256];		/* the pin root; "" for sf_pins_from_object() */
	int info_fd;
	int config_fd;
	int targets_fd;
	int streams_fd;
	int pid_index_fd;
	int cgrp_index_fd;
	int verdict_fd;
	int discover_fd;
	int rules_fd;
	int responses_fd;	/* the response stream (SATFEED_STREAM_RESP) */
	int service_fd;		/* the service time (SATFEED_STREAM_SVC) */
	int svc_hist_fd;	/* its histogram (struct satfeed_svc_hist) */
	struct satfeed_info info;
	int lock_fd;		/* the root lock held with the pins, or -1 */
	int lock_how;		/* LOCK_SH or LOCK_EX, when lock_fd >= 0 */
};

/*
 * Open every pinned map under root.  Each pin's map type, key size, value
 * size and max_entries are compared with the contract before its first
 * lookup, and sf_info's ABI version with this build's.  Returns an enum
 * sf_exit code; on failure nothing stays open and *why holds a one-line
 * reason that names the pin and what differed.
 */
int sf_pins_open(struct sf_pins *p, const char *root, char *why, size_t len);

/*
 * The same for the maps of an engine object this process loaded itself (the
 * map names are the pin names).  Such an object is built from this very
 * header, so there is no ABI to compare and sf_info may still be empty:
 * p->info.max_targets is taken from sf_targets.  The maps stay owned by obj.
 */
int sf_pins_from_object(struct sf_pins *p, struct bpf_object *obj, char *why,
			size_t len);

/*
 * sf_pins_open() for a reader, which takes no lock: the pins are opened
 * again (a few times) until every one is of the engine pinned at root when
 * they were all open (a load, --replace or unload between two opens would mix
 * two engines).  The root is always absent or a whole engine, and a target
 * is active only once all of it is written, so a reader sees no change half
 * done.  Returns an enum sf_exit.
 */
int sf_pins_open_snapshot(struct sf_pins *p, const char *root, char *why,
			  size_t len);

/*
 * sf_pins_open() under the root lock (sf_root.h): LOCK_SH to read the target
 * table as one consistent snapshot, LOCK_EX to change it.  The lock is
 * taken before the pins are opened, so they are the engine that stays
 * pinned while it is held; sf_pins_close() releases it.
 */
int sf_pins_open_locked(struct sf_pins *p, const char *root, int how,
			char *why, size_t len);

/*
 * Are p's maps still the ones pinned under p->root?  False after a
 * `load --replace` or an unload since p was opened.
 */
bool sf_pins_current(const struct sf_pins *p);

/* Close what sf_pins_open() opened; a no-op after sf_pins_from_object(). */
void sf_pins_close(struct sf_pins *p);

/*
 * Is map fd shaped as the contract says pin `name` (SATFEED_PIN_*) is, for
 * an engine of max_targets slots?  0 if so; else -1 with *why naming what
 * differed.
 */
int sf_pin_check(int fd, const char *name, __u32 max_targets, char *why,
		 size_t len);

/*
 * The fd p holds for pin `name` (SATFEED_PIN_*): what a consumer's object
 * swaps in for its map of that name.  -ENOENT for a name the contract does
 * not have.
 */
int sf_pins_fd(const struct sf_pins *p, const char *name);

/* sf_targets[slot].  0 or -errno. */
int sf_target_read(const struct sf_pins *p, __u32 slot,
		   struct satfeed_target *t);

/*
 * Stream `stream` of target slot `slot`, copied under the stream's lock
 * (BPF_F_LOCK), so every window and counter in *s is whole.  0 or -errno.
 */
int sf_stream_read(const struct sf_pins *p, __u32 slot, __u32 stream,
		   struct satfeed_stream *s);

/*
 * The verdict of target slot `slot`, copied under its lock (BPF_F_LOCK).  It
 * belongs to the target only when v->gen equals the target's gen.  0 or
 * -errno.
 */
int sf_verdict_read(const struct sf_pins *p, __u32 slot,
		    struct satfeed_verdict *v);

/*
 * Reset the verdict of slot to an empty one (state UNKNOWN) of generation
 * gen, under its lock: the engine updates it for events of that generation
 * only (gen 0: none).  0 or -errno.
 */
int sf_verdict_reset(const struct sf_pins *p, __u32 slot, __u32 gen);

/* Every slot of sf_targets, as sf_target_table_read() reads them. */
struct sf_target_table {
	__u32 nr;		/* p->info.max_targets */
	struct satfeed_target t[SATFEED_MAX_TARGETS];
};

/*
 * Every slot of sf_targets as it was at one instant, so that a target that
 * moves from one slot to another while the table is read is listed once.
 * Without the root lock (readers never wait on a writer, the common case)
 * the table is read twice and taken when every slot read the same kind, id
 * and gen both times: a slot's gen moves on at each reuse, so each slot held
 * that target all along, and all of them at the instant between the two
 * passes.  A table that keeps changing through a few such tries is read
 * under LOCK_SH (its timeout applies; why says what held it).  With p's
 * own lock held, one pass.  0, or -errno with why set.
 */
int sf_target_table_read(const struct sf_pins *p, struct sf_target_table *tab,
			 char *why, size_t len);

/* One watched target with its streams, as sf_target_view_next() reads it. */
struct sf_target_view {
	__u32 slot;
	struct satfeed_target t;
	struct satfeed_stream st[SATFEED_NR_STREAMS];
	/* all zero (UNKNOWN) when the one read is not of t.gen */
	struct satfeed_verdict verdict;
	/* each all zero when the one read is not of t.gen: */
	struct satfeed_stream resp;	/* responses (SATFEED_STREAM_RESP) */
	struct satfeed_stream svc;	/* service time (..._SVC) */
	struct satfeed_svc_hist hist;	/* its histogram, since added */
};

/* The streams a view holds: st[] (send, recv, poll), resp, svc. */
#define SF_VIEW_STREAMS		(SATFEED_STREAM_SVC + 1)

/*
 * The member of h that holds stream `stream` (enum satfeed_stream_id): resp,
 * svc, else arr[stream].  The one mapping of the streams a view holds, and
 * a reading (sf_reading_stream()) of them.
 */
#define SF_STREAM_MEMBER(h, arr, stream)                \
	((stream) == SATFEED_STREAM_RESP ? &(h)->resp : \
	 (stream) == SATFEED_STREAM_SVC	 ? &(h)->svc :  \
					   &(h)->arr[(stream)])

/* Stream `stream` (enum satfeed_stream_id, RESP or SVC) of a view. */
static inline const struct satfeed_stream *
sf_view_stream(const struct sf_target_view *v, __u32 stream)
{
	return SF_STREAM_MEMBER(v, st, stream);
}

/*
 * The next watched target of tab (sf_target_table_read()) from slot *slot
 * on, with its three streams and its verdict each copied under its lock,
 * and its response and service-time streams and histogram:
 * the one reader of the windows that every consumer (show, watch, export)
 * goes through.  A target whose slot has been reused since tab was read (a
 * stream of another generation) is skipped.  Returns 1 with *v filled and
 * *slot at its slot, 0 when no target is left, or -errno of a failed read.
 * Iterate with
 *
 *	for (__u32 slot = 0;
 *	     (err = sf_target_view_next(p, tab, &slot, &v)) > 0; slot++)
 */
int sf_target_view_next(const struct sf_pins *p,
			const struct sf_target_table *tab, __u32 *slot,
			struct sf_target_view *v);

/*
 * The saturation rules of the target of generation gen in slot (sf_rules):
 * as stored (0: the default), all 0 when the entry is of another
 * generation.  0 or -errno.
 */
int sf_rules_read(const struct sf_pins *p, __u32 slot, __u32 gen,
		  struct satfeed_sat_rules *r);

/*
 * Store rules r (NULL: all defaults) for the target of generation gen in
 * slot, one whole entry: the engine judges by it from the next window of
 * that generation that closes.  The only writer of sf_rules; the caller
 * holds the root lock.  0 or -errno.
 */
int sf_rules_write(const struct sf_pins *p, __u32 slot, __u32 gen,
		   const struct satfeed_sat_rules *r);

/*
 * The service-time histogram of slot (sf_svc_hist).  Not a snapshot: each
 * count is whole, and counts only grow while it is read.  It belongs to
 * the target only when h->gen equals the target's gen.  0 or -errno.
 */
int sf_svc_hist_read(const struct sf_pins *p, __u32 slot,
		     struct satfeed_svc_hist *h);

/* Reset slot's service-time histogram to generation gen.  0 or -errno. */
int sf_svc_hist_reset(const struct sf_pins *p, __u32 slot, __u32 gen);

/*
 * The discovery counts of target slot `slot` (sf_discover).  0 or -errno.
 */
int sf_discover_read(const struct sf_pins *p, __u32 slot,
		     struct satfeed_discover *d);

/*
 * Empty slot's discovery counts for generation gen: the engine adds only to
 * the counts of its target's generation.  The calling process is their
 * owner: a discovery outlives it only when it was killed.  0 or -errno.
 */
int sf_discover_reset(const struct sf_pins *p, __u32 slot, __u32 gen);

/*
 * No discovery counts for slot: sf_discover is a hash without
 * preallocation, so a slot that is not in discovery holds no entry (6 KiB
 * each).  0 (none was there either) or -errno.
 */
int sf_discover_drop(const struct sf_pins *p, __u32 slot);

/*
 * Empty the stream for generation gen, under its lock: the engine drops
 * every event of another generation from then on.  0 or -errno.
 */
int sf_stream_reset(const struct sf_pins *p, __u32 slot, __u32 stream,
		    __u32 gen);

#endif /* __SF_PINS_H */
