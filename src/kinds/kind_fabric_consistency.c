/* SPDX-License-Identifier: MIT */
/*
 * fabric-consistency: what ibdiagnet checks that a lab walking its cables
 * misses: both ends of every link agree (speed, width, MTU, VLs) and run at
 * what both support; switches enforce P_Keys toward CAs and hold each CA's
 * partitions; the IPoIB broadcast group's multicast tree reaches every
 * member; switches of one kind run one firmware.
 *
 * Reads, by LID, what every port answers: smpquery portinfo at both ends of
 * every cabled link, smpquery switchinfo and pkeys on both ends of every
 * CA-to-switch link, ibroute -M for the group's MLID on every switch, and
 * vendstat -N (the vendor GeneralInfo) on every switch.  The SM-written
 * tables (P_Keys, MFTs) are read until two reads a sweep apart agree
 * (ibkind_settled).  Read-only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/ibkind.h"
#include "parsers/ibcheck.h"
#include "parsers/parse_ibdiag.h"
#include "core/proc.h"
#include "core/util.h"

struct fc_cfg {
	long long mlid;
	bool all_cas;
};

static const struct key_def fc_keys[] = {
	{ .name = "mlid", .type = KEY_INT, .def = "49152", .min = 0xc000, .max = 0xfffe,
	  .offset = offsetof(struct fc_cfg, mlid),
	  .help = "the multicast LID whose forwarding is followed; default 0xc000, opensm's IPoIB broadcast group (MGID ff12:401b:ffff::ffff:ffff)" },
	{ .name = "mcast_all_cas", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct fc_cfg, all_cas),
	  .help = "every CA port must be a member of the group (every host runs IPoIB); false: only the ports that joined are followed" },
	KEY_END
};

/* One end of a cabled link: who, how it is asked (LID, port). */
struct end {
	int node, port;
	unsigned lid;		/* the port's LID (CA) or the switch's */
	char name[96];		/* "leaf01 port 3" */
};

struct fc {
	struct ibnet t;
	struct end (*ends)[2];	/* per link */
	size_t n;
	unsigned mlid;
};

static void end_of(const struct ibnet *t, const struct ibnet_link *k, int side, struct end *e)
{
	e->node = side ? k->b : k->a;
	e->port = side ? k->bport : k->aport;
	e->lid = t->nodes[e->node].is_switch ? t->nodes[e->node].lid : side ? k->blid : k->alid;
	snprintf(e->name, sizeof(e->name), "%s port %d", t->nodes[e->node].desc, e->port);
}

static bool portinfo(struct rq_ctx *ctx, const struct end *e, struct ib_kvs *kv, char *why, size_t whysz)
{
	char l[16], p[16], err[200];
	const char *argv[] = { "smpquery", "portinfo", l, p, NULL };
	struct sb out = SB_INIT;
	bool ok;

	snprintf(l, sizeof(l), "%u", e->lid);
	snprintf(p, sizeof(p), "%d", e->port);
	ok = ibkind_tool(ctx, argv, &out, why, whysz);
	if (ok && smpquery_parse(out.buf, out.len, kv, err, sizeof(err))) {
		snprintf(why, whysz, "portinfo not understood: %s", err);
		ok = false;
	}
	sb_release(&out);
	return ok;
}

static void check_links(struct rq_ctx *ctx, struct fc *f, struct ib_kvs (*pi)[2], bool (*have)[2])
{
	struct rq_result *row = rq_ctx_row(ctx, "links", 0);
	struct sb msg = SB_INIT;
	unsigned bad = 0, asked = 0;

	for (size_t i = 0; i < f->n; i++) {
		char why[256] = "";

		for (int s = 0; s < 2; s++) {
			if (!f->ends[i][s].lid)
				ibkind_problem(&msg, &bad, "%s: no LID, not asked", f->ends[i][s].name);
			else if (!(have[i][s] = portinfo(ctx, &f->ends[i][s], &pi[i][s], why, sizeof(why))))
				ibkind_problem(&msg, &bad, "%s: no PortInfo (%s)", f->ends[i][s].name, why);
		}
		if (!have[i][0] || !have[i][1])
			continue;
		asked++;
		struct sb m = SB_INIT, caps = SB_INIT;

		if (ib_link_ends_judge(&pi[i][0], f->ends[i][0].name, &pi[i][1], f->ends[i][1].name, &m, &caps))
			ibkind_problem(&msg, &bad, "link %s <-> %s: %s", f->ends[i][0].name, f->ends[i][1].name, m.buf);
		rq_log(ctx, "# link %s", caps.buf);
		sb_release(&m);
		sb_release(&caps);
	}
	rq_figure_add(row, "links", asked, "");
	rq_figure_add(row, "bad_links", bad, "");
	if (bad > 5)
		sb_addf(&msg, "; and %u more", bad - 5);
	if (bad)
		rq_judge(row, false, "%u problem(s): %s", bad, msg.buf);
	else
		rq_judge(row, asked > 0, "%u links: both ends at one width, lane rate, NeighborMTU and OperVLs, "
			 "each at the best both ends enable and support", asked);
	sb_release(&msg);
}

