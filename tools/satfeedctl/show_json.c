// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * show --json (and watch --json, a document per refresh): the latest
 * windows, the figures and the verdict of each target, from its one
 * reading (sf_reading.h), as one line of JSON with every integer exact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_pins.h"
#include "sf_reading.h"
#include "sf_target.h"
#include "satfeedctl.h"
#include "view.h"

/* s: a target's comm or path, up to max bytes (it may lack a NUL) */
void json_str(const char *s, size_t max)
{
	char buf[SF_JSON_ESCAPED_LEN(sizeof(((struct satfeed_target *)0)->path))];

	sf_json_escape(buf, sizeof(buf), s, max);
	fputs(buf, stdout);
}

static void json_window(const struct satfeed_window *w)
{
	printf("{\"seq\":%llu,\"start_ns\":%llu,\"end_ns\":%llu,"
	       "\"sum_ns\":%llu,\"mean_ns\":%llu,\"var_ns2\":%llu,"
	       "\"rate\":%llu.%03llu,\"clamped\":%u,\"runq_ns\":%llu,"
	       "\"wait_permille\":%u,\"idle_permille\":%u,"
	       "\"cv2_permille\":%u,\"samples\":%u,\"flags\":%u,"
	       "\"threads\":%u}",
	       (unsigned long long)w->seq, (unsigned long long)w->start_ns,
	       (unsigned long long)w->end_ns, (unsigned long long)w->sum_ns,
	       (unsigned long long)w->mean_ns, (unsigned long long)w->var_ns2,
	       (unsigned long long)(w->rate_milli / 1000),
	       (unsigned long long)(w->rate_milli % 1000), w->clamped,
	       (unsigned long long)w->runq_ns, w->wait_permille,
	       w->idle_permille, w->cv2_permille, w->samples, w->flags,
	       w->threads);
}

/* The figures a reader should look at (sf_reading.h), as JSON. */
static void json_figures(__u32 stream, const struct sf_figures *f)
{
	printf("\"figures\":{\"window\":\"%s\",\"samples\":%llu,",
	       sf_fig_source_name(f->source), (unsigned long long)f->samples);
	if (f->source == SF_FIG_NONE) {
		printf("\"closes_in_ns\":null}");
		return;
	}
	printf("\"mean_ns\":%llu,\"var_ns2\":%llu,\"cv2_permille\":%u,",
	       (unsigned long long)f->mean_ns, (unsigned long long)f->var_ns2,
	       f->cv2_permille);
	if (stream == SATFEED_STREAM_POLL)
		printf("\"wait_permille\":%u,\"idle_permille\":%u,",
		       f->wait_permille, f->idle_permille);
	else if (stream != SATFEED_STREAM_SVC)	/* its rate means nothing */
		printf("\"rate\":%llu.%03llu,",
		       (unsigned long long)(f->rate_milli / 1000),
		       (unsigned long long)(f->rate_milli % 1000));
	printf("\"age_ns\":%llu,", (unsigned long long)f->age_ns);
	if (f->source == SF_FIG_PARTIAL && f->closes_in_ns)
		printf("\"closes_in_ns\":%llu}",
		       (unsigned long long)f->closes_in_ns);
	else
		printf("\"closes_in_ns\":null}");
}

/*
 * The rate key of a stream's object: send's "rps" (kept from ABI 1), the
 * response and recv streams' "rate"; none for poll (its shares instead)
 * and service (a rate of service times means nothing).
 */
static const char *rate_key(__u32 stream)
{
	if (stream == SATFEED_STREAM_POLL || stream == SATFEED_STREAM_SVC)
		return NULL;
	return stream == SATFEED_STREAM_SEND ? "rps" : "rate";
}

/*
 * Stream `stream` of a target: "send", "recv", "poll", and the response
 * and service-time streams as "response" and "service".
 */
