/* SPDX-License-Identifier: MIT */
/*
 * RDMA devices and ports as sysfs shows them (drivers/infiniband/core/sysfs.c),
 * read under ctx->root so the same code reads a live node, a capture made by
 * `rdmaqual capture` and a synthesized fixture.
 *
 * Every lookup has a fallback for trees whose symlinks were dereferenced or
 * left dangling by a plain copy (cp -r): the PCI address and driver also
 * come from device/uevent, and a device without a `device` entry is taken as
 * virtual (rxe, siw), which is what the kernel does for software devices.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ctx.h"
#include "rdma/rdmadev.h"
#include "core/util.h"

#define IB_CLASS "/sys/class/infiniband"

static const char *const state_names[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

/* strlcpy: copy what fits, always terminated (no truncation warnings). */
static void scopy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * Root-prefixed path, as rq_path() does; kept local so that rdmadev (used by
 * targets and tests as well as kinds) needs nothing but the ctx's root.
 */
static const char *rpath(struct rq_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static const char *rpath(struct rq_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	const char *root = ctx && ctx->root ? ctx->root : "";
	size_t n = strlen(root);
	va_list ap;

	if (n >= size)
		n = size - 1;
	memcpy(buf, root, n);
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return buf;
}

/* Read one sysfs value under the root; "" and -errno when absent. */
static int rd(struct rq_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int rd(struct rq_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	char rel[PATH_MAX], path[PATH_MAX];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	rpath(ctx, path, sizeof(path), "%s", rel);
	ret = read_line(path, buf, size);
	if (ret < 0 && size)
		buf[0] = '\0';
	return ret;
}

/* Basename of a symlink's target (works on dangling links too). */
static int link_base(const char *path, char *buf, size_t size)
{
	char t[PATH_MAX];
	ssize_t n = readlink(path, t, sizeof(t) - 1);
	const char *b;

	if (n < 0)
		return -errno;
	t[n] = '\0';
	while (n > 1 && t[n - 1] == '/')
		t[--n] = '\0';
	b = strrchr(t, '/');
	scopy(buf, size, b ? b + 1 : t);
	return 0;
}

static bool is_bdf(const char *s)
{
	unsigned dom, bus, dev, fn;
	char tail;

	return sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 && strlen(s) == 12;
}

/* KEY=value from a uevent file. */
static int uevent_get(const char *path, const char *key, char *buf, size_t size)
{
	struct sb sb = SB_INIT;
	size_t klen = strlen(key);
	int ret = read_file(path, &sb, 65536);
	char *line, *save = NULL;

	if (ret < 0) {
		sb_release(&sb);
		return ret;
	}
	ret = -ENOENT;
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, key, klen) && line[klen] == '=') {
			scopy(buf, size, line + klen + 1);
			ret = 0;
			break;
		}
	}
	sb_release(&sb);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Names in a directory (no dot entries), sorted; NULL-free count in *n. */
static char **list_dir(const char *path, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Numeric entries of a directory, sorted ascending. */
static long *list_nums(const char *path, size_t *n)
{
	size_t nn;
	char **names = list_dir(path, &nn);
	long *v = nn ? xcalloc(nn, sizeof(*v)) : NULL;

	*n = 0;
	for (size_t i = 0; i < nn; i++) {
		char *end;
		long x = strtol(names[i], &end, 10);

		if (*end == '\0' && end != names[i])
			v[(*n)++] = x;
	}
	free_list(names, nn);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_long);
	return v;
}

int parse_port_rate(const char *s, double *gbps)
{
	char *end;
	double v;

	if (!s)
		return -EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	v = strtod(s, &end);
	if (end == s || v < 0)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (strncmp(end, "Gb/sec", 6) && strncmp(end, "Gb/s", 4))
		return -EINVAL;
	*gbps = v;
	return 0;
}

