/* SPDX-License-Identifier: MIT */
/*
 * The verbs sequence of rdma-core's rc_pingpong.c (device, PD, MR, CQ,
 * QP, INIT, RTR, RTS), with the attribute structs written as designated
 * initialisers beside the masks that say which of their fields count,
 * resources unwound in reverse through a goto ladder, and waits bounded
 * by a deadline (a CQ wait that blocks forever is how a dead peer hangs
 * a test run).
 */
#include <errno.h>
#include <fcntl.h>
#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/util.h"
#include "rdma/verbs.h"

const char *const vb_qpt_names[] = { "rc", "uc", "ud", NULL };
const char *const vb_op_names[] = { "send", "write", "read", NULL };

int vb_mtu_bytes(int m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

static int fail(int err, char *why, size_t whysz, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(int err, char *why, size_t whysz, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(why, whysz, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < whysz && err)
		snprintf(why + n, whysz - n, ": %s", strerror(err));
	return -(err ? err : EIO);
}

static struct ibv_context *open_by_name(const char *name, int *err)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	*err = ENODEV;
	list = ibv_get_device_list(&n);
	if (!list) {
		*err = errno ? errno : ENODEV;
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		*err = ctx ? 0 : (errno ? errno : EIO);
		break;
	}
	ibv_free_device_list(list);
	return ctx;
}

int vb_probe(const char *dev, struct vb_probe *p, char *why, size_t whysz)
{
	struct ibv_device_attr dattr;
	struct ibv_context *ctx;
	int err;

	memset(p, 0, sizeof(*p));
	ctx = open_by_name(dev, &err);
	if (!ctx)
		return fail(err, why, whysz, err == ENODEV ? "libibverbs lists no device %s" :
			    "ibv_open_device(%s)", dev);
	err = ibv_query_device(ctx, &dattr);
	if (err) {
		ibv_close_device(ctx);
		return fail(err, why, whysz, "ibv_query_device(%s)", dev);
	}
	p->phys_port_cnt = dattr.phys_port_cnt;
	snprintf(p->fw_ver, sizeof(p->fw_ver), "%s", dattr.fw_ver);
	p->vendor_part_id = dattr.vendor_part_id;
	p->max_qp = dattr.max_qp;
	for (int i = 1; i <= dattr.phys_port_cnt && i <= VB_PROBE_PORTS; i++) {
		struct ibv_port_attr pa;

		err = ibv_query_port(ctx, (uint8_t)i, &pa);
		if (err) {
			ibv_close_device(ctx);
			return fail(err, why, whysz, "ibv_query_port(%s, %d)", dev, i);
		}
		p->state[i - 1] = pa.state;
		p->nports = i;
	}
	ibv_close_device(ctx);
	return 0;
}

int vb_open(struct vb *v, const struct vb_opts *o, char *why, size_t whysz)
{
	struct ibv_device_attr dattr;
	int err, access;

	memset(v, 0, sizeof(*v));
	v->qpt = o->qpt;
	v->nqp = o->nqp < 1 ? 1 : o->nqp > VB_MAX_QP ? VB_MAX_QP : o->nqp;
	v->port = o->port ? o->port : 1;
	v->gid_index = o->gid_index;
	v->events = o->events;
	v->ack_timeout = o->ack_timeout >= 1 && o->ack_timeout <= 31 ? o->ack_timeout : VB_ACK_TIMEOUT_HCA;
	snprintf(v->dev, sizeof(v->dev), "%s", o->dev);

	v->ctx = open_by_name(o->dev, &err);
	if (!v->ctx) {
		if (err == ENODEV) {
			snprintf(why, whysz, "device %s not found by libibverbs", o->dev);
			return -ENODEV;
		}
		return fail(err, why, whysz, "open device %s", o->dev);
	}
	if ((err = ibv_query_port(v->ctx, v->port, &v->pattr))) {
		fail(err, why, whysz, "query port %s/%d", o->dev, v->port);
		goto err_ctx;
	}
	if (v->pattr.state != IBV_PORT_ACTIVE) {
		snprintf(why, whysz, "port %s/%d is %s, not ACTIVE", o->dev, v->port,
			 ibv_port_state_str(v->pattr.state));
		err = ENETDOWN;
		goto err_ctx;
	}
	v->global = v->pattr.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (v->global && v->gid_index < 0) {
		snprintf(why, whysz, "port %s/%d has no usable RoCE v2 GID (IPv4 address on its netdev?)",
			 o->dev, v->port);
		err = ENOENT;
		goto err_ctx;
	}
	if (!v->global && !v->pattr.lid) {
		snprintf(why, whysz, "port %s/%d has no LID (no subnet manager?)", o->dev, v->port);
		err = ENETDOWN;
		goto err_ctx;
	}
	if (v->gid_index >= 0) {
		union ibv_gid gid;

		if ((err = ibv_query_gid(v->ctx, v->port, v->gid_index, &gid))) {
			fail(err, why, whysz, "query GID %d of %s/%d", v->gid_index, o->dev, v->port);
			goto err_ctx;
		}
		memcpy(v->local.gid, gid.raw, 16);
	}
	if (ibv_query_device(v->ctx, &dattr)) {
		err = errno ? errno : EIO;
		fail(err, why, whysz, "query device %s", o->dev);
		goto err_ctx;
	}

	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		err = errno ? errno : ENOMEM;
		fail(err, why, whysz, "allocate PD");
		goto err_ctx;
	}
	v->buf_size = o->buf_size ? o->buf_size : 4096;
	if ((err = posix_memalign((void **)&v->buf, 4096, v->buf_size))) {
		fail(err, why, whysz, "allocate %zu bytes", v->buf_size);
		v->buf = NULL;
		goto err_pd;
	}
	memset(v->buf, 0, v->buf_size);
	access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	v->mr = ibv_reg_mr(v->pd, v->buf, v->buf_size, access);
	if (!v->mr) {
		err = errno ? errno : ENOMEM;
		fail(err, why, whysz, "register %zu bytes (memlock limit?)", v->buf_size);
		goto err_buf;
	}
	if (v->events) {
		v->ch = ibv_create_comp_channel(v->ctx);
		if (!v->ch) {
			err = errno ? errno : EIO;
			fail(err, why, whysz, "create completion channel");
			goto err_mr;
		}
		/* poll() tells when to read; a read must never block past the deadline */
		fcntl(v->ch->fd, F_SETFL, fcntl(v->ch->fd, F_GETFL) | O_NONBLOCK);
	}
	{
		int cqe = v->nqp * (o->tx_depth + o->rx_depth) + 1;

		if (cqe > dattr.max_cqe)
			cqe = dattr.max_cqe;
		v->cq = ibv_create_cq(v->ctx, cqe, NULL, v->ch, 0);
	}
	if (!v->cq) {
		err = errno ? errno : EIO;
		fail(err, why, whysz, "create CQ");
		goto err_ch;
	}

	for (int i = 0; i < v->nqp; i++) {
		struct ibv_qp_init_attr qia = {
			.send_cq = v->cq,
			.recv_cq = v->cq,
			.cap = {
				.max_send_wr = o->tx_depth > 0 ? (uint32_t)o->tx_depth : 1,
				.max_recv_wr = o->rx_depth > 0 ? (uint32_t)o->rx_depth : 1,
				.max_send_sge = 1,
				.max_recv_sge = 1,
				.max_inline_data = o->max_inline,
			},
			.qp_type = v->qpt == VB_RC ? IBV_QPT_RC : v->qpt == VB_UC ? IBV_QPT_UC : IBV_QPT_UD,
			.sq_sig_all = 0,
		};
		struct ibv_qp_attr init = {
			.qp_state = IBV_QPS_INIT,
			.pkey_index = 0,
			.port_num = (uint8_t)v->port,
			.qp_access_flags = v->qpt == VB_UC ? IBV_ACCESS_REMOTE_WRITE :
					   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			.qkey = VB_QKEY,
		};
		int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   (v->qpt == VB_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);

		v->qp[i] = ibv_create_qp(v->pd, &qia);
		if (!v->qp[i] && o->max_inline) {
			/* some devices refuse inline data: go on without it */
			qia.cap.max_inline_data = 0;
			v->qp[i] = ibv_create_qp(v->pd, &qia);
		}
		if (!v->qp[i]) {
			err = errno ? errno : EIO;
			fail(err, why, whysz, "create %s QP", vb_qpt_names[v->qpt]);
			goto err_qp;
		}
		v->max_inline = qia.cap.max_inline_data;
		if ((err = ibv_modify_qp(v->qp[i], &init, mask))) {
			fail(err, why, whysz, "modify QP %u to INIT", v->qp[i]->qp_num);
			goto err_qp;
		}
		v->local.qp[i].qpn = v->qp[i]->qp_num;
		v->local.qp[i].psn = (o->psn_seed * 2654435761u + (uint32_t)i * 40503u) & 0xffffff;
	}
	v->local.nqp = v->nqp;
	v->local.lid = v->pattr.lid;
	v->local.rkey = v->mr->rkey;
	v->local.addr = (uintptr_t)v->buf;
	v->local.size = v->buf_size;
	v->local.mtu = v->pattr.active_mtu;
	return 0;

err_qp:
	for (int i = v->nqp - 1; i >= 0; i--)
		if (v->qp[i])
			ibv_destroy_qp(v->qp[i]);
	memset(v->qp, 0, sizeof(v->qp));
	ibv_destroy_cq(v->cq);
	v->cq = NULL;
err_ch:
	if (v->ch)
		ibv_destroy_comp_channel(v->ch);
	v->ch = NULL;
err_mr:
	ibv_dereg_mr(v->mr);
	v->mr = NULL;
err_buf:
	free(v->buf);
	v->buf = NULL;
err_pd:
	ibv_dealloc_pd(v->pd);
	v->pd = NULL;
err_ctx:
	ibv_close_device(v->ctx);
	v->ctx = NULL;
	return -err;
}

