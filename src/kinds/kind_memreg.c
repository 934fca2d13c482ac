/* SPDX-License-Identifier: MIT */
/*
 * memreg: what memory registration costs on a device, and where its
 * limits are.  Every RDMA transfer needs its buffer registered
 * (ibv_reg_mr pins the pages and hands the device their addresses); an
 * application that registers per message, or a cache that misses, pays
 * this on its critical path, and a node whose memlock limit is the
 * default 8 MiB cannot register an MPI job's buffers at all.
 *
 * Per device: ibv_reg_mr and ibv_dereg_mr timed per size, `repeats`
 * times each (min and median), on buffers of 4 KiB pages (THP refused),
 * 2 MiB and 1 GiB huge pages (mmap MAP_HUGETLB, where reserved), with ODP
 * (IBV_ACCESS_ON_DEMAND, where ibv_query_device_ex reports it) and from a
 * dma-buf (ibv_reg_dmabuf_mr of a udmabuf, where the kernel has
 * /dev/udmabuf and the device takes it).  A page kind that cannot run
 * here is left out with its reason as a fact, never a failure.  Facts:
 * RLIMIT_MEMLOCK against what the sizes pin, the device's max_mr,
 * max_mr_size and page_size_cap.  A registration the memlock limit
 * stops is an ERROR naming the limit and the fix.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/udmabuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "core/kind.h"
#include "core/util.h"
#include "kinds/nodekind.h"
#include "kinds/app_text.h"
#include "kinds/memreg.h"
#include "rdma/rdmadev.h"
#include "rdma/verbs_pair.h"

const char *const memreg_page_names[] = { "4k", "2m", "1g", "odp", "dmabuf", NULL };

/* What each page kind is, for reasons and logs. */
static const char *const page_what[] = {
	"4 KiB pages", "2 MiB huge pages", "1 GiB huge pages", "ODP", "dma-buf",
};

/* ---- the pure rules (memreg.h) ---- */

size_t memreg_sizes(const int64_t *given, size_t ngiven, uint64_t max_size, uint64_t mem_cap,
		    uint64_t memlock_cap, uint64_t *out, size_t max, uint64_t *dropped)
{
	size_t n = 0;
	uint64_t first_out = 0;

	if (ngiven) {
		for (size_t i = 0; i < ngiven && n < max; i++) {
			uint64_t s = (uint64_t)given[i];

			if (s > max_size || s > mem_cap) {
				if (!first_out)
					first_out = s;
				continue;
			}
			out[n++] = s;
		}
	} else {
		uint64_t cap = max_size < memlock_cap ? max_size : memlock_cap;

		for (uint64_t s = MR_MIN_SIZE; s <= max_size && n < max; s *= 4) {
			if (s > cap || s > mem_cap) {
				first_out = s;
				break;
			}
			out[n++] = s;
			if (s > UINT64_MAX / 4)
				break;
		}
	}
	if (dropped)
		*dropped = first_out;
	return n;
}

uint64_t memreg_mem_cap(const char *meminfo)
{
	const char *p = meminfo ? strstr(meminfo, "MemAvailable:") : NULL;
	unsigned long long kb;

	if (!p || sscanf(p + strlen("MemAvailable:"), "%llu", &kb) != 1)
		return 0;
	return (uint64_t)kb * 1024 / 2;
}

uint64_t memreg_pinned(enum memreg_pages pages, uint64_t size, uint64_t page_size)
{
	if (pages == MR_ODP || pages == MR_DMABUF)
		return 0;
	if (!page_size)
		page_size = 4096;
	return (size + page_size - 1) / page_size * page_size;
}

bool memreg_memlock_stops(uint64_t need, bool unlimited, uint64_t limit, bool cap_ipc_lock)
{
	return need && !unlimited && !cap_ipc_lock && need > limit;
}

