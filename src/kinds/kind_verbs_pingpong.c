/* SPDX-License-Identifier: MIT */
/*
 * verbs-pingpong: the native ibv_rc_pingpong.  Two QPs (RC, UC or UD)
 * exchange messages N times by SEND/RECV, RDMA WRITE with immediate, or
 * RDMA READ.  Every message carries a pattern derived from the case's seed
 * and the iteration, and the receiver verifies it, so corrupted, stale or
 * misordered data is a FAIL naming the first bad byte.  The client times
 * every round trip: min, mean, median, p99 and max, and the median's 95 %
 * interval.  With tolerance_pct the client stops once that interval is
 * within it (qual/stats.h, rq_stop_median), at least min_iters and at most
 * iterations round trips or max_time, and tells the server over the
 * out-of-band connection, which it watches between its completions.
 *
 * On a real node this is the first thing to run after cabling or a driver
 * upgrade: it proves the two ports can build a connection (GIDs, MTU,
 * PSNs) and move intact data, before any bandwidth figure means anything.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/kind.h"
#include "qual/stats.h"
#include "rdma/pattern.h"
#include "rdma/verbs_pair.h"

enum pp_poll { PP_EVENT, PP_BUSY };

struct pp_cfg {
	int transport;		/* enum vb_qpt */
	int op;			/* enum vb_op */
	uint64_t size;
	long long iterations;
	long long seed;
	bool verify;
	int poll;
	double max_latency_us;
	long long qp_timeout;
	char *server_devices;
	double tolerance_pct;	/* 0: all `iterations` */
	long long min_iters;
	int64_t max_time_ms;	/* 0: no ceiling but iterations */
	bool must_converge;
};

static const char *const poll_names[] = { "event", "busy", NULL };

static const struct key_def pp_keys[] = {
	{ .name = "transport", .type = KEY_ENUM, .choices = vb_qpt_names, .def = "rc",
	  .offset = offsetof(struct pp_cfg, transport),
	  .help = "QP transport: rc, uc or ud" },
	{ .name = "op", .type = KEY_ENUM, .choices = vb_op_names, .def = "send",
	  .offset = offsetof(struct pp_cfg, op),
	  .help = "send (SEND/RECV), write (RDMA WRITE with immediate) or read (RDMA READ; rc only)" },
	{ .name = "size", .type = KEY_SIZE, .def = "4KiB", .min = 1, .max = 1 << 30,
	  .offset = offsetof(struct pp_cfg, size),
	  .help = "message size (ud: at most the path MTU)" },
	{ .name = "iterations", .type = KEY_INT, .def = "1000", .min = 1, .max = 10000000,
	  .offset = offsetof(struct pp_cfg, iterations),
	  .help = "round trips (with tolerance_pct: the most)" },
	{ .name = "seed", .type = KEY_INT, .def = "1", .min = 0, .max = INT64_MAX,
	  .offset = offsetof(struct pp_cfg, seed),
	  .help = "seed of the payload pattern" },
	{ .name = "verify", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct pp_cfg, verify),
	  .help = "verify every message's payload (a data check: the case judges it)" },
	{ .name = "poll", .type = KEY_ENUM, .choices = poll_names, .def = "event",
	  .offset = offsetof(struct pp_cfg, poll),
	  .help = "event: wait on the completion channel; busy: spin on the CQ, as perftest does" },
	{ .name = "max_latency_us", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e9,
	  .offset = offsetof(struct pp_cfg, max_latency_us),
	  .help = "fail when the median round trip is longer (0: not judged)" },
	{ .name = "server_devices", .type = KEY_STR,
	  .offset = offsetof(struct pp_cfg, server_devices),
	  .help = "device selection on the server side when its names differ (default: devices)" },
	{ .name = "qp_timeout", .type = KEY_INT, .def = "0", .min = 0, .max = 31,
	  .offset = offsetof(struct pp_cfg, qp_timeout),
	  .help = "RC local ACK timeout, 4.096 us * 2^N before a retransmission (perftest's -u); 0: 14 (67 ms) on an HCA, 19 (2.1 s) on rxe/siw, whose round trip includes the host's scheduler" },
	{ .name = "tolerance_pct", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 100,
	  .offset = offsetof(struct pp_cfg, tolerance_pct),
	  .help = "stop once the median round trip's 95 % interval is within +-this percent of it, after min_iters (0: run all `iterations`)" },
	{ .name = "min_iters", .type = KEY_INT, .def = "100", .min = 6, .max = 10000000,
	  .offset = offsetof(struct pp_cfg, min_iters),
	  .help = "with tolerance_pct: the fewest round trips, however tight the interval" },
	{ .name = "max_time", .type = KEY_DURATION, .def = "0s", .min = 0, .max = 3600 * 1000,
	  .offset = offsetof(struct pp_cfg, max_time_ms),
	  .help = "with tolerance_pct: stop after this long, converged or not (0s: only `iterations` stops it)" },
	{ .name = "must_converge", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct pp_cfg, must_converge),
	  .help = "with tolerance_pct: fail a row whose interval did not reach it (else a fact says so)" },
	KEY_END
};

