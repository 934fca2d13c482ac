/* SPDX-License-Identifier: MIT */
/*
 * qos-policy.conf lint and opensm's qos_* tables (see qos_policy.h).
 *
 * The grammar is opensm's (opensm/osm_qos_parser_l.l and _y.y): section
 * keywords alone on their line, "keyword: value" entries, values that are
 * single numbers, comma-separated lists of numbers or ranges (a-b),
 * VL:weight pairs, or strings; '#' starts a comment anywhere.  A block's
 * keywords are its own: "sl:" in a port-group is as wrong as "sll:".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "parsers/parsers.h"
#include "parsers/qos_policy.h"
#include "core/json_text.h"
#include "core/util.h"

enum blk { B_TOP, B_PGS, B_PG, B_SETUP, B_VLT, B_VLS, B_SLT, B_SLS, B_LVLS, B_LVL, B_RULES, B_RULE, B_ULPS, B_N };

static const struct {
	const char *open, *close;
	enum blk parent;
	const char *keys;	/* its "keyword:" entries, space-separated */
} blocks[B_N] = {
	[B_TOP] = { "", "", B_TOP, "" },
	[B_PGS] = { "port-groups", "end-port-groups", B_TOP, "" },
	[B_PG] = { "port-group", "end-port-group", B_PGS, "name use port-guid port-name pkey partition node-type" },
	[B_SETUP] = { "qos-setup", "end-qos-setup", B_TOP, "" },
	[B_VLT] = { "vlarb-tables", "end-vlarb-tables", B_SETUP, "" },
	[B_VLS] = { "vlarb-scope", "end-vlarb-scope", B_VLT, "group across vlarb-high vlarb-low vl-high-limit" },
	[B_SLT] = { "sl2vl-tables", "end-sl2vl-tables", B_SETUP, "" },
	[B_SLS] = { "sl2vl-scope", "end-sl2vl-scope", B_SLT,
		    "group across across-to across-from to from sl2vl-table" },
	[B_LVLS] = { "qos-levels", "end-qos-levels", B_TOP, "" },
	[B_LVL] = { "qos-level", "end-qos-level", B_LVLS, "name use sl mtu-limit rate-limit packet-life path-bits pkey" },
	[B_RULES] = { "qos-match-rules", "end-qos-match-rules", B_TOP, "" },
	[B_RULE] = { "qos-match-rule", "end-qos-match-rule", B_RULES,
		     "use qos-class source destination service-id pkey qos-level-name" },
	[B_ULPS] = { "qos-ulps", "end-qos-ulps", B_TOP, "" },
};

/* A name defined (port group, QoS level) or used, with where. */
struct use {
	char name[128];
	unsigned line, col;
	bool level;		/* a qos-level name (else a port group) */
};

struct lint {
	struct qos_policy *p;
	const struct qos_lint_opts *o;
	int vlcap;
	enum blk stack[8];
	unsigned open_line[8], open_col[8];
	int depth;
	/* the block being filled */
	bool has_name, has_sl, has_table;
	struct use *defs, *uses;
	size_t ndefs, nuses;
	bool ulp_default;
	unsigned levels_line;
};

