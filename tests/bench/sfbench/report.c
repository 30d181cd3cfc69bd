// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report.c - the table: every section of the report, and every round's raw
 * figures.
 */
#include "sfbench.h"

static void fentry_floor_target(const char *title, int ph, const char *label)
{
	double nzf, fl = ovh_noise(CFG_EMPTY, ph, &nzf);
	double nzs, sf = ovh_noise(CFG_SATFEED, ph, &nzs);
	double d = sf - fl;
	double nz = max2(spread_of(t_ns[CFG_SATFEED][ph], CFG_SATFEED),
			 spread_of(t_ns[CFG_EMPTY][ph], CFG_EMPTY));
	double runs = MED(b_runs[CFG_SATFEED][ph][PR_ENTER], CFG_SATFEED) +
		      MED(b_runs[CFG_SATFEED][ph][PR_EXIT], CFG_SATFEED);
	double fruns = MED(b_runs[CFG_EMPTY][ph][PR_ENTER], CFG_EMPTY) +
		       MED(b_runs[CFG_EMPTY][ph][PR_EXIT], CFG_EMPTY);
	char fig[96];

	result(sf, "target.%s.satfeed_ovh_ns", phases[ph].key);
	result(fl, "target.%s.floor_ovh_ns", phases[ph].key);
	result(nz, "target.%s.spread_ns", phases[ph].key);
	result(runs, "target.%s.satfeed_runs_per_op", phases[ph].key);
	if (isfinite(nzf) && fl > nzf) {
		/* the floor's overhead is measurable: the plain ratio */
		double q = (sf) / fl;

		snprintf(fig, sizeof(fig), "timed %s (floor +%.1f ns)",
			 ratio_strp(q, 3), fl);
		printf("  %-36s %-11s %-44s %s\n", title, label, fig,
		       verdict(q <= 1.2));
		return;
	}
	snprintf(fig, sizeof(fig), "satfeed - floor %+.1f ns, spread %.1f ns",
		 d, nz);
	printf("  %-36s %-11s %-32s %s\n", title, label, fig,
	       !isfinite(nz) ? "undefined (one round: no spread)" :
	       d <= nz ? "meets (at the floor)" : "MISSES");
	printf("  %-36s (over none: floor %+.1f ns, satfeed %+.1f ns; the floor's\n"
	       "  %-36s is within the spread: no ratio.  Programs run per call:\n"
	       "  %-36s satfeed %.4f, floor %.4f, kernel accounting, all processes)\n",
	       "", fl, sf, "", "", runs, fruns);
}

/*
 * Issue 24's own measure of the unrelated syscalls: the time of a call with
 * satfeed loaded over its time with the empty programs (the floor), both
 * medians of the same interleaved rounds, where the ratios above divide the
 * overheads (over no tracing).  Timed only: the kernel's accounting has no
 * time outside the programs.
 */
static void time_over_floor(int ph, const char *label)
{
	double b = MED(t_ns[CFG_EMPTY][ph], CFG_EMPTY);
	double c = MED(t_ns[CFG_SATFEED][ph], CFG_SATFEED);
	double q = b > 0 ? c / b : NAN;

	result_opt(q, "ratio.time_over_floor.%s", phases[ph].key);
	printf("  %-36s %-11s %.1f / %.1f ns = %-7s %6s %s\n",
	       ph == P_UGETPPID ? "unrelated time <= 1.02x floor's" : "",
	       label, c, b, ratio_strp(q, 3), "",
	       isfinite(q) ? verdict(q <= 1.02) : "undefined");
}

