/* SPDX-License-Identifier: MIT */
/*
 * run --jobs: the targets of a plain run in parallel.  Cases on different
 * targets share nothing, so the plan's cases are grouped by the target
 * sched_choose picks; each group of a target marked `parallel` (ibsim,
 * sysroot:DIR, local; core/target.h) runs in a forked worker with a struct
 * sched of its own, which opens and closes its targets itself and sends
 * each case's rows back packed (rq_result_pack) over a pipe.  The rest
 * (rxe-vm, hca, rxe-host, cases with no target, and `local` when a target
 * that changes the host is in the plan) runs here, in the runner, as
 * before.  At most jobs groups run at once: the runner's own and jobs - 1
 * workers (jobs without one); a worker given more than one group runs them
 * one after the other.
 *
 * Rows are handed to emit in plan order, whatever order they come in, so
 * the console, the logs, the journal and the reports are those of a serial
 * run but for the times.  Every wait has a deadline: a worker that dies,
 * or takes longer than its case's timeout and an allowance, is killed and
 * its cases become ERROR rows that name it; none is lost and none hangs.
 * SIGINT and SIGTERM reach the workers (SIGTERM is passed on), which stop
 * after the case they hold and close their targets (daemons, scratch);
 * a worker whose runner dies gets SIGTERM (PR_SET_PDEATHSIG).
 */
#ifndef RQ_EXEC_PAR_H
#define RQ_EXEC_PAR_H

#include <stdbool.h>
#include <stddef.h>
#include "core/case.h"
#include "core/result.h"
#include "exec/sched.h"

struct rq_run_info;

/* The rows of plan item k (moved out of rows), in plan order; in_tick: from inside a case's wait. */
typedef void (*par_emit_fn)(void *arg, size_t k, struct rq_results *rows, bool in_tick);

struct par_target {
	char *name;
	bool parent;			/* runs in the runner, not in a worker */
	unsigned lane;			/* 0: the runner; 1..: a worker */
	struct rq_result *facts;	/* a worker's: what its facts() said before it closed */
	struct sched_time *time;	/* a worker's profile entries */
	size_t ntime;
};

struct par_worker;

struct par {
	/* set by the caller */
	struct sched *s;		/* the runner's (its tick is the run's reports) */
	struct rq_case *const *sel;
	size_t nsel, total;		/* item k is sel[k % nsel] (--repeat: round by round) */
	unsigned jobs;
	par_emit_fn emit;
	void *arg;
	/* set by par_plan */
	struct par_target *tg;		/* the plan's targets in first-use order */
	size_t ntg;
	int *item_tg;			/* item -> tg index, -1: no target (a SKIP) */
	unsigned nworkers;
	/* set by par_run */
	size_t ran;			/* items whose rows were emitted */
	struct par_worker *w;
	struct par_slot *slot;
	size_t next;			/* the first item not emitted */
	void (*run_tick)(void *);	/* the run's tick, called from ours */
	void *run_tick_arg;
	bool busy;			/* the runner is in a case of its own */
	bool termed;
};

/* The jobs of a host: RQ_JOBS, else the online CPUs (at least 1). */
unsigned par_default_jobs(void);
/*
 * Group the plan; the number of groups that would run at once (1: run it
 * serially, par_run is not needed).
 */
unsigned par_plan(struct par *p);
/* Run the plan (after par_plan returned more than 1). */
void par_run(struct par *p);
/*
 * The targets' facts in the order a serial run adds them (targets in the
 * order their first case comes), the workers' as they sent them, the
 * runner's asked now: info's facts past its first n0 are replaced.
 */
void par_facts(struct par *p, struct rq_run_info *info, size_t n0);
/*
 * While the run goes on: the facts the workers have sent so far join
 * info (a worker sends its targets' after each case that opened one), so
 * a report written mid-run has them; par_facts puts them in order at the end.
 */
void par_facts_so_far(const struct par *p, struct rq_run_info *info);
/* After sched_close(p->s): the workers' profile entries join the runner's. */
void par_profile_merge(struct par *p);
void par_release(struct par *p);

#endif
