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

void rq_targets_install(void)
{
	rq_target_registry(rq_target_ops_all);
}
