/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual compare BEFORE AFTER: qualify an upgrade by comparing two runs
 * (docs/compare.md).  report/compare.c reads the two results.json files and
 * renders the findings of src/qual/compare.c as tables; this file adds the
 * options, the JSON ("rdmaqual-compare/1") and the page.  Exit 0: no regression, 1: regressions,
 * 2: bad usage or an input that is not a results.json we read.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cli/cli.h"
#include "report/compare.h"
#include "report/html.h"
#include "core/json_text.h"
#include "core/run_doc.h"
#include "qual/compare.h"
#include "core/util.h"

static void compare_usage(FILE *fp)
{
	fprintf(fp,
		"usage: rdmaqual compare [OPTIONS] BEFORE AFTER\n"
		"BEFORE and AFTER are results.json files or run directories (reports/<id>, reports/latest).\n"
		"  -T, --tolerance PCT        worse-by tolerance for figures, percent (default %g)\n"
		"  -T, --tolerance GLOB=PCT   tolerance for figures whose name matches GLOB ('lat_*=10');\n"
		"                             repeatable, the last match wins\n"
		"      --allow-new-skips      PASS -> SKIP is reported but is not a regression\n"
		"      --confidence C         of the verdicts on figures with repeats (default 0.95)\n"
		"      --strict               an inconclusive figure is a regression\n"
		"      --absolute             judge median changes against the tolerance alone, noise or not\n"
		"      --noise-only           one value a side is inconclusive, not judged as a fixed limit\n"
		"      --all-figures          judge every figure with a direction, not only each kind's key ones\n"
		"      --json                 print the rdmaqual-compare/1 document instead of tables\n"
		"      --html FILE            also write the comparison as a page (report.html)\n"
		"Exit status: 0 no regression, 1 regression(s), 2 usage or unreadable input.\n",
		RQ_COMPARE_DEFAULT_TOL);
}

/* The run directory of a results.json path (its logs are relative to it). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}

static int write_html(const char *file, const struct cmp_report *rep, const struct cmp_opts *o,
		      const struct rq_run_doc *before, const struct rq_run_doc *after, const char *pb,
		      const char *pa)
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
		{ "confidence", required_argument, NULL, 4 },
		{ "strict", no_argument, NULL, 5 },
		{ "absolute", no_argument, NULL, 6 },
		{ "noise-only", no_argument, NULL, 7 },
		{ "all-figures", no_argument, NULL, 8 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct cmp_opts o;
	struct cmp_report rep;
	char err[600], pb[PATH_MAX], pa[PATH_MAX];
	bool json = false;
	const char *html = NULL;
	int opt, rc, ret = RQ_EXIT_USAGE;
	struct rq_run_doc db, da;

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
		case 4:
			if (cmp_opts_confidence(&o, optarg, err, sizeof(err))) {
				cmp_opts_release(&o);
				return usage_error("compare", "--confidence: %s", err);
			}
			break;
		case 5: o.strict = true; break;
		case 6: o.absolute = true; break;
		case 7: o.single_absolute = false; break;
		case 8: o.all_figures = true; break;
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
	/*
	 * Read a row at a time (two 112 MB files: 1.6 GB as trees).  The page
	 * draws every row of both documents with their logs, so it keeps the
	 * rows whole; the tables and --json need the rows' figures only.
	 */
	cmp_doc_init(&db, html ? 0 : RQ_RUN_DOC_COMPACT);
	cmp_doc_init(&da, html ? 0 : RQ_RUN_DOC_COMPACT);
	if (compare_load_doc(argv[optind], pb, sizeof(pb), &db))
		goto out;
	if (compare_load_doc(argv[optind + 1], pa, sizeof(pa), &da))
		goto out;
	rc = cmp_compare_docs(&db, &da, &o, &rep, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "rdmaqual compare: %s\n", err);	/* cmp_check_doc passed: not expected */
		goto out;
	}
	if (json) {
		json_t *doc = cmp_report_json(&rep, &o);

		json_object_set_new(json_object_get(doc, "before"), "path", rq_json_text(pb));
		json_object_set_new(json_object_get(doc, "after"), "path", rq_json_text(pa));
		/* straight to stdout: the text of every finding is not held beside their tree */
		if (!json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)))
			putchar('\n');
		json_decref(doc);
	} else {
		compare_print(stdout, &rep, pb, pa);
	}
	ret = rep.regressions ? RQ_EXIT_FAIL : RQ_EXIT_OK;
	if (html && write_html(html, &rep, &o, &db, &da, pb, pa))
		ret = RQ_EXIT_USAGE;
	cmp_report_release(&rep);
out:
	rq_run_doc_release(&db);
	rq_run_doc_release(&da);
	cmp_opts_release(&o);
	return ret;
}
