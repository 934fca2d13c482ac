/* SPDX-License-Identifier: MIT */
/* rdmaqual-coll output (parse_coll.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "parsers/parse_coll.h"
#include "parsers/parsers.h"
#include "core/json_text.h"
#include "core/util.h"

static struct coll_row *row_of(struct coll_report *r, uint64_t size)
{
	for (size_t i = r->nrows; i-- > 0;)
		if (r->row[i].size == size)
			return &r->row[i];
	return NULL;
}

/* "8: 12.00 11.02 ..." -> the row of that size and the text after the colon */
static struct coll_row *sized(struct coll_report *r, const char *s, const char **rest)
{
	unsigned long long size;
	int n = 0;

	if (sscanf(s, "%llu:%n", &size, &n) != 1 || !n)
		return NULL;
	*rest = s + n;
	return row_of(r, size);
}

static int read_header(struct coll_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	int check = 0, v = 0;

	if (sscanf(s, "rdmaqual-coll %d op %23s nranks %d type int32 iters %u warmup %u check %d",
		   &v, r->op, &r->nranks, &r->iters, &r->warmup, &check) != 6)
		return rq_parse_error(err, errsz, no, "expected '# rdmaqual-coll 1 op OP nranks N "
				      "type int32 iters I warmup W check C', got '%s'", s);
	if (v != 1)
		return rq_parse_error(err, errsz, no, "rdmaqual-coll output version %d (this "
				      "parser reads 1)", v);
	if (r->nranks < 1 || r->nranks > COLL_RANKS_MAX)
		return rq_parse_error(err, errsz, no, "nranks %d outside 1..%d", r->nranks,
				      COLL_RANKS_MAX);
	r->check = check;
	r->host = xcalloc((size_t)r->nranks, sizeof(*r->host));
	r->pid = xcalloc((size_t)r->nranks, sizeof(*r->pid));
	r->user_s = xcalloc((size_t)r->nranks, sizeof(*r->user_s));
	r->sys_s = xcalloc((size_t)r->nranks, sizeof(*r->sys_s));
	for (int k = 0; k < r->nranks; k++)
		r->user_s[k] = r->sys_s[k] = NAN;
	return 0;
}

static int read_row(struct coll_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	struct coll_row w = { 0 };
	unsigned long long size, count;
	int n = 0;

	if (sscanf(s, "%llu %llu %lf %lf %lf %lf %lf %llu %d %d %n", &size, &count, &w.avg_us,
		   &w.min_us, &w.max_us, &w.algbw, &w.busbw, &w.wrong, &w.min_rank, &w.max_rank,
		   &n) != 10 || s[n])
		return rq_parse_error(err, errsz, no, "expected size, count, time_avg, time_min, "
				      "time_max, algbw, busbw, #wrong, min_rank, max_rank, got '%s'", s);
	if (w.min_rank < 0 || w.min_rank >= r->nranks || w.max_rank < 0 || w.max_rank >= r->nranks)
		return rq_parse_error(err, errsz, no, "a rank outside 0..%d", r->nranks - 1);
	w.size = size;
	w.count = count;
	r->row = xrealloc(r->row, (r->nrows + 1) * sizeof(*r->row));
	r->row[r->nrows++] = w;
	return 0;
}

static int read_ranks(struct coll_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	const char *p;
	struct coll_row *w = sized(r, s, &p);

	if (!w || w->rank_us)
		return rq_parse_error(err, errsz, no, "'# ranks SIZE:' without its row, or twice");
	w->rank_us = xcalloc((size_t)r->nranks, sizeof(double));
	for (int k = 0; k < r->nranks; k++) {
		char *end;

		w->rank_us[k] = strtod(p, &end);
		if (end == p || w->rank_us[k] < 0)
			return rq_parse_error(err, errsz, no, "expected %d rank times", r->nranks);
		p = end;
	}
	while (*p == ' ')
		p++;
	if (*p)
		return rq_parse_error(err, errsz, no, "more than %d rank times", r->nranks);
	return 0;
}

