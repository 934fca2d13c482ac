// SPDX-License-Identifier: MIT
/*
 * Change points by binary segmentation with the Mann-Whitney test
 * (history.h has the method and why).
 */
#include <math.h>
#include <stdlib.h>
#include "qual/history.h"
#include "qual/stats.h"

static int cp_cmp(const void *a, const void *b)
{
	const struct rq_change_point *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static void segment(const double *x, size_t lo, size_t hi, double tol, struct rq_change_point *out,
		    size_t max, size_t *n)
{
	size_t len = hi - lo, best = 0, tried = 0;
	double bestp = 2;

	if (*n >= max || len < 2 * RQ_CP_MIN_SEG)
		return;
	for (size_t k = lo + RQ_CP_MIN_SEG; k + RQ_CP_MIN_SEG <= hi; k++) {
		/* Windows either side, so a step that is later undone (A B A) is still a step. */
		size_t l = k - lo > RQ_CP_WINDOW ? k - RQ_CP_WINDOW : lo;
		size_t r = hi - k > RQ_CP_WINDOW ? k + RQ_CP_WINDOW : hi;
		double p = rq_mann_whitney_p(x + l, k - l, x + k, r - k);

		tried++;
		if (p < bestp) {
			bestp = p;
			best = k;
		}
	}
	if (!tried || !(bestp < RQ_CP_ALPHA / (double)tried))
		return;
	size_t l = best - lo > RQ_CP_WINDOW ? best - RQ_CP_WINDOW : lo;
	size_t r = hi - best > RQ_CP_WINDOW ? best + RQ_CP_WINDOW : hi;
	double mb = rq_stats_median(x + l, best - l), ma = rq_stats_median(x + best, r - best);
	double ch = mb != 0 ? (ma - mb) / fabs(mb) * 100 : NAN;

	if (!(fabs(ch) > tol))
		return;
	out[(*n)++] = (struct rq_change_point){ .index = best, .before = mb, .after = ma, .change_pct = ch,
						.p_value = bestp };
	segment(x, lo, best, tol, out, max, n);
	segment(x, best, hi, tol, out, max, n);
}

size_t rq_change_points(const double *x, size_t n, double tol_pct, struct rq_change_point *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;	/* the caller drops runs without a value */
	segment(x, 0, n, tol_pct, out, max, &k);
	qsort(out, k, sizeof(*out), cp_cmp);
	return k;
}
