/* SPDX-License-Identifier: MIT */
/*
 * local: this node as it is, through the local agent.  No RDMA assumed and
 * nothing changed; what command and lint kinds run on.  Two-sided cases run
 * both roles here in loopback.
 */
#include <stdio.h>
#include <string.h>
#include "agent.h"
#include "target.h"

static bool local_available(const struct rq_run_opts *o, const char *arg, char *why, size_t sz)
{
	return true;
}

static int local_open(struct rq_target *t, char *err, size_t errsz)
{
	struct rq_agent *a = rq_agent_local(t->opts->self_exe, err, errsz);

	if (!a)
		return -1;
	t->priv = a;
	return 0;
}

static int local_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *p,
		       char *err, size_t errsz)
{
	p->side[0] = p->side[1] = t->priv;
	snprintf(p->addr[0], sizeof(p->addr[0]), "127.0.0.1");
	snprintf(p->addr[1], sizeof(p->addr[1]), "127.0.0.1");
	p->root = "";
	return 0;
}

static void local_close(struct rq_target *t)
{
	t->priv = NULL;	/* the shared local agent is closed once, at the end of the run */
}

const struct rq_target_ops rq_target_local = {
	.name = "local",
	.help = "this node as it is (command and lint kinds); nothing is changed",
	.available = local_available,
	.open = local_open,
	.place = local_place,
	.close = local_close,
};
