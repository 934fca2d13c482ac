/* SPDX-License-Identifier: MIT */
/*
 * Lab runs: cases as units of work on the nodes' agents (exec/unit.h, the
 * executor plain runs use too).  A unit is one node-local case on one
 * node, or one rail of one pair of a two-sided case (server role on one
 * node, client role on the other, sent at once).  Up to --fanout units are in flight; the main
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
#include "exec/unit.h"
#include "cluster/suspects.h"
#include "lab/lab_int.h"
#include "qual/compare.h"
#include "qual/stats.h"
#include "rdma/rdmadev.h"

struct unit {
	struct cluster *cl;
	const struct rq_case *c;
	struct cnode *nd[2];		/* [0]: the node, or a pair's client; [1]: its server */
	bool two;			/* a pair's unit (else node-local) */
	bool span;			/* one unit for every node (kind->spans_nodes), from nd[0] */
	int rail;			/* the pair's rail i, or -1 (node-local, or no rails known) */
	size_t pair;			/* index into cl->pairs */
	bool silent;			/* rail discovery: rows are read, not reported */
	char *key;			/* journal key */
	struct rq_unit x;		/* the executor's unit: side [0] nd[0], [1] nd[1] */
	struct rq_results rows;
};

/*
 * A pair's main figure: the client row's first key figure with a direction,
 * else its first figure that measures the link, not the run's own length
 * (command-pair reports "elapsed" first).
 */
