/* SPDX-License-Identifier: MIT */
/* The undo journal; see undo.h.  The appliers are the kinds' (struct rq_kind.undo). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/kind.h"
#include "core/undo.h"
#include "core/util.h"

static bool live_root(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

int undo_path(struct rq_ctx *ctx, char *buf, size_t size)
{
	const char *dir = ctx->state_dir && *ctx->state_dir ? ctx->state_dir : ctx->scratch;

	if (!dir || !*dir)
		return -ENOENT;
	snprintf(buf, size, "%s/" RQ_UNDO_JOURNAL, dir);
	return 0;
}

static const char *root_of(struct rq_ctx *ctx)
{
	return live_root(ctx->root) ? "/" : ctx->root;
}

/* This boot's id: a record from another boot undoes what a reboot already undid. */
static void boot_id(char *buf, size_t size)
{
	if (read_line("/proc/sys/kernel/random/boot_id", buf, size) < 0 || !*buf)
		snprintf(buf, size, "unknown");
}

/* The kind that writes records of type: it knows how to undo them. */
static const struct rq_undo_op *undo_op(const char *type)
{
	const struct rq_kind *k;

	for (size_t i = 0; (k = rq_kind_iter(i)); i++)
		if (k->undo && !strcmp(k->undo->type, type))
			return k->undo;
	return NULL;
}

int undo_push(struct rq_ctx *ctx, const char *type, const char *what, const char *old)
{
	const struct rq_undo_op *op = undo_op(type);
	char path[PATH_MAX], boot[64], ident[256] = "-";
	struct sb line = SB_INIT;
	int fd, ret = 0;

	if (undo_path(ctx, path, sizeof(path)) < 0)
		return -ENOENT;
	boot_id(boot, sizeof(boot));
	if (op && op->ident)
		op->ident(root_of(ctx), what, ident, sizeof(ident));
	sb_addf(&line, "%s\t%s\t%s\t%s\tboot=%s\t%s\t%lld\n", type, root_of(ctx), what, old, boot, ident,
		(long long)time(NULL));
	/* O_NOFOLLOW: a link planted in the state dir never takes the record elsewhere. */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = -errno;
	} else {
		/* Durable before the change: a crash right after must find it. */
		if (write(fd, line.buf, line.len) != (ssize_t)line.len || fsync(fd) < 0)
			ret = -EIO;
		close(fd);
	}
	sb_release(&line);
	return ret;
}

/* The value of "name=" in an ident like "ifindex=3,mac=52:54:00:..", into buf. */
const char *undo_ident_part(const char *ident, const char *name, char *buf, size_t size)
{
	size_t nl = strlen(name);

	buf[0] = '\0';
	for (const char *p = ident; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, nl) && p[nl] == '=') {
			size_t l = strcspn(p + nl + 1, ",");

			snprintf(buf, size, "%.*s", (int)l, p + nl + 1);
			break;
		}
	return !strcmp(buf, "-") ? (buf[0] = '\0', buf) : buf;
}

/* Apply one record through its kind; what gets what was changed, in words. */
static int apply_record(char **f, int n, char *what, size_t size, bool *gone)
{
	const struct rq_undo_op *op = undo_op(f[0]);

	*gone = false;
	if (!op) {
		snprintf(what, size, "unknown record type %s", f[0]);
		return -EINVAL;
	}
	return op->apply(f[1], f[2], f[3], n > 5 ? f[5] : "", what, size, gone);
}

/* "eth0 MTU 1500": a record as its kind says it, for a case's log and reason. */
static void describe(char **f, char *buf, size_t size)
{
	const struct rq_undo_op *op = undo_op(f[0]);

	if (op && op->describe)
		op->describe(f[2], f[3], buf, size);
	else
		snprintf(buf, size, "%s %s -> %s", f[0], f[2], f[3]);
}

/*
 * Apply the records that match (type/root NULL: all); keep the rest and
 * failures.  Per setting (type, root, what) only the first record counts:
 * it holds the value from before the first change; later ones (a setting
 * changed twice) are dropped.  Records from an earlier boot are dropped
 * unapplied (the reboot already reset what they undo) and do not count as
 * that first record.  A case's restore
 * (root set) logs each as its kind says it ("restore eth0 MTU 1500: ok")
 * and puts the first failure in why (may be NULL).
 */
