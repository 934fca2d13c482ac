/* SPDX-License-Identifier: MIT */
/*
 * Lab runs: cases as units of work on the nodes' agents.  A unit is one
 * node-local case on one node, or one rail of one pair of a two-sided case
 * (server role on one node, client role on the other, sent at once as the
 * one-node scheduler does).  Up to --fanout units are in flight; the main
 * thread waits on every agent at once (rq_agent_poll), each unit against
 * its own deadline.  A node whose agent dies ends its units as ERROR and
 * its partners' as ERROR "peer NODE gone", and is not sent more work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent/agent.h"
#include "agent/request.h"
#include "core/kind.h"
#include "core/proc.h"
#include "lab/lab_int.h"

struct unit {
	const struct rq_case *c;
	struct cnode *nd[2];		/* [0]: the node, or a pair's client; [1]: its server */
	bool two;			/* a pair's unit (else node-local) */
	int rail;			/* the pair's rail i, or -1 (node-local, or no rails known) */
	size_t pair;			/* index into cl->pairs */
	bool silent;			/* rail discovery: rows are read, not reported */
	char *key;			/* journal key */
	uint64_t id[2];
	json_t *ans[2];
	char why[2][1024];
	bool gone[2];			/* that side's node died under this unit */
	int64_t start, deadline;
	bool running;
	struct rq_results rows;
};

/*
 * A pair's main figure: the client row's first figure that measures the
 * link, not the run's own length (command_pair reports "elapsed" first).
 */
const struct rq_figure *cluster_main_figure(const struct rq_result *r)
{
	for (size_t i = 0; i < r->nfigs; i++)
		if (!str_ends(r->figs[i].name, "elapsed"))
			return &r->figs[i];
	return r->nfigs ? &r->figs[0] : NULL;
}

/* Rates and sizes are better high, times low ("s", "ms", "us", "usec", "ns"). */
bool cluster_higher_better(const char *unit)
{
	static const char *const times[] = { "s", "ms", "us", "usec", "ns", "µs", NULL };

	for (int i = 0; times[i]; i++)
		if (!strcmp(unit, times[i]))
			return false;
	return true;
}

static bool lists_target(const struct rq_case *c, const char *t)
{
	for (size_t i = 0; i < c->ntargets; i++)
		if (!strcmp(c->targets[i], t))
			return true;
	return false;
}

