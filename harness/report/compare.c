/* SPDX-License-Identifier: MIT */
/*
 * What `compare`, `qualify` and `baseline` share (report/compare.h):
 * reading a run's results.json, and the tables and result line that render
 * the findings of src/qual/compare.c on the console.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "core/json_text.h"
#include "core/run_doc.h"
#include "core/util.h"
#include "qual/compare.h"
#include "report/compare.h"
#include "report/table.h"

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

int compare_load_doc(const char *arg, char *path, size_t size, struct rq_run_doc *d)
{
	char err[PATH_MAX + 600];

	if (resolve(arg, path, size, err, sizeof(err)) || rq_run_doc_load(d, path, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual compare: %s\n", err);
		rq_run_doc_release(d);
		return -1;
	}
	return 0;
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
	case CMP_FIG_UNSURE: return f->regression ? "UNSURE" : "unsure";
	default: return "";
	}
}

/* Unjudged figures that did not move are noise in a table (JSON has them). */
/* A figure left out because its kind (rq_kind.key_figures) or its case (judge:) judges others. */
static bool not_key(const struct cmp_finding *f)
{
	return f->type == CMP_FIG_UNJUDGED && f->msg && !strncmp(f->msg, "not judged: not a key figure", 28);
}

static bool fig_shown(const struct cmp_finding *f)
{
	if (f->type != CMP_FIG_UNJUDGED)
		return true;
	/* A latency row's mean, p99 and max, a bandwidth's message rate: on the page and in --json. */
	if (not_key(f))
		return false;
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
	if (r->synthesized) {
		/* its verdicts are a fixture's: said where the numbers are, as a run's report does */
		char *by = term_safe(r->synthesized_by ? r->synthesized_by : "?");

		fprintf(fp, "%-7s a replay of a synthesized node tree (made by %s), not a capture of a machine\n",
			"", by);
		free(by);
	}
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
	static const enum cmp_type judged[] = { CMP_FIG_WORSE, CMP_FIG_UNSURE, CMP_FIG_BETTER, CMP_FIG_SAME,
						CMP_FIG_ONE_SIDE };
	static const enum cmp_type unjudged[] = { CMP_FIG_UNJUDGED };
	for (size_t i = 0; i < rep->n; i++)
		nfig_regr += rep->v[i].regression && (rep->v[i].type == CMP_FIG_WORSE ||
						      rep->v[i].type == CMP_FIG_UNSURE);
	fig_table(fp, rep, judged, ARRAY_SIZE(judged), "\nfigures (change = (after - before) / |before|)\n", NULL);
	fig_table(fp, rep, unjudged, ARRAY_SIZE(unjudged), "\nfigures not judged (reported only)\n", &hidden);
	size_t nkey = 0;

	for (size_t i = 0; i < rep->n; i++)
		nkey += not_key(&rep->v[i]);
	if (hidden > nkey)
		fprintf(fp, "  (%zu unchanged figure%s of unknown direction not shown; --json lists them)\n",
			hidden - nkey, hidden - nkey == 1 ? "" : "s");
	if (nkey)
		fprintf(fp, "  (%zu figure%s not key to %s kind not judged and not shown; --all-figures judges "
			"them, --json lists them)\n", nkey, nkey == 1 ? "" : "s", nkey == 1 ? "its" : "their");

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
	if (rep->count[CMP_FIG_UNSURE]) {
		bool strict = false;

		for (size_t i = 0; i < rep->n; i++)
			strict |= rep->v[i].type == CMP_FIG_UNSURE && rep->v[i].regression;
		fprintf(fp, "%u figure%s inconclusive (too noisy to tell: %s)\n", rep->count[CMP_FIG_UNSURE],
			rep->count[CMP_FIG_UNSURE] == 1 ? "" : "s",
			strict ? "--strict counts them as regressions" : "not a regression; --strict fails them");
	}
	fprintf(fp, "result: %s\n", rep->regressions ? "REGRESSION" : "no regression");
}

