/* SPDX-License-Identifier: MIT */
/*
 * Capture a node for replay (see capture.h, sysroot.h).  What is copied is
 * exactly what the node kinds and rdmadev read, found the way they find it:
 * from /sys/class/infiniband to each device's directory and PCI function,
 * every Mellanox PCI function (bound or not), the netdevs, uverbs/umad
 * class entries, the stack's modules, CPU/NUMA lists, /proc/interrupts and
 * /proc/irq/<n>/ affinities, plus the tools' outputs.  Nothing is followed
 * blindly: symlinks are copied as links and their targets are copied by the
 * step that needs them, so the copy stays small and never loops.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "qual/capture.h"
#include "core/ctx.h"
#include "core/proc.h"
#include "qual/redact.h"
#include "qual/sysroot.h"
#include "core/util.h"

struct cap {
	const struct capture_opts *o;
	char src[PATH_MAX];	/* "" for the live node, else a canonical tree path */
	char dst[PATH_MAX];
	struct sb manifest;
	struct capture_stats *st;
	struct rq_redact redact;	/* the capture's one key: one pseudonym per value in every file */
	char **seen;		/* open-addressing set of copied relative paths */
	size_t nseen, capseen;
};

static const char *const stack_modules[] = {
	"mlx5_core", "mlx5_ib", "mlx4_core", "mlx4_ib", "ib_core", "ib_uverbs", "ib_umad", "ib_cm",
	"iw_cm", "rdma_cm", "rdma_ucm", "ib_ipoib", "rdma_rxe", "siw", "udp_tunnel", "ip6_udp_tunnel",
	"mlxfw", "crc32_generic",
	/* GPUDirect RDMA: the GPU driver (its modules) and its peer-memory client */
	"nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia_peermem", "nv_peer_mem",
	/* MLNX_OFED's compatibility layer (driver-stack: OFED's modules or the kernel's) */
	"mlx_compat", NULL,
};

/* PCI function attributes the kinds read (no config/resource/rom: binary or side effects). */
static const char *const pci_attrs[] = {
	"vendor", "device", "subsystem_vendor", "subsystem_device", "class", "revision",
	"current_link_speed", "current_link_width", "max_link_speed", "max_link_width",
	"numa_node", "local_cpulist", "local_cpus", "uevent", "sriov_numvfs", "sriov_totalvfs",
	"sriov_drivers_autoprobe", "sriov_offset", "sriov_stride", "enable", "physfn",
	/* PCIe AER counters (drivers/pci/pcie/aer.c): link health by growth */
	"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal", NULL,
};

/*
 * Config space (4 KiB to root, 256 bytes otherwise; reading it has no side
 * effects) of the functions and bridges on a rail's path: gpudirect reads
 * the ACS capability, node tuning the Device Control register.  And the
 * IOMMU group the device sits in (its `type` is copied beside it).
 */
static const char *const cfg_attrs[] = { "config", "iommu_group", NULL };

static const char *const net_attrs[] = {
	"mtu", "type", "dev_port", "dev_id", "operstate", "carrier", "address", "mode",
	"ifindex", "speed", "duplex", "uevent", "master",
	/* a bond's slaves (bond_sysfs.c): roce-lossless judges a LAG's slave PFs */
	"bonding/mode", "bonding/slaves", NULL,
};

static const char *const tools[][6] = {
	{ "ibv_devinfo", "-v" }, { "ibv_devinfo" }, { "ibstat" }, { "rdma", "link", "show" },
	{ "rdma", "dev", "show" }, { "ofed_info", "-s" }, { "pkg-config", "--modversion", "libibverbs" },
	{ "nvidia-smi", "topo", "-m" }, { "mokutil", "--sb-state" },
	/* whom the kernel trusts to sign modules: the enrolled MOKs and the enrollments still queued */
	{ "mokutil", "--list-enrolled" }, { "mokutil", "--list-new" },
	/*
	 * The kernel log: what the kernel said about Secure Boot, module
	 * signatures and refused symbols (driver-stack).  util-linux dmesg
	 * reads it without blocking; as non-root with kernel.dmesg_restrict it
	 * fails and its exit status and error are what is kept.
	 */
	{ "dmesg" },
};

static const char *const watched_procs[] = { "irqbalance", "opensm", "ibacm", "rdma-ndd", NULL };

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

static void cp_attrs(struct cap *c, const char *dir, const char *const *attrs)
{
	for (size_t i = 0; attrs[i]; i++) {
		char rel[PATH_MAX];

		catp(rel, sizeof(rel), dir, "/", attrs[i]);
		cp_entry(c, rel, 0);
	}
}

