/* SPDX-License-Identifier: MIT */
/*
 * Where a node keeps its run-state records (VMs, daemons, undo records):
 * core, because every layer that records state needs the one answer;
 * harness/exec/statedir.c checks and locks the directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/target.h"

const char *rq_state_dir(const struct rq_run_opts *o, char *buf, size_t size)
{
	const char *env = getenv("RDMAQUAL_STATE_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (o && o->state_dir && *o->state_dir)
		snprintf(buf, size, "%s", o->state_dir);
	else if (env && *env)
		snprintf(buf, size, "%s", env);
	else if (geteuid() == 0)
		snprintf(buf, size, "/run/rdmaqual");
	else if (xdg && *xdg)
		snprintf(buf, size, "%s/rdmaqual", xdg);
	else
		snprintf(buf, size, "/tmp/rdmaqual-%u", (unsigned)geteuid());
	return buf;
}
