/* SPDX-License-Identifier: MIT */
/*
 * hca: the real ConnectX devices of this node, through the local agent, as
 * they are.  Available whenever a PCI function with vendor 0x15b3 exists,
 * bound to mlx5_core or not: an unbound function, a DOWN port or an IB port
 * stuck in INIT is then the case's FAIL, never a reason to fall back to a
 * simulator (docs/architecture.md, Target choice).  Kinds that change settings (mtu set:,
 * irq-affinity set:) record their undo in ctx->state_dir first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/kind.h"
#include "rdma/rdmadev.h"
#include "core/target.h"
#include "targets/target_node.h"
#include "core/undo.h"
#include "core/util.h"

static bool hca_available(const struct rq_run_opts *o, const char *arg, char *why, size_t whysz)
{
	if (!rdma_have_mlx_pci("")) {
		snprintf(why, whysz, "no PCI function with vendor 0x15b3 on this node");
		return false;
	}
	snprintf(why, whysz, "a PCI function with vendor 0x15b3 is present");
	return true;
}

/*
 * One-sided cases run on this node; two-sided ones put the server role on
 * --peer HOST when given, else both roles here in loopback.  With a peer
 * the RDMA traffic goes between the two nodes' RDMA addresses (RoCE netdev,
 * IPoIB), the out-of-band exchange to the peer's management address.
 */
static int hca_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl,
		     char *err, size_t errsz)
{
	node_agents_place(t, c, pl);
	return node_agents_rdma_addrs(t, c, pl, err, errsz);
}

static void hca_facts(struct rq_target *t, struct rq_result *sink)
{
	struct utsname u;

	if (uname(&u) == 0)
		rq_fact_add(sink, "kernel", u.release);
	if (t->opts && t->opts->peer)
		rq_fact_add(sink, "peer", t->opts->peer);
	node_agents_peer_facts(t, sink);
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
	/* Always said: a setting put back (or refused) at the start of a run is news. */
	if (log.len)
		fprintf(stderr, "rdmaqual cleanup: settings a killed run changed:\n%s", log.buf);
	if (left > 0)
		fprintf(stderr, "rdmaqual: %d setting(s) could not be restored; kept in %s\n", left, path);
	sb_release(&log);
}

/* auto: real hardware first, whenever a ConnectX PCI function exists, bound or not,
 * so that a broken HCA is a FAIL and never a quiet fallback to a simulator. */
static int hca_auto_rank(const struct rq_case *c, char *why, size_t whysz)
{
	(void)c;
	if (!rdma_have_mlx_pci("")) {
		snprintf(why, whysz, "no ConnectX is present");
		return 0;
	}
	snprintf(why, whysz, "a PCI function with vendor 0x15b3 is present");
	return 1;
}

const struct rq_target_ops rq_target_hca = {
	.name = "hca",
	.changes_host = true,
	.help = "real ConnectX devices on this node (all devices and ports), changed only by cases that say so",
	.auto_rank = hca_auto_rank,
	.available = hca_available,
	.open = node_agents_open,
	.place = hca_place,
	.close = node_agents_close,
	.facts = hca_facts,
	.cleanup_stale = hca_cleanup_stale,
};
