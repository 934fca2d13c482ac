/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/kind.h"
#include "rdma/rdmadev.h"
#include "rdma/verbs_pair.h"

double vp_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void vp_stats(double *v, size_t n, struct vp_stats *st)
{
	double sum = 0;

	memset(st, 0, sizeof(*st));
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	st->min = v[0];
	st->max = v[n - 1];
	st->mean = sum / n;
	st->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	/* nearest rank, as perftest reports its 99% percentile */
	st->p99 = v[(size_t)ceil(0.99 * n) - 1];
}

void vp_size_name(uint64_t b, char *buf, size_t size)
{
	if (b && b % (1ull << 30) == 0)
		snprintf(buf, size, "%lluGiB", (unsigned long long)(b >> 30));
	else if (b && b % (1ull << 20) == 0)
		snprintf(buf, size, "%lluMiB", (unsigned long long)(b >> 20));
	else if (b && b % 1024 == 0)
		snprintf(buf, size, "%lluKiB", (unsigned long long)(b >> 10));
	else
		snprintf(buf, size, "%lluB", (unsigned long long)b);
}

enum rq_verdict vp_verdict_for(int err)
{
	switch (err) {
	case -ENODEV:
	case -ENETDOWN:
	case -ENOENT:
	case -EOPNOTSUPP:
		return RQ_SKIP;
	default:
		return RQ_FAIL;
	}
}

/* This side's ACTIVE, selected ports; -1 with the verdict on ctx->main when none. */
static int list_ports(struct vp *s, const char *server_devices)
{
	struct rq_ctx *ctx = s->ctx;
	struct rq_case tmp;
	struct rq_ctx c2 = *ctx;
	struct rdma_devs d;
	struct sb states = SB_INIT;
	char missing[64];
	int idx[VP_MAX_PORTS], n, ret;

	if (s->server && server_devices && *server_devices) {
		tmp = *ctx->c;
		tmp.devices = (char *)server_devices;
		c2.c = &tmp;
	}
	ret = rdma_devs_scan(&c2, &d);
	if (ret < 0) {
		rq_result_set(ctx->main, RQ_ERROR, "cannot list RDMA devices: %s", strerror(-ret));
		return -1;
	}
	if (d.n == 0) {
		rq_result_set(ctx->main, RQ_SKIP, "no RDMA device on this %s side",
			      s->server ? "server" : "client");
		rdma_devs_release(&d);
		return -1;
	}
	n = rdma_devs_select2(&c2, &d, idx, VP_MAX_PORTS, missing, sizeof(missing));
	if (n < 0) {
		/* a device named in the case that is not there: that was expected to be */
		rq_result_set(ctx->main, RQ_FAIL, "device %s not found on the %s side", missing,
			      s->server ? "server" : "client");
		rdma_devs_release(&d);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		const struct rdma_dev *dev = &d.v[idx[k]];

		for (int j = 0; j < dev->nports; j++) {
			const struct rdma_port *p = &dev->ports[j];
			struct vp_port *vp;

			if (!rdma_port_selected(&c2, p->num))
				continue;
			sb_addf(&states, "%s%s/%d %s", states.len ? ", " : "", dev->name, p->num,
				p->state_str[0] ? p->state_str : "?");
			if (p->state != PORT_ACTIVE || s->nports >= VP_MAX_PORTS)
				continue;
			vp = &s->ports[s->nports++];
			snprintf(vp->dev, sizeof(vp->dev), "%s", dev->name);
			vp->port = p->num;
			snprintf(vp->link_layer, sizeof(vp->link_layer), "%s", p->link_layer);
			snprintf(vp->netdev, sizeof(vp->netdev), "%s", p->netdev);
			vp->rate_gbps = p->rate_gbps;
			vp->data_gbps = p->data_gbps;
			vp->is_virtual = dev->is_virtual;
			vp->gid_index = -1;
			if (ctx->c->gid_index >= 0) {
				vp->gid_index = (int)ctx->c->gid_index;
			} else if (!strcmp(p->link_layer, "Ethernet")) {
				int g = rdma_pick_gid(&c2, dev->name, p->num, p->netdev, vp->gid,
						      sizeof(vp->gid));

				vp->gid_index = g >= 0 ? g : -1;
			}
			rq_log(ctx, "# %s side: %s/%d %s rate %.1f Gb/s%s, GID index %d %s",
			       s->server ? "server" : "client", vp->dev, vp->port, vp->link_layer,
			       vp->rate_gbps, vp->is_virtual ? " (virtual)" : "", vp->gid_index, vp->gid);
		}
	}
	rdma_devs_release(&d);
	if (!s->nports) {
		rq_result_set(ctx->main, RQ_SKIP, "no ACTIVE port on the %s side (%s)",
			      s->server ? "server" : "client", states.len ? states.buf : "no port selected");
		sb_release(&states);
		return -1;
	}
	sb_release(&states);
	return 0;
}

