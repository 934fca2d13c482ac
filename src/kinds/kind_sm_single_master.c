/* SPDX-License-Identifier: MIT */
/*
 * sm-single-master: exactly one MASTER SM on the subnet, standbys at their
 * configured priorities.
 *
 * Redundant SMs are normal (one MASTER, the others STANDBY, polling it);
 * two MASTERs mean a split subnet that reprograms switches back and forth,
 * and a standby at the wrong priority takes over when it should not, or
 * never.  This lists the ports with the IsSM capability (saquery -s), asks
 * each for its SMInfo (sminfo LID) and judges: one MASTER, the rest STANDBY,
 * priorities as expected, the master the highest priority.
 *
 * On ibsim the case can start its SMs (sms: ["Switch1:5", "Hca2:3"], node
 * of the topology and priority), each attached at its node.  On a real
 * fabric starting SMs would force handovers: it needs --allow-sm-takeover,
 * otherwise the case only looks.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kinds/ibkind.h"
#include "core/util.h"

#define SSM_MAX 8

struct ssm_cfg {
	struct ibkind_cfg ib;
	struct rq_list sms;
	long long expect_sms;
	struct rq_list priorities;
	int64_t deadline_ms;
};

static const struct key_def ssm_keys[] = {
	IBKIND_KEYS,
	{ .name = "sms", .type = KEY_LIST, .elem = KEY_STR, .offset = offsetof(struct ssm_cfg, sms),
	  .help = "SMs to start, NODE:PRIORITY each (ibsim: NODE of the topology; real IB needs --allow-sm-takeover)" },
	{ .name = "expect_sms", .type = KEY_INT, .def = "0", .min = 0, .max = SSM_MAX,
	  .offset = offsetof(struct ssm_cfg, expect_sms),
	  .help = "number of SMs (MASTER + STANDBY) expected; 0: as many as sms: starts, else not judged" },
	{ .name = "priorities", .type = KEY_LIST, .elem = KEY_INT, .offset = offsetof(struct ssm_cfg, priorities),
	  .help = "the SMs' priorities, any order; default: those of sms:" },
	{ .name = "deadline", .type = KEY_DURATION, .def = "30s", .min = 100, .max = 3600000,
	  .offset = offsetof(struct ssm_cfg, deadline_ms),
	  .help = "how long the SMs may take to settle into one MASTER and standbys" },
	KEY_END
};

/* The opensm processes this case started (ctx->state), for cleanup(). */
struct ssm_state {
	pid_t pids[SSM_MAX];
	size_t n;
};

static int ssm_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct ssm_cfg *cfg = c->cfg;

	if (cfg->sms.n > SSM_MAX) {
		snprintf(err, errsz, "sms: at most %d", SSM_MAX);
		return -1;
	}
	for (size_t i = 0; i < cfg->sms.n; i++) {
		const char *colon = strrchr(cfg->sms.str[i], ':');
		char *end;
		long v = colon ? strtol(colon + 1, &end, 10) : -1;

		if (!colon || colon == cfg->sms.str[i] || *end || v < 0 || v > 15) {
			snprintf(err, errsz, "sms: \"%s\" is not NODE:PRIORITY (priority 0-15)", cfg->sms.str[i]);
			return -1;
		}
	}
	return 0;
}

struct sm_seen {
	unsigned lid;
	struct ib_sminfo si;
	bool ok;
};

