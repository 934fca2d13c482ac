/* SPDX-License-Identifier: MIT */
/*
 * ib-counters: do the fabric's port error counters grow?
 *
 * A dirty connector or a marginal cable keeps a link Active while it
 * corrupts packets: symbol errors, receive errors, link error recoveries
 * and downed links climb, and the retransmissions show up only as poor,
 * jittery bandwidth.  This reads every cabled port's PortCounters with
 * perfquery (LID and port from iblinkinfo) twice, around a traffic command
 * (argv, no shell) or a quiet `window`, and judges each error counter's
 * growth against its threshold, one row per port.  Absolute values are
 * history (LinkDownedCounter counts every reboot of the peer) and are
 * figures; `absolute: true` judges them too.  Resetting counters
 * (perfquery -R) changes fabric state that others may be watching: opt-in
 * and reported.
 */
#include <errno.h>
#include <time.h>
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
	int64_t window;
	bool absolute;
	struct rq_list thresholds;
};

#define MAXKEY(key_, field_, def_, what_) \
	{ .name = key_, .type = KEY_INT, .def = def_, .min = -1, .max = 4294967295LL, \
	  .offset = offsetof(struct ic_cfg, field_), \
	  .help = "highest growth of " what_ " allowed per port during the case (-1: not judged)" }

static const struct key_def ic_keys[] = {
	IBKIND_KEYS,
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
	{ .name = "window", .type = KEY_DURATION, .def = "5s", .min = 0, .max = 3600000,
	  .offset = offsetof(struct ic_cfg, window),
	  .help = "without traffic: how long to watch the counters grow between the two readings" },
	{ .name = "absolute", .type = KEY_BOOL, .def = "false", .offset = offsetof(struct ic_cfg, absolute),
	  .help = "also judge each counter's absolute value against its threshold (history: a reboot counts a downed link)" },
	{ .name = "thresholds", .type = KEY_LIST, .elem = KEY_STR, .offset = offsetof(struct ic_cfg, thresholds),
	  .help = "per-counter growth thresholds in ibqueryerrors' style, \"SymbolErrorCounter=10\"; they override max_*" },
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

static int ic_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct ic_cfg *cfg = c->cfg;

	for (size_t i = 0; i < cfg->thresholds.n; i++) {
		const char *t = cfg->thresholds.str[i], *eq = strchr(t, '=');
		bool known = false;
		char *end;

		for (size_t k = 0; eq && k < ARRAY_SIZE(counters); k++)
			known |= strlen(counters[k].name) == (size_t)(eq - t) &&
				 !strncmp(counters[k].name, t, (size_t)(eq - t));
		if (!eq || !known || strtoll(eq + 1, &end, 10) < -1 || end == eq + 1 || *end) {
			snprintf(err, errsz, "thresholds: \"%s\" is not COUNTER=N with a PortCounters error "
				 "counter (SymbolErrorCounter=10)", t);
			return -1;
		}
	}
	return 0;
}

/* The threshold of counter c: thresholds: first, else its max_* key. */
static long long threshold(const struct ic_cfg *cfg, size_t c)
{
	size_t nl = strlen(counters[c].name);

	for (size_t i = cfg->thresholds.n; i-- > 0;) {
		const char *t = cfg->thresholds.str[i];

		if (!strncmp(t, counters[c].name, nl) && t[nl] == '=')
			return strtoll(t + nl + 1, NULL, 10);
	}
	return *(const long long *)((const char *)cfg + counters[c].off);
}

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
	} else if (cfg->window > 0 && !ctx->replay) {
		/* a replayed capture cannot grow: one reading is all it has */
		int64_t ms = cfg->window < rq_ctx_left_ms(ctx) / 2 ? cfg->window : rq_ctx_left_ms(ctx) / 2;
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

		rq_log(ctx, "# watching the counters for %lld ms", (long long)ms);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !rq_interrupted)
			;
	}
	for (size_t i = 0; i < n; i++) {
		struct rq_result *row = rq_ctx_row(ctx, pr[i].k->node, pr[i].k->port);
		struct ib_perf before = pr[i].perf;
		bool had = pr[i].ok && before.n;

		memset(&pr[i].perf, 0, sizeof(pr[i].perf));
		read_port(ctx, &pr[i]);
		if (!pr[i].ok || !pr[i].perf.n || !had) {
			rq_judge(row, false, "%s port %d (LID %u): perfquery gave no counters", pr[i].k->node,
				 pr[i].k->port, pr[i].k->lid);
			ib_perf_release(&before);
			continue;
		}
		for (size_t c = 0; c < ARRAY_SIZE(counters); c++) {
			long long max = threshold(cfg, c);
			uint64_t v = 0, v0 = 0;
			char fig[64];

			if (!ib_perf_get(&pr[i].perf.v[0], counters[c].name, &v))
				continue;
			rq_figure_add(row, counters[c].name, (double)v, "");
			if (!ib_perf_get(&before.v[0], counters[c].name, &v0) || v0 > v)
				v0 = v;	/* reset (or wrapped) in between: no growth seen */
			snprintf(fig, sizeof(fig), "%s_growth", counters[c].name);
			rq_figure_add(row, fig, (double)(v - v0), "");
			if (max < 0)
				continue;
			rq_judge(row, v - v0 <= (uint64_t)max, "%s port %d: %s grew by %llu %s (max %lld)",
				 pr[i].k->node, pr[i].k->port, counters[c].name, (unsigned long long)(v - v0),
				 cfg->traffic.n ? "during traffic" : "during the case", max);
			if (cfg->absolute)
				rq_judge(row, v <= (uint64_t)max, "%s port %d: %s %llu (max %lld)", pr[i].k->node,
					 pr[i].k->port, counters[c].name, (unsigned long long)v, max);
		}
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
	.summary = "growth of every cabled port's error counters (perfquery) during a traffic phase or a window, per-counter thresholds; reset opt-in",
	.doc = "A marginal cable keeps its link Active while symbol errors, receive errors, link "
	       "recoveries and downed links climb; applications only see poor bandwidth.  Every cabled "
	       "port found by iblinkinfo is read with perfquery before and after a traffic command "
	       "(or a quiet `window`), and each error counter's growth is judged against its "
	       "threshold (0 by default, -1 skips one; `thresholds: [SymbolErrorCounter=10]` in "
	       "ibqueryerrors' style), one row per port.  Absolute values are history (a reboot "
	       "counts a downed link): figures, judged only with `absolute: true`.  Resetting "
	       "counters is opt-in (reset: true) and reported.",
	.keys = ic_keys,
	.cfg_size = sizeof(struct ic_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.validate = ic_validate,
	.run = ic_run,
};
