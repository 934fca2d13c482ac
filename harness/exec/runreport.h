/* SPDX-License-Identifier: MIT */
/*
 * Glue between the run loop and the reporters (report.h): the console line
 * per row; journal.jsonl, to which each case's rows are appended and fsynced
 * once, so a run killed at any point has a durable record of every case
 * that finished; and junit.xml, results.json and report.html, rewritten
 * atomically at most once a second (also while a long case runs) and at the
 * end, so that they stay valid at every moment and lag the journal by a
 * second at most.  Rewriting every report after every case made the run
 * quadratic in its cases and cost 8 fsyncs a case.
 */
#ifndef RQ_RUNREPORT_H
#define RQ_RUNREPORT_H

#include "exec/journal.h"
#include "report/report.h"
#include "core/result.h"
#include "exec/sched.h"

struct runrep {
	char *dir;
	struct rq_run_info info;
	int write_errors;	/* report or log writes that failed: the run exits 1 */
	struct rq_journal journal;	/* fd -1 when it could not be made */
	int run_fd;		/* RUN, opened once when made (run.c open_run_dir); reports go in by it */
	int logs_fd;		/* RUN/logs, opened O_DIRECTORY|O_NOFOLLOW; logs go in by openat */
	int64_t flushed_ms;	/* when the reports were last rewritten */
	bool dirty;		/* rows the reports do not have yet */
	struct rq_results *rs;	/* the run's rows, for runrep_tick */
	struct sched *sched;	/* for the targets' facts; NULL once closed */
};

void runrep_init(struct runrep *r, const char *dir, const char *run_id, int argc, char **argv);
void runrep_begin(struct runrep *r, struct rq_results *rs);
void runrep_row(struct runrep *r, const struct rq_result *row);
/* Run-wide facts of the targets opened so far. */
void runrep_facts(struct runrep *r, struct sched *s);
void runrep_flush(struct runrep *r, struct rq_results *rs);
/*
 * Append to RUN/journal.jsonl (made by rq_journal_start, its first line
 * the run's command) from now on; 0 or -errno (counted as a write failure).
 */
int runrep_journal_open(struct runrep *r);
/*
 * After a case: its rows (rs->v[first] on) appended to the journal as one
 * line {"unit": NAME, "rows": [...]}, and the reports rewritten when a
 * second has passed since the last time.
 */
void runrep_case(struct runrep *r, const char *unit, struct rq_results *rs, size_t first);
/* sched's tick (arg: the runrep): rewrite the reports when rows wait. */
void runrep_tick(void *arg);
void runrep_end(struct runrep *r, struct rq_results *rs);
void runrep_release(struct runrep *r);
/* Count (and say) a failed write of what (a path) with -errno err. */
void runrep_write_failed(struct runrep *r, const char *what, int err);

#endif
