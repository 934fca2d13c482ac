/* SPDX-License-Identifier: MIT */
/*
 * history: change points in one figure's values across runs, in run order
 * (`rdmaqual history DIR...`, docs/history.md).  Pure arithmetic.
 *
 * The method is binary segmentation with a rank test, the nonparametric
 * cousin of the E-divisive means that MongoDB's Hunter uses: over a
 * segment, every split that leaves at least RQ_CP_MIN_SEG runs each side is
 * tried, comparing up to RQ_CP_WINDOW runs either side of it (so a step
 * that a later fix undoes is still found); the split whose two sides a
 * Mann-Whitney U test finds most different is a change point when that
 * p-value is below alpha divided by
 * the number of splits tried (Bonferroni: a long history is not more
 * chances to cry wolf) and the medians of the halves differ by more than
 * the tolerance.  Then each half is searched the same way.  A shift is
 * found after RQ_CP_MIN_SEG runs on each side of it, not sooner; a slow
 * drift shows as one or more steps.
 */
#ifndef RQ_HISTORY_H
#define RQ_HISTORY_H

#include <stddef.h>

#define RQ_CP_MIN_SEG 4
#define RQ_CP_WINDOW 8
#define RQ_CP_ALPHA 0.05

struct rq_change_point {
	size_t index;		/* the first value after the change */
	double before, after;	/* medians of the segments either side */
	double change_pct;	/* (after - before) / |before| * 100 */
	double p_value;		/* Mann-Whitney, two-sided, before Bonferroni */
};

/*
 * Change points of x[0..n-1] with the tolerance tol_pct, at most max of
 * them, into out in index order.  Returns how many.
 */
size_t rq_change_points(const double *x, size_t n, double tol_pct, struct rq_change_point *out, size_t max);

#endif