static void json_stream(const struct view *vw, __u32 stream,
			const struct satfeed_stream *s,
			const struct sf_figures *f)
{
	const struct satfeed_window *w = satfeed_newest_window(s);
	const char *name = sf_stream_name(stream), *rate = rate_key(stream);
	__u32 n = vw->p->info.window_samples;
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
		if (rate)
			printf("\"%s\":%llu.%03llu,", rate,
			       (unsigned long long)(w->rate_milli / 1000),
			       (unsigned long long)(w->rate_milli % 1000));
		else if (stream == SATFEED_STREAM_POLL)
			printf("\"wait_permille\":%u,\"idle_permille\":%u,",
			       w->wait_permille, w->idle_permille);
		printf("\"cv2_permille\":%u,", w->cv2_permille);
	} else {
		printf("\"mean_ns\":null,\"var_ns2\":null,");
		if (rate)
			printf("\"%s\":null,", rate);
		else if (stream == SATFEED_STREAM_POLL)
			printf("\"wait_permille\":null,\"idle_permille\":null,");
		printf("\"cv2_permille\":null,");
	}
	if (vw->k.n >= 0)
		printf("\"kernel_skipped\":%llu,",
		       (unsigned long long)(stream < SATFEED_NR_STREAMS ?
						    vw->k.stream[stream] :
						    vw->k.resp));
	else
		printf("\"kernel_skipped\":null,");
	json_figures(stream, f);
	printf(",\"errors\":%llu,\"eagain\":%llu,\"zero_bytes\":%llu,"
	       "\"not_socket\":%llu,\"windows\":[",
	       (unsigned long long)s->errors, (unsigned long long)s->eagain,
	       (unsigned long long)s->zero_bytes,
	       (unsigned long long)s->not_socket);
	first = s->published > SATFEED_HISTORY ?
			s->published - SATFEED_HISTORY + 1 : 1;
	for (__u64 seq = first; seq <= s->published; seq++) {
		if (seq != first)
			putchar(',');
		json_window(satfeed_window_by_seq(s, seq));
	}
	printf("]}");
}

void json_target_head(const struct sf_pins *p, __u32 slot,
		      const struct satfeed_target *t)
{
	char mask[SF_MASK_TEXT_LEN];
	struct satfeed_sat_rules r;

	printf("{\"slot\":%u,\"gen\":%u,", slot, t->gen);
	if (t->kind == SATFEED_TARGET_PID) {
		printf("\"pid\":%llu,\"comm\":", (unsigned long long)t->id);
		json_str(t->comm, sizeof(t->comm));
	} else {
		printf("\"cgroup\":%llu,\"path\":", (unsigned long long)t->id);
		json_str(t->path, sizeof(t->path));
	}
	sf_format_syscalls(t->sc_mask, mask, sizeof(mask));
	printf(",\"state\":\"%s\",\"syscalls\":\"%s\"",
	       sf_target_gone(t) ? "gone" : "active", mask);
	sf_rules_read(p, slot, t->gen, &r);	/* all 0 if unreadable */
	printf(",\"rules\":{\"wps_near_permille\":%u,"
	       "\"wps_full_permille\":%u,\"idle_near_permille\":%u,"
	       "\"idle_full_permille\":%u,\"cv2_rise_permille\":%u,"
	       "\"svc_near_permille\":%u,\"svc_full_permille\":%u,"
	       "\"drop_near_permille\":%u,\"drop_full_permille\":%u,"
	       "\"cpu_near_permille\":%u,\"cpu_full_permille\":%u,"
	       "\"unread_near_bytes\":%u,\"unread_full_bytes\":%u}",
	       r.wps_near_permille, r.wps_full_permille,
	       r.idle_near_permille, r.idle_full_permille,
	       r.cv2_rise_permille, r.svc_near_permille,
	       r.svc_full_permille, r.drop_near_permille,
	       r.drop_full_permille, r.cpu_near_permille,
	       r.cpu_full_permille, r.unread_near_bytes, r.unread_full_bytes);
}