const struct rq_figure *cluster_main_figure(const struct rq_result *r)
{
	/*
	 * A key figure first (the case's judge:, else its kind's), as compare
	 * judges: perftest's bw_avg rather than its one-sample bw_peak.
	 */
	for (size_t i = 0; i < r->nfigs; i++)
		if (!str_ends(r->figs[i].name, "elapsed") && cmp_key_figure(r->kind, r->judge, r->figs[i].name) &&
		    cmp_direction(r->figs[i].name, r->figs[i].unit) != CMP_DIR_UNKNOWN)
			return &r->figs[i];
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

/*
 * --repeat N: a round's units are journaled under their key and "#K", and
 * its rows carry the round, so a resumed run finds each round's own.
 */
static char *repeat_key(const struct cluster *cl, char *key)
{
	char *k;

	if (!cl->repeat)
		return key;
	k = xasprintf("%s#%u", key, cl->repeat);
	free(key);
	return k;
}

static void emit_row(const struct cluster *cl, const struct rq_run_sink *sink, struct rq_result *r)
{
	if (cl->repeat)
		r->repeat = cl->repeat;
	sink->row(sink->arg, r);
}

static bool lists_target(const struct rq_case *c, const char *t)
{
	for (size_t i = 0; i < c->ntargets; i++)
		if (!strcmp(c->targets[i], t))
			return true;
	return false;
}

/* ---- requests ------------------------------------------------------- */

static const char *launcher_name(const struct cluster *cl)
{
	return cl->launcher == LAUNCH_SSH ? "ssh" : cl->launcher == LAUNCH_SLURM ? "srun" : "local";
}

/*
 * The lab is a placer of many nodes: where a unit runs is the same struct
 * a target's place() fills (core/where.h), and the request is built from
 * it by rq_request_place, as the scheduler builds a target's.  Only the
 * out-of-band peer differs: a lab reaches the other side at its
 * management address, which is not an RDMA-side address to bind.
 */
static void lab_place(struct cluster *cl, struct unit *u, int side, struct rq_placement *pl)
{
	struct cnode *nd = u->nd[side];
	struct rq_where *w = &pl->where;
	bool pair = u->two;

	rq_where_init(w);
	pl->root = nd->root ? nd->root : "";
	/* each side's node name, [client side, server side] (command-pair's {peer_host}) */
	w->host[side] = xstrdup(nd->name);
	if (pair)
		w->host[!side] = xstrdup(u->nd[!side]->name);
	if (u->span)
		/* every node up, by the address the lab reaches it at (mpirun's hostfile) */
		for (size_t i = 0; i < cl->n; i++)
			if (!cl->nodes[i].down)
				rq_where_add_node(w, cl->nodes[i].name, cl->nodes[i].mgmt);
	if (u->rail >= 0) {
		/* The RDMA side of the link: traffic goes here, not to the management name. */
		w->rail = u->rail;
		for (int k = 0; k < (pair ? 2 : 1); k++) {
			const struct rail *rl = &u->nd[k]->rails[u->rail];

			w->rdma_addr[k] = xstrdup(rl->ipv4);
			w->rdma_gid[k] = xstrdup(rl->gid);
		}
	}
}

static json_t *build_req(struct cluster *cl, struct unit *u, int side, int port)
{
	const struct rq_case *c = u->c;
	struct cnode *nd = u->nd[side];
	bool pair = u->two;
	char *env = xasprintf("RDMAQUAL_NODE=%s", nd->name), pnum[16];
	char *envv[] = { env, NULL };
	struct rq_placement pl = { .env = envv };
	struct rq_request r;
	json_t *req;

	rq_request_init(&r, c, nd->root ? "sysroot" : nd->target,
			!pair ? ROLE_SINGLE : side ? ROLE_SERVER : ROLE_CLIENT);
	lab_place(cl, u, side, &pl);
	rq_request_place(&r, &pl, side, port, cl->launcher == LAUNCH_LOCAL ? cl->o->state_dir : NULL,
			 cl->o->allow_sm_takeover);
	rq_where_release(&pl.where);
	if (u->rail >= 0) {
		/* rail i of this side: its own device and port */
		const struct rail *rl = &nd->rails[u->rail];

		snprintf(pnum, sizeof(pnum), "%d", rl->port);
		rq_request_set_key(&r, "devices", rl->dev);
		rq_request_set_key(&r, "port", pnum);
	}
	/* The out-of-band exchange goes to the server's management address (the server learns the client's). */
	if (pair)
		r.peer_addr = u->nd[!side]->mgmt;
	req = rq_request_to_json(&r);
	rq_request_release(&r);
	free(env);
	return req;
}

/* ---- rows ----------------------------------------------------------- */

/*
 * What a lab row says about where it ran (exec/unit.c stamps it): node a
 * (its --nodes name), and for a pair the peer b and the pair's id
 * "case[a:dev/1->b:dev/1]" on a rail, "case[a->b]" without, or id.
 */
static void lab_stamp(struct cluster *cl, const struct rq_case *c, struct cnode *a,
		      struct cnode *b, int rail, const char *id, struct rq_result *const *v,
		      size_t n, const struct sb *log, double dur)
{
	char *pid = NULL, *why = xasprintf("lab run: node %s via %s", a->name, launcher_name(cl));

	if (!id && b && rail >= 0)
		id = pid = xasprintf("%s[%s:%s/%d->%s:%s/%d]", c->name, a->name, a->rails[rail].dev,
				     a->rails[rail].port, b->name, b->rails[rail].dev,
				     b->rails[rail].port);
	else if (!id && b)
		id = pid = xasprintf("%s[%s->%s]", c->name, a->name, b->name);

	struct rq_stamp st = {
		.target = a->target, .target_why = why, .node = a->name,
		.peer_node = b ? b->name : NULL, .id = id, .log = log, .duration_s = dur,
		/* the --nodes name goes everywhere; two nodes may well report one hostname */
		.hostname = cl->launcher != LAUNCH_LOCAL ? a->hostname : NULL,
	};

	rq_rows_stamp(v, n, c, &st);
	/* which binary served there: the node's installed rdmaqual, or our copy */
	for (size_t i = 0; a->exe && i < n; i++)
		rq_fact_add(v[i], "node.rdmaqual_exe", a->exe);
	free(pid);
	free(why);
}

static bool unit_gone(const struct unit *u)
{
	for (size_t s = 0; s < u->x.nsides; s++)
		if (u->x.side[s].gone)
			return true;
	return false;
}

/* Rows of a finished unit, from its answers (or why there are none). */
static void unit_rows(struct cluster *cl, struct unit *u)
{
	struct sb log = SB_INIT;

	char *id = u->span ? xasprintf("%s[all]", u->c->name) : NULL;

	rq_unit_rows(&u->x, &u->rows, &log);
	/* a job over every node: the lab's row, not its launching node's */
	lab_stamp(cl, u->c, u->nd[0], u->two ? u->nd[1] : NULL, u->two ? u->rail : -1, id,
		  u->rows.v, u->rows.n, &log, (now_ms() - u->x.start) / 1000.0);
	sb_release(&log);
	free(id);
}

/* ---- the unit loop -------------------------------------------------- */

static void side_why_down(struct unit *u, size_t s)
{
	snprintf(u->x.side[s].why, sizeof(u->x.side[s].why), "%s%s %s", s ? "peer " : "",
		 u->nd[s]->name, u->nd[s]->down_why);
}

/* The executor found a side's agent dead: its node is down, for this unit and the run. */
static void unit_side_gone(struct rq_unit *x, size_t s, void *arg)
{
	struct unit *u = arg;
	struct rq_agent *ag = u->nd[s]->ag;

	cluster_node_down(u->cl, u->nd[s], "gone: %s", ag ? ag->dead_why : "no agent");
	side_why_down(u, s);
}

static void unit_start(struct cluster *cl, struct unit *u)
{
	size_t nside = u->two ? 2 : 1;
	int port = rq_unit_oob_port(cl->port_seq++);

	u->cl = cl;
	rq_unit_init(&u->x, u->c, nside);
	u->x.gone = unit_side_gone;
	u->x.arg = u;
	u->x.start = now_ms();
	for (size_t s = 0; s < nside; s++)
		if (u->nd[s]->down) {
			u->x.side[s].gone = true;
			side_why_down(u, s);
			return;
		}
	for (size_t s = 0; s < nside; s++) {
		struct rq_unit_side *sd = &u->x.side[s];

		sd->ag = u->nd[s]->ag;
		sd->req = build_req(cl, u, (int)s, port);
		/* a pair's client reports; its server explains a failure */
		sd->label = u->two ? (s ? "server" : "client") : NULL;
		/* a pair's reasons say which node lacked or failed what */
		sd->node = u->two ? u->nd[s]->name : NULL;
		sd->reports = !u->two || s == 0;
	}
	if (rq_unit_start(&u->x))
		cl->units++;
}

/*
 * The units' cancelled sides must be gone before their nodes run anything
 * else: a stopped pair's server or QP left beside the next round's pair
 * failed that pair ("remote invalid request error (9)") and made its node
 * a false link suspect.  Each agent answers a stopped run once its
 * processes are gone (exec/unit.h, rq_unit_settle); a node whose agent
 * does not, or says what is left, is given no more work, and its later
 * units say why.  One deadline for the round: the agents clean up at once.
 */
static void settle_units(struct cluster *cl, struct unit *u, size_t n)
{
	int64_t deadline = now_ms() + scaled_ms(RQ_UNIT_SETTLE_MS);

	for (size_t i = 0; i < n && !rq_interrupted; i++) {
		struct unit *x = &u[i];

		if (!rq_unit_settle(&x->x, deadline))
			continue;
		for (size_t s = 0; s < x->x.nsides; s++)
			if (x->x.side[s].leftover[0])
				cluster_node_down(cl, x->nd[s], "given no more work after a stopped "
						  "unit (%s%s%s): %s", x->c->name,
						  x->x.side[s].label ? ", side " : "",
						  x->x.side[s].label ? x->x.side[s].label : "",
						  x->x.side[s].leftover);
	}
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
			if (x->x.running)
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

			for (size_t s = 0; s < x->x.nsides; s++)
				if (x->x.side[s].id && x->nd[s]->poll_epoch != cl->poll_epoch) {
					x->nd[s]->poll_epoch = cl->poll_epoch;
					ags[na++] = x->nd[s]->ag;
				}
			if (x->x.deadline < dl)
				dl = x->x.deadline;
		}
		int r = rq_agent_poll(ags, na, dl);

		for (size_t i = 0; i < live;) {
			struct unit *x = &u[run[i]];

			if (r == -2) {
				char why[64];

				snprintf(why, sizeof(why), "interrupted by signal %d", (int)rq_interrupted);
				rq_unit_cancel(&x->x, why);
			}
			if (!x->x.running || rq_unit_poll(&x->x)) {
				done(cl, x, arg);
				run[i] = run[--live];
			} else {
				i++;
			}
		}
	}
	settle_units(cl, u, n);
	free(ags);
	free(run);
}