static int64_t margin_deadline(struct rq_ctx *ctx)
{
	int64_t left = rq_ctx_left_ms(ctx), m = left / 20;

	/* keep time to report: 5 % of what is left, 0.3 to 3 s */
	if (m < 300)
		m = 300;
	if (m > 3000)
		m = 3000;
	return now_ms() + (left > m ? left - m : left / 2);
}

int vp_begin(struct vp *s, struct rq_ctx *ctx, const char *server_devices)
{
	char why[512], theirs[128], mine[64];
	const char *peer = ctx->peer_addr && *ctx->peer_addr ? ctx->peer_addr : "127.0.0.1";
	enum rq_verdict v = RQ_NONE;
	int ret;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->server = ctx->role == ROLE_SERVER;
	s->oob.fd = -1;
	s->deadline = margin_deadline(ctx);
	if (ctx->role == ROLE_SINGLE) {
		rq_result_set(ctx->main, RQ_ERROR, "%s is two-sided but ran as a single role",
			      ctx->c->kind->name);
		return -1;
	}
	/* a side with no port still connects, to tell the other why */
	if (list_ports(s, server_devices) < 0)
		v = ctx->main->verdict;
	rq_log(ctx, "# out-of-band: %s port %d (%s)", s->server ? "listening on" : "connecting to",
	       ctx->oob_port, s->server ? (ctx->local_addr ? ctx->local_addr : "any") : peer);
	ret = oob_open(&s->oob, s->server, ctx->local_addr, peer, ctx->oob_port, s->deadline, why,
		       sizeof(why));
	if (ret) {
		if (v == RQ_NONE)
			rq_result_set(ctx->main, RQ_ERROR, "out-of-band connection: %s", why);
		return -1;
	}
	snprintf(mine, sizeof(mine), "ports %d", s->nports);
	if (v != RQ_NONE) {
		/* our reason is on ctx->main already; pass it on */
		ret = vp_trade(s, ctx->main, v, ctx->main->reason ? ctx->main->reason : "failed",
			       theirs, sizeof(theirs));
		return -1;
	}
	if (vp_trade(s, ctx->main, RQ_NONE, mine, theirs, sizeof(theirs)) < 0)
		return -1;
	if (sscanf(theirs, "ports %d", &s->npairs) != 1 || s->npairs < 1) {
		rq_result_set(ctx->main, RQ_ERROR, "peer sent '%.40s' for its ports", theirs);
		return -1;
	}
	if (s->npairs > s->nports)
		s->npairs = s->nports;
	if (!s->server)
		for (int i = 0; i < s->npairs; i++)
			vp_note_loopback(s, i, vp_row(s, i));
	/* client ports without a partner: their own rows say so */
	if (!s->server)
		for (int i = s->npairs; i < s->nports; i++)
			rq_result_set(vp_row(s, i), RQ_SKIP, "the server side has only %d ACTIVE port(s)",
				      s->npairs);
	return 0;
}