static void targets_summary(long long mem)
{
	bool fe = o.attach == AT_FENTRY;
	double ex = MED(b_own[CFG_SATFEED][P_TPAIR][PR_EXIT], CFG_SATFEED);
	double en = bpf_med(b_own, CFG_SATFEED, P_TPAIR, PR_ENTER);
	/* the floor's runs: tp_btf, an unrelated getppid's (every run is
	 * alike); fentry, the traced pair's own (getppid runs none) */
	double fx = fe ? MED(b_own[CFG_EMPTY][P_TPAIR][PR_EXIT], CFG_EMPTY) :
			 MED(b_all[CFG_EMPTY][P_UGETPPID][PR_EXIT], CFG_EMPTY);
	double fn = fe ? bpf_med(b_own, CFG_EMPTY, P_TPAIR, PR_ENTER) :
			 MED(b_all[CFG_EMPTY][P_UGETPPID][PR_ENTER], CFG_EMPTY);
	double t1, a1, t2, a2;

	overhead_ratios(P_UGETPPID, &t1, &a1);
	overhead_ratios(P_URW, &t2, &a2);
	result(en + ex, "bpf.satfeed.traced_event.t_pair");
	result_opt(a1, "ratio.acct.u_getppid");
	result_opt(a2, "ratio.acct.u_rw");
	printf("\nTARGETS (speed and memory, %s mode): printed beside the figures, not asserted\n",
	       attach_name[o.attach]);
	printf("  %-36s %-44s %s\n", "target", "figure (median)", "");
	{
		char fig[64];

		if (fe)
			snprintf(fig, sizeof(fig), "fexit %.1f ns (no fentry runs on it)",
				 ex);
		else
			snprintf(fig, sizeof(fig), "sys_exit %.1f ns, with sys_enter %.1f ns",
				 ex, en + ex);
		printf("  %-36s %-44s %s\n", "per traced event <= 60 ns BPF time",
		       fig, verdict(ex <= 60));
	}
	printf("  %-36s (net of the accounting floor: %.1f / %.1f ns)\n", "",
	       ex - fx, en + ex - fn - fx);
	if (fe) {
		fentry_floor_target("unrelated overhead <= 1.2x floor's",
				    P_UGETPPID, "getppid");
	} else {
		printf("  %-36s getppid     timed %-7s acct %-7s %8s %s\n",
		       "unrelated overhead <= 1.2x floor's", ratio_strp(t1, 3),
		       ratio_strp(a1, 3), "",
		       isfinite(a1) ? verdict(a1 <= 1.2) : "undefined");
	}
	printf("  %-36s write+read  timed %-7s acct %-7s %8s %s\n", "",
	       ratio_strp(t2, 3), ratio_strp(a2, 3), "",
	       isfinite(a2) ? verdict(a2 <= 1.2) :
	       fe ? "undefined (floor within the spread)" : "undefined");
	printf("  %-36s (accounted as in section 1-2; the verdict uses it)\n", "");
	time_over_floor(P_UGETPPID, "getppid");
	time_over_floor(P_URW, "write+read");
	/* issue 24's budget (it was 4 MiB before ABI 6) */
	printf("  %-36s %-44s %s\n", "map memory <= 0.5 MiB at 64 targets",
	       mem_str(mem), verdict(mem <= 512 << 10));
}