void memreg_size_text(uint64_t b, bool unlimited, char *buf, size_t size)
{
	if (unlimited)
		snprintf(buf, size, "unlimited");
	else if (b && b % (1ull << 30) == 0)
		snprintf(buf, size, "%" PRIu64 " GiB", b >> 30);
	else if (b && b % (1ull << 20) == 0)
		snprintf(buf, size, "%" PRIu64 " MiB", b >> 20);
	else if (b && b % 1024 == 0)
		snprintf(buf, size, "%" PRIu64 " KiB", b >> 10);
	else
		snprintf(buf, size, "%" PRIu64 " bytes", b);
}

void memreg_memlock_why(char *buf, size_t size, const char *dev, enum memreg_pages pages,
			uint64_t bytes, int err, uint64_t limit, bool unlimited)
{
	char lim[32], need[32];

	memreg_size_text(limit, unlimited, lim, sizeof(lim));
	memreg_size_text(bytes, false, need, sizeof(need));
	snprintf(buf, size,
		 "ibv_reg_mr of %s (%s) on %s failed (%s): RLIMIT_MEMLOCK is %s and the registration "
		 "pins %s; raise the limit: '* - memlock unlimited' in /etc/security/limits.d/*.conf "
		 "(new logins), LimitMEMLOCK=infinity in a systemd service, or ulimit -l unlimited "
		 "in the shell that starts the job",
		 need, page_what[pages], dev, strerror(err), lim, need);
}

double memreg_us_per_gib(double reg_us, uint64_t bytes)
{
	return bytes ? reg_us * (double)(1ull << 30) / (double)bytes : 0;
}

double memreg_regs_per_s(double reg_us)
{
	return reg_us > 0 ? 1e6 / reg_us : 0;
}

int memreg_judge_gib(double max_us_per_gib, double us_per_gib, const char *what,
		     char *why, size_t whysz)
{
	if (max_us_per_gib <= 0)
		return -1;
	if (us_per_gib <= max_us_per_gib)
		return 1;
	snprintf(why, whysz, "%s: %.0f us per GiB registered, above max_us_per_gib %.0f (%.2fx)",
		 what, us_per_gib, max_us_per_gib, us_per_gib / max_us_per_gib);
	return 0;
}

int memreg_judge_rate(double min_regs_per_s, double regs_per_s, const char *what,
		      char *why, size_t whysz)
{
	if (min_regs_per_s <= 0)
		return -1;
	if (regs_per_s >= min_regs_per_s)
		return 1;
	snprintf(why, whysz, "%s: %.0f registrations per second, below min_regs_per_s %.0f",
		 what, regs_per_s, min_regs_per_s);
	return 0;
}

/* ---- the kind ---- */

struct mr_cfg {
	struct rq_list sizes;
	uint64_t max_size;
	struct rq_list pages;
	long long repeats;
	char *memlock;
	double max_us_per_gib;
	double min_regs_per_s;
};

static const struct key_def mr_keys[] = {
	{ .name = "sizes", .type = KEY_LIST, .elem = KEY_SIZE,
	  .offset = offsetof(struct mr_cfg, sizes),
	  .help = "sizes registered, each at least 4KiB (default: 4KiB, 16KiB, ... by x4 up to max_size, memory and the memlock limit)" },
	{ .name = "max_size", .type = KEY_SIZE, .def = "1GiB", .min = 4096, .max = 1ll << 40,
	  .offset = offsetof(struct mr_cfg, max_size),
	  .help = "largest size registered (sizes above half of MemAvailable are left out, and said so)" },
	{ .name = "pages", .type = KEY_LIST, .elem = KEY_ENUM, .choices = memreg_page_names,
	  .def = "[4k, 2m, 1g, odp, dmabuf]",
	  .offset = offsetof(struct mr_cfg, pages),
	  .help = "what backs the buffers: 4k pages, 2m or 1g huge pages (where reserved), odp (IBV_ACCESS_ON_DEMAND, where the device has it), dmabuf (ibv_reg_dmabuf_mr of a udmabuf); one that cannot run here is left out with its reason" },
	{ .name = "repeats", .type = KEY_INT, .def = "3", .min = 1, .max = 1000,
	  .offset = offsetof(struct mr_cfg, repeats),
	  .help = "registrations per size and page kind (the figures are medians, the log has the minimum)" },
	{ .name = "memlock", .type = KEY_STR,
	  .offset = offsetof(struct mr_cfg, memlock),
	  .help = "RLIMIT_MEMLOCK for the measurement, a size or unlimited, also applied to root (CAP_IPC_LOCK dropped); default: what the agent has" },
	{ .name = "max_us_per_gib", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e12,
	  .offset = offsetof(struct mr_cfg, max_us_per_gib),
	  .help = "fail when ibv_reg_mr takes more microseconds per GiB, at each page kind's largest size (0: not judged)" },
	{ .name = "min_regs_per_s", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e12,
	  .offset = offsetof(struct mr_cfg, min_regs_per_s),
	  .help = "fail below this many registrations per second, at each page kind's smallest size (0: not judged)" },
	KEY_END
};

