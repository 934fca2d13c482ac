// SPDX-License-Identifier: MIT
/*
 * A comparison's or qualification's page (report/html.h): the verdict, the
 * sides, the environment changes, the after side's failures, every row
 * before and after with its findings, the judged figures with their noise,
 * the charts overlaid and both environments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/util.h"
#include "qual/compare.h"
#include "qual/repeat.h"
#include "report/html_int.h"

static int write_html(const char *path, struct sb *html)
{
	int rc = write_file_atomic(path, html->buf, html->len);

	sb_release(html);
	return rc;
}

/* Findings of one type class as a table; returns how many. */
static size_t findings_rows(struct sb *out, json_t *cmp, const char *row, bool figures)
{
	size_t i, n = 0;
	json_t *f;

	json_array_foreach(json_object_get(cmp, "findings"), i, f) {
		const char *type = jstr(f, "type");
		bool is_fig = type && str_starts(type, "figure_");

		if (is_fig != figures || !jstr(f, "row") || strcmp(jstr(f, "row"), row))
			continue;
		if (type && !strcmp(type, "figure_unjudged") && jstr(f, "before") && jstr(f, "after") &&
		    !strcmp(jstr(f, "before"), jstr(f, "after")))
			continue;	/* unchanged figures of unknown direction: noise here */
		bool regr = json_is_true(json_object_get(f, "regression"));

		if (n++)
			sb_adds(out, "<br>");
		sb_addf(out, "<span class=\"finding%s\" data-type=\"%s\" data-regression=\"%d\">",
			regr ? " REGRESSION" : "", type ? type : "?", regr);
		if (figures) {
			json_t *bv = json_object_get(f, "before_value"), *av = json_object_get(f, "after_value");

			esc(out, jstr(f, "name"));
			sb_adds(out, ": ");
			if (json_is_number(bv))
				sb_addf(out, "%.4g", json_number_value(bv));
			else
				esc(out, jstr(f, "before") ? jstr(f, "before") : "(none)");
			sb_adds(out, " &rarr; ");
			if (json_is_number(av))
				sb_addf(out, "%.4g", json_number_value(av));
			else
				esc(out, jstr(f, "after") ? jstr(f, "after") : "(none)");
			if (jstr(f, "unit") && *jstr(f, "unit")) {
				sb_adds(out, " ");
				esc(out, jstr(f, "unit"));
			}
			json_t *ch = json_object_get(f, "change_pct");

			if (json_is_number(ch))
				sb_addf(out, " (%+.1f%%)", json_number_value(ch));
			if (regr)
				sb_adds(out, " WORSE");
		} else {
			esc(out, type);
			if (jstr(f, "name")) {
				sb_adds(out, " ");
				esc(out, jstr(f, "name"));
			}
			if (jstr(f, "message")) {
				sb_adds(out, ": ");
				esc(out, jstr(f, "message"));
			}
		}
		sb_adds(out, "</span>");
	}
	return n;
}

static const char *outcome_class(const char *type)
{
	if (!strcmp(type, "figure_worse"))
		return "regression";
	if (!strcmp(type, "figure_inconclusive"))
		return "inconclusive";
	return "no";
}

/*
 * One judged figure's evidence: both sides' samples as strips of dots on
 * one axis, each side's median as a tick, and the tolerance band around
 * the before median (shaded): an after median outside the band, with the
 * two strips apart, is what a regression looks like.
 */
