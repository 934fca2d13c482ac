/* SPDX-License-Identifier: MIT */
/* opensm's QoS tables from opensm.conf (fabric/qos.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/util.h"
#include "parsers/qos_policy.h"
#include "fabric/qos.h"

static const char *const type_prefix[] = { [QOS_CA] = "ca_", [QOS_SW0] = "sw0_", [QOS_SWE] = "swe_", [QOS_RTR] = "rtr_" };

bool qos_conf_enabled(const char *conf, size_t len)
{
	unsigned at;
	char *v = conf ? qos_conf_value(conf, len, "qos", &at) : NULL;
	bool on = v && !strcasecmp(v, "TRUE");

	free(v);
	return on;
}

int qos_tables_set(struct qos_tables *t, const char *name, const char *value, char *err, size_t errsz)
{
	struct qos_item it[80];
	size_t n = qos_split(value, 1, ',', it, ARRAY_SIZE(it));
	uint64_t a, b;

	if (!strcmp(name, "qos_sl2vl")) {
		if (n != 16) {
			snprintf(err, errsz, "%s: %zu values, one per SL (16) expected", name, n);
			return -EINVAL;
		}
		for (size_t i = 0; i < 16; i++) {
			if (!qos_number(it[i].s, it[i].n, &a) || a > 15) {
				snprintf(err, errsz, "%s: \"%.*s\" is not a VL (0 to 15)", name, (int)it[i].n, it[i].s);
				return -EINVAL;
			}
			t->sl2vl[i] = (uint8_t)a;
		}
		return 0;
	}
	bool high = !strcmp(name, "qos_vlarb_high");
	uint8_t *vl = high ? t->high_vl : t->low_vl, *w = high ? t->high_w : t->low_w;

	if (!high && strcmp(name, "qos_vlarb_low")) {
		snprintf(err, errsz, "%s: not a table option", name);
		return -EINVAL;
	}
	if (n > 64) {
		snprintf(err, errsz, "%s: %zu entries, a VLArb table has 64", name, n);
		return -EINVAL;
	}
	memset(vl, 0, 64);
	memset(w, 0, 64);
	for (size_t i = 0; i < n; i++) {
		const char *c = memchr(it[i].s, ':', it[i].n);

		if (!c || !qos_number(it[i].s, (size_t)(c - it[i].s), &a) ||
		    !qos_number(c + 1, it[i].n - (size_t)(c + 1 - it[i].s), &b) || a > 14 || b > 255) {
			snprintf(err, errsz, "%s: \"%.*s\" is not VL:WEIGHT (VL 0 to 14, weight 0 to 255)", name,
				 (int)it[i].n, it[i].s);
			return -EINVAL;
		}
		vl[i] = (uint8_t)a;
		w[i] = (uint8_t)b;
	}
	return 0;
}

int qos_tables_build(const char *conf, size_t len, enum qos_port_type type, struct qos_tables *t,
		     char *err, size_t errsz)
{
	static const struct {
		const char *opt, *def;
	} opts[] = {
		/* osm_base.h OSM_DEFAULT_QOS_* */
		{ "sl2vl", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7" },
		{ "vlarb_high", "0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0" },
		{ "vlarb_low", "0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4" },
	};
	char *src[] = { t->src_sl2vl, t->src_high, t->src_low };

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		char k1[40], k2[40], generic[40], e[200];
		unsigned at = 0;
		char *v = NULL;

		snprintf(k1, sizeof(k1), "qos_%s%s", type_prefix[type], opts[i].opt);
		snprintf(k2, sizeof(k2), "qos_%s", opts[i].opt);
		snprintf(generic, sizeof(generic), "qos_%s", opts[i].opt);
		if (conf && (v = qos_conf_value(conf, len, k1, &at)))
			snprintf(src[i], 40, "%s", k1);
		else if (conf && (v = qos_conf_value(conf, len, k2, &at)))
			snprintf(src[i], 40, "%s", k2);
		else
			snprintf(src[i], 40, "opensm's default");
		if (qos_tables_set(t, generic, v ? v : opts[i].def, e, sizeof(e))) {
			snprintf(err, errsz, "line %u: %s (%s)", at, e, src[i]);
			free(v);
			return -EINVAL;
		}
		free(v);
	}
	{
		char k1[40];
		unsigned at;
		char *v;

		snprintf(k1, sizeof(k1), "qos_%shigh_limit", type_prefix[type]);
		v = conf ? qos_conf_value(conf, len, k1, &at) : NULL;
		if (!v && conf)
			v = qos_conf_value(conf, len, "qos_high_limit", &at);
		t->high_limit = v ? atoi(v) : 0;
		free(v);
	}
	return 0;
}
