/* SPDX-License-Identifier: MIT */
/*
 * ibv_*_pingpong and rping output parsers: what a lab's hand-made logs of
 * these tools say, so `rdmaqual parse` can import them beside rdmaqual's
 * own figures.  Formats from rdma-core 44 (libibverbs/examples/pingpong.c,
 * rc_pingpong.c, ud_pingpong.c; librdmacm/examples/rping.c).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>
#include "parsers/parse_pingpong.h"
#include "parsers/parsers.h"
#include "core/util.h"

static bool contains_ci(const char *s, const char *const *pats, size_t n)
{
	char low[512];
	size_t i;

	for (i = 0; s[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = '\0';
	for (i = 0; i < n; i++)
		if (strstr(low, pats[i]))
			return true;
	return false;
}

/* Calls fn for each line (trimmed, NUL-free); stops when fn returns non-zero. */
typedef int (*line_fn)(void *arg, char *s, unsigned lineno);

static int each_line(const char *text, size_t len, line_fn fn, void *arg,
		     char *err, size_t errsz)
{
	struct rq_lines l;
	char *line;
	int ret = 0;

	rq_lines_init(&l, text, len);
	while (!ret && (line = rq_lines_next(&l)))
		ret = l.nul ? rq_parse_error(err, errsz, l.no, "NUL byte in text")
			    : fn(arg, strtrim(line), l.no);
	rq_lines_release(&l);
	return ret;
}

/* ---- ibv_*_pingpong ---- */

struct pp_state {
	struct pp_report *r;
	char *err;
	size_t errsz;
	bool seen;
};

/* "LID 0x0000, QPN 0x000012, PSN 0xdedad9, GID fe80::1" (ud: "PSN 0x..: GID") */
static bool parse_addr(const char *s, struct pp_addr *a)
{
	char gid[48] = "";
	int n;

	n = sscanf(s, "LID 0x%x, QPN 0x%x, PSN 0x%x%*[,:] GID %47s", &a->lid, &a->qpn, &a->psn, gid);
	if (n < 3)
		return false;
	snprintf(a->gid, sizeof(a->gid), "%s", gid);
	a->set = true;
	return true;
}

static int pp_line(void *arg, char *s, unsigned lineno)
{
	static const char *const errpats[] = {
		"couldn't", "failed", "error", "unable", "requested", "unexpected",
		"no ib devices", "not found", "no rdma devices", "usage",
	};
	struct pp_state *st = arg;
	struct pp_report *r = st->r;
	unsigned long long u;
	double a, b;
	char unit[32];

	if (!*s)
		return 0;
	if (str_starts(s, "local address:")) {
		if (!parse_addr(strtrim(s + 14), &r->local)) {
			rq_parse_error(st->err, st->errsz, lineno, "expected 'LID 0x.., QPN 0x.., PSN 0x..'");
			return -EINVAL;
		}
	} else if (str_starts(s, "remote address:")) {
		if (!parse_addr(strtrim(s + 15), &r->remote)) {
			rq_parse_error(st->err, st->errsz, lineno, "expected 'LID 0x.., QPN 0x.., PSN 0x..'");
			return -EINVAL;
		}
	} else if (sscanf(s, "%llu bytes in %lf seconds = %lf %31s", &u, &a, &b, unit) == 4 &&
		   !strcmp(unit, "Mbit/sec")) {
		r->has_bw = true;
		r->bytes = u;
		r->bw_seconds = a;
		r->mbit_per_sec = b;
	} else if (sscanf(s, "%llu iters in %lf seconds = %lf %31s", &u, &a, &b, unit) == 4 &&
		   !strcmp(unit, "usec/iter")) {
		r->has_lat = true;
		r->iters = u;
		r->lat_seconds = a;
		r->usec_per_iter = b;
	} else if (contains_ci(s, errpats, ARRAY_SIZE(errpats))) {
		if (!r->error[0]) {
			snprintf(r->error, sizeof(r->error), "%s", s);
			r->error_line = lineno;
		}
	} else {
		rq_parse_error(st->err, st->errsz, lineno, "not pingpong output: '%.60s'", s);
		return -EINVAL;
	}
	st->seen = true;
	return 0;
}