static int pp_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct pp_cfg *cfg = c->cfg;

	if (cfg->transport == VB_UD && cfg->op != VB_OP_SEND) {
		snprintf(err, errsz, "transport ud carries only op: send");
		return -1;
	}
	if (cfg->transport == VB_UC && cfg->op == VB_OP_READ) {
		snprintf(err, errsz, "transport uc has no RDMA READ; use rc");
		return -1;
	}
	if (cfg->tolerance_pct > 0 && cfg->min_iters > cfg->iterations) {
		snprintf(err, errsz, "min_iters %lld is above iterations %lld (the most round trips)",
			 cfg->min_iters, cfg->iterations);
		return -1;
	}
	if (cfg->must_converge && !(cfg->tolerance_pct > 0)) {
		snprintf(err, errsz, "must_converge needs a tolerance_pct");
		return -1;
	}
	return 0;
}

/*
 * Buffer layout, both sides: [0, S) what we send (or, for READ on the
 * server, K slots that the client reads), [S, 2S + GRH) where the peer's
 * message lands.
 */
#define READ_SLOTS 16

struct pp_run {
	struct vp *s;
	const struct pp_cfg *cfg;
	struct vb v;
	struct rq_result *row;
	size_t S, roff;		/* message size, receive slot offset */
	size_t grh;
	unsigned bad;		/* data mismatches seen */
	char first_bad[256];
	char why[512];
};

static int wait_wc(struct pp_run *r, struct ibv_wc *wc)
{
	int n = vp_wait(r->s, &r->v, wc, 1, r->why, sizeof(r->why));

	if (n < 0)
		return n;
	return vb_wc_ok(wc, r->why, sizeof(r->why)) ? 0 : -EIO;
}

static void check_data(struct pp_run *r, const uint8_t *p, uint64_t iter)
{
	if (!r->cfg->verify || pattern_check(p, r->S, (uint64_t)r->cfg->seed, iter, NULL, NULL) < 0)
		return;
	if (!r->bad++)
		pattern_describe(p, r->S, (uint64_t)r->cfg->seed, iter, r->first_bad,
				 sizeof(r->first_bad));
}

static size_t recv_len(const struct pp_run *r)
{
	/* a WRITE with immediate consumes a receive but lands by RDMA: no bytes */
	return r->cfg->op == VB_OP_WRITE ? 0 : r->S;
}

/* One round trip from the client: returns 0 and the time in us. */
static int client_iter(struct pp_run *r, uint64_t i, double *us)
{
	const struct pp_cfg *cfg = r->cfg;
	struct ibv_wc wc;
	int ret, got_send = 0, got_recv = 0;
	double t0;

	if (cfg->op == VB_OP_READ) {
		uint64_t slot = i % READ_SLOTS;

		t0 = vp_now_us();
		ret = vb_post_send(&r->v, 0, VB_OP_READ, r->roff, r->S, slot * r->S, i, true, false);
		if (ret || (ret = wait_wc(r, &wc)))
			return ret;
		*us = vp_now_us() - t0;
		check_data(r, r->v.buf + r->roff, 2 * slot + 1);
		if (cfg->verify)
			memset(r->v.buf + r->roff, 0, r->S);	/* stale data must not pass next time */
		return 0;
	}
	if ((ret = vb_post_recv(&r->v, 0, r->roff, recv_len(r), i)))
		return ret;
	pattern_fill(r->v.buf, r->S, (uint64_t)cfg->seed, 2 * i);
	t0 = vp_now_us();
	ret = vb_post_send(&r->v, 0, (enum vb_op)cfg->op, 0, r->S, r->roff, i, true, true);
	if (ret)
		return ret;
	while (!got_send || !got_recv) {
		if ((ret = wait_wc(r, &wc)))
			return ret;
		if (wc.opcode & IBV_WC_RECV) {
			got_recv = 1;
			*us = vp_now_us() - t0;
		} else {
			got_send = 1;
		}
	}
	check_data(r, r->v.buf + r->roff + r->grh, 2 * i + 1);
	if (cfg->verify)
		memset(r->v.buf + r->roff, 0, r->S + r->grh);
	return 0;
}

