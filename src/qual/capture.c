/* SPDX-License-Identifier: MIT */
/*
 * Capture a node for replay (see capture.h, sysroot.h).  What is copied is
 * what the node kinds declare they read (rq_kind.reads, core/reads.h) and
 * what the device layer reads (base_reads below), found the way rdmadev
 * finds it: from /sys/class/infiniband to each device's directory and PCI
 * function, the PCI functions of the declared vendors (bound or not), the
 * bridges above them, the netdevs, the uverbs/umad class entries; then the
 * declared modules, paths (globs expanded), daemons and tools.  Capture
 * holds no list of its own of what a kind reads: a new kind's reads are
 * captured once its file declares them.  Nothing is followed
 * blindly: symlinks are copied as links and their targets are copied by the
 * step that needs them, so the copy stays small and never loops.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "qual/capture.h"
#include "core/ctx.h"
#include "core/case.h"
#include "core/kind.h"
#include "core/proc.h"
#include "qual/redact.h"
#include "qual/sysroot.h"
#include "core/util.h"

/* The union of base_reads and every kind's reads: each thing once, in first-declared order. */
struct reads {
	struct rq_read *v;
	size_t n, cap;
};

struct cap {
	const struct capture_opts *o;
	struct reads reads;	/* what to copy: reads_union() */
	char src[PATH_MAX];	/* "" for the live node, else a canonical tree path */
	char dst[PATH_MAX];
	struct sb manifest;
	struct capture_stats *st;
	struct rq_redact redact;	/* the capture's one key: one pseudonym per value in every file */
	char **seen;		/* open-addressing set of copied relative paths */
	size_t nseen, capseen;
};

/*
 * What capture copies that is no one kind's: what the device layer reads
 * (rdmadev finds devices through these, the node facts every row carries
 * come from these) and the node's record, which a person or sysroot's
 * replay reads (the device's identity and link state, the plain tool
 * listings, the daemons that change what a node does).  The rest comes
 * from the kinds' own lists (rq_kind.reads).
 */
static const struct rq_read base_reads[] = {
	/* rdmadev: a device's function, its driver, its NUMA node; the netdev's device */
	RQ_READS_PCI("vendor", RQ_PCI_ALL),
	RQ_READS_PCI("device", RQ_PCI_ALL),
	RQ_READS_PCI("subsystem_vendor", RQ_PCI_ALL),
	RQ_READS_PCI("subsystem_device", RQ_PCI_ALL),
	RQ_READS_PCI("class", RQ_PCI_ALL),
	RQ_READS_PCI("revision", RQ_PCI_ALL),
	RQ_READS_PCI("numa_node", RQ_PCI_ALL),
	RQ_READS_PCI("uevent", RQ_PCI_ALL),
	RQ_READS_PCI("enable", RQ_PCI_ALL), RQ_READS_PCI("local_cpus", RQ_PCI_ALL),
	/* the function's SR-IOV layout (driver judges the VFs themselves) */
	RQ_READS_PCI("sriov_numvfs", RQ_PCI_ALL), RQ_READS_PCI("sriov_totalvfs", RQ_PCI_ALL),
	RQ_READS_PCI("sriov_offset", RQ_PCI_ALL), RQ_READS_PCI("sriov_stride", RQ_PCI_ALL),
	RQ_READS_PCI_LINK("driver", RQ_PCI_FUNCTION),
	/* the verbs and MAD class entries of the function (uverbsN, umadN: ibdev, port) */
	RQ_READS_PCI_TREE("infiniband_verbs", 3, RQ_PCI_FUNCTION),
	RQ_READS_PCI_TREE("infiniband_mad", 3, RQ_PCI_FUNCTION),
	RQ_READS_NETDEV("mtu"), RQ_READS_NETDEV("type"), RQ_READS_NETDEV("dev_port"),
	RQ_READS_NETDEV("dev_id"), RQ_READS_NETDEV("operstate"), RQ_READS_NETDEV("carrier"),
	RQ_READS_NETDEV("address"), RQ_READS_NETDEV("ifindex"),
	RQ_READS_NETDEV("duplex"), RQ_READS_NETDEV("uevent"),
	RQ_READS_NETDEV_LINK("device"),
	/* node facts: the kernel, libibverbs, rdma-core, OFED, mlx5_core's version */
	RQ_READS_MODULE("mlx5_core", 0),
	RQ_READS_FILE("/proc/sys/kernel/osrelease"),
	RQ_READS_FILE("/proc/sys/kernel/hostname"),
	RQ_READS_FILE("/usr/lib/x86_64-linux-gnu/libibverbs.so.1"),
	RQ_READS_FILE("/usr/lib/aarch64-linux-gnu/libibverbs.so.1"),
	RQ_READS_FILE("/usr/lib64/libibverbs.so.1"), RQ_READS_FILE("/usr/lib/libibverbs.so.1"),
	RQ_READS_TOOL("ofed_info", "-s"), RQ_READS_TOOL("pkg-config", "--modversion", "libibverbs"),
	/* the verbs stack's ABI and device nodes (recorded in the manifest, never created) */
	RQ_READS_TREE("/dev/infiniband", 1),
	RQ_READS_FILE("/sys/class/infiniband_verbs/abi_version"),
	RQ_READS_FILE("/sys/class/infiniband_mad/abi_version"),
	RQ_READS_FILE("/sys/devices/system/cpu/possible"), RQ_READS_FILE("/sys/devices/system/node/online"),
	/* the record: the listings a person reads first, pid 1, the daemons that change a node */
	RQ_READS_TOOL("ibv_devinfo", "-v"), RQ_READS_TOOL("ibv_devinfo"), RQ_READS_TOOL("ibstat"),
	RQ_READS_TOOL("rdma", "link", "show"), RQ_READS_TOOL("rdma", "dev", "show"),
	RQ_READS_FILE("/proc/1/comm"),
	RQ_READS_PROCESS("opensm"), RQ_READS_PROCESS("ibacm"), RQ_READS_PROCESS("rdma-ndd"),
	/* the IRQs' affinities as the kernel keeps them, whoever judges them */
	RQ_READS_GLOB("/proc/irq/[0-9]*/smp_affinity"), RQ_READS_GLOB("/proc/irq/[0-9]*/effective_affinity"),
	RQ_READS_GLOB("/proc/irq/[0-9]*/affinity_hint"), RQ_READS_GLOB("/proc/irq/[0-9]*/node"),
	RQ_READS_END,
};

