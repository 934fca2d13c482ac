/* SPDX-License-Identifier: MIT */
/*
 * fabric-qos: are the SL2VL and VL arbitration tables of every port what
 * the QoS configuration asks?
 *
 * opensm -Q programs each port's SL-to-VL mapping and VLArb tables from
 * opensm.conf's qos_* options (qos_ca_* for CA ports, qos_swe_* for switch
 * ports, falling back to qos_* and opensm's defaults; the policy file's
 * qos-setup section is parsed and ignored), each VL masked to the port's
 * OperVLs.  A port that refused the MADs, an SM running another file than
 * the one planned, or a VL beyond a port's OperVLs that opensm silently
 * folds onto another VL, leaves traffic on the wrong VL with nothing in any
 * log a person reads.  This discovers the fabric (ibnetdiscover), asks
 * every cabled port for its PortInfo, SL2VL and VLArb tables by LID
 * (smpquery portinfo/sl2vl/vlarb), and compares with the tables computed
 * as opensm computes them.  Rows: policy (the qos-policy.conf the SM was
 * given: dropped by opensm, as its log says, or linted with the ports'
 * smallest OperVLs as VLCap), sl2vl, vlarb;
 * a bad port is named with its switch or HCA and port.  Read-only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "kinds/ibkind.h"
#include "parsers/parse_fabric.h"
#include "parsers/parse_ibdiag.h"
#include "parsers/qos_policy.h"
#include "fabric/qos.h"
#include "core/util.h"

struct fq_cfg {
	char *sl2vl, *vlarb_high, *vlarb_low;
};

static const struct key_def fq_keys[] = {
	{ .name = "sl2vl", .type = KEY_STR, .offset = offsetof(struct fq_cfg, sl2vl),
	  .help = "the planned SL-to-VL table of every port, 16 VLs as qos_sl2vl writes them; default: the target SM's sm_config (else opensm's default)" },
	{ .name = "vlarb_high", .type = KEY_STR, .offset = offsetof(struct fq_cfg, vlarb_high),
	  .help = "the planned high-priority VLArb table, VL:WEIGHT,... as qos_vlarb_high; default: as sl2vl" },
	{ .name = "vlarb_low", .type = KEY_STR, .offset = offsetof(struct fq_cfg, vlarb_low),
	  .help = "the planned low-priority VLArb table, VL:WEIGHT,... as qos_vlarb_low; default: as sl2vl" },
	KEY_END
};

static int fq_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct fq_cfg *cfg = c->cfg;
	struct qos_tables t = { 0 };
	char e[256];

	if ((cfg->sl2vl && qos_tables_set(&t, "qos_sl2vl", cfg->sl2vl, e, sizeof(e))) ||
	    (cfg->vlarb_high && qos_tables_set(&t, "qos_vlarb_high", cfg->vlarb_high, e, sizeof(e))) ||
	    (cfg->vlarb_low && qos_tables_set(&t, "qos_vlarb_low", cfg->vlarb_low, e, sizeof(e)))) {
		snprintf(err, errsz, "%s", e + 4);	/* "sl2vl: ..." as the key is named */
		return -EINVAL;
	}
	return 0;
}

/* OperVLs "VL0-7" as PortInfo's enumeration (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14). */
static int opvls_enum(const char *s)
{
	int hi = s && !strncmp(s, "VL0-", 4) ? atoi(s + 4) : 0;

	return !s ? 0 : hi >= 14 ? 5 : hi >= 7 ? 4 : hi >= 3 ? 3 : hi >= 1 ? 2 : !strcmp(s, "VL0") ? 1 : 0;
}

struct fq_state {
	unsigned ports, sl_bad, arb_bad, sl_rows;
	struct sb sl_msg, arb_msg;
	int min_opvls;		/* smallest OperVLs enumeration seen */
};

/* One cabled port to ask: CA ports by their own LID, switch ports by the switch's. */
struct fq_port {
	const char *who;
	unsigned lid;
	int port;
	bool sw;
};

