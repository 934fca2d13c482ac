/* SPDX-License-Identifier: MIT */
/*
 * The output of rdmaqual's own MPI benchmark, rdmaqual-coll (its format is
 * described at the top of mpi/rdmaqual-coll.c):
 *
 *   # rdmaqual-coll 1 op allreduce nranks 4 type int32 iters 20 warmup 5 check 1
 *   # rank 0 host vm0 pid 311
 *   #  size  count  time_avg  time_min  time_max  algbw  busbw  #wrong  min_rank  max_rank
 *   8  2  12.31  11.02  14.10  0.001  0.001  0  2  3
 *   # ranks 8: 12.00 11.02 14.10 12.11
 *   # pairs 8: 0>1 0.01 1>2 0.01 2>3 0.01 3>0 0.01
 *   # aggregate 8: 0.04
 *   # wrong 8: rank 2 host vm2 elements 1 first 1 got 5 expected 10
 *   # end wrong 0
 *   # counters host vm1 port rxe0/1 unit pkts xmit 318 rcv 301
 *   # counters host vm2 none
 *   # cpu rank 0 host vm0 user_s 0.412 sys_s 0.108
 *   # node host vm0 busy_s 1.930 softirq_s 0.210
 *
 * Times in microseconds, bandwidths in GB/s (10^9 B/s).  A run that died
 * half-way has the rows it printed and no "end" line (ended false).
 */
#ifndef RQ_PARSE_COLL_H
#define RQ_PARSE_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_RANKS_MAX 4096

struct coll_row {
	uint64_t size, count;
	double avg_us, min_us, max_us, algbw, busbw;
	unsigned long long wrong;
	int min_rank, max_rank;
	double *rank_us;	/* nranks times, NULL when no "# ranks" line */
	double *pair_bw;	/* ring/bisection: rank r's link to pair_to[r], GB/s */
	int *pair_to;
	bool has_aggregate;
	double aggregate;
};

struct coll_wrong {
	uint64_t size;
	int rank;
	char host[64];
	unsigned long long elements;
	uint64_t first;
	long long got, expected;
};

/* What one node's RDMA port carried during the run (grown by, not totals). */
struct coll_counter {
	char host[64];
	char port[80];		/* dev/port; empty when the node had none */
	bool words;		/* data counters in 4-byte words; else packets */
	unsigned long long xmit, rcv;
};

/* One node's CPU over the run, from /proc/stat: busy (all but idle), softirq. */
struct coll_node_cpu {
	char host[64];
	double busy_s, softirq_s;
};

struct coll_report {
	char op[24];
	int nranks;
	unsigned iters, warmup;
	bool check;
	char (*host)[64];	/* per rank */
	long *pid;
	struct coll_row *row;
	size_t nrows;
	struct coll_wrong *wrong;
	size_t nwrong;
	bool ended;		/* "# end wrong N" seen */
	unsigned long long total_wrong;
	struct coll_counter *counter;
	size_t ncounters;
	double *user_s, *sys_s;		/* per rank, NAN where no "# cpu" line */
	struct coll_node_cpu *node;
	size_t nnodes;
};

int coll_parse(const char *text, size_t len, struct coll_report *r, char *err, size_t errsz);
void coll_release(struct coll_report *r);

#endif
