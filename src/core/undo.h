/* SPDX-License-Identifier: MIT */
/*
 * The undo journal of the settings kinds (mtu set:, irq-affinity set:): the
 * one record of what a case changed and how to restore it.
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

#include <stdbool.h>
#include <stddef.h>
#include "core/ctx.h"

#define RQ_UNDO_JOURNAL "undo.journal"

/* The journal path for ctx: state_dir, else scratch; -ENOENT when neither. */
int undo_path(struct rq_ctx *ctx, char *buf, size_t size);
/* Append a record (fields without ROOT) and fsync; 0 or -errno. */
int undo_push(struct rq_ctx *ctx, const char *type, const char *what, const char *old);
/*
 * Apply and drop every record of the journal at path (rdmaqual cleanup).
 * Returns the number of records that could not be applied (kept), or -errno;
 * log (may be NULL) gets one line per record.
 */
int undo_apply_pending(const char *path, struct sb *log);

/*
 * A kind's cleanup(): restore and drop every record of type made under
 * ctx's root (the first per setting, as for rdmaqual cleanup): what this case changed (and, in the fresh worker
 * that runs cleanup() after a case was killed, what the killed one did).
 * Logs one "restore WHAT: ok" line per record; a record that cannot be
 * applied stays journalled for rdmaqual cleanup and makes ctx->main an
 * ERROR.  Nothing on a replay.  Returns the number kept, or -errno.
 */
int undo_restore(struct rq_ctx *ctx, const char *type);

/*
 * How records of one type are undone, registered by the kind that writes
 * them (struct rq_kind.undo): rdmaqual cleanup finds the applier through
 * the kind registry, so the journal needs no list of kinds.
 */
struct rq_undo_op {
	const char *type;	/* the record's first field: "mtu" */
	/* What identifies what beyond its name, recorded with it ("ifindex=3,mac=.."). */
	void (*ident)(const char *root, const char *what, char *buf, size_t size);
	/*
	 * Set what back to old, finding it by ident if it moved; desc gets what
	 * was done, in words; *gone when it no longer exists (the record is
	 * dropped, not kept).  0 or -errno.
	 */
	int (*apply)(const char *root, const char *what, const char *old, const char *ident,
		     char *desc, size_t descsz, bool *gone);
	/* "eth0 MTU 1500": what restoring the record sets, for a case's log and reason */
	void (*describe)(const char *what, const char *old, char *buf, size_t size);
};

/* The value of "name=" in an ident like "ifindex=3,mac=52:54:00:..", into buf ("" if none). */
const char *undo_ident_part(const char *ident, const char *name, char *buf, size_t size);

#endif
