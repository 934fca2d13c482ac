// SPDX-License-Identifier: MIT
/*
 * rdmaqual history [--json] [--html FILE] [-T PCT] DIR...: every judged
 * figure (one whose direction is known) across the runs found in DIRs, in
 * run order, with change points flagged (src/qual/history.c; docs/history.md).
 * A DIR is a run directory or a reports directory holding run directories.
 * Exit 0 (history judges nothing), 2: usage or no run found.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "cli/cli.h"
#include "core/json_text.h"
#include "core/run_doc.h"
#include "core/term.h"
#include "core/util.h"
#include "qual/compare.h"
#include "qual/history.h"
#include "report/compare.h"
#include "report/html.h"
#include "report/table.h"

#define HISTORY_SCHEMA "rdmaqual-history/1"
#define MAX_CP 16

static void history_usage(FILE *fp)
{
	fprintf(fp,
"usage: rdmaqual history [OPTIONS] DIR...\n"
"Every judged figure across the runs in DIRs (run directories, or reports\n"
"directories holding them), in run order, with change points flagged.\n"
"Judged: each row's key figures (its case's judge:, else its kind's), as\n"
"compare and qualify judge them.\n"
"  -T, --tolerance PCT  a change point moves the median by more than PCT (default %g)\n"
"      --all-figures    every figure with a direction, not only the key ones\n"
"      --json           print the rdmaqual-history/1 document instead of tables\n"
"      --html FILE      also write a page with one small chart per figure\n"
"Exit status: 0, or 2 for usage errors and when no run is found.\n", RQ_COMPARE_DEFAULT_TOL);
}

struct run {
	char *path, *id, *started;
	struct rq_run_doc doc;		/* its rows cut to what compare reads */
};

struct series {
	char *row, *name, *unit;
	enum cmp_dir dir;
	size_t n;
	size_t *run;		/* index into runs */
	double *v;
	struct rq_change_point cp[MAX_CP];
	size_t ncp;
};

struct hist {
	struct run *runs;
	size_t nruns;
	struct series *s;
	size_t ns;
};

static bool is_run_dir(const char *dir)
{
	char p[PATH_MAX + 16];
	struct stat st;

	snprintf(p, sizeof(p), "%s/results.json", dir);
	return !lstat(p, &st) && S_ISREG(st.st_mode);
}

static void add_run(struct hist *h, const char *dir)
{
	char path[PATH_MAX], real[PATH_MAX];
	struct rq_run_doc doc;

	if (!realpath(dir, real))
		return;
	for (size_t i = 0; i < h->nruns; i++)
		if (!strcmp(h->runs[i].path, real))
			return;	/* reports/latest and the run it names */
	cmp_doc_init(&doc, RQ_RUN_DOC_COMPACT);
	if (compare_load_doc(real, path, sizeof(path), &doc))
		return;	/* compare_load_doc said why */
	h->runs = xrealloc(h->runs, (h->nruns + 1) * sizeof(*h->runs));
	h->runs[h->nruns++] = (struct run){
		.path = xstrdup(real), .doc = doc,
		.id = xstrdup(doc.run.id ?: "?"),
		.started = xstrdup(doc.run.started ?: ""),
	};
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A run dir, or the run dirs directly under a reports dir (no symlinks
 * followed).  Under a reports dir only the euid's own run dirs count, as
 * for `reports prune`: in a shared (1777) reports dir another user's runs
 * would move the medians and plant change points.  A run dir named
 * directly is the caller's choice and is read whoever owns it.
 */
static int collect(struct hist *h, const char *dir)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, others = 0;

	if (is_run_dir(dir)) {
		add_run(h, dir);
		return 0;
	}
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "rdmaqual history: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char p[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &st) || !S_ISDIR(st.st_mode) || !is_run_dir(p))
			continue;
		if (st.st_uid != geteuid()) {
			others++;
			continue;
		}
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(p);
	}
	closedir(d);
	if (others) {
		char *safe = term_safe(dir);

		fprintf(stderr, "rdmaqual history: %s: skipped %zu run dir%s of other users\n", safe, others,
			others == 1 ? "" : "s");
		free(safe);
	}
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		add_run(h, names[i]);
		free(names[i]);
	}
	free(names);
	return 0;
}

static int run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	int c = strcmp(x->started, y->started);

	return c ? c : strcmp(x->id, y->id);
}

