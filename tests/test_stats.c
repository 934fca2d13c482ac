/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/qual/stats.c on synthetic samples: equal distributions
 * are no change, a 30 % shift is a regression (either direction of
 * "better"), wide samples are inconclusive with the repeats that would
 * resolve them, n=1 is inconclusive unless the tolerance is absolute, a
 * single new value is judged against a baseline's noise, the verdict is
 * reproducible, Mann-Whitney's exact and approximate p-values, bad samples;
 * the stopping rule of adaptive measurements: a steady series stops at its
 * floor, a noisy one at its ceiling saying it did not converge.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include "qual/stats.h"
#include "check_main.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct rq_judgement j;
static char err[200];

static int judge(const double *b, size_t nb, const double *a, size_t na, int dir, double tol, bool abs_)
{
	struct rq_judge_opts o;

	rq_judge_opts_init(&o);
	o.dir = dir;
	o.tol_pct = tol;
	o.absolute = abs_;
	return rq_change_judge(b, nb, a, na, &o, &j, err, sizeof(err));
}

/* About +-2 % around 100, in no particular order. */
static const double tight_b[] = { 98.1, 100.4, 101.9, 99.2, 100.9, 99.7, 101.2 };
static const double tight_a[] = { 99.6, 101.5, 98.4, 100.2, 99.1, 101.8, 100.6 };