static struct rq_result *verdict_row(const char *case_name, enum rq_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static struct rq_result *verdict_row(const char *case_name, enum rq_verdict v, const char *fmt, ...)
{
	struct rq_result *r = rq_result_new(case_name, NULL, 0);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rq_result_set(r, v, "%s", msg);
	return r;
}

/* ---- requests ------------------------------------------------------- */

static const char *launcher_name(const struct cluster *cl)
{
	return cl->launcher == LAUNCH_SSH ? "ssh" : cl->launcher == LAUNCH_SLURM ? "srun" : "local";
}

static json_t *build_req(struct cluster *cl, struct unit *u, int side, int port)
{
	const struct rq_case *c = u->c;
	struct cnode *nd = u->nd[side];
	bool pair = u->two, railed = u->rail >= 0;
	char *env = xasprintf("RDMAQUAL_NODE=%s", nd->name), pnum[16];
	const char *envv[] = { env, NULL };
	struct rq_request r;
	json_t *req;

	rq_request_init(&r, c, nd->root ? "sysroot" : nd->target,
			!pair ? ROLE_SINGLE : side ? ROLE_SERVER : ROLE_CLIENT);
	if (railed) {
		/* rail i of this side: its own device and port */
		const struct rail *rl = &nd->rails[u->rail];

		snprintf(pnum, sizeof(pnum), "%d", rl->port);
		rq_request_set_key(&r, "devices", rl->dev);
		rq_request_set_key(&r, "port", pnum);
	}
	r.oob_port = port;
	if (cl->launcher == LAUNCH_LOCAL)
		r.state_dir = cl->o->state_dir;
	if (nd->root) {
		r.root = nd->root;
		r.replay = true;
	}
	/* The out-of-band exchange goes to the server's management address (the server learns the client's). */
	if (pair)
		r.peer_addr = u->nd[!side]->mgmt;
	r.env = envv;
	r.param = json_object();
	json_object_set_new(r.param, "allow_sm_takeover", json_boolean(cl->o->allow_sm_takeover));
	json_object_set_new(r.param, "node", json_string(nd->name));
	if (pair) {
		struct cnode *peer = u->nd[!side];

		json_object_set_new(r.param, "peer_node", json_string(peer->name));
		/* command_pair's {peer_host}: [client side, server side] */
		json_object_set_new(r.param, "hosts", json_pack("[s,s]", u->nd[0]->name, u->nd[1]->name));
	}
	if (railed) {
		struct cnode *peer = u->nd[!side];

		json_object_set_new(r.param, "rail", json_integer(u->rail));
		/* The RDMA side of the link: traffic goes here, not to the management name. */
		json_object_set_new(r.param, "rdma_local_addr", json_string(nd->rails[u->rail].ipv4));
		json_object_set_new(r.param, "rdma_peer_addr", json_string(peer->rails[u->rail].ipv4));
		json_object_set_new(r.param, "rdma_peer_gid", json_string(peer->rails[u->rail].gid));
	}
	req = rq_request_to_json(&r);
	rq_request_release(&r);
	free(env);
	return req;
}

/* ---- answers -------------------------------------------------------- */

static void answer_rows(const struct rq_case *c, json_t *ans, const char *failure,
			struct rq_results *rows, struct sb *log)
{
	json_t *jrows = ans ? json_object_get(ans, "rows") : NULL;
	json_t *jlog = ans ? json_object_get(ans, "log") : NULL;
	char err[256];

	if (json_is_string(jlog))
		sb_add(log, json_string_value(jlog), json_string_length(jlog));
	if (!ans) {
		rq_results_add(rows, verdict_row(c->name, RQ_ERROR, "%s", failure));
		return;
	}
	if (!json_is_true(json_object_get(ans, "ok"))) {
		const char *e = json_string_value(json_object_get(ans, "error"));

		rq_results_add(rows, verdict_row(c->name, RQ_ERROR, "agent: %s",
						 e ? e : "failed without a reason"));
		return;
	}
	if (!json_is_array(jrows) || !json_array_size(jrows)) {
		rq_results_add(rows, verdict_row(c->name, RQ_ERROR, "agent answered without rows"));
		return;
	}
	for (size_t i = 0; i < json_array_size(jrows); i++) {
		struct rq_result *r = rq_result_from_json(json_array_get(jrows, i), err, sizeof(err));

		rq_results_add(rows, r ? r : verdict_row(c->name, RQ_ERROR,
							 "agent sent a malformed row: %s", err));
	}
}

static int verdict_rank(enum rq_verdict v)
{
	return v == RQ_PASS ? 0 : v == RQ_SKIP ? 1 : v == RQ_FAIL ? 2 : 3;
}

/* "case[dev/1]" -> "case[node:dev/1]", "case" -> "case[node]" */
static char *node_id(const char *id, const char *node)
{
	const char *b = strchr(id, '[');

	if (!b)
		return xasprintf("%s[%s]", id, node);
	return xasprintf("%.*s[%s:%s", (int)(b - id), id, node, b + 1);
}

static void finish_rows(struct cluster *cl, struct unit *u, struct sb *log)
{
	struct cnode *nd = u->nd[0];
	double dur = (now_ms() - u->start) / 1000.0;

	for (size_t i = 0; i < u->rows.n; i++) {
		struct rq_result *r = u->rows.v[i];
		char *id;

		if (u->two && u->rail >= 0) {
			const struct rail *a = &u->nd[0]->rails[u->rail], *b = &u->nd[1]->rails[u->rail];

			id = xasprintf("%s[%s:%s/%d->%s:%s/%d]", u->c->name, u->nd[0]->name, a->dev,
				       a->port, u->nd[1]->name, b->dev, b->port);
			r->peer_node = xstrdup(u->nd[1]->name);
		} else if (u->two) {
			id = xasprintf("%s[%s->%s]", u->c->name, u->nd[0]->name, u->nd[1]->name);
			r->peer_node = xstrdup(u->nd[1]->name);
		} else {
			id = node_id(r->id, nd->name);
		}
		free(r->id);
		r->id = id;
		/* The --nodes name: two nodes may well report one hostname. */
		free(r->node);
		r->node = xstrdup(nd->name);
		if (cl->launcher != LAUNCH_LOCAL)
			rq_fact_add(r, "node.hostname", nd->hostname);
		free(r->target);
		r->target = xstrdup(nd->target);
		free(r->target_why);
		r->target_why = xasprintf("lab run: node %s via %s", nd->name, launcher_name(cl));
		free(r->kind);
		r->kind = xstrdup(u->c->kind->name);
		free(r->file);
		r->file = xstrdup(u->c->file ? u->c->file : "");
		if (r->duration_s <= 0)
			r->duration_s = dur / (double)u->rows.n;
		struct sb rowlog = r->log;

		sb_init(&r->log);
		sb_add(&r->log, log->buf, log->len);
		sb_add(&r->log, rowlog.buf, rowlog.len);
		sb_release(&rowlog);
		if (r->verdict == RQ_NONE)
			rq_result_finish(r);
	}
}

/* Rows of a finished unit, from its answers (or why there are none). */
static void unit_rows(struct cluster *cl, struct unit *u)
{
	struct sb log = SB_INIT;
	const struct rq_case *c = u->c;

	if (!u->two) {
		answer_rows(c, u->ans[0], u->why[0][0] ? u->why[0] : "the agent did not answer",
			    &u->rows, &log);
	} else {
		struct rq_results srows = { 0 };
		struct sb slog = SB_INIT;

		answer_rows(c, u->ans[0], u->why[0][0] ? u->why[0] : "client side did not answer",
			    &u->rows, &log);
		answer_rows(c, u->ans[1], u->why[1][0] ? u->why[1] : "server side did not answer",
			    &srows, &slog);
		if (slog.len) {
			sb_adds(&log, "\n----- server side -----\n");
			sb_add(&log, slog.buf, slog.len);
		}
		bool spass = srows.n > 0;

		for (size_t i = 0; i < srows.n; i++)
			spass = spass && srows.v[i]->verdict == RQ_PASS;
		for (size_t i = 0; i < u->rows.n; i++) {
			struct rq_result *r = u->rows.v[i];
			const char *sr = srows.n && srows.v[0]->reason ? srows.v[0]->reason : "no reason";

			if (u->gone[0] || u->gone[1]) {
				/* A node died: neither side's result says anything about the link. */
				free(r->reason);
				r->reason = NULL;
				r->verdict = RQ_NONE;
				rq_result_set(r, RQ_ERROR, "%s", u->gone[0] ? u->why[0] : u->why[1]);
			} else if (!spass && r->verdict == RQ_PASS) {
				free(r->reason);
				r->reason = NULL;
				r->verdict = RQ_NONE;
				rq_result_set(r, srows.v[0]->verdict == RQ_SKIP ? RQ_SKIP : RQ_FAIL,
					      "server side: %s", sr);
			} else if (!spass) {
				char *nr = xasprintf("%s (server side: %s)", r->reason ? r->reason : "", sr);

				free(r->reason);
				r->reason = nr;
			}
		}
		rq_results_release(&srows);
		sb_release(&slog);
	}
	finish_rows(cl, u, &log);
	sb_release(&log);
}

/* ---- the unit loop -------------------------------------------------- */

static void unit_start(struct cluster *cl, struct unit *u)
{
	int nside = u->two ? 2 : 1;
	int port = 20000 + (int)(((unsigned)getpid() % 1000u) * 20u + cl->port_seq++ * 2u) % 20000;

	u->start = now_ms();
	u->deadline = u->start + scaled_ms(u->c->timeout_ms) + scaled_ms(10000);
	for (int s = 0; s < nside; s++)
		if (u->nd[s]->down) {
			snprintf(u->why[s], sizeof(u->why[s]), "%s%s %s", s ? "peer " : "",
				 u->nd[s]->name, u->nd[s]->down_why);
			u->gone[s] = true;
			return;
		}
	/* The server first: its listener is up sooner, the client retries until then anyway. */
	for (int s = nside - 1; s >= 0; s--) {
		json_t *req = build_req(cl, u, s, port);

		u->id[s] = rq_agent_send(u->nd[s]->ag, req);
		json_decref(req);
		if (!u->id[s]) {
			cluster_node_down(cl, u->nd[s], "gone: %s", u->nd[s]->ag->dead_why);
			snprintf(u->why[s], sizeof(u->why[s]), "%s%s %s", s ? "peer " : "",
				 u->nd[s]->name, u->nd[s]->down_why);
			u->gone[s] = true;
			for (int o = 0; o < nside; o++)
				if (u->id[o]) {
					rq_agent_cancel(u->nd[o]->ag, u->id[o]);
					u->id[o] = 0;
				}
			return;
		}
	}
	u->running = true;
	cl->units++;
}

/* Look at a running unit; true when it is over. */
static bool unit_poll(struct cluster *cl, struct unit *u)
{
	int nside = u->two ? 2 : 1;
	int64_t now = now_ms();

	for (int s = 0; s < nside; s++) {
		struct rq_agent *ag = u->nd[s]->ag;
		json_t *a;

		if (!u->id[s])
			continue;
		if ((a = rq_agent_take(ag, u->id[s]))) {
			u->ans[s] = a;
			u->id[s] = 0;
			/* The other side is done soon, or has nothing to wait for: a short grace. */
			int64_t grace = now + scaled_ms(json_is_true(json_object_get(a, "ok")) ? 10000 : 3000);

			if (grace < u->deadline)
				u->deadline = grace;
		} else if (ag->dead) {
			cluster_node_down(cl, u->nd[s], "gone: %s", ag->dead_why);
			snprintf(u->why[s], sizeof(u->why[s]), "%s%s %s", s ? "peer " : "",
				 u->nd[s]->name, u->nd[s]->down_why);
			u->gone[s] = true;
			u->id[s] = 0;
		}
	}
	/* A side whose node is gone: the other side's work is pointless now. */
	for (int s = 0; s < nside; s++)
		if (u->gone[!s] && nside == 2 && u->id[s]) {
			rq_agent_cancel(u->nd[s]->ag, u->id[s]);
			u->id[s] = 0;
		}
	if (now >= u->deadline)
		for (int s = 0; s < nside; s++)
			if (u->id[s]) {
				rq_agent_cancel(u->nd[s]->ag, u->id[s]);
				snprintf(u->why[s], sizeof(u->why[s]), "timed out after %.1f s on node %s",
					 scaled_ms(u->c->timeout_ms) / 1000.0, u->nd[s]->name);
				u->id[s] = 0;
			}
	return !u->id[0] && !u->id[1];
}

/* Work through units, at most fanout in flight; calls done() as each ends. */
static void run_units(struct cluster *cl, struct unit *u, size_t n,
		      void (*done)(struct cluster *, struct unit *, void *), void *arg)
{
	size_t next = 0, live = 0;
	size_t *run = xcalloc(cl->co.fanout + 1, sizeof(*run));
	struct rq_agent **ags = xcalloc(2 * (size_t)cl->co.fanout + 2, sizeof(*ags));

	for (;;) {
		while (live < cl->co.fanout && next < n && !rq_interrupted) {
			struct unit *x = &u[next++];

			unit_start(cl, x);
			if (x->running)
				run[live++] = (size_t)(x - u);
			else
				done(cl, x, arg);
		}
		if (!live)
			break;
		size_t na = 0;
		int64_t dl = INT64_MAX;

		/* Each agent once: the rails of a pair share their two agents. */
		cl->poll_epoch++;
		for (size_t i = 0; i < live; i++) {
			struct unit *x = &u[run[i]];

			for (int s = 0; s < 2; s++)
				if (x->id[s] && x->nd[s]->poll_epoch != cl->poll_epoch) {
					x->nd[s]->poll_epoch = cl->poll_epoch;
					ags[na++] = x->nd[s]->ag;
				}
			if (x->deadline < dl)
				dl = x->deadline;
		}
		int r = rq_agent_poll(ags, na, dl);

		for (size_t i = 0; i < live;) {
			struct unit *x = &u[run[i]];

			if (r == -2)
				for (int s = 0; s < 2; s++)
					if (x->id[s]) {
						rq_agent_cancel(x->nd[s]->ag, x->id[s]);
						snprintf(x->why[s], sizeof(x->why[s]),
							 "interrupted by signal %d", (int)rq_interrupted);
						x->id[s] = 0;
					}
			if (unit_poll(cl, x)) {
				x->running = false;
				done(cl, x, arg);
				run[i] = run[--live];
			} else {
				i++;
			}
		}
	}
	free(ags);
	free(run);
}

/* ---- reporting units ------------------------------------------------ */

struct emit {
	struct rq_results *out;
	const struct cluster_sink *sink;
};

static void note_local_fail(struct cnode *nd, const struct rq_result *r)
{
	if (r->verdict != RQ_FAIL && r->verdict != RQ_ERROR)
		return;
	if (!nd->fails++)
		nd->first_fail = xasprintf("%s: %s", r->id, r->reason ? r->reason : "failed");
}

static void note_pair(struct cluster *cl, size_t pair, struct rq_result *const *v, size_t n)
{
	struct cpair *p = &cl->pairs[pair];

	for (size_t i = 0; i < n; i++) {
		const struct rq_result *r = v[i];

		if (verdict_rank(r->verdict) > verdict_rank(p->verdict) || !p->what) {
			p->verdict = r->verdict;
			free(p->what);
			p->what = xasprintf("%s %s%s%s", r->id, rq_verdict_name(r->verdict),
					    r->reason ? ": " : "", r->reason ? r->reason : "");
		}
		/* the pair's figure: its weakest rail's main figure */
		const struct rq_figure *f = cluster_main_figure(r);

		if (f && (!p->has_fig || (cluster_higher_better(f->unit) ? f->value < p->fig :
					  f->value > p->fig))) {
			p->has_fig = true;
			p->fig = f->value;
			snprintf(p->fig_name, sizeof(p->fig_name), "%s", f->name);
			snprintf(p->unit, sizeof(p->unit), "%s", f->unit);
		}
	}
}

static void emit_done(struct cluster *cl, struct unit *u, void *arg)
{
	struct emit *e = arg;
	size_t first = e->out->n;

	unit_rows(cl, u);
	for (size_t i = 0; i < u->rows.n; i++) {
		struct rq_result *r = u->rows.v[i];

		if (!u->two)
			note_local_fail(u->nd[0], r);
		rq_results_add(e->out, r);
		e->sink->row(e->sink->arg, r);
	}
	if (u->two)
		note_pair(cl, u->pair, u->rows.v, u->rows.n);
	free(u->rows.v);
	u->rows.v = NULL;
	u->rows.n = 0;
	if (!u->gone[0] && !u->gone[1])
		cluster_journal_unit(cl, u->key, e->out, first);
}

/*
 * --resume: a unit the journal has goes back into the report, and into
 * the suspects' tallies as if it had just run.  nd: a node-local unit's
 * node; pair: a pair's index, or -1.
 */
static bool resumed(struct cluster *cl, const struct rq_case *c, const char *key,
		    struct rq_results *out,
		    const struct cluster_sink *sink, struct cnode *nd, long pair)
{
	size_t first = out->n;
	const struct cpair *p = pair >= 0 ? &cl->pairs[pair] : NULL;

	if (!cluster_resume_unit(cl, key, c->name,
				 p ? cl->nodes[p->client].name : nd->name,
				 p ? cl->nodes[p->server].name : NULL, out, sink))
		return false;
	for (size_t i = first; nd && i < out->n; i++)
		note_local_fail(nd, out->v[i]);
	if (pair >= 0)
		note_pair(cl, (size_t)pair, out->v + first, out->n - first);
	return true;
}

static void unit_free(struct unit *u)
{
	json_decref(u->ans[0]);
	json_decref(u->ans[1]);
	rq_results_release(&u->rows);
	free(u->key);
}

/* ---- node-local cases ----------------------------------------------- */

static void cluster_exec_local(struct cluster *cl, const struct rq_case *c,
			       struct rq_results *out, const struct cluster_sink *sink)
{
	struct unit *u = xcalloc(cl->n ? cl->n : 1, sizeof(*u));
	struct emit e = { out, sink };
	size_t nu = 0;

	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];
		char *key = xasprintf("%s|%s", c->name, nd->name);

		if (resumed(cl, c, key, out, sink, nd, -1)) {
			free(key);
			continue;
		}
		if (nd->root && !lists_target(c, "sysroot")) {
			struct rq_result *r = verdict_row(c->name, RQ_SKIP, "%s does not run on a "
							  "captured tree (targets: sysroot not listed)",
							  c->name);
			struct unit tmp = { .c = c, .nd = { nd, NULL }, .rail = -1, .start = now_ms() };
			struct sb nolog = SB_INIT;

			rq_results_add(&tmp.rows, r);
			finish_rows(cl, &tmp, &nolog);
			rq_results_add(out, r);
			sink->row(sink->arg, r);
			free(tmp.rows.v);
			free(key);
			continue;
		}
		u[nu++] = (struct unit){ .c = c, .nd = { nd, NULL }, .rail = -1, .key = key };
	}
	run_units(cl, u, nu, emit_done, &e);
	for (size_t i = 0; i < nu; i++)
		unit_free(&u[i]);
	free(u);
}

