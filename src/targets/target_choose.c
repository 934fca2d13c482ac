/* SPDX-License-Identifier: MIT */
/*
 * Which target runs a case.  --target forces one (a case that does not list
 * it is skipped, saying so).  auto: of the targets the case lists, the one
 * that ranks first here (each target's auto_rank, from the registry): real
 * hardware whenever a ConnectX PCI function exists, bound or not, so that a
 * broken HCA is a FAIL and never a quiet fallback to a simulator; without
 * one, fabric kinds go to ibsim and the rest to rxe-vm.  Targets without a
 * rank (rxe-host: it changes the host; sysroot) are never chosen by auto.
 */
#include <stdio.h>
#include <string.h>
#include "core/kind.h"
#include "core/target.h"

static bool listed(const struct rq_case *c, const char *name)
{
	const char *d = c->kind->default_targets;

	if (c->ntargets) {
		for (size_t i = 0; i < c->ntargets; i++)
			if (!strcmp(c->targets[i], name))
				return true;
		return false;
	}
	/* Kind default: a comma-separated list. */
	size_t n = strlen(name);

	while (d && *d) {
		const char *e = strchr(d, ',');
		size_t len = e ? (size_t)(e - d) : strlen(d);

		if (len == n && !strncmp(d, name, n))
			return true;
		d = e ? e + 1 : NULL;
	}
	return false;
}

static void list_targets(const struct rq_case *c, char *buf, size_t size)
{
	if (!c->ntargets) {
		snprintf(buf, size, "%s", c->kind->default_targets ? c->kind->default_targets : "");
		return;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < c->ntargets; i++) {
		size_t l = strlen(buf);

		snprintf(buf + l, size - l, "%s%s", i ? "," : "", c->targets[i]);
	}
}

bool rq_target_choose(const struct rq_case *c, const struct rq_run_opts *o,
		      char *name, size_t namesz, char *why, size_t whysz)
{
	const char *forced = o->target && strcmp(o->target, "auto") ? o->target : NULL;
	char tl[256];

	list_targets(c, tl, sizeof(tl));
	if (c->kind->no_target) {
		/* Lint kinds read only files the case names: always here. */
		snprintf(name, namesz, "local");
		snprintf(why, whysz, "kind %s needs no target", c->kind->name);
		return true;
	}
	if (forced) {
		const struct rq_target_ops *ops = rq_target_ops_find(forced);
		bool ok = listed(c, forced) ||
			  (ops && ops->arg && (listed(c, ops->name) ||
					       (ops->stands_for && listed(c, ops->stands_for))));

		if (!ok) {
			snprintf(why, whysz, "case runs on [%s], not on %s", tl, forced);
			return false;
		}
		snprintf(name, namesz, "%s", forced);
		snprintf(why, whysz, "forced by --target");
		return true;
	}

	int best = 0;
	char w[256], missing[512] = "";

	for (size_t i = 0; rq_target_ops_all[i]; i++) {
		const struct rq_target_ops *t = rq_target_ops_all[i];
		int rank;

		if (!t->auto_rank || !listed(c, t->name))
			continue;
		w[0] = '\0';
		rank = t->auto_rank(c, w, sizeof(w));
		if (rank > 0 && (!best || rank < best)) {
			best = rank;
			snprintf(name, namesz, "%s", t->name);
			snprintf(why, whysz, "%s", w);
		} else if (rank <= 0 && w[0]) {
			size_t l = strlen(missing);

			snprintf(missing + l, sizeof(missing) - l, " and %s", w);
		}
	}
	if (best)
		return true;
	snprintf(why, whysz, "no target for this case here: it runs on [%s]%s", tl, missing);
	return false;
}
