/* SPDX-License-Identifier: MIT */
/*
 * link-health: do a port's error counters or its PCIe AER counters grow?
 *
 * Without a subnet manager (RoCE, or an IB node whose fabric is not ours)
 * perfquery cannot be used, but the kernel exports the same PortCounters
 * per port (drivers/infiniband/core/sysfs.c, ports/N/counters/), the
 * driver's own counters (mlx5: ports/N/hw_counters/ out_of_buffer,
 * rnr_nak_retry_err, local_ack_timeout_err, roce_adp_retrans, ...), and the
 * PCIe AER statistics of the function (drivers/pci/pcie/aer.c:
 * aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal).  Totals are
 * history (a reboot of the peer counts a downed link), so every counter is
 * read twice, around a traffic command (argv, no shell) or a quiet
 * `window`, and its growth is judged; every total and growth is a figure.
 * A replayed capture has one reading: figures only, the row SKIPs.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "core/proc.h"
#include "core/util.h"
#include "rdma/rdmadev.h"

struct lh_cfg {
	int64_t window;
	struct rq_list traffic;
	int64_t traffic_timeout;
	struct rq_list thresholds;
	bool aer;
};

static const struct key_def lh_keys[] = {
	{ .name = "window", .type = KEY_DURATION, .def = "5s", .min = 0, .max = 3600000,
	  .offset = offsetof(struct lh_cfg, window),
	  .help = "without traffic: how long to watch the counters between the two readings" },
	{ .name = "traffic", .type = KEY_LIST, .elem = KEY_STR, .offset = offsetof(struct lh_cfg, traffic),
	  .help = "a command (argv) generating traffic; the counters are read before and after it" },
	{ .name = "traffic_timeout", .type = KEY_DURATION, .def = "60s", .min = 100, .max = 3600000,
	  .offset = offsetof(struct lh_cfg, traffic_timeout),
	  .help = "deadline of the traffic command" },
	{ .name = "thresholds", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct lh_cfg, thresholds),
	  .help = "growth allowed per counter, \"symbol_error=10\", \"aer_correctable=5\"; -1 stops judging one, "
		  "any other counter of counters/ or hw_counters/ can be added" },
	{ .name = "aer", .type = KEY_BOOL, .def = "true", .offset = offsetof(struct lh_cfg, aer),
	  .help = "judge the PCI function's AER counters (aer_correctable, aer_nonfatal, aer_fatal)" },
	KEY_END
};

/*
 * Judged by default, growth 0: the link errors of counters/, the
 * transport retries of mlx5's hw_counters/ that mean packets were lost,
 * and AER.  Other counters are figures unless thresholds: names them.
 */
static const char *const judged[] = {
	"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
	"port_rcv_remote_physical_errors", "local_link_integrity_errors",
	"excessive_buffer_overrun_errors", "rnr_nak_retry_err", "local_ack_timeout_err",
	"packet_seq_err", "out_of_sequence", "out_of_buffer", "roce_adp_retrans", "aer_fatal",
	"aer_nonfatal",
	"aer_correctable", NULL,
};

struct ctr {
	char name[64];
	uint64_t v0, v1;
	bool have1;
};

struct ctrs {
	struct ctr *v;
	size_t n;
};

static void ctrs_set(struct ctrs *c, const char *name, uint64_t v, bool second)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			break;
	if (i == c->n) {
		if (second)
			return;	/* appeared in between: no first reading */
		c->v = xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
		memset(&c->v[c->n], 0, sizeof(c->v[0]));
		snprintf(c->v[c->n].name, sizeof(c->v[0].name), "%s", name);
		c->n++;
	}
	if (second) {
		c->v[i].v1 = v;
		c->v[i].have1 = true;
	} else {
		c->v[i].v0 = v;
	}
}

