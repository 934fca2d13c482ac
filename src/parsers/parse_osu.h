/* SPDX-License-Identifier: MIT */
/*
 * OSU micro-benchmarks (OMB) output, every test of the suite: a banner,
 * optional settings lines, a column header, then one row per size:
 *
 *   # OSU MPI Allreduce Latency Test v7.5
 *   # Datatype: MPI_CHAR.
 *   # Size       Avg Latency(us)
 *   4                      10.29
 *
 * The columns differ by test and option (`-f` adds Min/Max/Iterations,
 * osu_mbw_mr prints MB/s and Messages/s, `-c` adds Validation, `-z` adds
 * percentiles), and their order around the header differs by release
 * (7.1 prints `# Datatype` after the header, 7.2 before), so columns are
 * read from the header by name, never by position.  Lines before the banner
 * (a launcher's echo, a job script's banner) are not OMB's and are skipped;
 * so are lines inside the table that are not rows (an MPI library's
 * warning).  A row that does not have the header's columns is an error.
 *
 * Units are OMB's: latencies in microseconds, bandwidth in MB/s (10^6 B/s).
 */
#ifndef RQ_PARSE_OSU_H
#define RQ_PARSE_OSU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a column holds, by its header name. */
enum osu_col {
	OSU_COL_OTHER,		/* kept by its header name */
	OSU_COL_LAT,		/* "Latency (us)", "Avg Latency(us)" */
	OSU_COL_LAT_MIN,
	OSU_COL_LAT_MAX,
	OSU_COL_BW,		/* "Bandwidth (MB/s)", "MB/s" */
	OSU_COL_MSG_RATE,	/* "Messages/s" */
	OSU_COL_ITERS,
	OSU_COL_VALID,		/* "Validation": Pass / Fail */
};

#define OSU_COLS_MAX 12

struct osu_row {
	uint64_t size;
	double v[OSU_COLS_MAX];	/* by column; Validation: 1 pass, 0 fail */
};

struct osu_report {
	char test[96];		/* "Allreduce Latency Test" */
	char version[16];	/* "7.5" */
	char datatype[32];	/* "MPI_CHAR" ("" not printed) */
	unsigned pairs, window;	/* osu_mbw_mr's "[ pairs: N ] [ window size: W ]" */
	unsigned ncols;		/* after Size */
	char col_name[OSU_COLS_MAX][32];
	enum osu_col col[OSU_COLS_MAX];
	struct osu_row *row;
	size_t nrows;
	unsigned failed_rows;	/* rows whose Validation says Fail */
};

/* 0 (nrows may be 0: the run died before its first size), or -EINVAL. */
int osu_parse(const char *text, size_t len, struct osu_report *r, char *err, size_t errsz);
void osu_release(struct osu_report *r);
/* The index of the first column of that kind, or -1. */
int osu_col_find(const struct osu_report *r, enum osu_col c);

#endif
