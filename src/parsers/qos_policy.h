/* SPDX-License-Identifier: MIT */
/*
 * opensm's QoS configuration, read the way opensm reads it.
 *
 * qos-policy.conf (opensm -Q -Y FILE, doc/QoS_management_in_OpenSM.txt):
 * a lint against the grammar of opensm's osm_qos_parser_l.l/_y.y, with
 * the checks opensm's parser and osm_qos_policy_validate() make and those
 * it does not (it casts an SL of 20 into its 4 bits): sections port-groups,
 * qos-setup, qos-levels, qos-match-rules and qos-ulps, each block closed by
 * its end-*; unknown keywords, or keywords of another block; port groups
 * and QoS levels used but not defined, or defined twice; no DEFAULT level;
 * SL outside 0..15; VLs of sl2vl-table/vlarb-high/vlarb-low beyond the
 * ports' VLCap; mtu-limit, rate-limit, pkeys, node types, port names
 * ("desc/Pnum").  Each problem is named line:column.  One statement a line
 * (opensm's lexer allows several; no policy in its documentation does).
 *
 * opensm parses the qos-setup section and ignores it: the SL2VL and VLArb
 * tables a port gets come from opensm.conf's qos_* options (qos_sl2vl,
 * qos_vlarb_high, qos_vlarb_low, qos_high_limit, and their qos_ca_,
 * qos_sw0_, qos_swe_, qos_rtr_ variants).  qos_tables_build() computes
 * those tables as opensm's osm_qos.c does, for the fabric-qos kind.
 *
 * Pure: text in, results out.
 */
#ifndef RQ_QOS_POLICY_H
#define RQ_QOS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct qos_diag {
	unsigned line, col;
	bool warning;		/* true: a note (the policy still works as opensm reads it) */
	char msg[240];
};

struct qos_policy {
	struct qos_diag *d;
	size_t nd;
	unsigned errors, warnings;
	unsigned port_groups, qos_levels, match_rules, ulp_rules;
	bool setup_tables;	/* qos-setup holds sl2vl-tables or vlarb-tables (ignored by opensm) */
};

struct qos_lint_opts {
	int vlcap;		/* data VLs of the ports (VLCap: 1, 2, 4, 8, 15); 0: 15 */
};

/* Lint a policy; 0 when it has no error (warnings allowed), else -EINVAL.  out->d lists both. */
int qos_policy_lint(const char *text, size_t len, const struct qos_lint_opts *o, struct qos_policy *out);
void qos_policy_release(struct qos_policy *p);

/* ---- the tables opensm programs (osm_qos.c qos_build_config) */
enum qos_port_type { QOS_CA, QOS_SW0, QOS_SWE, QOS_RTR };

struct qos_tables {
	uint8_t sl2vl[16];
	uint8_t high_vl[64], high_w[64];	/* vlarb-high: 64 entries (two blocks of 32) */
	uint8_t low_vl[64], low_w[64];
	int high_limit;
	char src_sl2vl[40], src_high[40], src_low[40];	/* the option each came from, or "opensm's default" */
};

/*
 * The tables of one port type from an opensm.conf text (NULL: none),
 * with opensm's fallbacks: qos_<type>_X, else qos_X, else opensm's
 * default.  0, or -EINVAL with err naming line and option of a value that
 * does not parse (opensm would read it as 0s).
 */
int qos_tables_build(const char *conf, size_t len, enum qos_port_type type, struct qos_tables *t,
		     char *err, size_t errsz);
/* Parse one option value into t (name: "qos_sl2vl", "qos_vlarb_high" or "qos_vlarb_low"). */
int qos_tables_set(struct qos_tables *t, const char *name, const char *value, char *err, size_t errsz);
/* Is "qos TRUE" in the opensm.conf text? */
bool qos_conf_enabled(const char *conf, size_t len);

#endif