void vp_end(struct vp *s)
{
	oob_close(&s->oob);
}

struct rq_result *vp_row(struct vp *s, int i)
{
	return rq_ctx_row(s->ctx, s->ports[i].dev, s->ports[i].port);
}

int vp_trade(struct vp *s, struct rq_result *row, enum rq_verdict v, const char *mine,
	     char *theirs, size_t size)
{
	static const char *const word[] = {
		[RQ_NONE] = "ok", [RQ_PASS] = "ok", [RQ_FAIL] = "fail", [RQ_SKIP] = "skip",
		[RQ_ERROR] = "error",
	};
	char *out = xasprintf("%s %s", word[v], mine);
	char *in = xmalloc(size + 16);
	char why[512];
	int ret;

	if (v != RQ_NONE && row->verdict == RQ_NONE)
		rq_result_set(row, v, "%s", mine);
	ret = oob_exchange(&s->oob, out, in, size + 16, s->deadline, why, sizeof(why));
	free(out);
	if (ret) {
		if (row->verdict == RQ_NONE)
			rq_result_set(row, RQ_ERROR, "out-of-band exchange with the %s side: %s",
				      s->server ? "client" : "server", why);
		free(in);
		return -1;
	}
	if (!strncmp(in, "ok ", 3)) {
		snprintf(theirs, size, "%s", in + 3);
		free(in);
		return v == RQ_NONE ? 0 : -1;
	}
	{
		enum rq_verdict pv = !strncmp(in, "skip ", 5) ? RQ_SKIP :
				     !strncmp(in, "fail ", 5) ? RQ_FAIL : RQ_ERROR;
		const char *reason = strchr(in, ' ') ? strchr(in, ' ') + 1 : in;

		rq_log(s->ctx, "# %s side stopped: %s", s->server ? "client" : "server", reason);
		if (row->verdict == RQ_NONE) {
			if (s->server)
				/* the client's row tells the case; ours only says we were fine */
				rq_judge(row, true, "client side stopped: %s", reason);
			else
				/* the runner appends the server's own reason to ours */
				rq_result_set(row, pv, "stopped by the server side");
		}
	}
	free(in);
	return -1;
}

int vp_ack_timeout(const struct vp_port *p, int asked)
{
	if (asked >= 1 && asked <= 31)
		return asked;
	/* a software device's round trip includes its host's scheduler (verbs.h) */
	return p->is_virtual ? VB_ACK_TIMEOUT_SOFT : VB_ACK_TIMEOUT_HCA;
}

enum rq_verdict vp_open_vb(struct vp *s, int i, struct vb *v, struct vb_opts *o,
			   char *why, size_t whysz)
{
	int ret;

	o->dev = s->ports[i].dev;
	o->port = s->ports[i].port;
	o->gid_index = s->ports[i].gid_index;
	o->ack_timeout = vp_ack_timeout(&s->ports[i], o->ack_timeout);
	ret = vb_open(v, o, why, whysz);
	if (ret == 0) {
		rq_log(s->ctx, "# opened %s/%d: %s, active MTU %d, GID index %d, ACK timeout %d (%.4g ms)",
		       o->dev, o->port, v->global ? "RoCE" : "IB", vb_mtu_bytes(v->pattr.active_mtu),
		       v->gid_index, v->ack_timeout, 4.096e-3 * (double)(1u << v->ack_timeout));
		return RQ_NONE;
	}
	rq_log(s->ctx, "# %s", why);
	return vp_verdict_for(ret);
}

bool vp_loopback(const struct vp *s)
{
	const char *a = s->server ? s->ctx->local_addr : s->ctx->peer_addr;

	return !a || !*a || str_starts(a, "127.") || !strcmp(a, "localhost");
}

