/* SPDX-License-Identifier: MIT */
/*
 * nccl-tests output (parse_nccl.h).  The layouts are those nccl-tests'
 * src/common.cu prints (PrintHeader, the per-size rows of TimeTest and the
 * closing summary), old and current.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "parsers/parse_nccl.h"
#include "parsers/parsers.h"
#include "core/json_text.h"
#include "core/util.h"

#define MAX_TOK 16

static unsigned split(char *s, char **tok)
{
	unsigned n = 0;
	char *save = NULL;

	for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_TOK)
			return MAX_TOK + 1;
		tok[n++] = t;
	}
	return n;
}

static bool to_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !*end && !errno;
}

static bool to_num(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end != s && !*end && !errno && *v >= 0;
}

/* "# nThread 1 nGpus 8 minBytes 1 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ..." */
static void read_settings(struct nccl_report *r, char *s)
{
	char *tok[48];
	char *save = NULL;
	unsigned n = 0;

	for (char *t = strtok_r(s, " \t", &save); t && n < 48; t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	for (unsigned i = 0; i + 1 < n; i++) {
		const char *k = tok[i], *v = tok[i + 1];
		unsigned long long x;

		if (sscanf(v, "%llu", &x) != 1)
			continue;
		if (!strcmp(k, "nThread"))
			r->nthread = (unsigned)x;
		else if (!strcmp(k, "nGpus"))
			r->ngpus = (unsigned)x;
		else if (!strcmp(k, "minBytes"))
			r->min_bytes = x;
		else if (!strcmp(k, "maxBytes"))
			r->max_bytes = x;
		else if (!strcmp(k, "validation:"))
			r->validation = (int)x;
		else if (!strcmp(k, "iters:") && i && !strcmp(tok[i - 1], "warmup"))
			r->warmup_iters = (unsigned)x;
		else if (!strcmp(k, "iters:") && !(i && !strcmp(tok[i - 1], "agg")))
			r->iters = (unsigned)x;
	}
}

/* "Rank  0 Group  0 Pid   6899 on host device  0 [0000:04:00] NAME" (old: no Group) */
static bool read_rank(struct nccl_report *r, const char *s)
{
	struct nccl_rank k = { .group = -1 };
	int n = 0;

	if (sscanf(s, "Rank %d Group %d Pid %ld on %63s device %d [%23[^]]] %n",
		   &k.rank, &k.group, &k.pid, k.host, &k.device, k.busid, &n) < 6 || !n) {
		k.group = -1;
		n = 0;
		if (sscanf(s, "Rank %d Pid %ld on %63s device %d [%23[^]]] %n",
			   &k.rank, &k.pid, k.host, &k.device, k.busid, &n) < 5 || !n)
			return false;
	}
	snprintf(k.name, sizeof(k.name), "%s", s + n);
	r->rank = xrealloc(r->rank, (r->nranks + 1) * sizeof(*r->rank));
	r->rank[r->nranks++] = k;
	return true;
}

static int read_half(struct nccl_report *r, char **t, struct nccl_half *h, unsigned no,
		     char *err, size_t errsz)
{
	if (!to_num(t[0], &h->time_us) || !to_num(t[1], &h->algbw) || !to_num(t[2], &h->busbw))
		return rq_parse_error(err, errsz, no, "expected time, algbw and busbw figures, "
				      "got '%s %s %s'", t[0], t[1], t[2]);
	h->wrong = -1;
	h->error = -1;
	if (!strcmp(t[3], "N/A"))
		return 0;
	if (r->new_layout) {
		uint64_t w;

		if (!to_u64(t[3], &w))
			return rq_parse_error(err, errsz, no, "expected a count or N/A under "
					      "#wrong, got '%s'", t[3]);
		h->wrong = (long long)w;
	} else if (!to_num(t[3], &h->error)) {
		return rq_parse_error(err, errsz, no, "expected a figure or N/A under error, "
				      "got '%s'", t[3]);
	}
	return 0;
}

static int read_row(struct nccl_report *r, bool has_root, char *s, unsigned no,
		    char *err, size_t errsz)
{
	char *t[MAX_TOK + 1];
	unsigned n = split(s, t), mid;
	struct nccl_row row = { .root = -1 };
	int ret;

	if (n < 11 || n > 13)
		return rq_parse_error(err, errsz, no, "%u cells, a row has size, count, type, "
				      "[redop], [root] and eight figures", n > MAX_TOK ? n - 1 : n);
	if (!to_u64(t[0], &row.size) || !to_u64(t[1], &row.count))
		return rq_parse_error(err, errsz, no, "expected size and count, got '%s %s'",
				      t[0], t[1]);
	snprintf(row.type, sizeof(row.type), "%s", t[2]);
	mid = n - 11;
	if (mid == 2 || (mid == 1 && !(has_root && (isdigit((unsigned char)*t[3]) || *t[3] == '-'))))
		snprintf(row.redop, sizeof(row.redop), "%s", t[3]);
	if (mid == 2 || (mid == 1 && !row.redop[0])) {
		char *end;
		long v = strtol(t[3 + mid - 1], &end, 10);

		if (*end || v < -1 || v > 1 << 20)
			return rq_parse_error(err, errsz, no, "expected a root rank, got '%s'",
					      t[3 + mid - 1]);
		row.root = (int)v;
	}
	if ((ret = read_half(r, t + 3 + mid, &row.oop, no, err, errsz)) ||
	    (ret = read_half(r, t + 7 + mid, &row.ip, no, err, errsz)))
		return ret;
	r->row = xrealloc(r->row, (r->nrows + 1) * sizeof(*r->row));
	r->row[r->nrows++] = row;
	return 0;
}

int nccl_parse(const char *text, size_t len, struct nccl_report *r, char *err, size_t errsz)
{
	struct rq_lines l;
	bool header = false, has_root = false;
	char *t;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->validation = -1;
	rq_lines_init(&l, text, len);
	while (!ret && (t = rq_lines_next_text(&l, &ret, err, errsz))) {
		if (*t != '#') {
			if (header && isdigit((unsigned char)*t))
				ret = read_row(r, has_root, t, l.no, err, errsz);
			/* else NCCL's log lines, a shell prompt: not the table */
			continue;
		}
		t = strtrim(t + 1);
		if (str_starts(t, "nThread ")) {
			read_settings(r, t);
		} else if (str_starts(t, "Rank ")) {
			if (!read_rank(r, t))
				ret = rq_parse_error(err, errsz, l.no, "expected 'Rank N [Group G] "
						     "Pid P on HOST device D [BUS] NAME', got '%s'", t);
		} else if (str_starts(t, "size ") && strstr(t, " count ")) {
			if (header) {
				ret = rq_parse_error(err, errsz, l.no, "a second column header: "
						     "one test's output per file");
				break;
			}
			header = true;
			r->new_layout = strstr(t, "#wrong") != NULL;
			has_root = strstr(t, " root ") != NULL;
			if (!r->new_layout && !strstr(t, " error"))
				ret = rq_parse_error(err, errsz, l.no, "a column header without "
						     "#wrong or error: '%s'", t);
		} else if (str_starts(t, "Out of bounds values")) {
			char word[16] = "";
			const char *c = strchr(t, ':');

			if (!c || sscanf(c + 1, "%llu %15s", &r->oob, word) < 1) {
				ret = rq_parse_error(err, errsz, l.no, "expected 'Out of bounds "
						     "values : N OK|FAILED', got '%s'", t);
				break;
			}
			r->has_oob = true;
			r->oob_ok = !strcmp(word, "OK");
		} else if (str_starts(t, "Avg bus bandwidth")) {
			const char *c = strchr(t, ':');

			if (!c || sscanf(c + 1, "%lf", &r->avg_busbw) != 1) {
				ret = rq_parse_error(err, errsz, l.no, "expected 'Avg bus bandwidth : "
						     "N', got '%s'", t);
				break;
			}
			r->has_avg_busbw = true;
		}
	}
	rq_lines_release(&l);
	if (!ret && !header)
		ret = rq_parse_error(err, errsz, 0, "no '#  size  count  type ...' column header: "
				     "not nccl-tests output");
	if (ret)
		nccl_release(r);
	return ret;
}

void nccl_release(struct nccl_report *r)
{
	free(r->row);
	free(r->rank);
	r->row = NULL;
	r->rank = NULL;
	r->nrows = r->nranks = 0;
}

static json_t *half_json(const struct nccl_report *r, const struct nccl_half *h)
{
	json_t *o = json_pack("{s:o,s:o,s:o}", "time_us", rq_json_num(h->time_us),
			      "algbw_GBps", rq_json_num(h->algbw), "busbw_GBps", rq_json_num(h->busbw));

	if (r->new_layout)
		json_object_set_new(o, "wrong", h->wrong < 0 ? json_null() : json_integer(h->wrong));
	else
		json_object_set_new(o, "error", h->error < 0 ? json_null() : rq_json_num(h->error));
	return o;
}

static int nccl_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct nccl_report r;
	int ret = nccl_parse(text, len, &r, err, errsz);

	if (ret)
		return ret;
	json_t *o = json_object(), *ranks = json_array(), *rows = json_array();

	json_object_set_new(o, "layout", json_string(r.new_layout ? "#wrong" : "error"));
	json_object_set_new(o, "nthread", json_integer(r.nthread));
	json_object_set_new(o, "ngpus", json_integer(r.ngpus));
	json_object_set_new(o, "min_bytes", json_integer((json_int_t)r.min_bytes));
	json_object_set_new(o, "max_bytes", json_integer((json_int_t)r.max_bytes));
	json_object_set_new(o, "warmup_iters", json_integer(r.warmup_iters));
	json_object_set_new(o, "iters", json_integer(r.iters));
	json_object_set_new(o, "validation", r.validation < 0 ? json_null() : json_integer(r.validation));
	for (size_t i = 0; i < r.nranks; i++) {
		const struct nccl_rank *k = &r.rank[i];
		json_t *x = json_pack("{s:i,s:I,s:o,s:i,s:o,s:o}", "rank", k->rank,
				      "pid", (json_int_t)k->pid, "host", rq_json_text(k->host),
				      "device", k->device, "busid", rq_json_text(k->busid),
				      "name", rq_json_text(k->name));

		json_object_set_new(x, "group", k->group < 0 ? json_null() : json_integer(k->group));
		json_array_append_new(ranks, x);
	}
	for (size_t i = 0; i < r.nrows; i++) {
		const struct nccl_row *w = &r.row[i];
		json_t *x = json_pack("{s:I,s:I,s:o,s:o,s:i}", "size", (json_int_t)w->size,
				      "count", (json_int_t)w->count, "type", rq_json_text(w->type),
				      "redop", w->redop[0] ? rq_json_text(w->redop) : json_null(),
				      "root", w->root);

		json_object_set_new(x, "out_of_place", half_json(&r, &w->oop));
		json_object_set_new(x, "in_place", half_json(&r, &w->ip));
		json_array_append_new(rows, x);
	}
	json_object_set_new(o, "ranks", ranks);
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "out_of_bounds", r.has_oob ? json_integer((json_int_t)r.oob) : json_null());
	json_object_set_new(o, "out_of_bounds_ok", r.has_oob ? json_boolean(r.oob_ok) : json_null());
	json_object_set_new(o, "avg_busbw_GBps", r.has_avg_busbw ? rq_json_num(r.avg_busbw) : json_null());
	nccl_release(&r);
	*out = o;
	return 0;
}

const struct rq_parser rq_parser_nccl_tests = {
	.name = "nccl-tests",
	.help = "nccl-tests output (all_reduce_perf, alltoall_perf, ...): settings, ranks, and "
		"per size count, type, redop, root, out-of-place and in-place time (us), algbw "
		"and busbw (GB/s), #wrong (or the old layout's error); out-of-bounds and the "
		"average bus bandwidth",
	.parse = nccl_adapter,
};
