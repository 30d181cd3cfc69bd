// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics_targets.c - the exposition's families of the targets, each
 * printed from the targets' readings (sf_reading.h), the one source that
 * show and watch print from too: the verdict and its reasons, the
 * headline figures with their window and age, the newest closed windows
 * and the counters.
 *
 * Every series of a target carries its slot and generation: a target
 * removed and added again (a cgroup re-created at the same path, a pid
 * reused) is another series, never a second sample of the same one.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "sf_common.h"
#include "metrics_int.h"

/*
 * The labels that name a target: kind, target (pid or path), comm, and
 * the instance: slot and generation.
 */
static void target_labels(struct sf_buf *b, const struct sf_reading *r)
{
	if (r->t.kind == SATFEED_TARGET_PID) {
		sf_buf_printf(b, "kind=\"pid\",target=\"%llu\",comm=\"",
			      (unsigned long long)r->t.id);
		sf_mx_label_value(b, r->t.comm, sizeof(r->t.comm));
	} else {
		sf_buf_printf(b, "kind=\"cgroup\",target=\"");
		sf_mx_label_value(b, r->t.path, sizeof(r->t.path));
		sf_buf_printf(b, "\",comm=\"");
	}
	sf_buf_printf(b, "\",slot=\"%u\",gen=\"%u\"", r->slot, r->t.gen);
}

/* name{target labels[,extra]} value/10^decimals */
static void sample(struct sf_buf *b, const char *name, const char *suffix,
		   const struct sf_reading *r, const char *extra, __u64 v,
		   int decimals)
{
	sf_buf_printf(b, "%s%s{", name, suffix);
	target_labels(b, r);
	if (extra)
		sf_buf_printf(b, ",%s", extra);
	sf_buf_put(b, "} ", 2);
	sf_mx_fixed(b, v, decimals);
	sf_buf_put(b, "\n", 1);
}

/* ---- per stream: the newest closed window, the counters ---- */

/*
 * The streams of a family, bits of enum satfeed_stream_id: the three of
 * sf_streams (CORE), the response and service-time streams, and all five
 * (ALL).  Failed calls are counted by the send, recv and poll streams only.
 */
#define STREAM_CORE	((1U << SATFEED_NR_STREAMS) - 1)
#define STREAM_SOCK	((1U << SATFEED_STREAM_SEND) | (1U << SATFEED_STREAM_RECV))
#define STREAM_RESP	(1U << SATFEED_STREAM_RESP)
#define STREAM_ALL	(STREAM_CORE | STREAM_RESP | (1U << SATFEED_STREAM_SVC))

enum stream_value {
	V_RATE, V_MEAN, V_VAR, V_CLAMPED, V_END, V_PENDING, V_WINDOWS,
	V_CALLS, V_ERRORS, V_EAGAIN, V_ZERO, V_NOT_SOCKET, V_LAST,
};

/* One family with a sample per target and stream. */
struct stream_family {
	const char *name;
	enum family_type type;
	enum stream_value value;
	int decimals;		/* printed as value / 10^decimals */
	unsigned int streams;	/* bits of enum satfeed_stream_id */
	bool window;		/* only once a window has closed */
	bool stamp;		/* a wall-clock time: only when not 0 */
	const char *help;
};

