/* SPDX-License-Identifier: MIT */
/*
 * A case kind is a small struct: name, key table, config size, an optional
 * check() for kind-specific applicability, run() and cleanup().  Kinds see a
 * struct rq_ctx: where the machine's files are (root prefix), how to run a
 * tool there, where to log, and which role they play in a two-sided case.
 * They do not know which target reached the machine nor who prints results.
 *
 * Kinds run inside an agent worker process: on the host for local targets,
 * inside the guest for rxe-vm, on the peer for two-node runs.
 */
#ifndef RQ_KIND_H
#define RQ_KIND_H

#include <stdbool.h>
#include <stdint.h>
#include "core/case.h"
#include "core/ctx.h"
#include "core/reads.h"

struct rq_undo_op;

struct rq_kind {
	const char *name;
	/*
	 * An earlier name, still taken wherever a kind is named (case files,
	 * results.json rows, `help KIND`), or NULL: renaming a kind breaks no
	 * case file and no saved result.
	 */
	const char *old_name;
	const char *summary;		/* one line */
	const char *doc;		/* a paragraph: what it checks and why it matters */
	const struct key_def *keys;
	size_t cfg_size;
	/*
	 * Per-case working state (started daemons, changes made): the agent
	 * gives each case a zeroed block of state_size bytes in ctx->state,
	 * so run() and cleanup() share it and kinds keep no file-scope state.
	 */
	size_t state_size;
	/* How the undo records this kind journals are restored (core/undo.h). */
	const struct rq_undo_op *undo;
	const char *default_targets;	/* "hca,rxe-vm" (comma-separated) */
	bool two_sided;			/* runs ROLE_SERVER + ROLE_CLIENT */
	bool needs_fabric;		/* needs an IB link layer + SM: auto picks ibsim, not rxe;
					 * its cases may say fabric: and fabric_sm: */
	bool fabric_sm;			/* fabric_sm:'s default: ibsim starts an SM first */
	bool loads_modules;		/* its cases may say modules: (loaded before, unloaded after) */
	bool no_target;			/* pure lint: runs on the controller (opensm-conf, command) */
	bool spans_nodes;		/* one run for all nodes (an MPI job): a lab runs it once,
					 * from its first node, with ctx->where->nodes every node */
	/*
	 * The figures compare and qualify judge by default: space-separated
	 * fnmatch globs ("lat_min lat_median"), the kind's headline figures.
	 * The others are shown, not judged (--all-figures judges them): every
	 * judged figure costs the others confidence (Bonferroni), and a
	 * figure derived from another (a message rate from a bandwidth)
	 * would judge the same change twice.  NULL: every figure whose
	 * direction is known.
	 */
	const char *key_figures;
	/*
	 * What run() reads of the node (core/reads.h), ended by RQ_READS_END:
	 * `rdmaqual capture` copies the union of every kind's, so a new node
	 * kind's reads are captured without editing capture.  NULL: none (a
	 * kind that reads no node, or only through the tools of a fabric).
	 */
	const struct rq_read *reads;
	/* Post-load validation across keys; append errors with rq_cfg_error(). */
	int (*validate)(const struct rq_case *c, char *err, size_t errsz);
	/* Kind-specific applicability; return RQ_SKIP/RQ_ERROR with reason, or RQ_NONE to go on. */
	enum rq_verdict (*check)(struct rq_ctx *ctx, const void *cfg, char *why, size_t whysz);
	/* Do the work; judge into ctx->main or into rows from rq_ctx_row(). */
	void (*run)(struct rq_ctx *ctx, const void *cfg);
	/* Always called after run (also after a failure); undoes state changes. */
	void (*cleanup)(struct rq_ctx *ctx, const void *cfg);
};

/* The registry, generated from kinds.def (kinds/kinds.c). */
extern const struct rq_kind *const rq_kinds[];
extern const size_t rq_nkinds;
/* Hands rq_kinds to core (core/registry.c): the program calls it at start. */
void rq_kinds_install(void);

/* The kinds core knows, handed in by the layer that has them (core/registry.c). */
void rq_kind_registry(const struct rq_kind *const *kinds, size_t n);
const struct rq_kind *rq_kind_find(const char *name);

#endif
