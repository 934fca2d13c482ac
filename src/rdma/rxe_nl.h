/* SPDX-License-Identifier: MIT */
/*
 * Soft-RoCE links through RDMA netlink (what `rdma link add NAME type rxe
 * netdev DEV` and `rdma link delete NAME` send), with libnl-3, so nothing
 * depends on the iproute2 `rdma` tool being present or parsing its output.
 *
 *   add: RDMA_NLDEV_CMD_NEWLINK with DEV_NAME, LINK_TYPE "rxe", NDEV_NAME
 *   del: RDMA_NLDEV_CMD_DELLINK with DEV_INDEX (looked up by name with a
 *        RDMA_NLDEV_CMD_GET dump: the kernel's dellink takes only an index)
 *
 * Each call returns 0 or -errno (the kernel's answer: -EEXIST when the netdev
 * already carries an rxe, -ENODEV for a missing netdev, -ENOENT when the rxe
 * module or crc32 is missing...) and fills err with a one-line reason.
 * Every exchange with the kernel is bounded by timeout_ms.
 */
#ifndef RQ_RXE_NL_H
#define RQ_RXE_NL_H

#include <stddef.h>
#include <stdint.h>

int rq_rxe_add(const char *name, const char *netdev, int64_t timeout_ms,
	       char *err, size_t errsz);
int rq_rxe_del(const char *name, int64_t timeout_ms, char *err, size_t errsz);
/* The RDMA device index of name: >= 0, or -ENODEV when there is none. */
int rq_rdma_dev_index(const char *name, int64_t timeout_ms, char *err, size_t errsz);

#endif
