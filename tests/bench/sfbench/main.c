// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sfbench - what satfeed costs, measured side by side in one run.
 *
 * Three configurations, interleaved round by round (the order rotates each
 * round, so drift on a noisy VM spreads over all of them):
 *   none     no program on the syscall hooks
 *   empty    empty programs on the hooks of the attach mode measured
 *            (tests/bench/progs/sfbench_empty.bpf.c): the floor of that
 *            attach mode
 *   satfeed  the real engine, loaded by satfeed-loader (--attach MODE) under
 *            a private bpffs root, with the traced worker and 63 idle
 *            processes added by satfeedctl: 64 targets
 * --attach picks the mode: tp_btf (default; raw_syscalls sys_enter/sys_exit,
 * so every syscall of the machine runs a program) or fentry (fexit on the 17
 * traced syscalls' wrappers and fentry on the 7 waits, satfeed_syscalls.h, so
 * an unrelated syscall such as getppid runs none).
 *
 * Two worker processes pinned to one CPU run the measured loops on command:
 * U (never a target) and T (a target in the satfeed configuration).  Phases:
 *   u_getppid  U: getppid(), a syscall satfeed does not trace
 *   u_rw       U: write+read of one byte on a unix socketpair: traced
 *              syscalls of a process that is not a target (pid prefilter)
 *   u_epoll    U: epoll_wait(timeout 0) on a ready fd: a wait of a non-target
 *   t_pair     T: send+recv of one byte on a unix stream socketpair
 *              (sendto/recvfrom: two samples, send and recv streams)
 *   t_rw       T: write+read on the socketpair (the socket check path)
 *   t_epoll    T: epoll_wait(timeout 0) (a poll sample)
 *   u_uring    U: one io_uring SEND of one byte on the socketpair, waited
 *              for in io_uring_enter (GETEVENTS), then read(2): a ring that
 *              is not a target's (its SQE and CQE reach satfeed's io_uring
 *              programs in either attach mode, and are rejected there)
 * Each phase runs twice per configuration and round: once with BPF run-time
 * statistics off, timed by the worker's own CPU time (CLOCK_THREAD_CPUTIME_ID,
 * so being preempted on a shared machine does not count), the fastest of
 * several batches, in ns per call or per pair; and once with them on
 * (BPF_ENABLE_STATS, the switch behind kernel.bpf_stats_enabled, held by a
 * file descriptor so the kernel drops it if sfbench dies), reading
 * run_time_ns / run_cnt of every program before and after, so each program's
 * time per run is known per phase.  The accounting costs time on every
 * program run, so the timed runs never have it on.
 *
 * After the three configurations, each round runs the probes of
 * tests/bench/progs/sfbench_empty.bpf.c: the building blocks of satfeed's
 * sample path, one at a time on sys_exit, to show where its time goes
 * (tp_btf mode only: the probes are tp_btf programs).
 *
 * In fentry mode a program class (enter: the fentry programs, exit: the
 * fexit ones) that the phase's syscalls do not reach has no time per run:
 * such cells are shown as "-" and written nowhere.  Results keys of that
 * mode begin with "fentry."; tp_btf's are unprefixed, as they always were.
 *
 * A program of someone else on the same hooks makes "none" something else
 * than no tracing: such rounds are detected, flagged, and left out of the
 * medians when there are clean rounds.
 *
 * Figures are medians over rounds.  Nothing is asserted: targets are printed
 * beside the figures.  The exit status is non-zero only when a measurement
 * could not be made (a failed load, a missing or non-finite figure, satfeed
 * not counting the traced worker's calls).
 *
 * Cleanup on every path (normal exit, error, SIGINT/SIGTERM/SIGHUP): the
 * private satfeed load is unloaded, the empty programs detached, the workers
 * and idle processes killed, the statistics switch released.
 */
#include "sfbench.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: sfbench [OPTIONS]\n"
"Measure satfeed's overhead against no tracing and empty programs on the\n"
"same hooks, interleaved, and print a table.  Needs root.  tests/bench/bench.sh\n"
"(make bench) is the usual way to run it.\n"
"\n"
"  --quick           short setting (3 rounds, 1/12 of the calls)\n"
"  --rounds N        rounds of every configuration (default 7)\n"
"  --batches N       timed batches per phase; the fastest counts (default 32)\n"
"  --no-probes       skip section 5 (where satfeed's time goes; always skipped\n"
"                    in fentry mode: the probes are tp_btf programs)\n"
"  --attach MODE     tp_btf (default): satfeed and the floor on raw_syscalls\n"
"                    sys_enter/sys_exit; fentry: on the traced syscalls only\n"
"                    (fexit on 19, fentry on the 7 waits: bpf/satfeed_syscalls.h);\n"
"                    results keys of fentry mode begin with \"fentry.\"\n"
"  --scale X         multiply the calls per phase by X\n"
"  --cpu N           CPU of the measuring workers (default: the last one)\n"
"  --targets N       satfeed targets, the traced worker included (default 64)\n"
"  --understudy WHEN satfeed-loader --understudy WHEN for satfeed: auto, on or\n"
"                    off (default: the loader's default, auto)\n"
"  --no-responses    satfeed-loader --no-responses: satfeed without the response\n"
"                    stream, service time and per-connection state\n"
"  --loader PATH     satfeed-loader (default build/satfeed-loader)\n"
"  --ctl PATH        satfeedctl (default build/satfeedctl)\n"
"  --bpffs DIR       private pin root (default /sys/fs/bpf/sfbench-PID; no dots:\n"
"                    bpffs refuses them)\n"
"  --results FILE    also write every figure as 'key value' lines\n"
"  --raw FILE        and every round's figures, one line per round\n"
"  --bpftrace SCRIPT add a fourth configuration: bpftrace running SCRIPT (the\n"
"                    paper's Listing 1, tests/bench/listing1.bt) on the traced worker\n"
"  --bpftrace-bin P  the bpftrace to run (default: bpftrace from PATH)\n"
"  --bpftrace-out F  keep bpftrace's output of the last round in F\n"
"  --bpftrace-wait S seconds bpftrace may take to attach, and to stop (default\n"
"                    30; more under emulation)\n"
"  -v, --verbose     show the loader's and satfeedctl's output\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "batches", required_argument, NULL, 'B' },
		{ "no-probes", no_argument, NULL, 'P' },
		{ "scale", required_argument, NULL, 's' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "targets", required_argument, NULL, 't' },
		{ "loader", required_argument, NULL, 'L' },
		{ "ctl", required_argument, NULL, 'C' },
		{ "bpffs", required_argument, NULL, 'b' },
		{ "results", required_argument, NULL, 'o' },
		{ "raw", required_argument, NULL, 'R' },
		{ "bpftrace", required_argument, NULL, 'T' },
		{ "bpftrace-bin", required_argument, NULL, 'X' },
		{ "bpftrace-out", required_argument, NULL, 'O' },
		{ "bpftrace-wait", required_argument, NULL, 'W' },
		{ "attach", required_argument, NULL, 'a' },
		{ "understudy", required_argument, NULL, 'U' },
		{ "no-responses", no_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char foreign0[1024], foreign1[1024];
	int nforeign0, nforeign1, ncpu, opt;
	bool stats_was_on = false, rounds_set = false, scale_set = false;
	struct sigaction sa = { .sa_handler = on_signal };
	FILE *f;

	sf_prog = PROG;
	while ((opt = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (opt) {
		case 'q':
			o.quick = true;
			break;
		case 'r':
			o.rounds = atoi(optarg);
			rounds_set = true;
			if (o.rounds < 1 || o.rounds > MAX_ROUNDS) {
				msg("--rounds: 1 to %d", MAX_ROUNDS);
				return 2;
			}
			break;
		case 'B':
			o.batches = atoi(optarg);
			if (o.batches < 1 || o.batches > 1000) {
				msg("--batches: 1 to 1000");
				return 2;
			}
			break;
		case 'P':
			o.probes = false;
			break;
		case 's':
			o.scale = atof(optarg);
			scale_set = true;
			if (!(o.scale > 0 && o.scale <= 100)) {
				msg("--scale: a number above 0, at most 100");
				return 2;
			}
			break;
		case 'c':
			o.cpu = atoi(optarg);
			break;
		case 't':
			o.targets = atoi(optarg);
			if (o.targets < 1 || o.targets > MAX_TARGETS) {
				msg("--targets: 1 to %d", MAX_TARGETS);
				return 2;
			}
			break;
		case 'L':
			o.loader = optarg;
			break;
		case 'C':
			o.ctl = optarg;
			break;
		case 'b':
			if (optarg[0] != '/' ||
			    strlen(optarg) >= sizeof(o.root)) {
				msg("--bpffs: an absolute path");
				return 2;
			}
			snprintf(o.root, sizeof(o.root), "%s", optarg);
			break;
		case 'o':
			o.results = optarg;
			break;
		case 'R':
			o.raw = optarg;
			break;
		case 'T':
			o.bt_script = optarg;
			nr_cfg = NR_CFG;
			break;
		case 'X':
			o.bt_bin = optarg;
			break;
		case 'O':
			o.bt_out = optarg;
			break;
		case 'W':
			o.bt_wait = atoi(optarg);
			if (o.bt_wait < 1 || o.bt_wait > 3600) {
				msg("--bpftrace-wait: 1 to 3600 seconds");
				return 2;
			}
			break;
		case 'N':
			o.no_responses = true;
			break;
		case 'U':
			if (strcmp(optarg, "auto") && strcmp(optarg, "on") &&
			    strcmp(optarg, "off")) {
				msg("--understudy: auto, on or off, not '%s'",
				    optarg);
				return 2;
			}
			o.understudy = optarg;
			break;
		case 'a':
			if (!strcmp(optarg, "tp_btf")) {
				o.attach = AT_TP_BTF;
			} else if (!strcmp(optarg, "fentry")) {
				o.attach = AT_FENTRY;
			} else {
				msg("--attach: tp_btf or fentry, not '%s'",
				    optarg);
				return 2;
			}
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (o.bt_script && access(o.bt_script, R_OK)) {
		msg("--bpftrace %s: %s", o.bt_script, strerror(errno));
		return 1;
	}
	if (o.bt_script && !o.bt_out) {
		int fd;

		snprintf(bt_tmp, sizeof(bt_tmp), "/tmp/sfbench-bt-XXXXXX");
		fd = mkstemp(bt_tmp);
		if (fd < 0) {
			msg("cannot make a temporary file: %s", strerror(errno));
			return 1;
		}
		close(fd);
	}
	if (o.attach == AT_FENTRY)
		o.probes = false;	/* tp_btf programs, section 5 */
	if (o.quick) {
		if (!rounds_set)
			o.rounds = 3;
		if (!scale_set)
			o.scale = 1.0 / 12;
	}
	if (geteuid()) {
		msg("needs root (BPF programs, satfeed-loader)");
		return 1;
	}
	if (!o.root[0])
		snprintf(o.root, sizeof(o.root), "/sys/fs/bpf/sfbench-%d",
			 getpid());
	if (!access(o.root, F_OK)) {
		msg("%s exists: another sfbench (or a stale one) owns it", o.root);
		return 1;
	}
	if (access(o.loader, X_OK) || access(o.ctl, X_OK)) {
		msg("needs %s and %s (make all)", o.loader, o.ctl);
		return 1;
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (o.cpu < 0)
		o.cpu = ncpu - 1;
	if (o.cpu >= ncpu) {
		msg("--cpu %d: this machine has %d CPUs", o.cpu, ncpu);
		return 2;
	}
	f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	if (f) {
		stats_was_on = fgetc(f) == '1';
		fclose(f);
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);

	/* the orchestrator keeps off the measuring CPU when it can */
	if (ncpu > 1)
		pin_cpu(o.cpu == 0 ? 1 : 0);

	/* processes first (before any program is attached): 63 idle targets,
	 * the traced worker, the unrelated worker */
	idle_start();
	worker_start(&W_T);
	worker_start(&W_U);
	nr_targets = 0;
	target_pids[nr_targets++] = W_T.pid;
	for (int i = 0; i < nr_idle; i++)
		target_pids[nr_targets++] = idle_pids[i];
	worker_run(&W_T, OP_PING, 0, 0);
	worker_run(&W_U, OP_PING, 0, 0);

	empty_load();
	if (o.probes)
		probes_setup();

	nforeign0 = foreign_hooks(foreign0, sizeof(foreign0));
	if (nforeign0)
		msg("warning: other programs are attached to the syscall hooks: %s",
		    foreign0);
	{
		/* does the unrelated worker share a pid-prefilter bit with a
		 * target?  Then its traced syscalls pay a hash lookup too. */
		bool hit = false;

		for (int i = 0; i < nr_targets; i++)
			hit |= (target_pids[i] % SATFEED_PID_SLOTS) ==
			       (W_U.pid % SATFEED_PID_SLOTS);
		if (hit)
			msg("note: the unrelated worker (pid %d) shares a prefilter bit with a target",
			    W_U.pid);
	}

	for (int r = 0; r < o.rounds; r++) {
		for (int k = 0; k < nr_cfg; k++) {
			int cfg = (r + k) % nr_cfg;

			fprintf(stderr, PROG ": round %d/%d: %s\n", r + 1,
				o.rounds, cfg_name[cfg]);
			if (setup(cfg))
				die("cannot set up configuration %s",
				    cfg_name[cfg]);
			if (cfg == CFG_SATFEED) {
				long long m = satfeed_memory();

				if (m > 0)
					mem_bytes[nr_mem++] = m;
				nr_indexed = satfeed_nr_indexed();
			}
			run_config(cfg, r);
			if (teardown(cfg))
				die("cannot tear down configuration %s",
				    cfg_name[cfg]);
		}
		if (o.probes) {
			fprintf(stderr, PROG ": round %d/%d: probes\n", r + 1,
				o.rounds);
			run_probes(r);
		}
		for (int c = 0; c < nr_cfg; c++)
			if (dirty[c][r])
				msg("round %d: other programs were on the syscall hooks during '%s'",
				    r + 1, cfg_name[c]);
	}
	nforeign1 = foreign_hooks(foreign1, sizeof(foreign1));

	if (o.results) {
		res_file = fopen(o.results, "w");
		if (!res_file)
			die("%s: %s", o.results, strerror(errno));
	}
	report(foreign0, nforeign0, foreign1, nforeign1, stats_was_on);
	if (o.raw)
		write_raw();
	if (res_file)
		fclose(res_file);
	cleanup();
	if (!counted_ok || nr_bad) {
		msg("%d measurement(s) missing%s", nr_bad,
		    counted_ok ? "" : ", and satfeed did not count the traced calls");
		return 1;
	}
	return 0;
}
