/* SPDX-License-Identifier: MIT */
/*
 * local: this node as it is, through the local agent.  No RDMA assumed and
 * nothing changed; what command and lint kinds run on.  Two-sided cases run
 * both roles here in loopback, or the server role on --peer HOST over ssh.
 */
#include <stdio.h>
#include "core/target.h"
#include "targets/target_node.h"

static bool local_available(const struct rq_run_opts *o, const char *arg, char *why, size_t sz)
{
	return true;
}

static int local_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl,
		       char *err, size_t errsz)
{
	node_agents_place(t, c, pl);
	return 0;
}

/* auto: last, for the cases that run on this node as it is. */
static int local_auto_rank(const struct rq_case *c, char *why, size_t whysz)
{
	(void)c;
	snprintf(why, whysz, "the case runs on this node as it is");
	return 5;
}

const struct rq_target_ops rq_target_local = {
	.name = "local",
	.parallel = true,
	.help = "this node as it is (command and lint kinds); nothing is changed; --peer HOST adds a second node over ssh",
	.auto_rank = local_auto_rank,
	.available = local_available,
	.open = node_agents_open,
	.place = local_place,
	.facts = node_agents_peer_facts,
	.close = node_agents_close,
};
