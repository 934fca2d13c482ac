/* SPDX-License-Identifier: MIT */
/* The undo journal and the setters it replays; see undo.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
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

/* This boot's id: a record from another boot undoes what a reboot already undid. */
static void boot_id(char *buf, size_t size)
{
	if (read_line("/proc/sys/kernel/random/boot_id", buf, size) < 0 || !*buf)
		snprintf(buf, size, "unknown");
}

/* The permanent MAC of a live netdev (ETHTOOL_GPERMADDR), else "". */
static void perm_mac(const char *ifname, char *buf, size_t size)
{
	/* struct ethtool_perm_addr ends in a flexible array: room for 32 bytes after it. */
	_Alignas(struct ethtool_perm_addr) unsigned char raw[sizeof(struct ethtool_perm_addr) + 32] = { 0 };
	struct ethtool_perm_addr *pa = (struct ethtool_perm_addr *)raw;
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	size_t o = 0;
	bool any = false;

	buf[0] = '\0';
	if (s < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	pa->cmd = ETHTOOL_GPERMADDR;
	pa->size = 32;
	ifr.ifr_data = (void *)pa;
	if (ioctl(s, SIOCETHTOOL, &ifr) == 0 && pa->size <= 32) {
		for (unsigned i = 0; i < pa->size; i++)
			any |= pa->data[i] != 0;
		for (unsigned i = 0; any && i < pa->size && o + 4 < size; i++)
			o += (size_t)snprintf(buf + o, size - o, "%s%02x", i ? ":" : "", pa->data[i]);
	}
	close(s);
}

/*
 * What a netdev is, beyond its name (names move: a rename, another device
 * after a driver reload): "ifindex=N,mac=M", the MAC the permanent one
 * where the driver reports it.  Parts that cannot be read are left out.
 */
static void netdev_ident(const char *root, const char *ifname, char *buf, size_t size)
{
	char path[PATH_MAX], ifx[32] = "", mac[128] = "";
	const char *r = live_root(root) ? "" : root;

	snprintf(path, sizeof(path), "%s/sys/class/net/%s/ifindex", r, ifname);
	read_line(path, ifx, sizeof(ifx));
	if (live_root(root))
		perm_mac(ifname, mac, sizeof(mac));
	if (!mac[0]) {
		snprintf(path, sizeof(path), "%s/sys/class/net/%s/address", r, ifname);
		read_line(path, mac, sizeof(mac));
	}
	snprintf(buf, size, "ifindex=%s,mac=%s", ifx[0] ? ifx : "-", mac[0] ? mac : "-");
}

/* The action name of an IRQ (its device and vector: "mlx5_comp0@pci:0000:af:00.0"), or "". */
static void irq_vector(const char *root, int irq, char *buf, size_t size)
{
	char path[PATH_MAX];
	struct sb t = SB_INIT;
	char *save = NULL;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/proc/interrupts", live_root(root) ? "" : root);
	if (read_file(path, &t, 4u << 20) < 0 && !t.len) {
		sb_release(&t);
		return;
	}
	for (char *l = t.len ? strtok_r(t.buf, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char *end;
		long n = strtol(l, &end, 10);
		char *last;

		size_t len = strlen(l);

		if (end == l || *end != ':' || n != irq)
			continue;
		while (len && (l[len - 1] == ' ' || l[len - 1] == '\r'))
			l[--len] = '\0';
		last = strrchr(l, ' ');
		snprintf(buf, size, "%s", last ? last + 1 : "");
		break;
	}
	sb_release(&t);
}

/* The IRQ whose action name is vector, or -1. */
static int irq_by_vector(const char *root, const char *vector)
{
	char path[PATH_MAX];
	struct sb t = SB_INIT;
	char *save = NULL;
	int found = -1;

	snprintf(path, sizeof(path), "%s/proc/interrupts", live_root(root) ? "" : root);
	if (read_file(path, &t, 4u << 20) < 0 && !t.len) {
		sb_release(&t);
		return -1;
	}
	for (char *l = t.len ? strtok_r(t.buf, "\n", &save) : NULL; l && found < 0;
	     l = strtok_r(NULL, "\n", &save)) {
		char *end, *last;
		long n = strtol(l, &end, 10);
		size_t len = strlen(l);

		while (len && (l[len - 1] == ' ' || l[len - 1] == '\r'))
			l[--len] = '\0';
		last = strrchr(l, ' ');
		if (end != l && *end == ':' && last && !strcmp(last + 1, vector))
			found = (int)n;
	}
	sb_release(&t);
	return found;
}

int undo_push(struct rq_ctx *ctx, const char *type, const char *what, const char *old)
{
	char path[PATH_MAX], boot[64], ident[256] = "-";
	struct sb line = SB_INIT;
	int fd, ret = 0;

	if (undo_path(ctx, path, sizeof(path)) < 0)
		return -ENOENT;
	boot_id(boot, sizeof(boot));
	if (!strcmp(type, "mtu")) {
		netdev_ident(root_of(ctx), what, ident, sizeof(ident));
	} else if (!strcmp(type, "irq")) {
		char v[200];

		irq_vector(root_of(ctx), atoi(what), v, sizeof(v));
		snprintf(ident, sizeof(ident), "vector=%s", v[0] ? v : "-");
	}
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

/* The value of "name=" in an ident like "ifindex=3,mac=52:54:00:..", into buf. */
static const char *ident_part(const char *ident, const char *name, char *buf, size_t size)
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

/*
 * The netdev a record meant: the recorded name when it still is that
 * device, else the device with the recorded ifindex and MAC under another
 * name.  0 with name set, or -ENODEV.
 */
static int find_netdev(const char *root, const char *ifname, const char *ident, char *name,
		       size_t size)
{
	char want_ix[32], want_mac[128], now[256], ix[32], mac[128], path[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int ret = -ENODEV;

	ident_part(ident, "ifindex", want_ix, sizeof(want_ix));
	ident_part(ident, "mac", want_mac, sizeof(want_mac));
	snprintf(name, size, "%s", ifname);
	if (!want_ix[0] && !want_mac[0])
		return 0;	/* nothing recorded to check against */
	netdev_ident(root, ifname, now, sizeof(now));
	ident_part(now, "ifindex", ix, sizeof(ix));
	ident_part(now, "mac", mac, sizeof(mac));
	if ((!want_ix[0] || !strcmp(ix, want_ix)) && (!want_mac[0] || !strcasecmp(mac, want_mac)))
		return 0;
	snprintf(path, sizeof(path), "%s/sys/class/net", live_root(root) ? "" : root);
	d = opendir(path);
	while (d && (e = readdir(d)) && ret) {
		if (e->d_name[0] == '.')
			continue;
		netdev_ident(root, e->d_name, now, sizeof(now));
		ident_part(now, "ifindex", ix, sizeof(ix));
		ident_part(now, "mac", mac, sizeof(mac));
		if ((!want_ix[0] || !strcmp(ix, want_ix)) && (!want_mac[0] || !strcasecmp(mac, want_mac))) {
			snprintf(name, size, "%s", e->d_name);
			ret = 0;
		}
	}
	if (d)
		closedir(d);
	return ret;
}

/* Apply one record; what is filled with what was changed, in words. */
static int apply_record(char **f, int n, char *what, size_t size, bool *gone)
{
	const char *ident = n > 5 ? f[5] : "";

	*gone = false;
	if (!strcmp(f[0], "mtu")) {
		char name[256];
		int r = find_netdev(f[1], f[2], ident, name, sizeof(name));

		if (r) {
			snprintf(what, size, "MTU of %s (%s): that device is gone", f[2], ident);
			*gone = true;
			return r;
		}
		if (strcmp(name, f[2]))
			snprintf(what, size, "MTU of %s (now named %s) back to %s", f[2], name, f[3]);
		else
			snprintf(what, size, "MTU of %s back to %s", name, f[3]);
		return netdev_set_mtu(f[1], name, atoi(f[3]));
	}
	if (!strcmp(f[0], "irq")) {
		char vec[200], now[200];
		int irq = atoi(f[2]);

		ident_part(ident, "vector", vec, sizeof(vec));
		if (vec[0]) {
			irq_vector(f[1], irq, now, sizeof(now));
			if (strcmp(now, vec))
				irq = irq_by_vector(f[1], vec);
			if (irq < 0) {
				snprintf(what, size, "affinity of IRQ %s (%s): that vector is gone", f[2], vec);
				*gone = true;
				return -ENOENT;
			}
		}
		if (irq != atoi(f[2]))
			snprintf(what, size, "affinity of IRQ %s (%s, now IRQ %d) back to %s", f[2], vec, irq, f[3]);
		else
			snprintf(what, size, "affinity of IRQ %d%s%s%s back to %s", irq, vec[0] ? " (" : "", vec,
				 vec[0] ? ")" : "", f[3]);
		return irq_set_affinity(f[1], irq, f[3]);
	}
	snprintf(what, size, "unknown record type %s", f[0]);
	return -EINVAL;
}

/*
 * Apply the records that match (type/root NULL: all); keep the rest and
 * failures.  Per setting (type, root, what) only the first record counts:
 * it holds the value from before the first change; later ones (a setting
 * changed twice) are dropped.  Records from an earlier boot are dropped
 * unapplied: the reboot already reset what they undo.
 */
static int apply_matching(const char *path, const char *type, const char *root, struct sb *log)
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
			sb_add(&seen, key + 1, strlen(key + 1));
			if (log)
				sb_addf(log, "undo %s %s -> %s: recorded during an earlier boot (%s%s%s), when "
					"the node restarted it lost that change; dropped, not applied\n",
					f[0], f[2], f[3], f[4] + 5, n > 6 ? ", at " : "", n > 6 ? f[6] : "");
		} else {
			sb_add(&seen, key + 1, strlen(key + 1));
			bool gone;

			r = apply_record(f, n, what, sizeof(what), &gone);
			if (log)
				sb_addf(log, "undo: %s (root %s): %s\n", what, f[1],
					r ? (gone ? "dropped" : strerror(-r)) : "restored");
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
