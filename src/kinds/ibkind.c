/* SPDX-License-Identifier: MIT */
/* Shared pieces of the subnet-manager and fabric kinds (see ibkind.h). */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "kinds/ibkind.h"
#include "core/paths.h"
#include "core/util.h"
#include "core/proc.h"
#include "parsers/parse_ibdiag.h"

const char *ibkind_case_file(struct rq_ctx *ctx)
{
	const char *f = rq_ctx_where(ctx)->case_file;

	return f[0] ? f : ctx->c->file;
}

static int ctx_run(void *arg, const char *const *argv, int64_t timeout_ms, struct proc_result *r)
{
	return rq_tool(arg, argv, timeout_ms, r);
}

void ibkind_tools(struct rq_ctx *ctx, struct ibsm_tools *t)
{
	t->run = ctx_run;
	t->arg = ctx;
}

int ibkind_expected(struct rq_ctx *ctx, const struct ibkind_cfg *cfg,
		    struct ibnet *net)
{
	const struct rq_where_fabric *p = &rq_ctx_where(ctx)->fabric;
	char path[PATH_MAX], err[512];

	memset(net, 0, sizeof(*net));
	if (cfg->expect_topology && *cfg->expect_topology) {
		if (ibnet_resolve(cfg->expect_topology, ibkind_case_file(ctx), path, sizeof(path), err, sizeof(err))) {
			rq_result_set(ctx->main, RQ_ERROR, "expect_topology: %s", err);
			return -1;
		}
	} else if (p->planned[0]) {
		snprintf(path, sizeof(path), "%s", p->planned);
	} else if (p->topology[0]) {
		snprintf(path, sizeof(path), "%s", p->topology);
	} else {
		return 0;
	}
	if (ibnet_load(path, net, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "expected topology: %s", err);
		return -1;
	}
	rq_log(ctx, "# expected topology %s: %zu nodes, %zu links", path, net->nnodes, net->nlinks);
	return 1;
}

void ibkind_log_file(struct rq_ctx *ctx, const char *heading, const char *path, size_t max)
{
	struct sb sb = SB_INIT;
	const char *p;

	if (read_file(path, &sb, 0) < 0) {
		rq_log(ctx, "# %s: %s not readable", heading, path);
		sb_release(&sb);
		return;
	}
	p = sb.buf;
	if (sb.len > max)
		p = sb.buf + sb.len - max;
	rq_log(ctx, "# ---- %s (%s%s) ----\n%s# ---- end of %s ----", heading, path,
	       p != sb.buf ? ", tail" : "", p, heading);
	sb_release(&sb);
}

static bool readable(const char *p)
{
	return access(p, R_OK) == 0;
}

int ibkind_find_file(struct rq_ctx *ctx, const char *case_file, const char *name, char *out,
		     size_t outsz, char *err, size_t errsz)
{
	const struct rq_paths *paths = rq_paths();
	char *cand[4] = { NULL };
	size_t n = 0;
	int ret = -ENOENT;

	if (name[0] == '/') {
		cand[n++] = xstrdup(name);
	} else {
		if (case_file && strchr(case_file, '/'))
			cand[n++] = xasprintf("%.*s/%s", (int)(strrchr(case_file, '/') - case_file), case_file, name);
		/*
		 * The shipped fixtures: the checkout's root or PREFIX/share/rdmaqual,
		 * as core/paths.c found it (never a dir above the binary); the
		 * working dir only in a checkout, a developer's own tree.
		 */
		if (!paths->untrusted)
			cand[n++] = xasprintf("%s/%s", paths->datadir, name);
		if (paths->checkout)
			cand[n++] = xstrdup(name);
	}
	for (size_t i = 0; i < n; i++)
		if (ret && readable(cand[i]) && strlen(cand[i]) < outsz) {
			snprintf(out, outsz, "%s", cand[i]);
			ret = 0;
		}
	if (ret)
		snprintf(err, errsz, "%s not found (relative to the case file, the rdmaqual tree or here)", name);
	for (size_t i = 0; i < n; i++)
		free(cand[i]);
	return ret;
}

void ibkind_problem(struct sb *msg, unsigned *n, const char *fmt, ...)
{
	va_list ap;

	if (*n < 5) {
		if (*n)
			sb_adds(msg, "; ");
		va_start(ap, fmt);
		sb_vaddf(msg, fmt, ap);
		va_end(ap);
	}
	(*n)++;
}

