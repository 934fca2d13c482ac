/* SPDX-License-Identifier: MIT */
/* rdmaqual lint: parse and validate case files, run nothing. */
#include <stdio.h>
#include "cli/cli.h"

int cmd_lint(int argc, char **argv)
{
	struct rq_suite suite = { 0 };
	struct case_filter f = { 0 };
	int ret = load_filtered("lint", argc, argv, &suite, &f, NULL);

	if (!ret)
		printf("%zu case%s, no errors\n", suite.ncases, suite.ncases == 1 ? "" : "s");
	filter_release(&f);
	rq_suite_release(&suite);
	return ret < 0 ? 0 : ret;
}