void vb_close(struct vb *v)
{
	if (v->cq && v->unacked)
		ibv_ack_cq_events(v->cq, v->unacked);
	v->unacked = 0;
	for (int i = VB_MAX_QP - 1; i >= 0; i--) {
		if (v->ah[i])
			ibv_destroy_ah(v->ah[i]);
		if (v->qp[i])
			ibv_destroy_qp(v->qp[i]);
		v->ah[i] = NULL;
		v->qp[i] = NULL;
	}
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->ch)
		ibv_destroy_comp_channel(v->ch);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	free(v->buf);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	v->cq = NULL;
	v->ch = NULL;
	v->mr = NULL;
	v->buf = NULL;
	v->pd = NULL;
	v->ctx = NULL;
}

void vb_peer_fmt(const struct vb_peer *p, char *buf, size_t size)
{
	struct sb sb = SB_INIT;

	sb_addf(&sb, "vb1 nqp=%d lid=%u mtu=%d rkey=%u addr=%" PRIu64 " size=%" PRIu64 " gid=",
		p->nqp, p->lid, p->mtu, p->rkey, p->addr, p->size);
	for (int i = 0; i < 16; i++)
		sb_addf(&sb, "%02x", p->gid[i]);
	for (int i = 0; i < p->nqp && i < VB_MAX_QP; i++)
		sb_addf(&sb, " qp=%u:%u", p->qp[i].qpn, p->qp[i].psn);
	snprintf(buf, size, "%s", sb.buf);
	sb_release(&sb);
}

