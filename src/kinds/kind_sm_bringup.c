/* SPDX-License-Identifier: MIT */
/*
 * sm-bringup: does the subnet come up under a subnet manager?
 *
 * An InfiniBand port stays INIT (LID 0, no traffic) until an SM assigns
 * LIDs and programs the switches; "the IB link is up but nothing works" is
 * most often no SM, or an SM bound to the wrong port.  This starts opensm
 * (config file, port GUID, priority, one sweep or sweeping) and passes when,
 * within the deadline, an SM is MASTER (sminfo), every expected port is
 * ACTIVE with a LID, and every CA port's SM LID is the master's.  It judges
 * by polling the fabric, never by opensm's log, whose "SUBNET UP" may stay
 * buffered until opensm exits; the log goes into the case output.
 *
 * On a real fabric it first asks the subnet: if a MASTER SM already exists
 * it verifies that one by the same criteria and starts nothing: a second SM
 * at a higher priority forces a fabric-wide handover.  Starting one anyway
 * needs --allow-sm-takeover, and a started SM runs at priority 0 unless the
 * case says otherwise (opensm's -p; docs/sm.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kinds/ibkind.h"
#include "core/util.h"

struct smb_cfg {
	struct ibkind_cfg ib;	/* first: the shared fabric keys */
	char *config;
	char *guid;
	long long priority;
	int mode;
	int64_t sweep_ms;
	int64_t deadline_ms;
	char *sim_host;
	bool check_sm_lid;
};

enum { MODE_SWEEP, MODE_ONCE };
static const char *const smb_modes[] = { "sweep", "once", NULL };

static const struct key_def smb_keys[] = {
	IBKIND_KEYS,
	{ .name = "config", .type = KEY_STR, .offset = offsetof(struct smb_cfg, config),
	  .help = "opensm configuration file (-F), relative to the case file; default none" },
	{ .name = "guid", .type = KEY_STR, .offset = offsetof(struct smb_cfg, guid),
	  .help = "port GUID opensm binds (-g 0x...); default: opensm's choice (the only port, or the first up)" },
	{ .name = "priority", .type = KEY_INT, .def = "0", .min = 0, .max = 15,
	  .offset = offsetof(struct smb_cfg, priority),
	  .help = "SM priority (-p); 0, the lowest, unless told otherwise: never outbid a production SM" },
	{ .name = "mode", .type = KEY_ENUM, .def = "sweep", .choices = smb_modes,
	  .offset = offsetof(struct smb_cfg, mode),
	  .help = "sweep: keep sweeping (sminfo answers MASTER); once: configure the subnet once and exit (-o)" },
	{ .name = "sweep_interval", .type = KEY_DURATION, .def = "5s", .min = 1000, .max = 3600000,
	  .offset = offsetof(struct smb_cfg, sweep_ms),
	  .help = "sweep mode: opensm's sweep interval (-s, whole seconds)" },
	{ .name = "deadline", .type = KEY_DURATION, .def = "30s", .min = 100, .max = 3600000,
	  .offset = offsetof(struct smb_cfg, deadline_ms),
	  .help = "how long the subnet may take to come up (scaled by the timeout multiplier)" },
	{ .name = "sim_host", .type = KEY_STR, .offset = offsetof(struct smb_cfg, sim_host),
	  .help = "ibsim target: node of the topology opensm runs at (SIM_HOST); default the first node" },
	{ .name = "check_sm_lid", .type = KEY_BOOL, .def = "true", .offset = offsetof(struct smb_cfg, check_sm_lid),
	  .help = "query every CA port's PortInfo (smpquery) and require its SM LID to be the master's" },
	KEY_END
};

/* The opensm this case started (ctx->state), for cleanup(). */
struct smb_state {
	pid_t pid;		/* running, to stop */
	pid_t recorded;		/* recorded in the state dir, to unrecord */
};

