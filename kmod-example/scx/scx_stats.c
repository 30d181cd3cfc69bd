// SPDX-License-Identifier: GPL-2.0
/*
 * scx_stats.c - what scx_satfeed reports while it runs: the decision state
 * and the per-CPU counters of the BPF side (--stats, --json), whether the
 * engine it reads is still the pinned one, and the kernel's reason when the
 * scheduler exits.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "satfeed.h"
#include "sfc_policy.h"
#include "sf_consumer.h"
#include "scx_satfeed.h"
#include "scx_loader.h"
#include "scx_satfeed.skel.h"

int take(const struct scx_env *env, struct scx_satfeed *skel,
	 struct snapshot *s)
{
	int st = bpf_map__fd(skel->maps.scx_sf_state);
	int cpus = bpf_map__fd(skel->maps.scx_sf_cpus);
	int ex = bpf_map__fd(skel->maps.scx_sf_exit);
	__u32 zero = 0;

	memset(s, 0, sizeof(*s));
	if (bpf_map_lookup_elem(st, &zero, &s->st) ||
	    bpf_map_lookup_elem(ex, &zero, &s->exit))
		return -errno;
	for (__u32 i = 0; i < env->cfg.nr_cpus; i++)
		if (bpf_map_lookup_elem(cpus, &i, &s->cpu[i]))
			return -errno;
	return 0;
}

/* Does the engine that the scheduler reads still own the pins? */
const char *engine_state(const struct scx_env *env, __u32 streams_id)
{
	__u32 id = sf_consumer_pin_id(env->root, SATFEED_PIN_STREAMS);

	if (!id)
		return "gone";
	return id == streams_id ? "ok" : "reloaded";
}