/*
 * An adaptive client ends the run when its figure is known: it sends its
 * "done N" instead of message N, so a message waiting on the out-of-band
 * connection while we wait for a receive is the end (*ended).
 */
static int wait_recv_or_end(struct pp_run *r, struct ibv_wc *wc, bool *ended)
{
	int n = vp_wait_or_msg(r->s, &r->v, wc, 1, r->why, sizeof(r->why));

	if (n < 0)
		return n;
	if (n == 0) {
		*ended = true;
		return 0;
	}
	return vb_wc_ok(wc, r->why, sizeof(r->why)) ? 0 : -EIO;
}

/* The server's side of the iterations (send/write: answer each message). */
static int server_iters(struct pp_run *r)
{
	const struct pp_cfg *cfg = r->cfg;
	struct ibv_wc wc;
	bool early = false;	/* the next message came before our answer's completion */
	bool ended = false;
	int ret;

	for (uint64_t i = 0; i < (uint64_t)cfg->iterations; i++) {
		bool sent = false;

		while (!early) {
			if (cfg->tolerance_pct > 0) {
				if ((ret = wait_recv_or_end(r, &wc, &ended)))
					return ret;
				if (ended)
					return 0;
			} else if ((ret = wait_wc(r, &wc))) {
				return ret;
			}
			if (wc.opcode & IBV_WC_RECV)
				break;
			snprintf(r->why, sizeof(r->why), "iteration %" PRIu64 ": send completion without a send", i);
			return -EPROTO;
		}
		early = false;
		check_data(r, r->v.buf + r->roff + r->grh, 2 * i);
		if (cfg->verify)
			memset(r->v.buf + r->roff, 0, r->S + r->grh);
		/* the next receive goes up before our answer, so the client never outruns it */
		if (i + 1 < (uint64_t)cfg->iterations &&
		    (ret = vb_post_recv(&r->v, 0, r->roff, recv_len(r), i + 1)))
			return ret;
		pattern_fill(r->v.buf, r->S, (uint64_t)cfg->seed, 2 * i + 1);
		if ((ret = vb_post_send(&r->v, 0, (enum vb_op)cfg->op, 0, r->S, r->roff, i, true, true)))
			return ret;
		/*
		 * Our send completes when its ACK is back, which may be after the
		 * client, having our answer, sent its next message: keep that one.
		 */
		while (!sent) {
			if ((ret = wait_wc(r, &wc)))
				return ret;
			if (!(wc.opcode & IBV_WC_RECV))
				sent = true;
			else if (early) {
				snprintf(r->why, sizeof(r->why), "iteration %" PRIu64 ": two messages without an answer", i);
				return -EPROTO;
			} else
				early = true;
		}
	}
	return 0;
}

/*
 * How an adaptive run stopped, as a fact: converged, or the ceiling it
 * reached and the interval it had (a FAIL only when the case says
 * must_converge: on a busy host a wide interval is a fact about the host).
 */
static void note_stop(struct vp *s, struct rq_result *row, const struct rq_stop *st, double ci,
		      uint64_t done, double secs, bool must)
{
	bool conv = st->state == RQ_STOP_CONVERGED;
	char *f = xasprintf("%s: +-%.2f %% (tolerance %g %%) after %" PRIu64 " round trips, %.2f s%s%s",
			    conv ? "yes" : "no", ci, st->tol_pct, done, secs,
			    conv ? "" : ", stopped at ", conv ? "" : rq_stop_name(st->state));

	rq_fact_add(row, "converged", f);
	rq_log(s->ctx, "# converged %s", f);
	if (must)
		rq_judge(row, conv, "the median round trip did not converge: %s", f);
	free(f);
}

