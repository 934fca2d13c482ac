/* SPDX-License-Identifier: MIT */
/*
 * bandwidth: native streaming of RDMA WRITE, RDMA READ or SEND over N QPs
 * for a fixed duration per message size, with the send queue kept full
 * and the CQ busy-polled as perftest does (the clock is read every 64
 * loops, so a dead peer or lost packets end in the deadline, not a hang).
 * Reports Gb/s and messages per second per size, judges min_gbps and
 * min_line_rate (the fraction of the port's sysfs rate that NVIDIA's own
 * multi-node tests use, e.g. 0.9), and checks that the data arrived: the
 * receiving side verifies each QP's buffer against the pattern after the
 * run.  The stream is cut into batches (BW_BATCH_US of completions each)
 * whose rates give the figure's 95 % interval; with tolerance_pct a size
 * stops streaming once that interval is within it (qual/stats.h,
 * rq_stop_ratio), after min_iters batches and at most max_time.
 *
 * On a lab node this is the figure that says whether a link, a cable or a
 * PCIe slot delivers what the port claims; on rxe it is a smoke test with
 * a floor (the rxe rate is fictitious and is not judged).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/kind.h"
#include "qual/stats.h"
#include "rdma/pattern.h"
#include "rdma/verbs_pair.h"

struct bw_cfg {
	int op;
	int transport;
	long long qps;
	struct rq_list sizes;
	long long queue_depth;
	int64_t duration_ms;
	long long seed;
	bool verify;
	double min_gbps;
	double min_line_rate;
	long long qp_timeout;
	char *server_devices;
	double tolerance_pct;	/* 0: stream for `duration` */
	long long min_iters;	/* batches */
	int64_t max_time_ms;	/* 0: duration */
	bool must_converge;
};

static const char *const bw_transports[] = { "rc", "uc", NULL };

static const struct key_def bw_keys[] = {
	{ .name = "op", .type = KEY_ENUM, .choices = vb_op_names, .def = "write",
	  .offset = offsetof(struct bw_cfg, op),
	  .help = "write (RDMA WRITE), read (RDMA READ; rc only) or send (SEND/RECV)" },
	{ .name = "transport", .type = KEY_ENUM, .choices = bw_transports, .def = "rc",
	  .offset = offsetof(struct bw_cfg, transport),
	  .help = "QP transport: rc or uc" },
	{ .name = "qps", .type = KEY_INT, .def = "1", .min = 1, .max = VB_MAX_QP,
	  .offset = offsetof(struct bw_cfg, qps),
	  .help = "QPs streaming at once (NDR links often need 2 to 4)" },
	{ .name = "sizes", .type = KEY_LIST, .elem = KEY_SIZE, .def = "[64KiB]",
	  .offset = offsetof(struct bw_cfg, sizes),
	  .help = "message sizes, each streamed for `duration` (1 B to 16 MiB)" },
	{ .name = "queue_depth", .type = KEY_INT, .def = "128", .min = 1, .max = 8192,
	  .offset = offsetof(struct bw_cfg, queue_depth),
	  .help = "work requests in flight per QP (perftest's -t)" },
	{ .name = "duration", .type = KEY_DURATION, .def = "3s", .min = 100, .max = 3600 * 1000,
	  .offset = offsetof(struct bw_cfg, duration_ms),
	  .help = "streaming time per size (perftest's -D; with tolerance_pct: the most, unless max_time)" },
	{ .name = "seed", .type = KEY_INT, .def = "1", .min = 0, .max = INT64_MAX,
	  .offset = offsetof(struct bw_cfg, seed),
	  .help = "seed of the payload pattern" },
	{ .name = "verify", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct bw_cfg, verify),
	  .help = "after each size, the receiving side verifies every QP's buffer (a data check)" },
	{ .name = "min_gbps", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e6,
	  .offset = offsetof(struct bw_cfg, min_gbps),
	  .help = "fail below this many Gb/s (10^9 bit/s) at any size (0: not judged)" },
	{ .name = "min_line_rate", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1,
	  .offset = offsetof(struct bw_cfg, min_line_rate),
	  .help = "fail below this fraction of the port's data rate (QDR 32 of 40 signalled, FDR 54.5 of 56; not judged on rxe, whose rate is fictitious, nor in loopback on one HCA)" },
	{ .name = "server_devices", .type = KEY_STR,
	  .offset = offsetof(struct bw_cfg, server_devices),
	  .help = "device selection on the server side when its names differ (default: devices)" },
	{ .name = "qp_timeout", .type = KEY_INT, .def = "0", .min = 0, .max = 31,
	  .offset = offsetof(struct bw_cfg, qp_timeout),
	  .help = "RC local ACK timeout, 4.096 us * 2^N before a retransmission (perftest's -u); 0: 14 (67 ms) on an HCA, 19 (2.1 s) on rxe/siw, whose round trip includes the host's scheduler" },
	{ .name = "tolerance_pct", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 100,
	  .offset = offsetof(struct bw_cfg, tolerance_pct),
	  .help = "stop each size once its Gb/s's 95 % interval is within +-this percent of it, after min_iters batches (0: stream for `duration`)" },
	{ .name = "min_iters", .type = KEY_INT, .def = "5", .min = 2, .max = 1000000,
	  .offset = offsetof(struct bw_cfg, min_iters),
	  .help = "with tolerance_pct: the fewest batches (50 ms or more of completions each), however tight the interval" },
	{ .name = "max_time", .type = KEY_DURATION, .def = "0s", .min = 0, .max = 3600 * 1000,
	  .offset = offsetof(struct bw_cfg, max_time_ms),
	  .help = "with tolerance_pct: the longest a size streams, converged or not (0s: `duration`)" },
	{ .name = "must_converge", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct bw_cfg, must_converge),
	  .help = "with tolerance_pct: fail a size whose interval did not reach it (else a fact says so)" },
	KEY_END
};

