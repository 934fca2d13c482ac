/* SPDX-License-Identifier: MIT */
/*
 * memlock: the locked-memory limit RDMA programs start under, where they
 * start.  Every verbs registration pins its pages against RLIMIT_MEMLOCK,
 * so a rank that starts under 64 KiB or 8 MiB fails its first large
 * ibv_reg_mr ("Cannot allocate memory"; libibverbs warns "RLIMIT_MEMLOCK
 * is 65536 bytes" and goes on) while the same program passes from a login
 * shell.  limits.conf is only what PAM sets for a login (node-tuning reads
 * it); what a job gets is its launcher's limit:
 *
 *   - this process's, which every case program inherits: its soft limit
 *     binds (libibverbs does not raise it);
 *   - each launch daemon's (daemons:, by default slurmd): a job step's
 *     slurmstepd is forked from slurmd and starts with its limits, which
 *     the step keeps wherever Slurm does not propagate the submit shell's
 *     (PropagateResourceLimitsExcept=MEMLOCK, the usual advice when login
 *     nodes have a low limit).  Both of its limits are judged: the soft
 *     one is what a step inherits, the hard one the most it may raise to.
 *     Slurm's slurmd.service sets LimitMEMLOCK=infinity (both) for this;
 *     a slurmd started by hand, by an init script or in a container has
 *     the default.
 *
 * Read from /proc/PID/limits, as fs/proc/base.c prints it: a header, then
 * "Max locked memory" padded to 25 columns, the soft and the hard limit
 * (a number of bytes, or "unlimited") and the unit.  A daemon is found by
 * /proc/PID/comm.  A process with CAP_IPC_LOCK (root's) is not bound by
 * the limit at all: its row records the limit and passes.  A replay (sysroot:) reads the capture's: its own
 * process's limits are those of the shell capture ran from.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
#include "core/util.h"
#include "kinds/app_text.h"

struct ml_cfg {
	char *min;
	struct rq_list daemons;
};

static int ml_min_check(const char *value, char *err, size_t errsz)
{
	bool unl;
	uint64_t b;

	return app_memlock_parse(value, &unl, &b, err, errsz);
}

static const struct key_def ml_keys[] = {
	{ .name = "min", .type = KEY_STR, .def = "unlimited", .check = ml_min_check,
	  .offset = offsetof(struct ml_cfg, min),
	  .help = "the least locked-memory limit where programs start: a size (1GiB) or unlimited" },
	{ .name = "daemons", .type = KEY_LIST, .elem = KEY_STR, .def = "[slurmd]",
	  .offset = offsetof(struct ml_cfg, daemons),
	  .help = "launch daemons (by /proc/PID/comm) whose limits the jobs they start inherit; one not running is a SKIP row" },
	KEY_END
};

/* A limit of /proc/PID/limits: RLIM_INFINITY is "unlimited". */
struct ml_limit {
	bool unlimited;
	uint64_t bytes;
};

static bool limit_word(const char *w, struct ml_limit *l)
{
	char *end;

	l->unlimited = !strcmp(w, "unlimited");
	if (l->unlimited)
		return true;
	if (!isdigit((unsigned char)w[0]))
		return false;
	l->bytes = strtoull(w, &end, 10);
	return !*end;
}

/* The "Max locked memory" line of a limits file; 0, -ENOENT, or -1 with why. */
static int read_memlock(const char *path, struct ml_limit *soft, struct ml_limit *hard, char *why,
			size_t whysz)
{
	static const char name[] = "Max locked memory";
	struct sb text = SB_INIT;
	int rc = read_file(path, &text, 64 << 10);

	if (rc) {
		snprintf(why, whysz, "%s: %s", path, strerror(-rc));
		sb_release(&text);
		return rc == -ENOENT ? rc : -1;
	}
	rc = -1;
	for (char *line = text.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char s[32], h[32];

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, name, sizeof(name) - 1) || line[sizeof(name) - 1] != ' ')
			continue;
		if (sscanf(line + sizeof(name) - 1, "%31s %31s", s, h) == 2 && limit_word(s, soft) &&
		    limit_word(h, hard))
			rc = 0;
		else
			snprintf(why, whysz, "%s: \"%s\" does not read as soft and hard limits", path, line);
		break;
	}
	if (rc && !why[0])
		snprintf(why, whysz, "%s: no \"%s\" line", path, name);
	sb_release(&text);
	return rc;
}

