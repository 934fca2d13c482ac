/* SPDX-License-Identifier: MIT */
/* The kind registry, generated from kinds.def. */
#include <string.h>
#include "core/kind.h"

#define KIND(sym) extern const struct rq_kind rq_kind_##sym;
#include "kinds/kinds.def"
#undef KIND

const struct rq_kind *const rq_kinds[] = {
#define KIND(sym) &rq_kind_##sym,
#include "kinds/kinds.def"
#undef KIND
};
const size_t rq_nkinds = ARRAY_SIZE(rq_kinds);

void rq_kinds_install(void)
{
	rq_kind_registry(rq_kinds, rq_nkinds);
}