/* List IsSM ports and ask each; returns the count read. */
static size_t survey(struct rq_ctx *ctx, struct sm_seen *out, size_t max)
{
	static const char *const sa[] = { "saquery", "-s", NULL };
	struct proc_result r;
	struct ib_sm_ports sp;
	char err[256];
	size_t n = 0;

	proc_result_init(&r);
	if (rq_tool(ctx, sa, 10000, &r) || r.exit_code != 0 ||
	    saquery_sm_parse(r.out.buf, r.out.len, &sp, err, sizeof(err))) {
		proc_result_release(&r);
		return 0;
	}
	proc_result_release(&r);
	for (size_t i = 0; i < sp.n && n < max; i++) {
		char lid[16];
		const char *argv[] = { "sminfo", lid, NULL };

		snprintf(lid, sizeof(lid), "%u", sp.lid[i]);
		out[n].lid = sp.lid[i];
		proc_result_init(&r);
		out[n].ok = rq_tool(ctx, argv, 10000, &r) == 0 &&
			    sminfo_parse(r.out.buf, r.out.len, &out[n].si, err, sizeof(err)) == 0;
		proc_result_release(&r);
		n++;
	}
	return n;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static void ssm_run(struct rq_ctx *ctx, const void *vcfg)
{
	struct ssm_state *st = ctx->state;
	const struct ssm_cfg *cfg = vcfg;
	const struct rq_where *w = rq_ctx_where(ctx);
	const struct rq_where_fabric *p = &w->fabric;
	struct sm_seen seen[SSM_MAX * 2];
	size_t n = 0, masters = 0, want_n;
	long long want_prio[SSM_MAX * 2], got_prio[SSM_MAX * 2];
	size_t nwant = 0;
	int64_t deadline;
	char why[256];

	if (cfg->sms.n && !p->sim && !w->allow_sm_takeover) {
		rq_result_set(ctx->main, RQ_SKIP, "starting SMs on a real fabric forces handovers: needs --allow-sm-takeover");
		return;
	}
	for (size_t i = 0; i < cfg->sms.n; i++) {
		char node[128];
		const char *colon = strrchr(cfg->sms.str[i], ':');
		char *log = xasprintf("%s/opensm-%zu.log", ctx->scratch, i);
		char *out = xasprintf("%s/opensm-%zu.out", ctx->scratch, i);
		char *tmp = xasprintf("%s/osm-%zu", ctx->scratch, i);
		char *e1 = xasprintf("OSM_TMP_DIR=%s", tmp), *e2 = xasprintf("OSM_CACHE_DIR=%s", tmp);
		const char *env[16];
		size_t ne = 0;

		/* Each SM its own cache and dump dir: they would share guid2lid otherwise. */
		mkdir_p(tmp, 0700);
		for (size_t j = 0; ctx->tool_env && ctx->tool_env[j] && ne < 12; j++)
			if (!str_starts(ctx->tool_env[j], "OSM_"))
				env[ne++] = ctx->tool_env[j];
		env[ne++] = e1;
		env[ne++] = e2;
		env[ne] = NULL;
		snprintf(node, sizeof(node), "%.*s", (int)(colon - cfg->sms.str[i]), cfg->sms.str[i]);
		struct ibsm_opensm o = {
			.priority = atoi(colon + 1), .sweep_s = 2, .log_path = log, .out_path = out,
			.env = env, .cwd = ctx->tool_cwd, .sim_host = p->sim ? node : NULL,
		};
		pid_t pid = ibsm_opensm_start(&o, why, sizeof(why));

		if (pid > 0) {
			st->pids[st->n++] = pid;
			ibsm_record_pid(ctx->state_dir, pid);
			rq_log(ctx, "# started opensm pid %d at %s, priority %d", (int)pid, node, o.priority);
		}
		free(log);
		free(out);
		free(tmp);
		free(e1);
		free(e2);
		if (pid <= 0) {
			rq_result_set(ctx->main, RQ_ERROR, "%s", why);
			return;
		}
		want_prio[nwant++] = o.priority;
		if (i == 0 && cfg->sms.n > 1) {
			/*
			 * The first SM brings the subnet up before the others start: SMs
			 * started at the same instant on ibsim hand over back and forth
			 * and the SA can stay silent afterwards.
			 */
			struct ibsm_tools t;
			struct ibsm_view v = { 0 };

			ibkind_tools(ctx, &t);
			if (ibsm_wait_up(&t, NULL, now_ms() + scaled_ms(cfg->deadline_ms), pid, &v))
				rq_log(ctx, "# first SM not up yet: %s", v.why);
			ibsm_view_release(&v);
		}
	}
	if (cfg->priorities.n) {
		nwant = 0;
		for (size_t i = 0; i < cfg->priorities.n && nwant < ARRAY_SIZE(want_prio); i++)
			want_prio[nwant++] = cfg->priorities.num[i];
	}
	want_n = cfg->expect_sms ? (size_t)cfg->expect_sms : cfg->sms.n;

	/* Settle: every SM answering, one MASTER, the count expected. */
	deadline = now_ms() + scaled_ms(cfg->deadline_ms);
	if (ctx->deadline_ms && deadline > ctx->deadline_ms - 500)
		deadline = ctx->deadline_ms - 500;
	for (int64_t backoff = 100;; backoff = backoff * 2 > 1000 ? 1000 : backoff * 2) {
		bool all_ok = true;

		n = survey(ctx, seen, ARRAY_SIZE(seen));
		masters = 0;
		for (size_t i = 0; i < n; i++) {
			all_ok &= seen[i].ok && (seen[i].si.state == SMINFO_MASTER || seen[i].si.state == SMINFO_STANDBY);
			masters += seen[i].ok && seen[i].si.state == SMINFO_MASTER;
		}
		if (n && all_ok && masters == 1 && (!want_n || n == want_n))
			break;
		if (now_ms() + backoff > deadline)
			break;
		usleep((useconds_t)backoff * 1000);
	}
	for (size_t i = 0; i < n; i++) {
		if (seen[i].ok)
			rq_log(ctx, "# SM at LID %u: %s, priority %d, GUID 0x%llx", seen[i].lid,
			       ib_sminfo_state_name(seen[i].si.state), seen[i].si.priority,
			       (unsigned long long)seen[i].si.guid);
		rq_judge(ctx->main, seen[i].ok, "SM at LID %u answers SMInfo", seen[i].lid);
	}
	rq_figure_add(ctx->main, "sms", (double)n, "");
	rq_figure_add(ctx->main, "masters", (double)masters, "");
	rq_judge(ctx->main, n > 0, "%zu SM(s) on the subnet (saquery -s)", n);
	rq_judge(ctx->main, masters == 1, "%zu MASTER SM(s), expected exactly one", masters);
	if (want_n)
		rq_judge(ctx->main, n == want_n, "%zu SM(s) found, expected %zu", n, want_n);
	for (size_t i = 0; i < n; i++) {
		got_prio[i] = seen[i].ok ? seen[i].si.priority : -1;
		if (seen[i].ok && seen[i].si.state == SMINFO_MASTER)
			for (size_t j = 0; j < n; j++)
				rq_judge(ctx->main, !seen[j].ok || seen[j].si.priority <= seen[i].si.priority,
					 "MASTER (LID %u, priority %d) outranks SM at LID %u (priority %d)",
					 seen[i].lid, seen[i].si.priority, seen[j].lid, seen[j].si.priority);
	}
	if (nwant) {
		char got[128] = "", want[128] = "";

		qsort(got_prio, n, sizeof(long long), cmp_ll);
		qsort(want_prio, nwant, sizeof(long long), cmp_ll);
		for (size_t i = 0; i < n; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld", i ? "," : "", got_prio[i]);
		for (size_t i = 0; i < nwant; i++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%lld", i ? "," : "", want_prio[i]);
		rq_judge(ctx->main, !strcmp(got, want), "SM priorities %s, configured %s", got, want);
	}
	for (size_t i = 0; i < cfg->sms.n; i++) {
		char *log = xasprintf("%s/opensm-%zu.log", ctx->scratch, i);

		ibkind_log_file(ctx, "opensm log", log, 16 << 10);
		free(log);
	}
}

static void ssm_cleanup(struct rq_ctx *ctx, const void *vcfg)
{
	struct ssm_state *st = ctx->state;

	/* Standbys first would trigger nothing; stop in reverse start order. */
	while (st->n) {
		char what[32];
		pid_t pid = st->pids[--st->n];

		ibsm_stop(pid, scaled_ms(2000));
		snprintf(what, sizeof(what), "pid %d", (int)pid);
		ibsm_unrecord(ctx->state_dir, what);
	}
}

const struct rq_kind rq_kind_sm_single_master = {
	.name = "sm-single-master",
	.summary = "exactly one MASTER SM on the subnet, standbys at their configured priorities",
	.doc = "Redundant SMs are normal: one MASTER, the rest STANDBY.  Two MASTERs split the subnet; a "
	       "standby at the wrong priority takes over when it should not.  Lists the IsSM ports "
	       "(saquery -s), reads each one's SMInfo (sminfo LID) and judges one MASTER, the others "
	       "STANDBY, the master the highest priority, priorities as configured.  On ibsim the case "
	       "can start its SMs (sms: NODE:PRIORITY); on a real fabric that needs --allow-sm-takeover.",
	.keys = ssm_keys,
	.cfg_size = sizeof(struct ssm_cfg),
	.state_size = sizeof(struct ssm_state),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.validate = ssm_validate,
	.run = ssm_run,
	.cleanup = ssm_cleanup,
};
