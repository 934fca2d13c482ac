/* SPDX-License-Identifier: MIT */
/*
 * perftest output parser.  perftest prints a header of "Key : Value" pairs
 * (one or two per line, separated by tabs or by runs of spaces, depending
 * on version and on who pasted it), then a table whose header line names
 * its columns; rows are whitespace-separated numbers.  Columns are mapped
 * from the header, not assumed by position, so bw and lat tables, the
 * duration-mode latency table and the "sl" variant all take the same path.
 *
 * The --out_json file of the 4.5 build is not JSON (bare keys, bare
 * values, trailing commas); newer builds write valid JSON.  What jansson
 * refuses goes through lenient_json.c, a reader of a superset of JSON.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>
#include "parsers/lenient_json.h"
#include "parsers/parse_perftest.h"
#include "parsers/parsers.h"
#include "core/util.h"

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

void pt_report_init(struct pt_report *r)
{
	memset(r, 0, sizeof(*r));
	r->gid_index = -1;
}

void pt_report_release(struct pt_report *r)
{
	free(r->rows);
	pt_report_init(r);
}

static const char *const col_names[PT_NCOLS] = {
	[PT_C_BYTES] = "bytes", [PT_C_ITERS] = "iterations",
	[PT_C_BW_PEAK] = "bw_peak", [PT_C_BW_AVG] = "bw_avg",
	[PT_C_MSGRATE] = "msgrate_mpps",
	[PT_C_T_MIN] = "t_min_us", [PT_C_T_MAX] = "t_max_us",
	[PT_C_T_TYPICAL] = "t_typical_us", [PT_C_T_AVG] = "t_avg_us",
	[PT_C_T_STDEV] = "t_stdev_us", [PT_C_P99] = "p99_us",
	[PT_C_P999] = "p99_9_us", [PT_C_TPS] = "tps_avg", [PT_C_SL] = "sl",
};

const char *pt_col_name(enum pt_col c)
{
	return (unsigned)c < PT_NCOLS ? col_names[c] : "?";
}

const char *pt_unit_name(enum pt_unit u)
{
	switch (u) {
	case PT_MBS: return "MB/sec";
	case PT_MIBS: return "MiB/sec";
	case PT_GBS: return "Gb/sec";
	default: return "";
	}
}

double pt_gbps(const struct pt_report *r, double v)
{
	switch (r->unit) {
	case PT_MBS:
	case PT_MIBS:
		return v * 1048576.0 * 8.0 / 1e9;	/* perftest's MB is 2^20 */
	case PT_GBS:
		return v;
	default:
		return NAN;
	}
}

const struct pt_row *pt_find_row(const struct pt_report *r, uint64_t bytes)
{
	for (size_t i = r->nrows; i-- > 0;)
		if (r->rows[i].bytes == bytes)
			return &r->rows[i];
	return NULL;
}

static struct pt_row *add_row(struct pt_report *r)
{
	struct pt_row *row;

	r->rows = xrealloc(r->rows, (r->nrows + 1) * sizeof(*r->rows));
	row = &r->rows[r->nrows++];
	memset(row, 0, sizeof(*row));
	for (int i = 0; i < PT_NCOLS; i++)
		row->v[i] = NAN;
	return row;
}

/* ---- text output ---- */

/* Column titles as perftest prints them, matched by substring. */
static const struct {
	const char *title;
	enum pt_col col;
} col_titles[] = {
	{ "#bytes", PT_C_BYTES },
	{ "#iterations", PT_C_ITERS },
	{ "BW peak", PT_C_BW_PEAK },
	{ "BW average", PT_C_BW_AVG },
	{ "MsgRate", PT_C_MSGRATE },
	{ "t_min", PT_C_T_MIN },
	{ "t_max", PT_C_T_MAX },
	{ "t_typical", PT_C_T_TYPICAL },
	{ "t_avg", PT_C_T_AVG },
	{ "t_stdev", PT_C_T_STDEV },
	{ "99% percentile", PT_C_P99 },
	{ "99.9% percentile", PT_C_P999 },
	{ "tps average", PT_C_TPS },
	{ "#sl", PT_C_SL },
};

