/* SPDX-License-Identifier: MIT */
/*
 * Forwarding tables, QoS tables, SA records and the error sweep (see
 * parse_fabric.h).  Formats from infiniband-diags' ibroute.c (dump_fts
 * prints the same blocks), smpquery.c (sl2vl_dump, vlarb), ibqueryerrors.c
 * and saquery.c, checked against what the tools print on ibsim and the
 * published samples.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "parsers/parse_fabric.h"
#include "parsers/parse_ibdiag.h"
#include "parsers/parsers.h"
#include "core/util.h"

static const char *skipws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Printable ASCII only: the tools' names of fields and counters are. */
static bool ascii_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

/* ---- forwarding tables ---- */

static int lft_header(const char *s, struct ib_lft *sw)
{
	const char *p, *g, *o, *c;
	unsigned lo, hi;

	memset(sw, 0, sizeof(*sw));
	if (sscanf(s, "Unicast lids [0x%x-0x%x] of switch ", &lo, &hi) != 2)
		return -1;
	sw->lo = lo;
	sw->hi = hi;
	/* sscanf counts the two numbers even when the literal after them differs */
	p = strstr(s, "] of switch ");
	if (!p)
		return -1;
	p += 12;
	if (str_starts(p, "Lid "))
		sw->lid = (unsigned)strtoul(p + 4, NULL, 10);
	else if (!str_starts(p, "DR path "))
		return -1;
	g = strstr(p, " guid 0x");
	if (!g)
		return -1;
	sw->guid = strtoull(g + 6, NULL, 16);
	o = strchr(g, '(');
	c = o ? strrchr(o, ')') : NULL;
	if (!o || !c)
		return -1;
	snprintf(sw->name, sizeof(sw->name), "%.*s", (int)(c - o - 1), o + 1);
	return 0;
}

int lfts_parse(const char *text, size_t len, struct ib_lfts *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	size_t cape = 0;
	int ret = 0;
	bool open = false;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while (!ret && (s = rq_lines_next(&l))) {
		const char *t = skipws(s);
		unsigned lid, port, n;

		if (ib_diag_noise(s) || str_starts(t, "Lid  Out") || str_starts(t, "Port     Info") ||
		    !strcmp(t, "Port     Info") || str_starts(t, "*** WARNING ***") ||
		    !strcmp(t, "Port Info"))
			continue;
		if (str_starts(t, "Unicast lids [")) {
			struct ib_lft sw;

			if (open) {
				ret = rq_parse_error(err, errsz, l.no, "a new table before the \"valid lids dumped\" line of %s",
						     out->sw[out->nsw - 1].name);
				break;
			}
			if (lft_header(t, &sw)) {
				ret = rq_parse_error(err, errsz, l.no, "unreadable table header \"%.60s\"", t);
				break;
			}
			sw.first = out->ne;
			out->sw = xrealloc(out->sw, (out->nsw + 1) * sizeof(*out->sw));
			out->sw[out->nsw++] = sw;
			open = true;
		} else if (str_starts(t, "Multicast mlids")) {
			ret = rq_parse_error(err, errsz, l.no, "a multicast table (ibroute -M): not unicast routes");
		} else if (strstr(t, " valid lids dumped") && sscanf(t, "%u valid lids dumped", &n) == 1) {
			struct ib_lft *sw = open ? &out->sw[out->nsw - 1] : NULL;

			if (!sw)
				ret = rq_parse_error(err, errsz, l.no, "\"valid lids dumped\" without a table");
			else if (n != sw->n)
				ret = rq_parse_error(err, errsz, l.no, "%s: %u valid lids dumped, %zu lines read (output cut?)",
						     sw->name, n, sw->n);
			open = false;
		} else if (str_starts(t, "0x") && sscanf(t, "0x%x %u", &lid, &port) == 2) {
			struct ib_lft *sw = open ? &out->sw[out->nsw - 1] : NULL;

			if (!sw || lid > 0xffff || port > 255) {
				ret = rq_parse_error(err, errsz, l.no, sw ? "LID or port out of range" : "a route outside a table");
				break;
			}
			if (out->ne == cape) {
				cape = cape ? 2 * cape : 1024;
				out->e = xrealloc(out->e, cape * sizeof(*out->e));
			}
			out->e[out->ne++] = (struct ib_lft_entry){ .lid = (uint16_t)lid, .port = (uint8_t)port };
			sw->n++;
		} else {
			ret = rq_parse_error(err, errsz, l.no, "not a forwarding-table line: \"%.60s\"", t);
		}
	}
	rq_lines_release(&l);
	if (!ret && open)
		ret = rq_parse_error(err, errsz, 0, "%s: the table ends without its \"valid lids dumped\" line (output cut?)",
				     out->sw[out->nsw - 1].name);
	if (!ret && !out->nsw)
		ret = rq_parse_error(err, errsz, 0, "no \"Unicast lids\" table: not dump_fts/ibroute output");
	if (ret)
		ib_lfts_release(out);
	return ret;
}

