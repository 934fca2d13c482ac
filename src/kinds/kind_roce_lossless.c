/* SPDX-License-Identifier: MIT */
/*
 * roce-lossless: is every RoCE port set up for lossless RDMA?  (read-only)
 *
 * RoCE without PFC and ECN works on an idle fabric and collapses under
 * load (go-back-N retransmissions on every drop), and the settings that
 * make it lossless live on the host as well as on the switches: the port
 * must classify by DSCP (trust DSCP: mlx5 switches to it when the DCB APP
 * table holds DSCP entries), PFC must pause the RoCE priority and only it,
 * ECN must be on for that priority at both ends of the congestion loop
 * (notification point and reaction point), CNPs must go out on their own
 * priority, and RDMA-CM must default to RoCE v2 with a ToS whose DSCP maps
 * to the RoCE priority.  Per port this reads the DCB APP and PFC state
 * from iproute2's `dcb -j` (live, or the output `capture` stored), MLNX_OFED's
 * /sys/class/net/IF/ecn/ tree where it exists, and the rdma_cm configfs
 * (/sys/kernel/config/rdma_cm/DEV/ports/N/default_roce_mode, _tos).
 * On a RoCE LAG the port's netdev is the bond; its slave PFs hold the DCB
 * and ECN state and are judged one by one.  Nothing is changed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "core/proc.h"
#include "core/util.h"
#include "rdma/rdmadev.h"

enum { TRUST_DSCP, TRUST_PCP };
static const char *const trust_names[] = { "dscp", "pcp", NULL };

struct rl_cfg {
	long long priority;
	int trust;
	bool pfc_only;
	bool ecn;
	long long cnp_priority;
	bool roce_v2;
};

static const struct key_def rl_keys[] = {
	{ .name = "priority", .type = KEY_INT, .def = "3", .min = 0, .max = 7,
	  .offset = offsetof(struct rl_cfg, priority),
	  .help = "the RoCE traffic's priority: PFC and ECN on it (3, as on NVIDIA switches)" },
	{ .name = "trust", .type = KEY_ENUM, .choices = trust_names, .def = "dscp",
	  .offset = offsetof(struct rl_cfg, trust),
	  .help = "how the port must classify: dscp (DCB APP table has DSCP entries) or pcp (it has none)" },
	{ .name = "pfc_only", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct rl_cfg, pfc_only),
	  .help = "PFC must be off on every other priority (a pause there stalls TCP and storage too)" },
	{ .name = "ecn", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct rl_cfg, ecn),
	  .help = "ECN enabled on the RoCE priority, as notification and reaction point (where ecn/ exists)" },
	{ .name = "cnp_priority", .type = KEY_INT, .def = "6", .min = -1, .max = 7,
	  .offset = offsetof(struct rl_cfg, cnp_priority),
	  .help = "the priority CNPs go out on (ecn/roce_np/cnp_802p_prio; -1: not judged)" },
	{ .name = "roce_v2", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct rl_cfg, roce_v2),
	  .help = "RDMA-CM's default_roce_mode must be RoCE v2 (routable, carries DSCP and ECN)" },
	KEY_END
};

/* `dcb -j OBJ show dev IF` parsed; NULL with why when it cannot be had. */
static json_t *dcb_json(struct rq_ctx *ctx, const char *obj, const char *dev, char *why, size_t whysz)
{
	const char *argv[] = { "dcb", "-j", obj, "show", "dev", dev, NULL };
	struct proc_result r;
	json_error_t je;
	json_t *j = NULL;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 10000, &r) < 0 || r.exec_failed) {
		snprintf(why, whysz, ctx->replay ? "the capture holds no dcb output (iproute2's dcb missing there?)" :
			 "dcb (iproute2) is not installed");
	} else if (r.timed_out || r.exit_code != 0) {
		snprintf(why, whysz, "dcb %s show dev %s failed (exit %d): %.120s", obj, dev, r.exit_code,
			 r.err.buf ? strtrim(r.err.buf) : "");
	} else if (!(j = json_loadb(r.out.buf ? r.out.buf : "", r.out.len, 0, &je)) || !json_is_object(j)) {
		snprintf(why, whysz, "dcb -j %s show dev %s: not a JSON object (line %d: %s)", obj, dev,
			 je.line, je.text);
		json_decref(j);
		j = NULL;
	}
	proc_result_release(&r);
	return j;
}