struct fq_ports {
	struct fq_port *v;
	size_t n;
};

/*
 * The SM-written tables of every port, as one snapshot: each port's
 * smpquery sl2vl then vlarb output, each ended by a form feed; a query
 * that fails is "\001why" in its place, so a port that refuses the MADs
 * (the no-sl2vl fault) is a table like any other, read the same each time.
 */
static bool read_tables(struct rq_ctx *ctx, void *arg, struct sb *out, char *why, size_t whysz)
{
	const struct fq_ports *ps = arg;

	for (size_t i = 0; i < ps->n; i++) {
		const struct fq_port *q = &ps->v[i];
		char l[16], p[16], w[256];
		const char *sl[] = { "smpquery", "sl2vl", l, q->sw ? p : "0", NULL };
		const char *va[] = { "smpquery", "vlarb", l, p, NULL };

		snprintf(l, sizeof(l), "%u", q->lid);
		snprintf(p, sizeof(p), "%d", q->port);
		for (int k = 0; k < 2; k++) {
			w[0] = '\0';
			if (!ibkind_tool(ctx, k ? va : sl, out, w, sizeof(w)))
				sb_addf(out, "\001%s", w);
			sb_adds(out, "\f");
		}
	}
	(void)why;
	(void)whysz;
	return true;
}

/* The next '\f'-ended part of a snapshot; *failed when it is a query's failure. */
static const char *part(const char **p, size_t *len, bool *failed)
{
	const char *s = *p, *e = s ? strchr(s, '\f') : NULL;

	if (!e) {
		*len = 0;
		*failed = true;
		return "";
	}
	*len = (size_t)(e - s);
	*p = e + 1;
	*failed = *s == '\001';
	return *failed ? s + 1 : s;
}

