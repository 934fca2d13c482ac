/* SPDX-License-Identifier: MIT */
/*
 * The verbatim tool outputs of ../shared/real-outputs (or $RQ_REAL_OUTPUTS),
 * read in place and never copied into the project.  Tests that use them
 * skip when the folder is absent (CI machines may not have it).
 */
#ifndef RQ_TEST_REAL_OUTPUTS_H
#define RQ_TEST_REAL_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/util.h"

/* Read SUBPATH (e.g. "interrupts/x.txt") without its "#! " header lines; false: absent. */
static inline bool real_sample(const char *subpath, struct sb *out)
{
	const char *base = getenv("RQ_REAL_OUTPUTS");
	char path[4096];
	struct sb raw = SB_INIT;

	snprintf(path, sizeof(path), "%s/%s", base && *base ? base : "../shared/real-outputs",
		 subpath);
	if (read_file(path, &raw, 0) < 0) {
		sb_release(&raw);
		return false;
	}
	for (const char *p = raw.buf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (strncmp(p, "#! ", 3))
			sb_add(out, p, n);
		p += n;
	}
	sb_release(&raw);
	return true;
}

#endif