static int bw_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct bw_cfg *cfg = c->cfg;

	if (cfg->transport == VB_UC && cfg->op == VB_OP_READ) {
		snprintf(err, errsz, "transport uc has no RDMA READ; use rc");
		return -1;
	}
	if (!cfg->sizes.n) {
		snprintf(err, errsz, "sizes: give at least one message size");
		return -1;
	}
	for (size_t i = 0; i < cfg->sizes.n; i++)
		if (cfg->sizes.num[i] < 1 || cfg->sizes.num[i] > (16 << 20)) {
			snprintf(err, errsz, "sizes: %s is outside 1 B to 16 MiB", cfg->sizes.str[i]);
			return -1;
		}
	if (cfg->must_converge && !(cfg->tolerance_pct > 0)) {
		snprintf(err, errsz, "must_converge needs a tolerance_pct");
		return -1;
	}
	if (cfg->max_time_ms && cfg->max_time_ms < 100) {
		snprintf(err, errsz, "max_time: at least 100ms (as duration), or 0s for duration");
		return -1;
	}
	return 0;
}

struct bw_run {
	struct vp *s;
	const struct bw_cfg *cfg;
	struct vb v;
	struct rq_result *row;
	int pair;		/* index of the port pair */
	bool recvs_posted;	/* SEND: queue_depth receives per QP, reposted as they complete */
	size_t slot;		/* bytes per QP slot (the largest size) */
	char why[512];
};

/* Pattern seed of QP q's data: the sender's for write/send, the server's for read. */
static uint64_t data_seed(const struct bw_cfg *cfg, int q)
{
	return (uint64_t)cfg->seed * 1000003u + (uint64_t)q + (cfg->op == VB_OP_READ ? 7919u : 0u);
}