void ib_lfts_release(struct ib_lfts *l)
{
	free(l->sw);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

/* ---- SL2VL ---- */

/* "| 0| 1|...|15|" into v[]; the number of cells read. */
static int cells(const char *p, unsigned *v, int max, int base)
{
	int n = 0;

	if (!p)		/* the callers' strchr found no cell */
		return -1;
	p = strchr(p, '|');
	while (p && p[1] && n < max) {
		char *end;
		const char *q = skipws(p + 1);

		if (*q == '|' || !*q)
			break;
		v[n] = (unsigned)strtoul(q, &end, base);
		if (end == q)
			return -1;
		n++;
		p = strchr(end, '|');
	}
	return n;
}

int sl2vl_parse(const char *text, size_t len, struct ib_sl2vl *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	int ret = 0;
	bool header = false;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while (!ret && (s = rq_lines_next(&l))) {
		const char *t = skipws(s);
		int in, o;
		unsigned v[16];

		if (ib_diag_noise(s))
			continue;
		if (sscanf(t, "# SL2VL table: Lid %u", &out->lid) == 1) {
			header = true;
		} else if (str_starts(t, "#") && strstr(t, "SL: |")) {
			continue;
		} else if (sscanf(t, "ports: in %d, out %d:", &in, &o) == 2) {
			struct ib_sl2vl_row r = { .in = in, .out = o };

			if (!header) {
				ret = rq_parse_error(err, errsz, l.no, "a row before the \"# SL2VL table\" header");
				break;
			}
			if (cells(strchr(t, '|'), v, 16, 10) != 16) {
				ret = rq_parse_error(err, errsz, l.no, "expected 16 VLs (SL0-15) in \"%.60s\"", t);
				break;
			}
			for (int i = 0; i < 16; i++) {
				if (v[i] > 15) {
					ret = rq_parse_error(err, errsz, l.no, "VL %u of SL%d is beyond 15", v[i], i);
					break;
				}
				r.vl[i] = (uint8_t)v[i];
			}
			out->rows = xrealloc(out->rows, (out->n + 1) * sizeof(*out->rows));
			out->rows[out->n++] = r;
		} else {
			ret = rq_parse_error(err, errsz, l.no, "not an SL2VL table line: \"%.60s\"", t);
		}
	}
	rq_lines_release(&l);
	if (!ret && !header)
		ret = rq_parse_error(err, errsz, 0, "no \"# SL2VL table\" header: not smpquery sl2vl output");
	if (!ret && !out->n)
		ret = rq_parse_error(err, errsz, 0, "an SL2VL table without rows");
	if (ret)
		ib_sl2vl_release(out);
	return ret;
}

void ib_sl2vl_release(struct ib_sl2vl *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* ---- VL arbitration ---- */

int vlarb_parse(const char *text, size_t len, struct ib_vlarb *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	int ret = 0;
	struct ib_vlarb_table *cur = NULL;
	bool header = false;
	size_t vl_row_start = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while (!ret && (s = rq_lines_next(&l))) {
		const char *t = skipws(s);
		unsigned v[IB_VLARB_MAX];
		int n;

		if (ib_diag_noise(s))
			continue;
		if (sscanf(t, "# VLArbitration tables: Lid %u port %d LowCap %u HighCap %u", &out->lid, &out->port,
			   &out->low_cap, &out->high_cap) == 4) {
			header = true;
		} else if (str_starts(t, "# Low priority VL Arbitration Table")) {
			cur = &out->low;
		} else if (str_starts(t, "# High priority VL Arbitration Table")) {
			cur = &out->high;
		} else if (str_starts(t, "VL") && strchr(t, ':') && !str_starts(t, "VLArb")) {
			if (!cur || !header) {
				ret = rq_parse_error(err, errsz, l.no, "a VL row outside a table");
				break;
			}
			n = cells(strchr(t, '|'), v, IB_VLARB_MAX, 0);
			if (n <= 0 || cur->n + (size_t)n > IB_VLARB_MAX) {
				ret = rq_parse_error(err, errsz, l.no, "unreadable VL row \"%.60s\"", t);
				break;
			}
			vl_row_start = cur->n;
			for (int i = 0; i < n; i++) {
				if (v[i] > 15) {
					ret = rq_parse_error(err, errsz, l.no, "VL %u beyond 15", v[i]);
					break;
				}
				cur->vl[cur->n + (size_t)i] = (uint8_t)v[i];
			}
			cur->n += (size_t)n;
		} else if (str_starts(t, "WEIGHT") && strchr(t, ':')) {
			if (!cur || !cur->n) {
				ret = rq_parse_error(err, errsz, l.no, "a WEIGHT row without its VL row");
				break;
			}
			n = cells(strchr(t, '|'), v, IB_VLARB_MAX, 0);
			if (n != (int)(cur->n - vl_row_start)) {
				ret = rq_parse_error(err, errsz, l.no, "%d weights for %zu VLs", n, cur->n - vl_row_start);
				break;
			}
			for (int i = 0; i < n; i++) {
				if (v[i] > 255) {
					ret = rq_parse_error(err, errsz, l.no, "weight %u beyond 255", v[i]);
					break;
				}
				cur->weight[vl_row_start + (size_t)i] = (uint8_t)v[i];
			}
		} else {
			ret = rq_parse_error(err, errsz, l.no, "not a VL arbitration line: \"%.60s\"", t);
		}
	}
	rq_lines_release(&l);
	if (!ret && !header)
		ret = rq_parse_error(err, errsz, 0, "no \"# VLArbitration tables\" header: not smpquery vlarb output");
	return ret;
}

/* ---- ibqueryerrors ---- */

int ibqueryerrors_parse(const char *text, size_t len, struct ib_qerrs *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s, node[72] = "";
	uint64_t node_guid = 0;
	int ret = 0;
	bool in_node = false;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while (!ret && (s = rq_lines_next(&l))) {
		const char *t = skipws(s);
		unsigned a, b;

		if (ib_diag_noise(s))
			continue;
		if (str_starts(t, "Errors for ")) {
			/* a switch: "Errors for 0x2c90200000001 "leaf01""; a CA: "Errors for "Hca2"" */
			const char *q = strchr(t, '"'), *e = q ? strrchr(q + 1, '"') : NULL;

			node_guid = str_starts(t, "Errors for 0x") ? strtoull(t + 11, NULL, 16) : 0;
			snprintf(node, sizeof(node), "%.*s", e ? (int)(e - q - 1) : 0, e ? q + 1 : "");
			in_node = true;
		} else if (str_starts(t, "GUID 0x") && strstr(t, " port ")) {
			struct ib_qerr_port p = { .guid = strtoull(t + 5, NULL, 16) };
			const char *pp = strstr(t, " port ") + 6, *c;

			if (!in_node) {
				ret = rq_parse_error(err, errsz, l.no, "a port line before any \"Errors for\" line");
				break;
			}
			snprintf(p.node, sizeof(p.node), "%s", node);
			p.port = str_starts(pp, "ALL") ? -1 : atoi(pp);
			for (c = strchr(pp, '['); c; c = strchr(c + 1, '[')) {
				char name[40];
				unsigned long long v;

				if (sscanf(c, "[%39s == %llu]", name, &v) != 2 || !ascii_text(name, strlen(name))) {
					/* counter names are ASCII words (and become JSON keys) */
					ret = rq_parse_error(err, errsz, l.no, "unreadable counter \"%.40s\"", c);
					break;
				}
				if (p.nc < ARRAY_SIZE(p.c)) {
					snprintf(p.c[p.nc].name, sizeof(p.c[0].name), "%s", name);
					p.c[p.nc++].value = v;
				}
			}
			(void)node_guid;
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			out->v[out->n++] = p;
		} else if (str_starts(t, "## Summary:") && sscanf(t, "## Summary: %u nodes checked, %u bad nodes found", &a, &b) == 2) {
			out->nodes_checked = a;
			out->bad_nodes = b;
			out->summary = true;
		} else if (strstr(t, "ports checked") && sscanf(t, "## %u ports checked, %u ports have errors beyond threshold", &a, &b) == 2) {
			out->ports_checked = a;
			out->bad_ports = b;
		} else if (str_starts(t, "## Thresholds:") || str_starts(t, "## Suppressed:") ||
			   str_starts(t, "Link info:") || str_starts(t, "##")) {
			continue;
		} else {
			ret = rq_parse_error(err, errsz, l.no, "not an ibqueryerrors line: \"%.60s\"", t);
		}
	}
	rq_lines_release(&l);
	if (!ret && !out->summary)
		ret = rq_parse_error(err, errsz, 0, "no \"## Summary\" line: not ibqueryerrors output (or cut)");
	if (ret)
		ib_qerrs_release(out);
	return ret;
}

void ib_qerrs_release(struct ib_qerrs *q)
{
	free(q->v);
	memset(q, 0, sizeof(*q));
}

/* ---- saquery records ---- */

int saquery_parse(const char *text, size_t len, struct ib_sa_records *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while (!ret && (s = rq_lines_next(&l))) {
		const char *t = skipws(s), *dots;
		size_t kl;

		if (ib_diag_noise(s))
			continue;
		if (str_ends(t, "Record dump:")) {
			struct ib_sa_record r = { 0 };

			snprintf(r.type, sizeof(r.type), "%.*s", (int)(strlen(t) - 6), t);
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			out->v[out->n++] = r;
			continue;
		}
		dots = strstr(t, "..");
		if (!out->n || !dots || dots == t) {
			ret = rq_parse_error(err, errsz, l.no, "not a saquery record line: \"%.60s\"", t);
			break;
		}
		struct ib_sa_record *r = &out->v[out->n - 1];
		struct ib_sa_field f = { 0 };
		const char *v = dots;

		kl = (size_t)(dots - t);
		/* saquery's field names are ASCII words; anything else is not its
		 * output (and would be no JSON key) */
		if (!ascii_text(t, kl)) {
			ret = rq_parse_error(err, errsz, l.no, "a field name that is not ASCII text");
			break;
		}
		while (*v == '.')
			v++;
		snprintf(f.key, sizeof(f.key), "%.*s", (int)kl, t);
		snprintf(f.value, sizeof(f.value), "%s", v);
		r->f = xrealloc(r->f, (r->n + 1) * sizeof(*r->f));
		r->f[r->n++] = f;
	}
	rq_lines_release(&l);
	if (!ret && !out->n)
		ret = rq_parse_error(err, errsz, 0, "no \"Record dump:\" block: not saquery output");
	if (ret)
		ib_sa_records_release(out);
	return ret;
}

void ib_sa_records_release(struct ib_sa_records *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].f);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

const char *ib_sa_get(const struct ib_sa_record *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->f[i].key, key))
			return r->f[i].value;
	return NULL;
}

