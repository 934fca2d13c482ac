/* SPDX-License-Identifier: MIT */
/* The target registry, generated from targets.def. */
#include <string.h>
#include "target.h"

#define TARGET(sym) extern const struct rq_target_ops rq_target_##sym;
#include "targets.def"
#undef TARGET

const struct rq_target_ops *const rq_target_ops_all[] = {
#define TARGET(sym) &rq_target_##sym,
#include "targets.def"
#undef TARGET
	NULL
};

const struct rq_target_ops *rq_target_ops_find(const char *name)
{
	for (size_t i = 0; rq_target_ops_all[i]; i++)
		if (!strcmp(rq_target_ops_all[i]->name, name))
			return rq_target_ops_all[i];
	return NULL;
}
