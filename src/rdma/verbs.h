/* SPDX-License-Identifier: MIT */
/*
 * The native verbs engine: one device port, a PD, one registered buffer,
 * one CQ (with a completion channel for event-driven waits), N QPs of one
 * transport (RC, UC or UD) taken through INIT, RTR and RTS from the
 * peer's QPN/PSN/GID/LID, posting SEND/RECV, RDMA WRITE (with immediate)
 * and RDMA READ, and waits that never block past a deadline.
 *
 * Errors are -errno with a one-line why.  The ones a kind turns into SKIP
 * (nothing the system under test did wrong here):
 *   -ENODEV      no such device
 *   -ENETDOWN    the port is not ACTIVE (or has no LID on IB)
 *   -ENOENT      no usable GID on a RoCE port
 *   -EOPNOTSUPP  the device refuses the transport or operation
 */
#ifndef RQ_VERBS_H
#define RQ_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define VB_MAX_QP 16
#define VB_UD_GRH 40	/* UD receives start with a 40-byte GRH */
#define VB_QKEY 0x11111111u

/*
 * RC local ACK timeout (IB's exponent: 4.096 us * 2^n before a request is
 * retransmitted).  14 (67 ms) is perftest's and rc_pingpong's default and
 * right for an HCA, whose round trip is microseconds.  Between emulated
 * guests the round trip includes the host's scheduler: with two runs on a
 * busy 2-core host a TCG guest is descheduled for longer than 67 ms, the
 * requester retransmits data that had arrived (go-back-N: rxe's
 * completer_retry_err beside the responder's duplicate_request, no
 * sequence error, nothing lost), and rxe in Debian's 6.1 kernel then fails
 * some retransmitted multi-packet SENDs at the responder ("remote
 * operation error" / "local QP operation error", or "remote invalid
 * request error"; 6.12 handles the same retransmissions).  Measured there
 * (bandwidth SEND 64 KiB, 2 QPs, 3 s, two runs at once, load 20): 14 gave
 * 15 to 64 retransmissions per case and 3 of 4 cases failed; 16 (268 ms)
 * and more gave none.  Software devices get 19 (2.1 s): no spurious
 * retransmission, and a real loss (none on the guests' unix-stream link)
 * costs seconds, not a verdict.
 */
#define VB_ACK_TIMEOUT_HCA 14
#define VB_ACK_TIMEOUT_SOFT 19

enum vb_qpt { VB_RC, VB_UC, VB_UD };
enum vb_op { VB_OP_SEND, VB_OP_WRITE, VB_OP_READ };

extern const char *const vb_qpt_names[];	/* "rc", "uc", "ud", NULL */
extern const char *const vb_op_names[];		/* "send", "write", "read", NULL */

struct vb_opts {
	const char *dev;
	int port;		/* 1-based */
	int gid_index;		/* -1: none (IB, LID routed); RoCE needs one */
	enum vb_qpt qpt;
	int nqp;		/* 1..VB_MAX_QP */
	size_t buf_size;	/* bytes registered (UD: per-slot GRH room is the caller's) */
	int tx_depth, rx_depth;
	bool events;		/* completion channel (event waits) instead of busy polling */
	uint32_t max_inline;	/* asked for; 0: none */
	uint32_t psn_seed;	/* PSNs are drawn from this */
	int ack_timeout;	/* RC local ACK timeout exponent 1..31; 0: VB_ACK_TIMEOUT_HCA */
};

/* What one side tells the other about itself, per QP. */
struct vb_info {
	uint32_t qpn, psn;
};

struct vb_peer {
	int nqp;
	uint16_t lid;
	uint8_t gid[16];
	uint32_t rkey;
	uint64_t addr, size;
	int mtu;		/* enum ibv_mtu: its port's active MTU */
	struct vb_info qp[VB_MAX_QP];
};

struct vb {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_size;
	struct ibv_qp *qp[VB_MAX_QP];
	struct ibv_ah *ah[VB_MAX_QP];
	int nqp;
	enum vb_qpt qpt;
	int port, gid_index;
	bool global;		/* RoCE: GRH with GIDs; IB: LIDs */
	bool events;
	bool armed;
	unsigned unacked;	/* CQ events not yet acked */
	uint32_t max_inline;	/* what the QPs accepted */
	int ack_timeout;	/* RC local ACK timeout exponent, as set at RTS */
	struct ibv_port_attr pattr;
	struct vb_peer local, remote;
	int path_mtu;		/* enum ibv_mtu, after connect */
	char dev[64];
};

int vb_open(struct vb *v, const struct vb_opts *o, char *why, size_t whysz);

/*
 * What an application does first, for the driver kind: open DEV through
 * libibverbs and query the device and each of its ports.  0, or -errno
 * with why naming the call that failed ("ibv_query_port(mlx5_0, 2): ...");
 * -ENODEV when libibverbs does not list the device.
 */
#define VB_PROBE_PORTS 16
struct vb_probe {
	int phys_port_cnt;
	char fw_ver[64];
	uint32_t vendor_part_id;
	int max_qp;
	int nports;				/* ports queried */
	enum ibv_port_state state[VB_PROBE_PORTS];	/* of port i + 1 */
};
int vb_probe(const char *dev, struct vb_probe *p, char *why, size_t whysz);
void vb_close(struct vb *v);

/* Text form of v->local for the out-of-band exchange, and its parser (untrusted input). */
void vb_peer_fmt(const struct vb_peer *p, char *buf, size_t size);
int vb_peer_parse(struct vb_peer *p, const char *text, char *why, size_t whysz);

/* RTR and RTS (or UD address handles) towards v->remote. */
int vb_connect(struct vb *v, char *why, size_t whysz);

/*
 * Post one receive of len bytes at buf offset off (UD: the GRH lands at off,
 * the payload at off + VB_UD_GRH).
 */
int vb_post_recv(struct vb *v, int qi, size_t off, size_t len, uint64_t wr_id);
/*
 * Post one send-side work request: SEND (UD: to the peer's QP qi), RDMA
 * WRITE with immediate (imm = true) or without, or RDMA READ, of len bytes
 * at local offset off to/from remote offset roff.
 */
int vb_post_send(struct vb *v, int qi, enum vb_op op, size_t off, size_t len, uint64_t roff,
		 uint64_t wr_id, bool signaled, bool imm);

/*
 * Wait for up to n completions until deadline_ms.  Event mode arms the
 * CQ and polls the channel fd with the time left; busy mode spins on
 * ibv_poll_cq and reads the clock every 1024 empty polls.  Returns the
 * number of completions (>= 1), or -ETIMEDOUT / -errno with why.
 * Completions with an error status are returned as they are: check
 * them with vb_wc_ok().
 */
int vb_wait(struct vb *v, struct ibv_wc *wc, int n, int64_t deadline_ms, char *why, size_t whysz);
bool vb_wc_ok(const struct ibv_wc *wc, char *why, size_t whysz);

/* 256 -> IBV_MTU_256 ...; enum -> bytes. */
int vb_mtu_bytes(int mtu_enum);

#endif
