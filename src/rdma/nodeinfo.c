/* SPDX-License-Identifier: MIT */
/* Node facts shared by the node kinds; see nodeinfo.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdma/nodeinfo.h"
#include "parsers/parse_devinfo.h"
#include "core/util.h"

int node_module_live(struct rq_ctx *ctx, const char *name, char *state, size_t statesz)
{
	char path[PATH_MAX], v[64];
	struct stat st;
	int ret;

	if (statesz)
		state[0] = '\0';
	rq_path(ctx, path, sizeof(path), "/sys/module/%s/initstate", name);
	ret = read_line(path, v, sizeof(v));
	if (ret == 0) {
		snprintf(state, statesz, "%s", v);
		return strcmp(v, "live") ? -EAGAIN : 0;
	}
	rq_path(ctx, path, sizeof(path), "/sys/module/%s", name);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(state, statesz, "built-in");
		return 0;
	}
	snprintf(state, statesz, "not loaded");
	return -ENOENT;
}

/* First line of a tool's stdout, or -1 when it did not run cleanly. */
static int tool_line(struct rq_ctx *ctx, const char *const *argv, char *buf, size_t size)
{
	struct proc_result r;
	int ret = -1;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 5000, &r) == 0 && !r.exec_failed && !r.timed_out &&
	    r.exit_code == 0 && r.out.len) {
		char *nl = strchr(r.out.buf, '\n');

		if (nl)
			*nl = '\0';
		snprintf(buf, size, "%s", strtrim(r.out.buf));
		ret = buf[0] ? 0 : -1;
	}
	proc_result_release(&r);
	return ret;
}

void node_version_facts(struct rq_ctx *ctx, struct rq_result *row)
{
	static const char *const libdirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	};
	static const char *const pkgcfg[] = { "pkg-config", "--modversion", "libibverbs", NULL };
	static const char *const ofed[] = { "ofed_info", "-s", NULL };
	char path[PATH_MAX], v[256], lib[256] = "", t[PATH_MAX];

	rq_path(ctx, path, sizeof(path), "/proc/sys/kernel/osrelease");
	if (!read_line(path, v, sizeof(v)))
		rq_fact_add(row, "kernel", v);
	/* libibverbs 1.14.44.0 is rdma-core 44.0: the last two numbers. */
	if (tool_line(ctx, pkgcfg, lib, sizeof(lib)) == 0) {
		rq_fact_add(row, "libibverbs", lib);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(libdirs); i++) {
			ssize_t n;

			rq_path(ctx, path, sizeof(path), "%s/libibverbs.so.1", libdirs[i]);
			n = readlink(path, t, sizeof(t) - 1);
			if (n <= 0)
				continue;
			t[n] = '\0';
			const char *b = strrchr(t, '/');

			b = b ? b + 1 : t;
			if (str_starts(b, "libibverbs.so.")) {
				snprintf(lib, sizeof(lib), "%s", b + strlen("libibverbs.so."));
				rq_fact_add(row, "libibverbs", lib);
				break;
			}
		}
	}
	if (str_starts(lib, "1.")) {
		const char *dot = strchr(lib + 2, '.');

		if (dot)
			rq_fact_add(row, "rdma_core", dot + 1);
	}
	if (tool_line(ctx, ofed, v, sizeof(v)) == 0) {
		size_t n = strlen(v);

		if (n && v[n - 1] == ':')
			v[n - 1] = '\0';
		rq_fact_add(row, "ofed", v);
	} else {
		rq_fact_add(row, "ofed", "inbox (no ofed_info)");
	}
	rq_path(ctx, path, sizeof(path), "/sys/module/mlx5_core/version");
	if (!read_line(path, v, sizeof(v)))
		rq_fact_add(row, "mlx5_core_version", v);
	rq_path(ctx, path, sizeof(path), "/sys/module/mlx5_core/srcversion");
	if (!read_line(path, v, sizeof(v)))
		rq_fact_add(row, "mlx5_core_srcversion", v);
}