/* Every numeric file of DIR (counters/, hw_counters/). */
static void read_dir(const char *dir, struct ctrs *c, bool second)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		char path[PATH_MAX + 256], v[64], *end;
		unsigned long long x;

		if (ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			if (!read_line(path, v, sizeof(v))) {
				x = strtoull(v, &end, 0);
				if (end != v && !*strtrim(end))
					ctrs_set(c, ents[i]->d_name, x, second);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

/* aer_dev_*: "RxErr 0\n...TOTAL_ERR_COR 2\n": the TOTAL_ line. */
static void read_aer(const char *path, const char *name, struct ctrs *c, bool second)
{
	struct sb sb = SB_INIT;
	const char *t;

	if (read_file(path, &sb, 1 << 16) == 0 && sb.buf && (t = strstr(sb.buf, "TOTAL_ERR_"))) {
		t = strchr(t, ' ');
		if (t)
			ctrs_set(c, name, strtoull(t + 1, NULL, 10), second);
	}
	sb_release(&sb);
}

static void read_port(struct rq_ctx *ctx, const char *dev, int port, struct ctrs *c, bool second)
{
	char path[PATH_MAX];

	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/counters", dev, port);
	read_dir(path, c, second);
	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/hw_counters", dev, port);
	read_dir(path, c, second);
}

static void read_pci(struct rq_ctx *ctx, const char *dev, struct ctrs *c, bool second)
{
	static const char *const files[][2] = {
		{ "aer_dev_correctable", "aer_correctable" }, { "aer_dev_nonfatal", "aer_nonfatal" },
		{ "aer_dev_fatal", "aer_fatal" },
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/device/%s", dev, files[i][0]);
		read_aer(path, files[i][1], c, second);
	}
}

static int lh_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct lh_cfg *cfg = c->cfg;

	for (size_t i = 0; i < cfg->thresholds.n; i++) {
		const char *t = cfg->thresholds.str[i], *eq = strchr(t, '=');
		char *end;

		if (!eq || eq == t || strtoll(eq + 1, &end, 10) < -1 || end == eq + 1 || *end) {
			snprintf(err, errsz, "thresholds: \"%s\" is not COUNTER=N (symbol_error=10)", t);
			return -1;
		}
	}
	return 0;
}

/* The growth allowed for a counter: thresholds: first, 0 for the judged set, else -1. */
static long long threshold(const struct lh_cfg *cfg, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = cfg->thresholds.n; i-- > 0;) {
		const char *t = cfg->thresholds.str[i];

		if (!strncmp(t, name, nl) && t[nl] == '=')
			return strtoll(t + nl + 1, NULL, 10);
	}
	for (size_t i = 0; judged[i]; i++)
		if (!strcmp(judged[i], name))
			return 0;
	return -1;
}

static void judge(struct rq_ctx *ctx, const struct lh_cfg *cfg, struct rq_result *row, const char *what,
		  const struct ctrs *c, bool growth)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct ctr *k = &c->v[i];
		long long max = threshold(cfg, k->name);
		uint64_t g;
		char fig[80];

		if (!growth) {
			rq_figure_add(row, k->name, (double)k->v0, "");
			continue;
		}
		if (!k->have1)
			continue;
		/* a counter that went down was reset (or wrapped): no growth seen */
		g = k->v1 >= k->v0 ? k->v1 - k->v0 : 0;
		rq_figure_add(row, k->name, (double)k->v1, "");
		snprintf(fig, sizeof(fig), "%s_growth", k->name);
		rq_figure_add(row, fig, (double)g, "");
		if (max >= 0)
			rq_judge(row, g <= (uint64_t)max, "%s: %s grew by %llu %s (max %lld)", what, k->name,
				 (unsigned long long)g, cfg->traffic.n ? "during traffic" : "during the case", max);
	}
	(void)ctx;
}

struct lh_row {
	const struct rdma_dev *d;
	int port;		/* 0: the PCI function (AER) */
	struct ctrs c;
};

