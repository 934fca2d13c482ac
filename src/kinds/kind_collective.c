/* SPDX-License-Identifier: MIT */
/*
 * collective: an MPI collective across every node at once, launched once
 * from the first node (mpirun with a hostfile over ssh, or srun --mpi=pmix
 * inside a Slurm allocation), over a size sweep, every result checked.
 * The benchmark is rdmaqual's own (mpi/rdmaqual-coll.c: allreduce,
 * allgather, reduce_scatter, alltoall, bcast, barrier, and the fabric-wide
 * ring and bisection patterns), or a site's OSU micro-benchmarks or
 * nccl-tests binaries, read by their parsers.
 *
 * Figures per size: time avg/min/max over ranks, algbw, busbw (nccl-tests'
 * definitions).  Judged: #wrong = 0 (FAIL naming the size and the rank),
 * busbw at the largest size against min_busbw and min_line_rate (a
 * fraction of this node's port data rate, as the bandwidth kinds do; not
 * on rxe, whose rate is fictitious), the smallest size's time against
 * max_latency_us, and, for ring and bisection, every link against the
 * median link (min_link_fraction): the nodes of the slow links are named
 * as suspects, and in a collective that falls short the rank the others
 * waited for.  A node without MPI is a SKIP naming what is missing; a
 * launcher that cannot start its ranks is an ERROR with its own words; at
 * the deadline the launcher's whole process group is killed, and mpirun
 * takes its remote daemons and ranks with it (their ssh sessions end).
 *
 * Where the node has an RDMA port the collective must go over it
 * (transport: rdma): Open MPI's UCX pml, the transport it really used
 * read from MPI's own verbose selection lines, and every node's RDMA
 * ports' counters grown by at least what the collective moves; TCP, or
 * no way to reach a node over RDMA, is a FAIL (docs/collectives.md).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/kind.h"
#include "core/paths.h"
#include "kinds/app_nodes.h"
#include "rdma/rdmadev.h"
#include "parsers/parse_coll.h"
#include "parsers/parse_mpi_used.h"
#include "parsers/parse_nccl.h"
#include "parsers/parse_osu.h"

enum coll_op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCE_SCATTER, OP_ALLTOALL, OP_BCAST,
	       OP_BARRIER, OP_RING, OP_BISECTION };
static const char *const coll_ops[] = { "allreduce", "allgather", "reduce_scatter", "alltoall",
					"bcast", "barrier", "ring", "bisection", NULL };
enum coll_tool { TOOL_OWN, TOOL_OSU, TOOL_NCCL };
static const char *const coll_tools[] = { "rdmaqual-coll", "osu", "nccl-tests", NULL };
enum coll_launcher { L_AUTO, L_MPIRUN, L_SRUN };
static const char *const coll_launchers[] = { "auto", "mpirun", "srun", NULL };
enum coll_transport { T_AUTO, T_RDMA, T_TCP, T_ANY };
static const char *const coll_transports[] = { "auto", "rdma", "tcp", "any", NULL };
enum coll_versus { V_NONE, V_TCP };
static const char *const coll_versus[] = { "none", "tcp", NULL };

/* the binaries of the other suites, by op (NULL: the suite has none with sizes) */
static const char *const osu_bins[] = { "osu_allreduce", "osu_allgather", "osu_reduce_scatter",
					"osu_alltoall", "osu_bcast", NULL, NULL, NULL };
static const char *const nccl_bins[] = { "all_reduce_perf", "all_gather_perf",
					 "reduce_scatter_perf", "alltoall_perf", "broadcast_perf",
					 NULL, NULL, NULL };

struct coll_cfg {
	int op, tool, launcher, transport, versus;
	char *program;
	uint64_t min_size, max_size;
	long long factor, iters, warmup, ranks_per_node;
	struct rq_list mpi_args, env, args;
	double min_busbw, min_line_rate, max_latency_us, min_link_fraction, max_cpu_s_per_gb;
};