/* Every CA port of the expectation (or the fabric) has the master's SM LID. */
static void judge_sm_lids(struct rq_ctx *ctx, const struct ibsm_view *v, const struct ibnet *exp)
{
	unsigned checked = 0;

	for (size_t i = 0; i < v->links.n; i++) {
		const struct ib_link *k = &v->links.v[i];
		char lid[16], port[16];
		const char *argv[] = { "smpquery", "portinfo", lid, port, NULL };
		struct proc_result r;
		struct ib_kvs kv;
		char err[256];
		const char *sml;

		if (k->is_switch || strcmp(k->state, "Active"))
			continue;
		if (exp && ibnet_find_node(exp, k->node) < 0)
			continue;
		snprintf(lid, sizeof(lid), "%u", k->lid);
		snprintf(port, sizeof(port), "%d", k->port);
		proc_result_init(&r);
		if (rq_tool(ctx, argv, 10000, &r) || r.exit_code != 0 ||
		    smpquery_parse(r.out.buf, r.out.len, &kv, err, sizeof(err))) {
			rq_judge(ctx->main, false, "%s port %d: PortInfo not readable (smpquery %s %s)",
				 k->node, k->port, lid, port);
			proc_result_release(&r);
			continue;
		}
		sml = ib_kvs_get(&kv, "SMLid");
		rq_judge(ctx->main, sml && strtoul(sml, NULL, 0) == v->sm.lid,
			 "%s port %d (LID %u): SM LID %s, master SM is LID %u", k->node, k->port, k->lid,
			 sml ? sml : "?", v->sm.lid);
		checked++;
		ib_kvs_release(&kv);
		proc_result_release(&r);
	}
	rq_judge(ctx->main, checked > 0, "SM LID checked on %u CA port(s)", checked);
}

/* The subnet as it is now, judged: MASTER, ports, SM LIDs, figures. */
static void judge_up(struct rq_ctx *ctx, const struct smb_cfg *cfg, const struct ibsm_view *v,
		     const struct ibnet *exp, int expect_prio)
{
	unsigned active = 0;

	rq_judge(ctx->main, v->sm.state == SMINFO_MASTER, "SM at LID %u GUID 0x%llx is %s",
		 v->sm.lid, (unsigned long long)v->sm.guid, ib_sminfo_state_name(v->sm.state));
	if (expect_prio >= 0)
		rq_judge(ctx->main, v->sm.priority == expect_prio, "master SM priority %d, expected %d",
			 v->sm.priority, expect_prio);
	for (size_t i = 0; i < v->links.n; i++)
		if (!strcmp(v->links.v[i].state, "Active"))
			active++;
	rq_judge(ctx->main, active > 0, "%u port(s) ACTIVE", active);
	rq_figure_add(ctx->main, "ports_active", active, "");
	rq_figure_add(ctx->main, "sm_lid", v->sm.lid, "");
	if (exp)
		rq_figure_add(ctx->main, "expected_links", (double)exp->nlinks, "");
	if (cfg->check_sm_lid)
		judge_sm_lids(ctx, v, exp);
}

