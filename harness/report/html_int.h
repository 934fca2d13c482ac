/* SPDX-License-Identifier: MIT */
/*
 * report.html, split by page: what html_common.c (the frame and the pieces
 * both pages show), html_run.c (a run's page), html_compare.c (a
 * comparison's), html_chart.c (the charts, the heat map) and html_trend.c
 * (the trends and their index) share.  Not for use outside report/: the
 * pages' interface is report/html.h.
 */
#ifndef RQ_REPORT_HTML_INT_H
#define RQ_REPORT_HTML_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "core/run_doc.h"
#include "core/util.h"
#include "report/html.h"

static inline void esc(struct sb *out, const char *s)
{
	rq_html_escape(out, s ? s : "");
}

static inline const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Worst first: the order rows are listed in and a grid cell's verdict is chosen by. */
extern const char *const html_verdicts[4];
struct rq_result;
/* A row's verdict's index in html_verdicts (one without a verdict: ERROR's). */
int html_verdict_index(const struct rq_result *r);

/*
 * The rows a page is drawn from: a document's (core/run_doc.h), or a run's
 * rows (a lab run's are mostly spooled on disk), each read as its
 * results.json would give it back (numbers to 10 digits) when it is read,
 * so a page of 122,880 rows never holds them all and draws the same as
 * from the file.  A row from html_rows_at is good until the next
 * html_rows_at on the same rows.
 */
struct rows {
	const struct rq_run_doc *doc;
	const struct rq_results *rs;
	struct rq_result cur;		/* a run's row, its figures rounded (borrowed strings) */
	struct rq_figure *figs;		/* cur's */
	size_t cap;
	struct afile *f;	/* the page's file, written as the row sections grow, or NULL */
};

struct rows html_doc_rows(const struct rq_run_doc *doc);
size_t html_rows_n(const struct rows *s);
const struct rq_result *html_rows_at(struct rows *s, size_t i);
/* Between rows of a section: the page so far goes to its file (no section looks back). */
void html_rows_drain(struct rows *s, struct sb *out);
void html_rows_release(struct rows *s);

#define ROWS_EACH(s, i, r) for ((i) = 0; (i) < html_rows_n(s) && ((r) = html_rows_at((s), (i))); (i)++)

/* The page's head (kind: its body's data-kind, "run" or "compare") and its end. */
void html_page_begin(struct sb *out, const char *kind, const char *title);
void html_page_end(struct sb *out);

/* c[k]: the rows whose verdict is html_verdicts[k] (one without a verdict: ERROR). */
void html_counts_of(struct rows *rows, unsigned c[4]);
void html_row_name(struct sb *out, const struct rq_result *r);
/* The FAIL and ERROR rows with reason and log tail (label: the side, or NULL). */
void html_failures(struct sb *out, struct rows *rows, const char *run_dir, const char *label);
void html_filter_buttons(struct sb *out);
void html_facts_table(struct sb *out, const struct rq_run_doc *doc, const char *id, const char *title);
void html_synthesized_banner(struct sb *out, const struct rq_run_doc *doc, const char *side);

/* The charts section of ndocs sides (labels[d]: a side's name, NULL for a run's page). */
void html_charts(struct sb *out, struct rows *docs, const char *const *labels, int ndocs);

/* The earlier runs beside a run, for each judged figure's sparkline (html_trend.c). */
#define RQ_TREND_RUNS 20

struct trend {
	json_t *idx[RQ_TREND_RUNS];	/* row id -> {"figures": [...]}, oldest first */
	char *started[RQ_TREND_RUNS];
	size_t n;
};

void html_trend_load(struct trend *t, const char *run_dir, const struct rq_run_doc *self);
void html_trend_release(struct trend *t);
void html_trend_svg(struct sb *out, const struct trend *t, const char *row, const struct rq_figure *f);

#endif
