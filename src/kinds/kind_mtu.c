/* SPDX-License-Identifier: MIT */
/*
 * mtu: are the netdev MTU and the verbs active_mtu of every port
 * consistent and as expected?
 *
 * RoCE derives active_mtu from the netdev MTU, with a formula that depends
 * on the driver (rxe's rxe_set_mtu, mlx5's iboe_get_mtu): rxe takes the largest IB MTU not
 * above MTU - 80, mlx5 (and the RDMA-CM path record) the largest not above
 * MTU - 96, so a netdev at 4176..4191 gives 4096 on rxe and 2048 on mlx5.
 * A jumbo netdev that still gives less than 4096 (4180 on mlx5) is the
 * classic silent loss; `jumbo_4k` flags it.  On InfiniBand the active MTU is
 * what the SM and the neighbour allow: it must reach max_mtu (or the
 * expected value), and IPoIB's MTU must fit its mode (datagram: up to the
 * IB MTU - 4, 2044/4092 or anything smaller; connected: up to 65520).
 * active_mtu exists only in verbs: it comes from `ibv_devinfo -v` (live,
 * or replayed from a capture).
 *
 * With `set: N` the case sets every selected RoCE port's netdev MTU to N
 * (SIOCSIFMTU; the undo is journalled and fsynced first), waits for the
 * active MTU to follow, judges it, and restores the old MTU in cleanup(),
 * which runs on every exit path; a killed run is restored by
 * `rdmaqual cleanup` from the journal.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "rdma/nodeinfo.h"
#include "parsers/parse_devinfo.h"
#include "rdma/rdmadev.h"
#include "core/undo.h"
#include "core/util.h"
#include "rdma/settings.h"

struct mtu_cfg {
	struct rq_list expect_active;
	long long netdev_mtu;
	bool ipoib;
	bool jumbo_4k;
	long long set;
	int64_t settle_ms;
	bool restore;
};

static const struct key_def mtu_keys[] = {
	{ .name = "expect_active", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct mtu_cfg, expect_active),
	  .help = "expected active_mtu: N for every port, or DEV=N / DEV/PORT=N entries (default: RoCE per the driver's formula, IB max_mtu)" },
	{ .name = "netdev_mtu", .type = KEY_INT, .def = "0", .min = 0, .max = 65536,
	  .offset = offsetof(struct mtu_cfg, netdev_mtu),
	  .help = "expected netdev MTU of every selected port's netdev (0: not judged)" },
	{ .name = "ipoib", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct mtu_cfg, ipoib),
	  .help = "check IPoIB interface MTUs on InfiniBand ports (datagram: at most active_mtu - 4, e.g. 2044 or 1500 under 2048; connected: <= 65520)" },
	{ .name = "jumbo_4k", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct mtu_cfg, jumbo_4k),
	  .help = "a RoCE netdev MTU >= 4096 must give active_mtu 4096 (catches 4176-4191 on mlx5)" },
	{ .name = "set", .type = KEY_INT, .def = "0", .min = 0, .max = 65535,
	  .offset = offsetof(struct mtu_cfg, set),
	  .help = "set every selected RoCE port's netdev MTU to this, verify active_mtu, restore afterwards (needs root; not on sysroot)" },
	{ .name = "settle", .type = KEY_DURATION, .def = "5s", .min = 0, .max = 600000,
	  .offset = offsetof(struct mtu_cfg, settle_ms),
	  .help = "how long active_mtu may take to follow a set netdev MTU" },
	{ .name = "restore", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct mtu_cfg, restore),
	  .help = "restore the old netdev MTU after set (turn off only to leave a node configured)" },
	KEY_END
};

/*
 * The netdevs this case changed (ctx->state): set each once, and wait for
 * just those to settle.  What to restore is the undo journal's to say.
 */
#define MAX_CHANGES 64
struct mtu_state {
	char ifname[MAX_CHANGES][32];
	int n;
};