double rdma_rate_data_gbps(const char *rate, const char *link_layer)
{
	/* per-lane data rates, ib_verbs.h ib_port_speed names as sysfs.c prints them */
	static const struct { const char *name; double lane; } speeds[] = {
		{ "SDR", 2.0 }, { "DDR", 4.0 }, { "QDR", 8.0 },
		{ "FDR10", 10.3125 * 64 / 66 }, { "FDR", 14.0625 * 64 / 66 },
		{ "EDR", 25.0 }, { "HDR", 50.0 }, { "NDR", 100.0 }, { "XDR", 200.0 },
	};
	const char *open;
	double gbps;
	int width;
	char name[16];

	if (parse_port_rate(rate, &gbps) || gbps <= 0)
		return 0;
	if (link_layer && !strcmp(link_layer, "Ethernet"))
		return gbps;
	open = strchr(rate, '(');
	if (!open || sscanf(open, "(%dX %15[A-Z0-9])", &width, name) != 2 || width <= 0)
		return gbps;
	for (size_t i = 0; i < ARRAY_SIZE(speeds); i++)
		if (!strcmp(name, speeds[i].name))
			return speeds[i].lane * width;
	return gbps;
}

int parse_state(const char *s, int *num, char *name, size_t namesz)
{
	char *end;
	long v;

	if (!s)
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (end == s || *end != ':' || v < 0)
		return -EINVAL;
	end++;
	while (isspace((unsigned char)*end))
		end++;
	if (!*end)
		return -EINVAL;
	*num = (int)v;
	if (name && namesz) {
		scopy(name, namesz, end);
		strtrim(name);
	}
	return 0;
}

/* Find the netdev of a port: RoCE GID 0's ndev, rxe's parent, or a netdev of the PCI function. */
static void port_netdev(struct rq_ctx *ctx, const struct rdma_dev *d, struct rdma_port *p)
{
	char path[PATH_MAX], v[64];
	size_t n;
	char **nets;
	bool ib = !strcmp(p->link_layer, "InfiniBand");
	/* ARPHRD_ETHER 1, ARPHRD_INFINIBAND 32 */
	const char *want_type = ib ? "32" : "1";

	if (!ib && !rd(ctx, p->netdev, sizeof(p->netdev), IB_CLASS "/%s/ports/%d/gid_attrs/ndevs/0",
		       d->name, p->num) && p->netdev[0])
		return;
	if (d->parent[0]) {
		scopy(p->netdev, sizeof(p->netdev), d->parent);
		return;
	}
	rpath(ctx, path, sizeof(path), IB_CLASS "/%s/device/net", d->name);
	nets = list_dir(path, &n);
	/* IPoIB and mlx5 Ethernet netdevs set dev_port = port - 1. */
	for (size_t i = 0; i < n && !p->netdev[0]; i++) {
		if (rd(ctx, v, sizeof(v), IB_CLASS "/%s/device/net/%s/type", d->name, nets[i]) ||
		    strcmp(v, want_type))
			continue;
		if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/device/net/%s/dev_port", d->name, nets[i]) &&
		    atoi(v) != p->num - 1)
			continue;
		scopy(p->netdev, sizeof(p->netdev), nets[i]);
	}
	free_list(nets, n);
}

static void scan_port(struct rq_ctx *ctx, const struct rdma_dev *d, struct rdma_port *p)
{
	char v[128];

	if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/ports/%d/state", d->name, p->num))
		parse_state(v, &p->state, p->state_str, sizeof(p->state_str));
	if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/ports/%d/phys_state", d->name, p->num))
		parse_state(v, &p->phys_state, p->phys_str, sizeof(p->phys_str));
	rd(ctx, p->link_layer, sizeof(p->link_layer), IB_CLASS "/%s/ports/%d/link_layer",
	   d->name, p->num);
	if (!rd(ctx, p->rate_str, sizeof(p->rate_str), IB_CLASS "/%s/ports/%d/rate", d->name, p->num))
		if (!parse_port_rate(p->rate_str, &p->rate_gbps))
			p->data_gbps = rdma_rate_data_gbps(p->rate_str, p->link_layer);
	if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/ports/%d/lid", d->name, p->num))
		p->lid = (unsigned)strtoul(v, NULL, 16);
	if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/ports/%d/sm_lid", d->name, p->num))
		p->sm_lid = (unsigned)strtoul(v, NULL, 16);
	if (!p->state_str[0] && p->state >= 0 && p->state < (int)ARRAY_SIZE(state_names))
		scopy(p->state_str, sizeof(p->state_str), state_names[p->state]);
	port_netdev(ctx, d, p);
}

