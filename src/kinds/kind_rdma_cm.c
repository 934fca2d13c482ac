/* SPDX-License-Identifier: MIT */
/*
 * rdma-cm: a connection the way MPI, NVMe-oF, SMB Direct and every
 * librdmacm application makes one: resolve the IP address to a device and
 * GID, resolve the route, connect (the server listens and accepts),
 * exchange verified messages, disconnect.  Each step has a deadline; a
 * step that ends in the wrong CM event (ADDR_ERROR, ROUTE_ERROR,
 * UNREACHABLE, REJECTED, ...) is a FAIL whose reason names that event.
 *
 * The CM listens on the pair's out-of-band port + 1 (the out-of-band TCP
 * connection, on the port itself, tells the client when the server is
 * listening, so no connect is ever tried before and no blind retry is
 * needed).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <jansson.h>
#include "core/kind.h"
#include "rdma/pattern.h"
#include "rdma/verbs_pair.h"

struct cm_cfg {
	uint64_t size;
	long long iterations;
	long long seed;
	char *connect_to;
	int64_t resolve_timeout_ms;
	double max_latency_us;
};

static const struct key_def cm_keys[] = {
	{ .name = "size", .type = KEY_SIZE, .def = "1KiB", .min = 1, .max = 16 << 20,
	  .offset = offsetof(struct cm_cfg, size),
	  .help = "message size" },
	{ .name = "iterations", .type = KEY_INT, .def = "10", .min = 1, .max = 1000000,
	  .offset = offsetof(struct cm_cfg, iterations),
	  .help = "verified round trips over the connection" },
	{ .name = "seed", .type = KEY_INT, .def = "1", .min = 0, .max = INT64_MAX,
	  .offset = offsetof(struct cm_cfg, seed),
	  .help = "seed of the payload pattern" },
	{ .name = "connect_to", .type = KEY_STR,
	  .offset = offsetof(struct cm_cfg, connect_to),
	  .help = "IPv4 address the client connects to instead of the server's (a wrong or unreachable one must fail)" },
	{ .name = "resolve_timeout", .type = KEY_DURATION, .def = "5s", .min = 10, .max = 600000,
	  .offset = offsetof(struct cm_cfg, resolve_timeout_ms),
	  .help = "timeout of address and route resolution, each (scaled)" },
	{ .name = "max_latency_us", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e9,
	  .offset = offsetof(struct cm_cfg, max_latency_us),
	  .help = "fail when the median round trip is longer (0: not judged)" },
	KEY_END
};

static int cm_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct cm_cfg *cfg = c->cfg;
	struct in_addr a;

	if (cfg->connect_to && inet_pton(AF_INET, cfg->connect_to, &a) != 1) {
		snprintf(err, errsz, "connect_to: '%s' is not an IPv4 address", cfg->connect_to);
		return -1;
	}
	return 0;
}

struct cm_run {
	struct vp *s;
	const struct cm_cfg *cfg;
	struct rq_result *row;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id, *id;
	struct vb v;		/* pd, mr, cq, channel and qp[0] of id; ctx is the CM's */
	bool established;
	char why[512];
};

static void cm_row(struct cm_run *r)
{
	if (r->id && r->id->verbs && r->row == r->s->ctx->main)
		r->row = rq_ctx_row(r->s->ctx, ibv_get_device_name(r->id->verbs->device),
				    r->id->port_num);
}

/*
 * Wait for the next CM event until the deadline.  The server also watches
 * the out-of-band socket: a client that gave up says so there (or closes).
 * Returns 0 with *ev (ack it), -ETIMEDOUT, or -ECANCELED (peer message).
 */
static int cm_next(struct cm_run *r, struct rdma_cm_event **ev, bool watch_peer)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = r->ch->fd, .events = POLLIN },
			{ .fd = r->s->oob.fd, .events = POLLIN },
		};
		int64_t left = r->s->deadline - now_ms();
		int n;

		if (rdma_get_cm_event(r->ch, ev) == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			snprintf(r->why, sizeof(r->why), "rdma_get_cm_event: %s", strerror(errno));
			return -errno;
		}
		if (left <= 0) {
			snprintf(r->why, sizeof(r->why), "no CM event before the deadline");
			return -ETIMEDOUT;
		}
		n = poll(pfd, watch_peer ? 2 : 1, left > 1000000 ? 1000000 : (int)left);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (watch_peer && n > 0 && pfd[1].revents) {
			char msg[300];
			size_t len = 0;

			if (oob_recv(&r->s->oob, msg, sizeof(msg) - 1, &len, r->s->deadline, r->why,
				     sizeof(r->why)) == 0) {
				msg[len] = '\0';
				snprintf(r->why, sizeof(r->why), "%s", msg);
			}
			return -ECANCELED;
		}
	}
}

