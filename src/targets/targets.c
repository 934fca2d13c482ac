/* SPDX-License-Identifier: MIT */
/* The target registry, generated from targets.def. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/target.h"
#include "core/util.h"

#define TARGET(sym) extern const struct rq_target_ops rq_target_##sym;
#include "targets/targets.def"
#undef TARGET

const struct rq_target_ops *const rq_target_ops_all[] = {
#define TARGET(sym) &rq_target_##sym,
#include "targets/targets.def"
#undef TARGET
	NULL
};

const struct rq_target_ops *rq_target_ops_find(const char *name)
{
	const char *colon = strchr(name, ':');
	size_t n = colon ? (size_t)(colon - name) : strlen(name);

	for (size_t i = 0; rq_target_ops_all[i]; i++)
		if (strlen(rq_target_ops_all[i]->name) == n &&
		    !strncmp(rq_target_ops_all[i]->name, name, n))
			return rq_target_ops_all[i];
	return NULL;
}

void rq_target_names(struct sb *out, const char *sep, const char *last)
{
	for (size_t i = 0; rq_target_ops_all[i]; i++) {
		const struct rq_target_ops *t = rq_target_ops_all[i];

		if (i)
			sb_adds(out, !rq_target_ops_all[i + 1] && last ? last : sep);
		sb_adds(out, t->name);
		if (t->arg)
			sb_addf(out, ":%s", t->arg);
	}
}

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