void print_stats(const struct scx_env *env, const struct snapshot *s,
		 const char *engine)
{
	const struct scx_sf_state *st = &s->st;
	__u64 tr = 0, tres = 0, or = 0, ores = 0, bound = 0, mov = 0, mis = 0;
	__u64 spill = 0, kicks = 0, unb = 0, pin = 0;
	__u32 n = env->cfg.nr_cpus;

	for (__u32 i = 0; i < n; i++) {
		const struct scx_sf_cpu *c = &s->cpu[i];

		tr += c->target_runs;
		or += c->other_runs;
		bound += c->bound_runs;
		mov += c->moved;
		mis += c->misplaced;
		unb += c->unbound;
		pin += c->pinned;
		spill += c->spilled;
		kicks += c->preempts;
		if (c->reserved) {
			tres += c->target_runs;
			ores += c->other_runs;
		}
	}
	if (!env->json) {
		static int lines;

		if (lines++ % 20 == 0)
			printf("%8s %5s %4s %6s %8s %8s %9s %8s %10s %10s %8s %8s %6s\n",
			       "periods", "level", "need", "busy", "reserved",
			       "perf_res", "perf_base", "windows", "tgt_runs",
			       "oth_runs", "moved", "misplcd", "engine");
		printf("%8llu %5u %4u %6.2f %8u %8u %9u %8llu %10llu %10llu %8llu %8llu %6s\n",
		       (unsigned long long)st->periods, st->level, st->need,
		       st->busy_permille / 1000.0, st->reserved,
		       st->perf_reserved, st->perf_base,
		       (unsigned long long)st->windows,
		       (unsigned long long)tr, (unsigned long long)or,
		       (unsigned long long)mov, (unsigned long long)mis,
		       engine);
		fflush(stdout);
		return;
	}
	printf("{\"periods\":%llu,\"now_ns\":%llu,\"level\":%u,\"reserved\":%u,"
	       "\"perf_reserved\":%u,\"perf_base\":%u,\"changes\":%llu,"
	       "\"last_change_ns\":%llu,"
	       "\"releases\":%llu,\"windows\":%llu,\"dry_run\":%s,"
	       "\"engine\":\"%s\",\"target_runs\":%llu,"
	       "\"target_runs_reserved\":%llu,\"other_runs\":%llu,"
	       "\"other_runs_reserved\":%llu,\"bound_runs\":%llu,"
	       "\"moved\":%llu,\"misplaced\":%llu,\"unbound\":%llu,"
	       "\"pinned\":%llu,\"spilled\":%llu,"
	       "\"preempts\":%llu,\"need\":%u,\"busy_permille\":%u,"
	       "\"runnable\":%u,\"runnable_hold\":%u,\"run_ns\":%llu,"
	       "\"delay_max_ns\":%llu,\"delays\":%llu,\"targets\":[",
	       (unsigned long long)st->periods, (unsigned long long)st->now_ns,
	       st->level, st->reserved, st->perf_reserved, st->perf_base,
	       (unsigned long long)st->changes,
	       (unsigned long long)st->last_change_ns,
	       (unsigned long long)st->releases,
	       (unsigned long long)st->windows,
	       env->cfg.dry_run ? "true" : "false", engine,
	       (unsigned long long)tr, (unsigned long long)tres,
	       (unsigned long long)or, (unsigned long long)ores,
	       (unsigned long long)bound, (unsigned long long)mov,
	       (unsigned long long)mis, (unsigned long long)unb,
	       (unsigned long long)pin, (unsigned long long)spill,
	       (unsigned long long)kicks, st->need, st->busy_permille,
	       st->runnable, st->runnable_hold,
	       (unsigned long long)st->run_ns,
	       (unsigned long long)st->delay_max_ns,
	       (unsigned long long)st->delays);
	for (__u32 i = 0; i < env->cfg.nr_targets; i++) {
		const struct scx_sf_target_state *t = &st->t[i];

		printf("%s{\"slot\":%u,\"live\":%s,\"released\":%s,\"level\":%u,"
		       "\"demand\":%u,\"windows\":%llu}",
		       i ? "," : "", env->cfg.targets[i].slot,
		       t->live ? "true" : "false",
		       t->released ? "true" : "false", t->pol.level,
		       t->pol.demand, (unsigned long long)t->windows);
	}
	printf("],\"cpus\":[");
	for (__u32 i = 0; i < n; i++) {
		const struct scx_sf_cpu *c = &s->cpu[i];

		printf("%s{\"cpu\":%u,\"reserved\":%u,\"perf\":%u,"
		       "\"target_runs\":%llu,\"other_runs\":%llu,"
		       "\"bound_runs\":%llu,\"moved\":%llu,\"misplaced\":%llu,"
		       "\"unbound\":%llu,\"pinned\":%llu,\"spilled\":%llu,"
		       "\"preempts\":%llu,\"tick_ended\":%llu,"
		       "\"tick_kept\":%llu,\"run_ends_max\":%llu,"
		       "\"debt_ns\":%llu}",
		       i ? "," : "", i, c->reserved, c->perf,
		       (unsigned long long)c->target_runs,
		       (unsigned long long)c->other_runs,
		       (unsigned long long)c->bound_runs,
		       (unsigned long long)c->moved,
		       (unsigned long long)c->misplaced,
		       (unsigned long long)c->unbound,
		       (unsigned long long)c->pinned,
		       (unsigned long long)c->spilled,
		       (unsigned long long)c->preempts,
		       (unsigned long long)c->tick_ended,
		       (unsigned long long)c->tick_kept,
		       (unsigned long long)c->run_ends_max,
		       (unsigned long long)c->debt_ns);
	}
	printf("]}\n");
	fflush(stdout);
}

static const char *exit_kind_name(__s64 kind)
{
	switch (kind) {
	case 1: return "done";
	case 64: return "unregistered";
	case 65: return "unregistered by the BPF scheduler";
	case 66: return "unregistered by the kernel";
	case 67: return "sysrq";
	case 1024: return "error";
	case 1025: return "BPF scheduler error";
	case 1026: return "stall (watchdog)";
	default: return kind >= 1024 ? "error" : "exit";
	}
}

int report_exit(const struct scx_sf_exit *e)
{
	bool err = e->kind >= 1024;	/* SCX_EXIT_ERROR */

	fprintf(err ? stderr : stdout,
		"scx_satfeed: scheduler exited: %s (kind %lld, code %lld): %s%s%s\n",
		exit_kind_name(e->kind), (long long)e->kind,
		(long long)e->exit_code, e->reason, e->msg[0] ? ": " : "",
		e->msg);
	return err;
}

