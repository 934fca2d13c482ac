/* SPDX-License-Identifier: MIT */
/*
 * What the two-sided verbs kinds share: the list of ACTIVE ports a side
 * tests (with its GID resolved), the out-of-band session between server
 * and client, the status each side tells the other before every step
 * ("ok ...", or "skip/fail/error REASON" so the client can say why the
 * server could not go on, instead of timing out), and threshold judging.
 *
 * Pairs: the i-th selected ACTIVE port of the client is tested against
 * the i-th of the server; each client port gets its own row.
 */
#ifndef RQ_VERBS_PAIR_H
#define RQ_VERBS_PAIR_H

#include <stdbool.h>
#include "core/ctx.h"
#include "rdma/oob.h"
#include "rdma/verbs.h"

#define VP_MAX_PORTS 32

struct vp_port {
	char dev[64];
	int port;
	int gid_index;		/* -1: none found (RoCE) or not needed (IB) */
	char gid[48];
	char link_layer[16];
	char netdev[32];
	double rate_gbps;	/* sysfs rate; 0 unknown */
	double data_gbps;	/* its data rate after line coding; 0 unknown */
	bool is_virtual;	/* rxe/siw: the rate is fictitious */
};

struct vp {
	struct rq_ctx *ctx;
	struct oob oob;
	bool server;
	struct vp_port ports[VP_MAX_PORTS];
	int nports;		/* this side's */
	int npairs;		/* min of both sides' */
	int64_t deadline;	/* ctx's, less a margin to report in */
};

/*
 * List this side's ports (server_devices overrides the case's devices: on
 * the server), open the out-of-band connection and agree on the number of
 * pairs.  On failure the verdict is set on ctx->main and -1 returned.
 */
int vp_begin(struct vp *s, struct rq_ctx *ctx, const char *server_devices);
void vp_end(struct vp *s);
/* The row of pair i (this side's port). */
struct rq_result *vp_row(struct vp *s, int i);

/*
 * Tell the peer how this step went and learn how it went there.  mine is
 * the payload when v == RQ_NONE (ok), else the reason of verdict v.  On
 * success theirs holds the peer's payload and 0 is returned.  When either
 * side failed, row gets a verdict (client: the server's verdict and reason;
 * server: its own) and -1 is returned.
 */
int vp_trade(struct vp *s, struct rq_result *row, enum rq_verdict v, const char *mine,
	     char *theirs, size_t size);

/* Verdict for an engine error: SKIP for ENODEV/ENETDOWN/ENOENT/EOPNOTSUPP, else FAIL. */
enum rq_verdict vp_verdict_for(int err);

/*
 * The RC local ACK timeout for port p: the case's qp_timeout when it gives
 * one (1..31), else VB_ACK_TIMEOUT_SOFT on a software device (rxe, siw)
 * and VB_ACK_TIMEOUT_HCA on an HCA.
 */
int vp_ack_timeout(const struct vp_port *p, int asked);

/*
 * Open the engine on pair i's port (its ACK timeout from vp_ack_timeout);
 * on failure fill why and return the verdict.
 */
enum rq_verdict vp_open_vb(struct vp *s, int i, struct vb *v, struct vb_opts *o,
			   char *why, size_t whysz);

/* Thresholds shared by the kinds. */
struct vp_thresholds {
	double min_gbps;	/* 0: none */
	double min_line_rate;	/* fraction of the port's data rate; 0: none */
	double max_latency_us;	/* 0: none */
};
/*
 * Do both roles run on this node (no peer: 127.0.0.1)?  Then a pair is
 * port i with port i of the same card and the data never leaves the HCA:
 * the wire is not tested.
 */
bool vp_loopback(const struct vp *s);
/* Mark a row as loopback (fact and reason); true when it is one. */
bool vp_note_loopback(struct vp *s, int i, struct rq_result *row);
void vp_judge_bw(struct vp *s, int i, struct rq_result *row, const struct vp_thresholds *t,
		 double gbps, const char *what);
void vp_judge_lat(struct rq_result *row, const struct vp_thresholds *t, double us, const char *what);

/* Size as a short text: 4096 -> "4KiB". */
void vp_size_name(uint64_t bytes, char *buf, size_t size);

/* Latency statistics over n samples (sorted in place). */
struct vp_stats {
	double min, mean, median, p99, max;
};
void vp_stats(double *v, size_t n, struct vp_stats *st);

/*
 * vb_wait in slices, checking between them whether the peer closed the
 * out-of-band connection (it gave up or died): a side never waits for
 * completions that cannot come until its whole deadline.
 */
int vp_wait(struct vp *s, struct vb *v, struct ibv_wc *wc, int n, char *why, size_t whysz);
/*
 * vp_wait, but a message from the peer on the out-of-band connection ends
 * the wait too, returning 0: the side whose peer decides when a run ends
 * (verbs-pingpong's server, when the client stops on its figure) learns it
 * between completions instead of at the deadline.  The message stays
 * queued for the next oob read.
 */
int vp_wait_or_msg(struct vp *s, struct vb *v, struct ibv_wc *wc, int n, char *why, size_t whysz);
/* Has the peer closed the out-of-band connection? (non-blocking peek) */
bool vp_peer_gone(struct vp *s);

/* Monotonic microseconds, for per-iteration timing. */
double vp_now_us(void);

#endif