static void strip_plot(struct sb *out, const struct rq_html_side *b, const struct rq_html_side *a, json_t *f)
{
	const double W = 440, H = 58, L = 80, R = 12;	/* L: room for "before n=12" */
	double *xs[2] = { NULL, NULL }, lo = INFINITY, hi = -INFINITY, med[2];
	size_t n[2];
	const struct rq_html_side *sd[2] = { b, a };
	double tol = json_number_value(json_object_get(f, "tolerance_pct"));

	for (int s = 0; s < 2; s++) {
		n[s] = cmp_figure_samples(sd[s]->doc, jstr(f, "row"), jstr(f, "name"), &xs[s]);
		for (size_t k = 0; k < n[s]; k++) {
			lo = fmin(lo, xs[s][k]);
			hi = fmax(hi, xs[s][k]);
		}
	}
	med[0] = json_number_value(json_object_get(f, "before_value"));
	med[1] = json_number_value(json_object_get(f, "after_value"));
	if (!n[0] || !n[1] || !isfinite(med[0])) {
		free(xs[0]);
		free(xs[1]);
		return;
	}
	lo = fmin(lo, med[0] * (1 - tol / 100));
	hi = fmax(hi, med[0] * (1 + tol / 100));
	if (hi <= lo)
		hi = lo + 1;
#define PX(v) (L + ((v) - lo) / (hi - lo) * (W - L - R))
	sb_addf(out, "<svg class=\"strip\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">", W, H, W, H);
	sb_addf(out, "<rect class=\"band\" x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"%g\" fill=\"#e3f2fd\"/>",
		PX(med[0] * (1 - tol / 100)), PX(med[0] * (1 + tol / 100)) - PX(med[0] * (1 - tol / 100)), H - 16);
	for (int s = 0; s < 2; s++) {
		double y = s ? 32 : 14;

		sb_addf(out, "<text x=\"2\" y=\"%.0f\" font-size=\"11\">%s n=%zu</text>", y + 4, s ? "after" : "before",
			n[s]);
		for (size_t k = 0; k < n[s]; k++)
			sb_addf(out, "<circle class=\"sample s%d\" cx=\"%.1f\" cy=\"%.0f\" r=\"3\" fill=\"%s\" "
				"fill-opacity=\"0.6\"><title>%.4g</title></circle>", s, PX(xs[s][k]), y,
				s ? "#d62728" : "#1f77b4", xs[s][k]);
		if (isfinite(med[s]))
			sb_addf(out, "<line class=\"median\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" "
				"stroke=\"#222\" stroke-width=\"2\"/>", PX(med[s]), PX(med[s]), y - 7, y + 7);
	}
	sb_addf(out, "<text x=\"%g\" y=\"%g\">%.4g</text><text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.4g ",
		L, H - 2, lo, W - R, H - 2, hi);
	esc(out, jstr(f, "unit"));
	sb_adds(out, "</text></svg>");
#undef PX
	free(xs[0]);
	free(xs[1]);
}

static void noise_section(struct sb *out, const struct rq_html_side *b, const struct rq_html_side *a, json_t *cmp)
{
	static const char *const order[] = { "figure_worse", "figure_inconclusive", "figure_better", "figure_within" };
	size_t i, shown = 0;
	json_t *f;

	for (size_t o = 0; o < ARRAY_SIZE(order); o++)
		json_array_foreach(json_object_get(cmp, "findings"), i, f) {
			json_int_t nb = json_integer_value(json_object_get(f, "n_before"));
			json_int_t na = json_integer_value(json_object_get(f, "n_after"));

			if (!jstr(f, "type") || strcmp(jstr(f, "type"), order[o]) || (nb < 2 && na < 2))
				continue;
			if (!shown++)
				sb_adds(out, "<section id=\"noise\"><h2>Judged figures and their noise</h2>\n"
					"<p class=\"muted\">Each side's repeats (dots), their medians (ticks) and the "
					"tolerance band around the before median (shaded).</p>\n<table id=\"judged\">"
					"<tr><th>row</th><th>figure</th><th>outcome</th><th>repeats</th><th>note</th></tr>\n");
			sb_addf(out, "<tr class=\"judged\" data-outcome=\"%s\"><td>", outcome_class(order[o]));
			esc(out, jstr(f, "row"));
			sb_adds(out, "</td><td>");
			esc(out, jstr(f, "name"));
			sb_addf(out, "</td><td class=\"out-%s\">%s</td><td>", outcome_class(order[o]),
				!strcmp(order[o], "figure_worse") ? "regression" :
				!strcmp(order[o], "figure_inconclusive") ? "inconclusive" :
				!strcmp(order[o], "figure_better") ? "better" : "no change");
			strip_plot(out, b, a, f);
			sb_adds(out, "</td><td>");
			esc(out, jstr(f, "message"));
			sb_adds(out, "</td></tr>\n");
		}
	if (shown)
		sb_adds(out, "</table></section>\n");
}

void rq_html_compare(struct sb *out, const char *title, const struct rq_html_side *b,
		     const struct rq_html_side *a, json_t *cmp)
{
	json_t *sum = json_object_get(cmp, "summary"), *ids = json_array(), *f;
	json_int_t regressions = 0;
	size_t i;

	json_array_foreach(json_object_get(cmp, "findings"), i, f)
		regressions += json_is_true(json_object_get(f, "regression"));
	(void)sum;
	html_page_begin(out, "compare", title);
	sb_addf(out, "<section id=\"verdict\" data-regressions=\"%lld\"><span class=\"verdict-big %s\">%s</span> "
		"%lld regression finding%s</section>\n", (long long)regressions, regressions ? "bad" : "ok",
		regressions ? "REGRESSION" : "no regression", (long long)regressions,
		regressions == 1 ? "" : "s");
	html_synthesized_banner(out, b->doc, b->label ? b->label : "before");
	html_synthesized_banner(out, a->doc, a->label ? a->label : "after");
	/* The two sides */
	sb_adds(out, "<section><h2>Sides</h2><table id=\"sides\"><tr><th></th><th>spec</th><th>run</th>"
		"<th>guest kernel</th><th>package</th><th>counts</th></tr>\n");
	const struct rq_html_side *sides[2] = { b, a };

	for (int s = 0; s < 2; s++) {
		const struct rq_run_doc *d = sides[s]->doc;
		const char *kernel = rq_run_doc_fact(d, "vm.guest_kernel");
		unsigned c[4];

		struct rows rows = html_doc_rows(sides[s]->doc);

		html_counts_of(&rows, c);
		sb_addf(out, "<tr class=\"side\" data-side=\"%s\"><th>", sides[s]->label);
		esc(out, sides[s]->label);
		sb_adds(out, "</th><td>");
		esc(out, sides[s]->spec ? sides[s]->spec : "");
		sb_adds(out, "</td><td>");
		if (sides[s]->nruns) {
			/* every repeat, each a link to its own page beside this one (LABEL/ID/) */
			sb_addf(out, "%zu run%s:", sides[s]->nruns, sides[s]->nruns == 1 ? "" : "s");
			for (size_t k = 0; k < sides[s]->nruns; k++) {
				const char *id = strrchr(sides[s]->runs[k], '/');

				id = id ? id + 1 : sides[s]->runs[k];
				sb_adds(out, "<br><a class=\"side-run\" href=\"");
				esc(out, sides[s]->label);
				sb_adds(out, "/");
				esc(out, id);
				sb_adds(out, "/report.html\">");
				esc(out, id);
				sb_adds(out, "</a>");
			}
		} else {
			esc(out, sides[s]->run_dir ? sides[s]->run_dir : d->run.id);
		}
		sb_adds(out, "</td><td>");
		esc(out, kernel ? kernel : rq_run_doc_fact(d, "host.kernel"));
		sb_adds(out, "</td><td>");
		esc(out, rq_run_doc_fact(d, "vm.kernel_package"));
		sb_adds(out, " ");
		esc(out, rq_run_doc_fact(d, "vm.kernel_package_version"));
		sb_adds(out, "<br><span class=\"muted\">");
		esc(out, rq_run_doc_fact(d, "vm.kernel_origin"));
		sb_adds(out, "</span></td><td>");
		for (int k = 0; k < 4; k++)
			sb_addf(out, "<span class=\"count %s\" data-verdict=\"%s\" data-n=\"%u\">%u %s</span> ",
				c[k] ? html_verdicts[k] : "muted", html_verdicts[k], c[k], c[k], html_verdicts[k]);
		sb_adds(out, "</td></tr>\n");
	}
	sb_adds(out, "</table></section>\n");

	/* Facts that changed (kernel, rdma-core, ...) */
	sb_adds(out, "<section><h2>Environment changes</h2><table id=\"fact-changes\">"
		"<tr><th>fact</th><th>before</th><th>after</th></tr>\n");
	json_array_foreach(json_object_get(cmp, "findings"), i, f) {
		if (!jstr(f, "type") || strcmp(jstr(f, "type"), "fact_changed"))
			continue;
		sb_adds(out, "<tr class=\"fact-change\"><td>");
		if (jstr(f, "row")) {
			esc(out, jstr(f, "row"));
			sb_adds(out, " ");
		}
		esc(out, jstr(f, "name"));
		sb_adds(out, "</td><td>");
		esc(out, jstr(f, "before") ? jstr(f, "before") : "(none)");
		sb_adds(out, "</td><td>");
		esc(out, jstr(f, "after") ? jstr(f, "after") : "(none)");
		sb_adds(out, "</td></tr>\n");
	}
	sb_adds(out, "</table></section>\n");

	/* Failures of the after side first: what the upgrade broke or kept broken. */
	struct rows arows = html_doc_rows(a->doc);

	html_failures(out, &arows, a->run_dir, a->label);

	/* Per row side by side; rows with a regression first. */
	/* Each id once: a run with repeated rows is one row here (its figures are judged over all). */
	struct strmap seen = { 0 };
	const struct rq_run_doc *both[2] = { b->doc, a->doc };

	for (int s = 0; s < 2; s++)
		for (i = 0; i < both[s]->n; i++) {
			const char *id = both[s]->rows[i]->id;
			bool added;

			strmap_put(&seen, id, 1, &added);
			if (added)
				json_array_append_new(ids, json_string(id));
		}
	strmap_release(&seen);
	sb_adds(out, "<section><h2>Rows, before and after</h2>\n");
	html_filter_buttons(out);
	sb_adds(out, "<table id=\"rows\"><tr><th>row</th><th>before</th><th>after</th><th>findings</th>"
		"<th>figures</th></tr>\n");
	for (int pass = 0; pass < 2; pass++) {
		json_t *id;

		json_array_foreach(ids, i, id) {
			const char *s = json_string_value(id);
			const struct rq_result *rb = rq_run_doc_find(b->doc, s), *ra = rq_run_doc_find(a->doc, s);
			bool regr = false;
			size_t j;

			json_array_foreach(json_object_get(cmp, "findings"), j, f)
				regr = regr || (jstr(f, "row") && !strcmp(jstr(f, "row"), s) &&
						json_is_true(json_object_get(f, "regression")));
			if (regr != (pass == 0))
				continue;
			const char *vb = rb ? rq_verdict_name(rb->verdict) : "-";
			const char *va = ra ? rq_verdict_name(ra->verdict) : "-";

			/* data-verdict is the after side's: what the DOM counts match. */
			sb_addf(out, "<tr class=\"row\" data-verdict=\"%s\" data-regression=\"%d\" data-id=\"",
				ra ? va : "GONE", regr);
			esc(out, s);
			sb_adds(out, "\"><td>");
			esc(out, s);
			sb_addf(out, "</td><td class=\"%s\">%s</td><td class=\"%s\">%s</td><td>", vb, vb, va, va);
			findings_rows(out, cmp, s, false);
			sb_adds(out, "</td><td>");
			findings_rows(out, cmp, s, true);
			sb_adds(out, "</td></tr>\n");
		}
	}
	sb_adds(out, "</table></section>\n");
	json_decref(ids);
	noise_section(out, b, a, cmp);

	struct rows docs[2] = { html_doc_rows(b->doc), html_doc_rows(a->doc) };
	const char *labels[2] = { b->label, a->label };

	html_charts(out, docs, labels, 2);
	html_facts_table(out, b->doc, "facts-before", "Environment before");
	html_facts_table(out, a->doc, "facts-after", "Environment after");
	html_page_end(out);
}

int rq_html_compare_write(const char *path, const char *title, const struct rq_html_side *b,
			  const struct rq_html_side *a, json_t *cmp)
{
	struct sb html = SB_INIT;

	rq_html_compare(&html, title, b, a, cmp);
	return write_html(path, &html);
}
