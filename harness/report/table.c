// SPDX-License-Identifier: MIT
/*
 * Plain-text tables for the console (compare, qualify): cells are owned,
 * columns padded to their widest cell, control characters shown as '?'
 * (core/term.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/term.h"
#include "core/util.h"
#include "report/table.h"

void table_cell(struct table *t, const char *fmt, ...)
{
	struct sb sb = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	t->cells = xrealloc(t->cells, (t->n + 1) * sizeof(*t->cells));
	t->cells[t->n++] = term_safe(sb.buf);
	sb_release(&sb);
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void table_print(struct table *t, FILE *fp)
{
	size_t *w = xcalloc(t->cols, sizeof(*w));
	struct sb line = SB_INIT;

	for (size_t i = 0; i < t->n; i++)
		if (width(t->cells[i]) > w[i % t->cols])
			w[i % t->cols] = width(t->cells[i]);
	for (size_t i = 0; i < t->n; i++) {
		size_t c = i % t->cols;

		if (c == 0)
			sb_adds(&line, "  ");
		sb_adds(&line, t->cells[i]);
		if (c + 1 < t->cols) {
			for (size_t k = width(t->cells[i]); k < w[c] + 2; k++)
				sb_addc(&line, ' ');
			continue;
		}
		sb_rtrim(&line);	/* an empty last cell leaves no trailing blanks */
		fprintf(fp, "%s\n", line.buf);
		sb_reset(&line);
	}
	sb_release(&line);
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	free(w);
	t->cells = NULL;
	t->n = 0;
}

