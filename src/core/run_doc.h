/* SPDX-License-Identifier: MIT */
/*
 * A run's results.json (schema "rdmaqual-results/1", docs/reports.md) read
 * back: the one reader of the document the runner writes
 * (harness/report/json.c, rows by rq_result_to_json).  compare, qualify,
 * baseline, history, repeat and the pages read runs through this, so the
 * document's keys are spelled only here and in its writers.
 *
 * A document is read whole (rq_run_doc_from_json) or a row at a time
 * (rq_run_doc_load streams the file: two 112 MB files took 1.6 GB as
 * jansson trees).  Faults are kept as they are found and reported by
 * rq_run_doc_check in a fixed order: the head's (schema, "results",
 * "facts"), then the first bad row's, named by its position.
 */
#ifndef RQ_RUN_DOC_H
#define RQ_RUN_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include "core/result.h"

#define RQ_RUN_DOC_SCHEMA "rdmaqual-results/1"

struct json_t;

/* "run": who made the document, and whether it saw the run's end. */
struct rq_run_head {
	char *id, *started, *finished, *hostname, *version, *argv;	/* NULL: absent or not a string */
	bool complete;
	bool synthesized;	/* a replay of a synthesized tree: a fixture's verdicts */
	double duration_s;
	unsigned repeats;	/* a merged document's runs (qual/repeat.h); 0 otherwise */
};

/* Options of a reader, set before rows come. */
enum {
	/* keep of each row only what compare reads (id, kind, judge, verdict, reason, target, device, figures, facts) */
	RQ_RUN_DOC_COMPACT = 1 << 0,
};

struct rq_run_doc {
	unsigned flags;			/* RQ_RUN_DOC_* */
	/*
	 * A row check above this layer (compare refuses negative rates): 0,
	 * or -EINVAL and a reason; the row is then the document's fault.
	 */
	int (*check_row)(const struct rq_result *r, char *err, size_t errsz);

	/* every key as read, "results" maybe a null in its place (owned); NULL: not an object */
	struct json_t *head;
	char *schema;			/* NULL: none or not a string */
	bool has_run;			/* "run" is an object */
	struct rq_run_head run;
	struct rq_fact *facts;		/* run-wide environment facts, in document order */
	size_t nfacts;
	struct rq_counts counts;	/* as written */
	struct json_t *lab;		/* a lab run's "lab" (borrowed from head), else NULL */

	struct rq_result **rows;	/* "results", document order */
	size_t n, cap;

	/* reading */
	bool results_array;		/* "results" is an array */
	size_t seen;			/* rows of "results" so far, good or bad */
	char *row_err;			/* the first bad row, or NULL */
	char *head_err;			/* the head's fault before "results", or NULL */
	char *facts_err;		/* "facts" that are not strings, or NULL */
};

void rq_run_doc_init(struct rq_run_doc *d);
void rq_run_doc_release(struct rq_run_doc *d);

/*
 * Streaming: rq_run_doc_init (flags, check_row set after), then
 * rq_run_doc_results(d, true) at a "results" array (false for a "results"
 * that is not one: its rows so far are dropped, as a later key wins),
 * rq_run_doc_row for each element, and rq_run_doc_head once every other key
 * is known: head is an object of them (the reference is taken; NULL for a
 * document that is not an object).
 */
void rq_run_doc_results(struct rq_run_doc *d, bool array);
void rq_run_doc_row(struct rq_run_doc *d, struct json_t *row);
void rq_run_doc_head(struct rq_run_doc *d, struct json_t *head);

/* A parsed document, whole (the reference is taken).  Then rq_run_doc_check. */
void rq_run_doc_from_json(struct rq_run_doc *d, struct json_t *doc);
/* 0, or -EINVAL and what is wrong (the first fault, in the order above). */
int rq_run_doc_check(const struct rq_run_doc *d, char *err, size_t errsz);

/*
 * Read the results.json at path (after rq_run_doc_init and its options):
 * a row at a time, or whole when the file is not what the small streaming
 * reader expects, for jansson's word on it.  0, or -errno / -EINVAL with
 * err "PATH: what is wrong"; the document is checked (rq_run_doc_check).
 */
int rq_run_doc_load(struct rq_run_doc *d, const char *path, char *err, size_t errsz);
/* The largest results.json read: read_file's bound, ~240k rows. */
#define RQ_RUN_DOC_MAX (256u << 20)

/* The first row whose id is id (a run --repeat's rounds share one), or NULL. */
struct rq_result *rq_run_doc_find(const struct rq_run_doc *d, const char *id);
/* A run-wide fact's value, or NULL. */
const char *rq_run_doc_fact(const struct rq_run_doc *d, const char *key);

/*
 * The document again, as its writer wrote it: head's keys in their order,
 * "run" with complete and repeats (when not 0) as d has them, "counts"
 * from d->counts, "results" from d->rows (rq_result_to_json).  A merged
 * document (qual/repeat.c) is written so.
 */
struct json_t *rq_run_doc_to_json(const struct rq_run_doc *d);

#endif
