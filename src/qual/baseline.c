// SPDX-License-Identifier: MIT
/*
 * Baselines (baseline.h).  The file:
 *
 *   { "schema": "rdmaqual-baseline/1", "source": "<run id>", "created": "...",
 *     "tolerance_pct": 5, "tolerances": [ { "glob": "lat_*", "pct": 10 } ],
 *     "entries": [ { "case": "bw.write_64k", "target": "rxe-vm", "hca_model": "rxe",
 *                    "rows": 1,
 *                    "figures": [ { "name": "bw_64KiB", "value": 1.9, "unit": "Gb/s",
 *                                   "n": 5, "min": 1.7, "max": 2.0, "samples": [...] } ] } ] }
 *
 * n, min, max and samples are there when a figure has more than one value
 * (a baseline saved from several runs, or ports sharing a key); such a
 * figure is judged against its distribution (qual/stats.h).  A figure with
 * one value, as every figure of a baseline written before samples were
 * kept, is judged as it always was: its tolerance is a fixed limit.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/json_text.h"
#include "core/result.h"
#include "core/run_doc.h"
#include "core/util.h"
#include "qual/baseline.h"
#include "qual/repeat.h"
#include "qual/stats.h"

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

const char *rq_baseline_model(const struct rq_result *r)
{
	static const char *const keys[] = { "hca_model", "model", "board_id" };

	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < r->nfacts; i++)
			if (!strcmp(r->facts[i].key, keys[k]) && *r->facts[i].value)
				return r->facts[i].value;
	if (r->device && str_starts(r->device, "rxe"))
		return "rxe";
	return NULL;
}

static json_t *entry_find(json_t *entries, const char *c, const char *target, const char *model)
{
	size_t i;
	json_t *e;

	json_array_foreach(entries, i, e)
		if (!strcmp(jstr(e, "case"), c) && !strcmp(jstr(e, "target"), target) &&
		    !strcmp(jstr(e, "hca_model"), model))
			return e;
	return NULL;
}

json_t *rq_baseline_from_results(json_t *results, const struct cmp_opts *tol, const char *source)
{
	return rq_baseline_from_runs(&results, 1, tol, source);
}

json_t *rq_baseline_from_runs(json_t *const *runs, size_t nruns, const struct cmp_opts *tol, const char *source)
{
	struct rq_run_doc *d = xcalloc(nruns + 1, sizeof(*d));
	const struct rq_run_doc **dp = xcalloc(nruns + 1, sizeof(*dp));
	json_t *bl;

	for (size_t i = 0; i < nruns; i++) {
		rq_run_doc_init(&d[i]);
		rq_run_doc_from_json(&d[i], runs[i]);
		dp[i] = &d[i];
	}
	bl = rq_baseline_from_docs(dp, nruns, tol, source);
	for (size_t i = 0; i < nruns; i++)
		rq_run_doc_release(&d[i]);
	free(d);
	free(dp);
	return bl;
}

json_t *rq_baseline_from_docs(const struct rq_run_doc *const *runs, size_t nruns, const struct cmp_opts *tol,
			      const char *source)
{
	json_t *entries = json_array(), *tols = json_array();
	char ts[32];
	size_t i;

	/* Group rows by key first: a figure's value is the median over the group. */
	for (size_t d = 0; d < nruns; d++)
	for (i = 0; i < runs[d]->n; i++) {
		const struct rq_result *r = runs[d]->rows[i];
		const char *c = r->case_name, *target = r->target, *model = rq_baseline_model(r);
		json_t *e;

		if (r->verdict != RQ_PASS)
			continue;	/* only known-good figures */
		target = target ? target : "-";
		model = model ? model : "-";
		e = entry_find(entries, c, target, model);
		if (!e) {
			e = json_pack("{s:o, s:o, s:o, s:i, s:o}", "case", rq_json_text(c),
				      "target", rq_json_text(target), "hca_model", rq_json_text(model),
				      "rows", 0, "values", json_object());
			json_array_append_new(entries, e);
		}
		json_object_set_new(e, "rows", json_integer(json_integer_value(json_object_get(e, "rows")) + 1));
		for (size_t j = 0; j < r->nfigs; j++) {
			const struct rq_figure *f = &r->figs[j];
			json_t *vals = json_object_get(e, "values");

			if (!isfinite(f->value))
				continue;
			json_t *slot = json_object_get(vals, f->name);

			if (!slot) {
				slot = json_pack("{s:o, s:[]}", "unit", rq_json_text(f->unit), "v");
				json_object_set_new(vals, f->name, slot);
			}
			json_array_append_new(json_object_get(slot, "v"), json_real(f->value));
		}
	}
	/* values -> figures (medians) */
	json_t *e;

	json_array_foreach(entries, i, e) {
		json_t *figs = json_array(), *slot;
		const char *name;

		json_object_foreach(json_object_get(e, "values"), name, slot) {
			json_t *arr = json_object_get(slot, "v");
			size_t n = json_array_size(arr);
			double *v = xcalloc(n, sizeof(*v));

			for (size_t k = 0; k < n; k++)
				v[k] = json_number_value(json_array_get(arr, k));
			json_t *fig = json_pack("{s:o, s:f, s:O}", "name", rq_json_text(name), "value",
						rq_median(v, n), "unit", json_object_get(slot, "unit"));

			/* The distribution, which later runs are judged against (rq_median sorted v). */
			if (n > 1) {
				json_object_set_new(fig, "n", json_integer((json_int_t)n));
				json_object_set_new(fig, "min", json_real(v[0]));
				json_object_set_new(fig, "max", json_real(v[n - 1]));
				json_object_set_new(fig, "samples", json_deep_copy(arr));
			}
			json_array_append_new(figs, fig);
			free(v);
		}
		json_object_del(e, "values");
		json_object_set_new(e, "figures", figs);
	}
	for (size_t k = 0; tol && k < tol->ntols; k++)
		json_array_append_new(tols, json_pack("{s:o, s:f}", "glob", rq_json_text(tol->tols[k].glob),
						      "pct", tol->tols[k].pct));
	iso8601_now(ts, sizeof(ts));
	json_t *doc = json_pack("{s:s, s:o, s:s, s:I, s:f, s:o}", "schema", RQ_BASELINE_SCHEMA,
				"source", rq_json_text(source), "created", ts, "runs", (json_int_t)nruns,
				"tolerance_pct", tol ? tol->tol_pct : RQ_COMPARE_DEFAULT_TOL, "tolerances", tols);

	/* Only when asked: a file without it judges the key figures, as every reader of /1 may. */
	if (tol && tol->all_figures)
		json_object_set_new(doc, "all_figures", json_true());
	json_object_set_new(doc, "entries", entries);
	return doc;
}