static int apply_matching(const char *path, const char *type, const char *root, struct sb *log,
			  struct sb *why)
{
	struct sb in = SB_INIT, keep = SB_INIT, seen = SB_INIT;
	char *line, *save = NULL, boot[64];
	int failed = 0, ret;
	struct stat st;

	if (lstat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		if (log)
			sb_addf(log, "undo journal %s is not a regular file of ours: ignored\n", path);
		return -EPERM;
	}
	ret = read_file(path, &in, 0);
	if (ret < 0) {
		sb_release(&in);
		return ret == -ENOENT ? 0 : ret;
	}
	boot_id(boot, sizeof(boot));
	sb_adds(&seen, "\n");
	for (line = strtok_r(in.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[8], *fs = NULL, *copy = xstrdup(line), what[600] = "", *key;
		int n = 0, r = -EINVAL;

		for (char *t = strtok_r(copy, "\t", &fs); t && n < 8; t = strtok_r(NULL, "\t", &fs))
			f[n++] = t;
		if (n >= 4 && ((type && strcmp(f[0], type)) || (root && strcmp(f[1], root)))) {
			sb_addf(&keep, "%s\n", line);	/* not ours */
			free(copy);
			continue;
		}
		if (n < 4) {
			if (log)
				sb_addf(log, "undo: malformed record dropped: %.200s\n", line);
			free(copy);
			continue;
		}
		key = xasprintf("\n%s\t%s\t%s\n", f[0], f[1], f[2]);
		if (strstr(seen.buf, key)) {
			if (log)
				sb_addf(log, "undo %s %s: a later record (value %s) dropped; the first one "
					"holds the value from before\n", f[0], f[2], f[3]);
		} else if (n >= 5 && str_starts(f[4], "boot=") && strcmp(f[4] + 5, boot)) {
			/*
			 * Not "seen": this boot's first record of the setting still
			 * holds the value from before this boot's first change.
			 */
			if (log)
				sb_addf(log, "undo %s %s -> %s: recorded during an earlier boot (%s%s%s), when "
					"the node restarted it lost that change; dropped, not applied\n",
					f[0], f[2], f[3], f[4] + 5, n > 6 ? ", at " : "", n > 6 ? f[6] : "");
		} else {
			sb_add(&seen, key + 1, strlen(key + 1));
			bool gone;

			char said[600];

			r = apply_record(f, n, what, sizeof(what), &gone);
			describe(f, said, sizeof(said));
			if (log && root)
				sb_addf(log, "restore %s: %s\n", said,
					r ? (gone ? "gone, dropped" : strerror(-r)) : "ok");
			else if (log)
				sb_addf(log, "undo: %s (root %s): %s\n", what, f[1],
					r ? (gone ? "dropped" : strerror(-r)) : "restored");
			if (r && !gone && why && !failed)
				sb_addf(why, "could not restore %s: %s (journalled for rdmaqual cleanup)",
					said, strerror(-r));
			/* A device or vector that is gone cannot come back as itself: drop. */
			if (r && !gone) {
				failed++;
				sb_addf(&keep, "%s\n", line);
			}
		}
		free(key);
		free(copy);
	}
	ret = keep.len ? write_file_atomic(path, keep.buf, keep.len) : unlink(path) < 0 ? -errno : 0;
	sb_release(&in);
	sb_release(&keep);
	sb_release(&seen);
	return ret < 0 ? ret : failed;
}

int undo_apply_pending(const char *path, struct sb *log)
{
	return apply_matching(path, NULL, NULL, log, NULL);
}

int undo_restore(struct rq_ctx *ctx, const char *type)
{
	char path[PATH_MAX];
	struct sb log = SB_INIT, why = SB_INIT;
	int ret;

	if (ctx->replay || undo_path(ctx, path, sizeof(path)) < 0)
		return 0;
	ret = apply_matching(path, type, root_of(ctx), &log, &why);
	for (char *l = log.buf, *nl; l && *l; l = nl + 1) {
		nl = strchr(l, '\n');
		*nl = '\0';	/* apply_matching ends every line with one */
		rq_log(ctx, "%s", l);
	}
	if (ret < 0)
		rq_result_set(ctx->main, RQ_ERROR, "cannot read the undo journal %s: %s", path,
			      strerror(-ret));
	else if (ret > 0)
		rq_result_set(ctx->main, RQ_ERROR, "%s", why.buf);
	sb_release(&log);
	sb_release(&why);
	return ret;
}