static int mr_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct mr_cfg *cfg = c->cfg;

	for (size_t i = 0; i < cfg->sizes.n; i++)
		if (cfg->sizes.num[i] < (int64_t)MR_MIN_SIZE || (uint64_t)cfg->sizes.num[i] > cfg->max_size) {
			snprintf(err, errsz, "sizes: %s is outside 4KiB to max_size", cfg->sizes.str[i]);
			return -1;
		}
	if (cfg->sizes.n > MR_MAX_SIZES) {
		snprintf(err, errsz, "sizes: at most %d sizes", MR_MAX_SIZES);
		return -1;
	}
	if (!cfg->pages.n) {
		snprintf(err, errsz, "pages: give at least one page kind");
		return -1;
	}
	if (cfg->memlock) {
		bool unl;
		uint64_t b;

		if (app_memlock_parse(cfg->memlock, &unl, &b, err, errsz) < 0)
			return -1;
	}
	return 0;
}

/* The memlock limit this process registers under. */
struct mr_limits {
	bool unlimited;
	uint64_t limit;		/* soft RLIMIT_MEMLOCK, bytes */
	bool cap_ipc_lock;	/* effective CAP_IPC_LOCK: the kernel ignores the limit */
	uint64_t page;		/* system page size */
};

static bool have_cap_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK);
}

/*
 * memlock: lowers the limit for this worker (forked for this case alone)
 * and drops CAP_IPC_LOCK from the effective set, so the limit binds as it
 * would for an unprivileged job: the guests' agent runs as root, and root
 * registers past any limit.
 */
