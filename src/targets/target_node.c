/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "agent/agent.h"
#include "agent/request.h"
#include "core/kind.h"
#include "core/proc.h"
#include "targets/target_node.h"

struct node_agents {
	struct rq_agent *self;		/* the shared local agent */
	struct rq_agent *peer;		/* --peer HOST, or NULL */
	char peer_addr[64];		/* the peer's management IPv4: out-of-band only */
};

/* logs/ssh-PEER.log in the run dir: where the peer's ssh stderr goes as it came. */
static char *peer_log(const struct rq_target *t)
{
	char name[200];
	size_t j = 0;

	if (!t->opts->run_dir)
		return NULL;
	for (const char *p = t->opts->peer; *p && j + 1 < sizeof(name); p++)
		name[j++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ? *p : '_';
	name[j] = '\0';
	return xasprintf("%s/logs/ssh-%s.log", t->opts->run_dir, name);
}

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
		char *log = peer_log(t);

		p->peer = rq_agent_ssh(t->opts->peer, t->opts->self_exe, log, err, errsz);
		free(log);
		if (!p->peer)
			goto fail;
	}
	return 0;
fail:
	free(p);
	t->priv = NULL;
	return -1;
}

/* rdma-links as an inventory: every port a row with its state and IPv4. */
static const char rails_case[] =
	"cases:\n"
	"  - name: peer.rails\n"
	"    kind: rdma-links\n"
	"    summary: the RDMA address of each side of a two-sided case (not reported)\n"
	"    port_active: false\n"
	"    addressable: false\n";

static const char *row_fact(const struct rq_result *r, const char *key)
{
	for (size_t i = 0; i < r->nfacts; i++)
		if (!strcmp(r->facts[i].key, key))
			return r->facts[i].value;
	return "";
}

int node_rail_pick(const struct rq_results *rows, char *ip, size_t ipsz, char *why, size_t whysz)
{
	char first[160] = "";

	for (size_t i = 0; i < rows->n; i++) {
		const struct rq_result *r = rows->v[i];
		const char *state = row_fact(r, "state"), *addr = row_fact(r, "ipv4");

		if (!r->device || r->port <= 0)
			continue;
		if (!strcmp(state, "ACTIVE") && addr[0]) {
			snprintf(ip, ipsz, "%s", addr);
			snprintf(why, whysz, "%s/%d (%s)", r->device, r->port,
				 row_fact(r, "netdev")[0] ? row_fact(r, "netdev") : "no netdev");
			return 0;
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s/%d is %s%s", r->device, r->port,
				 state[0] ? state : "in no state",
				 addr[0] ? "" : !strcmp(row_fact(r, "link_layer"), "Ethernet") ?
				 " without an IPv4-mapped RoCE v2 GID" :
				 " without an IPv4 address on its IPoIB netdev");
	}
	snprintf(why, whysz, "no ACTIVE RDMA port with an IPv4 address%s%s",
		 first[0] ? ": " : "", first);
	return -1;
}

/*
 * The RDMA side's address of one node: rdma-links run by that node's own
 * agent over the devices and port the case selects, so a peer's address
 * is what the peer's sysfs and netdevs say, never what its name resolves
 * to.  0, or -1 with why.
 */
static int rail_addr(struct rq_target *t, struct rq_agent *a, const struct rq_case *c,
		     char *ip, size_t ipsz, char *why, size_t whysz)
{
	struct rq_suite suite = { 0 };
	struct rq_diags diags = { 0 };
	struct rq_results rows = { 0 };
	struct rq_request r;
	char err[128], port[16];
	json_t *req, *ans, *jrows;
	int ret = -1;

	if (rq_load_buffer("(rails)", rails_case, sizeof(rails_case) - 1, &suite, &diags) ||
	    suite.ncases != 1) {
		snprintf(why, whysz, "the rail discovery case did not load");
		goto out;
	}
	rq_request_init(&r, suite.cases[0], t->ops->name, ROLE_SINGLE);
	r.state_dir = t->opts->state_dir;
	if (c->devices && *c->devices)
		rq_request_set_key(&r, "devices", c->devices);
	snprintf(port, sizeof(port), "%d", (int)c->port);
	if (c->port > 0)
		rq_request_set_key(&r, "port", port);
	req = rq_request_to_json(&r);
	rq_request_release(&r);
	ans = req ? rq_agent_call(a, req, scaled_ms(30000), err, sizeof(err)) : NULL;
	json_decref(req);
	jrows = json_object_get(ans, "rows");
	if (!json_is_true(json_object_get(ans, "ok")) || !json_is_array(jrows)) {
		const char *e = json_string_value(json_object_get(ans, "error"));

		snprintf(why, whysz, "rdma-links did not answer: %s", ans ? e ? e : "no rows" : err);
		json_decref(ans);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(jrows); i++) {
		struct rq_result *row = rq_result_from_json(json_array_get(jrows, i), err, sizeof(err));

		if (row)
			rq_results_add(&rows, row);
	}
	json_decref(ans);
	ret = node_rail_pick(&rows, ip, ipsz, why, whysz);
	rq_results_release(&rows);
out:
	rq_diags_release(&diags);
	rq_suite_release(&suite);
	return ret;
}

int node_agents_rdma_addrs(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl,
			   char *err, size_t errsz)
{
	struct node_agents *p = t->priv;
	char ip[2][64], why[200];
	int bad = -1;

	if (!p->peer || !c->kind->two_sided)
		return 0;
	for (int side = 0; side < 2 && bad < 0; side++)
		if (rail_addr(t, pl->side[side], c, ip[side], sizeof(ip[side]), why, sizeof(why)))
			bad = side;
	if (bad >= 0) {
		snprintf(err, errsz, "no RDMA address on %s for a two-sided case: %s (the management "
			 "address %s carries only the out-of-band exchange)",
			 bad ? t->opts->peer : "this node", why, bad ? p->peer_addr : "127.0.0.1");
		return -1;
	}
	/*
	 * [client, server], the management address staying the out-of-band
	 * one: each side binds its own and connects to the other's, as a lab
	 * run's rails do.
	 */
	for (int side = 0; side < 2; side++) {
		free(pl->where.rdma_addr[side]);
		pl->where.rdma_addr[side] = xstrdup(ip[side]);
	}
	return 0;
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
		char *log = peer_log(t);
		struct rq_agent *fresh = rq_agent_ssh(t->opts->peer, t->opts->self_exe, log, err, sizeof(err));

		free(log);
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