/*
 * The APP table's DSCP -> priority map ("dscp_prio": [[26,3],[48,6]],
 * dcb_app.c); 0..63 -> priority or -1.  Returns the number of entries.
 */
static int dscp_map(json_t *app, int map[64])
{
	json_t *a = json_object_get(app, "dscp_prio"), *e;
	size_t i;
	int n = 0;

	for (i = 0; i < 64; i++)
		map[i] = -1;
	json_array_foreach(a, i, e) {
		json_t *d = json_array_get(e, 0), *p = json_array_get(e, 1);

		if (json_is_integer(d) && json_is_integer(p) && json_integer_value(d) >= 0 &&
		    json_integer_value(d) < 64) {
			map[json_integer_value(d)] = (int)json_integer_value(p);
			n++;
		}
	}
	return n;
}

/* "prio_pfc": [false,false,false,true,...] (dcb_print_array_on_off); -1 unknown. */
static int pfc_on(json_t *pfc, int prio)
{
	json_t *e = json_array_get(json_object_get(pfc, "prio_pfc"), (size_t)prio);

	return json_is_boolean(e) ? json_is_true(e) : json_is_integer(e) ? json_integer_value(e) != 0 : -1;
}

/* An integer file of the netdev's ecn/ tree (rel: "roce_np/enable/3"). */
static int read_ecn(struct rq_ctx *ctx, long *v, const char *nd, const char *rel)
{
	char path[PATH_MAX], buf[64], *end;

	rq_path(ctx, path, sizeof(path), "/sys/class/net/%s/ecn/%s", nd, rel);
	if (read_line(path, buf, sizeof(buf)))
		return -ENOENT;
	*v = strtol(buf, &end, 0);
	return end == buf ? -EINVAL : 0;
}

static void judge_dcb(struct rq_ctx *ctx, const struct rl_cfg *cfg, struct rq_result *row,
		      const char *what, const char *nd, int map[64], int *nmap)
{
	char why[256];
	json_t *app, *pfc;
	int prio = (int)cfg->priority;

	*nmap = -1;
	app = dcb_json(ctx, "app", nd, why, sizeof(why));
	if (!app) {
		rq_fact_add(row, "trust", why);
	} else {
		*nmap = dscp_map(app, map);
		rq_fact_add(row, "trust", *nmap > 0 ? "dscp" : "pcp");
		if (cfg->trust == TRUST_DSCP)
			rq_judge(row, *nmap > 0, "%s: trust is PCP (the DCB APP table of %s has no DSCP entry): "
				 "routed RoCE v2 traffic lands on priority 0", what, nd);
		else
			rq_judge(row, *nmap == 0, "%s: trust is DSCP (%d DSCP entries in the APP table of %s), "
				 "PCP expected", what, *nmap, nd);
		json_decref(app);
	}
	pfc = dcb_json(ctx, "pfc", nd, why, sizeof(why));
	if (!pfc) {
		rq_fact_add(row, "pfc", why);
	} else {
		int on = pfc_on(pfc, prio), others = 0;
		char list[32] = "";

		for (int p = 0; p < 8; p++)
			if (pfc_on(pfc, p) == 1) {
				size_t l = strlen(list);

				snprintf(list + l, sizeof(list) - l, "%s%d", l ? "," : "", p);
				others += p != prio;
			}
		rq_fact_add(row, "pfc_priorities", list[0] ? list : "none");
		rq_judge(row, on == 1, "%s: PFC is %s on the RoCE priority %d of %s", what,
			 on == 0 ? "off" : "unknown", prio, nd);
		if (cfg->pfc_only)
			rq_judge(row, others == 0, "%s: PFC is on for priorities %s of %s, only %d expected",
				 what, list, nd, prio);
		json_decref(pfc);
	}
	if (app == NULL && pfc == NULL)
		rq_result_set(row, RQ_SKIP, "%s: DCB state unknown: %s", what, why);
}

/*
 * The netdevs that hold a port's DCB and ECN state.  On a RoCE LAG the
 * port's netdev (GID 0's) is the bond, while mlx5 keeps trust, PFC and
 * ECN per PF: the bond has no DCB ops of its own (`dcb` on it fails), and
 * each slave PF carries half the traffic, so each slave is judged.  The
 * slaves are the bond's `bonding/slaves` (drivers/net/bonding/
 * bond_sysfs.c: names separated by spaces).  Returns how many, 0 when nd
 * is no bond.
 */
#define MAX_SLAVES 4