/* 6. the paper's Listing-1 method (bpftrace) against satfeed and the floor */
static void bt_report(void)
{
	double q_u = NAN, nz, sf, bt, den, lo;

	printf("\n6. against the paper's method: bpftrace %s (Listing 1:\n"
	       "   raw_syscalls sys_enter/sys_exit tracepoints, pid filter, start-time hash,\n"
	       "   running sums), ns per op, statistics off, same rounds as 1-2; satfeed and\n"
	       "   the floor in %s mode\n",
	       o.bt_script, attach_name[o.attach]);
	printf("%-34s %8s %8s %8s %8s %8s %8s %9s\n", "phase", "none", "empty",
	       "satfeed", "bpftrace", "bt/none", "bt/empty", "ovh bt/sf");
	for (int ph = 0; ph < NR_PHASE; ph++) {
		double a = MED(t_ns[CFG_NONE][ph], CFG_NONE);
		double b = MED(t_ns[CFG_EMPTY][ph], CFG_EMPTY);
		double c = MED(t_ns[CFG_SATFEED][ph], CFG_SATFEED);
		double d = MED(t_ns[CFG_BPFTRACE][ph], CFG_BPFTRACE);
		/* how many times satfeed's overhead the bpftrace method's is;
		 * undefined when satfeed's measured <= 0 (noise) */
		double q = c - a > 0 ? (d - a) / (c - a) : NAN;

		result(d, "time.bpftrace.%s", phases[ph].key);
		result(d / a, "ratio.bt_none.%s", phases[ph].key);
		result(d / b, "ratio.bt_empty.%s", phases[ph].key);
		result_opt(q, "ratio.ovh_bt_sf.%s", phases[ph].key);
		if (ph == P_UGETPPID)
			q_u = q;
		printf("%-34s %8.1f %8.1f %8.1f %8.1f %7.2fx %7.2fx %9s\n",
		       phases[ph].label, a, b, c, d, d / a, d / b,
		       ratio_str(q));
	}
	printf("  bt/none, bt/empty: the bpftrace method's time over no tracing and over the\n"
	       "  floor; ovh bt/sf: its overhead over satfeed's, (bpftrace - none) / (satfeed - none)\n"
	       "  (undef when satfeed's overhead measured <= 0)\n");
	{
		double e = MED(b_all[CFG_BPFTRACE][P_UGETPPID][PR_ENTER], CFG_BPFTRACE);
		double x = MED(b_all[CFG_BPFTRACE][P_UGETPPID][PR_EXIT], CFG_BPFTRACE);
		double te = MED(b_own[CFG_BPFTRACE][P_TPAIR][PR_ENTER], CFG_BPFTRACE);
		double tx = MED(b_own[CFG_BPFTRACE][P_TPAIR][PR_EXIT], CFG_BPFTRACE);

		result(e + x, "bpf.bpftrace.sum.u_getppid.all");
		result(te + tx, "bpf.bpftrace.sum.t_pair.own");
		printf("  bpftrace's own programs (kernel accounting, enter + exit): %.1f ns per unrelated\n"
		       "  getppid, %.1f ns per traced send/recv (the perf-event tracepoint path around\n"
		       "  them is not in these figures; the timings above include it)\n",
		       e + x, te + tx);
	}
	/*
	 * The target on getppid.  Where satfeed's overhead is within the
	 * round-to-round spread of the timings (fentry: it runs no program
	 * there), the ratio would divide by noise; it is bounded instead:
	 * satfeed's overhead is at most max(its median, 0) + the spread, so
	 * bpftrace's is at least bt / that bound times satfeed's.
	 */
	sf = ovh_noise(CFG_SATFEED, P_UGETPPID, &nz);
	bt = MED(t_ns[CFG_BPFTRACE][P_UGETPPID], CFG_BPFTRACE) -
	     MED(t_ns[CFG_NONE][P_UGETPPID], CFG_NONE);
	den = max2(sf, 0) + max2(nz, SFB_RESOLUTION_NS);
	lo = isfinite(den) ? bt / den : NAN;
	/* the point ratio is undefined when satfeed's overhead measured <= 0
	 * (fentry: expected); the bound is defined from two rounds on */
	result_opt(q_u, "ratio.ovh_bt_sf.target");
	if (o.rounds >= 2) {
		result(lo, "ratio.ovh_bt_sf.target_lower");
		result(nz, "target.u_getppid.sf_none_spread_ns");
	}
	printf("  target: satfeed's overhead on an unrelated process's syscalls (getppid) at least\n");
	if (!isfinite(nz) || sf > nz) {
		printf("  3x smaller than the bpftrace method's: %s, %s\n",
		       ratio_str(q_u), isfinite(q_u) ? verdict(q_u >= 3) :
		       "undefined (satfeed's overhead measured <= 0)");
	} else {
		printf("  3x smaller than the bpftrace method's: satfeed's overhead (%+.1f ns) is within\n"
		       "  the round-to-round spread (%.1f ns; at least the table's 0.1 ns), so at most\n"
		       "  %.1f ns: bpftrace's overhead (%+.1f ns) is >= %s satfeed's, %s\n",
		       sf, nz, den, bt, ratio_strp(lo, 1),
		       !isfinite(lo) ? "undefined" :
		       lo >= 3 ? "meets" : "undecided (the spread is too large to tell)");
	}
	printf("  (spread: the larger max - min over rounds of satfeed's and no tracing's timings;\n"
	       "  %s)\n", isfinite(nz) ? "a lower bound from it is in ratio.ovh_bt_sf.target_lower" :
	       "one round has none");
	{
		/*
		 * The same from the fastest round of each configuration:
		 * on a shared or emulated machine contention only adds
		 * time, so a round's figure is the cost plus a delay >= 0.
		 * Its uncertainty: the gap to the second-fastest round.
		 */
		double n1, n2, s1, s2, b1, b2, sf_f, bt_f, nz_f, den_f, lo_f;

		fastest2(t_ns[CFG_NONE][P_UGETPPID], CFG_NONE, &n1, &n2);
		fastest2(t_ns[CFG_SATFEED][P_UGETPPID], CFG_SATFEED, &s1, &s2);
		fastest2(t_ns[CFG_BPFTRACE][P_UGETPPID], CFG_BPFTRACE, &b1,
			 &b2);
		sf_f = s1 - n1;
		bt_f = b1 - n1;
		nz_f = max2(n2 - n1, s2 - s1);
		den_f = max2(sf_f, 0) + max2(nz_f, SFB_RESOLUTION_NS);
		lo_f = isfinite(den_f) ? bt_f / den_f : NAN;
		result_opt(lo_f, "ratio.ovh_bt_sf.target_lower_fastest");
		if (!isfinite(n1))
			return;
		printf("  fastest round of each: none %.1f, satfeed %.1f, bpftrace %.1f ns, i.e.\n"
		       "  satfeed %+.1f ns, bpftrace %+.1f ns; gap to the second-fastest round %.1f ns:\n",
		       n1, s1, b1, sf_f, bt_f, nz_f);
		if (sf_f > nz_f)
			printf("  bpftrace's overhead is %s satfeed's, %s\n",
			       ratio_strp(bt_f / sf_f, 2),
			       verdict(bt_f / sf_f >= 3));
		else
			printf("  satfeed's is within it, so at most %.1f ns: bpftrace's overhead is >= %s\n"
			       "  satfeed's, %s\n", den_f, ratio_strp(lo_f, 1),
			       !isfinite(lo_f) ? "undefined" :
			       lo_f >= 3 ? "meets" : "undecided");
	}
}