static unsigned verify_slots(struct bw_run *r, size_t size, char *first, size_t firstsz)
{
	unsigned bad = 0;

	for (int q = 0; q < r->v.nqp; q++) {
		const uint8_t *p = r->v.buf + (size_t)q * r->slot;

		if (pattern_check(p, size, data_seed(r->cfg, q), 0, NULL, NULL) < 0)
			continue;
		if (!bad++) {
			int n = snprintf(first, firstsz, "QP %d: ", q);

			pattern_describe(p, size, data_seed(r->cfg, q), 0, first + n, firstsz - n);
		}
	}
	return bad;
}

/*
 * A batch closes at the first completion BW_BATCH_US or more after the
 * last one closed: long enough that the 16-message granularity of the
 * completions (one signalled in mod) does not make its rate noise, short
 * enough that a second of an HCA's stream gives 20 of them.
 */
#define BW_BATCH_US 50000.0

/* One size's stream cut in batches: batch i completed work[i] messages in secs[i]. */
struct bw_meas {
	double *work, *secs;
	size_t n, cap;
	struct rq_stop st;
};

static void batch_add(struct bw_meas *m, double work, double secs)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->work = xrealloc(m->work, m->cap * sizeof(*m->work));
		m->secs = xrealloc(m->secs, m->cap * sizeof(*m->secs));
	}
	m->work[m->n] = work;
	m->secs[m->n] = secs;
	m->n++;
}

/*
 * The client's stream: keep queue_depth WRs in flight per QP, signalling
 * one in `mod` so the CQ is not the bottleneck; stop posting after the
 * duration, or with tolerance_pct once the batches' interval is within it
 * (at a multiple of mod, so every WR is accounted for), and drain.  The
 * batches tile the whole stream, drain included, so their sums are the
 * figure's messages and seconds and their interval is its interval.
 */
static int stream(struct bw_run *r, size_t size, uint64_t *msgs, double *secs, struct bw_meas *m)
{
	const struct bw_cfg *cfg = r->cfg;
	int depth = (int)cfg->queue_depth, mod = depth < 16 ? depth : 16;
	int out[VB_MAX_QP] = { 0 };
	uint64_t completed = 0, bc0 = 0;
	unsigned loops = 0;
	bool stop = false, adaptive = cfg->tolerance_pct > 0;
	int64_t limit_ms = adaptive && cfg->max_time_ms ? cfg->max_time_ms : cfg->duration_ms;
	double t0, t1, bt0, end_us;
	struct ibv_wc wc[16];
	int ret, inflight = 0;

	rq_stop_init(&m->st, cfg->tolerance_pct, (uint64_t)cfg->min_iters, 0, limit_ms / 1000.0);
	t0 = vp_now_us();
	t1 = t0;
	bt0 = t0;
	end_us = t0 + limit_ms * 1000.0;
	for (;;) {
		if (!stop) {
			for (int q = 0; q < r->v.nqp; q++) {
				while (out[q] + mod <= depth) {
					for (int k = 0; k < mod; k++) {
						size_t off = (size_t)q * r->slot;

						ret = vb_post_send(&r->v, q, (enum vb_op)cfg->op, off, size, off,
								   (uint64_t)q, k == mod - 1, false);
						if (ret) {
							snprintf(r->why, sizeof(r->why), "post %s: %s",
								 vb_op_names[cfg->op], strerror(-ret));
							return ret;
						}
					}
					out[q] += mod;
					inflight += mod;
				}
			}
		}
		int n = ibv_poll_cq(r->v.cq, 16, wc);

		if (n < 0) {
			snprintf(r->why, sizeof(r->why), "poll CQ failed");
			return -EIO;
		}
		for (int k = 0; k < n; k++) {
			int q = (int)wc[k].wr_id;

			if (!vb_wc_ok(&wc[k], r->why, sizeof(r->why)))
				return -EIO;
			if (q < 0 || q >= r->v.nqp) {
				snprintf(r->why, sizeof(r->why), "completion for unknown QP %d", q);
				return -EPROTO;
			}
			out[q] -= mod;
			inflight -= mod;
			completed += (uint64_t)mod;
		}
		if (n) {
			t1 = vp_now_us();
			if (t1 - bt0 >= BW_BATCH_US) {
				batch_add(m, (double)(completed - bc0), (t1 - bt0) / 1e6);
				bt0 = t1;
				bc0 = completed;
				if (adaptive && !stop &&
				    rq_stop_ratio(&m->st, m->work, m->secs, m->n, (t1 - t0) / 1e6))
					stop = true;
			}
		}
		if (stop && inflight == 0)
			break;
		if ((++loops & 63) == 0 || n) {
			double now = n ? t1 : vp_now_us();

			if (now >= end_us)
				stop = true;
			if (now_ms() >= r->s->deadline) {
				snprintf(r->why, sizeof(r->why),
					 "%d work requests still in flight at the deadline", inflight);
				return -ETIMEDOUT;
			}
		}
	}
	/* the tail, shorter than a batch, joins the last one (a batch of 2 ms would be noise) */
	if (completed > bc0) {
		if (m->n) {
			m->work[m->n - 1] += (double)(completed - bc0);
			m->secs[m->n - 1] += (t1 - bt0) / 1e6;
		} else {
			batch_add(m, (double)(completed - bc0), (t1 - bt0) / 1e6);
		}
	}
	/* the deadline of the loop came before a batch's check did */
	if (adaptive && m->st.state == RQ_STOP_GO)
		m->st.state = RQ_STOP_MAX_TIME;
	*msgs = completed;
	*secs = (t1 - t0) / 1e6;
	return 0;
}