int pingpong_parse(const char *text, size_t len, struct pp_report *r, char *err, size_t errsz)
{
	struct pp_state st = { .r = r, .err = err, .errsz = errsz };
	int ret;

	memset(r, 0, sizeof(*r));
	if (err && errsz)
		err[0] = '\0';
	ret = each_line(text, len, pp_line, &st, err, errsz);
	if (!ret && !st.seen) {
		rq_parse_error(err, errsz, 0, "empty: no address, result or error line");
		ret = -EINVAL;
	}
	return ret;
}

static json_t *addr_json(const struct pp_addr *a)
{
	json_t *o = json_object();

	json_object_set_new(o, "lid", json_integer(a->lid));
	json_object_set_new(o, "qpn", json_integer(a->qpn));
	json_object_set_new(o, "psn", json_integer(a->psn));
	if (a->gid[0])
		json_object_set_new(o, "gid", rq_json_text(a->gid));
	return o;
}

static int pp_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct pp_report r;
	json_t *o;
	int ret = pingpong_parse(text, len, &r, err, errsz);

	if (ret)
		return ret;
	o = json_object();
	json_object_set_new(o, "tool", json_string("ibv_pingpong"));
	if (r.local.set)
		json_object_set_new(o, "local", addr_json(&r.local));
	if (r.remote.set)
		json_object_set_new(o, "remote", addr_json(&r.remote));
	if (r.has_bw) {
		json_object_set_new(o, "bytes", json_integer((json_int_t)r.bytes));
		json_object_set_new(o, "seconds", rq_json_num(r.bw_seconds));
		json_object_set_new(o, "mbit_per_sec", rq_json_num(r.mbit_per_sec));
	}
	if (r.has_lat) {
		json_object_set_new(o, "iters", json_integer((json_int_t)r.iters));
		json_object_set_new(o, "usec_per_iter", rq_json_num(r.usec_per_iter));
	}
	if (r.error[0]) {
		json_object_set_new(o, "error", rq_json_text(r.error));
		json_object_set_new(o, "error_line", json_integer(r.error_line));
	}
	json_object_set_new(o, "ok", json_boolean(r.has_lat && !r.error[0]));
	*out = o;
	return 0;
}

const struct rq_parser rq_parser_ibv_rc_pingpong = {
	.name = "ibv_rc_pingpong",
	.help = "ibv_{rc,uc,ud,srq}_pingpong output (either side): addresses, Mbit/sec, usec/iter",
	.parse = pp_adapter,
};

/* ---- rping ---- */

struct rping_state {
	struct rping_report *r;
	bool seen;
};

/* rping fills its buffer after "rdma-ping-K: " with 'A'+K, 'A'+K+1, ... wrapping 'z' -> 'A'. */
static bool rping_payload_ok(long k, const char *p)
{
	int c = 65 + (int)(k % 58);

	for (; *p; p++) {
		if (*p != c)
			return false;
		if (++c > 122)
			c = 65;
	}
	return true;
}

static void rping_event(struct rping_report *r, const char *s)
{
	char ev[40];

	if (sscanf(s, "%39[A-Z_]", ev) != 1 || !str_starts(ev, "RDMA_CM_EVENT_"))
		return;
	if (r->nevents < ARRAY_SIZE(r->events))
		snprintf(r->events[r->nevents], sizeof(r->events[0]), "%s", ev);
	r->nevents++;
	if (!strcmp(ev, "RDMA_CM_EVENT_ESTABLISHED"))
		r->established = true;
	if (!strcmp(ev, "RDMA_CM_EVENT_DISCONNECTED"))
		r->disconnected = true;
}