static int read_pairs(struct coll_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	const char *p;
	struct coll_row *w = sized(r, s, &p);

	if (!w || w->pair_bw)
		return rq_parse_error(err, errsz, no, "'# pairs SIZE:' without its row, or twice");
	w->pair_bw = xcalloc((size_t)r->nranks, sizeof(double));
	w->pair_to = xcalloc((size_t)r->nranks, sizeof(int));
	for (int k = 0; k < r->nranks; k++) {
		int from, to, n = 0;
		double bw;

		if (sscanf(p, " %d>%d %lf%n", &from, &to, &bw, &n) != 3 || from != k || to < 0 ||
		    to >= r->nranks || bw < 0)
			return rq_parse_error(err, errsz, no, "expected %d links 'RANK>PEER GB/s' "
					      "in rank order", r->nranks);
		w->pair_to[k] = to;
		w->pair_bw[k] = bw;
		p += n;
	}
	return 0;
}

static int read_wrong(struct coll_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	struct coll_wrong w = { 0 };
	unsigned long long size, first;
	int n = 0;

	if (sscanf(s, "%llu: rank %d host %63s elements %llu first %llu got %lld expected %lld%n",
		   &size, &w.rank, w.host, &w.elements, &first, &w.got, &w.expected, &n) != 7 ||
	    s[n] || w.rank < 0 || w.rank >= r->nranks)
		return rq_parse_error(err, errsz, no, "expected '# wrong SIZE: rank R host H "
				      "elements N first I got G expected E', got '%s'", s);
	w.size = size;
	w.first = first;
	r->wrong = xrealloc(r->wrong, (r->nwrong + 1) * sizeof(*r->wrong));
	r->wrong[r->nwrong++] = w;
	return 0;
}

static int read_counters(struct coll_report *r, const char *s, unsigned no, char *err,
			 size_t errsz)
{
	struct coll_counter c = { 0 };
	char unit[16];
	int n = 0;

	if (sscanf(s, "host %63s none%n", c.host, &n) == 1 && n && !s[n]) {
		/* a node without an RDMA port */
	} else if (n = 0, sscanf(s, "host %63s port %79s unit %15s xmit %llu rcv %llu%n", c.host,
				 c.port, unit, &c.xmit, &c.rcv, &n) == 5 && !s[n] &&
		   (!strcmp(unit, "words") || !strcmp(unit, "pkts"))) {
		c.words = !strcmp(unit, "words");
	} else {
		return rq_parse_error(err, errsz, no, "expected '# counters host H port DEV/PORT unit "
				      "words|pkts xmit N rcv N' or '# counters host H none', got "
				      "'%s'", s);
	}
	r->counter = xrealloc(r->counter, (r->ncounters + 1) * sizeof(*r->counter));
	r->counter[r->ncounters++] = c;
	return 0;
}

static int read_cpu(struct coll_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	int k, n = 0;
	char host[64];
	double u, sy;

	/* a time that reads lower than before (cputime accounting) is 0, not an error */
	if (sscanf(s, "rank %d host %63s user_s %lf sys_s %lf%n", &k, host, &u, &sy, &n) != 4 ||
	    s[n] || k < 0 || k >= r->nranks || !isfinite(u) || !isfinite(sy))
		return rq_parse_error(err, errsz, no, "expected '# cpu rank R host H user_s S sys_s "
				      "S' with R below %d, got '%s'", r->nranks, s);
	r->user_s[k] = u > 0 ? u : 0;
	r->sys_s[k] = sy > 0 ? sy : 0;
	return 0;
}

static int read_node(struct coll_report *r, const char *s, unsigned no, char *err, size_t errsz)
{
	struct coll_node_cpu c = { 0 };
	int n = 0;

	if (sscanf(s, "host %63s busy_s %lf softirq_s %lf%n", c.host, &c.busy_s, &c.softirq_s,
		   &n) != 3 || s[n] || !isfinite(c.busy_s) || !isfinite(c.softirq_s))
		return rq_parse_error(err, errsz, no, "expected '# node host H busy_s S softirq_s S', "
				      "got '%s'", s);
	c.busy_s = c.busy_s > 0 ? c.busy_s : 0;
	c.softirq_s = c.softirq_s > 0 ? c.softirq_s : 0;
	r->node = xrealloc(r->node, (r->nnodes + 1) * sizeof(*r->node));
	r->node[r->nnodes++] = c;
	return 0;
}