/* ---- reporting units ------------------------------------------------ */

struct emit {
	struct rq_results *out;
	const struct rq_run_sink *sink;
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

		if (rq_verdict_rank(r->verdict) > rq_verdict_rank(p->verdict) || !p->what) {
			p->verdict = r->verdict;
			free(p->what);
			p->what = xasprintf("%s %s%s%s", r->id, rq_verdict_name(r->verdict),
					    r->reason ? ": " : "", r->reason ? r->reason : "");
		}
		/* the pair's figure: its weakest rail's main figure */
		const struct rq_figure *f = cluster_main_figure(r);

		if (rdma_soft_dev_name(r->device))
			p->soft = true;

		/* --repeat: a new round's weakest rail starts afresh; the last one's is kept */
		if (cl->repeat && p->fig_repeat != cl->repeat) {
			if (p->has_fig) {
				p->rounds = xrealloc(p->rounds, (p->nrounds + 1) * sizeof(*p->rounds));
				p->rounds[p->nrounds++] = p->fig;
				p->has_fig = false;
			}
			p->fig_repeat = cl->repeat;
		}
		if (f && (!p->has_fig || (cluster_higher_better(f->unit) ? f->value < p->fig :
					  f->value > p->fig))) {
			p->has_fig = true;
			p->fig = f->value;
			snprintf(p->fig_name, sizeof(p->fig_name), "%s", f->name);
			snprintf(p->unit, sizeof(p->unit), "%s", f->unit);
		}
	}
}

