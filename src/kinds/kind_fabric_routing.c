/* SPDX-License-Identifier: MIT */
/*
 * fabric-routing: does the routing the subnet manager programmed work, and
 * does it perform?
 *
 * A subnet can be up with every link Active and still drop traffic: a
 * switch without an entry for a LID (a hole), an entry out of an uncabled
 * port (a dead end), two switches pointing at each other (a loop).  It can
 * deliver everything and still deadlock under load, when the routes make
 * the switch-to-switch channels depend on each other in a cycle (a credit
 * loop; the Dally-Seitz condition).  And it can be correct and slow, when a
 * leaf sends most destinations up the same few uplinks.  This reads the
 * topology with its LIDs (ibnetdiscover) and every switch's forwarding
 * table (dump_fts), follows every route (fabric/routing.h), and gives one row
 * per check: reachability, credit loops, balance, each naming the switch,
 * port and destination at fault.  Read-only on any fabric.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/ibkind.h"
#include "parsers/parse_fabric.h"
#include "parsers/parse_ibdiag.h"
#include "fabric/routing.h"
#include "core/util.h"

struct fr_cfg {
	long long max_skew;
	bool balance;
	long long max_hops;
	long long max_path_queries;
};

static const struct key_def fr_keys[] = {
	{ .name = "max_skew", .type = KEY_INT, .def = "1", .min = 0, .max = 100000,
	  .offset = offsetof(struct fr_cfg, max_skew),
	  .help = "most destination LIDs by which a switch's busiest uplink may exceed its idlest (ftree on a full fat tree: 0)" },
	{ .name = "balance", .type = KEY_BOOL, .def = "true", .offset = offsetof(struct fr_cfg, balance),
	  .help = "judge uplink balance (fat trees); false: report it as figures only (meshes, tori)" },
	{ .name = "max_hops", .type = KEY_INT, .def = "0", .min = 0, .max = 64,
	  .offset = offsetof(struct fr_cfg, max_hops),
	  .help = "most switch hops a route may take (3 on a two-level fat tree); 0: not judged" },
	{ .name = "max_path_queries", .type = KEY_INT, .def = "4096", .min = 0, .max = 1000000,
	  .offset = offsetof(struct fr_cfg, max_path_queries),
	  .help = "most SA path records asked one by one for the SLs of the routes, where the SA's table "
		  "of all paths does not come whole (ibsim: its first MAD only); 0: never one by one" },
	KEY_END
};

/* Run a tool and keep its stdout; false with the main row ERROR. */
static bool tool_out(struct rq_ctx *ctx, const char *const *argv, struct sb *out)
{
	struct proc_result r;
	bool ok = false;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 120000, &r) == 0 && !r.exec_failed && !r.timed_out && r.exit_code == 0 &&
	    !r.out_truncated) {
		sb_add(out, r.out.buf, r.out.len);
		ok = true;
	} else {
		char how[200];

		proc_describe(&r, argv[0], how, sizeof(how));
		rq_result_set(ctx->main, RQ_ERROR, "%s%s", how, r.out_truncated ? " (output cut)" : "");
	}
	proc_result_release(&r);
	return ok;
}

/*
 * The engine that routed, from the target's opensm log: an engine that
 * cannot route a topology (updn without roots, ftree on a non-tree) makes
 * opensm fall back to minhop, and that run would qualify minhop under the
 * requested engine's name.
 */
static void judge_engine(struct rq_ctx *ctx, const struct rq_where_fabric *p)
{
	struct sb log = SB_INIT;
	struct osm_summary os;
	char want[128];

	if (read_file(p->sm_log, &log, 64u << 20) < 0) {
		rq_log(ctx, "# opensm log %s not readable: routing engine not verified", p->sm_log);
		sb_release(&log);
		return;
	}
	opensm_log_parse(log.buf, log.len, &os);
	snprintf(want, sizeof(want), "%s", p->routing_engine[0] ? p->routing_engine : "minhop");
	*strchrnul(want, ',') = '\0';
	if (os.routing[0])
		rq_fact_add(ctx->main, "routing_engine", os.routing);
	if (!os.routing[0])
		rq_log(ctx, "# opensm's log names no engine that configured the tables");
	else if (strcmp(os.routing, want))
		rq_judge(ctx->main, false, "routing_engine %s requested, opensm routed with %s (%s)", want, os.routing,
			 os.routing_failure[0] ? os.routing_failure : "its fallback");
	else
		rq_judge(ctx->main, true, "opensm routed with %s, as requested", os.routing);
	osm_summary_release(&os);
	sb_release(&log);
}