struct table {
	enum pt_col cols[PT_NCOLS];
	int ncols;
};

/* Map a table header line to its column order; false if it is not one. */
static bool parse_table_header(const char *s, struct table *t, struct pt_report *r)
{
	struct { const char *at; enum pt_col col; } found[PT_NCOLS];
	int n = 0;

	if (!str_starts(s, "#bytes"))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(col_titles); i++) {
		const char *p = strstr(s, col_titles[i].title);

		if (!p || n >= PT_NCOLS)
			continue;
		found[n].at = p;
		found[n].col = col_titles[i].col;
		n++;
	}
	/* insertion sort by position in the line */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && found[j].at < found[j - 1].at; j--) {
			__typeof__(found[0]) tmp = found[j];

			found[j] = found[j - 1];
			found[j - 1] = tmp;
		}
	for (int i = 0; i < n; i++)
		t->cols[i] = found[i].col;
	t->ncols = n;
	if (strstr(s, "BW ")) {
		r->kind = PT_BW;
		if (strstr(s, "[MiB/sec]"))
			r->unit = PT_MIBS;
		else if (strstr(s, "[Gb/sec]"))
			r->unit = PT_GBS;
		else if (strstr(s, "[MB/sec]"))
			r->unit = PT_MBS;
	} else if (strstr(s, "t_avg")) {
		r->kind = PT_LAT;
	}
	return n >= 2;
}

/* Split on whitespace into at most max numbers; -1 if a token is not a number. */
/*
 * A double outside the target type's range does not convert (UB): "1e30"
 * or "-5" in a mangled row.  Negative and NaN give 0, too large the maximum.
 */
static uint64_t to_u64(double d)
{
	if (!(d >= 0))
		return 0;
	return d >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)d;
}

static json_int_t to_i64(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 9223372036854775808.0)
		return INT64_MAX;
	return d < -9223372036854775808.0 ? INT64_MIN : (json_int_t)d;
}

static int split_numbers(const char *s, double *v, int max)
{
	int n = 0;

	while (*s) {
		char *end;

		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (n >= max)
			return -1;
		if (!isdigit((unsigned char)*s) && *s != '-' && *s != '.')
			return -1;
		v[n] = strtod(s, &end);
		if (end == s || (*end && !isspace((unsigned char)*end)))
			return -1;
		n++;
		s = end;
	}
	return n;
}

static void header_kv(struct pt_report *r, const char *key, const char *val)
{
	if (!strcasecmp(key, "Device"))
		copy_str(r->device, sizeof(r->device), val);
	else if (!strcasecmp(key, "Connection type"))
		copy_str(r->conn, sizeof(r->conn), val);
	else if (!strcasecmp(key, "Link type"))
		copy_str(r->link_type, sizeof(r->link_type), val);
	else if (!strcasecmp(key, "Mtu"))
		r->mtu = atoi(val);
	else if (!strcasecmp(key, "GID index"))
		r->gid_index = atoi(val);
	else if (!strcasecmp(key, "Number of qps"))
		r->qps = atoi(val);
	else if (!strcasecmp(key, "TX depth"))
		r->tx_depth = atoi(val);
}

/*
 * A header line holds one or two "Key : Value" pairs, separated by tabs or
 * by two or more spaces ("Dual-port       : OFF\t\tDevice         : rxe0",
 * "PCIe relax order: ON\t\tLock-free      : OFF", "rdma_cm QPs\t : OFF").
 * Cut the line into fields at such gaps; a field starting with ':' is the
 * value of the field before it, a field "K: V" holds both.
 */
