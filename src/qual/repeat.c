// SPDX-License-Identifier: MIT
/*
 * Folding the repeats of one run into one document (repeat.h).  Medians,
 * not means: one TCG hiccup in five runs moves a mean by 20 % of its size
 * and a median not at all.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/result.h"
#include "core/run_doc.h"
#include "core/util.h"
#include "qual/compare.h"
#include "qual/repeat.h"

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double rq_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A copy of r, every field (its spreads too): through its JSON, the one encoding that has them all. */
static struct rq_result *row_copy(const struct rq_result *r)
{
	json_t *j = rq_result_to_json(r, true);
	struct rq_result *c = rq_result_from_json(j, NULL, 0);

	json_decref(j);
	if (!c)
		abort();	/* a row read back is one rq_result_from_json took */
	return c;
}

/* Fold the figures of one row id over every document into out. */
static void merge_figures(struct rq_result *out, const struct rq_run_doc *const *docs, size_t n,
			  const char *id)
{
	double *v = xcalloc(n, sizeof(*v)), *samples = xcalloc(n, sizeof(*samples));

	for (size_t i = 0; i < out->nfigs; i++) {
		size_t k = 0;

		for (size_t d = 0; d < n; d++) {
			const struct rq_figure *g = rq_result_figure(rq_run_doc_find(docs[d], id), out->figs[i].name);

			if (g && isfinite(g->value))
				v[k++] = g->value;
		}
		if (!k)
			continue;
		/* In run order, before the median sorts them: compare judges the noise from these. */
		memcpy(samples, v, k * sizeof(*v));
		out->figs[i].value = rq_median(v, k);
		rq_figure_set_spread(out, i, k, v[0], v[k - 1], samples, k);
	}
	free(v);
	free(samples);
}

int rq_repeat_merge_docs(const struct rq_run_doc *const *docs, size_t n, struct rq_run_doc *out,
			 char *err, size_t errsz)
{
	bool complete = true;
	size_t nids = 0, cap = 0;
	const char **ids = NULL;
	unsigned c[4] = { 0 };

	rq_run_doc_init(out);
	if (!n) {
		snprintf(err, errsz, "no runs to merge");
		return -EINVAL;
	}
	for (size_t d = 0; d < n; d++) {
		char e[300];

		if (rq_run_doc_check(docs[d], e, sizeof(e))) {
			snprintf(err, errsz, "run %zu of %zu: %s", d + 1, n, e);
			free(ids);
			return -EINVAL;
		}
		complete = complete && docs[d]->run.complete;
		/* Every id, first-seen order: a row may be missing from a killed run. */
		for (size_t i = 0; i < docs[d]->n; i++) {
			const char *id = docs[d]->rows[i]->id;
			bool seen = rq_run_doc_find(docs[d], id) != docs[d]->rows[i];

			for (size_t j = 0; !seen && j < nids; j++)
				seen = !strcmp(ids[j], id);
			if (seen)
				continue;
			if (nids == cap) {
				cap = cap ? 2 * cap : 64;
				ids = xrealloc(ids, cap * sizeof(*ids));
			}
			ids[nids++] = id;
		}
	}

	/* The first run's head, read again: its run, facts and lab; what is merged is set below. */
	rq_run_doc_head(out, json_incref(docs[0]->head));
	rq_run_doc_results(out, true);
	out->rows = xcalloc(nids + 1, sizeof(*out->rows));
	out->cap = nids + 1;
	for (size_t i = 0; i < nids; i++) {
		const struct rq_result *worst = NULL;
		struct rq_result *row;
		unsigned cnt[4] = { 0 }, kinds = 0;

		for (size_t d = 0; d < n; d++) {
			const struct rq_result *x = rq_run_doc_find(docs[d], ids[i]);
			int rank;

			if (!x)
				continue;
			rank = rq_verdict_rank(x->verdict);
			if (!cnt[rank]++)
				kinds++;
			if (!worst || rank > rq_verdict_rank(worst->verdict))
				worst = x;
		}
		row = row_copy(worst);
		merge_figures(row, docs, n, ids[i]);
		if (kinds > 1) {
			static const char *const names[] = { "PASS", "SKIP", "FAIL", "ERROR" };
			struct sb sb = SB_INIT;

			sb_addf(&sb, "%s (over %zu runs:", row->reason ? row->reason : "", n);
			for (int k = 0, first = 1; k < 4; k++)
				if (cnt[k]) {
					sb_addf(&sb, "%s %u %s", first ? "" : ",", cnt[k], names[k]);
					first = 0;
				}
			sb_addf(&sb, ")");
			free(row->reason);
			row->reason = sb_detach(&sb);
		}
		c[rq_verdict_rank(row->verdict)]++;
		out->rows[out->n++] = row;
	}
	out->seen = out->n;
	out->counts = (struct rq_counts){ .total = (unsigned)out->n, .pass = c[0], .skip = c[1],
					  .fail = c[2], .error = c[3] };
	out->run.complete = complete;
	out->run.repeats = (unsigned)n;
	free(ids);
	return 0;
}

json_t *rq_repeat_merge(json_t *const *docs, size_t n, char *err, size_t errsz)
{
	struct rq_run_doc *d = xcalloc(n + 1, sizeof(*d)), out;
	const struct rq_run_doc **dp = xcalloc(n + 1, sizeof(*dp));
	json_t *ret = NULL;

	for (size_t i = 0; i < n; i++) {
		cmp_doc_init(&d[i], 0);
		rq_run_doc_from_json(&d[i], docs[i]);
		dp[i] = &d[i];
	}
	if (!rq_repeat_merge_docs(dp, n, &out, err, errsz))
		ret = rq_run_doc_to_json(&out);
	rq_run_doc_release(&out);
	for (size_t i = 0; i < n; i++)
		rq_run_doc_release(&d[i]);
	free(d);
	free(dp);
	return ret;
}
