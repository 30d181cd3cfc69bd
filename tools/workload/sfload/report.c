// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - the report, as one JSON object or as text.
 */
#include "sfload.h"

static void json_lat(const char *prefix, const struct hist *h)
{
	printf("\"%smin_us\":%.3f,\"%sp50_us\":%.3f,\"%sp90_us\":%.3f,"
	       "\"%sp99_us\":%.3f,\"%sp999_us\":%.3f,\"%smax_us\":%.3f,"
	       "\"%smean_us\":%.3f",
	       prefix, h->count ? h->min / 1e3 : 0.0,
	       prefix, hist_percentile(h, 50) / 1e3,
	       prefix, hist_percentile(h, 90) / 1e3,
	       prefix, hist_percentile(h, 99) / 1e3,
	       prefix, hist_percentile(h, 99.9) / 1e3,
	       prefix, h->max / 1e3, prefix, hist_mean(h) / 1e3);
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

void report_json(const struct result *r)
{
	printf("{\"target\":");
	json_string(cfg.target);
	printf(",\"proto\":\"%s\",\"connections\":%u,\"poisson\":%s,"
	       "\"no_pipeline\":%s,"
	       "\"offered_rps\":%.3f,\"scheduled_rps\":%.3f,"
	       "\"sent_rps\":%.3f,\"achieved_rps\":%.3f,\"served_rps\":%.3f,"
	       "\"requests\":%llu,\"sent\":%llu,\"replies\":%llu,"
	       "\"errors\":%llu,\"unsent\":%llu,\"timeouts\":%llu,"
	       "\"misses\":%llu,",
	       proto_name(), cfg.connections,
	       cfg.poisson ? "true" : "false",
	       cfg.no_pipeline ? "true" : "false", cfg.rate, r->scheduled_rps,
	       r->sent_rps, r->achieved_rps, r->served_rps,
	       (unsigned long long)r->requests, (unsigned long long)r->sent,
	       (unsigned long long)r->replies, (unsigned long long)r->errors,
	       (unsigned long long)r->unsent, (unsigned long long)r->timeouts,
	       (unsigned long long)run.misses);
	json_lat("", &r->lat);
	putchar(',');
	json_lat("send_", &r->lat_send);
	printf(",\"duration_s\":%.6f,\"warmup_s\":%.6f,\"interrupted\":%s,"
	       "\"hist_rel_error\":%.5f}\n",
	       r->window_s, cfg.warmup, run.interrupted ? "true" : "false",
	       HIST_REL_ERROR);
}

static void text_lat(const char *what, const struct hist *h)
{
	printf("  latency from %s send (us): p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
	       what, hist_percentile(h, 50) / 1e3,
	       hist_percentile(h, 90) / 1e3, hist_percentile(h, 99) / 1e3,
	       hist_percentile(h, 99.9) / 1e3, h->max / 1e3,
	       hist_mean(h) / 1e3);
}

void report_text(const struct result *r)
{
	printf("sfload: %s %s, %u connection%s%s, %s, %.3f s measured after %.3f s warm-up%s\n",
	       proto_name(), cfg.target,
	       cfg.connections, cfg.connections > 1 ? "s" : "",
	       cfg.no_pipeline ? " (no pipelining)" : "",
	       cfg.poisson ? "poisson arrivals" : "fixed interval",
	       r->window_s, cfg.warmup,
	       run.interrupted ? " (interrupted)" : "");
	printf("  offered %.1f req/s  sent %.1f  achieved %.1f  served %.1f\n",
	       cfg.rate, r->sent_rps, r->achieved_rps, r->served_rps);
	printf("  requests %llu  replies %llu  errors %llu  unsent %llu  timeouts %llu",
	       (unsigned long long)r->requests,
	       (unsigned long long)r->replies, (unsigned long long)r->errors,
	       (unsigned long long)r->unsent,
	       (unsigned long long)r->timeouts);
	if (cfg.proto == PROTO_MEMCACHED)
		printf("  misses %llu", (unsigned long long)run.misses);
	putchar('\n');
	text_lat("scheduled", &r->lat);
	text_lat("actual", &r->lat_send);
}
