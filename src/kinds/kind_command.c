/* SPDX-License-Identifier: MIT */
/*
 * command: run one argv (never through a shell) and judge its exit status
 * and output.  This is the null engine of rdmaqual, as fio has one: it lets
 * the harness itself be tested (every verdict, timeouts, reports) without
 * RDMA, and lets a lab wrap a site-specific check it already has.
 *
 * It runs once, where the target places one-sided cases (on rxe-vm: vm0,
 * which reaches every guest over ssh), so an MPI launch for all nodes is a
 * command: {hosts}, {hostfile}, {nnodes} and {np} name them (app_nodes.h),
 * {dev}, {netdev} and {ip} this node's RDMA side.  An unknown placeholder
 * is a case-file error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/kind.h"
#include "kinds/app_nodes.h"
#include "kinds/app_results.h"
#include "kinds/app_text.h"

struct command_cfg {
	struct rq_list argv;
	long long exit;
	char *stdout_contains;
	char *stderr_contains;
	struct rq_list env;
	char *memlock;
	char *stdout_lacks;
	char *stderr_lacks;
	struct app_results res;
};

static const struct key_def command_keys[] = {
	{ .name = "argv", .type = KEY_LIST, .elem = KEY_STR, .required = true,
	  .offset = offsetof(struct command_cfg, argv),
	  .help = "the command and its arguments; argv[0] is looked up in PATH, no shell; "
		  "placeholders {hosts} (vm0,vm1,...), {hostfile} (one line a node: NAME slots=N), "
		  "{nnodes}, {np} (nodes x slots), {dev}, {netdev}, {ip}; {{ for a brace" },
	{ .name = "exit", .type = KEY_INT, .def = "0", .min = 0, .max = 255,
	  .offset = offsetof(struct command_cfg, exit),
	  .help = "the exit status that passes" },
	{ .name = "stdout_contains", .type = KEY_STR,
	  .offset = offsetof(struct command_cfg, stdout_contains),
	  .help = "text that standard output must contain" },
	{ .name = "stderr_contains", .type = KEY_STR,
	  .offset = offsetof(struct command_cfg, stderr_contains),
	  .help = "text that standard error must contain" },
	{ .name = "env", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct command_cfg, env),
	  .help = "extra environment entries, each NAME=VALUE (placeholders filled)" },
	{ .name = "memlock", .type = KEY_STR,
	  .offset = offsetof(struct command_cfg, memlock),
	  .help = "RLIMIT_MEMLOCK of the command: a size or unlimited (default: what the agent has; rxe-vm guests: unlimited)" },
	{ .name = "stdout_lacks", .type = KEY_STR,
	  .offset = offsetof(struct command_cfg, stdout_lacks),
	  .help = "text that standard output must not contain (\"Traceback\")" },
	{ .name = "stderr_lacks", .type = KEY_STR,
	  .offset = offsetof(struct command_cfg, stderr_lacks),
	  .help = "text that standard error must not contain" },
	APP_RESULTS_KEYS(struct command_cfg, res),
	KEY_END
};

static int command_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct command_cfg *cfg = c->cfg;

	unsigned used = 0;
	char e[400];

	for (size_t i = 0; i < cfg->env.n; i++) {
		if (!strchr(cfg->env.str[i], '=') || cfg->env.str[i][0] == '=') {
			snprintf(err, errsz, "env entry \"%s\" is not NAME=VALUE", cfg->env.str[i]);
			return -1;
		}
		if (app_ph_scan_in(cfg->env.str[i], PH_NODES_SET, &used, e, sizeof(e)) < 0) {
			snprintf(err, errsz, "env: %s", e);
			return -1;
		}
	}
	for (size_t i = 0; i < cfg->argv.n; i++)
		if (app_ph_scan_in(cfg->argv.str[i], PH_NODES_SET, &used, e, sizeof(e)) < 0) {
			snprintf(err, errsz, "argv: %s", e);
			return -1;
		}
	if (cfg->argv.n == 0) {
		snprintf(err, errsz, "argv must name a command");
		return -1;
	}
	if (app_results_validate(&cfg->res, err, errsz) < 0)
		return -1;
	if (cfg->memlock) {
		bool unl;
		uint64_t b;

		if (app_memlock_parse(cfg->memlock, &unl, &b, err, errsz) < 0)
			return -1;
	}
	return 0;
}

/* What the placeholders the case uses stand for here; 0, or -1 with err. */
static int fill(struct rq_ctx *ctx, const struct command_cfg *cfg, struct app_nodes *nd,
		struct app_dev *dv, char *nnodes, char *np, const char *val[PH_COUNT],
		const char *why[PH_COUNT], char *err, size_t errsz)
{
	unsigned used = 0;
	char e[8];

	for (size_t i = 0; i < cfg->argv.n; i++)
		app_ph_scan_in(cfg->argv.str[i], PH_NODES_SET, &used, e, sizeof(e));
	for (size_t i = 0; i < cfg->env.n; i++)
		app_ph_scan_in(cfg->env.str[i], PH_NODES_SET, &used, e, sizeof(e));
	if (!used)
		return 0;
	if (app_nodes_get(ctx, nd, err, errsz) < 0)
		return -1;
	if ((used & (1u << PH_HOSTFILE)) && app_nodes_hostfile(ctx, nd, err, errsz) < 0)
		return -1;
	snprintf(nnodes, 16, "%zu", nd->n);
	snprintf(np, 16, "%zu", nd->n * (size_t)nd->slots);
	val[PH_HOSTS] = nd->hosts;
	val[PH_HOSTFILE] = nd->hostfile;
	val[PH_NNODES] = nnodes;
	val[PH_NP] = np;
	val[PH_IP] = ctx->local_addr && *ctx->local_addr ? ctx->local_addr : NULL;
	why[PH_IP] = "the target gave no address for this node";
	if (used & ((1u << PH_DEV) | (1u << PH_NETDEV))) {
		app_dev_find(ctx, dv);
		val[PH_DEV] = dv->dev[0] ? dv->dev : NULL;
		why[PH_DEV] = "no RDMA device with an ACTIVE port is selected on this node";
		val[PH_NETDEV] = dv->netdev[0] ? dv->netdev : NULL;
		why[PH_NETDEV] = "the device has no network device (InfiniBand without IPoIB?)";
	}
	return 0;
}