static struct series *series_of(struct hist *h, const char *row, const char *name, const char *unit)
{
	for (size_t i = h->ns; i-- > 0;)
		if (!strcmp(h->s[i].row, row) && !strcmp(h->s[i].name, name) && !strcmp(h->s[i].unit, unit))
			return &h->s[i];
	h->s = xrealloc(h->s, (h->ns + 1) * sizeof(*h->s));
	h->s[h->ns] = (struct series){ .row = xstrdup(row), .name = xstrdup(name), .unit = xstrdup(unit),
				       .dir = cmp_direction(name, unit) };
	return &h->s[h->ns++];
}

static void build(struct hist *h, double tol, bool all_figures)
{
	qsort(h->runs, h->nruns, sizeof(*h->runs), run_cmp);
	for (size_t r = 0; r < h->nruns; r++) {
		const struct rq_run_doc *d = &h->runs[r].doc;

		for (size_t i = 0; i < d->n; i++) {
			const struct rq_result *row = d->rows[i];
			const char *id = row->id, *kind = row->kind, *judge = row->judge;

			for (size_t j = 0; j < row->nfigs; j++) {
				const char *name = row->figs[j].name, *unit = row->figs[j].unit;
				double v = row->figs[j].value;

				if (!isfinite(v) || cmp_direction(name, unit) == CMP_DIR_UNKNOWN ||
				    (!all_figures && !cmp_key_figure(kind, judge, name)))
					continue;
				struct series *s = series_of(h, id, name, unit);

				if (s->n && s->run[s->n - 1] == r)
					continue;	/* a repeated row: the first counts */
				s->run = xrealloc(s->run, (s->n + 1) * sizeof(*s->run));
				s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
				s->run[s->n] = r;
				s->v[s->n++] = v;
			}
		}
	}
	for (size_t i = 0; i < h->ns; i++)
		h->s[i].ncp = rq_change_points(h->s[i].v, h->s[i].n, tol, h->s[i].cp, MAX_CP);
}

/* Is a change for the worse, given the figure's direction? */
static bool worse(const struct series *s, const struct rq_change_point *c)
{
	return c->change_pct * (double)s->dir < 0;
}