/* An MTU goes back to the device the record named, under whatever name it has now. */
static int mtu_undo(const char *root, const char *what, const char *old, const char *ident,
		    char *desc, size_t descsz, bool *gone)
{
	char name[256];

	if (netdev_find(root, what, ident, name, sizeof(name))) {
		snprintf(desc, descsz, "MTU of %s (%s): that device is gone", what, ident);
		*gone = true;
		return -ENODEV;
	}
	if (strcmp(name, what))
		snprintf(desc, descsz, "MTU of %s (now named %s) back to %s", what, name, old);
	else
		snprintf(desc, descsz, "MTU of %s back to %s", name, old);
	return netdev_set_mtu(root, name, atoi(old));
}

static void mtu_undo_describe(const char *what, const char *old, char *buf, size_t size)
{
	snprintf(buf, size, "%s MTU %s", what, old);
}

static const struct rq_undo_op mtu_undo_op = {
	.type = "mtu", .ident = netdev_ident, .apply = mtu_undo, .describe = mtu_undo_describe,
};

static int largest_ib_mtu(int v)
{
	static const int m[] = { 4096, 2048, 1024, 512, 256 };

	for (size_t i = 0; i < ARRAY_SIZE(m); i++)
		if (v >= m[i])
			return m[i];
	return 256;
}

/* The driver's netdev MTU -> active_mtu formula (§3.3); what names it. */
static int roce_active(const struct rdma_dev *d, int ndev_mtu, int max_mtu, const char **what)
{
	int v;

	if (!strcmp(d->driver, "rxe")) {
		*what = "rxe: largest IB MTU <= MTU - 80";
		v = largest_ib_mtu(ndev_mtu - 80);
	} else {
		*what = "mlx5/iboe: largest IB MTU <= MTU - 96";
		v = largest_ib_mtu(ndev_mtu - 96);
	}
	return max_mtu > 0 && v > max_mtu ? max_mtu : v;
}

/* The smallest netdev MTU that gives 4096 under the device's formula. */
static int mtu_for_4k(const struct rdma_dev *d)
{
	return 4096 + (!strcmp(d->driver, "rxe") ? 80 : 96);
}

/* The MTU of one expect_active entry ("4096" or "dev[/port]=4096"), via the loader's converter. */
static int entry_mtu(const char *e, int *mtu)
{
	const char *eq = strchr(e, '=');
	long long v;

	/* "4096junk" is refused here (atoi took it for 4096), so lint says so. */
	if (parse_ll(eq ? eq + 1 : e, &v) || (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096))
		return -EINVAL;
	*mtu = (int)v;
	return 0;
}

/* expect_active entry for dev/port: 0 none. */
static int expected_for(const struct mtu_cfg *cfg, const char *dev, int port)
{
	int any = 0, devwide = 0, v;

	for (size_t i = 0; i < cfg->expect_active.n; i++) {
		const char *e = cfg->expect_active.str[i], *eq = strchr(e, '=');
		char who[96];

		if (entry_mtu(e, &v))
			continue;	/* mtu_validate refused it at load */
		if (!eq) {
			any = v;
			continue;
		}
		snprintf(who, sizeof(who), "%.*s", (int)(eq - e), e);
		char pw[96];

		snprintf(pw, sizeof(pw), "%s/%d", dev, port);
		if (!strcmp(who, pw))
			return v;
		if (!strcmp(who, dev))
			devwide = v;
	}
	return devwide ? devwide : any;
}

static int mtu_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct mtu_cfg *cfg = c->cfg;

	for (size_t i = 0; i < cfg->expect_active.n; i++) {
		const char *e = cfg->expect_active.str[i];
		int v;

		if (entry_mtu(e, &v)) {
			snprintf(err, errsz, "expect_active \"%s\": an IB MTU (256, 512, 1024, 2048, 4096) expected", e);
			return -1;
		}
	}
	if (cfg->set && cfg->set < 68) {
		snprintf(err, errsz, "set: %lld is below the smallest Ethernet MTU (68)", cfg->set);
		return -1;
	}
	return 0;
}

static enum rq_verdict mtu_check(struct rq_ctx *ctx, const void *p, char *why, size_t whysz)
{
	const struct mtu_cfg *cfg = p;