void report(const char *foreign0, int nforeign0, const char *foreign1,
		   int nforeign1, bool stats_was_on)
{
	int R = o.rounds;
	struct utsname u;
	char cpu_model[128] = "unknown";
	FILE *f;
	long long mem;

	uname(&u);
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[256];

		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');

				if (p) {
					p += 1 + strspn(p + 1, " \t");
					p[strcspn(p, "\n")] = '\0';
					snprintf(cpu_model, sizeof(cpu_model),
						 "%s", p);
				}
				break;
			}
		fclose(f);
	}

	printf("\n");
	printf("satfeed overhead benchmark: %s mode, %d targets, %d rounds interleaved%s\n",
	       attach_name[o.attach], nr_targets, R,
	       o.quick ? " (--quick: short setting, figures are rough)" : "");
	if (o.attach == AT_FENTRY)
		printf("attach mode fentry: satfeed (--attach fentry) and the floor (empty programs)\n"
		       "on the same hooks, fexit on %zu syscalls and fentry on %zu waits\n"
		       "(bpf/satfeed_syscalls.h): a syscall outside them runs no program of either\n",
		       ARRAY_SIZE(fexit_hooks), ARRAY_SIZE(fentry_hooks));
	printf("machine: %s, %ld CPUs, %s; workers pinned to CPU %d\n",
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), cpu_model, o.cpu);
	printf("foreign programs on raw_syscalls sys_enter/sys_exit: %s%s\n",
	       nforeign0 ? foreign0 : "none",
	       nforeign0 ? "  (config 'none' is NOT untraced)" : "");
	if (nforeign1 != nforeign0)
		printf("  ... at the end of the run: %s\n",
		       nforeign1 ? foreign1 : "none");
	for (int c = 0; c < nr_cfg; c++)
		if (nr_clean(c) < R)
			printf("config %-7s: %d of %d rounds saw foreign programs on the hooks (%s); %s\n",
			       cfg_name[c], R - nr_clean(c), R, foreign_seen,
			       nr_clean(c) ? "its medians use the clean rounds" :
					     "no clean round: its medians use them all");
	if (stats_was_on)
		printf("note: BPF statistics were already on (someone else holds them): timed runs include the accounting\n");
	printf("Medians over rounds; nothing here is asserted.\n\n");
	printf("Timed figures: CPU time of the measuring thread (CLOCK_THREAD_CPUTIME_ID),\n"
	       "fastest of %d batches of a phase, then the median over rounds; BPF\n"
	       "run-time statistics are off while timing.\n\n",
	       o.batches);

	printf("1-2. syscall cost, ns per op (statistics off)\n");
	printf("%-34s %5s %8s %8s %8s %8s %9s %9s\n", "phase", "op", "none",
	       "empty", "satfeed", "sf/none", "ovh sf/fl", "acct");
	for (int ph = 0; ph < NR_PHASE; ph++) {
		double a = MED(t_ns[CFG_NONE][ph], CFG_NONE);
		double b = MED(t_ns[CFG_EMPTY][ph], CFG_EMPTY);
		double c = MED(t_ns[CFG_SATFEED][ph], CFG_SATFEED);
		double q, acct;

		/* ratio of the overheads over no tracing: undefined when the
		 * floor's overhead measured <= 0 (noise) */
		overhead_ratios(ph, &q, &acct);

		result(a, "time.none.%s", phases[ph].key);
		result(b, "time.empty.%s", phases[ph].key);
		result(c, "time.satfeed.%s", phases[ph].key);
		/* the overhead ratio can be undefined on a noisy machine (the
		 * floor's overhead measured <= 0 in some round): printed, but
		 * not a missing measurement */
		result_opt(q, "ratio.overhead.%s", phases[ph].key);
		printf("%-34s %5s %8.1f %8.1f %8.1f %7.2fx %9s %9s\n",
		       phases[ph].label, phases[ph].unit, a, b, c, c / a,
		       ratio_str(q), ratio_str(acct));
	}
	printf("  ovh sf/fl: satfeed's overhead over the floor's, (satfeed - none) / (empty - none),\n"
	       "  of the medians (the floor is 1.00x); acct: the same ratio from the kernel's\n"
	       "  accounting, 1 + satfeed's extra BPF time per op (section 3) / the floor's timed\n");
	if (o.attach == AT_FENTRY)
		printf("  overhead per op of the same phase.  fentry: both undef where the floor's\n"
		       "  overhead is within the round-to-round spread of the timings (max - min over\n"
		       "  rounds of none and empty): getppid runs no program at all (TARGETS below).\n");
	else
		printf("  overhead per op (getppid's per syscall, times the syscalls per op): steadier\n"
		       "  than the socket timings, which jump by a few hundred ns between rounds.\n");
	printf("\n3. BPF time per program run, ns (kernel accounting: run_time_ns / run_cnt), %s mode\n",
	       attach_name[o.attach]);
	printf("%-34s %8s %8s %9s %9s %9s %6s%s\n", "phase", "fl.enter",
	       "fl.exit", "sf.enter", "sf.exit", "sf.sum", "bg",
	       o.attach == AT_FENTRY ? "  sf.runs" : "");
	for (int ph = 0; ph < NR_PHASE; ph++) {
		double v[2][NR_PR], bg;
		char cell[2][NR_PR][16], sum[16];
		bool any = false;
		/* unrelated phases: every run of the phase (they are all
		 * rejects of one kind); traced phases: the runs caused by the
		 * target's own syscalls, background removed */
		double(*src)[NR_PHASE][NR_PR][MAX_ROUNDS] =
			phases[ph].traced ? b_own : b_all;
		const char *kind = phases[ph].traced ? "own" : "all";

		for (int c = CFG_EMPTY; c <= CFG_SATFEED; c++)
			for (int p = 0; p < NR_PR; p++) {
				char *cl = cell[c - CFG_EMPTY][p];

				v[c - CFG_EMPTY][p] = bpf_med(src, c, ph, p);
				if (!hooked(c, ph, p)) {
					/* fentry: no such program runs */
					snprintf(cl, 16, "-");
					continue;
				}
				any |= c == CFG_SATFEED;
				snprintf(cl, 16, "%.1f", v[c - CFG_EMPTY][p]);
				result(v[c - CFG_EMPTY][p], "bpf.%s.%s.%s.%s",
				       cfg_name[c], pr_name[p], phases[ph].key,
				       kind);
			}
		if (any)
			snprintf(sum, sizeof(sum), "%.1f",
				 v[1][PR_ENTER] + v[1][PR_EXIT]);
		else
			snprintf(sum, sizeof(sum), "-");
		bg = MED(b_bg[CFG_SATFEED][ph], CFG_SATFEED);
		printf("%-34s %8s %8s %9s %9s %9s %5.1f%%",
		       phases[ph].label, cell[0][PR_ENTER], cell[0][PR_EXIT],
		       cell[1][PR_ENTER], cell[1][PR_EXIT], sum, 100 * bg);
		if (o.attach == AT_FENTRY) {
			double runs = 0;

			for (int c = CFG_EMPTY; c <= CFG_SATFEED; c++)
				for (int p = 0; p < NR_PR; p++)
					result(MED(b_runs[c][ph][p], c),
					       "runs.%s.%s.%s", cfg_name[c],
					       pr_name[p], phases[ph].key);
			for (int p = 0; p < NR_PR; p++)
				runs += MED(b_runs[CFG_SATFEED][ph][p],
					    CFG_SATFEED);
			printf(" %8.3f", runs);
		}
		printf("\n");
	}
	printf("  fl = empty programs (the floor: includes the accounting itself); sf = satfeed;\n");
	printf("  sum = enter + exit for one syscall of the phase.  Unrelated phases: all runs\n");
	printf("  during the phase; traced phases: runs of the target's own syscalls, with the\n");
	if (o.attach == AT_FENTRY)
		printf("  background (bg: share of other runs) charged at the cost of the unrelated\n"
		       "  write+read (exit) and epoll_wait (enter) phases.  fentry: enter = the fentry\n"
		       "  programs (the 7 waits), exit = the fexit programs (17 syscalls); '-': the\n"
		       "  phase's syscalls run none of them; sf.runs: satfeed program runs per op, any\n"
		       "  process's (the few of other processes included).\n");
	else
		printf("  background (bg: share of other runs) charged at the getppid-phase cost.\n");
	printf("\n4. map memory at %d targets (%d in sf_pid_index; memlock from fdinfo)\n",
	       nr_targets, nr_indexed);
	result(nr_indexed == nr_targets ? nr_indexed : NAN, "mem.targets");
	mem = nr_mem ? (long long)median_of(mem_bytes, nr_mem, -1) : -1;
	for (int i = 0; i < nr_maps; i++)
		printf("  %-16s %-13s entries %5u  value %5u B  %9lld B\n",
		       maps[i].name,
		       libbpf_bpf_map_type_str(maps[i].type) ?: "?",
		       maps[i].max_entries, maps[i].value_size,
		       maps[i].memlock);
	result(nr_mem ? mem : NAN, "mem.total_bytes");
	printf("  total %lld B = %.2f MiB\n", mem, mem / 1048576.0);
	printf("  Arrays and hashes are preallocated: the same at 0 and at %d targets.  Task\n"
	       "  storage elements (one per thread of a target inside a wait) are charged to\n"
	       "  the task and not included.\n", SATFEED_MAX_TARGETS);
	if (o.probes) {
		double e = MED(pb_ns[PB_EMPTY], -1);
		double g = MED(pb_ns[PB_GATE], -1);
		double sx = MED(b_own[CFG_SATFEED][P_TPAIR][PR_EXIT], CFG_SATFEED);
		double sw = MED(b_own[CFG_SATFEED][P_TRW][PR_EXIT], CFG_SATFEED);
		double su = MED(b_own[CFG_SATFEED][P_TUDP][PR_EXIT], CFG_SATFEED);
		double st = MED(b_own[CFG_SATFEED][P_TTCP][PR_EXIT], CFG_SATFEED);

		printf("\n5. where the time goes: probes (tests/bench/progs/sfbench_empty.bpf.c) alone on sys_exit,\n"
		       "   the traced worker's getppid loop, ns per run of its own syscalls\n");
		printf("  %-40s %8s %8s\n", "probe", "ns/run", "+gate");
		for (int pb = 0; pb < NR_PB; pb++) {
			double v = MED(pb_ns[pb], -1);

			result(v, "probe.%s", pb_key[pb]);
			if (pb <= PB_GATE)
				printf("  %-40s %8.1f %8s\n", pb_label[pb], v,
				       pb == PB_GATE ? "-" : "");
			else
				printf("  %-40s %8.1f %+8.1f\n", pb_label[pb],
				       v, v - g);
		}
		printf("  %-40s %8.1f %+8.1f\n", "satfeed sf_sys_exit, traced send/recv",
		       sx, sx - g);
		printf("  %-40s %8.1f %+8.1f\n", "satfeed sf_sys_exit, traced write/read",
		       sw, sw - g);
		printf("  %-40s %8.1f %+8.1f\n", "satfeed sf_sys_exit, traced UDP",
		       su, su - g);
		printf("  %-40s %8.1f %+8.1f\n", "satfeed sf_sys_exit, TCP req+resp",
		       st, st - g);
		printf("  +gate: minus the gate probe, i.e. the block's own price (the gate is\n"
		       "  %.1f ns over the empty program)\n", g - e);
	} else if (o.attach == AT_FENTRY) {
		printf("\n5. where the time goes: skipped in fentry mode (the probes are tp_btf\n"
		       "   programs on sys_exit; a tp_btf run has them)\n");
	}
	targets_summary(mem);
	if (nr_cfg > CFG_BPFTRACE)
		bt_report();
	if (!counted_ok)
		printf("\nERROR: satfeed did not count the traced worker's calls: the satfeed figures are not valid\n");
}