/* ---- `rdmaqual parse` adapters ---- */

static int lfts_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_lfts l;
	json_t *sws;

	if (lfts_parse(text, len, &l, err, errsz))
		return -EINVAL;
	sws = json_array();
	for (size_t i = 0; i < l.nsw; i++) {
		const struct ib_lft *sw = &l.sw[i];
		json_t *routes = json_object();
		char g[24], k[8];

		for (size_t j = 0; j < sw->n; j++) {
			snprintf(k, sizeof(k), "%u", l.e[sw->first + j].lid);
			json_object_set_new(routes, k, json_integer(l.e[sw->first + j].port));
		}
		snprintf(g, sizeof(g), "0x%016" PRIx64, sw->guid);
		json_array_append_new(sws, json_pack("{s:s, s:i, s:o, s:i, s:i, s:i, s:o}", "guid", g, "lid", (int)sw->lid,
						     "name", rq_json_text(sw->name), "lid_lo", (int)sw->lo, "lid_hi",
						     (int)sw->hi, "valid_lids", (int)sw->n, "routes", routes));
	}
	*out = json_pack("{s:o, s:i}", "switches", sws, "routes", (int)l.ne);
	ib_lfts_release(&l);
	return 0;
}

static int sl2vl_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_sl2vl t;
	json_t *rows;

	if (sl2vl_parse(text, len, &t, err, errsz))
		return -EINVAL;
	rows = json_array();
	for (size_t i = 0; i < t.n; i++) {
		json_t *vl = json_array();

		for (int j = 0; j < 16; j++)
			json_array_append_new(vl, json_integer(t.rows[i].vl[j]));
		json_array_append_new(rows, json_pack("{s:i, s:i, s:o}", "in", t.rows[i].in, "out", t.rows[i].out, "vl", vl));
	}
	*out = json_pack("{s:i, s:o}", "lid", (int)t.lid, "rows", rows);
	ib_sl2vl_release(&t);
	return 0;
}