unsigned ibkind_log_lines(const char *log, const char *needle, struct sb *out, unsigned max)
{
	struct sb text = SB_INIT;
	unsigned n = 0;

	if (!log || read_file(log, &text, 64u << 20) < 0) {
		sb_release(&text);
		return 0;
	}
	for (char *l = text.buf, *e; l && *l; l = e ? e + 1 : NULL) {
		const char *m;

		e = strchr(l, '\n');
		if (e)
			*e = '\0';
		if (!strstr(l, needle))
			continue;
		m = strstr(l, "-> ");
		m = m ? m + 3 : l;
		if (out->len && strstr(out->buf, m))
			continue;	/* opensm says it again every sweep */
		if (n++ < max)
			sb_addf(out, "%s%s", out->len ? "; " : "", m);
	}
	sb_release(&text);
	return n;
}

static void nap_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* SMInfo's ActCount, or -1 when no SM answers. */
static long long act_count(struct rq_ctx *ctx)
{
	static const char *const argv[] = { "sminfo", NULL };
	struct proc_result r;
	struct ib_sminfo si;
	char err[128];
	long long v = -1;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 10000, &r) == 0 && !r.exec_failed && !r.timed_out && r.exit_code == 0 &&
	    sminfo_parse(r.out.buf, r.out.len, &si, err, sizeof(err)) == 0 && !rq_missing_has(&si.missing, "activity"))
		v = (long long)si.activity;
	proc_result_release(&r);
	return v;
}

int64_t ibkind_settled(struct rq_ctx *ctx, const char *table, ibkind_read_fn read, void *arg, struct sb *out,
		       char *why, size_t whysz)
{
	const struct rq_where *w = rq_ctx_where(ctx);
	const struct rq_where_fabric *p = &w->fabric;
	int64_t start = now_ms(), deadline, step;
	struct sb next = SB_INIT;
	char name[96], val[32];
	long long c0;
	int64_t ret = -1;

	/*
	 * ibsim's opensm sweeps every second (target_ibsim.c): a sweep that
	 * changes something and one that does not, with room for a loaded
	 * host; a real SM sweeps every sweep_interval, 10 s by default.
	 */
	deadline = start + scaled_ms(p->sim ? 13000 : 25000);
	if (ctx->deadline_ms && deadline > ctx->deadline_ms - 2000)
		deadline = ctx->deadline_ms - 2000;
	step = p->sim ? 250 : 500;
	sb_reset(out);
	c0 = act_count(ctx);
	if (!read(ctx, arg, out, why, whysz))
		return -2;
	for (;;) {
		long long c;
		unsigned k = 0;		/* our sminfo queries since c0, one answer each */
		bool swept;

		/* no nap before the first look: a sweep may have passed while the tables were read */
		for (bool first = true;; first = false) {
			if (now_ms() + (first ? 0 : step) > deadline)
				goto timeout;
			if (!first)
				nap_ms(step);
			c = act_count(ctx);
			k++;
			/*
			 * each of our sminfo queries is answered with one SMP (counted in
			 * qp0_mads_sent): any SMP beyond those is the SM at work, a sweep
			 */
			swept = c0 < 0 || c < 0 ? now_ms() - start >= (p->sim ? 300 : 2000) : c - c0 > (long long)k;
			if (swept)
				break;
		}
		sb_reset(&next);
		if (!read(ctx, arg, &next, why, whysz)) {
			ret = -2;
			goto done;
		}
		if (next.len == out->len && !memcmp(next.buf, out->buf, out->len)) {
			ret = now_ms() - start;
			break;
		}
		rq_log(ctx, "# %s changed between two reads (the SM was still programming it); reading again", table);
		sb_reset(out);
		sb_add(out, next.buf, next.len);
		c0 = c;
	}
	/* a fact, not a figure: how busy the SM and the host were, no property to compare runs by */
	snprintf(name, sizeof(name), "settle_%s", table);
	snprintf(val, sizeof(val), "%lld ms", (long long)ret);
	rq_fact_add(ctx->main, name, val);
	rq_log(ctx, "# %s: two reads a sweep apart agreed after %lld ms", table, (long long)ret);
	goto done;
timeout:
	rq_result_set(ctx->main, RQ_ERROR, "the %s never settled: it changed between every two reads a sweep apart "
		      "for %lld ms (the SM keeps reprogramming it)", table, (long long)(now_ms() - start));
done:
	sb_release(&next);
	return ret;
}

bool ibkind_tool(struct rq_ctx *ctx, const char *const *argv, struct sb *out, char *why, size_t whysz)
{
	struct proc_result r;
	bool ok = false;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 30000, &r) == 0 && !r.exec_failed && !r.timed_out && r.exit_code == 0) {
		sb_add(out, r.out.buf, r.out.len);
		ok = true;
	} else {
		const char *e = strstr(r.err.buf ? r.err.buf : "", "iberror: ");

		if (e)
			snprintf(why, whysz, "%.*s", (int)strcspn(e + 9, "\n"), e + 9);
		else
			proc_describe(&r, argv[0], why, whysz);
	}
	proc_result_release(&r);
	return ok;
}