/*
 * A job over every node failed: the nodes it names as suspects (by the
 * hostname a rank printed, or the address or name the lab knows) are
 * suspects of the lab, not the node the job was launched from.
 */
static void note_span(struct cluster *cl, const struct rq_result *r)
{
	const char *sus = NULL;

	for (size_t i = 0; i < r->nfacts; i++)
		if (!strcmp(r->facts[i].key, "suspects"))
			sus = r->facts[i].value;
	if (!sus || (r->verdict != RQ_FAIL && r->verdict != RQ_ERROR))
		return;
	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];

		if (rq_suspects_names(sus, nd->hostname) || rq_suspects_names(sus, nd->name) ||
		    rq_suspects_names(sus, nd->mgmt))
			note_local_fail(nd, r);
	}
}

static void emit_done(struct cluster *cl, struct unit *u, void *arg)
{
	struct emit *e = arg;
	size_t first = e->out->n;

	unit_rows(cl, u);
	for (size_t i = 0; i < u->rows.n; i++) {
		struct rq_result *r = u->rows.v[i];

		if (u->span)
			note_span(cl, r);
		else if (!u->two)
			note_local_fail(u->nd[0], r);
		rq_results_add(e->out, r);
		emit_row(cl, e->sink, r);
	}
	if (u->two)
		note_pair(cl, u->pair, u->rows.v, u->rows.n);
	free(u->rows.v);
	u->rows.v = NULL;
	u->rows.n = 0;
	if (!unit_gone(u))
		cluster_journal_unit(cl, u->key, e->out, first);
	/* reported and journaled: the rows may go to the spool (lab.h) */
	if (e->sink->spill)
		e->sink->spill(e->sink->arg);
}

