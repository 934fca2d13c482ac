/* SPDX-License-Identifier: MIT */
/* Plain-text tables for the console (report/table.c). */
#ifndef RQ_TABLE_H
#define RQ_TABLE_H

#include <stddef.h>
#include <stdio.h>
#include "core/term.h"	/* term_safe() */

/* A small table: cells are owned, columns padded to their widest cell. */
struct table {
	char **cells;
	size_t n, cols;
};

void table_cell(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print (cols cells a line) and empty the table. */
void table_print(struct table *t, FILE *fp);

#endif