static int lag_slaves(struct rq_ctx *ctx, const char *nd, char sl[][32], int max)
{
	char path[PATH_MAX], buf[256], *save = NULL;
	int n = 0;

	rq_path(ctx, path, sizeof(path), "/sys/class/net/%s/bonding/slaves", nd);
	if (read_line(path, buf, sizeof(buf)))
		return 0;
	for (char *t = strtok_r(buf, " \t", &save); t && n < max; t = strtok_r(NULL, " \t", &save))
		snprintf(sl[n++], 32, "%s", t);
	return n;
}

/* DCB, ECN and CNPs of one netdev that carries the port's traffic. */
static void judge_netdev(struct rq_ctx *ctx, const struct rl_cfg *cfg, struct rq_result *row,
			 const char *what, const char *nd, long tos)
{
	char mode[64];
	int prio = (int)cfg->priority, map[64], nmap;
	long v;

	judge_dcb(ctx, cfg, row, what, nd, map, &nmap);
	if (row->verdict != RQ_NONE)
		return;

	/* MLNX_OFED's mlx5 sysfs; the inbox driver does not expose ecn/ */
	if (cfg->ecn) {
		char rel[64];
		long np, rp;
		int a, b;

		snprintf(rel, sizeof(rel), "roce_np/enable/%d", prio);
		a = read_ecn(ctx, &np, nd, rel);
		snprintf(rel, sizeof(rel), "roce_rp/enable/%d", prio);
		b = read_ecn(ctx, &rp, nd, rel);

		if (a == -ENOENT && b == -ENOENT) {
			rq_fact_add(row, "ecn", "not exposed (no ecn/ in sysfs: inbox mlx5, ECN at its default)");
		} else {
			rq_judge(row, !a && np == 1, "%s: ECN notification point (roce_np) is off on priority %d",
				 what, prio);
			rq_judge(row, !b && rp == 1, "%s: ECN reaction point (roce_rp) is off on priority %d",
				 what, prio);
		}
	}
	if (cfg->cnp_priority >= 0 && !read_ecn(ctx, &v, nd, "roce_np/cnp_802p_prio")) {
		snprintf(mode, sizeof(mode), "%ld", v);
		rq_fact_add(row, "cnp_priority", mode);
		rq_judge(row, v == cfg->cnp_priority, "%s: CNPs go out on priority %ld, expected %lld", what, v,
			 cfg->cnp_priority);
	}
	/* RDMA-CM traffic carries that DSCP: it must land on the RoCE priority */
	if (cfg->trust == TRUST_DSCP && nmap > 0) {
		char to[48];

		if (map[tos >> 2] < 0)
			snprintf(to, sizeof(to), "does not map (priority 0)");
		else
			snprintf(to, sizeof(to), "maps to priority %d", map[tos >> 2]);
		rq_judge(row, map[tos >> 2] == prio,
			 "%s: RDMA-CM's ToS %ld is DSCP %ld, which the APP table %s, not the RoCE priority %d",
			 what, tos, tos >> 2, to, prio);
	}
}

static void judge_port(struct rq_ctx *ctx, const struct rl_cfg *cfg, const struct rdma_dev *d,
		       const struct rdma_port *p, struct rq_result *row)
{
	char what[160], path[PATH_MAX], mode[64], sl[MAX_SLAVES][32], list[MAX_SLAVES * 33] = "";
	long tos = 0;
	const char *nd = p->netdev;
	int ns = lag_slaves(ctx, nd, sl, MAX_SLAVES);

	rq_fact_add(row, "netdev", nd);

	/* cma_configfs.c: the directory exists once someone mkdir'ed DEV */
	rq_path(ctx, path, sizeof(path), "/sys/kernel/config/rdma_cm/%s/ports/%d/default_roce_tos",
		d->name, p->num);
	if (!read_line(path, mode, sizeof(mode)))
		tos = strtol(mode, NULL, 0);
	if (tos < 0 || tos > 255)
		tos = 0;
	if (!ns) {
		snprintf(what, sizeof(what), "%s port %d (%s)", d->name, p->num, nd);
		judge_netdev(ctx, cfg, row, what, nd, tos);
	} else {
		for (int i = 0; i < ns; i++) {
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? " " : "", sl[i]);
			snprintf(what, sizeof(what), "%s port %d (%s, LAG slave of %s)", d->name, p->num, sl[i], nd);
			judge_netdev(ctx, cfg, row, what, sl[i], tos);
			if (row->verdict != RQ_NONE)
				break;
		}
		rq_fact_add(row, "lag_slaves", list);
	}
	if (row->verdict != RQ_NONE)
		return;

	snprintf(what, sizeof(what), "%s port %d (%s)", d->name, p->num, nd);
	rq_path(ctx, path, sizeof(path), "/sys/kernel/config/rdma_cm/%s/ports/%d/default_roce_mode",
		d->name, p->num);
	if (read_line(path, mode, sizeof(mode))) {
		/* cma_add_one() prefers RoCE v2 where the device supports it */
		rq_fact_add(row, "default_roce_mode", "RoCE v2 (kernel default; rdma_cm configfs not populated)");
	} else {
		rq_fact_add(row, "default_roce_mode", mode);
		if (cfg->roce_v2)
			rq_judge(row, !strcmp(mode, "RoCE v2"), "%s: RDMA-CM's default_roce_mode is %s, RoCE v2 expected",
				 what, mode);
	}
	snprintf(mode, sizeof(mode), "%ld (DSCP %ld)", tos, tos >> 2);
	rq_fact_add(row, "default_roce_tos", mode);
}

