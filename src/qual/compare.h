/* SPDX-License-Identifier: MIT */
/*
 * compare: the judgement behind `rdmaqual compare BEFORE AFTER`, used to
 * qualify a driver or firmware upgrade (docs/compare.md).  Two parsed
 * results.json documents (schema "rdmaqual-results/1") go in, a list of
 * findings comes out.  Pure logic: no files, no printing, so the unit tests
 * drive it with documents built in memory and the CLI
 * (harness/cli/compare.c) does the reading and the rendering.
 */
#ifndef RQ_COMPARE_H
#define RQ_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#define RQ_COMPARE_SCHEMA "rdmaqual-compare/1"
#define RQ_COMPARE_INPUT_SCHEMA "rdmaqual-results/1"	/* = RQ_RESULTS_SCHEMA */
#define RQ_COMPARE_DEFAULT_TOL 5.0			/* percent */

struct json_t;

/* A per-figure tolerance: figure names matching glob (fnmatch) get pct. */
struct cmp_tol {
	char *glob;
	double pct;
};

struct cmp_opts {
	double tol_pct;			/* default tolerance, percent */
	struct cmp_tol *tols;		/* overrides; the last matching one wins */
	size_t ntols;
	bool allow_new_skips;		/* PASS -> SKIP is reported, not a regression */
	/*
	 * Noise (qual/stats.h).  Figures with repeats on a side (a merged
	 * document's "spread": {"samples": [...]}, or a row id repeated in a
	 * run) are judged with a bootstrap interval at this confidence, shared
	 * by all the judged figures of the comparison (Bonferroni: m figures
	 * get 1 - (1 - confidence) / m each).
	 */
	double confidence;		/* (0.5, 0.999), default 0.95 */
	bool absolute;			/* judge the point change alone, even with repeats */
	bool single_absolute;		/* one value a side: point change (compare's default) */
	bool strict;			/* an inconclusive figure is a regression */
	/*
	 * Judge every figure with a direction, not only the key figures of
	 * the row's kind (rq_kind.key_figures; the others are reported).
	 */
	bool all_figures;
};

void cmp_opts_init(struct cmp_opts *o);
void cmp_opts_release(struct cmp_opts *o);
/*
 * One --tolerance argument: "PCT" sets the default, "GLOB=PCT" adds an
 * override; PCT may end in '%'.  Returns 0 or -EINVAL with a reason.
 */
int cmp_opts_tolerance(struct cmp_opts *o, const char *arg, char *err, size_t errsz);
double cmp_tolerance_for(const struct cmp_opts *o, const char *figure);
/* --confidence C: 0.5 < C < 0.999 ("0.95" or "95%").  0 or -EINVAL with a reason. */
int cmp_opts_confidence(struct cmp_opts *o, const char *arg, char *err, size_t errsz);

/*
 * Which way a figure is better, from its unit first (".../s" higher; ns, us,
 * ms lower), then from its name (bw, bandwidth, rate: higher; lat, latency:
 * lower).  Unknown figures are reported, never judged.
 */
enum cmp_dir { CMP_DIR_UNKNOWN = 0, CMP_HIGHER = 1, CMP_LOWER = -1 };
enum cmp_dir cmp_direction(const char *name, const char *unit);
/*
 * Is figure name judged by default in a row: one of its case's judge: globs
 * (space-separated) when judge is not NULL, else one of its kind's
 * key_figures globs, or any figure when the kind names none or is unknown.
 */
bool cmp_key_figure(const char *kind, const char *judge, const char *name);
const char *cmp_dir_name(enum cmp_dir d);	/* "higher", "lower", NULL */

enum cmp_type {
	CMP_REGRESSED,		/* PASS -> FAIL or ERROR */
	CMP_MISSING,		/* PASS before, no such row after */
	CMP_NEW_SKIP,		/* PASS -> SKIP (a regression unless allowed) */
	CMP_FIXED,		/* FAIL or ERROR -> PASS */
	CMP_VERDICT,		/* any other verdict change (SKIP -> FAIL, FAIL -> ERROR, ...) */
	CMP_NEW_ROW,		/* no such row before */
	CMP_GONE,		/* a row that did not PASS before is gone */
	CMP_REASON,		/* same non-PASS verdict, another reason */
	CMP_FIG_WORSE,		/* worse by more than the tolerance: a regression */
	CMP_FIG_BETTER,		/* better by more than the tolerance */
	CMP_FIG_SAME,		/* judged, within the tolerance */
	CMP_FIG_UNJUDGED,	/* reported only; msg says why */
	CMP_FIG_ONE_SIDE,	/* the figure exists on one side only */
	CMP_FIG_UNSURE,		/* judged, too noisy to tell (a regression with strict) */
	CMP_FACT,		/* an environment fact changed, appeared or went */
	CMP_WARNING,		/* the comparison itself is weak; msg says why */
	CMP_NTYPES
};
const char *cmp_type_name(enum cmp_type t);	/* "regressed", "fig_worse", ... */