static void cp_netdev(struct cap *c, const char *ndir)
{
	char rel[PATH_MAX], t[PATH_MAX], up[PATH_MAX];

	cp_entry(c, ndir, 0);
	cp_attrs(c, ndir, net_attrs);
	/* MLNX_OFED's mlx5 ECN settings: ecn/roce_np|roce_rp/enable/N, cnp_* */
	catp(rel, sizeof(rel), ndir, "/ecn", "");
	cp_entry(c, rel, 3);
	/* device -> the virtio device or PCI function; a virtio parent holds msi_irqs/. */
	snprintf(rel, sizeof(rel), "%s/device", ndir);
	if (cp_follow(c, rel, t, sizeof(t)) == 0) {
		cp_entry(c, t, 0);
		catp(up, sizeof(up), t, "/..", "");
		if (resolve(c, up, up, sizeof(up)) == 0) {
			catp(rel, sizeof(rel), up, "/msi_irqs", "");
			cp_entry(c, rel, 2);
			cp_attrs(c, up, pci_attrs);
		}
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
		cp_attrs(c, up, pci_attrs);
		cp_attrs(c, up, cfg_attrs);
	}
}

/* The type of the IOMMU group a device's iommu_group link points at. */
static void cp_iommu_group(struct cap *c, const char *pdir)
{
	char rel[PATH_MAX], t[PATH_MAX];

	catp(rel, sizeof(rel), pdir, "/iommu_group", "");
	if (resolve(c, rel, t, sizeof(t)) == 0) {
		catp(rel, sizeof(rel), t, "/type", "");
		cp_entry(c, rel, 0);
	}
}

static void cp_pci(struct cap *c, const char *pdir)
{
	char rel[PATH_MAX], t[PATH_MAX];
	struct dirent **ents = NULL;
	char s[PATH_MAX];
	int n;

	cp_entry(c, pdir, 0);
	cp_attrs(c, pdir, pci_attrs);
	cp_attrs(c, pdir, cfg_attrs);
	cp_iommu_group(c, pdir);
	cp_bridges(c, pdir);
	snprintf(rel, sizeof(rel), "%s/driver", pdir);
	if (cp_follow(c, rel, t, sizeof(t)) == 0)
		cp_entry(c, t, 0);	/* the driver's directory itself, not its bind files */
	snprintf(rel, sizeof(rel), "%s/msi_irqs", pdir);
	cp_entry(c, rel, 2);
	snprintf(rel, sizeof(rel), "%s/infiniband_verbs", pdir);
	cp_entry(c, rel, 3);
	snprintf(rel, sizeof(rel), "%s/infiniband_mad", pdir);
	cp_entry(c, rel, 3);
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

static void cp_mlx_functions(struct cap *c)
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
			/* ConnectX functions, and NVIDIA's (GPUs) for gpudirect */
			if (!read_line(p, v, sizeof(v)) &&
			    (strtoul(v, NULL, 16) == 0x15b3 || strtoul(v, NULL, 16) == 0x10de) &&
			    cp_follow(c, rel, t, sizeof(t)) == 0)
				cp_pci(c, t);
		}
		free(ents[i]);
	}
	free(ents);
}