/*
 * --resume: a unit the journal has goes back into the report, and into
 * the suspects' tallies as if it had just run.  nd: a node-local unit's
 * node; pair: a pair's index, or -1.
 */
static bool resumed(struct cluster *cl, const struct rq_case *c, const char *key,
		    struct rq_results *out,
		    const struct rq_run_sink *sink, struct cnode *nd, long pair)
{
	size_t first = out->n;
	const struct cpair *p = pair >= 0 ? &cl->pairs[pair] : NULL;

	if (!cluster_resume_unit(cl, key, c->name,
				 p ? cl->nodes[p->client].name : nd->name,
				 p ? cl->nodes[p->server].name : NULL, out, sink))
		return false;
	for (size_t i = first; nd && i < out->n; i++)
		if (c->kind->spans_nodes)
			note_span(cl, out->v[i]);
		else
			note_local_fail(nd, out->v[i]);
	if (pair >= 0)
		note_pair(cl, (size_t)pair, out->v + first, out->n - first);
	return true;
}

static void unit_free(struct unit *u)
{
	rq_unit_release(&u->x);
	rq_results_release(&u->rows);
	free(u->key);
}

/* ---- node-local cases ----------------------------------------------- */

static void cluster_exec_local(struct cluster *cl, const struct rq_case *c,
			       struct rq_results *out, const struct rq_run_sink *sink)
{
	struct unit *u = xcalloc(cl->n ? cl->n : 1, sizeof(*u));
	struct emit e = { out, sink };
	size_t nu = 0;

	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];
		char *key = repeat_key(cl, xasprintf("%s|%s", c->name, nd->name));

		if (resumed(cl, c, key, out, sink, nd, -1)) {
			free(key);
			continue;
		}
		if (nd->root && !lists_target(c, "sysroot")) {
			struct rq_result *r = rq_verdict_row(c->name, RQ_SKIP, "%s does not run on a "
							  "captured tree (targets: sysroot not listed)",
							  c->name);
			lab_stamp(cl, c, nd, NULL, -1, NULL, &r, 1, NULL, 0);
			rq_results_add(out, r);
			emit_row(cl, sink, r);
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

/* ---- one job over every node ----------------------------------------- */

/*
 * An MPI job spans the nodes itself: run on each node, it would be N jobs
 * of one node (or N jobs over all at once).  One unit, from the first node
 * that is up, its hostfile every node up; its row is the lab's, stamped
 * with the node it was launched from.
 */
static void cluster_exec_span(struct cluster *cl, const struct rq_case *c,
			      struct rq_results *out, const struct rq_run_sink *sink)
{
	struct emit e = { out, sink };
	struct cnode *nd = NULL;
	struct unit u;
	char *key;

	for (size_t i = 0; i < cl->n && !nd; i++)
		if (!cl->nodes[i].down)
			nd = &cl->nodes[i];
	if (!nd)
		nd = &cl->nodes[0];	/* all down: the unit says why */
	key = repeat_key(cl, xasprintf("%s|all", c->name));
	if (resumed(cl, c, key, out, sink, nd, -1)) {
		free(key);
		return;
	}
	if (nd->root) {
		struct rq_result *r = rq_verdict_row(c->name, RQ_SKIP, "%s runs a job across "
						  "the nodes: a captured tree runs none", c->name);
		lab_stamp(cl, c, nd, NULL, -1, NULL, &r, 1, NULL, 0);
		rq_results_add(out, r);
		emit_row(cl, sink, r);
		free(key);
		return;
	}
	u = (struct unit){ .c = c, .nd = { nd, NULL }, .rail = -1, .key = key, .span = true };
	run_units(cl, &u, 1, emit_done, &e);
	unit_free(&u);
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
			       struct rq_results *out, const struct rq_run_sink *sink)
{
	struct rq_rounds rr;
	struct emit e = { out, sink };
	char perr[300];

	if (cluster_case_rounds(cl, c, &rr, perr, sizeof(perr))) {
		struct rq_result *r = rq_verdict_row(c->name, RQ_ERROR, "%s", perr);

		free(r->kind);
		r->kind = xstrdup(c->kind->name);
		r->judge = c->judge ? xstrdup(c->judge) : NULL;
		free(r->file);
		r->file = xstrdup(c->file ? c->file : "");
		rq_results_add(out, r);
		emit_row(cl, sink, r);
		return;
	}
	discover_rails(cl);
	/* --repeat: the rounds after the first fill the first one's matrix */
	bool again = false;

	for (size_t k = 0; k < cl->npair_cases; k++)
		again = again || cl->pair_cases[k] == c;
	if (!again) {
		cl->pair_cases = xrealloc(cl->pair_cases, (cl->npair_cases + 1) * sizeof(*cl->pair_cases));
		cl->pair_cases[cl->npair_cases++] = c;
	}
	for (size_t k = 0; k < rr.nrounds && !rq_interrupted; k++) {
		struct unit *u = NULL;
		size_t nu = 0;

		for (size_t j = rr.start[k]; j < rr.start[k + 1]; j++) {
			struct cnode *a = &cl->nodes[rr.pairs[j].client], *b = &cl->nodes[rr.pairs[j].server];
			size_t pi = cl->npairs;

			for (size_t q = 0; again && q < cl->npairs; q++)
				if (cl->pairs[q].c == c && cl->pairs[q].client == rr.pairs[j].client &&
				    cl->pairs[q].server == rr.pairs[j].server)
					pi = q;
			if (pi == cl->npairs) {
				cl->pairs = xrealloc(cl->pairs, (cl->npairs + 1) * sizeof(*cl->pairs));
				cl->pairs[cl->npairs++] = (struct cpair){ .c = c, .client = rr.pairs[j].client,
					.server = rr.pairs[j].server, .round = (unsigned)k, .verdict = RQ_PASS };
			}
			size_t nr = a->nrails > b->nrails ? a->nrails : b->nrails;

			bool notree = (a->root || b->root) && !lists_target(c, "sysroot");

			if (!notree && !a->down && !b->down && (!a->rails_known || !b->rails_known)) {
				/*
				 * No rails to align (no RDMA device, as a node without one
				 * reports): one unit for the pair, and the kind judges what
				 * it can run there (a verbs kind SKIPs, command-pair runs).
				 */
				char *key = repeat_key(cl, xasprintf("%s|%s|%s", c->name, a->name, b->name));

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
				char *key = repeat_key(cl, xasprintf("%s|%s|%s", c->name, a->name, b->name));

				if (!resumed(cl, c, key, out, sink, NULL, (long)pi)) {
					struct rq_result *r;

					if (x->down)
						r = rq_verdict_row(c->name, RQ_ERROR, "%s%s %s", x == b ? "peer " : "",
								x->name, x->down_why);
					else
						r = rq_verdict_row(c->name, RQ_SKIP, "%s does not run between "
								"captured trees (targets: sysroot not listed)",
								c->name);

					lab_stamp(cl, c, a, b, -1, NULL, &r, 1, NULL, 0);	/* case[A->B] */
					note_pair(cl, pi, &r, 1);
					rq_results_add(out, r);
					emit_row(cl, sink, r);
					cluster_journal_unit(cl, key, out, out->n - 1);
				}
				free(key);
				continue;
			}
			u = xrealloc(u, (nu + nr) * sizeof(*u));
			for (size_t i = 0; i < nr; i++) {
				char *key = repeat_key(cl, xasprintf("%s|%s|%s|%zu", c->name, a->name, b->name,
								     i));

				if (resumed(cl, c, key, out, sink, NULL, (long)pi)) {
					free(key);
					continue;
				}
				if (i >= a->nrails || i >= b->nrails) {
					struct cnode *x = i >= a->nrails ? a : b;
					struct rq_result *r = rq_verdict_row(c->name, RQ_FAIL,
						"node %s has no rail %zu (it has %zu; rails pair by position)",
						x->name, i + 1, x->nrails);
					struct rail *other = i >= a->nrails ? &b->rails[i] : &a->rails[i];
					char *id = xasprintf("%s[%s:%s->%s:%s/%d]", c->name, a->name,
							     x == a ? "none" : other->dev, b->name,
							     x == b ? "none" : other->dev, other->port);

					lab_stamp(cl, c, a, b, -1, id, &r, 1, NULL, 0);
					free(id);
					cl->pairs[pi].verdict = RQ_FAIL;
					free(cl->pairs[pi].what);
					cl->pairs[pi].what = xasprintf("%s FAIL: %s", r->id, r->reason);
					rq_results_add(out, r);
					emit_row(cl, sink, r);
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
		 const char *run_dir, struct rq_results *out, const struct rq_run_sink *sink)
{
	cluster_journal_open(cl, run_dir);
	for (size_t i = 0; cl->launcher != LAUNCH_LOCAL && i < cl->n; i++) {
		char name[256];
		size_t j = 0;

		/* a hostlist name is [A-Za-z0-9._-]; anything else becomes '_' anyway */
		for (const char *p = cl->nodes[i].name; *p && j + 1 < sizeof(name); p++)
			name[j++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ? *p : '_';
		name[j] = '\0';
		cl->nodes[i].launch_log = xasprintf("%s/logs/%s-%s.log", run_dir,
						    cl->launcher == LAUNCH_SLURM ? "srun" : "ssh", name);
	}
	cluster_launch(cl);
	/* --repeat N: the suite N times, round by round (cluster_opts.repeat) */
	unsigned nrep = cl->co.repeat > 1 ? cl->co.repeat : 1;

	for (size_t k = 0; k < nsel * nrep && !rq_interrupted; k++) {
		const struct rq_case *c = sel[k % nsel];

		cl->repeat = nrep > 1 ? (unsigned)(k / nsel) + 1 : 0;

		if (!cluster_runs_on_nodes(c)) {
			char *key = repeat_key(cl, xasprintf("%s|controller", c->name));
			size_t first = out->n;

			if (!cluster_resume_unit(cl, key, c->name, NULL, NULL, out, sink)) {
				sched_run_case(s, c, out);
				for (size_t j = first; j < out->n; j++)
					emit_row(cl, sink, out->v[j]);
				cluster_journal_unit(cl, key, out, first);
			}
			free(key);
		} else if (cluster_case_is_pairs(c)) {
			cluster_exec_pairs(cl, c, out, sink);
		} else if (c->kind->spans_nodes) {
			cluster_exec_span(cl, c, out, sink);
		} else {
			cluster_exec_local(cl, c, out, sink);
		}
		sink->flush(sink->arg);
	}
	/*
	 * A pair's cell over the rounds is their median, so one unlucky round
	 * does not make a slow pair, nor one lucky round hide one.
	 */
	for (size_t i = 0; i < cl->npairs; i++) {
		struct cpair *p = &cl->pairs[i];

		if (!p->nrounds)
			continue;
		if (p->has_fig) {
			p->rounds = xrealloc(p->rounds, (p->nrounds + 1) * sizeof(*p->rounds));
			p->rounds[p->nrounds++] = p->fig;
		}
		p->fig = rq_stats_median(p->rounds, p->nrounds);
		p->has_fig = true;
		p->nrounds = 0;
	}
}
