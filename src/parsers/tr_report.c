/* SPDX-License-Identifier: MIT */
/*
 * The test list that the TAP, unittest and JUnit parsers fill
 * (parse_testresults.h), kept apart so that each parser uses it without
 * using the other's file.
 */
#include <stdlib.h>
#include <string.h>
#include "parsers/parse_testresults.h"

const char *tr_verdict_name(enum tr_verdict v)
{
	static const char *const n[] = { "pass", "fail", "error", "skip" };

	return v <= TR_SKIP ? n[v] : "?";
}

void tr_report_release(struct tr_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].msg);
	}
	free(r->v);
	free(r->bail);
	free(r->summary);
	free(r->outside_first);
	memset(r, 0, sizeof(*r));
	r->planned = -1;
}
