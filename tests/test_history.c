/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/qual/history.c: a step is found where it is, noise
 * alone is not a change, two steps are two change points, a step within
 * the tolerance is not one, and a short history cannot have one.
 */
#include <check.h>
#include <math.h>
#include "qual/history.h"
#include "qual/stats.h"
#include "check_main.h"

static struct rq_change_point cp[8];

/* Noise of about +-3 % from a fixed seed, times level. */
static void series(double *x, size_t n, size_t step_at, double level2, size_t step2_at, double level3)
{
	struct rq_rng r;

	rq_rng_seed(&r, 42);
	for (size_t i = 0; i < n; i++) {
		double level = i >= step2_at ? level3 : i >= step_at ? level2 : 1.0;

		x[i] = 100 * level * (0.97 + (double)rq_rng_below(&r, 600) / 10000);
	}
}

START_TEST(one_step)
{
	double x[16];

	series(x, 16, 9, 0.7, 99, 0);
	ck_assert_uint_eq(rq_change_points(x, 16, 5, cp, 8), 1);
	ck_assert_uint_eq(cp[0].index, 9);
	ck_assert(cp[0].change_pct < -25 && cp[0].change_pct > -35);
	ck_assert(cp[0].p_value < 0.001);
}
END_TEST

START_TEST(noise_is_not_a_change)
{
	double x[20];

	series(x, 20, 99, 0, 99, 0);
	ck_assert_uint_eq(rq_change_points(x, 20, 5, cp, 8), 0);
}
END_TEST

START_TEST(two_steps)
{
	double x[24];

	series(x, 24, 8, 0.7, 16, 1.0);
	ck_assert_uint_eq(rq_change_points(x, 24, 5, cp, 8), 2);
	ck_assert_uint_eq(cp[0].index, 8);
	ck_assert_uint_eq(cp[1].index, 16);
	ck_assert(cp[1].change_pct > 30);
}
END_TEST

START_TEST(within_tolerance_or_short)
{
	double x[16];

	series(x, 16, 8, 1.03, 99, 0);	/* a real 3 % step: inside 5 % */
	ck_assert_uint_eq(rq_change_points(x, 16, 5, cp, 8), 0);
	series(x, 7, 4, 0.5, 99, 0);	/* 7 runs: not 4 on each side */
	ck_assert_uint_eq(rq_change_points(x, 7, 5, cp, 8), 0);
	x[2] = NAN;
	ck_assert_uint_eq(rq_change_points(x, 7, 5, cp, 8), 0);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	(void)s;
	tcase_add_test(tc, one_step);
	tcase_add_test(tc, noise_is_not_a_change);
	tcase_add_test(tc, two_steps);
	tcase_add_test(tc, within_tolerance_or_short);
}

RQ_CHECK_MAIN("history", add_tests)
