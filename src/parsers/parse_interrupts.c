/* SPDX-License-Identifier: MIT */
/*
 * /proc/interrupts parser (see parse_interrupts.h).  Counts are the
 * leading all-digit tokens after "IRQ:", at most one per header CPU; the
 * rest is the description.  Without a header (a grep excerpt) the first
 * numbered line fixes the number of CPU columns.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/parse_interrupts.h"
#include "parsers/parsers.h"
#include "core/util.h"

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

int interrupts_parse(const char *text, size_t len, struct interrupts *out, char *err, size_t errsz)
{
	struct rq_lines lines;
	char *line;
	int ret = 0;
	bool header = false;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&lines, text, len);
	while ((line = rq_lines_next(&lines))) {
		unsigned ln = lines.no;
		char *p = line, *colon;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		if (!header && out->n == 0 && str_starts(p, "CPU")) {
			/* Header: CPU ids of the columns. */
			for (char *hs = NULL, *t = strtok_r(p, " \t", &hs); t; t = strtok_r(NULL, " \t", &hs)) {
				if (!str_starts(t, "CPU") || !all_digits(t + 3, strlen(t + 3))) {
					ret = rq_parse_error(err, errsz, ln, "bad CPU header token \"%s\"", t);
					goto out;
				}
				out->cpus = xrealloc(out->cpus, (size_t)(out->ncpus + 1) * sizeof(*out->cpus));
				out->cpus[out->ncpus++] = atoi(t + 3);
			}
			header = true;
			continue;
		}
		colon = strchr(p, ':');
		if (!colon || colon == p || strcspn(p, " \t") < (size_t)(colon - p)) {
			ret = rq_parse_error(err, errsz, ln, "expected \"IRQ: counts...\"");
			goto out;
		}
		struct irq_line l;

		memset(&l, 0, sizeof(l));
		snprintf(l.label, sizeof(l.label), "%.*s", (int)(colon - p), p);
		l.irq = all_digits(p, (size_t)(colon - p)) ? atoi(p) : -1;
		p = colon + 1;
		int maxc = out->ncpus ? out->ncpus : 1 << 16;

		for (;;) {
			char *q = p, *e;
			size_t tl;

			while (isspace((unsigned char)*q))
				q++;
			tl = strcspn(q, " \t");
			if (!all_digits(q, tl) || l.ncounts >= maxc)
				break;
			/* "31981569-edge" is not a count: the token must end at a blank. */
			e = q + tl;
			l.counts = xrealloc(l.counts, (size_t)(l.ncounts + 1) * sizeof(*l.counts));
			l.counts[l.ncounts] = strtoull(q, NULL, 10);
			l.total += l.counts[l.ncounts++];
			p = e;
		}
		if (l.irq >= 0 && l.ncounts == 0) {
			ret = rq_parse_error(err, errsz, ln, "IRQ %d has no counts", l.irq);
			goto out;
		}
		if (!out->ncpus && l.irq >= 0) {
			/* No header: the first numbered line fixes the columns. */
			out->ncpus = l.ncounts;
			out->cpus = xcalloc((size_t)l.ncounts + 1, sizeof(*out->cpus));
			for (int i = 0; i < l.ncounts; i++)
				out->cpus[i] = i;
		}
		if (l.irq >= 0 && l.ncounts != out->ncpus) {
			ret = rq_parse_error(err, errsz, ln, "IRQ %d has %d counts for %d CPUs", l.irq,
					     l.ncounts, out->ncpus);
			free(l.counts);
			goto out;
		}
		snprintf(l.desc, sizeof(l.desc), "%s", strtrim(p));
		const char *last = strrchr(l.desc, ' ');

		snprintf(l.name, sizeof(l.name), "%.95s", last ? last + 1 : l.desc);
		out->v = xrealloc(out->v, (size_t)(out->n + 1) * sizeof(*out->v));
		out->v[out->n++] = l;
	}
