/* SPDX-License-Identifier: MIT */
/*
 * The per-case context: what a kind (and the domain code it calls: device
 * scans, captures, the undo journal) knows about the machine it runs on.
 * Where the machine's files are (root prefix), how to run a tool there,
 * where to log, which role it plays in a two-sided case, its deadline.
 * Split from kind.h so that code below the kinds can take a context
 * without seeing the kind interface.
 */
#ifndef RQ_CTX_H
#define RQ_CTX_H

#include <stdbool.h>
#include <stdint.h>
#include "core/case.h"
#include "core/proc.h"
#include "core/result.h"
#include "core/where.h"

enum rq_role {
	ROLE_SINGLE = 0,	/* one-sided case */
	ROLE_SERVER,		/* passive side of a two-sided case */
	ROLE_CLIENT,		/* active side; its rows are the case's result */
};

struct rq_ctx;
struct json_t;

/* How tools are run on this target (live exec, or replay from a capture). */
typedef int (*rq_tool_fn)(struct rq_ctx *ctx, const char *const *argv,
			  int64_t timeout_ms, struct proc_result *r);

struct rq_ctx {
	const struct rq_case *c;
	const char *target;		/* target name as reported */
	const char *root;		/* "" on a live system; capture dir for sysroot */
	bool replay;			/* sysroot: read-only, tools come from the capture */
	int log_fd;			/* the case log; tools' output is appended */
	const char *scratch;		/* a writable directory private to this case */
	const char *state_dir;		/* node run-state dir: undo records that must outlive a crash */
	const char *const *tool_env;	/* "K=V" added to tools' env (ibsim preload) */
	const char *tool_cwd;		/* cwd for tools (ibsim writes sys-<pid>/ there) */
	int64_t tool_term_grace_ms;	/* a tool's SIGTERM -> SIGKILL grace at its deadline (0: proc's) */
	rq_tool_fn tool;		/* never NULL */
	enum rq_role role;
	const char *peer_addr;		/* client: server's IPv4 (or "127.0.0.1" loopback) */
	const char *local_addr;		/* this side's IPv4 on the RDMA netdev, if known */
	int oob_port;			/* TCP port for the out-of-band exchange */
	const struct rq_where *where;	/* where it runs (the target's placement); NULL: nothing known */
	int64_t deadline_ms;		/* now_ms() value after which the kind must give up */
	struct rq_results *out;		/* rows this case produced */
	struct rq_result *main;		/* the row used when a kind adds none */
	void *state;			/* the kind's per-case state, state_size zeroed bytes */
};

/* Log a line to the case log. */
void rq_log(struct rq_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Root-prefixed path: rq_path(ctx, buf, sz, "/sys/class/infiniband/%s", dev). */
const char *rq_path(struct rq_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A row for one device/port (created on first call for that pair). */
struct rq_result *rq_ctx_row(struct rq_ctx *ctx, const char *device, int port);
/* Run a tool through ctx->tool, logging its argv and output; timeout scaled. */
int rq_tool(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
	    struct proc_result *r);
/* The tool function of live targets: proc_run with ctx's env, cwd and log. */
int rq_tool_live(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
		 struct proc_result *r);
/* ctx->where, or a placement that knows nothing (every string ""). */
const struct rq_where *rq_ctx_where(const struct rq_ctx *ctx);
/* Milliseconds left before ctx->deadline_ms (>= 0). */
int64_t rq_ctx_left_ms(const struct rq_ctx *ctx);

/* Evaluate needs: on the target; all unmet ones joined into why.  true: all met. */
bool rq_needs_met(struct rq_ctx *ctx, char *why, size_t whysz);

#endif