/* Expect one event type; otherwise the reason names what came back. */
static int cm_expect(struct cm_run *r, enum rdma_cm_event_type want, const char *step,
		     struct rdma_cm_id **child, bool watch_peer)
{
	struct rdma_cm_event *ev;
	int ret = cm_next(r, &ev, watch_peer);

	if (ret) {
		if (ret == -ETIMEDOUT)
			snprintf(r->why, sizeof(r->why), "%s: no %s before the deadline", step,
				 rdma_event_str(want));
		return ret;
	}
	rq_log(r->s->ctx, "# CM event %s (status %d)", rdma_event_str(ev->event), ev->status);
	if (ev->event != want) {
		snprintf(r->why, sizeof(r->why), "%s: %s (status %d), expected %s", step,
			 rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return -EPROTO;
	}
	if (child)
		*child = ev->id;
	rdma_ack_cm_event(ev);
	return 0;
}

/* PD, MR, CQ with its channel, and the RC QP, on the CM id's device. */
static int cm_resources(struct cm_run *r)
{
	struct rdma_cm_id *id = r->id;
	size_t S = r->cfg->size;
	struct ibv_qp_init_attr qia = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	r->v.ctx = id->verbs;
	r->v.qpt = VB_RC;
	r->v.nqp = 1;
	r->v.events = true;
	r->v.pd = ibv_alloc_pd(id->verbs);
	r->v.buf_size = 2 * S;
	if (!r->v.pd || posix_memalign((void **)&r->v.buf, 4096, r->v.buf_size)) {
		r->v.buf = NULL;
		snprintf(r->why, sizeof(r->why), "allocate PD or buffer failed");
		return -ENOMEM;
	}
	memset(r->v.buf, 0, r->v.buf_size);
	r->v.mr = ibv_reg_mr(r->v.pd, r->v.buf, r->v.buf_size, IBV_ACCESS_LOCAL_WRITE);
	r->v.ch = ibv_create_comp_channel(id->verbs);
	if (!r->v.mr || !r->v.ch) {
		snprintf(r->why, sizeof(r->why), "register memory or create channel: %s", strerror(errno));
		return -errno;
	}
	fcntl(r->v.ch->fd, F_SETFL, fcntl(r->v.ch->fd, F_GETFL) | O_NONBLOCK);
	r->v.cq = ibv_create_cq(id->verbs, 9, NULL, r->v.ch, 0);
	if (!r->v.cq) {
		snprintf(r->why, sizeof(r->why), "create CQ: %s", strerror(errno));
		return -errno;
	}
	qia.send_cq = qia.recv_cq = r->v.cq;
	if (rdma_create_qp(id, r->v.pd, &qia)) {
		snprintf(r->why, sizeof(r->why), "rdma_create_qp: %s", strerror(errno));
		return -errno;
	}
	r->v.qp[0] = id->qp;
	return vb_post_recv(&r->v, 0, S, S, 0);
}

static void cm_release(struct cm_run *r)
{
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	r->v.qp[0] = NULL;
	if (r->v.cq && r->v.unacked)
		ibv_ack_cq_events(r->v.cq, r->v.unacked);
	if (r->v.cq)
		ibv_destroy_cq(r->v.cq);
	if (r->v.ch)
		ibv_destroy_comp_channel(r->v.ch);
	if (r->v.mr)
		ibv_dereg_mr(r->v.mr);
	free(r->v.buf);
	if (r->v.pd)
		ibv_dealloc_pd(r->v.pd);
	memset(&r->v, 0, sizeof(r->v));
	if (r->id && r->id != r->listen_id)
		rdma_destroy_id(r->id);
	if (r->listen_id)
		rdma_destroy_id(r->listen_id);
	r->id = r->listen_id = NULL;
	if (r->ch)
		rdma_destroy_event_channel(r->ch);
	r->ch = NULL;
}

static int wait_wc(struct cm_run *r, struct ibv_wc *wc)
{
	int n = vp_wait(r->s, &r->v, wc, 1, r->why, sizeof(r->why));

	if (n < 0)
		return n;
	return vb_wc_ok(wc, r->why, sizeof(r->why)) ? 0 : -EIO;
}

/* Round trips; the server answers each message with the next pattern. */
static int exchange(struct cm_run *r, double *lat, unsigned *bad, char *first, size_t firstsz)
{
	size_t S = r->cfg->size;
	uint64_t seed = (uint64_t)r->cfg->seed;
	struct ibv_wc wc;
	bool early = false;	/* server: the next message came before our send completed */
	int ret;

	for (uint64_t i = 0; i < (uint64_t)r->cfg->iterations; i++) {
		bool got_send = false, got_recv = r->s->server;
		double t0;

		if (r->s->server && !early) {
			do {
				if ((ret = wait_wc(r, &wc)))
					return ret;
			} while (!(wc.opcode & IBV_WC_RECV));
		}
		early = false;
		{
			uint64_t want = r->s->server ? 2 * i : 2 * i - 1;

			if (r->s->server || i > 0) {
				if (pattern_check(r->v.buf + S, S, seed, want, NULL, NULL) >= 0 && !(*bad)++)
					pattern_describe(r->v.buf + S, S, seed, want, first, firstsz);
				memset(r->v.buf + S, 0, S);
			}
		}
		if ((r->s->server ? i + 1 < (uint64_t)r->cfg->iterations : true) &&
		    (ret = vb_post_recv(&r->v, 0, S, S, i + 1)))
			return ret;
		pattern_fill(r->v.buf, S, seed, r->s->server ? 2 * i + 1 : 2 * i);
		t0 = vp_now_us();
		if ((ret = vb_post_send(&r->v, 0, VB_OP_SEND, 0, S, 0, i, true, false)))
			return ret;
		while (!got_send || !got_recv) {
			if ((ret = wait_wc(r, &wc)))
				return ret;
			if ((wc.opcode & IBV_WC_RECV) && r->s->server) {
				early = true;
			} else if (wc.opcode & IBV_WC_RECV) {
				got_recv = true;
				if (lat)
					lat[i] = vp_now_us() - t0;
			} else {
				got_send = true;
			}
		}
	}
	if (!r->s->server) {
		uint64_t last = 2 * (uint64_t)r->cfg->iterations - 1;

		if (pattern_check(r->v.buf + S, S, seed, last, NULL, NULL) >= 0 && !(*bad)++)
			pattern_describe(r->v.buf + S, S, seed, last, first, firstsz);
	}
	return 0;
}

/*
 * Lab runs (--nodes) and hca with --peer keep the out-of-band exchange on
 * the management address (peer_addr) and pass the RDMA side's addresses as
 * parameters:
 * the CM connection goes over the rails, where its traffic belongs.
 */
static bool lab_addr(struct rq_ctx *ctx, bool peer, char *buf, size_t size)
{
	int side = ctx->role == ROLE_SERVER;
	const char *v = rq_ctx_where(ctx)->rdma_addr[peer ? !side : side];
	bool ok = v && *v && strlen(v) < size;

	if (ok)
		snprintf(buf, size, "%s", v);
	return ok;
}

static void cm_server(struct cm_run *r)
{
	struct rq_ctx *ctx = r->s->ctx;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(ctx->oob_port + 1)) };
	char theirs[300], first[256] = "";
	unsigned bad = 0;
	int ret;

	char lab[64];
	const char *bind = lab_addr(ctx, false, lab, sizeof(lab)) ? lab : ctx->local_addr;

	if (bind && *bind)
		inet_pton(AF_INET, bind, &sa.sin_addr);
	if (rdma_create_id(r->ch, &r->listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(r->listen_id, (struct sockaddr *)&sa) || rdma_listen(r->listen_id, 1)) {
		snprintf(r->why, sizeof(r->why), "listen on %s:%d: %s",
			 bind && *bind ? bind : "*", ctx->oob_port + 1, strerror(errno));
		vp_trade(r->s, r->row, RQ_FAIL, r->why, theirs, sizeof(theirs));
		return;
	}
	rq_log(ctx, "# CM listening on %s:%d", bind && *bind ? bind : "*", ctx->oob_port + 1);
	if (vp_trade(r->s, r->row, RQ_NONE, "listening", theirs, sizeof(theirs)) < 0)
		return;
	ret = cm_expect(r, RDMA_CM_EVENT_CONNECT_REQUEST, "waiting for the client", &r->id, true);
	if (ret == -ECANCELED) {
		rq_judge(r->row, true, "listened; the client stopped: %s", r->why);
		return;
	}
	if (ret) {
		rq_judge(r->row, false, "%s", r->why);
		return;
	}
	cm_row(r);
	{
		struct rdma_conn_param param = {
			.responder_resources = 1,
			.initiator_depth = 1,
			.retry_count = 7,
			.rnr_retry_count = 7,
		};

		if ((ret = cm_resources(r)) || rdma_accept(r->id, &param)) {
			if (!ret)
				snprintf(r->why, sizeof(r->why), "rdma_accept: %s", strerror(errno));
			rq_judge(r->row, false, "%s", r->why);
			return;
		}
	}
	if ((ret = cm_expect(r, RDMA_CM_EVENT_ESTABLISHED, "accept", NULL, true))) {
		if (ret == -ECANCELED)
			rq_judge(r->row, true, "the client stopped: %s", r->why);
		else
			rq_judge(r->row, false, "%s", r->why);
		return;
	}
	if ((ret = exchange(r, NULL, &bad, first, sizeof(first)))) {
		rq_judge(r->row, false, "%s", r->why);
		return;
	}
	rq_judge(r->row, bad == 0, "data from the client: %u bad message(s), first: %s", bad, first);
	ret = cm_expect(r, RDMA_CM_EVENT_DISCONNECTED, "disconnect", NULL, false);
	rq_judge(r->row, ret == 0, "%s", r->why);
	if (!ret)
		rdma_disconnect(r->id);
}