/* ---- SM-written tables, read as one snapshot until two reads agree */

/* The CA-to-switch links: index of the CA end, or -1. */
static int ca_side(const struct fc *f, size_t i)
{
	bool a = f->t.nodes[f->ends[i][0].node].is_switch, b = f->t.nodes[f->ends[i][1].node].is_switch;

	return a == b ? -1 : a ? 1 : 0;
}

/*
 * One snapshot of the SM-written tables this kind judges: the P_Key
 * tables of both ends of every CA-to-switch link, then every switch's MFT
 * entry of the MLID; each tool's output ends with a form feed.  One
 * snapshot, so one sweep to wait for.
 */
static bool read_snapshot(struct rq_ctx *ctx, void *arg, struct sb *out, char *why, size_t whysz)
{
	const struct fc *f = arg;
	char l[16], p[16], m[16];

	for (size_t i = 0; i < f->n; i++) {
		if (ca_side(f, i) < 0 || !f->ends[i][0].lid || !f->ends[i][1].lid)
			continue;
		for (int e = 0; e < 2; e++) {
			const char *argv[] = { "smpquery", "pkeys", l, p, NULL };

			snprintf(l, sizeof(l), "%u", f->ends[i][e].lid);
			snprintf(p, sizeof(p), "%d", f->ends[i][e].port);
			if (!ibkind_tool(ctx, argv, out, why, whysz))
				return false;
			sb_adds(out, "\f");
		}
	}
	snprintf(m, sizeof(m), "0x%x", f->mlid);
	for (size_t n = 0; n < f->t.nnodes; n++) {
		const char *argv[] = { "ibroute", "-M", l, m, m, NULL };

		if (!f->t.nodes[n].is_switch || !f->t.nodes[n].lid)
			continue;
		snprintf(l, sizeof(l), "%u", f->t.nodes[n].lid);
		if (!ibkind_tool(ctx, argv, out, why, whysz))
			return false;
		sb_adds(out, "\f");
	}
	return true;
}

/* The next '\f'-ended part of a snapshot. */
static const char *part(const char **p, size_t *len)
{
	const char *s = *p, *e = strchr(s, '\f');

	if (!e)
		return NULL;
	*len = (size_t)(e - s);
	*p = e + 1;
	return s;
}

static void check_pkeys(struct rq_ctx *ctx, struct fc *f, struct ib_kvs (*pi)[2], bool (*have)[2], bool sim,
			const char **snap)
{
	struct rq_result *row = rq_ctx_row(ctx, "pkeys", 0);
	struct sb msg = SB_INIT;
	unsigned bad = 0, links = 0, unenforced = 0;
	const char *p = *snap;
	for (size_t i = 0; i < f->n; i++) {
		int c = ca_side(f, i);
		struct ib_pkeys tab[2];
		const char *t[2];
		size_t tl[2];
		char err[256];

		if (c < 0 || !f->ends[i][0].lid || !f->ends[i][1].lid)
			continue;
		t[0] = part(&p, &tl[0]);
		t[1] = part(&p, &tl[1]);
		if (!t[0] || !t[1])
			break;
		links++;
		const struct end *ca = &f->ends[i][c], *sw = &f->ends[i][!c];
		bool ok = true;

		for (int e = 0; e < 2; e++)
			if (ib_pkeys_read(t[e], tl[e], &tab[e], err, sizeof(err))) {
				ibkind_problem(&msg, &bad, "%s: P_Key table not understood (%s)", f->ends[i][e].name, err);
				ok = false;
			}
		if (!ok)
			continue;
		/*
		 * opensm turns enforcement on at switch ports facing CAs
		 * (osm_pkey_mgr.c, part_enforce both by default).  ibsim keeps
		 * none of PortInfo's PartitionEnforcement bits an SM sets
		 * (sim_mad.c do_portinfo stores only LID, states, widths and
		 * speeds), so on ibsim they are not judged and the switch
		 * port's table is taken as enforced.
		 */
		bool enforced = true;

		if (have[i][!c]) {
			const char *in = ib_kvs_get(&pi[i][!c], "PartEnforceInb");
			const char *outb = ib_kvs_get(&pi[i][!c], "PartEnforceOutb");

			enforced = in && outb && atoi(in) && atoi(outb);
			if (!enforced && !sim)
				ibkind_problem(&msg, &bad, "%s (to %s) does not enforce P_Keys (PartEnforceInb %s, "
					       "PartEnforceOutb %s): a CA can send on partitions it is no member of",
					       sw->name, ca->name, in ? in : "?", outb ? outb : "?");
			if (!enforced)
				unenforced++;
		}
		if (enforced || sim) {
			struct sb m = SB_INIT;

			if (ib_pkeys_link_judge(&tab[c], ca->name, &tab[!c], sw->name, &m))
				ibkind_problem(&msg, &bad, "%s", m.buf);
			sb_release(&m);
		}
	}
	rq_figure_add(row, "ca_links", links, "");
	rq_figure_add(row, "bad_ports", bad, "");
	if (sim && unenforced)
		rq_fact_add(row, "pkey_enforcement", "not judged: ibsim keeps no PartitionEnforcement bits");
	if (bad > 5)
		sb_addf(&msg, "; and %u more", bad - 5);
	if (bad)
		rq_judge(row, false, "%u problem(s): %s", bad, msg.buf);
	else
		rq_judge(row, links > 0, "%u CA-to-switch links: %s, each CA's P_Keys on its switch port with the same "
			 "membership", links, sim ? "enforcement not shown by ibsim" : "switch ports enforce P_Keys");
	*snap = p;
	sb_release(&msg);
}

