/* SPDX-License-Identifier: MIT */
/*
 * fabric-links: is every cable of the fabric there, up, and at full width
 * and speed?
 *
 * A link that trained at 1X instead of 4X, or at a lower speed, is Active
 * and passes traffic: only its bandwidth is gone, and nothing logs an
 * error.  A missing inter-switch link leaves the subnet up over the other
 * paths.  Both show only against what the fabric should be, so this judges
 * iblinkinfo against an expected topology (the simulated net file, or an
 * ibnetdiscover snapshot of the healthy fabric): every expected link present
 * between the expected ports, Active/LinkUp, at the expected width and speed
 * (never iblinkinfo's "Could be" hints, which only say what the ends
 * support).  Unconnected switch ports are not broken links.  A missing or
 * degraded link is a FAIL naming both ends.  One row per expected link.
 */
#include <stdio.h>
#include <string.h>

#include "kinds/ibkind.h"
#include "core/util.h"

struct fl_cfg {
	struct ibkind_cfg ib;
	long long min_width;
	double min_speed;
};

static const struct key_def fl_keys[] = {
	IBKIND_KEYS,
	{ .name = "min_width", .type = KEY_INT, .def = "0", .min = 0, .max = 12,
	  .offset = offsetof(struct fl_cfg, min_width),
	  .help = "minimum lanes per link (4 for 4X); 0: the expected topology's width of each link" },
	{ .name = "min_speed", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1000,
	  .offset = offsetof(struct fl_cfg, min_speed),
	  .help = "minimum lane rate in Gb/s (25.78125 EDR, 53.125 HDR); 0: the expected topology's speed of each link" },
	KEY_END
};

static bool read_links(struct rq_ctx *ctx, struct ib_links *l)
{
	static const char *const argv[] = { "iblinkinfo", NULL };
	struct proc_result r;
	char err[256];
	bool ok = false;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 30000, &r) == 0 && !r.exec_failed && !r.timed_out) {
		if (iblinkinfo_parse(r.out.buf, r.out.len, l, err, sizeof(err)) == 0)
			ok = true;
		else
			rq_result_set(ctx->main, RQ_ERROR, "iblinkinfo output not understood: %s", err);
	} else {
		char how[160];

		proc_describe(&r, "iblinkinfo", how, sizeof(how));
		rq_result_set(ctx->main, RQ_ERROR, "%s", how);
	}
	proc_result_release(&r);
	return ok;
}

/* One end as seen; a description of what is wrong with it, or NULL. */
static const char *end_problem(const struct ib_link *k, const char *peer, int peer_port,
			       char *buf, size_t size)
{
	if (!k)
		return "not on the fabric";
	if (strcmp(k->state, "Active") || strcmp(k->phys, "LinkUp")) {
		snprintf(buf, size, "%s/%s", k->state[0] ? k->state : "?", k->phys[0] ? k->phys : "?");
		return buf;
	}
	if (!k->connected || strcmp(k->rnode, peer) || k->rport != peer_port) {
		snprintf(buf, size, "cabled to %s port %d", k->connected ? k->rnode : "nothing",
			 k->connected ? k->rport : 0);
		return buf;
	}
	return NULL;
}

static void judge_link(struct rq_ctx *ctx, const struct fl_cfg *cfg, const struct ibnet *exp,
		       const struct ibnet_link *e, const struct ib_links *seen)
{
	const char *a = exp->nodes[e->a].desc, *b = exp->nodes[e->b].desc;
	const struct ib_link *ka = ib_links_find(seen, a, e->aport);
	const struct ib_link *kb = ib_links_find(seen, b, e->bport);
	struct rq_result *row = rq_ctx_row(ctx, a, e->aport);
	char ba[96], bb[96];
	const char *pa = end_problem(ka, b, e->bport, ba, sizeof(ba));
	const char *pb = end_problem(kb, a, e->aport, bb, sizeof(bb));
	int want_w = cfg->min_width ? (int)cfg->min_width : e->width;
	double want_s = cfg->min_speed > 0 ? cfg->min_speed : e->gbps;

	/*
	 * A cable swapped with another: this end holds the cable planned for
	 * (C, pc), and the end planned there, (Y, py), holds ours.  Named as one
	 * fault with all four ends, not as two missing links.
	 */
	if (ka && ka->connected && (strcmp(ka->rnode, b) || ka->rport != e->bport)) {
		int cn = ibnet_find_node(exp, ka->rnode), y, py;

		if (cn >= 0 && ibnet_link_at(exp, cn, ka->rport, &y, &py)) {
			const struct ib_link *ky = ib_links_find(seen, exp->nodes[y].desc, py);

			if (ky && ky->connected && !strcmp(ky->rnode, b) && ky->rport == e->bport) {
				rq_judge(row, false, "swapped cables: %s port %d has the cable of %s port %d, %s port %d "
					 "the cable of %s port %d (planned %s/%d <-> %s/%d and %s/%d <-> %s/%d)",
					 a, e->aport, ka->rnode, ka->rport, exp->nodes[y].desc, py, b, e->bport,
					 a, e->aport, b, e->bport, exp->nodes[y].desc, py, ka->rnode, ka->rport);
				return;
			}
		}
	}
	if (pa || pb) {
		rq_judge(row, false, "link %s port %d <-> %s port %d (%s) missing or down: %s port %d %s, %s port %d %s",
			 a, e->aport, b, e->bport, e->where, a, e->aport, pa ? pa : "ok",
			 b, e->bport, pb ? pb : "ok");
		return;
	}
	rq_judge(row, true, "link %s port %d <-> %s port %d Active/LinkUp", a, e->aport, b, e->bport);
	rq_figure_add(row, "width", ib_width_lanes(ka->width), "lanes");
	rq_figure_add(row, "lane_speed", ka->gbps, "Gb/s");
	if (want_w)
		rq_judge(row, ib_width_lanes(ka->width) >= want_w && ib_width_lanes(kb->width) >= want_w,
			 "link %s port %d <-> %s port %d at %s/%s, expected %dX", a, e->aport, b, e->bport,
			 ka->width, kb->width, want_w);
	if (want_s > 0)
		rq_judge(row, ka->gbps >= want_s - 0.01 && kb->gbps >= want_s - 0.01,
			 "link %s port %d <-> %s port %d at %s, expected %g Gb/s per lane (%s)", a, e->aport,
			 b, e->bport, ka->speed, want_s, ibnet_speed_name(want_s));
}

