// SPDX-License-Identifier: GPL-2.0
/*
 * scx_satfeed - load and run the sched_ext scheduler of scx_satfeed.bpf.c
 * for targets that satfeed watches.
 *
 *   scx_satfeed [OPTIONS] -p PID | -c CGROUP | -s SLOT ...
 *
 * The BPF object (compiled into this binary as a libbpf skeleton) reads
 * satfeed's pinned maps in place: sf_targets and sf_streams are swapped in
 * before load (bpf_map__reuse_fd; the engine's maps it does not read are
 * not created), and every decision is taken by the object's own bpf_timer.
 * This program checks the input, loads, attaches, prints stats
 * and detaches on SIGINT/SIGTERM or after --duration.  Everything is checked
 * before the scheduler is attached, so a refusal leaves nothing behind; the
 * scheduler lives exactly as long as this process (its link is not pinned).
 *
 * This file: the command line and the run loop, and the settings (env),
 * which it passes to the others; scx_load.c: the checks and the load;
 * scx_stats.c: the stats and the exit report.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "satfeed.h"
#include "sfc_policy.h"
#include "sf_common.h"
#include "sf_consumer.h"
#include "sf_pins.h"
#include "scx_satfeed.h"
#include "scx_loader.h"
#include "scx_satfeed.skel.h"

static struct scx_env env = {
	.root = SATFEED_DEFAULT_ROOT,
	.cfg = {
		.min_shared = 1,
		.headroom_pct = 25,
		.period_ns = 10 * MS,
		.release_ns = 0,	/* 2 x the engine's age bound */
		.grace_ns = 100 * MS,
		.slice_ns = 5 * MS,
		.shrink_ns = 2000 * MS,
		.delay_ns = 1 * MS,
		.policy = {
			.hysteresis = 5,
			.max_step = 25,
			.min_interval_ns = 50 * MS,
			.stale_ns = 1000 * MS,
		},
	},
	.nr_max_reserved = -1,
	.interval_ms = 1000,
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: scx_satfeed [OPTIONS] TARGET...\n"
"\n"
"A sched_ext scheduler driven by satfeed's windows: while kmod-example's\n"
"policy sees demand (slack falls, variance rises), the targets' threads get\n"
"reserved CPUs at full performance, as many as their measured CPU use and\n"
"runnable threads need; nothing else runs there.  On the other CPUs the\n"
"targets go first but every other task keeps half of a CPU it waits for.\n"
"Needs a kernel with CONFIG_SCHED_CLASS_EXT, satfeed loaded, and each\n"
"target watched.\n"
"\n"
"Targets (up to %d; each must be watched by satfeed):\n"
"  -p, --pid PID          a watched process\n"
"  -c, --cgroup PATH      a watched cgroup v2 directory\n"
"  -s, --slot N           satfeed's target slot N\n"
"\n"
"  --bpffs DIR            satfeed's pin root (default " SATFEED_DEFAULT_ROOT ")\n"
"  --period-ms N          decision period of the BPF timer (default 10)\n"
"  --min-shared N         CPUs never reserved (default 1)\n"
"  --max-reserved N       most CPUs reserved (default: all but --min-shared)\n"
"  --perf-base N          perf target of unreserved CPUs while some CPU is\n"
"                         reserved, 1..1024 (default: never set, full)\n"
"  --headroom-pct N       reserve CPU use x (100 + N)%% (default 25)\n"
"  --shrink-ms N          one CPU less after the need stayed lower N ms\n"
"                         (default 2000)\n"
"  --delay-us N           one CPU more when a target waited N us to run\n"
"                         with more threads runnable than reserved CPUs\n"
"                         (default 1000)\n"
"  --release-ms N         no window for N ms: release (default: 2 x the\n"
"                         engine's age bound, sf_info.max_age_ns, after\n"
"                         which its own readers call it stopped)\n"
"  --slice-us N           time slice; also the most a target runs on a\n"
"                         shared CPU while another task waits (default 5000)\n"
"  --hysteresis N --max-step N --rate-limit-ms N --stale-ms N\n"
"                         the policy's settings (defaults 5, 25, 50, 1000)\n"
"  --watchdog-ms N        the kernel stops the scheduler when a task waits\n"
"                         N ms to run (sched_ext_ops.timeout_ms; default 0:\n"
"                         the kernel's, 30 s)\n"
"  --dry-run              decide and report, attach no scheduler\n"
"  --stats                print a line per interval (decision state, runs)\n"
"  --json                 --stats as JSON lines, with per-CPU counters\n"
"  --interval-ms N        --stats interval (default 1000)\n"
"  --duration SECONDS     run that long, then detach (default: until a signal)\n"
"  -v, --verbose          libbpf's messages (verifier logs)\n"
"\n"
"Testing only (never for production):\n"
"  --test-stall           never run the targets' threads once they queue, so\n"
"                         the kernel's watchdog stops the scheduler after\n"
"                         --watchdog-ms: exercises the error exit (exit 1\n"
"                         with the kernel's reason); needs --watchdog-ms\n"
"\n"
"Exit: 0 clean detach; 1 scheduler error (the kernel's reason is printed) or\n"
"runtime failure; 2 usage; 3 satfeed not loaded; 5 satfeed's ABI differs;\n"
"6 a target is not watched; 9 no sched_ext or another scheduler running.\n",
		SCX_SF_MAX_TARGETS);
}