static const struct key_def coll_keys[] = {
	{ .name = "op", .type = KEY_ENUM, .choices = coll_ops, .def = "allreduce",
	  .offset = offsetof(struct coll_cfg, op),
	  .help = "the collective, or ring (every rank sends to its neighbour, all at once) or "
		  "bisection (each rank of one half with its partner in the other, all at once)" },
	{ .name = "tool", .type = KEY_ENUM, .choices = coll_tools, .def = "rdmaqual-coll",
	  .offset = offsetof(struct coll_cfg, tool),
	  .help = "the benchmark: rdmaqual's own (every result checked, per-rank times), or a "
		  "site's OSU micro-benchmarks (osu_allreduce, ...) or nccl-tests (all_reduce_perf, ...)" },
	{ .name = "program", .type = KEY_STR, .offset = offsetof(struct coll_cfg, program),
	  .help = "the benchmark's path (default: rdmaqual-coll beside rdmaqual or in PATH; "
		  "osu_OP / OP_perf in PATH)" },
	{ .name = "launcher", .type = KEY_ENUM, .choices = coll_launchers, .def = "auto",
	  .offset = offsetof(struct coll_cfg, launcher),
	  .help = "auto: srun --mpi=pmix inside a Slurm allocation (SLURM_JOB_ID set), else "
		  "mpirun with a hostfile of the target's nodes (over ssh)" },
	{ .name = "transport", .type = KEY_ENUM, .choices = coll_transports, .def = "auto",
	  .offset = offsetof(struct coll_cfg, transport),
	  .help = "what MPI must carry the collective over: rdma (Open MPI's UCX pml over the "
		  "RDMA ports, proven by their counters: a fallback to TCP FAILs), tcp (ob1 over "
		  "TCP), any (not judged); auto: rdma where this node has an ACTIVE RDMA port, "
		  "else any" },
	{ .name = "versus", .type = KEY_ENUM, .choices = coll_versus, .def = "none",
	  .offset = offsetof(struct coll_cfg, versus),
	  .help = "tcp: run the same collective again over TCP, side by side: its busbw and CPU "
		  "per GB as tcp_* figures, and the ratios (the RDMA run's over TCP's)" },
	{ .name = "max_cpu_s_per_gb", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e9,
	  .offset = offsetof(struct coll_cfg, max_cpu_s_per_gb),
	  .help = "fail when the CPU seconds per GB moved (the ranks' user and system time and the "
		  "nodes' softirq time over the bus bytes) are above this (0: not judged)" },
	{ .name = "min_size", .type = KEY_SIZE, .def = "8", .min = 0, .max = 1LL << 32,
	  .offset = offsetof(struct coll_cfg, min_size),
	  .help = "the smallest size, bytes per rank as nccl-tests counts them" },
	{ .name = "max_size", .type = KEY_SIZE, .def = "1MiB", .min = 0, .max = 1LL << 32,
	  .offset = offsetof(struct coll_cfg, max_size),
	  .help = "the largest size" },
	{ .name = "factor", .type = KEY_INT, .def = "2", .min = 2, .max = 1 << 20,
	  .offset = offsetof(struct coll_cfg, factor),
	  .help = "each size is the one before times this" },
	{ .name = "iters", .type = KEY_INT, .def = "20", .min = 1, .max = 1000000,
	  .offset = offsetof(struct coll_cfg, iters),
	  .help = "timed iterations per size" },
	{ .name = "warmup", .type = KEY_INT, .def = "5", .min = 0, .max = 1000000,
	  .offset = offsetof(struct coll_cfg, warmup),
	  .help = "untimed iterations before them" },
	{ .name = "ranks_per_node", .type = KEY_INT, .def = "0", .min = 0, .max = 4096,
	  .offset = offsetof(struct coll_cfg, ranks_per_node),
	  .help = "ranks on each node (0: the target's slots, a guest's CPUs; 1 on a host)" },
	{ .name = "mpi_args", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct coll_cfg, mpi_args),
	  .help = "more launcher arguments, e.g. [--mca, pml, ucx] (argv, no shell)" },
	{ .name = "args", .type = KEY_LIST, .elem = KEY_STR, .offset = offsetof(struct coll_cfg, args),
	  .help = "more benchmark arguments after rdmaqual's (rdmaqual-coll's self-tests "
		  "--inject-wrong RANK, --inject-delay RANK:US; OSU's -d cuda, ...)" },
	{ .name = "env", .type = KEY_LIST, .elem = KEY_STR, .offset = offsetof(struct coll_cfg, env),
	  .help = "NAME=VALUE for every rank (mpirun -x NAME; srun passes the environment)" },
	{ .name = "min_busbw", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e6,
	  .offset = offsetof(struct coll_cfg, min_busbw),
	  .help = "fail when busbw at the largest size is below this many GB/s (0: not judged)" },
	{ .name = "min_line_rate", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1,
	  .offset = offsetof(struct coll_cfg, min_line_rate),
	  .help = "fail when busbw at the largest size is below this fraction of the port's "
		  "data rate (not judged on rxe, whose rate is fictitious)" },
	{ .name = "max_latency_us", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e9,
	  .offset = offsetof(struct coll_cfg, max_latency_us),
	  .help = "fail when the smallest size's average time is above this (us; 0: not judged)" },
	{ .name = "min_link_fraction", .type = KEY_DOUBLE, .def = "0.5", .dmin = 0, .dmax = 1,
	  .offset = offsetof(struct coll_cfg, min_link_fraction),
	  .help = "ring, bisection: fail a link below this fraction of the median link at the "
		  "largest size, and name its nodes (0: not judged)" },
	KEY_END
};

static int coll_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct coll_cfg *cfg = c->cfg;

	if (cfg->min_size > cfg->max_size) {
		snprintf(err, errsz, "min_size is larger than max_size");
		return -1;
	}
	if (cfg->tool == TOOL_OSU && !osu_bins[cfg->op]) {
		snprintf(err, errsz, "op %s: the OSU micro-benchmarks print no sizes for it; use "
			 "tool rdmaqual-coll", coll_ops[cfg->op]);
		return -1;
	}
	if (cfg->tool == TOOL_NCCL && !nccl_bins[cfg->op]) {
		snprintf(err, errsz, "op %s: nccl-tests has no such test; use tool rdmaqual-coll",
			 coll_ops[cfg->op]);
		return -1;
	}
	if (cfg->versus == V_TCP && (cfg->transport == T_TCP || cfg->tool != TOOL_OWN)) {
		snprintf(err, errsz, "versus: tcp runs rdmaqual-coll again over TCP beside a run over "
			 "another transport: it needs tool rdmaqual-coll and a transport other than tcp");
		return -1;
	}
	for (size_t i = 0; i < cfg->env.n; i++)
		if (!strchr(cfg->env.str[i], '=') || cfg->env.str[i][0] == '=') {
			snprintf(err, errsz, "env entry \"%s\" is not NAME=VALUE", cfg->env.str[i]);
			return -1;
		}
	return 0;
}

/*
 * rdmaqual-coll: a checkout's build/rdmaqual-coll, an install's beside the
 * binary (PREFIX/bin), else PATH's.  Where core/paths.c found the tree,
 * never a dir above it: the program runs on every node, often as root.
 */
static void own_program(char *buf, size_t size)
{
	const struct rq_paths *paths = rq_paths();
	char dir[PATH_MAX], *p = NULL;
	ssize_t n;

	snprintf(buf, size, "rdmaqual-coll");
	if (paths->checkout) {
		p = xasprintf("%s/build/rdmaqual-coll", paths->datadir);
	} else if (!paths->untrusted && !*paths->refused &&
		   (n = readlink("/proc/self/exe", dir, sizeof(dir) - 1)) > 0) {
		dir[n] = '\0';
		*strrchr(dir, '/') = '\0';
		p = xasprintf("%s/rdmaqual-coll", dir);
	}
	if (p && !access(p, X_OK))
		snprintf(buf, size, "%s", p);
	free(p);
}

static const char *program_of(const struct coll_cfg *cfg, char *buf, size_t size)
{
	if (cfg->program)
		return cfg->program;
	if (cfg->tool == TOOL_OSU)
		return osu_bins[cfg->op];
	if (cfg->tool == TOOL_NCCL)
		return nccl_bins[cfg->op];
	own_program(buf, size);
	return buf;
}

static bool use_srun(const struct coll_cfg *cfg)
{
	const char *job = getenv("SLURM_JOB_ID");

	return cfg->launcher == L_SRUN || (cfg->launcher == L_AUTO && job && *job);
}

static bool runnable(const char *prog)
{
	return strchr(prog, '/') ? access(prog, X_OK) == 0 : cmd_exists(prog);
}

static enum rq_verdict coll_check(struct rq_ctx *ctx, const void *p, char *why, size_t whysz)
{
	const struct coll_cfg *cfg = p;
	const char *launcher = use_srun(cfg) ? "srun" : "mpirun";
	char buf[1100];
	const char *prog = program_of(cfg, buf, sizeof(buf));

