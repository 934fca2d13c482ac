/* SPDX-License-Identifier: MIT */
/*
 * compare: before/after judgement for upgrade qualification; see compare.h
 * and docs/compare.md.  Rows are matched by id (case + [device/port]); a
 * row that passed before and fails, skips or is gone after is a regression,
 * because after a driver upgrade a rail that vanished shows up as exactly
 * that.  Figures are judged only when their direction is known and both
 * rows ran on the same target and HCA model: rxe numbers say nothing about
 * a ConnectX.  Environment facts are listed, never judged: they are what
 * the upgrade changed.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "qual/compare.h"
#include "core/json_text.h"
#include "core/run_doc.h"
#include "core/kind.h"
#include "core/result.h"
#include "core/util.h"
#include "qual/stats.h"

/* Float noise must not turn an exact 5.0% into "beyond 5%". */
#define TOL_EPS 1e-9

void cmp_opts_init(struct cmp_opts *o)
{
	*o = (struct cmp_opts){ .tol_pct = RQ_COMPARE_DEFAULT_TOL, .confidence = RQ_STATS_CONFIDENCE,
				.single_absolute = true };
}

int cmp_opts_confidence(struct cmp_opts *o, const char *arg, char *err, size_t errsz)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end != arg && *end == '%' && !end[1]) {
		v /= 100;
		end++;
	}
	if (end == arg || *end || errno || !(v > 0.5 && v < 0.999)) {
		snprintf(err, errsz, "confidence \"%.40s\" is not above 0.5 and below 0.999 (e.g. 0.95 or 95%%)", arg);
		return -EINVAL;
	}
	o->confidence = v;
	return 0;
}

void cmp_opts_release(struct cmp_opts *o)
{
	for (size_t i = 0; i < o->ntols; i++)
		free(o->tols[i].glob);
	free(o->tols);
	cmp_opts_init(o);
}

static int parse_pct(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return -EINVAL;
	if (*end == '%')
		end++;
	if (*end || !isfinite(v) || v < 0 || v > 1e6)
		return -EINVAL;
	*out = v;
	return 0;
}

int cmp_opts_tolerance(struct cmp_opts *o, const char *arg, char *err, size_t errsz)
{
	const char *eq = strrchr(arg, '=');
	double pct;

	if (!eq) {
		if (parse_pct(arg, &pct)) {
			snprintf(err, errsz, "tolerance \"%.60s\" is not a percentage (0 or more, e.g. 5 or 2.5%%)", arg);
			return -EINVAL;
		}
		o->tol_pct = pct;
		return 0;
	}
	if (eq == arg) {
		snprintf(err, errsz, "tolerance \"%.60s\" has no figure name before '='", arg);
		return -EINVAL;
	}
	if (parse_pct(eq + 1, &pct)) {
		snprintf(err, errsz, "tolerance \"%.60s\": \"%.20s\" is not a percentage (0 or more)", arg, eq + 1);
		return -EINVAL;
	}
	o->tols = xrealloc(o->tols, (o->ntols + 1) * sizeof(*o->tols));
	o->tols[o->ntols++] = (struct cmp_tol){ .glob = xstrndup(arg, eq - arg), .pct = pct };
	return 0;
}

double cmp_tolerance_for(const struct cmp_opts *o, const char *figure)
{
	/* Last match wins, like a later option overriding an earlier one. */
	for (size_t i = o->ntols; i-- > 0;)
		if (!fnmatch(o->tols[i].glob, figure, 0))
			return o->tols[i].pct;
	return o->tol_pct;
}

/*
 * Units: a rate (anything per second) is better higher, a time lower, and
 * so is a cost per amount moved (CPU seconds per GB: an upgrade that
 * makes the transport burn twice the CPU is a regression).
 */
static enum cmp_dir unit_direction(const char *unit)
{
	static const char *const higher[] = { "Gbps", "Mbps", "Kbps", "bps", "pps", "Mpps", "iops", "IOPS" };
	static const char *const lower[] = { "ns", "us", "usec", "\xc2\xb5s", "ms", "msec", "cycles",
					     "s/GB" };

	if (!unit || !*unit)
		return CMP_DIR_UNKNOWN;
	if (str_ends(unit, "/s") && strlen(unit) > 2)
		return CMP_HIGHER;
	for (size_t i = 0; i < ARRAY_SIZE(higher); i++)
		if (!strcmp(unit, higher[i]))
			return CMP_HIGHER;
	for (size_t i = 0; i < ARRAY_SIZE(lower); i++)
		if (!strcmp(unit, lower[i]))
			return CMP_LOWER;
	/* Plain seconds are wall times (elapsed, bringup_s): noise, not performance. */
	return CMP_DIR_UNKNOWN;
}

/* Names, word by word ("bw_avg", "lat_p99", "msg_rate"). */
static enum cmp_dir name_direction(const char *name)
{
	static const char *const higher[] = { "bw", "bandwidth", "throughput", "rate", "iops" };
	/* fabric-routing: a skew, a hop count, routes that do not arrive */
	static const char *const lower[] = { "lat", "latency", "skew", "hops", "unreachable" };
	bool hi = false, lo = false;
	const char *p = name;

