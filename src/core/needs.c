/* SPDX-License-Identifier: MIT */
/*
 * Requirements (a case's needs:) evaluated on the target, in one place, as
 * LTP's library does: every unmet one is collected into the SKIP reason so
 * that a user fixes all of them at once ("needs root; module rdma_rxe not
 * loaded; command ib_write_bw not found").
 *
 * Files are read through rq_path(), so on a sysroot target the capture is
 * what is looked at.  A sysroot replay is read-only and runs no tool, so
 * needs about the live process are met there by definition:
 *   root      reading a capture needs no privilege
 *   memlock   nothing is registered
 *   cmd:NAME  tools answer from the capture; an output the capture lacks
 *             shows as the kind's own "not found" when it runs the tool
 * module:, link_layer:, device and file: read the capture like a live node.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/case.h"
#include "core/ctx.h"
#include "core/proc.h"
#include "core/util.h"

static bool path_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* Does any RDMA device exist (an entry of /sys/class/infiniband)? */
static bool any_device(struct rq_ctx *ctx)
{
	char path[4096];
	DIR *d = opendir(rq_path(ctx, path, sizeof(path), "/sys/class/infiniband"));
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = de->d_name[0] != '.';
	closedir(d);
	return found;
}

/* Is there a port whose link_layer reads ll ("InfiniBand" / "Ethernet")? */
static bool any_link_layer(struct rq_ctx *ctx, const char *ll)
{
	char path[4096], val[64];
	DIR *d = opendir(rq_path(ctx, path, sizeof(path), "/sys/class/infiniband"));
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		DIR *pd;
		struct dirent *pe;

		if (de->d_name[0] == '.')
			continue;
		pd = opendir(rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/ports",
				     de->d_name));
		if (!pd)
			continue;
		while (!found && (pe = readdir(pd))) {
			if (pe->d_name[0] == '.')
				continue;
			rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/ports/%s/link_layer",
				de->d_name, pe->d_name);
			if (read_line(path, val, sizeof(val)) == 0 && !strcasecmp(val, ll))
				found = true;
		}
		closedir(pd);
	}
	closedir(d);
	return found;
}

/* A module is there when /sys/module/NAME exists and, if it has an initstate, that is "live". */
static bool module_live(struct rq_ctx *ctx, const char *name, char *state, size_t size)
{
	char path[4096];

	state[0] = 0;
	if (!path_exists(rq_path(ctx, path, sizeof(path), "/sys/module/%s", name)))
		return false;
	rq_path(ctx, path, sizeof(path), "/sys/module/%s/initstate", name);
	if (read_line(path, state, size) != 0)
		return true;	/* built in: no initstate */
	return !strcmp(state, "live");
}

static void unmet(struct sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unmet(struct sb *sb, const char *fmt, ...)
{
	va_list ap;

	if (sb->len)
		sb_adds(sb, "; ");
	va_start(ap, fmt);
	sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

bool rq_needs_met(struct rq_ctx *ctx, char *why, size_t whysz)
{
	const struct rq_case *c = ctx->c;
	struct sb sb = SB_INIT;
	char path[4096], state[64];
	bool ok;

	for (size_t i = 0; c && i < c->nneeds; i++) {
		const struct rq_need *n = &c->needs[i];

		switch (n->type) {
		case NEED_ROOT:
			if (!ctx->replay && geteuid() != 0)
				unmet(&sb, "needs root");
			break;
		case NEED_DEVICE:
			if (!any_device(ctx))
				unmet(&sb, "no RDMA device");
			break;
		case NEED_MODULE:
			if (!module_live(ctx, n->arg, state, sizeof(state))) {
				if (state[0])
					unmet(&sb, "module %s is %s, not live", n->arg, state);
				else
					unmet(&sb, "module %s not loaded", n->arg);
			}
			break;
		case NEED_CMD:
			if (!ctx->replay && !cmd_exists(n->arg))
				unmet(&sb, "command %s not found", n->arg);
			break;
		case NEED_LINK_LAYER:
			if (!any_link_layer(ctx, n->arg))
				unmet(&sb, "no port with link layer %s", n->arg);
			break;
		case NEED_MEMLOCK: {
			struct rlimit rl;
			char want[32], have[32];

			if (ctx->replay)
				break;
			if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
				rl.rlim_cur = 0;
			if (rl.rlim_cur == RLIM_INFINITY)
				break;
			if (n->size != UINT64_MAX && (uint64_t)rl.rlim_cur >= n->size)
				break;
			fmt_size(rl.rlim_cur, have, sizeof(have));
			if (n->size == UINT64_MAX)
				snprintf(want, sizeof(want), "unlimited");
			else
				fmt_size(n->size, want, sizeof(want));
			unmet(&sb, "memlock limit %s is below %s (ulimit -l)", have, want);
			break;
		}
		case NEED_FILE:
			if (!path_exists(rq_path(ctx, path, sizeof(path), "%s", n->arg)))
				unmet(&sb, "file %s not found", n->arg);
			break;
		}
	}
	ok = sb.len == 0;
	snprintf(why, whysz, "%s", sb.buf);
	sb_release(&sb);
	return ok;
}
