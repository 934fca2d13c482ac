// SPDX-License-Identifier: MIT
/*
 * rxe link creation and deletion over RDMA netlink (libnl-3).  The sequence
 * is the one iproute2 6.1's rdma/link.c uses (RDMA_NLDEV_CMD_NEWLINK with
 * RDMA_NLDEV_ATTR_DEV_NAME, LINK_TYPE "rxe" and NDEV_NAME).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <rdma/rdma_netlink.h>
#include "rdma/rxe_nl.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

/* The kernel's answer to one request: the errno of its nlmsgerr. */
struct nl_answer {
	int err;		/* 0 or -errno from the kernel */
	bool got_err;
	/* GET dump lookup */
	const char *want;
	int index;
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_answer *a = arg;

	a->err = e->error;	/* already negative */
	a->got_err = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	return NL_STOP;
}

static int on_dev(struct nl_msg *msg, void *arg)
{
	struct nl_answer *a = arg;
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct nlmsghdr *h = nlmsg_hdr(msg);

	/* Only DEV_INDEX and DEV_NAME are read; leave the rest unvalidated. */
	if (nlmsg_parse(h, 0, tb, RDMA_NLDEV_ATTR_MAX - 1, NULL) < 0)
		return NL_SKIP;
	if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME])
		return NL_SKIP;
	if (nla_len(tb[RDMA_NLDEV_ATTR_DEV_INDEX]) < (int)sizeof(uint32_t))
		return NL_SKIP;
	if (a->index < 0 && !strcmp(nla_get_string(tb[RDMA_NLDEV_ATTR_DEV_NAME]), a->want))
		a->index = (int)nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	return NL_OK;
}

/* Connect a socket whose receives give up after timeout_ms. */
static struct nl_sock *rdma_sock(int64_t timeout_ms, char *err, size_t errsz)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct timeval tv;
	int rc;

	if (!sk) {
		snprintf(err, errsz, "netlink: out of memory");
		return NULL;
	}
	rc = nl_connect(sk, NETLINK_RDMA);
	if (rc < 0) {
		snprintf(err, errsz, "netlink: cannot open an RDMA netlink socket: %s",
			 nl_geterror(rc));
		nl_socket_free(sk);
		return NULL;
	}
	if (timeout_ms <= 0)
		timeout_ms = 5000;
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return sk;
}

/* Send msg (freed here) and collect the answer through the callbacks. */
static int exchange(struct nl_sock *sk, struct nl_msg *msg, struct nl_answer *a,
		    bool dump, char *err, size_t errsz, const char *what)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int rc;

	if (!cb) {
		nlmsg_free(msg);
		snprintf(err, errsz, "%s: out of memory", what);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, a);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, a);
	if (dump)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_dev, a);
	rc = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (rc < 0) {
		nl_cb_put(cb);
		snprintf(err, errsz, "%s: send: %s", what, nl_geterror(rc));
		return -EIO;
	}
	/* A dump ends with NLMSG_DONE (NL_STOP by default); a request with its ACK. */
	rc = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (a->got_err && a->err < 0) {
		snprintf(err, errsz, "%s: kernel says: %s", what, strerror(-a->err));
		return a->err;
	}
	if (rc < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			snprintf(err, errsz, "%s: no answer from the kernel in time", what);
		else
			snprintf(err, errsz, "%s: receive: %s", what, nl_geterror(rc));
		return -EIO;
	}
	return 0;
}

static struct nl_msg *nldev_msg(int cmd, int flags)
{
	return nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd), NLM_F_REQUEST | flags);
}

int rq_rdma_dev_index(const char *name, int64_t timeout_ms, char *err, size_t errsz)
{
	struct nl_answer a = { .want = name, .index = -1 };
	struct nl_sock *sk = rdma_sock(timeout_ms, err, errsz);
	struct nl_msg *msg;
	int rc;

	if (!sk)
		return -EIO;
	msg = nldev_msg(RDMA_NLDEV_CMD_GET, NLM_F_DUMP | NLM_F_ACK);
	if (!msg) {
		nl_socket_free(sk);
		snprintf(err, errsz, "netlink: out of memory");
		return -ENOMEM;
	}
	rc = exchange(sk, msg, &a, true, err, errsz, "list RDMA devices");
	nl_socket_free(sk);
	if (rc < 0)
		return rc;
	if (a.index < 0) {
		snprintf(err, errsz, "no RDMA device named %s", name);
		return -ENODEV;
	}
	return a.index;
}

int rq_rxe_add(const char *name, const char *netdev, int64_t timeout_ms,
	       char *err, size_t errsz)
{
	struct nl_answer a = { .index = -1 };
	char what[128];
	struct nl_sock *sk;
	struct nl_msg *msg;
	int rc;

	if (!name || !*name || strlen(name) >= 64 || !netdev || !*netdev || strlen(netdev) >= 16) {
		snprintf(err, errsz, "rxe add: bad device or netdev name");
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "rxe add %s on %s", name, netdev);
	sk = rdma_sock(timeout_ms, err, errsz);
	if (!sk)
		return -EIO;
	msg = nldev_msg(RDMA_NLDEV_CMD_NEWLINK, NLM_F_ACK);
	if (!msg || nla_put_string(msg, RDMA_NLDEV_ATTR_DEV_NAME, name) < 0 ||
	    nla_put_string(msg, RDMA_NLDEV_ATTR_LINK_TYPE, "rxe") < 0 ||
	    nla_put_string(msg, RDMA_NLDEV_ATTR_NDEV_NAME, netdev) < 0) {
		if (msg)
			nlmsg_free(msg);
		nl_socket_free(sk);
		snprintf(err, errsz, "%s: cannot build the request", what);
		return -ENOMEM;
	}
	rc = exchange(sk, msg, &a, false, err, errsz, what);
	nl_socket_free(sk);
	if (rc == -ENOENT || rc == -EOPNOTSUPP) {
		/* The two ways a missing module shows (rdma_rxe needs crc32_generic, docs/vm.md). */
		size_t n = strlen(err);
		snprintf(err + n, errsz - n, " (is rdma_rxe loaded, with crc32_generic?)");
	}
	return rc;
}

int rq_rxe_del(const char *name, int64_t timeout_ms, char *err, size_t errsz)
{
	struct nl_answer a = { .index = -1 };
	char what[128];
	struct nl_sock *sk;
	struct nl_msg *msg;
	int idx, rc;

	idx = rq_rdma_dev_index(name, timeout_ms, err, errsz);
	if (idx < 0)
		return idx;
	snprintf(what, sizeof(what), "rxe delete %s", name);
	sk = rdma_sock(timeout_ms, err, errsz);
	if (!sk)
		return -EIO;
	msg = nldev_msg(RDMA_NLDEV_CMD_DELLINK, NLM_F_ACK);
	if (!msg || nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, (uint32_t)idx) < 0) {
		if (msg)
			nlmsg_free(msg);
		nl_socket_free(sk);
		snprintf(err, errsz, "%s: cannot build the request", what);
		return -ENOMEM;
	}
	rc = exchange(sk, msg, &a, false, err, errsz, what);
	nl_socket_free(sk);
	return rc;
}
