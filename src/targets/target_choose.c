/* SPDX-License-Identifier: MIT */
/*
 * Which target runs a case.  --target forces one (a case that does not list
 * it is skipped, saying so).  auto: real hardware wins whenever a ConnectX
 * PCI function exists, bound or not, so that a broken HCA is a FAIL and never
 * a quiet fallback to a simulator; without one, fabric kinds go to ibsim and
 * the rest to rxe-vm.  rxe-host is never chosen by auto: it changes the host.
 */
#include <stdio.h>
#include <string.h>
#include "core/kind.h"
#include "rdma/rdmadev.h"
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
		/* A capture replays what hca-type checks read. */
		bool ok = listed(c, forced) ||
			  (!strncmp(forced, "sysroot:", 8) && (listed(c, "sysroot") || listed(c, "hca")));

		if (!ok) {
			snprintf(why, whysz, "case runs on [%s], not on %s", tl, forced);
			return false;
		}
		snprintf(name, namesz, "%s", forced);
		snprintf(why, whysz, "forced by --target");
		return true;
	}
	if (rdma_have_mlx_pci("") && listed(c, "hca")) {
		snprintf(name, namesz, "hca");
		snprintf(why, whysz, "a PCI function with vendor 0x15b3 is present");
		return true;
	}
	if (c->kind->needs_fabric && listed(c, "ibsim")) {
		snprintf(name, namesz, "ibsim");
		snprintf(why, whysz, "no ConnectX present and the case needs an InfiniBand fabric");
		return true;
	}
	if (listed(c, "rxe-vm")) {
		snprintf(name, namesz, "rxe-vm");
		snprintf(why, whysz, "no ConnectX present: soft-RoCE in QEMU");
		return true;
	}
	if (listed(c, "ibsim")) {
		snprintf(name, namesz, "ibsim");
		snprintf(why, whysz, "no ConnectX present: simulated fabric");
		return true;
	}
	if (listed(c, "local")) {
		snprintf(name, namesz, "local");
		snprintf(why, whysz, "the case runs on this node as it is");
		return true;
	}
	snprintf(why, whysz, "no target for this case here: it runs on [%s]%s", tl,
		 listed(c, "hca") ? " and no ConnectX is present" : "");
	return false;
}