static void find_uverbs(struct rq_ctx *ctx, struct rdma_dev *d)
{
	char path[PATH_MAX], v[64];
	size_t n;
	char **names;

	rpath(ctx, path, sizeof(path), "/sys/class/infiniband_verbs");
	names = list_dir(path, &n);
	for (size_t i = 0; i < n; i++) {
		if (!str_starts(names[i], "uverbs"))
			continue;
		if (!rd(ctx, v, sizeof(v), "/sys/class/infiniband_verbs/%s/ibdev", names[i]) &&
		    !strcmp(v, d->name)) {
			scopy(d->uverbs, sizeof(d->uverbs), names[i]);
			break;
		}
	}
	free_list(names, n);
}

static void scan_dev(struct rq_ctx *ctx, const char *name, struct rdma_dev *d)
{
	char path[PATH_MAX], real[PATH_MAX], v[128];
	struct stat st;
	size_t np;
	long *nums;

	memset(d, 0, sizeof(*d));
	scopy(d->name, sizeof(d->name), name);
	d->numa_node = -1;

	if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/node_type", name)) {
		int num;

		if (parse_state(v, &num, d->node_type, sizeof(d->node_type)))
			scopy(d->node_type, sizeof(d->node_type), v);
	}
	rd(ctx, d->fw_ver, sizeof(d->fw_ver), IB_CLASS "/%s/fw_ver", name);
	rd(ctx, d->hca_type, sizeof(d->hca_type), IB_CLASS "/%s/hca_type", name);
	rd(ctx, d->board_id, sizeof(d->board_id), IB_CLASS "/%s/board_id", name);
	rd(ctx, d->node_guid, sizeof(d->node_guid), IB_CLASS "/%s/node_guid", name);
	rd(ctx, d->sys_image_guid, sizeof(d->sys_image_guid), IB_CLASS "/%s/sys_image_guid", name);
	rd(ctx, d->parent, sizeof(d->parent), IB_CLASS "/%s/parent", name);

	/* Software devices register without a parent device: /devices/virtual/. */
	rpath(ctx, path, sizeof(path), IB_CLASS "/%s", name);
	if (realpath(path, real) && strstr(real, "/devices/virtual/"))
		d->is_virtual = true;
	rpath(ctx, path, sizeof(path), IB_CLASS "/%s/device", name);
	if (lstat(path, &st) < 0)
		d->is_virtual = true;

	if (!d->is_virtual) {
		char up[PATH_MAX];

		if (link_base(path, v, sizeof(v)) == 0 && is_bdf(v))
			scopy(d->pci, sizeof(d->pci), v);
		rpath(ctx, up, sizeof(up), IB_CLASS "/%s/device/uevent", name);
		if (!d->pci[0])
			uevent_get(up, "PCI_SLOT_NAME", d->pci, sizeof(d->pci));
		rpath(ctx, path, sizeof(path), IB_CLASS "/%s/device/driver", name);
		if (link_base(path, d->driver, sizeof(d->driver)) < 0)
			uevent_get(up, "DRIVER", d->driver, sizeof(d->driver));
		if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/device/vendor", name))
			d->vendor = (unsigned)strtoul(v, NULL, 16);
		if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/device/device", name))
			d->device = (unsigned)strtoul(v, NULL, 16);
		if (!rd(ctx, v, sizeof(v), IB_CLASS "/%s/device/numa_node", name))
			d->numa_node = atoi(v);
	} else if (d->parent[0]) {
		/* Only rxe exposes `parent` (rxe_verbs.c parent_show). */
		snprintf(d->driver, sizeof(d->driver), "rxe");
	} else if (!strcmp(d->node_type, "RNIC")) {
		snprintf(d->driver, sizeof(d->driver), "siw");
	}
	find_uverbs(ctx, d);

	rpath(ctx, path, sizeof(path), IB_CLASS "/%s/ports", name);
	nums = list_nums(path, &np);
	if (np) {
		d->ports = xcalloc(np, sizeof(*d->ports));
		for (size_t i = 0; i < np; i++) {
			struct rdma_port *p = &d->ports[d->nports++];

			p->num = (int)nums[i];
			scan_port(ctx, d, p);
		}
	}
	free(nums);
}