static int num(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out > max ? -EINVAL : 0;
}

int vb_peer_parse(struct vb_peer *p, const char *text, char *why, size_t whysz)
{
	char *copy = xstrdup(text), *save = NULL, *tok;
	int nq = 0, ret = 0;
	unsigned long long u;

	memset(p, 0, sizeof(*p));
	tok = strtok_r(copy, " ", &save);
	if (!tok || strcmp(tok, "vb1")) {
		snprintf(why, whysz, "peer sent '%.40s', not a vb1 address", text);
		free(copy);
		return -EPROTO;
	}
	while (!ret && (tok = strtok_r(NULL, " ", &save))) {
		char *eq = strchr(tok, '=');
		const char *k = tok, *val;

		if (!eq) {
			ret = -EPROTO;
			break;
		}
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(k, "nqp")) {
			ret = num(val, VB_MAX_QP, &u);
			p->nqp = (int)u;
		} else if (!strcmp(k, "lid")) {
			ret = num(val, 0xffff, &u);
			p->lid = (uint16_t)u;
		} else if (!strcmp(k, "mtu")) {
			ret = num(val, IBV_MTU_4096, &u);
			p->mtu = (int)u;
		} else if (!strcmp(k, "rkey")) {
			ret = num(val, UINT32_MAX, &u);
			p->rkey = (uint32_t)u;
		} else if (!strcmp(k, "addr")) {
			ret = num(val, UINT64_MAX, &u);
			p->addr = u;
		} else if (!strcmp(k, "size")) {
			ret = num(val, UINT64_MAX, &u);
			p->size = u;
		} else if (!strcmp(k, "gid")) {
			if (strlen(val) != 32) {
				ret = -EPROTO;
				break;
			}
			for (int i = 0; i < 16 && !ret; i++) {
				unsigned b;

				if (sscanf(val + 2 * i, "%2x", &b) != 1)
					ret = -EPROTO;
				p->gid[i] = (uint8_t)b;
			}
		} else if (!strcmp(k, "qp")) {
			unsigned qpn, psn;
			char c;

			if (nq >= VB_MAX_QP || sscanf(val, "%u:%u%c", &qpn, &psn, &c) != 2 ||
			    qpn > 0xffffff || psn > 0xffffff) {
				ret = -EPROTO;
				break;
			}
			p->qp[nq].qpn = qpn;
			p->qp[nq].psn = psn;
			nq++;
		}
		/* unknown keys: a newer peer; ignore */
	}
	if (!ret && (p->nqp < 1 || nq != p->nqp))
		ret = -EPROTO;
	if (ret)
		snprintf(why, whysz, "peer address is malformed: '%.60s'", text);
	free(copy);
	return ret ? -EPROTO : 0;
}

