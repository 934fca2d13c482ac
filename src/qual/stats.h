/* SPDX-License-Identifier: MIT */
/*
 * stats: is a figure's change real, or the noise measured beside it?
 * Pure arithmetic on two samples (the before side's repeats and the after
 * side's), shared by compare, qualify, baselines and the lab pair matrix.
 *
 * The method (docs/compare.md, "Noise"):
 *   - the change is the ratio of medians, after / before, as a percentage
 *     change (medians: one TCG hiccup moves a mean, not a median);
 *   - its interval is a percentile bootstrap of that ratio: both samples
 *     resampled with replacement RQ_STATS_RESAMPLES times, from a fixed
 *     seed, so the same samples always give the same interval and verdict;
 *   - a Mann-Whitney U test (exact for small samples without ties, normal
 *     approximation with a tie correction otherwise), as Google Benchmark's
 *     compare.py uses, must also find the change real (p below 1 -
 *     confidence) for a regression or an improvement: at n=3 a side the
 *     bootstrap interval reaches the corners of the samples' ranges, and
 *     three values all below three others happen once in 20 by chance
 *     (the test's smallest p there is 0.1);
 *   - with the figure's direction, the interval of the change for the worse
 *     [lo, hi] (percent, > 0 is worse) gives one of:
 *       regression    lo > tolerance (and the rank test agrees)
 *       improvement   hi < -tolerance (likewise)
 *       no change     -tolerance <= lo and hi <= tolerance
 *       inconclusive  anything else: the interval straddles the tolerance,
 *                     and the half-width says how noisy the figure is;
 *   - n=1 on both sides measures no noise: inconclusive, unless the
 *     tolerance is absolute (the point change judged against it alone).
 *     n=1 on one side only borrows the other side's relative dispersion
 *     (the single value v becomes v * x_i / median(x)): the same setup is
 *     assumed as noisy on both sides, which is what a baseline of several
 *     runs judging one new run needs.
 */
#ifndef RQ_STATS_H
#define RQ_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RQ_STATS_RESAMPLES 4000
#define RQ_STATS_SEED 0x5eed0f5eed0f5eedULL
#define RQ_STATS_CONFIDENCE 0.95
#define RQ_STATS_MAX_NEED 999

enum rq_outcome {
	RQ_OUT_SAME = 0,	/* no change beyond the tolerance */
	RQ_OUT_WORSE,		/* a regression */
	RQ_OUT_BETTER,
	RQ_OUT_UNSURE,		/* inconclusive: too noisy to tell */
};
const char *rq_outcome_name(enum rq_outcome o);	/* "no change", "regression", ... */

struct rq_judge_opts {
	double tol_pct;		/* tolerance, percent, >= 0 */
	double confidence;	/* of the interval, in (0.5, 0.999) */
	bool absolute;		/* judge the point change alone, noise or not */
	int dir;		/* +1 higher is better, -1 lower is better */
};

struct rq_judgement {
	enum rq_outcome outcome;
	size_t nb, na;		/* sample sizes */
	double mb, ma;		/* medians */
	double change_pct;	/* (ma - mb) / mb * 100, signed as the figure moved */
	double lo_pct, hi_pct;	/* interval of change_pct; NAN without one */
	double half_pct;	/* (hi - lo) / 2: "±X %"; NAN without one */
	double p_value;		/* Mann-Whitney two-sided; NAN when n < 2 a side */
	unsigned need_n;	/* repeats a side that would resolve a change of the
				 * tolerance's size (half-width tol/2); 0 = unknown */
	unsigned decide_n;	/* repeats a side at which this change, as measured,
				 * would likely be decided (--repeat auto); 0 = unknown */
	bool borrowed;		/* one side had n=1 and borrowed the other's noise */
};

/* Options with the defaults: 5 %, 95 %, not absolute, higher is better. */
void rq_judge_opts_init(struct rq_judge_opts *o);

/*
 * Check one sample of a rate or a time: every value finite and >= 0.
 * 0, or -EINVAL with err saying which value ("sample 3 of 5 is -1: ...").
 */
int rq_sample_check(const double *v, size_t n, char *err, size_t errsz);

/*
 * Judge after against before.  nb, na >= 1.  Returns 0 and fills j, or
 * -EINVAL with err when a sample is bad (rq_sample_check) or an option is
 * out of range.  Deterministic: the bootstrap is seeded with RQ_STATS_SEED.
 */
int rq_change_judge(const double *before, size_t nb, const double *after, size_t na,
	     const struct rq_judge_opts *o, struct rq_judgement *j, char *err, size_t errsz);