static bool parse_header_line(struct pt_report *r, char *s)
{
	char *fields[8];
	int nf = 0;
	char *p = s;
	char key[64] = "";
	bool any = false;

	while (*p && nf < (int)ARRAY_SIZE(fields)) {
		char *start, *q;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '\t' && !(p[0] == ' ' && (p[1] == ' ' || p[1] == '\t')))
			p++;
		q = p;
		if (*p)
			p++;
		*q = '\0';
		fields[nf++] = start;
	}
	for (int i = 0; i < nf; i++) {
		char *f = fields[i];
		char *colon = strchr(f, ':');

		if (f[0] == ':') {
			if (key[0]) {
				header_kv(r, key, strtrim(f + 1));
				any = true;
			}
			key[0] = '\0';
		} else if (colon) {
			*colon = '\0';
			copy_str(key, sizeof(key), strtrim(f));
			if (*strtrim(colon + 1)) {
				header_kv(r, key, strtrim(colon + 1));
				any = true;
				key[0] = '\0';
			}
		} else {
			copy_str(key, sizeof(key), strtrim(f));
		}
	}
	return any;
}

static bool is_error_line(const char *s)
{
	static const char *const pats[] = {
		"couldn't", "unable to", "failed", "error", "did not detect",
		"not found", "no ib devices", "cannot", "can't", "is below",
		"no rdma devices", "invalid", "not supported", "aborting",
	};
	char low[512];
	size_t i;

	if (!strncasecmp(s, "warning", 7) || !strncasecmp(s, "conflicting cpu", 15))
		return false;
	for (i = 0; s[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = '\0';
	for (i = 0; i < ARRAY_SIZE(pats); i++)
		if (strstr(low, pats[i]))
			return true;
	return false;
}

static bool is_dashes(const char *s)
{
	size_t n = strspn(s, "-");

	return n >= 10 && s[n] == '\0';
}

static int parse_json(const char *text, size_t len, struct pt_report *r, char *err, size_t errsz);

int perftest_parse(const char *text, size_t len, struct pt_report *r, char *err, size_t errsz)
{
	struct table t = { .ncols = 0 };
	const char *p = text, *end = text + len;
	struct rq_lines l;
	unsigned lineno = 0;
	char *line;
	bool seen = false;	/* anything perftest-shaped */
	int ret = 0;

	pt_report_init(r);
	if (err && errsz)
		err[0] = '\0';
	/* JSON: the first non-blank byte is '{', or a bare "test_info:" (4.5) */
	for (const char *q = p; q < end; q++) {
		if (isspace((unsigned char)*q))
			continue;
		if (*q == '{' || ((size_t)(end - q) >= 9 && !strncmp(q, "test_info", 9)) ||
		    ((size_t)(end - q) >= 10 && !strncmp(q, "\"test_info", 10)))
			return parse_json(text, len, r, err, errsz);
		break;
	}

	rq_lines_init(&l, text, len);
	while ((line = rq_lines_next(&l))) {
		char *s;
		double v[PT_NCOLS + 2];
		int nv;

		lineno = l.no;
		if (l.nul) {
			ret = rq_parse_error(err, errsz, lineno, "NUL byte in text");
			break;
		}
		s = strtrim(line);
		if (!*s || is_dashes(s) || s[0] == '*') {
			if (strstr(s, "Waiting for client"))
				r->server = seen = true;
			continue;
		}
		if (str_starts(s, "Version:")) {
			copy_str(r->version, sizeof(r->version), strtrim(s + 8));
			seen = true;
		} else if (str_starts(s, "#bytes")) {
			if (!parse_table_header(s, &t, r)) {
				ret = rq_parse_error(err, errsz, lineno, "table header names no known column");
				break;
			}
			seen = true;
		} else if (t.ncols && isdigit((unsigned char)s[0]) &&
			   (nv = split_numbers(s, v, ARRAY_SIZE(v))) >= 0) {
			struct pt_row *row;

			if (nv != t.ncols) {
				ret = rq_parse_error(err, errsz, lineno,
						     "row has %d numbers, its header has %d columns", nv, t.ncols);
				break;
			}
			row = add_row(r);
			row->line = lineno;
			for (int i = 0; i < nv; i++)
				row->v[t.cols[i]] = v[i];
			row->bytes = to_u64(row->v[PT_C_BYTES]);
			row->iters = to_u64(row->v[PT_C_ITERS]);
		} else if (str_starts(s, "local address:") || str_starts(s, "remote address:") ||
			   str_starts(s, "GID:")) {
			seen = true;
		} else if (!strchr(s, ':') && str_ends(s, " Test")) {
			s[strlen(s) - 5] = '\0';
			copy_str(r->test, sizeof(r->test), strtrim(s));
			if (r->kind == PT_UNKNOWN)
				r->kind = strstr(s, "Latency") ? PT_LAT : strstr(s, "BW") ? PT_BW : PT_UNKNOWN;
			seen = true;
		} else if (is_error_line(s)) {
			if (!r->error[0]) {
				copy_str(r->error, sizeof(r->error), s);
				r->error_line = lineno;
			}
			seen = true;
		} else if (strchr(s, ':')) {
			if (parse_header_line(r, s))
				seen = true;
		}
	}
	rq_lines_release(&l);
	if (ret == 0 && !seen) {
		ret = rq_parse_error(err, errsz, lineno ? 1 : 0,
				     "not perftest output: no header, result table, Version line or error");
	}
	if (ret)
		pt_report_release(r);
	return ret;
}

static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v)) {
		char *end;
		double d = strtod(json_string_value(v), &end);

		if (end != json_string_value(v))
			return d;
	}
	return NAN;
}