static void run_pair(struct vp *s, int i, const struct pp_cfg *cfg)
{
	struct pp_run r = { .s = s, .cfg = cfg, .row = vp_row(s, i) };
	struct vb_opts o = {
		.qpt = (enum vb_qpt)cfg->transport,
		.nqp = 1,
		.tx_depth = 4,
		.rx_depth = 4,
		.events = cfg->poll == PP_EVENT,
		.max_inline = 64,
		.ack_timeout = (int)cfg->qp_timeout,
		.psn_seed = (uint32_t)now_ms() ^ (s->server ? 0x5a5au : 0xa5a5u) ^ (uint32_t)getpid(),
	};
	char mine[512], theirs[512], why[512];
	enum rq_verdict v;
	double *lat = NULL, t_start, measure_s;
	uint64_t done = 0;
	bool adaptive = cfg->tolerance_pct > 0, ok = true;
	struct rq_stop st;
	int ret = 0;

	r.S = cfg->size;
	r.grh = cfg->transport == VB_UD ? VB_UD_GRH : 0;
	if (cfg->op == VB_OP_READ) {
		/* server: READ_SLOTS slots the client reads; client: one slot they land in */
		r.roff = 0;
		o.buf_size = s->server ? READ_SLOTS * r.S : r.S;
	} else {
		r.roff = r.S;
		o.buf_size = 2 * r.S + r.grh;
	}
	v = vp_open_vb(s, i, &r.v, &o, why, sizeof(why));
	if (v == RQ_NONE && cfg->transport == VB_UD &&
	    r.S > (size_t)vb_mtu_bytes(r.v.pattr.active_mtu)) {
		snprintf(why, sizeof(why), "ud message size %" PRIu64 " exceeds the active MTU %d of %s/%d",
			 cfg->size, vb_mtu_bytes(r.v.pattr.active_mtu), s->ports[i].dev, s->ports[i].port);
		v = RQ_SKIP;
	}
	if (v == RQ_NONE)
		vb_peer_fmt(&r.v.local, mine, sizeof(mine));
	if (vp_trade(s, r.row, v, v == RQ_NONE ? mine : why, theirs, sizeof(theirs)) < 0)
		goto out;
	if ((ret = vb_peer_parse(&r.v.remote, theirs, why, sizeof(why))) ||
	    (ret = vb_connect(&r.v, why, sizeof(why)))) {
		vp_trade(s, r.row, vp_verdict_for(ret), why, theirs, sizeof(theirs));
		goto out;
	}
	rq_log(s->ctx, "# connected: local QPN %u PSN %u, remote QPN %u PSN %u, path MTU %d",
	       r.v.local.qp[0].qpn, r.v.local.qp[0].psn, r.v.remote.qp[0].qpn, r.v.remote.qp[0].psn,
	       vb_mtu_bytes(r.v.path_mtu));
	/* the server is ready once its first receive is up (or its read slots are filled) */
	if (s->server && cfg->op == VB_OP_READ)
		for (uint64_t k = 0; k < READ_SLOTS; k++)
			pattern_fill(r.v.buf + k * r.S, r.S, (uint64_t)cfg->seed, 2 * k + 1);
	else if (s->server)
		ret = vb_post_recv(&r.v, 0, r.roff, recv_len(&r), 0);
	if (ret) {
		snprintf(why, sizeof(why), "post receive: %s", strerror(-ret));
		vp_trade(s, r.row, RQ_FAIL, why, theirs, sizeof(theirs));
		goto out;
	}
	if (vp_trade(s, r.row, RQ_NONE, "ready", theirs, sizeof(theirs)) < 0)
		goto out;

	if (s->server) {
		if (cfg->op != VB_OP_READ && (ret = server_iters(&r))) {
			rq_judge(r.row, false, "%s", r.why[0] ? r.why : strerror(-ret));
			goto out;
		}
		snprintf(mine, sizeof(mine), "served bad=%u", r.bad);
		if (vp_trade(s, r.row, RQ_NONE, mine, theirs, sizeof(theirs)) < 0)
			goto out;
		if (cfg->verify && cfg->op != VB_OP_READ)
			rq_judge(r.row, r.bad == 0, "data from the client: %u bad message(s), first: %s",
				 r.bad, r.first_bad);
		else
			rq_judge(r.row, true, "served the client: %s", theirs);
		goto out;
	}

	rq_stop_init(&st, cfg->tolerance_pct, (uint64_t)cfg->min_iters, (uint64_t)cfg->iterations,
		     cfg->max_time_ms / 1000.0);
	lat = xcalloc((size_t)cfg->iterations, sizeof(*lat));
	t_start = vp_now_us();
	while (done < (uint64_t)cfg->iterations) {
		ret = client_iter(&r, done, &lat[done]);
		if (ret) {
			if (ret == -EOPNOTSUPP)
				rq_result_set(r.row, RQ_SKIP, "%s over %s is not supported",
					      vb_op_names[cfg->op], vb_qpt_names[cfg->transport]);
			else
				rq_judge(r.row, false, "iteration %" PRIu64 " of %lld: %s", done,
					 cfg->iterations, r.why[0] ? r.why : strerror(-ret));
			ok = false;
			break;
		}
		done++;
		/* between round trips, never inside one's timing */
		if (adaptive && rq_stop_median(&st, lat, done, (vp_now_us() - t_start) / 1e6))
			break;
	}
	measure_s = (vp_now_us() - t_start) / 1e6;
	rq_figure_add(r.row, "iterations", (double)done, "");
	rq_figure_add(r.row, "measure_s", measure_s, "s");
	if (done) {
		struct vp_stats vs;
		struct vp_thresholds t = { .max_latency_us = cfg->max_latency_us };
		/* before vp_stats sorts lat: the interval is over what was measured, any order */
		double ci = rq_ci95_median_pct(lat, (size_t)done, NULL, NULL);

		vp_stats(lat, done, &vs);
		rq_figure_add(r.row, "lat_min", vs.min, "us");
		rq_figure_add(r.row, "lat_mean", vs.mean, "us");
		rq_figure_add(r.row, "lat_median", vs.median, "us");
		rq_figure_add(r.row, "lat_p99", vs.p99, "us");
		rq_figure_add(r.row, "lat_max", vs.max, "us");
		if (isfinite(ci))
			rq_figure_add(r.row, "lat_ci95_pct", ci, "%");
		rq_log(s->ctx, "%" PRIu64 " round trips of %" PRIu64 " bytes (%s %s, %s poll) in %.3f s: "
		       "min %.2f mean %.2f median %.2f (+-%.2f %%) p99 %.2f max %.2f us", done, cfg->size,
		       vb_qpt_names[cfg->transport], vb_op_names[cfg->op], poll_names[cfg->poll],
		       measure_s, vs.min, vs.mean, vs.median, ci, vs.p99, vs.max);
		if (ok && adaptive)
			note_stop(s, r.row, &st, ci, done, measure_s, cfg->must_converge);
		if (ok)
			vp_judge_lat(r.row, &t, vs.median, "median round trip");
	}
	if (ok) {
		snprintf(mine, sizeof(mine), "done %" PRIu64, done);
		if (vp_trade(s, r.row, RQ_NONE, mine, theirs, sizeof(theirs)) == 0 && cfg->verify) {
			unsigned sbad = 0;

			rq_judge(r.row, r.bad == 0, "data from the server: %u bad message(s), first: %s",
				 r.bad, r.first_bad);
			if (cfg->op != VB_OP_READ)
				rq_judge(r.row, sscanf(theirs, "served bad=%u", &sbad) == 1 && sbad == 0,
					 "the server found %u bad message(s) from us", sbad);
		}
	}
out:
	free(lat);
	vb_close(&r.v);
}