static void print_console(const struct hist *h, double tol)
{
	struct table t = { .cols = 6 };
	size_t ncp = 0;
	/* run.started is a node's or a file's text: no terminal sequence from it */
	char *first = term_safe(h->runs[0].started), *last = term_safe(h->runs[h->nruns - 1].started);

	printf("history of %zu run%s, %s .. %s; change points: binary segmentation with the Mann-Whitney "
	       "test, beyond %g%%\n", h->nruns, h->nruns == 1 ? "" : "s", first, last, tol);
	free(first);
	free(last);
	table_cell(&t, "ROW");
	table_cell(&t, "FIGURE");
	table_cell(&t, "RUNS");
	table_cell(&t, "FIRST");
	table_cell(&t, "LAST");
	table_cell(&t, "CHANGE POINTS");
	/* Figures with change points first. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < h->ns; i++) {
			const struct series *s = &h->s[i];
			struct sb cps = SB_INIT;

			if ((pass == 0) != (s->ncp > 0))
				continue;
			for (size_t k = 0; k < s->ncp; k++)
				sb_addf(&cps, "%sat run %s: %.4g -> %.4g (%+.1f%%, %s, p=%.2g)", k ? "; " : "",
					h->runs[s->run[s->cp[k].index]].id, s->cp[k].before, s->cp[k].after,
					s->cp[k].change_pct, worse(s, &s->cp[k]) ? "WORSE" : "better",
					s->cp[k].p_value);
			ncp += s->ncp;
			table_cell(&t, "%s", s->row);
			table_cell(&t, "%s", s->name);
			table_cell(&t, "%zu", s->n);
			table_cell(&t, "%.4g %s", s->v[0], s->unit);
			table_cell(&t, "%.4g %s", s->v[s->n - 1], s->unit);
			table_cell(&t, "%s", cps.len ? cps.buf : "-");
			sb_release(&cps);
		}
	table_print(&t, stdout);
	printf("%zu figure%s, %zu change point%s\n", h->ns, h->ns == 1 ? "" : "s", ncp, ncp == 1 ? "" : "s");
}

static json_t *to_json(const struct hist *h, double tol)
{
	json_t *runs = json_array(), *figs = json_array();

	for (size_t r = 0; r < h->nruns; r++)
		json_array_append_new(runs, json_pack("{s:o, s:o, s:o}", "id", rq_json_text(h->runs[r].id),
						      "started", rq_json_text(h->runs[r].started),
						      "path", rq_json_text(h->runs[r].path)));
	for (size_t i = 0; i < h->ns; i++) {
		const struct series *s = &h->s[i];
		json_t *pts = json_array(), *cps = json_array();

		for (size_t k = 0; k < s->n; k++)
			json_array_append_new(pts, json_pack("{s:o, s:f}", "run", rq_json_text(h->runs[s->run[k]].id),
							     "value", s->v[k]));
		for (size_t k = 0; k < s->ncp; k++)
			json_array_append_new(cps, json_pack("{s:I, s:o, s:f, s:f, s:f, s:f, s:b}", "index",
							     (json_int_t)s->cp[k].index, "run",
							     rq_json_text(h->runs[s->run[s->cp[k].index]].id),
							     "before_median", s->cp[k].before, "after_median",
							     s->cp[k].after, "change_pct", s->cp[k].change_pct,
							     "p_value", s->cp[k].p_value, "worse", worse(s, &s->cp[k])));
		json_array_append_new(figs, json_pack("{s:o, s:o, s:o, s:s, s:o, s:o}", "row", rq_json_text(s->row),
						      "name", rq_json_text(s->name), "unit", rq_json_text(s->unit),
						      "better", cmp_dir_name(s->dir), "points", pts,
						      "change_points", cps));
	}
	return json_pack("{s:s, s:{s:s, s:f, s:i, s:i, s:f}, s:o, s:o}", "schema", HISTORY_SCHEMA, "method",
			 "name", "binary segmentation, Mann-Whitney U, Bonferroni over the splits tried",
			 "tolerance_pct", tol, "min_segment", RQ_CP_MIN_SEG, "window", RQ_CP_WINDOW,
			 "alpha", RQ_CP_ALPHA, "runs", runs, "figures", figs);
}

/* One small chart: the values as a line, change points as red marks. */
static void svg(struct sb *o, const struct hist *h, const struct series *s)
{
	const double W = 260, H = 56, pad = 4;
	double lo = s->v[0], hi = s->v[0];

	for (size_t k = 1; k < s->n; k++) {
		lo = fmin(lo, s->v[k]);
		hi = fmax(hi, s->v[k]);
	}
	if (hi == lo)
		hi = lo + 1;
#define X(i) (pad + (h->nruns > 1 ? (double)(i) * (W - 2 * pad) / (double)(h->nruns - 1) : (W - 2 * pad) / 2))
#define Y(v) (H - pad - ((v) - lo) / (hi - lo) * (H - 2 * pad))
	sb_addf(o, "<svg class=\"spark\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">", W, H, W, H);
	for (size_t k = 0; k < s->ncp; k++)
		sb_addf(o, "<line class=\"cp\" x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%g\" stroke=\"%s\" "
			"stroke-dasharray=\"3,2\"/>", X(s->run[s->cp[k].index]) - 0.5, X(s->run[s->cp[k].index]) - 0.5,
			H, worse(s, &s->cp[k]) ? "#c62828" : "#2e7d32");
	sb_adds(o, "<polyline fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.5\" points=\"");
	for (size_t k = 0; k < s->n; k++)
		sb_addf(o, "%s%.1f,%.1f", k ? " " : "", X(s->run[k]), Y(s->v[k]));
	sb_adds(o, "\"/>");
	for (size_t k = 0; k < s->n; k++) {
		sb_addf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"#1565c0\"><title>", X(s->run[k]), Y(s->v[k]));
		rq_html_escape(o, h->runs[s->run[k]].id);
		sb_addf(o, ": %.4g ", s->v[k]);
		rq_html_escape(o, s->unit);
		sb_adds(o, "</title></circle>");
	}
#undef X
#undef Y
	sb_adds(o, "</svg>");
}

static int write_html(const char *file, const struct hist *h, double tol)
{
	struct sb o = SB_INIT;
	int rc;

	/* the run page's CSP: a unit or name that escaped escaping still loads and runs nothing */
	sb_adds(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"" RQ_HTML_CSP "\">"
		"<title>rdmaqual history</title>"
		"<style>body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}"
		"td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:middle}"
		".worse{color:#c62828;font-weight:600}.better{color:#2e7d32}.spark{display:block}"
		"</style></head><body>\n<h1>History</h1>\n");
	sb_addf(&o, "<p id=\"summary\">%zu runs, ", h->nruns);
	rq_html_escape(&o, h->runs[0].started);
	sb_adds(&o, " .. ");
	rq_html_escape(&o, h->runs[h->nruns - 1].started);
	sb_addf(&o, "; change points by binary segmentation with the Mann-Whitney test (at least %d runs each "
		"side, Bonferroni over the splits tried), moving the median by more than %g%%.</p>\n",
		RQ_CP_MIN_SEG, tol);
	sb_adds(&o, "<table id=\"figures\"><tr><th>row</th><th>figure</th><th>runs</th><th>trend</th>"
		"<th>change points</th></tr>\n");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < h->ns; i++) {
			const struct series *s = &h->s[i];

			if ((pass == 0) != (s->ncp > 0))
				continue;
			sb_addf(&o, "<tr class=\"figure\" data-cp=\"%zu\"><td>", s->ncp);
			rq_html_escape(&o, s->row);
			sb_adds(&o, "</td><td>");
			rq_html_escape(&o, s->name);
			sb_adds(&o, " (");
			rq_html_escape(&o, s->unit);
			sb_addf(&o, ", %s is better)</td><td>%zu</td><td>", cmp_dir_name(s->dir), s->n);
			svg(&o, h, s);
			sb_adds(&o, "</td><td>");
			for (size_t k = 0; k < s->ncp; k++) {
				sb_addf(&o, "<div class=\"%s\">at ", worse(s, &s->cp[k]) ? "worse" : "better");
				rq_html_escape(&o, h->runs[s->run[s->cp[k].index]].id);
				sb_addf(&o, ": %.4g &rarr; %.4g (%+.1f%%, p=%.2g)</div>", s->cp[k].before, s->cp[k].after,
					s->cp[k].change_pct, s->cp[k].p_value);
			}
			sb_adds(&o, s->ncp ? "</td></tr>\n" : "-</td></tr>\n");
		}
	sb_adds(&o, "</table>\n</body></html>\n");
	rc = write_file_atomic(file, o.buf, o.len);
	sb_release(&o);
	if (rc)
		fprintf(stderr, "rdmaqual history: cannot write %s: %s\n", file, strerror(-rc));
	return rc;
}