/* every round's figures: what the medians were taken of */
void write_raw(void)
{
	FILE *f = fopen(o.raw, "w");

	if (!f) {
		msg("%s: %s", o.raw, strerror(errno));
		return;
	}
	fprintf(f, "# attach mode %s\n", attach_name[o.attach]);
	fprintf(f, "# config phase round foreign ns_per_op bpf_enter_ns bpf_exit_ns\n");
	for (int c = 0; c < nr_cfg; c++)
		for (int ph = 0; ph < NR_PHASE; ph++)
			for (int r = 0; r < o.rounds; r++) {
				double(*src)[NR_PHASE][NR_PR][MAX_ROUNDS] =
					phases[ph].traced ? b_own : b_all;

				fprintf(f, "%s %s %d %d %.1f %.1f %.1f\n",
					cfg_name[c], phases[ph].key, r + 1,
					dirty[c][r], t_ns[c][ph][r],
					c == CFG_NONE ? NAN : src[c][ph][PR_ENTER][r],
					c == CFG_NONE ? NAN : src[c][ph][PR_EXIT][r]);
			}
	if (o.probes)
		for (int pb = 0; pb < NR_PB; pb++)
			for (int r = 0; r < o.rounds; r++)
				fprintf(f, "probe %s %d 0 nan nan %.1f\n",
					pb_key[pb], r + 1, pb_ns[pb][r]);
	fclose(f);
}