static void check_mcast(struct rq_ctx *ctx, struct fc *f, const struct fc_cfg *cfg, const char *p)
{
	struct rq_result *row = rq_ctx_row(ctx, "mcast", 0);
	struct sb msg = SB_INIT;
	struct ib_mft *mft = xcalloc(f->t.nnodes + 1, sizeof(*mft));
	const struct ib_mft **by = xcalloc(f->t.nnodes + 1, sizeof(*by));
	char err[256];
	unsigned members = 0, bad;

	for (size_t n = 0; n < f->t.nnodes; n++) {
		const char *t;
		size_t tl;

		if (!f->t.nodes[n].is_switch || !f->t.nodes[n].lid || !(t = part(&p, &tl)))
			continue;
		if (mft_parse(t, tl, &mft[n], err, sizeof(err))) {
			rq_result_set(row, RQ_ERROR, "ibroute -M of %s not understood: %s", f->t.nodes[n].desc, err);
			goto out;
		}
		by[n] = &mft[n];
	}
	bad = ib_mcast_judge(&f->t, by, f->mlid, cfg->all_cas, &members, &msg);
	rq_figure_add(row, "members", members, "");
	if (!members) {
		/* nobody joined: no tree to follow (ibsim runs no IPoIB, nothing joins there) */
		rq_result_set(row, RQ_SKIP, "no switch forwards MLID 0x%04x to a CA port: no port has joined the group",
			      f->mlid);
		goto out;
	}
	if (bad)
		rq_judge(row, false, "%u problem(s): %s", bad, msg.buf);
	else
		rq_judge(row, true, "MLID 0x%04x: each of its %u member ports reaches every other through the switches' "
			 "multicast forwarding tables", f->mlid, members);
out:
	for (size_t n = 0; n < f->t.nnodes; n++)
		ib_mft_release(&mft[n]);
	free(mft);
	free(by);
	sb_release(&msg);
}

static void check_firmware(struct rq_ctx *ctx, struct fc *f)
{
	struct rq_result *row = rq_ctx_row(ctx, "firmware", 0);
	struct ib_fw *v = xcalloc(f->t.nnodes + 1, sizeof(*v));
	struct sb msg = SB_INIT, silent = SB_INIT;
	size_t n = 0, nsw = 0;
	unsigned behind;

	for (size_t i = 0; i < f->t.nnodes; i++) {
		char l[16], why[256], err[256];
		const char *argv[] = { "vendstat", "-N", l, NULL };
		struct sb out = SB_INIT;

		if (!f->t.nodes[i].is_switch || !f->t.nodes[i].lid)
			continue;
		nsw++;
		snprintf(l, sizeof(l), "%u", f->t.nodes[i].lid);
		if (ibkind_tool(ctx, argv, &out, why, sizeof(why)) && !vendstat_gi_parse(out.buf, out.len, &v[n], err, sizeof(err))) {
			snprintf(v[n].name, sizeof(v[n].name), "%s", f->t.nodes[i].desc);
			n++;
		} else if (silent.len < 200) {
			sb_addf(&silent, "%s%s", silent.len ? ", " : "", f->t.nodes[i].desc);
		}
		sb_release(&out);
	}
	rq_figure_add(row, "switches_read", n, "");
	if (silent.len)
		rq_fact_add(row, "fw_unanswered", silent.buf);
	if (!n) {
		rq_result_set(row, RQ_SKIP, "none of the %zu switches answered vendstat -N (the vendor GeneralInfo MAD; "
			      "ibsim answers no vendor class)", nsw);
		goto out;
	}
	behind = ib_fw_skew(v, n, &msg);
	rq_figure_add(row, "switches_behind", behind, "");
	/* ibdiagnet warns and does not fail: an older firmware is a lab's choice to make, seen */
	if (behind)
		rq_fact_add(row, "fw_skew", msg.buf);
	rq_judge(row, true, "%zu switch(es) read%s", n, behind ? "; firmware skew recorded (fact fw_skew)" :
		 ", one firmware for each device id and PSID");
out:
	free(v);
	sb_release(&msg);
	sb_release(&silent);
}