static void cm_client(struct cm_run *r)
{
	struct rq_ctx *ctx = r->s->ctx;
	const struct cm_cfg *cfg = r->cfg;
	char lab_to[64], lab_src[64];
	const char *to = cfg->connect_to ? cfg->connect_to :
			 lab_addr(ctx, true, lab_to, sizeof(lab_to)) ? lab_to : ctx->peer_addr;
	const char *from = lab_addr(ctx, false, lab_src, sizeof(lab_src)) ? lab_src :
			   ctx->local_addr;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(ctx->oob_port + 1)) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	int tmo = (int)scaled_ms(cfg->resolve_timeout_ms);
	char theirs[300], first[256] = "";
	double t0, *lat = NULL;
	unsigned bad = 0;
	int ret;

	if (vp_trade(r->s, r->row, RQ_NONE, "ready", theirs, sizeof(theirs)) < 0)
		return;
	if (!to || inet_pton(AF_INET, to, &dst.sin_addr) != 1) {
		rq_result_set(r->row, RQ_ERROR, "no server address to connect to");
		goto tell;
	}
	if (from && *from)
		inet_pton(AF_INET, from, &src.sin_addr);
	rq_log(ctx, "# CM connecting to %s:%d", to, ctx->oob_port + 1);
	t0 = vp_now_us();
	if (rdma_create_id(r->ch, &r->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(r->id, src.sin_addr.s_addr ? (struct sockaddr *)&src : NULL,
			      (struct sockaddr *)&dst, tmo)) {
		rq_judge(r->row, false, "rdma_resolve_addr %s: %s", to, strerror(errno));
		goto tell;
	}
	if ((ret = cm_expect(r, RDMA_CM_EVENT_ADDR_RESOLVED, "address resolution", NULL, false))) {
		rq_judge(r->row, false, "%s (to %s)", r->why, to);
		goto tell;
	}
	cm_row(r);
	if (rdma_resolve_route(r->id, tmo)) {
		rq_judge(r->row, false, "rdma_resolve_route: %s", strerror(errno));
		goto tell;
	}
	if ((ret = cm_expect(r, RDMA_CM_EVENT_ROUTE_RESOLVED, "route resolution", NULL, false))) {
		rq_judge(r->row, false, "%s (to %s)", r->why, to);
		goto tell;
	}
	{
		struct rdma_conn_param param = {
			.responder_resources = 1,
			.initiator_depth = 1,
			.retry_count = 7,
			.rnr_retry_count = 7,
		};

		if ((ret = cm_resources(r)) || rdma_connect(r->id, &param)) {
			if (!ret)
				snprintf(r->why, sizeof(r->why), "rdma_connect: %s", strerror(errno));
			rq_judge(r->row, false, "%s", r->why);
			goto tell;
		}
	}
	if ((ret = cm_expect(r, RDMA_CM_EVENT_ESTABLISHED, "connect", NULL, false))) {
		rq_judge(r->row, false, "%s (to %s)", r->why, to);
		goto tell;
	}
	r->established = true;
	rq_figure_add(r->row, "connect_ms", (vp_now_us() - t0) / 1000.0, "ms");
	rq_log(ctx, "# connected to %s through %s/%d in %.1f ms", to,
	       ibv_get_device_name(r->id->verbs->device), r->id->port_num, (vp_now_us() - t0) / 1000.0);
	lat = xcalloc((size_t)cfg->iterations, sizeof(*lat));
	if ((ret = exchange(r, lat, &bad, first, sizeof(first)))) {
		rq_judge(r->row, false, "%s", r->why);
		free(lat);
		goto tell;
	}
	{
		struct vp_stats st;
		struct vp_thresholds t = { .max_latency_us = cfg->max_latency_us };

		vp_stats(lat, (size_t)cfg->iterations, &st);
		rq_figure_add(r->row, "lat_mean", st.mean, "us");
		rq_figure_add(r->row, "lat_median", st.median, "us");
		rq_figure_add(r->row, "lat_max", st.max, "us");
		vp_judge_lat(r->row, &t, st.median, "median round trip");
	}
	free(lat);
	rq_judge(r->row, bad == 0, "data from the server: %u bad message(s), first: %s", bad, first);
	if (rdma_disconnect(r->id)) {
		rq_judge(r->row, false, "rdma_disconnect: %s", strerror(errno));
		return;
	}
	ret = cm_expect(r, RDMA_CM_EVENT_DISCONNECTED, "disconnect", NULL, false);
	rq_judge(r->row, ret == 0, "%s", r->why);
	return;
tell:
	/* the server waits for a connection that will not come: tell it */
	{
		char msg[600], why[128];

		snprintf(msg, sizeof(msg), "client failed: %s", r->row->reason ? r->row->reason : r->why);
		oob_send(&r->s->oob, msg, strlen(msg), r->s->deadline, why, sizeof(why));
	}
}