	if (ctx->replay) {
		snprintf(why, whysz, "a capture runs no MPI job");
		return RQ_SKIP;
	}
	if (!cmd_exists(launcher)) {
		snprintf(why, whysz, "%s not found on this node (Debian package %s)", launcher,
			 use_srun(cfg) ? "slurm-client" : "openmpi-bin");
		return RQ_SKIP;
	}
	if (cfg->launcher == L_SRUN && !(getenv("SLURM_JOB_ID") && *getenv("SLURM_JOB_ID"))) {
		snprintf(why, whysz, "launcher srun: not inside a Slurm allocation (no SLURM_JOB_ID)");
		return RQ_SKIP;
	}
	if (!runnable(prog)) {
		snprintf(why, whysz, "%s not found on this node (%s)", prog,
			 cfg->tool == TOOL_OWN ? "install the package rdmaqual-mpi; a checkout's "
						 "make builds it where mpicc is (libopenmpi-dev)" :
			 cfg->tool == TOOL_OSU ? "the OSU micro-benchmarks are not installed" :
						 "nccl-tests is not installed");
		return RQ_SKIP;
	}
	return RQ_NONE;
}

/* One size's figures, whichever benchmark printed them. */
struct crow {
	uint64_t size;
	double avg, min, max, algbw, busbw;	/* us; GB/s */
	long long wrong;			/* -1 unknown */
	int min_rank, max_rank;			/* -1 unknown */
};

static void size_name(uint64_t b, char *buf, size_t size)
{
	if (b >= (1ULL << 30) && !(b % (1ULL << 30)))
		snprintf(buf, size, "%lluGiB", (unsigned long long)(b >> 30));
	else if (b >= (1 << 20) && !(b % (1 << 20)))
		snprintf(buf, size, "%lluMiB", (unsigned long long)(b >> 20));
	else if (b >= 1024 && !(b % 1024))
		snprintf(buf, size, "%lluKiB", (unsigned long long)(b >> 10));
	else
		snprintf(buf, size, "%lluB", (unsigned long long)b);
}

static double bus_factor(int op, double n)
{
	switch (op) {
	case OP_ALLREDUCE: return 2 * (n - 1) / n;
	case OP_ALLGATHER: case OP_REDUCE_SCATTER: case OP_ALLTOALL: return (n - 1) / n;
	default: return 1;
	}
}

/* OSU times per size: bytes per rank as nccl-tests counts them, algbw and busbw from them */
static size_t from_osu(const struct osu_report *o, int op, size_t nranks, struct crow **out)
{
	int lat = osu_col_find(o, OSU_COL_LAT), mn = osu_col_find(o, OSU_COL_LAT_MIN);
	int mx = osu_col_find(o, OSU_COL_LAT_MAX), val = osu_col_find(o, OSU_COL_VALID);
	struct crow *v = xcalloc(o->nrows + 1, sizeof(*v));

	for (size_t i = 0; lat >= 0 && i < o->nrows; i++) {
		/* osu_alltoall and osu_allgather print the block one peer gets */
		uint64_t sz = o->row[i].size * (op == OP_ALLTOALL || op == OP_ALLGATHER ? nranks : 1);
		double t = o->row[i].v[lat];

		v[i] = (struct crow){ sz, t, mn >= 0 ? o->row[i].v[mn] : t, mx >= 0 ? o->row[i].v[mx] : t,
				      t > 0 ? sz / t / 1e3 : 0, 0, val >= 0 ? !o->row[i].v[val] : -1, -1, -1 };
		v[i].busbw = v[i].algbw * bus_factor(op, (double)nranks);
	}
	*out = v;
	return lat >= 0 ? o->nrows : 0;
}

struct coll_out {
	struct crow *row;
	size_t n;
	struct coll_report own;		/* tool rdmaqual-coll */
	bool have_own;
};

/* Parse the benchmark's output; 0, or -1 with err. */
static int parse_out(const struct coll_cfg *cfg, const struct proc_result *r, size_t nranks,
		     struct coll_out *co, char *err, size_t errsz)
{
	memset(co, 0, sizeof(*co));
	if (cfg->tool == TOOL_OWN) {
		if (coll_parse(r->out.buf, r->out.len, &co->own, err, errsz) < 0)
			return -1;
		co->have_own = true;
		co->row = xcalloc(co->own.nrows + 1, sizeof(*co->row));
		for (size_t i = 0; i < co->own.nrows; i++) {
			const struct coll_row *w = &co->own.row[i];

			co->row[i] = (struct crow){ w->size, w->avg_us, w->min_us, w->max_us, w->algbw,
						    w->busbw, (long long)w->wrong, w->min_rank, w->max_rank };
		}
		co->n = co->own.nrows;
	} else if (cfg->tool == TOOL_OSU) {
		struct osu_report o;

		if (osu_parse(r->out.buf, r->out.len, &o, err, errsz) < 0)
			return -1;
		co->n = from_osu(&o, cfg->op, nranks, &co->row);
		osu_release(&o);
	} else {
		struct nccl_report nr;

		if (nccl_parse(r->out.buf, r->out.len, &nr, err, errsz) < 0)
			return -1;
		co->row = xcalloc(nr.nrows + 1, sizeof(*co->row));
		for (size_t i = 0; i < nr.nrows; i++) {
			const struct nccl_row *w = &nr.row[i];

			co->row[i] = (struct crow){ w->size, w->oop.time_us, w->oop.time_us, w->oop.time_us,
						    w->oop.algbw, w->oop.busbw, w->oop.wrong, -1, -1 };
		}
		co->n = nr.nrows;
		nccl_release(&nr);
	}
	return 0;
}

