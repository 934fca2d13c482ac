/* SPDX-License-Identifier: MIT */
/*
 * ib-mtu: does every InfiniBand port support and run the MTU the fabric is
 * meant to use?
 *
 * IB MTU is per link: a port's MtuCap is what it can do, NeighborMTU what
 * the SM set for the link (the active MTU; PortInfo in the IBA spec).  4096
 * everywhere is the usual target on EDR/HDR fabrics; a single port or
 * switch at 2048 caps every path through it, and opensm's default IPoIB
 * broadcast group at 2048 is a classic cause of low IPoIB bandwidth.  This
 * reads PortInfo (smpquery portinfo LID PORT) of every cabled port and
 * judges both values, one row per port.  ibsim's ports are 2048-capable
 * (its PortInfo template), so the simulated suite expects 2048.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/ibkind.h"
#include "core/util.h"

struct im_cfg {
	struct ibkind_cfg ib;
	long long min_cap, min_active;
	bool switches;
};

static const struct key_def im_keys[] = {
	IBKIND_KEYS,
	{ .name = "min_mtu_cap", .type = KEY_INT, .def = "4096", .min = 256, .max = 4096,
	  .offset = offsetof(struct im_cfg, min_cap),
	  .help = "smallest MtuCap (bytes) a port may have: 256, 512, 1024, 2048 or 4096" },
	{ .name = "min_active_mtu", .type = KEY_INT, .def = "4096", .min = 256, .max = 4096,
	  .offset = offsetof(struct im_cfg, min_active),
	  .help = "smallest active MTU (NeighborMTU, set by the SM per link) a port may run" },
	{ .name = "switch_ports", .type = KEY_BOOL, .def = "true", .offset = offsetof(struct im_cfg, switches),
	  .help = "judge switch ports too, not only CA ports" },
	KEY_END
};

static int im_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct im_cfg *cfg = c->cfg;
	const long long v[2] = { cfg->min_cap, cfg->min_active };

	for (int i = 0; i < 2; i++)
		if (v[i] & (v[i] - 1)) {
			snprintf(err, errsz, "%s %lld is not an IB MTU (256, 512, 1024, 2048, 4096)",
				 i ? "min_active_mtu" : "min_mtu_cap", v[i]);
			return -1;
		}
	return 0;
}

static void im_run(struct rq_ctx *ctx, const void *vcfg)
{
	const struct im_cfg *cfg = vcfg;
	static const char *const li[] = { "iblinkinfo", NULL };
	struct ib_links l = { 0 };
	struct proc_result r;
	char err[256];
	unsigned n = 0;

	proc_result_init(&r);
	if (rq_tool(ctx, li, 30000, &r) || r.exit_code != 0 ||
	    iblinkinfo_parse(r.out.buf, r.out.len, &l, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "cannot list the fabric's ports with iblinkinfo");
		proc_result_release(&r);
		return;
	}
	proc_result_release(&r);
	for (size_t i = 0; i < l.n; i++) {
		const struct ib_link *k = &l.v[i];
		char lid[16], port[16];
		const char *argv[] = { "smpquery", "portinfo", lid, port, NULL };
		struct ib_kvs kv;
		struct rq_result *row;
		const char *cap, *act;

		if (!k->connected || !k->lid || (k->is_switch && !cfg->switches))
			continue;
		snprintf(lid, sizeof(lid), "%u", k->lid);
		snprintf(port, sizeof(port), "%d", k->port);
		row = rq_ctx_row(ctx, k->node, k->port);
		proc_result_init(&r);
		if (rq_tool(ctx, argv, 10000, &r) || r.exit_code != 0 ||
		    smpquery_parse(r.out.buf, r.out.len, &kv, err, sizeof(err))) {
			rq_judge(row, false, "%s port %d: PortInfo not readable (smpquery portinfo %s %s)",
				 k->node, k->port, lid, port);
			proc_result_release(&r);
			continue;
		}
		proc_result_release(&r);
		cap = ib_kvs_get(&kv, "MtuCap");
		act = ib_kvs_get(&kv, "NeighborMTU");
		rq_figure_add(row, "mtu_cap", cap ? atof(cap) : 0, "B");
		rq_figure_add(row, "active_mtu", act ? atof(act) : 0, "B");
		rq_judge(row, cap && atoll(cap) >= cfg->min_cap, "%s port %d: MtuCap %s, expected >= %lld",
			 k->node, k->port, cap ? cap : "?", cfg->min_cap);
		rq_judge(row, act && atoll(act) >= cfg->min_active, "%s port %d: active MTU %s, expected >= %lld",
			 k->node, k->port, act ? act : "?", cfg->min_active);
		ib_kvs_release(&kv);
		n++;
	}
	rq_judge(ctx->main, n > 0, "%u port(s) read", n);
	ib_links_release(&l);
}

const struct rq_kind rq_kind_ib_mtu = {
	.name = "ib-mtu",
	.summary = "every cabled IB port's MTU capability and active MTU at least the expected (4096 usually)",
	.doc = "IB MTU is per link: MtuCap is what a port can do, NeighborMTU what the SM set.  One port "
	       "or switch at 2048 caps every path through it (and opensm's default IPoIB broadcast group "
	       "at 2048 is a classic cause of low IPoIB bandwidth).  Reads PortInfo of every cabled port "
	       "(smpquery portinfo) and judges both against the case, one row per port.  ibsim's ports "
	       "are 2048-capable, so the simulated cases expect 2048.",
	.keys = im_keys,
	.cfg_size = sizeof(struct im_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.validate = im_validate,
	.run = im_run,
};