static void smb_run(struct rq_ctx *ctx, const void *vcfg)
{
	const struct smb_cfg *cfg = vcfg;
	struct smb_state *st = ctx->state;
	const struct rq_where *wh = rq_ctx_where(ctx);
	const struct rq_where_fabric *p = &wh->fabric;
	struct ibsm_tools tools;
	struct ibsm_view v = { 0 };
	struct ibnet exp = { 0 }, *expp = NULL;
	char why[512], conf[PATH_MAX] = "", *log = NULL, *out = NULL;
	int64_t deadline, t0;
	int ret;

	ibkind_tools(ctx, &tools);
	ret = ibkind_expected(ctx, &cfg->ib, &exp);
	if (ret < 0)
		return;
	if (ret > 0)
		expp = &exp;

	/* Safety first: is there a MASTER already? */
	ibsm_look(&tools, &v, 10000);
	if (v.sm_answered && v.sm.state == SMINFO_MASTER && !wh->allow_sm_takeover) {
		rq_log(ctx, "# a MASTER SM answers (LID %u, priority %d): verifying it, starting none%s",
		       v.sm.lid, v.sm.priority, p->sim ? "" : " (--allow-sm-takeover to start one anyway)");
		rq_fact_add(ctx->main, "sm", "existing master verified; none started");
		if (!ibsm_subnet_up(&v, expp, why, sizeof(why)))
			rq_judge(ctx->main, false, "existing master SM: subnet not up: %s", why);
		else
			judge_up(ctx, cfg, &v, expp, -1);
		goto out;
	}
	if (!p->sim && v.sm_answered && !wh->allow_sm_takeover) {
		rq_result_set(ctx->main, RQ_SKIP, "an SM answers (LID %u, %s): starting another needs --allow-sm-takeover",
			      v.sm.lid, ib_sminfo_state_name(v.sm.state));
		goto out;
	}
	if (cfg->config && *cfg->config &&
	    ibkind_find_file(ctx, ibkind_case_file(ctx), cfg->config, conf, sizeof(conf), why, sizeof(why))) {
		rq_result_set(ctx->main, RQ_ERROR, "config: %s", why);
		goto out;
	}
	log = xasprintf("%s/opensm.log", ctx->scratch);
	out = xasprintf("%s/opensm.out", ctx->scratch);
	struct ibsm_opensm o = {
		.guid = cfg->guid, .priority = (int)cfg->priority, .once = cfg->mode == MODE_ONCE,
		.sweep_s = (int)(cfg->sweep_ms / 1000), .config = conf[0] ? conf : NULL,
		.log_path = log, .out_path = out, .env = ctx->tool_env, .cwd = ctx->tool_cwd,
		.sim_host = p->sim ? cfg->sim_host : NULL,
	};
	rq_log(ctx, "# starting opensm, priority %d, %s", o.priority, o.once ? "once" : "sweeping");
	t0 = now_ms();
	st->pid = ibsm_opensm_start(&o, why, sizeof(why));
	if (st->pid < 0) {
		st->pid = 0;
		rq_result_set(ctx->main, RQ_ERROR, "%s", why);
		goto out;
	}
	if (ibsm_record_pid(ctx->state_dir, st->pid) == 0)
		st->recorded = st->pid;
	deadline = now_ms() + scaled_ms(cfg->deadline_ms);
	if (deadline > ctx->deadline_ms && ctx->deadline_ms)
		deadline = ctx->deadline_ms - 500;

	if (o.once) {
		/* One sweep: opensm exits after SUBNET UP; then no SM answers sminfo. */
		int status = 0, w = proc_wait_deadline(st->pid, deadline, &status);
		struct osm_summary s;
		struct sb txt = SB_INIT;

		read_file(log, &txt, 0);
		opensm_log_parse(txt.buf, txt.len, &s);
		sb_release(&txt);
		if (w != 1) {
			rq_judge(ctx->main, false, "opensm -o did not finish within %.1f s", cfg->deadline_ms / 1000.0);
		} else {
			st->pid = 0;
			osm_summary_reason(&s, why, sizeof(why));
			if (!s.subnet_up) {
				rq_result_set(ctx->main, RQ_ERROR, "opensm -o exited without SUBNET UP: %s", why);
			} else {
				rq_judge(ctx->main, true, "opensm -o: SUBNET UP, exited");
				rq_figure_add(ctx->main, "bringup_s", (now_ms() - t0) / 1000.0, "s");
				/* Ports stay ACTIVE after a one-shot SM: check them without a MASTER. */
				struct proc_result r;
				static const char *const li[] = { "iblinkinfo", NULL };
				struct ib_links l;
				char err[256];

				proc_result_init(&r);
				if (rq_tool(ctx, li, 10000, &r) == 0 &&
				    iblinkinfo_parse(r.out.buf, r.out.len, &l, err, sizeof(err)) == 0) {
					struct ibsm_view vv = { .sm_answered = true, .links_read = true, .links = l };

					/* No SM answers after -o: judge the ports alone. */
					vv.sm.state = SMINFO_MASTER;
					vv.sm.lid = 1;
					bool up = ibsm_subnet_up(&vv, expp, why, sizeof(why));

					rq_judge(ctx->main, up, "every expected port ACTIVE with a LID after the sweep%s%s",
						 up ? "" : ": ", up ? "" : why);
					ib_links_release(&l);
				} else {
					rq_judge(ctx->main, false, "iblinkinfo after the sweep failed");
				}
				proc_result_release(&r);
			}
		}
		osm_summary_release(&s);
		goto out;
	}

	ret = ibsm_wait_up(&tools, expp, deadline, st->pid, &v);
	if (ret == -ESRCH) {
		struct osm_summary s;
		struct sb txt = SB_INIT;

		/* opensm ended early: its log says why (bind failure, no port). */
		read_file(log, &txt, 0);
		read_file(out, &txt, 0);
		opensm_log_parse(txt.buf, txt.len, &s);
		osm_summary_reason(&s, why, sizeof(why));
		rq_result_set(ctx->main, RQ_ERROR, "opensm exited before the subnet came up: %s", why);
		osm_summary_release(&s);
		sb_release(&txt);
		st->pid = 0;
		goto out;
	}
	if (ret) {
		rq_judge(ctx->main, false, "subnet not up within %.1f s: %s",
			 scaled_ms(cfg->deadline_ms) / 1000.0, v.why);
		goto out;
	}
	rq_figure_add(ctx->main, "bringup_s", (now_ms() - t0) / 1000.0, "s");
	if (p->ibsim_start_ms)
		rq_figure_add(ctx->main, "since_fabric_start_s", (now_ms() - p->ibsim_start_ms) / 1000.0, "s");
	judge_up(ctx, cfg, &v, expp, (int)cfg->priority);
out:
	if (log) {
		ibkind_log_file(ctx, "opensm stdout", out, 16 << 10);
		ibkind_log_file(ctx, "opensm log", log, 64 << 10);
	}
	free(log);
	free(out);
	ibsm_view_release(&v);
	ibnet_release(&exp);
}