static void diag(struct lint *l, bool warning, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void diag(struct lint *l, bool warning, unsigned line, unsigned col, const char *fmt, ...)
{
	struct qos_policy *p = l->p;
	struct qos_diag *d;
	va_list ap;

	if (p->nd >= 200)	/* a file that is not a policy at all: enough said */
		return;
	p->d = xrealloc(p->d, (p->nd + 1) * sizeof(*p->d));
	d = &p->d[p->nd++];
	d->line = line;
	d->col = col;
	d->warning = warning;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	if (warning)
		p->warnings++;
	else
		p->errors++;
}

#define ERR(l, line, col, ...) diag(l, false, line, col, __VA_ARGS__)

static bool has_key(const char *keys, const char *k)
{
	size_t n = strlen(k);

	/* "" is in every string, and strstr(p, "") never moves on */
	if (!n)
		return false;
	for (const char *p = keys; (p = strstr(p, k)); p += n)
		if ((p == keys || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static const char *vlcap_name(int cap)
{
	return cap >= 15 ? "VL0-14" : cap >= 8 ? "VL0-7" : cap >= 4 ? "VL0-3" : cap >= 2 ? "VL0-1" : "VL0";
}

/* opensm's numbers: 0x hex or decimal digits. */
bool qos_number(const char *s, size_t n, uint64_t *v)
{
	char buf[32], *end;

	if (!n || n >= sizeof(buf) || !isdigit((unsigned char)s[0]))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X') ? 16 : 10);
	return !errno && !*end;
}

size_t qos_split(const char *v, unsigned col, char sep, struct qos_item *it, size_t max)
{
	size_t k = 0;

	for (const char *p = v;; p++) {
		const char *e = strchrnul(p, sep);
		const char *a = p, *b = e;

		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		if (k < max)
			it[k++] = (struct qos_item){ a, (size_t)(b - a), col + (unsigned)(a - v) };
		if (!*e)
			break;
		p = e;
	}
	return k;
}

/* A list of numbers or ranges a-b, each at most max. */
static void ranges(struct lint *l, unsigned line, const char *key, const struct qos_item *it, size_t n,
		   uint64_t max)
{
	for (size_t i = 0; i < n; i++) {
		const char *dash = memchr(it[i].s, '-', it[i].n);
		uint64_t a, b;
		size_t an = dash ? (size_t)(dash - it[i].s) : it[i].n;

		while (an && isspace((unsigned char)it[i].s[an - 1]))
			an--;
		const char *bs = dash ? dash + 1 : NULL;

		while (bs && isspace((unsigned char)*bs))
			bs++;
		if (!qos_number(it[i].s, an, &a) || (bs && !qos_number(bs, it[i].n - (size_t)(bs - it[i].s), &b))) {
			ERR(l, line, it[i].col, "%s: \"%.*s\" is not a number or a range of numbers (0x1F, 7-9)",
			    key, (int)it[i].n, it[i].s);
			continue;
		}
		if (!bs)
			b = a;
		if (a > b)
			ERR(l, line, it[i].col, "%s: range %.*s runs backwards", key, (int)it[i].n, it[i].s);
		else if (b > max)
			ERR(l, line, it[i].col, "%s: %.*s is beyond 0x%" PRIx64, key, (int)it[i].n, it[i].s, max);
	}
}

static void add_use(struct use **v, size_t *n, const char *s, size_t len, unsigned line, unsigned col, bool level)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	snprintf((*v)[*n].name, sizeof((*v)[*n].name), "%.*s", (int)len, s);
	(*v)[*n].line = line;
	(*v)[*n].col = col;
	(*v)[*n].level = level;
	(*n)++;
}

static const struct use *find_def(const struct lint *l, const char *name, bool level)
{
	for (size_t i = 0; i < l->ndefs; i++)
		if (l->defs[i].level == level &&
		    (level ? !strcasecmp(l->defs[i].name, name) : !strcmp(l->defs[i].name, name)))
			return &l->defs[i];
	return NULL;
}

static void define(struct lint *l, const char *s, size_t n, unsigned line, unsigned col, bool level)
{
	char name[128];
	const struct use *u;

	snprintf(name, sizeof(name), "%.*s", (int)n, s);
	if (!n) {
		ERR(l, line, col, "name: empty");
		return;
	}
	u = find_def(l, name, level);
	if (u)
		ERR(l, line, col, "%s \"%s\" defined twice (first at line %u)", level ? "qos-level" : "port-group",
		    name, u->line);
	else
		add_use(&l->defs, &l->ndefs, s, n, line, col, level);
}

static void vl_check(struct lint *l, unsigned line, unsigned col, const char *key, uint64_t vl, bool sl2vl)
{
	/* VL 15 is the management VL: an SL2VL entry of 15 drops the SL's packets, a valid choice */
	if (sl2vl && vl == 15)
		return;
	if (vl > 14)
		ERR(l, line, col, "%s: VL %" PRIu64 " is not a data VL (0 to 14%s)", key, vl, sl2vl ? ", or 15" : "");
	else if ((int)vl >= l->vlcap)
		ERR(l, line, col, "%s: VL %" PRIu64 " is beyond the ports' VLCap (%s)", key, vl, vlcap_name(l->vlcap));
}

static void entry(struct lint *l, enum blk b, const char *key, const char *v, unsigned line, unsigned col)
{
	struct qos_item it[80];
	size_t n = qos_split(v, col, ',', it, ARRAY_SIZE(it));
	uint64_t x;

	if (!*v && strcmp(key, "use")) {
		ERR(l, line, col, "%s: no value", key);
		return;
	}
	if (!strcmp(key, "name")) {
		if (l->has_name)
			ERR(l, line, col, "%s has two 'name' entries", blocks[b].open);
		l->has_name = true;
		define(l, v, strlen(v), line, col, b == B_LVL);
	} else if (!strcmp(key, "use") || !strcmp(key, "partition")) {
		/* free text; a partition is judged against partitions.conf, which a policy lint does not see */
	} else if (!strcmp(key, "port-guid") || !strcmp(key, "service-id") || !strcmp(key, "path-bits") ||
		   !strcmp(key, "qos-class")) {
		ranges(l, line, key, it, n, !strcmp(key, "path-bits") ? 0x7f : !strcmp(key, "qos-class") ? 0xfff :
								UINT64_MAX);
	} else if (!strcmp(key, "pkey")) {
		ranges(l, line, key, it, n, 0xffff);
	} else if (!strcmp(key, "port-name")) {
		for (size_t i = 0; i < n; i++) {
			const char *slash = NULL;

			for (size_t j = 0; j < it[i].n; j++)
				if (it[i].s[j] == '/')
					slash = it[i].s + j;
			size_t rest = slash ? it[i].n - (size_t)(slash - it[i].s) : 0;

			if (!slash || rest < 3 || (slash[1] != 'p' && slash[1] != 'P') ||
			    !qos_number(slash + 2, rest - 2, &x) || !x)
				ERR(l, line, it[i].col, "port-name: \"%.*s\" is not NODE-DESCRIPTION/PN (a port number from 1)",
				    (int)it[i].n, it[i].s);
		}
	} else if (!strcmp(key, "node-type")) {
		static const char *const types[] = { "CA", "SWITCH", "ROUTER", "ALL", "SELF" };

		for (size_t i = 0; i < n; i++) {
			size_t t;

			for (t = 0; t < ARRAY_SIZE(types); t++)
				if (it[i].n == strlen(types[t]) && !strncasecmp(it[i].s, types[t], it[i].n))
					break;
			if (t == ARRAY_SIZE(types))
				ERR(l, line, it[i].col, "node-type: \"%.*s\" is not CA, SWITCH, ROUTER, ALL or SELF",
				    (int)it[i].n, it[i].s);
		}
	} else if (!strcmp(key, "group") || !strcmp(key, "across") || !strcmp(key, "across-to") ||
		   !strcmp(key, "across-from") || !strcmp(key, "source") || !strcmp(key, "destination")) {
		for (size_t i = 0; i < n; i++)
			if (it[i].n)
				add_use(&l->uses, &l->nuses, it[i].s, it[i].n, line, it[i].col, false);
			else
				ERR(l, line, it[i].col, "%s: an empty port-group name", key);
	} else if (!strcmp(key, "qos-level-name")) {
		add_use(&l->uses, &l->nuses, v, strlen(v), line, col, true);
	} else if (!strcmp(key, "vlarb-high") || !strcmp(key, "vlarb-low")) {
		if (n > 64)
			ERR(l, line, col, "%s: %zu entries, a VLArb table has 64", key, n);
		for (size_t i = 0; i < n; i++) {
			const char *c = memchr(it[i].s, ':', it[i].n);
			uint64_t w;

			if (!c || !qos_number(it[i].s, (size_t)(c - it[i].s), &x) ||
			    !qos_number(c + 1, it[i].n - (size_t)(c + 1 - it[i].s), &w)) {
				ERR(l, line, it[i].col, "%s: \"%.*s\" is not VL:WEIGHT", key, (int)it[i].n, it[i].s);
				continue;
			}
			vl_check(l, line, it[i].col, key, x, false);
			if (w > 255)
				ERR(l, line, (unsigned)(it[i].col + (c + 1 - it[i].s)), "%s: weight %" PRIu64 " is beyond 255",
				    key, w);
		}
	} else if (!strcmp(key, "sl2vl-table")) {
		if (l->has_table)
			ERR(l, line, col, "sl2vl-scope has a second sl2vl-table");
		l->has_table = true;
		if (n != 16)
			ERR(l, line, col, "sl2vl-table: %zu values, one per SL (16) expected", n);
		for (size_t i = 0; i < n; i++) {
			if (!qos_number(it[i].s, it[i].n, &x))
				ERR(l, line, it[i].col, "sl2vl-table: \"%.*s\" is not a VL", (int)it[i].n, it[i].s);
			else
				vl_check(l, line, it[i].col, "sl2vl-table", x, true);
		}
	} else if (!strcmp(key, "to") || !strcmp(key, "from")) {
		if (strcmp(v, "*"))
			ranges(l, line, key, it, n, 127);	/* OSM_QOS_POLICY_MAX_PORTS_ON_SWITCH - 1 */
	} else {
		/* single numbers: sl, mtu-limit, rate-limit, packet-life, vl-high-limit */
		static const struct {
			const char *key;
			uint64_t min, max;
			const char *what;
		} num[] = {
			{ "sl", 0, 15, "an SL is 0 to 15" },
			{ "mtu-limit", 1, 5, "1 (256) to 5 (4096)" },
			{ "rate-limit", 2, 24, "an IB rate code, 2 (2.5 Gb/s) to 24" },
			{ "packet-life", 0, 31, "0 to 31" },
			{ "vl-high-limit", 0, 255, "0 to 255" },
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(num) && strcmp(num[i].key, key); i++)
			;
		if (i == ARRAY_SIZE(num))
			return;
		if (!strcmp(key, "sl")) {
			if (l->has_sl)
				ERR(l, line, col, "qos-level has two 'sl' entries");
			l->has_sl = true;
		}
		if (!qos_number(v, strlen(v), &x))
			ERR(l, line, col, "%s: \"%s\" is not a number", key, v);
		else if (x < num[i].min || x > num[i].max)
			ERR(l, line, col, "%s: %" PRIu64 " is out of range (%s)", key, x, num[i].what);
	}
}

/* A qos-ulps rule: ULP[, QUALIFIER VALUES] : SL */
static void ulp_rule(struct lint *l, const char *s, unsigned line, unsigned col)
{
	static const struct {
		const char *ulp, *quals;	/* qualifiers allowed; "-" first: may stand alone */
	} ulps[] = {
		{ "default", "-" }, { "sdp", "- port-num" }, { "rds", "- port-num" }, { "iser", "- port-num" },
		{ "srp", "target-port-guid" }, { "ipoib", "- pkey" },
		{ "any", "service-id pkey target-port-guid source-port-guid source-target-port-guid" },
	};
	const char *colon = strrchr(s, ':'), *comma = strchr(s, ',');
	size_t wn = strcspn(s, " \t,:"), u;
	uint64_t sl;

	for (u = 0; u < ARRAY_SIZE(ulps); u++)
		if (wn == strlen(ulps[u].ulp) && !strncasecmp(s, ulps[u].ulp, wn))
			break;
	if (u == ARRAY_SIZE(ulps)) {
		ERR(l, line, col, "unknown ULP \"%.*s\" in qos-ulps (default, sdp, rds, iser, srp, ipoib, any)", (int)wn, s);
		return;
	}
	if (!colon) {
		ERR(l, line, col, "qos-ulps rule without ': SL'");
		return;
	}
	const char *v = colon + 1;

	while (isspace((unsigned char)*v))
		v++;
	if (!qos_number(v, strlen(v), &sl))
		ERR(l, line, col + (unsigned)(v - s), "qos-ulps: SL \"%s\" is not a number", v);
	else if (sl > 15)
		ERR(l, line, col + (unsigned)(v - s), "qos-ulps: SL %" PRIu64 " is out of range (an SL is 0 to 15)", sl);
	if (u == 0)
		l->ulp_default = true;
	if (!comma || comma > colon) {
		if (ulps[u].quals[0] != '-')
			ERR(l, line, col, "qos-ulps: %s needs a qualifier (%s)", ulps[u].ulp, ulps[u].quals);
		return;
	}
	const char *q = comma + 1;

	while (isspace((unsigned char)*q))
		q++;
	size_t qn = strcspn(q, " \t:");
	char qual[32];

	snprintf(qual, sizeof(qual), "%.*s", (int)qn, q);
	if (u == 0 || !has_key(ulps[u].quals, qual)) {
		ERR(l, line, col + (unsigned)(q - s), "qos-ulps: \"%s\" is not a qualifier of %s%s%s%s", qual,
		    ulps[u].ulp, u ? " (" : "", u ? ulps[u].quals + (ulps[u].quals[0] == '-' ? 2 : 0) : "", u ? ")" : "");
		return;
	}
	const char *vals = q + qn;

	while (isspace((unsigned char)*vals))
		vals++;
	char buf[512];
	struct qos_item it[64];

	snprintf(buf, sizeof(buf), "%.*s", (int)(colon - vals), vals);
	strtrim(buf);
	if (!buf[0]) {
		ERR(l, line, col + (unsigned)(vals - s), "qos-ulps: %s %s without values", ulps[u].ulp, qual);
		return;
	}
	size_t n = qos_split(buf, col + (unsigned)(vals - s), ',', it, ARRAY_SIZE(it));

	ranges(l, line, qual, it, n,
	       !strcmp(qual, "port-num") || !strcmp(qual, "pkey") ? 0xffff : UINT64_MAX);
}

static void block_end(struct lint *l, enum blk b, unsigned line, unsigned col)
{
	if ((b == B_PG || b == B_LVL) && !l->has_name)
		ERR(l, line, col, "%s without a name", blocks[b].open);
	if (b == B_LVL && !l->has_sl)
		ERR(l, line, col, "qos-level without an sl (opensm refuses it)");
}

static void statement(struct lint *l, const char *s, unsigned line, unsigned col)
{
	enum blk cur = l->stack[l->depth];
	size_t wn = 0;

	while (s[wn] && (isalnum((unsigned char)s[wn]) || s[wn] == '-' || s[wn] == '_'))
		wn++;
	if (cur == B_ULPS && !(wn == 12 && !strncmp(s, "end-qos-ulps", 12))) {
		ulp_rule(l, s, line, col);
		l->p->ulp_rules++;
		return;
	}
	for (int b = 1; b < B_N; b++) {
		bool open = wn == strlen(blocks[b].open) && !strncmp(s, blocks[b].open, wn);
		bool close = wn == strlen(blocks[b].close) && !strncmp(s, blocks[b].close, wn);

		if (!open && !close)
			continue;
		if (s[wn])
			ERR(l, line, col + (unsigned)wn, "text after '%.*s' (a section keyword stands alone on its line)",
			    (int)wn, s);
		if (open) {
			if (blocks[b].parent != cur) {
				ERR(l, line, col, "'%s' %s%s%s", blocks[b].open, cur ? "inside " : "outside ",
				    cur ? blocks[cur].open : blocks[blocks[b].parent].open,
				    cur ? "" : " (it belongs in that section)");
				return;
			}
			if (l->depth + 1 >= (int)ARRAY_SIZE(l->stack))
				return;
			l->stack[++l->depth] = (enum blk)b;
			l->open_line[l->depth] = line;
			l->open_col[l->depth] = col;
			l->has_name = l->has_sl = l->has_table = false;
			if (b == B_PG)
				l->p->port_groups++;
			else if (b == B_LVL)
				l->p->qos_levels++;
			else if (b == B_RULE)
				l->p->match_rules++;
			else if (b == B_LVLS && !l->levels_line)
				l->levels_line = line;
			else if (b == B_VLT || b == B_SLT) {
				l->p->setup_tables = true;
				diag(l, true, line, col, "opensm parses %s and ignores it: the tables ports get are "
				     "opensm.conf's qos_* options (qos_sl2vl, qos_vlarb_high, qos_vlarb_low)", blocks[b].open);
			}
			return;
		}
		if ((int)cur != b) {
			if (cur)
				ERR(l, line, col, "'%s' while %s (line %u) is open", blocks[b].close, blocks[cur].open,
				    l->open_line[l->depth]);
			else
				ERR(l, line, col, "'%s' without %s", blocks[b].close, blocks[b].open);
			return;
		}
		block_end(l, (enum blk)b, l->open_line[l->depth], l->open_col[l->depth]);
		l->depth--;
		return;
	}
	const char *after = s + wn;

	while (*after == ' ' || *after == '\t')
		after++;
	char key[48];

	snprintf(key, sizeof(key), "%.*s", (int)(wn < sizeof(key) ? wn : sizeof(key) - 1), s);
	if (*after != ':' || !wn) {
		if (!wn)
			ERR(l, line, col, "unexpected \"%.20s\"", s);
		else
			ERR(l, line, col, "unknown keyword '%s'%s%s", key, cur ? " in " : "",
			    cur ? blocks[cur].open : " (sections: port-groups, qos-setup, qos-levels, qos-match-rules, qos-ulps)");
		return;
	}
	if (!has_key(blocks[cur].keys, key)) {
		bool elsewhere = false;

		for (int b = 1; b < B_N && !elsewhere; b++)
			elsewhere = has_key(blocks[b].keys, key);
		if (!blocks[cur].keys[0])
			ERR(l, line, col, "%s '%s:' %s%s", elsewhere ? "keyword" : "unknown keyword", key,
			    cur ? "directly in " : "outside any section", cur ? blocks[cur].open : "");
		else {
			struct sb list = SB_INIT;

			for (const char *w = blocks[cur].keys; *w;) {
				size_t wl = strcspn(w, " ");

				sb_addf(&list, "%s%.*s", list.len ? ", " : "", (int)wl, w);
				w += wl + (w[wl] == ' ');
			}
			ERR(l, line, col, "%s '%s' in %s (expected %s)", elsewhere ? "misplaced keyword" : "unknown keyword",
			    key, blocks[cur].open, list.buf);
			sb_release(&list);
		}
		return;
	}
	const char *v = after + 1;

	while (*v == ' ' || *v == '\t')
		v++;
	entry(l, cur, key, v, line, col + (unsigned)(v - s));
}

int qos_policy_lint(const char *text, size_t len, const struct qos_lint_opts *o, struct qos_policy *out)
{
	struct lint l = { .p = out, .o = o };
	unsigned line = 0;
	char *buf = xmalloc(len + 1);

	memset(out, 0, sizeof(*out));
	memcpy(buf, text, len);
	buf[len] = '\0';
	l.vlcap = o && o->vlcap > 0 && o->vlcap <= 15 ? o->vlcap : 15;
	for (char *p = buf, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		bool quoted = false;
		char *c, *s;

		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		line++;
		for (c = p; *c; c++) {
			if (*c == '"')
				quoted = !quoted;
			else if (*c == '#' && !quoted)
				break;
			else if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\r')
				break;
		}
		if (*c && *c != '#') {
			ERR(&l, line, (unsigned)(c - p) + 1, "control character 0x%02x", (unsigned char)*c);
			continue;
		}
		*c = '\0';
		/* columns count from the line's first byte, as an editor shows them (a tab is one) */
		for (s = p; *s == ' ' || *s == '\t'; s++)
			;
		for (char *e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (*s)
			statement(&l, s, line, (unsigned)(s - p) + 1);
	}
	for (; l.depth > 0; l.depth--)
		ERR(&l, l.open_line[l.depth], l.open_col[l.depth], "%s is not closed (%s missing)",
		    blocks[l.stack[l.depth]].open, blocks[l.stack[l.depth]].close);
	for (size_t i = 0; i < l.nuses; i++) {
		const struct use *u = &l.uses[i];

		if (!find_def(&l, u->name, u->level))
			ERR(&l, u->line, u->col, "%s \"%s\" is used but not defined", u->level ? "qos-level" : "port-group",
			    u->name);
	}
	if (!find_def(&l, "DEFAULT", true) && !l.ulp_default)
		ERR(&l, l.levels_line ? l.levels_line : 1, 1, "no qos-level named DEFAULT and no 'default' rule in "
		    "qos-ulps: opensm refuses the policy (ERR AC10)");
	free(l.defs);
	free(l.uses);
	free(buf);
	return out->errors ? -EINVAL : 0;
}

void qos_policy_release(struct qos_policy *p)
{
	free(p->d);
	memset(p, 0, sizeof(*p));
}

/* ---- opensm.conf's qos_* options */

/* The value of KEY in an opensm.conf text ("key value" lines), or NULL; "(null)" is unset. */
char *qos_conf_value(const char *conf, size_t len, const char *key, unsigned *at)
{
	size_t kn = strlen(key);
	unsigned line = 0;
	char *found = NULL;

	for (const char *p = conf; p && p < conf + len;) {
		const char *e = memchr(p, '\n', (size_t)(conf + len - p));
		const char *q = p, *end = e ? e : conf + len;

		line++;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(end - q) > kn && !strncmp(q, key, kn) && (q[kn] == ' ' || q[kn] == '\t')) {
			char *v = xstrndup(q + kn, (size_t)(end - q - (ptrdiff_t)kn));
			char *hash = strchr(v, '#');

			if (hash)
				*hash = '\0';
			free(found);	/* opensm keeps the last */
			found = xstrdup(strtrim(v));
			free(v);
			*at = line;
			if (!strcmp(found, "(null)") || !found[0]) {
				free(found);
				found = NULL;
			}
		}
		p = e ? e + 1 : NULL;
	}
	return found;
}

/* ---- rdmaqual parse qos_policy: the lint's findings as JSON (a policy with errors still parses) */
static int qos_policy_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct qos_policy p;
	json_t *d = json_array();

	qos_policy_lint(text, len, NULL, &p);
	for (size_t i = 0; i < p.nd; i++)
		json_array_append_new(d, json_pack("{s:i, s:i, s:s, s:o}", "line", (int)p.d[i].line, "col",
						   (int)p.d[i].col, "severity", p.d[i].warning ? "warning" : "error",
						   "message", rq_json_text(p.d[i].msg)));
	*out = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:o}", "errors", (int)p.errors, "warnings",
			 (int)p.warnings, "port_groups", (int)p.port_groups, "qos_levels", (int)p.qos_levels,
			 "match_rules", (int)p.match_rules, "ulp_rules", (int)p.ulp_rules, "setup_tables",
			 p.setup_tables, "diagnostics", d);
	qos_policy_release(&p);
	return 0;
}

const struct rq_parser rq_parser_qos_policy = {
	.name = "qos_policy",
	.help = "an opensm qos-policy.conf linted against opensm's grammar: errors and warnings at line:col, sections counted",
	.parse = qos_policy_adapter,
};
