/* SPDX-License-Identifier: MIT */
/* Test helper: check a document with xmllint (libxml2-utils), via proc_run. */
#ifndef RQ_TEST_XMLLINT_H
#define RQ_TEST_XMLLINT_H

#include <stdio.h>
#include "core/proc.h"

/* 1: xmllint accepted doc (against schema when not NULL), 0: it did not
 * (its stderr is printed), -1: xmllint is not installed. */
static inline int xmllint_run(const char *doc, size_t len, const char *schema, bool quiet)
{
	const char *plain[] = { "xmllint", "--noout", "--nonet", "-", NULL };
	const char *withxsd[] = { "xmllint", "--noout", "--nonet", "--schema", schema, "-", NULL };
	struct proc_opts o = {
		.argv = schema ? withxsd : plain,
		.timeout_ms = scaled_ms(20000),
		.log_fd = -1,
		.stdin_data = doc,
		.stdin_len = len,
	};
	struct proc_result r;
	int ok;

	if (!cmd_exists("xmllint"))
		return -1;
	proc_result_init(&r);
	if (proc_run(&o, &r) < 0) {
		proc_result_release(&r);
		return 0;
	}
	ok = r.exit_code == 0 && !r.timed_out && !r.exec_failed;
	if (!ok && !quiet)
		fprintf(stderr, "xmllint: exit %d: %s\n", r.exit_code, r.err.buf);
	proc_result_release(&r);
	return ok;
}

static inline int xmllint_check(const char *doc, size_t len, const char *schema)
{
	return xmllint_run(doc, len, schema, false);
}

/* For documents that are meant to be refused: no diagnostics printed. */
static inline int xmllint_refuses(const char *doc, size_t len, const char *schema)
{
	return xmllint_run(doc, len, schema, true) == 0;
}

#endif
