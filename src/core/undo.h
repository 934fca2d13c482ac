/* SPDX-License-Identifier: MIT */
/*
 * The undo journal of the settings kinds (mtu set:, irq-affinity set:).
 * Before a kind changes a setting it appends how to undo it to a journal
 * file and fsyncs it; after restoring it drops the record.  A run killed in
 * between leaves the record, and `rdmaqual cleanup` (undo_apply_pending)
 * restores the setting.  One record per line, tab-separated:
 *
 *   mtu  ROOT  IFNAME  OLD_MTU      boot=BOOT_ID  ifindex=N,mac=M        TIME
 *   irq  ROOT  IRQ     OLD_CPULIST  boot=BOOT_ID  vector=ACTION_NAME     TIME
 *
 * ROOT is "/" for the live node, else the tree the change was made in
 * (tests use writable copies of the node fixtures).  Replay takes, per
 * setting, only the first record (the value from before any change); puts
 * an MTU back on the device with that ifindex and (permanent) MAC, under
 * whatever name it has now, and an affinity on the IRQ of that device's
 * vector, whatever number it has now; drops records of an earlier boot
 * unapplied; and says each thing it does.  Records of four fields (older
 * rdmaqual) are applied by name.
 */
#ifndef RQ_UNDO_H
#define RQ_UNDO_H

#include <stddef.h>
#include "core/ctx.h"

#define RQ_UNDO_JOURNAL "undo.journal"

/* The journal path for ctx: state_dir, else scratch; -ENOENT when neither. */
int undo_path(struct rq_ctx *ctx, char *buf, size_t size);
/* Append a record (fields without ROOT) and fsync; 0 or -errno. */
int undo_push(struct rq_ctx *ctx, const char *type, const char *what, const char *old);
/* Drop the first record that matches; 0, or -ENOENT when none did. */
int undo_drop(struct rq_ctx *ctx, const char *type, const char *what);
/*
 * Apply and drop every record of the journal at path (rdmaqual cleanup).
 * Returns the number of records that could not be applied (kept), or -errno;
 * log (may be NULL) gets one line per record.
 */
int undo_apply_pending(const char *path, struct sb *log);

/*
 * Apply and drop the pending records of one type made under ctx's root
 * (a kind's cleanup() in a fresh worker after its case was killed: the
 * in-memory list of changes died with the worker, the journal did not).
 * Returns how many records could not be applied, or -errno.
 */
int undo_apply_type(struct rq_ctx *ctx, const char *type, struct sb *log);

/* Netdev MTU under a root: live ("" or "/"): ioctl SIOCSIFMTU; a tree: the sysfs file. */
int netdev_get_mtu(const char *root, const char *ifname, int *mtu);
int netdev_set_mtu(const char *root, const char *ifname, int mtu);
/* IRQ affinity under a root (/proc/irq/N/smp_affinity_list). */
int irq_set_affinity(const char *root, int irq, const char *cpulist);

#endif
