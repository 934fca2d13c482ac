/* SPDX-License-Identifier: MIT */
/* The undo journal and the setters it replays; see undo.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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

int undo_push(struct rq_ctx *ctx, const char *type, const char *what, const char *old)
{
	char path[PATH_MAX];
	struct sb line = SB_INIT;
	int fd, ret = 0;

	if (undo_path(ctx, path, sizeof(path)) < 0)
		return -ENOENT;
	sb_addf(&line, "%s\t%s\t%s\t%s\n", type, root_of(ctx), what, old);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
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

/* Rewrite the journal without the first record matching type/root/what. */
static int drop_line(const char *path, const char *type, const char *root, const char *what)
{
	struct sb in = SB_INIT, out = SB_INIT;
	char *line, *save = NULL;
	bool dropped = false;
	int ret = read_file(path, &in, 0);
	size_t tl = strlen(type), rl = strlen(root), wl = strlen(what);

	if (ret < 0) {
		sb_release(&in);
		return ret;
	}
	for (line = strtok_r(in.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!dropped && !strncmp(line, type, tl) && line[tl] == '\t' &&
		    !strncmp(line + tl + 1, root, rl) && line[tl + 1 + rl] == '\t' &&
		    !strncmp(line + tl + rl + 2, what, wl) && line[tl + rl + 2 + wl] == '\t') {
			dropped = true;
			continue;
		}
		sb_addf(&out, "%s\n", line);
	}
	ret = dropped ? write_file_atomic(path, out.buf, out.len) : -ENOENT;
	sb_release(&in);
	sb_release(&out);
	return ret;
}

int undo_drop(struct rq_ctx *ctx, const char *type, const char *what)
{
	char path[PATH_MAX];

	if (undo_path(ctx, path, sizeof(path)) < 0)
		return -ENOENT;
	return drop_line(path, type, root_of(ctx), what);
}

static int apply_record(char **f)
{
	if (!strcmp(f[0], "mtu"))
		return netdev_set_mtu(f[1], f[2], atoi(f[3]));
	if (!strcmp(f[0], "irq"))
		return irq_set_affinity(f[1], atoi(f[2]), f[3]);
	return -EINVAL;
}

/* Apply the records that match (type/root NULL: all); keep the rest and failures. */
static int apply_matching(const char *path, const char *type, const char *root, struct sb *log)
{
	struct sb in = SB_INIT, keep = SB_INIT;
	char *line, *save = NULL;
	int failed = 0, ret = read_file(path, &in, 0);

	if (ret < 0) {
		sb_release(&in);
		return ret == -ENOENT ? 0 : ret;
	}
	for (line = strtok_r(in.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4], *fs = NULL, *copy = xstrdup(line);
		int n = 0, r = -EINVAL;

		for (char *t = strtok_r(copy, "\t", &fs); t && n < 4; t = strtok_r(NULL, "\t", &fs))
			f[n++] = t;
		if (n == 4 && ((type && strcmp(f[0], type)) || (root && strcmp(f[1], root)))) {
			sb_addf(&keep, "%s\n", line);	/* not ours */
			free(copy);
			continue;
		}
		if (n == 4)
			r = apply_record(f);
		if (log)
			sb_addf(log, "undo %s %s -> %s (root %s): %s\n", n > 0 ? f[0] : "?",
				n > 2 ? f[2] : "?", n > 3 ? f[3] : "?", n > 1 ? f[1] : "?",
				r ? strerror(-r) : "restored");
		if (r) {
			failed++;
			sb_addf(&keep, "%s\n", line);
		}
		free(copy);
	}
	ret = keep.len ? write_file_atomic(path, keep.buf, keep.len) : unlink(path) < 0 ? -errno : 0;
	sb_release(&in);
	sb_release(&keep);
	return ret < 0 ? ret : failed;
}

int undo_apply_pending(const char *path, struct sb *log)
{
	return apply_matching(path, NULL, NULL, log);
}

int undo_apply_type(struct rq_ctx *ctx, const char *type, struct sb *log)
{
	char path[PATH_MAX];

	if (undo_path(ctx, path, sizeof(path)) < 0)
		return 0;
	return apply_matching(path, type, root_of(ctx), log);
}

int netdev_get_mtu(const char *root, const char *ifname, int *mtu)
{
	char path[PATH_MAX], v[32];
	int ret;

	snprintf(path, sizeof(path), "%s/sys/class/net/%s/mtu", live_root(root) ? "" : root, ifname);
	ret = read_line(path, v, sizeof(v));
	if (ret == 0)
		*mtu = atoi(v);
	return ret;
}

int netdev_set_mtu(const char *root, const char *ifname, int mtu)
{
	char path[PATH_MAX], v[32];

	if (strchr(ifname, '/') || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	if (live_root(root)) {
		/* The kernel's own interface, as ip(8) uses: no tool in between. */
		struct ifreq ifr;
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

		if (s < 0)
			return -errno;
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		ifr.ifr_mtu = mtu;
		if (ioctl(s, SIOCSIFMTU, &ifr) < 0)
			ret = -errno;
		close(s);
		return ret;
	}
	/* A tree (a writable copy of a node): the attribute file itself. */
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/mtu", root, ifname);
	if (access(path, F_OK) < 0)
		return -ENODEV;
	snprintf(v, sizeof(v), "%d\n", mtu);
	return write_file_atomic(path, v, strlen(v));
}

int irq_set_affinity(const char *root, int irq, const char *cpulist)
{
	char path[PATH_MAX], v[4096];

	int ret;

	snprintf(v, sizeof(v), "%s\n", cpulist);
	if (live_root(root)) {
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
		return write_str(path, v);
	}
	/*
	 * A tree has no kernel to route the vector: the effective list
	 * follows the request, as it does for a non-managed MSI-X vector.
	 */
	snprintf(path, sizeof(path), "%s/proc/irq/%d/smp_affinity_list", root, irq);
	if (access(path, F_OK) < 0)
		return -ENOENT;
	ret = write_file_atomic(path, v, strlen(v));
	snprintf(path, sizeof(path), "%s/proc/irq/%d/effective_affinity_list", root, irq);
	if (!ret)
		ret = write_file_atomic(path, v, strlen(v));
	return ret;
}