static void lh_run(struct rq_ctx *ctx, const void *p)
{
	const struct lh_cfg *cfg = p;
	struct rdma_devs devs;
	struct lh_row *rows = NULL;
	size_t nrows = 0;
	int *idx, n;
	bool growth = !ctx->replay;

	if (!nodekind_scan(ctx, &devs))
		return;
	n = nodekind_select(ctx, &devs, &idx, "no RDMA device selected");
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];

		for (int j = 0; j < d->nports; j++) {
			if (!rdma_port_selected(ctx, d->ports[j].num))
				continue;
			rows = xrealloc(rows, (nrows + 1) * sizeof(*rows));
			rows[nrows] = (struct lh_row){ .d = d, .port = d->ports[j].num };
			read_port(ctx, d->name, d->ports[j].num, &rows[nrows].c, false);
			nrows++;
		}
		if (cfg->aer && d->pci[0]) {
			rows = xrealloc(rows, (nrows + 1) * sizeof(*rows));
			rows[nrows] = (struct lh_row){ .d = d, .port = 0 };
			read_pci(ctx, d->name, &rows[nrows].c, false);
			nrows++;
		}
	}
	if (growth && cfg->traffic.n) {
		struct proc_result tr;
		char how[200];
		const char **argv = xcalloc(cfg->traffic.n + 1, sizeof(char *));

		for (size_t i = 0; i < cfg->traffic.n; i++)
			argv[i] = cfg->traffic.str[i];
		proc_result_init(&tr);
		rq_log(ctx, "# traffic phase");
		rq_tool(ctx, argv, cfg->traffic_timeout, &tr);
		proc_describe(&tr, argv[0], how, sizeof(how));
		rq_judge(ctx->main, !tr.exec_failed && !tr.timed_out && tr.exit_code == 0, "traffic: %s", how);
		proc_result_release(&tr);
		free(argv);
	} else if (growth && cfg->window > 0) {
		int64_t left = rq_ctx_left_ms(ctx) / 2, ms = cfg->window < left ? cfg->window : left;
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

		rq_log(ctx, "# watching the counters for %lld ms", (long long)ms);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !rq_interrupted)
			;
	}
	for (size_t i = 0; i < nrows; i++) {
		struct lh_row *r = &rows[i];
		struct rq_result *row = rq_ctx_row(ctx, r->d->name, r->port);
		char what[160];

		if (r->port)
			snprintf(what, sizeof(what), "%s port %d", r->d->name, r->port);
		else
			snprintf(what, sizeof(what), "%s (%s) PCIe AER", r->d->name, r->d->pci);
		if (growth) {
			if (r->port)
				read_port(ctx, r->d->name, r->port, &r->c, true);
			else
				read_pci(ctx, r->d->name, &r->c, true);
		}
		judge(ctx, cfg, row, what, &r->c, growth);
		if (!r->c.n)
			rq_result_set(row, RQ_SKIP, "%s: no %s to read", what,
				      r->port ? "counters/ or hw_counters/" : "aer_dev_* files (AER off, or a VF)");
		else if (!growth)
			rq_result_set(row, RQ_SKIP, "%s: a replay has one reading: %zu counters recorded as figures, "
				      "growth not judged", what, r->c.n);
		free(r->c.v);
	}
	free(rows);
	free(idx);
	rdma_devs_release(&devs);
}

/*
 * The PCI function's AER counters, and the upstream ports' (a link's
 * errors count at either end); the ports' counters are in the RDMA
 * device's directory, which capture copies whole.
 */
static const struct rq_read link_health_reads[] = {
	RQ_READS_PCI("aer_dev_correctable", RQ_PCI_ALL), RQ_READS_PCI("aer_dev_nonfatal", RQ_PCI_ALL),
	RQ_READS_PCI("aer_dev_fatal", RQ_PCI_ALL),
	RQ_READS_END,
};

const struct rq_kind rq_kind_link_health = {
	.name = "link-health",
	.summary = "growth of each port's sysfs counters/ and hw_counters/ and the function's PCIe AER counters, no SM needed",
	.doc = "Link health where perfquery cannot reach (RoCE, a fabric without our SM): every "
	       "selected port's counters/ (symbol_error, link_downed, port_rcv_errors, ...) and "
	       "hw_counters/ (out_of_buffer, rnr_nak_retry_err, roce_adp_retrans, ...) and the PCI "
	       "function's AER totals are read before and after a traffic command or a quiet "
	       "window; growth of a judged counter above its threshold (0 by default; thresholds: "
	       "[symbol_error=10]) fails the row.  Every total and growth is a figure.  A replayed "
	       "capture has one reading and SKIPs with the figures.",
	.keys = lh_keys,
	.reads = link_health_reads,
	.cfg_size = sizeof(struct lh_cfg),
	.default_targets = "hca,rxe-vm,sysroot",
	.validate = lh_validate,
	.run = lh_run,
};