/* The median of v[0..n-1] (sorts a copy); NAN when n == 0. */
double rq_stats_median(const double *v, size_t n);

/*
 * Mann-Whitney U: the two-sided p-value that x and y come from one
 * distribution.  Exact when n1 + n2 <= 30 and there are no ties, else the
 * normal approximation with a continuity and tie correction.
 */
double rq_mann_whitney_p(const double *x, size_t n1, const double *y, size_t n2);

/*
 * Is x worse than the rest of v[0..n-1] (n >= 3) beyond their noise?  The
 * lab pair matrix's "slow pair": x differs from the median, for the worse
 * (dir as in rq_judge_opts), by more than tol_pct and by more than
 * RQ_OUTLIER_Z robust standard deviations: the modified z-score of
 * Iglewicz and Hoaglin, 0.6745 (x - median) / MAD, MAD being the median
 * absolute deviation (a matrix whose pairs all agree has MAD 0: then any
 * pair beyond the tolerance is out).  *z gets the score (may be NULL).
 */
#define RQ_OUTLIER_Z 3.5
bool rq_outlier_worse(const double *v, size_t n, double x, int dir, double tol_pct, double *z);

/* The fewest samples a side at which the exact test can give p < alpha (no ties). */
unsigned rq_mann_whitney_min_n(double alpha);

/* A small, fast, seeded PRNG (xoshiro256**, seeded by splitmix64). */
struct rq_rng {
	uint64_t s[4];
};
void rq_rng_seed(struct rq_rng *r, uint64_t seed);
uint64_t rq_rng_next(struct rq_rng *r);
size_t rq_rng_below(struct rq_rng *r, size_t n);	/* uniform in [0, n) */

/*
 * Measurements that stop when their figure is known (docs/verbs.md,
 * "Adaptive measurements").  A kind measures in samples (round trips, or
 * batches of a stream) and asks after each whether to go on:
 *
 *   converged  n >= min_n and the figure's 95 % interval has a half-width
 *              within tol_pct percent of the figure;
 *   max_iters  n reached max_n first (did not converge);
 *   max_time   elapsed_s reached max_s first (did not converge).
 *
 * The interval is recomputed when n has grown by a sixteenth since the
 * last time (at least by one), so a million round trips cost O(n log n)
 * in checks, not O(n^2); the ceilings are checked at every sample.
 */
enum rq_stop_state {
	RQ_STOP_GO = 0,
	RQ_STOP_CONVERGED,
	RQ_STOP_MAX_ITERS,
	RQ_STOP_MAX_TIME,
};
const char *rq_stop_name(enum rq_stop_state st);	/* "converged", "max_iters", ... */

struct rq_stop {
	/* the rule (rq_stop_init) */
	double tol_pct;		/* wanted half-width, percent of the figure, > 0 */
	uint64_t min_n;		/* the floor: no stop on convergence below it */
	uint64_t max_n;		/* a ceiling on samples; 0: none */
	double max_s;		/* a ceiling on time; 0: none */
	/* where it stands */
	enum rq_stop_state state;
	double half_pct;	/* the interval at the last check; NAN before one */
	uint64_t checked_n;	/* samples at that check; 0: none yet */
};

void rq_stop_init(struct rq_stop *s, double tol_pct, uint64_t min_n, uint64_t max_n, double max_s);
/* Round trips v[0..n-1], the figure their median: true when it is time to stop. */
bool rq_stop_median(struct rq_stop *s, const double *v, uint64_t n, double elapsed_s);
/* Batches of a stream, batch i work[i] in secs[i], the figure sum(work) / sum(secs). */
bool rq_stop_ratio(struct rq_stop *s, const double *work, const double *secs, uint64_t n,
		   double elapsed_s);

/*
 * The intervals, as percent of the figure (half-width / figure * 100);
 * NAN when n is too small for a 95 % interval or the figure is 0.
 *   median: distribution-free, between order statistics (the binomial's
 *           normal approximation: ranks n/2 -+ 0.98 sqrt(n)); a round trip's
 *           tail (a TCG hiccup) widens it less than it would a mean's;
 *           n >= 6; lo, hi get the interval (may be NULL);
 *   ratio:  Student's t on the batches, delta method for a ratio of sums
 *           (batches of unequal length weigh as long as they are); n >= 2.
 */
double rq_ci95_median_pct(const double *v, size_t n, double *lo, double *hi);
double rq_ci95_ratio_pct(const double *work, const double *secs, size_t n);
/* Student's t quantile 0.975 with df degrees of freedom (df >= 1). */
double rq_t975(unsigned df);

#endif