START_TEST(equal_is_no_change)
{
	ck_assert_int_eq(judge(tight_b, N(tight_b), tight_a, N(tight_a), 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_SAME);
	ck_assert(fabs(j.change_pct) < 1);
	ck_assert(j.lo_pct < 0 && j.hi_pct > 0);	/* the interval holds 0 */
	ck_assert(j.half_pct < 5);
	ck_assert(j.p_value > 0.2);
	ck_assert_str_eq(rq_outcome_name(j.outcome), "no change");
}
END_TEST

START_TEST(shifted_is_regression)
{
	double a[N(tight_a)], lat[N(tight_a)];

	for (size_t i = 0; i < N(a); i++) {
		a[i] = tight_a[i] * 0.7;	/* bandwidth 30 % lower */
		lat[i] = tight_a[i] * 1.3;	/* latency 30 % higher */
	}
	ck_assert_int_eq(judge(tight_b, N(tight_b), a, N(a), 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_WORSE);
	ck_assert(j.change_pct < -25 && j.change_pct > -35);
	ck_assert(j.hi_pct < -5);		/* the whole interval beyond the tolerance */
	ck_assert(j.p_value < 0.01);
	/* The same move is an improvement when lower is better. */
	ck_assert_int_eq(judge(tight_b, N(tight_b), a, N(a), -1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_BETTER);
	ck_assert_int_eq(judge(tight_b, N(tight_b), lat, N(lat), -1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_WORSE);
	ck_assert_int_eq(judge(tight_b, N(tight_b), lat, N(lat), 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_BETTER);
}
END_TEST

START_TEST(small_real_shift_within_tolerance)
{
	double a[N(tight_a)];

	for (size_t i = 0; i < N(a); i++)
		a[i] = tight_a[i] * 0.97;	/* 3 %: real, but inside 5 % */
	ck_assert_int_eq(judge(tight_b, N(tight_b), a, N(a), 1, 5, false), 0);
	ck_assert_int_ne(j.outcome, RQ_OUT_WORSE);
}
END_TEST

/* TCG bandwidth as seen here: 0.023 to 0.154 Gb/s within one side. */
static const double wide_b[] = { 0.023, 0.154, 0.081 };
static const double wide_a[] = { 0.051, 0.031, 0.140 };

START_TEST(wide_is_inconclusive)
{
	ck_assert_int_eq(judge(wide_b, N(wide_b), wide_a, N(wide_a), 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_UNSURE);
	ck_assert(j.half_pct > 50);
	ck_assert_uint_gt(j.need_n, 3);
	ck_assert_uint_le(j.need_n, RQ_STATS_MAX_NEED);
	/* A 40 % median drop in that noise is still not a regression. */
	double a[] = { 0.0138, 0.0924, 0.0486 };

	ck_assert_int_eq(judge(wide_b, N(wide_b), a, N(a), 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_UNSURE);
	ck_assert(j.change_pct < -35);
}
END_TEST

START_TEST(need_n_shrinks_the_interval)
{
	/* The estimate says n (2h/tol)^2: more noise, more repeats. */
	ck_assert_int_eq(judge(tight_b, N(tight_b), tight_a, N(tight_a), 1, 1, false), 0);
	unsigned tight = j.need_n;

	ck_assert_int_eq(judge(wide_b, N(wide_b), wide_a, N(wide_a), 1, 1, false), 0);
	ck_assert_uint_gt(j.need_n, tight);
	ck_assert(fabs((double)j.need_n - fmin(RQ_STATS_MAX_NEED,
						 ceil(3 * pow(2 * j.half_pct / 1, 2)))) < 1e-9);
}
END_TEST

START_TEST(n1_inconclusive_unless_absolute)
{
	double b = 100, a = 70;

	ck_assert_int_eq(judge(&b, 1, &a, 1, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_UNSURE);
	ck_assert(isnan(j.half_pct));
	ck_assert(fabs(j.change_pct + 30) < 1e-9);
	ck_assert_int_eq(judge(&b, 1, &a, 1, 1, 5, true), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_WORSE);
	a = 105;
	ck_assert_int_eq(judge(&b, 1, &a, 1, 1, 5, true), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_SAME);	/* exactly the tolerance is within it */
	a = 96;
	ck_assert_int_eq(judge(&b, 1, &a, 1, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_UNSURE);
}
END_TEST

START_TEST(one_value_against_a_baseline)
{
	double a = 70, same = 100.5;

	ck_assert_int_eq(judge(tight_b, N(tight_b), &a, 1, 1, 5, false), 0);
	ck_assert(j.borrowed);
	ck_assert_int_eq(j.outcome, RQ_OUT_WORSE);
	ck_assert_int_eq(judge(tight_b, N(tight_b), &same, 1, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_SAME);
	/* A noisy baseline cannot condemn one value that is in its range. */
	double lowish = 0.05;

	ck_assert_int_eq(judge(wide_b, N(wide_b), &lowish, 1, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_UNSURE);
}
END_TEST

START_TEST(reproducible)
{
	struct rq_judgement first;

	ck_assert_int_eq(judge(wide_b, N(wide_b), wide_a, N(wide_a), 1, 5, false), 0);
	first = j;
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(judge(wide_b, N(wide_b), wide_a, N(wide_a), 1, 5, false), 0);
		ck_assert(j.lo_pct == first.lo_pct && j.hi_pct == first.hi_pct);
		ck_assert_int_eq(j.outcome, first.outcome);
	}
}
END_TEST

START_TEST(mann_whitney)
{
	double x[] = { 1, 2, 3 }, y[] = { 4, 5, 6 };

	/* Exact: 2 of the 20 orderings are as extreme: p = 0.1 at n=3 a side. */
	ck_assert(fabs(rq_mann_whitney_p(x, 3, y, 3) - 0.1) < 1e-12);
	ck_assert(fabs(rq_mann_whitney_p(y, 3, x, 3) - 0.1) < 1e-12);
	double a[] = { 1, 4, 2, 5 }, b[] = { 3, 6, 7 };

	/* U(a) = 2 of 12; P(U <= 2) = 4/35, two-sided 8/35. */
	ck_assert(fabs(rq_mann_whitney_p(a, 4, b, 3) - 8.0 / 35) < 1e-12);
	/* Ties: the normal approximation, still symmetric and in [0, 1]. */
	double t1[] = { 1, 1, 2, 2, 3 }, t2[] = { 1, 2, 2, 3, 3 };
	double p = rq_mann_whitney_p(t1, 5, t2, 5);

	ck_assert(p > 0.3 && p <= 1);
	ck_assert(fabs(p - rq_mann_whitney_p(t2, 5, t1, 5)) < 1e-12);
	double big1[20], big2[20];

	for (int i = 0; i < 20; i++) {
		big1[i] = i;
		big2[i] = i + 20.5;
	}
	ck_assert(rq_mann_whitney_p(big1, 20, big2, 20) < 1e-6);
}
END_TEST

START_TEST(rank_test_gates_small_samples)
{
	/* Three values a side, all 45 % lower: beyond any tolerance, but a
	 * 1-in-20 ordering: not a regression at 95 %, until n=4. */
	double b[] = { 1.0, 1.2, 0.8, 1.1 }, a[] = { 0.5, 0.55, 0.6, 0.52 };

	ck_assert_int_eq(judge(b, 3, a, 3, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_UNSURE);
	ck_assert(j.hi_pct < -5);
	ck_assert(fabs(j.p_value - 0.1) < 1e-12);
	ck_assert_uint_eq(j.decide_n, 4);
	ck_assert_int_eq(judge(b, 4, a, 4, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_WORSE);
	ck_assert_uint_eq(rq_mann_whitney_min_n(0.05), 4);	/* 2/70 */
	ck_assert_uint_eq(rq_mann_whitney_min_n(0.1), 4);	/* 2/20 is not below 0.1 */
	ck_assert_uint_eq(rq_mann_whitney_min_n(0.05 / 8), 6);	/* 2/924 */
}
END_TEST

START_TEST(outliers)
{
	/* A matrix of pairs that agree: one 10 % lower is out, 3 % is not. */
	double m[] = { 42, 42.3, 41.8, 42.1, 41.9, 37.8 };
	double z;

	ck_assert(rq_outlier_worse(m, 6, 37.8, 1, 5, &z));
	ck_assert(z > 3.5);
	ck_assert(!rq_outlier_worse(m, 6, 40.8, 1, 5, NULL));
	ck_assert(!rq_outlier_worse(m, 6, 46.2, 1, 5, NULL));	/* faster is not slow */
	ck_assert(rq_outlier_worse(m, 6, 46.2, -1, 5, NULL));	/* ... unless lower is better */
	/* A noisy matrix (TCG): half the median is within its noise. */
	double t[] = { 0.08, 0.03, 0.06, 0.1, 0.025, 0.045 };

	ck_assert(!rq_outlier_worse(t, 6, 0.025, 1, 5, NULL));
	/* All equal but one: MAD 0, beyond the tolerance is enough. */
	double e[] = { 42, 42, 42, 4.2 };

	ck_assert(rq_outlier_worse(e, 4, 4.2, 1, 5, &z) && isinf(z));
	ck_assert(!rq_outlier_worse(e, 2, 4.2, 1, 5, NULL));	/* too few to tell */
}
END_TEST

START_TEST(bad_samples)
{
	double nan_[] = { 1, NAN, 3 }, inf_[] = { 1, INFINITY }, neg[] = { 2, -1, 3 }, ok[] = { 1, 2 };

	ck_assert_int_eq(judge(ok, 2, nan_, 3, 1, 5, false), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "after: sample 2 of 3 is not a finite number"));
	ck_assert_int_eq(judge(inf_, 2, ok, 2, 1, 5, false), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "before: sample 2 of 2"));
	ck_assert_int_eq(judge(ok, 2, neg, 3, 1, 5, false), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "sample 2 of 3 is -1: a rate or a time cannot be negative"));

	struct rq_judge_opts o;

	rq_judge_opts_init(&o);
	o.confidence = 0.9995;
	ck_assert_int_eq(rq_change_judge(ok, 2, ok, 2, &o, &j, err, sizeof(err)), -EINVAL);
	o.confidence = 0.5;
	ck_assert_int_eq(rq_change_judge(ok, 2, ok, 2, &o, &j, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(rq_change_judge(ok, 0, ok, 2, &o, &j, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(zero_before)
{
	double z[] = { 0, 0 }, a[] = { 1, 2 };

	ck_assert_int_eq(judge(z, 2, z, 2, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_SAME);
	ck_assert_int_eq(judge(z, 2, a, 2, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_UNSURE);
	ck_assert(isnan(j.change_pct));
}
END_TEST

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

START_TEST(median_by_selection)
{
	struct rq_rng r;
	double v[41], s[41];

	rq_rng_seed(&r, 7);
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + rq_rng_below(&r, 41);

		for (size_t i = 0; i < n; i++)
			v[i] = s[i] = (double)rq_rng_below(&r, 10);	/* many ties */
		qsort(s, n, sizeof(*s), dcmp);
		ck_assert(rq_stats_median(v, n) == (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2));
	}
	/* A large sample (thinned for the bootstrap) is judged, and quickly. */
	static double big_b[3000], big_a[3000];

	for (int i = 0; i < 3000; i++) {
		big_b[i] = 100 + (double)rq_rng_below(&r, 1000) / 100;
		big_a[i] = 70 + (double)rq_rng_below(&r, 1000) / 100;
	}
	ck_assert_int_eq(judge(big_b, 3000, big_a, 3000, 1, 5, false), 0);
	ck_assert_int_eq(j.outcome, RQ_OUT_WORSE);
}
END_TEST

START_TEST(rng_is_uniform_enough)
{
	struct rq_rng r;
	unsigned c[7] = { 0 };

	rq_rng_seed(&r, 1);
	for (int i = 0; i < 70000; i++)
		c[rq_rng_below(&r, 7)]++;
	for (int i = 0; i < 7; i++)
		ck_assert(c[i] > 9500 && c[i] < 10500);
}
END_TEST

START_TEST(t_quantiles)
{
	ck_assert(fabs(rq_t975(1) - 12.706) < 1e-3);
	ck_assert(fabs(rq_t975(4) - 2.776) < 1e-3);
	ck_assert(fabs(rq_t975(30) - 2.042) < 1e-3);
	/* beyond the table: the expansion joins it and falls towards z */
	ck_assert(fabs(rq_t975(31) - 2.0395) < 1e-3);
	ck_assert(fabs(rq_t975(120) - 1.9799) < 1e-3);
	ck_assert(fabs(rq_t975(100000) - 1.96) < 1e-3);
	for (unsigned df = 1; df < 200; df++)
		ck_assert(rq_t975(df + 1) < rq_t975(df));
}
END_TEST

START_TEST(median_interval)
{
	double v[100], lo, hi;

	/* 1..100 shuffled: ranks 40 and 61 (the exact binomial's for n=100) */
	for (int i = 0; i < 100; i++)
		v[i] = (double)((i * 37) % 100 + 1);
	double pct = rq_ci95_median_pct(v, 100, &lo, &hi);

	ck_assert(lo == 40 && hi == 61);
	ck_assert(fabs(pct - 10.5 / 50.5 * 100) < 1e-9);
	/* the input is left as it was */
	ck_assert(v[1] == 38);
	/* below 6 samples no interval reaches 95 % */
	ck_assert(isnan(rq_ci95_median_pct(v, 5, &lo, &hi)) && isnan(lo));
	ck_assert(!isnan(rq_ci95_median_pct(v, 6, NULL, NULL)));
}
END_TEST

START_TEST(ratio_interval)
{
	const double w[] = { 10, 12, 8, 10 }, t[] = { 1, 1, 1, 1 };
	const double w2[] = { 10, 20, 5 }, t2[] = { 1, 2, 0.5 };

	/* rate 10; residuals 0 2 -2 0: se sqrt(8/3/4), times t(3) 3.182 */
	ck_assert(fabs(rq_ci95_ratio_pct(w, t, 4) - 3.182 * sqrt(8.0 / 12) / 10 * 100) < 1e-6);
	/* one rate in batches of any length: no noise at all */
	ck_assert(fabs(rq_ci95_ratio_pct(w2, t2, 3)) < 1e-12);
	ck_assert(isnan(rq_ci95_ratio_pct(w, t, 1)));
}
END_TEST

/*
 * A measurement loop as the kinds run it: one sample at a time, 1 ms
 * each, asking the rule after every one.  Returns the samples taken.
 */
static uint64_t run_lat(struct rq_stop *st, double (*gen)(struct rq_rng *r), double *v, uint64_t cap)
{
	struct rq_rng r;
	uint64_t n = 0;

	rq_rng_seed(&r, 7);
	while (n < cap) {
		v[n] = gen(&r);
		n++;
		if (rq_stop_median(st, v, n, (double)n * 0.001))
			break;
	}
	return n;
}

static double steady(struct rq_rng *r)
{
	return 100 + (double)rq_rng_below(r, 1000) / 1000.0;	/* 100..101 us */
}

static double wide(struct rq_rng *r)
{
	/* 1..1000 us: the median's interval is +-1.96/sqrt(n), 2 % at n = 9600 */
	return 1 + (double)rq_rng_below(r, 999000) / 1000.0;
}

START_TEST(steady_stops_at_the_floor)
{
	static double v[100000];
	struct rq_stop st;

	rq_stop_init(&st, 2, 200, 0, 10);
	ck_assert_uint_eq(run_lat(&st, steady, v, 100000), 200);
	ck_assert_int_eq(st.state, RQ_STOP_CONVERGED);
	ck_assert_str_eq(rq_stop_name(st.state), "converged");
	ck_assert(st.half_pct <= 2 && st.half_pct > 0);
	/* the floor holds although the interval was tight long before */
	ck_assert(rq_ci95_median_pct(v, 50, NULL, NULL) < 2);
}
END_TEST

START_TEST(noisy_runs_to_max_time)
{
	static double v[100000];
	struct rq_stop st;

	rq_stop_init(&st, 2, 200, 0, 1.5);
	ck_assert_uint_eq(run_lat(&st, wide, v, 100000), 1500);
	ck_assert_int_eq(st.state, RQ_STOP_MAX_TIME);
	ck_assert_str_eq(rq_stop_name(st.state), "max_time");
	/* ... and says how far it got: the interval at the end, not converged */
	ck_assert(st.half_pct > 2);
	ck_assert(fabs(st.half_pct - rq_ci95_median_pct(v, 1500, NULL, NULL)) < 1e-9);
	/* the count ceiling, when it comes first */
	rq_stop_init(&st, 2, 200, 700, 1.5);
	ck_assert_uint_eq(run_lat(&st, wide, v, 100000), 700);
	ck_assert_int_eq(st.state, RQ_STOP_MAX_ITERS);
	ck_assert(st.half_pct > 2);
}
END_TEST

START_TEST(checks_thin_out)
{
	static double v[100000];
	struct rq_stop st;
	unsigned checks = 0;
	uint64_t last = 0;
	struct rq_rng r;

	rq_rng_seed(&r, 3);
	rq_stop_init(&st, 0.01, 100, 0, 0);
	for (uint64_t n = 1; n <= 100000; n++) {
		v[n - 1] = wide(&r);
		ck_assert(!rq_stop_median(&st, v, n, 0));
		if (st.checked_n != last) {
			checks++;
			last = st.checked_n;
		}
	}
	/* at 100, then every sixteenth: about 16 ln(1000) checks, not 100000 */
	ck_assert_uint_ge(checks, 100);
	ck_assert_uint_le(checks, 160);
}
END_TEST

/* Batches of a stream, 50 ms each, as the bandwidth kind closes them. */
static uint64_t run_bw(struct rq_stop *st, double spread, double *w, double *t, uint64_t cap)
{
	struct rq_rng r;
	uint64_t n = 0;

	rq_rng_seed(&r, 11);
	while (n < cap) {
		t[n] = 0.05;
		w[n] = 1000 * (1 + spread * ((double)rq_rng_below(&r, 2001) / 1000.0 - 1));
		n++;
		if (rq_stop_ratio(st, w, t, n, (double)n * 0.05))
			break;
	}
	return n;
}

START_TEST(stream_batches)
{
	double w[1000], t[1000];
	struct rq_stop st;

	/* +-0.5 %: converged at the floor of 5 batches */
	rq_stop_init(&st, 2, 5, 0, 3);
	ck_assert_uint_eq(run_bw(&st, 0.005, w, t, 1000), 5);
	ck_assert_int_eq(st.state, RQ_STOP_CONVERGED);
	/* +-60 %: 3 s of 50 ms batches and still wider than 2 % */
	rq_stop_init(&st, 2, 5, 0, 3);
	ck_assert_uint_eq(run_bw(&st, 0.6, w, t, 1000), 60);
	ck_assert_int_eq(st.state, RQ_STOP_MAX_TIME);
	ck_assert(st.half_pct > 2);
	/* +-20 %: somewhere between, within tolerance when it stops */
	rq_stop_init(&st, 5, 5, 0, 30);
	uint64_t n = run_bw(&st, 0.2, w, t, 1000);

	ck_assert_uint_gt(n, 5);
	ck_assert_uint_lt(n, 600);
	ck_assert_int_eq(st.state, RQ_STOP_CONVERGED);
	ck_assert(st.half_pct <= 5);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	(void)s;
	tcase_add_test(tc, equal_is_no_change);
	tcase_add_test(tc, shifted_is_regression);
	tcase_add_test(tc, small_real_shift_within_tolerance);
	tcase_add_test(tc, wide_is_inconclusive);
	tcase_add_test(tc, need_n_shrinks_the_interval);
	tcase_add_test(tc, n1_inconclusive_unless_absolute);
	tcase_add_test(tc, one_value_against_a_baseline);
	tcase_add_test(tc, reproducible);
	tcase_add_test(tc, mann_whitney);
	tcase_add_test(tc, rank_test_gates_small_samples);
	tcase_add_test(tc, outliers);
	tcase_add_test(tc, bad_samples);
	tcase_add_test(tc, zero_before);
	tcase_add_test(tc, median_by_selection);
	tcase_add_test(tc, rng_is_uniform_enough);
	tcase_add_test(tc, t_quantiles);
	tcase_add_test(tc, median_interval);
	tcase_add_test(tc, ratio_interval);
	tcase_add_test(tc, steady_stops_at_the_floor);
	tcase_add_test(tc, noisy_runs_to_max_time);
	tcase_add_test(tc, checks_thin_out);
	tcase_add_test(tc, stream_batches);
}

RQ_CHECK_MAIN("stats", add_tests)
