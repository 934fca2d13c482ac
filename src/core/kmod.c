/* SPDX-License-Identifier: MIT */
/*
 * modules: of a case.  Loading goes through modprobe, which resolves
 * dependencies from the node's modules.dep as on any machine.  Unloading
 * does not: `modprobe -r` also removes unused dependencies that were there
 * before the case (nvmet loaded by hand, then nvmet_rdma by the case), so
 * the case removes exactly the modules that appeared while it loaded its
 * own, by delete_module(2), in as many passes as the dependencies need
 * (a module goes once nothing holds it).  What was there before is a list
 * in the case's scratch directory, written before the first modprobe, so
 * the worker that cleans up after a killed case finds it too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "core/kmod.h"
#include "core/util.h"

#define BEFORE_FILE "kmod.before"

bool rq_kmod_name_ok(const char *name)
{
	size_t n = strlen(name);

	/* a leading dash would be an option of modprobe's */
	if (!n || n > 55 || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return true;
}

/* Loadable modules loaded now: /sys/module entries with an initstate (built-ins have none). */
static void loaded_now(struct sb *out)
{
	DIR *d = opendir("/sys/module");
	struct dirent *e;

	sb_reset(out);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/module/%s/initstate", e->d_name);
		if (access(path, F_OK) == 0)
			sb_addf(out, "%s\n", e->d_name);
	}
	closedir(d);
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *nl = strchrnul(p, '\n');

		if ((size_t)(nl - p) == n && !memcmp(p, name, n))
			return true;
		p = *nl ? nl + 1 : nl;
	}
	return false;
}

/* The record of what was there before: a new file of this case's own (0600, no link followed). */
static int write_new(const char *path, const struct sb *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < s->len) {
		ssize_t w = write(fd, s->buf + off, s->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	return close(fd);
}

static void before_path(const struct rq_ctx *ctx, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", ctx->scratch, BEFORE_FILE);
}

/* The last non-empty line of a tool's stderr (modprobe says why there). */
static const char *last_line(struct sb *s)
{
	char *nl;

	sb_rtrim(s);
	nl = strrchr(s->buf, '\n');
	return nl ? nl + 1 : s->buf;
}

enum rq_verdict rq_kmod_load(struct rq_ctx *ctx, char *const *mods, size_t n,
			     char *why, size_t whysz)
{
	struct utsname u;
	char path[700], tree[400];
	struct sb now = SB_INIT;

	if (!n)
		return RQ_NONE;
	if (ctx->replay || (ctx->root && *ctx->root && strcmp(ctx->root, "/"))) {
		snprintf(why, whysz, "modules: %s: a captured node tree cannot load modules", mods[0]);
		return RQ_SKIP;
	}
	if (!ctx->scratch) {
		snprintf(why, whysz, "modules: no scratch directory to record what was loaded");
		return RQ_ERROR;
	}
	if (geteuid() != 0) {
		snprintf(why, whysz, "modules: loading %s needs root", mods[0]);
		return RQ_SKIP;
	}
	uname(&u);
	snprintf(tree, sizeof(tree), "/lib/modules/%s", u.release);
	/* Record first: a case killed mid-load still unloads what it loaded. */
	before_path(ctx, path, sizeof(path));
	if (access(path, F_OK) != 0) {
		loaded_now(&now);
		if (write_new(path, &now) < 0) {
			snprintf(why, whysz, "modules: cannot write %s: %s", path, strerror(errno));
			sb_release(&now);
			return RQ_ERROR;
		}
	}
	sb_release(&now);
	for (size_t i = 0; i < n; i++) {
		const char *dry[] = { "modprobe", "--dry-run", "--quiet", mods[i], NULL };
		const char *load[] = { "modprobe", mods[i], NULL };
		struct proc_result r;
		int ret;

		proc_result_init(&r);
		ret = rq_tool(ctx, dry, 30000, &r);
		if (ret || r.exec_failed || r.timed_out) {
			snprintf(why, whysz, "modules: cannot run modprobe: %s",
				 ret ? strerror(-ret) : r.exec_failed ? strerror(r.exec_errno) : "timed out");
			proc_result_release(&r);
			return RQ_ERROR;
		}
		if (r.exit_code != 0) {
			if (access(tree, F_OK) != 0)
				snprintf(why, whysz, "module %s: kernel %s has no module tree at %s",
					 mods[i], u.release, tree);
			else
				snprintf(why, whysz, "module %s does not exist for kernel %s (not in %s)",
					 mods[i], u.release, tree);
			proc_result_release(&r);
			return RQ_SKIP;
		}
		proc_result_release(&r);
		proc_result_init(&r);
		ret = rq_tool(ctx, load, 60000, &r);
		if (ret || r.exec_failed || r.timed_out || r.signal || r.exit_code != 0) {
			snprintf(why, whysz, "modules: modprobe %s failed on kernel %s: %s", mods[i],
				 u.release, r.err.len ? last_line(&r.err) :
				 r.timed_out ? "timed out" : "no message");
			proc_result_release(&r);
			return RQ_ERROR;
		}
		proc_result_release(&r);
	}
	return RQ_NONE;
}

void rq_kmod_unload(struct rq_ctx *ctx)
{
	char path[700];
	struct sb before = SB_INIT, now = SB_INIT, left = SB_INIT;
	bool progress = true;

	if (!ctx->scratch)
		return;
	before_path(ctx, path, sizeof(path));
	if (read_file(path, &before, 1u << 20) < 0) {
		sb_release(&before);
		return;
	}
	/* A module goes once its holders went: one pass per level of dependency. */
	for (int pass = 0; pass < 32 && progress; pass++) {
		progress = false;
		sb_reset(&left);
		loaded_now(&now);
		for (char *p = now.buf, *nl; p && *p; p = nl + 1) {
			nl = strchr(p, '\n');
			if (!nl)
				break;
			*nl = '\0';
			if (in_list(before.buf, p))
				continue;
			if (syscall(SYS_delete_module, p, O_NONBLOCK) == 0) {
				rq_log(ctx, "# modules: unloaded %s (loaded for this case)", p);
				progress = true;
			} else {
				sb_addf(&left, "%s%s (%s)", left.len ? ", " : "", p, strerror(errno));
			}
		}
	}
	if (left.len)
		rq_log(ctx, "# modules: left loaded: %s", left.buf);
	unlink(path);
	sb_release(&before);
	sb_release(&now);
	sb_release(&left);
}