static void check_port(struct rq_ctx *ctx, struct fq_state *s, const struct qos_tables *want, const char *who,
		       unsigned lid, int port, bool sw, const char **snap)
{
	char l[16], p[16], why[256] = "";
	const char *pi[] = { "smpquery", "portinfo", l, p, NULL };
	struct sb out = SB_INIT;
	const char *slt, *vat;
	size_t sll, val;
	bool slf, vaf;
	struct ib_kvs kv = { 0 };
	struct ib_sl2vl t = { 0 };
	struct ib_vlarb a;
	int op;
	unsigned mask;
	char err[256];

	snprintf(l, sizeof(l), "%u", lid);
	snprintf(p, sizeof(p), "%d", port);
	slt = part(snap, &sll, &slf);
	vat = part(snap, &val, &vaf);
	s->ports++;
	if (!ibkind_tool(ctx, pi, &out, why, sizeof(why)) || smpquery_parse(out.buf, out.len, &kv, err, sizeof(err))) {
		ibkind_problem(&s->sl_msg, &s->sl_bad, "%s port %d: no PortInfo (%s)", who, port, why);
		goto out;
	}
	op = opvls_enum(ib_kvs_get(&kv, "OperVLs"));
	if (!op) {
		ibkind_problem(&s->sl_msg, &s->sl_bad, "%s port %d: OperVLs \"%s\" not understood", who, port,
			ib_kvs_get(&kv, "OperVLs") ? ib_kvs_get(&kv, "OperVLs") : "");
		goto out;
	}
	if (!s->min_opvls || op < s->min_opvls)
		s->min_opvls = op;
	mask = (1u << (op - 1)) - 1;
	/* a VL of the configuration beyond this port's OperVLs: opensm folds it onto VL & mask */
	for (int i = 0; i < 16; i++)
		if (want->sl2vl[i] != 15 && (want->sl2vl[i] & ~mask)) {
			ibkind_problem(&s->sl_msg, &s->sl_bad, "%s port %d: %s maps SL %d to VL %u, beyond its OperVLs %s "
				"(opensm programs VL %u)", who, port, want->src_sl2vl, i, want->sl2vl[i],
				ib_kvs_get(&kv, "OperVLs"), want->sl2vl[i] & mask);
			break;
		}
	err[0] = '\0';
	if (slf || sl2vl_parse(slt, sll, &t, err, sizeof(err)) || !t.n) {
		ibkind_problem(&s->sl_msg, &s->sl_bad, "%s port %d: no SL2VL table (%.*s)", who, port,
			       slf ? (int)sll - 1 : (int)strlen(err), slf ? slt : err);
	} else {
		bool named = false;	/* one problem a port: its first wrong row */

		for (size_t r = 0; r < t.n; r++) {
			s->sl_rows++;
			for (int i = 0; i < 16 && !named; i++) {
				unsigned w = want->sl2vl[i] == 15 ? 15 : want->sl2vl[i] & mask;

				if (t.rows[r].vl[i] != w) {
					ibkind_problem(&s->sl_msg, &s->sl_bad, "%s port %d (in %d, out %d): SL %d -> VL %u, %s asks VL %u",
						who, port, t.rows[r].in, t.rows[r].out, i, t.rows[r].vl[i], want->src_sl2vl, w);
					named = true;
				}
			}
		}
	}
	ib_sl2vl_release(&t);
	memset(&a, 0, sizeof(a));
	err[0] = '\0';
	if (vaf || vlarb_parse(vat, val, &a, err, sizeof(err))) {
		ibkind_problem(&s->arb_msg, &s->arb_bad, "%s port %d: no VLArb tables (%.*s)", who, port,
			       vaf ? (int)val - 1 : (int)strlen(err), vaf ? vat : err);
		goto out;
	}
	for (int h = 0; h < 2; h++) {
		const struct ib_vlarb_table *got = h ? &a.high : &a.low;
		const uint8_t *wv = h ? want->high_vl : want->low_vl, *ww = h ? want->high_w : want->low_w;

		for (size_t i = 0; i < got->n && i < 64; i++)
			if (got->vl[i] != (wv[i] & mask) || got->weight[i] != ww[i]) {
				ibkind_problem(&s->arb_msg, &s->arb_bad, "%s port %d: %s entry %zu is %u:%u, %s asks %u:%u", who, port,
					h ? "high" : "low", i, got->vl[i], got->weight[i], h ? want->src_high : want->src_low,
					wv[i] & mask, ww[i]);
				break;
			}
	}
out:
	ib_kvs_release(&kv);
	sb_release(&out);
}