/* ---- rails ---------------------------------------------------------- */

static const char rails_case[] =
	"cases:\n"
	"  - name: lab.rails\n"
	"    kind: rdma-links\n"
	"    summary: the node's rails, for pairing (not reported)\n"
	"    targets: [hca, rxe-vm, rxe-host, sysroot, local]\n"
	"    port_active: false\n"
	"    addressable: false\n";

static const char *fact(const struct rq_result *r, const char *key)
{
	for (size_t i = 0; i < r->nfacts; i++)
		if (!strcmp(r->facts[i].key, key))
			return r->facts[i].value;
	return "";
}

static void rails_done(struct cluster *cl, struct unit *u, void *arg)
{
	struct cnode *nd = u->nd[0];

	(void)arg;
	unit_rows(cl, u);
	for (size_t i = 0; i < u->rows.n; i++) {
		const struct rq_result *r = u->rows.v[i];

		if (!r->device || r->port <= 0) {
			snprintf(nd->rails_why, sizeof(nd->rails_why), "%s",
				 r->reason ? r->reason : "no RDMA port reported");
			continue;
		}
		nd->rails = xrealloc(nd->rails, (nd->nrails + 1) * sizeof(*nd->rails));
		struct rail *rl = &nd->rails[nd->nrails++];

		memset(rl, 0, sizeof(*rl));
		snprintf(rl->dev, sizeof(rl->dev), "%s", r->device);
		rl->port = r->port;
		snprintf(rl->ipv4, sizeof(rl->ipv4), "%s", fact(r, "ipv4"));
		snprintf(rl->gid, sizeof(rl->gid), "%s", fact(r, "gid"));
	}
	nd->rails_known = nd->nrails > 0;
	if (!nd->rails_known && !nd->rails_why[0])
		snprintf(nd->rails_why, sizeof(nd->rails_why), "%s",
			 nd->down ? nd->down_why : "no RDMA port reported");
}