static json_t *vlarb_json(const struct ib_vlarb_table *t)
{
	json_t *vl = json_array(), *w = json_array();

	for (size_t i = 0; i < t->n; i++) {
		json_array_append_new(vl, json_integer(t->vl[i]));
		json_array_append_new(w, json_integer(t->weight[i]));
	}
	return json_pack("{s:o, s:o}", "vl", vl, "weight", w);
}

static int vlarb_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_vlarb v;

	if (vlarb_parse(text, len, &v, err, errsz))
		return -EINVAL;
	*out = json_pack("{s:i, s:i, s:i, s:i, s:o, s:o}", "lid", (int)v.lid, "port", v.port, "low_cap",
			 (int)v.low_cap, "high_cap", (int)v.high_cap, "low", vlarb_json(&v.low), "high",
			 vlarb_json(&v.high));
	return 0;
}

static int qerr_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_qerrs q;
	json_t *ports;

	if (ibqueryerrors_parse(text, len, &q, err, errsz))
		return -EINVAL;
	ports = json_array();
	for (size_t i = 0; i < q.n; i++) {
		json_t *c = json_object();
		char g[24];

		for (size_t j = 0; j < q.v[i].nc; j++)
			json_object_set_new(c, q.v[i].c[j].name, json_integer((json_int_t)q.v[i].c[j].value));
		snprintf(g, sizeof(g), "0x%016" PRIx64, q.v[i].guid);
		json_array_append_new(ports, json_pack("{s:s, s:o, s:o, s:o}", "guid", g, "node", rq_json_text(q.v[i].node),
						       "port", q.v[i].port < 0 ? json_string("ALL") : json_integer(q.v[i].port),
						       "counters", c));
	}
	*out = json_pack("{s:o, s:i, s:i, s:i, s:i}", "ports", ports, "nodes_checked", (int)q.nodes_checked,
			 "bad_nodes", (int)q.bad_nodes, "ports_checked", (int)q.ports_checked, "bad_ports",
			 (int)q.bad_ports);
	ib_qerrs_release(&q);
	return 0;
}

