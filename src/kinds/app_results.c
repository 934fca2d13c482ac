/* SPDX-License-Identifier: MIT */
/*
 * A program's own test results as rows of its case.  Each test becomes a
 * row "CASE[test name]" with its verdict, time and message; the case's own
 * row keeps the program's exit status and output, and the counts of all
 * tests (tests, tests_passed, tests_failed, tests_errors, tests_skipped)
 * as figures.  A suite of 100,000 tests must not cost the report: at most
 * results_max_rows rows are kept, failures and errors first, then skips,
 * then passes, in the program's order, and the rows left out are counted
 * (tests_rows_omitted) and named in the log.
 *
 * The results file is the program's: a path it chose, possibly in a
 * directory others write.  It is opened without following a link, must be
 * a regular file no larger than 64 MiB, and must have been written while
 * the case ran (a file left by an earlier run would give old results).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "kinds/app_results.h"
#include "parsers/parse_testresults.h"

#define FILE_MAX (64u << 20)
/* A file's mtime may trail the clock by a tick of a coarse filesystem. */
#define MTIME_SLACK_NS 2000000000LL

const char *const app_results_formats[] = { "none", "tap", "junit", "unittest", "blktests", NULL };

int app_results_validate(const struct app_results *res, char *err, size_t errsz)
{
	if (res->file && res->file[0] != '/') {
		snprintf(err, errsz, "results_file: \"%s\" is not an absolute path", res->file);
		return -1;
	}
	if (res->file && !res->format) {
		snprintf(err, errsz, "results_file without results: (tap, junit, unittest or blktests)");
		return -1;
	}
	if (res->format == TR_JUNIT + 1 && !res->file) {
		snprintf(err, errsz, "results: junit is read from a file: set results_file");
		return -1;
	}
	return 0;
}