static void fl_run(struct rq_ctx *ctx, const void *vcfg)
{
	const struct fl_cfg *cfg = vcfg;
	struct ibnet exp;
	struct ib_links seen = { 0 };
	int ret;

	ret = ibkind_expected(ctx, &cfg->ib, &exp);
	if (ret < 0)
		return;
	if (!read_links(ctx, &seen))
		goto out;
	if (ret == 0) {
		/* No expectation (real fabric, none named): every cabled port up, at the minimums. */
		unsigned n = 0;

		for (size_t i = 0; i < seen.n; i++) {
			const struct ib_link *k = &seen.v[i];

			if (!k->connected && strcmp(k->phys, "LinkUp"))
				continue;	/* an empty port */
			n++;
			struct rq_result *row = rq_ctx_row(ctx, k->node, k->port);

			rq_judge(row, !strcmp(k->state, "Active") && !strcmp(k->phys, "LinkUp"),
				 "%s port %d -> %s port %d: %s/%s", k->node, k->port, k->rnode, k->rport,
				 k->state, k->phys);
			if (cfg->min_width)
				rq_judge(row, ib_width_lanes(k->width) >= cfg->min_width, "%s port %d at %s, expected %lldX",
					 k->node, k->port, k->width, cfg->min_width);
			if (cfg->min_speed > 0)
				rq_judge(row, k->gbps >= cfg->min_speed - 0.01, "%s port %d at %s, expected %g Gb/s",
					 k->node, k->port, k->speed, cfg->min_speed);
		}
		rq_judge(ctx->main, n > 0, "%u cabled port(s) seen (no expected topology: expect_topology names one)", n);
		goto out;
	}
	for (size_t i = 0; i < exp.nlinks; i++)
		judge_link(ctx, cfg, &exp, &exp.links[i], &seen);
	/* Links the expectation does not have are reported, not judged (extra cables break nothing). */
	for (size_t i = 0; i < seen.n; i++) {
		const struct ib_link *k = &seen.v[i];
		int n = ibnet_find_node(&exp, k->node);

		if (k->connected && (n < 0 || !ibnet_link_at(&exp, n, k->port, NULL, NULL)))
			rq_log(ctx, "# not in the expected topology: %s port %d -> %s port %d (%s)", k->node,
			       k->port, k->rnode, k->rport, k->state);
	}
	rq_judge(ctx->main, exp.nlinks > 0, "%zu expected link(s) checked", exp.nlinks);
out:
	ib_links_release(&seen);
	ibnet_release(&exp);
}

const struct rq_kind rq_kind_fabric_links = {
	.name = "fabric-links",
	.summary = "every link of the expected topology present, Active/LinkUp, at the expected width and speed",
	.doc = "A link trained at 1X instead of 4X, or slower than it should, stays Active and only "
	       "loses bandwidth; a missing inter-switch link leaves the subnet up.  This compares "
	       "iblinkinfo with the expected topology (the simulated net file or an ibnetdiscover "
	       "snapshot): each expected link must join the expected ports, be Active/LinkUp and run "
	       "at the expected width and speed (not iblinkinfo's 'Could be' hints).  Unconnected "
	       "switch ports are not broken links; extra links are logged.  A missing or degraded link "
	       "is a FAIL naming both ends, one row per link.",
	.keys = fl_keys,
	.cfg_size = sizeof(struct fl_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.run = fl_run,
};