int vb_connect(struct vb *v, char *why, size_t whysz)
{
	struct ibv_device_attr dattr;
	int rd_atom = 1, err;

	if (v->remote.nqp != v->nqp) {
		snprintf(why, whysz, "peer has %d QPs, we have %d", v->remote.nqp, v->nqp);
		return -EPROTO;
	}
	if (!ibv_query_device(v->ctx, &dattr)) {
		rd_atom = dattr.max_qp_rd_atom < dattr.max_qp_init_rd_atom ? dattr.max_qp_rd_atom
									    : dattr.max_qp_init_rd_atom;
		rd_atom = rd_atom > 16 ? 16 : rd_atom < 1 ? 1 : rd_atom;
	}
	v->path_mtu = (int)v->pattr.active_mtu;
	if (v->remote.mtu && v->remote.mtu < v->path_mtu)
		v->path_mtu = v->remote.mtu;
	for (int i = 0; i < v->nqp; i++) {
		struct ibv_ah_attr ah = {
			.is_global = v->global,
			.dlid = v->remote.lid,
			.sl = 0,
			.src_path_bits = 0,
			.port_num = (uint8_t)v->port,
			.grh = {
				.sgid_index = (uint8_t)(v->gid_index < 0 ? 0 : v->gid_index),
				.hop_limit = 64,
			},
		};
		memcpy(ah.grh.dgid.raw, v->remote.gid, 16);

		if (v->qpt == VB_UD) {
			struct ibv_qp_attr rtr = { .qp_state = IBV_QPS_RTR };
			struct ibv_qp_attr rts = {
				.qp_state = IBV_QPS_RTS,
				.sq_psn = v->local.qp[i].psn,
			};

			if ((err = ibv_modify_qp(v->qp[i], &rtr, IBV_QP_STATE)))
				return fail(err, why, whysz, "modify UD QP %u to RTR", v->local.qp[i].qpn);
			if ((err = ibv_modify_qp(v->qp[i], &rts, IBV_QP_STATE | IBV_QP_SQ_PSN)))
				return fail(err, why, whysz, "modify UD QP %u to RTS", v->local.qp[i].qpn);
			v->ah[i] = ibv_create_ah(v->pd, &ah);
			if (!v->ah[i])
				return fail(errno ? errno : EIO, why, whysz, "create address handle");
			continue;
		}

		struct ibv_qp_attr rtr = {
			.qp_state = IBV_QPS_RTR,
			.path_mtu = (enum ibv_mtu)v->path_mtu,
			.dest_qp_num = v->remote.qp[i].qpn,
			.rq_psn = v->remote.qp[i].psn,
			.max_dest_rd_atomic = (uint8_t)rd_atom,
			.min_rnr_timer = 12,
			.ah_attr = ah,
		};
		int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN |
			       (v->qpt == VB_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0);
		struct ibv_qp_attr rts = {
			.qp_state = IBV_QPS_RTS,
			.sq_psn = v->local.qp[i].psn,
			.timeout = (uint8_t)v->ack_timeout,	/* VB_ACK_TIMEOUT_*: why */
			.retry_cnt = 7,
			.rnr_retry = 7,		/* 7 = retry forever: the peer reposts receives */
			.max_rd_atomic = (uint8_t)rd_atom,
		};
		int rts_mask = IBV_QP_STATE | IBV_QP_SQ_PSN |
			       (v->qpt == VB_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						  IBV_QP_MAX_QP_RD_ATOMIC : 0);

		if ((err = ibv_modify_qp(v->qp[i], &rtr, rtr_mask)))
			return fail(err, why, whysz, "modify QP %u to RTR (dest QPN %u, path MTU %d)",
				    v->local.qp[i].qpn, v->remote.qp[i].qpn, vb_mtu_bytes(v->path_mtu));
		if ((err = ibv_modify_qp(v->qp[i], &rts, rts_mask)))
			return fail(err, why, whysz, "modify QP %u to RTS", v->local.qp[i].qpn);
	}
	return 0;
}