static void smb_cleanup(struct rq_ctx *ctx, const void *vcfg)
{
	struct smb_state *st = ctx->state;
	char what[32];

	if (st->pid > 0)
		ibsm_stop(st->pid, scaled_ms(2000));
	if (st->recorded > 0) {
		snprintf(what, sizeof(what), "pid %d", (int)st->recorded);
		ibsm_unrecord(ctx->state_dir, what);
	}
	st->pid = st->recorded = 0;
}

const struct rq_kind rq_kind_sm_bringup = {
	.name = "sm-bringup",
	.summary = "start opensm and see the subnet come up: one MASTER, every expected port ACTIVE with a LID, SM LIDs right",
	.doc = "An IB port stays INIT with LID 0 until a subnet manager configures it.  This starts "
	       "opensm (config, port GUID, priority, sweeping or once) and passes when, within the "
	       "deadline, sminfo answers MASTER, every port of the expected topology is ACTIVE with a "
	       "LID and every CA port's SM LID is the master's, judged by polling the fabric, not the "
	       "buffered opensm log (which goes into the case output).  On a real fabric an existing "
	       "MASTER is verified instead and nothing is started unless --allow-sm-takeover; a "
	       "started SM runs at priority 0 unless the case says otherwise.",
	.keys = smb_keys,
	.cfg_size = sizeof(struct smb_cfg),
	.state_size = sizeof(struct smb_state),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.run = smb_run,
	.cleanup = smb_cleanup,
};