int64_t app_results_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The results file, read safely; 0, or -1 with why. */
static int read_results(const char *path, int64_t started, struct sb *out, char *why, size_t whysz)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (fd < 0) {
		snprintf(why, whysz, "results file %s: %s%s", path, strerror(errno),
			 errno == ELOOP ? " (a symbolic link: not followed)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whysz, "results file %s: not a regular file", path);
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > FILE_MAX) {
		snprintf(why, whysz, "results file %s: %lld bytes, more than %u MiB", path,
			 (long long)st.st_size, FILE_MAX >> 20);
		close(fd);
		return -1;
	}
	if ((int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec < started - MTIME_SLACK_NS) {
		snprintf(why, whysz, "results file %s: not written during this case (older than the "
			 "program's start): left by an earlier run?", path);
		close(fd);
		return -1;
	}
	while (out->len <= FILE_MAX && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, whysz, "results file %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		sb_add(out, buf, (size_t)n);
	}
	close(fd);
	return 0;
}

static enum rq_verdict row_verdict(enum tr_verdict v)
{
	switch (v) {
	case TR_PASS:
		return RQ_PASS;
	case TR_FAIL:
		return RQ_FAIL;
	case TR_ERROR:
		return RQ_ERROR;
	case TR_SKIP:
		break;
	}
	return RQ_SKIP;
}

static const char *default_reason(enum tr_verdict v)
{
	return v == TR_FAIL ? "the test failed (no message)" :
	       v == TR_ERROR ? "the test errored (no message)" : "skipped (no reason given)";
}

/* Row ids are unique: a second test of the same name gets " #2". */
static char *unique_name(struct strmap *seen, char ***owned, size_t *nowned, const char *name)
{
	char *n = xstrdup(name);
	bool added;

	for (unsigned k = 2; strmap_put(seen, n, 0, &added), !added; k++) {
		free(n);
		n = xasprintf("%s #%u", name, k);
	}
	*owned = xrealloc(*owned, (*nowned + 1) * sizeof(**owned));
	(*owned)[(*nowned)++] = n;
	return n;
}

void app_results_import(struct rq_ctx *ctx, struct rq_result *main, const struct app_results *res,
			const char *out, size_t len, bool out_cut, int64_t started)
{
	static const enum tr_verdict rank[] = { TR_FAIL, TR_ERROR, TR_SKIP, TR_PASS };
	struct tr_report r;
	struct sb file = SB_INIT;
	char err[512], why[768];
	const char *text = out, *from = "the program's output";
	size_t tlen = len;
	bool *keep;
	size_t kept = 0;

	if (!res->format)
		return;
	enum tr_format f = (enum tr_format)(res->format - 1);

	if (res->file) {
		if (read_results(res->file, started, &file, why, sizeof(why)) < 0) {
			rq_result_set(main, RQ_ERROR, "%s", why);
			sb_release(&file);
			return;
		}
		text = file.buf;
		tlen = file.len;
		from = res->file;
	} else if (out_cut) {
		rq_result_set(main, RQ_ERROR, "results: the program's output was cut (too long to keep "
			      "whole): write the results to a file and name it in results_file");
		return;
	}
	if (tr_parse(f, text, tlen, &r, err, sizeof(err))) {
		rq_result_set(main, RQ_ERROR, "results (%s) in %s: %s", app_results_formats[res->format],
			      res->file ? res->file : from, err);
		sb_release(&file);
		return;
	}
	sb_release(&file);

	/* Which rows to keep: by rank, each rank in the program's order. */
	keep = xcalloc(r.n ? r.n : 1, sizeof(*keep));
	for (size_t k = 0; k < ARRAY_SIZE(rank); k++)
		for (size_t i = 0; i < r.n && kept < (size_t)res->max_rows; i++)
			if (r.v[i].v == rank[k] && !keep[i]) {
				keep[i] = true;
				kept++;
			}

	struct strmap seen = { 0 };
	char **owned = NULL;
	size_t nowned = 0;

	for (size_t i = 0; i < r.n; i++) {
		const struct tr_test *t = &r.v[i];

		if (!keep[i])
			continue;
		struct rq_result *row = rq_result_new(ctx->c->name, NULL, 0);

		free(row->id);
		row->id = xasprintf("%s[%s]", ctx->c->name, unique_name(&seen, &owned, &nowned, t->name));
		if (t->time_s >= 0)
			row->duration_s = t->time_s;
		if (t->v == TR_PASS) {
			rq_judge(row, true, "%s", t->name);
			if (t->msg)
				rq_fact_add(row, "test.note", t->msg);
		} else {
			rq_result_set(row, row_verdict(t->v), "%s", t->msg ? t->msg : default_reason(t->v));
		}
		rq_fact_add(row, "test.source", res->file ? res->file : from);
		rq_results_add(ctx->out, row);
	}
	strmap_release(&seen);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);

	size_t total = r.n, pass = r.count[TR_PASS], fail = r.count[TR_FAIL];
	size_t error = r.count[TR_ERROR], skip = r.count[TR_SKIP];

	rq_figure_add(main, "tests", (double)total, "");
	rq_figure_add(main, "tests_passed", (double)pass, "");
	rq_figure_add(main, "tests_failed", (double)fail, "");
	rq_figure_add(main, "tests_errors", (double)error, "");
	rq_figure_add(main, "tests_skipped", (double)skip, "");
	if (kept < total) {
		rq_figure_add(main, "tests_rows_omitted", (double)(total - kept), "");
		rq_log(ctx, "# results: %zu tests, %zu kept as rows (results_max_rows %lld; failures "
		       "and errors first), %zu passes or skips left out of the report", total, kept,
		       res->max_rows, total - kept);
	}
	rq_log(ctx, "# results (%s, %s): %zu tests: %zu passed, %zu failed, %zu errors, %zu skipped%s%s",
	       app_results_formats[res->format], res->file ? res->file : from, total, pass, fail,
	       error, skip, r.summary ? "; " : "", r.summary ? r.summary : "");

	/*
	 * A program that exits non-zero with no test failed has a reason the
	 * rows cannot show: blktests' subshell of a test that died (a shell
	 * error in its requires()) prints no line for it; its error is here.
	 */
	if (r.outside) {
		rq_fact_add(main, "tests.first_outside", r.outside_first);
		rq_log(ctx, "# results: %zu line%s outside any test, the first: %s", r.outside,
		       r.outside == 1 ? "" : "s", r.outside_first);
		if (!(fail + error))
			rq_result_explain(main, "no test failed; the output has %zu line%s outside any "
					  "test, the first: \"%s\" (a test whose shell exited before "
					  "its status line is missing from the rows)", r.outside,
					  r.outside == 1 ? "" : "s", r.outside_first);
	}
	/* The whole: what a CI job means by "the suite passed". */
	if (r.bailed)
		rq_judge(main, false, "the program bailed out: %s", r.bail && *r.bail ? r.bail : "(no reason)");
	if (fail + error) {
		const char *first = NULL;

		for (size_t i = 0; i < r.n && !first; i++)
			if (r.v[i].v == TR_FAIL || r.v[i].v == TR_ERROR)
				first = r.v[i].name;
		rq_judge(main, false, "%zu of %zu tests failed (%zu failures, %zu errors; first: %s)",
			 fail + error, total, fail, error, first);
	}
	/* TAP's plan counts the top level (a subtest is named parent/child) */
	if (f == TR_TAP && r.planned >= 0 && !r.bailed)
		rq_judge(main, (size_t)r.planned == r.ntop, "TAP plan 1..%lld, but %zu tests reported",
			 r.planned, r.ntop);
	rq_judge(main, (long long)pass >= res->min_passed,
		 "%zu tests passed, fewer than min_passed %lld (%zu skipped of %zu)", pass,
		 res->min_passed, skip, total);
	if (res->max_skipped >= 0)
		rq_judge(main, (long long)skip <= res->max_skipped,
			 "%zu tests skipped, more than max_skipped %lld", skip, res->max_skipped);
	free(keep);
	tr_report_release(&r);
}
