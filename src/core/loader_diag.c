/* SPDX-License-Identifier: MIT */
/*
 * The loader's diagnostics: errors collected as file:line:column with
 * "did you mean" hints, libyaml's own errors placed the same way, and the
 * YAML node helpers every part of the loader shares.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/loader_int.h"

#define MAX_ERRORS 100		/* per file; the rest are counted, not listed */

/* ---- diagnostics ------------------------------------------------------- */

void diag_add(struct rq_diags *d, const char *file, unsigned line, unsigned col, char *msg)
{
	d->v = xrealloc(d->v, (d->n + 1) * sizeof(*d->v));
	d->v[d->n++] = (struct rq_diag){
		.file = xstrdup(file), .line = line, .col = col, .msg = msg,
	};
}

void lerr(struct ld *ld, unsigned line, unsigned col, const char *fmt, ...)
{
	struct sb sb = SB_INIT;
	va_list ap;

	if (ld->quiet) {
		ld->nquiet++;
		return;
	}
	ld->nall++;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	/*
	 * A bad value in defaults: is seen once per case that inherits it;
	 * say it once.
	 */
	for (size_t i = ld->diag_start; i < ld->diags->n; i++) {
		const struct rq_diag *o = &ld->diags->v[i];
		if (o->line == line && o->col == col && !strcmp(o->msg, sb.buf)) {
			sb_release(&sb);
			return;
		}
	}
	if (ld->nerr >= MAX_ERRORS) {
		ld->nhidden++;
		sb_release(&sb);
		return;
	}
	diag_add(ld->diags, ld->file, line, col, sb_detach(&sb));
	ld->nerr++;
}

void rq_diags_release(struct rq_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

void rq_diags_print(const struct rq_diags *d, FILE *fp)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct rq_diag *g = &d->v[i];
		if (g->line)
			fprintf(fp, "%s:%u:%u: error: %s\n", g->file, g->line, g->col, g->msg);
		else
			fprintf(fp, "%s: error: %s\n", g->file, g->msg);
	}
}

/* ---- "did you mean" ---------------------------------------------------- */

void hint_try(struct hint *h, const char *cand)
{
	/* "RC" for "rc" is the likeliest slip of all: rank it first */
	unsigned d = strcasecmp(h->word, cand) ? edit_distance(h->word, cand) : 0;

	if (!h->best || d < h->d) {
		h->best = cand;
		h->d = d;
	}
}

const char *hint_text(const struct hint *h, char *buf, size_t size)
{
	size_t len = strlen(h->word);
	unsigned lim = len <= 3 ? 1 : len <= 6 ? 2 : 3;

	if (!h->best || h->d > lim) {
		buf[0] = 0;
		return buf;
	}
	snprintf(buf, size, "; did you mean \"%s\"?", h->best);
	return buf;
}

/* ---- YAML nodes ---------------------------------------------------------- */

bool is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = stext(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		!strcmp(s, "NULL");
}

const char *what_node(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SCALAR_NODE:
		return is_null(n) ? "an empty value" : "a scalar";
	default:
		return "nothing";
	}
}

bool scalar_ok(struct ld *ld, const yaml_node_t *n, const char *key)
{
	if (memchr(n->data.scalar.value, 0, n->data.scalar.length)) {
		lerr(ld, NPOS(n), "%s: value contains a NUL byte", key);
		return false;
	}
	return true;
}

/* Line and column of a byte offset (reader errors carry only the offset). */
static void offset_pos(const char *text, size_t len, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

void rq_yaml_error(struct ld *ld, const yaml_parser_t *p, const char *text, size_t len)
{
	unsigned line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		lerr(ld, 0, 0, "out of memory while parsing YAML");
		break;
	case YAML_READER_ERROR:
		offset_pos(text, len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			lerr(ld, line, col, "invalid YAML input: %s (byte 0x%02x)",
			     p->problem ? p->problem : "unreadable", (unsigned)p->problem_value & 0xff);
		else
			lerr(ld, line, col, "invalid YAML input: %s",
			     p->problem ? p->problem : "unreadable");
		break;
	default:
		line = (unsigned)p->problem_mark.line + 1;
		col = (unsigned)p->problem_mark.column + 1;
		if (p->context)
			lerr(ld, line, col, "YAML syntax error: %s (%s at line %u column %u)",
			     p->problem ? p->problem : "unknown problem", p->context,
			     (unsigned)p->context_mark.line + 1, (unsigned)p->context_mark.column + 1);
		else
			lerr(ld, line, col, "YAML syntax error: %s",
			     p->problem ? p->problem : "unknown problem");
		break;
	}
}