out:
	rq_lines_release(&lines);
	if (ret)
		interrupts_release(out);
	return ret;
}

void interrupts_release(struct interrupts *in)
{
	for (int i = 0; i < in->n; i++)
		free(in->v[i].counts);
	free(in->v);
	free(in->cpus);
	memset(in, 0, sizeof(*in));
}

const struct irq_line *interrupts_find(const struct interrupts *in, int irq)
{
	for (int i = 0; i < in->n; i++)
		if (in->v[i].irq == irq)
			return &in->v[i];
	return NULL;
}

int mlx5_irq_name(const char *name, char *kind, size_t kindsz, int *index, char *bdf, size_t bdfsz)
{
	static const char *const kinds[] = { "comp", "async", "combined" };
	const char *at = strstr(name, "@pci:");

	static const char *const ctrl_eqs[] = { "pages_eq", "cmd_eq", "async_eq" };

	if (!str_starts(name, "mlx5_") || !at)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(ctrl_eqs); i++)
		if ((size_t)(at - name - 5) == strlen(ctrl_eqs[i]) &&
		    !strncmp(name + 5, ctrl_eqs[i], strlen(ctrl_eqs[i]))) {
			snprintf(kind, kindsz, "async");
			*index = 0;
			snprintf(bdf, bdfsz, "%s", at + 5);
			return 0;
		}
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		size_t kl = strlen(kinds[i]);
		const char *d = name + 5 + kl;

		if (strncmp(name + 5, kinds[i], kl) || !isdigit((unsigned char)*d))
			continue;
		char *end;
		long v = strtol(d, &end, 10);

		if (end != at)
			return -EINVAL;
		snprintf(kind, kindsz, "%s", kinds[i]);
		*index = (int)v;
		snprintf(bdf, bdfsz, "%s", at + 5);
		return 0;
	}
	return -EINVAL;
}

static int interrupts_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct interrupts in;
	json_t *cpus, *irqs;
	int ret = interrupts_parse(text, len, &in, err, errsz);

	if (ret)
		return ret;
	cpus = json_array();
	for (int i = 0; i < in.ncpus; i++)
		json_array_append_new(cpus, json_integer(in.cpus[i]));
	irqs = json_array();
	for (int i = 0; i < in.n; i++) {
		const struct irq_line *l = &in.v[i];
		json_t *o = json_object(), *c = json_array();
		char kind[16], bdf[32];
		int idx;

		json_object_set_new(o, "irq", l->irq >= 0 ? json_integer(l->irq) : rq_json_text(l->label));
		for (int k = 0; k < l->ncounts; k++)
			json_array_append_new(c, json_integer((json_int_t)l->counts[k]));
		json_object_set_new(o, "counts", c);
		json_object_set_new(o, "total", json_integer((json_int_t)l->total));
		json_object_set_new(o, "desc", rq_json_text(l->desc));
		if (l->irq >= 0)
			json_object_set_new(o, "name", rq_json_text(l->name));
		if (mlx5_irq_name(l->name, kind, sizeof(kind), &idx, bdf, sizeof(bdf)) == 0) {
			json_t *m = json_object();

			json_object_set_new(m, "kind", rq_json_text(kind));
			json_object_set_new(m, "index", json_integer(idx));
			json_object_set_new(m, "bdf", rq_json_text(bdf));
			json_object_set_new(o, "mlx5", m);
		}
		json_array_append_new(irqs, o);
	}
	*out = json_object();
	json_object_set_new(*out, "cpus", cpus);
	json_object_set_new(*out, "irqs", irqs);
	interrupts_release(&in);
	return 0;
}

const struct rq_parser rq_parser_interrupts = {
	.name = "interrupts",
	.help = "/proc/interrupts of any kernel (with or without the CPU header): per IRQ counts, description, mlx5 vector kind/index/BDF",
	.parse = interrupts_adapter,
};