static int sa_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_sa_records r;
	json_t *recs;

	if (saquery_parse(text, len, &r, err, errsz))
		return -EINVAL;
	recs = json_array();
	for (size_t i = 0; i < r.n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "record", rq_json_text(r.v[i].type));
		for (size_t j = 0; j < r.v[i].n; j++)
			json_object_set_new(o, r.v[i].f[j].key, rq_json_text(r.v[i].f[j].value));
		json_array_append_new(recs, o);
	}
	*out = json_pack("{s:o}", "records", recs);
	ib_sa_records_release(&r);
	return 0;
}

const struct rq_parser rq_parser_dump_fts = {
	.name = "dump_fts",
	.help = "dump_fts / dump_lfts / ibroute output: per switch its unicast forwarding table (LID -> out port)",
	.parse = lfts_adapter,
};

const struct rq_parser rq_parser_sl2vl = {
	.name = "sl2vl",
	.help = "smpquery sl2vl output: per (in, out) port pair the VL of SL0-15",
	.parse = sl2vl_adapter,
};

const struct rq_parser rq_parser_vlarb = {
	.name = "vlarb",
	.help = "smpquery vlarb output: a port's low and high priority VL arbitration tables (VL, weight)",
	.parse = vlarb_adapter,
};

const struct rq_parser rq_parser_ibqueryerrors = {
	.name = "ibqueryerrors",
	.help = "ibqueryerrors output: per node and port the counters beyond threshold, and the summary",
	.parse = qerr_adapter,
};

const struct rq_parser rq_parser_saquery = {
	.name = "saquery",
	.help = "saquery record dumps (NodeRecord, PortInfoRecord, ...): every record's fields",
	.parse = sa_adapter,
};
