/* SPDX-License-Identifier: MIT */
/*
 * hca: the real ConnectX devices of this node, through the local agent, as
 * they are.  Available whenever a PCI function with vendor 0x15b3 exists,
 * bound to mlx5_core or not: an unbound function, a DOWN port or an IB port
 * stuck in INIT is then the case's FAIL, never a reason to fall back to a
 * simulator (DESIGN.md, Targets).  Kinds that change settings (mtu set:,
 * irq-affinity set:) record their undo in ctx->state_dir first.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "agent.h"
#include "kind.h"
#include "rdmadev.h"
#include "target.h"
#include "undo.h"
#include "util.h"

static bool hca_available(const struct rq_run_opts *o, const char *arg, char *why, size_t whysz)
{
	if (!rdma_have_mlx_pci("")) {
		snprintf(why, whysz, "no PCI function with vendor 0x15b3 on this node");
		return false;
	}
	snprintf(why, whysz, "a PCI function with vendor 0x15b3 is present");
	return true;
}

static int hca_open(struct rq_target *t, char *err, size_t errsz)
{
	struct rq_agent *a = rq_agent_local(t->opts->self_exe, err, errsz);

	if (!a)
		return -1;
	t->priv = a;
	return 0;
}

static int hca_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *p,
		     char *err, size_t errsz)
{
	if (c->kind->two_sided && t->opts && t->opts->peer) {
		snprintf(err, errsz, "hca: two-node runs with --peer %s are not wired here yet",
			 t->opts->peer);
		return -1;
	}
	/* Single node: both roles of a two-sided case in loopback on this node. */
	p->side[0] = p->side[1] = t->priv;
	snprintf(p->addr[0], sizeof(p->addr[0]), "127.0.0.1");
	snprintf(p->addr[1], sizeof(p->addr[1]), "127.0.0.1");
	p->root = "";
	return 0;
}

static void hca_close(struct rq_target *t)
{
	t->priv = NULL;	/* the shared local agent is closed once, at the end of the run */
}

static void hca_facts(struct rq_target *t, struct rq_result *sink)
{
	struct utsname u;

	if (uname(&u) == 0)
		rq_fact_add(sink, "kernel", u.release);
}

/* Settings a killed run changed on this node (MTU, IRQ affinity): put them back. */
static void hca_cleanup_stale(const struct rq_run_opts *o)
{
	char path[4096];
	struct sb log = SB_INIT;
	int left;

	if (!o->state_dir)
		return;
	snprintf(path, sizeof(path), "%s/" RQ_UNDO_JOURNAL, o->state_dir);
	left = undo_apply_pending(path, &log);
	if (log.len && o->verbose)
		fputs(log.buf, stderr);
	if (left > 0)
		fprintf(stderr, "rdmaqual: %d setting(s) could not be restored; kept in %s\n", left, path);
	sb_release(&log);
}

const struct rq_target_ops rq_target_hca = {
	.name = "hca",
	.help = "real ConnectX devices on this node (all devices and ports), changed only by cases that say so",
	.available = hca_available,
	.open = hca_open,
	.place = hca_place,
	.close = hca_close,
	.facts = hca_facts,
	.cleanup_stale = hca_cleanup_stale,
};
