/* SPDX-License-Identifier: MIT */
/*
 * OSU micro-benchmarks output (parse_osu.h).  The formats are those of
 * OMB's c/util/osu_util.c print_header*() and print_stats*() from 5.x to
 * 7.x: a "# OSU MPI ... Test vX" banner, "# Size" plus right-aligned column
 * names at least two blanks apart, rows of a size and its figures.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>

#include "parsers/parse_osu.h"
#include "parsers/parsers.h"
#include "core/json_text.h"
#include "core/util.h"

static enum osu_col col_kind(const char *name)
{
	if (!strcasecmp(name, "Validation"))
		return OSU_COL_VALID;
	if (!strcasecmp(name, "Iterations"))
		return OSU_COL_ITERS;
	if (!strcasecmp(name, "Messages/s"))
		return OSU_COL_MSG_RATE;
	if (!strcasecmp(name, "MB/s") || !strncasecmp(name, "Bandwidth", 9))
		return OSU_COL_BW;
	if (!strncasecmp(name, "Min Latency", 11))
		return OSU_COL_LAT_MIN;
	if (!strncasecmp(name, "Max Latency", 11))
		return OSU_COL_LAT_MAX;
	if (!strncasecmp(name, "Latency", 7) || !strncasecmp(name, "Avg Latency", 11))
		return OSU_COL_LAT;
	return OSU_COL_OTHER;
}

/* "Size   Avg Latency(us)   Min Latency(us)": the names after Size, split at 2+ blanks */
static int read_header(struct osu_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	const char *p = s + 4;	/* after "Size" */

	r->ncols = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *b = p;

		while (*p && *p != '\t' && !(p[0] == ' ' && (p[1] == ' ' || p[1] == '\t' || !p[1])))
			p++;
		size_t n = (size_t)(p - b);

		if (r->ncols == OSU_COLS_MAX)
			return rq_parse_error(err, errsz, no, "more than %d columns after Size",
					      OSU_COLS_MAX);
		if (n >= sizeof(r->col_name[0]))
			return rq_parse_error(err, errsz, no, "a column name of %zu characters", n);
		memcpy(r->col_name[r->ncols], b, n);
		r->col_name[r->ncols][n] = '\0';
		r->col[r->ncols] = col_kind(r->col_name[r->ncols]);
		r->ncols++;
	}
	if (!r->ncols)
		return rq_parse_error(err, errsz, no, "a '# Size' header without columns");
	return 0;
}

static int read_row(struct osu_report *r, char *s, unsigned no, char *err, size_t errsz)
{
	struct osu_row row = { 0 };
	char *tok, *save = NULL, *end;
	unsigned n = 0;

	tok = strtok_r(s, " \t", &save);
	errno = 0;
	row.size = strtoull(tok, &end, 10);
	if (*end || errno || *tok == '-')
		return rq_parse_error(err, errsz, no, "expected a message size, got '%s'", tok);
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (n == r->ncols)
			return rq_parse_error(err, errsz, no, "more figures than the header's %u "
					      "columns", r->ncols);
		if (r->col[n] == OSU_COL_VALID) {
			if (strcasecmp(tok, "Pass") && strcasecmp(tok, "Fail"))
				return rq_parse_error(err, errsz, no, "expected Pass or Fail under "
						      "Validation, got '%s'", tok);
			row.v[n] = !strcasecmp(tok, "Pass");
			if (!row.v[n])
				r->failed_rows++;
		} else {
			errno = 0;
			row.v[n] = strtod(tok, &end);
			if (*end || errno || end == tok || row.v[n] < 0)
				return rq_parse_error(err, errsz, no, "expected a figure under '%s', "
						      "got '%s'", r->col_name[n], tok);
		}
		n++;
	}
	if (n != r->ncols)
		return rq_parse_error(err, errsz, no, "%u figures, the header has %u columns",
				      n, r->ncols);
	r->row = xrealloc(r->row, (r->nrows + 1) * sizeof(*r->row));
	r->row[r->nrows++] = row;
	return 0;
}

/* "# OSU MPI Allreduce Latency Test v7.5" (also "OSU MPI-CUDA", "OSU OpenSHMEM") */
static int read_banner(struct osu_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	const char *p = s + strlen("OSU "), *v;

	/* the suite's name is one word: "MPI", "MPI-CUDA", "MPI-ROCM", "UPC" */
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	v = strrchr(p, ' ');
	if (!v || v[1] != 'v' || !isdigit((unsigned char)v[2]))
		return rq_parse_error(err, errsz, no, "expected '# OSU ... Test vN.N', got '%s'", s);
	snprintf(r->version, sizeof(r->version), "%s", v + 2);
	snprintf(r->test, sizeof(r->test), "%.*s", (int)(v - p), p);
	return 0;
}