static bool argv_eq(const char *const *a, const char *const *b)
{
	size_t i;

	for (i = 0; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return !a[i] && !b[i];
}

static void reads_add(struct reads *u, const struct rq_read *list)
{
	for (const struct rq_read *r = list; r && r->type != RQ_READ_END; r++) {
		struct rq_read *m = NULL;

		for (size_t i = 0; i < u->n && !m; i++) {
			struct rq_read *e = &u->v[i];

			if (e->type != r->type)
				continue;
			if (r->type == RQ_READ_TOOL ? argv_eq(e->argv, r->argv) :
			    r->type == RQ_READ_PCI_VENDOR ? e->flags == r->flags : !strcmp(e->path, r->path))
				m = e;
		}
		if (m) {
			if (r->depth > m->depth)
				m->depth = r->depth;
			if (r->type != RQ_READ_PCI_VENDOR)
				m->flags |= r->flags;
			m->follow |= r->follow;
			continue;
		}
		if (u->n == u->cap) {
			u->cap = u->cap ? u->cap * 2 : 64;
			u->v = xrealloc(u->v, u->cap * sizeof(*u->v));
		}
		u->v[u->n++] = *r;
	}
}

/* base_reads, then the kinds core was handed, in their order. */
static void reads_union(struct reads *u)
{
	const struct rq_kind *k;

	reads_add(u, base_reads);
	for (size_t i = 0; (k = rq_kind_iter(i)); i++)
		reads_add(u, k->reads);
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* true when rel was already copied (and marks it). */
static bool seen(struct cap *c, const char *rel)
{
	size_t i;

	if (c->nseen * 2 >= c->capseen) {
		size_t oc = c->capseen;
		char **old = c->seen;

		c->capseen = oc ? oc * 2 : 1024;
		c->seen = xcalloc(c->capseen, sizeof(*c->seen));
		c->nseen = 0;
		for (size_t k = 0; k < oc; k++)
			if (old[k]) {
				i = fnv(old[k], strlen(old[k])) & (c->capseen - 1);
				while (c->seen[i])
					i = (i + 1) & (c->capseen - 1);
				c->seen[i] = old[k];
				c->nseen++;
			}
		free(old);
	}
	i = fnv(rel, strlen(rel)) & (c->capseen - 1);
	while (c->seen[i]) {
		if (!strcmp(c->seen[i], rel))
			return true;
		i = (i + 1) & (c->capseen - 1);
	}
	c->seen[i] = xstrdup(rel);
	c->nseen++;
	return false;
}

/* a + b + c into buf, truncated (paths: no format-truncation noise). */
static void catp(char *buf, size_t size, const char *a, const char *b, const char *c)
{
	const char *parts[] = { a, b, c };
	size_t n = 0;

	for (size_t i = 0; i < 3; i++)
		for (const char *p = parts[i]; p && *p && n + 1 < size; p++)
			buf[n++] = *p;
	buf[n] = '\0';
}

static void spath(struct cap *c, const char *rel, char *buf, size_t size)
{
	catp(buf, size, c->src, rel, "");
}

static void dpath(struct cap *c, const char *rel, char *buf, size_t size)
{
	catp(buf, size, c->dst, rel, "");
}

static void mkparent(struct cap *c, const char *rel)
{
	char d[PATH_MAX], *slash;

	dpath(c, rel, d, sizeof(d));
	slash = strrchr(d, '/');
	if (slash && slash != d) {
		*slash = '\0';
		mkdir_p(d, 0755);
	}
}

static void logf_(struct cap *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct cap *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->o->log)
		return;
	va_start(ap, fmt);
	sb_vaddf(c->o->log, fmt, ap);
	va_end(ap);
	sb_addc(c->o->log, '\n');
}

/* Canonical relative path of what rel resolves to, or -1 outside the source. */
static int resolve(struct cap *c, const char *rel, char *out, size_t size)
{
	char p[PATH_MAX], real[PATH_MAX];
	size_t sl = strlen(c->src);

	spath(c, rel, p, sizeof(p));
	if (!realpath(p, real))
		return -1;
	if (sl && (strncmp(real, c->src, sl) || (real[sl] != '/' && real[sl] != '\0')))
		return -1;
	snprintf(out, size, "%s", real[sl] ? real + sl : "/");
	return 0;
}

static void cp_file(struct cap *c, const char *rel)
{
	char s[PATH_MAX], d[PATH_MAX];
	struct sb text = SB_INIT;
	int ret;

	spath(c, rel, s, sizeof(s));
	/* Up to 16 MiB (/proc/interrupts of a big node passes 1 MiB); past it, "fail EFBIG", never cut. */
	ret = read_file(s, &text, 0);
	if (ret < 0) {
		/* Unused GID attrs read EINVAL, some power files EIO: record, don't create. */
		sb_addf(&c->manifest, "fail\t%s\t%s\n", rel, strerrorname_np(-ret) ? strerrorname_np(-ret) : "?");
		c->st->failed++;
		sb_release(&text);
		return;
	}
	/* a function's config space is binary: its serial number capability, not text, names the GUID */
	size_t rl = strlen(rel);

	if (c->o->redact && rl > 7 && !strcmp(rel + rl - 7, "/config") && strstr(rel, "/sys/"))
		rq_redact_pci_config(&c->redact, (uint8_t *)text.buf, text.len);
	else if (c->o->redact)
		rq_redact_text(&c->redact, &text);
	mkparent(c, rel);
	dpath(c, rel, d, sizeof(d));
	if (write_file_atomic(d, text.buf, text.len) == 0) {
		sb_addf(&c->manifest, "file\t%s\t%zu\n", rel, text.len);
		c->st->files++;
	}
	sb_release(&text);
}

static void cp_link(struct cap *c, const char *rel)
{
	char s[PATH_MAX], d[PATH_MAX], t[PATH_MAX];
	ssize_t n;

	spath(c, rel, s, sizeof(s));
	n = readlink(s, t, sizeof(t) - 1);
	if (n < 0)
		return;
	t[n] = '\0';
	if (t[0] == '/') {
		/* Keep the copy self-contained: absolute targets become relative. */
		char dir[PATH_MAX], *slash, rt[PATH_MAX] = "";

		snprintf(dir, sizeof(dir), "%s", rel);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		for (char *p = dir; *p; p++)
			if (*p == '/')
				strncat(rt, "../", sizeof(rt) - strlen(rt) - 1);
		strncat(rt, t + 1, sizeof(rt) - strlen(rt) - 1);
		snprintf(t, sizeof(t), "%s", rt);
	}
	mkparent(c, rel);
	dpath(c, rel, d, sizeof(d));
	unlink(d);
	if (symlink(t, d) == 0) {
		sb_addf(&c->manifest, "link\t%s\t%s\n", rel, t);
		c->st->links++;
	}
}

static void cp_tree(struct cap *c, const char *rel, int depth);

/* Copy one entry: file, link (not followed), dir (recursively when depth > 0), device node. */
static void cp_entry(struct cap *c, const char *rel, int depth)
{
	char s[PATH_MAX];
	struct stat st;

	if (seen(c, rel))
		return;
	spath(c, rel, s, sizeof(s));
	if (lstat(s, &st) < 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		cp_link(c, rel);
	} else if (S_ISDIR(st.st_mode)) {
		char d[PATH_MAX];

		dpath(c, rel, d, sizeof(d));
		mkdir_p(d, 0755);
		sb_addf(&c->manifest, "dir\t%s\n", rel);
		c->st->dirs++;
		if (depth > 0)
			cp_tree(c, rel, depth - 1);
	} else if (S_ISREG(st.st_mode)) {
		if (st.st_mode & 0444)
			cp_file(c, rel);
	} else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
		sb_addf(&c->manifest, "%s\t%s\t%u:%u\n", S_ISCHR(st.st_mode) ? "chr" : "blk", rel,
			major(st.st_rdev), minor(st.st_rdev));
		c->st->devnodes++;
	}
}

