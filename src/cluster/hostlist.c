/* SPDX-License-Identifier: MIT */
/*
 * Hostlist expansion (see hostlist.h).  A recursive expansion: the text up
 * to the first bracket is a prefix, the bracket is a set of numbers and
 * ranges, and the rest is expanded again for each number, so several
 * brackets in one name give their product, as in Slurm.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cluster/hostlist.h"
#include "core/util.h"

struct hx {
	const char *expr;	/* the whole expression, for columns in errors */
	struct rq_hosts *out;
	char *err;
	size_t errsz;
};

static int hx_err(struct hx *x, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int hx_err(struct hx *x, const char *at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errsz, "hostlist \"%s\", column %d: %s", x->expr,
		 (int)(at - x->expr) + 1, msg);
	return -1;
}

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

static int add_host(struct hx *x, const char *at, const char *name)
{
	if (!*name)
		return hx_err(x, at, "an empty host name");
	if (strlen(name) > RQ_HOST_NAME_MAX)
		return hx_err(x, at, "a host name over %d characters", RQ_HOST_NAME_MAX);
	if (x->out->n >= RQ_HOSTS_MAX)
		return hx_err(x, at, "more than %d hosts", RQ_HOSTS_MAX);
	if (x->out->n == x->out->cap) {
		x->out->cap = x->out->cap ? x->out->cap * 2 : 16;
		x->out->v = xrealloc(x->out->v, x->out->cap * sizeof(char *));
	}
	x->out->v[x->out->n++] = xstrdup(name);
	return 0;
}

/* A decimal number at *p (no sign); its digit count in *width. */
static int read_num(struct hx *x, const char **p, unsigned long *v, int *width)
{
	const char *s = *p;
	unsigned long n = 0;

	if (**p < '0' || **p > '9')
		return hx_err(x, *p, "expected a number");
	while (**p >= '0' && **p <= '9') {
		if (n > 99999999UL)
			return hx_err(x, s, "number too large");
		n = n * 10 + (unsigned long)(**p - '0');
		(*p)++;
	}
	*v = n;
	*width = (int)(*p - s);
	return 0;
}

/*
 * Expand the name that starts at p and ends at the first ',' outside
 * brackets (or the end), with prefix already written.
 */
static int expand(struct hx *x, const char *p, const char *end, const char *prefix)
{
	const char *lb = p;

	while (lb < end && *lb != '[') {
		if (!host_char(*lb))
			return hx_err(x, lb, "'%c' is not allowed in a host name", *lb);
		lb++;
	}
	char *head = xasprintf("%s%.*s", prefix, (int)(lb - p), p);
	int ret = 0;

	if (lb == end) {
		ret = add_host(x, p, head);
		free(head);
		return ret;
	}
	const char *rb = memchr(lb, ']', (size_t)(end - lb));

	if (!rb) {
		free(head);
		return hx_err(x, lb, "'[' without ']'");
	}
	const char *q = lb + 1;

	if (q == rb)
		ret = hx_err(x, q, "empty brackets");
	while (!ret && q < rb) {
		unsigned long lo, hi;
		int wlo, whi;	/* the upper bound's width does not matter */

		if (read_num(x, &q, &lo, &wlo)) {
			ret = -1;
			break;
		}
		hi = lo;
		whi = wlo;
		if (*q == '-') {
			q++;
			if (read_num(x, &q, &hi, &whi)) {
				ret = -1;
				break;
			}
			if (hi < lo) {
				ret = hx_err(x, q, "range %lu-%lu runs backwards", lo, hi);
				break;
			}
			if (hi - lo >= RQ_HOSTS_MAX) {
				ret = hx_err(x, q, "range %lu-%lu has more than %d hosts", lo, hi,
					     RQ_HOSTS_MAX);
				break;
			}
		}
		if (q < rb && *q != ',') {
			ret = hx_err(x, q, "expected ',', '-' or ']' in brackets");
			break;
		}
		if (*q == ',')
			q++;
		/* Padding is the lower bound's width, as Slurm writes n[08-10]. */
		for (unsigned long i = lo; !ret && i <= hi; i++) {
			char *pre = xasprintf("%s%0*lu", head, wlo, i);

			ret = expand(x, rb + 1, end, pre);
			free(pre);
		}
	}
	free(head);
	return ret;
}

int rq_hostlist_expand(const char *expr, struct rq_hosts *out, char *err, size_t errsz)
{
	struct hx x = { .expr = expr, .out = out, .err = err, .errsz = errsz };
	const char *p = expr;

	if (!*p) {
		snprintf(err, errsz, "an empty host list");
		return -1;
	}
	for (;;) {
		const char *e = p;
		int depth = 0;

		while (*e && (depth || *e != ',')) {
			if (*e == '[')
				depth++;
			else if (*e == ']' && depth)
				depth--;
			e++;
		}
		if (expand(&x, p, e, ""))
			return -1;
		if (!*e)
			return 0;
		p = e + 1;
	}
}

long rq_hosts_find(const struct rq_hosts *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->v[i], name))
			return (long)i;
	return -1;
}

static int read_hostfile(const char *path, struct rq_hosts *out, char *err, size_t errsz)
{
	struct sb text = SB_INIT;
	unsigned lineno = 0;
	int ret = 0;

	if (read_file(path, &text, 16u << 20)) {
		snprintf(err, errsz, "cannot read node file %s: %s", path, strerror(errno));
		sb_release(&text);
		return -1;
	}
	for (char *line = text.buf, *next; line && *line && !ret; line = next) {
		char e2[384];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		char *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		line = strtrim(line);
		if (!*line)
			continue;
		/* A line may itself be a hostlist (n[01-04]), as pdsh's -w files allow. */
		if (rq_hostlist_expand(line, out, e2, sizeof(e2))) {
			snprintf(err, errsz, "%s:%u: %s", path, lineno, e2);
			ret = -1;
		}
	}
	if (!ret && !out->n) {
		snprintf(err, errsz, "node file %s lists no host", path);
		ret = -1;
	}
	sb_release(&text);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rq_nodes_resolve(const char *spec, struct rq_hosts *out, char *err, size_t errsz)
{
	int ret;

	if (!strcmp(spec, "slurm")) {
		const char *nl = getenv("SLURM_JOB_NODELIST");

		if (!nl || !*nl)
			nl = getenv("SLURM_NODELIST");
		if (!nl || !*nl) {
			snprintf(err, errsz, "--nodes slurm: SLURM_JOB_NODELIST is not set "
				 "(run inside salloc or sbatch)");
			return -1;
		}
		ret = rq_hostlist_expand(nl, out, err, errsz);
	} else if (spec[0] == '@') {
		ret = read_hostfile(spec + 1, out, err, errsz);
	} else {
		ret = rq_hostlist_expand(spec, out, err, errsz);
	}
	if (ret)
		return ret;
	/* A node named twice would be paired with itself: sorted copy, neighbours. */
	char **s = xmalloc(out->n * sizeof(*s));

	memcpy(s, out->v, out->n * sizeof(*s));
	qsort(s, out->n, sizeof(*s), cmp_str);
	for (size_t i = 1; i < out->n && !ret; i++)
		if (!strcmp(s[i], s[i - 1])) {
			snprintf(err, errsz, "node %s is listed twice", s[i]);
			ret = -1;
		}
	free(s);
	return ret;
}

void rq_hosts_release(struct rq_hosts *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i]);
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
