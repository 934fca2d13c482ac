/* SPDX-License-Identifier: MIT */
/*
 * The kinds and targets the loader checks a case against.  Their tables
 * live with their members (kinds/kinds.c, targets/targets.c), above core:
 * the program hands them in once at start (rq_kinds_install,
 * rq_targets_install), so core names no kind and no target and a link
 * without them is a loud "unknown kind", never a silent fallback.
 */
#include <string.h>
#include "core/kind.h"
#include "core/target.h"
#include "core/util.h"

static const struct rq_kind *const *kinds;
static size_t nkinds;
/* Test-only kinds (unit tests, fuzzer): see rq_kind_register_extra(). */
static const struct rq_kind *extra_kinds[8];
static size_t n_extra;
static const struct rq_target_ops *const *targets;
static size_t ntargets;
static const struct rq_key_owner *extra_owners[4];
static size_t n_owners;

void rq_kind_registry(const struct rq_kind *const *k, size_t n)
{
	kinds = k;
	nkinds = n;
}

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
	if (i < nkinds)
		return kinds[i];
	i -= nkinds;
	return i < n_extra ? extra_kinds[i] : NULL;
}

const struct rq_kind *rq_kind_find(const char *name)
{
	const struct rq_kind *k;

	for (size_t i = 0; (k = rq_kind_iter(i)); i++)
		if (!strcmp(k->name, name) || (k->old_name && !strcmp(k->old_name, name)))
			return k;
	return NULL;
}

void rq_target_registry(const struct rq_target_ops *const *all)
{
	targets = all;
	for (ntargets = 0; all && all[ntargets]; ntargets++)
		;
}

const struct rq_target_ops *rq_target_ops_at(size_t i)
{
	return i < ntargets ? targets[i] : NULL;
}

const struct rq_target_ops *rq_target_ops_find(const char *name)
{
	const char *colon = strchr(name, ':');
	size_t n = colon ? (size_t)(colon - name) : strlen(name);
	const struct rq_target_ops *t;

	for (size_t i = 0; (t = rq_target_ops_at(i)); i++)
		if (strlen(t->name) == n && !strncmp(t->name, name, n))
			return t;
	return NULL;
}

void rq_target_names(struct sb *out, const char *sep, const char *last)
{
	const struct rq_target_ops *t;

	for (size_t i = 0; (t = rq_target_ops_at(i)); i++) {
		if (i)
			sb_adds(out, !rq_target_ops_at(i + 1) && last ? last : sep);
		sb_adds(out, t->name);
		if (t->arg)
			sb_addf(out, ":%s", t->arg);
	}
}

/* Targets' owners in registry order, then the registered ones (the lab's). */
const struct rq_key_owner *rq_key_owner_iter(size_t i)
{
	for (size_t t = 0; t < ntargets; t++)
		if (targets[t]->keys && !i--)
			return targets[t]->keys;
	return i < n_owners ? extra_owners[i] : NULL;
}

void rq_key_owner_register(const struct rq_key_owner *o)
{
	for (size_t i = 0; i < n_owners; i++)
		if (extra_owners[i] == o)
			return;
	if (n_owners < ARRAY_SIZE(extra_owners))
		extra_owners[n_owners++] = o;
}

const void *rq_case_keys(const struct rq_case *c, const struct rq_key_owner *o)
{
	for (size_t i = 0; c && i < c->nowned; i++)
		if (c->owned[i].owner == o)
			return c->owned[i].cfg;
	return NULL;
}