static void command_run(struct rq_ctx *ctx, const void *p)
{
	const struct command_cfg *cfg = p;
	char **argv = xcalloc(cfg->argv.n + 1, sizeof(*argv));
	char **env = xcalloc(cfg->env.n + 1, sizeof(*env));
	const char *const *saved_env = ctx->tool_env;
	struct proc_result r;
	struct rq_result *row = ctx->main;
	struct app_nodes nd = { 0 };
	struct app_dev dv;
	const char *val[PH_COUNT] = { 0 }, *why[PH_COUNT] = { 0 };
	char nnodes[16], np[16], err[512] = "";

	if (fill(ctx, cfg, &nd, &dv, nnodes, np, val, why, err, sizeof(err)) < 0) {
		rq_result_set(row, RQ_ERROR, "%s", err);
		goto out;
	}
	for (size_t i = 0; i < cfg->argv.n; i++)
		if (!(argv[i] = app_ph_expand(cfg->argv.str[i], val, why, err, sizeof(err)))) {
			rq_result_set(row, RQ_ERROR, "argv: %s", err);
			goto out;
		}
	for (size_t i = 0; i < cfg->env.n; i++)
		if (!(env[i] = app_ph_expand(cfg->env.str[i], val, why, err, sizeof(err)))) {
			rq_result_set(row, RQ_ERROR, "env: %s", err);
			goto out;
		}
	if (nd.n)
		rq_log(ctx, "# nodes: %s (%zu, %d slots each)%s%s", nd.hosts, nd.n, nd.slots,
		       nd.hostfile[0] ? "; hostfile " : "", nd.hostfile);
	if (cfg->env.n)
		ctx->tool_env = (const char *const *)env;
	proc_result_init(&r);
	if (cfg->memlock) {
		if (app_memlock_apply(ctx, cfg->memlock, err, sizeof(err)) < 0) {
			rq_result_set(row, RQ_ERROR, "%s", err);
			ctx->tool_env = saved_env;
			goto out;
		}
	}
	int64_t started = app_results_clock();
	/* The case's whole remaining time is the command's deadline. */
	int ret = rq_tool(ctx, (const char *const *)argv,
			  (int64_t)(rq_ctx_left_ms(ctx) / rq_timeout_mul), &r);

	ctx->tool_env = saved_env;
	rq_figure_add(row, "elapsed", r.elapsed_ms / 1000.0, "s");
	if (ret) {
		rq_result_set(row, RQ_ERROR, "cannot start %s: %s", argv[0], strerror(-ret));
	} else if (r.exec_failed) {
		rq_result_set(row, RQ_ERROR, "cannot run %s: %s", argv[0], strerror(r.exec_errno));
	} else if (r.timed_out) {
		rq_result_set(row, RQ_ERROR, "%s did not finish within the case timeout (%.1f s)",
			      argv[0], r.elapsed_ms / 1000.0);
	} else {
		char how[160];

		proc_describe(&r, argv[0], how, sizeof(how));
		rq_judge(row, r.signal == 0 && r.exit_code == cfg->exit,
			 "%s (expected exit %lld)", how, cfg->exit);
		/* output is bytes: a NUL before the text must not hide it */
		if (cfg->stdout_contains)
			rq_judge(row, memmem(r.out.buf, r.out.len, cfg->stdout_contains,
					     strlen(cfg->stdout_contains)) != NULL,
				 "stdout lacks \"%s\"", cfg->stdout_contains);
		if (cfg->stderr_contains)
			rq_judge(row, memmem(r.err.buf, r.err.len, cfg->stderr_contains,
					     strlen(cfg->stderr_contains)) != NULL,
				 "stderr lacks \"%s\"", cfg->stderr_contains);
		if (cfg->stdout_lacks)
			rq_judge(row, !memmem(r.out.buf, r.out.len, cfg->stdout_lacks,
					      strlen(cfg->stdout_lacks)),
				 "stdout contains \"%s\"", cfg->stdout_lacks);
		if (cfg->stderr_lacks)
			rq_judge(row, !memmem(r.err.buf, r.err.len, cfg->stderr_lacks,
					      strlen(cfg->stderr_lacks)),
				 "stderr contains \"%s\"", cfg->stderr_lacks);
		if (cfg->res.format) {
			struct sb all = SB_INIT;

			/* unittest writes to stderr, TAP to stdout: read both, in that order */
			sb_add(&all, r.out.buf, r.out.len);
			sb_add(&all, r.err.buf, r.err.len);
			app_results_import(ctx, row, &cfg->res, all.buf, all.len,
					   r.out_truncated || r.err_truncated, started);
			sb_release(&all);
		}
	}
	proc_result_release(&r);
out:
	for (size_t i = 0; i < cfg->argv.n; i++)
		free(argv[i]);
	for (size_t i = 0; i < cfg->env.n; i++)
		free(env[i]);
	free(argv);
	free(env);
	app_nodes_release(&nd);
}

const struct rq_kind rq_kind_command = {
	.name = "command",
	.summary = "run a command (argv, no shell) and judge its exit status and output",
	.doc = "The null engine: runs one argv with the case's deadline and judges its exit "
	       "status and output.  It tests the harness itself (every verdict, timeouts, "
	       "reports) without RDMA, and wraps site checks a lab already has.",
	.keys = command_keys,
	.cfg_size = sizeof(struct command_cfg),
	.default_targets = "local",
	.loads_modules = true,
	.validate = command_validate,
	.run = command_run,
};
