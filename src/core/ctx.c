/* SPDX-License-Identifier: MIT */
/*
 * What a kind sees of the place it runs: logging, root-prefixed paths,
 * per-device rows, tools and the deadline.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "core/ctx.h"

void rq_log(struct rq_ctx *ctx, const char *fmt, ...)
{
	struct sb sb = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (!sb.len || sb.buf[sb.len - 1] != '\n')
		sb_addc(&sb, '\n');
	if (ctx->log_fd >= 0) {
		const char *p = sb.buf;
		size_t left = sb.len;

		while (left) {
			ssize_t n = write(ctx->log_fd, p, left);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			p += n;
			left -= (size_t)n;
		}
	}
	sb_release(&sb);
}

const char *rq_path(struct rq_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	const char *root = ctx->root ? ctx->root : "";
	size_t rl = strlen(root);
	va_list ap;

	/* A root of "/" is the live system: don't produce "//sys". */
	if (rl == 1 && root[0] == '/')
		rl = 0;
	if (rl >= size) {
		buf[0] = '\0';
		return buf;
	}
	memcpy(buf, root, rl);
	va_start(ap, fmt);
	vsnprintf(buf + rl, size - rl, fmt, ap);
	va_end(ap);
	return buf;
}

struct rq_result *rq_ctx_row(struct rq_ctx *ctx, const char *device, int port)
{
	struct rq_result *r;

	for (size_t i = 0; i < ctx->out->n; i++) {
		r = ctx->out->v[i];
		if (r == ctx->main)
			continue;
		if (((!device && !r->device) ||
		     (device && r->device && !strcmp(device, r->device))) &&
		    r->port == port)
			return r;
	}
	r = rq_result_new(ctx->c->name, device, port);
	rq_results_add(ctx->out, r);
	return r;
}

int rq_tool(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
	    struct proc_result *r)
{
	struct sb line = SB_INIT;
	int ret;

	sb_add_argv(&line, (const char *const *)argv);
	rq_log(ctx, "$ %s", line.buf);
	sb_release(&line);
	/* Never outlive the case: a tool's deadline is capped by the case's. */
	if (ctx->deadline_ms) {
		int64_t left = rq_ctx_left_ms(ctx);

		if (scaled_ms(timeout_ms) > left)
			timeout_ms = (int64_t)(left / (rq_timeout_mul > 0 ? rq_timeout_mul : 1));
		if (timeout_ms < 1)
			timeout_ms = 1;
	}
	ret = ctx->tool(ctx, argv, timeout_ms, r);
	if (ret == 0 && (r->timed_out || r->exec_failed || r->exit_code != 0)) {
		char how[160];

		proc_describe(r, argv[0], how, sizeof(how));
		rq_log(ctx, "# %s", how);
	}
	return ret;
}

const struct rq_where *rq_ctx_where(const struct rq_ctx *ctx)
{
	static char none[] = "";
	static const struct rq_where nothing = {
		.host = { none, none }, .rdma_addr = { none, none }, .rdma_gid = { none, none }, .rail = -1,
		.rdma_dev = none, .netdev = none, .case_file = none,
		.fabric = { .topology = none, .planned = none, .socket = none, .sm_log = none, .sm_config = none,
			    .sm_partitions = none, .qos_policy = none, .routing_engine = none },
	};

	return ctx->where ? ctx->where : &nothing;
}

int64_t rq_ctx_left_ms(const struct rq_ctx *ctx)
{
	int64_t left;

	if (!ctx->deadline_ms)
		return INT64_MAX / 4;
	left = ctx->deadline_ms - now_ms();
	return left > 0 ? left : 0;
}

int rq_tool_live(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
		 struct proc_result *r)
{
	struct proc_opts o = {
		.argv = argv,
		.env_add = ctx->tool_env,
		.cwd = ctx->tool_cwd,
		.timeout_ms = scaled_ms(timeout_ms),
		.log_fd = ctx->log_fd,
		/* Kinds parse what tools print (iblinkinfo of a fabric): keep all of it. */
		.tail_max = 4u << 20,
		.term_grace_ms = ctx->tool_term_grace_ms,
	};

	return proc_run(&o, r);
}
