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
 * table (dump_fts), follows every route (rdma/routing.h), and gives one row
 * per check: reachability, credit loops, balance, each naming the switch,
 * port and destination at fault.  Read-only on any fabric.
 */
#include <stdio.h>
#include <string.h>

#include "kinds/ibkind.h"
#include "parsers/parse_fabric.h"
#include "parsers/parse_ibdiag.h"
#include "rdma/routing.h"
#include "core/util.h"

struct fr_cfg {
	long long max_skew;
	bool balance;
	long long max_hops;
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
static void judge_engine(struct rq_ctx *ctx, const struct ibkind_param *p)
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
	snprintf(want, sizeof(want), "%s", p->routing[0] ? p->routing : "minhop");
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

static void fr_run(struct rq_ctx *ctx, const void *vcfg)
{
	static const char *const discover[] = { "ibnetdiscover", NULL };
	const struct fr_cfg *cfg = vcfg;
	struct sb topo_text = SB_INIT, fts_text = SB_INIT;
	struct ibnet topo = { 0 };
	struct ib_lfts lfts = { 0 };
	struct rt_report rep = { 0 };
	struct ibkind_param p;
	char err[512];
	int64_t t0;

	ibkind_param(ctx, &p);
	if (p.sm_log[0])
		judge_engine(ctx, &p);
	/* the simulation's own times, for bench/fabric.sh */
	if (p.ibsim_ready_ms)
		rq_figure_add(ctx->main, "ibsim_start", (double)p.ibsim_ready_ms, "ms");
	if (p.sm_settle_ms)
		rq_figure_add(ctx->main, "sm_first_sweep", (double)p.sm_settle_ms, "ms");
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
		rq_judge(row, false, "credit loop in the channel dependency graph: %s", rep.cycle);
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
	       "routes induce, named channel by channel; all traffic taken to share one VL), balance "
	       "(destination LIDs per uplink, max and min per switch, judged by max_skew).  Work grows with "
	       "switches x destinations, not ports squared.  Read-only.",
	.keys = fr_keys,
	.cfg_size = sizeof(struct fr_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.run = fr_run,
};