int cmd_history(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "tolerance", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 1 },
		{ "html", required_argument, NULL, 2 },
		{ "all-figures", no_argument, NULL, 3 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct hist h = { 0 };
	struct cmp_opts co;
	const char *html = NULL;
	bool json = false;
	char err[300];
	int opt, ret = RQ_EXIT_USAGE;

	cmp_opts_init(&co);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "T:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'T':
			if (strchr(optarg, '=') || cmp_opts_tolerance(&co, optarg, err, sizeof(err))) {
				cmp_opts_release(&co);
				return usage_error("history", "-T wants a percentage, not \"%s\"", optarg);
			}
			break;
		case 1: json = true; break;
		case 2: html = optarg; break;
		case 3: co.all_figures = true; break;
		case 'h': history_usage(stdout); cmp_opts_release(&co); return 0;
		default: history_usage(stderr); cmp_opts_release(&co); return RQ_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cmp_opts_release(&co);
		return usage_error("history", "wants one or more run or reports directories");
	}
	for (int i = optind; i < argc; i++)
		if (collect(&h, argv[i]))
			goto out;
	if (!h.nruns) {
		fprintf(stderr, "rdmaqual history: no run (a directory with results.json) in the directories given\n");
		goto out;
	}
	build(&h, co.tol_pct, co.all_figures);
	if (json) {
		json_t *doc = to_json(&h, co.tol_pct);
		char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(doc);
	} else {
		print_console(&h, co.tol_pct);
	}
	ret = RQ_EXIT_OK;
	if (html && write_html(html, &h, co.tol_pct))
		ret = RQ_EXIT_FAIL;
out:
	for (size_t i = 0; i < h.nruns; i++) {
		free(h.runs[i].path);
		free(h.runs[i].id);
		free(h.runs[i].started);
		rq_run_doc_release(&h.runs[i].doc);
	}
	free(h.runs);
	for (size_t i = 0; i < h.ns; i++) {
		free(h.s[i].row);
		free(h.s[i].name);
		free(h.s[i].unit);
		free(h.s[i].run);
		free(h.s[i].v);
	}
	free(h.s);
	cmp_opts_release(&co);
	return ret;
}
