/* SPDX-License-Identifier: MIT */
/*
 * RUN/journal.jsonl, the durable record of a run, plain or lab: the
 * command first ({"argv":[...]}), then one line per finished unit
 * ({"unit":KEY,"rows":[...]}), each written whole and fdatasync'd before
 * the unit counts as done.  A torn last line (the runner killed
 * mid-write) is ignored: that unit runs again.  --resume reads it back
 * (after rundir_trust, exec/statedir.h).
 */
#ifndef RQ_EXEC_JOURNAL_H
#define RQ_EXEC_JOURNAL_H

#include <stddef.h>
#include "core/result.h"

struct json_t;

struct rq_journal {
	int fd;			/* appending; -1 when there is none */
	struct json_t *done;	/* after a resume: unit key -> [rows]; else NULL */
};

/* Create RUN/journal.jsonl (O_EXCL, never through a link) with the command line. */
int rq_journal_start(const char *run_dir, int argc, char **argv);
/* The command line a journal starts with; -1 with err. */
int rq_journal_argv(const char *run_dir, int *argc, char ***argv, char *err, size_t errsz);
/*
 * The journal parsed from text (what rq_journal_load reads): its lines that
 * are objects, a torn last line left out.  Exposed for the fuzzer.
 */
struct json_t *rq_journal_parse(char *text);
/*
 * Open RUN/journal.jsonl for appending; with resume, first read the units
 * it has (rq_journal_done).  -errno when it cannot be opened (j->fd -1:
 * the run goes on, and cannot be resumed).
 */
int rq_journal_open(struct rq_journal *j, const char *run_dir, bool resume);
/* The rows a resumed journal has for key (borrowed), or NULL. */
struct json_t *rq_journal_done(const struct rq_journal *j, const char *key);
/* Append one finished unit: its n rows.  0, or -errno (the line may be lost). */
int rq_journal_unit(struct rq_journal *j, const char *key, struct rq_result *const *rows,
		    size_t n);
void rq_journal_close(struct rq_journal *j);

#endif