/* ---- input ---- */

/* The number s in lo..hi, else die (SF_EXIT_USAGE) naming option opt. */
static unsigned long parse_num(const char *opt, const char *s, unsigned long lo,
			unsigned long hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		die(SF_EXIT_USAGE, "%s: '%s' is not a number in %lu..%lu", opt,
		    s, lo, hi);
	return v;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * MS };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	enum { O_PERIOD = SF_OPT_NEXT, O_MIN_SHARED, O_MAX_RES, O_PERF_BASE,
	       O_RELEASE, O_SLICE, O_HYST, O_STEP, O_RATE, O_STALE, O_DRY,
	       O_STATS, O_JSON, O_INTERVAL, O_DURATION, O_WATCHDOG,
	       O_TEST_STALL, O_HEADROOM, O_SHRINK, O_DELAY };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "slot", required_argument, NULL, 's' },
		{ "period-ms", required_argument, NULL, O_PERIOD },
		{ "min-shared", required_argument, NULL, O_MIN_SHARED },
		{ "max-reserved", required_argument, NULL, O_MAX_RES },
		{ "perf-base", required_argument, NULL, O_PERF_BASE },
		{ "release-ms", required_argument, NULL, O_RELEASE },
		{ "headroom-pct", required_argument, NULL, O_HEADROOM },
		{ "shrink-ms", required_argument, NULL, O_SHRINK },
		{ "delay-us", required_argument, NULL, O_DELAY },
		{ "slice-us", required_argument, NULL, O_SLICE },
		{ "hysteresis", required_argument, NULL, O_HYST },
		{ "max-step", required_argument, NULL, O_STEP },
		{ "rate-limit-ms", required_argument, NULL, O_RATE },
		{ "stale-ms", required_argument, NULL, O_STALE },
		{ "dry-run", no_argument, NULL, O_DRY },
		{ "watchdog-ms", required_argument, NULL, O_WATCHDOG },
		{ "test-stall", no_argument, NULL, O_TEST_STALL },
		{ "stats", no_argument, NULL, O_STATS },
		{ "json", no_argument, NULL, O_JSON },
		{ "interval-ms", required_argument, NULL, O_INTERVAL },
		{ "duration", required_argument, NULL, O_DURATION },
		SF_CONSUMER_OPTIONS,
		{}
	};
	struct scx_sf_config *c = &env.cfg;
	struct bpf_map_info mi = {};
	__u32 mlen = sizeof(mi);
	struct bpf_link *link = NULL;
	struct scx_satfeed *skel;
	struct snapshot snap;
	struct sf_pins pins;
	double elapsed = 0;
	char why[512], *end;
	int ch, err, rc = 0;

	sf_prog = "scx_satfeed";

	while ((ch = getopt_long(argc, argv, "p:c:s:vh", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': case 'c': case 's':
			if (c->nr_targets == SCX_SF_MAX_TARGETS)
				die(SF_EXIT_USAGE, "at most %d targets",
				    SCX_SF_MAX_TARGETS);
			env.kinds[c->nr_targets] = ch;
			if (ch == 'p')
				env.ids[c->nr_targets] =
					parse_num("--pid", optarg, 1, INT_MAX);
			else if (ch == 's')
				/* the slot's range: from the pins, later */
				env.ids[c->nr_targets] =
					parse_num("--slot", optarg, 0, INT_MAX);
			env.targets[c->nr_targets++] = optarg;
			break;
		case O_PERIOD:
			c->period_ns = parse_num("--period-ms", optarg, 1, 10000) * MS;
			break;
		case O_MIN_SHARED:
			c->min_shared = parse_num("--min-shared", optarg, 1,
						  SCX_SF_MAX_CPUS);
			break;
		case O_MAX_RES:
			env.nr_max_reserved = parse_num("--max-reserved", optarg,
							0, SCX_SF_MAX_CPUS);
			break;
		case O_PERF_BASE:
			c->perf_base = parse_num("--perf-base", optarg, 1,
						 SCX_SF_PERF_ONE);
			break;
		case O_HEADROOM:
			c->headroom_pct = parse_num("--headroom-pct", optarg, 0,
						    400);
			break;
		case O_SHRINK:
			c->shrink_ns = parse_num("--shrink-ms", optarg, 10,
						 600000) * MS;
			break;
		case O_DELAY:
			c->delay_ns = parse_num("--delay-us", optarg, 10,
						1000000) * 1000;
			break;
		case O_RELEASE:
			c->release_ns = parse_num("--release-ms", optarg, 1,
						  600000) * MS;
			break;
		case O_SLICE:
			c->slice_ns = parse_num("--slice-us", optarg, 100,
						1000000) * 1000;
			break;
		case O_HYST:
			c->policy.hysteresis = parse_num("--hysteresis", optarg,
							 0, 50);
			break;
		case O_STEP:
			c->policy.max_step = parse_num("--max-step", optarg,
						       1, 100);
			break;
		case O_RATE:
			c->policy.min_interval_ns =
				parse_num("--rate-limit-ms", optarg, 0, 60000) * MS;
			break;
		case O_STALE:
			c->policy.stale_ns =
				parse_num("--stale-ms", optarg, 1, 600000) * MS;
			break;
		case O_DRY:
			c->dry_run = 1;
			break;
		case O_WATCHDOG:
			/* the kernel refuses more than 30 s (SCX_WATCHDOG_MAX_TIMEOUT) */
			env.watchdog_ms = parse_num("--watchdog-ms", optarg, 100,
						    30000);
			break;
		case O_TEST_STALL:
			c->test_stall = 1;
			break;
		case O_STATS:
			env.stats = true;
			break;
		case O_JSON:
			env.stats = env.json = true;
			break;
		case O_INTERVAL:
			env.interval_ms = parse_num("--interval-ms", optarg, 10,
						    3600000);
			break;
		case O_DURATION:
			env.duration = strtod(optarg, &end);
			if (*end || end == optarg || env.duration <= 0)
				die(SF_EXIT_USAGE, "--duration: '%s' is not a positive number of seconds",
				    optarg);
			break;
		default:
			sf_consumer_option(ch, optarg, &env.root, &env.verbose,
					   usage);
		}
	}
	if (optind != argc) {
		usage(stderr);
		return SF_EXIT_USAGE;
	}
	if (!c->nr_targets)
		die(SF_EXIT_USAGE, "no target: give -p PID, -c CGROUP or -s SLOT (see --help)");
	/* a stall the kernel's default watchdog (30 s) takes long to see */
	if (c->test_stall && (!env.watchdog_ms || c->dry_run))
		die(SF_EXIT_USAGE, "--test-stall needs --watchdog-ms and no --dry-run");
	/* the grace for moves after a change: a few slices and a period */
	c->grace_ns = 4 * c->slice_ns + c->period_ns;
	if (c->grace_ns < 100 * MS)
		c->grace_ns = 100 * MS;
	sf_consumer_verbose(env.verbose);

	check_cpus(&env);
	if (!c->dry_run)
		check_sched_ext();
	err = sf_pins_open(&pins, env.root, why, sizeof(why));
	if (err)
		die(err, "%s", why);
	/* a quiet target's windows say so within 1.5 x the age bound; none
	 * for 2 x: the engine has stopped (bpf/satfeed.h) */
	if (!c->release_ns && !pins.info.max_age_ns)
		die(SF_EXIT_ABI, "satfeed's sf_info has no age bound (max_age_ns 0): give --release-ms");
	if (!c->release_ns)
		c->release_ns = satfeed_stale_ns(pins.info.max_age_ns);
	else
		env.release_set = true;
	for (__u32 i = 0; i < c->nr_targets; i++)
		resolve_target(&env, &pins, i);
	if (bpf_map_get_info_by_fd(pins.streams_fd, &mi, &mlen))
		die(SF_EXIT_ERROR, "cannot read sf_streams: %s", strerror(errno));

	skel = open_scheduler(&env, &pins);
	if (c->dry_run)
		start_dry_run(skel);
	else
		link = attach(skel);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("scx_satfeed: %s on %u CPUs: %u targets, up to %u reserved (%u shared), period %llu ms, headroom %u%%, perf base %u, release after %llu ms (%s)\n",
	       c->dry_run ? "dry run (nothing enforced)" : "attached",
	       c->nr_cpus, c->nr_targets, c->max_reserved, c->min_shared,
	       (unsigned long long)(c->period_ns / MS), c->headroom_pct,
	       c->perf_base ? c->perf_base : SCX_SF_PERF_ONE,
	       (unsigned long long)(c->release_ns / MS),
	       env.release_set ? "--release-ms" : "2 x the engine's age bound");
	fflush(stdout);
	while (!stop) {
		unsigned int step = env.interval_ms;

		if (env.duration) {
			double left = env.duration - elapsed;

			if (left <= 0)
				break;
			if (left * 1000 < step)
				step = left * 1000 + 1;
		}
		sleep_ms(step);
		elapsed += step / 1000.0;
		err = take(&env, skel, &snap);
		if (err) {
			fprintf(stderr, "scx_satfeed: cannot read the stats: %s\n",
				strerror(-err));
			rc = SF_EXIT_ERROR;
			break;
		}
		if (snap.exit.kind) {
			rc = report_exit(&snap.exit);
			break;
		}
		if (env.stats)
			print_stats(&env, &snap, engine_state(&env, mi.id));
	}
	bpf_link__destroy(link);
	if (!rc && !take(&env, skel, &snap) && snap.exit.kind)
		rc = report_exit(&snap.exit);
	scx_satfeed__destroy(skel);
	sf_pins_close(&pins);
	return rc;
}