struct cmp_finding {
	enum cmp_type type;
	bool regression;
	char *row;		/* row id; NULL for run-level findings */
	char *name;		/* figure or fact name; NULL for row findings */
	char *before, *after;	/* verdict, fact value or "value unit"; NULL = absent */
	double vbefore, vafter;	/* figures: values, NAN when absent or not finite */
	char *unit;		/* figures: the after unit (before when only before) */
	double change_pct;	/* figures: (after - before) / |before| * 100, or NAN */
	double tol_pct;		/* figures: tolerance applied, NAN when not judged */
	enum cmp_dir dir;	/* figures */
	char *msg;		/* one line: after's reason, why not judged, a warning */
	/* figures judged with their noise (qual/stats.h); n 0 when not judged */
	size_t nb, na;		/* samples a side */
	double lo_pct, hi_pct;	/* interval of change_pct, NAN without one */
	double half_pct;	/* its half-width */
	double p_value;		/* Mann-Whitney, NAN under n=2 a side */
	double confidence;	/* of this figure's interval (after Bonferroni) */
	unsigned need_n;	/* repeats a side to resolve a change of the tolerance's size */
	unsigned decide_n;	/* repeats a side that would likely decide this change as measured */
	const char *method;	/* "absolute", "bootstrap", "bootstrap, one side's noise borrowed" */
};

struct cmp_run {
	char *id, *hostname, *started;
	bool complete;
	bool synthesized;	/* a replay of a synthesized tree: a fixture's verdicts */
	char *synthesized_by;
	size_t rows;
};

struct cmp_report {
	struct cmp_finding *v;
	size_t n;
	struct cmp_run before, after;
	size_t matched;		/* row ids on both sides */
	unsigned regressions;	/* findings with .regression */
	unsigned count[CMP_NTYPES];
};

/*
 * Check that doc is a results.json this code reads: an object whose
 * "schema" is RQ_COMPARE_INPUT_SCHEMA, with a "results" array of valid rows
 * (rq_result_from_json, cmp_check_row) and string-valued "facts".  0 or
 * -EINVAL and a reason that says what is wrong.
 */
int cmp_check_doc(struct json_t *doc, char *err, size_t errsz);

/*
 * A results.json as compare reads it (core/run_doc.h): each row checked
 * with cmp_check_row; flags RQ_RUN_DOC_COMPACT cuts the rows to what
 * compare reads (two 112 MB files took 1.6 GB as trees), 0 keeps them
 * whole (for a page).  Use before rq_run_doc_load or _from_json.
 */
struct rq_run_doc;
struct rq_result;
void cmp_doc_init(struct rq_run_doc *d, unsigned flags);
/* A row compare cannot judge (a negative rate): 0 or -EINVAL and why. */
int cmp_check_row(const struct rq_result *r, char *err, size_t errsz);

/*
 * Compare two documents.  Returns 0 and fills rep (release with
 * cmp_report_release), or -EINVAL when either document fails
 * cmp_check_doc; err then starts with "before: " or "after: ".
 */
int cmp_compare(struct json_t *before, struct json_t *after, const struct cmp_opts *o,
		struct cmp_report *rep, char *err, size_t errsz);
/* The same on documents read with cmp_doc_init (compare.c streams results.json so). */
int cmp_compare_docs(const struct rq_run_doc *before, const struct rq_run_doc *after,
		     const struct cmp_opts *o, struct cmp_report *rep, char *err, size_t errsz);
void cmp_report_release(struct cmp_report *rep);

/*
 * One figure's samples on one side of a document: every row with this id
 * (repeated rows), each row's spread's samples or else its value.
 * Returns how many (0: none), *out malloc'd.
 */
size_t cmp_figure_samples(const struct rq_run_doc *doc, const char *row, const char *figure, double **out);

/* The "rdmaqual-compare/1" document (docs/compare.md), without input paths. */
struct json_t *cmp_report_json(const struct cmp_report *rep, const struct cmp_opts *o);

#endif