/* Every switch's LFT (dump_fts), for ibkind_settled. */
static bool read_lfts(struct rq_ctx *ctx, void *arg, struct sb *out, char *why, size_t whysz)
{
	static const char *const fts[] = { "dump_fts", NULL };

	(void)arg;
	(void)why;
	(void)whysz;
	return tool_out(ctx, fts, out);	/* a failure is the main row's ERROR */
}

/*
 * The SLs of the paths and the switches' SL2VL tables, asked as
 * rt_analyze_vls needs them.  SLs come from the SA's path records (what
 * the SM gives MPI, UCX and the CM for a path; lash, dfsssp, Nue and
 * torus-2QoS choose them per path): first its whole table (saquery -p), and
 * for each path it lacks one record (saquery -p --slid --dlid), up to
 * max_path_queries.  A switch's table for an out port is one smpquery
 * sl2vl LID PORT, which lists every in port.
 */
struct vl_ask {
	struct rq_ctx *ctx;
	const struct ibnet *topo;
	uint32_t *key;			/* open addressing: slid << 16 | dlid, 0 empty */
	int8_t *sl;			/* -1: asked, no answer */
	size_t cap, n;
	long long queries, max_queries;
	struct ib_sl2vl **tab;		/* node x (nports + 1): the table for that out port */
	size_t *tab_base;
	size_t tables, tables_failed;
	char first_fail[256];
};

static size_t vl_slot(const struct vl_ask *a, uint32_t key)
{
	size_t h = (key * 2654435761u) & (a->cap - 1);

	while (a->key[h] && a->key[h] != key)
		h = (h + 1) & (a->cap - 1);
	return h;
}

static void vl_put(struct vl_ask *a, unsigned slid, unsigned dlid, int sl)
{
	uint32_t key = (uint32_t)(slid << 16 | dlid);
	size_t h;

	if (!slid || slid > 0xffff || dlid > 0xffff)
		return;
	if (2 * (a->n + 1) > a->cap) {
		struct vl_ask old = *a;

		a->cap = a->cap ? 2 * a->cap : 1024;
		a->key = xcalloc(a->cap, sizeof(*a->key));
		a->sl = xcalloc(a->cap, sizeof(*a->sl));
		a->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.key[i]) {
				h = vl_slot(a, old.key[i]);
				a->key[h] = old.key[i];
				a->sl[h] = old.sl[i];
				a->n++;
			}
		free(old.key);
		free(old.sl);
	}
	h = vl_slot(a, key);
	if (!a->key[h])
		a->n++;
	a->key[h] = key;
	a->sl[h] = (int8_t)sl;
}