int rdma_devs_scan(struct rq_ctx *ctx, struct rdma_devs *out)
{
	char path[PATH_MAX];
	size_t n;
	char **names;
	DIR *probe;

	out->v = NULL;
	out->n = 0;
	rpath(ctx, path, sizeof(path), IB_CLASS);
	probe = opendir(path);
	if (!probe)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	closedir(probe);
	names = list_dir(path, &n);
	if (n)
		out->v = xcalloc(n, sizeof(*out->v));
	for (size_t i = 0; i < n; i++)
		scan_dev(ctx, names[i], &out->v[out->n++]);
	free_list(names, n);
	return 0;
}

void rdma_devs_release(struct rdma_devs *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->v[i].ports);
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

bool rdma_port_selected(struct rq_ctx *ctx, int port)
{
	return !ctx->c || ctx->c->port <= 0 || ctx->c->port == port;
}

const struct rdma_port *rdma_dev_port(const struct rdma_dev *d, int port)
{
	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].num == port)
			return &d->ports[i];
	return NULL;
}

const struct rdma_dev *rdma_devs_find(const struct rdma_devs *d, const char *name)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, name))
			return &d->v[i];
	return NULL;
}

int rdma_devs_select2(struct rq_ctx *ctx, const struct rdma_devs *d, int *idx, int max,
		      char *missing, size_t missingsz)
{
	const char *sel = ctx->c ? ctx->c->devices : NULL;
	int n = 0;

	if (missing && missingsz)
		missing[0] = '\0';
	if (!sel || !*sel || !strcmp(sel, "all")) {
		for (int i = 0; i < d->n && n < max; i++)
			idx[n++] = i;
		return n;
	}
	if (!strcmp(sel, "first-active")) {
		for (int i = 0; i < d->n; i++)
			for (int j = 0; j < d->v[i].nports; j++)
				if (d->v[i].ports[j].state == PORT_ACTIVE &&
				    rdma_port_selected(ctx, d->v[i].ports[j].num) && max > 0) {
					idx[0] = i;
					return 1;
				}
		return 0;
	}
	char *copy = xstrdup(sel), *save = NULL, *tok;
	int ret = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *name = strtrim(tok);
		int found = -1;

		if (!*name)
			continue;
		for (int i = 0; i < d->n; i++)
			if (!strcmp(d->v[i].name, name))
				found = i;
		if (found < 0) {
			if (missing && missingsz)
				scopy(missing, missingsz, name);
			ret = -ENODEV;
			break;
		}
		bool dup = false;

		for (int k = 0; k < n; k++)
			dup |= idx[k] == found;
		if (!dup && n < max)
			idx[n++] = found;
	}
	free(copy);
	return ret < 0 ? ret : n;
}

int rdma_devs_select(struct rq_ctx *ctx, const struct rdma_devs *d, int *idx, int max)
{
	return rdma_devs_select2(ctx, d, idx, max, NULL, 0);
}

static bool gid_is_zero(const char *g)
{
	for (; *g; g++)
		if (*g != '0' && *g != ':')
			return false;
	return true;
}

/*
 * Is ndev stacked on netdev (a VLAN over the port's netdev)?  The kernel
 * links an upper device to its lower one as lower_<name> in the upper's
 * sysfs directory (net/core/dev.c, netdev_adjacent_sysfs_add); lstat, so
 * nothing is followed.
 */
static bool netdev_is_upper_of(struct rq_ctx *ctx, const char *ndev, const char *netdev)
{
	char path[PATH_MAX];
	struct stat st;

	if (strchr(ndev, '/') || strchr(netdev, '/'))
		return false;
	rpath(ctx, path, sizeof(path), "/sys/class/net/%s/lower_%s", ndev, netdev);
	return !lstat(path, &st);
}

