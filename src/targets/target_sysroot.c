/* SPDX-License-Identifier: MIT */
/*
 * sysroot:DIR — a captured (`rdmaqual capture`) or synthesized node tree,
 * read-only.  Cases run in a local agent with ctx->root = DIR and
 * ctx->replay = true, so every rq_path() read lands in the tree and every
 * rq_tool() call is answered from the capture (rq_sysroot_tool).  This is
 * how checks of real ConnectX nodes run in CI, where there is no hardware.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include "agent/agent.h"
#include "qual/sysroot.h"
#include "core/target.h"
#include "core/util.h"

struct sysroot_priv {
	struct rq_agent *agent;
	char *root;		/* absolute path of DIR */
};

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool sysroot_available(const struct rq_run_opts *o, const char *arg, char *why,
			      size_t whysz)
{
	char p[PATH_MAX];

	if (!arg || !*arg) {
		snprintf(why, whysz, "sysroot needs a directory: --target sysroot:DIR");
		return false;
	}
	if (!is_dir(arg)) {
		snprintf(why, whysz, "sysroot: %s is not a directory", arg);
		return false;
	}
	snprintf(p, sizeof(p), "%s/sys", arg);
	if (!is_dir(p)) {
		snprintf(why, whysz, "sysroot: %s has no sys/ (not a capture or node tree)", arg);
		return false;
	}
	snprintf(why, whysz, "replaying the node tree %s", arg);
	return true;
}

static int sysroot_open(struct rq_target *t, char *err, size_t errsz)
{
	struct sysroot_priv *p = xcalloc(1, sizeof(*p));
	char real[PATH_MAX];

	if (!realpath(t->arg, real)) {
		int e = errno;

		snprintf(err, errsz, "sysroot: %s: %s", t->arg, strerror(e));
		free(p);
		return -e;
	}
	p->root = xstrdup(real);
	/* The run's shared local agent; it serves replay requests too. */
	p->agent = rq_agent_local(t->opts->self_exe, err, errsz);
	if (!p->agent) {
		free(p->root);
		free(p);
		return -EIO;
	}
	t->priv = p;
	return 0;
}

static int sysroot_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl,
			 char *err, size_t errsz)
{
	struct sysroot_priv *p = t->priv;

	if (!p || !p->agent) {
		snprintf(err, errsz, "sysroot target not open");
		return -EINVAL;
	}
	/* The shared agent, replaced if a case before this one killed it. */
	p->agent = rq_agent_local(t->opts->self_exe, err, errsz);
	if (!p->agent)
		return -EIO;
	pl->side[0] = p->agent;
	pl->side[1] = p->agent;
	pl->root = p->root;
	/* The agent sets ctx->replay (the request's root) and uses rq_sysroot_tool for tools. */
	return 0;
}

static void sysroot_close(struct rq_target *t)
{
	struct sysroot_priv *p = t->priv;

	if (!p)
		return;
	/* the shared local agent is closed once, at the end of the run */
	free(p->root);
	free(p);
	t->priv = NULL;
}

/* One value of the tree, resolved inside it (a link cannot point out). */
static int tree_line(const char *root, const char *rel, char *v, size_t size)
{
	int fd = open_in_root(root, rel, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, v, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	v[n] = '\0';
	memmove(v, strtrim(v), strlen(strtrim(v)) + 1);
	return 0;
}

/*
 * Facts of the tree's node, not of this one, and where the tree comes from
 * (capture/manifest, sysroot.h): only a capture names a captured host; a
 * synthesized tree's host name is the fixture's (report/report.h's
 * rq_run_info_synthesized reads sysroot.origin).
 */
static void sysroot_facts(struct rq_target *t, struct rq_result *sink)
{
	const char *root = t->arg ? t->arg : "";
	struct rq_tree_meta m;
	char v[256];

	rq_sysroot_origin(root, &m);
	rq_fact_add(sink, "sysroot", root);
	rq_fact_add(sink, "sysroot.origin", rq_tree_origin_name(m.origin));
	if (m.origin == RQ_TREE_SYNTHESIZED)
		rq_fact_add(sink, "sysroot.synthesized_by", m.synthesized);
	if (m.origin == RQ_TREE_CAPTURED && m.captured[0])
		rq_fact_add(sink, "sysroot.captured", m.captured);
	if (!tree_line(root, "proc/sys/kernel/osrelease", v, sizeof(v)))
		rq_fact_add(sink, "kernel", v);
	if (!tree_line(root, "proc/sys/kernel/hostname", v, sizeof(v)))
		rq_fact_add(sink, m.origin == RQ_TREE_CAPTURED ? "captured_host" :
			    m.origin == RQ_TREE_SYNTHESIZED ? "synthesized_host" : "tree_host", v);
}

const struct rq_target_ops rq_target_sysroot = {
	.name = "sysroot",
	.parallel = true,
	.help = "sysroot:DIR: a captured or synthesized node tree, read-only; tools replayed from DIR/capture",
	.arg = "DIR",
	.arg_what = "a directory",
	/* a capture replays what hca-type checks read */
	.stands_for = "hca",
	.available = sysroot_available,
	.open = sysroot_open,
	.place = sysroot_place,
	.close = sysroot_close,
	.facts = sysroot_facts,
};