/* The server's side of SEND: keep receives posted until the client says how many it sent. */
static int serve_sends(struct bw_run *r, uint64_t *expected, uint64_t *received)
{
	struct ibv_wc wc[16];
	uint64_t got = 0;
	unsigned loops = 0;
	bool know = false;
	int64_t last = now_ms();
	char why[256], msg[64];
	size_t len;
	int ret;

	for (;;) {
		int n = ibv_poll_cq(r->v.cq, 16, wc);

		if (n < 0)
			return -EIO;
		for (int k = 0; k < n; k++) {
			int q = (int)wc[k].wr_id;

			if (!vb_wc_ok(&wc[k], r->why, sizeof(r->why)))
				return -EIO;
			got++;
			if (q < 0 || q >= r->v.nqp)
				return -EPROTO;
			if ((ret = vb_post_recv(&r->v, q, (size_t)q * r->slot, r->slot, (uint64_t)q)))
				return ret;
		}
		if (n)
			last = now_ms();
		*received = got;
		if (know && got >= *expected)
			return 0;
		/* UC drops what finds no receive posted, by design: stop when it is quiet */
		if (know && r->cfg->transport == VB_UC && now_ms() - last > 300)
			return 0;
		if (n || (++loops & 255))
			continue;
		if (now_ms() >= r->s->deadline) {
			snprintf(r->why, sizeof(r->why), "received %" PRIu64 " of %s messages by the deadline",
				 got, know ? "the announced" : "an unknown number of");
			return -ETIMEDOUT;
		}
		if (!know && vp_peer_gone(r->s)) {
			snprintf(r->why, sizeof(r->why), "the client side went away");
			return -ECONNRESET;
		}
		if (!know) {
			/* the client's "end N" is waiting once the socket is readable */
			if (r->s->oob.fd >= 0) {
				char c;

				if (recv(r->s->oob.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1) {
					ret = oob_recv(&r->s->oob, msg, sizeof(msg) - 1, &len, r->s->deadline,
						       why, sizeof(why));
					if (ret) {
						snprintf(r->why, sizeof(r->why), "%s", why);
						return ret;
					}
					msg[len] = '\0';
					if (sscanf(msg, "end %" SCNu64, expected) != 1) {
						snprintf(r->why, sizeof(r->why), "client sent '%.30s'", msg);
						return -EPROTO;
					}
					know = true;
				}
			}
		}
	}
}

/*
 * How an adaptive size stopped, as a fact (converged_SIZE): converged, or
 * at max_time with the interval it had, a FAIL only with must_converge (a
 * wide interval on a busy host is a fact about the host, not the link).
 */
static void note_stop(struct vp *s, struct rq_result *row, const struct bw_meas *m, double ci,
		      double secs, const char *name, const char *what, bool must)
{
	bool conv = m->st.state == RQ_STOP_CONVERGED;
	char key[48];
	/* converged: the interval that stopped it (the drain's batches move ci95_pct a little) */
	char *f = xasprintf("%s: +-%.2f %% (tolerance %g %%) after %zu batches, %.2f s%s%s",
			    conv ? "yes" : "no", conv ? m->st.half_pct : ci, m->st.tol_pct, m->n, secs,
			    conv ? "" : ", stopped at ", conv ? "" : rq_stop_name(m->st.state));

	snprintf(key, sizeof(key), "converged_%s", name);
	rq_fact_add(row, key, f);
	rq_log(s->ctx, "# %s converged %s", what, f);
	if (must)
		rq_judge(row, conv, "%s did not converge: %s", what, f);
	free(f);
}

static void one_size(struct bw_run *r, size_t size)
{
	const struct bw_cfg *cfg = r->cfg;
	struct vp *s = r->s;
	char name[32], fig[48], theirs[256], mine[256], why[256], first[256] = "";
	uint64_t msgs = 0;
	double secs = 0;
	struct bw_meas m = { 0 };
	size_t len;
	int ret;

	vp_size_name(size, name, sizeof(name));
	/* prepare: sources get their pattern, destinations are cleared */
	for (int q = 0; q < r->v.nqp; q++) {
		uint8_t *p = r->v.buf + (size_t)q * r->slot;
		bool source = (cfg->op == VB_OP_READ) == s->server;

		if (source)
			pattern_fill(p, size, data_seed(cfg, q), 0);
		else
			memset(p, 0, size);
		if (s->server && cfg->op == VB_OP_SEND && !r->recvs_posted)
			for (int k = 0; k < cfg->queue_depth; k++)
				if ((ret = vb_post_recv(&r->v, q, (size_t)q * r->slot, r->slot, (uint64_t)q))) {
					snprintf(why, sizeof(why), "post receive: %s", strerror(-ret));
					vp_trade(s, r->row, RQ_FAIL, why, theirs, sizeof(theirs));
					return;
				}
	}
	r->recvs_posted = true;
	snprintf(mine, sizeof(mine), "go %zu", size);
	if (vp_trade(s, r->row, RQ_NONE, mine, theirs, sizeof(theirs)) < 0)
		return;

	if (s->server) {
		uint64_t expected = 0, received = 0;
		unsigned bad = 0;

		if (cfg->op == VB_OP_SEND) {
			ret = serve_sends(r, &expected, &received);
		} else {
			char msg[64];

			ret = oob_recv(&s->oob, msg, sizeof(msg) - 1, &len, s->deadline, r->why, sizeof(r->why));
			if (!ret) {
				msg[len] = '\0';
				if (sscanf(msg, "end %" SCNu64, &expected) != 1)
					ret = -EPROTO;
			}
		}
		if (ret) {
			rq_judge(r->row, false, "%s: %s", name, r->why[0] ? r->why : strerror(-ret));
			return;
		}
		if (cfg->verify && cfg->op != VB_OP_READ)
			bad = verify_slots(r, size, first, sizeof(first));
		snprintf(mine, sizeof(mine), "bad=%u got=%" PRIu64 " %s", bad,
			 cfg->op == VB_OP_SEND ? received : expected, first);
		if (oob_send(&s->oob, mine, strlen(mine), s->deadline, why, sizeof(why))) {
			rq_judge(r->row, false, "%s: %s", name, why);
			return;
		}
		rq_judge(r->row, bad == 0, "%s: %u QP buffer(s) with bad data, first: %s", name, bad, first);
		return;
	}

	ret = stream(r, size, &msgs, &secs, &m);
	if (ret) {
		rq_judge(r->row, false, "%s %s: %s", vb_op_names[cfg->op], name, r->why);
		goto out;
	}
	snprintf(mine, sizeof(mine), "end %" PRIu64, msgs);
	if (oob_send(&s->oob, mine, strlen(mine), s->deadline, why, sizeof(why)) ||
	    oob_recv(&s->oob, theirs, sizeof(theirs) - 1, &len, s->deadline, why, sizeof(why))) {
		rq_judge(r->row, false, "%s: after streaming: %s", name, why);
		goto out;
	}
	theirs[len] = '\0';
	{
		double gbps = secs > 0 ? msgs * (double)size * 8 / secs / 1e9 : 0;
		double rate = secs > 0 ? msgs / secs : 0;
		double ci = rq_ci95_ratio_pct(m.work, m.secs, m.n);
		struct vp_thresholds t = { .min_gbps = cfg->min_gbps, .min_line_rate = cfg->min_line_rate };
		char what[64];
		unsigned sbad = 0;
		uint64_t sgot = 0;

		if (sscanf(theirs, "bad=%u got=%" SCNu64, &sbad, &sgot) == 2 && cfg->op == VB_OP_SEND &&
		    sgot < msgs) {
			/* only UC gets here: RC retries until every message is received */
			snprintf(fig, sizeof(fig), "lost_%s", name);
			rq_figure_add(r->row, fig, (double)(msgs - sgot), "msgs");
			rq_log(s->ctx, "# %s: the server received %" PRIu64 " of %" PRIu64 " (UC drops without a receive posted)",
			       name, sgot, msgs);
		}
		snprintf(fig, sizeof(fig), "bw_%s", name);
		rq_figure_add(r->row, fig, gbps, "Gb/s");
		snprintf(fig, sizeof(fig), "msg_rate_%s", name);
		rq_figure_add(r->row, fig, rate, "msg/s");
		/* not bw_*: the kind's key figures are the rates, judged by compare */
		if (isfinite(ci)) {
			snprintf(fig, sizeof(fig), "ci95_pct_%s", name);
			rq_figure_add(r->row, fig, ci, "%");
		}
		snprintf(fig, sizeof(fig), "measure_s_%s", name);
		rq_figure_add(r->row, fig, secs, "s");
		rq_log(s->ctx, "%s %s x %lld QP: %" PRIu64 " messages in %.3f s = %.3f Gb/s (+-%.2f %%, "
		       "%zu batches) (%.1f MiB/s), %.0f msg/s", vb_op_names[cfg->op], name, cfg->qps, msgs,
		       secs, gbps, ci, m.n, gbps * 1e9 / 8 / 1048576, rate);
		snprintf(what, sizeof(what), "%s %s", vb_op_names[cfg->op], name);
		if (cfg->tolerance_pct > 0)
			note_stop(s, r->row, &m, ci, secs, name, what, cfg->must_converge);
		vp_judge_bw(s, r->pair, r->row, &t, gbps, what);
		rq_judge(r->row, msgs > 0, "%s: no message completed", what);
		if (cfg->verify) {
			if (cfg->op == VB_OP_READ) {
				sbad = verify_slots(r, size, first, sizeof(first));
				rq_judge(r->row, sbad == 0, "%s: %u QP buffer(s) read back wrong, first: %s",
					 what, sbad, first);
			} else {
				rq_judge(r->row, sscanf(theirs, "bad=%u", &sbad) == 1 && sbad == 0,
					 "%s: the server found bad data: %s", what, theirs);
			}
		}
	}
out:
	free(m.work);
	free(m.secs);
}

static void run_pair(struct vp *s, int i, const struct bw_cfg *cfg)
{
	struct bw_run r = { .s = s, .cfg = cfg, .row = vp_row(s, i), .pair = i };
	uint64_t max = 0;
	struct vb_opts o = {
		.qpt = (enum vb_qpt)cfg->transport,
		.nqp = (int)cfg->qps,
		.tx_depth = (int)cfg->queue_depth,
		.rx_depth = cfg->op == VB_OP_SEND ? (int)cfg->queue_depth : 1,
		.events = false,	/* busy polling, as perftest */
		.ack_timeout = (int)cfg->qp_timeout,
		.psn_seed = (uint32_t)now_ms() ^ (s->server ? 0x3c3cu : 0xc3c3u) ^ (uint32_t)getpid(),
	};
	char mine[1024], theirs[1024], why[512];
	enum rq_verdict v;
	int ret;

	for (size_t k = 0; k < cfg->sizes.n; k++)
		if ((uint64_t)cfg->sizes.num[k] > max)
			max = (uint64_t)cfg->sizes.num[k];
	r.slot = (max + 4095) & ~(size_t)4095;
	o.buf_size = r.slot * (size_t)cfg->qps;
	v = vp_open_vb(s, i, &r.v, &o, why, sizeof(why));
	if (v == RQ_NONE)
		vb_peer_fmt(&r.v.local, mine, sizeof(mine));
	if (vp_trade(s, r.row, v, v == RQ_NONE ? mine : why, theirs, sizeof(theirs)) < 0)
		goto out;
	if ((ret = vb_peer_parse(&r.v.remote, theirs, why, sizeof(why))) ||
	    (ret = vb_connect(&r.v, why, sizeof(why)))) {
		vp_trade(s, r.row, vp_verdict_for(ret), why, theirs, sizeof(theirs));
		goto out;
	}
	rq_log(s->ctx, "# connected %lld QP(s), path MTU %d", cfg->qps, vb_mtu_bytes(r.v.path_mtu));
	for (size_t k = 0; k < cfg->sizes.n && r.row->verdict == RQ_NONE; k++) {
		one_size(&r, (size_t)cfg->sizes.num[k]);
		if (r.row->failed && !s->server && r.why[0])
			break;	/* the stream broke: the next size would only time out */
	}
	if (!s->server) {
		struct rusage ru;

		/* what the runner itself costs while streaming (buffers + libraries) */
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			rq_figure_add(r.row, "runner_peak_rss", ru.ru_maxrss / 1024.0, "MiB");
	}
out:
	vb_close(&r.v);
}

static void bw_run(struct rq_ctx *ctx, const void *p)
{
	const struct bw_cfg *cfg = p;
	struct vp s;

	if (vp_begin(&s, ctx, cfg->server_devices) == 0)
		for (int i = 0; i < s.npairs; i++)
			run_pair(&s, i, cfg);
	vp_end(&s);
}

const struct rq_kind rq_kind_bandwidth = {
	.name = "bandwidth",
	.summary = "native RDMA WRITE/READ/SEND streaming: Gb/s and msg/s per size, data verified",
	.doc = "Streams RDMA WRITE, RDMA READ or SEND over `qps` QPs with `queue_depth` work requests "
	       "in flight, for `duration` per message size, busy-polling the CQ as perftest does "
	       "(the deadline is checked every 64 polls). Reports Gb/s (10^9 bit/s) and messages per "
	       "second per size; judges `min_gbps` and `min_line_rate` (a fraction of the port's "
	       "sysfs rate, not judged on rxe whose rate is fictitious) and, with `verify`, that every "
	       "QP's data arrived intact. Each size also reports its figure's 95 % interval "
	       "(`ci95_pct_SIZE`, from 50 ms batches of the stream) and how long it streamed "
	       "(`measure_s_SIZE`); with `tolerance_pct` a size stops once that interval is within it "
	       "(docs/verbs.md, \"Adaptive measurements\"). Each ACTIVE port gets a row.",
	.keys = bw_keys,
	.cfg_size = sizeof(struct bw_cfg),
	.default_targets = "hca,rxe-vm,rxe-host",
	/* msg_rate_SIZE is bw_SIZE over the size: the same change, judged once */
	.key_figures = "bw_*",
	.two_sided = true,
	.validate = bw_validate,
	.run = bw_run,
};
