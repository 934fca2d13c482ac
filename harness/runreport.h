/* SPDX-License-Identifier: MIT */
/*
 * Glue between the run loop and the reporters (report.h): the console line
 * per row, and junit.xml + results.json rewritten atomically after every
 * case, so a run killed at any point leaves valid reports of what finished.
 */
#ifndef RQ_RUNREPORT_H
#define RQ_RUNREPORT_H

#include "report.h"
#include "core/result.h"
#include "sched.h"

struct runrep {
	char *dir;
	struct rq_run_info info;
	int write_errors;	/* report or log writes that failed: the run exits 1 */
};

void runrep_init(struct runrep *r, const char *dir, const char *run_id, int argc, char **argv);
void runrep_begin(struct runrep *r, struct rq_results *rs);
void runrep_row(struct runrep *r, const struct rq_result *row);
/* Run-wide facts of the targets opened so far. */
void runrep_facts(struct runrep *r, struct sched *s);
void runrep_flush(struct runrep *r, struct rq_results *rs);
void runrep_end(struct runrep *r, struct rq_results *rs);
void runrep_release(struct runrep *r);
/* Count (and say) a failed write of what (a path) with -errno err. */
void runrep_write_failed(struct runrep *r, const char *what, int err);

#endif
