/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/kind.h"
#include "core/proc.h"
#include "targets/target_node.h"

struct node_agents {
	struct rq_agent *self;		/* the shared local agent */
	struct rq_agent *peer;		/* --peer HOST, or NULL */
	char peer_addr[64];
};

int node_agents_open(struct rq_target *t, char *err, size_t errsz)
{
	struct node_agents *p = xcalloc(1, sizeof(*p));

	t->priv = p;
	p->self = rq_agent_local(t->opts->self_exe, err, errsz);
	if (!p->self)
		goto fail;
	if (t->opts->peer) {
		if (rq_ssh_resolve4(t->opts->peer, p->peer_addr, sizeof(p->peer_addr))) {
			snprintf(err, errsz, "cannot resolve peer %s to an IPv4 address", t->opts->peer);
			goto fail;
		}
		p->peer = rq_agent_ssh(t->opts->peer, t->opts->self_exe, err, errsz);
		if (!p->peer)
			goto fail;
	}
	return 0;
fail:
	free(p);
	t->priv = NULL;
	return -1;
}

void node_agents_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl)
{
	struct node_agents *p = t->priv;
	bool remote = p->peer && c->kind->two_sided;
	char err[256];

	/*
	 * A dead agent (a crash, a protocol violation) is replaced for the next
	 * case: the local one by a fresh fork, a peer by a fresh ssh.
	 */
	p->self = rq_agent_local(t->opts->self_exe, err, sizeof(err));
	if (p->peer && p->peer->dead) {
		struct rq_agent *fresh = rq_agent_ssh(t->opts->peer, t->opts->self_exe, err, sizeof(err));

		if (fresh) {
			rq_agent_close(p->peer);
			p->peer = fresh;
		}
	}
	pl->side[0] = p->self;
	pl->side[1] = remote ? p->peer : p->self;
	snprintf(pl->addr[0], sizeof(pl->addr[0]), "127.0.0.1");
	snprintf(pl->addr[1], sizeof(pl->addr[1]), "%s", remote ? p->peer_addr : "127.0.0.1");
	pl->root = "";
}

void node_agents_peer_facts(struct rq_target *t, struct rq_result *sink)
{
	struct node_agents *p = t->priv;
	char why[256];
	const char *k;
	json_t *v;

	if (!p || !p->peer)
		return;
	json_t *req = json_pack("{s:s}", "op", "facts");
	json_t *ans = rq_agent_call(p->peer, req, scaled_ms(10000), why, sizeof(why));

	json_decref(req);
	/* A peer that died or broke the protocol must show in the report, not vanish from it. */
	if (!ans || !json_is_object(json_object_get(ans, "facts")))
		rq_fact_add(sink, "peer.error", ans ? "its facts answer holds no facts" : why);
	json_object_foreach(json_object_get(ans, "facts"), k, v) {
		char *key = xasprintf("peer.%s", k);
		char *val = json_is_string(v) ? xstrdup(json_string_value(v)) :
			    json_dumps(v, JSON_ENCODE_ANY);

		rq_fact_add(sink, key, val);
		free(key);
		free(val);
	}
	json_decref(ans);
}

void node_agents_close(struct rq_target *t)
{
	struct node_agents *p = t->priv;

	/* The shared local agent is closed once, at the end of the run. */
	if (p && p->peer)
		rq_agent_close(p->peer);
	free(p);
	t->priv = NULL;
}