static void pp_run(struct rq_ctx *ctx, const void *p)
{
	const struct pp_cfg *cfg = p;
	struct vp s;

	if (vp_begin(&s, ctx, cfg->server_devices) == 0)
		for (int i = 0; i < s.npairs; i++)
			run_pair(&s, i, cfg);
	vp_end(&s);
}

const struct rq_kind rq_kind_verbs_pingpong = {
	.name = "verbs-pingpong",
	.summary = "native ping-pong over RC, UC or UD: SEND, RDMA WRITE or READ, verified payloads, RTT",
	.doc = "Two QPs, one per side, exchange `iterations` messages by SEND/RECV, RDMA WRITE with "
	       "immediate, or RDMA READ (libibverbs, no external tool). Every message carries a "
	       "pattern derived from `seed` and the iteration; the receiver verifies it, so corrupted, "
	       "stale or misordered data fails naming the first bad byte. The client reports round-trip "
	       "latency (min, mean, median, p99, max), the median's 95 % interval (`lat_ci95_pct`) "
	       "and the time measured (`measure_s`); with `tolerance_pct` it stops once that interval "
	       "is within it (docs/verbs.md, \"Adaptive measurements\"). Each ACTIVE port gets a row; "
	       "no ACTIVE port, no usable GID or an operation the device refuses is a SKIP. It is the "
	       "first check after cabling or a driver upgrade: connection setup (GIDs, MTU, PSNs) and "
	       "intact data.",
	.keys = pp_keys,
	.cfg_size = sizeof(struct pp_cfg),
	.default_targets = "hca,rxe-vm,rxe-host",
	/* the floor and the typical round trip (perftest's t_min, t_typical) */
	.key_figures = "lat_min lat_median",
	.two_sided = true,
	.validate = pp_validate,
	.run = pp_run,
};