static void fc_run(struct rq_ctx *ctx, const void *vcfg)
{
	static const char *const discover[] = { "ibnetdiscover", NULL };
	const struct fc_cfg *cfg = vcfg;
	const struct rq_where *w = rq_ctx_where(ctx);
	const struct rq_where_fabric *p = &w->fabric;
	struct fc f = { .mlid = (unsigned)cfg->mlid };
	struct sb text = SB_INIT, snapt = SB_INIT;
	struct ib_kvs (*pi)[2] = NULL;
	bool (*have)[2] = NULL;
	char err[512], why[256];

	if (!ibkind_tool(ctx, discover, &text, why, sizeof(why))) {
		rq_result_set(ctx->main, RQ_ERROR, "%s", why);
		goto out;
	}
	if (ibnet_parse(text.buf, text.len, "ibnetdiscover", &f.t, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "ibnetdiscover output not understood: %s", err);
		goto out;
	}
	f.n = f.t.nlinks;
	f.ends = xcalloc(f.n + 1, sizeof(*f.ends));
	pi = xcalloc(f.n + 1, sizeof(*pi));
	have = xcalloc(f.n + 1, sizeof(*have));
	for (size_t i = 0; i < f.n; i++)
		for (int s = 0; s < 2; s++)
			end_of(&f.t, &f.t.links[i], s, &f.ends[i][s]);
	check_links(ctx, &f, pi, have);
	/* the SM-written tables: judged only once two reads a sweep apart agree */
	if (ibkind_settled(ctx, "pkey_mft_tables", read_snapshot, &f, &snapt, why, sizeof(why)) >= 0) {
		const char *sp = snapt.buf;

		check_pkeys(ctx, &f, pi, have, p->sim, &sp);
		check_mcast(ctx, &f, cfg, sp);
	} else if (why[0]) {
		rq_result_set(ctx->main, RQ_ERROR, "P_Key and multicast tables not read: %s", why);
	}
	check_firmware(ctx, &f);
	rq_judge(ctx->main, f.n > 0, "%zu cabled links of %zu nodes read", f.n, f.t.nnodes);
out:
	for (size_t i = 0; pi && i < f.n; i++)
		for (int s = 0; s < 2; s++)
			ib_kvs_release(&pi[i][s]);
	free(pi);
	free(have);
	free(f.ends);
	ibnet_release(&f.t);
	sb_release(&text);
	sb_release(&snapt);
}

const struct rq_kind rq_kind_fabric_consistency = {
	.name = "fabric-consistency",
	.summary = "ibdiagnet's consistency checks: both ends of each link, P_Key enforcement, multicast trees, switch firmware",
	.doc = "Rows: links (smpquery portinfo at both ends of every cabled link: one active width and lane rate, "
	       "each the best both ends enable and support, one NeighborMTU not below both MtuCaps, one OperVLs), "
	       "pkeys (every switch port facing a CA enforces P_Keys in and out, and holds each of the CA's "
	       "P_Keys with its membership; smpquery pkeys both ends), mcast (ibroute -M of every switch for "
	       "mlid:, default 0xc000, the IPoIB broadcast group: from every member port the group reaches every "
	       "other; with mcast_all_cas every CA port is a member), firmware (vendstat -N of every switch: one "
	       "firmware for each device id and PSID, a skew recorded as ibdiagnet warns, not failed).  The "
	       "SM-written tables are read until two reads a sweep apart agree.  Read-only.",
	.keys = fc_keys,
	.cfg_size = sizeof(struct fc_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.run = fc_run,
};