/* Once per run, before the first two-sided case: every node's rails. */
static void discover_rails(struct cluster *cl)
{
	struct rq_suite suite = { 0 };
	struct rq_diags diags = { 0 };

	if (cl->rails_done)
		return;
	cl->rails_done = true;
	if (rq_load_buffer("(lab rails)", rails_case, sizeof(rails_case) - 1, &suite, &diags) ||
	    suite.ncases != 1) {
		for (size_t i = 0; i < cl->n; i++)
			snprintf(cl->nodes[i].rails_why, sizeof(cl->nodes[i].rails_why),
				 "the rail discovery case did not load: %s",
				 diags.n ? diags.v[0].msg : "?");
		rq_diags_release(&diags);
		rq_suite_release(&suite);
		return;
	}
	const struct rq_case *c = suite.cases[0];
	struct unit *u = xcalloc(cl->n ? cl->n : 1, sizeof(*u));

	for (size_t i = 0; i < cl->n; i++)
		u[i] = (struct unit){ .c = c, .nd = { &cl->nodes[i], NULL }, .rail = -1,
				      .silent = true };
	run_units(cl, u, cl->n, rails_done, NULL);
	for (size_t i = 0; i < cl->n; i++)
		unit_free(&u[i]);
	free(u);
	rq_suite_release(&suite);
}