static void fq_run(struct rq_ctx *ctx, const void *vcfg)
{
	static const char *const discover[] = { "ibnetdiscover", NULL };
	const struct fq_cfg *cfg = vcfg;
	const struct rq_where_fabric *fw = &rq_ctx_where(ctx)->fabric;
	const char *conf_path = fw->sm_config[0] ? fw->sm_config : NULL;
	const char *policy_path = fw->qos_policy[0] ? fw->qos_policy : NULL;
	struct sb conf = SB_INIT, text = SB_INIT;
	struct qos_tables want[2];	/* [0] CA ports, [1] switch ports */
	struct fq_state s = { .sl_msg = SB_INIT, .arb_msg = SB_INIT };
	struct ibnet t = { 0 };
	struct fq_ports ps = { 0 };
	struct sb snap = SB_INIT;
	const char *sp;
	char err[512], why[256];

	if (conf_path && read_file(conf_path, &conf, 4u << 20) < 0) {
		rq_result_set(ctx->main, RQ_ERROR, "sm_config: cannot read %s", conf_path);
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		if (qos_tables_build(conf_path ? conf.buf : NULL, conf.len, k ? QOS_SWE : QOS_CA, &want[k], err,
				     sizeof(err))) {
			rq_result_set(ctx->main, RQ_ERROR, "sm_config %s: %s", conf_path, err);
			goto out;
		}
		/* the case's plan, when it says one, over what the SM was given */
		if (cfg->sl2vl) {
			qos_tables_set(&want[k], "qos_sl2vl", cfg->sl2vl, err, sizeof(err));
			snprintf(want[k].src_sl2vl, sizeof(want[k].src_sl2vl), "the plan (sl2vl:)");
		}
		if (cfg->vlarb_high) {
			qos_tables_set(&want[k], "qos_vlarb_high", cfg->vlarb_high, err, sizeof(err));
			snprintf(want[k].src_high, sizeof(want[k].src_high), "the plan (vlarb_high:)");
		}
		if (cfg->vlarb_low) {
			qos_tables_set(&want[k], "qos_vlarb_low", cfg->vlarb_low, err, sizeof(err));
			snprintf(want[k].src_low, sizeof(want[k].src_low), "the plan (vlarb_low:)");
		}
	}
	if (!ibkind_tool(ctx, discover, &text, why, sizeof(why))) {
		rq_result_set(ctx->main, RQ_ERROR, "%s", why);
		goto out;
	}
	if (ibnet_parse(text.buf, text.len, "ibnetdiscover", &t, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "ibnetdiscover output not understood: %s", err);
		goto out;
	}
	/* every cabled port: a CA port by its own LID, a switch port by the switch's LID */
	ps.v = xcalloc(t.nlinks * 2 + 1, sizeof(*ps.v));
	for (size_t i = 0; i < t.nlinks; i++) {
		const struct ibnet_link *k = &t.links[i];

		for (int end = 0; end < 2; end++) {
			int n = end ? k->b : k->a, port = end ? k->bport : k->aport;
			bool sw = t.nodes[n].is_switch;
			unsigned lid = sw ? t.nodes[n].lid : end ? k->blid : k->alid;

			if (!lid) {
				ibkind_problem(&s.sl_msg, &s.sl_bad, "%s port %d: no LID, not asked", t.nodes[n].desc, port);
				continue;
			}
			ps.v[ps.n++] = (struct fq_port){ t.nodes[n].desc, lid, port, sw };
		}
	}
	/*
	 * opensm folds the tables onto the OperVLs it set on its next sweep:
	 * judged only once two reads a sweep apart agree
	 */
	if (ibkind_settled(ctx, "sl2vl_vlarb_tables", read_tables, &ps, &snap, why, sizeof(why)) < 0)
		goto out;
	sp = snap.buf;
	for (size_t i = 0; i < ps.n; i++)
		check_port(ctx, &s, &want[ps.v[i].sw], ps.v[i].who, ps.v[i].lid, ps.v[i].port, ps.v[i].sw, &sp);
	rq_figure_add(ctx->main, "ports", s.ports, "");
	rq_judge(ctx->main, s.ports > 0, "%u ports asked for their SL2VL and VLArb tables; expected: %s, %s, %s",
		 s.ports, want[0].src_sl2vl, want[0].src_high, want[0].src_low);
	if (policy_path) {
		struct rq_result *row = rq_ctx_row(ctx, "policy", 0);
		struct sb pol = SB_INIT;
		struct qos_policy p;
		static const int caps[] = { 0, 1, 2, 4, 8, 15 };
		struct qos_lint_opts o = { .vlcap = caps[s.min_opvls > 0 && s.min_opvls <= 5 ? s.min_opvls : 5] };

		struct sb refused = SB_INIT;
		const char *log = fw->sm_log[0] ? fw->sm_log : NULL;

		/*
		 * What the SM made of it: opensm drops a policy it cannot parse or
		 * validate and runs without it (osm_qos_parser_y.y: ERR AC05 at the
		 * line, then AC03; AC04 after validation; AC01 unreadable), which a
		 * grammar check alone cannot see: an IPoIB rule needs its partition
		 * to have two full members in what partitions.conf made.
		 */
		if (ibkind_log_lines(log, "ERR AC01", &refused, 3) + ibkind_log_lines(log, "ERR AC05", &refused, 3) +
		    ibkind_log_lines(log, "ERR AC03", &refused, 1) + ibkind_log_lines(log, "ERR AC04", &refused, 1) +
		    ibkind_log_lines(log, "ERR AC10", &refused, 1)) {
			rq_judge(row, false, "opensm did not take %s and runs without a QoS policy: %s", policy_path,
				 refused.buf);
		} else if (read_file(policy_path, &pol, 16u << 20) < 0) {
			rq_judge(row, false, "cannot read %s", policy_path);
		} else if (qos_policy_lint(pol.buf, pol.len, &o, &p)) {
			for (size_t i = 0; i < p.nd; i++)
				if (!p.d[i].warning) {
					rq_judge(row, false, "%s:%u:%u: %s (%u error(s))", policy_path, p.d[i].line, p.d[i].col,
						 p.d[i].msg, p.errors);
					break;
				}
			qos_policy_release(&p);
		} else {
			rq_judge(row, true, "%s: %u port group(s), %u QoS level(s), %u match rule(s), %u ULP rule(s), "
				 "VLs within VL0-%d", policy_path, p.port_groups, p.qos_levels, p.match_rules, p.ulp_rules,
				 o.vlcap - 1);
			qos_policy_release(&p);
		}
		sb_release(&pol);
		sb_release(&refused);
	}
	struct rq_result *row = rq_ctx_row(ctx, "sl2vl", 0);

	rq_figure_add(row, "bad_ports", s.sl_bad, "");
	if (s.sl_bad > 5)
		sb_addf(&s.sl_msg, "; and %u more", s.sl_bad - 5);
	if (s.sl_bad)
		rq_judge(row, false, "%u problem(s): %s", s.sl_bad, s.sl_msg.buf);
	else
		rq_judge(row, true, "%u ports, %u SL2VL rows as %s asks", s.ports, s.sl_rows, want[0].src_sl2vl);
	row = rq_ctx_row(ctx, "vlarb", 0);
	rq_figure_add(row, "bad_ports", s.arb_bad, "");
	if (s.arb_bad > 5)
		sb_addf(&s.arb_msg, "; and %u more", s.arb_bad - 5);
	if (s.arb_bad)
		rq_judge(row, false, "%u problem(s): %s", s.arb_bad, s.arb_msg.buf);
	else
		rq_judge(row, true, "%u ports, high and low tables as %s and %s ask", s.ports, want[0].src_high,
			 want[0].src_low);
out:
	free(ps.v);
	sb_release(&snap);
	ibnet_release(&t);
	sb_release(&conf);
	sb_release(&text);
	sb_release(&s.sl_msg);
	sb_release(&s.arb_msg);
}

const struct rq_kind rq_kind_fabric_qos = {
	.name = "fabric-qos",
	.summary = "every port's SL2VL and VL arbitration tables are what the QoS configuration asks",
	.doc = "The tables opensm -Q programs (opensm.conf's qos_* options: qos_ca_* on CA ports, qos_swe_* on "
	       "switch ports, else qos_*, else opensm's defaults, each VL masked to the port's OperVLs; the "
	       "policy's qos-setup is ignored by opensm) compared with what every cabled port answers "
	       "(smpquery portinfo, sl2vl, vlarb by LID).  The target's SM gets the case's sm_config: and "
	       "qos_policy:; sl2vl:, vlarb_high:, vlarb_low: plan other tables.  Rows: policy (FAIL quoting "
	       "opensm's ERR AC lines when it dropped the qos-policy.conf, else the policy linted against "
	       "opensm's grammar with the ports' smallest OperVLs as VLCap), "
	       "sl2vl (every in/out row of every port; a VL beyond a port's OperVLs that opensm folds onto "
	       "another is named), vlarb (high and low tables); each bad port named.  Read-only.",
	.keys = fq_keys,
	.cfg_size = sizeof(struct fq_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.validate = fq_validate,
	.run = fq_run,
};
