/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual compare BEFORE AFTER: qualify an upgrade by comparing two runs
 * (docs/compare.md).  This file reads the two results.json files and
 * renders the findings of src/qual/compare.c as a table or as JSON
 * ("rdmaqual-compare/1").  Exit 0: no regression, 1: regressions,
 * 2: bad usage or an input that is not a results.json we read.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "cli/cli.h"
#include "cli/compare.h"
#include "report/html.h"
#include "core/json_text.h"
#include "report/table.h"
#include "qual/compare.h"
#include "core/util.h"

#define RESULTS_MAX (256u << 20)

static void compare_usage(FILE *fp)
{
	fprintf(fp,
		"usage: rdmaqual compare [OPTIONS] BEFORE AFTER\n"
		"BEFORE and AFTER are results.json files or run directories (reports/<id>, reports/latest).\n"
		"  -T, --tolerance PCT        worse-by tolerance for figures, percent (default %g)\n"
		"  -T, --tolerance GLOB=PCT   tolerance for figures whose name matches GLOB ('lat_*=10');\n"
		"                             repeatable, the last match wins\n"
		"      --allow-new-skips      PASS -> SKIP is reported but is not a regression\n"
		"      --json                 print the rdmaqual-compare/1 document instead of tables\n"
		"      --html FILE            also write the comparison as a page (report.html)\n"
		"Exit status: 0 no regression, 1 regression(s), 2 usage or unreadable input.\n",
		RQ_COMPARE_DEFAULT_TOL);
}