	while (*p) {
		char w[32];
		size_t n = 0;

		while (*p && !isalnum((unsigned char)*p))
			p++;
		while (isalnum((unsigned char)*p)) {
			if (n < sizeof(w) - 1)
				w[n++] = (char)tolower((unsigned char)*p);
			p++;
		}
		w[n] = '\0';
		for (size_t i = 0; n && i < ARRAY_SIZE(higher); i++)
			hi |= !strcmp(w, higher[i]);
		for (size_t i = 0; n && i < ARRAY_SIZE(lower); i++)
			lo |= !strcmp(w, lower[i]);
	}
	if (hi == lo)
		return CMP_DIR_UNKNOWN;	/* neither, or a name that says both */
	return hi ? CMP_HIGHER : CMP_LOWER;
}

enum cmp_dir cmp_direction(const char *name, const char *unit)
{
	enum cmp_dir d = unit_direction(unit);

	return d != CMP_DIR_UNKNOWN ? d : name_direction(name ? name : "");
}

const char *cmp_dir_name(enum cmp_dir d)
{
	return d == CMP_HIGHER ? "higher" : d == CMP_LOWER ? "lower" : NULL;
}

static const char *const type_names[CMP_NTYPES] = {
	[CMP_REGRESSED] = "regressed",
	[CMP_MISSING] = "missing",
	[CMP_NEW_SKIP] = "new_skip",
	[CMP_FIXED] = "fixed",
	[CMP_VERDICT] = "verdict_changed",
	[CMP_NEW_ROW] = "new_row",
	[CMP_GONE] = "gone",
	[CMP_REASON] = "reason_changed",
	[CMP_FIG_WORSE] = "figure_worse",
	[CMP_FIG_BETTER] = "figure_better",
	[CMP_FIG_SAME] = "figure_within",
	[CMP_FIG_UNJUDGED] = "figure_unjudged",
	[CMP_FIG_ONE_SIDE] = "figure_one_side",
	[CMP_FIG_UNSURE] = "figure_inconclusive",
	[CMP_FACT] = "fact_changed",
	[CMP_WARNING] = "warning",
};

const char *cmp_type_name(enum cmp_type t)
{
	return (unsigned)t < CMP_NTYPES ? type_names[t] : "?";
}

/* One side: a document's rows (borrowed) indexed by id. */
struct side {
	const struct rq_run_doc *doc;
	struct rq_result *const *rows;	/* document order */
	size_t n;
	struct rq_result **byid;	/* sorted by id, then document order */
	size_t *byid_pos;		/* byid[i]'s position in the document */
	struct devfacts *devs;		/* sorted by device, for hca_fact() */
	size_t ndevs;
};

/* Per device, the first value of each hca_keys[] fact any row recorded. */
struct devfacts {
	const char *device;
	const char *v[3];
};

static void side_release(struct side *s)
{
	free(s->byid);
	free(s->byid_pos);
	free(s->devs);
	memset(s, 0, sizeof(*s));
}

/* A row with its document position, to sort stably with qsort. */
struct ranked {
	const char *key;
	size_t pos;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static const char *row_fact(const struct rq_result *r, const char *key);
static const char *const hca_keys[3];

/*
 * Index rows by id (equal ids in document order) and facts by device, in
 * O(n log n): a 20k-row file took 19 s when each row scanned all others.
 */
static void side_index(struct side *s)
{
	struct ranked *rk = xcalloc(s->n + 1, sizeof(*rk));
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		rk[i] = (struct ranked){ s->rows[i]->id, i };
	qsort(rk, s->n, sizeof(*rk), ranked_cmp);
	s->byid = xcalloc(s->n + 1, sizeof(*s->byid));
	s->byid_pos = xcalloc(s->n + 1, sizeof(*s->byid_pos));
	for (size_t i = 0; i < s->n; i++) {
		s->byid[i] = s->rows[rk[i].pos];
		s->byid_pos[i] = rk[i].pos;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->rows[i]->device)
			rk[n++] = (struct ranked){ s->rows[i]->device, i };
	qsort(rk, n, sizeof(*rk), ranked_cmp);
	s->devs = xcalloc(n + 1, sizeof(*s->devs));
	for (size_t i = 0; i < n; i++) {
		struct devfacts *d;

		if (!s->ndevs || strcmp(s->devs[s->ndevs - 1].device, rk[i].key))
			s->devs[s->ndevs++].device = rk[i].key;
		d = &s->devs[s->ndevs - 1];
		for (size_t k = 0; k < ARRAY_SIZE(d->v); k++)
			if (!d->v[k])
				d->v[k] = row_fact(s->rows[rk[i].pos], hca_keys[k]);
	}
	free(rk);
}

static enum cmp_dir unit_direction(const char *unit);

/*
 * A rate cannot be negative: such a row is refused, with its figure named,
 * rather than judged into a verdict.  (A time can be an offset: only rates
 * are refused below 0.  That a sample is a finite number, the reader checks.)
 */
int cmp_check_row(const struct rq_result *r, char *err, size_t errsz)
{
	for (size_t i = 0; i < r->nfigs; i++) {
		const struct rq_figure *f = &r->figs[i];

		if (unit_direction(f->unit) != CMP_HIGHER)
			continue;
		if (f->value < 0) {
			snprintf(err, errsz, "figure %.60s: value %g %.20s is negative where a rate is expected",
				 f->name, f->value, f->unit);
			return -EINVAL;
		}
		for (size_t k = 0; f->spread && k < f->spread->nsamples; k++)
			if (f->spread->samples[k] < 0) {
				snprintf(err, errsz, "figure %.60s: sample %zu is %g %.20s: negative where a rate is expected",
					 f->name, k + 1, f->spread->samples[k], f->unit);
				return -EINVAL;
			}
	}
	return 0;
}

void cmp_doc_init(struct rq_run_doc *d, unsigned flags)
{
	rq_run_doc_init(d);
	d->flags = flags;
	d->check_row = cmp_check_row;
}

static int side_load(struct side *s, const struct rq_run_doc *d, char *err, size_t errsz)
{
	int ret = rq_run_doc_check(d, err, errsz);

	memset(s, 0, sizeof(*s));
	if (ret)
		return ret;
	s->doc = d;
	s->rows = d->rows;
	s->n = d->n;
	side_index(s);
	return 0;
}

static struct rq_result *side_find_at(const struct side *s, const char *id, size_t *dups, size_t *at);

/* The first row with this id in document order (ids should be unique). */
static struct rq_result *side_find(const struct side *s, const char *id, size_t *dups)
{
	size_t at;

