// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stats.c - the figures: medians over clean rounds, spreads, overhead ratios
 * and the results file.
 */
#include "sfbench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int nr_clean(int cfg)
{
	int n = 0;

	for (int r = 0; r < o.rounds; r++)
		n += !dirty[cfg][r];
	return n;
}

/* Median over the rounds of configuration cfg that had no foreign program
 * on the hooks (all of them if none was clean); cfg < 0: of v[0..n). */
double median_of(const double *v, int n, int cfg)
{
	double s[MAX_ROUNDS];
	int m = 0, want = 0;
	bool filter = cfg >= 0 && nr_clean(cfg) > 0;

	for (int i = 0; i < n; i++) {
		if (filter && dirty[cfg][i])
			continue;
		want++;
		if (isfinite(v[i]))
			s[m++] = v[i];
	}
	if (m < want || !m)
		return NAN;	/* a missing figure spoils the median */
	qsort(s, m, sizeof(s[0]), cmp_double);
	return m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
}

FILE *res_file;
int nr_bad;

/* key prefix of the mode: none for tp_btf (the keys it always had) */
static const char *key_prefix(void)
{
	return o.attach == AT_FENTRY ? "fentry." : "";
}

static void vresult(bool required, double v, const char *fmt, va_list ap)
{
	char key[128];

	vsnprintf(key, sizeof(key), fmt, ap);
	if (required && !isfinite(v)) {
		msg("measurement missing: %s%s", key_prefix(), key);
		nr_bad++;
	}
	if (res_file)
		fprintf(res_file, "%s%s %.3f\n", key_prefix(), key, v);
}

/* A figure for the results file; non-finite ones are counted as missing. */
double result(double v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
double result(double v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vresult(true, v, fmt, ap);
	va_end(ap);
	return v;
}

/* A derived figure that may be undefined on a noisy machine: written, but
 * never counted as missing. */
void result_opt(double v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void result_opt(double v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vresult(false, v, fmt, ap);
	va_end(ap);
}

/* "1.23x" (prec 2), or "undef" when the floor's overhead measured <= 0 */
const char *ratio_strp(double q, int prec)
{
	static char buf[4][16];
	static int i;

	i = (i + 1) % 4;
	if (isfinite(q))
		snprintf(buf[i], sizeof(buf[i]), "%.*fx", prec, q);
	else
		snprintf(buf[i], sizeof(buf[i]), "undef");
	return buf[i];
}

const char *ratio_str(double q)
{
	return ratio_strp(q, 2);
}

const char *verdict(bool ok)
{
	return ok ? "meets" : "MISSES";
}

/* the larger / smaller of two figures, NAN if either is (no libm) */
double max2(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

static double min2(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

/* max - min over the rounds median_of() uses for cfg; NAN with fewer than
 * two of them or a missing figure */
double spread_of(const double *v, int cfg)
{
	bool filter = nr_clean(cfg) > 0;
	double lo = INFINITY, hi = -INFINITY;
	int m = 0;

	for (int i = 0; i < o.rounds; i++) {
		if (filter && dirty[cfg][i])
			continue;
		if (!isfinite(v[i]))
			return NAN;
		lo = min2(lo, v[i]);
		hi = max2(hi, v[i]);
		m++;
	}
	return m >= 2 ? hi - lo : NAN;
}

/* the fastest and the second-fastest of the rounds median_of() uses for
 * cfg (NAN where there are not two) */
void fastest2(const double *v, int cfg, double *f1, double *f2)
{
	bool filter = nr_clean(cfg) > 0;

	*f1 = *f2 = INFINITY;
	for (int i = 0; i < o.rounds; i++) {
		if (filter && dirty[cfg][i])
			continue;
		if (!isfinite(v[i])) {
			*f1 = *f2 = NAN;
			return;
		}
		if (v[i] < *f1) {
			*f2 = *f1;
			*f1 = v[i];
		} else if (v[i] < *f2) {
			*f2 = v[i];
		}
	}
	if (!isfinite(*f2))
		*f1 = *f2 = NAN;
}

/*
 * The timed overhead of cfg over no tracing in phase ph (difference of the
 * medians), and in *noise the spread it is read against: the larger
 * round-to-round spread of the two configurations' timings (NAN with one
 * round).  An overhead below the noise is not told apart from zero.
 */
double ovh_noise(int cfg, int ph, double *noise)
{
	double s1 = spread_of(t_ns[cfg][ph], cfg);
	double s0 = spread_of(t_ns[CFG_NONE][ph], CFG_NONE);

	*noise = max2(s0, s1);
	return MED(t_ns[cfg][ph], cfg) - MED(t_ns[CFG_NONE][ph], CFG_NONE);
}

/* median BPF time per run of a class; 0 where the phase runs none of them
 * (fentry mode), so that sums over classes stay per syscall */
double bpf_med(double (*src)[NR_PHASE][NR_PR][MAX_ROUNDS], int cfg,
		      int ph, int p)
{
	return hooked(cfg, ph, p) ? MED(src[cfg][ph][p], cfg) : 0;
}

/*
 * A phase's overhead ratio (satfeed over the floor, both over no tracing),
 * from the timings, and estimated from the accounting: 1 + the extra program
 * time satfeed spends per op / the floor's overhead per op.
 * tp_btf: the floor's overhead per syscall is the same for every syscall
 * (the empty programs do nothing), so it is taken from the getppid phase,
 * whose timings are the least noisy, times the syscalls per op.
 * fentry: the floor differs per phase (getppid has none), so it is the
 * phase's own, and the ratios are undefined where it is within the
 * round-to-round spread of the timings: never divided by noise.
 */
void overhead_ratios(int ph, double *timed, double *acct)
{
	double a = MED(t_ns[CFG_NONE][ph], CFG_NONE);
	double b = MED(t_ns[CFG_EMPTY][ph], CFG_EMPTY);
	double c = MED(t_ns[CFG_SATFEED][ph], CFG_SATFEED);
	double floor1 = MED(t_ns[CFG_EMPTY][P_UGETPPID], CFG_EMPTY) -
			MED(t_ns[CFG_NONE][P_UGETPPID], CFG_NONE);
	double(*src)[NR_PHASE][NR_PR][MAX_ROUNDS] =
		phases[ph].traced ? b_own : b_all;
	double extra = 0;

	for (int p = 0; p < NR_PR; p++)
		extra += bpf_med(src, CFG_SATFEED, ph, p) -
			 bpf_med(src, CFG_EMPTY, ph, p);
	extra *= phases[ph].sys_per_op;
	if (o.attach == AT_FENTRY) {
		double nz, fl = ovh_noise(CFG_EMPTY, ph, &nz);
		bool above = isfinite(nz) && fl > nz;

		*timed = above ? (c - a) / fl : NAN;
		*acct = above ? 1 + extra / fl : NAN;
		return;
	}
	*timed = b > a ? (c - a) / (b - a) : NAN;
	*acct = floor1 > 0 ? 1 + extra / (floor1 * phases[ph].sys_per_op) : NAN;
}

const char *mem_str(long long mem)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%.2f MiB (%lld B)", mem / 1048576.0, mem);
	return buf;
}

/*
 * fentry mode, "unrelated overhead <= 1.2x the floor's" for getppid: neither
 * the floor nor satfeed runs a program there, so both overheads are zero
 * up to noise and their ratio is noise over noise.  Judged instead by
 * satfeed - floor against the round-to-round spread, with the program runs
 * per call the kernel counted beside it.
 */
