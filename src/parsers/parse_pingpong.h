/* SPDX-License-Identifier: MIT */
/*
 * ibv_{rc,uc,ud,srq}_pingpong and rping output: addresses, the two result
 * lines, the ping lines and CM events, error lines.  Pure: text in,
 * figures out.
 */
#ifndef RQ_PARSE_PINGPONG_H
#define RQ_PARSE_PINGPONG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ibv_{rc,uc,ud,srq}_pingpong output. */
struct pp_addr {
	bool set;
	unsigned lid, qpn, psn;
	char gid[48];
};

struct pp_report {
	struct pp_addr local, remote;
	bool has_bw, has_lat;
	uint64_t bytes;
	double bw_seconds, mbit_per_sec;
	uint64_t iters;
	double lat_seconds, usec_per_iter;
	char error[256];
	unsigned error_line;
};

int pingpong_parse(const char *text, size_t len, struct pp_report *r, char *err, size_t errsz);

/* rping -v (client or server, with or without -d). */
struct rping_report {
	unsigned pings;			/* "ping data: rdma-ping-N: ..." lines */
	long first_seq, last_seq;	/* -1 when none */
	bool in_order;			/* sequence numbers 0,1,2... without gaps */
	bool data_ok;			/* every payload is rping's rotating pattern */
	unsigned bad_line;		/* first line whose payload is wrong */
	bool established, disconnected;	/* ESTABLISHED / DISCONNECT EVENT seen */
	char events[8][40];		/* RDMA_CM_EVENT_* in order (first 8) */
	unsigned nevents;
	char error[256];
	unsigned error_line;
};

int rping_parse(const char *text, size_t len, struct rping_report *r, char *err, size_t errsz);

#endif