/* The launcher's argv: mpirun with the hostfile, or srun inside the allocation. */
static char **launch_argv(const struct coll_cfg *cfg, const struct app_nodes *nd, int ppn,
			  const char *prog, char *const *env)
{
	size_t nenv = 0;

	while (env[nenv])
		nenv++;
	char **a = xcalloc(64 + cfg->mpi_args.n + 2 * nenv + cfg->args.n, sizeof(*a));
	size_t n = 0;
	char sz[32];

	if (use_srun(cfg)) {
		a[n++] = xstrdup("srun");
		a[n++] = xstrdup("--mpi=pmix");
		a[n++] = xasprintf("--ntasks-per-node=%d", ppn);
		a[n++] = xstrdup("--kill-on-bad-exit=1");
	} else {
		a[n++] = xstrdup("mpirun");
		a[n++] = xstrdup("--hostfile");
		a[n++] = xstrdup(nd->hostfile);
		a[n++] = xstrdup("-np");
		a[n++] = xasprintf("%zu", nd->n * (size_t)ppn);
		a[n++] = xstrdup("--map-by");
		a[n++] = xstrdup("node");
		for (size_t i = 0; i < nenv; i++) {
			a[n++] = xstrdup("-x");
			a[n++] = xstrndup(env[i], strcspn(env[i], "="));
		}
	}
	for (size_t i = 0; i < cfg->mpi_args.n; i++)
		a[n++] = xstrdup(cfg->mpi_args.str[i]);
	a[n++] = xstrdup(prog);
	if (cfg->tool == TOOL_OWN) {
		a[n++] = xstrdup("-o");
		a[n++] = xstrdup(coll_ops[cfg->op]);
	}
	if (cfg->tool == TOOL_OSU) {
		/* -m MIN:MAX, -i, -x warm-up, -f full (min/max), -c validation */
		a[n++] = xstrdup("-f");
		a[n++] = xstrdup("-c");
		a[n++] = xstrdup("-m");
		a[n++] = xasprintf("%llu:%llu", (unsigned long long)cfg->min_size,
				   (unsigned long long)cfg->max_size);
		a[n++] = xstrdup("-i");
		a[n++] = xasprintf("%lld", cfg->iters);
		a[n++] = xstrdup("-x");
		a[n++] = xasprintf("%lld", cfg->warmup);
	} else {
		snprintf(sz, sizeof(sz), "%llu", (unsigned long long)cfg->min_size);
		a[n++] = xstrdup("-b");
		a[n++] = xstrdup(sz);
		snprintf(sz, sizeof(sz), "%llu", (unsigned long long)cfg->max_size);
		a[n++] = xstrdup("-e");
		a[n++] = xstrdup(sz);
		a[n++] = xstrdup("-f");
		a[n++] = xasprintf("%lld", cfg->factor);
		a[n++] = xstrdup("-n");
		a[n++] = xasprintf("%lld", cfg->iters);
		a[n++] = xstrdup("-w");
		a[n++] = xasprintf("%lld", cfg->warmup);
		if (cfg->tool == TOOL_NCCL) {
			a[n++] = xstrdup("-g");
			a[n++] = xstrdup("1");
			a[n++] = xstrdup("-c");
			a[n++] = xstrdup("1");
		}
	}
	for (size_t i = 0; i < cfg->args.n; i++)
		a[n++] = xstrdup(cfg->args.str[i]);
	a[n] = NULL;
	return a;
}

/*
 * The environment every rank gets: the transport's settings, then the
 * case's own env, which wins over them name by name.
 *
 * On rdma, Open MPI's UCX pml.  On rxe UCX needs more than the device: an
 * RC transport alone has no way to wire its endpoints up ("no auxiliary
 * transport ... Destination is unreachable" in MPI_Init), so ud_verbs
 * comes with rc_verbs; and UD wire-up over the IPv4-mapped RoCE v2 GID
 * aborts ("UD endpoint ... unhandled timeout error", measured on the 6.1
 * guest kernel), while the link-local GID works, so that index is given.
 * On an HCA UCX picks its own transports (rc_mlx5, dc_mlx5, ud_mlx5).
 * The selection is made verbose so that the run itself says what was
 * used: Open MPI's pml and btl lines, UCX's endpoint configurations.
 */
static char **rank_env(struct rq_ctx *ctx, const struct coll_cfg *cfg, int transport, bool rdma,
		       const struct app_dev *dv, size_t nranks)
{
	char **e = xcalloc(16 + cfg->env.n, sizeof(*e));
	size_t n = 0, mine;

	e[n++] = xstrdup("OMPI_MCA_pml_base_verbose=10");
	/* one bml line per peer and rank: n^2 lines, so only for small runs */
	if (nranks <= 64)
		e[n++] = xstrdup("OMPI_MCA_btl_base_verbose=10");
	e[n++] = xstrdup("UCX_LOG_LEVEL=info");
	if (transport == T_TCP) {
		e[n++] = xstrdup("OMPI_MCA_pml=ob1");
		e[n++] = xstrdup("OMPI_MCA_btl=tcp,self,vader");
	} else if (rdma) {
		e[n++] = xstrdup("OMPI_MCA_pml=ucx");
		e[n++] = xstrdup("OMPI_MCA_btl=^openib");
		if (!strncmp(dv->dev, "rxe", 3)) {
			int gid = rdma_link_local_gid(ctx, dv->dev, dv->port);

			e[n++] = xstrdup("UCX_TLS=rc_verbs,ud_verbs,self,sm");
			e[n++] = xasprintf("UCX_NET_DEVICES=%s:%d", dv->dev, dv->port);
			if (gid >= 0)
				e[n++] = xasprintf("UCX_IB_GID_INDEX=%d", gid);
		}
	}
	mine = n;
	for (size_t i = 0; i < cfg->env.n; i++) {
		const char *u = cfg->env.str[i];
		size_t l = strcspn(u, "=") + 1;

		for (size_t k = 0; k < mine; k++)
			if (e[k] && !strncmp(e[k], u, l)) {
				free(e[k]);
				e[k] = NULL;
			}
		e[n++] = xstrdup(u);
	}
	/* close the holes the case's own names left */
	size_t w = 0;

	for (size_t k = 0; k < n; k++)
		if (e[k])
			e[w++] = e[k];
	e[w] = NULL;
	return e;
}

static void used_facts(struct rq_result *row, const struct mpi_used *u)
{
	if (u->pml[0])
		rq_fact_add(row, "mpi_pml", u->pml);
	if (u->btl.len)
		rq_fact_add(row, "mpi_btl", u->btl.buf);
	if (u->ucx.len)
		rq_fact_add(row, "ucx_transports", u->ucx.buf);
	rq_fact_add(row, "transport_used", u->rdma ? "rdma" : u->tcp ? "tcp" : "unknown");
}


/*
 * Did the bytes go over the RDMA ports?  Every node's ports, read by
 * rdmaqual-coll before the first size and after the last, must have
 * carried at least what the largest size's timed iterations move through
 * a node: its bus bytes (the size x nccl-tests' factor, with the nodes
 * for ranks), a lower bound that any algorithm pays in each node's sends
 * and receives together.  Data counters count 4-byte words; rxe counts
 * packets only, which carry at most 4096 bytes each (the largest IB MTU),
 * so there the check is that the packets could have carried it.  With
 * more than one rank a node shared memory carries part, and the bound no
 * longer holds: not judged.
 */
