/* SPDX-License-Identifier: MIT */
/*
 * Baselines: a lab's known-good figures, saved from a run and judged
 * against in later runs (`rdmaqual baseline save RUN FILE`, `rdmaqual run
 * --baseline FILE`; docs/upgrade.md).  An entry is keyed by case, target
 * and HCA model, not by host or device name, so the figures of one
 * known-good node judge every node with the same HCA.  Figures are judged
 * with compare.c's rules (direction from unit and name, tolerance in
 * percent); a case's own thresholds are judged by its kind as before.
 */
#ifndef RQ_BASELINE_H
#define RQ_BASELINE_H

#include <stddef.h>
#include "qual/compare.h"

#define RQ_BASELINE_SCHEMA "rdmaqual-baseline/1"

struct json_t;
struct rq_result;

struct rq_baseline {
	struct json_t *doc;	/* the file, checked */
	struct cmp_opts tol;	/* tolerances the file carries */
	char *path;
};

/*
 * The baseline document of one results.json document (cmp_check_doc'd;
 * parsed, read through core/run_doc.h):
 * every row with numeric figures, keyed by case, target and HCA model
 * ("rxe" for soft-RoCE, "-" when no fact names one).  Rows sharing a key
 * (two ports of one HCA) keep the median of each figure.  tol: the
 * tolerances to store (NULL: compare's default).
 */
struct json_t *rq_baseline_from_results(struct json_t *results, const struct cmp_opts *tol,
					const char *source);

/*
 * The same from several runs of the suite (known-good runs of one node, or
 * of several nodes with the same HCA): each figure keeps its median, and
 * where it has more than one value its n, min, max and samples, which
 * rq_baseline_judge judges a new value against (qual/stats.h).
 */
struct json_t *rq_baseline_from_runs(struct json_t *const *runs, size_t nruns, const struct cmp_opts *tol,
				     const char *source);
/* The same from documents read (core/run_doc.h, checked). */
struct rq_run_doc;
struct json_t *rq_baseline_from_docs(const struct rq_run_doc *const *runs, size_t nruns,
				     const struct cmp_opts *tol, const char *source);

/* Read and check a baseline file.  0, or -errno with err naming the file and what is wrong. */
int rq_baseline_load(struct rq_baseline *b, const char *path, char *err, size_t errsz);
void rq_baseline_release(struct rq_baseline *b);

/*
 * Judge a finished row: each figure the baseline has for the row's key is
 * compared, if it is one of the row's key figures (cmp_key_figure: the
 * case's judge:, else its kind's) or the file says "all_figures": true; worse by more than the tolerance turns a PASS into FAIL (the
 * reason names the figure, both values and the tolerance).  Every
 * judgement goes to the row's log; a fact "baseline" says how many figures
 * were judged.  Returns the number of figures judged.  model: the row's
 * HCA model (see rq_baseline_model), may be NULL.
 */
unsigned rq_baseline_judge(const struct rq_baseline *b, struct rq_result *r, const char *model);

/* A row's HCA model from its facts: hca_model, model, board_id; "rxe" for rxe devices. */
const char *rq_baseline_model(const struct rq_result *r);

#endif