static const struct stream_family stream_families[] = {
	{ "satfeed_window_rate_per_second", GAUGE, V_RATE, 3,
	  STREAM_SOCK | STREAM_RESP, true, false,
	  "Events per second in the latest closed window of N samples: N over the sum of its gaps. Stream response: RPS_obs, the requests served per second." },
	{ "satfeed_window_mean_seconds", GAUGE, V_MEAN, 9, STREAM_ALL,
	  true, false,
	  "Mean sample of the latest closed window: the gap between calls (send, recv) or responses (response), the duration of a wait (poll), or the service time (service)." },
	{ "satfeed_window_variance_seconds_squared", GAUGE, V_VAR, 18,
	  STREAM_ALL, true, false,
	  "Exact population variance of the latest closed window's samples (saturation: it rises sharply past the saturation point)." },
	{ "satfeed_window_clamped_samples", GAUGE, V_CLAMPED, 0,
	  STREAM_ALL, true, false,
	  "Samples of the latest closed window longer than the cap (4.29 s) and counted as the cap." },
	{ "satfeed_window_end_timestamp_seconds", GAUGE, V_END, 9,
	  STREAM_ALL, true, true,
	  "When the latest closed window closed, seconds since the epoch." },
	{ "satfeed_window_pending_samples", GAUGE, V_PENDING, 0, STREAM_ALL,
	  false, false, "Samples in the window in progress." },
	{ "satfeed_windows", COUNTER, V_WINDOWS, 0, STREAM_ALL, false, false,
	  "Windows closed: the sequence number of the latest one." },
	{ "satfeed_calls", COUNTER, V_CALLS, 0, STREAM_ALL, false, false,
	  "Calls counted: sends or receives that moved bytes, waits that ended; responses (stream response) and service times (stream service, one per response)." },
	{ "satfeed_errors", COUNTER, V_ERRORS, 0, STREAM_CORE, false, false,
	  "Calls that failed with an error other than EAGAIN." },
	{ "satfeed_eagain", COUNTER, V_EAGAIN, 0, STREAM_CORE, false, false,
	  "Calls that failed with EAGAIN." },
	{ "satfeed_zero_byte_calls", COUNTER, V_ZERO, 0, STREAM_SOCK,
	  false, false, "Calls that returned 0: they moved nothing." },
	{ "satfeed_not_socket_calls", COUNTER, V_NOT_SOCKET, 0, STREAM_SOCK,
	  false, false,
	  "read/readv/write/writev calls on a file that is not a socket: not counted as samples." },
	{ "satfeed_last_event_timestamp_seconds", GAUGE, V_LAST, 9,
	  STREAM_ALL, false, true,
	  "When the stream's last counted event happened, seconds since the epoch." },
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static __u64 stream_value(const struct scrape *sc,
			  const struct sf_reading_stream *s,
			  enum stream_value v)
{
	switch (v) {
	case V_RATE:	return s->newest.rate_milli;
	case V_MEAN:	return s->newest.mean_ns;
	case V_VAR:	return s->newest.var_ns2;
	case V_CLAMPED:	return s->newest.clamped;
	case V_END:	return sf_mx_to_real(sc, s->newest.end_ns);
	case V_PENDING:	return s->pending;
	case V_WINDOWS:	return s->published;
	case V_CALLS:	return s->calls;
	case V_ERRORS:	return s->errors;
	case V_EAGAIN:	return s->eagain;
	case V_ZERO:	return s->zero_bytes;
	case V_NOT_SOCKET: return s->not_socket;
	case V_LAST:
		return s->last_ns ? sf_mx_to_real(sc, s->last_ns) : 0;
	}
	return 0;
}

static void write_stream_family(struct sf_buf *b, const struct scrape *sc,
				const struct stream_family *f)
{
	char extra[32];

	sf_mx_family_head(b, sc, f->name, f->type, f->help);
	for (__u32 i = 0; i < sc->nr_rows; i++) {
		const struct sf_reading *r = &sc->rows[i];

		for (__u32 s = 0; s < SF_VIEW_STREAMS; s++) {
			const struct sf_reading_stream *sr =
				sf_reading_stream(r, s);
			__u64 v = stream_value(sc, sr, f->value);

			if (!(f->streams & (1U << s)) ||
			    (f->window && !sr->published) || (f->stamp && !v))
				continue;
			snprintf(extra, sizeof(extra), "stream=\"%s\"",
				 sf_stream_name(s));
			sample(b, f->name, sf_mx_sample_suffix[f->type], r,
			       extra, v, f->decimals);
		}
	}
}

/* ---- per target: who it is, its verdict, its figures ---- */

static void write_targets(struct sf_buf *b, const struct scrape *sc)
{
	char mask[SF_MASK_TEXT_LEN], extra[SF_MASK_TEXT_LEN + 16];

	sf_mx_family_head(b, sc, "satfeed_targets", GAUGE,
			  "Targets (processes and cgroups) watched.");
	sf_buf_printf(b, "satfeed_targets %u\n", sc->nr_rows);
	sf_mx_family_head(b, sc, "satfeed_target", INFO,
			  "A watched target: the syscalls that count for it. slot and gen name the instance: a target added again is another series.");
	for (__u32 i = 0; i < sc->nr_rows; i++) {
		sf_format_syscalls(sc->rows[i].t.sc_mask, mask, sizeof(mask));
		snprintf(extra, sizeof(extra), "syscalls=\"%s\"", mask);
		sample(b, "satfeed_target", "_info", &sc->rows[i], extra, 1, 0);
	}
	sf_mx_family_head(b, sc, "satfeed_target_gone", GAUGE,
			  "1 when the watched process has exited or the cgroup was removed, else 0.");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		sample(b, "satfeed_target_gone", "", &sc->rows[i], NULL,
		       sc->rows[i].gone, 0);
}

/* a verdict of a live target: one window at least was judged */
static bool judged(const struct sf_reading *r)
{
	return !r->gone && r->v.state != SATFEED_SAT_UNKNOWN;
}

static const char *const state_names[] = {
	"unknown", "ok", "near", "full", "gone",
};

/*
 * The verdict: a state set (a sample per state, 1 for the current one),
 * its numeric level, the rules that hold, when it changed and how often,
 * how old it is and whether it is stale.  A gone target has state gone and
 * nothing else: its last verdict says nothing of a process that exited.
 */
static void write_verdicts(struct sf_buf *b, const struct scrape *sc)
{
	char extra[48];

	sf_mx_family_head(b, sc, "satfeed_saturation_state", GAUGE,
			  "The engine's saturation verdict as a state set: 1 for the target's state (unknown: not judged yet; ok; near; full: saturated; gone), 0 for the others.");
	for (__u32 i = 0; i < sc->nr_rows; i++) {
		const struct sf_reading *r = &sc->rows[i];
		const char *now = sf_reading_state_name(r);

		for (size_t k = 0; k < ARRAY_LEN(state_names); k++) {
			snprintf(extra, sizeof(extra), "state=\"%s\"",
				 state_names[k]);
			sample(b, "satfeed_saturation_state", "", r, extra,
			       !strcmp(now, state_names[k]), 0);
		}
	}
	sf_mx_family_head(b, sc, "satfeed_saturation_level", GAUGE,
			  "The saturation verdict as a number: 0 unknown, 1 ok, 2 near, 3 full. Absent for a gone target.");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		if (!sc->rows[i].gone)
			sample(b, "satfeed_saturation_level", "", &sc->rows[i],
			       NULL, sc->rows[i].v.state, 0);
	sf_mx_family_head(b, sc, "satfeed_saturation_reason", GAUGE,
			  "1 for each rule of the verdict that holds (the stronger of near and full only), else 0.");
	for (__u32 i = 0; i < sc->nr_rows; i++) {
		const struct sf_reading *r = &sc->rows[i];
		__u32 why = sf_reason_strongest(r->v.why);

		if (r->gone)
			continue;
		for (int k = 0; k < SF_NR_REASONS; k++) {
			snprintf(extra, sizeof(extra), "rule=\"%s\"",
				 sf_reason_names[k]);
			sample(b, "satfeed_saturation_reason", "", r, extra,
			       !!(why & sf_reason_bits[k]), 0);
		}
	}
	sf_mx_family_head(b, sc, "satfeed_saturation_stale", GAUGE,
			  "1 when the verdict is stale: the engine stopped evaluating it (not for 2 x its age bound, satfeed_info max_age_ns): it is unloaded or replaced. A target without traffic is not stale but ok with reason quiet. Absent before the first verdict.");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		if (judged(&sc->rows[i]))
			sample(b, "satfeed_saturation_stale", "", &sc->rows[i],
			       NULL, sc->rows[i].verdict_stale, 0);
	sf_mx_family_head(b, sc, "satfeed_saturation_age_seconds", GAUGE,
			  "Seconds since the engine last evaluated the verdict (a window of the target closed). Absent before the first verdict.");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		if (judged(&sc->rows[i]))
			sample(b, "satfeed_saturation_age_seconds", "",
			       &sc->rows[i], NULL, sc->rows[i].verdict_age_ns,
			       9);
	sf_mx_family_head(b, sc, "satfeed_saturation_since_timestamp_seconds",
			  GAUGE,
			  "When the verdict last changed state, seconds since the epoch.");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		if (!sc->rows[i].gone && sc->rows[i].v.since_ns)
			sample(b, "satfeed_saturation_since_timestamp_seconds",
			       "", &sc->rows[i], NULL,
			       sf_mx_to_real(sc, sc->rows[i].v.since_ns), 9);
	sf_mx_family_head(b, sc, "satfeed_saturation_changes", COUNTER,
			  "Times the verdict changed state.");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		if (!sc->rows[i].gone)
			sample(b, "satfeed_saturation_changes", "_total",
			       &sc->rows[i], NULL, sc->rows[i].v.changes, 0);
	sf_mx_family_head(b, sc, "satfeed_receive_drops", COUNTER,
			  "Datagrams the kernel dropped at the target's datagram (UDP) sockets, mostly for a full receive buffer, since it was added (each socket counted from the target's first receive on it).");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		if (!sc->rows[i].gone)
			sample(b, "satfeed_receive_drops", "_total",
			       &sc->rows[i], NULL, sc->rows[i].v.drops, 0);
	sf_mx_family_head(b, sc, "satfeed_cpu_seconds", COUNTER,
			  "CPU time of the target's threads, from the engine's ticks (each thread from the tick after the first that saw it), seconds.");
	for (__u32 i = 0; i < sc->nr_rows; i++)
		if (!sc->rows[i].gone)
			sample(b, "satfeed_cpu_seconds", "_total",
			       &sc->rows[i], NULL, sc->rows[i].v.cpu_ns, 9);
}

/*
 * The headline figures (sf_figs[]): a family each, then their age and
 * whether each is partial (the window in progress) or stale (an old
 * closed window, nothing newer), a sample per figure.
 */
static void write_figures(struct sf_buf *b, const struct scrape *sc)
{
	static const struct {
		const char *name;
		int what;	/* 0: age, else the source it marks */
		const char *help;
	} meta[] = {
		{ "satfeed_figure_age_seconds", 0,
		  "Age of a headline figure: seconds since its window closed, or since the last event of the window in progress when it is partial." },
		{ "satfeed_figure_partial", SF_FIG_PARTIAL,
		  "1 when the headline figure is over the window in progress (its samples so far), else 0." },
		{ "satfeed_figure_stale", SF_FIG_STALE,
		  "1 when the headline figure is of an old closed window and nothing newer has been counted, else 0." },
	};
	char extra[48];

	for (int k = 0; k < SF_NR_FIGS; k++) {
		sf_mx_family_head(b, sc, sf_figs[k].metric, GAUGE,
				  sf_figs[k].help);
		for (__u32 i = 0; i < sc->nr_rows; i++) {
			const struct sf_fig_value *f = &sc->rows[i].fig[k];

			if (f->source != SF_FIG_NONE)
				sample(b, sf_figs[k].metric, "", &sc->rows[i],
				       NULL, f->value, sf_figs[k].decimals);
		}
	}
	for (size_t m = 0; m < ARRAY_LEN(meta); m++) {
		sf_mx_family_head(b, sc, meta[m].name, GAUGE, meta[m].help);
		for (__u32 i = 0; i < sc->nr_rows; i++) {
			for (int k = 0; k < SF_NR_FIGS; k++) {
				const struct sf_fig_value *f =
					&sc->rows[i].fig[k];

				if (f->source == SF_FIG_NONE)
					continue;
				snprintf(extra, sizeof(extra),
					 "figure=\"%s\"", sf_figs[k].name);
				sample(b, meta[m].name, "", &sc->rows[i],
				       extra, meta[m].what ?
				       f->source == (enum sf_fig_source)
						       meta[m].what :
				       f->age_ns, meta[m].what ? 0 : 9);
			}
		}
	}
}

void sf_mx_write_targets(struct sf_buf *b, const struct scrape *sc)
{
	write_targets(b, sc);
	write_verdicts(b, sc);
	write_figures(b, sc);
	for (size_t i = 0; i < ARRAY_LEN(stream_families); i++)
		write_stream_family(b, sc, &stream_families[i]);
}