bool vp_note_loopback(struct vp *s, int i, struct rq_result *row)
{
	static const char what[] = "loopback, the wire is not tested";

	/* software devices never had a wire; say it where it matters */
	if (s->ports[i].is_virtual || !vp_loopback(s))
		return false;
	rq_fact_add(row, "loopback", what);
	if (!row->reason)
		row->reason = xasprintf("%s (%s/%d to itself: no --peer)", what, s->ports[i].dev,
					s->ports[i].port);
	return true;
}

void vp_judge_bw(struct vp *s, int i, struct rq_result *row, const struct vp_thresholds *t,
		 double gbps, const char *what)
{
	const struct vp_port *p = &s->ports[i];

	if (t->min_gbps > 0)
		rq_judge(row, gbps >= t->min_gbps, "%s: %.3f Gb/s, below min_gbps %.3f", what, gbps,
			 t->min_gbps);
	if (t->min_line_rate > 0) {
		const char *why = p->is_virtual ? "software device (rate fictitious)" :
				  p->data_gbps <= 0 ? "port rate unknown" :
				  vp_loopback(s) ? "loopback inside the HCA (the wire is not tested)" : NULL;

		if (why) {
			rq_log(s->ctx, "# min_line_rate not judged on %s/%d: %s", p->dev, p->port, why);
			char *f = xasprintf("not judged: %s", why);

			rq_fact_add(row, "min_line_rate", f);
			free(f);
		} else {
			double need = t->min_line_rate * p->data_gbps;

			rq_judge(row, gbps >= need,
				 "%s: %.3f Gb/s, below %.0f %% of the port's %.1f Gb/s data rate (%.0f Gb/s signalled): %.3f",
				 what, gbps, t->min_line_rate * 100, p->data_gbps, p->rate_gbps, need);
		}
	}
}

void vp_judge_lat(struct rq_result *row, const struct vp_thresholds *t, double us, const char *what)
{
	if (t->max_latency_us > 0)
		rq_judge(row, us <= t->max_latency_us, "%s %.2f us, above max_latency_us %.2f", what,
			 us, t->max_latency_us);
}

/* -1: the peer is gone, 1: a message from it is waiting, 0: neither (non-blocking) */
static int peer_poll(struct vp *s)
{
	struct pollfd pfd = { .fd = s->oob.fd, .events = POLLIN };
	char c;

	if (s->oob.fd < 0)
		return -1;
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	/* readable: either a message (the peer is fine) or EOF/error (it is gone) */
	return recv(s->oob.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0 ? -1 : 1;
}

bool vp_peer_gone(struct vp *s)
{
	return peer_poll(s) < 0;
}

int vp_wait(struct vp *s, struct vb *v, struct ibv_wc *wc, int n, char *why, size_t whysz)
{
	for (;;) {
		int64_t slice = now_ms() + 200;
		int k = vb_wait(v, wc, n, slice < s->deadline ? slice : s->deadline, why, whysz);

		if (k != -ETIMEDOUT)
			return k;
		if (now_ms() >= s->deadline)
			return k;
		if (vp_peer_gone(s)) {
			snprintf(why, whysz, "the %s side went away while we waited for a completion",
				 s->server ? "client" : "server");
			return -ECONNRESET;
		}
	}
}

int vp_wait_or_msg(struct vp *s, struct vb *v, struct ibv_wc *wc, int n, char *why, size_t whysz)
{
	for (;;) {
		/* short slices: how late the end is seen, once a run, at no cost per completion */
		int64_t slice = now_ms() + 10;
		int k = vb_wait(v, wc, n, slice < s->deadline ? slice : s->deadline, why, whysz);

		if (k != -ETIMEDOUT)
			return k;
		if (now_ms() >= s->deadline)
			return k;
		switch (peer_poll(s)) {
		case 1:
			return 0;
		case -1:
			snprintf(why, whysz, "the %s side went away while we waited for a completion",
				 s->server ? "client" : "server");
			return -ECONNRESET;
		}
	}
}
