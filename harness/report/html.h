/* SPDX-License-Identifier: MIT */
/*
 * report.html: one self-contained page per run, comparison and
 * qualification, for people (docs/reports.md).  No network and no external
 * asset: styles, the small script and the charts (inline SVG) are in the
 * file, and a Content-Security-Policy forbids loading anything else, so it
 * reads the same offline and as a CI artifact.
 *
 * Pages are rendered from results.json documents (schema
 * rdmaqual-results/1) and the rdmaqual-compare/1 document, so a report can
 * be rebuilt from the files alone.  Elements carry data- attributes
 * (data-verdict, data-id, data-type, data-regression) that tests and
 * scripts can count.
 *
 * One file a page: html_run.c, html_compare.c; html_chart.c draws the
 * charts and the heat map, html_trend.c the trends and their index, and
 * html_common.c what both pages show (report/html_int.h).
 */
#ifndef RQ_REPORT_HTML_H
#define RQ_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include "core/result.h"
#include "core/util.h"

struct json_t;

/*
 * Every page's Content-Security-Policy: nothing fetched, only the page's
 * own inline style and script run (history's page has no script).
 */
#define RQ_HTML_CSP "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

/* Lines of a failing row's log shown under it (the file holds all of it). */
#define RQ_HTML_LOG_TAIL_LINES 30

/*
 * One run's page.  doc: its results.json document; run_dir: where the
 * rows' log_path are relative to (for the failures' log tails), or NULL;
 * extra_html: sections placed after the charts (rq_html_heatmap output),
 * or NULL.
 */
void rq_html_run(struct sb *out, struct json_t *doc, const char *run_dir, const char *extra_html);
/* The same from a document read (core/run_doc.h). */
struct rq_run_doc;
void rq_html_run_doc(struct sb *out, const struct rq_run_doc *doc, const char *run_dir, const char *extra_html);
/*
 * The same page from a run's rows (rs, spooled or not) and doc, a
 * results.json document without its "results" (run, facts, counts): the
 * runner's report.html, with one row's JSON in memory at a time.
 */
void rq_html_run_rows(struct sb *out, struct json_t *doc, const struct rq_results *rs,
		      const char *run_dir, const char *extra_html);
/* name under dirfd (AT_FDCWD: a path), as afile_open_at */
int rq_html_run_rows_write(int dirfd, const char *name, struct json_t *doc, const struct rq_results *rs,
			   const char *run_dir, const char *extra_html);

/* One side of a comparison. */
struct rq_html_side {
	const char *label;		/* "before" */
	const char *spec;		/* "debian:bookworm", a path, or NULL */
	const struct rq_run_doc *doc;	/* its results.json (medians for --repeat) */
	const char *run_dir;		/* for log tails, or NULL */
	char *const *runs;		/* qualify: every run of the side, in order (links), or NULL */
	size_t nruns;
};

/* A comparison or qualification page: cmp is the rdmaqual-compare/1 document. */
void rq_html_compare(struct sb *out, const char *title, const struct rq_html_side *before,
		     const struct rq_html_side *after, struct json_t *cmp);
int rq_html_compare_write(const char *path, const char *title, const struct rq_html_side *before,
			  const struct rq_html_side *after, struct json_t *cmp);

/*
 * A node x node matrix as a heat-map section (for cluster runs): cells[i *
 * n + j] is the figure from labels[i] to labels[j], NAN where there is none.
 * Colour runs from the worst to the best value seen; higher_better says
 * which end is good.  Append the output to extra_html of rq_html_run.
 */
void rq_html_heatmap(struct sb *out, const char *title, const char *const *labels, size_t n,
		     const double *cells, const char *unit, bool higher_better);

/*
 * trend.json in the run dir open as dirfd: the run's start and each row's
 * judged figures, what the next runs' pages read for their trends (never
 * the whole results.json).  0 or -errno.
 */
#define RQ_TREND_INDEX "trend.json"
struct rq_run_info;
int rq_trend_index_write(int dirfd, const struct rq_run_info *ri, const struct rq_results *rs);

/* Text for HTML element content and attribute values (invalid UTF-8 -> U+FFFD). */
void rq_html_escape(struct sb *out, const char *s);

#endif
