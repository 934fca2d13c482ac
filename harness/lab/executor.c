/* SPDX-License-Identifier: MIT */
/*
 * The lab as a run's executor (exec/run.h): the run object, below lab/,
 * calls these through a table, never by name.  A file of its own, above
 * the rest of the folder: it uses run.c, report.c and lab.c, and they do
 * not use it.
 */
#include <jansson.h>
#include "lab/lab.h"

static void ex_run(void *arg, struct rq_case *const *sel, size_t nsel, struct sched *s,
		   const char *run_dir, struct rq_results *out, const struct rq_run_sink *sink)
{
	cluster_run(arg, sel, nsel, s, run_dir, out, sink);
}

static json_t *ex_report(void *arg, const struct rq_results *rs, char **html)
{
	return cluster_report(arg, rs, html);
}

static size_t ex_synthesized(void *arg, size_t *nodes, char *by, size_t bysz)
{
	return cluster_synthesized(arg, nodes, by, bysz);
}

static void ex_stop(void *arg)
{
	cluster_free(arg);
}

void cluster_executor(struct cluster *cl, struct rq_run_nodes *ex)
{
	*ex = (struct rq_run_nodes){ ex_run, ex_report, ex_synthesized, ex_stop, cl };
}
