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
 * tables a port gets come from opensm.conf's qos_* options, which
 * fabric/qos.h turns into those tables.
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

/* ---- opensm's value syntax (also read by fabric/qos.c) */

/* One item of a value split at a separator: [s, s + n), trimmed, and its column. */
struct qos_item {
	const char *s;
	size_t n;
	unsigned col;
};

/* v split at sep into at most max items, col being v's column; the count (even past max). */
size_t qos_split(const char *v, unsigned col, char sep, struct qos_item *it, size_t max);
/* opensm's numbers: 0x hex or decimal digits, n bytes of s. */
bool qos_number(const char *s, size_t n, uint64_t *v);
/*
 * The value of KEY in an opensm.conf text ("key value" lines; the last
 * wins, as in opensm), malloc'd, and its line in *at; NULL when absent
 * or "(null)", opensm's unset.
 */
char *qos_conf_value(const char *conf, size_t len, const char *key, unsigned *at);

#endif