static void cp_tree(struct cap *c, const char *rel, int depth)
{
	char s[PATH_MAX];
	struct dirent **ents = NULL;
	int n;

	spath(c, rel, s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, "..")) {
			char sub[PATH_MAX];

			snprintf(sub, sizeof(sub), "%s/%s", rel, ents[i]->d_name);
			cp_entry(c, sub, depth);
		}
		free(ents[i]);
	}
	free(ents);
}

/* Copy a link and return its target's relative path (for the caller to copy). */
static int cp_follow(struct cap *c, const char *rel, char *target, size_t size)
{
	cp_entry(c, rel, 0);
	return resolve(c, rel, target, size);
}

/*
 * One declared attribute of a device directory: through a link when its
 * first component is one (iommu_group/type), the link and its target when
 * the read follows it (driver, a netdev's device), else the entry itself.
 */
static void cp_dev_attr(struct cap *c, const char *dir, const struct rq_read *r)
{
	char rel[PATH_MAX], t[PATH_MAX], s[PATH_MAX];
	const char *slash = strchr(r->path, '/');
	struct stat st;

	if (slash) {
		snprintf(rel, sizeof(rel), "%s/%.*s", dir, (int)(slash - r->path), r->path);
		spath(c, rel, s, sizeof(s));
		if (lstat(s, &st) == 0 && S_ISLNK(st.st_mode)) {
			if (resolve(c, rel, t, sizeof(t)) == 0) {
				catp(rel, sizeof(rel), t, slash, "");
				cp_entry(c, rel, (int)r->depth);
			}
			return;
		}
	}
	catp(rel, sizeof(rel), dir, "/", r->path);
	if (r->follow) {
		if (cp_follow(c, rel, t, sizeof(t)) == 0)
			cp_entry(c, t, (int)r->depth);
		return;
	}
	cp_entry(c, rel, (int)r->depth);
}

