// SPDX-License-Identifier: MIT
/*
 * A run's page (report/html.h): summary, verdict grid, failures, every row
 * with its figures and their trends, the charts and the environment.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/util.h"
#include "qual/compare.h"
#include "report/html_int.h"

static void summary(struct sb *out, const struct rq_run_doc *doc, struct rows *rows, const char *id)
{
	unsigned c[4];
	const struct rq_run_head *run = &doc->run;

	html_counts_of(rows, c);
	sb_addf(out, "<section id=\"%s\" class=\"summary\" data-total=\"%zu\">\n", id,
		html_rows_n(rows));
	sb_addf(out, "<span class=\"verdict-big %s\">%s</span>\n", c[0] + c[1] ? "bad" : "ok",
		c[0] + c[1] ? "FAILED" : "PASSED");
	for (int k = 0; k < 4; k++)
		sb_addf(out, "<span class=\"badge count %s\" data-verdict=\"%s\" data-n=\"%u\">%u %s</span>",
			c[k] ? html_verdicts[k] : "muted", html_verdicts[k], c[k], c[k], html_verdicts[k]);
	sb_adds(out, "\n<p class=\"muted\">run ");
	esc(out, run->id);
	sb_adds(out, " on ");
	esc(out, run->hostname);
	sb_adds(out, ", started ");
	esc(out, run->started);
	sb_addf(out, ", %.1f s", run->duration_s);
	if (!run->complete)
		sb_adds(out, ", <b>INCOMPLETE</b> (interrupted or still running)");
	if (run->repeats > 1)
		sb_addf(out, ", medians over %d runs", (int)run->repeats);
	sb_adds(out, "<br>");
	esc(out, run->argv);
	sb_adds(out, "</p>\n</section>\n");
}

static void figure_text(struct sb *out, const struct rq_figure *f)
{
	esc(out, f->name);
	if (isfinite(f->value))
		sb_addf(out, "=%.4g", f->value);
	else
		sb_adds(out, "=?");
	if (*f->unit) {
		sb_adds(out, " ");
		esc(out, f->unit);
	}
	if (f->spread)
		sb_addf(out, " [%.4g..%.4g]", f->spread->min, f->spread->max);
}

/*
 * A row's figures: all of them when few; else the judged ones (their
 * direction is known) and the rest folded, so a link-health row's thirty
 * counters do not make the table unreadable.
 */
#define FIGS_UNFOLDED 8

static bool judged_fig(const struct rq_figure *f)
{
	return cmp_direction(f->name, f->unit) != CMP_DIR_UNKNOWN;
}

#define FIGS_EACH(r, j, f) for ((j) = 0; (j) < (r)->nfigs && ((f) = &(r)->figs[j]); (j)++)

static void row_figures(struct sb *out, const struct rq_result *r, const struct trend *t, const char *row)
{
	size_t j, n = r->nfigs, shown = 0, folded = 0;
	const struct rq_figure *f;

	if (n <= FIGS_UNFOLDED) {
		FIGS_EACH(r, j, f) {
			if (j)
				sb_adds(out, "<br>");
			figure_text(out, f);
			if (judged_fig(f))
				html_trend_svg(out, t, row, f);
		}
		return;
	}
	FIGS_EACH(r, j, f)
		if (judged_fig(f)) {
			if (shown++)
				sb_adds(out, "<br>");
			figure_text(out, f);
			html_trend_svg(out, t, row, f);
		}
	sb_addf(out, "<details class=\"figs\"><summary>%zu more figure%s</summary>", n - shown,
		n - shown == 1 ? "" : "s");
	FIGS_EACH(r, j, f)
		if (!judged_fig(f)) {
			if (folded++)
				sb_adds(out, "<br>");
			figure_text(out, f);
		}
	sb_adds(out, "</details>");
}

/* "suite" of a row: its case name up to the first '.'; "where": [device/port] or its node. */
static char *row_suite(const struct rq_result *r)
{
	const char *c = r->case_name ? r->case_name : r->id ? r->id : "?";
	const char *dot = strchr(c, '.');

	return dot ? xstrndup(c, (size_t)(dot - c)) : xstrdup(c);
}