int rdma_pick_gid(struct rq_ctx *ctx, const char *dev, int port, const char *netdev,
		  char *gid, size_t gidsz)
{
	char path[PATH_MAX], ll[32], g[64], type[32], ndev[64], upper_gid[64] = "";
	size_t n;
	long *idx;
	int ret = -ENOENT, upper = -ENOENT;

	if (gidsz)
		gid[0] = '\0';
	rd(ctx, ll, sizeof(ll), IB_CLASS "/%s/ports/%d/link_layer", dev, port);
	rpath(ctx, path, sizeof(path), IB_CLASS "/%s/ports/%d/gids", dev, port);
	idx = list_nums(path, &n);
	for (size_t i = 0; i < n; i++) {
		/* Unused entries read as zero or fail (EINVAL/EAGAIN): empty. */
		if (rd(ctx, g, sizeof(g), IB_CLASS "/%s/ports/%d/gids/%ld", dev, port, idx[i]) ||
		    gid_is_zero(g))
			continue;
		if (strcmp(ll, "Ethernet")) {
			/* IB: GID 0 is subnet prefix + port GUID. */
			if (idx[i] != 0)
				continue;
		} else {
			if (rd(ctx, type, sizeof(type), IB_CLASS "/%s/ports/%d/gid_attrs/types/%ld",
			       dev, port, idx[i]) || strcmp(type, "RoCE v2"))
				continue;
			if (!str_starts(g, "0000:0000:0000:0000:0000:ffff:"))
				continue;
			if (netdev && *netdev &&
			    (rd(ctx, ndev, sizeof(ndev), IB_CLASS "/%s/ports/%d/gid_attrs/ndevs/%ld",
				dev, port, idx[i]) || strcmp(ndev, netdev))) {
				/*
				 * RoCE on a VLAN: the address, and so the
				 * IPv4 GID, is the VLAN netdev's; taken when
				 * the port's own netdev has none.
				 */
				if (upper < 0 && ndev[0] && netdev_is_upper_of(ctx, ndev, netdev)) {
					upper = (int)idx[i];
					scopy(upper_gid, sizeof(upper_gid), g);
				}
				continue;
			}
		}
		scopy(gid, gidsz, g);
		ret = (int)idx[i];
		break;
	}
	free(idx);
	if (ret < 0 && upper >= 0) {
		scopy(gid, gidsz, upper_gid);
		ret = upper;
	}
	return ret;
}

int rdma_link_local_gid(struct rq_ctx *ctx, const char *dev, int port)
{
	char path[PATH_MAX], g[64], type[32];
	size_t n;
	long *idx;
	int ret = -ENOENT;

	rpath(ctx, path, sizeof(path), IB_CLASS "/%s/ports/%d/gids", dev, port);
	idx = list_nums(path, &n);
	for (size_t i = 0; i < n && ret < 0; i++)
		if (!rd(ctx, g, sizeof(g), IB_CLASS "/%s/ports/%d/gids/%ld", dev, port, idx[i]) &&
		    str_starts(g, "fe80:0000:0000:0000:") &&
		    !rd(ctx, type, sizeof(type), IB_CLASS "/%s/ports/%d/gid_attrs/types/%ld", dev,
			port, idx[i]) && !strcmp(type, "RoCE v2"))
			ret = (int)idx[i];
	free(idx);
	return ret;
}

bool rdma_soft_dev_name(const char *dev)
{
	return dev && (!strncmp(dev, "rxe", 3) || !strncmp(dev, "siw", 3));
}

bool rdma_have_mlx_pci(const char *root)
{
	char path[PATH_MAX], v[32];
	size_t n;
	char **names;
	bool found = false;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices", root ? root : "");
	names = list_dir(path, &n);
	for (size_t i = 0; i < n && !found; i++) {
		snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/vendor", root ? root : "",
			 names[i]);
		if (!read_line(path, v, sizeof(v)) && strtoul(v, NULL, 16) == 0x15b3)
			found = true;
	}
	free_list(names, n);
	return found;
}
