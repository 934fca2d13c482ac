/* SPDX-License-Identifier: MIT */
/*
 * The memlock: key of the command kinds: RLIMIT_MEMLOCK for the programs a
 * case starts.  Set in the agent worker, which is forked for this case (and
 * role) alone, so the programs inherit it and nothing else does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include "core/kind.h"
#include "kinds/app_text.h"

int app_memlock_apply(struct rq_ctx *ctx, const char *text, char *err, size_t errsz)
{
	struct rlimit rl;
	bool unl;
	uint64_t b;

	if (app_memlock_parse(text, &unl, &b, err, errsz) < 0)
		return -1;
	rl.rlim_cur = rl.rlim_max = unl ? RLIM_INFINITY : (rlim_t)b;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0) {
		snprintf(err, errsz, "memlock %s: setrlimit: %s (raising it needs root)", text,
			 strerror(errno));
		return -1;
	}
	rq_log(ctx, "# RLIMIT_MEMLOCK of the programs: %s", text);
	return 0;
}