static int drop_cap_ipc_lock(char *err, size_t errsz)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d)) {
		snprintf(err, errsz, "capget: %s", strerror(errno));
		return -1;
	}
	d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	if (syscall(SYS_capset, &h, d)) {
		snprintf(err, errsz, "capset without CAP_IPC_LOCK: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void read_limits(struct mr_limits *l)
{
	struct rlimit rl;
	long ps = sysconf(_SC_PAGESIZE);

	l->page = ps > 0 ? (uint64_t)ps : 4096;
	l->unlimited = true;
	l->limit = 0;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		l->unlimited = false;
		l->limit = (uint64_t)rl.rlim_cur;
	}
	l->cap_ipc_lock = have_cap_ipc_lock();
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The free bytes of a huge page size's pool; why says why there are none. */
static uint64_t hugepages_free(struct rq_ctx *ctx, unsigned kb, char *why, size_t whysz)
{
	char path[256], line[64];
	unsigned long long nr = 0, fr = 0;

	rq_path(ctx, path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%ukB", kb);
	if (access(path, F_OK)) {
		snprintf(why, whysz, kb == 2048 ?
			 "no 2 MiB huge pages on this kernel (no /sys/kernel/mm/hugepages/hugepages-2048kB)" :
			 "no 1 GiB huge pages on this host (no /sys/kernel/mm/hugepages/hugepages-1048576kB: CPU flag pdpe1gb or kernel support missing)");
		return 0;
	}
	rq_path(ctx, path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%ukB/nr_hugepages", kb);
	if (!read_line(path, line, sizeof(line)))
		nr = strtoull(line, NULL, 10);
	rq_path(ctx, path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%ukB/free_hugepages", kb);
	if (!read_line(path, line, sizeof(line)))
		fr = strtoull(line, NULL, 10);
	if (!nr)
		snprintf(why, whysz, kb == 2048 ?
			 "no 2 MiB huge pages reserved (/proc/sys/vm/nr_hugepages is 0; reserve some with sysctl vm.nr_hugepages=N)" :
			 "no 1 GiB huge pages reserved (hugepages-1048576kB/nr_hugepages is 0; hugepagesz=1G hugepages=N on the kernel command line)");
	else if (!fr)
		snprintf(why, whysz, "all %llu %s huge pages are in use", nr, kb == 2048 ? "2 MiB" : "1 GiB");
	return (uint64_t)fr * kb * 1024;
}

/* One buffer of one page kind. */
struct mr_buf {
	void *p;
	size_t len;		/* mapped */
	int memfd, dmabuf;
};

static void buf_free(struct mr_buf *b)
{
	if (b->p && b->p != MAP_FAILED)
		munmap(b->p, b->len);
	if (b->dmabuf >= 0)
		close(b->dmabuf);
	if (b->memfd >= 0)
		close(b->memfd);
	*b = (struct mr_buf){ .memfd = -1, .dmabuf = -1 };
}

/* 0, or -errno with why. */
static int buf_alloc(struct mr_buf *b, enum memreg_pages pages, uint64_t size, char *why, size_t whysz)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	uint64_t unit = pages == MR_2M ? 2ull << 20 : pages == MR_1G ? 1ull << 30 : 4096;
	int ret;

	*b = (struct mr_buf){ .memfd = -1, .dmabuf = -1 };
	b->len = (size_t)((size + unit - 1) / unit * unit);
	if (pages == MR_DMABUF) {
		int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = b->len };

		if (dev < 0) {
			ret = -errno;
			snprintf(why, whysz, "/dev/udmabuf: %s (a kernel with CONFIG_UDMABUF exports host memory as a dma-buf)",
				 strerror(errno));
			return ret;
		}
		b->memfd = memfd_create("rq-memreg", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		if (b->memfd < 0 || ftruncate(b->memfd, (off_t)b->len) ||
		    fcntl(b->memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
			ret = -errno;
			snprintf(why, whysz, "memfd for the dma-buf: %s", strerror(errno));
			close(dev);
			return ret;
		}
		uc.memfd = (uint32_t)b->memfd;
		b->dmabuf = ioctl(dev, UDMABUF_CREATE, &uc);
		ret = -errno;
		close(dev);
		if (b->dmabuf < 0) {
			snprintf(why, whysz, "UDMABUF_CREATE of %" PRIu64 " bytes: %s (its size_limit_mb?)",
				 size, strerror(-ret));
			return ret;
		}
		return 0;
	}
	if (pages == MR_2M)
		flags |= MAP_HUGETLB | (21 << MAP_HUGE_SHIFT);
	else if (pages == MR_1G)
		flags |= MAP_HUGETLB | (30 << MAP_HUGE_SHIFT);
	b->p = mmap(NULL, b->len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (b->p == MAP_FAILED) {
		ret = -errno;
		snprintf(why, whysz, "mmap of %zu bytes (%s): %s", b->len, page_what[pages], strerror(errno));
		b->p = NULL;
		return ret;
	}
	/* 4 KiB pages mean 4 KiB pages: no transparent huge page under them */
	if (pages == MR_4K || pages == MR_ODP)
		madvise(b->p, b->len, MADV_NOHUGEPAGE);
	/*
	 * An application registers memory it has touched: fault it in outside
	 * the timing.  The registered bytes are enough (a huge page faults in
	 * whole); a 4 KiB registration on a 1 GiB page writes 4 KiB, not 1 GiB.
	 */
	memset(b->p, 0x5a, (size_t)((size + 4095) / 4096 * 4096));
	return 0;
}

#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* Per device. */
struct mr_dev {
	struct rq_ctx *ctx;
	const struct mr_cfg *cfg;
	struct rq_result *row;
	const char *name;
	struct ibv_pd *pd;
	uint64_t max_mr_size;
	struct mr_limits lim;
	bool stopped;		/* ERROR or deadline: measure no more */
};

static struct ibv_mr *reg(struct mr_dev *d, enum memreg_pages pages, struct mr_buf *b, uint64_t size)
{
	if (pages == MR_DMABUF)
		return ibv_reg_dmabuf_mr(d->pd, 0, size, 0, b->dmabuf, MR_ACCESS);
	return ibv_reg_mr(d->pd, b->p, size, MR_ACCESS | (pages == MR_ODP ? IBV_ACCESS_ON_DEMAND : 0));
}

/*
 * One size: repeats x (register, deregister), timed.  1 measured; 0 the
 * page kind cannot go on (a SKIP reason in why, or the row has its
 * verdict); the row's verdict says which.
 */
static int one_size(struct mr_dev *d, enum memreg_pages pages, uint64_t size, bool smallest, bool largest,
		    char *why, size_t whysz)
{
	const struct mr_cfg *cfg = d->cfg;
	struct rq_ctx *ctx = d->ctx;
	int n = (int)cfg->repeats;
	double *rt = xcalloc((size_t)n, sizeof(*rt)), *dt = xcalloc((size_t)n, sizeof(*dt));
	struct vp_stats rs, ds;
	struct mr_buf b;
	char sz[32], fig[64], what[160], jwhy[320] = "";
	int ret, j, done = 0;

	vp_size_name(size, sz, sizeof(sz));
	if ((ret = buf_alloc(&b, pages, size, why, whysz))) {
		/* no memory or no huge page for this size: the page kind stops here */
		goto out;
	}
	for (int i = 0; i < n; i++) {
		double t0 = now_us(), t1;
		struct ibv_mr *mr = reg(d, pages, &b, size);
		int e = errno;

		t1 = now_us();
		if (!mr) {
			uint64_t need = memreg_pinned(pages, size, d->lim.page);

			if ((e == ENOMEM || e == EPERM) &&
			    memreg_memlock_stops(need, d->lim.unlimited, d->lim.limit, d->lim.cap_ipc_lock)) {
				memreg_memlock_why(why, whysz, d->name, pages, size, e, d->lim.limit, d->lim.unlimited);
				rq_log(ctx, "# %s", why);
				rq_result_set(d->row, RQ_ERROR, "%s", why);
				d->stopped = true;
			} else if ((pages == MR_ODP || pages == MR_DMABUF) &&
				   (e == EOPNOTSUPP || e == ENOSYS || e == EPROTONOSUPPORT || e == EINVAL)) {
				snprintf(why, whysz, "%s refuses %s registration (%s)", d->name, page_what[pages],
					 strerror(e));
			} else {
				rq_judge(d->row, false, "%s: ibv_%s of %s (%s) failed: %s", d->name,
					 pages == MR_DMABUF ? "reg_dmabuf_mr" : "reg_mr", sz, page_what[pages],
					 strerror(e));
				why[0] = '\0';
			}
			goto out;
		}
		rt[i] = t1 - t0;
		t0 = now_us();
		ret = ibv_dereg_mr(mr);
		dt[i] = now_us() - t0;
		if (ret) {
			rq_judge(d->row, false, "%s: ibv_dereg_mr of %s (%s) failed: %s", d->name, sz,
				 page_what[pages], strerror(ret));
			why[0] = '\0';
			goto out;
		}
	}
	vp_stats(rt, (size_t)n, &rs);
	vp_stats(dt, (size_t)n, &ds);
	{
		double gib = memreg_us_per_gib(rs.median, size), rate = memreg_regs_per_s(rs.median);

		snprintf(fig, sizeof(fig), "reg_us_%s_%s", memreg_page_names[pages], sz);
		rq_figure_add(d->row, fig, rs.median, "us");
		snprintf(fig, sizeof(fig), "dereg_us_%s_%s", memreg_page_names[pages], sz);
		rq_figure_add(d->row, fig, ds.median, "us");
		/* "us": a time, lower is better (compare reads the unit) */
		snprintf(fig, sizeof(fig), "us_per_GiB_%s_%s", memreg_page_names[pages], sz);
		rq_figure_add(d->row, fig, gib, "us");
		snprintf(fig, sizeof(fig), "regs_per_s_%s_%s", memreg_page_names[pages], sz);
		rq_figure_add(d->row, fig, rate, "reg/s");
		rq_log(ctx, "%s %s %s x %d: reg min %.1f median %.1f us, dereg min %.1f median %.1f us, "
		       "%.0f us/GiB, %.0f reg/s", d->name, memreg_page_names[pages], sz, n, rs.min, rs.median,
		       ds.min, ds.median, gib, rate);
		snprintf(what, sizeof(what), "%s %s %s", d->name, page_what[pages], sz);
		if (largest && (j = memreg_judge_gib(cfg->max_us_per_gib, gib, what, jwhy, sizeof(jwhy))) >= 0)
			rq_judge(d->row, j == 1, "%s", jwhy);
		jwhy[0] = '\0';
		if (smallest && (j = memreg_judge_rate(cfg->min_regs_per_s, rate, what, jwhy, sizeof(jwhy))) >= 0)
			rq_judge(d->row, j == 1, "%s", jwhy);
	}
	done = 1;
out:
	buf_free(&b);
	free(rt);
	free(dt);
	return done;
}

/* Can this page kind run here at all?  "" yes, else why not; *cap what it allows. */
static void page_probe(struct mr_dev *d, struct ibv_context *ic, enum memreg_pages pages, uint64_t *cap,
		       char *why, size_t whysz)
{
	struct ibv_device_attr_ex ax;

	why[0] = '\0';
	*cap = UINT64_MAX;
	switch (pages) {
	case MR_2M:
		*cap = hugepages_free(d->ctx, 2048, why, whysz);
		break;
	case MR_1G:
		*cap = hugepages_free(d->ctx, 1048576, why, whysz);
		break;
	case MR_ODP:
		memset(&ax, 0, sizeof(ax));
		if (ibv_query_device_ex(ic, NULL, &ax))
			snprintf(why, whysz, "ibv_query_device_ex(%s) failed: no ODP capabilities to read", d->name);
		else if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT))
			snprintf(why, whysz, "%s reports no ODP (odp_caps.general_caps lacks IBV_ODP_SUPPORT)",
				 d->name);
		break;
	case MR_DMABUF:
		if (access("/dev/udmabuf", F_OK))
			snprintf(why, whysz, "no /dev/udmabuf to export host memory as a dma-buf "
				 "(modprobe udmabuf, CONFIG_UDMABUF; GPU memory is the gpudirect kind's)");
		break;
	default:
		break;
	}
}

static void facts(struct mr_dev *d, const struct ibv_device_attr *a, uint64_t need)
{
	char buf[256], l[32], n[32];

	snprintf(buf, sizeof(buf), "%d", a->max_mr);
	rq_fact_add(d->row, "max_mr", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)a->max_mr_size);
	rq_fact_add(d->row, "max_mr_size", buf);
	snprintf(buf, sizeof(buf), "0x%" PRIx64, (uint64_t)a->page_size_cap);
	rq_fact_add(d->row, "page_size_cap", buf);
	memreg_size_text(d->lim.limit, d->lim.unlimited, l, sizeof(l));
	memreg_size_text(need, false, n, sizeof(n));
	rq_fact_add(d->row, "memlock_limit", l);
	rq_fact_add(d->row, "memlock_needed", n);
	rq_fact_add(d->row, "memlock", d->lim.cap_ipc_lock ? "CAP_IPC_LOCK: the limit does not bind" :
		    memreg_memlock_stops(need, d->lim.unlimited, d->lim.limit, false) ?
		    "below what the sizes pin: the larger registrations fail" : "enough for the sizes");
}

static void run_dev(struct rq_ctx *ctx, const struct mr_cfg *cfg, const struct rdma_dev *rd,
		    struct ibv_device *idev, const struct mr_limits *lim, uint64_t mem_cap)
{
	struct mr_dev d = { .ctx = ctx, .cfg = cfg, .name = rd->name, .lim = *lim };
	struct ibv_context *ic;
	struct ibv_device_attr a;
	uint64_t sizes[MR_MAX_SIZES], dropped = 0, need = 0, mlcap;
	size_t ns;
	char why[640], fact[64], sz[32];

	d.row = rq_ctx_row(ctx, rd->name, 0);
	ic = ibv_open_device(idev);
	if (!ic) {
		rq_judge(d.row, false, "ibv_open_device(%s): %s", rd->name, strerror(errno));
		return;
	}
	if (ibv_query_device(ic, &a)) {
		rq_judge(d.row, false, "ibv_query_device(%s) failed", rd->name);
		goto close;
	}
	d.pd = ibv_alloc_pd(ic);
	if (!d.pd) {
		rq_judge(d.row, false, "ibv_alloc_pd(%s): %s", rd->name, strerror(errno));
		goto close;
	}
	d.max_mr_size = a.max_mr_size;
	/* the default list stops where memlock does; named sizes go on to its ERROR */
	mlcap = lim->unlimited || lim->cap_ipc_lock ? UINT64_MAX : lim->limit / lim->page * lim->page;
	ns = memreg_sizes(cfg->sizes.num, cfg->sizes.n, cfg->max_size, mem_cap ? mem_cap : UINT64_MAX,
			  mlcap, sizes, MR_MAX_SIZES, &dropped);
	for (size_t i = 0; i < ns; i++) {
		uint64_t pin = memreg_pinned(MR_4K, sizes[i], lim->page);

		need = pin > need ? pin : need;
	}
	facts(&d, &a, need);
	if (dropped) {
		vp_size_name(dropped, sz, sizeof(sz));
		snprintf(why, sizeof(why), "from %s up: %s", sz,
			 dropped > cfg->max_size ? "above max_size" :
			 mem_cap && dropped > mem_cap ? "above half of MemAvailable" :
			 "above the memlock limit (sizes: names them, to see its ERROR)");
		rq_fact_add(d.row, "sizes_left_out", why);
		rq_log(ctx, "# %s: sizes left out %s", rd->name, why);
	}
	if (!ns) {
		rq_result_set(d.row, RQ_SKIP, "no size to register on %s (%s)", rd->name,
			      dropped ? why : "none given");
		goto dealloc;
	}
	for (size_t k = 0; k < cfg->pages.n && !d.stopped; k++) {
		enum memreg_pages pg = (enum memreg_pages)cfg->pages.num[k];
		uint64_t cap;
		int measured = 0;

		page_probe(&d, ic, pg, &cap, why, sizeof(why));
		for (size_t i = 0; !why[0] && i < ns && !d.stopped; i++) {
			if (sizes[i] > cap || sizes[i] > d.max_mr_size) {
				vp_size_name(sizes[i], sz, sizeof(sz));
				snprintf(why, sizeof(why), "from %s up: %s", sz, sizes[i] > d.max_mr_size ?
					 "above the device's max_mr_size" : "more than the free huge pages");
				break;
			}
			if (rq_ctx_left_ms(ctx) < 1000) {
				rq_judge(d.row, false, "%s: the case's deadline came after %d of %zu sizes with %s; "
					 "raise timeout:", rd->name, measured, ns, page_what[pg]);
				d.stopped = true;
				break;
			}
			if (!one_size(&d, pg, sizes[i], i == 0, i + 1 == ns || sizes[i + 1] > cap, why,
				      sizeof(why))) {
				if (!why[0])
					snprintf(why, sizeof(why), "stopped by the failure above");
				break;
			}
			measured++;
		}
		if (why[0] && !d.stopped) {
			snprintf(fact, sizeof(fact), "pages_%s", memreg_page_names[pg]);
			rq_fact_add(d.row, fact, why);
			rq_log(ctx, "# %s %s: %s%s", rd->name, page_what[pg], measured ? "partly: " : "SKIP: ", why);
		}
		if (measured)
			rq_judge(d.row, true, "registered");
	}
dealloc:
	ibv_dealloc_pd(d.pd);
close:
	ibv_close_device(ic);
}

static uint64_t read_mem_cap(struct rq_ctx *ctx)
{
	char path[256];
	struct sb sb;
	uint64_t cap = 0;

	sb_init(&sb);
	rq_path(ctx, path, sizeof(path), "/proc/meminfo");
	if (read_file(path, &sb, 1 << 16) == 0)
		cap = memreg_mem_cap(sb.buf);
	sb_release(&sb);
	return cap;
}

static void mr_run(struct rq_ctx *ctx, const void *p)
{
	const struct mr_cfg *cfg = p;
	struct rdma_devs devs = { 0 };
	struct ibv_device **list = NULL;
	struct mr_limits lim;
	char err[256];
	int *idx = NULL, n, nib = 0;
	uint64_t mem_cap;

	if (ctx->replay) {
		rq_result_set(ctx->main, RQ_SKIP, "memory registration needs a live device, not a captured tree");
		return;
	}
	if (!nodekind_scan(ctx, &devs))
		return;
	n = nodekind_select(ctx, &devs, &idx, "no RDMA device on this node");
	if (n <= 0) {
		goto out;
	}
	if (cfg->memlock) {
		if (app_memlock_apply(ctx, cfg->memlock, err, sizeof(err)) < 0 ||
		    drop_cap_ipc_lock(err, sizeof(err)) < 0) {
			rq_result_set(ctx->main, RQ_ERROR, "%s", err);
			goto out;
		}
		rq_log(ctx, "# CAP_IPC_LOCK dropped: the limit binds as for an unprivileged job");
	}
	read_limits(&lim);
	mem_cap = read_mem_cap(ctx);
	list = ibv_get_device_list(&nib);
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *rd = &devs.v[idx[i]];
		struct ibv_device *idev = NULL;

		for (int j = 0; list && j < nib; j++)
			if (!strcmp(ibv_get_device_name(list[j]), rd->name))
				idev = list[j];
		if (!idev) {
			rq_result_set(rq_ctx_row(ctx, rd->name, 0), RQ_SKIP,
				      "%s is in sysfs but libibverbs does not list it (no provider or uverbs device)",
				      rd->name);
			continue;
		}
		run_dev(ctx, cfg, rd, idev, &lim, mem_cap);
	}
	if (list)
		ibv_free_device_list(list);
out:
	free(idx);
	rdma_devs_release(&devs);
}

const struct rq_kind rq_kind_memreg = {
	.name = "memreg",
	.summary = "memory registration cost (ibv_reg_mr/ibv_dereg_mr per size and page kind) and its limits (memlock, max_mr)",
	.doc = "Times ibv_reg_mr and ibv_dereg_mr per size (4KiB to 1GiB by x4, or `sizes`), `repeats` "
	       "times each, on buffers of 4 KiB pages, 2 MiB and 1 GiB huge pages (where reserved), "
	       "with ODP (where the device reports IBV_ODP_SUPPORT) and from a dma-buf "
	       "(ibv_reg_dmabuf_mr of a udmabuf, where the kernel and device have it); a page kind "
	       "that cannot run is left out with its reason as a fact. Figures per page kind and size "
	       "(medians): reg_us, dereg_us, us_per_GiB, regs_per_s. Facts: RLIMIT_MEMLOCK against "
	       "what the sizes pin, max_mr, max_mr_size, page_size_cap. Judges `max_us_per_gib` at "
	       "each page kind's largest size and `min_regs_per_s` at its smallest; a registration "
	       "the memlock limit stops is an ERROR naming the limit and the fix (limits.d, "
	       "LimitMEMLOCK). One row per device.",
	.keys = mr_keys,
	.cfg_size = sizeof(struct mr_cfg),
	.default_targets = "hca,rxe-vm,rxe-host",
	/* us_per_GiB and regs_per_s are reg_us over the size: the same change, judged once */
	.key_figures = "reg_us_* dereg_us_*",
	.validate = mr_validate,
	.run = mr_run,
};
