/* SPDX-License-Identifier: MIT */
/*
 * Lab runs (`rdmaqual run --nodes LIST`): one agent per node, started by a
 * launcher (ssh, Slurm's srun, or local processes), node-local cases on
 * every node at once, two-sided cases between nodes in rounds of a pairing
 * policy over their aligned rails, and one report with a node x node
 * matrix per two-sided case, the suspects and a drain list.
 * docs/cluster.md is the user's side of this.
 */
#ifndef RQ_CLUSTER_H
#define RQ_CLUSTER_H

#include <stdbool.h>
#include "core/case.h"
#include "core/result.h"
#include "core/target.h"
#include "exec/run.h"
#include "exec/sched.h"

struct cluster_opts {
	const char *nodes;		/* --nodes LIST | @FILE | slurm */
	const char *launcher;		/* --launcher ssh|slurm|local (NULL: slurm for "slurm", else ssh) */
	unsigned fanout;		/* --fanout K: agents started and cases in flight at once */
	const char *pairs;		/* --pairs ring|all|A:B,...: the run's pairing policy */
	const char *drain_list;		/* --drain-list FILE */
	const char *resume;		/* --resume RUN: the run dir being completed */
	unsigned repeat;		/* --repeat N: the suite N times, round by round (0, 1: once) */
};

struct cluster;

/* Parse nodes and the policy; NULL with err (a usage error). */
struct cluster *cluster_new(const struct cluster_opts *co, const struct rq_run_opts *o,
			    char *err, size_t errsz);
/* The case keys a lab run owns (pairs:), handed to the loader at start. */
extern const struct rq_key_owner rq_lab_keys;
void rq_lab_install(void);
/* Cases' own pairs: name nodes of this run?  0, or -1 with err (a usage error). */
int cluster_check_cases(struct cluster *cl, struct rq_case *const *sel, size_t nsel,
			char *err, size_t errsz);
/* --dry-run: the nodes, each case's placement and the rounds. */
void cluster_dry_run(struct cluster *cl, struct rq_case *const *sel, size_t nsel);
/*
 * Start the agents, run the cases, append rows to out (through sink).
 * Cases with no target or that need a fabric run once, on the controller,
 * through s.  run_dir holds journal.jsonl (for --resume).
 */
void cluster_run(struct cluster *cl, struct rq_case *const *sel, size_t nsel, struct sched *s,
		 const char *run_dir, struct rq_results *out, const struct rq_run_sink *sink);
/*
 * The lab part of the report: a JSON object (nodes, pairs, matrices,
 * suspects) for results.json; prints the matrices and suspects; writes
 * the drain list.  Caller json_decref.  *html: report.html's heat maps of
 * the matrices (malloc'd), or NULL.
 */
struct json_t *cluster_report(struct cluster *cl, const struct rq_results *rs, char **html);
/*
 * With --target sysroot:DIR: how many of the *nodes replay a synthesized
 * tree (qual/sysroot.h), and what made the first (by), so the lab run's
 * reports say so as a plain replay's do.
 */
size_t cluster_synthesized(const struct cluster *cl, size_t *nodes, char *by, size_t bysz);
/* Stop every node's agent (also after an interrupt); then free. */
void cluster_free(struct cluster *cl);
/*
 * The lab as the run's executor (exec/run.h): cluster_run, cluster_report,
 * cluster_synthesized, and cluster_free as its stop, which the run calls.
 */
void cluster_executor(struct cluster *cl, struct rq_run_nodes *ex);

#endif