static void limit_text(const struct ml_limit *l, char *buf, size_t size)
{
	if (l->unlimited)
		snprintf(buf, size, "unlimited");
	else
		fmt_size(l->bytes, buf, size);
}

static bool limit_enough(const struct ml_limit *l, bool want_unl, uint64_t want)
{
	return l->unlimited || (!want_unl && l->bytes >= want);
}

/*
 * Does the process hold CAP_IPC_LOCK (status's CapEff, bit 14)?  Then no
 * memlock limit binds it: ib_umem_get (drivers/infiniband/core/umem.c)
 * pins past the limit when capable(CAP_IPC_LOCK), as mlock does.
 */
static bool cap_ipc_lock(const char *status_path)
{
	struct sb text = SB_INIT;
	bool cap = false;
	const char *p;

	if (!read_file(status_path, &text, 64 << 10) && (p = strstr(text.buf, "\nCapEff:")))
		cap = (strtoull(p + 8, NULL, 16) >> 14) & 1;
	sb_release(&text);
	return cap;
}

/*
 * The oldest process whose comm is name (the lowest pid: the daemon, the
 * others its forks, such as slurmd's), or 0 when none runs.
 */
static long find_daemon(struct rq_ctx *ctx, const char *name)
{
	char path[PATH_MAX], comm[64];
	struct dirent *e;
	long pid = 0;
	DIR *d;

	rq_path(ctx, path, sizeof(path), "/proc");
	d = opendir(path);
	while (d && (e = readdir(d))) {
		long p;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		rq_path(ctx, path, sizeof(path), "/proc/%s/comm", e->d_name);
		p = strtol(e->d_name, NULL, 10);
		if ((!pid || p < pid) && !read_line(path, comm, sizeof(comm)) && !strcmp(comm, name))
			pid = p;
	}
	if (d)
		closedir(d);
	return pid;
}

/* One process's row: a daemon's soft and hard limits, else the soft limit (what binds). */
static void judge_limits(struct rq_ctx *ctx, struct rq_result *row, const char *who, const char *path,
			 bool daemon, bool want_unl, uint64_t want, const char *min, const char *fix)
{
	struct ml_limit soft, hard;
	char why[512] = "", st[64], ht[64];

	int rc = read_memlock(path, &soft, &hard, why, sizeof(why));

	/* a capture made before this kind existed has no limits: not a fault of the node */
	if (rc == -ENOENT && ctx->replay) {
		rq_result_set(row, RQ_SKIP, "%s: not in the capture (capture the node again)", who);
		return;
	}
	if (rc) {
		rq_result_set(row, RQ_ERROR, "%s", why);
		return;
	}
	limit_text(&soft, st, sizeof(st));
	limit_text(&hard, ht, sizeof(ht));
	rq_fact_add(row, "memlock_soft", st);
	rq_fact_add(row, "memlock_hard", ht);
	if (!soft.unlimited)
		rq_figure_add(row, "memlock_soft", (double)soft.bytes, "B");
	if (!hard.unlimited)
		rq_figure_add(row, "memlock_hard", (double)hard.bytes, "B");
	rq_log(ctx, "%s: memlock soft %s, hard %s (%s)", who, st, ht, path);
	if (daemon)
		rq_judge(row, limit_enough(&soft, want_unl, want) && limit_enough(&hard, want_unl, want),
			 "%s: memlock limit %s soft, %s hard, below %s: the jobs it starts inherit it (%s)",
			 who, st, ht, min, fix);
	else
		rq_judge(row, limit_enough(&soft, want_unl, want), "%s: memlock limit %s (soft), below %s: "
			 "verbs registrations past it fail (%s)", who, st, min, fix);
}