static void cp_proc(struct cap *c)
{
	char s[PATH_MAX];
	struct dirent **ents = NULL;
	int n;
	static const char *const irq_files[] = {
		"smp_affinity", "smp_affinity_list", "effective_affinity", "effective_affinity_list",
		"affinity_hint", "node", NULL,
	};

	cp_entry(c, "/proc/interrupts", 0);
	cp_entry(c, "/proc/sys/kernel/osrelease", 0);
	cp_entry(c, "/proc/sys/kernel/hostname", 0);
	spath(c, "/proc/irq", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (isdigit((unsigned char)ents[i]->d_name[0])) {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "/proc/irq/%s", ents[i]->d_name);
			cp_attrs(c, dir, irq_files);
		}
		free(ents[i]);
	}
	free(ents);
	/* Only the daemons the kinds ask about (irqbalance...), and pid 1. */
	spath(c, "/proc", s, sizeof(s));
	ents = NULL;
	n = scandir(s, &ents, NULL, NULL);
	for (int i = 0; i < n; i++) {
		char rel[PATH_MAX], p[PATH_MAX], comm[64];

		if (isdigit((unsigned char)ents[i]->d_name[0])) {
			snprintf(rel, sizeof(rel), "/proc/%s/comm", ents[i]->d_name);
			spath(c, rel, p, sizeof(p));
			if (!read_line(p, comm, sizeof(comm))) {
				bool want = !strcmp(ents[i]->d_name, "1");

				for (size_t k = 0; watched_procs[k]; k++)
					want |= !strcmp(comm, watched_procs[k]);
				if (want)
					cp_entry(c, rel, 0);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

static void cp_misc(struct cap *c)
{
	static const char *const libdirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", NULL,
	};
	char s[PATH_MAX], kver[256];
	struct dirent **ents = NULL;
	int n;

	for (size_t i = 0; stack_modules[i]; i++) {
		/* taint: E = loaded without a verified signature */
		static const char *const mfiles[] = { "initstate", "version", "srcversion", "refcnt", "taint", NULL };
		char dir[PATH_MAX];
		struct stat st;

		snprintf(dir, sizeof(dir), "/sys/module/%s", stack_modules[i]);
		spath(c, dir, s, sizeof(s));
		if (stat(s, &st) == 0) {
			cp_entry(c, dir, 0);	/* a dir without initstate: built in */
			cp_attrs(c, dir, mfiles);
		}
	}
	cp_entry(c, "/sys/devices/system/cpu/online", 0);
	cp_entry(c, "/sys/devices/system/cpu/possible", 0);
	cp_entry(c, "/sys/devices/system/node/online", 0);
	spath(c, "/sys/devices/system/node", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (str_starts(ents[i]->d_name, "node") && isdigit((unsigned char)ents[i]->d_name[4])) {
			char rel[PATH_MAX];

			snprintf(rel, sizeof(rel), "/sys/devices/system/node/%s/cpulist", ents[i]->d_name);
			cp_entry(c, rel, 0);
		}
		free(ents[i]);
	}
	free(ents);
	for (size_t i = 0; libdirs[i]; i++) {
		char rel[PATH_MAX];

		snprintf(rel, sizeof(rel), "%s/libibverbs.so.1", libdirs[i]);
		cp_entry(c, rel, 0);
	}
	/* /dev/infiniband: recorded in the manifest, never created. */
	cp_entry(c, "/dev/infiniband", 1);
	cp_entry(c, "/sys/class/infiniband_verbs/abi_version", 0);
	/* rdma_cm configfs: DEV/ports/N/default_roce_mode, default_roce_tos */
	cp_entry(c, "/sys/kernel/config/rdma_cm", 4);
	cp_entry(c, "/sys/class/infiniband_mad/abi_version", 0);
	/* the NVIDIA driver's version and flavour (open or proprietary kernel module) */
	cp_entry(c, "/proc/driver/nvidia/version", 0);
	/* driver-stack: Secure Boot, lockdown, signature enforcement, taint */
	cp_entry(c, "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", 0);
	/* Setup Mode, and shim's validation switch: the kernel boots with Secure Boot off under either */
	cp_entry(c, "/sys/firmware/efi/efivars/SetupMode-8be4df61-93ca-11d2-aa0d-00e098032b8c", 0);
	cp_entry(c, "/sys/firmware/efi/efivars/MokSBStateRT-605dab50-e046-4300-abb6-3dd810dd8b23", 0);
	cp_entry(c, "/sys/kernel/security/lockdown", 0);
	cp_entry(c, "/sys/module/module/parameters/sig_enforce", 0);
	cp_entry(c, "/proc/sys/kernel/tainted", 0);
	/* the kernel's keyrings (module signing keys) as root sees them */
	cp_entry(c, "/proc/keys", 0);
	/* the kernel headers DKMS builds against, and the kernels mlnx-ofed-kernel was built for */
	spath(c, "/proc/sys/kernel/osrelease", s, sizeof(s));
	if (!read_line(s, kver, sizeof(kver))) {
		char b[PATH_MAX], t[PATH_MAX];

		snprintf(b, sizeof(b), "/lib/modules/%.200s/build", kver);
		cp_entry(c, b, 0);
		if (resolve(c, b, t, sizeof(t)) == 0)
			cp_entry(c, t, 0);
	}
	cp_entry(c, "/var/lib/dkms/mlnx-ofed-kernel", 2);
	/* the NVIDIA driver's DKMS builds (its DKMS names: nvidia, nvidia-open) */
	cp_entry(c, "/var/lib/dkms/nvidia", 2);
	cp_entry(c, "/var/lib/dkms/nvidia-open", 2);
	/* node-tuning: each CPU's governor and idle states, THP, the memlock limits */
	spath(c, "/sys/devices/system/cpu", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;

		if (str_starts(e, "cpu") && isdigit((unsigned char)e[3])) {
			char rel[PATH_MAX];

			snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/%.32s/cpufreq/scaling_governor", e);
			cp_entry(c, rel, 0);
			for (int k = 0; k < 16; k++) {
				static const char *const f[] = { "name", "latency", "disable" };

				for (size_t j = 0; j < ARRAY_SIZE(f); j++) {
					snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/%.32s/cpuidle/state%d/%s",
						 e, k, f[j]);
					cp_entry(c, rel, 0);
				}
			}
		}
		free(ents[i]);
	}
	free(ents);
	cp_entry(c, "/sys/kernel/mm/transparent_hugepage/enabled", 0);
	cp_entry(c, "/etc/security/limits.conf", 0);
	cp_entry(c, "/etc/security/limits.d", 1);
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

static void run_tools(struct cap *c)
{
	struct rq_ctx ctx = { .root = c->src, .replay = true, .log_fd = -1 };
	struct dirent **ents = NULL;
	char s[PATH_MAX];
	bool gpu;
	int n;

	ctx.tool = rq_tool_replay;
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
		const char *argv[7] = { 0 };

		for (size_t k = 0; k < 6 && tools[i][k]; k++)
			argv[k] = tools[i][k];
		run_tool(c, &ctx, argv);
	}
	/*
	 * Where each loaded stack module comes from (driver-stack); on a GPU
	 * node the NVIDIA driver's and its peer-memory module's even unloaded
	 * (after a kernel update they may not exist for it, or not load).  And
	 * the symbol CRCs that decide whether a peer-memory module fits the
	 * loaded ib_core: those it was built with, those ib_core's file exports.
	 */
	gpu = gpu_present(c);
	for (size_t i = 0; stack_modules[i]; i++) {
		const char *name = stack_modules[i];
		char p[PATH_MAX], file[PATH_MAX];
		struct stat st;
		struct sb out = SB_INIT;
		const char *mi[] = { "modinfo", name, NULL };
		bool peer = !strcmp(name, "nvidia_peermem") || !strcmp(name, "nv_peer_mem");

		snprintf(p, sizeof(p), "/sys/module/%s", name);
		spath(c, p, s, sizeof(s));
		if (stat(s, &st) == 0 || (gpu && (!strcmp(name, "nvidia") || peer)))
			run_tool_keep(c, &ctx, mi, &out);
		if (out.buf && (peer || !strcmp(name, "ib_core")) && modinfo_filename(out.buf, file, sizeof(file))) {
			const char *mv[] = { "modprobe", peer ? "--dump-modversions" : "--show-exports", file, NULL };

			run_tool(c, &ctx, mv);
		}
		sb_release(&out);
	}
	/* firmware as the flash tool sees it (flashed vs running image, PSID) */
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
			if (is_bdf(b)) {
				const char *q[] = { "mstflint", "-d", b, "q", NULL };
				const char *fwm[] = { "mlxfwmanager", "--query", "-d", b, NULL };

				run_tool(c, &ctx, q);
				run_tool(c, &ctx, fwm);
			}
		}
		free(ents[i]);
	}
	free(ents);
	ents = NULL;
	/* DCB state of every Ethernet netdev (the roce-lossless kind reads it) */
	spath(c, "/sys/class/net", s, sizeof(s));
	n = scandir(s, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX + 300], v[16];
		const char *dev = ents[i]->d_name;

		snprintf(p, sizeof(p), "%s/%s/type", s, dev);
		/* ARPHRD_ETHER; lo is ARPHRD_LOOPBACK */
		if (dev[0] != '.' && !read_line(p, v, sizeof(v)) && !strcmp(v, "1")) {
			const char *app[] = { "dcb", "-j", "app", "show", "dev", dev, NULL };
			const char *pfc[] = { "dcb", "-j", "pfc", "show", "dev", dev, NULL };

			run_tool(c, &ctx, app);
			run_tool(c, &ctx, pfc);
		}
		free(ents[i]);
	}
	free(ents);
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

	cp_class(&c, "/sys/class/infiniband", cp_ibdev, 0);
	cp_mlx_functions(&c);
	cp_class(&c, "/sys/class/infiniband_verbs", NULL, 2);
	cp_class(&c, "/sys/class/infiniband_mad", NULL, 2);
	cp_class(&c, "/sys/class/net", cp_netdev, 0);
	cp_misc(&c);
	cp_proc(&c);
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
	explicit_bzero(&c.redact, sizeof(c.redact));	/* the key dies with the capture */
	return ret;
}
