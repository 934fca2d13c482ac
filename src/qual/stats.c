// SPDX-License-Identifier: MIT
/*
 * The noise-aware judgement of one figure (stats.h has the method).  No
 * allocation beyond the resample buffers, no globals: the PRNG state lives
 * on the caller's stack, so two judgements never disturb each other and the
 * same samples always give the same verdict.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/util.h"
#include "qual/stats.h"

/* Float noise must not turn an exact 5.0 % into "beyond 5 %". */
#define TOL_EPS 1e-9

const char *rq_outcome_name(enum rq_outcome o)
{
	switch (o) {
	case RQ_OUT_SAME: return "no change";
	case RQ_OUT_WORSE: return "regression";
	case RQ_OUT_BETTER: return "improvement";
	case RQ_OUT_UNSURE: return "inconclusive";
	}
	return "?";
}

void rq_judge_opts_init(struct rq_judge_opts *o)
{
	*o = (struct rq_judge_opts){ .tol_pct = 5.0, .confidence = RQ_STATS_CONFIDENCE, .dir = 1 };
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rq_rng_seed(struct rq_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rq_rng_next(struct rq_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

size_t rq_rng_below(struct rq_rng *r, size_t n)
{
	/* Lemire's multiply-shift; the bias is below 2^-32 for any n we draw from. */
	return (size_t)(((unsigned __int128)rq_rng_next(r) * n) >> 64);
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The k-th smallest of v[0..n-1] (Hoare's selection; reorders v). */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

/*
 * Median of v, reordering v: selection, not a sort, so a baseline of
 * thousands of repeated rows costs O(n) a resample.
 */
static double median_inplace(double *v, size_t n)
{
	double hi = select_kth(v, n, n / 2), lo;

	if (n % 2)
		return hi;
	/* The lower middle is the largest of v[0..n/2-1] after the selection. */
	lo = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2;
}

double rq_stats_median(const double *v, size_t n)
{
	double *c, m;

	if (!n)
		return NAN;
	c = xcalloc(n, sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	m = median_inplace(c, n);
	free(c);
	return m;
}

int rq_sample_check(const double *v, size_t n, char *err, size_t errsz)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i])) {
			snprintf(err, errsz, "sample %zu of %zu is not a finite number (%g)", i + 1, n, v[i]);
			return -EINVAL;
		}
		if (v[i] < 0) {
			snprintf(err, errsz, "sample %zu of %zu is %g: a rate or a time cannot be negative",
				 i + 1, n, v[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Exact null distribution of U by the Mann-Whitney recurrence, as counts. */
static double exact_p(size_t n1, size_t n2, double u)
{
	size_t umax = n1 * n2;
	/* f[m][k][u] for m <= n1, k <= n2: two rolling layers over m. */
	double *prev = xcalloc((n2 + 1) * (umax + 1), sizeof(double));
	double *cur = xcalloc((n2 + 1) * (umax + 1), sizeof(double));
	double total = 0, le = 0, ge = 0;

#define F(t, k, x) (t)[(k) * (umax + 1) + (x)]
	for (size_t k = 0; k <= n2; k++)
		F(prev, k, 0) = 1;		/* m = 0: one way, U = 0 */
	for (size_t m = 1; m <= n1; m++) {
		memset(cur, 0, (n2 + 1) * (umax + 1) * sizeof(double));
		F(cur, 0, 0) = 1;
		for (size_t k = 1; k <= n2; k++)
			for (size_t x = 0; x <= m * k; x++)
				F(cur, k, x) = (x >= k ? F(prev, k, x - k) : 0) + F(cur, k - 1, x);
		double *t = prev;

		prev = cur;
		cur = t;
	}
	for (size_t x = 0; x <= umax; x++) {
		double c = F(prev, n2, x);

		total += c;
		if ((double)x <= u + 1e-9)
			le += c;
		if ((double)x >= u - 1e-9)
			ge += c;
	}
#undef F
	free(prev);
	free(cur);
	double p = 2 * (le < ge ? le : ge) / total;

	return p > 1 ? 1 : p;
}

double rq_mann_whitney_p(const double *x, size_t n1, const double *y, size_t n2)
{
	size_t n = n1 + n2;
	double *all, u = 0, tie = 0;
	bool ties = false;

	if (n1 < 1 || n2 < 1)
		return NAN;
	/* U of x: pairs where x wins, half a pair for a tie. */
	for (size_t i = 0; i < n1; i++)
		for (size_t j = 0; j < n2; j++) {
			if (x[i] > y[j])
				u += 1;
			else if (x[i] == y[j])
				u += 0.5, ties = true;
		}
	if (!ties && n <= 30)
		return exact_p(n1, n2, u);
	all = xcalloc(n, sizeof(*all));
	memcpy(all, x, n1 * sizeof(*all));
	memcpy(all + n1, y, n2 * sizeof(*all));
	qsort(all, n, sizeof(*all), dcmp);
	for (size_t i = 0; i < n;) {
		size_t k = i;

		while (k < n && all[k] == all[i])
			k++;
		double t = (double)(k - i);

		tie += t * t * t - t;
		i = k;
	}
	free(all);
	double mu = (double)n1 * (double)n2 / 2;
	double var = (double)n1 * (double)n2 / 12 * ((double)(n + 1) - tie / ((double)n * (double)(n - 1)));

	if (var <= 0)
		return 1;	/* every value equal */
	double z = (fabs(u - mu) - 0.5) / sqrt(var);

	if (z < 0)
		z = 0;
	return erfc(z / sqrt(2));
}

bool rq_outlier_worse(const double *v, size_t n, double x, int dir, double tol_pct, double *z)
{
	double med, mad, *d, score;

	if (z)
		*z = NAN;
	if (n < 3 || !isfinite(x))
		return false;
	med = rq_stats_median(v, n);
	d = xcalloc(n, sizeof(*d));
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	mad = rq_stats_median(d, n);
	free(d);
	double worse = -(double)dir * (x - med);	/* > 0: worse */

	score = mad > 0 ? 0.6745 * worse / mad : worse > 0 ? INFINITY : worse < 0 ? -INFINITY : 0;
	if (z)
		*z = score;
	if (med == 0)
		return false;
	return worse / fabs(med) * 100 > tol_pct && score > RQ_OUTLIER_Z;
}

unsigned rq_mann_whitney_min_n(double alpha)
{
	/* The smallest two-sided exact p at n a side is 2 / C(2n, n). */
	double c = 2;	/* C(2, 1) */

	for (unsigned n = 1; n < RQ_STATS_MAX_NEED; n++) {
		if (2 / c < alpha)
			return n;
		c = c * (2.0 * n + 1) * (2.0 * n + 2) / ((double)(n + 1) * (double)(n + 1));
	}
	return RQ_STATS_MAX_NEED;
}

/* The quantile q of sorted v (linear between order statistics). */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/*
 * Over RQ_STATS_MAX_BOOT values (a baseline of thousands of repeated rows),
 * the sample becomes that many evenly spaced order statistics: the same
 * distribution, an interval as wide as that n gives (wider, never
 * narrower), and a bounded cost.
 */
#define RQ_STATS_MAX_BOOT 512

static double *thin(double *s, size_t *n)
{
	double *t;

	if (*n <= RQ_STATS_MAX_BOOT)
		return s;
	qsort(s, *n, sizeof(*s), dcmp);
	t = xcalloc(RQ_STATS_MAX_BOOT, sizeof(*t));
	for (size_t i = 0; i < RQ_STATS_MAX_BOOT; i++)
		t[i] = s[(size_t)(((double)i + 0.5) * (double)*n / RQ_STATS_MAX_BOOT)];
	free(s);
	*n = RQ_STATS_MAX_BOOT;
	return t;
}

/* One side's sample: the values, or a single value given the other's dispersion. */
static double *side_sample(const double *v, size_t n, const double *other, size_t no, size_t *out_n)
{
	double *s;

	if (n > 1 || no < 2) {
		s = xcalloc(n, sizeof(*s));
		memcpy(s, v, n * sizeof(*s));
		*out_n = n;
		return thin(s, out_n);
	}
	double m = rq_stats_median(other, no);

	s = xcalloc(no, sizeof(*s));
	for (size_t i = 0; i < no; i++)
		s[i] = m > 0 ? v[0] * other[i] / m : v[0];
	*out_n = no;
	return thin(s, out_n);
}

static void point_outcome(struct rq_judgement *j, const struct rq_judge_opts *o)
{
	double worse = -(double)o->dir * j->change_pct;

	if (worse > o->tol_pct + TOL_EPS)
		j->outcome = RQ_OUT_WORSE;
	else if (worse < -(o->tol_pct + TOL_EPS))
		j->outcome = RQ_OUT_BETTER;
	else
		j->outcome = RQ_OUT_SAME;
}

int rq_change_judge(const double *before, size_t nb, const double *after, size_t na,
	     const struct rq_judge_opts *o, struct rq_judgement *j, char *err, size_t errsz)
{
	char why[160];

	*j = (struct rq_judgement){ .outcome = RQ_OUT_UNSURE, .nb = nb, .na = na, .lo_pct = NAN,
				    .hi_pct = NAN, .half_pct = NAN, .p_value = NAN, .change_pct = NAN };
	if (!nb || !na) {
		snprintf(err, errsz, "no %s sample", !nb ? "before" : "after");
		return -EINVAL;
	}
	if (!(o->confidence > 0.5 && o->confidence < 0.999) || !(o->tol_pct >= 0) || !isfinite(o->tol_pct) ||
	    (o->dir != 1 && o->dir != -1)) {
		snprintf(err, errsz, "bad options (confidence %g, tolerance %g, direction %d)", o->confidence,
			 o->tol_pct, o->dir);
		return -EINVAL;
	}
	if (rq_sample_check(before, nb, why, sizeof(why))) {
		snprintf(err, errsz, "before: %s", why);
		return -EINVAL;
	}
	if (rq_sample_check(after, na, why, sizeof(why))) {
		snprintf(err, errsz, "after: %s", why);
		return -EINVAL;
	}
	j->mb = rq_stats_median(before, nb);
	j->ma = rq_stats_median(after, na);
	if (j->mb == 0) {
		/* No relative change from 0; equal zeros are no change at all. */
		if (j->ma == 0) {
			j->change_pct = 0;
			j->outcome = RQ_OUT_SAME;
		}
		return 0;
	}
	j->change_pct = (j->ma - j->mb) / j->mb * 100.0;
	if (nb >= 2 && na >= 2)
		j->p_value = rq_mann_whitney_p(after, na, before, nb);
	if (o->absolute) {
		point_outcome(j, o);
		return 0;
	}
	if (nb < 2 && na < 2)
		return 0;	/* no noise measured: inconclusive */

	size_t sb, sa;
	double *xb = side_sample(before, nb, after, na, &sb);
	double *xa = side_sample(after, na, before, nb, &sa);
	double *bufb = xcalloc(sb, sizeof(double)), *bufa = xcalloc(sa, sizeof(double));
	double *ch = xcalloc(RQ_STATS_RESAMPLES, sizeof(double));
	struct rq_rng rng;
	size_t k = 0;

	j->borrowed = nb < 2 || na < 2;
	rq_rng_seed(&rng, RQ_STATS_SEED);
	/* Two constant samples: every resample is the point change (and costs nothing). */
	bool constant = true;

	for (size_t i = 1; constant && i < sb; i++)
		constant = xb[i] == xb[0];
	for (size_t i = 1; constant && i < sa; i++)
		constant = xa[i] == xa[0];
	for (int r = 0; r < RQ_STATS_RESAMPLES; r++) {
		if (constant) {
			ch[k++] = j->change_pct;
			continue;
		}
		for (size_t i = 0; i < sb; i++)
			bufb[i] = xb[rq_rng_below(&rng, sb)];
		for (size_t i = 0; i < sa; i++)
			bufa[i] = xa[rq_rng_below(&rng, sa)];
		double mb = median_inplace(bufb, sb), ma = median_inplace(bufa, sa);

		if (mb > 0)
			ch[k++] = (ma - mb) / mb * 100.0;
	}
	if (k >= RQ_STATS_RESAMPLES / 2) {
		double alpha = 1 - o->confidence, lo, hi, wlo, whi;

		qsort(ch, k, sizeof(*ch), dcmp);
		lo = quantile(ch, k, alpha / 2);
		hi = quantile(ch, k, 1 - alpha / 2);
		j->lo_pct = lo;
		j->hi_pct = hi;
		j->half_pct = (hi - lo) / 2;
		/* The interval of the change for the worse. */
		wlo = o->dir > 0 ? -hi : lo;
		whi = o->dir > 0 ? -lo : hi;
		/*
		 * A change beyond the tolerance must also be real by the rank
		 * test: the percentile bootstrap of 3 values a side reaches the
		 * corners of the samples' ranges, and 3 after-values all below 3
		 * before-values happen by chance once in 20.  (A borrowed side
		 * has one value: no rank test, the bootstrap alone.)
		 */
		bool real = j->borrowed || (isfinite(j->p_value) && j->p_value < alpha);

		if (wlo > o->tol_pct + TOL_EPS && real)
			j->outcome = RQ_OUT_WORSE;
		else if (whi < -(o->tol_pct + TOL_EPS) && real)
			j->outcome = RQ_OUT_BETTER;
		else if (wlo >= -(o->tol_pct + TOL_EPS) && whi <= o->tol_pct + TOL_EPS)
			j->outcome = RQ_OUT_SAME;
		/*
		 * The half-width shrinks as 1/sqrt(n): n (2h/tol)^2 repeats a
		 * side give a half-width of tol/2, enough to tell a change of
		 * the tolerance's size from none.
		 */
		size_t n = sb < sa ? sb : sa;

		if (o->tol_pct > 0) {
			double need = ceil((double)n * pow(2 * j->half_pct / o->tol_pct, 2));

			if (need < (double)n)
				need = (double)n;
			/* ... and the rank test must be able to reach the confidence at all. */
			double mw = (double)rq_mann_whitney_min_n(alpha);

			if (!j->borrowed && need < mw)
				need = mw;
			j->need_n = need > RQ_STATS_MAX_NEED ? RQ_STATS_MAX_NEED : (unsigned)need;

			/*
			 * The change as measured is decided once the half-width
			 * is below its distance to the tolerance.
			 */
			double w = fabs(j->change_pct), gap = fabs(w - o->tol_pct), dn;

			dn = gap > 0 ? ceil((double)n * pow(j->half_pct / gap, 2)) : RQ_STATS_MAX_NEED;
			if (w > o->tol_pct && !j->borrowed && dn < mw)
				dn = mw;
			if (dn < (double)n)
				dn = (double)n;
			j->decide_n = dn > RQ_STATS_MAX_NEED ? RQ_STATS_MAX_NEED : (unsigned)dn;
		}
	}
	free(ch);
	free(bufb);
	free(bufa);
	free(xb);
	free(xa);
	return 0;
}

double rq_t975(unsigned df)
{
	static const double t[] = {
		NAN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};
	const double z = 1.959964, d = (double)df;

	if (df < ARRAY_SIZE(t))
		return t[df];
	/* Cornish-Fisher beyond the table: 2.0423 at df 30, within 1e-4 above */
	return z + (z * z * z + z) / (4 * d) +
	       (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

double rq_ci95_median_pct(const double *v, size_t n, double *lo, double *hi)
{
	double *c, m, l, h, w;
	size_t r, k;

	if (lo)
		*lo = NAN;
	if (hi)
		*hi = NAN;
	/* below 6 even the whole range covers less than 95 % (1 - 2^(1-n)) */
	if (n < 6)
		return NAN;
	/* 1-based ranks r and k: floor(n/2 - z sqrt(n)/2), ceil(1 + n/2 + z sqrt(n)/2) */
	w = 1.959964 * sqrt((double)n) / 2;
	r = (size_t)floor((double)n / 2 - w);
	k = (size_t)ceil(1 + (double)n / 2 + w);
	if (r < 1)
		r = 1;
	if (k > n)
		k = n;
	c = xcalloc(n, sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	m = median_inplace(c, n);
	l = select_kth(c, n, r - 1);
	h = select_kth(c, n, k - 1);
	free(c);
	if (lo)
		*lo = l;
	if (hi)
		*hi = h;
	if (!(m > 0))
		return NAN;
	return (h - l) / 2 / m * 100;
}

double rq_ci95_ratio_pct(const double *work, const double *secs, size_t n)
{
	double sw = 0, ss = 0, r, d2 = 0;

	if (n < 2)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		sw += work[i];
		ss += secs[i];
	}
	if (!(ss > 0) || !(sw > 0))
		return NAN;
	r = sw / ss;
	/* residuals of each batch from the overall rate: the delta method's variance */
	for (size_t i = 0; i < n; i++) {
		double e = work[i] - r * secs[i];

		d2 += e * e;
	}
	/* se(r) = sqrt(sum e^2 / (n - 1) / n) / mean(secs) */
	double se = sqrt(d2 / (double)(n - 1) / (double)n) / (ss / (double)n);

	return rq_t975((unsigned)(n - 1)) * se / r * 100;
}

const char *rq_stop_name(enum rq_stop_state st)
{
	switch (st) {
	case RQ_STOP_GO: return "running";
	case RQ_STOP_CONVERGED: return "converged";
	case RQ_STOP_MAX_ITERS: return "max_iters";
	case RQ_STOP_MAX_TIME: return "max_time";
	}
	return "?";
}

void rq_stop_init(struct rq_stop *s, double tol_pct, uint64_t min_n, uint64_t max_n, double max_s)
{
	*s = (struct rq_stop){ .tol_pct = tol_pct, .min_n = min_n, .max_n = max_n, .max_s = max_s,
			       .half_pct = NAN };
}

/* Is the interval worth recomputing at n?  At min_n, then as n grows by n/16. */
static bool stop_due(const struct rq_stop *s, uint64_t n)
{
	uint64_t step = s->checked_n / 16;

	if (n < s->min_n || n == 0)
		return false;
	return !s->checked_n || n >= s->checked_n + (step ? step : 1);
}

/*
 * The rule, given a fresh interval or none (half: NAN when not recomputed
 * at this n).  A ceiling reached leaves the last interval computed there,
 * so the row reports what it reached (the caller recomputes on demand).
 */
static bool stop_rule(struct rq_stop *s, uint64_t n, double elapsed_s, bool fresh)
{
	if (fresh && isfinite(s->half_pct) && s->half_pct <= s->tol_pct + TOL_EPS)
		s->state = RQ_STOP_CONVERGED;
	else if (s->max_n && n >= s->max_n)
		s->state = RQ_STOP_MAX_ITERS;
	else if (s->max_s > 0 && elapsed_s >= s->max_s)
		s->state = RQ_STOP_MAX_TIME;
	return s->state != RQ_STOP_GO;
}

bool rq_stop_median(struct rq_stop *s, const double *v, uint64_t n, double elapsed_s)
{
	bool fresh = stop_due(s, n);

	if (s->state != RQ_STOP_GO)
		return true;
	if (fresh) {
		s->half_pct = rq_ci95_median_pct(v, (size_t)n, NULL, NULL);
		s->checked_n = n;
	}
	if (!stop_rule(s, n, elapsed_s, fresh))
		return false;
	if (!fresh)
		s->half_pct = rq_ci95_median_pct(v, (size_t)n, NULL, NULL);
	return true;
}

bool rq_stop_ratio(struct rq_stop *s, const double *work, const double *secs, uint64_t n,
		   double elapsed_s)
{
	bool fresh = stop_due(s, n);

	if (s->state != RQ_STOP_GO)
		return true;
	if (fresh) {
		s->half_pct = rq_ci95_ratio_pct(work, secs, (size_t)n);
		s->checked_n = n;
	}
	if (!stop_rule(s, n, elapsed_s, fresh))
		return false;
	if (!fresh)
		s->half_pct = rq_ci95_ratio_pct(work, secs, (size_t)n);
	return true;
}