	if (cfg->set && ctx->replay) {
		snprintf(why, whysz, "set: changes the node; %s is a read-only replay", ctx->target);
		return RQ_SKIP;
	}
	return RQ_NONE;
}

static void judge_ipoib(struct rq_ctx *ctx, struct rq_result *row, const struct mtu_cfg *cfg,
			const struct rdma_dev *d, const struct rdma_port *p, int active)
{
	char path[PATH_MAX], mode[32] = "datagram";
	int mtu;

	if (!p->netdev[0] || netdev_get_mtu(ctx->root, p->netdev, &mtu) < 0) {
		rq_log(ctx, "%s port %d: no IPoIB interface", d->name, p->num);
		return;
	}
	rq_figure_add(row, "ipoib_mtu", mtu, "B");
	rq_path(ctx, path, sizeof(path), "/sys/class/net/%s/mode", p->netdev);
	read_line(path, mode, sizeof(mode));
	rq_fact_add(row, "ipoib_mode", mode);
	if (!strcmp(mode, "connected")) {
		rq_judge(row, mtu <= 65520, "%s (IPoIB connected): MTU %d above 65520", p->netdev, mtu);
	} else {
		/*
		 * ipoib_main.c: a datagram interface's max_mtu is the broadcast
		 * group's MTU less the 4-byte IPoIB header (IPOIB_UD_MTU), and
		 * any MTU up to it is legal (1500 as well as 2044).  The group
		 * MTU is the SM's; the port's active_mtu bounds it.
		 */
		rq_judge(row, mtu >= 68 && mtu + 4 <= active,
			 "%s (IPoIB datagram): MTU %d above %d (active_mtu %d - 4: the largest a datagram "
			 "interface carries)", p->netdev, mtu, active - 4, active);
	}
	if (cfg->netdev_mtu)
		rq_judge(row, mtu == cfg->netdev_mtu, "%s: MTU %d, expected %lld", p->netdev, mtu,
			 cfg->netdev_mtu);
}