int fw_cmp(const char *a, const char *b)
{
	for (;;) {
		char *ea, *eb;
		unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);

		if (x != y)
			return x < y ? -1 : 1;
		if (*ea != '.' && *eb != '.')
			return 0;
		a = *ea == '.' ? ea + 1 : ea;
		b = *eb == '.' ? eb + 1 : eb;
	}
}

long fw_major(const char *v)
{
	char *end;
	long m = strtol(v, &end, 10);

	return end == v ? -1 : m;
}

int cpuset_parse(const char *list, struct cpuset *s)
{
	const char *p = list;

	memset(s, 0, sizeof(*s));
	while (*p && isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a >= RQ_MAX_CPUS)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b >= RQ_MAX_CPUS)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++)
			cpuset_add(s, (int)c);
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -EINVAL;
	}
	return cpuset_count(s);
}

void cpuset_format(const struct cpuset *s, char *buf, size_t size)
{
	size_t n = 0;

	if (size)
		buf[0] = '\0';
	for (int c = 0; c < RQ_MAX_CPUS; c++) {
		int e = c;

		if (!cpuset_has(s, c))
			continue;
		while (e + 1 < RQ_MAX_CPUS && cpuset_has(s, e + 1))
			e++;
		if (n < size)
			n += (size_t)snprintf(buf + n, size - n, e == c ? "%s%d" : "%s%d-%d",
					      n ? "," : "", c, e);
		c = e;
	}
}

bool cpuset_has(const struct cpuset *s, int cpu)
{
	const size_t w = 8 * sizeof(unsigned long);

	return cpu >= 0 && cpu < RQ_MAX_CPUS && (s->bits[cpu / w] >> (cpu % w)) & 1;
}

void cpuset_add(struct cpuset *s, int cpu)
{
	const size_t w = 8 * sizeof(unsigned long);

	if (cpu >= 0 && cpu < RQ_MAX_CPUS)
		s->bits[cpu / w] |= 1UL << (cpu % w);
}

int cpuset_count(const struct cpuset *s)
{
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(s->bits); i++)
		n += __builtin_popcountl(s->bits[i]);
	return n;
}

bool cpuset_subset(const struct cpuset *a, const struct cpuset *b)
{
	for (size_t i = 0; i < ARRAY_SIZE(a->bits); i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

bool node_proc_running(struct rq_ctx *ctx, const char *name)
{
	char path[PATH_MAX], comm[64];
	struct dirent *e;
	DIR *d;
	bool found = false;

	rq_path(ctx, path, sizeof(path), "/proc");
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		rq_path(ctx, path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!read_line(path, comm, sizeof(comm)) && !strcmp(comm, name))
			found = true;
	}
	closedir(d);
	return found;
}

int node_devinfo(struct rq_ctx *ctx, struct devinfo *di, char *why, size_t whysz)
{
	static const char *const argv[] = { "ibv_devinfo", "-v", NULL };
	struct proc_result r;
	char err[256];
	int ret;

	memset(di, 0, sizeof(*di));
	proc_result_init(&r);
	ret = rq_tool(ctx, argv, 20000, &r);
	if (ret < 0) {
		snprintf(why, whysz, "cannot start ibv_devinfo: %s", strerror(-ret));
		ret = -EIO;
	} else if (r.exec_failed) {
		snprintf(why, whysz, "ibv_devinfo is not available%s: active_mtu unknown",
			 ctx->replay ? " in the capture" : " (ibverbs-utils)");
		ret = -ENOENT;
	} else if (r.timed_out || r.exit_code != 0) {
		char how[160];

		proc_describe(&r, "ibv_devinfo -v", how, sizeof(how));
		snprintf(why, whysz, "%s: %.120s", how, r.err.len ? strtrim(r.err.buf) : "");
		ret = -EIO;
	} else if (ibv_devinfo_parse(r.out.buf, r.out.len, di, err, sizeof(err)) < 0) {
		snprintf(why, whysz, "ibv_devinfo -v output not understood: %s", err);
		ret = -EINVAL;
	} else {
		ret = 0;
	}
	proc_result_release(&r);
	return ret;
}