/* An int field; a value that is no int (NaN, 1e112) leaves *dst as it was. */
static void jint(json_t *o, const char *key, int *dst)
{
	double d = jnum(o, key);

	if (d >= INT_MIN && d <= INT_MAX)
		*dst = (int)d;
}

static void jstr(json_t *o, const char *key, char *dst, size_t size)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		copy_str(dst, size, json_string_value(v));
}

static void json_result(struct pt_report *r, json_t *res)
{
	static const struct { const char *k; enum pt_col c; } map[] = {
		{ "BW_peak", PT_C_BW_PEAK }, { "BW_average", PT_C_BW_AVG },
		{ "bw_avg", PT_C_BW_AVG }, { "MsgRate", PT_C_MSGRATE },
		{ "msgRate_avg", PT_C_MSGRATE }, { "t_min", PT_C_T_MIN },
		{ "t_max", PT_C_T_MAX }, { "t_typical", PT_C_T_TYPICAL },
		{ "t_avg", PT_C_T_AVG }, { "t_stdev", PT_C_T_STDEV },
		{ "percentile_99", PT_C_P99 }, { "percentile_99.9", PT_C_P999 },
		{ "tps_average", PT_C_TPS }, { "sl", PT_C_SL },
	};
	struct pt_row *row;
	double size = jnum(res, "MsgSize");

	if (isnan(size))
		return;
	row = add_row(r);
	row->v[PT_C_BYTES] = size;
	row->bytes = to_u64(size);
	row->v[PT_C_ITERS] = jnum(res, "n_iterations");
	row->iters = to_u64(row->v[PT_C_ITERS]);
	for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
		double d = jnum(res, map[i].k);

		if (!isnan(d))
			row->v[map[i].c] = d;
	}
	if (!isnan(row->v[PT_C_BW_AVG]))
		r->kind = PT_BW;
	else if (!isnan(row->v[PT_C_T_AVG]))
		r->kind = PT_LAT;
}

static int parse_json(const char *text, size_t len, struct pt_report *r, char *err, size_t errsz)
{
	json_error_t jerr;
	json_t *root, *info, *res;

	root = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
	if (json_is_object(root)) {
		r->json_strict = true;
	} else {
		json_decref(root);
		if (!(root = lenient_json_parse(text, len, err, errsz)))
			return -EINVAL;
	}
	r->json = true;
	info = json_object_get(root, "test_info");
	if (!json_is_object(info))
		info = root;
	jstr(info, "test", r->test, sizeof(r->test));
	if (str_ends(r->test, "_Test"))
		r->test[strlen(r->test) - 5] = '\0';
	jstr(info, "Device", r->device, sizeof(r->device));
	jstr(info, "Connection_type", r->conn, sizeof(r->conn));
	jstr(info, "Link_type", r->link_type, sizeof(r->link_type));
	jint(info, "Mtu", &r->mtu);
	jint(info, "GID_index", &r->gid_index);
	jint(info, "Number_of_qps", &r->qps);
	jint(info, "TX_depth", &r->tx_depth);
	res = json_object_get(root, "results");
	if (json_is_array(res)) {
		size_t i;
		json_t *e;

		json_array_foreach(res, i, e)
			if (json_is_object(e))
				json_result(r, e);
	} else if (json_is_object(res)) {
		json_result(r, res);
	}
	if (r->kind == PT_UNKNOWN)
		r->kind = strstr(r->test, "Lat") ? PT_LAT : strstr(r->test, "BW") ? PT_BW : PT_UNKNOWN;
	/* the json file does not say; MB/sec unless --report_gbits was given */
	if (r->kind == PT_BW)
		r->unit = PT_MBS;
	json_decref(root);
	if (!r->nrows && !r->test[0]) {
		rq_parse_error(err, errsz, 1, "JSON has neither test_info nor results");
		pt_report_release(r);
		return -EINVAL;
	}
	return 0;
}