/* Judge one port from fresh devinfo; returns active_mtu (0 unknown). */
static int judge_port(struct rq_ctx *ctx, struct rq_result *row, const struct mtu_cfg *cfg,
		      const struct rdma_dev *d, const struct rdma_port *p, const struct devinfo_port *dp)
{
	int exp = expected_for(cfg, d->name, p->num);

	rq_figure_add(row, "active_mtu", dp->active_mtu, "B");
	rq_figure_add(row, "max_mtu", dp->max_mtu, "B");
	if (!strcmp(p->link_layer, "InfiniBand")) {
		int want = exp ? exp : dp->max_mtu;

		rq_judge(row, dp->active_mtu == want, "%s port %d: active_mtu %d, expected %d%s", d->name,
			 p->num, dp->active_mtu, want,
			 exp ? "" : " (max_mtu: the SM or the neighbour limits it)");
		if (cfg->ipoib)
			judge_ipoib(ctx, row, cfg, d, p, dp->active_mtu);
		return dp->active_mtu;
	}
	/* RoCE */
	int ndev;
	const char *what;

	if (!rq_judge(row, p->netdev[0] && netdev_get_mtu(ctx->root, p->netdev, &ndev) == 0,
		      "%s port %d: no netdev MTU to compare (netdev \"%s\")", d->name, p->num, p->netdev))
		return dp->active_mtu;
	rq_figure_add(row, "netdev_mtu", ndev, "B");
	rq_fact_add(row, "netdev", p->netdev);
	int f = roce_active(d, ndev, dp->max_mtu, &what);

	rq_judge(row, dp->active_mtu == f, "%s port %d: active_mtu %d, but netdev %s MTU %d gives %d (%s)",
		 d->name, p->num, dp->active_mtu, p->netdev, ndev, f, what);
	if (exp)
		rq_judge(row, dp->active_mtu == exp, "%s port %d: active_mtu %d, expected %d (netdev %s MTU %d)",
			 d->name, p->num, dp->active_mtu, exp, p->netdev, ndev);
	if (cfg->jumbo_4k && ndev >= 4096 && dp->max_mtu >= 4096)
		rq_judge(row, dp->active_mtu >= 4096,
			 "%s port %d: netdev %s MTU %d is jumbo but active_mtu is %d (%s needs MTU >= %d for 4096)",
			 d->name, p->num, p->netdev, ndev, dp->active_mtu,
			 !strcmp(d->driver, "rxe") ? "rxe" : "mlx5", mtu_for_4k(d));
	if (cfg->netdev_mtu)
		rq_judge(row, ndev == cfg->netdev_mtu, "%s: MTU %d, expected %lld", p->netdev, ndev,
			 cfg->netdev_mtu);
	return dp->active_mtu;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Set the netdev MTU of a RoCE port, journalled first. */
static bool do_set(struct rq_ctx *ctx, struct rq_result *row, const struct mtu_cfg *cfg,
		   const struct rdma_port *p)
{
	struct mtu_state *st = ctx->state;
	char what[64], old[32];
	int cur, ret;

	if (netdev_get_mtu(ctx->root, p->netdev, &cur) < 0)
		return rq_judge(row, false, "%s: cannot read the netdev MTU", p->netdev);
	for (int i = 0; i < st->n; i++)
		if (!strcmp(st->ifname[i], p->netdev))
			return true;	/* two ports on one netdev: set once */
	if (st->n == MAX_CHANGES) {
		rq_result_set(row, RQ_ERROR, "too many netdevs to change in one case");
		return false;
	}
	snprintf(what, sizeof(what), "%s", p->netdev);
	snprintf(old, sizeof(old), "%d", cur);
	if (cfg->restore) {
		ret = undo_push(ctx, "mtu", what, old);
		if (ret < 0) {
			rq_result_set(row, RQ_ERROR, "cannot journal the undo of %s MTU %d: %s", p->netdev,
				      cur, strerror(-ret));
			return false;
		}
	}
	snprintf(st->ifname[st->n], sizeof(st->ifname[st->n]), "%s", p->netdev);
	st->n++;
	rq_log(ctx, "set %s MTU %d -> %lld (was %d)", p->netdev, cur, cfg->set, cur);
	ret = netdev_set_mtu(ctx->root, p->netdev, (int)cfg->set);
	if (ret < 0) {
		rq_judge(row, false, "%s: setting MTU %lld failed: %s", p->netdev, cfg->set, strerror(-ret));
		return false;
	}
	return true;
}

static void mtu_run(struct rq_ctx *ctx, const void *vp)
{
	const struct mtu_cfg *cfg = vp;
	const struct mtu_state *st = ctx->state;
	struct rdma_devs devs;
	struct devinfo di = { 0 };
	char why[512];
	int *idx, n, ret;

	if (!nodekind_scan(ctx, &devs))
		return;
	n = nodekind_select(ctx, &devs, &idx, "no RDMA device selected");
	if (n <= 0) {
		goto out;
	}
	/* set: change first, then judge what the ports show afterwards. */
	if (cfg->set) {
		bool any = false;

		for (int i = 0; i < n; i++) {
			const struct rdma_dev *d = &devs.v[idx[i]];

			for (int j = 0; j < d->nports; j++) {
				const struct rdma_port *p = &d->ports[j];

				if (!rdma_port_selected(ctx, p->num) || strcmp(p->link_layer, "Ethernet") ||
				    p->state != PORT_ACTIVE || !p->netdev[0])
					continue;
				any = true;
				do_set(ctx, rq_ctx_row(ctx, d->name, p->num), cfg, p);
			}
		}
		if (!any) {
			rq_result_set(ctx->main, RQ_SKIP, "set: no ACTIVE RoCE port with a netdev selected "
				      "(an IB port's active_mtu does not follow a netdev MTU)");
			goto out;
		}
	}
	int64_t deadline = now_ms() + (cfg->set ? scaled_ms(cfg->settle_ms) : 0);
	int64_t backoff = 50;

	for (;;) {
		bool settled = true;

		ret = node_devinfo(ctx, &di, why, sizeof(why));
		if (ret == -ENOENT) {
			rq_result_set(ctx->main, RQ_SKIP, "%s", why);
			break;
		}
		if (ret < 0) {
			rq_result_set(ctx->main, RQ_ERROR, "%s", why);
			break;
		}
		/* After set: wait (bounded) until every changed port shows the formula. */
		for (int i = 0; cfg->set && i < n; i++) {
			const struct rdma_dev *d = &devs.v[idx[i]];

			for (int j = 0; j < d->nports; j++) {
				const struct devinfo_port *dp = devinfo_port(&di, d->name, d->ports[j].num);
				const char *w;

				for (int k = 0; k < st->n; k++)
					if (dp && !strcmp(st->ifname[k], d->ports[j].netdev) &&
					    dp->active_mtu != roce_active(d, (int)cfg->set, dp->max_mtu, &w))
						settled = false;
			}
		}
		if (settled || now_ms() >= deadline)
			break;
		devinfo_release(&di);
		sleep_ms(backoff);
		backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
	}
	if (ret < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];

		for (int j = 0; j < d->nports; j++) {
			const struct rdma_port *p = &d->ports[j];
			const struct devinfo_port *dp;
			struct rq_result *row;

			if (!rdma_port_selected(ctx, p->num))
				continue;
			row = rq_ctx_row(ctx, d->name, p->num);
			if (row->verdict != RQ_NONE || row->failed)
				continue;	/* set already failed or errored here */
			if (cfg->set && strcmp(p->link_layer, "Ethernet")) {
				rq_result_set(row, RQ_SKIP, "set: %s port %d is %s: its active_mtu does not follow a netdev MTU",
					      d->name, p->num, p->link_layer);
				continue;
			}
			if (p->state != PORT_ACTIVE) {
				rq_result_set(row, RQ_SKIP, "%s port %d is %s: MTU not judged", d->name, p->num,
					      p->state_str[0] ? p->state_str : "not active");
				continue;
			}
			dp = devinfo_port(&di, d->name, p->num);
			if (!dp) {
				rq_result_set(row, RQ_ERROR, "ibv_devinfo -v does not list %s port %d", d->name, p->num);
				continue;
			}
			judge_port(ctx, row, cfg, d, p, dp);
		}
	}
out:
	devinfo_release(&di);
	free(idx);
	rdma_devs_release(&devs);
}

