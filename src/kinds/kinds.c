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

/* Test-only kinds (unit tests, fuzzer): see rq_kind_register_extra(). */
static const struct rq_kind *extra_kinds[8];
static size_t n_extra;

void rq_kind_register_extra(const struct rq_kind *k)
{
	for (size_t i = 0; i < n_extra; i++)
		if (extra_kinds[i] == k)
			return;
	if (n_extra < ARRAY_SIZE(extra_kinds))
		extra_kinds[n_extra++] = k;
}

const struct rq_kind *rq_kind_iter(size_t i)
{
	if (i < rq_nkinds)
		return rq_kinds[i];
	i -= rq_nkinds;
	return i < n_extra ? extra_kinds[i] : NULL;
}

const struct rq_kind *rq_kind_find(const char *name)
{
	const struct rq_kind *k;

	for (size_t i = 0; (k = rq_kind_iter(i)); i++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}
