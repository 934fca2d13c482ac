/* SPDX-License-Identifier: MIT */
/*
 * results: of the command kinds: a program's own per-test results (TAP,
 * JUnit XML, unittest -v) imported as rows under its case, and the keys
 * that judge them as a whole.  The key rows live in each kind's table
 * (APP_RESULTS_KEYS), the struct in its cfg.
 */
#ifndef RQ_APP_RESULTS_H
#define RQ_APP_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include "core/kind.h"

extern const char *const app_results_formats[];	/* "none", "tap", "junit", "unittest" */

struct app_results {
	int format;		/* 0: none, else enum tr_format + 1 */
	char *file;		/* where the program writes them; NULL: its output */
	long long min_passed;
	long long max_skipped;	/* -1: any number */
	long long max_rows;
};

#define APP_RESULTS_KEYS(T, M)                                                                  \
	{ .name = "results", .type = KEY_ENUM, .choices = app_results_formats, .def = "none",       \
	  .offset = offsetof(T, M.format),                                                       \
	  .help = "import the program's own per-test results as rows under the case: tap "         \
		  "(kselftest, prove), junit (XML, from results_file), unittest (python -m "        \
		  "unittest -v, rdma-core's run_tests.py -v), blktests (./check's [passed], "       \
		  "[failed], [not run] lines)" },                                                  \
	{ .name = "results_file", .type = KEY_STR, .offset = offsetof(T, M.file),              \
	  .help = "absolute path where the program writes its results (pytest --junitxml=PATH); "  \
		  "default: its output (stdout then stderr); it must be written during the case" }, \
	{ .name = "min_passed", .type = KEY_INT, .def = "1", .min = 0, .max = 100000000,           \
	  .offset = offsetof(T, M.min_passed),                                                   \
	  .help = "with results: at least this many tests must pass (a run where all skip fails)" }, \
	{ .name = "max_skipped", .type = KEY_INT, .def = "-1", .min = -1, .max = 100000000,       \
	  .offset = offsetof(T, M.max_skipped),                                                  \
	  .help = "with results: at most this many tests may skip; -1: any number" },              \
	{ .name = "results_max_rows", .type = KEY_INT, .def = "1000", .min = 0, .max = 100000,    \
	  .offset = offsetof(T, M.max_rows),                                                     \
	  .help = "with results: at most this many test rows (failures and errors first, then "    \
		  "skips, then passes); the counts are of all" }

/* Cross-key checks; 0, or -1 with err. */
int app_results_validate(const struct app_results *res, char *err, size_t errsz);

/* The wall-clock time a program starts at: a results file must be newer. */
int64_t app_results_clock(void);

/*
 * Import and judge: parse the results file (or out[0..len), the program's
 * output), add a row per test (bounded), counts as figures on main, and
 * judge min_passed, max_skipped, no failed test, and a TAP plan's count.
 * A file that is missing, stale, too big or unparsable is an ERROR on
 * main naming it and the line.
 */
void app_results_import(struct rq_ctx *ctx, struct rq_result *main, const struct app_results *res,
			const char *out, size_t len, bool out_cut, int64_t started);

#endif