static void judge_counters(struct rq_result *row, const struct coll_cfg *cfg,
			   const struct coll_report *own, size_t nnodes, int ppn,
			   const struct mpi_used *u)
{
	struct sb facts = SB_INIT;
	const char *why = NULL;

	if (!own->ncounters) {
		rq_fact_add(row, "rdma_counters", "not read (the benchmark printed no counters)");
		return;
	}
	double n = (double)nnodes, f = cfg->op == OP_ALLREDUCE ? 2 * (n - 1) / n :
		   cfg->op == OP_BCAST || cfg->op == OP_RING || cfg->op == OP_BISECTION ? 1 :
		   (n - 1) / n;
	/*
	 * The largest size that ran (max_size need not be one: 8 x 8^k stops
	 * at 32 KiB under 64 KiB) and its timed iterations as the benchmark says.
	 */
	uint64_t largest = own->nrows ? own->row[own->nrows - 1].size : 0;
	double need = (double)largest * f * (double)own->iters;

	if (cfg->op == OP_BARRIER)
		why = "not judged: a barrier moves no data";
	else if (nnodes < 2)
		why = "not judged: one node";
	else if (ppn > 1)
		why = "not judged: more than one rank a node (shared memory carries part)";
	/* per node: the sum of its ports */
	for (size_t i = 0; i < own->ncounters; i++) {
		const struct coll_counter *c = &own->counter[i];
		bool seen = false;

		for (size_t k = 0; k < i; k++)
			seen |= !strcmp(own->counter[k].host, c->host);
		if (seen)
			continue;
		double bytes = 0;
		unsigned long long pk = 0;
		bool words = false, any = false;

		for (size_t k = i; k < own->ncounters; k++) {
			const struct coll_counter *x = &own->counter[k];

			if (strcmp(x->host, c->host) || !x->port[0])
				continue;
			any = true;
			words |= x->words;
			bytes += (double)(x->xmit + x->rcv) * (x->words ? 4 : 4096);
			pk += x->words ? 0 : x->xmit + x->rcv;
		}
		if (!any)
			sb_addf(&facts, "%s%s: no RDMA port", facts.len ? "; " : "", c->host);
		else if (words)
			sb_addf(&facts, "%s%s: %.0f B", facts.len ? "; " : "", c->host, bytes);
		else
			sb_addf(&facts, "%s%s: %llu packets (at most %.0f B)", facts.len ? "; " : "",
				c->host, pk, bytes);
		if (why)
			continue;
		char used[400];

		mpi_used_words(u, used, sizeof(used));
		if (!any)
			rq_judge(row, false, "%s: %s has no RDMA port, so the collective did not go "
				 "over RDMA there (%s)", coll_ops[cfg->op], c->host, used);
		else
			rq_judge(row, bytes >= need, "%s: %s's RDMA ports carried %s%.0f B, less than "
				 "the %.0f B the largest size's %lld iterations move through a node: "
				 "the bytes went another way (%s)", coll_ops[cfg->op], c->host,
				 words ? "" : "at most ", bytes, need, cfg->iters, used);
	}
	rq_fact_add(row, "rdma_counters", facts.buf);
	char nf[64];

	snprintf(nf, sizeof(nf), "%.0f B a node", need);
	rq_fact_add(row, "rdma_bytes_needed", why ? why : nf);
	sb_release(&facts);
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/*
 * The lines the transport's verbosity adds (Open MPI's pml/btl selection,
 * UCX's INFO): what was used, never why a launch failed.
 */
static bool selection_line(const char *p, size_t l)
{
	static const char *const marks[] = { "mca: base: ", "mca: bml: ", "] select: ",
					     "check:select: ", "btl: tcp: ", "btl:tcp: ",
					     " UCX  INFO ", NULL };

	for (size_t i = 0; marks[i]; i++)
		if (memmem(p, l, marks[i], strlen(marks[i])))
			return true;
	return false;
}

/* The launcher's own words: the first lines of stderr that say what failed. */
static void launcher_words(const struct proc_result *r, char *buf, size_t size)
{
	const char *s = r->err.len ? r->err.buf : r->out.buf ? r->out.buf : "";
	struct sb w = SB_INIT;
	int lines = 0;

	for (const char *p = s; *p && lines < 3;) {
		size_t l = strcspn(p, "\n");

		/* skip Open MPI's banners of dashes, blank lines and the selection lines */
		if (l && strspn(p, "- \t") < l && !selection_line(p, l)) {
			sb_addf(&w, "%s%.*s", w.len ? " / " : "", (int)(l > 200 ? 200 : l), p);
			lines++;
		}
		p += l + (p[l] == '\n');
	}
	snprintf(buf, size, "%s", w.len ? w.buf : "no output");
	sb_release(&w);
}

static const char *host_of(const struct coll_out *co, int rank)
{
	if (!co->have_own || rank < 0 || rank >= co->own.nranks)
		return "?";
	return co->own.host[rank][0] ? co->own.host[rank] : "?";
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ring, bisection: each link against the median link; the nodes of slow ones */
static void judge_links(struct rq_ctx *ctx, const struct coll_cfg *cfg, const struct coll_out *co,
			struct rq_result *row)
{
	const struct coll_row *w = co->own.nrows ? &co->own.row[co->own.nrows - 1] : NULL;
	int n = co->own.nranks;
	char sname[32];

	if (!w || !w->pair_bw || n < 2)
		return;
	size_name(w->size, sname, sizeof(sname));
	double *sorted = xcalloc((size_t)n, sizeof(double));
	unsigned *slow_of = xcalloc((size_t)n, sizeof(unsigned));
	struct sb slow = SB_INIT, sus = SB_INIT;

	bool distinct = true;

	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (!strcmp(host_of(co, a), host_of(co, b)))
				distinct = false;
	memcpy(sorted, w->pair_bw, (size_t)n * sizeof(double));
	qsort(sorted, (size_t)n, sizeof(double), cmp_dbl);
	double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;

	rq_figure_add(row, "link_median", median, "GB/s");
	rq_figure_add(row, "link_min", sorted[0], "GB/s");
	if (w->has_aggregate)
		rq_figure_add(row, "aggregate", w->aggregate, "GB/s");
	for (int k = 0; k < n; k++) {
		char fig[64];

		/* by host where each rank has its own, else by rank */
		if (distinct)
			snprintf(fig, sizeof(fig), "link_%s_%s", host_of(co, k), host_of(co, w->pair_to[k]));
		else
			snprintf(fig, sizeof(fig), "link_r%d_r%d", k, w->pair_to[k]);
		rq_figure_add(row, fig, w->pair_bw[k], "GB/s");
		if (cfg->min_link_fraction > 0 && w->pair_bw[k] < cfg->min_link_fraction * median) {
			sb_addf(&slow, "%s%s->%s %.3f", slow.len ? ", " : "", host_of(co, k),
				host_of(co, w->pair_to[k]), w->pair_bw[k]);
			slow_of[k]++;
			slow_of[w->pair_to[k]]++;
		}
	}
	/*
	 * A ring link is one node's send and its neighbour's receive: a node
	 * in both its slow links (in and out) is the suspect; a bisection pair
	 * exchanges both ways, so a slow pair blames both ends and a node in
	 * the slow pair's both directions is named.
	 */
	for (int k = 0; k < n; k++)
		if (slow_of[k] >= 2)
			sb_addf(&sus, "%s%s", sus.len ? " " : "", host_of(co, k));
	if (slow.len) {
		rq_judge(row, false, "%s %s: links below %.0f %% of the median %.3f GB/s: %s%s%s",
			 coll_ops[cfg->op], sname, cfg->min_link_fraction * 100, median, slow.buf,
			 sus.len ? "; suspect: " : "", sus.buf ? sus.buf : "");
		if (sus.len)
			rq_fact_add(row, "suspects", sus.buf);
		rq_log(ctx, "# slow links at %s: %s", sname, slow.buf);
	}
	sb_release(&slow);
	sb_release(&sus);
	free(sorted);
	free(slow_of);
}

/*
 * Run the launcher with the ranks' environment, under the case's time less
 * a grace: at the deadline the launcher gets SIGTERM, on which mpirun
 * (srun likewise) kills its ranks, which run in process groups of their
 * own, here and through its daemons on the other nodes, and exits; SIGKILL
 * only after the grace.  Measured: with proc's 500 ms, mpirun was killed
 * mid-teardown and its local ranks lingered a second as orphans.
 */
static int launch(struct rq_ctx *ctx, char **argv, char **env, struct proc_result *r)
{
	const char *const *saved_env = ctx->tool_env;
	int64_t left = rq_ctx_left_ms(ctx), grace = left / 4 < 5000 ? left / 4 : 5000;
	int ret;

	ctx->tool_env = (const char *const *)env;
	ctx->tool_term_grace_ms = grace;
	ret = rq_tool(ctx, (const char *const *)argv, (int64_t)((left - grace) / rq_timeout_mul), r);
	ctx->tool_term_grace_ms = 0;
	ctx->tool_env = saved_env;
	return ret;
}

/*
 * The CPU the collective cost per GB it moved.  rdmaqual-coll gives each
 * rank's user and system time and each node's busy and softirq time over
 * the sweep (warm-up and check included); the bytes are the bus bytes of
 * every operation it ran, every rank's (size x nccl-tests' factor x
 * (warm-up + iterations + the check)).  cpu_s_per_GB is the ranks' time
 * and the nodes' softirq over those GB: on an HCA the offload shows as a
 * small figure, on rxe it is the kernel's software transport that pays.
 * node_cpu_s_per_GB counts everything the nodes were busy with (the
 * kernel's work items too: rxe on 6.12 runs in a workqueue).
 */
static double cpu_figures(struct rq_result *row, const struct coll_cfg *cfg,
			  const struct coll_report *own, const char *prefix)
{
	double ranks = 0, sirq = 0, busy = 0, bytes = 0, n = own->nranks;
	bool have = false;
	char name[64];

	for (int k = 0; k < own->nranks; k++)
		if (!isnan(own->user_s[k])) {
			ranks += own->user_s[k] + own->sys_s[k];
			have = true;
		}
	for (size_t i = 0; i < own->nnodes; i++) {
		sirq += own->node[i].softirq_s;
		busy += own->node[i].busy_s;
	}
	for (size_t i = 0; i < own->nrows; i++)
		bytes += (double)own->row[i].size * bus_factor(cfg->op, n) * n *
			 (double)(own->warmup + own->iters + (own->check ? 1 : 0));
	if (!have || bytes <= 0)
		return NAN;
	double gb = bytes / 1e9, per = (ranks + sirq) / gb;

	snprintf(name, sizeof(name), "%sbus_GB", prefix);
	rq_figure_add(row, name, gb, "GB");
	snprintf(name, sizeof(name), "%scpu_ranks_s", prefix);
	rq_figure_add(row, name, ranks, "s");
	if (own->nnodes) {
		snprintf(name, sizeof(name), "%ssoftirq_s", prefix);
		rq_figure_add(row, name, sirq, "s");
		snprintf(name, sizeof(name), "%snode_cpu_s_per_GB", prefix);
		rq_figure_add(row, name, busy / gb, "s/GB");
	}
	snprintf(name, sizeof(name), "%scpu_s_per_GB", prefix);
	rq_figure_add(row, name, per, "s/GB");
	return per;
}

/*
 * versus: tcp.  The same benchmark again, over ob1's tcp btl, and its
 * figures beside the first run's: busbw and CPU per GB as tcp_*, and
 * the ratios.  Only the first run is judged; this one is a reference.
 */
static void run_versus(struct rq_ctx *ctx, const struct coll_cfg *cfg, struct rq_result *row,
		       const struct app_nodes *nd, int ppn, const char *prog, size_t nranks,
		       double busbw, double per)
{
	struct app_dev none = { 0 };
	char **env = rank_env(ctx, cfg, T_TCP, false, &none, nranks);
	char **argv = launch_argv(cfg, nd, ppn, prog, env);
	struct proc_result r;
	struct coll_out co = { 0 };
	struct mpi_used used = MPI_USED_INIT;
	char err[512] = "", uw[400];

	proc_result_init(&r);
	int ret = launch(ctx, argv, env, &r);

	mpi_used_scan(&used, r.out.buf, r.out.len);
	mpi_used_scan(&used, r.err.buf, r.err.len);
	mpi_used_words(&used, uw, sizeof(uw));
	rq_fact_add(row, "versus_transport_used", uw);
	if (ret || r.exec_failed || r.timed_out || r.exit_code ||
	    parse_out(cfg, &r, nranks, &co, err, sizeof(err)) < 0 || !co.n || !co.have_own) {
		char how[160];

		proc_describe(&r, argv[0], how, sizeof(how));
		rq_fact_add(row, "versus", err[0] ? err : how);
		goto out;
	}
	const struct crow *hi = &co.row[co.n - 1];
	double tper = cpu_figures(row, cfg, &co.own, "tcp_");

	rq_figure_add(row, "tcp_busbw", hi->busbw, "GB/s");
	if (hi->busbw > 0)
		rq_figure_add(row, "busbw_ratio", busbw / hi->busbw, "x");
	if (!isnan(per) && !isnan(tper) && tper > 0)
		rq_figure_add(row, "cpu_per_GB_ratio", per / tper, "x");
	rq_fact_add(row, "versus", "tcp: the same benchmark over ob1's tcp btl, not judged");
out:
	if (co.have_own)
		coll_release(&co.own);
	free(co.row);
	mpi_used_release(&used);
	proc_result_release(&r);
	strv_free(argv);
	strv_free(env);
}

static void coll_run(struct rq_ctx *ctx, const void *p)
{
	const struct coll_cfg *cfg = p;
	struct rq_result *row = ctx->main;
	struct app_nodes nd = { 0 };
	struct app_dev dv;
	struct proc_result r;
	struct coll_out co = { 0 };
	char err[512] = "", buf[1100], words[700];
	const char *prog = program_of(cfg, buf, sizeof(buf));
	char **argv = NULL, **env = NULL;
	struct mpi_used used = MPI_USED_INIT;
	bool have_dev, rdma = false;
	int ppn;

	proc_result_init(&r);
	if (app_nodes_get(ctx, &nd, err, sizeof(err)) < 0 ||
	    (!use_srun(cfg) && app_nodes_hostfile(ctx, &nd, err, sizeof(err)) < 0)) {
		rq_result_set(row, RQ_ERROR, "%s", err);
		goto out;
	}
	ppn = cfg->ranks_per_node ? (int)cfg->ranks_per_node : nd.slots;
	size_t nranks = nd.n * (size_t)ppn;

	if (use_srun(cfg)) {
		const char *nn = getenv("SLURM_NNODES");

		nranks = (size_t)(nn && atoi(nn) > 0 ? atoi(nn) : 1) * (size_t)ppn;
	}
	if (cfg->op == OP_BISECTION && nranks % 2) {
		rq_result_set(row, RQ_SKIP, "bisection needs an even number of ranks, this run "
			      "has %zu", nranks);
		goto out;
	}
	if (nranks < 2 && (cfg->op == OP_RING || cfg->op == OP_BISECTION)) {
		rq_result_set(row, RQ_SKIP, "%s needs two ranks or more, this run has %zu",
			      coll_ops[cfg->op], nranks);
		goto out;
	}
	char nr[32];

	/* srun's nodes are the allocation's, not the target's */
	const char *alloc = getenv("SLURM_JOB_NODELIST");

	rq_fact_add(row, "nodes", use_srun(cfg) && alloc && *alloc ? alloc : nd.hosts);
	snprintf(nr, sizeof(nr), "%zu", nranks);
	rq_fact_add(row, "ranks", nr);
	rq_fact_add(row, "launcher", use_srun(cfg) ? "srun --mpi=pmix" : "mpirun (hostfile, ssh)");
	rq_fact_add(row, "benchmark", prog);
	have_dev = app_dev_find(ctx, &dv) == 0;
	rdma = cfg->transport == T_RDMA || (cfg->transport == T_AUTO && have_dev);
	rq_fact_add(row, "transport", cfg->transport == T_TCP ? "tcp (asked)" :
		    rdma ? (cfg->transport == T_RDMA ? "rdma (asked)" :
			    "rdma (auto: an ACTIVE RDMA port here)") :
		    cfg->transport == T_ANY ? "any (asked)" : "any (auto: no ACTIVE RDMA port here)");
	env = rank_env(ctx, cfg, cfg->transport, rdma, &dv, nranks);
	argv = launch_argv(cfg, &nd, ppn, prog, env);
	int64_t t0 = now_ms();
	int ret = launch(ctx, argv, env, &r);

	rq_figure_add(row, "elapsed", (now_ms() - t0) / 1000.0, "s");
	launcher_words(&r, words, sizeof(words));
	if (ret || r.exec_failed) {
		rq_result_set(row, RQ_ERROR, "cannot run %s: %s", argv[0],
			      strerror(ret ? -ret : r.exec_errno));
		goto out;
	}
	mpi_used_scan(&used, r.out.buf, r.out.len);
	mpi_used_scan(&used, r.err.buf, r.err.len);
	used_facts(row, &used);
	if (rdma && r.exit_code && (mpi_used_refused(r.err.buf, r.err.len, words, sizeof(words)) ||
				    mpi_used_refused(r.out.buf, r.out.len, words, sizeof(words)))) {
		rq_result_set(row, RQ_FAIL, "MPI could not carry the %s over RDMA: %s",
			      coll_ops[cfg->op], words);
		goto out;
	}
	if (r.timed_out) {
		rq_result_set(row, RQ_ERROR, "%s did not finish within the case timeout (%.1f s): "
			      "every rank was stopped with it", argv[0], r.elapsed_ms / 1000.0);
		goto out;
	}
	if (parse_out(cfg, &r, nranks, &co, err, sizeof(err)) < 0 || !co.n) {
		char how[160];

		proc_describe(&r, argv[0], how, sizeof(how));
		rq_result_set(row, RQ_ERROR, "%s, %s: %s", how,
			      co.n || err[0] ? err : "no sizes in the output", words);
		goto out;
	}
	/* figures per size */
	for (size_t i = 0; i < co.n; i++) {
		const struct crow *w = &co.row[i];
		char sname[32], fig[64];

		size_name(w->size, sname, sizeof(sname));
		snprintf(fig, sizeof(fig), "time_%s", sname);
		rq_figure_add(row, fig, w->avg, "us");
		snprintf(fig, sizeof(fig), "time_max_%s", sname);
		rq_figure_add(row, fig, w->max, "us");
		if (cfg->op != OP_BARRIER) {
			snprintf(fig, sizeof(fig), "algbw_%s", sname);
			rq_figure_add(row, fig, w->algbw, "GB/s");
			snprintf(fig, sizeof(fig), "busbw_%s", sname);
			rq_figure_add(row, fig, w->busbw, "GB/s");
		}
		if (w->wrong > 0) {
			bool named = false;

			for (size_t k = 0; co.have_own && k < co.own.nwrong; k++) {
				const struct coll_wrong *x = &co.own.wrong[k];

				if (x->size != w->size)
					continue;
				rq_judge(row, false, "%s %s: rank %d on %s: %llu wrong element%s (first "
					 "%llu: got %lld, expected %lld)", coll_ops[cfg->op], sname,
					 x->rank, x->host, x->elements, x->elements == 1 ? "" : "s",
					 (unsigned long long)x->first, x->got, x->expected);
				named = true;
			}
			if (!named)
				rq_judge(row, false, "%s %s: %lld wrong", coll_ops[cfg->op], sname, w->wrong);
		}
	}
	const struct crow *lo = &co.row[0], *hi = &co.row[co.n - 1];
	char hname[32], lname[32];

	size_name(hi->size, hname, sizeof(hname));
	size_name(lo->size, lname, sizeof(lname));
	rq_figure_add(row, "busbw", hi->busbw, "GB/s");
	rq_figure_add(row, "latency", lo->avg, "us");
	if (cfg->max_latency_us > 0)
		rq_judge(row, lo->avg <= cfg->max_latency_us, "%s %s: %.2f us, above max_latency_us %.2f",
			 coll_ops[cfg->op], lname, lo->avg, cfg->max_latency_us);
	bool short_bw = false;
	char strag[256] = "";

	/*
	 * In a blocking collective the ranks that arrive early wait for the
	 * last one: the rank with the least time at the largest size, when
	 * the spread is wide, is the one the others waited for.
	 */
	if (co.have_own && hi->min_rank >= 0 && hi->min > 0 && hi->max / hi->min > 2 &&
	    cfg->op != OP_RING && cfg->op != OP_BISECTION)
		snprintf(strag, sizeof(strag), "; straggler: rank %d on %s (%.2f us against up to "
			 "%.2f us: the others waited for it)", hi->min_rank, host_of(&co, hi->min_rank),
			 hi->min, hi->max);
	if (cfg->min_busbw > 0 && cfg->op != OP_BARRIER)
		short_bw |= !rq_judge(row, hi->busbw >= cfg->min_busbw, "%s %s: busbw %.3f GB/s, below "
				      "min_busbw %.3f%s", coll_ops[cfg->op], hname, hi->busbw,
				      cfg->min_busbw, strag);
	if (cfg->min_line_rate > 0 && cfg->op != OP_BARRIER) {
		const char *no = !have_dev ? "no ACTIVE port selected here" :
				 dv.rate_gbps <= 0 ? "port rate unknown" :
				 rdma_soft_dev_name(dv.dev) ?
				 "software device (rate fictitious)" : NULL;

		if (no) {
			char *f = xasprintf("not judged: %s", no);

			rq_fact_add(row, "min_line_rate", f);
			free(f);
		} else {
			double need = cfg->min_line_rate * dv.rate_gbps / 8;

			short_bw |= !rq_judge(row, hi->busbw >= need, "%s %s: busbw %.3f GB/s, below "
					      "%.0f %% of %s/%d's %.1f Gb/s data rate (%.3f GB/s)%s",
					      coll_ops[cfg->op], hname, hi->busbw, cfg->min_line_rate * 100,
					      dv.dev, dv.port, dv.rate_gbps, need, strag);
		}
	}
	if (co.have_own && (cfg->op == OP_RING || cfg->op == OP_BISECTION))
		judge_links(ctx, cfg, &co, row);
	/* the rank the others waited for: the least time in a blocking collective */
	if (strag[0]) {
		rq_log(ctx, "#%s", strag + 1);
		rq_fact_add(row, "waited_for", host_of(&co, hi->min_rank));
		if (short_bw)
			rq_fact_add(row, "suspects", host_of(&co, hi->min_rank));
	}
	if (rdma && used.tcp && !used.rdma) {
		char uw[400];

		mpi_used_words(&used, uw, sizeof(uw));
		rq_judge(row, false, "%s went over TCP, not RDMA (%s); say transport: tcp if that is "
			 "meant", coll_ops[cfg->op], uw);
	}
	if (rdma && co.have_own)
		judge_counters(row, cfg, &co.own, nd.n, ppn, &used);
	double per = co.have_own ? cpu_figures(row, cfg, &co.own, "") : NAN;

	if (cfg->max_cpu_s_per_gb > 0 && !isnan(per))
		rq_judge(row, per <= cfg->max_cpu_s_per_gb, "%s: %.3f CPU s per GB moved, above "
			 "max_cpu_s_per_gb %.3f (%s)", coll_ops[cfg->op], per, cfg->max_cpu_s_per_gb,
			 used.rdma ? "over RDMA" : used.tcp ? "over TCP" : "transport unknown");
	else if (cfg->max_cpu_s_per_gb > 0)
		rq_fact_add(row, "max_cpu_s_per_gb", "not judged: the benchmark printed no CPU times");
	if (co.have_own && !co.own.ended)
		rq_judge(row, false, "%s: the benchmark stopped after %s: %s", argv[0], hname, words);
	else if (co.have_own)
		rq_judge(row, co.own.total_wrong == 0 || row->failed, "%s: %llu wrong elements",
			 coll_ops[cfg->op], co.own.total_wrong);
	else
		rq_judge(row, true, "every size reported");
	if (r.exit_code && !row->failed && !(co.have_own && !co.own.ended)) {
		char how[160];

		proc_describe(&r, argv[0], how, sizeof(how));
		rq_result_set(row, RQ_ERROR, "%s: %s", how, words);
	}
	if (cfg->versus == V_TCP && !r.exit_code && co.have_own)
		run_versus(ctx, cfg, row, &nd, ppn, prog, nranks, hi->busbw, per);
out:
	if (co.have_own)
		coll_release(&co.own);
	free(co.row);
	proc_result_release(&r);
	strv_free(argv);
	strv_free(env);
	mpi_used_release(&used);
	app_nodes_release(&nd);
}

const struct rq_kind rq_kind_collective = {
	.name = "collective",
	.spans_nodes = true,
	.summary = "an MPI collective (allreduce, alltoall, ...) or ring/bisection bandwidth across "
		   "every node at once, each result checked",
	.doc = "Launched once from the first node for all nodes: mpirun with a hostfile of the "
	       "target's nodes over ssh (rxe-vm guests run sshd), or srun --mpi=pmix inside a "
	       "Slurm allocation.  rdmaqual's own benchmark (rdmaqual-coll) checks every element "
	       "of every rank and prints per-rank times; OSU micro-benchmarks and nccl-tests "
	       "binaries are read by their parsers.  Figures per size: time, algbw and busbw "
	       "with nccl-tests' definitions (allreduce x 2(n-1)/n; allgather, reduce_scatter, "
	       "alltoall x (n-1)/n).  Judged: no wrong element (FAIL naming the size and the "
	       "rank), busbw at the largest size (min_busbw, min_line_rate), the smallest "
	       "size's time (max_latency_us), ring and bisection links against the median "
	       "(their nodes named as suspects).",
	.keys = coll_keys,
	.cfg_size = sizeof(struct coll_cfg),
	.default_targets = "hca,rxe-vm",
	.validate = coll_validate,
	.check = coll_check,
	.run = coll_run,
};