/* The declared attributes of a PCI device in scope (RQ_PCI_*). */
static void cp_pci_attrs(struct cap *c, const char *dir, unsigned scope)
{
	for (size_t i = 0; i < c->reads.n; i++)
		if (c->reads.v[i].type == RQ_READ_PCI && (c->reads.v[i].flags & scope))
			cp_dev_attr(c, dir, &c->reads.v[i]);
}

static void cp_netdev(struct cap *c, const char *ndir)
{
	char rel[PATH_MAX], t[PATH_MAX], up[PATH_MAX];

	cp_entry(c, ndir, 0);
	for (size_t i = 0; i < c->reads.n; i++)
		if (c->reads.v[i].type == RQ_READ_NETDEV)
			cp_dev_attr(c, ndir, &c->reads.v[i]);
	/* device -> the virtio device or PCI function; the device above it (virtio's PCI function) */
	snprintf(rel, sizeof(rel), "%s/device", ndir);
	if (resolve(c, rel, t, sizeof(t)) == 0) {
		catp(up, sizeof(up), t, "/..", "");
		if (resolve(c, up, up, sizeof(up)) == 0)
			cp_pci_attrs(c, up, RQ_PCI_PARENT);
	}
}

/* A name like "0000:3a:00.0". */
static bool is_bdf(const char *s)
{
	unsigned dom, bus, dev, fn;
	char tail;

	return strlen(s) == 12 && sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4;
}

/*
 * The bridges above a PCI function (its parent directories named like a
 * BDF, up to the root port): the pcie kind judges every link of the path.
 */
static void cp_bridges(struct cap *c, const char *pdir)
{
	char up[PATH_MAX], *slash;

	snprintf(up, sizeof(up), "%s", pdir);
	while ((slash = strrchr(up, '/')) && slash != up) {
		*slash = '\0';
		slash = strrchr(up, '/');
		if (!slash || !is_bdf(slash + 1))
			break;
		cp_pci_attrs(c, up, RQ_PCI_BRIDGES);
	}
}

static void cp_pci(struct cap *c, const char *pdir)
{
	char rel[PATH_MAX];
	struct dirent **ents = NULL;
	char s[PATH_MAX];
	int n;

	cp_entry(c, pdir, 0);
	cp_pci_attrs(c, pdir, RQ_PCI_FUNCTION);
	cp_bridges(c, pdir);
	snprintf(rel, sizeof(rel), "%s/net", pdir);
	spath(c, rel, s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			char nd[PATH_MAX];

			catp(nd, sizeof(nd), rel, "/", ents[i]->d_name);
			cp_netdev(c, nd);
		}
		free(ents[i]);
	}
	free(ents);
}

