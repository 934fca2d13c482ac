/* SPDX-License-Identifier: MIT */
/*
 * The run object: one run of a suite, whoever runs its cases.  It owns
 * what every run has, so that a plain run and a lab run cannot drift apart:
 *
 *   - the report dir, and the run dir in it (made with mkdir, or the
 *     interrupted run's own for --resume), opened once and written by fd;
 *   - the node lock and the cleanup of what a killed run left (statedir.h);
 *   - journal.jsonl, each case's log under logs/, and the reports
 *     rewritten while the run goes on (runreport.h);
 *   - the signals that stop it, the baseline's judgement of each row,
 *     --repeat's rounds, the profile, and the exit status.
 *
 * The cases run here, case by case or in workers beside the runner
 * (par.h), or in an executor handed in: the lab's, which runs them on
 * many nodes at once and sends its rows back through a sink (lab/lab.h).
 * exec/ sits below lab/, so the lab comes in as a table of functions.
 *
 * qualify runs each of its two sides as a child `rdmaqual run`, not by
 * calling this: docs/architecture.md says why a process is the better
 * boundary there.
 */
#ifndef RQ_EXEC_RUN_H
#define RQ_EXEC_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include "core/case.h"
#include "core/result.h"
#include "core/target.h"
#include "exec/sched.h"

struct json_t;
struct rq_baseline;

/* The exit status of a run and of every command (0: green). */
enum { RQ_EXIT_OK = 0, RQ_EXIT_FAIL = 1, RQ_EXIT_USAGE = 2 };

/* Where an executor's rows go: the run's console line, log file and reports. */
struct rq_run_sink {
	void (*row)(void *arg, struct rq_result *r);	/* r is then owned by the results */
	void (*flush)(void *arg);			/* after a case: the reports may be rewritten */
	void (*spill)(void *arg);			/* after a unit's rows are journaled: they may leave memory */
	void *arg;
};

/*
 * A run over many nodes.  The executor journals its own units (for its
 * --resume), rounds its own --repeat, and stops every node's work in
 * stop(), which the run calls once, on every path, before its report is
 * final; stop also frees arg.
 */
struct rq_run_nodes {
	void (*run)(void *arg, struct rq_case *const *sel, size_t nsel, struct sched *s,
		    const char *run_dir, struct rq_results *out, const struct rq_run_sink *sink);
	/* results.json's "lab" object (caller json_decref); *html: report.html's part, or NULL */
	struct json_t *(*report)(void *arg, const struct rq_results *rs, char **html);
	/* how many of *nodes replay a synthesized tree (--target sysroot:), made by by */
	size_t (*synthesized)(void *arg, size_t *nodes, char *by, size_t bysz);
	void (*stop)(void *arg);
	void *arg;
};

struct rq_run {
	struct rq_run_opts *o;		/* o->state_dir, o->run_dir are set by the run */
	struct rq_case *const *sel;	/* the plan, in order */
	size_t nsel;
	unsigned repeat;		/* rounds (0, 1: once) */
	unsigned jobs;			/* --jobs (0: par_default_jobs) */
	const char *report_dir;		/* "reports" */
	const char *resume;		/* the run dir being completed (checked: rundir_trust), or NULL */
	struct rq_baseline *baseline;	/* judges each row when its doc is loaded; never NULL */
	struct rq_run_nodes *nodes;	/* a lab run's executor, or NULL */
	bool fail_on_skip, profile;
	bool made_report_dir;		/* the caller made report_dir: removed if the run cannot start */
	int argc;			/* the run's command, for the journal and the reports */
	char **argv;
};

/*
 * Run the plan and write its reports: RQ_EXIT_OK, RQ_EXIT_FAIL (a row
 * failed or erred, a skip with fail_on_skip, a signal, a report write
 * that failed, a node lock or a run dir that could not be had).
 * Interrupted, it still leaves a valid report of what finished.
 */
int rq_run_suite(struct rq_run *run);

#endif