int coll_parse(const char *text, size_t len, struct coll_report *r, char *err, size_t errsz)
{
	struct rq_lines l;
	char *t;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	rq_lines_init(&l, text, len);
	while (!ret && (t = rq_lines_next_text(&l, &ret, err, errsz))) {
		if (!r->nranks) {
			/* before the header: the launcher's own lines */
			if (str_starts(t, "# rdmaqual-coll "))
				ret = read_header(r, t + 2, l.no, err, errsz);
			continue;
		}
		if (*t != '#') {
			if (isdigit((unsigned char)*t))
				ret = read_row(r, t, l.no, err, errsz);
			continue;	/* an MPI library's or the launcher's line */
		}
		t = strtrim(t + 1);
		if (str_starts(t, "rank ")) {
			int k, n = 0;
			char host[64];
			long pid;

			if (sscanf(t, "rank %d host %63s pid %ld%n", &k, host, &pid, &n) != 3 || t[n] ||
			    k < 0 || k >= r->nranks) {
				ret = rq_parse_error(err, errsz, l.no, "expected '# rank R host H pid "
						     "P' with R below %d, got '%s'", r->nranks, t);
				break;
			}
			snprintf(r->host[k], sizeof(r->host[k]), "%s", host);
			r->pid[k] = pid;
		} else if (str_starts(t, "ranks ")) {
			ret = read_ranks(r, t + 6, l.no, err, errsz);
		} else if (str_starts(t, "pairs ")) {
			ret = read_pairs(r, t + 6, l.no, err, errsz);
		} else if (str_starts(t, "aggregate ")) {
			const char *p;
			struct coll_row *w = sized(r, t + 10, &p);

			if (!w || sscanf(p, "%lf", &w->aggregate) != 1)
				ret = rq_parse_error(err, errsz, l.no, "expected '# aggregate SIZE: "
						     "GB/s' after its row");
			else
				w->has_aggregate = true;
		} else if (str_starts(t, "wrong ")) {
			ret = read_wrong(r, t + 6, l.no, err, errsz);
		} else if (str_starts(t, "cpu ")) {
			ret = read_cpu(r, t + 4, l.no, err, errsz);
		} else if (str_starts(t, "node ")) {
			ret = read_node(r, t + 5, l.no, err, errsz);
		} else if (str_starts(t, "counters ")) {
			ret = read_counters(r, t + 9, l.no, err, errsz);
		} else if (str_starts(t, "end wrong ")) {
			if (sscanf(t, "end wrong %llu", &r->total_wrong) != 1)
				ret = rq_parse_error(err, errsz, l.no, "expected '# end wrong N'");
			r->ended = true;
		}
	}
	rq_lines_release(&l);
	if (!ret && !r->nranks)
		ret = rq_parse_error(err, errsz, 0, "no '# rdmaqual-coll' header: not rdmaqual-coll "
				     "output");
	if (ret)
		coll_release(r);
	return ret;
}

void coll_release(struct coll_report *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->row[i].rank_us);
		free(r->row[i].pair_bw);
		free(r->row[i].pair_to);
	}
	free(r->row);
	free(r->wrong);
	free(r->counter);
	free(r->user_s);
	free(r->sys_s);
	free(r->node);
	free(r->host);
	free(r->pid);
	memset(r, 0, sizeof(*r));
}

