// SPDX-License-Identifier: MIT
/*
 * Folding the repeats of one run into one document (repeat.h).  Medians,
 * not means: one TCG hiccup in five runs moves a mean by 20 % of its size
 * and a median not at all.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/result.h"
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

/* rq_verdict_rank of a verdict's name; one this program does not know is the worst */
static int verdict_rank(const char *v)
{
	enum rq_verdict e;

	return v && !rq_verdict_parse(v, &e) ? rq_verdict_rank(e) : 3;
}

/*
 * The first element of arr whose string member key is val, or NULL: a
 * member that is missing or not a string matches nothing.
 */
static json_t *first_with(json_t *arr, const char *key, const char *val)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i, x) {
		const char *s = json_string_value(json_object_get(x, key));

		if (s && val && !strcmp(s, val))
			return x;
	}
	return NULL;
}

json_t *rq_doc_row(json_t *doc, const char *id)
{
	return first_with(json_object_get(doc, "results"), "id", id);
}

static json_t *fig_by_name(json_t *row, const char *name)
{
	return first_with(json_object_get(row, "figures"), "name", name);
}

/* Fold the figures of one row id over every document into out (a copy). */
static void merge_figures(json_t *out, json_t *const *docs, size_t n, const char *id)
{
	json_t *figs = json_object_get(out, "figures");
	double *v = xcalloc(n, sizeof(*v));
	size_t i;
	json_t *f;

	json_array_foreach(figs, i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		size_t k = 0;

		for (size_t d = 0; d < n; d++) {
			json_t *r = rq_doc_row(docs[d], id);
			json_t *g = r ? fig_by_name(r, name) : NULL;
			json_t *val = g ? json_object_get(g, "value") : NULL;

			if (json_is_number(val) && isfinite(json_number_value(val)))
				v[k++] = json_number_value(val);
		}
		if (!k)
			continue;
		json_t *samples = json_array();

		/* In run order, before the median sorts them: compare judges the noise from these. */
		for (size_t x = 0; x < k; x++)
			json_array_append_new(samples, json_real(v[x]));
		double med = rq_median(v, k);

		json_object_set_new(f, "value", json_real(med));
		json_object_set_new(f, "spread", json_pack("{s:i, s:f, s:f, s:o}", "n", (json_int_t)k,
							    "min", v[0], "max", v[k - 1], "samples", samples));
	}
	free(v);
}

json_t *rq_repeat_merge(json_t *const *docs, size_t n, char *err, size_t errsz)
{
	json_t *out, *rows, *ids = json_array();
	bool complete = true;
	size_t i;
	json_t *r;

	if (!n) {
		snprintf(err, errsz, "no runs to merge");
		json_decref(ids);
		return NULL;
	}
	for (size_t d = 0; d < n; d++) {
		char e[300];

		if (cmp_check_doc(docs[d], e, sizeof(e))) {
			snprintf(err, errsz, "run %zu of %zu: %s", d + 1, n, e);
			json_decref(ids);
			return NULL;
		}
		complete = complete && json_is_true(json_object_get(json_object_get(docs[d], "run"),
								    "complete"));
		/* Every id, first-seen order: a row may be missing from a killed run. */
		json_array_foreach(json_object_get(docs[d], "results"), i, r) {
			const char *id = json_string_value(json_object_get(r, "id"));
			size_t j;
			json_t *x;
			bool seen = false;

			json_array_foreach(ids, j, x)
				seen = seen || !strcmp(json_string_value(x), id);
			if (!seen)
				json_array_append_new(ids, json_string(id));
		}
	}

	out = json_deep_copy(docs[0]);
	rows = json_array();
	json_array_foreach(ids, i, r) {
		const char *id = json_string_value(r);
		json_t *worst = NULL, *row;
		unsigned cnt[4] = { 0 }, kinds = 0;

		for (size_t d = 0; d < n; d++) {
			json_t *x = rq_doc_row(docs[d], id);

			if (!x)
				continue;
			int rank = verdict_rank(json_string_value(json_object_get(x, "verdict")));

			if (!cnt[rank]++)
				kinds++;
			if (!worst || rank > verdict_rank(json_string_value(json_object_get(worst, "verdict"))))
				worst = x;
		}
		row = json_deep_copy(worst);
		merge_figures(row, docs, n, id);
		if (kinds > 1) {
			static const char *const names[] = { "PASS", "SKIP", "FAIL", "ERROR" };
			const char *why = json_string_value(json_object_get(row, "reason"));
			struct sb sb = SB_INIT;

			sb_addf(&sb, "%s (over %zu runs:", why ? why : "", n);
			for (int k = 0, first = 1; k < 4; k++)
				if (cnt[k]) {
					sb_addf(&sb, "%s %u %s", first ? "" : ",", cnt[k], names[k]);
					first = 0;
				}
			sb_addf(&sb, ")");
			json_object_set_new(row, "reason", json_string(sb.buf));
			sb_release(&sb);
		}
		json_array_append_new(rows, row);
	}
	json_object_set_new(out, "results", rows);
	{
		json_int_t c[4] = { 0 };

		json_array_foreach(rows, i, r)
			c[verdict_rank(json_string_value(json_object_get(r, "verdict")))]++;
		json_object_set_new(out, "counts",
				    json_pack("{s:I, s:I, s:I, s:I, s:I}", "total",
					      (json_int_t)json_array_size(rows), "pass", c[0],
					      "fail", c[2], "skip", c[1], "error", c[3]));
	}
	json_t *run = json_object_get(out, "run");

	json_object_set_new(run, "complete", json_boolean(complete));
	json_object_set_new(run, "repeats", json_integer((json_int_t)n));
	json_decref(ids);
	return out;
}