static void json_verdict(const struct sf_reading *r)
{
	const struct satfeed_verdict *v = &r->v;
	__u32 why = sf_reason_strongest(v->why);
	bool first = true;

	printf(",\"saturation\":{\"state\":\"%s\"",
	       sf_reading_state_name(r));
	if (r->gone) {
		putchar('}');
		return;
	}
	printf(",\"seen\":%u,\"why\":%u,\"reasons\":[", v->seen, v->why);
	for (int k = 0; k < SF_NR_REASONS; k++) {
		if (!(why & sf_reason_bits[k]))
			continue;
		printf("%s\"%s\"", first ? "" : ",", sf_reason_names[k]);
		first = false;
	}
	printf("],\"stale\":%s,", r->verdict_stale ? "true" : "false");
	if (v->state == SATFEED_SAT_UNKNOWN)
		printf("\"age_ns\":null,");
	else
		printf("\"age_ns\":%llu,",
		       (unsigned long long)r->verdict_age_ns);
	printf("\"idle_permille\":%u,"
	       "\"send_cv2_permille\":%u,\"recv_cv2_permille\":%u,"
	       "\"base_cv2_permille\":%u,\"wps_permille\":%u,"
	       "\"wps_avg_permille\":%u,\"svc_avg_ns\":%llu,"
	       "\"svc_base_ns\":%llu,\"threads\":%u,\"sleepers\":%u,"
	       "\"drops\":%llu,\"drop_permille\":%u,\"cpu_ns\":%llu,"
	       "\"cpu_permille\":%u,\"cpus\":%u,\"unread_max\":%u,"
	       "\"since_ns\":%llu,\"updated_ns\":%llu,\"changes\":%llu}",
	       v->idle_permille, v->send_cv2_permille, v->recv_cv2_permille,
	       v->base_cv2_permille, v->wps_permille, v->wps_avg_permille,
	       (unsigned long long)v->svc_avg_ns,
	       (unsigned long long)v->svc_base_ns, v->threads, v->sleepers,
	       (unsigned long long)v->drops, v->drop_permille,
	       (unsigned long long)v->cpu_ns, v->cpu_permille, v->cpus,
	       v->unread_max, (unsigned long long)v->since_ns,
	       (unsigned long long)v->updated_ns,
	       (unsigned long long)v->changes);
}

/*
 * The headline figures (sf_figs[]), exact: value / 10^decimals, the window
 * they come from and their age; null when there is none yet.
 */
static void json_reading(const struct sf_reading *r)
{
	printf(",\"reading\":{");
	for (int k = 0; k < SF_NR_FIGS; k++) {
		const struct sf_fig_value *f = &r->fig[k];
		__u64 scale = 1;

		printf("%s\"%s\":", k ? "," : "", sf_figs[k].name);
		if (f->source == SF_FIG_NONE) {
			printf("null");
			continue;
		}
		for (int i = 0; i < sf_figs[k].decimals; i++)
			scale *= 10;
		printf("{\"value\":%llu.%0*llu,\"window\":\"%s\","
		       "\"age_ns\":%llu}",
		       (unsigned long long)(f->value / scale),
		       sf_figs[k].decimals,
		       (unsigned long long)(f->value % scale),
		       sf_fig_source_name(f->source),
		       (unsigned long long)f->age_ns);
	}
	putchar('}');
}

/* The JSON document of show --json, one line; watch --json adds time_ns. */
int json_view(const struct view *vw, const struct sf_selector *sel,
	      int nsel)
{
	struct sf_pins *p = vw->p;
	struct sf_target_view *tv;
	struct sf_reading r;
	bool first = true;
	int err;

	tv = malloc(sizeof(*tv));
	if (!tv)
		return -ENOMEM;
	printf("{\"abi_version\":%u,\"attach_mode\":\"%s\","
	       "\"window_samples\":%u,\"history\":%u,\"time_ns\":%llu,"
	       "\"now_ns\":%llu,\"load_mono_ns\":%llu,"
	       "\"max_age_ns\":%llu,\"tick_ns\":%llu,",
	       p->info.abi_version, sf_attach_name(p->info.attach_mode),
	       p->info.window_samples, p->info.history,
	       (unsigned long long)now_real_ns(),
	       (unsigned long long)vw->now,
	       (unsigned long long)p->info.load_mono_ns,
	       (unsigned long long)p->info.max_age_ns,
	       (unsigned long long)p->info.tick_ns);
	json_skips(&vw->k);
	printf("\"targets\":[");
	for (__u32 slot = 0; (err = sf_target_view_next(p, vw->tab, &slot, tv)) > 0;
	     slot++) {
		if (!selected(&tv->t, sel, nsel))
			continue;
		printf("%s", first ? "" : ",");
		first = false;
		sf_reading_build(&r, tv, vw->p->info.window_samples,
				 vw->p->info.max_age_ns, vw->now);
		json_target_head(vw->p, slot, &tv->t);
		json_verdict(&r);
		json_reading(&r);
		for (__u32 s = 0; s < SF_VIEW_STREAMS; s++) {
			putchar(',');
			json_stream(vw, s, sf_view_stream(tv, s),
				    &sf_reading_stream(&r, s)->f);
		}
		putchar('}');
	}
	printf("]}\n");
	free(tv);
	return err;
}