static int coll_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct coll_report r;
	int ret = coll_parse(text, len, &r, err, errsz);

	if (ret)
		return ret;
	json_t *o = json_object(), *ranks = json_array(), *rows = json_array(), *wr = json_array();

	rq_json_set_text(o, "op", rq_json_text(r.op));
	json_object_set_new(o, "nranks", json_integer(r.nranks));
	json_object_set_new(o, "iters", json_integer(r.iters));
	json_object_set_new(o, "warmup", json_integer(r.warmup));
	json_object_set_new(o, "check", json_boolean(r.check));
	for (int k = 0; k < r.nranks; k++)
		json_array_append_new(ranks, json_pack("{s:i,s:o,s:I}", "rank", k, "host",
						       rq_json_text(r.host[k]), "pid",
						       (json_int_t)r.pid[k]));
	for (size_t i = 0; i < r.nrows; i++) {
		const struct coll_row *w = &r.row[i];
		json_t *x = json_pack("{s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:I,s:i,s:i}",
				      "size", (json_int_t)w->size, "count", (json_int_t)w->count,
				      "time_avg_us", rq_json_num(w->avg_us),
				      "time_min_us", rq_json_num(w->min_us),
				      "time_max_us", rq_json_num(w->max_us),
				      "algbw_GBps", rq_json_num(w->algbw),
				      "busbw_GBps", rq_json_num(w->busbw),
				      "wrong", (json_int_t)w->wrong,
				      "min_rank", w->min_rank, "max_rank", w->max_rank);

		if (w->rank_us) {
			json_t *a = json_array();

			for (int k = 0; k < r.nranks; k++)
				json_array_append_new(a, rq_json_num(w->rank_us[k]));
			json_object_set_new(x, "rank_us", a);
		}
		if (w->pair_bw) {
			json_t *a = json_array();

			for (int k = 0; k < r.nranks; k++)
				json_array_append_new(a, json_pack("{s:i,s:i,s:o}", "from", k, "to",
								   w->pair_to[k], "GBps",
								   rq_json_num(w->pair_bw[k])));
			json_object_set_new(x, "pairs", a);
		}
		if (w->has_aggregate)
			json_object_set_new(x, "aggregate_GBps", rq_json_num(w->aggregate));
		json_array_append_new(rows, x);
	}
	for (size_t i = 0; i < r.nwrong; i++) {
		const struct coll_wrong *w = &r.wrong[i];

		json_array_append_new(wr, json_pack("{s:I,s:i,s:o,s:I,s:I,s:I,s:I}",
						    "size", (json_int_t)w->size, "rank", w->rank,
						    "host", rq_json_text(w->host),
						    "elements", (json_int_t)w->elements,
						    "first", (json_int_t)w->first,
						    "got", (json_int_t)w->got,
						    "expected", (json_int_t)w->expected));
	}
	json_t *cn = json_array();

	for (size_t i = 0; i < r.ncounters; i++) {
		const struct coll_counter *c = &r.counter[i];

		json_array_append_new(cn, c->port[0] ?
				      json_pack("{s:o,s:o,s:s,s:I,s:I}", "host",
						rq_json_text(c->host), "port", rq_json_text(c->port),
						"unit", c->words ? "words" : "pkts",
						"xmit", (json_int_t)c->xmit, "rcv",
						(json_int_t)c->rcv) :
				      json_pack("{s:o,s:n}", "host", rq_json_text(c->host),
						"port"));
	}
	json_object_set_new(o, "counters", cn);
	json_t *cpu = json_array(), *nodes = json_array();

	for (int k = 0; k < r.nranks; k++)
		if (!isnan(r.user_s[k]))
			json_array_append_new(cpu, json_pack("{s:i,s:o,s:o}", "rank", k, "user_s",
							     rq_json_num(r.user_s[k]), "sys_s",
							     rq_json_num(r.sys_s[k])));
	for (size_t i = 0; i < r.nnodes; i++)
		json_array_append_new(nodes, json_pack("{s:o,s:o,s:o}", "host",
						       rq_json_text(r.node[i].host), "busy_s",
						       rq_json_num(r.node[i].busy_s), "softirq_s",
						       rq_json_num(r.node[i].softirq_s)));
	json_object_set_new(o, "cpu", cpu);
	json_object_set_new(o, "node_cpu", nodes);
	json_object_set_new(o, "ranks", ranks);
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "wrong", wr);
	json_object_set_new(o, "ended", json_boolean(r.ended));
	json_object_set_new(o, "total_wrong", r.ended ? json_integer((json_int_t)r.total_wrong)
						      : json_null());
	coll_release(&r);
	*out = o;
	return 0;
}

const struct rq_parser rq_parser_rdmaqual_coll = {
	.name = "rdmaqual-coll",
	.help = "rdmaqual's own MPI benchmark (mpi/rdmaqual-coll.c): op, ranks and hosts, per "
		"size time avg/min/max (us), algbw and busbw (GB/s), #wrong, the ranks of the "
		"least and most time, per-rank times, ring/bisection links and aggregate, "
		"the first wrong element of each rank, what each node's RDMA ports carried "
		"(words or packets), each rank's user and system seconds and each node's busy "
		"and softirq seconds",
	.parse = coll_adapter,
};
