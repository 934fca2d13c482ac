/* SPDX-License-Identifier: MIT */
/*
 * ib-counters: are the port error counters of the fabric below thresholds?
 *
 * A dirty connector or a marginal cable keeps a link Active while it
 * corrupts packets: symbol errors, receive errors, link error recoveries
 * and downed links climb, and the retransmissions show up only as poor,
 * jittery bandwidth.  This reads every cabled port's PortCounters with
 * perfquery (LID and port from iblinkinfo) and judges the error counters
 * against the case's thresholds, one row per port.  An optional traffic
 * command (argv, no shell) runs inside the case and the counters are read
 * again after it, judged on their growth.  Resetting counters (perfquery -R)
 * changes fabric state that others may be watching: opt-in and reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/ibkind.h"
#include "core/util.h"

struct ic_cfg {
	struct ibkind_cfg ib;
	long long max_symbol, max_recovery, max_downed, max_rcv, max_remote_phys,
		  max_discards, max_integrity, max_overrun, max_vl15;
	bool reset;
	struct rq_list traffic;
	int64_t traffic_timeout;
};

#define MAXKEY(key_, field_, def_, what_) \
	{ .name = key_, .type = KEY_INT, .def = def_, .min = -1, .max = 4294967295LL, \
	  .offset = offsetof(struct ic_cfg, field_), .help = "highest " what_ " allowed per port (-1: not judged)" }

static const struct key_def ic_keys[] = {
	IBKIND_KEYS("true"),
	MAXKEY("max_symbol_errors", max_symbol, "0", "SymbolErrorCounter"),
	MAXKEY("max_link_error_recovery", max_recovery, "0", "LinkErrorRecoveryCounter"),
	MAXKEY("max_link_downed", max_downed, "0", "LinkDownedCounter"),
	MAXKEY("max_rcv_errors", max_rcv, "0", "PortRcvErrors"),
	MAXKEY("max_rcv_remote_physical_errors", max_remote_phys, "0", "PortRcvRemotePhysicalErrors"),
	MAXKEY("max_xmit_discards", max_discards, "-1", "PortXmitDiscards (congestion, not always a fault)"),
	MAXKEY("max_local_link_integrity_errors", max_integrity, "0", "LocalLinkIntegrityErrors"),
	MAXKEY("max_excessive_buffer_overruns", max_overrun, "0", "ExcessiveBufferOverrunErrors"),
	MAXKEY("max_vl15_dropped", max_vl15, "-1", "VL15Dropped"),
	{ .name = "reset", .type = KEY_BOOL, .def = "false", .offset = offsetof(struct ic_cfg, reset),
	  .help = "reset every port's counters (perfquery -R) after reading them; reported in the log and facts" },
	{ .name = "traffic", .type = KEY_LIST, .elem = KEY_STR, .offset = offsetof(struct ic_cfg, traffic),
	  .help = "a command (argv) generating traffic; counters are read before and after it and judged on growth" },
	{ .name = "traffic_timeout", .type = KEY_DURATION, .def = "60s", .min = 100, .max = 3600000,
	  .offset = offsetof(struct ic_cfg, traffic_timeout),
	  .help = "deadline of the traffic command" },
	KEY_END
};

static const struct {
	const char *name;
	size_t off;
} counters[] = {
	{ "SymbolErrorCounter", offsetof(struct ic_cfg, max_symbol) },
	{ "LinkErrorRecoveryCounter", offsetof(struct ic_cfg, max_recovery) },
	{ "LinkDownedCounter", offsetof(struct ic_cfg, max_downed) },
	{ "PortRcvErrors", offsetof(struct ic_cfg, max_rcv) },
	{ "PortRcvRemotePhysicalErrors", offsetof(struct ic_cfg, max_remote_phys) },
	{ "PortXmitDiscards", offsetof(struct ic_cfg, max_discards) },
	{ "LocalLinkIntegrityErrors", offsetof(struct ic_cfg, max_integrity) },
	{ "ExcessiveBufferOverrunErrors", offsetof(struct ic_cfg, max_overrun) },
	{ "VL15Dropped", offsetof(struct ic_cfg, max_vl15) },
};

struct port_read {
	const struct ib_link *k;
	struct ib_perf perf;
	bool ok;
};

static void read_port(struct rq_ctx *ctx, struct port_read *pr)
{
	char lid[16], port[16], err[256];
	const char *argv[] = { "perfquery", lid, port, NULL };
	struct proc_result r;

	snprintf(lid, sizeof(lid), "%u", pr->k->lid);
	snprintf(port, sizeof(port), "%d", pr->k->port);
	ib_perf_release(&pr->perf);
	pr->ok = false;
	proc_result_init(&r);
	if (rq_tool(ctx, argv, 10000, &r) == 0 && r.exit_code == 0 &&
	    perfquery_parse(r.out.buf, r.out.len, &pr->perf, err, sizeof(err)) == 0)
		pr->ok = true;
	proc_result_release(&r);
}

static void ic_run(struct rq_ctx *ctx, const void *vcfg)
{
	const struct ic_cfg *cfg = vcfg;
	static const char *const li[] = { "iblinkinfo", NULL };
	struct ib_links l = { 0 };
	struct port_read *pr = NULL;
	size_t n = 0;
	struct proc_result r;
	char err[256];

	proc_result_init(&r);
	if (rq_tool(ctx, li, 30000, &r) || r.exit_code != 0 ||
	    iblinkinfo_parse(r.out.buf, r.out.len, &l, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "cannot list the fabric's ports with iblinkinfo");
		proc_result_release(&r);
		return;
	}
	proc_result_release(&r);
	pr = xcalloc(l.n ? l.n : 1, sizeof(*pr));
	for (size_t i = 0; i < l.n; i++) {
		/* Cabled, active ports with a LID (a switch's ports share its LID). */
		if (!l.v[i].connected || strcmp(l.v[i].state, "Active") || !l.v[i].lid)
			continue;
		pr[n].k = &l.v[i];
		read_port(ctx, &pr[n]);
		n++;
	}
	if (cfg->traffic.n) {
		struct proc_result tr;
		char how[200];
		const char **argv = xcalloc(cfg->traffic.n + 1, sizeof(char *));

		for (size_t i = 0; i < cfg->traffic.n; i++)
			argv[i] = cfg->traffic.str[i];
		proc_result_init(&tr);
		rq_log(ctx, "# traffic phase");
		rq_tool(ctx, argv, cfg->traffic_timeout, &tr);
		proc_describe(&tr, argv[0], how, sizeof(how));
		rq_judge(ctx->main, !tr.exec_failed && !tr.timed_out && tr.exit_code == 0, "traffic: %s", how);
		proc_result_release(&tr);
		free(argv);
	}
	for (size_t i = 0; i < n; i++) {
		struct rq_result *row = rq_ctx_row(ctx, pr[i].k->node, pr[i].k->port);
		struct ib_perf before = pr[i].perf;

		if (cfg->traffic.n) {
			memset(&pr[i].perf, 0, sizeof(pr[i].perf));
			read_port(ctx, &pr[i]);
		}
		if (!pr[i].ok || !pr[i].perf.n) {
			rq_judge(row, false, "%s port %d (LID %u): perfquery gave no counters", pr[i].k->node,
				 pr[i].k->port, pr[i].k->lid);
			if (cfg->traffic.n)
				ib_perf_release(&before);
			continue;
		}
		for (size_t c = 0; c < ARRAY_SIZE(counters); c++) {
			long long max = *(const long long *)((const char *)cfg + counters[c].off);
			uint64_t v = 0, v0 = 0;

			if (!ib_perf_get(&pr[i].perf.v[0], counters[c].name, &v))
				continue;
			rq_figure_add(row, counters[c].name, (double)v, "");
			if (max < 0)
				continue;
			if (cfg->traffic.n && before.n && ib_perf_get(&before.v[0], counters[c].name, &v0)) {
				rq_judge(row, v - v0 <= (uint64_t)max, "%s port %d: %s grew by %llu during traffic (max %lld)",
					 pr[i].k->node, pr[i].k->port, counters[c].name,
					 (unsigned long long)(v - v0), max);
			} else {
				rq_judge(row, v <= (uint64_t)max, "%s port %d: %s %llu (max %lld)", pr[i].k->node,
					 pr[i].k->port, counters[c].name, (unsigned long long)v, max);
			}
		}
		if (cfg->traffic.n)
			ib_perf_release(&before);
		if (cfg->reset) {
			char lid[16], port[16];
			const char *argv[] = { "perfquery", "-R", lid, port, NULL };
			struct proc_result rr;

			snprintf(lid, sizeof(lid), "%u", pr[i].k->lid);
			snprintf(port, sizeof(port), "%d", pr[i].k->port);
			proc_result_init(&rr);
			rq_tool(ctx, argv, 10000, &rr);
			rq_log(ctx, "# counters of %s port %d reset (reset: true)", pr[i].k->node, pr[i].k->port);
			proc_result_release(&rr);
		}
	}
	if (cfg->reset)
		rq_fact_add(ctx->main, "counters_reset", "yes: every port read was reset after reading");
	rq_judge(ctx->main, n > 0, "%zu port(s) read", n);
	for (size_t i = 0; i < n; i++)
		ib_perf_release(&pr[i].perf);
	free(pr);
	ib_links_release(&l);
}

const struct rq_kind rq_kind_ib_counters = {
	.name = "ib-counters",
	.summary = "every cabled port's error counters (perfquery) below thresholds; optional traffic phase; reset opt-in",
	.doc = "A marginal cable keeps its link Active while symbol errors, receive errors, link "
	       "recoveries and downed links climb; applications only see poor bandwidth.  Every cabled "
	       "port found by iblinkinfo is read with perfquery and its error counters judged against "
	       "thresholds (0 by default; -1 skips one), one row per port.  With traffic: the command "
	       "runs inside the case and the growth of each counter is judged.  Resetting counters is "
	       "opt-in (reset: true) and reported.",
	.keys = ic_keys,
	.cfg_size = sizeof(struct ic_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.run = ic_run,
};