/* ---- two-sided cases ------------------------------------------------ */

static void cluster_exec_pairs(struct cluster *cl, const struct rq_case *c,
			       struct rq_results *out, const struct cluster_sink *sink)
{
	struct rq_rounds rr;
	struct emit e = { out, sink };
	char perr[300];

	if (cluster_case_rounds(cl, c, &rr, perr, sizeof(perr))) {
		struct rq_result *r = verdict_row(c->name, RQ_ERROR, "%s", perr);

		r->kind = xstrdup(c->kind->name);
		r->file = xstrdup(c->file ? c->file : "");
		rq_results_add(out, r);
		sink->row(sink->arg, r);
		return;
	}
	discover_rails(cl);
	cl->pair_cases = xrealloc(cl->pair_cases, (cl->npair_cases + 1) * sizeof(*cl->pair_cases));
	cl->pair_cases[cl->npair_cases++] = c;
	for (size_t k = 0; k < rr.nrounds && !rq_interrupted; k++) {
		struct unit *u = NULL;
		size_t nu = 0;

		for (size_t j = rr.start[k]; j < rr.start[k + 1]; j++) {
			struct cnode *a = &cl->nodes[rr.pairs[j].client], *b = &cl->nodes[rr.pairs[j].server];
			size_t pi = cl->npairs;

			cl->pairs = xrealloc(cl->pairs, (cl->npairs + 1) * sizeof(*cl->pairs));
			cl->pairs[cl->npairs++] = (struct cpair){ .c = c, .client = rr.pairs[j].client,
				.server = rr.pairs[j].server, .round = (unsigned)k, .verdict = RQ_PASS };
			size_t nr = a->nrails > b->nrails ? a->nrails : b->nrails;

			bool notree = (a->root || b->root) && !lists_target(c, "sysroot");

			if (!notree && !a->down && !b->down && (!a->rails_known || !b->rails_known)) {
				/*
				 * No rails to align (no RDMA device, as a node without one
				 * reports): one unit for the pair, and the kind judges what
				 * it can run there (a verbs kind SKIPs, command_pair runs).
				 */
				char *key = xasprintf("%s|%s|%s", c->name, a->name, b->name);

				if (resumed(cl, c, key, out, sink, NULL, (long)pi)) {
					free(key);
					continue;
				}
				u = xrealloc(u, (nu + 1) * sizeof(*u));
				u[nu++] = (struct unit){ .c = c, .nd = { a, b }, .two = true,
							 .rail = -1, .pair = pi, .key = key };
				continue;
			}
			if (notree || a->down || b->down) {
				/* No traffic: one row for the pair, saying why (a dead node first). */
				struct cnode *x = a->down ? a : b;
				char *key = xasprintf("%s|%s|%s", c->name, a->name, b->name);

				if (!resumed(cl, c, key, out, sink, NULL, (long)pi)) {
					struct unit t = { .c = c, .nd = { a, b }, .two = true, .rail = -1,
							  .start = now_ms(), .pair = pi };
					struct sb nolog = SB_INIT;
					struct rq_result *r;

					if (x->down)
						r = verdict_row(c->name, RQ_ERROR, "%s%s %s", x == b ? "peer " : "",
								x->name, x->down_why);
					else
						r = verdict_row(c->name, RQ_SKIP, "%s does not run between "
								"captured trees (targets: sysroot not listed)",
								c->name);

					rq_results_add(&t.rows, r);
					finish_rows(cl, &t, &nolog);	/* names it case[A->B] */
					note_pair(cl, pi, t.rows.v, t.rows.n);
					rq_results_add(out, r);
					sink->row(sink->arg, r);
					cluster_journal_unit(cl, key, out, out->n - 1);
					free(t.rows.v);
				}
				free(key);
				continue;
			}
			u = xrealloc(u, (nu + nr) * sizeof(*u));
			for (size_t i = 0; i < nr; i++) {
				char *key = xasprintf("%s|%s|%s|%zu", c->name, a->name, b->name, i);

				if (resumed(cl, c, key, out, sink, NULL, (long)pi)) {
					free(key);
					continue;
				}
				if (i >= a->nrails || i >= b->nrails) {
					struct cnode *x = i >= a->nrails ? a : b;
					struct rq_result *r = verdict_row(c->name, RQ_FAIL,
						"node %s has no rail %zu (it has %zu; rails pair by position)",
						x->name, i + 1, x->nrails);
					struct rail *other = i >= a->nrails ? &b->rails[i] : &a->rails[i];

					free(r->id);
					r->id = xasprintf("%s[%s:%s->%s:%s/%d]", c->name, a->name,
							  x == a ? "none" : other->dev, b->name,
							  x == b ? "none" : other->dev, other->port);
					r->node = xstrdup(a->name);
					r->peer_node = xstrdup(b->name);
					r->target = xstrdup(a->target);
					r->kind = xstrdup(c->kind->name);
					r->file = xstrdup(c->file ? c->file : "");
					r->target_why = xasprintf("lab run: node %s via %s", a->name,
								  launcher_name(cl));
					cl->pairs[pi].verdict = RQ_FAIL;
					free(cl->pairs[pi].what);
					cl->pairs[pi].what = xasprintf("%s FAIL: %s", r->id, r->reason);
					rq_results_add(out, r);
					sink->row(sink->arg, r);
					cluster_journal_unit(cl, key, out, out->n - 1);
					free(key);
					continue;
				}
				u[nu++] = (struct unit){ .c = c, .nd = { a, b }, .two = true,
							 .rail = (int)i,
							 .pair = pi, .key = key };
			}
		}
		/* One round at a time: no node is in two pairs at once. */
		run_units(cl, u, nu, emit_done, &e);
		for (size_t i = 0; i < nu; i++)
			unit_free(&u[i]);
		free(u);
	}
	rq_rounds_release(&rr);
}