int rq_baseline_load(struct rq_baseline *b, const char *path, char *err, size_t errsz)
{
	json_error_t je;
	json_t *doc, *e, *t;
	size_t i;

	memset(b, 0, sizeof(*b));
	cmp_opts_init(&b->tol);
	doc = json_load_file(path, 0, &je);
	if (!doc) {
		snprintf(err, errsz, "%s:%d:%d: not a baseline: %s", path, je.line, je.column, je.text);
		return -EINVAL;
	}
	if (!jstr(doc, "schema") || strcmp(jstr(doc, "schema"), RQ_BASELINE_SCHEMA)) {
		snprintf(err, errsz, "%s: \"schema\" is not \"%s\" (make one with 'rdmaqual baseline save RUN FILE')",
			 path, RQ_BASELINE_SCHEMA);
		json_decref(doc);
		return -EINVAL;
	}
	json_array_foreach(json_object_get(doc, "entries"), i, e) {
		size_t j;
		json_t *f;

		if (!jstr(e, "case") || !jstr(e, "target") || !jstr(e, "hca_model") ||
		    !json_is_array(json_object_get(e, "figures"))) {
			snprintf(err, errsz, "%s: entries[%zu] needs string case, target, hca_model and a figures array",
				 path, i);
			json_decref(doc);
			return -EINVAL;
		}
		json_array_foreach(json_object_get(e, "figures"), j, f) {
			json_t *s = json_object_get(f, "samples"), *x;
			size_t k;

			if (!jstr(f, "name") || !json_is_number(json_object_get(f, "value"))) {
				snprintf(err, errsz, "%s: entries[%zu].figures[%zu] needs a name and a number value",
					 path, i, j);
				json_decref(doc);
				return -EINVAL;
			}
			if (s && !json_is_array(s)) {
				snprintf(err, errsz, "%s: entries[%zu].figures[%zu].samples is not an array", path, i, j);
				json_decref(doc);
				return -EINVAL;
			}
			json_array_foreach(s, k, x)
				if (!json_is_number(x) || !isfinite(json_number_value(x)) ||
				    (json_number_value(x) < 0 && cmp_direction(NULL, jstr(f, "unit")) == CMP_HIGHER)) {
					snprintf(err, errsz, "%s: entries[%zu] (%s) figure %s: sample %zu is not a "
						 "number a rate can be", path, i, jstr(e, "case"), jstr(f, "name"), k + 1);
					json_decref(doc);
					return -EINVAL;
				}
		}
	}
	json_t *tp = json_object_get(doc, "tolerance_pct");

	/* checked as the per-glob ones are: -50 or 1e308 would judge nothing */
	if (tp) {
		char arg[64], e2[200];

		snprintf(arg, sizeof(arg), "%.17g", json_number_value(tp));
		if (!json_is_number(tp) || cmp_opts_tolerance(&b->tol, arg, e2, sizeof(e2))) {
			snprintf(err, errsz, "%s: tolerance_pct: %s", path, json_is_number(tp) ? e2 :
				 "not a number");
			json_decref(doc);
			cmp_opts_release(&b->tol);
			return -EINVAL;
		}
	}
	json_array_foreach(json_object_get(doc, "tolerances"), i, t) {
		char arg[300], e2[200];
		json_t *pct = json_object_get(t, "pct");

		/* json_number_value() of a missing or string pct is 0: every change a regression */
		if (!json_is_number(pct)) {
			snprintf(err, errsz, "%s: tolerances[%zu]: pct is %s, not a number", path, i,
				 pct ? "not a number" : "missing");
			json_decref(doc);
			cmp_opts_release(&b->tol);
			return -EINVAL;
		}
		snprintf(arg, sizeof(arg), "%s=%.17g", jstr(t, "glob") ? jstr(t, "glob") : "*",
			 json_number_value(pct));
		if (cmp_opts_tolerance(&b->tol, arg, e2, sizeof(e2))) {
			snprintf(err, errsz, "%s: tolerances[%zu]: %s", path, i, e2);
			json_decref(doc);
			cmp_opts_release(&b->tol);
			return -EINVAL;
		}
	}
	json_t *all = json_object_get(doc, "all_figures");

	if (all && !json_is_boolean(all)) {
		snprintf(err, errsz, "%s: all_figures: not true or false", path);
		json_decref(doc);
		cmp_opts_release(&b->tol);
		return -EINVAL;
	}
	b->tol.all_figures = json_is_true(all);
	b->doc = doc;
	b->path = xstrdup(path);
	return 0;
}

