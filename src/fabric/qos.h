/* SPDX-License-Identifier: MIT */
/*
 * The QoS tables opensm programs into each port (osm_qos.c,
 * qos_build_config): the SL2VL table and the high and low VLArb tables,
 * from opensm.conf's qos_* options (qos_sl2vl, qos_vlarb_high,
 * qos_vlarb_low, qos_high_limit, and their qos_ca_, qos_sw0_, qos_swe_ and
 * qos_rtr_ variants, with opensm's fallbacks and defaults).  The fabric-qos
 * kind compares what each port holds against them.  The policy file
 * (qos-policy.conf) is linted by parsers/qos_policy.h, which opensm's
 * tables do not come from: opensm parses its qos-setup section and ignores
 * it.
 */
#ifndef RQ_FABRIC_QOS_H
#define RQ_FABRIC_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
