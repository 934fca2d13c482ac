/* SPDX-License-Identifier: MIT */
/*
 * What a kind reads of a node: its sysfs and procfs files, its devices'
 * attributes, the modules and daemons it asks about, the tools whose
 * output it parses.  `rdmaqual capture` copies the union of every kind's
 * reads (qual/capture.c), so a node kind states what it reads next to the
 * code that reads it and a capture replays it (--target sysroot:DIR); a
 * kind that reads something it does not declare fails on a replay, and
 * tests/test_capture.c's kinds_reads_are_captured checks that each
 * declaration is copied.
 *
 * A kind's list is an array ended by RQ_READS_END, in rq_kind.reads.
 * Paths are the node's (absolute, the root prefix is capture's); a path
 * may hold fnmatch globs in its components (`/proc/irq/[0-9]*` then
 * `/node`) and `{kernel}` (the running kernel's release, as
 * /proc/sys/kernel/osrelease says it).  An attribute whose first component
 * is a link (`iommu_group/type`) is read through it: the link, and the rest
 * under where it points.  The union keeps each thing once, in the order
 * it is first declared (capture's base list, then the kinds in kinds.def
 * order); one declared twice gets the deeper depth and both flags.
 */
#ifndef RQ_READS_H
#define RQ_READS_H

#include <stdbool.h>

enum rq_read_type {
	RQ_READ_END,		/* ends a list */
	RQ_READ_PATH,		/* a file, link or dir (depth levels of it) of the node's tree */
	RQ_READ_PCI,		/* an attribute of PCI devices, relative to their directory (scope) */
	RQ_READ_PCI_VENDOR,	/* every PCI function of a vendor (bound or not) is an RDMA device's */
	RQ_READ_NETDEV,		/* an attribute of every netdev (/sys/class/net/X/...) */
	RQ_READ_MODULE,		/* a kernel module: /sys/module/M's state, and per flags its files */
	RQ_READ_PROCESS,	/* whether a daemon runs: /proc/PID/comm of the processes so named */
	RQ_READ_TOOL,		/* a tool's output; "{pci}" per HCA function, "{netdev}" per Ethernet netdev */
};

/* Which PCI devices an RQ_READ_PCI attribute is read on. */
#define RQ_PCI_FUNCTION	0x1u	/* an RDMA device's PCI function (and a vendor's, RQ_READ_PCI_VENDOR) */
#define RQ_PCI_BRIDGES	0x2u	/* the bridges above such a function, up to the root port */
#define RQ_PCI_PARENT	0x4u	/* the device above a netdev's device (virtio's PCI function) */
#define RQ_PCI_ALL	(RQ_PCI_FUNCTION | RQ_PCI_BRIDGES | RQ_PCI_PARENT)

/* What is read of an RQ_READ_MODULE beyond /sys/module/M/{initstate,version,srcversion,refcnt,taint}. */
#define RQ_MOD_MODINFO		0x1u	/* `modinfo M` where it is loaded */
#define RQ_MOD_MODINFO_GPU	0x2u	/* ... and also unloaded where an NVIDIA GPU is on the bus */
#define RQ_MOD_EXPORTS		0x4u	/* `modprobe --show-exports FILE` of its file (modinfo's) */
#define RQ_MOD_MODVERSIONS	0x8u	/* `modprobe --dump-modversions FILE` of its file */

struct rq_read {
	enum rq_read_type type;
	const char *path;		/* PATH: the path; PCI, NETDEV: the attribute; MODULE: its name;
					 * PROCESS: its comm */
	unsigned depth;			/* a directory: how many levels below it are copied */
	unsigned flags;			/* PCI: RQ_PCI_*; MODULE: RQ_MOD_*; PCI_VENDOR: the vendor id */
	bool follow;			/* PATH, PCI, NETDEV: a link, and the entry it points at */
	const char *const *argv;	/* TOOL: the command, NULL-terminated */
};

#define RQ_READS_END			{ .type = RQ_READ_END }
/* A file (or a link, not followed), or a glob of them. */
#define RQ_READS_FILE(p)		{ .type = RQ_READ_PATH, .path = (p) }
#define RQ_READS_GLOB(p)		RQ_READS_FILE(p)
/* A directory and depth levels below it. */
#define RQ_READS_TREE(p, d)		{ .type = RQ_READ_PATH, .path = (p), .depth = (d) }
/* A link and the entry it points at. */
#define RQ_READS_LINK(p)		{ .type = RQ_READ_PATH, .path = (p), .follow = true }
/* An attribute (a directory: depth levels) of the PCI devices of scope (RQ_PCI_*). */
#define RQ_READS_PCI(attr, scope)	{ .type = RQ_READ_PCI, .path = (attr), .flags = (scope) }
#define RQ_READS_PCI_TREE(attr, d, scope) { .type = RQ_READ_PCI, .path = (attr), .depth = (d), .flags = (scope) }
#define RQ_READS_PCI_LINK(attr, scope) { .type = RQ_READ_PCI, .path = (attr), .flags = (scope), .follow = true }
#define RQ_READS_PCI_VENDOR(id)		{ .type = RQ_READ_PCI_VENDOR, .flags = (id) }
#define RQ_READS_NETDEV(attr)		{ .type = RQ_READ_NETDEV, .path = (attr) }
#define RQ_READS_NETDEV_TREE(attr, d)	{ .type = RQ_READ_NETDEV, .path = (attr), .depth = (d) }
#define RQ_READS_NETDEV_LINK(attr)	{ .type = RQ_READ_NETDEV, .path = (attr), .follow = true }
#define RQ_READS_MODULE(name, f)	{ .type = RQ_READ_MODULE, .path = (name), .flags = (f) }
#define RQ_READS_PROCESS(comm)		{ .type = RQ_READ_PROCESS, .path = (comm) }
/* argv is a compound literal: a list of tools is file-scope (static in a function it is no constant). */
#define RQ_READS_TOOL(...)		{ .type = RQ_READ_TOOL, .argv = (const char *const[]){ __VA_ARGS__, NULL } }

#endif