	return side_find_at(s, id, dups, &at);
}

/* As side_find; *at: the first one's index in byid (the others follow it). */
static struct rq_result *side_find_at(const struct side *s, const char *id, size_t *dups, size_t *at)
{
	size_t lo = 0, hi = s->n, end;

	/* Lower and upper bounds: byid holds equal ids in document order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(s->byid[mid]->id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	end = s->n;
	hi = lo;
	while (hi < end) {
		size_t mid = hi + (end - hi) / 2;

		if (strcmp(s->byid[mid]->id, id) <= 0)
			hi = mid + 1;
		else
			end = mid;
	}
	*dups = hi > lo ? hi - lo - 1 : 0;
	*at = lo;
	return hi > lo ? s->byid[lo] : NULL;
}

static const char *row_fact(const struct rq_result *r, const char *key)
{
	for (size_t i = 0; i < r->nfacts; i++)
		if (!strcmp(r->facts[i].key, key))
			return r->facts[i].value;
	return NULL;
}

static const char *run_fact(const struct side *s, const char *key)
{
	return rq_run_doc_fact(s->doc, key);
}

/*
 * What identifies a row's HCA: its own facts, else a fact another row of
 * the same run recorded for the same device (the driver kind records the
 * model once, on its own row), else a run fact "<key>:<device>".
 */
static const char *const hca_keys[3] = { "hca_model", "model", "board_id" };

static int devfacts_cmp(const void *a, const void *b)
{
	return strcmp(((const struct devfacts *)a)->device, ((const struct devfacts *)b)->device);
}

static const char *hca_fact(const struct side *s, const struct rq_result *r, size_t ki)
{
	const char *key = hca_keys[ki], *v = row_fact(r, key);
	struct devfacts probe = { .device = r->device }, *d;
	char *rk;

	if (v || !r->device)
		return v;
	d = bsearch(&probe, s->devs, s->ndevs, sizeof(*s->devs), devfacts_cmp);
	if (d && d->v[ki])
		return d->v[ki];
	rk = xasprintf("%s:%s", key, r->device);
	v = run_fact(s, rk);
	free(rk);
	return v;
}

static struct cmp_finding *add(struct cmp_report *rep, enum cmp_type t, const char *row,
			       const char *name, const char *before, const char *after)
{
	struct cmp_finding *f;

	if (rep->n % 32 == 0)
		rep->v = xrealloc(rep->v, (rep->n + 32) * sizeof(*rep->v));
	f = &rep->v[rep->n++];
	*f = (struct cmp_finding){
		.type = t,
		.row = row ? xstrdup(row) : NULL,
		.name = name ? xstrdup(name) : NULL,
		.before = before ? xstrdup(before) : NULL,
		.after = after ? xstrdup(after) : NULL,
		.vbefore = NAN, .vafter = NAN, .change_pct = NAN, .tol_pct = NAN,
		.lo_pct = NAN, .hi_pct = NAN, .half_pct = NAN, .p_value = NAN, .confidence = NAN,
	};
	rep->count[t]++;
	return f;
}

static void regress(struct cmp_report *rep, struct cmp_finding *f)
{
	f->regression = true;
	rep->regressions++;
}

static void set_msg(struct cmp_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_msg(struct cmp_finding *f, const char *fmt, ...)
{
	struct sb sb = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(f->msg);
	f->msg = sb_detach(&sb);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Facts, sorted by key so the output does not depend on the order a run
 * happened to record them.  get(ctx, key) returns a value or NULL.
 */
static void diff_facts(struct cmp_report *rep, const char *row, const char **keys, size_t nkeys,
		       const char *(*get)(const void *, const char *), const void *b, const void *a)
{
	qsort(keys, nkeys, sizeof(*keys), str_cmp);
	for (size_t i = 0; i < nkeys; i++) {
		const char *vb, *va;

		if (i && !strcmp(keys[i], keys[i - 1]))
			continue;
		vb = get(b, keys[i]);
		va = get(a, keys[i]);
		if (vb && va && !strcmp(vb, va))
			continue;
		add(rep, CMP_FACT, row, keys[i], vb, va);
	}
}

static const char *get_row_fact(const void *r, const char *key)
{
	return row_fact(r, key);
}

static const char *get_run_fact(const void *s, const char *key)
{
	return run_fact(s, key);
}

static void diff_run_facts(struct cmp_report *rep, const struct side *b, const struct side *a)
{
	const char **keys = xcalloc(b->doc->nfacts + a->doc->nfacts + 1, sizeof(*keys));
	size_t nk = 0;

	for (size_t i = 0; i < b->doc->nfacts; i++)
		keys[nk++] = b->doc->facts[i].key;
	for (size_t i = 0; i < a->doc->nfacts; i++)
		keys[nk++] = a->doc->facts[i].key;
	diff_facts(rep, NULL, keys, nk, get_run_fact, b, a);
	free(keys);
}

static void diff_row_facts(struct cmp_report *rep, const struct rq_result *b, const struct rq_result *a)
{
	const char **keys = xcalloc(b->nfacts + a->nfacts + 1, sizeof(*keys));
	size_t nk = 0;

	for (size_t i = 0; i < b->nfacts; i++)
		keys[nk++] = b->facts[i].key;
	for (size_t i = 0; i < a->nfacts; i++)
		keys[nk++] = a->facts[i].key;
	diff_facts(rep, a->id, keys, nk, get_row_fact, b, a);
	free(keys);
}

static char *fig_text(const struct rq_figure *f)
{
	if (!isfinite(f->value))
		return xstrdup("(no value)");
	if (f->unit && *f->unit)
		return xasprintf("%.10g %s", f->value, f->unit);
	return xasprintf("%.10g", f->value);
}

static bool same_unit(const char *x, const char *y)
{
	return !strcmp(x ? x : "", y ? y : "");
}

static struct cmp_finding *add_fig(struct cmp_report *rep, enum cmp_type t, const char *row,
				   const struct rq_figure *fb, const struct rq_figure *fa)
{
	char *tb = fb ? fig_text(fb) : NULL, *ta = fa ? fig_text(fa) : NULL;
	const struct rq_figure *any = fa ? fa : fb;
	struct cmp_finding *f = add(rep, t, row, any->name, tb, ta);

	free(tb);
	free(ta);
	f->vbefore = fb && isfinite(fb->value) ? fb->value : NAN;
	f->vafter = fa && isfinite(fa->value) ? fa->value : NAN;
	f->unit = xstrdup(any->unit ? any->unit : "");
	f->dir = cmp_direction(any->name, any->unit);
	return f;
}

/* Append one row's samples of a figure: its repeats (a merged document's spread), else its value. */
static void row_samples(const struct rq_result *r, const char *name, double **out, size_t *n)
{
	for (size_t i = 0; i < r->nfigs; i++) {
		const struct rq_spread *sp = r->figs[i].spread;

		if (strcmp(r->figs[i].name, name))
			continue;
		if (sp && sp->nsamples) {
			*out = xrealloc(*out, (*n + sp->nsamples) * sizeof(**out));
			memcpy(*out + *n, sp->samples, sp->nsamples * sizeof(**out));
			*n += sp->nsamples;
		} else if (isfinite(r->figs[i].value)) {
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[(*n)++] = r->figs[i].value;
		}
		return;	/* a repeated name: the first one counts */
	}
}

size_t cmp_figure_samples(const struct rq_run_doc *doc, const char *row, const char *figure, double **out)
{
	size_t n = 0;

	*out = NULL;
	for (size_t i = 0; i < doc->n; i++)
		if (!strcmp(doc->rows[i]->id, row))
			row_samples(doc->rows[i], figure, out, &n);
	return n;
}

/* A side's samples of a figure over every row with this id (repeated rows). */
static size_t side_samples(const struct side *s, const char *id, const char *name, double **out)
{
	size_t dups, at, n = 0;

	*out = NULL;
	if (!side_find_at(s, id, &dups, &at))
		return 0;
	for (size_t k = at; k <= at + dups; k++)
		row_samples(s->rows[s->byid_pos[k]], name, out, &n);
	return n;
}

/* A figure judged with its noise once every figure of the comparison is known (Bonferroni). */
struct pending {
	size_t finding;
	double *b, *a;
	size_t nb, na;
};

struct judging {
	const struct side *sb, *sa;
	struct pending *v;
	size_t n;
};

static void set_type(struct cmp_report *rep, struct cmp_finding *f, enum cmp_type t)
{
	rep->count[f->type]--;
	f->type = t;
	rep->count[t]++;
}

/* The point change against the tolerance: one value a side, or --absolute. */
static void judge_point(struct cmp_report *rep, struct cmp_finding *f, double tol)
{
	double better = f->change_pct * (double)f->dir;

	f->method = "absolute";
	if (better < -(tol + TOL_EPS)) {
		set_type(rep, f, CMP_FIG_WORSE);
		regress(rep, f);
		set_msg(f, "%s is better; worse by %.1f%% (tolerance %g%%)", cmp_dir_name(f->dir), -better, tol);
	} else if (better > tol + TOL_EPS) {
		set_type(rep, f, CMP_FIG_BETTER);
		set_msg(f, "%s is better; better by %.1f%%", cmp_dir_name(f->dir), better);
	} else {
		set_type(rep, f, CMP_FIG_SAME);
	}
}

/*
 * Is name one of the key figures of a row: its case's judge: globs when it
 * has them, else its kind's (rq_kind.key_figures)?  A kind this program
 * does not know, or one that names none, has every figure key.
 */
bool cmp_key_figure(const char *kind, const char *judge, const char *name)
{
	const struct rq_kind *k = kind ? rq_kind_find(kind) : NULL;
	const char *p = judge;

	if (!p && (!k || !k->key_figures))
		return true;
	for (p = p ? p : k->key_figures; *p;) {
		size_t len = strcspn(p, " ");
		char glob[64];

		if (len && len < sizeof(glob)) {
			memcpy(glob, p, len);
			glob[len] = 0;
			if (!fnmatch(glob, name, 0))
				return true;
		}
		p += len;
		p += strspn(p, " ");
	}
	return false;
}

/* Compare one figure present on both rows.  why_not: set when the rows' targets or HCAs differ. */
static void judge_fig(struct cmp_report *rep, const struct cmp_opts *o, struct judging *jg, const char *row,
		      const char *kind, const char *judge, const struct rq_figure *fb, const struct rq_figure *fa, const char *why_not)
{
	struct cmp_finding *f;
	double tol, *xb = NULL, *xa = NULL;
	size_t nb, na;

	if (!same_unit(fb->unit, fa->unit)) {
		f = add_fig(rep, CMP_FIG_UNJUDGED, row, fb, fa);
		set_msg(f, "unit changed (%s -> %s)", fb->unit && *fb->unit ? fb->unit : "none",
			fa->unit && *fa->unit ? fa->unit : "none");
		return;
	}
	f = add_fig(rep, CMP_FIG_UNJUDGED, row, fb, fa);
	if (isfinite(f->vbefore) && isfinite(f->vafter)) {
		if (f->vbefore != 0)
			f->change_pct = (f->vafter - f->vbefore) / fabs(f->vbefore) * 100.0;
		else if (f->vafter == 0)
			f->change_pct = 0;
	}
	if (why_not) {
		set_msg(f, "not judged: %s", why_not);
		return;
	}
	if (f->dir == CMP_DIR_UNKNOWN) {
		set_msg(f, "not judged: direction unknown (unit \"%s\")", f->unit);
		return;
	}
	if (!o->all_figures && !cmp_key_figure(kind, judge, f->name)) {
		if (judge)
			set_msg(f, "not judged: not a key figure of the case (judge: %s; --all-figures judges it)",
				judge);
		else
			set_msg(f, "not judged: not a key figure of %s (--all-figures judges it)", kind);
		return;
	}
	if (!isfinite(f->vbefore) || !isfinite(f->vafter)) {
		set_msg(f, "not judged: no value %s", !isfinite(f->vbefore) ? "before" : "after");
		return;
	}
	if (!isfinite(f->change_pct)) {
		set_msg(f, "not judged: before is 0, no relative change");
		return;
	}
	tol = cmp_tolerance_for(o, f->name);
	f->tol_pct = tol;
	nb = side_samples(jg->sb, row, f->name, &xb);
	na = side_samples(jg->sa, row, f->name, &xa);
	f->nb = nb;
	f->na = na;
	if (o->absolute || (nb < 2 && na < 2 && o->single_absolute) || !nb || !na) {
		free(xb);
		free(xa);
		judge_point(rep, f, tol);
		return;
	}
	jg->v = xrealloc(jg->v, (jg->n + 1) * sizeof(*jg->v));
	jg->v[jg->n++] = (struct pending){ .finding = (size_t)(f - rep->v), .b = xb, .a = xa, .nb = nb, .na = na };
}

/* The figures that have noise to go on, judged at the comparison's shared confidence. */
static void judge_pending(struct cmp_report *rep, const struct cmp_opts *o, struct judging *jg)
{
	size_t m = 0;

	for (size_t i = 0; i < jg->n; i++)
		m += jg->v[i].nb > 1 || jg->v[i].na > 1;
	for (size_t i = 0; i < jg->n; i++) {
		struct pending *p = &jg->v[i];
		struct cmp_finding *f = &rep->v[p->finding];
		struct rq_judge_opts jo = { .tol_pct = f->tol_pct, .dir = f->dir,
					    .confidence = 1 - (1 - o->confidence) / (double)(m ? m : 1) };
		struct rq_judgement j;
		char why[200];

		f->confidence = jo.confidence;
		if (rq_change_judge(p->b, p->nb, p->a, p->na, &jo, &j, why, sizeof(why))) {
			f->tol_pct = NAN;
			set_msg(f, "not judged: %s", why);
			goto next;
		}
		f->vbefore = j.mb;
		f->vafter = j.ma;
		f->change_pct = j.change_pct;
		f->lo_pct = j.lo_pct;
		f->hi_pct = j.hi_pct;
		f->half_pct = j.half_pct;
		f->p_value = j.p_value;
		f->need_n = j.need_n;
		f->decide_n = j.decide_n;
		f->method = j.borrowed ? "bootstrap, one side's noise borrowed" : "bootstrap";
		free(f->before);
		free(f->after);
		f->before = *f->unit ? xasprintf("%.10g %s", j.mb, f->unit) : xasprintf("%.10g", j.mb);
		f->after = *f->unit ? xasprintf("%.10g %s", j.ma, f->unit) : xasprintf("%.10g", j.ma);
		double worse = -(double)f->dir * j.change_pct;

		switch (j.outcome) {
		case RQ_OUT_WORSE:
			set_type(rep, f, CMP_FIG_WORSE);
			regress(rep, f);
			set_msg(f, "%s is better; worse by %.1f%% (tolerance %g%%), %.4g%% interval %+.1f%%..%+.1f%% "
				"at n=%zu/%zu", cmp_dir_name(f->dir), worse, f->tol_pct, jo.confidence * 100,
				j.lo_pct, j.hi_pct, j.nb, j.na);
			break;
		case RQ_OUT_BETTER:
			set_type(rep, f, CMP_FIG_BETTER);
			set_msg(f, "%s is better; better by %.1f%%, %.4g%% interval %+.1f%%..%+.1f%% at n=%zu/%zu",
				cmp_dir_name(f->dir), -worse, jo.confidence * 100, j.lo_pct, j.hi_pct, j.nb, j.na);
			break;
		case RQ_OUT_SAME:
			set_type(rep, f, CMP_FIG_SAME);
			set_msg(f, "within %g%%: %.4g%% interval %+.1f%%..%+.1f%% at n=%zu/%zu", f->tol_pct,
				jo.confidence * 100, j.lo_pct, j.hi_pct, j.nb, j.na);
			break;
		case RQ_OUT_UNSURE:
			set_type(rep, f, CMP_FIG_UNSURE);
			if (o->strict)
				regress(rep, f);
			if (isfinite(j.half_pct))
				set_msg(f, "inconclusive: %+.1f%% \u00b1%.0f%% at n=%zu/%zu (%.4g%% interval %+.1f%%..%+.1f%%); "
					"about %u%s repeats a side would resolve a %g%% change", j.change_pct, j.half_pct,
					j.nb, j.na, jo.confidence * 100, j.lo_pct, j.hi_pct, j.need_n,
					j.need_n >= RQ_STATS_MAX_NEED ? "+" : "", f->tol_pct);
			else
				set_msg(f, "inconclusive: %+.1f%% with no noise measured (n=%zu/%zu)", j.change_pct, j.nb,
					j.na);
			break;
		}
next:
		free(p->b);
		free(p->a);
	}
	free(jg->v);
	jg->v = NULL;
	jg->n = 0;
}

static void diff_figs(struct cmp_report *rep, const struct cmp_opts *o, struct judging *jg,
		      const struct rq_result *b, const struct rq_result *a, const char *why_not)
{
	for (size_t i = 0; i < b->nfigs; i++) {
		const struct rq_figure *fb = &b->figs[i], *fa = rq_result_figure(a, fb->name);

		if (rq_result_figure(b, fb->name) != fb)
			continue;	/* a repeated name: the first one counts */
		if (fa) {
			judge_fig(rep, o, jg, a->id, a->kind ? a->kind : b->kind, a->judge ? a->judge : b->judge, fb, fa,
				  why_not);
		} else {
			struct cmp_finding *f = add_fig(rep, CMP_FIG_ONE_SIDE, a->id, fb, NULL);

			set_msg(f, "only before");
		}
	}
	for (size_t i = 0; i < a->nfigs; i++) {
		const struct rq_figure *fa = &a->figs[i];

		if (rq_result_figure(a, fa->name) != fa || rq_result_figure(b, fa->name))
			continue;
		set_msg(add_fig(rep, CMP_FIG_ONE_SIDE, a->id, NULL, fa), "only after");
	}
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* The verdict transition of a matched row. */
static void diff_verdict(struct cmp_report *rep, const struct cmp_opts *o, const struct rq_result *b,
			 const struct rq_result *a)
{
	const char *vb = rq_verdict_name(b->verdict), *va = rq_verdict_name(a->verdict);
	struct cmp_finding *f;

	if (b->verdict == a->verdict) {
		if (a->verdict != RQ_PASS && strcmp(nz(b->reason), nz(a->reason))) {
			f = add(rep, CMP_REASON, a->id, NULL, vb, va);
			set_msg(f, "%s (was: %s)", nz(a->reason), nz(b->reason));
		}
		return;
	}
	if (b->verdict == RQ_PASS && (a->verdict == RQ_FAIL || a->verdict == RQ_ERROR || a->verdict == RQ_NONE)) {
		f = add(rep, CMP_REGRESSED, a->id, NULL, vb, va);
		regress(rep, f);
	} else if (b->verdict == RQ_PASS && a->verdict == RQ_SKIP) {
		f = add(rep, CMP_NEW_SKIP, a->id, NULL, vb, va);
		if (!o->allow_new_skips)
			regress(rep, f);
	} else if (a->verdict == RQ_PASS && (b->verdict == RQ_FAIL || b->verdict == RQ_ERROR)) {
		f = add(rep, CMP_FIXED, a->id, NULL, vb, va);
	} else {
		f = add(rep, CMP_VERDICT, a->id, NULL, vb, va);
	}
	f->msg = xstrdup(a->reason ? a->reason : "");
}

/* Why the figures of two matched rows cannot be compared, or NULL. */
static char *incomparable(struct cmp_report *rep, const struct side *sb, const struct side *sa,
			  const struct rq_result *b, const struct rq_result *a)
{
	if (b->target && a->target && strcmp(b->target, a->target)) {
		char *why = xasprintf("targets differ (before %s, after %s)", b->target, a->target);

		set_msg(add(rep, CMP_WARNING, a->id, "target", b->target, a->target), "%s", why);
		return why;
	}
	for (size_t i = 0; i < ARRAY_SIZE(hca_keys); i++) {
		const char *hb = hca_fact(sb, b, i), *ha = hca_fact(sa, a, i);

		if (hb && ha && strcmp(hb, ha)) {
			char *why = xasprintf("HCA %s differs (before %s, after %s)", hca_keys[i], hb, ha);

			set_msg(add(rep, CMP_WARNING, a->id, hca_keys[i], hb, ha), "%s", why);
			return why;
		}
	}
	return NULL;
}

static void run_info(struct cmp_run *ri, const struct side *s)
{
	const struct rq_run_head *h = &s->doc->run;
	const char *by = rq_run_doc_fact(s->doc, "sysroot.synthesized_by");

	ri->rows = s->n;
	ri->complete = false;
	if (!s->doc->has_run)
		return;
	ri->id = h->id ? xstrdup(h->id) : NULL;
	ri->hostname = h->hostname ? xstrdup(h->hostname) : NULL;
	ri->started = h->started ? xstrdup(h->started) : NULL;
	ri->complete = h->complete;
	ri->synthesized = h->synthesized;
	if (ri->synthesized && by)
		ri->synthesized_by = xstrdup(by);
}

int cmp_check_doc(json_t *doc, char *err, size_t errsz)
{
	struct rq_run_doc d;
	int ret;

	cmp_doc_init(&d, RQ_RUN_DOC_COMPACT);
	rq_run_doc_from_json(&d, doc);
	ret = rq_run_doc_check(&d, err, errsz);
	rq_run_doc_release(&d);
	return ret;
}

/*
 * The row whose verdict stands for an id: the first, or of the rounds of a
 * run --repeat (rows with .repeat) the worst, so that a round that failed
 * is not hidden behind one that passed.
 */
static const struct rq_result *side_verdict_row(const struct side *s, const struct rq_result *first)
{
	const struct rq_result *w = first;
	size_t dups, at;

	if (!first->repeat || !side_find_at(s, first->id, &dups, &at))
		return first;
	for (size_t k = at; k <= at + dups; k++) {
		const struct rq_result *r = s->byid[k];

		if (r->repeat && rq_verdict_rank(r->verdict) > rq_verdict_rank(w->verdict))
			w = r;
	}
	return w;
}

static void warn_dups(struct cmp_report *rep, const struct side *s, const char *which)
{
	for (size_t i = 0; i + 1 < s->n; i++) {
		if (strcmp(s->byid[i]->id, s->byid[i + 1]->id) || (i && !strcmp(s->byid[i - 1]->id, s->byid[i]->id)))
			continue;
		/* the rounds of run --repeat: repeated on purpose */
		if (s->byid[i]->repeat && s->byid[i + 1]->repeat)
			continue;
		set_msg(add(rep, CMP_WARNING, s->byid[i]->id, NULL, NULL, NULL),
			"row id appears more than once %s (repeated rows): the first one's verdict is compared, "
			"its figures are judged over all of them", which);
	}
}

int cmp_compare(json_t *before, json_t *after, const struct cmp_opts *o, struct cmp_report *rep,
		char *err, size_t errsz)
{
	struct rq_run_doc b, a;
	int ret;

	cmp_doc_init(&b, RQ_RUN_DOC_COMPACT);
	cmp_doc_init(&a, RQ_RUN_DOC_COMPACT);
	rq_run_doc_from_json(&b, before);
	rq_run_doc_from_json(&a, after);
	ret = cmp_compare_docs(&b, &a, o, rep, err, errsz);
	rq_run_doc_release(&b);
	rq_run_doc_release(&a);
	return ret;
}

int cmp_compare_docs(const struct rq_run_doc *before, const struct rq_run_doc *after,
		     const struct cmp_opts *o, struct cmp_report *rep, char *err, size_t errsz)
{
	struct side sb, sa;
	struct judging jg = { .sb = &sb, .sa = &sa };
	char why[400];
	size_t dups;

	memset(rep, 0, sizeof(*rep));
	if (side_load(&sb, before, why, sizeof(why))) {
		snprintf(err, errsz, "before: %s", why);
		return -EINVAL;
	}
	if (side_load(&sa, after, why, sizeof(why))) {
		snprintf(err, errsz, "after: %s", why);
		side_release(&sb);
		return -EINVAL;
	}
	run_info(&rep->before, &sb);
	run_info(&rep->after, &sa);
	if (!rep->before.complete)
		set_msg(add(rep, CMP_WARNING, NULL, NULL, NULL, NULL),
			"the before run is incomplete (killed or still running)");
	if (!rep->after.complete)
		set_msg(add(rep, CMP_WARNING, NULL, NULL, NULL, NULL),
			"the after run is incomplete (killed or still running): rows it never reached count as missing");
	if (rep->before.hostname && rep->after.hostname && strcmp(rep->before.hostname, rep->after.hostname))
		set_msg(add(rep, CMP_WARNING, NULL, "hostname", rep->before.hostname, rep->after.hostname),
			"the runs are from different hosts (before %s, after %s)", rep->before.hostname,
			rep->after.hostname);
	warn_dups(rep, &sb, "before");
	warn_dups(rep, &sa, "after");
	diff_run_facts(rep, &sb, &sa);

	/* Rows in the before run's order, then the after run's new rows. */
	for (size_t i = 0; i < sb.n; i++) {
		const struct rq_result *b = sb.rows[i], *a;
		char *why_not;

		if (side_find(&sb, b->id, &dups) != b)
			continue;
		a = side_find(&sa, b->id, &dups);
		if (!a) {
			struct cmp_finding *f = add(rep, b->verdict == RQ_PASS ? CMP_MISSING : CMP_GONE,
						    b->id, NULL, rq_verdict_name(b->verdict), NULL);

			if (f->type == CMP_MISSING) {
				regress(rep, f);
				f->msg = xstrdup("passed before, no such row after");
			} else {
				f->msg = xstrdup("no such row after");
			}
			continue;
		}
		rep->matched++;
		diff_verdict(rep, o, side_verdict_row(&sb, b), side_verdict_row(&sa, a));
		why_not = incomparable(rep, &sb, &sa, b, a);
		diff_figs(rep, o, &jg, b, a, why_not);
		free(why_not);
		diff_row_facts(rep, b, a);
	}
	for (size_t i = 0; i < sa.n; i++) {
		const struct rq_result *a = sa.rows[i];

		if (side_find(&sa, a->id, &dups) != a || side_find(&sb, a->id, &dups))
			continue;
		add(rep, CMP_NEW_ROW, a->id, NULL, NULL, rq_verdict_name(a->verdict))->msg =
			xstrdup(a->reason ? a->reason : "");
	}
	judge_pending(rep, o, &jg);
	side_release(&sb);
	side_release(&sa);
	return 0;
}

static void run_release(struct cmp_run *r)
{
	free(r->id);
	free(r->hostname);
	free(r->started);
	free(r->synthesized_by);
}

void cmp_report_release(struct cmp_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		struct cmp_finding *f = &rep->v[i];

		free(f->row);
		free(f->name);
		free(f->before);
		free(f->after);
		free(f->unit);
		free(f->msg);
	}
	free(rep->v);
	run_release(&rep->before);
	run_release(&rep->after);
	memset(rep, 0, sizeof(*rep));
}

static json_t *run_json(const struct cmp_run *r)
{
	return json_pack("{s:o, s:o, s:o, s:b, s:I, s:b}", "id", rq_json_text(r->id),
			 "hostname", rq_json_text(r->hostname), "started", rq_json_text(r->started),
			 "complete", r->complete, "rows", (json_int_t)r->rows, "synthesized", r->synthesized);
}

static bool is_figure(enum cmp_type t)
{
	return t >= CMP_FIG_WORSE && t <= CMP_FIG_UNSURE;
}

json_t *cmp_report_json(const struct cmp_report *rep, const struct cmp_opts *o)
{
	json_t *root = json_object(), *opts = json_object(), *tols = json_array();
	json_t *counts = json_object(), *arr = json_array();

	json_object_set_new(root, "schema", json_string(RQ_COMPARE_SCHEMA));
	json_object_set_new(root, "before", run_json(&rep->before));
	json_object_set_new(root, "after", run_json(&rep->after));
	json_object_set_new(opts, "tolerance_pct", json_real(o->tol_pct));
	for (size_t i = 0; i < o->ntols; i++)
		json_array_append_new(tols, json_pack("{s:o, s:f}", "glob", rq_json_text(o->tols[i].glob),
						      "pct", o->tols[i].pct));
	json_object_set_new(opts, "tolerances", tols);
	json_object_set_new(opts, "allow_new_skips", json_boolean(o->allow_new_skips));
	json_object_set_new(opts, "confidence", json_real(o->confidence));
	json_object_set_new(opts, "absolute", json_boolean(o->absolute));
	json_object_set_new(opts, "all_figures", json_boolean(o->all_figures));
	json_object_set_new(opts, "single_runs", json_string(o->absolute || o->single_absolute ? "absolute"
							      : "inconclusive"));
	json_object_set_new(opts, "strict", json_boolean(o->strict));
	json_object_set_new(root, "options", opts);
	json_object_set_new(root, "regressions", json_integer(rep->regressions));
	json_object_set_new(counts, "matched", json_integer((json_int_t)rep->matched));
	for (int t = 0; t < CMP_NTYPES; t++)
		json_object_set_new(counts, type_names[t], json_integer(rep->count[t]));
	json_object_set_new(root, "counts", counts);
	for (size_t i = 0; i < rep->n; i++) {
		const struct cmp_finding *f = &rep->v[i];
		json_t *j = json_object();

		json_object_set_new(j, "type", json_string(type_names[f->type]));
		json_object_set_new(j, "regression", json_boolean(f->regression));
		json_object_set_new(j, "row", rq_json_text(f->row));
		json_object_set_new(j, "name", rq_json_text(f->name));
		json_object_set_new(j, "before", rq_json_text(f->before));
		json_object_set_new(j, "after", rq_json_text(f->after));
		if (is_figure(f->type)) {
			const char *d = cmp_dir_name(f->dir);

			json_object_set_new(j, "before_value", rq_json_num(f->vbefore));
			json_object_set_new(j, "after_value", rq_json_num(f->vafter));
			json_object_set_new(j, "unit", rq_json_text(f->unit));
			json_object_set_new(j, "change_pct", rq_json_num(f->change_pct));
			json_object_set_new(j, "tolerance_pct", rq_json_num(f->tol_pct));
			json_object_set_new(j, "better", d ? json_string(d) : json_null());
			if (f->nb || f->na) {
				json_object_set_new(j, "n_before", json_integer((json_int_t)f->nb));
				json_object_set_new(j, "n_after", json_integer((json_int_t)f->na));
				json_object_set_new(j, "method", rq_json_text(f->method));
				json_object_set_new(j, "confidence", rq_json_num(f->confidence));
				json_object_set_new(j, "interval_pct", isfinite(f->lo_pct) ?
						    json_pack("[f, f]", f->lo_pct, f->hi_pct) : json_null());
				json_object_set_new(j, "half_width_pct", rq_json_num(f->half_pct));
				json_object_set_new(j, "p_value", rq_json_num(f->p_value));
				json_object_set_new(j, "repeats_needed", f->need_n ? json_integer(f->need_n) : json_null());
			}
		}
		json_object_set_new(j, "message", rq_json_text(f->msg));
		json_array_append_new(arr, j);
	}
	json_object_set_new(root, "findings", arr);
	return root;
}