void rq_baseline_release(struct rq_baseline *b)
{
	json_decref(b->doc);
	cmp_opts_release(&b->tol);
	free(b->path);
	memset(b, 0, sizeof(*b));
}

unsigned rq_baseline_judge(const struct rq_baseline *b, struct rq_result *r, const char *model)
{
	json_t *e = entry_find(json_object_get(b->doc, "entries"), r->case_name ? r->case_name : r->id,
			       r->target ? r->target : "-", model ? model : "-");
	unsigned judged = 0, worse = 0;
	size_t j;
	json_t *f;

	if (!e)
		return 0;
	json_array_foreach(json_object_get(e, "figures"), j, f) {
		const char *name = jstr(f, "name"), *unit = jstr(f, "unit");
		double base = json_number_value(json_object_get(f, "value"));
		json_t *samples = json_object_get(f, "samples");
		size_t ns = json_array_size(samples);

		for (size_t i = 0; i < r->nfigs; i++) {
			const struct rq_figure *g = &r->figs[i];
			enum cmp_dir d = cmp_direction(g->name, g->unit);
			double tol = cmp_tolerance_for(&b->tol, g->name), change;

			if (strcmp(g->name, name) || !isfinite(g->value) || d == CMP_DIR_UNKNOWN ||
			    strcmp(g->unit ? g->unit : "", unit ? unit : "") || base == 0)
				continue;
			/*
			 * The figures compare and qualify judge (the case's judge:, else the
			 * kind's key figures): a baseline of thirty latency percentiles
			 * judged one by one fails a good node on the one that is unlucky.
			 */
			if (!b->tol.all_figures && !cmp_key_figure(r->kind, r->judge, g->name))
				continue;
			change = (g->value - base) / fabs(base) * 100;
			judged++;
			bool bad = (d == CMP_HIGHER && change < -tol) || (d == CMP_LOWER && change > tol);
			char noise[200] = "";

			if (ns > 1) {
				/* The baseline's own spread is the noise the new value is judged against. */
				double *v = xcalloc(ns, sizeof(*v)), val = g->value;
				struct rq_judge_opts jo = { .tol_pct = tol, .confidence = RQ_STATS_CONFIDENCE,
							    .dir = d == CMP_HIGHER ? 1 : -1 };
				struct rq_judgement jd;
				char why[160];

				for (size_t k = 0; k < ns; k++)
					v[k] = json_number_value(json_array_get(samples, k));
				if (!rq_change_judge(v, ns, &val, 1, &jo, &jd, why, sizeof(why))) {
					bad = jd.outcome == RQ_OUT_WORSE;
					snprintf(noise, sizeof(noise), "; baseline n=%zu, %g%% interval %+.1f%%..%+.1f%%: %s",
						 ns, jo.confidence * 100, jd.lo_pct, jd.hi_pct, rq_outcome_name(jd.outcome));
				}
				free(v);
			}
			sb_addf(&r->log, "baseline %s: %s %.4g %s vs %.4g (%+.1f%%, tolerance %g%%, %s is better%s): %s\n",
				b->path, g->name, g->value, g->unit ? g->unit : "", base, change, tol,
				cmp_dir_name(d), noise, bad ? "WORSE" : "ok");
			r->judged++;
			if (!bad)
				continue;
			r->failed++;
			if (!worse++ && r->verdict == RQ_PASS) {
				r->verdict = RQ_FAIL;
				free(r->reason);
				r->reason = xasprintf("%s %.4g %s is %.1f%% %s than the baseline %.4g (tolerance %g%%%s)",
						      g->name, g->value, g->unit ? g->unit : "", fabs(change),
						      d == CMP_HIGHER ? "lower" : "higher", base, tol, noise);
			}
		}
	}
	if (judged) {
		char buf[128];

		snprintf(buf, sizeof(buf), "%u figure%s judged, %u worse", judged, judged == 1 ? "" : "s", worse);
		rq_fact_add(r, "baseline", buf);
	}
	return judged;
}