static void ml_run(struct rq_ctx *ctx, const void *vcfg)
{
	const struct ml_cfg *cfg = vcfg;
	char path[PATH_MAX], err[200];
	bool want_unl;
	uint64_t want;

	if (app_memlock_parse(cfg->min, &want_unl, &want, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "%s", err);
		return;
	}
	struct rq_result *self = rq_ctx_row(ctx, "self", 0);
	bool cap;

	rq_path(ctx, path, sizeof(path), "/proc/self/status");
	cap = cap_ipc_lock(path);
	/* root's programs: the limit is recorded, it does not bind */
	if (cap)
		rq_fact_add(self, "cap_ipc_lock", "yes: no memlock limit binds these programs");
	rq_path(ctx, path, sizeof(path), "/proc/self/limits");
	judge_limits(ctx, self, "this node's case programs", path, false, want_unl && !cap, cap ? 0 : want,
		     cfg->min,
		     "raise it where the agent starts: '* - memlock unlimited' in "
		     "/etc/security/limits.d for logins, LimitMEMLOCK=infinity for a service");
	for (size_t i = 0; i < cfg->daemons.n; i++) {
		const char *name = cfg->daemons.str[i];
		struct rq_result *row = rq_ctx_row(ctx, name, 0);
		long pid = find_daemon(ctx, name);
		char who[128], fix[160];

		if (!pid) {
			rq_result_set(row, RQ_SKIP, "%s is not running on this node", name);
			continue;
		}
		snprintf(fix, sizeof(fix), "LimitMEMLOCK=infinity in %s's systemd unit, or 'ulimit -l "
			 "unlimited' where it is started", name);
		snprintf(who, sizeof(who), "%s (pid %ld)", name, pid);
		rq_path(ctx, path, sizeof(path), "/proc/%ld/limits", pid);
		judge_limits(ctx, row, who, path, true, want_unl, want, cfg->min, fix);
	}
	rq_judge(ctx->main, true, "limits read");
}

/* The limits of this process and of every process (a daemon's is found by its comm). */
static const struct rq_read ml_reads[] = {
	RQ_READS_FILE("/proc/self/limits"),
	RQ_READS_FILE("/proc/self/status"),
	RQ_READS_PROCESS("slurmd"),
	RQ_READS_GLOB("/proc/[0-9]*/limits"),
	RQ_READS_END,
};

const struct rq_kind rq_kind_memlock = {
	.name = "memlock",
	.summary = "the locked-memory limit where RDMA programs start: this node's case programs and launch daemons such as slurmd",
	.doc = "Every verbs registration pins memory against RLIMIT_MEMLOCK, and what binds is the "
	       "limit of the process that starts the job, not limits.conf (which PAM applies to "
	       "logins; node-tuning reads it).  Read from /proc/PID/limits: a row `self` for the "
	       "agent's own limit, which every case program inherits (its soft limit binds; with "
	       "CAP_IPC_LOCK, as root, none does: recorded, not judged), and a "
	       "row per launch daemon (daemons:, default slurmd, found by /proc/PID/comm; the "
	       "oldest of that name), whose soft and hard limits a job's steps start with and keep "
	       "where Slurm does not propagate the submit shell's; Slurm's slurmd.service sets "
	       "LimitMEMLOCK=infinity for this.  Each is judged "
	       "against min (default unlimited); a daemon that is not running is a SKIP row.  "
	       "Read-only.",
	.keys = ml_keys,
	.cfg_size = sizeof(struct ml_cfg),
	.default_targets = "hca,rxe-vm,rxe-host,sysroot",
	.reads = ml_reads,
	.run = ml_run,
};