/* A run directory holds results.json; a file is taken as it is. */
static int resolve(const char *arg, char *path, size_t size, char *err, size_t errsz)
{
	struct stat st;

	if (stat(arg, &st)) {
		snprintf(err, errsz, "%s: %s", arg, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(path, size, "%s", arg);
		return 0;
	}
	snprintf(path, size, "%s/results.json", arg);
	if (!stat(path, &st))
		return 0;
	snprintf(path, size, "%s/latest/results.json", arg);
	if (!stat(path, &st))
		snprintf(err, errsz, "%s holds no results.json (a reports folder? try %s/latest)", arg, arg);
	else
		snprintf(err, errsz, "%s holds no results.json (give a run directory or a results.json)", arg);
	return -ENOENT;
}

json_t *compare_load(const char *arg, char *path, size_t size)
{
	struct sb text = SB_INIT;
	char err[600];
	json_error_t je;
	json_t *doc;
	int ret;

	if (resolve(arg, path, size, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual compare: %s\n", err);
		return NULL;
	}
	ret = read_file(path, &text, RESULTS_MAX);	/* 16 MiB, the default, is ~15k rows */
	if (ret) {
		fprintf(stderr, "rdmaqual compare: %s: %s\n", path, strerror(-ret));
		sb_release(&text);
		return NULL;
	}
	if (text.len >= RESULTS_MAX) {	/* read_file stops at the limit */
		fprintf(stderr, "rdmaqual compare: %s: larger than %u MiB, not read\n", path, RESULTS_MAX >> 20);
		sb_release(&text);
		return NULL;
	}
	doc = json_loadb(text.buf, text.len, 0, &je);
	sb_release(&text);
	if (!doc) {
		fprintf(stderr, "rdmaqual compare: %s: not a results.json: not JSON (line %d: %s)\n",
			path, je.line, je.text);
		return NULL;
	}
	if (cmp_check_doc(doc, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual compare: %s: %s\n", path, err);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static bool is_row_type(enum cmp_type t)
{
	return t <= CMP_REASON;
}

static const char *row_label(const struct cmp_finding *f)
{
	switch (f->type) {
	case CMP_REGRESSED: return "REGRESSION";
	case CMP_MISSING: return "MISSING";
	case CMP_NEW_SKIP: return f->regression ? "NEW SKIP" : "new skip (allowed)";
	case CMP_FIXED: return "FIXED";
	case CMP_VERDICT: return "CHANGED";
	case CMP_NEW_ROW: return "NEW ROW";
	case CMP_GONE: return "GONE";
	case CMP_REASON: return "REASON";
	default: return "?";
	}
}

static char *num(double v, const char *unit)
{
	const char *sp = unit && *unit ? " " : "";

	if (!isfinite(v))
		return xstrdup("-");
	if (fabs(v) >= 1000)
		return xasprintf("%.1f%s%s", v, sp, unit ? unit : "");
	return xasprintf("%.4g%s%s", v, sp, unit ? unit : "");
}

static const char *fig_judgement(const struct cmp_finding *f)
{
	switch (f->type) {
	case CMP_FIG_WORSE: return "WORSE";
	case CMP_FIG_BETTER: return "better";
	case CMP_FIG_SAME: return "ok";
	default: return "";
	}
}

/* Unjudged figures that did not move are noise in a table (JSON has them). */
static bool fig_shown(const struct cmp_finding *f)
{
	if (f->type != CMP_FIG_UNJUDGED)
		return true;
	if (f->before && f->after && !strcmp(f->before, f->after) && f->dir == CMP_DIR_UNKNOWN)
		return false;
	return true;
}

static void print_run(FILE *fp, const char *label, const char *path, const struct cmp_run *r)
{
	char *p = term_safe(path), *id = term_safe(r->id ? r->id : "?"), *h = term_safe(r->hostname ? r->hostname : "?");
	char *s = term_safe(r->started ? r->started : "?");

	fprintf(fp, "%-7s %s  (run %s on %s, started %s, %zu rows%s)\n", label, p, id, h, s, r->rows,
		r->complete ? "" : ", INCOMPLETE");
	free(p);
	free(id);
	free(h);
	free(s);
}

static void fig_table(FILE *fp, const struct cmp_report *rep, const enum cmp_type *types, size_t ntypes,
		      const char *title, size_t *hidden)
{
	struct table t = { .cols = 8 };

	for (size_t k = 0; k < ntypes; k++) {
		for (size_t i = 0; i < rep->n; i++) {
			const struct cmp_finding *f = &rep->v[i];
			char *b, *a;

			if (f->type != types[k])
				continue;
			if (hidden && !fig_shown(f)) {
				(*hidden)++;
				continue;
			}
			if (!t.n) {
				table_cell(&t, "ROW"); table_cell(&t, "FIGURE"); table_cell(&t, "BEFORE"); table_cell(&t, "AFTER");
				table_cell(&t, "CHANGE"); table_cell(&t, "TOL"); table_cell(&t, "JUDGED"); table_cell(&t, "NOTE");
			}
			b = f->before ? num(f->vbefore, f->unit) : xstrdup("(none)");
			a = f->after ? num(f->vafter, f->unit) : xstrdup("(none)");
			table_cell(&t, "%s", f->row);
			table_cell(&t, "%s", f->name);
			table_cell(&t, "%s", b);
			table_cell(&t, "%s", a);
			if (isfinite(f->change_pct))
				table_cell(&t, "%+.1f%%", f->change_pct);
			else
				table_cell(&t, "-");
			if (isfinite(f->tol_pct))
				table_cell(&t, "%g%%", f->tol_pct);
			else
				table_cell(&t, "-");
			table_cell(&t, "%s", fig_judgement(f));
			table_cell(&t, "%s", f->type == CMP_FIG_SAME ? "" : f->msg ? f->msg : "");
			free(b);
			free(a);
		}
	}
	if (t.n) {
		fputs(title, fp);
		table_print(&t, fp);
	}
}

void compare_print(FILE *fp, const struct cmp_report *rep, const char *pb, const char *pa)
{
	struct table t = { 0 };
	size_t hidden = 0, nfig_regr = 0, nrow_regr = 0;

	print_run(fp, "before", pb, &rep->before);
	print_run(fp, "after", pa, &rep->after);

	if (rep->count[CMP_WARNING]) {
		fputs("\nwarnings\n", fp);
		t.cols = 2;
		for (size_t i = 0; i < rep->n; i++) {
			const struct cmp_finding *f = &rep->v[i];

			if (f->type != CMP_WARNING)
				continue;
			table_cell(&t, "%s", f->row ? f->row : "(run)");
			table_cell(&t, "%s", f->msg);
		}
		table_print(&t, fp);
	}

	if (rep->count[CMP_FACT]) {
		fputs("\nenvironment changes (reported, not judged)\n", fp);
		t.cols = 5;
		for (size_t i = 0; i < rep->n; i++) {
			const struct cmp_finding *f = &rep->v[i];

			if (f->type != CMP_FACT)
				continue;
			table_cell(&t, "%s", f->row ? f->row : "(run)");
			table_cell(&t, "%s", f->name);
			table_cell(&t, "%s", f->before ? f->before : "(none)");
			table_cell(&t, "->");
			table_cell(&t, "%s", f->after ? f->after : "(none)");
		}
		table_print(&t, fp);
	}

	t.cols = 4;
	for (size_t i = 0; i < rep->n; i++) {
		const struct cmp_finding *f = &rep->v[i];

		if (!is_row_type(f->type))
			continue;
		nrow_regr += f->regression;
		table_cell(&t, "%s", row_label(f));
		table_cell(&t, "%s", f->row);
		table_cell(&t, "%s -> %s", f->before ? f->before : "(none)", f->after ? f->after : "(none)");
		table_cell(&t, "%s", f->msg ? f->msg : "");
	}
	if (t.n) {
		fputs("\nrows\n", fp);
		table_print(&t, fp);
	}

	/* Judged figures first (worst first), then what could not be judged. */
	static const enum cmp_type judged[] = { CMP_FIG_WORSE, CMP_FIG_BETTER, CMP_FIG_SAME, CMP_FIG_ONE_SIDE };
	static const enum cmp_type unjudged[] = { CMP_FIG_UNJUDGED };
	for (size_t i = 0; i < rep->n; i++)
		nfig_regr += rep->v[i].regression && rep->v[i].type == CMP_FIG_WORSE;
	fig_table(fp, rep, judged, ARRAY_SIZE(judged), "\nfigures (change = (after - before) / |before|)\n", NULL);
	fig_table(fp, rep, unjudged, ARRAY_SIZE(unjudged), "\nfigures not judged (reported only)\n", &hidden);
	if (hidden)
		fprintf(fp, "  (%zu unchanged figure%s of unknown direction not shown; --json lists them)\n",
			hidden, hidden == 1 ? "" : "s");

	fprintf(fp, "\n%zu rows matched; %u regression%s (%zu row%s, %zu figure%s); %u fixed, "
		"%u new skip%s, %u new row%s, %u gone, %u reason%s changed; %u figure%s better; "
		"%u environment fact%s changed; %u warning%s\n",
		rep->matched, rep->regressions, rep->regressions == 1 ? "" : "s",
		nrow_regr, nrow_regr == 1 ? "" : "s", nfig_regr, nfig_regr == 1 ? "" : "s",
		rep->count[CMP_FIXED], rep->count[CMP_NEW_SKIP], rep->count[CMP_NEW_SKIP] == 1 ? "" : "s",
		rep->count[CMP_NEW_ROW], rep->count[CMP_NEW_ROW] == 1 ? "" : "s",
		rep->count[CMP_GONE] + rep->count[CMP_MISSING], rep->count[CMP_REASON],
		rep->count[CMP_REASON] == 1 ? "" : "s", rep->count[CMP_FIG_BETTER],
		rep->count[CMP_FIG_BETTER] == 1 ? "" : "s", rep->count[CMP_FACT],
		rep->count[CMP_FACT] == 1 ? "" : "s", rep->count[CMP_WARNING],
		rep->count[CMP_WARNING] == 1 ? "" : "s");
	fprintf(fp, "result: %s\n", rep->regressions ? "REGRESSION" : "no regression");
}

/* The run directory of a results.json path (its logs are relative to it). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}

static int write_html(const char *file, const struct cmp_report *rep, const struct cmp_opts *o,
		      json_t *before, json_t *after, const char *pb, const char *pa)
{
	json_t *doc = cmp_report_json(rep, o);
	char *db = dir_of(pb), *da = dir_of(pa), *title = xasprintf("compare %s %s", pb, pa);
	struct rq_html_side b = { .label = "before", .doc = before, .run_dir = db };
	struct rq_html_side a = { .label = "after", .doc = after, .run_dir = da };
	int rc = rq_html_compare_write(file, title, &b, &a, doc);

	if (rc)
		fprintf(stderr, "rdmaqual compare: cannot write %s: %s\n", file, strerror(-rc));
	free(db);
	free(da);
	free(title);
	json_decref(doc);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "tolerance", required_argument, NULL, 'T' },
		{ "allow-new-skips", no_argument, NULL, 1 },
		{ "json", no_argument, NULL, 2 },
		{ "html", required_argument, NULL, 3 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct cmp_opts o;
	struct cmp_report rep;
	char err[600], pb[PATH_MAX], pa[PATH_MAX];
	json_t *before = NULL, *after = NULL;
	bool json = false;
	const char *html = NULL;
	int opt, ret = RQ_EXIT_USAGE;

	cmp_opts_init(&o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "T:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'T':
			if (cmp_opts_tolerance(&o, optarg, err, sizeof(err))) {
				cmp_opts_release(&o);
				return usage_error("compare", "%s", err);
			}
			break;
		case 1: o.allow_new_skips = true; break;
		case 2: json = true; break;
		case 3: html = optarg; break;
		case 'h':
			compare_usage(stdout);
			cmp_opts_release(&o);
			return 0;
		default:
			compare_usage(stderr);
			cmp_opts_release(&o);
			return RQ_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		cmp_opts_release(&o);
		return usage_error("compare", "wants two runs, BEFORE and AFTER (got %d argument%s)",
				   argc - optind, argc - optind == 1 ? "" : "s");
	}
	before = compare_load(argv[optind], pb, sizeof(pb));
	after = before ? compare_load(argv[optind + 1], pa, sizeof(pa)) : NULL;
	if (!before || !after)
		goto out;
	if (cmp_compare(before, after, &o, &rep, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual compare: %s\n", err);	/* cmp_check_doc passed: not expected */
		goto out;
	}
	if (json) {
		json_t *doc = cmp_report_json(&rep, &o);
		char *s;

		json_object_set_new(json_object_get(doc, "before"), "path", rq_json_text(pb));
		json_object_set_new(json_object_get(doc, "after"), "path", rq_json_text(pa));
		s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(doc);
	} else {
		compare_print(stdout, &rep, pb, pa);
	}
	ret = rep.regressions ? RQ_EXIT_FAIL : RQ_EXIT_OK;
	if (html && write_html(html, &rep, &o, before, after, pb, pa))
		ret = RQ_EXIT_USAGE;
	cmp_report_release(&rep);
out:
	json_decref(before);
	json_decref(after);
	cmp_opts_release(&o);
	return ret;
}