static int rping_line(void *arg, char *s, unsigned lineno)
{
	static const char *const errpats[] = {
		"error", "failed", "cannot", "no such", "unreachable", "rejected",
		"timed out", "wait for connected state", "no rdma devices",
		"rdma_resolve_addr:", "rdma_connect:", "invalid",
	};
	struct rping_state *st = arg;
	struct rping_report *r = st->r;
	const char *p;
	long k;
	int off = 0;

	if ((p = strstr(s, "ping data: rdma-ping-")) && (p == s || str_starts(s, "server ") ||
							   str_starts(s, "client "))) {
		if (sscanf(p, "ping data: rdma-ping-%ld: %n", &k, &off) < 1 || !off) {
			if (!r->bad_line)
				r->bad_line = lineno;
			r->data_ok = false;
		} else {
			if (r->pings == 0)
				r->first_seq = k;
			else if (r->last_seq == LONG_MAX || k != r->last_seq + 1)
				r->in_order = false;	/* nothing follows LONG_MAX (no overflow) */
			if (r->pings == 0 && k != 0)
				r->in_order = false;
			r->last_seq = k;
			if (!rping_payload_ok(k, p + off)) {
				r->data_ok = false;
				if (!r->bad_line)
					r->bad_line = lineno;
			}
			r->pings++;
		}
		st->seen = true;
		return 0;
	}
	if ((p = strstr(s, "cma_event type "))) {
		rping_event(r, p + 15);
		st->seen = true;
		return 0;
	}
	if (str_starts(s, "cma event ")) {	/* error events: "cma event X, error N" */
		rping_event(r, s + 10);
	} else if (!strcmp(s, "ESTABLISHED")) {
		r->established = true;
		st->seen = true;
		return 0;
	} else if (strstr(s, "DISCONNECT EVENT")) {
		r->disconnected = true;
		st->seen = true;
		return 0;
	}
	if (contains_ci(s, errpats, ARRAY_SIZE(errpats))) {
		if (!r->error[0]) {
			snprintf(r->error, sizeof(r->error), "%s", s);
			r->error_line = lineno;
		}
		st->seen = true;
	}
	/* rping -d prints many more debug lines; they carry nothing to judge */
	return 0;
}

int rping_parse(const char *text, size_t len, struct rping_report *r, char *err, size_t errsz)
{
	struct rping_state st = { .r = r };
	int ret;

	memset(r, 0, sizeof(*r));
	r->first_seq = r->last_seq = -1;
	r->in_order = r->data_ok = true;
	if (err && errsz)
		err[0] = '\0';
	ret = each_line(text, len, rping_line, &st, err, errsz);
	if (!ret && !st.seen) {
		rq_parse_error(err, errsz, 0, "not rping output: no ping data, CM event or error line");
		ret = -EINVAL;
	}
	return ret;
}

static int rping_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct rping_report r;
	json_t *o, *ev;
	int ret = rping_parse(text, len, &r, err, errsz);

	if (ret)
		return ret;
	o = json_object();
	json_object_set_new(o, "tool", json_string("rping"));
	json_object_set_new(o, "pings", json_integer(r.pings));
	if (r.pings) {
		json_object_set_new(o, "first_seq", json_integer(r.first_seq));
		json_object_set_new(o, "last_seq", json_integer(r.last_seq));
	}
	json_object_set_new(o, "in_order", json_boolean(r.in_order));
	json_object_set_new(o, "data_ok", json_boolean(r.data_ok));
	if (r.bad_line)
		json_object_set_new(o, "bad_line", json_integer(r.bad_line));
	json_object_set_new(o, "established", json_boolean(r.established));
	json_object_set_new(o, "disconnected", json_boolean(r.disconnected));
	ev = json_array();
	for (unsigned i = 0; i < r.nevents && i < ARRAY_SIZE(r.events); i++)
		json_array_append_new(ev, rq_json_text(r.events[i]));
	json_object_set_new(o, "cm_events", ev);
	if (r.error[0]) {
		json_object_set_new(o, "error", rq_json_text(r.error));
		json_object_set_new(o, "error_line", json_integer(r.error_line));
	}
	json_object_set_new(o, "ok", json_boolean(r.pings > 0 && r.in_order && r.data_ok &&
						 !r.error[0]));
	*out = o;
	return 0;
}

const struct rq_parser rq_parser_rping = {
	.name = "rping",
	.help = "rping -v output (client or server, with or without -d): pings, payload check, CM events",
	.parse = rping_adapter,
};
