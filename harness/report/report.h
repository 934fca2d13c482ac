/* SPDX-License-Identifier: MIT */
/*
 * Reporters: junit.xml (Jenkins junit-10 shape), results.json (versioned
 * schema "rdmaqual-results/1") and the console.  They read results only.
 * docs/reports.md describes both file formats.
 *
 * The runner rewrites both files at most once a second and at the end
 * (rq_reports_write, see runreport.h), each through write_file_atomic(), so
 * a run killed at any point leaves valid files holding what had finished.
 */
#ifndef RQ_REPORT_H
#define RQ_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "core/result.h"

struct json_t;

#define RQ_RESULTS_SCHEMA "rdmaqual-results/1"
/* Bytes of a row's log copied into <system-out>; the whole log stays in its file. */
#define RQ_JUNIT_LOG_TAIL (64 * 1024)

/*
 * One run.  Owns its strings (rq_run_info_init/release).  Counts are not
 * stored: reporters derive them from the rows, so they cannot disagree.
 */
struct rq_run_info {
	char *run_id;		/* "20261129T213146Z-1234": start time + pid */
	char *started;		/* ISO 8601 UTC */
	char *finished;		/* NULL while the run is still going */
	char *hostname;
	char *version;		/* rdmaqual version */
	char *argv;		/* the command line, words joined by spaces (display only) */
	struct rq_fact *facts;	/* run-wide environment facts (kernel, rdma_core, ...) */
	size_t nfacts;
	int64_t started_ms;	/* now_ms() at start, for duration */
	double duration_s;	/* set by rq_run_info_finish(); else time so far */
	char *html_extra;	/* owned: sections added to report.html (rq_html_heatmap), or NULL */
	struct json_t *lab;	/* lab runs (--nodes): nodes, pairs, matrices, suspects; else NULL */
};

void rq_run_info_init(struct rq_run_info *ri, const char *version, int argc, char **argv);
/* Add or replace a run-wide fact. */
void rq_run_info_fact(struct rq_run_info *ri, const char *key, const char *value);
/*
 * Whether the run replayed a synthesized node tree (the fact sysroot.origin
 * a sysroot target records from the tree's capture/manifest, qual/sysroot.h):
 * every report says so (results.json run.synthesized, a JUnit property, the
 * page's banner, the console), so no one reads a fixture's verdicts as a
 * machine's.  The fact value a line names: sysroot.synthesized_by.
 */
static inline const char *rq_run_info_fact_get(const struct rq_run_info *ri, const char *key)
{
	for (size_t i = 0; i < ri->nfacts; i++)
		if (!strcmp(ri->facts[i].key, key))
			return ri->facts[i].value;
	return NULL;
}

/* (inline: the reporters use it, and report.c's rq_reports_write uses them) */
static inline bool rq_run_info_synthesized(const struct rq_run_info *ri)
{
	const char *o = rq_run_info_fact_get(ri, "sysroot.origin");

	return o && !strcmp(o, "synthesized");
}
/* Stamp the end of the run (finished, duration_s). */
void rq_run_info_finish(struct rq_run_info *ri);
void rq_run_info_release(struct rq_run_info *ri);

/* junit.xml: render into out, or write atomically to path (0 or -errno). */
void rq_junit_render(struct sb *out, const struct rq_run_info *ri, const struct rq_results *rs);
int rq_junit_write(int dirfd, const char *name, const struct rq_run_info *ri, const struct rq_results *rs);

/* results.json: render (malloc'd string), or write atomically to path. */
char *rq_json_render(const struct rq_run_info *ri, const struct rq_results *rs);
int rq_json_write(int dirfd, const char *name, const struct rq_run_info *ri, const struct rq_results *rs);

/* results.json's document without "results" and "lab": schema, run, facts, counts. */
struct json_t *rq_json_head(const struct rq_run_info *ri, const struct rq_results *rs);

/* All into dir (created if missing): junit.xml, results.json and report.html. */
int rq_reports_write(const char *dir, const struct rq_run_info *ri, const struct rq_results *rs);
/*
 * The same into the run dir open as dirfd (dir: its path, for the page's
 * log tails): every file made and renamed under dirfd, so a link planted
 * in the run dir's place after it was opened gets nothing.
 */
int rq_reports_write_at(int dirfd, const char *dir, const struct rq_run_info *ri,
			const struct rq_results *rs);

/*
 * Console: one line per row, "PASS   name  1.2s  reason", and a summary.
 * Colour only when fd is a TTY and NO_COLOR is unset.  Control characters
 * in names and reasons are shown as '?', so tool output cannot drive the
 * terminal.
 */
bool rq_console_color(int fd);
void rq_console_render_row(struct sb *out, const struct rq_result *r, bool color);
void rq_console_render_summary(struct sb *out, const struct rq_run_info *ri,
			       const struct rq_results *rs, bool color);
void rq_console_row(FILE *f, const struct rq_result *r);
void rq_console_summary(FILE *f, const struct rq_run_info *ri, const struct rq_results *rs);

#endif