static void cm_run(struct rq_ctx *ctx, const void *p)
{
	struct vp s;
	struct cm_run r = { .s = &s, .cfg = p };

	if (vp_begin(&s, ctx, NULL) == 0) {
		r.row = ctx->main;
		r.ch = rdma_create_event_channel();
		if (!r.ch) {
			char theirs[64];

			snprintf(r.why, sizeof(r.why), "rdma_create_event_channel: %s (rdma_ucm loaded?)",
				 strerror(errno));
			vp_trade(&s, ctx->main, errno == ENODEV || errno == ENOENT ? RQ_SKIP : RQ_FAIL, r.why,
				 theirs, sizeof(theirs));
		} else {
			fcntl(r.ch->fd, F_SETFL, fcntl(r.ch->fd, F_GETFL) | O_NONBLOCK);
			if (s.server)
				cm_server(&r);
			else
				cm_client(&r);
		}
		cm_release(&r);
	}
	vp_end(&s);
}

const struct rq_kind rq_kind_rdma_cm = {
	.name = "rdma-cm",
	.summary = "librdmacm connection: resolve address and route, connect, verified exchange, disconnect",
	.doc = "The way MPI, NVMe-oF and every librdmacm application connects: the client resolves the "
	       "server's IP address to a device and GID, resolves the route and connects; the server "
	       "listens and accepts; they exchange `iterations` verified messages and disconnect. Each "
	       "step has a deadline; a step that ends in another CM event (ADDR_ERROR, ROUTE_ERROR, "
	       "UNREACHABLE, REJECTED...) fails naming it. `connect_to` points the client elsewhere, "
	       "to prove that a wrong address fails. The CM listens on the pair's out-of-band port + 1.",
	.keys = cm_keys,
	.cfg_size = sizeof(struct cm_cfg),
	.default_targets = "hca,rxe-vm,rxe-host",
	/* connection setup and the typical round trip; mean and max follow the tail */
	.key_figures = "connect_ms lat_median",
	.two_sided = true,
	.validate = cm_validate,
	.run = cm_run,
};