/* ---- the run -------------------------------------------------------- */

void cluster_run(struct cluster *cl, struct rq_case *const *sel, size_t nsel, struct sched *s,
		 const char *run_dir, struct rq_results *out, const struct cluster_sink *sink)
{
	cluster_journal_open(cl, run_dir);
	for (size_t i = 0; cl->launcher == LAUNCH_SLURM && i < cl->n; i++) {
		char name[256];
		size_t j = 0;

		/* a hostlist name is [A-Za-z0-9._-]; anything else becomes '_' anyway */
		for (const char *p = cl->nodes[i].name; *p && j + 1 < sizeof(name); p++)
			name[j++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ? *p : '_';
		name[j] = '\0';
		cl->nodes[i].launch_log = xasprintf("%s/logs/srun-%s.log", run_dir, name);
	}
	cluster_launch(cl);
	for (size_t i = 0; i < nsel && !rq_interrupted; i++) {
		const struct rq_case *c = sel[i];

		if (!cluster_runs_on_nodes(c)) {
			char *key = xasprintf("%s|controller", c->name);
			size_t first = out->n;

			if (!cluster_resume_unit(cl, key, c->name, NULL, NULL, out, sink)) {
				sched_run_case(s, c, out);
				for (size_t j = first; j < out->n; j++)
					sink->row(sink->arg, out->v[j]);
				cluster_journal_unit(cl, key, out, first);
			}
			free(key);
		} else if (cluster_case_is_pairs(c)) {
			cluster_exec_pairs(cl, c, out, sink);
		} else {
			cluster_exec_local(cl, c, out, sink);
		}
		sink->flush(sink->arg);
	}
}
