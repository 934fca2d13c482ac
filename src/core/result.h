/* SPDX-License-Identifier: MIT */
/*
 * Results: one row per (case, device, port).  Kinds record every judgement
 * through rq_judge(); rq_result_finish() turns the judgements into a
 * verdict so that a row that judged nothing can never PASS.
 */
#ifndef RQ_RESULT_H
#define RQ_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/util.h"

enum rq_verdict {
	RQ_NONE = 0,	/* not decided yet */
	RQ_PASS,
	RQ_FAIL,	/* the system under test broke the property */
	RQ_SKIP,	/* a requirement is unmet or nothing applies; reason says which */
	RQ_ERROR,	/* the harness or environment broke */
};

const char *rq_verdict_name(enum rq_verdict v);	/* "PASS", ... */
int rq_verdict_parse(const char *s, enum rq_verdict *v);
/* How bad a verdict is, for "the worst of": PASS 0 < SKIP 1 < FAIL 2 < ERROR (or undecided) 3. */
int rq_verdict_rank(enum rq_verdict v);

/*
 * A figure's repeats, in a document that folded several runs into one
 * (qual/repeat.h): value is then their median.  Only documents read or
 * merged carry one; rows a run makes never do (the spool and the agent
 * protocol do not carry it).
 */
struct rq_spread {
	size_t n;		/* runs that had the figure */
	double min, max;
	double *samples;	/* each run's value, in run order */
	size_t nsamples;
};

struct rq_figure {
	char *name;	/* "bw_avg", "lat_p99" */
	double value;
	char *unit;	/* "Gb/s", "us", "B" */
	struct rq_spread *spread;	/* NULL: one run's value */
};

struct rq_fact {
	char *key;	/* "kernel", "rdma_core", "fw_ver:mlx5_0" */
	char *value;
};

/* run --repeat N: at most this many rounds */
#define RQ_MAX_REPEAT 1000

struct rq_result {
	char *id;		/* case name, plus "[dev/port]" for per-port rows */
	char *case_name;
	char *kind;
	char *judge;		/* the case's judge: globs, or NULL (the kind's key figures) */
	unsigned repeat;	/* run --repeat: the round (1..N) that made the row; 0: not repeated */
	char *device;		/* NULL for node-wide rows */
	int port;		/* 0 for device- or node-wide rows */
	enum rq_verdict verdict;
	char *reason;		/* one line; required for every non-PASS */
	char *target;		/* "rxe-vm", "sysroot:fixtures/nodes/cx6" */
	char *target_why;	/* why auto chose it, or "forced by --target" */
	unsigned judged;	/* number of rq_judge() calls */
	unsigned failed;	/* number of failed judgements */
	struct rq_figure *figs;	size_t nfigs;
	struct rq_fact *facts;	size_t nfacts;	/* per-row environment facts */
	double duration_s;
	char *log_path;		/* whole log, relative to the report dir */
	struct sb log;		/* captured log text (bounded tail written to JUnit) */
	bool log_of_first;	/* its log is the case log the case's first row holds (not copied) */
	char *file;		/* case file, for reports */
	char *node;		/* lab runs: the node (a pair's client side), else NULL */
	char *peer_node;	/* lab runs: a pair's server side, else NULL */
};

/*
 * A run's rows.  A lab run spools them (rq_results_spool): rows handed to
 * rq_results_spill() go to an unlinked file, so the runner's memory grows
 * with the nodes, not with the rows; v then holds only the rows not yet
 * spilled, which follow the spilled ones (rq_results_total, rq_results_get).
 */
struct rq_spool;
struct rq_results {
	struct rq_result **v;
	size_t n;
	struct rq_spool *spool;		/* NULL: every row is in v */
};

struct rq_result *rq_result_new(const char *case_name, const char *device, int port);
void rq_result_free(struct rq_result *r);
void rq_results_add(struct rq_results *rs, struct rq_result *r);
void rq_results_release(struct rq_results *rs);

/*
 * Record one judgement.  ok=false marks the row as failed; the first failing
 * judgement's message becomes the reason.  Returns ok so callers can chain.
 */
bool rq_judge(struct rq_result *r, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Explain a failed row's reason: "; " and the text go after it, and the
 * log has it as a note.  A row that has not failed is left as it is.
 */
void rq_result_explain(struct rq_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Decide the verdict now (sticky: later judgements don't change it). */
void rq_result_set(struct rq_result *r, enum rq_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rq_figure_add(struct rq_result *r, const char *name, double value, const char *unit);
/* The row's first figure of that name, or NULL (r may be NULL). */
const struct rq_figure *rq_result_figure(const struct rq_result *r, const char *name);
void rq_fact_add(struct rq_result *r, const char *key, const char *value);
/*
 * Turn judgements into a verdict unless one was set: failed>0 -> FAIL,
 * judged==0 -> SKIP "nothing was judged" (plus figures), else PASS.
 */
void rq_result_finish(struct rq_result *r);

/* Whole-run summary. */
struct rq_counts {
	unsigned pass, fail, skip, error, total;
};
void rq_results_count(const struct rq_results *rs, struct rq_counts *c);

/*
 * Spooling (core/spool.c).  rq_results_spool: rows spilled from now on go
 * to an unlinked file made in dir (0, or -errno: rows then stay in memory).
 * rq_results_spill: v's rows into the spool, freed (on a write error they
 * stay in v; nothing is lost).  rq_results_get: row i of all of them, the
 * spilled first; a spilled row is read back into one buffer per spool, so
 * the pointer is good until the next rq_results_get on the same rows.
 */
int rq_results_spool(struct rq_results *rs, const char *dir);
void rq_results_spill(struct rq_results *rs);
size_t rq_results_total(const struct rq_results *rs);
const struct rq_result *rq_results_get(const struct rq_results *rs, size_t i);
/* Exact binary form of a row (every field, the log's raw bytes), and back. */
void rq_result_pack(const struct rq_result *r, struct sb *out);
struct rq_result *rq_result_unpack(const char *buf, size_t len);

/* JSON (jansson) round trip, used by the agent protocol and results.json. */
struct json_t;
struct json_t *rq_result_to_json(const struct rq_result *r, bool with_log);
struct rq_result *rq_result_from_json(struct json_t *j, char *err, size_t errsz);
/*
 * As rq_result_from_json; where the row's own fields are good and a
 * figure's "spread" is not, *bad_row gets the row's id (malloc'd), so that
 * a document's reader can name the row (core/run_doc.h).
 */
struct rq_result *rq_result_from_json_named(struct json_t *j, char **bad_row, char *err, size_t errsz);
/* Give figure i of r a spread (a copy of samples[0..n-1]); replaces one it had. */
void rq_figure_set_spread(struct rq_result *r, size_t i, size_t n, double min, double max,
			  const double *samples, size_t nsamples);

#endif