static void rl_run(struct rq_ctx *ctx, const void *p)
{
	const struct rl_cfg *cfg = p;
	struct rdma_devs devs;
	int *idx, n, nports = 0;

	if (!nodekind_scan(ctx, &devs))
		return;
	n = nodekind_select(ctx, &devs, &idx, NULL);
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];

		for (int j = 0; j < d->nports; j++) {
			const struct rdma_port *pt = &d->ports[j];
			struct rq_result *row;

			if (!rdma_port_selected(ctx, pt->num) || strcmp(pt->link_layer, "Ethernet"))
				continue;
			row = rq_ctx_row(ctx, d->name, pt->num);
			nports++;
			if (d->is_virtual)
				rq_result_set(row, RQ_SKIP, "%s is a virtual %s device: no DCB, no lossless fabric "
					      "to set up", d->name, d->driver[0] ? d->driver : "software");
			else if (!pt->netdev[0])
				rq_result_set(row, RQ_SKIP, "%s port %d: no netdev found", d->name, pt->num);
			else
				judge_port(ctx, cfg, d, pt, row);
		}
	}
	if (n >= 0 && !nports)
		rq_result_set(ctx->main, RQ_SKIP, "no RoCE (Ethernet link layer) port selected");
	free(idx);
	rdma_devs_release(&devs);
}

/* DCB (trust, PFC), MLNX_OFED's ECN, rdma_cm's RoCE defaults, a LAG's slaves */
static const struct rq_read roce_lossless_reads[] = {
	RQ_READS_TOOL("dcb", "-j", "app", "show", "dev", "{netdev}"),
	RQ_READS_TOOL("dcb", "-j", "pfc", "show", "dev", "{netdev}"),
	RQ_READS_NETDEV_TREE("ecn", 3),
	RQ_READS_NETDEV("bonding/mode"), RQ_READS_NETDEV("bonding/slaves"),
	RQ_READS_TREE("/sys/kernel/config/rdma_cm", 4),
	RQ_READS_END,
};

const struct rq_kind rq_kind_roce_lossless = {
	.name = "roce-lossless",
	.summary = "RoCE ports set up for lossless RDMA (each slave PF of a LAG): trust DSCP, PFC on the RoCE priority only, ECN, CNP priority, RoCE v2 and ToS (read-only)",
	.doc = "RoCE without PFC and ECN works on an idle fabric and collapses under load.  Per RoCE "
	       "port, read-only: trust DSCP (the DCB APP table has DSCP entries, `dcb -j app show`), "
	       "PFC on the RoCE priority (3) and off on the others (`dcb -j pfc show`), ECN enabled "
	       "as notification and reaction point on that priority and CNPs on their priority "
	       "(MLNX_OFED's /sys/class/net/IF/ecn/, a fact where absent), RDMA-CM's "
	       "default_roce_mode RoCE v2 and a default ToS whose DSCP the APP table maps to the "
	       "RoCE priority (rdma_cm configfs).  On a RoCE LAG (the port's netdev a bond) every "
	       "slave PF's DCB and ECN are judged, not the bond's.  `dcb` missing: SKIP with the "
	       "reason.  rxe SKIPs.",
	.keys = rl_keys,
	.reads = roce_lossless_reads,
	.cfg_size = sizeof(struct rl_cfg),
	.default_targets = "hca,sysroot",
	.run = rl_run,
};
