/* SPDX-License-Identifier: MIT */
/*
 * Targets: where a case runs.  A target knows how to reach a place and hand
 * it a case (through an agent endpoint); it knows no kind in particular.
 * The registry (targets/targets.def, targets/targets.c) lists them; each
 * carries its name, help text and how `auto` ranks it, so nothing else
 * spells out the list (`rdmaqual help` prints it).
 *
 * Every case goes to an agent: a forked `rdmaqual agent --stdio` for local
 * targets, the guest's agent over virtio-serial for rxe-vm, `ssh peer
 * rdmaqual agent --stdio` for a second node.  The same protocol everywhere
 * (agent.h) means a kind that crashes becomes ERROR, not a dead runner.
 */
#ifndef RQ_TARGET_H
#define RQ_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include "core/case.h"
#include "core/result.h"
#include "core/where.h"

struct rq_agent;		/* a connected agent endpoint (agent.h) */
struct json_t;
struct rq_target;

/* Options of a run that targets read. */
struct rq_run_opts {
	const char *target;		/* --target (NULL/"auto") */
	const char *require_target;	/* --require-target */
	const char *peer;		/* --peer HOST */
	const char *topology;		/* --vm-topology vm1, vm2, ... vm8 */
	const char *accel;		/* --accel kvm|tcg|auto */
	const char *kernel, *modules;	/* --kernel --modules */
	const char *kernel_cmdline;	/* --kernel-cmdline: words added to the guests' command line */
	const char *link_delay;		/* --link-delay: netem delay on each guest's eth0, or NULL */
	const char *self_exe;		/* path of this rdmaqual binary */
	const char *state_dir;		/* run-state / lock directory */
	const char *run_dir;		/* reports/<run-id> */
	bool allow_sm_takeover;
	bool verbose;
};

/*
 * What a target hands the scheduler for one case: up to two agent
 * endpoints (client side first), addresses for a two-sided case and
 * where it runs (core/where.h), which the kind reads as ctx->where.  The
 * scheduler initializes where before place() and releases it after
 * unplace().
 */
struct rq_placement {
	struct rq_agent *side[2];	/* [0]: single/client; [1]: server (may equal [0]) */
	char addr[2][64];		/* RDMA-side IPv4 of each side, "" if n/a */
	const char *root;		/* sysroot dir or "" */
	struct rq_where where;
	char **env;			/* NULL-terminated "K=V" for tools, or NULL */
	char *tool_cwd;
};

struct rq_target_ops {
	const char *name;
	const char *help;
	const char *arg;		/* "DIR": named NAME:DIR (sysroot:DIR); NULL: a bare name */
	const char *arg_what;		/* what arg is, for messages: "a directory" */
	const char *stands_for;		/* also runs cases that list this target (sysroot: "hca") */
	bool in_guest;			/* runs cases in guests it boots (needs are checked there) */
	const struct rq_key_owner *keys;	/* the case keys it owns (core/case.h), or NULL */
	/*
	 * run --jobs: its cases share nothing with another target's (names,
	 * sockets and scratch of their own, no host setting changed), so they
	 * may run in a worker of their own beside the others' (exec/par.h).
	 */
	bool parallel;
	/* It changes this host's devices or netdevs: no `local` case runs beside it. */
	bool changes_host;
	/*
	 * auto: this target's rank for case c on this node, lower picked first,
	 * with why for the row; 0: auto does not pick it here (why, if any, says
	 * what is missing).  NULL: auto never picks it.
	 */
	int (*auto_rank)(const struct rq_case *c, char *why, size_t whysz);
	/* Can this target run here at all?  false with the reason. */
	bool (*available)(const struct rq_run_opts *o, const char *arg, char *why, size_t whysz);
	/* Open lazily, before its first case (boot VMs...).  0 or -errno with err. */
	int (*open)(struct rq_target *t, char *err, size_t errsz);
	/* Prepare a placement for a case (start ibsim for its fabric...). */
	int (*place)(struct rq_target *t, const struct rq_case *c, struct rq_placement *p,
		     char *err, size_t errsz);
	/* Undo place(); called with the case's rows (for kernel-log checks, console tails). */
	void (*unplace)(struct rq_target *t, const struct rq_case *c, struct rq_placement *p,
			struct rq_results *rows);
	void (*close)(struct rq_target *t);
	/* Environment facts for the report (kernel, accel...). */
	void (*facts)(struct rq_target *t, struct rq_result *sink);
	/* rdmaqual cleanup: remove what a killed run left (VMs, sockets, daemons). */
	void (*cleanup_stale)(const struct rq_run_opts *o);
};

struct rq_target {
	const struct rq_target_ops *ops;
	char *name;		/* "sysroot:fixtures/nodes/cx6" */
	char *arg;		/* after the colon */
	const struct rq_run_opts *opts;
	bool opened;
	int open_err;
	char open_msg[256];
	void *priv;
};

/*
 * The node's run-state directory: o->state_dir when set, else
 * $RDMAQUAL_STATE_DIR, else /run/rdmaqual as root, else
 * $XDG_RUNTIME_DIR/rdmaqual, else /tmp/rdmaqual-UID.  Returns buf.
 */
const char *rq_state_dir(const struct rq_run_opts *o, char *buf, size_t size);

/* The registry, generated from targets.def (targets/targets.c); NULL-terminated. */
extern const struct rq_target_ops *const rq_target_ops_all[];
/* Hands rq_target_ops_all to core (core/registry.c): the program calls it at start. */
void rq_targets_install(void);

/* The targets core knows, handed in by the layer that has them (core/registry.c). */
void rq_target_registry(const struct rq_target_ops *const *all);
/* The i-th of them, NULL past the last. */
const struct rq_target_ops *rq_target_ops_at(size_t i);
/* By name; "sysroot:DIR" finds sysroot.  NULL when unknown. */
const struct rq_target_ops *rq_target_ops_find(const char *name);
/*
 * The targets as a user writes them, in registry order: "hca, rxe-vm, ...,
 * local or sysroot:DIR" (last joins the final two; NULL: sep).
 */
struct sb;
void rq_target_names(struct sb *out, const char *sep, const char *last);

/*
 * Pick a target for a case: forced (--target) or auto.  Fills name and why;
 * returns false (with why) when none applies.
 */
bool rq_target_choose(const struct rq_case *c, const struct rq_run_opts *o,
		      char *name, size_t namesz, char *why, size_t whysz);

#endif