/* The path records of a saquery -p output into the map; how many. */
static size_t vl_records(struct vl_ask *a, const struct sb *out)
{
	struct ib_sa_records recs = { 0 };
	char err[256];
	size_t n = 0;

	if (saquery_parse(out->buf, out->len, &recs, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < recs.n; i++) {
		const char *sl = ib_sa_get(&recs.v[i], "sl"), *s = ib_sa_get(&recs.v[i], "slid"),
			   *d = ib_sa_get(&recs.v[i], "dlid");

		if (strcmp(recs.v[i].type, "PathRecord") || !sl || !s || !d)
			continue;
		vl_put(a, (unsigned)strtoul(s, NULL, 0), (unsigned)strtoul(d, NULL, 0),
		       (int)(strtoul(sl, NULL, 0) & 0xf));
		n++;
	}
	ib_sa_records_release(&recs);
	return n;
}

static int vl_path_sl(void *arg, unsigned slid, unsigned dlid)
{
	struct vl_ask *a = arg;
	char s[16], d[16], why[256];
	const char *argv[] = { "saquery", "-p", "--slid", s, "--dlid", d, NULL };
	struct sb out = SB_INIT;
	size_t h;

	if (a->cap && a->key[h = vl_slot(a, (uint32_t)(slid << 16 | dlid))])
		return a->sl[h];
	if (a->queries >= a->max_queries)
		return -1;
	a->queries++;
	snprintf(s, sizeof(s), "%u", slid);
	snprintf(d, sizeof(d), "%u", dlid);
	if (!ibkind_tool(a->ctx, argv, &out, why, sizeof(why)) || !vl_records(a, &out))
		vl_put(a, slid, dlid, -1);	/* asked once */
	sb_release(&out);
	h = vl_slot(a, (uint32_t)(slid << 16 | dlid));
	return a->key[h] ? a->sl[h] : -1;
}

static int vl_sl2vl(void *arg, int node, int in, int out, unsigned sl)
{
	struct vl_ask *a = arg;
	const struct ibnet_node *n = &a->topo->nodes[node];
	struct ib_sl2vl **t = &a->tab[a->tab_base[node] + (size_t)out];

	if (!*t) {
		char l[16], p[16], why[256] = "", err[256];
		const char *argv[] = { "smpquery", "sl2vl", l, p, NULL };
		struct sb text = SB_INIT;

		*t = xcalloc(1, sizeof(**t));
		snprintf(l, sizeof(l), "%u", n->lid);
		snprintf(p, sizeof(p), "%d", out);
		a->tables++;
		if (!n->lid || !ibkind_tool(a->ctx, argv, &text, why, sizeof(why)) ||
		    sl2vl_parse(text.buf, text.len, *t, err, sizeof(err))) {
			if (!a->tables_failed++)
				snprintf(a->first_fail, sizeof(a->first_fail), "%s port %d: %.160s", n->desc, out,
					 !n->lid ? "no LID" : why[0] ? why : err);
		}
		sb_release(&text);
	}
	for (size_t i = 0; i < (*t)->n; i++)
		if ((*t)->rows[i].in == in && (*t)->rows[i].out == out)
			return (*t)->rows[i].vl[sl & 0xf];
	return -1;
}

static void vl_ask_release(struct vl_ask *a)
{
	for (size_t i = 0; a->tab && i < a->tab_base[a->topo->nnodes]; i++)
		if (a->tab[i]) {
			ib_sl2vl_release(a->tab[i]);
			free(a->tab[i]);
		}
	free(a->tab);
	free(a->tab_base);
	free(a->key);
	free(a->sl);
}

/* A bit set as "0-2,5" (SLs or VLs). */
static void lanes(uint16_t set, char *buf, size_t size)
{
	struct sb sb = SB_INIT;

	for (int i = 0; i < 16; i++) {
		int j = i;

		if (!(set & (1u << i)))
			continue;
		while (j < 15 && (set & (1u << (j + 1))))
			j++;
		if (j > i)
			sb_addf(&sb, "%s%d-%d", sb.len ? "," : "", i, j);
		else
			sb_addf(&sb, "%s%d", sb.len ? "," : "", i);
		i = j;
	}
	snprintf(buf, size, "%s", sb.len ? sb.buf : "none");
	sb_release(&sb);
}

/*
 * The one-VL graph has a cycle: judge it again with the VLs the routes
 * really take.  FAIL when the graph with a channel per VL still has one,
 * or when what it needs (an SL, a table) was not there to be read: the
 * one-VL loop then stands, with the reason it could not be cleared.
 */
static void judge_vls(struct rq_ctx *ctx, struct rq_result *row, const struct ibnet *topo,
		      const struct ib_lfts *lfts, const struct fr_cfg *cfg, const struct rt_report *one)
{
	static const char *const world[] = { "saquery", "-p", NULL };
	struct vl_ask a = { .ctx = ctx, .topo = topo, .max_queries = cfg->max_path_queries };
	struct rt_vl_source src = { vl_path_sl, vl_sl2vl, &a };
	struct rt_vl_report vr;
	struct sb out = SB_INIT;
	char why[256] = "", err[256], sls[48], vls[48];
	size_t whole = 0;
	int64_t t0 = now_ms();

	a.tab_base = xcalloc(topo->nnodes + 1, sizeof(*a.tab_base));
	for (size_t i = 0; i < topo->nnodes; i++)
		a.tab_base[i + 1] = a.tab_base[i] + (size_t)topo->nodes[i].nports + 1;
	a.tab = xcalloc(a.tab_base[topo->nnodes] + 1, sizeof(*a.tab));
	if (ibkind_tool(ctx, world, &out, why, sizeof(why)))
		whole = vl_records(&a, &out);
	else
		rq_log(ctx, "# the SA's path table not read (%s): paths asked one by one", why);
	sb_release(&out);
	if (rt_analyze_vls(topo, lfts, &src, &vr, err, sizeof(err))) {
		rq_judge(row, false, "credit loop in the channel dependency graph: %s; per VL: %s", one->cycle, err);
		vl_ask_release(&a);
		return;
	}
	lanes(vr.sls, sls, sizeof(sls));
	lanes(vr.vls, vls, sizeof(vls));
	rq_log(ctx, "# per VL: %zu routes across two switches or more on SL %s, VL %s; %zu path records whole, "
	       "%lld asked one by one; %zu SL2VL tables (%zu unread); %zu dependencies; %lld ms",
	       vr.routes, sls, vls, whole, a.queries, a.tables, a.tables_failed, vr.dependencies,
	       (long long)(now_ms() - t0));
	rq_fact_add(row, "sls", sls);
	rq_fact_add(row, "vls", vls);
	rq_figure_add(row, "vl_dependencies", (double)vr.dependencies, "");
	if (vr.credit_loop)
		rq_judge(row, false, "credit loop in the channel dependency graph with a channel per VL (SL %s, VL %s): %s",
			 sls, vls, vr.cycle);
	else if (vr.sl_unknown)
		rq_judge(row, false, "credit loop in the channel dependency graph: %s; the SA gave no SL for %zu of "
			 "%zu routes (%lld asked one by one, max_path_queries %lld), so the VLs cannot clear it",
			 one->cycle, vr.sl_unknown, vr.routes, a.queries, cfg->max_path_queries);
	else if (vr.vl_unknown)
		rq_judge(row, false, "credit loop in the channel dependency graph: %s; %zu hops on no readable "
			 "SL2VL table (%s), so the VLs cannot clear it", one->cycle, vr.vl_unknown, a.first_fail);
	else
		rq_judge(row, true, "no credit loop on any VL: the routes' %zu dependencies on one VL close a cycle "
			 "(%s), but on SL %s, mapped to VL %s, %zu dependencies form none",
			 one->dependencies, one->cycle, sls, vls, vr.dependencies);
	vl_ask_release(&a);
}

static void fr_run(struct rq_ctx *ctx, const void *vcfg)
{
	static const char *const discover[] = { "ibnetdiscover", NULL };
	const struct fr_cfg *cfg = vcfg;
	struct sb topo_text = SB_INIT, fts_text = SB_INIT;
	struct ibnet topo = { 0 };
	struct ib_lfts lfts = { 0 };
	struct rt_report rep = { 0 };
	const struct rq_where *w = rq_ctx_where(ctx);
	const struct rq_where_fabric *p = &w->fabric;
	char err[512];
	int64_t t0;

	if (p->sm_log[0])
		judge_engine(ctx, p);
	/* the simulation's own times, for bench/fabric.sh */
	if (p->ibsim_ready_ms)
		rq_figure_add(ctx->main, "ibsim_start", (double)p->ibsim_ready_ms, "ms");
	if (p->sm_settle_ms)
		rq_figure_add(ctx->main, "sm_first_sweep", (double)p->sm_settle_ms, "ms");
	/* the LFTs the SM writes: followed only once two reads a sweep apart agree */
	if (!tool_out(ctx, discover, &topo_text) ||
	    ibkind_settled(ctx, "lfts", read_lfts, NULL, &fts_text, err, sizeof(err)) < 0)
		goto out;
	if (ibnet_parse(topo_text.buf, topo_text.len, "ibnetdiscover", &topo, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "ibnetdiscover output not understood: %s", err);
		goto out;
	}
	if (lfts_parse(fts_text.buf, fts_text.len, &lfts, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "dump_fts output not understood: %s", err);
		goto out;
	}
	t0 = now_ms();
	if (rt_analyze(&topo, &lfts, &rep, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "%s", err);
		goto out;
	}
	rq_log(ctx, "# %zu switches, %zu CA ports, %zu destination LIDs: %zu routes followed in %lld ms; "
	       "%zu channels, %zu dependencies", rep.switches, rep.sources, rep.dest_lids, rep.routes,
	       (long long)(now_ms() - t0), rep.channels, rep.dependencies);
	rq_figure_add(ctx->main, "routes", (double)rep.routes, "");
	rq_figure_add(ctx->main, "analysis_time", (double)(now_ms() - t0), "ms");
	rq_judge(ctx->main, rep.routes > 0, "%zu routes between %zu CA ports through %zu switches", rep.routes,
		 rep.sources, rep.switches);
	if (rep.unmatched_lfts)
		rq_judge(ctx->main, false, "%zu switch(es) without a forwarding table: %s", rep.unmatched_lfts, rep.unmatched);

	/* reachability */
	struct rq_result *row = rq_ctx_row(ctx, "reachability", 0);
	struct sb sb = SB_INIT;

	for (size_t i = 0; i < rep.nproblems && i < RT_MAX_PROBLEMS; i++) {
		rq_log(ctx, "# route problem: %s", rep.problem[i]);
		if (i < 3)
			sb_addf(&sb, "%s%s", i ? "; " : "", rep.problem[i]);
	}
	if (rep.nproblems > 3)
		sb_addf(&sb, "; and %zu more", rep.nproblems - 3);
	rq_figure_add(row, "unreachable", (double)rep.unreachable, "routes");
	rq_figure_add(row, "max_hops", rep.max_hops, "hops");
	if (rep.unreachable || rep.nproblems)
		rq_judge(row, false, "%zu of %zu routes reach nowhere or elsewhere: %s", rep.unreachable, rep.routes,
			 sb.buf);
	else
		rq_judge(row, true, "every CA port reaches every other: %zu routes, at most %u switch hops", rep.routes,
			 rep.max_hops);
	if (cfg->max_hops)
		rq_judge(row, rep.max_hops <= cfg->max_hops, "the longest route takes %u switch hops (at most %lld)",
			 rep.max_hops, cfg->max_hops);
	sb_release(&sb);

	/* credit loops */
	row = rq_ctx_row(ctx, "credit_loops", 0);
	rq_figure_add(row, "dependencies", (double)rep.dependencies, "");
	if (rep.credit_loop)
		judge_vls(ctx, row, &topo, &lfts, cfg, &rep);
	else
		rq_judge(row, true, "no credit loop: %zu channel dependencies over %zu channels form no cycle",
			 rep.dependencies, rep.channels);

	/* balance */
	if (rep.nbal) {
		const struct rt_balance *worst = &rep.bal[0];
		unsigned gmax = 0, gmin = ~0u;

		row = rq_ctx_row(ctx, "balance", 0);
		for (size_t i = 0; i < rep.nbal; i++) {
			const struct rt_balance *b = &rep.bal[i];

			rq_log(ctx, "# balance %s: %u uplinks, %u..%u destination LIDs each (port %d most, port %d least)",
			       topo.nodes[b->sw].desc, b->uplinks, b->min, b->max, b->max_port, b->min_port);
			if (b->max - b->min > worst->max - worst->min)
				worst = b;
			gmax = b->max > gmax ? b->max : gmax;
			gmin = b->min < gmin ? b->min : gmin;
		}
		rq_figure_add(row, "uplink_routes_max", gmax, "routes");
		rq_figure_add(row, "uplink_routes_min", gmin, "routes");
		rq_figure_add(row, "uplink_skew", worst->max - worst->min, "routes");
		if (cfg->balance && worst->max - worst->min > cfg->max_skew)
			rq_judge(row, false,
				 "unbalanced: %s port %d carries %u destination LIDs, port %d %u (skew %u, at most %lld)",
				 topo.nodes[worst->sw].desc, worst->max_port, worst->max, worst->min_port, worst->min,
				 worst->max - worst->min, cfg->max_skew);
		else
			rq_judge(row, true, "%zu switches with uplinks: %u..%u destination LIDs per uplink, worst skew %u (%s)",
			 rep.nbal, gmin, gmax, worst->max - worst->min, topo.nodes[worst->sw].desc);
	}
out:
	rt_report_release(&rep);
	ib_lfts_release(&lfts);
	ibnet_release(&topo);
	sb_release(&topo_text);
	sb_release(&fts_text);
}

const struct rq_kind rq_kind_fabric_routing = {
	.name = "fabric-routing",
	.summary = "the LFTs route every CA port to every other, without credit loops, spread evenly over uplinks",
	.doc = "Reads the topology with its LIDs (ibnetdiscover) and every switch's unicast forwarding table "
	       "(dump_fts), and follows every route from every CA port to every other CA port's LIDs "
	       "(LMC included).  Rows: reachability (a hole, a dead end, a loop or a misdelivery named by "
	       "switch, port and destination), credit_loops (a cycle in the channel dependency graph the "
	       "routes induce, named channel by channel; where the graph on one VL has one, it is built "
	       "again with a channel per VL, each route on the SL the SA gives its path and each hop on "
	       "the VL the switch's SL2VL table maps it to, so lash, dfsssp, Nue and torus-2QoS are "
	       "judged by the lanes they use), balance "
	       "(destination LIDs per uplink, max and min per switch, judged by max_skew).  Work grows with "
	       "switches x destinations, not ports squared.  Read-only.",
	.keys = fr_keys,
	.cfg_size = sizeof(struct fr_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.run = fr_run,
};
