/* SPDX-License-Identifier: MIT */
/*
 * Repeats of one run, folded into one results document, so `qualify
 * --repeat N` can hand compare.c one document per side and TCG noise does
 * not pass for a regression.  Pure logic on parsed results.json documents.
 */
#ifndef RQ_REPEAT_H
#define RQ_REPEAT_H

#include <stddef.h>

struct json_t;

/*
 * Merge n >= 1 results.json documents (each checked: rq_run_doc_check) of
 * the same cases into out (initialized here; release it).  out has the
 * rows of every document by id, in first-seen order:
 *   - the verdict is the worst one seen (ERROR > FAIL > SKIP > PASS), its
 *     reason that run's, plus " (over N runs: 2 PASS, 1 FAIL)" when the
 *     runs disagreed;
 *   - a numeric figure's value is the median of the runs that have it, and
 *     the figure gains a spread (core/result.h; "spread": {"n": k, "min":
 *     x, "max": y, "samples": [each run's value, in run order]} when
 *     written), which compare.c judges the change against (qual/stats.h);
 *   - run-wide facts are the first document's; its run is the first's with
 *     repeats n and complete only when every run was complete.
 * 0, or -EINVAL with err when a document is unreadable.
 */
struct rq_run_doc;
int rq_repeat_merge_docs(const struct rq_run_doc *const *docs, size_t n, struct rq_run_doc *out,
			 char *err, size_t errsz);
/* The same on parsed documents (checked as cmp_check_doc); a new document, or NULL with err. */
struct json_t *rq_repeat_merge(struct json_t *const *docs, size_t n, char *err, size_t errsz);

/* The median of v[0..n-1] (sorts v in place); NAN when n == 0. */
double rq_median(double *v, size_t n);

#endif
