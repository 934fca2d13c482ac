/* SPDX-License-Identifier: MIT */
/*
 * What the subnet-manager and fabric kinds share: the keys that pick the
 * simulated fabric and the expected topology, the target's parameters
 * (ctx->where), tools run through rq_tool, and the port list of a fabric.
 */
#ifndef RQ_IBKIND_H
#define RQ_IBKIND_H

#include <stdbool.h>
#include "parsers/ibnet.h"
#include "rdma/ibsm.h"
#include "core/kind.h"

struct sb;

/*
 * The key row every fabric kind has (expect_topology); placed first in each
 * kind's cfg struct.  The fabric to simulate (fabric:, fabric_sm:) is a
 * common key of the kinds with needs_fabric: the ibsim target reads it.
 */
struct ibkind_cfg {
	char *expect_topology;
};

#define IBKIND_KEYS									\
	{ .name = "expect_topology", .type = KEY_STR,					\
	  .offset = offsetof(struct ibkind_cfg, expect_topology),			\
	  .help = "the topology the fabric is judged against (net or ibnetdiscover file); default: the simulated fabric's" }

/* The case file for relative paths: the target's absolute one, else the loaded name. */
const char *ibkind_case_file(struct rq_ctx *ctx);
/*
 * A file a case names (config:, file:): absolute; else relative to the case
 * file, to the rdmaqual tree (next to the binary, or two up from
 * build/san/), or to the current directory.  0, or -ENOENT with err.
 */
int ibkind_find_file(struct rq_ctx *ctx, const char *case_file, const char *name, char *out,
		     size_t outsz, char *err, size_t errsz);
/* Tools through rq_tool (logged, replayable). */
void ibkind_tools(struct rq_ctx *ctx, struct ibsm_tools *t);
/*
 * The expected topology: expect_topology, else a generated fabric's plan, else
 * the simulated fabric.
 * 1 loaded, 0 none named (real fabric without one), -1 error (judged ERROR into ctx->main).
 */
int ibkind_expected(struct rq_ctx *ctx, const struct ibkind_cfg *cfg, struct ibnet *net);
/* Tail of a file appended to the case log under a heading (opensm's log). */
void ibkind_log_file(struct rq_ctx *ctx, const char *heading, const char *path, size_t max);
/*
 * The lines of opensm's log that contain needle, each as opensm wrote its
 * message (what follows "-> "), "; "-separated into out, at most max; the
 * count of all of them (0 also when the log cannot be read).
 */
struct sb;
unsigned ibkind_log_lines(const char *log, const char *needle, struct sb *out, unsigned max);
/*
 * One problem more in a row's reason: *n counts them all, msg names the
 * first five ("; "-separated), so a fabric-wide fault stays one line.
 */
void ibkind_problem(struct sb *msg, unsigned *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Read an SM-written table (SL2VL, VLArb, LFT, MFT, P_Keys) only once the
 * SM has settled: read, wait until a sweep has passed, read again, and
 * take the table once two reads agree.  A sweep is seen in SMInfo's
 * ActCount, which opensm sets to the number of MADs it has sent
 * (osm_sminfo_rcv.c, osm_state_mgr.c: stats.qp0_mads_sent), so a sweep,
 * light or heavy, moves it by more than the answers to our own sminfo
 * queries.  Where no SM answers sminfo, a short interval stands for the
 * sweep.  read() fills out (the raw text) or says why not.  Returns the
 * milliseconds settling took, from the first read to the agreeing one,
 * recorded as fact settle_<table> ("1441 ms") on ctx->main; -1 when the reads never agreed
 * before the deadline (ERROR naming the table set on ctx->main), -2 when a
 * read failed (why in why).
 */
/*
 * Run an infiniband-diags tool (30 s); its stdout appended to out, or false
 * with why: the tool's own "iberror: ..." line, else how it ended.
 */
bool ibkind_tool(struct rq_ctx *ctx, const char *const *argv, struct sb *out, char *why, size_t whysz);

typedef bool (*ibkind_read_fn)(struct rq_ctx *ctx, void *arg, struct sb *out, char *why, size_t whysz);
int64_t ibkind_settled(struct rq_ctx *ctx, const char *table, ibkind_read_fn read, void *arg, struct sb *out,
		       char *why, size_t whysz);

#endif
