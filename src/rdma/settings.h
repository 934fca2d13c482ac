/* SPDX-License-Identifier: MIT */
/*
 * Node settings under a root ("" or "/": the live node, else a tree):
 * what mtu set: and irq-affinity set: change, and what their undo records
 * restore (kind_mtu.c, kind_irq_affinity.c register the appliers).
 */
#ifndef RQ_RDMA_SETTINGS_H
#define RQ_RDMA_SETTINGS_H

#include <stddef.h>

/* Netdev MTU: live: ioctl SIOCSIFMTU; a tree: the sysfs file.  0 or -errno. */
int netdev_get_mtu(const char *root, const char *ifname, int *mtu);
int netdev_set_mtu(const char *root, const char *ifname, int mtu);
/* IRQ affinity (/proc/irq/N/smp_affinity_list).  0 or -errno. */
int irq_set_affinity(const char *root, int irq, const char *cpulist);

/*
 * What a netdev is beyond its name: "ifindex=N,mac=M" (the permanent MAC
 * where the driver reports it; unreadable parts "-").
 */
void netdev_ident(const char *root, const char *ifname, char *buf, size_t size);
/*
 * The netdev an ident meant: ifname when it still is that device, else the
 * device with the recorded ifindex and MAC under another name.  0 with
 * name set, or -ENODEV.
 */
int netdev_find(const char *root, const char *ifname, const char *ident, char *name,
		size_t size);
/* The action name of an IRQ ("mlx5_comp0@pci:0000:af:00.0"), or "". */
void irq_vector(const char *root, int irq, char *buf, size_t size);
/* The IRQ whose action name is vector, or -1. */
int irq_by_vector(const char *root, const char *vector);

#endif