/* Each entry of a class directory: the link, and its target via fn (or the whole tree). */
static void cp_class(struct cap *c, const char *cls, void (*fn)(struct cap *, const char *), int depth)
{
	char s[PATH_MAX];
	struct dirent **ents = NULL;
	int n;

	spath(c, cls, s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			char rel[PATH_MAX], t[PATH_MAX];

			snprintf(rel, sizeof(rel), "%s/%s", cls, ents[i]->d_name);
			if (cp_follow(c, rel, t, sizeof(t)) == 0 && strcmp(t, rel)) {
				if (fn)
					fn(c, t);
				else
					cp_entry(c, t, depth);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

static void cp_ibdev(struct cap *c, const char *idir)
{
	char rel[PATH_MAX], t[PATH_MAX];

	cp_entry(c, idir, 6);	/* ports/N/{gids,gid_attrs/{types,ndevs},pkeys,counters,...} */
	snprintf(rel, sizeof(rel), "%s/device", idir);
	if (resolve(c, rel, t, sizeof(t)) == 0 && strcmp(t, idir) && strncmp(t, "/sys/devices/virtual", 20)) {
		char bus[PATH_MAX];
		const char *b = strrchr(t, '/');

		cp_pci(c, t);
		catp(bus, sizeof(bus), "/sys/bus/pci/devices/", b ? b + 1 : t, "");
		cp_entry(c, bus, 0);
	}
}

static bool vendor_read(struct cap *c, unsigned long id)
{
	for (size_t i = 0; i < c->reads.n; i++)
		if (c->reads.v[i].type == RQ_READ_PCI_VENDOR && c->reads.v[i].flags == id)
			return true;
	return false;
}

static void cp_vendor_functions(struct cap *c)
{
	char s[PATH_MAX];
	struct dirent **ents = NULL;
	int n;

	spath(c, "/sys/bus/pci/devices", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char rel[PATH_MAX], v[32], p[PATH_MAX], t[PATH_MAX];

		if (ents[i]->d_name[0] != '.') {
			snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s", ents[i]->d_name);
			spath(c, rel, p, sizeof(p));
			strncat(p, "/vendor", sizeof(p) - strlen(p) - 1);
			/* the vendors the kinds declare (ConnectX functions, NVIDIA's GPUs) */
			if (!read_line(p, v, sizeof(v)) && vendor_read(c, strtoul(v, NULL, 16)) &&
			    cp_follow(c, rel, t, sizeof(t)) == 0)
				cp_pci(c, t);
		}
		free(ents[i]);
	}
	free(ents);
}

/* A declared path: a link followed when asked, else the entry and depth levels below it. */
static void cp_path_one(struct cap *c, const char *rel, const struct rq_read *r)
{
	char t[PATH_MAX];

	if (r->follow) {
		if (cp_follow(c, rel, t, sizeof(t)) == 0)
			cp_entry(c, t, (int)r->depth);
	} else {
		cp_entry(c, rel, (int)r->depth);
	}
}

/* A declared path, {kernel} made the running kernel's release, its globs expanded under the source. */
static void cp_path(struct cap *c, const struct rq_read *r)
{
	char pat[PATH_MAX], kver[256], s[PATH_MAX], esc[2 * PATH_MAX + 1];
	const char *k = strstr(r->path, "{kernel}");
	size_t n = 0, sl = strlen(c->src);
	glob_t g;

	if (k) {
		spath(c, "/proc/sys/kernel/osrelease", s, sizeof(s));
		if (read_line(s, kver, sizeof(kver)))
			return;
		snprintf(pat, sizeof(pat), "%.*s%.200s%s", (int)(k - r->path), r->path, kver, k + 8);
	} else {
		snprintf(pat, sizeof(pat), "%s", r->path);
	}
	if (!strpbrk(pat, "*?[")) {
		cp_path_one(c, pat, r);
		return;
	}
	/* the source's own name is no pattern */
	for (const char *p = c->src; *p && n + 2 < sizeof(esc); p++) {
		if (strchr("*?[]\\", *p))
			esc[n++] = '\\';
		esc[n++] = *p;
	}
	esc[n] = '\0';
	strncat(esc, pat, sizeof(esc) - n - 1);
	if (glob(esc, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (strlen(g.gl_pathv[i]) > sl)
				cp_path_one(c, g.gl_pathv[i] + sl, r);
	globfree(&g);
}

/* The declared modules' state, paths and daemons. */
static void cp_node(struct cap *c)
{
	char s[PATH_MAX];
	struct dirent **ents = NULL;
	int n;

	for (size_t i = 0; i < c->reads.n; i++) {
		/* taint: E = loaded without a verified signature */
		static const char *const mfiles[] = { "initstate", "version", "srcversion", "refcnt", "taint" };
		const struct rq_read *r = &c->reads.v[i];
		char dir[PATH_MAX];
		struct stat st;

		if (r->type != RQ_READ_MODULE)
			continue;
		snprintf(dir, sizeof(dir), "/sys/module/%.200s", r->path);
		spath(c, dir, s, sizeof(s));
		if (stat(s, &st) == 0) {
			cp_entry(c, dir, 0);	/* a dir without initstate: built in */
			for (size_t k = 0; k < ARRAY_SIZE(mfiles); k++) {
				char rel[PATH_MAX];

				catp(rel, sizeof(rel), dir, "/", mfiles[k]);
				cp_entry(c, rel, 0);
			}
		}
	}
	for (size_t i = 0; i < c->reads.n; i++)
		if (c->reads.v[i].type == RQ_READ_PATH)
			cp_path(c, &c->reads.v[i]);
	/* Only the daemons the kinds ask about (irqbalance...). */
	spath(c, "/proc", s, sizeof(s));
	n = scandir(s, &ents, NULL, NULL);
	for (int i = 0; i < n; i++) {
		char rel[PATH_MAX], p[PATH_MAX], comm[64];

		if (isdigit((unsigned char)ents[i]->d_name[0])) {
			snprintf(rel, sizeof(rel), "/proc/%s/comm", ents[i]->d_name);
			spath(c, rel, p, sizeof(p));
			if (!read_line(p, comm, sizeof(comm))) {
				bool want = false;

				for (size_t k = 0; k < c->reads.n; k++)
					want |= c->reads.v[k].type == RQ_READ_PROCESS && !strcmp(comm, c->reads.v[k].path);
				if (want)
					cp_entry(c, rel, 0);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

/* Run (or, from a tree, replay) one tool and store what it printed (a copy in keep, when given and it ran). */
static void run_tool_keep(struct cap *c, struct rq_ctx *ctx, const char *const *argv, struct sb *keep)
{
	char name[256], rel[PATH_MAX], d[PATH_MAX];
	struct proc_result r;
	int ret;

	proc_result_init(&r);
	if (!c->src[0]) {
		struct proc_opts po = { .argv = argv, .timeout_ms = scaled_ms(20000), .log_fd = -1,
					.tail_max = 4 << 20 };

		ret = proc_run(&po, &r);
	} else {
		ret = rq_tool_replay(ctx, argv, 20000, &r);
	}
	if (ret < 0 || r.exec_failed || r.timed_out) {
		logf_(c, "tool %s: not captured (%s)", argv[0], r.exec_failed ? "not available" :
		      r.timed_out ? "timed out" : strerror(-ret));
		proc_result_release(&r);
		return;
	}
	rq_tool_file_name(argv, name, sizeof(name));
	snprintf(rel, sizeof(rel), "/" RQ_CAPTURE_DIR "/tools/%s.out", name);
	if (c->o->redact)
		rq_redact_text(&c->redact, &r.out);
	mkparent(c, rel);
	dpath(c, rel, d, sizeof(d));
	write_file_atomic(d, r.out.buf, r.out.len);
	if (r.err.len) {
		if (c->o->redact)
			rq_redact_text(&c->redact, &r.err);
		snprintf(rel, sizeof(rel), "/" RQ_CAPTURE_DIR "/tools/%s.err", name);
		dpath(c, rel, d, sizeof(d));
		write_file_atomic(d, r.err.buf, r.err.len);
	}
	sb_addf(&c->manifest, "tool\t" RQ_CAPTURE_DIR "/tools/%s.out\t%d", name, r.exit_code);
	for (size_t k = 0; argv[k]; k++)
		sb_addf(&c->manifest, "\t%s", argv[k]);
	sb_addc(&c->manifest, '\n');
	c->st->tools++;
	if (keep && r.exit_code == 0 && r.out.buf)
		sb_adds(keep, r.out.buf);
	proc_result_release(&r);
}

static void run_tool(struct cap *c, struct rq_ctx *ctx, const char *const *argv)
{
	run_tool_keep(c, ctx, argv, NULL);
}

/* An NVIDIA GPU on the bus (vendor 0x10de, class VGA or 3D controller): its driver is judged even unloaded. */
static bool gpu_present(struct cap *c)
{
	struct dirent **ents = NULL;
	char s[PATH_MAX];
	bool found = false;
	int n;

	spath(c, "/sys/bus/pci/devices", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX + 300], v[32];

		snprintf(p, sizeof(p), "%s/%s/vendor", s, ents[i]->d_name);
		if (!found && ents[i]->d_name[0] != '.' && !read_line(p, v, sizeof(v)) && strtoul(v, NULL, 16) == 0x10de) {
			snprintf(p, sizeof(p), "%s/%s/class", s, ents[i]->d_name);
			found = !read_line(p, v, sizeof(v)) &&
				((strtoul(v, NULL, 16) >> 8) == 0x0300 || (strtoul(v, NULL, 16) >> 8) == 0x0302);
		}
		free(ents[i]);
	}
	free(ents);
	return found;
}

/* modinfo's "filename:" field. */
static bool modinfo_filename(const char *text, char *out, size_t size)
{
	const char *p = text && str_starts(text, "filename:") ? text : text ? strstr(text, "\nfilename:") : NULL;

	if (!p)
		return false;
	p = strchr(p, ':') + 1;
	while (*p == ' ' || *p == '\t')
		p++;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
	return out[0] == '/';
}

/* A declared tool's argv with "{pci}" / "{netdev}" replaced by val; false when it has no such word. */
static bool tool_argv(const struct rq_read *r, const char *word, const char *val, const char **argv, size_t max)
{
	bool has = false;
	size_t k;

	for (k = 0; r->argv[k] && k + 1 < max; k++) {
		bool ph = !strcmp(r->argv[k], word);

		has |= ph;
		argv[k] = ph ? val : r->argv[k];
	}
	argv[k] = NULL;
	return has;
}

static bool has_placeholder(const struct rq_read *r)
{
	for (size_t k = 0; r->argv[k]; k++)
		if (!strcmp(r->argv[k], "{pci}") || !strcmp(r->argv[k], "{netdev}"))
			return true;
	return false;
}

/* Each declared tool with word in its argv, run with val for it. */
static void run_tools_for(struct cap *c, struct rq_ctx *ctx, const char *word, const char *val)
{
	for (size_t i = 0; i < c->reads.n; i++) {
		const char *argv[16];

		if (c->reads.v[i].type == RQ_READ_TOOL && tool_argv(&c->reads.v[i], word, val, argv, ARRAY_SIZE(argv)))
			run_tool(c, ctx, argv);
	}
}

static void run_tools(struct cap *c)
{
	struct rq_ctx ctx = { .root = c->src, .replay = true, .log_fd = -1 };
	struct dirent **ents = NULL;
	char s[PATH_MAX];
	bool gpu;
	int n;

	ctx.tool = rq_tool_replay;
	for (size_t i = 0; i < c->reads.n; i++)
		if (c->reads.v[i].type == RQ_READ_TOOL && !has_placeholder(&c->reads.v[i]))
			run_tool(c, &ctx, c->reads.v[i].argv);
	/*
	 * Where each loaded module comes from (RQ_MOD_MODINFO); on a GPU node
	 * the NVIDIA driver's and its peer-memory module's even unloaded
	 * (RQ_MOD_MODINFO_GPU: after a kernel update they may not exist for
	 * it, or not load).  And the symbol CRCs that decide whether a
	 * peer-memory module fits the loaded ib_core: those it was built with
	 * (RQ_MOD_MODVERSIONS), those ib_core's file exports (RQ_MOD_EXPORTS).
	 */
	gpu = gpu_present(c);
	for (size_t i = 0; i < c->reads.n; i++) {
		const struct rq_read *r = &c->reads.v[i];
		char p[PATH_MAX], file[PATH_MAX];
		struct stat st;
		struct sb out = SB_INIT;
		const char *mi[] = { "modinfo", r->path, NULL };

		if (r->type != RQ_READ_MODULE)
			continue;
		snprintf(p, sizeof(p), "/sys/module/%.200s", r->path);
		spath(c, p, s, sizeof(s));
		if (((r->flags & RQ_MOD_MODINFO) && stat(s, &st) == 0) || ((r->flags & RQ_MOD_MODINFO_GPU) && gpu))
			run_tool_keep(c, &ctx, mi, &out);
		if (out.buf && modinfo_filename(out.buf, file, sizeof(file))) {
			if (r->flags & RQ_MOD_MODVERSIONS) {
				const char *mv[] = { "modprobe", "--dump-modversions", file, NULL };

				run_tool(c, &ctx, mv);
			}
			if (r->flags & RQ_MOD_EXPORTS) {
				const char *mv[] = { "modprobe", "--show-exports", file, NULL };

				run_tool(c, &ctx, mv);
			}
		}
		sb_release(&out);
	}
	/* the tools asked about each RDMA device's PCI function ("{pci}": firmware, flashed vs running) */
	spath(c, "/sys/class/infiniband", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX + 300], t[PATH_MAX];
		ssize_t len;

		snprintf(p, sizeof(p), "%s/%s/device", s, ents[i]->d_name);
		len = ents[i]->d_name[0] == '.' ? -1 : readlink(p, t, sizeof(t) - 1);
		if (len > 0) {
			const char *b;

			t[len] = '\0';
			b = strrchr(t, '/') ? strrchr(t, '/') + 1 : t;
			if (is_bdf(b))
				run_tools_for(c, &ctx, "{pci}", b);
		}
		free(ents[i]);
	}
	free(ents);
	ents = NULL;
	/* and about every Ethernet netdev ("{netdev}": DCB state) */
	spath(c, "/sys/class/net", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX + 300], v[16];
		const char *dev = ents[i]->d_name;

		snprintf(p, sizeof(p), "%s/%s/type", s, dev);
		/* ARPHRD_ETHER; lo is ARPHRD_LOOPBACK */
		if (dev[0] != '.' && !read_line(p, v, sizeof(v)) && !strcmp(v, "1"))
			run_tools_for(c, &ctx, "{netdev}", dev);
		free(ents[i]);
	}
	free(ents);
}

/* The PCI devices of an RQ_READ_PCI scope, in words. */
static void scope_describe(unsigned scope, struct sb *out)
{
	if (scope == RQ_PCI_ALL) {
		sb_adds(out, "each RDMA PCI function, the bridges above it and a netdev's parent device");
		return;
	}
	sb_adds(out, scope & RQ_PCI_FUNCTION ? "each RDMA PCI function" : "");
	if (scope & RQ_PCI_BRIDGES)
		sb_adds(out, scope & RQ_PCI_FUNCTION ? " and the bridges above it" : "the bridges above each RDMA PCI function");
	if (scope & RQ_PCI_PARENT)
		sb_adds(out, scope & (RQ_PCI_FUNCTION | RQ_PCI_BRIDGES) ? " and a netdev's parent device" :
			"a netdev's parent device");
}

static void depth_describe(const struct rq_read *r, struct sb *out)
{
	if (r->follow)
		sb_adds(out, " and what it links to");
	if (r->depth)
		sb_addf(out, " (%u level%s below it)", r->depth, r->depth == 1 ? "" : "s");
}

/* The next read is a plain attribute like r (same type and scope): one item with it. */
static bool same_kind_next(const struct rq_read *r)
{
	const struct rq_read *n = r + 1;

	return n->type == r->type && n->flags == r->flags && !n->depth && !n->follow;
}

void rq_capture_reads_describe(const struct rq_read *reads, struct sb *out)
{
	for (const struct rq_read *r = reads; r && r->type != RQ_READ_END; r++) {
		switch (r->type) {
		case RQ_READ_PATH:
			sb_addf(out, "`%s`", r->path);
			depth_describe(r, out);
			break;
		case RQ_READ_PCI:
			/* a run of attributes of one scope is one item */
			sb_addf(out, "`%s`", r->path);
			while (!r->depth && !r->follow && same_kind_next(r))
				sb_addf(out, ", `%s`", (++r)->path);
			sb_adds(out, " of ");
			scope_describe(r->flags, out);
			depth_describe(r, out);
			break;
		case RQ_READ_PCI_VENDOR:
			sb_addf(out, "every PCI function of vendor `0x%04x`, bound or not", r->flags);
			break;
		case RQ_READ_NETDEV:
			sb_addf(out, "`%s`", r->path);
			while (!r->depth && !r->follow && same_kind_next(r))
				sb_addf(out, ", `%s`", (++r)->path);
			sb_adds(out, " of every netdev (`/sys/class/net/*/`)");
			depth_describe(r, out);
			break;
		case RQ_READ_MODULE:
			sb_addf(out, "module `%s` (`/sys/module/%s`", r->path, r->path);
			if (r->flags & RQ_MOD_MODINFO)
				sb_addf(out, ", `modinfo %s` where it is loaded", r->path);
			if (r->flags & RQ_MOD_MODINFO_GPU)
				sb_adds(out, ", and on a node with an NVIDIA GPU even unloaded");
			if (r->flags & RQ_MOD_EXPORTS)
				sb_adds(out, ", `modprobe --show-exports` of its file");
			if (r->flags & RQ_MOD_MODVERSIONS)
				sb_adds(out, ", `modprobe --dump-modversions` of its file");
			sb_addc(out, ')');
			break;
		case RQ_READ_PROCESS:
			sb_addf(out, "whether `%s` runs (`/proc/*/comm`)", r->path);
			break;
		case RQ_READ_TOOL: {
			bool pci = false, nd = false;

			sb_adds(out, "`");
			for (size_t k = 0; r->argv[k]; k++) {
				sb_addf(out, "%s%s", k ? " " : "", r->argv[k]);
				pci |= !strcmp(r->argv[k], "{pci}");
				nd |= !strcmp(r->argv[k], "{netdev}");
			}
			sb_adds(out, "`");
			if (pci)
				sb_adds(out, " for each RDMA device's PCI function");
			if (nd)
				sb_adds(out, " for each Ethernet netdev");
			break;
		}
		case RQ_READ_END:
			break;
		}
		sb_addc(out, '\n');
	}
}

const struct rq_read *rq_capture_base_reads(void)
{
	return base_reads;
}

/*
 * DIR must be new: capture makes it itself and writes only there.  An
 * existing one, even empty, is refused: root capturing into another
 * user's empty 0777 dir with a planted `DIR/capture -> VICTIM` wrote its
 * manifest and tool outputs into VICTIM.  The parent must be one that only
 * its owner (the euid or root) can rename entries in, or sticky (as /tmp),
 * else the fresh dir could be swapped for a link while capture writes.
 * real gets DIR's real path.  0 or -errno with err.
 */
static int capture_dir_make(const char *dst, char *real, char *err, size_t errsz)
{
	char *parent = xstrdup(dst), *slash;
	struct stat st;
	int ret;

	while ((slash = strrchr(parent, '/')) && slash != parent && !slash[1])
		*slash = '\0';	/* DIR/ */
	slash = strrchr(parent, '/');
	if (slash == parent)
		parent[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(parent, ".");
	if (mkdir_p(parent, 0755) || stat(parent, &st) < 0) {
		ret = -errno;
		snprintf(err, errsz, "cannot create %s: %s", parent, strerror(errno));
		free(parent);
		return ret ? ret : -EIO;
	}
	if ((st.st_uid != geteuid() && st.st_uid != 0) || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		snprintf(err, errsz, "%s is owned by uid %u with mode %04o: another user could swap %s "
			 "for a link; capture under a dir of yours", parent, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777), dst);
		free(parent);
		return -EPERM;
	}
	free(parent);
	if (mkdir(dst, 0755) < 0) {
		ret = -errno;
		if (errno == EEXIST)
			snprintf(err, errsz, "%s exists: capture into a new directory (capture makes it)", dst);
		else
			snprintf(err, errsz, "cannot create %s: %s", dst, strerror(errno));
		return ret;
	}
	if (!realpath(dst, real) || lstat(real, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errsz, "%s changed while it was made", dst);
		return -EPERM;
	}
	return 0;
}

int rq_capture(const struct capture_opts *o, struct capture_stats *st, char *err, size_t errsz)
{
	struct cap c = { .o = o, .st = st };
	struct sb man = SB_INIT;
	char p[PATH_MAX], when[64];
	int ret;

	memset(st, 0, sizeof(*st));
	sb_init(&c.manifest);
	if (o->src && *o->src && strcmp(o->src, "/")) {
		if (!realpath(o->src, c.src)) {
			snprintf(err, errsz, "%s: %s", o->src, strerror(errno));
			return -errno;
		}
	}
	ret = capture_dir_make(o->dst, c.dst, err, errsz);
	if (ret)
		return ret;
	if (c.src[0] && !strncmp(c.dst, c.src, strlen(c.src)) && c.dst[strlen(c.src)] == '/') {
		snprintf(err, errsz, "the capture directory is inside the captured tree");
		return -EINVAL;
	}
	spath(&c, "/proc/sys/kernel/hostname", p, sizeof(p));
	{
		char host[256];

		if (read_line(p, host, sizeof(host)))
			host[0] = '\0';
		rq_redact_init(&c.redact, host);
	}

	reads_union(&c.reads);
	cp_class(&c, "/sys/class/infiniband", cp_ibdev, 0);
	cp_vendor_functions(&c);
	cp_class(&c, "/sys/class/infiniband_verbs", NULL, 2);
	cp_class(&c, "/sys/class/infiniband_mad", NULL, 2);
	cp_class(&c, "/sys/class/net", cp_netdev, 0);
	cp_node(&c);
	run_tools(&c);

	iso8601_now(when, sizeof(when));
	sb_addf(&man, RQ_MANIFEST_MAGIC "\t1\n");
	sb_addf(&man, "meta\tcaptured\t%s\n", when);
	sb_addf(&man, "meta\tsource\t%s\n", c.src[0] ? c.src : "/");
	sb_addf(&man, "meta\tredacted\t%s\n", o->redact ? "yes" : "no");
	if (c.src[0]) {
		/* a copy of a synthesized tree is no capture of a machine */
		struct rq_tree_meta m;

		rq_sysroot_origin(c.src, &m);
		if (m.origin == RQ_TREE_SYNTHESIZED)
			sb_addf(&man, "meta\tsynthesized\t%s\n", m.synthesized);
	}
	sb_add(&man, c.manifest.buf, c.manifest.len);
	catp(p, sizeof(p), c.dst, "/" RQ_CAPTURE_DIR, "");
	mkdir_p(p, 0755);
	catp(p, sizeof(p), c.dst, "/" RQ_CAPTURE_DIR "/manifest", "");
	ret = write_file_atomic(p, man.buf, man.len);
	if (ret < 0)
		snprintf(err, errsz, "cannot write %s: %s", p, strerror(-ret));
	sb_release(&man);
	sb_release(&c.manifest);
	for (size_t i = 0; i < c.capseen; i++)
		free(c.seen[i]);
	free(c.seen);
	free(c.reads.v);
	explicit_bzero(&c.redact, sizeof(c.redact));	/* the key dies with the capture */
	return ret;
}
