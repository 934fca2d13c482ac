/* SPDX-License-Identifier: MIT */
/*
 * perftest output (ib_{write,read,send,atomic}_{bw,lat}): the header block,
 * the result table (bandwidth or latency), the "Version:" line of -V, error
 * lines, and the --out_json file of both the 4.5 build (not valid JSON:
 * bare keys, trailing commas) and newer builds (valid JSON).
 *
 * Pure: text in, figures out.  Units are kept as the tool printed them
 * (MB/sec and MiB/sec are both 2^20 bytes per second, Gb/sec is 10^9
 * bit/s); pt_gbps() converts.
 */
#ifndef RQ_PARSE_PERFTEST_H
#define RQ_PARSE_PERFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pt_kind { PT_UNKNOWN = 0, PT_BW, PT_LAT };
enum pt_unit { PT_UNIT_NONE = 0, PT_MBS, PT_MIBS, PT_GBS };

/* Columns a table can have; a row fills those its header named. */
enum pt_col {
	PT_C_BYTES, PT_C_ITERS, PT_C_BW_PEAK, PT_C_BW_AVG, PT_C_MSGRATE,
	PT_C_T_MIN, PT_C_T_MAX, PT_C_T_TYPICAL, PT_C_T_AVG, PT_C_T_STDEV,
	PT_C_P99, PT_C_P999, PT_C_TPS, PT_C_SL,
	PT_NCOLS
};

struct pt_row {
	uint64_t bytes, iters;
	double v[PT_NCOLS];	/* NAN where the table had no such column */
	unsigned line;		/* 1-based line of the row in the input */
};

struct pt_report {
	enum pt_kind kind;
	enum pt_unit unit;		/* bandwidth unit from the table header */
	char test[64];			/* "RDMA_Write BW", "Send Latency" */
	char device[64];
	char conn[16];			/* "RC" */
	char link_type[16];		/* "Ethernet", "IB" */
	char version[32];		/* from "Version: 6.06" (-V), or "" */
	int mtu;			/* 0 unknown */
	int gid_index;			/* -1 unknown */
	int qps;			/* 0 unknown */
	int tx_depth;			/* 0 unknown (servers print none) */
	bool server;			/* "Waiting for client to connect" seen */
	bool json;			/* came from --out_json */
	bool json_strict;		/* ... and it was valid JSON */
	char error[256];		/* first error line, or "" */
	unsigned error_line;
	struct pt_row *rows;		/* in input order (a repeated row stays) */
	size_t nrows;
};

void pt_report_init(struct pt_report *r);
void pt_report_release(struct pt_report *r);

/*
 * Parse text or JSON output.  Returns 0 when the text is perftest output
 * (a result table, a Version line, a header or a recognised error), with
 * r filled; -EINVAL with err "line N: ..." when it is not, or when a table
 * row does not fit its header.  A run that failed parses fine: r->error
 * set, no rows.
 */
int perftest_parse(const char *text, size_t len, struct pt_report *r, char *err, size_t errsz);

/* The last row with this message size, or NULL. */
const struct pt_row *pt_find_row(const struct pt_report *r, uint64_t bytes);
/* Bandwidth value in Gb/s (10^9 bit/s) from a value in r's unit; NAN if unknown. */
double pt_gbps(const struct pt_report *r, double v);
const char *pt_unit_name(enum pt_unit u);	/* "MB/sec", ... */
const char *pt_col_name(enum pt_col c);		/* JSON key: "bw_peak", "t_typical" ... */

#endif
