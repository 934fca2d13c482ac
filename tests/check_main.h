/* SPDX-License-Identifier: MIT */
/*
 * The one libcheck main of the unit tests.  A test file defines its tests,
 * then a function that adds them to the test case (and sets its fixture,
 * timeout or process state; a test case with other settings is made with
 * tcase_create() and added to the suite s), and ends with
 *
 *	RQ_CHECK_MAIN("name", add_tests)
 *
 * Failures go to stdout in libcheck's format; the exit status is non-zero
 * when any test failed.  CK_RUN_CASE / CK_RUN_SUITE are libcheck's own
 * filters; `make unit T=name` runs one binary.
 */
#ifndef RQ_CHECK_MAIN_H
#define RQ_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>
#include "lab/lab.h"
#include "core/kind.h"
#include "core/target.h"

static inline int rq_check_run(const char *name, void (*add)(Suite *s, TCase *tc))
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);
	SRunner *sr;
	int failed;

	rq_kinds_install();
	rq_targets_install();
	rq_lab_install();
	suite_add_tcase(s, tc);
	add(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define RQ_CHECK_MAIN(name, add) \
	int main(void) { return rq_check_run(name, add); }

#endif
