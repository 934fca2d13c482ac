/* SPDX-License-Identifier: MIT */
/*
 * A program's own per-test results, in the forms test programs write:
 * TAP (kselftest and prove-style scripts, TAP 13 and 14 with subtests),
 * JUnit XML (pytest --junitxml, ctest --output-junit, most CI tools),
 * Python unittest's verbose output (rdma-core's run_tests.py) and
 * blktests' ./check lines ("nvme/003 (desc) [passed]").  Pure: text in,
 * one list of tests out.
 */
#ifndef RQ_PARSE_TESTRESULTS_H
#define RQ_PARSE_TESTRESULTS_H

#include <stdbool.h>
#include <stddef.h>

enum tr_verdict { TR_PASS, TR_FAIL, TR_ERROR, TR_SKIP };

struct tr_test {
	char *name;		/* "selftests: net: a/sub", "tests.test_qp.QPTest.test_x" */
	enum tr_verdict v;
	double time_s;		/* < 0: the format gave none */
	char *msg;		/* why it failed or was skipped; NULL when none */
	unsigned line;		/* where it was reported */
};

struct tr_report {
	struct tr_test *v;
	size_t n, cap;
	size_t count[4];	/* per enum tr_verdict */
	size_t ntop;		/* TAP: tests at the top level (the plan counts those) */
	long long planned;	/* TAP: the top-level plan 1..N, unittest: "Ran N tests"; -1: none */
	bool bailed;		/* TAP "Bail out!" */
	char *bail;		/* its reason */
	char *summary;		/* unittest "FAILED (failures=1, skipped=3)", "OK"; NULL */
	size_t outside;		/* blktests: lines outside any test (the shell's, a warning) */
	char *outside_first;	/* the first of them; NULL */
};

enum tr_format { TR_TAP, TR_JUNIT, TR_UNITTEST, TR_BLKTESTS };

/* Each returns 0, or -EINVAL with err "line N: ..." (r is then empty). */
int tap_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz);
int junit_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz);
int unittest_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz);
int blktests_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz);
int tr_parse(enum tr_format f, const char *text, size_t len, struct tr_report *r,
	     char *err, size_t errsz);

void tr_report_release(struct tr_report *r);
const char *tr_verdict_name(enum tr_verdict v);	/* "pass", "fail", "error", "skip" */

#endif