/* ---- `rdmaqual parse perftest FILE` ---- */

static int adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct pt_report r;
	json_t *o, *rows;
	int ret = perftest_parse(text, len, &r, err, errsz);

	if (ret)
		return ret;
	o = json_object();
	json_object_set_new(o, "tool", json_string("perftest"));
	json_object_set_new(o, "kind", json_string(r.kind == PT_BW ? "bw" :
						   r.kind == PT_LAT ? "lat" : "unknown"));
	if (r.test[0])
		json_object_set_new(o, "test", rq_json_text(r.test));
	if (r.version[0])
		json_object_set_new(o, "version", rq_json_text(r.version));
	if (r.device[0])
		json_object_set_new(o, "device", rq_json_text(r.device));
	if (r.conn[0])
		json_object_set_new(o, "connection", rq_json_text(r.conn));
	if (r.link_type[0])
		json_object_set_new(o, "link_type", rq_json_text(r.link_type));
	if (r.mtu)
		json_object_set_new(o, "mtu", json_integer(r.mtu));
	if (r.gid_index >= 0)
		json_object_set_new(o, "gid_index", json_integer(r.gid_index));
	if (r.qps)
		json_object_set_new(o, "qps", json_integer(r.qps));
	if (r.tx_depth)
		json_object_set_new(o, "tx_depth", json_integer(r.tx_depth));
	json_object_set_new(o, "side", json_string(r.server ? "server" : "client-or-unknown"));
	if (r.json)
		json_object_set_new(o, "json", json_string(r.json_strict ? "valid" : "lenient"));
	if (r.unit)
		json_object_set_new(o, "unit", json_string(pt_unit_name(r.unit)));
	if (r.error[0]) {
		json_object_set_new(o, "error", rq_json_text(r.error));
		json_object_set_new(o, "error_line", json_integer(r.error_line));
	}
	rows = json_array();
	for (size_t i = 0; i < r.nrows; i++) {
		json_t *row = json_object();

		json_object_set_new(row, "bytes", json_integer((json_int_t)r.rows[i].bytes));
		for (int c = PT_C_ITERS; c < PT_NCOLS; c++) {
			if (isnan(r.rows[i].v[c]))
				continue;
			if (c == PT_C_ITERS || c == PT_C_SL)
				json_object_set_new(row, pt_col_name(c), json_integer(to_i64(r.rows[i].v[c])));
			else
				json_object_set_new(row, pt_col_name(c), rq_json_num(r.rows[i].v[c]));
		}
		if (r.kind == PT_BW && !isnan(r.rows[i].v[PT_C_BW_AVG]))
			json_object_set_new(row, "bw_avg_gbps",
					    rq_json_num(pt_gbps(&r, r.rows[i].v[PT_C_BW_AVG])));
		json_array_append_new(rows, row);
	}
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "ok", json_boolean(r.nrows > 0 && !r.error[0]));
	pt_report_release(&r);
	*out = o;
	return 0;
}

const struct rq_parser rq_parser_perftest = {
	.name = "perftest",
	.help = "ib_{write,read,send}_{bw,lat} text output (either side), -V, or --out_json file",
	.parse = adapter,
};