static char *row_where(const struct rq_result *r)
{
	const char *id = r->id ? r->id : "", *lb = strrchr(id, '[');

	if (r->node)
		return xstrdup(r->node);
	if (lb && str_ends(id, "]"))
		return xstrndup(lb + 1, strlen(lb + 1) - 1);
	return xstrdup(r->device ? r->device : "(node)");
}

/* A list of distinct strings, found by a map: a lab page has thousands of nodes. */
struct strlist {
	char **v;
	size_t n;
	struct strmap map;
};

static size_t str_index(struct strlist *l, const char *s)
{
	size_t *at = strmap_get(&l->map, s);
	bool added;

	if (at)
		return *at;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n] = xstrdup(s);
	strmap_put(&l->map, l->v[l->n], l->n, &added);
	return l->n++;
}

static void strlist_release(struct strlist *l)
{
	strmap_release(&l->map);
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/*
 * The verdict grid at the top of a run's page: devices/ports (or nodes) x
 * suites, each cell the worst verdict of its rows, linking to the first
 * of them (failures come first in the rows table).
 */
static void verdict_grid(struct sb *out, struct rows *rows)
{
	struct strlist wl = { 0 }, sl = { 0 };
	size_t nw, ns, i;
	const struct rq_result *r;
	int *worst;
	size_t *first, *count;

	ROWS_EACH(rows, i, r) {
		char *w = row_where(r), *s = row_suite(r);

		str_index(&wl, w);
		str_index(&sl, s);
		free(w);
		free(s);
	}
	nw = wl.n;
	ns = sl.n;
	if (!nw || !ns)
		return;
	worst = xcalloc(nw * ns, sizeof(*worst));
	first = xcalloc(nw * ns, sizeof(*first));
	count = xcalloc(nw * ns, sizeof(*count));
	for (size_t k = 0; k < nw * ns; k++)
		worst[k] = 4;
	ROWS_EACH(rows, i, r) {
		char *w = row_where(r), *s = row_suite(r);
		size_t c = str_index(&wl, w) * ns + str_index(&sl, s);
		int v = html_verdict_index(r);	/* unknown: as bad as an ERROR */

		/* html_verdicts[] is worst first: FAIL, ERROR, SKIP, PASS; link to the first row of the worst kind. */
		if (v < worst[c]) {
			worst[c] = v;
			first[c] = i;
		}
		count[c]++;
		free(w);
		free(s);
	}
	sb_addf(out, "<section id=\"grid\"><h2>At a glance</h2><table class=\"grid\" data-where=\"%zu\" "
		"data-suites=\"%zu\"><tr><th></th>", nw, ns);
	for (size_t s = 0; s < ns; s++) {
		sb_adds(out, "<th>");
		esc(out, sl.v[s]);
		sb_adds(out, "</th>");
	}
	sb_adds(out, "</tr>\n");
	for (size_t w = 0; w < nw; w++) {
		sb_adds(out, "<tr><th>");
		esc(out, wl.v[w]);
		sb_adds(out, "</th>");
		for (size_t s = 0; s < ns; s++) {
			size_t c = w * ns + s;

			if (worst[c] == 4) {
				sb_adds(out, "<td class=\"muted\">-</td>");
				continue;
			}
			sb_addf(out, "<td class=\"cell g-%s\" data-verdict=\"%s\"><a href=\"#row-%zu\">%s",
				html_verdicts[worst[c]], html_verdicts[worst[c]], first[c], html_verdicts[worst[c]]);
			if (count[c] > 1)
				sb_addf(out, " <span class=\"muted\">(%zu)</span>", count[c]);
			sb_adds(out, "</a></td>");
		}
		sb_adds(out, "</tr>\n");
	}
	sb_adds(out, "</table></section>\n");
	strlist_release(&wl);
	strlist_release(&sl);
	free(worst);
	free(first);
	free(count);
}

/* Every row: failures first (FAIL, ERROR, SKIP, PASS), then file order. */
static void rows_table(struct sb *out, struct rows *rows, const struct trend *t)
{
	size_t i;
	const struct rq_result *r;

	sb_adds(out, "<section><h2>Rows</h2>\n");
	html_filter_buttons(out);
	sb_adds(out, "<table id=\"rows\"><tr><th>verdict</th><th>row</th><th>target</th>"
		"<th>time</th><th>reason</th><th>figures</th></tr>\n");
	for (int k = 0; k < 4; k++)
		ROWS_EACH(rows, i, r) {
			if (html_verdict_index(r) != k)
				continue;
			sb_addf(out, "<tr class=\"row\" data-verdict=\"%s\" data-id=\"", html_verdicts[k]);
			esc(out, r->id);
			sb_addf(out, "\" id=\"row-%zu\"><td class=\"%s\">%s</td><td>", i, html_verdicts[k], html_verdicts[k]);
			html_row_name(out, r);
			sb_adds(out, "</td><td>");
			esc(out, r->target);
			sb_addf(out, "</td><td>%.2f s</td><td>", r->duration_s);
			esc(out, r->reason);
			sb_adds(out, "</td><td>");
			row_figures(out, r, t, r->id);
			sb_adds(out, "</td></tr>\n");
			html_rows_drain(rows, out);
		}
	sb_adds(out, "</table></section>\n");
}

static void run_page(struct sb *out, const struct rq_run_doc *doc, struct rows *rows, const char *run_dir,
		     const char *extra_html)
{
	char *title = xasprintf("rdmaqual run %s", doc->run.id ? doc->run.id : "?");
	const char *lab[1] = { NULL };

	html_page_begin(out, "run", title);
	html_synthesized_banner(out, doc, NULL);
	summary(out, doc, rows, "summary");
	verdict_grid(out, rows);
	html_failures(out, rows, run_dir, NULL);
	struct trend t;

	html_trend_load(&t, run_dir, doc);
	rows_table(out, rows, &t);
	html_trend_release(&t);
	html_charts(out, rows, lab, 1);
	if (extra_html)
		sb_adds(out, extra_html);
	html_facts_table(out, doc, "facts", "Environment");
	html_page_end(out);
	free(title);
}

void rq_html_run_doc(struct sb *out, const struct rq_run_doc *doc, const char *run_dir, const char *extra_html)
{
	struct rows rows = html_doc_rows(doc);

	run_page(out, doc, &rows, run_dir, extra_html);
}

void rq_html_run(struct sb *out, json_t *doc, const char *run_dir, const char *extra_html)
{
	struct rq_run_doc d;

	/* what of it reads (a row in error ends the rows; the page draws the rest) */
	rq_run_doc_init(&d);
	rq_run_doc_from_json(&d, doc);
	rq_html_run_doc(out, &d, run_dir, extra_html);
	rq_run_doc_release(&d);
}

/* The runner's head (rq_json_head), read as a document without rows. */
static void head_doc(struct rq_run_doc *d, json_t *head)
{
	rq_run_doc_init(d);
	rq_run_doc_head(d, json_incref(head));
}

void rq_html_run_rows(struct sb *out, json_t *doc, const struct rq_results *rs,
		      const char *run_dir, const char *extra_html)
{
	struct rows rows = { .rs = rs };
	struct rq_run_doc d;

	head_doc(&d, doc);
	run_page(out, &d, &rows, run_dir, extra_html);
	html_rows_release(&rows);
	rq_run_doc_release(&d);
}

int rq_html_run_rows_write(int dirfd, const char *name, json_t *doc, const struct rq_results *rs,
			   const char *run_dir, const char *extra_html)
{
	struct sb html = SB_INIT;
	struct afile f;
	struct rows rows = { .rs = rs, .f = &f };
	struct rq_run_doc d;
	int ret = afile_open_at(&f, dirfd, name);

	if (ret)
		return ret;
	/* written as it is drawn: a 4,096-node page is tens of MB */
	head_doc(&d, doc);
	run_page(&html, &d, &rows, run_dir, extra_html);
	html_rows_release(&rows);
	rq_run_doc_release(&d);
	afile_drain(&f, &html, 0);
	sb_release(&html);
	return afile_commit(&f);
}