/*
 * Restore from the journal: this case's changes, or, in the fresh worker
 * that cleans up after a killed case, the killed one's.
 */
static void mtu_cleanup(struct rq_ctx *ctx, const void *vp)
{
	const struct mtu_cfg *cfg = vp;

	if (cfg->restore)
		undo_restore(ctx, "mtu");
}

/* active_mtu from verbs, the netdev's MTU and IPoIB mode */
static const struct rq_read mtu_reads[] = {
	RQ_READS_TOOL("ibv_devinfo", "-v"),
	RQ_READS_NETDEV("mtu"), RQ_READS_NETDEV("mode"), RQ_READS_NETDEV("dev_id"),
	RQ_READS_END,
};

const struct rq_kind rq_kind_mtu = {
	.name = "mtu",
	.summary = "netdev MTU and verbs active_mtu consistent per driver formula and as expected, per port; optional set and restore",
	.doc = "RoCE derives active_mtu from the netdev MTU with a driver-specific formula (rxe: "
	       "MTU - 80, mlx5: MTU - 96, then the largest IB MTU below), so 4176-4191 gives 4096 on "
	       "rxe and 2048 on mlx5.  Per port: active_mtu against the formula and the expected "
	       "value, jumbo netdevs that still miss 4096, IB active_mtu against max_mtu, IPoIB MTU "
	       "against its mode.  With set: it changes the netdev MTU (journalled first), verifies "
	       "the new active_mtu and restores the old MTU on every exit path.",
	.keys = mtu_keys,
	.reads = mtu_reads,
	.cfg_size = sizeof(struct mtu_cfg),
	.state_size = sizeof(struct mtu_state),
	.undo = &mtu_undo_op,
	.default_targets = "hca,rxe-vm,sysroot",
	.validate = mtu_validate,
	.check = mtu_check,
	.run = mtu_run,
	.cleanup = mtu_cleanup,
};
