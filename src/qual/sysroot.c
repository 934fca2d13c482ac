/* SPDX-License-Identifier: MIT */
/*
 * Tool replay for sysroot targets: a captured node answers `ibv_devinfo -v`
 * with what the real tool printed when it was captured, so verbs-only
 * values (active_mtu, num_comp_vectors) reach the kinds through the same
 * rq_tool() call that runs the tool live.  Layout: sysroot.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qual/sysroot.h"
#include "core/util.h"

static const char *base_name(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

void rq_tool_file_name(const char *const *argv, char *buf, size_t size)
{
	size_t n = 0;

	if (!size)
		return;
	for (size_t i = 0; argv[i]; i++) {
		const char *s = i ? argv[i] : base_name(argv[i]);

		if (i && n + 1 < size)
			buf[n++] = '_';
		for (; *s && n + 1 < size; s++)
			buf[n++] = (isalnum((unsigned char)*s) || *s == '.' || *s == '-') ? *s : '_';
	}
	buf[n] = '\0';
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Does a manifest "tool" record (fields after EXIT) match argv? */
static bool argv_match(char **f, size_t nf, const char *const *argv)
{
	size_t i;

	for (i = 0; argv[i]; i++) {
		const char *a = i ? argv[i] : base_name(argv[i]);

		if (i >= nf || strcmp(i ? f[i] : base_name(f[i]), a))
			return false;
	}
	return i == nf;
}

static int manifest_find(const char *root, const char *const *argv, char *path, size_t size,
			 int *exit_code)
{
	char mpath[PATH_MAX];
	struct sb sb = SB_INIT;
	char *line, *save = NULL;
	int ret = -ENOENT;

	snprintf(mpath, sizeof(mpath), "%s/" RQ_CAPTURE_DIR "/manifest", root);
	if (read_file(mpath, &sb, 0) < 0) {
		sb_release(&sb);
		return -ENOENT;
	}
	for (line = strtok_r(sb.buf, "\n", &save); line && ret; line = strtok_r(NULL, "\n", &save)) {
		char *f[64], *fs = NULL, *tok;
		size_t nf = 0;

		if (strncmp(line, "tool\t", 5))
			continue;
		for (tok = strtok_r(line, "\t", &fs); tok && nf < ARRAY_SIZE(f);
		     tok = strtok_r(NULL, "\t", &fs))
			f[nf++] = tok;
		/* tool FILE EXIT ARGV... */
		if (nf < 4 || !argv_match(f + 3, nf - 3, argv))
			continue;
		if (strstr(f[1], "..") || f[1][0] == '/')
			continue;	/* the tree is data: never leave it */
		snprintf(path, size, "%s/%s", root, f[1]);
		*exit_code = atoi(f[2]);
		ret = 0;
	}
	sb_release(&sb);
	return ret;
}

int rq_sysroot_find(const char *root, const char *const *argv, char *path, size_t size,
		    int *exit_code)
{
	char name[256];

	if (!argv || !argv[0])
		return -EINVAL;
	if (manifest_find(root, argv, path, size, exit_code) == 0 && is_file(path))
		return 0;
	rq_tool_file_name(argv, name, sizeof(name));
	snprintf(path, size, "%s/" RQ_CAPTURE_DIR "/tools/%s.out", root, name);
	if (!is_file(path))
		return -ENOENT;
	*exit_code = 0;
	return 0;
}

/* Keep only the "hca_id:\tDEV" block of an ibv_devinfo output. */
static bool cut_devinfo(const char *text, const char *dev, struct sb *out)
{
	const char *p = text;
	bool in = false, found = false;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (!strncmp(p, "hca_id:", 7)) {
			const char *v = p + 7;
			size_t dl = strlen(dev);

			while (*v == ' ' || *v == '\t')
				v++;
			in = !strncmp(v, dev, dl) && (v[dl] == '\n' || v[dl] == '\0' ||
						      isspace((unsigned char)v[dl]));
			found |= in;
		}
		if (in)
			sb_add(out, p, len);
		p += len;
	}
	return found;
}