int osu_parse(const char *text, size_t len, struct osu_report *r, char *err, size_t errsz)
{
	struct rq_lines l;
	bool banner = false, header = false;
	char *t;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	rq_lines_init(&l, text, len);
	while (!ret && (t = rq_lines_next_text(&l, &ret, err, errsz))) {
		if (*t != '#') {
			if (header && isdigit((unsigned char)*t))
				ret = read_row(r, t, l.no, err, errsz);
			/* else: a launcher's or an MPI library's line, not OMB's */
			continue;
		}
		t = strtrim(t + 1);
		if (str_starts(t, "OSU ")) {
			if (banner)
				ret = rq_parse_error(err, errsz, l.no, "a second OSU banner: one "
						     "test's output per file");
			else
				ret = read_banner(r, t, l.no, err, errsz);
			banner = true;
		} else if (!banner) {
			continue;	/* a job script's own '###' lines */
		} else if (str_starts(t, "Size") && (t[4] == ' ' || t[4] == '\t')) {
			if (header)
				ret = rq_parse_error(err, errsz, l.no, "a second '# Size' header");
			else
				ret = read_header(r, t, l.no, err, errsz);
			header = true;
		} else if (str_starts(t, "Datatype:")) {
			snprintf(r->datatype, sizeof(r->datatype), "%s", strtrim(t + 9));
			size_t n = strlen(r->datatype);

			if (n && r->datatype[n - 1] == '.')
				r->datatype[n - 1] = '\0';
		} else if (str_starts(t, "[ pairs:")) {
			if (sscanf(t, "[ pairs: %u ] [ window size: %u ]", &r->pairs, &r->window) < 1)
				ret = rq_parse_error(err, errsz, l.no, "expected '[ pairs: N ] "
						     "[ window size: W ]', got '%s'", t);
		}
		/* other comments ("# Number of Sender processes", ...) carry no figure */
	}
	rq_lines_release(&l);
	if (!ret && !banner)
		ret = rq_parse_error(err, errsz, 0, "no '# OSU ... Test' banner: not OSU "
				     "micro-benchmarks output");
	else if (!ret && !header)
		ret = rq_parse_error(err, errsz, 0, "no '# Size ...' column header after the banner");
	if (ret)
		osu_release(r);
	return ret;
}

void osu_release(struct osu_report *r)
{
	free(r->row);
	r->row = NULL;
	r->nrows = 0;
}

int osu_col_find(const struct osu_report *r, enum osu_col c)
{
	for (unsigned i = 0; i < r->ncols; i++)
		if (r->col[i] == c)
			return (int)i;
	return -1;
}

/* JSON keys of the known columns, with their units; others by header name */
static const char *col_key(enum osu_col c)
{
	switch (c) {
	case OSU_COL_LAT: return "latency_us";
	case OSU_COL_LAT_MIN: return "min_latency_us";
	case OSU_COL_LAT_MAX: return "max_latency_us";
	case OSU_COL_BW: return "bandwidth_MBps";
	case OSU_COL_MSG_RATE: return "messages_per_s";
	case OSU_COL_ITERS: return "iterations";
	case OSU_COL_VALID: return "validation";
	case OSU_COL_OTHER: break;
	}
	return NULL;
}

static int osu_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct osu_report r;
	int ret = osu_parse(text, len, &r, err, errsz);

	if (ret)
		return ret;
	json_t *o = json_object(), *cols = json_array(), *rows = json_array();

	rq_json_set_text(o, "test", rq_json_text(r.test));
	rq_json_set_text(o, "version", rq_json_text(r.version));
	json_object_set_new(o, "datatype", r.datatype[0] ? rq_json_text(r.datatype) : json_null());
	if (r.pairs)
		json_object_set_new(o, "pairs", json_integer(r.pairs));
	if (r.window)
		json_object_set_new(o, "window_size", json_integer(r.window));
	for (unsigned c = 0; c < r.ncols; c++)
		json_array_append_new(cols, rq_json_text(r.col_name[c]));
	for (size_t i = 0; i < r.nrows; i++) {
		json_t *row = json_pack("{s:I}", "size", (json_int_t)r.row[i].size);

		for (unsigned c = 0; c < r.ncols; c++) {
			const char *k = col_key(r.col[c]);
			double v = r.row[i].v[c];

			if (r.col[c] == OSU_COL_VALID)
				json_object_set_new(row, k, json_string(v ? "Pass" : "Fail"));
			else if (r.col[c] == OSU_COL_ITERS)
				json_object_set_new(row, k, json_integer((json_int_t)v));
			else if (k)
				json_object_set_new(row, k, rq_json_num(v));
			else
				rq_json_set_text(row, r.col_name[c], rq_json_num(v));
		}
		json_array_append_new(rows, row);
	}
	json_object_set_new(o, "columns", cols);
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "failed_rows", json_integer(r.failed_rows));
	osu_release(&r);
	*out = o;
	return 0;
}

const struct rq_parser rq_parser_osu = {
	.name = "osu",
	.help = "OSU micro-benchmarks output (osu_latency, osu_bw, osu_allreduce, osu_alltoall, "
		"...): test, version, datatype, and per size the columns its header names "
		"(latencies in us, bandwidth in MB/s, Validation)",
	.parse = osu_adapter,
};