int vb_post_recv(struct vb *v, int qi, size_t off, size_t len, uint64_t wr_id)
{
	size_t extra = v->qpt == VB_UD ? VB_UD_GRH : 0;
	struct ibv_sge sge = {
		.addr = (uintptr_t)v->buf + off,
		.length = (uint32_t)(len + extra),
		.lkey = v->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (off + len + extra > v->buf_size)
		return -EINVAL;
	return -ibv_post_recv(v->qp[qi], &wr, &bad);
}

int vb_post_send(struct vb *v, int qi, enum vb_op op, size_t off, size_t len, uint64_t roff,
		 uint64_t wr_id, bool signaled, bool imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)v->buf + off,
		.length = (uint32_t)len,
		.lkey = v->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) |
			      (op != VB_OP_READ && len && len <= v->max_inline ? IBV_SEND_INLINE : 0),
	}, *bad;

	if (off + len > v->buf_size)
		return -EINVAL;
	switch (op) {
	case VB_OP_SEND:
		wr.opcode = IBV_WR_SEND;
		if (v->qpt == VB_UD) {
			wr.wr.ud.ah = v->ah[qi];
			wr.wr.ud.remote_qpn = v->remote.qp[qi].qpn;
			wr.wr.ud.remote_qkey = VB_QKEY;
		}
		break;
	case VB_OP_WRITE:
	case VB_OP_READ:
		if (v->qpt == VB_UD || (op == VB_OP_READ && v->qpt == VB_UC))
			return -EOPNOTSUPP;
		if (roff + len > v->remote.size)
			return -EINVAL;
		wr.opcode = op == VB_OP_READ ? IBV_WR_RDMA_READ :
			    imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		wr.imm_data = htobe32((uint32_t)wr_id);
		wr.wr.rdma.remote_addr = v->remote.addr + roff;
		wr.wr.rdma.rkey = v->remote.rkey;
		break;
	}
	return -ibv_post_send(v->qp[qi], &wr, &bad);
}

int vb_wait(struct vb *v, struct ibv_wc *wc, int n, int64_t deadline_ms, char *why, size_t whysz)
{
	unsigned spins = 0;

	for (;;) {
		int k = ibv_poll_cq(v->cq, n, wc);

		if (k < 0)
			return fail(EIO, why, whysz, "poll CQ");
		if (k > 0)
			return k;
		if (!v->events) {
			/* busy polling, as perftest does; the clock costs more than a poll */
			if ((++spins & 1023) == 0 && now_ms() >= deadline_ms)
				goto timeout;
			continue;
		}
		if (!v->armed) {
			int err = ibv_req_notify_cq(v->cq, 0);

			if (err)
				return fail(err, why, whysz, "arm CQ");
			v->armed = true;
			continue;	/* poll again: a completion may have come before arming */
		}
		{
			struct pollfd pfd = { .fd = v->ch->fd, .events = POLLIN };
			int64_t left = deadline_ms - now_ms();
			struct ibv_cq *cq;
			void *cctx;
			int r;

			if (left <= 0)
				goto timeout;
			r = poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left);
			if (r < 0 && errno != EINTR)
				return fail(errno, why, whysz, "poll completion channel");
			if (r <= 0)
				continue;
			if (ibv_get_cq_event(v->ch, &cq, &cctx) == 0) {
				v->armed = false;
				if (++v->unacked >= 64) {
					ibv_ack_cq_events(v->cq, v->unacked);
					v->unacked = 0;
				}
			} else if (errno != EAGAIN && errno != EINTR) {
				return fail(errno, why, whysz, "read completion event");
			}
		}
	}
timeout:
	snprintf(why, whysz, "no completion within the deadline (peer gone or packets lost)");
	return -ETIMEDOUT;
}

bool vb_wc_ok(const struct ibv_wc *wc, char *why, size_t whysz)
{
	if (wc->status == IBV_WC_SUCCESS)
		return true;
	snprintf(why, whysz, "work completion error: %s (%d) for wr_id %" PRIu64 ", vendor_err 0x%x",
		 ibv_wc_status_str(wc->status), wc->status, wc->wr_id, wc->vendor_err);
	return false;
}