static void replay_file(const char *path, struct sb *dst)
{
	struct sb sb = SB_INIT;

	if (read_file(path, &sb, 0) == 0)
		sb_add(dst, sb.buf, sb.len);
	sb_release(&sb);
}

int rq_tool_replay(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
		    struct proc_result *r)
{
	const char *root = ctx->root ? ctx->root : "";
	char path[PATH_MAX];
	int code = 0;

	r->exec_failed = false;
	r->timed_out = false;
	r->signal = 0;
	r->elapsed_ms = 0;
	if (!argv || !argv[0])
		return -EINVAL;

	if (rq_sysroot_find(root, argv, path, sizeof(path), &code) == 0) {
		char err[PATH_MAX + 8];

		replay_file(path, &r->out);
		if (str_ends(path, ".out")) {
			snprintf(err, sizeof(err), "%.*s.err", (int)(strlen(path) - 4), path);
			replay_file(err, &r->err);
		}
		goto done;
	}

	/* ibv_devinfo -d DEV [-v]: cut DEV's block out of the node-wide capture. */
	if (!strcmp(base_name(argv[0]), "ibv_devinfo")) {
		const char *rest[16], *dev = NULL;
		size_t n = 0;

		for (size_t i = 0; argv[i] && n + 1 < ARRAY_SIZE(rest); i++) {
			if ((!strcmp(argv[i], "-d") || !strcmp(argv[i], "--ib-dev")) && argv[i + 1])
				dev = argv[++i];
			else if (str_starts(argv[i], "--ib-dev="))
				dev = argv[i] + 9;
			else
				rest[n++] = argv[i];
		}
		rest[n] = NULL;
		if (dev && rq_sysroot_find(root, rest, path, sizeof(path), &code) == 0) {
			struct sb all = SB_INIT;

			replay_file(path, &all);
			if (!cut_devinfo(all.buf, dev, &r->out)) {
				/* What devinfo.c prints for an unknown -d. */
				sb_addf(&r->err, "IB device '%s' wasn't found\n", dev);
				code = 255;
			}
			sb_release(&all);
			goto done;
		}
	}

	r->exec_failed = true;
	r->exec_errno = ENOENT;
	r->exit_code = -1;
	r->status = 0;
	return 0;
done:
	r->exit_code = code;
	r->status = (code & 0xff) << 8;
	return 0;
}

const char *rq_tree_origin_name(enum rq_tree_origin o)
{
	return o == RQ_TREE_SYNTHESIZED ? "synthesized" : o == RQ_TREE_CAPTURED ? "captured" : "unknown";
}

void rq_sysroot_origin(const char *root, struct rq_tree_meta *m)
{
	/* the meta records open the manifest: its first 64 KiB hold them */
	char buf[64 * 1024], *line, *save = NULL;
	int fd = open_in_root(root, RQ_CAPTURE_DIR "/manifest", O_RDONLY);
	ssize_t n = 0, k;

	memset(m, 0, sizeof(*m));
	if (fd < 0)
		return;
	while (n < (ssize_t)sizeof(buf) - 1 && (k = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
		n += k;
	close(fd);
	buf[n] = '\0';
	if (strncmp(buf, RQ_MANIFEST_MAGIC "\t", strlen(RQ_MANIFEST_MAGIC) + 1))
		return;		/* not a manifest: as if there were none */
	m->origin = RQ_TREE_CAPTURED;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *key, *val;

		if (strncmp(line, "meta\t", 5))
			continue;
		key = line + 5;
		val = strchr(key, '\t');
		if (!val)
			continue;
		*val++ = '\0';
		if (!strcmp(key, "synthesized") && strcmp(val, "no")) {
			m->origin = RQ_TREE_SYNTHESIZED;
			snprintf(m->synthesized, sizeof(m->synthesized), "%s", *val ? val : "yes");
		} else if (!strcmp(key, "captured")) {
			snprintf(m->captured, sizeof(m->captured), "%s", val);
		} else if (!strcmp(key, "source")) {
			snprintf(m->source, sizeof(m->source), "%s", val);
		}
	}
}
