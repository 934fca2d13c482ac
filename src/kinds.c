/* SPDX-License-Identifier: MIT */
/* The kind registry, generated from kinds.def. */
#include <string.h>
#include "kind.h"

#define KIND(sym) extern const struct rq_kind rq_kind_##sym;
#include "kinds.def"
#undef KIND

const struct rq_kind *const rq_kinds[] = {
#define KIND(sym) &rq_kind_##sym,
#include "kinds.def"
#undef KIND
};
const size_t rq_nkinds = ARRAY_SIZE(rq_kinds);

const struct rq_kind *rq_kind_find(const char *name)
{
	for (size_t i = 0; i < rq_nkinds; i++)
		if (!strcmp(rq_kinds[i]->name, name))
			return rq_kinds[i];
	return NULL;
}
