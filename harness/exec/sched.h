/* SPDX-License-Identifier: MIT */
/*
 * The scheduler: cases -> a plan (case x target) -> agents -> rows.
 * Targets are opened lazily, once, and reused (a VM boots once per run).
 */
#ifndef RQ_SCHED_H
#define RQ_SCHED_H

#include <signal.h>
#include <stdio.h>
#include "core/case.h"
#include "core/result.h"
#include "core/target.h"


/*
 * Where a run's time went, by target (run --profile): opening it (a boot),
 * then per case the placement (a fresh guest, an SM that settles), the run
 * itself and the teardown, then closing it.  Wall seconds; a target's
 * entry outlives sched_close, which adds its close time.
 */
struct sched_time {
	char target[64];
	unsigned cases;
	double open_s, place_s, run_s, unplace_s, close_s;
};

struct sched {
	const struct rq_run_opts *opts;
	struct rq_target **targets;
	size_t ntargets;
	struct sched_time *time;	/* [i]: targets[i]'s, kept after close */
	size_t ntime;
	unsigned case_seq;	/* for distinct out-of-band ports */
	/*
	 * run --jobs: the runner's pid, which every worker's ports are made
	 * of (with case_seq the plan index), so that two cases running at once
	 * on this host never pick one port; 0: this process's own.
	 */
	int port_pid;
	/*
	 * Called about once a second while a case runs (the run's reports are
	 * rewritten at most once a second, and a long case must not hold back
	 * the rows of those before it).  NULL: nothing.
	 */
	void (*tick)(void *arg);
	void *tick_arg;
};

/* Run one case; appends its rows (at least one) to out. */
void sched_run_case(struct sched *s, const struct rq_case *c, struct rq_results *out);
/* The target a case would run on, and why (dry run, reports). */
bool sched_choose(struct sched *s, const struct rq_case *c, char *name, size_t namesz,
		  char *why, size_t whysz);
/* Environment facts of every target opened so far. */
void sched_facts(struct sched *s, struct rq_result *sink);
void sched_close(struct sched *s);
/* The time table, a row a target and their total (stdout of run --profile). */
void sched_profile_print(const struct sched *s, FILE *fp);
/* The same as facts of the run ("profile.TARGET": "open 6.0 s, 12 cases: ..."). */
struct rq_run_info;
void sched_profile_facts(const struct sched *s, struct rq_run_info *info);
void sched_profile_release(struct sched *s);

#endif
