/* SPDX-License-Identifier: MIT */
/*
 * nccl-tests output (all_reduce_perf, all_gather_perf, alltoall_perf,
 * reduce_scatter_perf, broadcast_perf, ...):
 *
 *   # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) ...
 *   #  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] NVIDIA H100 80GB HBM3
 *   #       size  count  type  redop  root  time algbw busbw #wrong  time algbw busbw #wrong
 *             8      2  float   sum    -1  135.8  0.00  0.00      0  123.5  0.00  0.00      0
 *   # Out of bounds values : 0 OK
 *   # Avg bus bandwidth    : 70.742
 *
 * Two layouts exist: the current one (root and #wrong columns, "Group" in
 * the rank lines) and the older one (an "error" column, a maximum error or
 * N/A, and no root).  Cells may be empty (alltoall leaves redop blank in
 * the old layout), so a row is read from both ends: size, count and type
 * first, the eight out-of-place and in-place figures last, redop and root
 * what is left between.  "N/A" under #wrong or error is no reading.  NCCL's
 * own log lines ("host:pid:tid [0] NCCL INFO ...") may sit inside the
 * table and are skipped.  Times in microseconds, algbw and busbw in GB/s
 * (10^9 B/s), as nccl-tests prints them.
 */
#ifndef RQ_PARSE_NCCL_H
#define RQ_PARSE_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nccl_half {		/* out-of-place or in-place */
	double time_us, algbw, busbw;
	long long wrong;	/* #wrong; -1: N/A, or the old layout */
	double error;		/* old layout's max error; -1: N/A or the new layout */
};

struct nccl_row {
	uint64_t size, count;
	char type[16], redop[16];
	int root;		/* -1 when printed -1 or absent */
	struct nccl_half oop, ip;
};

struct nccl_rank {
	int rank, group;	/* group -1: the old layout */
	long pid;
	char host[64];
	int device;
	char busid[24];
	char name[64];
};

struct nccl_report {
	bool new_layout;	/* "#wrong" (else "error") */
	unsigned nthread, ngpus;
	uint64_t min_bytes, max_bytes;
	unsigned warmup_iters, iters;
	int validation;		/* -1: not printed */
	struct nccl_rank *rank;
	size_t nranks;
	struct nccl_row *row;
	size_t nrows;
	bool has_oob;
	unsigned long long oob;	/* "Out of bounds values : N OK|FAILED" */
	bool oob_ok;
	bool has_avg_busbw;
	double avg_busbw;
};

/* 0 (nrows may be 0: the run died in its first size), or -EINVAL. */
int nccl_parse(const char *text, size_t len, struct nccl_report *r, char *err, size_t errsz);
void nccl_release(struct nccl_report *r);

#endif
